"""Creation functions (tensor, zeros, arange, rand, ...), random generators, and dtype/device casts.

Dtypes follow torch: Python floats become the default dtype (float32), ints int64, bools bool, complex
complex64; NumPy/JAX arrays and 0-d tensors inside lists keep their dtype, promoted over the list as torch
does. ``torch.tensor`` copies; since JAX arrays are immutable, a JAX array is used without a copy.
Random functions draw from a ``Generator`` holding a JAX PRNG key (the global one is reset by
``manual_seed``): a seeded program is reproducible, but the numbers differ from torch's.
``empty`` gives zeros (JAX has no uninitialised memory). Values of ``arange``/``linspace`` are computed
with torch's formulas in torch's accumulation types.
"""
import functools
import itertools
import math
import numbers
import threading
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _tensor as _tensor_mod, _xcache
from .._device import device as _device_cls, _as_device
from .._tensor import Tensor, Size, _wrap, _differentiable_dtype
from ._util import _astype
from ._registry import op, _apply
from ._bind import public
from ._views import _commit
from . import _layout

_CANT_REQUIRE = "Only Tensors of floating point and complex dtype can require gradients"
_MAX_DIMS = 64
_SUPPORTED_NP = ("float64, float32, float16, bfloat16, complex64, complex128, int64, int32, int16, int8, uint8, "
                 "and bool")
# C++ type names torch prints in "value cannot be converted to type ... without overflow"
_C_SCALAR = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
             "int64": "int64_t", "float16": "double", "bfloat16": "double", "float32": "float", "float64": "double",
             "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
_C_FILL = {**_C_SCALAR, "float16": "c10::Half", "bfloat16": "c10::BFloat16"}  # fill_, masked_fill_, index_fill_


def _type_name(obj):
    """The type name torch's argument parser prints (C types such as NumPy's carry their module)."""
    t = type(obj)
    return f"numpy.{t.__name__}" if t.__module__.split(".")[0] == "numpy" else t.__name__


# ----- placement and leaf creation ---------------------------------------------------------------------
_HOST_FILL = 1 << 16  # elements: smaller filled tensors are made by NumPy (no XLA program per shape)


def _filled(shape, value, np_dtype):
    """A ``shape`` array of ``value``: a NumPy array when small (``_put`` moves it without compiling)."""
    if math.prod(shape) <= _HOST_FILL:
        return np.full(shape, value, np_dtype)
    return jnp.full(shape, value, np_dtype)


def _put(array, device):
    """``array`` (JAX or NumPy) on ``device`` (None: where JAX puts it). NumPy arrays move with device_put, which
    builds no XLA program (``jnp.asarray`` compiles one per shape). An array for JAX's default device stays
    uncommitted, as JAX's own results are: a program called with committed and then with uncommitted arrays
    compiles twice. Raises torch's error for an absent CUDA."""
    jdev = None if device is None else _as_device(device)._jax_device()
    if isinstance(array, np.ndarray):
        return jax.device_put(array, None if jdev is None or jdev == _default_jax_device() else jdev)
    if jdev is None:
        return array
    try:
        if array.devices() == {jdev}:
            return array
    except Exception:  # a tracer: leave placement to JAX
        return array
    return jax.device_put(array, jdev)


def _default_jax_device():
    d = jax.config.jax_default_device
    return jax.devices(d)[0] if isinstance(d, str) else d or jax.devices()[0]


def _check_requires_grad(np_dtype, requires_grad):
    if requires_grad and not _differentiable_dtype(np.dtype(np_dtype)):
        raise RuntimeError(_CANT_REQUIRE)


def _finish(array, device, requires_grad, out=None):
    """A new leaf (or ``out`` rebound to the result) from a jax array."""
    _check_requires_grad(array.dtype, requires_grad)
    array = _put(array, device)
    if out is not None:
        _commit(out, array)
        return out
    t = _wrap(array)
    if requires_grad:
        t._requires_grad = True
    return t


def _get_dtype(dtype, default):
    return _dtype.to_dtype(dtype) if dtype is not None else default


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _as_int(v):
    """v as an int if torch accepts it as a size (ints, NumPy ints, 0-d integer tensors), else None."""
    if isinstance(v, Tensor) and v.ndim == 0 and v.dtype._category == 1:
        return v.item()
    return int(v) if _is_int(v) else None


def _size(size, fname, kw=False):
    """torch's parsing of ``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])``, ``f(size=(2, 3))`` with its errors."""
    if kw:
        if not isinstance(size, (tuple, list)):
            raise TypeError(f"{fname}(): argument 'size' must be tuple of ints, not {_type_name(size)}")
    elif len(size) == 0:
        raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
    elif isinstance(size[0], (tuple, list)):
        if len(size) > 1:
            raise TypeError(f"{fname}() takes 1 positional argument but {len(size)} were given")
        size = size[0]
    elif len(size) == 1 and _as_int(size[0]) is None:
        raise TypeError(f"{fname}(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{_type_name(size[0])}")
    shape = []
    for i, s in enumerate(size):
        n = _as_int(s)
        if n is None:
            raise TypeError(f"{fname}(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {_type_name(s)}\"")
        shape.append(n)
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {shape}")
    return tuple(shape)


# ----- torch.tensor: dtype inference and nested data ------------------------------------------------------
def _np_to_dtype(np_dtype):
    try:
        return _dtype._from_np(np.dtype(np_dtype))
    except KeyError:
        raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only "
                        f"supported types are: {_SUPPORTED_NP}.") from None


