"""Elementwise ops: arithmetic with torch's type promotion, unary math, activations, comparisons.

Each differentiable op is one table entry (``@op`` + ``.derivative``); ``_unary``/``_binary`` turn an
entry into the public function, the Tensor method and its in-place ``name_`` variant. Formulas are
written in torch's convention for complex numbers (gradients are conjugated where torch does).
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ._registry import op, _apply, _apply_inplace, _scalar, OpDef

__all__ = ["neg", "negative", "abs", "absolute", "exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
           "sigmoid", "reciprocal", "relu", "silu", "sign", "clone", "gelu", "softplus", "leaky_relu", "add", "sub",
           "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "pow", "square",
           "maximum", "minimum", "clamp", "clip", "clamp_min", "clamp_max", "where", "eq", "ne", "lt", "le", "gt",
           "ge", "greater", "greater_equal", "less", "less_equal", "not_equal", "isnan", "isinf", "isfinite",
           "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_not", "allclose", "isclose", "equal"]


def _is_float(a):
    return a.aval.dtype.kind in "fcV"  # V: bfloat16


def _to_float(t):
    """Integer/bool inputs of floating ops become the default float dtype (no history: ints need none)."""
    if _is_float(t._data):
        return t
    return _wrap(_cast(t._data, _dtype.get_default_dtype()._np))


_cast_cache = {}


def _cast(array, np_dtype):
    fn = _cast_cache.get(np_dtype)
    if fn is None:
        fn = _cast_cache[np_dtype] = jax.jit(lambda a: a.astype(np_dtype))
    return fn(array)


def _method(name, fn):
    setattr(Tensor, name, fn)


def _unary(name, entry, float_only=True, method=True, inplace=True):
    """Public function ``name(input)`` (+ Tensor method, + ``name_``) for a one-input table entry."""
    if float_only:
        def fn(input):
            return _apply(entry, (_to_float(input),), ())
    else:
        def fn(input):
            return _apply(entry, (input,), ())
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (node {entry.name})."
    if method:
        _method(name, fn)
    if inplace:
        def fn_(self):
            if float_only and not _is_float(self._data):
                raise RuntimeError(f"result type Float can't be cast to the desired output type "
                                   f"{_type_word(self._data.dtype)}")
            return _apply_inplace(entry, self, (self,), ())
        fn_.__name__ = name + "_"
        _method(name + "_", fn_)
    return fn


def _type_word(np_dtype):
    from .._tensor import _type_string
    return _type_string(np_dtype)[6:-6]


# ----- unary math ------------------------------------------------------------------------------------
@op("NegBackward0", save=())
def _neg(self):
    return -self


@_neg.derivative
def _(grad):
    return -grad


@op("AbsBackward0", save=("self",))
def _abs(self):
    return jnp.abs(self)


@_abs.derivative
def _(grad, self):
    return grad * jnp.sign(self) if not jnp.iscomplexobj(self) else grad * self / jnp.where(self == 0, 1, jnp.abs(self))


@op("ExpBackward0", save=("result",))
def _exp(self):
    return jnp.exp(self)


@_exp.derivative
def _(grad, result):
    return grad * jnp.conj(result)


@op("LogBackward0", save=("self",))
def _log(self):
    return jnp.log(self)


@_log.derivative
def _(grad, self):
    return grad / jnp.conj(self)


@op("Log1PBackward0", save=("self",))
def _log1p(self):
    return jnp.log1p(self)


@_log1p.derivative
def _(grad, self):
    return grad / jnp.conj(self + 1)


@op("SqrtBackward0", save=("result",))
def _sqrt(self):
    return jnp.sqrt(self)


@_sqrt.derivative
def _(grad, result):
    return grad / (2 * jnp.conj(result))


@op("RsqrtBackward0", save=("result",))
def _rsqrt(self):
    return jax.lax.rsqrt(self)


@_rsqrt.derivative
def _(grad, result):
    return -0.5 * grad * jnp.conj(result) ** 3


@op("SinBackward0", save=("self",))
def _sin(self):
    return jnp.sin(self)


@_sin.derivative
def _(grad, self):
    return grad * jnp.conj(jnp.cos(self))


@op("CosBackward0", save=("self",))
def _cos(self):
    return jnp.cos(self)


@_cos.derivative
def _(grad, self):
    return -grad * jnp.conj(jnp.sin(self))


@op("TanBackward0", save=("result",))
def _tan(self):
    return jnp.tan(self)


@_tan.derivative
def _(grad, result):
    return grad * jnp.conj(1 + result * result)


@op("TanhBackward0", save=("result",))
def _tanh(self):
    return jnp.tanh(self)


@_tanh.derivative
def _(grad, result):
    return grad * jnp.conj(1 - result * result)


@op("SigmoidBackward0", save=("result",))
def _sigmoid(self):
    return jax.nn.sigmoid(self)


@_sigmoid.derivative
def _(grad, result):
    return grad * jnp.conj(result * (1 - result))


@op("ReciprocalBackward0", save=("result",))
def _reciprocal(self):
    return 1 / self


@_reciprocal.derivative
def _(grad, result):
    return -grad * jnp.conj(result * result)


@op("ReluBackward0", save=("result",))
def _relu(self):
    return jnp.maximum(self, 0)


@_relu.derivative
def _(grad, result):
    return jnp.where(result > 0, grad, 0)


@op("SiluBackward0", save=("self",))
def _silu(self):
    return self * jax.nn.sigmoid(self)


@_silu.derivative
def _(grad, self):
    s = jax.nn.sigmoid(self)
    return grad * s * (1 + self * (1 - s))


@op("CloneBackward0", save=())
def _clone(self):
    return self + jnp.zeros((), self.dtype)


@_clone.derivative
def _(grad):
    return grad


@op("SignBackward0", save=())
def _sign(self):
    return jnp.sign(self)


@_sign.derivative
def _(grad):
    return jnp.zeros_like(grad)


neg = _unary("neg", _neg, float_only=False)
negative = neg
abs = _unary("abs", _abs, float_only=False)  # noqa: A001 - torch's name
absolute = abs
exp = _unary("exp", _exp)
log = _unary("log", _log)
log1p = _unary("log1p", _log1p)
sqrt = _unary("sqrt", _sqrt)
rsqrt = _unary("rsqrt", _rsqrt)
sin = _unary("sin", _sin)
cos = _unary("cos", _cos)
tan = _unary("tan", _tan)
tanh = _unary("tanh", _tanh)
sigmoid = _unary("sigmoid", _sigmoid)
reciprocal = _unary("reciprocal", _reciprocal)
relu = _unary("relu", _relu, float_only=False)
silu = _unary("silu", _silu, method=False, inplace=False)
sign = _unary("sign", _sign, float_only=False)
_clone_fn = _unary("clone", _clone, float_only=False, inplace=False)


def clone(input, *, memory_format=None):
    """A copy that is part of the graph (CloneBackward0)."""
    return _clone_fn(input)


Tensor.clone = clone
Tensor.__neg__ = neg
Tensor.__abs__ = abs


# ----- activations with parameters ----------------------------------------------------------------------
@op("GeluBackward0", save=("self",))
def _gelu(self, *, approximate):
    return jax.nn.gelu(self, approximate=approximate == "tanh")


@_gelu.derivative
def _(grad, self, approximate):
    if approximate == "tanh":
        k = np.sqrt(2 / np.pi)
        inner = k * (self + 0.044715 * self ** 3)
        t = jnp.tanh(inner)
        d = 0.5 * (1 + t) + 0.5 * self * (1 - t * t) * k * (1 + 3 * 0.044715 * self * self)
    else:
        cdf = 0.5 * (1 + jax.lax.erf(self / np.sqrt(2)))
        pdf = jnp.exp(-0.5 * self * self) / np.sqrt(2 * np.pi)
        d = cdf + self * pdf
    return grad * d


def gelu(input, approximate="none"):
    return _apply(_gelu, (input,), (approximate,))


@op("SoftplusBackward0", save=("self",))
def _softplus(self, *, beta, threshold):
    bx = self * beta
    return jnp.where(bx > threshold, self, jnp.log1p(jnp.exp(bx)) / beta)


@_softplus.derivative
def _(grad, self, beta, threshold):
    bx = self * beta
    return jnp.where(bx > threshold, grad, grad * jax.nn.sigmoid(bx))


def softplus(input, beta=1.0, threshold=20.0):
    return _apply(_softplus, (input,), (beta, threshold))


@op("LeakyReluBackward0", save=("self",))
def _leaky_relu(self, *, negative_slope):
    return jnp.where(self > 0, self, self * negative_slope)


@_leaky_relu.derivative
def _(grad, self, negative_slope):
    return jnp.where(self > 0, grad, grad * negative_slope)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if inplace:
        return _apply_inplace(_leaky_relu, input, (input,), (negative_slope,))
    return _apply(_leaky_relu, (input,), (negative_slope,))


# ----- binary arithmetic -------------------------------------------------------------------------------
def _binary_dtype(a, b):
    """torch's result dtype of (a, b): fast paths for the common cases, else the full rule."""
    if isinstance(a, Tensor):
        da = a._data.aval.dtype
        if isinstance(b, Tensor):
            if b._data.aval.dtype == da:
                return da
        elif isinstance(b, float) and da.kind in "fc":
            return da
        elif isinstance(b, int) and not isinstance(b, bool) and da.kind in "fciu":
            return da if da != np.bool_ else np.dtype(np.int64)
    return _dtype._result_type(a, b)._np


