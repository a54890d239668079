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


def to_dtype(d):
    """Accept a torchlike dtype, a NumPy/JAX dtype, a Python type or a name; return a torchlike dtype."""
    if d is None or isinstance(d, dtype):
        return d
    if d is _pyfloat:
        return _default_dtype[0]
    if d is _pyint:
        return int64
    if d is _pybool:
        return bool
    if isinstance(d, str):
        return _BY_NAME[d]
    return _FROM_NP[np.dtype(d)]


_default_dtype = [float32]


def get_default_dtype():
    return _default_dtype[0]


def set_default_dtype(d):
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_dtype[0] = d


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