def _is_seq(x):
    """Python's sequence protocol as torch sees it (tensors and mappings are not sequences)."""
    if isinstance(x, (list, tuple, range, str, bytes)):
        return True
    if isinstance(x, (np.ndarray, jax.Array)):
        return x.ndim > 0
    if isinstance(x, (Tensor, dict, np.generic)):
        return False
    t = type(x)
    return hasattr(t, "__getitem__") and hasattr(t, "__len__")


def _infer_dtype(x):
    """torch's infer_scalar_type: the dtype of data, promoting over sequences."""
    if isinstance(x, (np.ndarray, np.generic, jax.Array)):
        return _np_to_dtype(x.dtype)
    if isinstance(x, Tensor):
        return _dtype._from_np(x._data.dtype)
    if isinstance(x, bool):
        return _dtype.bool
    if isinstance(x, int):
        return _dtype.int64
    if isinstance(x, float):
        return _dtype.get_default_dtype()
    if isinstance(x, complex):
        return _dtype._default_complex()
    if isinstance(x, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    if _is_seq(x):
        if len(x) == 0:
            return _dtype.get_default_dtype()
        result = None
        for item in x:
            if item is x:
                raise TypeError("new(): self-referential lists are incompatible")
            d = _infer_dtype(item)
            result = d if result is None else _dtype.promote_types(result, d)
            if result is _dtype.complex128:
                break
        return result
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _infer_sizes(x):
    """torch's compute_sizes: lengths along the chain of first elements."""
    sizes = []
    while _is_seq(x):
        sizes.append(len(x))
        if len(sizes) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        if len(x) == 0:
            break
        x = x[0]
    return sizes


def _int_range(d):
    info = np.iinfo(d._np)
    return int(info.min), int(info.max)


def _scalar_for(x, d, cname):
    """A Python scalar ``x`` converted for dtype ``d`` with torch's checks (cname: name in the overflow error)."""
    cat = d._category
    if cat == 0:
        return bool(x)
    if cat == 3:
        return complex(x)
    overflow = RuntimeError(f"value cannot be converted to type {cname} without overflow")
    if isinstance(x, complex):
        if x.imag != 0:
            raise overflow
        x = x.real
    if cat == 2:
        return float(x)
    lo, hi = _int_range(d)
    if isinstance(x, float):
        if not (math.isfinite(x) and lo - 1 < x < hi + 1):
            raise overflow
        x = int(x)
    if lo == 0:  # unsigned: torch lets negative values wrap around (two's complement)
        if not -hi <= x <= hi:
            raise overflow
        return x % (hi + 1)
    if not lo <= x <= hi:
        raise overflow
    return x


def _check_fits(value, np_dtype, cname=None):
    """torch's check of a number written into a tensor of ``np_dtype`` (fill_, masked_fill, a clamp bound): a
    RuntimeError 'value cannot be converted to type <cname> without overflow' where it does not fit."""
    kind, t = np_dtype.kind, type(value)
    if t is bool or kind in "bc" or (t is float and kind == "f" and np_dtype.itemsize >= 4 and abs(value) < 3.4e38) \
            or (t is int and np_dtype == np.int64 and -1 << 63 <= value < 1 << 63):
        return  # (the common cases: they fit)
    d = _dtype._from_np(np_dtype)
    cname = cname or _C_FILL[d.name]
    x = _scalar_for(value, d, cname)
    if d._category == 2 and math.isfinite(x) and abs(x) > float(jnp.finfo(np_dtype).max):
        raise RuntimeError(f"value cannot be converted to type {cname} without overflow")


def _leaf(x, d):
    """One element of nested data as a Python scalar for dtype d (torch's store_scalar and its errors)."""
    if isinstance(x, Tensor):
        if x.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        x = np.asarray(x._data).reshape(()).item()
    elif isinstance(x, (np.generic, np.ndarray, jax.Array)):
        x = np.asarray(x).item()
    if not isinstance(x, (bool, int, float, complex)):
        if d._category == 1:
            raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
        if d._category == 3:
            raise TypeError(f"must be complex number, not {type(x).__name__}")
        raise TypeError(f"must be real number, not {type(x).__name__}")
    if d._category == 1 and isinstance(x, int) and not isinstance(x, bool) and not -2 ** 63 <= x < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if d._category == 2 and isinstance(x, complex):
        raise TypeError("must be real number, not complex")
    return _scalar_for(x, d, d.name)


def _nested(x, sizes, dim, d):
    """Nested Python lists of converted scalars, checking every sequence has the expected length."""
    if dim == len(sizes):
        return _leaf(x, d)
    if not _is_seq(x):
        raise TypeError("not a sequence")
    n = len(x)
    if n != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {n})")
    if isinstance(x, (np.ndarray, jax.Array)) and x.shape == tuple(sizes[dim:]):
        return np.asarray(x).astype(d._np)
    return [_nested(item, sizes, dim + 1, d) for item in x]


_PY_NUMBERS = {bool, int, float, complex}


