"""Gradient clipping (torch.nn.utils.clip_grad): clip_grad_norm_, clip_grad_value_, get_total_norm,
clip_grads_with_norm_.

The norms and the rescaling of all gradients run as one jitted function over the whole list (cached per shapes,
dtypes and norm type); the gradients are then updated in place, each with one version bump like torch's
``_foreach_mul_``. Nothing is written when an error is raised.
"""
import functools
import math
import types
import warnings

import jax
import jax.numpy as jnp

from ..._internal import commit, wrap
from ..._tensor import Tensor
from ...ops.creation import tensor

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _vector_norm(x, p):
    a = jnp.abs(x)
    if p == math.inf:
        return jnp.max(a, initial=0) if x.size == 0 else jnp.max(a)
    if p == -math.inf:
        return jnp.min(a)
    if p == 0:
        return jnp.sum(a != 0).astype(a.dtype)
    if p == 1:
        return jnp.sum(a)
    if p == 2:
        return jnp.sqrt(jnp.sum(a * a))
    return jnp.sum(a ** p) ** (1.0 / p)


@functools.partial(jax.jit, static_argnames=("norm_type",))
def _total_norm(grads, *, norm_type):
    norms = [_vector_norm(g, norm_type) for g in grads]
    dtype = jnp.result_type(*norms)
    return _vector_norm(jnp.stack([n.astype(dtype) for n in norms]), norm_type)


@jax.jit
def _scaled(grads, max_norm, total):
    coef = jnp.minimum(max_norm / (total + 1e-6), 1.0).astype(total.dtype)
    return [(g * coef.astype(g.dtype)).astype(g.dtype) for g in grads]


@jax.jit
def _clamped(grads, clip):
    return [jnp.clip(g, -clip.astype(g.dtype), clip.astype(g.dtype)) for g in grads]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together (as if concatenated into one vector)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    total = _total_norm(tuple(t._data for t in tensors), norm_type=norm_type)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it "
                           "cannot be clipped. To disable this error and scale the gradients by the non-finite norm "
                           "anyway, set `error_if_nonfinite=False`")
    return wrap(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the parameters' gradients in place by min(max_norm / (total_norm + 1e-6), 1)."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    for g, new in zip(grads, _scaled(tuple(g._data for g in grads), max_norm, total_norm._data)):
        commit(g, new)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Rescale the gradients of ``parameters`` in place so their total ``norm_type``-norm is at most
    ``max_norm``; returns the total norm before clipping."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated alias of :func:`clip_grad_norm_`."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp the gradients of ``parameters`` in place to [-clip_value, clip_value]."""
    clip_value = float(clip_value)
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    if not grads:
        return
    for g, new in zip(grads, _clamped(tuple(g._data for g in grads), jnp.asarray(clip_value))):
        commit(g, new)
        if foreach is not False:  # torch's foreach path clamps twice (clamp_min_, then clamp_max_)
            g._version_counter().version += 1
