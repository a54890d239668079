"""torch's legacy tensor types (``torch.FloatTensor``, ``torch.LongTensor``, ...) and its legacy constructor.

Old PyTorch code still calls them: ``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``,
``x.type(torch.DoubleTensor)``, ``isinstance(x, torch.FloatTensor)``. As in torch, each is a class whose instances
are never made: calling it builds a plain Tensor of its dtype, and ``isinstance`` asks whether a tensor is a CPU tensor
of that dtype. ``torch.Tensor(...)`` is the same constructor with the default dtype (it also aliases a tensor of any
dtype). Sizes give zeros (JAX has no uninitialised memory, as ``empty``).
"""
import numbers

import numpy as np

from .._warnings import warn_once
from .. import _dtype
from .._device import device as _device
from .._tensor import Size, Tensor
from . import _bind
from ._bind import public
from .creation import empty, tensor
from .indexing import _view_apply
from .shape import _alias

_SIGNATURES = ("*, Device? device=None", "Storage storage", "Tensor other",
               "SymIntArrayRef size, *, Device? device=None", "PyObject* data, *, Device? device=None")


def _options(dt):
    return (f"TensorOptions(dtype={_dtype._TYPE_META[dt.name]}, device=cpu, layout=Strided, requires_grad=false "
            f"(default), pinned_memory=false (default), memory_format=(nullopt))")


def _is_size(v):
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, bool)


def _legacy_new(dt, exact, args, kwargs):
    """torch's legacy constructor for dtype ``dt`` (``exact``: a typed constructor, whose tensor argument must have
    ``dt``): no argument, sizes (or a Size), data, or a tensor to alias."""
    if set(kwargs) - {"device"} or (args and not _is_size(args[0]) and len(args) > 1):
        sigs = [_bind._Signature(s, False) for s in _SIGNATURES]
        raise TypeError(_bind._invalid_combination("new", sigs, args, kwargs))
    device = kwargs.get("device")
    if device is not None:
        device = _device(device)
        if device.type != "cpu":
            raise RuntimeError(f"legacy constructor expects device type: cpu but device type: {device.type} was "
                               f"passed")
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if device is not None:
            raise RuntimeError("Legacy tensor constructor of the form torch.Tensor(tensor, device=device) is not "
                               "supported.  Use torch.tensor(...) or torch.as_tensor(...) instead.")
        if exact and other.dtype is not dt:
            raise TypeError(f"expected {_options(dt)} (got {_options(other.dtype)})")
        return _view_apply(_alias, other, ())
    if len(args) == 1 and isinstance(args[0], Size):
        args = tuple(args[0])
    if not args or _is_size(args[0]):
        for i, v in enumerate(args):
            if not _is_size(v):
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {type(v).__name__}\"")
        return empty(*(args or (0,)), dtype=dt, device=device)
    data = args[0]
    if isinstance(data, (numbers.Number, np.bool_)):
        raise TypeError(f"new(): data must be a sequence (got {type(data).__name__})")
    return tensor(data, dtype=dt, device=device)


class _TensorType(type):
    """torch.tensortype: the class of the legacy tensor types."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        return _legacy_new(cls.dtype, True, args, kwargs)


_TensorType.__name__ = _TensorType.__qualname__ = "tensortype"

__all__ = ["set_default_tensor_type"]
for _name in ("float32 float64 float16 bfloat16 int64 int32 int16 int8 uint8 bool").split():
    _dt = getattr(_dtype, _name)
    _type_name = _dtype._SCALAR_TYPE[_name] + "Tensor"
    globals()[_type_name] = _TensorType(_type_name, (), {
        "__module__": "torchlike", "__doc__": f"torch.{_type_name}: the legacy constructor of {_dt} tensors.",
        "dtype": _dt, "is_cuda": False, "is_sparse": False, "is_sparse_csr": False})
    __all__.append(_type_name)


def _tensor_new(cls, *args, **kwargs):
    """torch.Tensor(*sizes), torch.Tensor(data), torch.Tensor(tensor): the legacy constructor, default dtype."""
    return _legacy_new(_dtype.get_default_dtype(), False, args, kwargs)


public(_tensor_new, name="__new__", function=False, method=staticmethod(_tensor_new))


def set_default_tensor_type(t, /):
    """Deprecated in torch (since 2.1): the default dtype from a floating legacy type or its name."""
    warn_once("set_default_tensor_type", "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
              "torch.set_default_dtype() and torch.set_default_device() as alternatives.", stacklevel=2)
    if isinstance(t, str):
        head, _, name = t.partition(".")
        if head == "torch" and name.startswith("cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if head not in ("torch", "torchlike") or name not in __all__:
            raise AttributeError(f"module 'torch' has no attribute '{name}'")
        t = globals()[name]
    if not isinstance(t, _TensorType):
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    if not t.dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dtype.set_default_dtype(t.dtype)
