"""torch.testing: ``assert_close`` and ``make_tensor``."""
import collections.abc
import math
import warnings

from .. import _dtype
from ..ops import creation as _creation
from ._comparison import assert_close

__all__ = ["assert_close", "make_tensor"]

_FLOATING = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64, _dtype.complex64, _dtype.complex128)
_INTEGRAL = (_dtype.bool, _dtype.uint8, _dtype.int8, _dtype.int16, _dtype.int32, _dtype.int64)


def _low_high(dtype, low, high, lowest, highest, default_low, default_high):
    """torch's checks and clamping of the value interval [low, high)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got {low=} and {high=}")
    if low == high and dtype in _FLOATING:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if dtype in _INTEGRAL else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` filled with random values in [low, high) (torch's defaults per dtype)."""
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
                         f"but got {noncontiguous=} and {memory_format=}")
    if requires_grad and dtype in _INTEGRAL:
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got {dtype=}")
    if dtype is _dtype.bool:
        low, high = _low_high(dtype, low, high, 0, 2, 0, 2)
        result = _creation.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _INTEGRAL:
        info = _dtype.iinfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max + (dtype is not _dtype.int64), -9, 10)
        result = _creation.randint(low, high, shape, device=device, dtype=dtype)
    elif dtype in _FLOATING:
        info = _dtype.finfo(dtype)
        low, high = _low_high(dtype, low, high, info.min, info.max, -9, 9)
        if dtype.is_complex:
            real = _dtype.float32 if dtype is _dtype.complex64 else _dtype.float64
            parts = [_creation.rand(shape, dtype=real, device=device) * (high - low) + low for _ in range(2)]
            result = (parts[0] + parts[1] * 1j).to(dtype)
        else:
            result = _creation.rand(shape, dtype=dtype, device=device) * (high - low) + low
    else:
        raise TypeError(f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
                        " To request support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if exclude_zero:
        tiny = 1 if dtype in _INTEGRAL else _dtype.finfo(dtype).tiny
        if dtype.is_complex:
            tiny = complex(tiny, tiny)
        result = result.masked_fill(result == 0, tiny)
    if dtype in _FLOATING:
        result = result.detach()
        result.requires_grad_(requires_grad)
    return result
