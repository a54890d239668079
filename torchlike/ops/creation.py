"""Creation functions (tensor, zeros, arange, rand, ...), the global PRNG key, and dtype/device casts.

Dtypes follow torch: Python floats become float32 (the default dtype), ints int64, bools bool,
complex complex64; NumPy arrays keep their dtype. Random functions draw from one JAX PRNG key that
``manual_seed`` resets, so a seeded program is reproducible (the numbers differ from torch's).
"""
import threading

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._device import device as _device
from .._tensor import Tensor, _wrap, _differentiable_dtype
from ._registry import op, _apply

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "zeros_like", "ones_like",
           "empty_like", "full_like", "arange", "linspace", "eye", "manual_seed", "seed", "initial_seed", "rand",
           "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal"]

_CANT_REQUIRE = "Only Tensors of floating point and complex dtype can require gradients"


def _put(array, device):
    if device is None:
        return array
    dev = _device(device)
    if dev.type == "cpu" and jax.default_backend() == "cpu":
        return array
    return jax.device_put(array, dev._jax_device())


def _finish(array, device, requires_grad):
    if requires_grad and not _differentiable_dtype(array.dtype):
        raise RuntimeError(_CANT_REQUIRE)
    t = _wrap(_put(array, device))
    if requires_grad:
        t._requires_grad = True
    return t


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    return tuple(int(s) for s in size)


def _np_dtype(dtype, default):
    d = _dtype.to_dtype(dtype) if dtype is not None else default
    return d._np


def _infer(data):
    """NumPy array for `data` with torch's dtype inference for Python scalars and lists."""
    if isinstance(data, Tensor):
        return np.asarray(data._data)
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data)
    if isinstance(data, jax.Array):
        return data
    arr = np.asarray(_unwrap_nested(data))
    if arr.dtype == np.float64:
        arr = arr.astype(_dtype.get_default_dtype()._np)
    elif arr.dtype == np.complex128:
        arr = arr.astype(_dtype.get_default_dtype().to_complex()._np)
    elif arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    return arr


