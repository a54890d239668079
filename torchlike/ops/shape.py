"""Shape ops: reshape/view, transpose, t (more arrive with the op-table work)."""
import jax.numpy as jnp

from .._tensor import _wrap_dim
from ._registry import op, _apply
from ._util import _methods, _shape_arg

__all__ = ["reshape", "transpose", "t"]


def _infer_shape(shape, numel):
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        shape = tuple(numel // known if s == -1 else s for s in shape)
    return shape


@op("ViewBackward0", save=())
def _view(self, *, shape):
    return jnp.reshape(self, shape)


@_view.derivative
def _(grad, self_shape):
    return jnp.reshape(grad, self_shape)


def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input.numel())
    return _apply(_view, (input,), (shape,))


def view(self, *shape):
    return reshape(self, *shape)


@op("TransposeBackward0", save=())
def _transpose(self, *, dim0, dim1):
    return jnp.swapaxes(self, dim0, dim1)


@_transpose.derivative
def _(grad, dim0, dim1):
    return jnp.swapaxes(grad, dim0, dim1)


def transpose(input, dim0, dim1):
    n = input.ndim
    return _apply(_transpose, (input,), (_wrap_dim(dim0, n), _wrap_dim(dim1, n)))


@op("TBackward0", save=())
def _t(self):
    return self.T


@_t.derivative
def _(grad):
    return grad.T


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _apply(_t, (input,), ())


_methods(reshape=reshape, view=view, transpose=transpose, t=t, T=property(lambda self: t(self) if self.ndim <= 2
                                                                           else self.permute(*range(self.ndim)[::-1])))
