"""dtypes and torch's type-promotion rules.

A torchlike dtype wraps a NumPy dtype (what the jax.Array holds). Tensor-tensor promotion is
JAX's `promote_types`, which agrees with `torch.promote_types` on every pair of the supported
dtypes (checked in tests); on top of it sits torch's three-tier rule for ops that mix dimensioned
tensors, zero-dim tensors and Python scalars (`_result_type`).
"""
import functools

import jax.numpy as jnp
import numpy as np

_pybool, _pyint, _pyfloat = bool, int, float  # the module shadows these names with dtypes, as torch does


class dtype:
    """A tensor element type, printed as torch prints it (``torchlike.float32``)."""

    __module__ = "torchlike"
    __slots__ = ("name", "_np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self._np = np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 integer, 2 floating, 3 complex
        self.is_floating_point = category == 2
        self.is_complex = category == 3
        self.is_signed = name not in ("bool", "uint8")
        self.itemsize = self._np.itemsize

    def __repr__(self):
        return "torchlike." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        return {"float64": complex128, "complex128": complex128}.get(self.name, complex64)


bool = dtype("bool", np.bool_, 0)  # noqa: A001 - mirrors torch.bool
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", jnp.bfloat16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)

half, float, double = float16, float32, float64  # noqa: A001 - torch's aliases
short, int, long = int16, int32, int64  # noqa: A001
cfloat, cdouble = complex64, complex128

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_FROM_NP = {d._np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}


def _by_name(name):
    return _BY_NAME[name]


def _from_np(np_dtype):
    """torchlike dtype of a NumPy/JAX dtype."""
    return _FROM_NP[np_dtype]


_PY_TYPES = {_pyfloat: float64, _pyint: int64, _pybool: bool, complex: complex128}  # torch: dtype=float is float64


def to_dtype(d):
    """Accept a torchlike dtype, a NumPy/JAX dtype, a Python type or a name; return a torchlike dtype."""
    if d is None or isinstance(d, dtype):
        return d
    if d in _PY_TYPES:
        return _PY_TYPES[d]
    if isinstance(d, str):
        return _BY_NAME[d]
    try:
        return _FROM_NP[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(f"argument 'dtype' must be torch.dtype, not {type(d).__name__}") from None


# C++ names torch uses in some messages: caffe2 TypeMeta names and ScalarType names
_TYPE_META = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
              "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
              "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_SCALAR_TYPE = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                "float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


_default_dtype = [float32]


def get_default_dtype():
    """The dtype Python floats become (float32 unless changed)."""
    return _default_dtype[0]


def set_default_dtype(d):
    """Set the dtype of Python floats: float32, float64, float16 or bfloat16."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype[0] = d


def _default_complex():
    """dtype of Python complex numbers: complex128 under a float64 default, else complex64 (torch: complex32 for
    a float16 default, which torchlike does not have)."""
    d = _default_dtype[0]
    if d is bfloat16:
        raise RuntimeError("invalid default scalar type for complex")
    return complex128 if d is float64 else complex64


class finfo:
    """torch.finfo: machine limits of a floating point dtype (bits, eps, max, min, tiny, resolution)."""

    def __init__(self, type=None):  # noqa: A002 - torch's parameter name
        d = _default_dtype[0] if type is None else to_dtype(type)
        if d._category < 2:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        d = d.to_real()
        info = jnp.finfo(d._np)
        self.bits = d.itemsize * 8
        self.eps = _pyfloat(info.eps)
        self.max = _pyfloat(info.max)
        self.min = _pyfloat(info.min)
        self.tiny = self.smallest_normal = _pyfloat(info.smallest_normal)
        self.resolution = 10.0 ** -_pyint(info.precision)
        self.dtype = d.name

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: machine limits of an integer dtype (bits, min, max)."""

    def __init__(self, type):  # noqa: A002
        d = to_dtype(type)
        if d._category != 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        info = np.iinfo(d._np)
        self.bits, self.min, self.max, self.dtype = info.bits, _pyint(info.min), _pyint(info.max), d.name

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


@functools.lru_cache(maxsize=None)
def promote_types(a, b):
    """torch.promote_types for two torchlike dtypes (JAX's lattice agrees with torch's)."""
    return _FROM_NP[np.dtype(jnp.promote_types(a._np, b._np))]


def _combine_categories(higher, lower):
    # torch's combine_categories (c10/core/ScalarType + TensorIterator result_type).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


def _scalar_dtype(value):
    """dtype a Python scalar takes when it decides a result (torch's wrapped-number rule)."""
    if isinstance(value, _pybool):
        return bool
    if isinstance(value, _pyint):
        return int64
    if isinstance(value, complex):
        return _default_dtype[0].to_complex()
    return _default_dtype[0]


def _result_type(*operands):
    """torch.result_type over tensors and Python scalars: dimensioned tensors > zero-dim > scalars."""
    dim = zero = wrapped = None
    for x in operands:
        d = getattr(x, "_data", None)
        if d is None:
            if x is None:
                continue
            s = _scalar_dtype(x)
            wrapped = s if wrapped is None else promote_types(wrapped, s)
        elif d.ndim:
            s = _FROM_NP[d.dtype]
            dim = s if dim is None else promote_types(dim, s)
        else:
            s = _FROM_NP[d.dtype]
            zero = s if zero is None else promote_types(zero, s)
    return _combine_categories(dim, _combine_categories(zero, wrapped))


# ----- Python numbers as cache keys ---------------------------------------------------------------------------
class _Exact:
    """A float or complex number as a key that ``==`` tells apart from every other: -0.0 from 0.0, and a NaN equal
    to itself (as Python numbers, ``-0.0 == 0.0`` and ``nan != nan``)."""

    __slots__ = ("text",)

    def __init__(self, v):
        self.text = (type(v), repr(v))

    def __eq__(self, other):
        return type(other) is _Exact and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    def __repr__(self):
        return self.text[1]


def _exact_key(v):
    """``v`` (a number, or a tuple of statics) as a dict key: itself, unless ``==`` confuses it with another value
    (a float or complex zero or NaN in it): then a key with those numbers as ``_Exact``. The op table's caches of
    compiled programs and of wrapped scalars key by it: a program made for 0.0 must not run for -0.0."""
    if type(v) is tuple:
        out = tuple(_exact_key(x) for x in v)
        return v if all(a is b for a, b in zip(out, v)) else out
    if isinstance(v, (_pyfloat, np.floating)):
        return _Exact(v) if v == 0 or v != v else v
    if isinstance(v, (complex, np.complexfloating)):
        return _Exact(v) if v.real == 0 or v.imag == 0 or v != v else v
    return v
