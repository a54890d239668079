"""Small helpers shared by the op modules: shapes, method binding, torch-only saved attributes."""
from .._tensor import Tensor, _wrap_dim


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


def _methods(**fns):
    for name, fn in fns.items():
        setattr(Tensor, name, fn)


def _torch_only_saved(entry, replaces=(), **fgets):
    """Give ``entry``'s nodes torch's ``_saved_<name>`` where ``attrs=`` cannot declare it (attrs covers static
    arguments and input sizes): a Scalar torch saves that travels here as a wrapped 0-d tensor input, or a list
    of index tensors that the table saves one input at a time. ``fgets[name](node, saved)`` gets a dict of the
    values of the table's own ``_saved_<r>`` for each ``r`` in ``replaces``, which torch does not show."""
    cls = entry.node_cls
    getters = {r: cls.__dict__["_saved_" + r].fget for r in replaces}
    for r in replaces:
        delattr(cls, "_saved_" + r)
    for name, fget in fgets.items():
        setattr(cls, "_saved_" + name,
                property(lambda node, f=fget: f(node, {r: g(node) for r, g in getters.items()})))
