"""UninitializedParameter and UninitializedBuffer (torch.nn.parameter's): the placeholders of lazy modules.

torch guards them with ``__torch_function__``; torchlike has none, so the guard is built here from Tensor's own
attributes: every property (torch lets descriptors through) and torch's allowed methods (``size``, ``copy_``,
``to``, the dtype casts, ...) run with the tensor's data readable, ``shape`` raises torch's RuntimeError, and
every other method raises torch's ValueError. The data itself (``_data``) is readable only inside an allowed
call, so any op or function given an uninitialized tensor raises the same ValueError before it computes.
"""
import functools
import inspect
import sys
import threading
import types

from .._internal import differentiable_dtype
from .._tensor import Tensor
from ..ops.creation import empty
from .parameter import Parameter  # (parameter.py re-exports this module's names, importing it last)

__all__ = ["UninitializedTensorMixin", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]

_ALLOWED = ("__hash__", "size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
            "short", "int", "long", "cuda", "cpu", "to", "get_device")
# Tensor attributes the guard leaves alone: the object protocol (and what the mixin defines itself)
_KEEP = frozenset(("__class__", "__dict__", "__weakref__", "__doc__", "__module__", "__init__", "__new__",
                   "__getattribute__", "__getattr__", "__setattr__", "__delattr__", "__init_subclass__",
                   "__subclasshook__", "__dir__", "__getstate__", "__setstate__", "__reduce__", "__sizeof__"))

_state = threading.local()


