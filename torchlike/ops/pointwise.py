"""Elementwise ops: arithmetic with torch's type promotion, unary math, activations, comparisons.

Each differentiable op is one table entry (``@op`` + ``.derivative``, or ``_entry`` for the one-liners);
``_unary``/``_binary`` turn an entry into the public function, the Tensor method and its in-place ``name_``
variant. Formulas follow torch's derivatives.yaml, including its convention for complex numbers (the
gradient of a holomorphic f is ``grad * conj(f'(z))``) and its choices at special points (relu at 0,
abs at 0, clamp at the bounds, maximum ties). Python scalars travel as cached 0-d "wrapped number"
tensors (float64/int64/complex128), never as traced Python values, so one compiled op serves every
scalar value; where torch saves the Python scalar itself (``_saved_exponent`` of ``x ** 2``), the node
property returns it as a Python number.
"""
import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._warnings import warn_once
from .. import _dtype, _tensor
from .._graph import _SavedTensor
from .._tensor import Tensor, _wrap, _type_string, _differentiable_dtype
from .. import _grad_mode as _gm
from ._registry import op, _apply, _apply_inplace, _check_inplace, _check_autograd_inplace, _scalar, OpDef, _refused, \
    _check_integer_target
from ._views import _commit, _OWN_INPUT_CHECK, _conj, _view_apply, _check_input_overlap, _check_overlap
from ._out import _write_out, _can_cast, _CPP
from ._bind import public, _type_name
from ._util import _astype, _broadcast_shape, _check_broadcast
from .creation import _check_fits
from .shape import _select, transpose
from . import _layout

# torch computes the ops of this module with TensorIterator: a new result takes the layout of its inputs
# (ops/_layout.py); the few that do not say so (``layout=``)
op = functools.partial(op, layout=_layout.ti)

# ----- helpers -----------------------------------------------------------------------------------------
# torch's refusals (``refuse=`` of an entry, see _registry._refused): NumPy kinds of the dtype the op computes in
_CLAMP_COMPLEX = (NotImplementedError, "clamp is not supported for complex types")
_NOT_REAL = "biuc"  # (float-only kernels)


def _rounding(name, kernel):
    """torch's refusals of floor/ceil/trunc: complex inputs, and bool (no kernel)."""
    return {"c": (NotImplementedError, f"{name} is not supported for complex inputs"), "b": kernel}


def _is_float(a):
    return a.aval.dtype.kind in "fcV"  # V: bfloat16


def _to_float(t):
    """Integer/bool inputs of floating ops become the default float dtype (no history, unless the integer tensor
    requires grad: written in place from a value that does; then the op's node links to its node, as torch's)."""
    if _is_float(t._data):
        return t
    out = _layout.laid_out(_layout.like, (t,), (_wrap(_cast(t._data, _dtype.get_default_dtype()._np)),))[0]
    if t._requires_grad:
        out._grad_fn, out._output_nr, out._requires_grad = t._grad_fn, t._output_nr, True
        if t._grad_fn is None:  # a no_grad view of such a tensor: its edge is its own (none, see grad_accumulator)
            out._base, out._rg_own = t._base, t._rg_own
    return out


def _saved_original(result, cast, original):
    """``result`` of an op on ``cast``, the float copy of an integer ``original`` that requires grad: torch saves
    the input itself (its dtype, its version counter), so the node's saved copy is pointed back at it."""
    node = result._grad_fn
    if node is not None and node._for_backward:
        node._for_backward = tuple(
            _SavedTensor(s.data, original, original._version_counter(), -1)
            if isinstance(s, _SavedTensor) and s.tensor is cast else s for s in node._for_backward)
    return result


def _apply_float(entry, input, statics=()):
    """``entry`` on ``input``, an integer one computed as the default float: torch's node saves the input itself
    when it requires grad (see _saved_original)."""
    if input._data.dtype.kind in "fcV":  # (the common case, made short)
        return _apply(entry, (input,), statics)
    cast = _to_float(input)
    if cast is not input and input._requires_grad:
        return _saved_original(_apply(entry, (cast,), statics), cast, input)
    return _apply(entry, (cast,), statics)


_cast_cache = {}


def _cast(array, np_dtype):
    fn = _cast_cache.get(np_dtype)
    if fn is None:
        fn = _cast_cache[np_dtype] = jax.jit(lambda a: a.astype(np_dtype))
    return fn(array)


def _type_word(np_dtype):
    """torch's short dtype name used in messages: Float, Long, ComplexFloat, ..."""
    return _type_string(np.dtype(np_dtype))[6:-6]


def _number(x):
    """NumPy scalars and 0-d arrays count as the Python numbers they hold (as torch treats them)."""
    if isinstance(x, (np.generic, np.ndarray)) and np.ndim(x) == 0:
        return x.item()
    return x


def _wrap_scalar(x):
    """A tensor stays; a Python/NumPy number becomes torch's wrapped 0-d tensor."""
    if isinstance(x, Tensor):
        return x
    if type(x) is float or type(x) is int:  # (the common cases, made short)
        return _scalar(x)
    x = _number(x)
    if isinstance(x, (bool, int, float, complex)):
        return _scalar(x)
    raise TypeError(f"unsupported operand type: {type(x).__name__}")


def _entry(node_name, save, forward, derivative, attrs=(), **kw):
    """A table entry from a forward and a derivative given inline (for the one-line formulas); ``attrs``: the
    non-tensor ``_saved_*`` torch shows (none for most of them)."""
    entry = OpDef(node_name, forward, save=save, attrs=attrs, **{"layout": _layout.ti, **kw})
    entry.derivative(derivative)
    return entry


def _real_input(node):
    return node._in_meta[0].dtype.kind != "c"


# Formulas are differentiated by jax (create_graph); where torch's derivative conventions at special points differ
# from jax's primitives, formulas use these: their derivatives are the ones torch's backward nodes compute.
@jax.custom_jvp
def _pow_torch(x, e):
    """x ** e for an exponent that is not differentiated; d/dx is torch's: 0 where e == 0 (jax: 0 * x ** -1)."""
    return jnp.power(x, e)


@_pow_torch.defjvp
def _(primals, tangents):
    x, e = primals
    safe = jnp.where(e == 0, 1, e)
    return _pow_torch(x, e), jnp.where(e == 0, 0, safe * _pow_torch(x, safe - 1)) * tangents[0]


@jax.custom_jvp
def _abs_torch(x):
    """|x| with torch's derivative sgn(x): 0 at 0 (jax's abs has slope 1 there)."""
    return jnp.abs(x)


@_abs_torch.defjvp
def _(primals, tangents):
    (x,), (dx,) = primals, tangents
    if jnp.iscomplexobj(x):
        return _abs_torch(x), jnp.real(jnp.conj(_sgn_forward(x)) * dx)
    return _abs_torch(x), _real_sign(x) * dx


def _torch_mask(x, keep):
    """x where keep, else x without its derivative: torch's double-backward masks (``(x < 0)`` in
    elu_double_backward, ``x * beta < threshold`` in softplus_double_backward) differ from the first-order ones."""
    return jnp.where(keep, x, jax.lax.stop_gradient(x))


@jax.custom_jvp
def _one_masked(x):
    """1 in x's dtype, whose derivative is a product with 0: ``y * _one_masked(x)`` keeps a NaN (or inf) reaching
    x's second-order gradient through y, as torch's double-backward products with a mask do (elu's
    ``* (self < 0)`` where self >= 0)."""
    return jnp.ones_like(x)


@_one_masked.defjvp
def _(primals, tangents):
    return jnp.ones_like(primals[0]), tangents[0] * 0


def _as_number(name):
    """``saved=`` of an entry whose input ``name`` is a wrapped Python scalar: torch saves a Scalar there, so its
    ``_saved_<name>`` is the Python number."""
    def number(node, saved):
        v = saved[name]
        return v.item() if isinstance(v, Tensor) else v
    number.scalar = True  # (so a backward does not free it: OpDef's _kept_slots)
    return {name: number}


# ----- unary ops ---------------------------------------------------------------------------------------
def _check_tensor_arg(fn_name, arg, position, value):
    """torch's TypeError for an argument that must be a Tensor (a NumPy array, a real torch tensor, a list...)."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn_name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{_type_name(value)}") from None


def _check_float_inplace(self, entry):
    """An in-place op whose result is floating (integer inputs computed as the default float) on an integer tensor
    (``entry``: the op's table entry)."""
    if not _is_float(self._data):
        _check_inplace(self)  # torch's autograd and memory-overlap checks come first
        _check_integer_target(entry, self, (self,))
        raise RuntimeError(f"result type {_type_word(_dtype.get_default_dtype()._np)} can't be cast to "
                           f"the desired output type {_type_word(self._data.dtype)}")


# dtype kinds that ops refuse before torch's TensorIterator checks an out= dtype (in their meta functions)
_REFUSED_FIRST = {"neg": "b", "sign": "c", "floor": "c", "ceil": "c", "trunc": "c"}


def _unary(name, entry, kind="float", *, aliases=(), check=None, inplace=True, inplace_entry=None, method=True,
           dunders=()):
    """Declare the public op ``name(input, *, out=None)`` of a one-input table entry: ``torch.<name>`` and its
    ``aliases``, the Tensor method(s) and, with ``inplace``, ``Tensor.<name>_`` (through ``inplace_entry`` where
    torch's in-place node differs). ``check(input)`` runs first (torch's argument errors). ``kind``: "float"
    (integer and bool inputs computed in the default float dtype), "any" (any dtype kept), "round" (integers
    pass through unchanged, as torch.floor(int_tensor) does); an out= of another dtype than a kind "any"/"round"
    result's is refused before the op's own dtype refusals but those in _REFUSED_FIRST."""
    def fn(input, *, out=None):  # (an argument of the wrong type: the binding's guard raises torch's error)
        if out is not None:
            dt = input._data.dtype
            if kind == "float" or (name == "abs" and dt.kind == "c"):  # (TensorIterator's cast rule)
                return _write_out(name, lambda: fn(input), out, (input,))
            return _write_out(name, lambda: fn(input), out, (input,), "found",
                              None if dt.kind in _REFUSED_FIRST.get(name, "") else dt)
        if check is not None:
            check(input)
        if kind == "float":
            return _apply_float(entry, input)
        if kind == "round" and input._data.dtype.kind in "iu":  # (bool: torch refuses)
            return _integer_copy(input)
        return _apply(entry, (input,), ())

    def fn_(self):
        if check is not None:
            check(self)
        if kind == "float":
            _check_float_inplace(self, inplace_entry or entry)
        if kind == "round" and self._data.dtype.kind in "iu":
            _check_inplace(self)
            self._version_counter().version += 1
            return self
        return _apply_inplace(inplace_entry or entry, self, (self,), ())

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (node {entry.name})."
    fn_.__name__ = fn_.__qualname__ = name + "_"
    fn_.__doc__ = f"In-place {name}."
    return public(fn, aliases=aliases, method=method, inplace=fn_ if inplace else None, dunders=dunders)


@op("NegBackward0", save=(), attrs=())
def _neg(self):
    return -self


@_neg.derivative
def _(grad):
    return -grad


@op("AbsBackward0", save=("self",), attrs=(), layout=_layout.like_for("c"))
def _abs(self):
    return self if self.dtype == bool else jnp.abs(self)


@_abs.derivative
def _(grad, self):
    if jnp.iscomplexobj(self):  # grad * sgn(self), sgn(0) = 0
        a = jnp.abs(self)
        return grad * jnp.where(a == 0, 0, self / jnp.where(a == 0, 1, a))
    return grad * _real_sign(self)


@op("ExpBackward0", save=("result",), attrs=())
def _exp(self):
    return jnp.exp(self)


@_exp.derivative
def _(grad, result):
    return grad * jnp.conj(result)


@op("LogBackward0", save=("self",), attrs=())
def _log(self):
    return jnp.log(self)


@_log.derivative
def _(grad, self):
    return grad / jnp.conj(self)


@op("SqrtBackward0", save=("result",), attrs=())
def _sqrt(self):
    return jnp.sqrt(self)


@_sqrt.derivative
def _(grad, result):
    return grad / (2 * jnp.conj(result))


@op("SinBackward0", save=("self",), attrs=())
def _sin(self):
    return jnp.sin(self)


@_sin.derivative
def _(grad, self):
    return grad * jnp.conj(jnp.cos(self))


@op("CosBackward0", save=("self",), attrs=())
def _cos(self):
    return jnp.cos(self)


@_cos.derivative
def _(grad, self):
    return -grad * jnp.conj(jnp.sin(self))


@op("TanhBackward0", save=("result",), attrs=())
def _tanh(self):
    return jnp.tanh(self)


@_tanh.derivative
def _(grad, result):
    return grad * jnp.conj(1 - result * result)


@op("SigmoidBackward0", save=("result",), attrs=())
def _sigmoid(self):
    return jax.nn.sigmoid(self)


@_sigmoid.derivative
def _(grad, result):
    return grad * jnp.conj(result * (1 - result))


@op("ReluBackward0", save=("result",), attrs=(), fused_backward=True,
    refuse={"b": (RuntimeError, "Boolean inputs not supported for relu"), "c": _CLAMP_COMPLEX})
def _relu(self):
    return jnp.maximum(self, jnp.zeros((), self.dtype))


@_relu.derivative
def _(grad, result):
    return jnp.where(result <= 0, 0, grad)  # relu'(0) = 0; a NaN passes the gradient (torch's threshold_backward)


_SQRT_PI_2 = 2 / math.sqrt(math.pi)
_LN2, _LN10 = math.log(2), math.log(10)


def _check_not_bool_abs(input):
    if input._data.dtype == np.bool_:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")


_BOOL_NEG = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
             "use the `~` or `logical_not()` operator instead.")
