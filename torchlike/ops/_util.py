"""Small helpers shared by the op modules: size arguments, dim checks, half types' compute type."""
import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import _wrap_dim


_HALF = (np.dtype(jnp.bfloat16), np.dtype(jnp.float16))


def _opmath(x):
    """``x`` (a JAX array) in torch's CPU opmath type: half types computed in float32."""
    return x.astype(jnp.float32) if x.dtype in _HALF else x


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


def _broadcast_shape(a, b):
    """torch's infer_size: the broadcast shape of two shapes, with torch's error (for the last bad dim, as torch)."""
    n = max(len(a), len(b))
    out = []
    for i in range(n - 1, -1, -1):
        da, db = i - n + len(a), i - n + len(b)
        sa = a[da] if da >= 0 else 1
        sb = b[db] if db >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {i}")
        out.append(sa if sb == 1 else sb)
    return tuple(out[::-1])


def _check_broadcast(arrays):
    """torch's error (TensorIterator's, operands in order) when the arrays' shapes do not broadcast together."""
    shape = None
    for a in arrays:
        if a is not None:
            shape = tuple(a.shape) if shape is None else _broadcast_shape(shape, a.shape)


def ignoring(value, result):
    """``result``, where torch's formula returns it without reading the empty ``value`` (so under create_graph it
    has no history): ``value`` is read through stop_gradient only (see ``_registry._dependencies``)."""
    return result - jax.lax.stop_gradient(value).sum().astype(result.dtype)


def _astype(x, dtype):
    """``x.astype(dtype)`` with torch's float -> integer conversion (x86's truncation): NaN, infinities and values
    out of range become the lowest int64 / int32; narrower integers take the low bits of the int32 (300.5 -> int8
    44), where JAX saturates. Traceable."""
    dtype = np.dtype(dtype)
    if x.dtype == np.bool_ and dtype.kind in "fcV":  # through uint8: XLA rewrites convert(bool) * y and / y as
        return x.astype(np.uint8).astype(dtype)  # select(bool, y, 0), losing 0 * inf = nan and 0 / 0 = nan
    if dtype.kind not in "iu" or x.dtype.kind not in "fcV":
        return x.astype(dtype)
    if x.dtype.kind == "c":
        x = jnp.real(x)
    wide = np.dtype(np.int64 if dtype == np.int64 else np.int32)
    limit = float(2 ** (wide.itemsize * 8 - 1))
    valid = (x > -limit - 1) & (x < limit)  # (False for NaN)
    return jnp.where(valid, jnp.where(valid, x, 0).astype(wide), np.iinfo(wide).min).astype(dtype)


_deferred = None  # while torchlike.compile traces a function: the value checks its program returns (check_later)


def check_later(bad, exc, message, value=None):
    """A value check on traced data (``bad``: a traced bool; ``message`` may name ``{v}``, the traced ``value``).
    Inside torchlike.compile's trace it becomes an output of the program, raised after the call and before any
    state is written back (as torch.compile's kernels assert); under other JAX transforms it is skipped."""
    if _deferred is not None:
        _deferred.append((jnp.asarray(bad).reshape(()), jnp.asarray(0 if value is None else value).reshape(()),
                          exc, message))