def _wrap_scalar(x):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (bool, int, float, complex)):
        return _scalar(x)
    if isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0:
        return _scalar(x.item())
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


def _binary(entry, a, b, extra=()):
    dt = _binary_dtype(a, b)
    return _apply(entry, (_wrap_scalar(a), _wrap_scalar(b)), (dt,) + extra)


def _binary_inplace(entry, self, other, extra=()):
    dt = _binary_dtype(self, other)
    if dt != self._data.dtype and not _can_cast(dt, self._data.dtype):
        raise RuntimeError(f"result type {_type_word(dt)} can't be cast to the desired output type "
                           f"{_type_word(self._data.dtype)}")
    return _apply_inplace(entry, self, (self, _wrap_scalar(other)), (self._data.dtype,) + extra)


def _can_cast(src, dst):
    """torch.can_cast: no float->int, no complex->real, nothing->bool but bool."""
    src, dst = np.dtype(src), np.dtype(dst)
    kinds = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
    return kinds[src.kind] <= kinds[dst.kind]


@op("AddBackward0", save=())
def _add(self, other, *, dtype, alpha):
    return self.astype(dtype) + (other.astype(dtype) if alpha == 1 else other.astype(dtype) * alpha)


@_add.derivative
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


@op("SubBackward0", save=())
def _sub(self, other, *, dtype, alpha):
    return self.astype(dtype) - (other.astype(dtype) if alpha == 1 else other.astype(dtype) * alpha)