def _fast_path(data, sizes, dtype):
    """Nested lists of Python numbers, converted by NumPy when no torch check can fail (else None)."""
    if not sizes or 0 in sizes or not isinstance(data, (list, tuple)):
        return None
    level = [data]
    for _ in sizes:
        if not all(type(x) is list or type(x) is tuple for x in level):
            return None
        level = list(itertools.chain.from_iterable(level))
    kinds = set(map(type, level))
    if not kinds <= _PY_NUMBERS:
        return None
    natural = (_dtype._default_complex() if complex in kinds else _dtype.get_default_dtype() if float in kinds
               else _dtype.int64 if int in kinds else _dtype.bool)
    d = natural if dtype is None else dtype
    if not (d is natural or (d._category == 2 and complex not in kinds) or d._category == 3):
        return None  # integer targets need torch's range checks
    try:
        with np.errstate(over="ignore"):
            arr = np.array(data, dtype=d._np)
    except (ValueError, OverflowError, TypeError):
        return None  # ragged or out of range: the slow path raises torch's error
    return arr if arr.shape == tuple(sizes) else None


def _from_data(data, dtype):
    """NumPy or JAX array for ``data`` with torch.tensor's dtype rules (dtype: torchlike dtype or None)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=3)
        data = data._data
    if isinstance(data, jax.Array):
        _np_to_dtype(data.dtype)
        return data if dtype is None else data.astype(dtype._np)
    if isinstance(data, (np.ndarray, np.generic)):  # a copy: JAX's device_put may alias the caller's memory
        _np_to_dtype(data.dtype)
        return np.array(data) if dtype is None else np.asarray(data).astype(dtype._np)
    sizes = _infer_sizes(data)
    fast = _fast_path(data, sizes, dtype)
    if fast is not None:
        return fast
    d = dtype if dtype is not None else _infer_dtype(data)
    if 0 in sizes:  # torch stores nothing, so ragged empty data passes
        return np.zeros(sizes, d._np)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.array(_nested(data, sizes, 0, d), dtype=d._np).reshape(sizes)


@public(method=False)
def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (dtype inferred as torch does)."""
    arr = _from_data(data, _dtype.to_dtype(dtype))
    _check_requires_grad(arr.dtype, requires_grad)
    return _source_layout(data, _finish(arr, device, requires_grad))


def _source_layout(data, out):
    """torch's copy keeps the layout of a dense source: a permuted tensor, a transposed NumPy array."""
    if isinstance(data, Tensor):
        return _layout.laid_out(_layout.like, (data,), (out,))[0]
    if isinstance(data, np.ndarray) and data.ndim > 1 and data.size:
        strides = tuple(s // data.itemsize for s in data.strides)
        if _layout._dense(data.shape, strides):
            out._sgeom = _layout._geometry(data.shape, strides)
    return out


@public(method=False)
def as_tensor(data, dtype=None, device=None):
    """``data`` as a tensor: a Tensor is returned as is, or converted (differentiably) with ``to``."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return _source_layout(data, _finish(_from_data(data, _dtype.to_dtype(dtype)), device, False))


@public(method=False)
def from_numpy(ndarray):
    """A tensor with the array's dtype and values (a copy: a JAX array aliasing NumPy memory would see later
    writes to it only until a torchlike op rebinds it, and lazy mode reads it when the program runs)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _np_to_dtype(ndarray.dtype)
    return _source_layout(ndarray, _wrap(jax.device_put(np.array(ndarray))))


# ----- filled tensors --------------------------------------------------------------------------------------
def _factory(name, fill):
    def make(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
             memory_format=None, **kw):
        shape = _size(kw.pop("size"), name, kw=True) if "size" in kw else _size(size, name)
        if kw:
            raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")
        d = _get_dtype(dtype, _dtype.get_default_dtype())
        _check_requires_grad(d._np, requires_grad)
        return _finish(fill(shape, d._np), device, requires_grad, out)
    make.__name__ = make.__qualname__ = name
    return make


zeros = public(_factory("zeros", lambda shape, dt: _filled(shape, 0, dt)), method=False)
ones = public(_factory("ones", lambda shape, dt: _filled(shape, 1, dt)), method=False)
empty = public(_factory("empty", lambda shape, dt: _filled(shape, 0, dt)), method=False)
zeros.__doc__ = "Tensor of zeros: ``zeros(*size, dtype=None, device=None, requires_grad=False)``."
ones.__doc__ = "Tensor of ones: ``ones(*size, dtype=None, device=None, requires_grad=False)``."
empty.__doc__ = "Tensor of the given size (filled with zeros: JAX has no uninitialised memory)."


def _fill_scalar(value, fname):
    """A Python scalar from a number or 0-d tensor ``fill_value``."""
    if isinstance(value, Tensor) and value.ndim == 0:
        return value.item()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (bool, int, float, complex)):
        return value
    raise TypeError(f"{fname}(): argument 'fill_value' (position 2) must be Number, not {_type_name(value)}")


def _full(shape, value, dtype, device, requires_grad, out=None):
    d = dtype if dtype is not None else _infer_dtype(value)
    value = _scalar_for(value, d, _C_SCALAR[d.name])
    _check_requires_grad(d._np, requires_grad)
    return _finish(_filled(shape, value, d._np), device, requires_grad, out)


