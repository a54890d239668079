"""Reductions: sum, mean (more of them arrive with the op-table work)."""
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from ._registry import op, _apply
from ._util import _dims, _methods

__all__ = ["sum", "mean"]


def _sum_dtype(t, dtype):
    if dtype is not None:
        return _dtype.to_dtype(dtype)._np
    d = t._data.dtype
    return np.dtype(np.int64) if d.kind in "biu" else d


@op("SumBackward0", save=())
def _sum_all(self, *, dtype):
    return jnp.sum(self, dtype=dtype)


@_sum_all.derivative
def _(grad, self_shape):
    return jnp.broadcast_to(grad, self_shape)


@op("SumBackward1", save=())
def _sum_dim(self, *, dim, keepdim, dtype):
    return jnp.sum(self, axis=dim, keepdims=keepdim, dtype=dtype)


@_sum_dim.derivative
def _(grad, dim, keepdim, self_shape):
    if not keepdim:
        grad = jnp.expand_dims(grad, dim)
    return jnp.broadcast_to(grad, self_shape)


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001 - torch's name
    """Sum of all elements (SumBackward0) or over ``dim`` (SumBackward1)."""
    dt = _sum_dtype(input, dtype)
    if dim is None:
        return _apply(_sum_all, (input,), (dt,))
    return _apply(_sum_dim, (input,), (_dims(dim, input.ndim), bool(keepdim), dt))


@op("MeanBackward0", save=())
def _mean_all(self, *, dtype):
    return jnp.mean(self, dtype=dtype)


@_mean_all.derivative
def _(grad, self_shape):
    n = int(np.prod(self_shape))
    return jnp.broadcast_to(grad / n, self_shape)


@op("MeanBackward1", save=())
def _mean_dim(self, *, dim, keepdim, dtype):
    return jnp.mean(self, axis=dim, keepdims=keepdim, dtype=dtype)


@_mean_dim.derivative
def _(grad, dim, keepdim, self_shape):
    n = int(np.prod([self_shape[d] for d in dim]))
    if not keepdim:
        grad = jnp.expand_dims(grad, dim)
    return jnp.broadcast_to(grad / n, self_shape)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements (MeanBackward0) or over ``dim`` (MeanBackward1); floating inputs only."""
    dt = _dtype.to_dtype(dtype)._np if dtype is not None else input._data.dtype
    if np.dtype(dt).kind not in "fcV":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {input.dtype.name.capitalize()}")
    if dim is None:
        return _apply(_mean_all, (input,), (dt,))
    return _apply(_mean_dim, (input,), (_dims(dim, input.ndim), bool(keepdim), dt))


_methods(sum=sum, mean=mean)