@_sub.derivative
def _(grad, alpha):
    return grad, -grad * alpha


@op("RsubBackward1", save=(), nondiff=("other",))
def _rsub(self, other, *, dtype, alpha):
    return other.astype(dtype) - self.astype(dtype) * alpha


@_rsub.derivative
def _(grad, alpha):
    return -grad * alpha


@op("MulBackward0", save={"self": ("other",), "other": ("self",)})
def _mul(self, other, *, dtype):
    return self.astype(dtype) * other.astype(dtype)


@_mul.derivative
def _(grad, self, other, dtype):
    ga = grad * jnp.conj(other.astype(dtype)) if other is not None else None
    gb = grad * jnp.conj(self.astype(dtype)) if self is not None else None
    return ga, gb


@op("DivBackward0", save={"self": ("other",), "other": ("self", "other")})
def _div(self, other, *, dtype):
    return self.astype(dtype) / other.astype(dtype)


@_div.derivative
def _(grad, self, other, dtype):
    o = jnp.conj(other.astype(dtype))
    ga = grad / o
    gb = -grad * jnp.conj(self.astype(dtype)) / (o * o) if self is not None else None
    return ga, gb


@op("DivBackward1", save=(), nondiff=("other",))
def _div_mode(self, other, *, dtype, rounding_mode):
    q = self.astype(dtype) / other.astype(dtype) if jnp.issubdtype(dtype, jnp.inexact) else None
    if rounding_mode == "trunc":
        return jnp.trunc(q) if q is not None else jax.lax.div(self.astype(dtype), other.astype(dtype))
    return jnp.floor(q) if q is not None else jnp.floor_divide(self.astype(dtype), other.astype(dtype))


@_div_mode.derivative
def _(grad):
    return jnp.zeros_like(grad)


