"""More elementwise ops (torch's formulas from derivatives.yaml): copysign, heaviside, signbit, nextafter, fmax, fmin,
ldexp, logaddexp2, float_power, frexp, complex, polar, view_as_real/view_as_complex; logspace, can_cast, isin."""
import builtins
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ._bind import public
from ._out import _can_cast, _write_out
from ._return_types import structseq
from ._registry import _apply
from .creation import _finish, _linspace_values, _number
from . import _layout, _views
from .pointwise import (_binary, _binary_inplace, _check_tensor_arg, _entry, _float_binary, _float_inplace,
                        _is_tensor_operand, _needs, _nondiff, _not_implemented, _true_div_dtype, _type_word,
                        _view_as_real, _wrap_scalar, pow as _pow)

_NOT_REAL = "biuc"


def _copysign_forward(self, other, *, dtype):
    return jnp.copysign(self.astype(dtype), other.astype(dtype))


def _copysign_self(grad, self, result, dtype):
    x = self.astype(dtype)
    return grad * jnp.where(x == 0, 0, result / x)  # (torch's ratio.masked_fill_(self == 0, 0): NaN at 0 after)


_COPYSIGN_REFUSE = {"c": "copysign_cpu"}
_copysign = _entry("CopysignBackward0", {"self": ("self",), "result": ("self",)}, _copysign_forward,
                   lambda grad, self, result, dtype: (_copysign_self(grad, self, result, dtype),
                                                      jnp.zeros_like(grad)),
                   refuse=_COPYSIGN_REFUSE, const_grads=(1,))
_copysign_scalar = _entry("CopysignBackward1", ("self", "result"), _copysign_forward, _copysign_self,
                          nondiff=("other",), refuse=_COPYSIGN_REFUSE)


def _copysign_entry(other):
    return _copysign if _is_tensor_operand(other) else _copysign_scalar


@public(inplace=lambda self, other: _binary_inplace(_copysign_entry(other), self, other,
                                                    result_dtype=_true_div_dtype(self, other)))
def copysign(input, other, *, out=None):
    """|input| with the sign of other (CopysignBackward0/1; integers become the default float)."""
    if out is not None:
        return _write_out("copysign", lambda: copysign(input, other), out, (input, other))
    return _float_binary(_copysign_entry(other), input, other)


def _heaviside_check(input, values):
    if input._data.dtype.kind == "c" or values._data.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input._data.dtype != values._data.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


_heaviside = _not_implemented("heaviside", lambda self, other, *, dtype: jnp.where(
    self == 0, other, (self > 0).astype(other.dtype)).astype(dtype), None)
_heaviside_inplace = _not_implemented("heaviside_", _heaviside[True, True].forward, None)


def _heaviside_(self, values):
    _check_tensor_arg("heaviside_", "values", 1, values)
    _heaviside_check(self, values)
    return _binary_inplace(_heaviside_inplace[_needs(self, values)], self, values)


@public(inplace=_heaviside_)
def heaviside(input, values, *, out=None):
    """Step function: 0 below 0, ``values`` at 0, 1 above (torch has no derivative: NotImplemented node)."""
    if out is not None:
        return _write_out("heaviside", lambda: heaviside(input, values), out, (input, values))
    _heaviside_check(input, values)
    return _binary(_heaviside[_needs(input, values)], input, values)


signbit = _nondiff("signbit", jnp.signbit, refuse={"c": (NotImplementedError, "signbit is not implemented for "
                                                                             "complex tensors.")})


_nextafter = _entry("NextafterBackward0", ("self", "other"), lambda self, other, *, dtype: jnp.nextafter(
    self.astype(dtype), other.astype(dtype)), lambda grad, self, other: (
        jnp.where(self != other, grad, 0), jnp.zeros_like(grad)), refuse={_NOT_REAL: "nextafter_cpu"},
    const_grads=(1,))


@public(inplace=lambda self, other: _binary_inplace(_nextafter, self, other))
def nextafter(input, other, *, out=None):
    """The next float after input towards other (NextafterBackward0)."""
    if out is not None:
        return _write_out("nextafter", lambda: nextafter(input, other), out, (input, other))
    return _binary(_nextafter, input, other)


def _fmax_like(name, node, keep):
    """fmax / fmin: NaN-ignoring max / min; ``keep(self, other)``: where the result is self."""
    def derivative(grad, self, other):
        mask = keep(self, other) | jnp.isnan(other)
        return jnp.where(mask, grad, 0), jnp.where(mask, 0, grad)
    entry = _entry(node, ("self", "other"), lambda self, other, *, dtype: getattr(jnp, name)(
        self.astype(dtype), other.astype(dtype)), derivative,
        refuse={"c": (RuntimeError, f"{name} not implemented for complex tensors.")})

    def fn(input, other, *, out=None):
        if out is not None:
            return _write_out(name, lambda: fn(input, other), out, (input, other))
        return _binary(entry, input, other)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name[1:]}imum ignoring NaN ({node})."
    return public(fn)


