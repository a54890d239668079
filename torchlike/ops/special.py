"""Special functions: lgamma, digamma, polygamma, erfinv, xlogy, mvlgamma, i0, igamma(c), and torch.special's own
ops (torch's formulas from derivatives.yaml; torchlike.special binds the public names)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special as _sp

from .. import _dtype
from .._tensor import Tensor, _wrap
from . import _layout
from ._bind import public
from ._registry import OpDef, op, _apply, _apply_inplace
from .pointwise import erf as _erf
from .pointwise import (_as_number, _binary, _binary_inplace, _check_float_inplace, _check_tensor_arg, _entry,
                        _is_float, _is_tensor_operand, _number, _to_float, _apply_float, _type_word, _true_div_dtype, _unary,
                        _wrap_scalar, _write_out)


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
    _check_float_inplace(self, _polygamma_op)
    return _apply_inplace(_polygamma_op, self, (self,), (int(n),))


@public(method=_polygamma_method, inplace=_polygamma_)
def polygamma(n, input, *, out=None):
    """The n-th derivative of digamma (PolygammaBackward0)."""
    if out is not None:
        return _write_out("polygamma", lambda: polygamma(n, input), out, (input,))
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return _apply_float(_polygamma_op, input, (int(n),))


def _xlog(node, xlog, other_grad, self_zero, safe):
    """x * log(y) (``xlog``: jax's xlogy or xlog1py: d/dx is log(y), also at x == 0) and torch's three nodes: two tensors, a Python number as self, a
    Python number as other; self's gradient is 0 where x == 0 and ``self_zero(y)`` (torch's masked_fill: computed at
    y = ``safe`` there, so no NaN leaks into its derivatives); NaN where y is NaN."""
    def forward(self, other, *, dtype):
        x, y = self.astype(dtype), other.astype(dtype)
        return jnp.where(jnp.isnan(y), jnp.nan, xlog(x, y))

    def grad_self(grad, self, other, dtype):
        x, y = self.astype(dtype), other.astype(dtype)
        mask = (x == 0) & self_zero(y)
        return jnp.where(mask, 0, forward(grad, jnp.where(mask, safe, y), dtype=dtype))

    def grad_other(grad, self, other, dtype):
        return other_grad(grad, self.astype(dtype), other.astype(dtype))

    both = _entry(node + "0", ("self", "other"), forward, lambda grad, self, other, dtype: (
        grad_self(grad, self, other, dtype), grad_other(grad, self, other, dtype)))
    scalar_self = OpDef(node + "1", forward, save=("self", "other"), nondiff=("self",), attrs=(),
                        saved=_as_number("self"), layout=_layout.ti)
    scalar_self.derivative(grad_other)
    scalar_other = OpDef(node + "2", forward, save=("self", "other"), nondiff=("other",), attrs=(),
                         saved=_as_number("other"), layout=_layout.ti)
    scalar_other.derivative(grad_self)

    def entry(input, other):
        if not _is_tensor_operand(input):
            return scalar_self
        return both if _is_tensor_operand(other) else scalar_other
    return entry


_xlogy_entry = _xlog("XlogyBackward", jax.scipy.special.xlogy, lambda grad, x, y: grad * x / y, lambda y: y <= 0, 1)
_xlog1py_entry = _xlog("SpecialXlog1PyBackward", jax.scipy.special.xlog1py, lambda grad, x, y: grad * x / (y + 1),
                       lambda y: y <= -1, 0)


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


def _mvlgamma_(self, p):
    if not _is_float(self._data):
        raise RuntimeError(f"mvlgamma: result type {_type_word(self._data.dtype)} can't be cast to the desired output "
                           f"type {_type_word(_dtype.get_default_dtype()._np)}")  # (sic: torch's order)
    return _apply_inplace(_mvlgamma, self, (self,), (int(p),))


@public(inplace=_mvlgamma_)
def mvlgamma(input, p, *, out=None):
    """Multivariate log-gamma of dimension p (MvlgammaBackward0)."""
    if out is not None:
        return _write_out("mvlgamma", lambda: mvlgamma(input, p), out, (input,))
    return _apply_float(_mvlgamma, input, (int(p),))


# ----- torch.special's own ops and the torch-level special functions (i0, igamma, igammac) -------------------
_S = jax.scipy.special
_SQRT_2PI = math.sqrt(2 * math.pi)


def _tiny_safe(self, grad, fn):
    """torch's i1/i1e backward: ``fn(x)`` away from 0, 0.5 where |x| <= eps."""
    eps = jnp.finfo(self.dtype).eps
    tiny = jnp.abs(self) <= eps
    return grad * jnp.where(tiny, 0.5, fn(jnp.where(tiny, eps, self)))


