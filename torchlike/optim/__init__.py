"""torchlike.optim: torch's optimizers and learning-rate schedulers.

Each ``step()`` runs the whole update as one jitted JAX function over every parameter with a gradient and
writes the results into the parameters in place (LBFGS, whose line search is data-dependent control flow, runs
torch's algorithm with tensor ops)."""
from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401
from .adafactor import Adafactor  # noqa: F401
from .adadelta import Adadelta  # noqa: F401
from .adagrad import Adagrad  # noqa: F401
from .adamax import Adamax  # noqa: F401
from .asgd import ASGD  # noqa: F401
from .lbfgs import LBFGS  # noqa: F401
from .nadam import NAdam  # noqa: F401
from .radam import RAdam  # noqa: F401
from .rmsprop import RMSprop  # noqa: F401
from .rprop import Rprop  # noqa: F401
from .sparse_adam import SparseAdam  # noqa: F401

# torch's __all__, in its order (less Muon and swap_in_optimizer_params_and_state)
__all__ = ["Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler", "NAdam",
           "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "swa_utils"]
