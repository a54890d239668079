"""torch.autocast: inside the region, table ops cast their floating inputs by torch's per-device lists.

``lower_precision_fp`` ops (matmuls, convolution, attention) run in the autocast dtype (bfloat16 on cpu by
default, float16 on cuda); ``fp32`` ops (losses, prod, and on cuda exp/log/softmax/sums/norms) run in float32;
``promote`` ops (cuda) in the widest input type. Only float16/bfloat16/float32 inputs are cast (never float64 or
integers), each cast is a differentiable ``.to`` (ToCopyBackward0, as torch records it), and casts of leaves that
require grad (weights) are cached until the outermost region exits. The lists name table ops: a composite op
(``linear``, ``matmul``, ``cross_entropy``) is cast through the table ops it runs (addmm/mm/mv/dot, nll_loss),
so ``x @ v`` and ``torch.mv`` both run in the lower dtype. State is per thread, as torch's.
"""
import collections.abc
import functools
import threading
import warnings

import numpy as np

from .. import _dtype
from .. import cuda as _cuda
from .._device import device as _device_cls
from .._tensor import Tensor
from ..ops import _autocast_lists as _lists
from . import _hook

__all__ = ["autocast", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype", "custom_fwd",
           "custom_bwd"]
_STATE_FUNCTIONS = ["set_autocast_enabled", "set_autocast_dtype", "is_autocast_cache_enabled",
                    "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
                    "autocast_decrement_nesting"]  # (torch's top-level names, with the deprecated forms below)

_LOWER, _FP32, _PROMOTE = _lists.LOWER, _lists.FP32, _lists.PROMOTE
_AVAILABLE = ("cpu", "cuda", "ipu", "xpu", "maia", "xla", "mps", "hpu", "mtia", "privateuseone")
_DEFAULT = {d: _dtype.bfloat16 if d in ("cpu", "maia", "xla", "hpu") else _dtype.float16 for d in _AVAILABLE}
_ELIGIBLE = (_dtype.float16, _dtype.bfloat16, _dtype.float32)


class _State(threading.local):
    def __init__(self):
        self.enabled = {}  # device type -> bool
        self.dtype = dict(_DEFAULT)
        self.depth = 0  # nesting of enabled regions (the weight-cast cache lives while > 0)
        self.cache = {}  # id(leaf) -> (leaf, dtype, cast)
        self.cache_enabled = True


_state = _State()
_active = [0]  # threads with an enabled region (the op-table hook stays installed while > 0)
_lock = threading.Lock()


def is_autocast_available(device_type):
    """Whether torch has autocast for ``device_type`` (torchlike casts on 'cpu' and 'cuda'; it holds no tensors on
    the others)."""
    return device_type in _AVAILABLE


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` (default 'cuda', as torch's) in this thread."""
    return _state.enabled.get("cuda" if device_type is None else device_type, False)


def get_autocast_dtype(device_type):
    """The dtype autocast uses on ``device_type`` (bfloat16 on cpu, float16 on cuda unless set)."""
    _device_cls(device_type)  # torch's error for an unknown device type
    return _state.dtype.get(device_type, _dtype.float16)


# ----- torch's autocast state functions (torch.set_autocast_enabled, ...): what torch.autocast's __enter__ and
# __exit__ call, for code that manages the state itself ------------------------------------------------------------
def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` in this thread (``set_autocast_enabled(enabled)``: cuda's, as
    torch's older form)."""
    position = 2
    if enabled is None:
        device_type, enabled, position = "cuda", device_type, 1
    if not isinstance(enabled, bool):
        raise TypeError(f"set_autocast_enabled(): argument 'enabled' (position {position}) must be bool, not "
                        f"{type(enabled).__name__}")
    _device_cls(device_type)
    was_on = any(_state.enabled.values())
    _state.enabled[device_type] = enabled
    _set_active(was_on, any(_state.enabled.values()))


def set_autocast_dtype(device_type, dtype):
    """The dtype autocast regions on ``device_type`` use from now on in this thread."""
    _device_cls(device_type)
    _state.dtype[device_type] = dtype


def is_autocast_cache_enabled():
    """Whether casts of weights are cached within autocast regions."""
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled):
    """Turn the cache of weights' casts on or off."""
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache():
    """Drop the cached casts of weights (torch.autocast does it when its outermost region exits)."""
    _state.cache.clear()


def autocast_increment_nesting():
    """One more enclosing autocast region; returns the nesting depth."""
    _state.depth += 1
    return _state.depth


def autocast_decrement_nesting():
    """One fewer enclosing autocast region; returns the nesting depth (the caller clears the cache at 0)."""
    _state.depth -= 1
    return _state.depth


