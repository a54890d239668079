"""Special functions: lgamma, digamma, polygamma, erfinv, xlogy, mvlgamma (torch's formulas from derivatives.yaml)."""
import math

import jax
import jax.numpy as jnp

from ._bind import public
from . import _layout
from ._registry import OpDef, op, _apply, _apply_inplace
from .pointwise import (_as_number, _binary_inplace, _check_float_inplace, _entry, _is_tensor_operand, _to_float,
                        _true_div_dtype, _unary, _wrap_scalar, _write_out)


def _polygamma(n, x):
    return jax.scipy.special.digamma(x) if n == 0 else jax.scipy.special.polygamma(n, x)


lgamma = _unary("lgamma", _entry("LgammaBackward0", ("self",), lambda self: jax.lax.lgamma(self),
                                 lambda grad, self: grad * jax.lax.digamma(self)))
digamma = _unary("digamma", _entry("DigammaBackward0", ("self",), lambda self: jax.lax.digamma(self),
                                   lambda grad, self: grad * _polygamma(1, self)))
erfinv = _unary("erfinv", _entry("ErfinvBackward0", ("self",), lambda self: jax.lax.erf_inv(self),
                                 lambda grad, self: grad * (0.5 * math.sqrt(math.pi)) * jnp.exp(
                                     jnp.square(jax.lax.erf_inv(self)))))


@op("PolygammaBackward0", save=("self",), attrs=("n",))
def _polygamma_op(self, *, n):
    return _polygamma(n, self)


@_polygamma_op.derivative
def _(grad, self, n):
    return grad * _polygamma(n + 1, self)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    _check_float_inplace(self)
    return _apply_inplace(_polygamma_op, self, (self,), (int(n),))


@public(method=_polygamma_method, inplace=_polygamma_)
def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma (PolygammaBackward0)."""
    if out is not None:
        return _write_out("polygamma", lambda: polygamma(n, input), out, (input,))
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _apply(_polygamma_op, (_to_float(input),), (int(n),))


def _xlogy_forward(self, other, *, dtype):
    x, y = self.astype(dtype), other.astype(dtype)  # jax's xlogy: d/dx is log(y), also at x == 0
    return jnp.where(jnp.isnan(y), jnp.nan, jax.scipy.special.xlogy(x, y))


def _xlogy_self(grad, self, other, dtype):
    x, y = self.astype(dtype), other.astype(dtype)
    return jnp.where((x == 0) & (y <= 0), 0, _xlogy_forward(grad, y, dtype=dtype))


def _xlogy_other(grad, self, other, dtype):
    return grad * self.astype(dtype) / other.astype(dtype)


# torch's nodes: two tensors, a Python number as self, a Python number as other
_xlogy = _entry("XlogyBackward0", ("self", "other"), _xlogy_forward,
                lambda grad, self, other, dtype: (_xlogy_self(grad, self, other, dtype),
                                                  _xlogy_other(grad, self, other, dtype)))
_xlogy_scalar_self = OpDef("XlogyBackward1", _xlogy_forward, save=("self", "other"), nondiff=("self",), attrs=(),
                           saved=_as_number("self"), layout=_layout.ti)
_xlogy_scalar_self.derivative(_xlogy_other)
_xlogy_scalar_other = OpDef("XlogyBackward2", _xlogy_forward, save=("self", "other"), nondiff=("other",), attrs=(),
                            saved=_as_number("other"), layout=_layout.ti)
_xlogy_scalar_other.derivative(_xlogy_self)


def _xlogy_entry(input, other):
    if not _is_tensor_operand(input):
        return _xlogy_scalar_self
    return _xlogy if _is_tensor_operand(other) else _xlogy_scalar_other


def _xlogy_(self, other):
    return _binary_inplace(_xlogy_entry(self, other), self, other, result_dtype=_true_div_dtype(self, other))


@public(inplace=_xlogy_)
def xlogy(input, other, *, out=None):
    """x * log(y), 0 where x == 0 (unless y is NaN) (XlogyBackward0/1/2)."""
    if out is not None:
        return _write_out("xlogy", lambda: xlogy(input, other), out, (input, other))
    return _apply(_xlogy_entry(input, other), (_wrap_scalar(input), _wrap_scalar(other)),
                  (_true_div_dtype(input, other),))


@op("MvlgammaBackward0", save=("self",), attrs=("p",))
def _mvlgamma(self, *, p):
    j = jnp.arange(p, dtype=self.dtype)
    return (p * (p - 1) / 4 * math.log(math.pi) + jax.lax.lgamma(self[..., None] - j / 2).sum(-1)).astype(self.dtype)


@_mvlgamma.derivative
def _(grad, self, p):
    j = jnp.arange(p, dtype=self.dtype)
    return grad * jax.lax.digamma(self[..., None] - j / 2).sum(-1)


@public
def mvlgamma(input, p, *, out=None):
    """Multivariate log-gamma of dimension p (MvlgammaBackward0)."""
    if out is not None:
        return _write_out("mvlgamma", lambda: mvlgamma(input, p), out, (input,))
    return _apply(_mvlgamma, (_to_float(input),), (int(p),))
