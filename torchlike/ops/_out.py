"""torch's ``out=``: the checks, in torch's order, then the result written into ``out`` (no autograd through it)."""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _grad_mode as _gm
from .._tensor import Tensor, _type_string, _contiguous_strides
from ._bind import _type_name
from ._registry import _check_inplace
from ._views import _commit, _run, _as_strided, _check_input_overlap

_AUTOGRAD_MSG = ("{}(): functions with out=... arguments don't support automatic differentiation, but one of the "
                 "arguments requires grad.")
_RESIZE_MSG = ("An output with one or more elements was resized since it had shape {}, which does not match the "
               "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will "
               "not be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing "
               "it, inplace, to zero elements with t.resize_(0).")
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
        "complex64": "c10::complex<float>", "complex128": "c10::complex<double>", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}
# torch's refusal of an out tensor of another dtype than the result's: (exception, message, whether a dtype the
# result can be cast to is accepted); the default is TensorIterator's rule, "any" accepts every dtype
_DTYPE_RULES = {
    None: (RuntimeError, "result type {r} can't be cast to the desired output type {o}", True),
    "cat": (TypeError, "torch.cat(): input types can't be cast to the desired output type {o}", True),
    "found": (RuntimeError, "Found dtype {o} but expected {r}", False),
    "cpp": (RuntimeError, "result type {r} can't be cast to the desired output type {oc}", True),
    "bool_only": (RuntimeError, "{n} does not support non-boolean outputs.", False),
    "where": (RuntimeError, "Expected out type to be {r} but got {o}", False),
    "mm": (RuntimeError, "Expected out tensor to have dtype {rc}, but got {oc} instead", False),
    "sum": (RuntimeError, "Expected out tensor to have dtype {rc}, but got {oc} instead", False),
    "take": (RuntimeError, "take(): self and out expected to have the same dtype, but got self.dtype = {r} and "
             "out.dtype = {o}", False),
    "scalar_type": (RuntimeError, "expected scalar_type {r} but found {o}", False),
    "nan_to_num": (RuntimeError, "nan_to_num: dtype of out: {o} should be same as input: {r}", False),
    "diag": (RuntimeError, "diag: result type {r} can't be cast to the desired out= type {o}", True),
    "multinomial": (RuntimeError, "multinomial expects Long tensor out, got: {o}", False),
}
_RESIZING = ("cat", "mm", "sum")  # the rules of ops that resize an out that is also an input (not TensorIterator)
_cast_cache = {}


def _word(dt):
    return _type_string(np.dtype(dt))[6:-6]


def _can_cast(src, dst):
    """torch.can_cast: no float->int, no complex->real, nothing->bool but bool."""
    kinds = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}
    return kinds[np.dtype(src).kind] <= kinds[np.dtype(dst).kind]


def _check_dtype(name, rule, result, out):
    if result == out or rule == "any":  # ("any": comparisons and logical ops write into any dtype)
        return
    exc, msg, castable = _DTYPE_RULES[rule]
    if not (castable and _can_cast(result, out)):
        raise exc(msg.format(n=name, r=_word(result), o=_word(out), rc=_CPP[np.dtype(result).name],
                             oc=_CPP[np.dtype(out).name]))


def _write_out(name, compute, out, inputs, rule=None, expect=None):
    """``name(..., out=out)``: torch's autograd refusal (an input or out requires grad), then ``compute()``, the
    dtype rule ``rule`` (a key of _DTYPE_RULES), the resize warning, and the write (cast to out's dtype).
    ``expect``: the result's dtype when known before computing (the rule is then checked first, as torch's
    TensorIterator does before its kernel refuses a dtype), or a function (the op's own checks that torch's
    structured kernels run before the out check) returning it."""
    if not isinstance(out, Tensor):  # (torch binds a Python number there for add/sub/mul/div: not supported)
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_type_name(out)}")
    if _gm._state.grad_enabled and (out._requires_grad or any(
            isinstance(t, Tensor) and t._requires_grad for t in inputs)):
        raise RuntimeError(_AUTOGRAD_MSG.format(name))
    if callable(expect):
        expect = expect()
    if expect is not None:
        _check_dtype(name, rule, expect, out._data.dtype)
    result = compute()
    data = result._data
    resized = data.shape != out._data.shape
    if resized and rule not in _RESIZING and any(t is out for t in inputs):  # TensorIterator: out is an input
        raise RuntimeError(f"output with shape {list(out._data.shape)} doesn't match the broadcast shape "
                           f"{list(data.shape)}")  # (its shapes before its types)
    _check_dtype(name, rule, data.dtype, out._data.dtype)
    _check_inplace(out)
    if rule != "mm":  # (torch's cat refuses any overlap, its mm none)
        _check_input_overlap(out, inputs, strict=rule == "cat")
    if resized:
        if out._data.size:
            warnings.warn(_RESIZE_MSG.format(list(out._data.shape), list(data.shape)), UserWarning, stacklevel=3)
        if out._storage is not None:
            _resize_shared(out, data.shape)
    if data.dtype != out._data.dtype:
        fn = _cast_cache.get(out._data.dtype)
        if fn is None:
            fn = _cast_cache[out._data.dtype] = jax.jit(lambda a, dt=out._data.dtype: a.astype(dt))
        data = fn(data)
    _commit(out, data)
    if resized and out._storage is None:  # torch resizes out to the result's layout
        out._sgeom = result._sgeom
    return out


def _resize_shared(t, shape):
    """torch's resize of a tensor that shares its storage (a view, or a base with views): ``t`` becomes contiguous
    at its storage offset with ``shape``, the storage grows if it must; every other member keeps its geometry."""
    if t._base is not None and t._base._requires_grad:
        raise NotImplementedError("out=: resizing a view of a tensor that requires grad is not supported")
    storage = t._storage
    offset = 0 if t._sgeom is None else t._sgeom[2]
    flat = storage.data.reshape(-1)
    grow = offset + math.prod(shape) - flat.size
    if grow > 0:
        flat = jnp.concatenate([flat, jnp.zeros(grow, flat.dtype)])
    old = storage.data.shape
    for ref in storage.members:  # the member that was the whole storage gets its geometry spelled out
        m = ref()
        if m is not None and m._sgeom is None:
            m._sgeom = (old, _contiguous_strides(old), 0)
    storage.data = flat
    t._sgeom = (tuple(shape), _contiguous_strides(tuple(shape)), offset)
    t._ageom = None if t._base is not None else t._ageom
    t._data = _run(_as_strided, t._sgeom, flat)