@public(method=False)
def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
         requires_grad=False):
    """Tensor filled with ``fill_value``; the dtype is inferred from the value when not given."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size)}")
    value = _fill_scalar(fill_value, "full")
    return _full(_size((size,), "full"), value, _dtype.to_dtype(dtype), device, requires_grad, out)


def _like(factory):
    """``<factory>_like(input, ...)``; random factories also take ``generator=``."""
    def make(input, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None, **generator):
        out = factory(tuple(input.shape), dtype=dtype if dtype is not None else input.dtype,
                      device=device if device is not None else input.device, requires_grad=requires_grad,
                      **generator)
        if input._dist_place is not None and device is None:  # a DTensor's: laid out as it
            input._dist_place(out)
        return _layout.laid_out(_layout.like, (input,), (out,))[0]  # in input's layout (preserve_format)
    make.__name__ = make.__qualname__ = factory.__name__ + "_like"
    make.__doc__ = f"``{factory.__name__}`` with the shape, dtype and device of ``input``."
    return make


zeros_like = public(_like(zeros), method=False)
ones_like = public(_like(ones), method=False)
empty_like = public(_like(empty), method=False)


@public(method=False)
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, memory_format=None):
    """``full`` with the shape, dtype and device of ``input``."""
    value = _fill_scalar(fill_value, "full_like")
    out = _full(tuple(input.shape), value, _dtype.to_dtype(dtype) or input.dtype,
                device if device is not None else input.device, requires_grad)
    if input._dist_place is not None and device is None:  # a DTensor's: laid out as it
        input._dist_place(out)
    return _layout.laid_out(_layout.like, (input,), (out,))[0]


# ----- ranges ------------------------------------------------------------------------------------------------
# arange/linspace reproduce torch's CPU kernels bit for bit (arange: up to 32768 elements, one thread): torch
# builds them with FMA contraction, and arange's cpu_serial_kernel_vec fills pairs of 32-byte (AVX2) vectors
# from a base value, then a scalar tail. The helpers below compute the same roundings with NumPy.
def _number(v):
    """Python number from a number, NumPy scalar or 0-d tensor."""
    if isinstance(v, Tensor):
        return v.item()
    if isinstance(v, np.generic):
        return v.item()
    return v


def _fmt(v):
    return str(v) if isinstance(v, int) else f"{v:g}"


def _fma64(a, b, c):
    """a * b + c in float64 with one rounding (Dekker's exact product, then an error-corrected sum)."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    p = a * b
    sa, sb = a * 134217729.0, b * 134217729.0
    ah, bh = sa - (sa - a), sb - (sb - b)
    al, bl = a - ah, b - bh
    e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    return s + (((p - (s - v)) + (c - v)) + e)


def _fma32(a, b, c):
    """a * b + c in float32 with one rounding (the float64 product of float32 values is exact)."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    return (a * b + c).astype(np.float32)


def _kernel_fill(n, itemsize, scalar, vector):
    """Elements 0..n-1 as torch's vectorised CPU loop makes them: vector(chunk_start, lane), then scalar(idx)."""
    width = 32 // itemsize
    nvec = n // (2 * width) * (2 * width)
    idx = np.arange(n, dtype=np.int64)
    head = vector(idx[:nvec] // width * width, idx[:nvec] % width)
    return np.concatenate([head, scalar(idx[nvec:])])


@public(method=False)
def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
           requires_grad=False):
    """Values from start to end (exclusive) by step; int64 unless a bound is a float (torch's arithmetic)."""
    if end is None:
        start, end = 0, start
    vals = [_number(v) for v in (start, end, step)]
    if any(isinstance(v, complex) for v in vals):
        raise RuntimeError("value cannot be converted to type double without overflow")
    if dtype is None:
        dtype = _dtype.get_default_dtype() if any(isinstance(v, float) for v in vals) else _dtype.int64
    d = _dtype.to_dtype(dtype)
    _check_requires_grad(d._np, requires_grad)
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if not all(math.isfinite(v) for v in vals[:2]):
        raise RuntimeError(f"unsupported range: {_fmt(vals[0])} -> {_fmt(vals[1])}")
    if d is _dtype.int64:  # integer arithmetic throughout
        a0, a1, st = (int(v) for v in vals)
        if st == 0:
            raise ValueError("step must be nonzero")
    else:
        a0, a1, st = (float(v) for v in vals)
    if (st > 0 and a1 < a0) or (st < 0 and a1 > a0):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is _dtype.int64:
        n = (a1 - a0 + st - ((st > 0) - (st < 0))) // st
    else:
        n = math.ceil((a1 - a0) / st)
    with np.errstate(over="ignore", invalid="ignore"):
        if d._category == 2:
            fma, acc = (_fma32, np.float32) if d.itemsize == 2 else (_fma64, np.float64)  # torch's accumulate type
            t, a0, st = d._np, acc(a0), acc(st)

            def vector(chunk, lane):
                base = fma(st, chunk, a0).astype(t)
                return fma(lane, st, base.astype(acc)).astype(t)
            values = _kernel_fill(n, d.itemsize, lambda i: fma(st, i, a0).astype(t), vector)
        else:  # integer dtypes accumulate in int64
            values = (int(a0) + int(st) * np.arange(n, dtype=np.int64)).astype(d._np)
    return _finish(values, device, requires_grad, out)


def _linspace_values(a0, a1, steps, d):
    """torch's linspace kernel: start + step * i for the first half, end - step * (steps - 1 - i) after."""
    half = steps // 2
    if d._category < 2:  # integer dtypes: the step is a double
        fma, t, st = _fma64, np.float64, (float(a1) - float(a0)) / (steps - 1)
    elif d.itemsize == 2:  # float16, bfloat16: arithmetic in the dtype, rounded after each operation
        t = d._np.type
        a0, a1 = t(a0), t(a1)
        st = t((a1 - a0) / t(steps - 1))

        def fma(x, y, z):
            return np.asarray(z, t) + np.asarray(x, t) * np.asarray(y).astype(t)
    elif d._category == 3:  # complex: the real and imaginary parts each with FMA
        real = _fma32 if d.itemsize == 8 else _fma64
        t = d._np.type
        a0, a1 = t(a0), t(a1)
        st = t((a1 - a0) / t(steps - 1))

        def fma(x, y, z):
            return real(np.real(x), y, np.real(z)) + 1j * real(np.imag(x), y, np.imag(z))
    else:
        fma, t = (_fma32, np.float32) if d.itemsize == 4 else (_fma64, np.float64)
        a0, a1 = t(a0), t(a1)
        st = t((a1 - a0) / t(steps - 1))

    i = np.arange(steps, dtype=np.int64)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(i < half, fma(st, i, a0), fma(-st, steps - 1 - i, a1)).astype(d._np)


@public(method=False)
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    """``steps`` evenly spaced values from start to end (torch's symmetric formula)."""
    if not _is_int(steps):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not {_type_name(steps)}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    a, b = _number(start), _number(end)
    cplx = isinstance(a, complex) or isinstance(b, complex)
    if dtype is None:
        dtype = _dtype._default_complex() if cplx else _dtype.get_default_dtype()
    d = _dtype.to_dtype(dtype)
    if cplx and not d.is_complex:
        inferred = _dtype._default_complex()
        raise RuntimeError(f"torch.linspace(): inferred dtype {_dtype._TYPE_META[inferred.name]} can't be safely "
                           f"cast to passed dtype {_dtype._SCALAR_TYPE[d.name]}")
    _check_requires_grad(d._np, requires_grad)
    a0, a1 = (_scalar_for(v, d, _C_SCALAR[d.name]) for v in (a, b))
    if steps == 1:
        values = np.full(1, a0, d._np)
    else:
        values = _linspace_values(a0, a1, steps, d)
    return _finish(values, device, requires_grad, out)


@public(method=False)
def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, pin_memory=False, requires_grad=False):
    """2-D tensor with ones on the diagonal: ``eye(n)`` or ``eye(n, m)``."""
    for name, pos, v in (("n", 1, n), ("m", 2, m)):
        if v is not None and not _is_int(v):
            raise TypeError(f"eye(): argument '{name}' (position {pos}) must be int, not {_type_name(v)}")
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    d = _get_dtype(dtype, _dtype.get_default_dtype())
    _check_requires_grad(d._np, requires_grad)
    return _finish(jnp.eye(int(n), int(n if m is None else m), dtype=d._np), device, requires_grad, out)