@op("PowBackward0", save=("self", "exponent"), nondiff=("exponent",))
def _pow_scalar(self, exponent, *, dtype):
    return jnp.power(self.astype(dtype), exponent.astype(dtype))


@_pow_scalar.derivative
def _(grad, self, exponent, dtype):
    e = exponent.astype(dtype)
    x = self.astype(dtype)
    return jnp.where(e == 0, 0, grad * jnp.conj(e * jnp.power(x, e - 1)))


@op("PowBackward1", save=("self", "exponent", "result"))
def _pow(self, exponent, *, dtype):
    return jnp.power(self.astype(dtype), exponent.astype(dtype))


@_pow.derivative
def _(grad, self, exponent, result, dtype):
    x, e = self.astype(dtype), exponent.astype(dtype)
    gx = jnp.where(e == 0, 0, grad * jnp.conj(e * jnp.power(x, e - 1)))
    ge = grad * jnp.conj(jnp.where((x == 0) & (jnp.real(e) >= 0), 0, result * jnp.log(x)))
    return gx, ge


@op("PowBackward2", save=("self", "result"), nondiff=("self",))
def _rpow(self, exponent, *, dtype):
    return jnp.power(self.astype(dtype), exponent.astype(dtype))


@_rpow.derivative
def _(grad, self, result, dtype):
    x = self.astype(dtype)
    return (grad * jnp.conj(jnp.where((x == 0), 0, result * jnp.log(x))),)


@op("MaximumBackward0", save=("self", "other"))
def _maximum(self, other, *, dtype):
    return jnp.maximum(self.astype(dtype), other.astype(dtype))


@_maximum.derivative
def _(grad, self, other):
    half = jnp.where(self == other, grad / 2, 0)
    return jnp.where(self > other, grad, 0) + half, jnp.where(self < other, grad, 0) + half


@op("MinimumBackward0", save=("self", "other"))
def _minimum(self, other, *, dtype):
    return jnp.minimum(self.astype(dtype), other.astype(dtype))


@_minimum.derivative
def _(grad, self, other):
    half = jnp.where(self == other, grad / 2, 0)
    return jnp.where(self < other, grad, 0) + half, jnp.where(self > other, grad, 0) + half


def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, with torch's type promotion (AddBackward0)."""
    return _binary(_add, input, other, (alpha,))


def sub(input, other, *, alpha=1, out=None):
    return _binary(_sub, input, other, (alpha,))


subtract = sub


def rsub(input, other, *, alpha=1):
    return _binary(_rsub, input, other, (alpha,))


