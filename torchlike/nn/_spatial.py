"""Issue 14's spatial layers of torchlike.nn.functional, gathered for one import line there."""
from ._conv import *  # noqa: F401,F403
from ._padding import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._unpool import *  # noqa: F401,F403
from ._normalization import *  # noqa: F401,F403
from ._sampling import *  # noqa: F401,F403
from ._misc import *  # noqa: F401,F403