# ----- random numbers --------------------------------------------------------------------------------------
_DEFAULT_SEED = 67280421310721  # torch's default_generator seed


@public(method=False)
class Generator:
    """torch.Generator over a JAX PRNG key: ``manual_seed``, ``seed``, ``initial_seed``, ``get_state``."""

    __module__ = "torchlike"

    def __init__(self, device="cpu"):
        self.device = _as_device(device)
        self._lock = threading.Lock()
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        """Reset the key from ``seed`` (a 64-bit seed: negative ones wrap, as torch's); returns the generator."""
        if not isinstance(seed, numbers.Real):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        seed %= 2 ** 64
        with self._lock:
            self._seed = seed
            self._key_value = None  # made on first use, so importing torchlike starts no JAX backend
        return self

    @property
    def _key(self):
        key = self._key_value
        if key is None:
            seed = self._seed
            key = self._key_value = jax.random.PRNGKey(seed - 2 ** 64 if seed >= 2 ** 63 else seed)  # same 64 bits
        return key

    @_key.setter
    def _key(self, value):
        self._key_value = value

    def seed(self):
        """Seed from a non-deterministic source; returns the seed."""
        import secrets
        s = secrets.randbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The key as a uint8 tensor (for ``set_state``)."""
        return tensor(np.asarray(self._key).view(np.uint8))

    def set_state(self, state):
        data = np.asarray(state._data).view(np.uint32)
        with self._lock:
            self._key = jnp.asarray(data)
        return self

    def _next(self):
        with self._lock:
            self._key, key = jax.random.split(self._key)
        return key


default_generator = public(Generator(), name="default_generator", method=False)


@public(method=False)
def manual_seed(seed):
    """Reset the global generator so later random draws are reproducible; returns it."""
    return default_generator.manual_seed(int(seed))


@public(method=False)
def seed():
    """Seed the global generator non-deterministically; returns the seed."""
    return default_generator.seed()


@public(method=False)
def initial_seed():
    """The seed the global generator was last seeded with."""
    return default_generator.initial_seed()


_key_hook = None  # while a torchlike.func.vmap runs: the key its randomness mode gives (func._vmap_key)


def _key(generator):
    """The next random key: of ``generator`` (default: the default generator), or the running vmap's."""
    if _key_hook is not None:
        return _key_hook(generator)
    return _generator_key(generator)


def _generator_key(generator):
    return (generator if generator is not None else default_generator)._next()


def _random_float(name, kernel, sample):
    def make(*size, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False, **kw):
        shape = _size(kw.pop("size"), name, kw=True) if "size" in kw else _size(size, name)
        d = _get_dtype(dtype, _dtype.get_default_dtype())
        if d._category < 2:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype._SCALAR_TYPE[d.name]}'")
        _check_requires_grad(d._np, requires_grad)
        return _finish(sample(_key(generator), shape, d._np), device, requires_grad, out)
    make.__name__ = make.__qualname__ = name
    return make


