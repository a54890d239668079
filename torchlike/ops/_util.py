"""Small helpers shared by the op modules: size arguments and dim checks."""
from .._tensor import _wrap_dim


def _shape_arg(size):
    """Accept f(2, 3), f((2, 3)) and f([2, 3]) for size arguments."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _check_unique(dims, ndim):
    """Wrap dims (IndexError as torch) and reject repeats with torch's message."""
    seen = set()
    for d in dims:
        w = _wrap_dim(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
