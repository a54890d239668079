"""torch.autograd.Variable: the legacy name of Tensor. ``Variable(t)`` is ``t.detach()`` (same data, version
counter) with ``requires_grad`` as given, and every tensor is an instance of Variable, as in torch."""
import warnings

from .._tensor import Tensor
from ..ops.creation import tensor as _tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a detached alias of ``data``."""

    __module__ = "torchlike.autograd.variable"

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            data = _tensor([])
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        return data.detach().requires_grad_(bool(requires_grad))