# ----- random draws: a sampler compiles once per size bucket, not once per shape ---------------------------------
def _work_dtype(dtype):
    return jnp.float32 if dtype in (jnp.float16, jnp.bfloat16) else dtype


def _draw_uniform(key, shape, dtype, low, high):
    if np.dtype(dtype).kind == "c":  # real and imaginary parts each uniform
        real = np.finfo(dtype).dtype
        kr, ki = jax.random.split(key)
        return jax.lax.complex(jax.random.uniform(kr, shape, real, low, high),
                               jax.random.uniform(ki, shape, real, low, high))
    return jax.random.uniform(key, shape, _work_dtype(dtype), low, high).astype(dtype)


def _draw_normal(key, shape, dtype, mean, std):
    return (mean + std * jax.random.normal(key, shape, _work_dtype(dtype))).astype(dtype)


def _draw_trunc_normal(key, shape, dtype, mean, std, a, b):
    work = jnp.float64 if dtype == jnp.float64 else jnp.float32
    z = jax.random.truncated_normal(key, (a - mean) / std, (b - mean) / std, shape, work)
    return jnp.clip(mean + std * z, a, b).astype(dtype)


def _draw_randint(key, shape, dtype, low, high):
    return jax.random.randint(key, shape, low, high, jnp.int64).astype(dtype)


def _draw_flat(key, params, *, draw, size, dtype):
    return draw(key, (size,), dtype, *params)


def _cut(flat, *, shape):
    return flat[:math.prod(shape)].reshape(shape)


_draw_flat = _xcache.jit(_draw_flat, "_draw_flat", static_argnames=("draw", "size", "dtype"))
_cut = _xcache.jit(_cut, "_cut", static_argnames=("shape",))
_permutation = _xcache.jit(lambda key, n: jax.random.permutation(key, n), "randperm", static_argnums=(1,))


def _draw_size(shape):
    """The size a draw of ``shape`` runs at: the next power of two (at least 64)."""
    return max(64, 1 << (math.prod(shape) - 1).bit_length())


def _sample(draw, key, shape, dtype, *params):
    """``draw(key, shape, dtype, *params)`` (params traced). The draw runs at the next power of two of the size
    and is cut to shape: jax.random's programs take up to seconds each to compile on a CPU, so a program per
    bucket, not per shape (the cut's program compiles in milliseconds)."""
    return _cut(_draw_flat(key, params, draw=draw, size=_draw_size(shape), dtype=np.dtype(dtype)),
                shape=tuple(shape))


def _sample_per_element(draw, key, shape, dtype, *params):
    """``_sample`` with parameters per element: each broadcast to ``shape`` (trailing dims kept), flattened and
    padded with ones to the draw's size, so ``draw`` gets parameters of its own flat size."""
    n, size = math.prod(shape), _draw_size(shape)
    flat = []
    for p in params:
        p = np.asarray(p)
        p = np.broadcast_to(p, tuple(shape) + p.shape[len(shape):]).reshape((n,) + p.shape[len(shape):])
        flat.append(np.concatenate([p, np.ones((size - n,) + p.shape[1:], p.dtype)]))
    return _sample(draw, key, shape, dtype, *flat)


rand = public(_random_float("rand", "check_uniform_bounds",
                            lambda key, shape, dtype: _sample(_draw_uniform, key, shape, dtype, 0.0, 1.0)),
              method=False)
randn = public(_random_float("randn", "normal_kernel_cpu",
                             lambda key, shape, dtype: _sample(_draw_normal, key, shape, dtype, 0.0, 1.0)),
               method=False)
rand.__doc__ = "Uniform samples in [0, 1) (complex: real and imaginary parts each)."
randn.__doc__ = "Standard normal samples (complex: variance 1 split between real and imaginary parts)."


def _randint_bounds(low, high, d):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if d._category <= 1:
        lo, hi = (0, 1) if d is _dtype.bool else _int_range(d)
        name = _dtype._TYPE_META[d.name]
        if not lo <= low <= hi:
            raise RuntimeError(f"from is out of bounds for {name}")
        if not lo <= high - 1 <= hi:
            raise RuntimeError(f"to - 1 is out of bounds for {name}")


@public(method=False)
def randint(*args, size=None, low=None, high=None, generator=None, out=None, dtype=None, layout=None,
            device=None, pin_memory=False, requires_grad=False):
    """Integers uniform in [low, high): ``randint(high, size)`` or ``randint(low, high, size)``."""
    args = list(args)
    if size is None and args:
        size = args.pop()
    if len(args) == 2:
        low, high = args
    elif len(args) == 1:
        if high is None:
            high = args[0]
        else:
            low = args[0]
    low = 0 if low is None else low
    for name, pos, v in (("low", 1, low), ("high", 2 if len(args) == 2 else 1, high)):
        if not _is_int(v):
            raise TypeError(f"randint(): argument '{name}' (position {pos}) must be int, not {_type_name(v)}")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position {len(args) + 1}) must be tuple of ints, not "
                        f"{_type_name(size)}")
    shape = _size((size,), "randint")
    d = _get_dtype(dtype, _dtype.int64)
    _randint_bounds(int(low), int(high), d)
    _check_requires_grad(d._np, requires_grad)
    arr = _sample(_draw_randint, _key(generator), shape, d._np, int(low), int(high))
    return _finish(arr, device, requires_grad, out)