def _allowing(fn):
    """``fn`` run with uninitialized tensors' data readable (torch's allowed methods and descriptors), unless an op
    is what calls it (torch's ops refuse the tensor before they look at it)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        before = getattr(_state, "allowed", False)
        if not before and _from_ops(sys._getframe(1)):
            raise _error(type(args[0]), _caller(1))
        _state.allowed = True
        try:
            result = fn(*args, **kwargs)
        finally:
            _state.allowed = before
        if args and type(result) is Tensor and getattr(type(args[0]), "_keeps_class", False):
            result.__class__ = type(args[0])  # (torch's Tensor.__torch_function__ returns the subclass)
        return result
    return call


def _error(cls, func):
    return ValueError(f"Attempted to use an uninitialized parameter in {func}. This error happens when you are using "
                      f"a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` objects. When "
                      "using LazyModules Call `forward` with a dummy batch to initialize the parameters before "
                      "calling torch functions")


# the Tensor method torch names in the error when a dunder runs (its __torch_function__ sees the method)
_DUNDER_METHOD = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul", "__rmul__": "mul",
                  "__truediv__": "div", "__matmul__": "matmul", "__neg__": "neg", "__abs__": "abs", "__lt__": "lt",
                  "__le__": "le", "__gt__": "gt", "__ge__": "ge", "__mod__": "remainder", "__iadd__": "add_",
                  "__isub__": "sub_", "__imul__": "mul_", "__itruediv__": "div_"}


def _method_name(name):
    return f"<method '{_DUNDER_METHOD.get(name, name)}' of 'torch._C.TensorBase' objects>"


def _refusing(name, method):
    def call(self, *args, **kwargs):
        if getattr(_state, "allowed", False):  # (inside an allowed method: torch's C++ would not see this call)
            return method(self, *args, **kwargs)
        raise _error(type(self), _caller(1) if _from_ops(sys._getframe(1)) else _method_name(name))
    call.__name__ = call.__qualname__ = name
    return call


_PACKAGE = __name__.split(".")[0]


# torchlike's packages that are Python in torch too (they use a tensor's attributes as user code does); the rest
# of torchlike is op code: C++ in torch, or Python functions that check ``has_torch_function`` first
_PYTHON_LEVEL = tuple(f"{_PACKAGE}.{m}" for m in ("nn.modules", "nn.utils", "nn.parallel", "nn.parameter",
                                                  "nn._uninitialized", "optim", "serialization", "utils",
                                                  "distributed"))


_NOT_OVERRIDABLE = frozenset(("tensor", "as_tensor"))  # torch functions that take an uninitialized tensor as it is


def _from_ops(frame):
    """Whether ``frame`` runs torchlike's op code (where torch's guard would refuse an uninitialized tensor)."""
    module = frame.f_globals.get("__name__", "")
    return (module.split(".")[0] == _PACKAGE
            and not any(module == p or module.startswith(p + ".") for p in _PYTHON_LEVEL)
            and _outermost(frame)[1] not in _NOT_OVERRIDABLE)


def _outermost(frame):
    """(the outermost torchlike frame from ``frame`` out to the user's code, the name of the outermost bound op
    among those frames (its guard knows torch's name) or None, whether that op is a Tensor method)."""
    outer, op = None, None
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] == _PACKAGE:
        names = frame.f_locals
        if frame.f_code.co_name == "call" and isinstance(names.get("name"), str) and "method" in names:
            op = names
        outer = frame
        frame = frame.f_back
    return outer, op and op["name"], op and op["method"]


def _caller(depth):
    """torch's name of the function that used an uninitialized tensor (``depth`` frames up): the outermost bound op
    of the torchlike calls below the user's code, else the outermost of those calls."""
    outer, op, method = _outermost(sys._getframe(depth + 1))
    if op is not None:
        return _method_name(op) if method else f"<built-in function {op}>"
    return "<unknown>" if outer is None else f"<function {outer.f_code.co_name}>"


def _read_data(self):
    if getattr(_state, "allowed", False) or _outermost(sys._getframe(1))[1] in _NOT_OVERRIDABLE:
        return self.__dict__["_data"]
    raise _error(type(self), _caller(1))


def _write_data(self, value):
    self.__dict__["_data"] = value


_built = []


def _build():
    """Install the guard on the mixin (once, when the first uninitialized tensor is made: Tensor's methods are all
    bound by then)."""
    if _built:
        return
    for name in dir(Tensor):
        if name in _KEEP or name in vars(UninitializedTensorMixin):
            continue
        attr = inspect.getattr_static(Tensor, name)
        if isinstance(attr, property):
            setattr(UninitializedTensorMixin, name, property(
                attr.fget and _allowing(attr.fget), attr.fset and _allowing(attr.fset),
                attr.fdel and _allowing(attr.fdel), attr.__doc__))
        elif isinstance(attr, types.FunctionType) and (name[0] != "_" or name[:2] == "__"):
            setattr(UninitializedTensorMixin, name, _allowing(attr) if name in _ALLOWED else _refusing(name, attr))
    _built.append(True)


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: no usable data until ``materialize``."""

    _allowed_methods = [getattr(Tensor, n) for n in _ALLOWED]
    _data = property(_read_data, _write_data)

    def materialize(self, shape, device=None, dtype=None):
        """Become a ``cls_to_become`` (Parameter or Tensor) of ``shape`` with uninitialized values, on this
        tensor's device and dtype unless ``device`` / ``dtype`` are given."""
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        if _from_ops(sys._getframe(1)):  # (an op reading the shape: torch's op would raise the guard's error)
            raise _error(type(self), _caller(1))
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def _new(cls, requires_grad, device, dtype):
    _build()
    t = empty(0, device=device, dtype=dtype)
    if requires_grad and not differentiable_dtype(t._data.dtype):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    t._requires_grad = bool(requires_grad)
    t.__class__ = cls
    return t


def is_lazy(param):
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet: only its dtype / device can change (``to``, ``double``, ...)
    until ``materialize(shape)`` makes it a regular Parameter (lazy modules do that on their first forward)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _new(cls, requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.device, self.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is not known yet; ``materialize(shape)`` makes it a regular Tensor."""

    cls_to_become = Tensor
    _keeps_class = True

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _new(cls, requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True
        return t


for _cls in (UninitializedTensorMixin, UninitializedParameter, UninitializedBuffer):
    _cls.__module__ = Parameter.__module__  # (torch.nn.parameter's, where torch defines them)
