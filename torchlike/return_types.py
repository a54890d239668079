"""torchlike.return_types, as torch.return_types: the named result tuples (``max``, ``sort``, ``linalg_svd``, their
``*_out`` variants, ...), made by the ops that return them."""
from .ops._return_types import TYPES as _TYPES


def __getattr__(name):
    try:
        return _TYPES[name]
    except KeyError:
        raise AttributeError(f"module 'torchlike.return_types' has no attribute '{name}'") from None


def __dir__():
    return sorted(_TYPES)