def mul(input, other, *, out=None):
    return _binary(_mul, input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is not None:
        return _binary(_div_mode, input, other, (rounding_mode,))
    if not isinstance(input, Tensor) or not isinstance(other, Tensor) or not (
            _is_float(input._data) or _is_float(other._data)):
        dt = _binary_dtype(input, other)
        if np.dtype(dt).kind not in "fcV":  # true division of integers gives the default float dtype
            input = _to_float(_wrap_scalar(input))
    return _binary(_div, input, other)


divide = true_divide = div


def floor_divide(input, other):
    return div(input, other, rounding_mode="floor")


def pow(input, exponent):  # noqa: A001 - torch's name
    """input ** exponent: PowBackward0 (scalar exponent), PowBackward1 (tensors), PowBackward2 (scalar base)."""
    if not isinstance(input, Tensor):
        return _binary(_rpow, input, exponent)
    if not isinstance(exponent, Tensor):
        return _binary(_pow_scalar, input, exponent)
    return _binary(_pow, input, exponent)


def square(input):
    return pow(input, 2)


def maximum(input, other):
    return _binary(_maximum, input, other)


def minimum(input, other):
    return _binary(_minimum, input, other)


def _rtruediv(self, other):
    # torch computes `scalar / x` as reciprocal(x) * scalar
    return mul(reciprocal(self), other)


def _rsub_method(self, other):
    if isinstance(other, Tensor):
        return sub(other, self)
    return rsub(self, other)


for _name, _fn in {
    "add": add, "sub": sub, "subtract": sub, "mul": mul, "multiply": mul, "div": div, "divide": div,
    "true_divide": div, "floor_divide": floor_divide, "pow": pow, "square": square, "maximum": maximum,
    "minimum": minimum, "__add__": add, "__radd__": lambda s, o: add(o, s) if isinstance(o, Tensor) else add(s, o),
    "__sub__": sub, "__rsub__": _rsub_method, "__mul__": mul,
    "__rmul__": lambda s, o: mul(o, s) if isinstance(o, Tensor) else mul(s, o),
    "__truediv__": div, "__rtruediv__": _rtruediv, "__floordiv__": floor_divide,
    "__rfloordiv__": lambda s, o: floor_divide(o, s), "__pow__": pow, "__rpow__": lambda s, o: pow(o, s),
}.items():
    _method(_name, _fn)


def _inplace_method(entry, extra=lambda kw: ()):
    def fn_(self, other, **kw):
        return _binary_inplace(entry, self, other, extra(kw))
    return fn_


Tensor.add_ = _inplace_method(_add, lambda kw: (kw.get("alpha", 1),))
Tensor.sub_ = _inplace_method(_sub, lambda kw: (kw.get("alpha", 1),))
Tensor.mul_ = _inplace_method(_mul)
Tensor.div_ = _inplace_method(_div)
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_


def _pow_(self, exponent):
    entry = _pow if isinstance(exponent, Tensor) else _pow_scalar
    return _binary_inplace(entry, self, exponent)


Tensor.pow_ = _pow_
Tensor.__ipow__ = _pow_


# ----- clamp, where -------------------------------------------------------------------------------------
@op("ClampBackward1", save=("self",))
def _clamp_scalar(self, *, min, max):  # noqa: A002
    out = self
    if min is not None:
        out = jnp.maximum(out, jnp.asarray(min, self.dtype))
    if max is not None:
        out = jnp.minimum(out, jnp.asarray(max, self.dtype))
    return out


@_clamp_scalar.derivative
def _(grad, self, min, max):  # noqa: A002
    keep = jnp.ones(self.shape, bool)
    if min is not None:
        keep = keep & (self >= min)
    if max is not None:
        keep = keep & (self <= max)
    return jnp.where(keep, grad, 0)


@op("ClampMinBackward0", save=("self",))
def _clamp_min(self, *, min):  # noqa: A002
    return jnp.maximum(self, jnp.asarray(min, self.dtype))


@_clamp_min.derivative
def _(grad, self, min):  # noqa: A002
    return jnp.where(self >= min, grad, 0)


@op("ClampMaxBackward0", save=("self",))
def _clamp_max(self, *, max):  # noqa: A002
    return jnp.minimum(self, jnp.asarray(max, self.dtype))


@_clamp_max.derivative
def _(grad, self, max):  # noqa: A002
    return jnp.where(self <= max, grad, 0)


@op("ClampBackward0", save=("self", "min", "max"))
def _clamp_tensor(self, min, max):  # noqa: A002
    out = self
    if min is not None:
        out = jnp.maximum(out, min.astype(self.dtype))
    if max is not None:
        out = jnp.minimum(out, max.astype(self.dtype))
    return out


@_clamp_tensor.derivative
def _(grad, self, min, max):  # noqa: A002
    g = grad
    gmin = gmax = None
    lo = jnp.ones(self.shape, bool) if min is None else self >= min
    hi = jnp.ones(self.shape, bool) if max is None else self <= max
    if min is not None:
        gmin = jnp.where(lo, 0, g)
    if max is not None:
        gmax = jnp.where(hi, 0, g) * lo if min is not None else jnp.where(hi, 0, g)
    return jnp.where(lo & hi, g, 0), gmin, gmax


def _scalar_value(v):
    return v.item() if isinstance(v, np.generic) else v


def clamp(input, min=None, max=None):  # noqa: A002
    """Clamp into [min, max] (ClampBackward1 for scalar bounds, ClampBackward0 for tensor bounds)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _apply(_clamp_tensor, (input, min, max), ())
    return _apply(_clamp_scalar, (input,), (_scalar_value(min), _scalar_value(max)))


def clamp_min(input, min):  # noqa: A002
    return _apply(_clamp_min, (input,), (_scalar_value(min),))


def clamp_max(input, max):  # noqa: A002
    return _apply(_clamp_max, (input,), (_scalar_value(max),))


def _clamp_(self, min=None, max=None):  # noqa: A002
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _apply_inplace(_clamp_tensor, self, (self, min, max), ())
    return _apply_inplace(_clamp_scalar, self, (self,), (_scalar_value(min), _scalar_value(max)))


clip = clamp
Tensor.clamp = clamp
Tensor.clip = clamp
Tensor.clamp_ = _clamp_
Tensor.clip_ = _clamp_
Tensor.clamp_min = clamp_min
Tensor.clamp_max = clamp_max
Tensor.clamp_min_ = lambda self, min: _apply_inplace(_clamp_min, self, (self,), (_scalar_value(min),))
Tensor.clamp_max_ = lambda self, max: _apply_inplace(_clamp_max, self, (self,), (_scalar_value(max),))


@op("WhereBackward0", save=("condition",), nondiff=("condition",))
def _where(condition, self, other, *, dtype):
    return jnp.where(condition, self.astype(dtype), other.astype(dtype))


@_where.derivative
def _(grad, condition):
    return jnp.where(condition, grad, 0), jnp.where(condition, 0, grad)


def where(condition, input=None, other=None):
    """Elementwise choice: input where condition, else other (WhereBackward0)."""
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    dt = _binary_dtype(input, other)
    return _apply(_where, (condition, _wrap_scalar(input), _wrap_scalar(other)), (dt,))


Tensor.where = lambda self, condition, other: where(condition, self, other)


# ----- comparisons and other non-differentiable elementwise ops --------------------------------------------
def _nondiff(name, fn):
    """A jitted op that never records history (comparisons, logical ops, isnan, ...)."""
    jitted = jax.jit(fn)

    def call(*args):
        return _wrap(jitted(*[a._data if isinstance(a, Tensor) else a for a in args]))
    call.__name__ = name
    return call


def _cmp(name, jfn):
    def fwd(a, b, *, dtype):
        return jfn(a.astype(dtype), b.astype(dtype))
    entry = OpDef(name, fwd, save=(), nondiff=("a", "b"))

    def fn(input, other):
        return _binary(entry, input, other)
    fn.__name__ = name

    def fn_(self, other):
        res = fn(self, other)
        from ._registry import _check_inplace
        _check_inplace(self)
        self._data = _cast(res._data, self._data.dtype)
        self._version_counter().version += 1
        return self
    return fn, fn_


eq, _eq_ = _cmp("eq", jnp.equal)
ne, _ne_ = _cmp("ne", jnp.not_equal)
lt, _lt_ = _cmp("lt", jnp.less)
le, _le_ = _cmp("le", jnp.less_equal)
gt, _gt_ = _cmp("gt", jnp.greater)
ge, _ge_ = _cmp("ge", jnp.greater_equal)
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne

for _name, _fn in {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge, "__eq__": eq, "__ne__": ne,
                   "__lt__": lt, "__le__": le, "__gt__": gt, "__ge__": ge, "greater": gt, "less": lt,
                   "eq_": _eq_, "ne_": _ne_, "lt_": _lt_, "le_": _le_, "gt_": _gt_, "ge_": _ge_}.items():
    _method(_name, _fn)
Tensor.__hash__ = lambda self: id(self)

isnan = _nondiff("isnan", jnp.isnan)
isinf = _nondiff("isinf", jnp.isinf)
isfinite = _nondiff("isfinite", jnp.isfinite)
logical_not = _nondiff("logical_not", jnp.logical_not)
logical_and = _nondiff("logical_and", jnp.logical_and)
logical_or = _nondiff("logical_or", jnp.logical_or)
logical_xor = _nondiff("logical_xor", jnp.logical_xor)
bitwise_not = _nondiff("bitwise_not", lambda a: ~a)
_and = _nondiff("and", lambda a, b: a & b)
_or = _nondiff("or", lambda a, b: a | b)
_xor = _nondiff("xor", lambda a, b: a ^ b)
for _name, _fn in {"isnan": isnan, "isinf": isinf, "isfinite": isfinite, "logical_not": logical_not,
                   "logical_and": logical_and, "logical_or": logical_or, "logical_xor": logical_xor,
                   "bitwise_not": bitwise_not, "__invert__": bitwise_not, "__and__": _and, "__or__": _or,
                   "__xor__": _xor, "__rand__": _and, "__ror__": _or}.items():
    _method(_name, _fn)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(jnp.allclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _wrap(jnp.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input, other):
    return input.shape == other.shape and bool(jnp.all(input._data == other._data))


Tensor.allclose = allclose
Tensor.isclose = isclose
Tensor.equal = equal
