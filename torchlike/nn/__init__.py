"""torchlike.nn: neural-network building blocks, as torch.nn (modules, Parameter, functional, init, utils)."""
from . import functional  # noqa: F401
from . import init  # noqa: F401
from . import utils  # noqa: F401
from . import attention  # noqa: F401
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from .parallel import DataParallel  # noqa: F401