_BOOL_SUB = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
             "mask, use the `~` or `logical_not()` operator instead.")
_BOOL_SUB2 = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
              "operator instead.")


def _check_not_bool_neg(input):
    if input._data.dtype == np.bool_:
        raise RuntimeError(_BOOL_NEG)


def _bool_operand(message, *arrays):
    """torch's backward formulas that subtract or negate an operand fail for a bool one (as its ``-`` does)."""
    if any(a is not None and a.dtype == bool for a in arrays):
        raise RuntimeError(message)


def _no_inplace_derivative(name, entry):
    """torch has no derivative for a few in-place variants (asinh_): their node (<Name>Backward1) raises."""
    def derivative(grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not implemented.")
    return _entry(name.capitalize() + "Backward1", (), entry.forward, derivative)


def _real_sign(self):
    """torch's sign of a real tensor: NaN and -0. give 0."""
    return jnp.where(jnp.isnan(self) | (self == 0), 0, jnp.sign(self)).astype(self.dtype) if self.dtype.kind in "fV" \
        else jnp.sign(self)


def _sgn_forward(self):
    if self.dtype == bool:
        return self
    if not jnp.iscomplexobj(self):
        return _real_sign(self)
    a = jnp.abs(self)
    return jnp.where(a == 0, 0, self / jnp.where(a == 0, 1, a)).astype(self.dtype)


def _sgn_derivative(grad, self, result):
    if not jnp.iscomplexobj(self):
        return jnp.zeros_like(grad)
    a = jnp.abs(self)
    return jnp.where(a == 0, 0, (grad - result * jnp.real(grad * jnp.conj(result))) / a)


def _angle_derivative(grad, self):
    if not jnp.iscomplexobj(self):
        return jnp.zeros_like(grad)
    a2 = jnp.real(self * jnp.conj(self))
    return jnp.where(a2 == 0, 0, grad * self / a2 * 1j)


def _zero_grad(grad):
    return jnp.zeros_like(grad)


# one declaration per op: public name (+ aliases), node name, saved, forward, derivative, options
neg = _unary("neg", _neg, kind="any", aliases=("negative",), check=_check_not_bool_neg, dunders=("__neg__",))
abs = _unary("abs", _abs, kind="any", aliases=("absolute",), check=_check_not_bool_abs,  # noqa: A001
             dunders=("__abs__",), inplace_entry=_entry("AbsBackward0", ("self",), _abs.forward, _abs.backward, refuse={
                 "c": (RuntimeError, "In-place abs is not supported for complex tensors.")}))
exp = _unary("exp", _exp)
exp2 = _unary("exp2", _entry("Exp2Backward0", ("result",), lambda self: jnp.exp2(self),
                             lambda grad, result: grad * jnp.conj(result) * _LN2))
expm1 = _unary("expm1", _entry("Expm1Backward0", ("result",), lambda self: jnp.expm1(self),
                               lambda grad, result: grad * (jnp.conj(result) + 1)))
log = _unary("log", _log)
log1p = _unary("log1p", _entry("Log1PBackward0", ("self",), lambda self: jnp.log1p(self),
                               lambda grad, self: grad / jnp.conj(self + 1)))


def _log2(self):
    """log2, exact at powers of two as torch's (XLA's is log(self) / log(2): log2(8) = 2.9999999999999996)."""
    y = jnp.log2(self)
    if jnp.iscomplexobj(self):
        return y
    m, e = jnp.frexp(self)  # (normal numbers only: XLA's CPU flushes subnormals)
    return jnp.where((m == 0.5) & (self >= jnp.finfo(y.dtype).tiny), (e - 1).astype(y.dtype), y)


def _log10(self):
    """log10, exact at powers of ten as torch's (XLA's: log10(0.1) = -0.9999999999999999)."""
    y = jnp.log10(self)
    if jnp.iscomplexobj(self):
        return y
    r = jnp.round(y)
    return jnp.where(jnp.power(jnp.asarray(10, y.dtype), r) == self, r, y)


log2 = _unary("log2", _entry("Log2Backward0", ("self",), _log2, lambda grad, self: grad / (jnp.conj(self) * _LN2)))
log10 = _unary("log10", _entry("Log10Backward0", ("self",), _log10,
                               lambda grad, self: grad / (jnp.conj(self) * _LN10)))
sqrt = _unary("sqrt", _sqrt)
rsqrt = _unary("rsqrt", _entry("RsqrtBackward0", ("result",), lambda self: jax.lax.rsqrt(self),
                               lambda grad, result: -0.5 * grad * jnp.conj(result) ** 3))
sin = _unary("sin", _sin)
cos = _unary("cos", _cos)
tan = _unary("tan", _entry("TanBackward0", ("result",), lambda self: jnp.tan(self),
                           lambda grad, result: grad * jnp.conj(1 + result * result)))
tanh = _unary("tanh", _tanh)
sinh = _unary("sinh", _entry("SinhBackward0", ("self",), lambda self: jnp.sinh(self),
                             lambda grad, self: grad * jnp.conj(jnp.cosh(self))))
cosh = _unary("cosh", _entry("CoshBackward0", ("self",), lambda self: jnp.cosh(self),
                             lambda grad, self: grad * jnp.conj(jnp.sinh(self))))
asin = _unary("asin", _entry("AsinBackward0", ("self",), lambda self: jnp.arcsin(self),
                             lambda grad, self: grad * jnp.conj(jax.lax.rsqrt(1 - self * self))), aliases=("arcsin",))
acos = _unary("acos", _entry("AcosBackward0", ("self",), lambda self: jnp.arccos(self),
                             lambda grad, self: -grad * jnp.conj(jax.lax.rsqrt(1 - self * self))),
              aliases=("arccos",))
atan = _unary("atan", _entry("AtanBackward0", ("self",), lambda self: jnp.arctan(self),
                             lambda grad, self: grad / jnp.conj(self * self + 1)), aliases=("arctan",))
_asinh = _entry("AsinhBackward0", ("self",), lambda self: jnp.arcsinh(self),
                lambda grad, self: grad * jnp.conj(jax.lax.rsqrt(self * self + 1)))
asinh = _unary("asinh", _asinh, aliases=("arcsinh",), inplace_entry=_no_inplace_derivative("asinh", _asinh))
# torch's formula: for complex z, (z + 1)^-1/2 (z - 1)^-1/2 (its principal branch), z - 1 computed as z + (-1) as
# torch's sub does (the sign of a zero imaginary part picks the branch)
_acosh = _entry("AcoshBackward0", ("self",), lambda self: jnp.arccosh(self),
                lambda grad, self: grad * (jnp.conj(jax.lax.rsqrt(self + 1) * jax.lax.rsqrt(self + -1))
                                           if jnp.iscomplexobj(self) else jax.lax.rsqrt(self * self - 1)))
acosh = _unary("acosh", _acosh, aliases=("arccosh",), inplace_entry=_no_inplace_derivative("acosh", _acosh))
_atanh = _entry("AtanhBackward0", ("self",), lambda self: jnp.arctanh(self),
                lambda grad, self: grad / jnp.conj(1 - self * self))
atanh = _unary("atanh", _atanh, aliases=("arctanh",), inplace_entry=_no_inplace_derivative("atanh", _atanh))
erf = _unary("erf", _entry("ErfBackward0", ("self",), lambda self: jax.lax.erf(self),
                           lambda grad, self: grad * _SQRT_PI_2 * jnp.exp(-self * self), refuse={"c": "erf_vml_cpu"}))
erfc = _unary("erfc", _entry("ErfcBackward0", ("self",), lambda self: jax.lax.erfc(self),
                             lambda grad, self: -grad * _SQRT_PI_2 * jnp.exp(-self * self),
                             refuse={"c": "erfc_vml_cpu"}))
sigmoid = _unary("sigmoid", _sigmoid)
reciprocal = _unary("reciprocal", _entry("ReciprocalBackward0", ("result",), lambda self: 1 / self,
                                         lambda grad, result: -grad * jnp.conj(result * result)))
relu = _unary("relu", _relu, kind="any")
sign = _unary("sign", _entry("SignBackward0", (), lambda self: self if self.dtype == bool else _real_sign(self),
                             _zero_grad, const_grads=True, refuse={"c": (NotImplementedError, (
                                 "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                 "torch.sgn instead."))}), kind="any")
sgn = _unary("sgn", _entry("SgnBackward0", ("self", "result"), _sgn_forward, _sgn_derivative, const_grads=True,
                           const_when=_real_input), kind="any")
floor = _unary("floor", _entry("FloorBackward0", (), lambda self: jnp.floor(self), _zero_grad, const_grads=True,
                               refuse=_rounding("floor", "floor_vml_cpu")), kind="round")
ceil = _unary("ceil", _entry("CeilBackward0", (), lambda self: jnp.ceil(self), _zero_grad, const_grads=True,
                             refuse=_rounding("ceil", "ceil_vml_cpu")), kind="round")
trunc = _unary("trunc", _entry("TruncBackward0", (), lambda self: jnp.trunc(self), _zero_grad, const_grads=True,
                               refuse=_rounding("trunc", "trunc_vml_cpu")), kind="round", aliases=("fix",))
frac = _unary("frac", _entry("FracBackward0", (), lambda self: self - jnp.trunc(self), lambda grad: grad,
                             refuse={_NOT_REAL: "frac_cpu"}), kind="any")
sinc = _unary("sinc", _entry("SincBackward0", ("self",), lambda self: jnp.sinc(self), lambda grad, self: jnp.where(
    self == 0, 0, grad * jnp.conj((jnp.pi * self * jnp.cos(jnp.pi * self) - jnp.sin(jnp.pi * self))
                                  / (jnp.pi * self * self)))))
deg2rad = _unary("deg2rad", _entry("Deg2RadBackward0", (), lambda self: self * (math.pi / 180),
                                   lambda grad: grad * (math.pi / 180),
                                   refuse={"c": (RuntimeError, "deg2rad is not supported for complex tensors.")}))
rad2deg = _unary("rad2deg", _entry("Rad2DegBackward0", (), lambda self: self * (180 / math.pi),
                                   lambda grad: grad * (180 / math.pi),
                                   refuse={"c": (RuntimeError, "rad2deg is not supported for complex tensors.")}))


def _angle_forward(self):
    """torch's angle: of a real number pi if it is negative (not -0.0), else 0 (NaN stays), in its dtype."""
    if jnp.iscomplexobj(self):
        return jnp.angle(self)
    return jnp.where(self < 0, jnp.asarray(jnp.pi, self.dtype), jnp.where(jnp.isnan(self), self, 0).astype(self.dtype))


angle = _unary("angle", _entry("AngleBackward0", ("self",), _angle_forward, _angle_derivative,
                               const_grads=True, const_when=_real_input, layout=_layout.angle_rule), inplace=False)
_silu = _entry("SiluBackward0", ("self",), lambda self: self * jax.nn.sigmoid(self),
               lambda grad, self: grad * jax.nn.sigmoid(self) * (1 + self * (1 - jax.nn.sigmoid(self))),
               refuse={"biu": "silu_cpu"})
_clone = _entry("CloneBackward0", (), lambda self: jnp.array(self, copy=True), lambda grad: grad,
                layout=_layout.like)
_clone_contiguous = _entry("CloneBackward0", (), _clone.forward, _clone.backward, layout=None)
_round = _entry("RoundBackward0", (), lambda self: jnp.round(self), _zero_grad, const_grads=True,
                refuse={"bc": "round_vml_cpu"})
_round_decimals = _entry("RoundBackward1", (), lambda self, *, decimals: jnp.round(self, decimals), _zero_grad,
                         const_grads=True, refuse={_NOT_REAL: "round_cpu"})
# decimals=0: torch's kernel is round's own (refusing as round_vml_cpu), the node still RoundBackward1
_round_decimals0 = _entry("RoundBackward1", (), _round_decimals.forward, _zero_grad, const_grads=True,
                          refuse={_NOT_REAL: "round_vml_cpu"})
_conj_physical = _entry("ConjPhysicalBackward0", (), lambda self: jnp.conj(self), lambda grad: jnp.conj(grad))
_conj_physical_inplace = _entry("ConjPhysicalBackward1", (), lambda self: jnp.conj(self), lambda grad: jnp.conj(grad))


def _logit_forward(self, *, eps):
    x = self if eps is None else jnp.clip(self, eps, 1 - eps)
    return jnp.log(x / (1 - x))


def _logit_derivative(grad, self, eps):
    d = grad / jnp.conj(self * (1 - self))
    if eps is None:  # torch: NaN outside [0, 1]; with eps, zero where the input was clamped
        return jnp.where((self < 0) | (self > 1), jnp.nan, d)
    return jnp.where((self < eps) | (self > 1 - eps), 0, d)


_logit = _entry("LogitBackward0", ("self",), _logit_forward, _logit_derivative, attrs=("eps",),
                refuse={"c": "logit_cpu"})


def _logit_(self, eps=None):
    _check_float_inplace(self, _logit)
    return _apply_inplace(_logit, self, (self,), (eps,))


@public(inplace=_logit_)
def logit(input, eps=None, *, out=None):
    """log(p / (1 - p)), with p clamped to [eps, 1 - eps] when ``eps`` is given (LogitBackward0)."""
    if out is not None:
        return _write_out("logit", lambda: logit(input, eps), out, (input,))
    return _apply_float(_logit, input, (eps,))  # (complex: refused)


@public(dunders=("__pos__",))
def positive(input):
    """+input: the tensor itself (no node), as torch.positive."""
    if input._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _round_(self, *, decimals=None):
    if decimals is None:
        return _round_int_(self) if self._data.dtype.kind in "iu" else _apply_inplace(_round, self, (self,), ())
    return _apply_inplace(_round_decimals if decimals else _round_decimals0, self, (self,), (decimals,))


def _round_int_(self):
    _check_inplace(self)
    self._version_counter().version += 1
    return self


@public(inplace=_round_)
def round(input, *, decimals=None, out=None):  # noqa: A001 - torch's name
    """Round half to even (RoundBackward0), or to ``decimals`` places, any given (RoundBackward1)."""
    if out is not None:
        return _write_out("round", lambda: round(input, **({} if decimals is None else {"decimals": decimals})), out,
                          (input,), "found", input._data.dtype)
    if decimals is None:
        return _integer_copy(input) if input._data.dtype.kind in "iu" else _apply(_round, (input,), ())
    return _apply(_round_decimals if decimals else _round_decimals0, (input,), (decimals,))


def _integer_copy(input):
    """round/floor/ceil/trunc of integers: a copy, laid out by TensorIterator as torch's."""
    return _layout.place(_layout.ti, (input,), (clone(input),))[0]


@public
def clone(input, *, memory_format=None):
    """A copy that is part of the graph (CloneBackward0), in input's layout (torch's preserve_format) or in
    ``memory_format``."""
    if memory_format is None or memory_format is _tensor.preserve_format:
        return _apply(_clone, (input,), ())
    return _layout.formatted(_apply(_clone_contiguous, (input,), ()), memory_format)


@public(function=False)
def contiguous(self, memory_format=None):
    """self if it is contiguous (in ``memory_format``), else a copy laid out so (CloneBackward0)."""
    if memory_format is _tensor.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    memory_format = memory_format or _tensor.contiguous_format
    return self if self.is_contiguous(memory_format=memory_format) else clone(self, memory_format=memory_format)


@public(method=False)
def silu(input, inplace=False):
    """x * sigmoid(x) (SiluBackward0)."""
    if input._requires_grad and input._data.dtype.kind == "c" and _gm._state.grad_enabled:
        raise RuntimeError("silu does not support automatic differentiation for outputs with complex dtype.")
    if inplace:
        return _apply_inplace(_silu, input, (input,), ())
    return _apply(_silu, (input,), ())


@public
def conj(input):
    """Complex conjugate (ConjBackward0): a view that reads input's storage conjugated; a real tensor as is."""
    if input._data.dtype.kind != "c":
        return input
    return _view_apply(_conj, input, ())


def _matrix_transpose(self, name, conjugate, batches=True):
    """tensor.mT / .mH / .H / adjoint(): the last two dims swapped (``conjugate``: then conj()); a 0-d tensor itself
    (conjugated), with torch's deprecation warning; ``batches``: more than 2 dims allowed."""
    n = self.ndim
    if n == 0:
        warnings.warn(f"{name} is deprecated on 0-D tensors. " + (
            "Consider using x.conj()." if conjugate else "This function is the identity in these cases."),
            UserWarning, stacklevel=3)
        return conj(self) if conjugate else self
    if n < 2 or not batches and n != 2:
        what = "matrices or batches of matrices" if batches else "matrices (2-D tensors)"
        hint = " For batches of matrices, consider using tensor.mH" if not batches and n > 2 else ""
        raise RuntimeError(f"tensor.{name.split('.')[-1]} is only supported on {what}. Got {n}-D tensor.{hint}")
    t = transpose(self, -2, -1)
    return conj(t) if conjugate else t


public(lambda self: _matrix_transpose(self, "Tensor.mT", False), name="mT", function=False, method=property)
public(lambda self: _matrix_transpose(self, "Tensor.mH", True), name="mH", function=False, method=property)
public(lambda self: _matrix_transpose(self, "Tensor.H", True, batches=False), name="H", function=False,
       method=property)


@public
def adjoint(input):
    """The conjugate transpose of the last two dims (a view)."""
    return _matrix_transpose(input, "adjoint()", True)


def _conj_physical_(self):
    """In place (ConjPhysicalBackward1), a real tensor too (torch bumps its version and records the node)."""
    return _apply_inplace(_conj_physical_inplace, self, (self,), ())


@public(inplace=_conj_physical_)
def conj_physical(input, *, out=None):
    """Complex conjugate, materialised (ConjPhysicalBackward0); a real tensor is returned as is."""
    if out is not None:
        return _write_out("conj_physical", lambda: conj_physical(input), out, (input,), "found")
    if input._data.dtype.kind != "c":
        return input
    return _apply(_conj_physical, (input,), ())


@public
def resolve_conj(input):
    """A conj() view materialised (CloneBackward0); any other tensor itself."""
    return input.clone() if input._conj else input


@public
def resolve_neg(input):
    """The tensor itself (no negative bit here)."""
    return input


# real / imag: torch builds select(view_as_real(z), -1, i) (SelectBackward0 over ViewAsRealBackward0), views of z
# (of a conjugated z, copies here: torchlike has no negative bit).
@op("ViewAsRealBackward0", save=(), attrs=(), layout=None)
def _view_as_real(self):
    return jnp.stack([jnp.real(self), jnp.imag(self)], axis=-1)


@_view_as_real.derivative
def _(grad):
    return jax.lax.complex(grad[..., 0], grad[..., 1])


def _complex_part(input, index):
    if input._conj:
        return _apply(_select, (_apply(_view_as_real, (input,), ()),), (input._data.ndim, index))
    return _view_apply(_select, _view_apply(_view_as_real, input, ()), (input._data.ndim, index))


def real(input):
    """Real part (SelectBackward0 over ViewAsRealBackward0); a real tensor is returned as is."""
    if input._data.dtype.kind != "c":
        return input
    return _complex_part(input, 0)


def imag(input):
    """Imaginary part (SelectBackward0 over ViewAsRealBackward0); complex tensors only."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _complex_part(input, 1)


public(real, method=property)
public(imag, method=property)


# ----- activations with parameters ----------------------------------------------------------------------
@op("GeluBackward0", save=("self",), attrs=("approximate",), refuse={_NOT_REAL: "GeluKernelImpl"})
def _gelu(self, *, approximate):
    return jax.nn.gelu(self, approximate=approximate == "tanh")


@_gelu.derivative
def _(grad, self, approximate):
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = jnp.tanh(k * (self + 0.044715 * self ** 3))
        d = 0.5 * (1 + t) + 0.5 * self * (1 - t * t) * k * (1 + 3 * 0.044715 * self * self)
    else:
        cdf = 0.5 * (1 + jax.lax.erf(self / math.sqrt(2)))
        pdf = jnp.exp(-0.5 * self * self) / math.sqrt(2 * math.pi)
        d = cdf + self * pdf
    return grad * d


@public(method=False)
def gelu(input, approximate="none"):
    """Gaussian error linear unit, exact (erf) or ``approximate="tanh"`` (GeluBackward0)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _apply(_gelu, (input,), (approximate,))


@op("SoftplusBackward0", save=("self",), attrs=("beta", "threshold"), refuse={_NOT_REAL: "softplus_cpu"},
    dynamic=("beta", "threshold"))
def _softplus(self, *, beta, threshold):
    bx = self * beta
    return jnp.where(bx > threshold, self, jnp.log1p(jnp.exp(bx)) / beta)


@_softplus.derivative
def _(grad, self, beta, threshold):
    bx = self * beta
    return jnp.where(bx > threshold, grad, grad * jax.nn.sigmoid(_torch_mask(bx, bx < threshold)))


@public(method=False)
def softplus(input, beta=1, threshold=20):
    """log(1 + exp(beta x)) / beta, linear above ``threshold`` (SoftplusBackward0)."""
    return _apply(_softplus, (input,), (beta, threshold))


@op("LeakyReluBackward0", save=("self",), attrs=("negative_slope",), fused_backward=True,
    refuse={_NOT_REAL: "leaky_relu_cpu"}, dynamic=("negative_slope",))
def _leaky_relu(self, *, negative_slope):
    return jnp.where(self > 0, self, self * negative_slope)


@_leaky_relu.derivative
def _(grad, self, negative_slope):
    return jnp.where(self > 0, grad, grad * negative_slope)


_leaky_relu_inplace = _entry(  # torch's in-place variant saves the result instead of the input
    "LeakyReluBackward1", ("result",), _leaky_relu.forward,
    lambda grad, result, negative_slope: jnp.where(result > 0, grad, grad * negative_slope),
    attrs=("negative_slope",), fused_backward=True, refuse={_NOT_REAL: "leaky_relu_cpu"}, dynamic=("negative_slope",))


@public(method=False)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x if x > 0 else negative_slope * x (LeakyReluBackward0; in place: LeakyReluBackward1)."""
    if inplace:
        return _apply_inplace(_leaky_relu_inplace, input, (input,), (negative_slope,))
    return _apply(_leaky_relu, (input,), (negative_slope,))


@op("HardtanhBackward0", save=("self",), attrs=("max_val", "min_val"), fused_backward=True,
    refuse={"b": (RuntimeError, "Bool inputs not supported for hardtanh"), "c": _CLAMP_COMPLEX},
    dynamic=("min_val", "max_val"))
def _hardtanh(self, *, min_val, max_val):
    return jnp.minimum(jnp.maximum(self, jnp.asarray(min_val, self.dtype)), jnp.asarray(max_val, self.dtype))


@_hardtanh.derivative
def _(grad, self, min_val, max_val):
    return jnp.where((self <= min_val) | (self >= max_val), 0, grad)  # zero at the bounds, unlike clamp


@public(method=False)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val) with zero gradient at and beyond the bounds (HardtanhBackward0)."""
    if inplace:
        return _apply_inplace(_hardtanh, input, (input,), (min_val, max_val))
    return _apply(_hardtanh, (input,), (min_val, max_val))


@public(method=False)
def relu6(input, inplace=False):
    """min(max(x, 0), 6) (HardtanhBackward0)."""
    return hardtanh(input, 0, 6, inplace)


def _elu_forward(self, *, alpha, scale, input_scale):
    return jnp.where(self > 0, self * scale, jnp.expm1(self * input_scale) * (alpha * scale))


def _elu_grad(grad, self, alpha, scale, input_scale):
    neg = _torch_mask(self, self < 0)  # torch's second derivative is 0 at 0 (and its NaN input takes the slope scale)
    return jnp.where(~(self <= 0), grad * scale * _one_masked(self),
                     grad * (input_scale * alpha * scale) * jnp.exp(neg * input_scale))


def _elu_result_grad(grad, result, alpha, scale, input_scale):
    """elu's gradient in terms of its result (the in-place variants save the result)."""
    return jnp.where(~(result <= 0), grad * scale * _one_masked(result),
                     grad * input_scale * (_torch_mask(result, result < 0) + alpha * scale))


_ELU_ATTRS = ("alpha", "input_scale", "scale")
_ELU_REFUSE = {_NOT_REAL: "elu_cpu"}
_elu = _entry("EluBackward0", ("self",), _elu_forward, _elu_grad, attrs=_ELU_ATTRS, refuse=_ELU_REFUSE,
              dynamic=_ELU_ATTRS)
_elu_inplace = _entry("EluBackward1", ("result",), _elu_forward, _elu_result_grad, attrs=_ELU_ATTRS,
                      refuse=_ELU_REFUSE, dynamic=_ELU_ATTRS)


def _celu_scale(alpha):
    """The input scale of torch's celu backward, elu_backward(..., 1.0 / alpha.toFloat()): alpha in float32."""
    return 1 / float(np.float32(alpha))


def _celu_forward(self, *, alpha):  # torch's forward is elu(x, alpha, scale=1, input_scale=1/alpha), exact
    return _elu_forward(self, alpha=alpha, scale=1, input_scale=1 / alpha)


_celu = _entry("CeluBackward0", ("self",), _celu_forward,
               lambda grad, self, alpha: _elu_grad(grad, self, alpha, 1, _celu_scale(alpha)), attrs=("alpha",),
               refuse=_ELU_REFUSE)
_celu_inplace = _entry("CeluBackward1", ("result",), _celu_forward,
                       lambda grad, result, alpha: _elu_result_grad(grad, result, alpha, 1, _celu_scale(alpha)),
                       attrs=("alpha",), refuse=_ELU_REFUSE)


def _celu_(input, alpha=1.0):
    return _apply_inplace(_celu_inplace, input, (input,), (alpha,))


@public(method=False)
def celu_(input, alpha=1.0):
    """In-place celu (CeluBackward1)."""
    return _celu_(input, alpha)


@public(method=False)
def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (CeluBackward0; in place: CeluBackward1)."""
    if inplace:
        return _celu_(input, alpha)
    return _apply(_celu, (input,), (alpha,))


@public(method=False)
def elu(input, alpha=1.0, inplace=False, *, _scale=1, _input_scale=1):
    """x if x > 0 else alpha * (exp(x) - 1) (EluBackward0; in place: EluBackward1)."""
    if inplace:
        return _apply_inplace(_elu_inplace, input, (input,), (alpha, _scale, _input_scale))
    return _apply(_elu, (input,), (alpha, _scale, _input_scale))


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


@public(method=False)
def selu(input, inplace=False):
    """scale * elu(x, alpha) with the self-normalising constants (EluBackward0)."""
    return elu(input, _SELU_ALPHA, inplace, _scale=_SELU_SCALE)


@op("LogSigmoidBackward0", save=("self", "buffer"), outputs=("result", "buffer"), nondiff=("buffer",), attrs=(),
    refuse={_NOT_REAL: "log_sigmoid_cpu"}, layout=None)
def _logsigmoid(self):
    buffer = jnp.exp(-jnp.abs(self))
    return jnp.minimum(self, 0) - jnp.log1p(buffer), buffer


@_logsigmoid.derivative
def _(grads, self):
    # torch's buffer (exp(-|x|)) is not differentiable: the formula recomputes it from self, so that create_graph
    # differentiates it, and never goes back through this node (freed after a backward without retain_graph)
    buffer = jnp.exp(-jnp.abs(self))
    sign = jnp.where(self < 0, 1, -1)
    return grads[0] * (jnp.where(self < 0, 1, 0) - sign * buffer / (1 + buffer))


@public(method=False)
def logsigmoid(input):
    """log(sigmoid(x)), computed stably (LogSigmoidBackward0)."""
    return _apply(_logsigmoid, (input,), ())[0]


# ----- binary arithmetic -------------------------------------------------------------------------------
def _binary_dtype(a, b):
    """torch's result dtype of (a, b): fast paths for the common cases, else the full rule."""
    if isinstance(a, Tensor):
        da = a._data.aval.dtype
        if isinstance(b, Tensor):
            if b._data.aval.dtype == da:
                return da
        elif type(b) is float and da.kind in "fc":
            return da
        elif type(b) is int and da.kind in "fciu":
            return da
    return _dtype._result_type(_number(a), _number(b))._np


def _binary(entry, a, b, extra=()):
    dt = _binary_dtype(a, b)
    return _apply(entry, (_wrap_scalar(a), _wrap_scalar(b)), (dt,) + extra)


def _check_divisor(dt, other):
    """torch's integer division by zero (a value read, for integer dtypes only)."""
    if dt.kind in "iu" and not (np.asarray(other._data).all() if isinstance(other, Tensor) else _number(other)):
        raise RuntimeError("ZeroDivisionError")


def _int_division(entry, a, b, extra=()):
    """``_binary`` of floor_divide, fmod, remainder, div with a rounding mode: integers refuse a zero divisor
    (after torch's shape check)."""
    dt = _binary_dtype(a, b)
    if dt.kind in "iu" and isinstance(a, Tensor) and isinstance(b, Tensor):
        _broadcast_shape(a._data.shape, b._data.shape)
    _check_divisor(dt, b)
    return _apply(entry, (_wrap_scalar(a), _wrap_scalar(b)), (dt,) + extra)


def _int_division_(entry, self, other, extra=()):
    """``_binary_inplace`` of the same ops (the zero divisor after torch's leaf, shape and cast checks)."""
    dt = _binary_dtype(self, other)
    if dt.kind in "iu":
        _check_inplace(self, others=(other,))
        _check_inplace_shape(self, other)
        _check_cast(dt, self)
    _check_divisor(dt, other)
    return _binary_inplace(entry, self, other, extra)


def _check_cast(result_dtype, self, entry=None, inputs=(), extra=()):
    """torch's cast check of an in-place result into self; then, when ``entry`` (the op, run on ``inputs`` with
    statics ``extra`` after the dtype) computes in a promoted dtype, torch's kernel refusal names that dtype."""
    dst = self._data.dtype
    if result_dtype != dst:
        if not _can_cast(result_dtype, dst):
            raise RuntimeError(f"result type {_type_word(result_dtype)} can't be cast to the desired output type "
                               f"{_type_word(dst)}")
        if entry is not None and entry.refuse is not None and np.dtype(result_dtype).kind in entry.refuse:
            statics = dict(zip(entry.statics, (result_dtype,) + tuple(extra)))
            error = _refused(entry.refuse, result_dtype, statics, [
                t._data.astype(result_dtype) if isinstance(t, Tensor) else t for t in inputs])
            if error is not None:
                raise error


def _check_inplace_shape(self, *others):
    """torch's TensorIterator checks of ``self.op_(*others)``: no partial overlap of self with an operand, then
    the operands broadcast to self's shape."""
    if self._storage is not None:
        _check_input_overlap(self, others)
    shape = self._data.shape
    for o in others:
        if isinstance(o, Tensor) and o._data.shape != shape:
            shape = _broadcast_shape(shape, o._data.shape)
    if shape != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f"{list(shape)}")


def _inplace_checks(self, *others, result_dtype=None, entry=None):
    """torch's checks of an in-place op, in its order: leaf/view/version, broadcast to self's shape, then the cast
    of the result type (``result_dtype``) to self's dtype (and ``entry``'s refusal of it: see _check_cast)."""
    _check_inplace(self, others=others)
    _check_inplace_shape(self, *others)
    if result_dtype is not None:
        _check_cast(result_dtype, self, entry, (self,) + others)


def _binary_inplace(entry, self, other, extra=(), result_dtype=None, check=None, alpha=None):
    """``self.op_(other)``: torch's checks in its order (leaf, the op's own ``check``, shape, cast, ``alpha``),
    then computes in self's dtype."""
    _check_inplace(self, others=(other,), early=None if check is None else lambda: check(self, other))
    _check_integer_target(entry, self, (self, _wrap_scalar(other)))
    if check is not None:
        check(self, other)
    _check_inplace_shape(self, other)
    if alpha is not None:
        extra = (alpha,)
    _check_cast(result_dtype if result_dtype is not None else _binary_dtype(self, other), self, entry,
                (self, _wrap_scalar(other)), extra)
    if alpha is not None and alpha != 1:
        _check_alpha(self._data.dtype, alpha)
    return _apply_inplace(entry, self, (self, _wrap_scalar(other)), (self._data.dtype,) + extra)


def _check_alpha(dtype, alpha, operands=()):
    """torch's alpha check, after TensorIterator's broadcast check of ``operands``."""
    if isinstance(alpha, float) and np.dtype(dtype).kind in "biu":
        _check_broadcast([t._data for t in operands if isinstance(t, Tensor)])
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def _is_bool(x):
    return x._data.dtype == np.bool_ if isinstance(x, Tensor) else type(x) is bool


def _check_bool_sub(a, b):
    """torch rejects `-` with any bool operand."""
    ab, bb = _is_bool(a), _is_bool(b)
    if ab and bb:
        raise RuntimeError(_BOOL_SUB2)
    if ab or bb:
        raise RuntimeError(_BOOL_SUB)


def _scaled(x, dtype, alpha):
    x = x.astype(dtype)
    return x if alpha == 1 else x * alpha


@op("AddBackward0", save=(), attrs=("alpha",))
def _add(self, other, *, dtype, alpha):
    return self.astype(dtype) + _scaled(other, dtype, alpha)


@_add.derivative
def _(grad, alpha):
    return grad, (grad if alpha == 1 else grad * alpha)


# alpha != 1: the same nodes with alpha traced, so a new alpha (a learning rate in p.add_(g, alpha=-lr)) reuses
# the program instead of compiling another
@op("AddBackward0", save=(), attrs=("alpha",), dynamic=("alpha",))
def _add_scaled(self, other, *, dtype, alpha):
    return self.astype(dtype) + other.astype(dtype) * jnp.asarray(alpha, dtype)


@_add_scaled.derivative
def _(grad, alpha):
    return grad, grad * jnp.asarray(alpha, grad.dtype)


@op("SubBackward0", save=(), attrs=("alpha",), dynamic=("alpha",))
def _sub_scaled(self, other, *, dtype, alpha):
    return self.astype(dtype) - other.astype(dtype) * jnp.asarray(alpha, dtype)


@_sub_scaled.derivative
def _(grad, alpha):
    return grad, -grad * jnp.asarray(alpha, grad.dtype)


def _alpha(alpha):
    """alpha as a Python number (torch takes a 0-d tensor too)."""
    return alpha.item() if isinstance(alpha, Tensor) else alpha


@op("SubBackward0", save=(), attrs=("alpha",))
def _sub(self, other, *, dtype, alpha):
    return self.astype(dtype) - _scaled(other, dtype, alpha)


@_sub.derivative
def _(grad, alpha):
    return grad, -grad * alpha


def _rsub_forward(self, other, *, dtype, alpha):
    return other.astype(dtype) - _scaled(self, dtype, alpha)


def _rsub_layout(args, shape):  # torch's rsub is sub(other, self)
    return _layout.ti(args[::-1], shape)


_rsub_tensor = _entry("RsubBackward0", (), _rsub_forward, lambda grad, alpha: (-grad * alpha, grad), attrs=("alpha",),
                      layout=_rsub_layout)
_rsub_scalar = _entry("RsubBackward1", (), _rsub_forward, lambda grad, alpha: -grad * alpha, attrs=("alpha",),
                      nondiff=("other",), layout=_rsub_layout)


@op("MulBackward0", save={"self": ("other",), "other": ("self",)}, attrs=())
def _mul(self, other, *, dtype):
    return _astype(self, dtype) * _astype(other, dtype)


@_mul.derivative
def _(grad, self, other, dtype):
    ga = grad * jnp.conj(_factor(other, dtype)) if other is not None else None
    gb = grad * jnp.conj(_factor(self, dtype)) if self is not None else None
    return ga, gb


def _factor(x, dtype):
    """x in dtype as an operand of a product or quotient: a bool one behind a barrier, since XLA rewrites x *
    convert(b) as a select (0 where torch's inf * 0 is NaN, +0 where torch's 0 / -2.5 is -0)."""
    return jax.lax.optimization_barrier(x.astype(dtype)) if x.dtype == bool else x.astype(dtype)


def _ieee_div(a, b):
    """a / b rounded as IEEE division, as torch's: XLA turns a division by a broadcast divisor (a scalar, a row)
    into a product with its reciprocal, an ulp off (``x / x.max()`` would miss 1 at the max), so such a divisor is
    broadcast behind a barrier."""
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    if jnp.shape(b) != shape:
        b = jax.lax.optimization_barrier(jnp.broadcast_to(jnp.asarray(b, jnp.result_type(a, b)), shape))
    return a / b


def _cdiv(a, b):
    """a / b (see _ieee_div); complex: a zero divisor gives torch's (c10::complex's) infinities, real part
    a.real / |b.real|, imaginary a.imag / |b.imag| (XLA's follow the zeros' signs)."""
    if not jnp.issubdtype(b.dtype, jnp.complexfloating):
        return _ieee_div(a, b)
    zero = (b.real == 0) & (b.imag == 0)  # (each branch divides safely where it is not taken: no NaN gradients)
    inf = jax.lax.complex(a.real / jnp.where(zero, jnp.abs(b.real), 1), a.imag / jnp.where(zero, jnp.abs(b.imag), 1))
    return jnp.where(zero, inf, _ieee_div(a, jnp.where(zero, 1, b)))


@op("DivBackward0", save={"self": ("other",), "other": ("self", "other")}, attrs=())
def _div(self, other, *, dtype):
    return _cdiv(_astype(self, dtype), _astype(other, dtype))


@_div.derivative
def _div_grad(grad, self, other, dtype):
    other = other.astype(dtype)
    ga = _cdiv(grad, jnp.conj(other))
    # torch's (self / other) / other: a barrier keeps XLA from rewriting it as self / (other * other)
    gb = -grad * jnp.conj(_cdiv(jax.lax.optimization_barrier(_cdiv(self.astype(dtype), other)), other)) \
        if self is not None else None
    return ga, gb


# an explicit rounding_mode=None: torch's div.Tensor_mode overload (DivBackward2), a true division
_div_none = _entry("DivBackward2", {"self": ("other",), "other": ("self", "other")},
                   lambda self, other, *, dtype, rounding_mode: _div.forward(self, other, dtype=dtype), _div_grad,
                   attrs=("rounding_mode",))
_NO_MODE = object()  # rounding_mode not given: div.Tensor (DivBackward0)
_DIV_MODE_REFUSE = {"bc": lambda statics, args: f"div_{statics['rounding_mode']}_cpu"}


@op("DivBackward2", save={"self": ("other",), "other": ("self", "other")}, attrs=("rounding_mode",), const_grads=True,
    refuse=_DIV_MODE_REFUSE)
def _div_mode(self, other, *, dtype, rounding_mode):
    a, b = _factor(self, dtype), _factor(other, dtype)  # (a bool operand: see _factor)
    if rounding_mode == "trunc":
        return jnp.trunc(_ieee_div(a, b)) if jnp.issubdtype(dtype, jnp.inexact) else jax.lax.div(*jnp.broadcast_arrays(a, b))
    return _floor_div(a, b) if jnp.issubdtype(dtype, jnp.inexact) else jnp.floor_divide(a, b)


def _floor_div(a, b):
    """torch's floating floor division (div_floor_floating): a zero quotient keeps the sign of a / b, x // 0 is
    x / 0, and the quotient is rounded as Python's float // does."""
    mod = jnp.fmod(a, b)
    div = _ieee_div(a - mod, b)
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = jnp.floor(div)
    floor = jnp.where(div - floor > 0.5, floor + 1, floor)
    return jnp.where(b == 0, a / b, jnp.where(div != 0, floor, jnp.copysign(jnp.zeros_like(div), a / b)))


@_div_mode.derivative
def _(grad):
    return jnp.zeros_like(grad), jnp.zeros_like(grad)




def _not_implemented(aten_name, forward, refuse):
    """torch's NotImplemented node: edges only for the inputs that require grad; backward raises. An integer
    result takes no history (torch's integer floor_divide / scalar % tensor: no node, no dtype error)."""
    def derivative(grad):
        raise RuntimeError(f"derivative for aten::{aten_name} is not implemented")
    return {diff: _entry("torch::autograd::NotImplemented", (), forward, derivative, refuse=refuse, runs_first=True, int_plain=True,
                         nondiff=tuple(n for n, d in zip(("self", "other"), diff) if not d))
            for diff in ((True, True), (True, False), (False, True))}


def _needs(a, b):
    ra = isinstance(a, Tensor) and a._requires_grad
    rb = isinstance(b, Tensor) and b._requires_grad
    return (ra, rb) if ra or rb else (True, True)


_floor_divide = _not_implemented("floor_divide", _div_mode.forward, _DIV_MODE_REFUSE)
_floor_divide_inplace = _not_implemented("floor_divide_", _div_mode.forward, _DIV_MODE_REFUSE)
_rremainder = _not_implemented("remainder", lambda self, other, *, dtype: jnp.remainder(
    self.astype(dtype), other.astype(dtype)), {"bc": "remainder_cpu"})


def _power(x, e):
    """x ** e; for integers, torch's rule for a negative exponent: 1 and -1 give +-1, every other base 0."""
    if not jnp.issubdtype(x.dtype, jnp.integer):
        return jnp.power(x, e)
    one = jnp.ones((), x.dtype)
    negative = jnp.where(x == 1, one, jnp.where(x == -1, jnp.where(e % 2 == 0, one, -one), 0))
    return jnp.where(e < 0, negative, jnp.power(x, jnp.maximum(e, 0)))


def _zero_exponent(node):
    e = node._for_backward[[s[0] for s in node._op.saves].index("exponent")].unpack_data(node)
    return not isinstance(e, jax.core.Tracer) and bool(e == 0)


# torch's gradient for a zero exponent is zeros_like(self), without history
@op("PowBackward0", save=("self", "exponent"), nondiff=("exponent",), attrs=(), const_grads=True,
    const_when=_zero_exponent, saved=_as_number("exponent"))
def _pow_scalar(self, exponent, *, dtype):
    if dtype == bool:  # (torch: x ** 1 is a copy, x ** 0 ones, for any dtype)
        return self | ~exponent
    return _power(self.astype(dtype), exponent.astype(dtype))


@_pow_scalar.derivative
def _(grad, self, exponent, dtype):
    e = exponent.astype(dtype)
    safe = jnp.where(e == 0, 1, e)  # e == 0: torch returns zeros; no 0 * inf in the unused branch either
    return jnp.where(e == 0, 0, grad * jnp.conj(safe * _pow_torch(self.astype(dtype), safe - 1)))




def _exponent_grad(grad, x, e, result):
    """torch's pow_backward_exponent: 0 where x == 0 and the exponent is real and >= 0."""
    e_nonneg = (jnp.imag(e) == 0) & (jnp.real(e) >= 0) if jnp.iscomplexobj(e) else e >= 0
    return grad * jnp.conj(jnp.where((x == 0) & e_nonneg, 0, result * jnp.log(x)))


@op("PowBackward1", save=("self", "exponent", "result"), attrs=(), refuse={"b": "pow"})
def _pow(self, exponent, *, dtype):
    return _power(self.astype(dtype), exponent.astype(dtype))


@_pow.derivative
def _(grad, self, exponent, result, dtype, grad_input_mask):
    if grad_input_mask[0]:  # (self's gradient: exponent - 1)
        _bool_operand(_BOOL_SUB, exponent)
    x, e = self.astype(dtype), exponent.astype(dtype)
    gx = jnp.where(e == 0, 0, grad * jnp.conj(e * jnp.power(x, e - 1)))
    return gx, _exponent_grad(grad, x, e, result)


@op("PowBackward2", save=("self", "exponent", "result"), nondiff=("self",), attrs=(), saved=_as_number("self"),
    refuse={"b": "pow"}, layout=None)  # (torch's pow(Scalar, Tensor) makes a row-major result)
def _rpow(self, exponent, *, dtype):
    return _power(self.astype(dtype), exponent.astype(dtype))


@_rpow.derivative
def _(grad, self, exponent, result, dtype):
    return _exponent_grad(grad, self.astype(dtype), exponent.astype(dtype), result)




@op("MaximumBackward0", save=("self", "other"), attrs=(),
    refuse={"c": (RuntimeError, "maximum not implemented for complex tensors.")})
def _maximum(self, other, *, dtype):
    return jnp.maximum(self.astype(dtype), other.astype(dtype))


@_maximum.derivative
def _(grad, self, other):
    g = jnp.where(self == other, grad / 2, grad)  # ties share the gradient; NaN passes it to both
    return jnp.where(self < other, 0, g), jnp.where(self > other, 0, g)


@op("MinimumBackward0", save=("self", "other"), attrs=(),
    refuse={"c": (RuntimeError, "minimum not implemented for complex tensors.")})
def _minimum(self, other, *, dtype):
    return jnp.minimum(self.astype(dtype), other.astype(dtype))


@_minimum.derivative
def _(grad, self, other):
    g = jnp.where(self == other, grad / 2, grad)
    return jnp.where(self > other, 0, g), jnp.where(self < other, 0, g)


@op("Atan2Backward0", save=("self", "other"), attrs=(), refuse={"c": "atan2_cpu"})
def _atan2(self, other, *, dtype):
    return jnp.arctan2(self.astype(dtype), other.astype(dtype))


@_atan2.derivative
def _(grad, self, other, dtype, grad_input_mask):
    if grad_input_mask[1]:  # (other's gradient: -self / ...)
        _bool_operand(_BOOL_NEG, self)
    x, y = self.astype(dtype), other.astype(dtype)
    d = x * x + y * y
    r = jnp.where(d == 0, 0, 1 / d)  # torch: zero gradient at the origin (and NaN in its derivative there)
    return grad * y * r, -grad * x * r


@op("HypotBackward0", save={"self": ("self",), "other": ("other",), "result": ()}, attrs=(),
    refuse={_NOT_REAL: "hypot_cpu"})
def _hypot(self, other, *, dtype):
    return jnp.hypot(self.astype(dtype), other.astype(dtype))


@_hypot.derivative
def _(grad, self, other, result, dtype):
    return (grad * self.astype(dtype) / result if self is not None else None,
            grad * other.astype(dtype) / result if other is not None else None)


@op("LogaddexpBackward0", save=("self", "other"), attrs=(), refuse={"biu": "logaddexp_cpu"}, real_grads=False)
def _logaddexp(self, other, *, dtype):
    x, y = self.astype(dtype), other.astype(dtype)
    if not jnp.issubdtype(dtype, jnp.complexfloating):
        return jnp.logaddexp(x, y)
    # torch's complex helper: max + log1p(exp(min - max)) by real part, so the result keeps max's imaginary part
    # (not wrapped into (-pi, pi]); log(exp(min) + exp(max)) where the real parts are the same infinity
    x_is_min = x.real <= y.real
    lo, hi = jnp.where(x_is_min, x, y), jnp.where(x_is_min, y, x)
    both_inf = ~jnp.isfinite(lo.real) & (lo.real == hi.real)
    safe = jnp.where(both_inf, 0, lo - hi)
    out = jnp.log1p(jnp.exp(safe)) + hi
    out = jnp.where(both_inf, jnp.where(lo.real < 0, lo, jnp.log(jnp.exp(lo) + jnp.exp(hi))), out)
    return jnp.where(jnp.isnan(x.real) | jnp.isnan(y.real), jnp.full_like(out, complex(np.nan, np.nan)), out)


@_logaddexp.derivative
def _(grad, self, other, dtype):
    _bool_operand(_BOOL_SUB, self, other)
    x, y = self.astype(dtype), other.astype(dtype)
    return grad / jnp.conj(1 + jnp.exp(y - x)), grad / jnp.conj(1 + jnp.exp(x - y))


def _fmod_forward(self, other, *, dtype):
    return jnp.fmod(self.astype(dtype), other.astype(dtype))


def _remainder_forward(self, other, *, dtype):
    return jnp.remainder(self.astype(dtype), other.astype(dtype))


_FMOD_REFUSE, _REMAINDER_REFUSE = {"bc": "fmod_cpu"}, {"bc": "remainder_cpu"}
_fmod_scalar = _entry("FmodBackward0", (), _fmod_forward, lambda grad: grad, nondiff=("other",), refuse=_FMOD_REFUSE)
_SAVE_FOR_OTHER = {"self": ("other",), "other": ("other",)}  # only the gradient of other needs them
_fmod_tensor = _entry("FmodBackward1", _SAVE_FOR_OTHER, _fmod_forward, lambda grad, self, other, dtype: (
    grad, -grad * jnp.trunc(_ieee_div(self.astype(dtype), other.astype(dtype))) if other is not None else None),
    refuse=_FMOD_REFUSE)
_remainder_scalar = _entry("RemainderBackward0", (), _remainder_forward, lambda grad: grad, nondiff=("other",),
                           refuse=_REMAINDER_REFUSE)
_remainder_tensor = _entry("RemainderBackward1", _SAVE_FOR_OTHER, _remainder_forward,
                           lambda grad, self, other, dtype: (
                               grad, -grad * jnp.floor_divide(self.astype(dtype), other.astype(dtype))
                               if other is not None else None), refuse=_REMAINDER_REFUSE)


def _is_tensor_operand(x):
    return isinstance(x, Tensor) and not getattr(x, "_wrapped_number", False)


def _add_(self, other, *, alpha=1):
    alpha = _alpha(alpha)
    return _binary_inplace(_add if alpha == 1 else _add_scaled, self, other, alpha=alpha)


@public(inplace=_add_, dunders=("__add__", ("__radd__", lambda s, o: add(s, o)), ("__iadd__", _add_)))
def add(input, other, *, alpha=1, out=None):
    """input + alpha * other, with torch's type promotion (AddBackward0)."""
    if out is not None:
        return _write_out("add", lambda: add(input, other, alpha=alpha), out, (input, other))
    alpha = _alpha(alpha)
    if alpha != 1:
        _check_alpha(_binary_dtype(input, other), alpha, (input, other))
    return _binary(_add if alpha == 1 else _add_scaled, input, other, (alpha,))


def _sub_(self, other, *, alpha=1):
    alpha = _alpha(alpha)
    return _binary_inplace(_sub if alpha == 1 else _sub_scaled, self, other, check=_check_bool_sub, alpha=alpha)


def _rsub_method(self, other):
    if isinstance(other, Tensor):
        return sub(other, self)
    return rsub(self, other)


@public(aliases=("subtract",), inplace=_sub_, dunders=("__sub__", ("__rsub__", _rsub_method),
                                                        ("__isub__", _sub_)))
def sub(input, other, *, alpha=1, out=None):
    """input - alpha * other (SubBackward0); bool tensors are rejected as in torch."""
    if out is not None:
        return _write_out("sub", lambda: sub(input, other, alpha=alpha), out, (input, other))
    dt = _binary_dtype(input, other)
    _check_bool_sub(input, other)
    alpha = _alpha(alpha)
    if alpha != 1:
        _check_alpha(dt, alpha, (input, other))
    return _apply(_sub if alpha == 1 else _sub_scaled, (_wrap_scalar(input), _wrap_scalar(other)), (dt, alpha))


@public(method=False)
def rsub(input, other, *, alpha=1):
    """other - alpha * input (RsubBackward0 for two tensors, RsubBackward1 for a scalar other)."""
    dt = _binary_dtype(input, other)
    _check_bool_sub(input, other)
    if alpha != 1:
        _check_alpha(dt, alpha, (other, input))
    entry = _rsub_tensor if _is_tensor_operand(other) else _rsub_scalar
    try:
        return _apply(entry, (_wrap_scalar(input), _wrap_scalar(other)), (dt, alpha))
    except RuntimeError:
        if entry is _rsub_tensor:  # torch computes other - input: its broadcast error names them in that order
            _check_broadcast([_wrap_scalar(other)._data, _wrap_scalar(input)._data])
        raise


def _mul_(self, other):
    return _binary_inplace(_mul, self, other)


@public(aliases=("multiply",), inplace=_mul_, dunders=("__mul__", ("__rmul__", lambda s, o: mul(s, o)),
                                                        ("__imul__", _mul_)))
def mul(input, other, *, out=None):
    """input * other, with torch's type promotion (MulBackward0)."""
    if out is not None:
        return _write_out("mul", lambda: mul(input, other), out, (input, other))
    return _binary(_mul, input, other)


def _true_div_dtype(input, other):
    dt = _binary_dtype(input, other)
    return dt if dt.kind in "fcV" else _dtype.get_default_dtype()._np


def _check_rounding_mode(rounding_mode):
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")


def _div_(self, other, *, rounding_mode=_NO_MODE):
    _check_autograd_inplace(self, (other,))
    if rounding_mode is _NO_MODE or rounding_mode is None:
        entry, extra = (_div, ()) if rounding_mode is _NO_MODE else (_div_none, (None,))
        return _binary_inplace(entry, self, other, extra, result_dtype=_true_div_dtype(self, other))
    _check_rounding_mode(rounding_mode)
    return _int_division_(_div_mode, self, other, (rounding_mode,))


def _rtruediv(self, other):
    # torch computes `scalar / x` as reciprocal(x) * scalar
    return mul(reciprocal(self), other)


@public(aliases=("divide", "true_divide"), inplace=_div_,
        dunders=("__truediv__", ("__rtruediv__", _rtruediv), ("__itruediv__", _div_)))
def div(input, other, *, rounding_mode=_NO_MODE, out=None):
    """input / other: true division (DivBackward0; integers give the default float dtype; DivBackward2 with an
    explicit ``rounding_mode=None``), or rounded with ``rounding_mode="trunc"|"floor"`` (DivBackward2, zero
    gradient)."""
    if out is not None:
        mode = {} if rounding_mode is _NO_MODE else {"rounding_mode": rounding_mode}  # (the guard refuses _NO_MODE)
        return _write_out("div", lambda: div(input, other, **mode), out, (input, other))
    if rounding_mode is _NO_MODE or rounding_mode is None:
        entry, extra = (_div, ()) if rounding_mode is _NO_MODE else (_div_none, (None,))
        return _apply(entry, (_wrap_scalar(input), _wrap_scalar(other)), (_true_div_dtype(input, other),) + extra)
    _check_rounding_mode(rounding_mode)
    return _int_division(_div_mode, input, other, (rounding_mode,))


def _floor_divide_(self, other):
    return _int_division_(_floor_divide_inplace[_needs(self, other)], self, other, ("floor",))


@public(inplace=_floor_divide_, dunders=("__floordiv__", ("__rfloordiv__", lambda s, o: floor_divide(o, s)),
                                         ("__ifloordiv__", _floor_divide_)))
def floor_divide(input, other, *, out=None):
    """Division rounded down; not differentiable in torch (a NotImplemented node whose backward raises)."""
    if out is not None:
        return _write_out("floor_divide", lambda: floor_divide(input, other), out, (input, other))
    return _int_division(_floor_divide[_needs(input, other)], input, other, ("floor",))


def _fmod_(self, other):
    return _int_division_(_fmod_tensor if _is_tensor_operand(other) else _fmod_scalar, self, other)


@public(inplace=_fmod_)
def fmod(input, other, *, out=None):
    """C-style remainder, sign of the dividend (FmodBackward0 for a scalar other, FmodBackward1 for a tensor)."""
    if out is not None:
        return _write_out("fmod", lambda: fmod(input, other), out, (input, other))
    return _int_division(_fmod_tensor if _is_tensor_operand(other) else _fmod_scalar, input, other)


def _remainder_(self, other):
    return _int_division_(_remainder_tensor if _is_tensor_operand(other) else _remainder_scalar, self, other)


@public(inplace=_remainder_, dunders=("__mod__", ("__rmod__", lambda s, o: remainder(o, s)),
                                      ("__imod__", _remainder_)))
def remainder(input, other, *, out=None):
    """Python-style remainder, sign of the divisor (RemainderBackward0 / RemainderBackward1)."""
    if out is not None:
        return _write_out("remainder", lambda: remainder(input, other), out, (input, other))
    if not isinstance(input, Tensor):  # Scalar % Tensor has no derivative in torch
        return _int_division(_rremainder[_needs(input, other)], input, other)
    return _int_division(_remainder_tensor if _is_tensor_operand(other) else _remainder_scalar, input, other)


def _check_int_power(input, exponent):
    """torch's refusal of a negative integer number as the exponent of an integer or bool tensor."""
    if type(exponent) is int and exponent < 0 and input._data.dtype.kind in "biu":
        raise RuntimeError("Integers to negative integer powers are not allowed.")


def _pow_(self, exponent):
    _check_int_power(self, exponent)
    return _binary_inplace(_pow if isinstance(exponent, Tensor) else _pow_scalar, self, exponent)


@public(inplace=_pow_, dunders=("__pow__", ("__rpow__", lambda s, o: pow(o, s)), ("__ipow__", _pow_)))
def pow(input, exponent, *, out=None):  # noqa: A001 - torch's name
    """input ** exponent: PowBackward0 (scalar exponent), PowBackward1 (tensors), PowBackward2 (scalar base)."""
    if out is not None:
        return _write_out("pow", lambda: pow(input, exponent), out, (input, exponent))
    if not isinstance(input, Tensor):
        return _binary(_rpow, input, exponent)
    if not isinstance(exponent, Tensor):
        _check_int_power(input, exponent)
        return _binary(_pow_scalar, input, exponent)
    return _binary(_pow, input, exponent)


@public(inplace=lambda self: _pow_(self, 2))
def square(input, *, out=None):
    """input ** 2 (PowBackward0)."""
    if out is not None:
        return _write_out("square", lambda: square(input), out, (input,))
    return pow(input, 2)


@public
def maximum(input, other, *, out=None):
    """Elementwise max; ties split the gradient evenly (MaximumBackward0)."""
    if out is not None:
        return _write_out("maximum", lambda: maximum(input, other), out, (input, other))
    if any(isinstance(t, Tensor) and t._data.dtype.kind == "c" for t in (input, other)):  # before broadcasting
        raise RuntimeError("maximum not implemented for complex tensors.")
    return _binary(_maximum, input, other)


@public
def minimum(input, other, *, out=None):
    """Elementwise min; ties split the gradient evenly (MinimumBackward0)."""
    if out is not None:
        return _write_out("minimum", lambda: minimum(input, other), out, (input, other))
    if any(isinstance(t, Tensor) and t._data.dtype.kind == "c" for t in (input, other)):  # before broadcasting
        raise RuntimeError("minimum not implemented for complex tensors.")
    return _binary(_minimum, input, other)


def _float_binary(entry, input, other):
    return _apply(entry, (_wrap_scalar(input), _wrap_scalar(other)), (_true_div_dtype(input, other),))


def _float_inplace(entry):
    def fn_(self, other):
        return _binary_inplace(entry, self, other, result_dtype=_true_div_dtype(self, other))
    return fn_


@public(aliases=("arctan2",), inplace=_float_inplace(_atan2))
def atan2(input, other, *, out=None):
    """Angle of (other, input) in radians (Atan2Backward0)."""
    if out is not None:
        return _write_out("atan2", lambda: atan2(input, other), out, (input, other))
    return _float_binary(_atan2, input, other)


@public(inplace=lambda self, other: _binary_inplace(_hypot, self, other))
def hypot(input, other, *, out=None):
    """sqrt(input**2 + other**2) (HypotBackward0; integers refused, as in torch)."""
    if out is not None:
        return _write_out("hypot", lambda: hypot(input, other), out, (input, other))
    return _binary(_hypot, input, other)


@public
def logaddexp(input, other, *, out=None):
    """log(exp(input) + exp(other)), computed stably (LogaddexpBackward0; integers refused, as in torch)."""
    if out is not None:
        return _write_out("logaddexp", lambda: logaddexp(input, other), out, (input, other))
    return _binary(_logaddexp, input, other)


# ----- lerp, addcmul, addcdiv ------------------------------------------------------------------------
def _lerp_forward(self, end, weight, *, dtype):
    # torch's formula: exact at weight 0 and weight 1
    a, b, w = self.astype(dtype), end.astype(dtype), weight.astype(dtype)
    small = jnp.abs(w) < 0.5 if jnp.iscomplexobj(w) else w < 0.5
    return jnp.where(small, a + w * (b - a), b - (b - a) * (1 - w))


_lerp_scalar = _entry("LerpBackward0", ("weight",), _lerp_forward, lambda grad, weight, dtype: (
    grad * (1 - weight.astype(dtype)), grad * weight.astype(dtype)), nondiff=("weight",), saved=_as_number("weight"),
    refuse={"biu": "lerp_kernel_scalar"})
# torch saves self and end only for weight's gradient
def _lerp_tensor_grad(grad, self, end, weight, dtype, grad_input_mask):
    if grad_input_mask[0]:  # (self's gradient: 1 - weight, with a 0-d bool weight)
        _bool_operand(_BOOL_SUB2, weight)
    if grad_input_mask[2]:  # (weight's: end - self, both bool for a bool input)
        _bool_operand(_BOOL_SUB2, self)
    return (grad * jnp.conj(1 - weight.astype(dtype)), grad * jnp.conj(weight.astype(dtype)),
            None if self is None else grad * jnp.conj(end.astype(dtype) - self.astype(dtype)))


_lerp_tensor = _entry("LerpBackward1", {"self": ("weight",), "end": ("weight",), "weight": ()}, _lerp_forward,
                      _lerp_tensor_grad, refuse={"biu": "lerp_kernel_tensor"}, real_grads=False)  # (no
# handle_r_to_c in torch's formula)




def _check_lerp(input, end, weight):
    """torch's lerp takes end (and a weight tensor of 1+ dims) of input's dtype, with no promotion."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and (name == "end" or t.ndim) and t._data.dtype != input._data.dtype:
            raise RuntimeError(f"expected dtype {_CPP[input._data.dtype.name]} for `{name}` but got "
                               f"dtype {_CPP[t._data.dtype.name]}")


def _lerp_args(input, end, weight):
    """The entry and result dtype of lerp: a weight tensor (0-d: of any dtype) takes part in the promotion."""
    _check_lerp(input, end, weight)
    if isinstance(weight, Tensor):
        return _lerp_tensor, _dtype._result_type(input, end, weight)._np
    return _lerp_scalar, _binary_dtype(input, end)


def _lerp_(self, end, weight):
    _check_inplace(self, others=(end, weight))
    entry, dt = _lerp_args(self, end, weight)
    _inplace_checks(self, end, weight, result_dtype=dt)
    return _apply_inplace(entry, self, (self, end, _wrap_scalar(weight)), (self._data.dtype,))


@public(inplace=_lerp_)
def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input) (LerpBackward0 for a scalar weight, LerpBackward1 for a tensor)."""
    if out is not None:
        return _write_out("lerp", lambda: lerp(input, end, weight), out, (input, end, weight))
    entry, dt = _lerp_args(input, end, weight)
    return _apply(entry, (input, end, _wrap_scalar(weight)), (dt,))


@op("AddcmulBackward0", save={"tensor1": ("tensor2",), "tensor2": ("tensor1",), "value": ()}, nondiff=("value",),
    attrs=(), saved=_as_number("value"), refuse={"b": "addcmul_cpu_out"})
def _addcmul(self, tensor1, tensor2, value, *, dtype):
    return self.astype(dtype) + value.astype(dtype) * tensor1.astype(dtype) * tensor2.astype(dtype)


@_addcmul.derivative
def _(grad, tensor1, tensor2, value, dtype):
    v = value.astype(dtype)
    g1 = grad * jnp.conj(tensor2.astype(dtype) * v) if tensor2 is not None else None
    g2 = grad * jnp.conj(tensor1.astype(dtype) * v) if tensor1 is not None else None
    return grad, g1, g2


@op("AddcdivBackward0", save={"tensor1": ("tensor2",), "tensor2": (), "value": ()},  # (torch: tensor2 always)
    nondiff=("value",), attrs=(), saved=_as_number("value"))
def _addcdiv(self, tensor1, tensor2, value, *, dtype):
    return self.astype(dtype) + value.astype(dtype) * tensor1.astype(dtype) / tensor2.astype(dtype)


@_addcdiv.derivative
def _(grad, tensor1, tensor2, value, dtype, grad_input_mask):
    if grad_input_mask[1] and tensor2.dtype.kind in "biu":  # torch's value / tensor2 for tensor1's gradient fails
        raise RuntimeError(f"result type {_type_word(_dtype.get_default_dtype()._np)} can't be cast to the desired "
                           f"output type {_type_word(tensor2.dtype)}")
    v, t2 = value.astype(dtype), tensor2.astype(dtype)
    g1 = grad * jnp.conj(v / t2)
    g2 = -grad * jnp.conj(v * tensor1.astype(dtype) / (t2 * t2)) if tensor1 is not None else None
    return grad, g1, g2




def _addc_dtype(input, tensor1, tensor2, value):
    return _dtype._result_type(input, tensor1, tensor2)._np


def _check_addcdiv_ints(tensor1, tensor2):
    if tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can "
                           "be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
                           "for all dtypes.")


def _addc_inplace(entry, name):
    def fn_(self, tensor1, tensor2, *, value=1):
        _check_tensor_arg(name, "tensor1", 1, tensor1)
        _check_tensor_arg(name, "tensor2", 2, tensor2)
        if entry is _addcdiv:  # (its meta function's check, before TensorIterator's)
            _check_autograd_inplace(self, (tensor1, tensor2))
            _check_addcdiv_ints(tensor1, tensor2)
        _inplace_checks(self, tensor1, tensor2, result_dtype=_addc_dtype(self, tensor1, tensor2, value), entry=entry)
        return _apply_inplace(entry, self, (self, tensor1, tensor2, _wrap_scalar(value)), (self._data.dtype,))
    return fn_


@public(inplace=_addc_inplace(_addcmul, "addcmul_"))
def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2 (AddcmulBackward0)."""
    if out is not None:
        return _write_out("addcmul", lambda: addcmul(input, tensor1, tensor2, value=value), out, (input, tensor1, tensor2))
    for position, (arg, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        _check_tensor_arg("addcmul", arg, position, t)
    dt = _addc_dtype(input, tensor1, tensor2, value)
    return _apply(_addcmul, (input, tensor1, tensor2, _wrap_scalar(value)), (dt,))


@public(inplace=_addc_inplace(_addcdiv, "addcdiv_"))
def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2 (AddcdivBackward0); integer tensor1/tensor2 are rejected as in torch."""
    if out is not None:
        return _write_out("addcdiv", lambda: addcdiv(input, tensor1, tensor2, value=value), out, (input, tensor1, tensor2))
    for position, (arg, t) in enumerate((("input", input), ("tensor1", tensor1), ("tensor2", tensor2)), 1):
        _check_tensor_arg("addcdiv", arg, position, t)
    dt = _addc_dtype(input, tensor1, tensor2, value)
    _check_addcdiv_ints(tensor1, tensor2)
    return _apply(_addcdiv, (input, tensor1, tensor2, _wrap_scalar(value)), (dt,))



# ----- clamp, where -------------------------------------------------------------------------------------
def _bound(v, dtype):
    return None if v is None else jnp.asarray(v, dtype)


def _clamp_bool(statics, args):
    """The kernel torch's clamp with scalar bounds does not have for bool (by which bounds are given)."""
    return "clamp_max_scalar_cpu" if statics["min"] is None else "clamp_min_scalar_cpu" if statics["max"] is None \
        else "clamp_scalar_cpu"


@op("ClampBackward1", save=("self",), attrs=("max", "min"), refuse={"b": _clamp_bool, "c": _CLAMP_COMPLEX},
    dynamic=("min", "max"))
def _clamp_scalar(self, *, min, max, dtype):  # noqa: A002
    out = self.astype(dtype)
    if min is not None:
        out = jnp.maximum(out, _bound(min, dtype))
    if max is not None:
        out = jnp.minimum(out, _bound(max, dtype))
    return out


@_clamp_scalar.derivative
def _(grad, self, min, max):  # noqa: A002
    keep = jnp.ones(self.shape, bool)  # the bounds themselves pass the gradient
    if min is not None:
        keep = keep & (self >= min)
    if max is not None:
        keep = keep & (self <= max)
    return jnp.where(keep, grad, 0)


@op("ClampMinBackward0", save=("self",), attrs=("min",),
    refuse={"b": "clamp_min_scalar_cpu", "c": _CLAMP_COMPLEX}, dynamic=("min",))
def _clamp_min(self, *, min, dtype):  # noqa: A002
    return jnp.maximum(self.astype(dtype), _bound(min, dtype))


@_clamp_min.derivative
def _(grad, self, min):  # noqa: A002
    return jnp.where(self >= min, grad, 0)


@op("ClampMaxBackward0", save=("self",), attrs=("max",),
    refuse={"b": "clamp_max_scalar_cpu", "c": _CLAMP_COMPLEX}, dynamic=("max",))
def _clamp_max(self, *, max, dtype):  # noqa: A002
    return jnp.minimum(self.astype(dtype), _bound(max, dtype))


@_clamp_max.derivative
def _(grad, self, max):  # noqa: A002
    return jnp.where(self <= max, grad, 0)


def _clamp_tensors_refusal(statics, args):
    """torch's clamp with tensor bounds: complex input refused; with one bound it runs maximum/minimum (bools
    allowed), with both the clamp kernel (no bool, no complex)."""
    self, lo, hi = args
    if self.dtype.kind == "c":
        return _CLAMP_COMPLEX
    if lo is not None and hi is not None:
        return "clamp_cpu"
    return None if statics["dtype"] == bool else "maximum_cpu" if hi is None else "minimum_cpu"


@op("ClampBackward0", save=("self", "min", "max"), attrs=(), refuse={"bc": _clamp_tensors_refusal})
def _clamp_tensor(self, min, max, *, dtype):  # noqa: A002
    out = self.astype(dtype)
    if min is not None:
        out = jnp.maximum(out, min.astype(dtype))
    if max is not None:
        out = jnp.minimum(out, max.astype(dtype))
    return out


@_clamp_tensor.derivative
def _(grad, self, min, max, dtype):  # noqa: A002
    # torch's clamp_backward_min_max: with min > max the output is max, and only max gets the gradient; it
    # compares in the promoted type, as the forward does (a 0-d float64 bound of a float32 tensor: in float32)
    self, min, max = (None if t is None else t.astype(dtype) for t in (self, min, max))  # noqa: A001
    zero = jnp.zeros((), grad.dtype)
    if min is not None and max is not None:
        return (jnp.where((self >= min) & (self <= max), grad, zero), jnp.where((self < min) & (min < max), grad, zero),
                jnp.where((self > max) | (max < min), grad, zero))
    if min is not None:
        return jnp.where(self >= min, grad, zero), jnp.where(self < min, grad, zero), None
    return jnp.where(self <= max, grad, zero), None, jnp.where(self > max, grad, zero)


_clamp_min_tensor = _entry("ClampMinBackward1", ("self", "min"), lambda self, min, *, dtype: jnp.maximum(
    self.astype(dtype), min.astype(dtype)), lambda grad, self, min, dtype: (
        jnp.where(self.astype(dtype) >= min.astype(dtype), grad, 0), jnp.where(self.astype(dtype) < min.astype(dtype),
                                                                              grad, 0)),
                           refuse={"c": "maximum_cpu"})
_clamp_max_tensor = _entry("ClampMaxBackward1", ("self", "max"), lambda self, max, *, dtype: jnp.minimum(
    self.astype(dtype), max.astype(dtype)), lambda grad, self, max, dtype: (
        jnp.where(self.astype(dtype) <= max.astype(dtype), grad, 0), jnp.where(self.astype(dtype) > max.astype(dtype),
                                                                              grad, 0)),
                           refuse={"c": "minimum_cpu"})


def _scalar_value(v):
    return v.item() if isinstance(v, np.generic) else v


def _check_bound(v):
    """A clamp bound is a tensor, a number or None (else the binding's guard raises torch's error)."""
    if not isinstance(v, (Tensor, bool, int, float, complex, np.generic, type(None))):
        raise TypeError(f"clamp bounds must be tensors or numbers, not {type(v).__name__}")


def _clamp_rule(bound, input, out):
    """out='s dtype rule of clamp: exact for scalar bounds (out the input: the in-place op's), TensorIterator's cast
    for tensor bounds."""
    return None if isinstance(bound, Tensor) else "cpp" if out is input else "found"


def _check_clamp_cast(dt, self):
    """The cast check of clamp_ with scalar bounds: its message names self's C++ type."""
    if not _can_cast(dt, self._data.dtype):
        raise RuntimeError(f"result type {_type_word(dt)} can't be cast to the desired output type "
                           f"{_CPP[self._data.dtype.name]}")


def _clamp_args(input, min, max):  # noqa: A002
    """Which clamp entry, its inputs and statics (torch promotes the input with the bounds)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input._data.dtype.kind == "c":  # torch refuses a complex input before it broadcasts the bounds
        raise NotImplementedError(_CLAMP_COMPLEX[1])
    _check_bound(min)
    _check_bound(max)
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        dt = _dtype._result_type(*(_number(v) for v in (input, min, max) if v is not None))._np
        lo = None if min is None else _wrap_scalar(min)
        hi = None if max is None else _wrap_scalar(max)
        return _clamp_tensor, (input, lo, hi), (dt,)
    min, max = _scalar_value(min), _scalar_value(max)
    if input._data.dtype.kind == "f":  # torch converts the bounds to double first
        for v in (min, max):
            if isinstance(v, complex):
                _check_fits(v, np.dtype(np.float64))
    dt = input._data.aval.dtype
    if dt.kind not in "fc" or type(min) not in _PLAIN or type(max) not in _PLAIN:  # else: the input's dtype
        dt = _dtype._result_type(*(v for v in (input, min, max) if v is not None))._np
    _check_int_bounds(dt, min, max)
    return _clamp_scalar, (input,), (min, max, dt)


_PLAIN = (float, int, type(None))


def _clamp_(self, min=None, max=None):  # noqa: A002
    def early():  # (clamp's meta checks the input and scalar bounds before TensorIterator's overlap check)
        entry, _, statics = _clamp_args(self, min, max)
        if entry is _clamp_scalar:
            _check_clamp_cast(statics[-1], self)
    _check_inplace(self, others=(min, max), early=early)
    entry, args, statics = _clamp_args(self, min, max)
    _check_inplace_shape(self, *args)
    if statics[-1] != self._data.dtype:
        if entry is not _clamp_scalar:  # (tensor bounds: TensorIterator's message; scalar bounds name the C++ type)
            _check_cast(statics[-1], self)
        else:
            _check_clamp_cast(statics[-1], self)
        statics = statics[:-1] + (self._data.dtype,)
    return _apply_inplace(entry, self, args, statics)


@public(aliases=("clip",), inplace=_clamp_)
def clamp(input, min=None, max=None, *, out=None):  # noqa: A002
    """Clamp into [min, max] (ClampBackward1 for scalar bounds, ClampBackward0 for tensor bounds)."""
    if out is not None:
        return _write_out("clamp", lambda: clamp(input, min, max), out, (input, min, max),
                          _clamp_rule(min, input, out) and _clamp_rule(max, input, out))
    entry, args, statics = _clamp_args(input, min, max)
    return _apply(entry, args, statics)




def _clamp_one(scalar_entry, tensor_entry, input, bound):
    if not isinstance(bound, Tensor) and (input._data.dtype.kind == "c" or isinstance(bound, complex)):
        raise NotImplementedError(_CLAMP_COMPLEX[1])  # (a tensor bound: broadcast first)
    _check_bound(bound)
    if isinstance(bound, Tensor):
        return tensor_entry, (input, bound), (_binary_dtype(input, bound),)
    bound = _scalar_value(bound)
    dt = _binary_dtype(input, bound)
    _check_int_bounds(dt, bound)
    return scalar_entry, (input,), (bound, dt)


def _check_int_bounds(dt, *bounds):
    """torch converts a clamp's number bounds to an integer result type checked: one that does not fit raises
    (uint8 takes -255..255, wrapped; the bounds are traced, so nothing else would)."""
    if np.dtype(dt).kind in "iu":
        for v in bounds:
            if v is not None:
                _check_fits(v, np.dtype(dt))


def _clamp_one_(scalar_entry, tensor_entry):
    def fn_(self, bound):
        _check_autograd_inplace(self, (bound,))  # (before the complex refusal, as torch's autograd kernel)
        entry, args, statics = _clamp_one(scalar_entry, tensor_entry, self, bound)
        if entry is scalar_entry:  # (the scalar's cast check in clamp_min's meta, before the overlap check)
            _check_inplace(self, early=lambda: _check_clamp_cast(statics[-1], self))
            _check_clamp_cast(statics[-1], self)
        else:
            _inplace_checks(self, *args, result_dtype=statics[-1], entry=entry)
        return _apply_inplace(entry, self, args, statics[:-1] + (self._data.dtype,))
    return fn_


@public(inplace=_clamp_one_(_clamp_min, _clamp_min_tensor))
def clamp_min(input, min, *, out=None):  # noqa: A002
    """max(input, min) (ClampMinBackward0 for a scalar, ClampMinBackward1 for a tensor)."""
    if out is not None:
        return _write_out("clamp_min", lambda: clamp_min(input, min), out, (input, min), _clamp_rule(min, input, out))
    return _apply(*_clamp_one(_clamp_min, _clamp_min_tensor, input, min))


@public(inplace=_clamp_one_(_clamp_max, _clamp_max_tensor))
def clamp_max(input, max, *, out=None):  # noqa: A002
    """min(input, max) (ClampMaxBackward0 for a scalar, ClampMaxBackward1 for a tensor)."""
    if out is not None:
        return _write_out("clamp_max", lambda: clamp_max(input, max), out, (input, max), _clamp_rule(max, input, out))
    return _apply(*_clamp_one(_clamp_max, _clamp_max_tensor, input, max))



@op("WhereBackward0", save=("condition",), nondiff=("condition",), attrs=(), real_grads=False)
def _where(condition, self, other, *, dtype):
    return jnp.where(condition, self.astype(dtype), other.astype(dtype))


@_where.derivative
def _(grad, condition):
    return jnp.where(condition, grad, 0), jnp.where(condition, 0, grad)


@public(method=lambda self, condition, other: where(condition, self, other))
def where(condition, input=None, other=None, *, out=None):
    """Elementwise choice: input where condition, else other (WhereBackward0)."""
    if out is not None:
        return _write_out("where", lambda: where(condition, input, other), out, (input, other), "where",
                          lambda: _binary_dtype(input, other))  # (torch checks out's dtype first)
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if condition._data.dtype == np.uint8:  # (deprecated in torch, which still takes it: once-a-process warning)
        warn_once("where uint8", "where received a uint8 condition tensor. This behavior is deprecated and will be "
                  "removed in a future version of PyTorch. Use a boolean condition instead.", stacklevel=3)
        condition = condition.to(_dtype.bool)
    if condition._data.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{_type_word(condition._data.dtype)}")
    dt = _binary_dtype(input, other)
    if not isinstance(other, Tensor):  # torch's Scalar overloads cast the tensor first (ToCopyBackward0)
        if isinstance(input, Tensor) and input._data.dtype != dt:
            input = input.to(_dtype._from_np(dt))
    elif not isinstance(input, Tensor) and other._data.dtype != dt:
        other = other.to(_dtype._from_np(dt))
    return _apply(_where, (condition, _wrap_scalar(input), _wrap_scalar(other)), (dt,))



# ----- comparisons and other non-differentiable elementwise ops --------------------------------------------
def _nondiff(name, fn, dunders=(), idunder=None, kernel=None, refuse=None, layout=_layout.ti):
    """Declare a jitted op that never records history (logical ops, isnan, ...); the bitwise (integer dtypes only:
    torch's ``kernel`` name in the error) and logical ones also in place, as ``name_`` (and the dunder ``idunder``);
    ``refuse``: torch's refusals by the input's dtype kind (see _registry._refused), checked when JAX traces it;
    ``layout``: the result's layout rule (ops/_layout.py)."""
    def checked(*arrays):
        if arrays[0].dtype.kind in refuse:
            raise _refused(refuse, arrays[0].dtype, {})
        return fn(*arrays)
    jitted = jax.jit(fn if refuse is None else checked)
    integral = name.startswith("bitwise_") or kernel is not None
    kinds = "iu" if kernel else "biu"  # (the shifts refuse bool too)
    kernel = kernel or name
    rule = ("any" if name.startswith("logical_") else "found" if name == "bitwise_not" else
            "bool_only" if name in ("isposinf", "isneginf", "signbit") else None)

    def call(*args, out=None):
        if out is not None:  # (torch has out= on the logical, bitwise and isposinf/isneginf ops: its guard checks)
            return _write_out(name, lambda: call(*args), out, args, rule,
                              args[0]._data.dtype if rule == "found" else None)
        if integral:
            dt = args[0]._data.dtype if len(args) == 1 else _binary_dtype(*args)
            if dt.kind not in kinds:
                _check_broadcast([a._data for a in args if isinstance(a, Tensor)])  # torch checks shapes first
                raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{_type_word(dt)}\'')
        arrays = [a._data if isinstance(a, Tensor) else a for a in args]
        try:
            out = _wrap(jitted(*arrays))
        except (TypeError, ValueError):  # JAX's shape errors: torch's when the operands do not broadcast
            _check_broadcast([a for a in arrays if hasattr(a, "shape")])
            raise
        return _layout.laid_out(layout, [a for a in args if isinstance(a, Tensor)], (out,))[0]

    def call_(self, *args):  # torch's checks, then the result written in self's dtype (no history)
        if integral:
            _inplace_checks(self, *args, result_dtype=_binary_dtype(self, *args) if args else None)
        else:  # torch's logical_*_ check the shape and TensorIterator's overlaps only (no leaf check, any dtype)
            if self._sgeom is not None:
                _check_overlap(self)
            if self._storage is not None:
                _check_input_overlap(self, args)
            _check_inplace_shape(self, *args)
        data = call(self, *args)._data
        _commit(self, data if data.dtype == self._data.dtype else _cast(data, self._data.dtype))
        return self
    call.__name__ = name
    call.__doc__ = f"Elementwise {name} (no gradient)."
    call_.__name__ = call_.__qualname__ = name + "_"
    call_.__doc__ = f"In-place {name}."
    if idunder:
        dunders += ((idunder, call_),)
    return public(call, dunders=dunders, inplace=call_ if integral or name.startswith("logical_") else None)


def _gcd(a, b):
    """torch's calc_gcd: Euclid's algorithm on |a| and |b| in their dtype with C's remainder (the most negative value
    keeps its sign, as in torch; jnp.gcd never ends there)."""
    def step(state):
        a, b = state
        nz = a != 0
        return jnp.where(nz, jax.lax.rem(b, jnp.where(nz, a, 1)), a), jnp.where(nz, a, b)
    return jax.lax.while_loop(lambda s: jnp.any(s[0] != 0), step, (jnp.abs(a), jnp.abs(b)))[1]


def _lcm(a, b):
    """torch's calc_lcm: abs(a / gcd * b), 0 where gcd is 0, computed as C does (types narrower than int in int, so
    the product wraps after abs)."""
    dt = a.dtype
    wide = jnp.int32 if dt.itemsize < 4 else dt
    g = _gcd(a, b).astype(wide)
    a, b = a.astype(wide), b.astype(wide)
    return jnp.where(g == 0, 0, jnp.abs(jax.lax.div(a, jnp.where(g == 0, 1, g)) * b)).astype(dt)


def _same_dtype(a, b):
    """The operands of a shift in their promoted dtype (lax shifts one dtype)."""
    dt = jnp.result_type(a, b)
    return jnp.asarray(a, dt), jnp.asarray(b, dt)


def _is_operand(x):
    return isinstance(x, (Tensor, bool, int, float, complex, np.generic)) or (
        isinstance(x, np.ndarray) and x.ndim == 0)


def _cmp(name, jfn, dunder, aliases=(), ordered=True):
    """Declare a comparison: torch.<name> with type promotion, its Tensor method, ``name_`` and ``dunder``
    (``ordered``: complex numbers refused)."""
    def fwd(a, b, *, dtype):
        return jfn(a.astype(dtype), b.astype(dtype))
    entry = OpDef(name, fwd, save=(), nondiff=("a", "b"), attrs=(), refuse={"c": f"{name}_cpu"} if ordered else None,
                  layout=_layout.ti)

    def fn(input, other, *, out=None):
        if out is not None:
            return _write_out(name, lambda: fn(input, other), out, (input, other), "any")
        return _binary(entry, input, other)
    fn.__name__ = name
    fn.__doc__ = f"Elementwise {name} with type promotion; a bool tensor (no gradient)."

    def compare(self, other):  # `x == None` is False, as in torch (Python's fallback)
        return fn(self, other) if _is_operand(other) else NotImplemented

    def fwd_(self, other, *, dtype):  # the in-place variant: the result in self's dtype
        return jfn(self.astype(dtype), other.astype(dtype)).astype(self.dtype)
    node = name.capitalize() + "Backward"  # torch's name_ is differentiable, with zero gradients
    refuse = {"c": f"{name}_cpu"} if ordered else None
    entries_ = (_entry(node + "0", (), fwd_, _zero_grad, nondiff=("other",), const_grads=True, refuse=refuse),
                _entry(node + "1", (), fwd_, lambda grad: (jnp.zeros_like(grad), jnp.zeros_like(grad)),
                       const_grads=True, refuse=refuse))

    def fn_(self, other):
        _inplace_checks(self, other)
        dt = _binary_dtype(self, other)
        return _apply_inplace(entries_[_is_tensor_operand(other)], self, (self, _wrap_scalar(other)), (dt,))
    return public(fn, aliases=aliases, inplace=fn_, dunders=((dunder, compare),))


eq = _cmp("eq", jnp.equal, "__eq__", ordered=False)
ne = _cmp("ne", jnp.not_equal, "__ne__", aliases=("not_equal",), ordered=False)
lt = _cmp("lt", jnp.less, "__lt__", aliases=("less",))
le = _cmp("le", jnp.less_equal, "__le__", aliases=("less_equal",))
gt = _cmp("gt", jnp.greater, "__gt__", aliases=("greater",))
ge = _cmp("ge", jnp.greater_equal, "__ge__", aliases=("greater_equal",))

isnan = _nondiff("isnan", jnp.isnan)
isinf = _nondiff("isinf", jnp.isinf, layout=_layout.like_for("biu"))  # (torch: zeros_like of an integer input)
_isfinite = jax.jit(jnp.isfinite)


@public
def isfinite(input):
    """Elementwise isfinite (no gradient); torch's complex result is written in place once (``_version`` 1)."""
    result = _layout.laid_out(_layout.like_for("biu"), (input,), (_wrap(_isfinite(input._data)),))[0]
    return _with_version(result, int(input._data.dtype.kind == "c"))
isposinf = _nondiff("isposinf", jnp.isposinf, refuse={"c": (RuntimeError, "isposinf does not support complex inputs.")})
isneginf = _nondiff("isneginf", jnp.isneginf, refuse={"c": (RuntimeError, "isneginf does not support complex inputs.")})
isreal = _nondiff("isreal", lambda a: jnp.imag(a) == 0 if jnp.iscomplexobj(a) else jnp.ones(a.shape, bool),
                  layout=_layout.like_for("biuf"))  # (torch: ones_like of a real input)
logical_not = _nondiff("logical_not", jnp.logical_not)
logical_and = _nondiff("logical_and", jnp.logical_and)
logical_or = _nondiff("logical_or", jnp.logical_or)
logical_xor = _nondiff("logical_xor", jnp.logical_xor)
bitwise_not = _nondiff("bitwise_not", lambda a: ~a, dunders=(("__invert__", lambda self: _invert(self)),))
bitwise_and = _nondiff("bitwise_and", lambda a, b: a & b, dunders=("__and__", "__rand__"), idunder="__iand__")
bitwise_or = _nondiff("bitwise_or", lambda a, b: a | b, dunders=("__or__", "__ror__"), idunder="__ior__")
bitwise_xor = _nondiff("bitwise_xor", lambda a, b: a ^ b, dunders=("__xor__", "__rxor__"), idunder="__ixor__")
gcd = _nondiff("gcd", lambda a, b: _gcd(*jnp.broadcast_arrays(*_same_dtype(a, b))), kernel="gcd")
lcm = _nondiff("lcm", lambda a, b: _lcm(*jnp.broadcast_arrays(*_same_dtype(a, b))), kernel="lcm")
bitwise_left_shift = _nondiff(  # (lax's shifts give torch's results for shifts past the width: 0, or the sign)
    "bitwise_left_shift", lambda a, b: jnp.left_shift(*jnp.broadcast_arrays(*_same_dtype(a, b))), kernel="lshift",
    dunders=("__lshift__", ("__rlshift__", lambda s, o: bitwise_left_shift(o, s))), idunder="__ilshift__")
bitwise_right_shift = _nondiff(
    "bitwise_right_shift", lambda a, b: jnp.right_shift(*jnp.broadcast_arrays(*_same_dtype(a, b))), kernel="rshift",
    dunders=("__rshift__", ("__rrshift__", lambda s, o: bitwise_right_shift(o, s))), idunder="__irshift__")

def _invert(self):
    """``~self``: integers and bools only (torch's TypeError, not bitwise_not's error)."""
    if self._data.dtype.kind not in "biu":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def _check_same_dtype(input, other):
    """isclose/allclose compare tensors of one dtype only."""
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"{_type_word(input._data.dtype)} did not match {_type_word(other._data.dtype)}")


@public
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all elements are close: |input - other| <= atol + rtol * |other|."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def _with_version(t, version):
    """A result torch builds with ``version`` in-place steps (``close.__ior__(...)``): its ``_version``."""
    if version:
        t._version_counter().version = version
    return t


@public
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise |input - other| <= atol + rtol * |other| (a bool tensor, at torch's ``_version``)."""
    _check_same_dtype(input, other)
    for name, v in (("rtol", rtol), ("atol", atol)):
        if v < 0:
            raise RuntimeError(f"{name} must be greater than or equal to zero, but got {v:g}")
    try:
        result = _wrap(jnp.isclose(input._data, other._data, rtol=rtol, atol=atol, equal_nan=equal_nan))
    except (TypeError, ValueError):  # torch's error when the operands do not broadcast
        _check_broadcast([input._data, other._data])
        raise
    result = _layout.laid_out(_layout.ti, (input, other), (result,))[0]
    return _with_version(result, int(equal_nan and input._data.dtype.kind in "fcV") + int(rtol != 0 or atol != 0))


@public
def equal(input, other):
    """True if both tensors have the same shape and elements."""
    return input.shape == other.shape and bool(jnp.all(input._data == other._data))



# ----- whole-tensor writes: zero_, fill_, copy_ ---------------------------------------------------------------
@op("ZeroBackward0", save=(), attrs=(), const_grads=True)
def _zero(self):
    return jnp.zeros_like(self)


@_zero.derivative
def _(grad):
    return jnp.zeros_like(grad)


@op("FillBackward2", save=(), nondiff=("value",), attrs=(), const_grads=True)
def _fill_scalar(self, value):
    return jnp.full_like(self, _astype(value, self.dtype))


@_fill_scalar.derivative
def _(grad):
    return jnp.zeros_like(grad)


# self's gradient is zeros; value's follows grad
@op("FillBackward3", save=(), attrs=(), const_grads=(0,), real_grads=False)
def _fill_tensor(self, value):
    return jnp.full_like(self, _astype(value, self.dtype))


_OWN_INPUT_CHECK.add(_fill_tensor)  # torch reads the value with item(): it may share self's memory


@_fill_tensor.derivative
def _(grad):
    return jnp.zeros_like(grad), jnp.sum(grad)


@op("torch::autograd::CopyBackwards", save=(), attrs=(), const_grads=(0,), layout=None, int_plain=True)  # self's grad is zeros
def _copy_from(self, src):
    """self's shape and dtype with src's values; self None: a plain copy of src (AccumulateGrad's first grad)."""
    if self is None:
        return src
    return jnp.broadcast_to(_astype(src, self.dtype), self.shape)


@_copy_from.derivative
def _(grad):
    return jnp.zeros_like(grad), grad  # the table sums src's gradient to its shape and casts it to its dtype




@public(name="zero_", function=False)
def _zero_(self):
    """Fill with zeros in place (ZeroBackward0)."""
    return _apply_inplace(_zero, self, (self,), (), ())  # () : allowed into an expanded tensor


@public(name="fill_", function=False)
def _fill_(self, value):
    """Fill with a number or a 0-d tensor in place (FillBackward2 / FillBackward3); a tensor value is copied in
    as copy_ does (a cast: no overflow check, a complex value's imaginary part dropped)."""
    _check_autograd_inplace(self, (value,))
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value.ndim} dimensions.")
        return _apply_inplace(_fill_tensor, self, (self, value), ())
    _check_fits(_number(value), self._data.dtype)
    return _apply_inplace(_fill_scalar, self, (self, _wrap_scalar(value)), (), ())  # as zero_


@public(name="copy_", function=False)
def _copy_(self, src, non_blocking=False):
    """Copy src's values (a tensor, broadcast and cast to self's dtype, or a number) into self
    (torch::autograd::CopyBackwards). An integer target is outside autograd altogether (torch: no check, no
    node; its history, if it has one, stays)."""
    plain = not _differentiable_dtype(self._data.dtype)
    if not plain:
        _check_autograd_inplace(self, (src,))
    if not isinstance(src, Tensor):
        if not isinstance(_number(src), (bool, int, float, complex)):
            raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
        src = _wrap_scalar(src)
    if self._storage is not None:  # (TensorIterator: the overlap before the shapes)
        _check_input_overlap(self, (src,))
    _broadcast_shape(self._data.shape, src._data.shape)
    if jnp.broadcast_shapes(self._data.shape, src._data.shape) != self._data.shape:
        raise RuntimeError(f"output with shape {list(self._data.shape)} doesn't match the broadcast shape "
                           f"{list(jnp.broadcast_shapes(self._data.shape, src._data.shape))}")
    if plain and _gm._state.grad_enabled:
        with _gm.no_grad():
            return _apply_inplace(_copy_from, self, (self, src), ())
    return _apply_inplace(_copy_from, self, (self, src), ())


from .indexing import nonzero  # noqa: E402  (indexing builds on this module; where(condition) is nonzero)