def _unwrap_nested(data):
    if isinstance(data, Tensor):
        return data.item() if data.ndim == 0 else data.tolist()
    if isinstance(data, (list, tuple)):
        return [_unwrap_nested(d) for d in data]
    return data


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (dtype inferred as torch does)."""
    arr = _infer(data)
    if dtype is not None:
        arr = jnp.asarray(arr, _dtype.to_dtype(dtype)._np)
    else:
        arr = jnp.asarray(arr)
    return _finish(arr, device, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but returns ``data`` itself when it already is a matching Tensor."""
    if isinstance(data, Tensor) and (dtype is None or data.dtype == _dtype.to_dtype(dtype)) and \
            (device is None or data.device == _device(device)):
        return data
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(ndarray):
    """A tensor with the array's dtype and values. JAX arrays are immutable, so this copies on most backends."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return _wrap(jnp.asarray(ndarray))


def _factory(fill):
    def make(*size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False,
             memory_format=None, out=None):
        shape = _size(size)
        arr = fill(shape, _np_dtype(dtype, _dtype.get_default_dtype()))
        return _finish(arr, device, requires_grad)
    return make


zeros = _factory(jnp.zeros)
ones = _factory(jnp.ones)
empty = _factory(jnp.zeros)  # JAX has no uninitialised memory; empty gives zeros
zeros.__doc__ = "Tensor of zeros: ``zeros(*size, dtype=None, device=None, requires_grad=False)``."
ones.__doc__ = "Tensor of ones: ``ones(*size, dtype=None, device=None, requires_grad=False)``."
empty.__doc__ = "Tensor of the given size (filled with zeros: JAX has no uninitialised memory)."


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """Tensor filled with ``fill_value``; the dtype is inferred from the value when not given."""
    if dtype is None:
        dtype = _dtype._scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    arr = jnp.full(_size((size,) if isinstance(size, int) else tuple(size)), fill_value,
                   _dtype.to_dtype(dtype)._np)
    return _finish(arr, device, requires_grad)


def _like(factory):
    def make(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
        return factory(*input.shape, dtype=dtype if dtype is not None else input.dtype,
                       device=device if device is not None else input.device, requires_grad=requires_grad)
    return make


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
    return full(input.shape, fill_value, dtype=dtype if dtype is not None else input.dtype,
                device=device if device is not None else input.device, requires_grad=requires_grad)


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False, layout=None, out=None):
    """Values from start to end (exclusive) by step; int64 unless a bound is a float."""
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if dtype is None:
        dtype = _dtype.get_default_dtype() if any(isinstance(v, float) for v in vals) else _dtype.int64
    d = _dtype.to_dtype(dtype)
    n = int(np.ceil((vals[1] - vals[0]) / vals[2]))
    arr = (vals[0] + np.arange(max(n, 0), dtype=np.float64 if d.is_floating_point else np.int64) * vals[2])
    return _finish(jnp.asarray(arr, d._np), device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, layout=None, out=None):
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    arr = jnp.linspace(float(start), float(end), int(steps), dtype=jnp.float64).astype(d._np)
    return _finish(arr, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, layout=None, out=None):
    arr = jnp.eye(n, n if m is None else m, dtype=_np_dtype(dtype, _dtype.get_default_dtype()))
    return _finish(arr, device, requires_grad)


# ----- random numbers --------------------------------------------------------------------------------
_rng_lock = threading.Lock()
_rng = [None]


def manual_seed(seed):
    """Reset the global PRNG key (a JAX key) so later random draws are reproducible."""
    with _rng_lock:
        _rng[0] = jax.random.PRNGKey(int(seed))
    return _Generator()


def seed():
    import time
    s = int(time.time_ns() % (2 ** 31))
    manual_seed(s)
    return s


def initial_seed():
    return 0


class _Generator:
    """What ``manual_seed`` returns (torch returns its default Generator)."""


def _next_key():
    with _rng_lock:
        if _rng[0] is None:
            _rng[0] = jax.random.PRNGKey(0)
        _rng[0], key = jax.random.split(_rng[0])
    return key


def _random(sample):
    def make(*size, dtype=None, device=None, requires_grad=False, generator=None, layout=None, pin_memory=False,
             out=None):
        arr = sample(_next_key(), _size(size), _np_dtype(dtype, _dtype.get_default_dtype()))
        return _finish(arr, device, requires_grad)
    return make


rand = _random(lambda k, s, d: jax.random.uniform(k, s, d))
randn = _random(lambda k, s, d: jax.random.normal(k, s, d))
rand.__doc__ = "Uniform samples in [0, 1) from the global PRNG key."
randn.__doc__ = "Standard normal samples from the global PRNG key."


def randint(low=0, high=None, size=None, *, dtype=None, device=None, requires_grad=False, generator=None):
    """Integers uniform in [low, high); ``randint(high, size)`` also works, as in torch."""
    if size is None:
        low, high, size = 0, low, high
    arr = jax.random.randint(_next_key(), _size((size,) if isinstance(size, int) else tuple(size)), low, high,
                             _np_dtype(dtype, _dtype.int64))
    return _finish(arr, device, requires_grad)


def randperm(n, *, dtype=None, device=None, requires_grad=False, generator=None):
    arr = jax.random.permutation(_next_key(), n).astype(_np_dtype(dtype, _dtype.int64))
    return _finish(arr, device, requires_grad)


def _like_random(factory):
    def make(input, *, dtype=None, device=None, requires_grad=False, layout=None, memory_format=None):
        return factory(*input.shape, dtype=dtype if dtype is not None else input.dtype,
                       device=device if device is not None else input.device, requires_grad=requires_grad)
    return make


rand_like = _like_random(rand)
randn_like = _like_random(randn)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype if dtype is not None else input.dtype, device=device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    return randn(*size, dtype=dtype, device=device) * std + mean


# ----- dtype / device casts ----------------------------------------------------------------------------
@op("ToCopyBackward0", save=())
def _to_copy(self, *, dtype):
    return self.astype(dtype)


@_to_copy.derivative
def _(grad):
    return grad  # the table casts it back to the input's dtype


def _parse_to(args, kwargs):
    dtype = kwargs.get("dtype")
    device = kwargs.get("device")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (_dtype.dtype, type, np.dtype)) and not isinstance(a, str):
            dtype = a
        elif a is not None:
            device = a
    return (_dtype.to_dtype(dtype) if dtype is not None else None), device


def _to(self, *args, copy=False, non_blocking=False, memory_format=None, **kwargs):
    dtype, device = _parse_to(args, kwargs)
    out = self
    if dtype is not None and dtype._np != self._data.dtype:
        out = _apply(_to_copy, (self,), (dtype._np,))
    if device is not None and _device(device) != self.device:
        moved = _wrap(jax.device_put(out._data, _device(device)._jax_device()))
        moved._requires_grad, moved._grad_fn, moved._output_nr = out._requires_grad, out._grad_fn, out._output_nr
        out = moved
    if out is self and copy:
        out = _apply(_to_copy, (self,), (self._data.dtype,))
    return out