fmax = _fmax_like("fmax", "FmaxBackward0", lambda self, other: self >= other)
fmin = _fmax_like("fmin", "FminBackward0", lambda self, other: self <= other)


def _ldexp_forward(self, other, *, dtype):
    return self.astype(dtype) * jnp.exp2(other.astype(dtype))


_ldexp = _entry("LdexpBackward0", {"other": ("self",), "result": ("other",)}, _ldexp_forward,
                lambda grad, other, result, dtype: (
                    grad * jnp.conj(jnp.exp2(other.astype(dtype))) if other is not None else None,
                    grad * jnp.conj(result) * math.log(2) if result is not None else None))


_ldexp_ = public(_float_inplace(_ldexp), name="ldexp_", method=False)


@public(inplace=_ldexp_)
def ldexp(input, other, *, out=None):
    """input * 2 ** other (LdexpBackward0; integers become the default float)."""
    if out is not None:
        return _write_out("ldexp", lambda: ldexp(input, other), out, (input, other))
    return _float_binary(_ldexp, input, other)


_logaddexp2 = _entry("Logaddexp2Backward0", ("self", "other"), lambda self, other, *, dtype: jnp.logaddexp2(
    self.astype(dtype), other.astype(dtype)), lambda grad, self, other, dtype: (
        grad / (1 + jnp.exp2(other.astype(dtype) - self.astype(dtype))),
        grad / (1 + jnp.exp2(self.astype(dtype) - other.astype(dtype)))), refuse={"biu": "logaddexp2_cpu"})


@public
def logaddexp2(input, other, *, out=None):
    """log2(2 ** input + 2 ** other), computed stably (Logaddexp2Backward0; integers refused, as in torch)."""
    if out is not None:
        return _write_out("logaddexp2", lambda: logaddexp2(input, other), out, (input, other))
    return _binary(_logaddexp2, input, other)


def _float_power_dtype(input, exponent):
    cplx = any((x._data.dtype.kind == "c") if isinstance(x, Tensor) else isinstance(_number(x), builtins.complex)
               for x in (input, exponent))
    return _dtype.complex128 if cplx else _dtype.float64


def _as(x, dtype):
    return x.to(dtype) if isinstance(x, Tensor) else (builtins.complex(x) if dtype.is_complex else float(x))


def _float_power_(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    if self.dtype != dtype:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_word(self._data.dtype)} but the "
                           f"operation's result requires dtype {_type_word(dtype._np)}")
    return self.pow_(_as(exponent, dtype))


@public(inplace=_float_power_)
def float_power(input, exponent, *, out=None):
    """input ** exponent in double precision (float64, or complex128 for a complex operand), as torch computes it."""
    if out is not None:
        return _write_out("float_power", lambda: float_power(input, exponent), out, (input, exponent))
    dtype = _float_power_dtype(input, exponent)
    return _pow(_as(input, dtype), _as(exponent, dtype))


_frexp_type = structseq("frexp", ("mantissa", "exponent"))
_frexp = _entry("FrexpBackward0", ("exponent",), lambda self: jnp.frexp(self),
                lambda grads, exponent: grads[0] / jnp.exp2(exponent.astype(grads[0].dtype)),
                outputs=("mantissa", "exponent"))


