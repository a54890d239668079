"""torchlike.optim: torch's optimizers (SGD, Adam, AdamW) and learning-rate schedulers.

Each ``step()`` runs the whole update as one jitted JAX function over every parameter with a gradient and
writes the results into the parameters in place."""
from . import lr_scheduler  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam  # noqa: F401
from .adamw import AdamW  # noqa: F401

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
