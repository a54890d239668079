"""torchlike.nn.init: in-place initialisation of tensors with torch's distributions (torch.nn.init).

Every function runs without autograd recording and writes the tensor in place (bumping its version as torch's
in-place fill does), so it works on Parameters that require grad. Random values come from torchlike's
generator (``generator=`` or the global one): the same distributions as torch, not the same numbers.
"""
import functools
import math
import warnings

import jax
import jax.numpy as jnp

from .._internal import commit, no_grad
from ..ops import creation as _creation
from ..ops.sampling import _float_only

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "orthogonal_",
           "sparse_", "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]


def _shape(tensor):
    return tuple(tensor._data.shape)


def _bump(tensor, n):
    """Extra version bumps, where torch's own sequence of in-place writes bumps more than once."""
    if n > 0:
        tensor._version_counter().version += n


# ----- basic fills -------------------------------------------------------------------------------------------
def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` with values drawn uniformly from [a, b)."""
    d = _float_only(tensor, "check_uniform_bounds")
    if not a <= b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    with no_grad():
        commit(tensor, _creation._sample(_creation._draw_uniform, _creation._key(generator), _shape(tensor), d, a, b))
    return tensor


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` with values drawn from N(mean, std^2)."""
    d = _float_only(tensor, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    with no_grad():
        commit(tensor, _creation._sample(_creation._draw_normal, _creation._key(generator), _shape(tensor), d, mean,
                                         std))
    return tensor


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` with values from N(mean, std^2) truncated to [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values may "
                      "be incorrect.", stacklevel=2)
    d = _float_only(tensor, "normal_kernel_cpu")
    with no_grad():
        commit(tensor, _creation._sample(_creation._draw_trunc_normal, _creation._key(generator), _shape(tensor), d,
                                         mean, std, a, b))
    return tensor


def constant_(tensor, val):
    """Fill ``tensor`` with ``val``."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill ``tensor`` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """Fill a 2-D ``tensor`` with the identity matrix."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        commit(tensor, jnp.eye(*_shape(tensor), dtype=tensor._data.dtype))
    return tensor


def dirac_(tensor, groups=1):
    """Fill a 3-, 4- or 5-D ``tensor`` with the Dirac delta (identity convolution), per group."""
    dims = tensor.ndimension()
    if dims not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = _shape(tensor)
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = sizes[0] // groups
    min_dim = min(per_group, sizes[1])
    centre = tuple(s // 2 for s in sizes[2:])
    value = jnp.zeros(sizes, tensor._data.dtype)
    for g in range(groups):
        for d in range(min_dim):
            value = value.at[(g * per_group + d, d) + centre].set(1)
    with no_grad():
        commit(tensor, value)
    _bump(tensor, groups * min_dim)  # torch: zero_() then one indexed write per delta
    return tensor


# ----- fans and gains ---------------------------------------------------------------------------------------
def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity`` (e.g. sqrt(2) for 'relu', 5/3 for 'tanh')."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = math.prod(_shape(tensor)[2:])
    return tensor.size(1) * receptive, tensor.size(0) * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan) (fan by ``mode``, gain by
    ``nonlinearity`` and ``a``)."""
    if 0 in _shape(tensor):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std^2) with std = gain / sqrt(fan)."""
    if 0 in _shape(tensor):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


@functools.partial(jax.jit, static_argnames=("rows", "cols", "dtype"))
def _orthogonal(key, *, rows, cols, dtype):
    flat = jax.random.normal(key, (rows, cols), dtype)
    if rows < cols:
        flat = flat.T
    q, r = jnp.linalg.qr(flat)
    q = q * jnp.sign(jnp.diagonal(r))
    return q.T if rows < cols else q


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (the tensor flattened to (size(0), -1)), times ``gain``."""
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    q = _orthogonal(_creation._key(generator), rows=rows, cols=cols, dtype=tensor._data.dtype)
    with no_grad():
        commit(tensor, q.reshape(_shape(tensor)))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D ``tensor`` from N(0, std^2) with ceil(sparsity * rows) zeros per column (random rows)."""
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = _shape(tensor)
    num_zeros = math.ceil(sparsity * rows)
    normal_(tensor, 0, std, generator)
    keys = jax.random.split(_creation._key(generator), cols)
    perms = jax.vmap(lambda k: jax.random.permutation(k, rows))(keys)  # (cols, rows)
    zero = jnp.zeros((rows, cols), bool).at[perms[:, :num_zeros].T, jnp.arange(cols)[None, :]].set(True)
    with no_grad():
        commit(tensor, jnp.where(zero, 0, tensor._data))
    _bump(tensor, cols - 1)  # torch: one indexed write per column
    return tensor


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of `nn.init.{new_name}`.", FutureWarning,
                      stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"Deprecated: use :func:`{new_name}`."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