@public(method=False)
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None, pin_memory=False,
             requires_grad=False):
    """A random permutation of 0..n-1."""
    if not _is_int(n):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {_type_name(n)}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    d = _get_dtype(dtype, _dtype.int64)
    _check_requires_grad(d._np, requires_grad)
    arr = _permutation(_key(generator), int(n)).astype(d._np)
    return _finish(arr, device, requires_grad, out)


rand_like = public(_like(rand), method=False)
randn_like = public(_like(randn), method=False)


@public(method=False)
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """``randint`` with the shape, dtype and device of ``input``: ``randint_like(x, high)`` or ``(x, low, high)``."""
    if high is None:
        low, high = 0, low
    out = randint(low, high, tuple(input.shape), generator=generator,
                  dtype=dtype if dtype is not None else input.dtype,
                  device=device if device is not None else input.device, requires_grad=requires_grad)
    return _layout.laid_out(_layout.like, (input,), (out,))[0]


# torch.normal: gradients w.r.t. mean and std are defined as zero (the sample is not reparameterised)
def _normal_zero_grads(grad, **shapes):
    return tuple(jnp.zeros(shapes[k], grad.dtype) for k in ("mean_shape", "std_shape") if k in shapes)


# torch's zeros carry no history under create_graph (const_grads)
@op("NormalBackward1", save=(), nondiff=("eps",), attrs=("mean_sym_sizes",), const_grads=True)
def _normal_tf(mean, eps, *, std):
    return mean + eps * jnp.asarray(std, mean.dtype)


@op("NormalBackward2", save=(), nondiff=("eps",), attrs=("std_sym_sizes",), const_grads=True)
def _normal_ft(std, eps, *, mean):
    return jnp.asarray(mean, std.dtype) + eps * std


@op("NormalBackward3", save=(), nondiff=("eps",), attrs=("mean_sym_sizes", "std_sym_sizes"), const_grads=True)
def _normal_tt(mean, std, eps):
    return mean + eps * std


_normal_tf.derivative(lambda grad, mean_shape: _normal_zero_grads(grad, mean_shape=mean_shape))
_normal_ft.derivative(lambda grad, std_shape: _normal_zero_grads(grad, std_shape=std_shape))
_normal_tt.derivative(lambda grad, mean_shape, std_shape: _normal_zero_grads(grad, mean_shape=mean_shape,
                                                                             std_shape=std_shape))


@public(method=False)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """Normal samples: ``normal(mean_tensor, std)``, ``normal(mean, std_tensor)``, ``normal(mean, std, size)``."""
    tm, ts = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not tm and not ts:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, float)")
        t = randn(*_size((size,), "normal"), generator=generator, dtype=dtype, device=device)
        return _finish((t._data * std + mean).astype(t._data.dtype), None, requires_grad, out)
    if tm and ts:
        shape = jnp.broadcast_shapes(mean.shape, std.shape)
        d = _dtype.promote_types(mean.dtype, std.dtype)
    else:
        ref = mean if tm else std
        shape, d = tuple(ref.shape), ref.dtype
    eps = randn(tuple(shape), generator=generator, dtype=d, device=device)
    if tm and ts:
        return _apply(_normal_tt, (mean, std, eps), ())
    if tm:
        return _apply(_normal_tf, (mean, eps), (float(std),))
    return _apply(_normal_ft, (std, eps), (float(mean),))


# ----- Tensor.new_* --------------------------------------------------------------------------------------------
def _new_opts(self, dtype, device):
    return (_dtype.to_dtype(dtype) if dtype is not None else self.dtype,
            device if device is not None else self.device)


