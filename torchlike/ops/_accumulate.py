"""Leaf accumulation: what an AccumulateGrad node does with the gradient that reaches it (the engine calls
``accumulate`` for AccumulateGrad nodes; the node itself is plain data in ``torchlike._graph``)."""
from .. import _grad_mode as _gm
from .._tensor import _wrap
from ._registry import _apply
from . import _layout
from . import _views
from ._views import _commit
from .pointwise import _copy_from


def accumulate(variable, grad):
    """Set or add ``grad`` into ``variable.grad``, then run its post-accumulate-grad hooks."""
    if grad is None:
        return
    old = variable._grad
    if _views._write_watch is not None:
        _views._write_watch(variable, grad._data, "grad")
    if not variable._requires_grad:  # torch: a leaf detach_()-ed since the graph was made gets nothing (hooks run)
        pass
    elif _gm._state.grad_enabled:  # create_graph: keep the gradient's history (a first .grad is CopyBackwards)
        variable._grad = _apply(_copy_from, (None, grad), ()) if old is None else old + grad
    elif old is None:
        variable._grad = _wrap(grad._data)  # a new tensor sharing the (immutable) array
    else:  # accumulate in place, as torch does outside create_graph: same .grad object, version bumped
        _commit(old, (old + grad)._data)
    if old is None and variable._sgeom is not None:  # torch's layout contract: a dense leaf's grad has its strides
        variable._grad._sgeom = _layout.grad_geometry(variable)
    if variable._dist_place is not None and variable._grad is not None:  # a DTensor's grad is a DTensor placed
        variable._dist_place(variable._grad)  # as the leaf
    if variable._post_acc_hooks:  # grad mode here is create_graph: no_grad unless higher order was asked
        for hook in list(variable._post_acc_hooks.values()):
            hook(variable)
