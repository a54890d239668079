"""Small helpers shared by the op modules: dims, shapes, method binding."""
from .._tensor import Tensor, _wrap_dim


def _dims(dim, ndim):
    """Normalise an int / sequence of dims to a sorted tuple of non-negative axes (None: all)."""
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def _shape_arg(size):
    """Accept f(2, 3), f((2, 3)) and f([2, 3]) for size arguments."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _methods(**fns):
    for name, fn in fns.items():
        setattr(Tensor, name, fn)