_SPECIAL_UNARY = {  # name -> (node name, saved, forward, derivative)
    "entr": ("SpecialEntrBackward0", ("self",), _S.entr, lambda grad, self: grad * -(1 + jnp.log(self))),
    "erfcx": ("SpecialErfcxBackward0", ("self", "result"), _S.erfcx,
              lambda grad, self, result: (2 * self * result - 2 / math.sqrt(math.pi)) * grad),
    "i0e": ("SpecialI0EBackward0", ("self", "result"), _S.i0e,
            lambda grad, self, result: grad * (_S.i1e(self) - jnp.sign(self) * result)),
    "i1": ("SpecialI1Backward0", ("self", "result"), _S.i1, lambda grad, self, result: _tiny_safe(
        self, grad, lambda x: _S.i0(x) - result / x)),
    "i1e": ("SpecialI1EBackward0", ("self", "result"), _S.i1e, lambda grad, self, result: _tiny_safe(
        self, grad, lambda x: _S.i0e(x) - result * (jnp.sign(x) + 1 / x))),
    "log_ndtr": ("SpecialLogNdtrBackward0", ("self", "result"), _S.log_ndtr,
                 lambda grad, self, result: grad / _SQRT_2PI * jnp.exp(-(result + jnp.square(self) / 2))),
    "ndtri": ("SpecialNdtriBackward0", ("result",), _S.ndtri,
              lambda grad, result: grad * _SQRT_2PI * jnp.exp(jnp.square(result) / 2)),
}


def _special_unary(name, node, save, forward, derivative):
    entry = _entry(node, save, lambda self: forward(self), derivative)

    def fn(input, *, out=None):
        _check_tensor_arg(f"special_{name}", "input", 1, input)
        if out is not None:
            return _write_out(f"special_{name}", lambda: fn(input), out, (input,))
        return _apply_float(entry, input)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name} ({node})."
    return fn


_special = {name: _special_unary(name, *spec) for name, spec in _SPECIAL_UNARY.items()}
i0 = _unary("i0", _entry("I0Backward0", ("self",), lambda self: _S.i0(self), lambda grad, self: grad * _S.i1(self)))


def _not_differentiable(name, grad_input_mask, positions=(0,)):
    if any(grad_input_mask[p] for p in positions if p < len(grad_input_mask)):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


def _igamma_other(sign):
    def grad_other(grad, self, other, dtype):
        a, x = self.astype(dtype), other.astype(dtype)
        return sign * grad * jnp.exp((a - 1) * jnp.log(x) - x - jax.lax.lgamma(a))
    return grad_other


def _binary_special(node, forward, self_name, grad_other, refuse=None):
    """A two-input special function whose first input torch does not differentiate (igamma, zeta): the node
    ``node`` raises torch's NotImplementedError when that gradient is needed."""
    def derivative(grad, self, other, dtype, grad_input_mask):
        _not_differentiable(self_name, grad_input_mask)
        return None, grad_other(grad, self, other, dtype)
    return _entry(node, ("self", "other"), lambda self, other, *, dtype: forward(
        self.astype(dtype), other.astype(dtype)), derivative, refuse=refuse)


_igamma = _binary_special("IgammaBackward0", _S.gammainc, "igamma: input", _igamma_other(1),
                          refuse={"biuc": "igamma_cpu"})
_igammac = _binary_special("IgammacBackward0", _S.gammaincc, "igammac: input", _igamma_other(-1),
                           refuse={"biuc": "igammac_cpu"})


def _zeta_forward(x, q):
    return _S.zeta(x, q)


def _zeta_other(grad, self, other, dtype):
    x, q = self.astype(dtype), other.astype(dtype)
    return grad * -x * _S.zeta(x + 1, q)


_zeta = _binary_special("SpecialZetaBackward0", _zeta_forward, "zeta", _zeta_other)
_zeta_scalar_self = OpDef("SpecialZetaBackward1", _zeta.forward, save=("self", "other"), nondiff=("self",),
                          attrs=(), saved=_as_number("self"))
_zeta_scalar_self.derivative(_zeta_other)
_zeta_scalar_other = OpDef("SpecialZetaBackward2", _zeta.forward, save=(), nondiff=("other",), attrs=(),
                           saved=None)
