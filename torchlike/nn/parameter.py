"""Parameter and Buffer: the Tensor kinds a Module registers automatically, as torch.nn.parameter."""
from .._internal import differentiable_dtype
from .._tensor import Tensor
from ..ops.creation import empty, tensor

__all__ = ["Parameter", "Buffer", "UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]


def _alias(data, cls):
    """A history-free alias of ``data`` (shares storage and version counter, like torch's _make_subclass)."""
    if data is None:
        data = empty(0)
    t = data.detach()
    t.__class__ = cls
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning it to a Module attribute registers it.

    ``Parameter(data=None, requires_grad=True)`` aliases ``data`` (same storage and version counter) as a leaf.
    """

    def __new__(cls, data=None, requires_grad=True):
        t = _alias(data, cls)
        if getattr(data, "_as_parameter", None) is not None:  # a DTensor's parameter is a DTensor too
            data._as_parameter(t)
        if requires_grad and not differentiable_dtype(t._data.dtype):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = bool(requires_grad)
        return t

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        import numpy as np
        return (_rebuild_parameter, (type(self), np.asarray(self._data), self._requires_grad))


def _rebuild_parameter(cls, array, requires_grad):
    return cls(tensor(array), requires_grad)


class _BufferMeta(type):
    # Buffer(...) returns a plain Tensor flagged ``_is_buffer``; isinstance(t, Buffer) looks at that flag
    def __instancecheck__(cls, instance):
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that assigning to a Module attribute registers as a buffer (``persistent``: in state_dict)."""

    def __new__(cls, data=None, *, persistent=True):
        t = _alias(data, Tensor)
        t._requires_grad = data is not None and data.requires_grad
        t.persistent = persistent
        t._is_buffer = True
        return t


from ._uninitialized import (UninitializedTensorMixin, UninitializedParameter, UninitializedBuffer,  # noqa: E402
                             is_lazy)