def _deprecated(name, new, fn):
    """torch's deprecated device-named forms (``is_autocast_cpu_enabled``, ...): ``fn`` with torch's warning."""
    @functools.wraps(fn)
    def call(*args):
        warnings.warn(f"torch.{name} is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=2)
        return fn(*args)
    call.__name__ = call.__qualname__ = name.split("(")[0]
    call.__doc__ = f"Deprecated: torch.{new}."
    return call


_DEPRECATED = {}
for _dev, _word in (("cpu", "cpu"), ("cuda", "gpu"), ("xla", "xla"), ("ipu", "ipu")):
    _DEPRECATED[f"get_autocast_{_word}_dtype"] = _deprecated(
        f"get_autocast_{_word}_dtype()", f"get_autocast_dtype('{_dev}')", functools.partial(get_autocast_dtype, _dev))
    _DEPRECATED[f"set_autocast_{_word}_dtype"] = _deprecated(
        f"set_autocast_{_word}_dtype(dtype)", f"set_autocast_dtype('{_dev}', dtype)",
        functools.partial(set_autocast_dtype, _dev))
    if _dev != "cuda":
        _DEPRECATED[f"is_autocast_{_word}_enabled"] = _deprecated(
            f"is_autocast_{_word}_enabled()", f"is_autocast_enabled('{_dev}')",
            functools.partial(is_autocast_enabled, _dev))
        _DEPRECATED[f"set_autocast_{_word}_enabled"] = _deprecated(
            f"set_autocast_{_word}_enabled(enabled)", f"set_autocast_enabled('{_dev}', enabled)",
            functools.partial(set_autocast_enabled, _dev))
globals().update(_DEPRECATED)


def _cast_to(t, dtype, lower):
    if lower and _state.cache_enabled and t._requires_grad and t._grad_fn is None and t.dtype == _dtype.float32:
        # a weight: cast once per outermost region, as torch's cache
        hit = _state.cache.get(id(t))
        if hit is not None and hit[0] is t and hit[1] == dtype:
            return hit[2]
        out = t.to(dtype)
        _state.cache[id(t)] = (t, dtype, out)
        return out
    return t.to(dtype)


def _cast(name, args):
    """The op's inputs as torch's autocast lists cast them (``args`` unchanged for other ops). Only tensors on the
    region's device type are cast, as in torch."""
    for dev, on in _state.enabled.items():
        if not on or dev not in _LOWER:
            continue
        lower = name in _LOWER[dev]
        if lower:
            target = _state.dtype[dev]
        elif name in _FP32[dev]:
            target = _dtype.float32
        elif name in _PROMOTE[dev]:
            dts = [a.dtype for a in args if _eligible(a, dev)]
            target = functools.reduce(_dtype.promote_types, dts) if dts else None
        else:
            continue
        if target is None:
            return args
        return tuple(_cast_to(a, target, lower) if _eligible(a, dev) and a.dtype != target else a for a in args)
    return args


def _eligible(a, dev):
    return isinstance(a, Tensor) and a.dtype in _ELIGIBLE and a.device.type == dev


class autocast:
    """``with torchlike.autocast("cpu"):`` (or as a decorator): run table ops in mixed precision, as torch's."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _device_cls(device_type)  # torch's error for an unknown device type
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled and device_type == "cuda" and not _cuda.is_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.", stacklevel=2)
            enabled = False
        if enabled and device_type == "cpu" and self.fast_dtype not in (_dtype.bfloat16, _dtype.float16):
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling autocast.\nCPU Autocast "
                          "only supports dtypes of torch.bfloat16, torch.float16 currently.", stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        s = _state
        self._prev = (s.enabled.get(self.device, False), s.dtype.get(self.device))
        was_on = any(s.enabled.values())
        s.enabled[self.device] = self._enabled
        s.dtype[self.device] = self.fast_dtype
        self._prev_cache = s.cache_enabled
        if self._enabled:
            s.depth += 1
            s.cache_enabled = self._cache_enabled
        _set_active(was_on, any(s.enabled.values()))
        return self

    def __exit__(self, *exc):
        s = _state
        was_on = any(s.enabled.values())
        s.enabled[self.device], s.dtype[self.device] = self._prev
        if self._enabled:
            s.depth -= 1
            s.cache_enabled = self._prev_cache
            if s.depth == 0:
                s.cache.clear()
        _set_active(was_on, any(s.enabled.values()))
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorated


def _set_active(was_on, now_on):
    """Count threads inside an enabled region; the op-table hook casts while any is."""
    if was_on == now_on:
        return
    with _lock:
        _active[0] += 1 if now_on else -1
        _hook._cast[0] = _cast if _active[0] else None
        _hook._update()


def _cast_args(value, device_type, dtype):
    """torch.amp's _cast: floating tensors (not float64) on ``device_type`` in ``value`` (nested in mappings and
    iterables) cast to ``dtype``."""
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype != _dtype.float64
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast_args(k, device_type, dtype): _cast_args(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        items = (_cast_args(v, device_type, dtype) for v in value)
        return type(value)(items) if isinstance(value, (list, tuple)) else items
    return value


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom ``autograd.Function``'s ``forward``: in an autocast region on ``device_type``, with
    ``cast_inputs`` its floating tensor inputs are cast to that dtype and it runs with autocast off; without, it
    runs under the region as is. ``custom_bwd`` then runs ``backward`` in the state ``forward`` saw."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not is_autocast_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_args(args, device_type, cast_inputs), **_cast_args(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom ``autograd.Function``'s ``backward`` to run in the autocast state its ``custom_fwd``
    forward ran in."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