_zeta_scalar_other.derivative(lambda grad, grad_input_mask: _not_differentiable("zeta", grad_input_mask))


def _igamma_fn(name, entry):
    def fn(input, other, *, out=None):
        if out is not None:
            return _write_out(name, lambda: fn(input, other), out, (input, other))
        return _binary(entry, input, other)

    def fn_(self, other):
        return _binary_inplace(entry, self, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Regularized {'upper' if name.endswith('c') else 'lower'} incomplete gamma ({entry.name})."
    fn_.__name__ = fn_.__qualname__ = name + "_"
    return public(fn, inplace=fn_)


igamma = _igamma_fn("igamma", _igamma)
igammac = _igamma_fn("igammac", _igammac)


# torch's composite ndtr: (1 + erf(x * M_SQRT1_2)) * 0.5 with C++ Scalar operands (MulBackward1, AddBackward1)
_mul_scalar = _entry("MulBackward1", (), lambda self, *, other: (self * other).astype(self.dtype),
                     lambda grad, other: grad * other, attrs=("other",))
_add_scalar = _entry("AddBackward1", (), lambda self, *, other: (self + other).astype(self.dtype), lambda grad: grad)


def _ndtr(input, *, out=None):
    """The standard normal CDF, as torch computes it: (1 + erf(x * sqrt(1/2))) * 0.5."""
    _check_tensor_arg("special_ndtr", "input", 1, input)
    if out is not None:
        return _write_out("special_ndtr", lambda: _ndtr(input), out, (input,))
    x = _apply(_mul_scalar, (_to_float(input),), (math.sqrt(0.5),))
    return _apply(_mul_scalar, (_apply(_add_scalar, (_erf(x),), (1,)),), (0.5,))


def _gammainc(name, fn):
    def special_fn(input, other, *, out=None):
        _check_tensor_arg(f"special_{name}", "input", 1, input)
        _check_tensor_arg(f"special_{name}", "other", 2, other)
        return fn(input, other, out=out)
    special_fn.__name__ = special_fn.__qualname__ = name
    special_fn.__doc__ = f"torch.special.{name}: {fn.__name__} ({fn.__doc__})"
    return special_fn


def _xlog1py(input, other, *, out=None):
    """x * log1p(y), 0 where x == 0 (unless y is NaN) (SpecialXlog1PyBackward0/1/2)."""
    if out is not None:
        return _write_out("special_xlog1py", lambda: _xlog1py(input, other), out, (input, other))
    return _apply(_xlog1py_entry(input, other), (_wrap_scalar(input), _wrap_scalar(other)),
                  (_true_div_dtype(input, other),))


def _zeta_fn(input, other, *, out=None):
    """Hurwitz zeta (SpecialZetaBackward0/1/2; torch has no derivative in the first argument)."""
    if out is not None:
        return _write_out("special_zeta", lambda: _zeta_fn(input, other), out, (input, other))
    entry = (_zeta_scalar_self if not _is_tensor_operand(input) else
             _zeta if _is_tensor_operand(other) else _zeta_scalar_other)
    return _apply(entry, (_wrap_scalar(input), _wrap_scalar(other)), (_true_div_dtype(input, other),))


# ----- torch.special's functions without a derivative (results never require grad): scipy's cephes kernels ----
def _scipy_kernel(fn):
    """A jitted callback of the NumPy function ``fn(*arrays)`` (torch's kernels are cephes', as scipy's)."""
    def call(*arrays):
        shape, dtype = jnp.broadcast_shapes(*(a.shape for a in arrays)), arrays[0].dtype
        arrays = [jnp.broadcast_to(a, shape) for a in arrays]
        return jax.pure_callback(lambda *a: np.asarray(fn(*a), dtype), jax.ShapeDtypeStruct(shape, dtype), *arrays,
                                 vmap_method="broadcast_all")
    return jax.jit(call)


def _recurrence(p1, step, shift=False):
    """The orthogonal polynomial p_n(x) of degree n = trunc(n) (0 for n < 0) from p_0 = 1, ``p1(x)`` and
    ``step(k, x, p_{k-1}, p_{k-2})``; ``shift``: of 2x - 1 (torch's shifted Chebyshev polynomials)."""
    def poly(x, n):
        x = 2 * x - 1 if shift else x
        n = np.trunc(np.nan_to_num(n)).astype(np.int64)
        prev, cur = np.ones_like(x), p1(x)
        out = np.where(n == 0, prev, np.where(n == 1, cur, 0 * x))
        for k in range(2, int(n.max(initial=1)) + 1):
            prev, cur = cur, step(k, x, cur, prev)
            out = np.where(n == k, cur, out)
        return out
    return poly


def _cheb(p1, shift=False):
    return _recurrence(p1, lambda k, x, p, pp: 2 * x * p - pp, shift)


_NO_GRAD = {  # torch.special name -> NumPy function
    "bessel_j0": _sp.j0, "bessel_j1": _sp.j1, "bessel_y0": _sp.y0, "bessel_y1": _sp.y1,
    "modified_bessel_i0": _sp.i0, "modified_bessel_i1": _sp.i1, "modified_bessel_k0": _sp.k0,
    "modified_bessel_k1": _sp.k1, "scaled_modified_bessel_k0": _sp.k0e, "scaled_modified_bessel_k1": _sp.k1e,
    "airy_ai": lambda x: _sp.airy(x)[0], "spherical_bessel_j0": lambda x: _sp.spherical_jn(0, x),
}
_POLYNOMIALS = {  # torch.special name -> NumPy function of (x, n)
    "chebyshev_polynomial_t": _cheb(lambda x: x), "chebyshev_polynomial_u": _cheb(lambda x: 2 * x),
    "chebyshev_polynomial_v": _cheb(lambda x: 2 * x - 1), "chebyshev_polynomial_w": _cheb(lambda x: 2 * x + 1),
    "shifted_chebyshev_polynomial_t": _cheb(lambda x: x, True),
    "shifted_chebyshev_polynomial_u": _cheb(lambda x: 2 * x, True),
    "shifted_chebyshev_polynomial_v": _cheb(lambda x: 2 * x - 1, True),
    "shifted_chebyshev_polynomial_w": _cheb(lambda x: 2 * x + 1, True),
    "hermite_polynomial_h": _recurrence(lambda x: 2 * x, lambda k, x, p, pp: 2 * x * p - 2 * (k - 1) * pp),
    "hermite_polynomial_he": _recurrence(lambda x: x, lambda k, x, p, pp: x * p - (k - 1) * pp),
    "laguerre_polynomial_l": _recurrence(lambda x: 1 - x, lambda k, x, p, pp: ((2 * k - 1 - x) * p - (k - 1) * pp) / k),
    "legendre_polynomial_p": _recurrence(lambda x: x, lambda k, x, p, pp: ((2 * k - 1) * x * p - (k - 1) * pp) / k),
}


def _no_grad_fn(name, fn, arity):
    kernel = _scipy_kernel(fn)

    def call(*args, out=None):
        if arity == 1:
            _check_tensor_arg(f"special_{name}", "input", 1, args[0])
        elif not any(isinstance(a, Tensor) for a in args):
            raise TypeError(f"special_{name}(): argument 'x' (position 1) must be Tensor, not "
                            f"{type(args[0]).__name__}")
        if out is not None:
            return _write_out(f"special_{name}", lambda: call(*args), out, args)
        dtype = args[0]._data.dtype if arity == 1 else _true_div_dtype(*args)
        dtype = np.dtype(_dtype.get_default_dtype()._np if np.dtype(dtype).kind in "biu" else dtype)
        if dtype not in (np.float32, np.float64):  # (torch's kernels: float and double only)
            raise NotImplementedError(f'"{name}_cpu" not implemented for \'{_type_word(dtype)}\'')
        arrays = [jnp.asarray(a._data if isinstance(a, Tensor) else _number(a), dtype) for a in args]
        tensors = [a for a in args if isinstance(a, Tensor)]
        return _layout.laid_out(_layout.ti, tensors, (_wrap(kernel(*arrays)),))[0]
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"torch.special.{name} (no derivative: the result never requires grad)."
    return call


_special.update({name: _no_grad_fn(name, fn, 1) for name, fn in _NO_GRAD.items()})
_special.update({name: _no_grad_fn(name, fn, 2) for name, fn in _POLYNOMIALS.items()})


def _function_inplace(name):
    """torch.<name>: the in-place Tensor method as a torch-level function (torch.i0_, torch.sinc_, ...)."""
    def fn(input, *args, **kwargs):
        return getattr(input, name)(*args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: Tensor.{name}."
    return public(fn, method=False)


i0_, sinc_, logit_, xlogy_ = (_function_inplace(n) for n in ("i0_", "sinc_", "logit_", "xlogy_"))