@public
def frexp(input, *, out=None):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, exponent int32 (FrexpBackward0)."""
    if input._data.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    if out is not None:
        result = frexp(input)
        _write_out("frexp", lambda: result.mantissa, out[0], (input,))
        _write_out("frexp", lambda: result.exponent, out[1], (input,))
        return _frexp_type(*out)
    return _frexp_type(*_apply(_frexp, (input,), ()))


# ----- complex construction -------------------------------------------------------------------------------------
def _complex_args(a, b):
    da, db = a._data.dtype, b._data.dtype
    if da.kind != "f" or db.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_type_word(da)} and "
                           f"{_type_word(db)}")
    if da != db:
        raise RuntimeError(f"Expected object of scalar type {_type_word(da)} but got scalar type {_type_word(db)} "
                           f"for second argument")


_complex_entry = _entry("ComplexBackward0", ("real", "imag"), lambda real, imag: jax.lax.complex(real, imag),
                        lambda grad: (jnp.real(grad), jnp.imag(grad)))


def _polar_forward(abs, angle):  # noqa: A002 - torch's name
    return jax.lax.complex(abs * jnp.cos(angle), abs * jnp.sin(angle))


def _polar_derivative(grad, result):
    g = jnp.conj(grad)
    return jnp.real(g * jnp.where(result == 0, 0, result / jnp.where(result == 0, 1, jnp.abs(result)))), jnp.real(
        g * result * 1j)


_polar = _entry("PolarBackward0", ("result",), _polar_forward, _polar_derivative)


def _make_complex(name, entry, a, b, out):
    """complex / polar of two tensors of one floating dtype (torch's checks first), or into ``out``."""
    _complex_args(a, b)
    if out is not None:
        return _write_out(name, lambda: _make_complex(name, entry, a, b, None), out, (a, b))
    return _apply(entry, (a, b), ())


@public(method=False)
def complex(real, imag, *, out=None):  # noqa: A001 - torch's name
    """real + 1j * imag (ComplexBackward0); both the same floating dtype."""
    return _make_complex("complex", _complex_entry, real, imag, out)


@public(method=False)
def polar(abs, angle, *, out=None):  # noqa: A002 - torch's name
    """abs * (cos(angle) + 1j * sin(angle)) (PolarBackward0); both the same floating dtype."""
    return _make_complex("polar", _polar, abs, angle, out)


_view_as_complex = _entry("ViewAsComplexBackward0", (), lambda self: jax.lax.complex(self[..., 0], self[..., 1]),
                          lambda grad: jnp.stack([jnp.real(grad), jnp.imag(grad)], axis=-1), layout=None)


@public(method=False)
def view_as_real(input):
    """The complex tensor as real pairs in a last dimension of size 2 (ViewAsRealBackward0): a view, as torch's
    (writing into it changes the complex tensor)."""
    if input._data.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if input._conj:
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that the "
                           "resulting tensor will NOT alias the original.")
    return _views._view_apply(_view_as_real, input, ())


@public(method=False)
def view_as_complex(input):
    """Real pairs in a last dimension of size 2 as a complex tensor (ViewAsComplexBackward0): a view, as torch's."""
    if input._data.dtype not in (np.float32, np.float64, np.float16):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor of "
                           f"scalar type: {_type_word(input._data.dtype)}")
    if not input.ndim or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    sizes, strides, offset = _views._geom_of(input)
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _views._view_apply(_view_as_complex, input, ())


_views._rule(_view_as_real)(lambda sizes, strides, offset: (tuple(sizes) + (2,), tuple(2 * s for s in strides) + (1,),
                                                            2 * offset))
_views._rule(_view_as_complex)(lambda sizes, strides, offset: (tuple(sizes[:-1]), tuple(s // 2 for s in strides[:-1]),
                                                               offset // 2))
_views._RETYPING.update({_view_as_real: _view_as_complex, _view_as_complex: _view_as_real})


# ----- logspace, can_cast, isin -------------------------------------------------------------------------------
@public(method=False)
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    """base ** (``steps`` evenly spaced exponents from start to end), torch's kernel."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    exp_dtype = d if d.is_floating_point or d.is_complex else _dtype.float64
    a, b = (_number(v.item() if isinstance(v, Tensor) else v) for v in (start, end))
    if steps == 1:
        exponents = np.full(1, a, exp_dtype._np)
    else:
        exponents = _linspace_values(a, b, steps, exp_dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.power(np.asarray(base, exp_dtype._np), exponents).astype(d._np)
    return _finish(values, device, requires_grad, out)


@public(method=False)
def can_cast(from_, to):
    """Whether torch's type promotion allows casting ``from_`` to ``to``."""
    return bool(_can_cast(from_._np, to._np))


def _isin_array(x):
    return x._data if isinstance(x, Tensor) else jnp.asarray(_number(x))


_isin = jax.jit(lambda e, t, invert: jnp.isin(e, t, invert=invert), static_argnames="invert")


@public(method=False)
def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    """Whether each element of ``elements`` is in ``test_elements`` (bool, no gradient)."""
    if out is not None:
        return _write_out("isin", lambda: isin(elements, test_elements, assume_unique=assume_unique,
                                               invert=invert), out, (elements, test_elements))
    e, t = _isin_array(elements), _isin_array(test_elements)
    dt = jnp.result_type(e, t)
    result = _wrap(_isin(e.astype(dt), t.astype(dt).reshape(-1), bool(invert)))
    return _layout.laid_out(_layout.like, (elements,), (result,))[0] if isinstance(elements, Tensor) else result