@public(name="new_tensor", function=False)
def _new_tensor(self, data, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
    """A new leaf from ``data`` with this tensor's dtype and device unless given."""
    d, dev = _new_opts(self, dtype, device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data._data
    return tensor(data, dtype=d, device=dev, requires_grad=requires_grad)


def _new_filled(factory):
    def method(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False, **kw):
        d, dev = _new_opts(self, dtype, device)
        return factory(*size, dtype=d, device=dev, requires_grad=requires_grad, **kw)
    method.__name__ = "new_" + factory.__name__
    method.__doc__ = f"``{factory.__name__}`` with this tensor's dtype and device unless given."
    return method


@public(name="new_full", function=False)
def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    """``full`` with this tensor's dtype and device unless given."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not {_type_name(size)}")
    d, dev = _new_opts(self, dtype, device)
    return _full(_size((size,), "new_full"), _fill_scalar(fill_value, "new_full"), d, dev, requires_grad)


@public(name="new", function=False)
def _new(self, *args, device=None):
    """Legacy ``x.new(...)``: ``new()``, ``new(*sizes)``, ``new(data)`` or ``new(tensor)`` with x's dtype."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].dtype is not self.dtype:
            raise TypeError(f"expected {self.dtype} (got {args[0].dtype})")
        return _wrap(args[0]._data)
    if len(args) == 1 and _is_seq(args[0]) and not isinstance(args[0], Size):
        return tensor(args[0], dtype=self.dtype, device=device if device is not None else self.device)
    return empty(*(args or (0,)), dtype=self.dtype, device=device if device is not None else self.device)


public(_new_filled(zeros), name="new_zeros", function=False)
public(_new_filled(ones), name="new_ones", function=False)
public(_new_filled(empty), name="new_empty", function=False)


# ----- dtype / device casts ---------------------------------------------------------------------------------
@op("ToCopyBackward0", save=(), attrs=(), layout=_layout.like, int_plain=True)
def _to_copy(self, *, dtype):
    if jnp.iscomplexobj(self) and not np.issubdtype(dtype, np.complexfloating):
        self = jnp.real(self)
    return _astype(self, dtype)


@_to_copy.derivative
def _(grad):
    return grad  # the table casts it back to the input's dtype (complex -> real drops the imaginary part)


_TO_SIGNATURES = (
    "\n * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)"
    "\n * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = "
    "None)"
    "\n * (Tensor tensor, bool non_blocking = False, bool copy = False, *, torch.memory_format memory_format = None)\n")


def _arg_type(a):
    if isinstance(a, _dtype.dtype):
        return "torch.dtype"
    if isinstance(a, _device_cls):
        return "torch.device"
    return "Tensor" if isinstance(a, Tensor) else type(a).__name__


def _is_dtype_like(a):
    # torch accepts its dtypes and the Python types float/int/bool/complex; NumPy dtype objects are an extension
    return isinstance(a, (_dtype.dtype, np.dtype)) or a in (float, int, bool, complex)


def _is_device_like(a):
    return isinstance(a, (_device_cls, str)) or (isinstance(a, int) and not isinstance(a, bool))


def _parse_to(args, kwargs):
    """torch's three ``to`` signatures -> (device or None, dtype or None, copy, memory_format or None)."""
    def bad():
        got = [_arg_type(a) for a in args] + [f"{k}={_arg_type(v)}" for k, v in kwargs.items()]
        text = ", ".join(got) + (", " if kwargs and not args else "")
        return TypeError(f"to() received an invalid combination of arguments - got ({text}), but expected one of:"
                         + _TO_SIGNATURES)
    kwargs = dict(kwargs)
    fmt = kwargs.pop("memory_format", None)
    if fmt is not None and not isinstance(fmt, _tensor_mod.memory_format):
        raise bad()
    device = dtype = None
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        device, dtype = other.device, other.dtype
        allowed = ("non_blocking", "copy")
    elif rest and _is_dtype_like(rest[0]):
        dtype = rest.pop(0)
        allowed = ("non_blocking", "copy")
    else:
        if rest and (rest[0] is None or _is_device_like(rest[0])):
            device = rest.pop(0)
            if rest and (rest[0] is None or _is_dtype_like(rest[0])):
                dtype = rest.pop(0)
        elif rest:
            raise bad()
        allowed = ("device", "dtype", "non_blocking", "copy")
    flags = {"non_blocking": False, "copy": False}
    for name, value in zip(("non_blocking", "copy"), rest):
        if not isinstance(value, bool):
            raise bad()
        flags[name] = value
    if len(rest) > 2:
        raise bad()
    for k, v in kwargs.items():
        if k not in allowed:
            raise bad()
        if k == "device":
            device = v
        elif k == "dtype":
            dtype = v
        else:
            flags[k] = bool(v)
    return _as_device(device), _dtype.to_dtype(dtype), flags["copy"], fmt


@public(name="to", function=False)
def _to(self, *args, **kwargs):
    """Tensor.to: self when nothing changes (and copy=False), else a ToCopyBackward0 copy."""
    device, dtype, copy, fmt = _parse_to(args, kwargs)
    if fmt is _tensor_mod.preserve_format:
        fmt = None
    jdev = None
    if device is not None:
        jdev = device._jax_device()
        try:
            if self._data.devices() == {jdev}:
                jdev = None
        except Exception:  # tracer
            jdev = None
    np_dtype = dtype._np if dtype is not None else self._data.dtype
    if jdev is None and np_dtype == self._data.dtype and not copy and (fmt is None or _layout.suggested_format(self) is (
            None if fmt is _tensor_mod.contiguous_format else fmt)):  # (torch's to_will_alias)
        return self
    if self._data.dtype.kind == "c" and np.dtype(np_dtype).kind != "c":
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=3)
    out = _apply(_to_copy, (self,), (np_dtype,))
    if fmt is not None:
        _layout.formatted(out, fmt)
    if jdev is not None:
        # TODO(devices): the move happens outside the jitted forward, so gradients flowing back stay on the
        # target device; fine on single-platform installs, to revisit for mixed CPU/accelerator graphs.
        out._data = jax.device_put(out._data, jdev)
    return out


_LEGACY_TYPES = {f"torch.{v}Tensor": k for k, v in _dtype._SCALAR_TYPE.items()}
_LEGACY_TYPES.update({f"torchlike.{v}Tensor": k for k, v in _dtype._SCALAR_TYPE.items()})


@public(name="type", function=False)
def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``type()``: the legacy type string ('torch.FloatTensor'); ``type(dtype or string)``: a cast."""
    if dtype is None:
        return f"torch.{_dtype._SCALAR_TYPE[self.dtype.name]}Tensor"
    if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), _dtype.dtype):  # torch.FloatTensor
        dtype = dtype.dtype
    if not isinstance(dtype, (str, type, _dtype.dtype)):
        raise TypeError("dtype must be a type, str, or dtype object")
    if isinstance(dtype, str):
        if dtype not in _LEGACY_TYPES:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = _LEGACY_TYPES[dtype]
    return _to(self, _dtype.to_dtype(dtype), non_blocking)
