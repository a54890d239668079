"""Tensor: an immutable jax.Array plus torch's autograd metadata and a shared version counter.

In-place ops rebind ``_data`` and bump the version counter. Rarely used fields (hooks, grad, the
version counter itself) are class-level defaults, so a fresh tensor costs one object and one
attribute; the version counter is made on first need (saved for backward, mutated, or viewed).
Methods that need ops or the engine (``sin``, ``__add__``, ``to``, ``detach``, ``backward``, ``Tensor(data)``,
...) are declared where they are implemented and bound by the one binding pass (``torchlike/ops/_bind.py``).
"""
import itertools
import warnings
import weakref

import numpy as np
from jax.core import Tracer as _Tracer

from ._warnings import warn_once
from . import _dtype
from . import _grad_mode as _gm
from ._device import _device_of
from ._tensor_str import _str
from .utils.hooks import _add_hook, _Hooks

_new = object.__new__
_new_size = tuple.__new__


class _VersionCounter:
    __slots__ = ("version",)

    def __init__(self):
        self.version = 0


_seq_counter = itertools.count()  # nodes' sequence numbers (torch's sequence_nr)


class _NoVersionCounter:
    """Inference tensors': torch keeps no version counter (reading ``_version`` raises). As in torch, a write outside
    inference mode is refused when it bumps the version, so after the data was written."""
    __slots__ = ()

    @property
    def version(self):
        return 0

    @version.setter
    def version(self, value):
        if not _gm._state.inference:
            raise RuntimeError(
                "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone to get "
                "a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 for more "
                "details.")


_NO_VC = _NoVersionCounter()


_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for "
    "a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more information."
)

_TYPE_NAMES = {
    "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
    "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def _type_string(np_dtype):
    """torch's legacy type name, e.g. 'torch.FloatTensor' (used verbatim in torch's messages)."""
    return f"torch.{_TYPE_NAMES[_dtype._from_np(np_dtype).name]}Tensor"


def _message_type(np_dtype):
    """How torch's C++ messages name a tensor type (``CPUBoolType``); torch's Python layer rewrites it to the
    legacy name (``torch.FloatTensor``) for the eight types that have one."""
    name = _TYPE_NAMES[_dtype._from_np(np_dtype).name]
    return f"torch.{name}Tensor" if name in _LEGACY_NAMED else f"CPU{name}Type"


_LEGACY_NAMED = {"Float", "Double", "Half", "Long", "Int", "Short", "Char", "Byte"}


class memory_format:
    """torch.memory_format: how a dense tensor's elements lie in memory (``contiguous_format``, ``channels_last``,
    ``channels_last_3d``; ``preserve_format``: as the input's)."""

    __module__ = "torchlike"
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return self.name  # (pickled as the module-level name)


contiguous_format, channels_last, channels_last_3d, preserve_format = map(
    memory_format, ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format"))
_CHANNELS_LAST = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}  # rank, dims innermost first


def _format_strides(fmt, shape):
    """The strides of a dense tensor of ``shape`` in memory format ``fmt`` (torch's error for the wrong rank)."""
    if fmt not in _CHANNELS_LAST:
        return _contiguous_strides(shape)
    rank, dims = _CHANNELS_LAST[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    strides, acc = [0] * rank, 1
    for d in dims:
        strides[d] = acc
        acc *= shape[d]
    return tuple(strides)


def _in_format(fmt, sizes, strides):
    """torch's is_contiguous(memory_format=fmt) of a tensor of these sizes and strides (size-1 dims ignored)."""
    if fmt not in _CHANNELS_LAST:
        return 0 in sizes or all(s == c for n, s, c in zip(sizes, strides, _contiguous_strides(sizes)) if n != 1)
    rank, dims = _CHANNELS_LAST[fmt]
    if len(sizes) != rank:
        return False
    expected = 1
    for d in dims:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


def _contiguous_strides(shape):
    """Row-major strides of ``shape`` (size-0 dims count as 1, as torch's)."""
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(strides))


def _wrap(data):
    """A new Tensor around a jax.Array, with no autograd history (the hot-path constructor)."""
    t = _new(Tensor)
    t._data = data
    if _gm._state.inference:
        t._is_inference = True
        t._vc = _NO_VC
    return t


class Tensor:
    """A multi-dimensional array on a JAX device that records autograd history like torch.Tensor."""

    _requires_grad = False
    _grad_fn = None
    _output_nr = 0
    _grad = None
    _vc = None  # _VersionCounter, shared with views; created on first need
    _retains_grad = False
    _hooks = None  # leaf tensor hooks: dict id -> fn(grad)
    _post_acc_hooks = None
    _acc_ref = None  # weakref to this leaf's AccumulateGrad
    _base = None  # views: the tensor they view (never itself a view), as torch's ``_base``
    _storage = None  # ops/_views._Storage shared with views and detach()-ed aliases; made on first need
    _sgeom = None  # (sizes, strides, storage_offset) in the storage; None: the whole storage array
    _ageom = None  # views: the same geometry relative to _base (what CopySlices / AsStridedBackward0 use)
    _view_meta = None  # views torch forbids to modify in place: "no_grad" (made in no_grad mode), "multi"
    #                    (an output of split/unbind/...) or "custom" (an output of a custom Function)
    _view_error = None  # such a view after its base was modified (its grad_fn is then None): (the error reading
    #                     grad_fn raises, the error an in-place write on it raises, whether it had a grad_fn)
    _view_error_off = None  # _view_error of a view without history while its base does not require grad
    _detached = None  # after detach_() of a non-leaf: (its grad_fn's sequence number, the detach_'s, its output_nr)
    _rg_own = False  # views: requires_grad set on the view itself (else it requires grad as long as its base does)
    _fw_tangent = None  # forward-mode AD: this tensor's tangent (a Tensor) at the active dual level
    _is_inference = False
    _conj = False  # torch's conj bit: the tensor reads its storage conjugated (a conj() view)
    _vfn = None  # views with a conj() or view_as_real/complex in their chain from the base: their chain (_views)
    _wrapped_number = False  # a Python scalar wrapped as a 0-d tensor (torch's "wrapped number")
    _dist_place = None  # DTensor: a method laying out another tensor (its .grad, a zeros_like) as itself, as torch
    __array_priority__ = 1000  # make `ndarray * Tensor` defer to Tensor.__rmul__

    # ----- autograd metadata -------------------------------------------------------------
    @property
    def grad_fn(self):
        if self._view_error is not None:  # a view torch will not rebuild after its base was modified
            raise RuntimeError(self._view_error[0])
        return self._grad_fn

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if not isinstance(value, bool):
            raise RuntimeError("requires_grad must be a bool")
        if self._grad_fn is not None:
            msg = "you can only change requires_grad flags of leaf variables."
            if not value:
                msg += (" If you want to use a computed variable in a subgraph that doesn't require "
                        "differentiation use var_no_grad = var.detach().")
            raise RuntimeError(msg)
        if value and not _differentiable_dtype(self._data.dtype):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._set_requires_grad(value)

    def _set_requires_grad(self, value):
        """A leaf's flag; a view without history keeps requiring grad while its base does, and the base's views
        follow it (torch's DifferentiableViewMeta::requires_grad)."""
        base = self._base
        if base is not None:
            self._rg_own = value
            value = value or base._requires_grad
        self._requires_grad = value
        if self._storage is not None:
            _refresh_views(self)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad in place; returns self."""
        if not isinstance(requires_grad, bool):
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be bool, not "
                            f"{type(requires_grad).__name__}")
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if requires_grad and not _differentiable_dtype(self._data.dtype):  # (a non-leaf too, as torch's)
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if self._grad_fn is not None:
            return self
        self._set_requires_grad(requires_grad)
        return self

    @property
    def is_leaf(self):
        if self._view_error is not None:
            raise RuntimeError(self._view_error[0])
        return self._grad_fn is None

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def _version(self):
        vc = self._vc
        if vc is _NO_VC:
            raise RuntimeError("Inference tensors do not track version counter.")
        return vc.version if vc is not None else 0

    def _version_counter(self):
        vc = self._vc
        if vc is None:
            vc = self._vc = _VersionCounter()
        return vc

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def grad(self):
        if (self._grad_fn is not None or self._view_error is not None and self._view_error[2]) and \
                not self._retains_grad and self._grad is None:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:  # torch 2.13's checks, in its order
            if not isinstance(value, Tensor):
                t = type(value)
                name = f"numpy.{t.__name__}" if t.__module__.split(".")[0] == "numpy" else t.__name__
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {name}")
            if value is self:
                raise RuntimeError("can't assign Variable as its own grad")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_dtype._TYPE_META[value.dtype.name]}' to a tensor "
                    f"with grad_dtype '{_dtype._SCALAR_TYPE[self.dtype.name]}'. The gradient must match the tensor's "
                    "grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype attribute with "
                    "a specific dtype, or None to allow any dtype. Set grad_dtype with caution. Diverging the dtypes "
                    "of a tensor and its gradient may break downstream systems that assume they match.")
            dev, own = value.device, self.device
            if dev.type != own.type:
                raise RuntimeError(f"attempting to assign a gradient with device type '{dev.type}' to a tensor with "
                                   f"device type '{own.type}'. Please ensure that the gradient and the tensor are on "
                                   "the same device")
            if dev.index != own.index:
                raise RuntimeError(f"attempting to assign a gradient located on device with index '{dev.index}' to "
                                   f"a tensor located on device with index '{own.index}'. Please ensure that the "
                                   "gradient and the tensor are on the same device")
            if value._data.shape != self._data.shape:
                raise RuntimeError(f"attempting to assign a gradient of size '{list(value._data.shape)}' to a tensor "
                                   f"of size '{list(self._data.shape)}'. Please ensure that the gradient and the "
                                   "tensor are the same size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def retain_grad(self):
        """Make a non-leaf's ``.grad`` populate during backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._view_error is not None and self._view_error[2]:
            raise RuntimeError(self._view_error[0])
        if self._grad_fn is None or self._retains_grad:
            return
        node = self._grad_fn
        if node._retains_grad is None:
            node._retains_grad = {}
        node._retains_grad[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def register_hook(self, hook):
        """``hook(grad) -> Tensor | None`` runs when this tensor's gradient is computed."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._view_error is not None:
            raise RuntimeError(self._view_error[0])
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = _Hooks()
        return _add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """``hook(tensor)`` runs after ``.grad`` of this leaf is accumulated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = _Hooks()
        return _add_hook(self._post_acc_hooks, hook)

    def _is_view(self):
        return self._base is not None

    def detach_(self):
        if _gm._state.inference:  # torch's inference mode skips the autograd kernel: nothing changes
            return self
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
                "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
                "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
                "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        if self._grad_fn is not None:  # saved tensors of later nodes refuse to unpack (torch)
            self._detached = (_history_start(self._grad_fn), next(_seq_counter), self._output_nr)
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        self._fw_tangent = None  # torch drops the forward-mode tangent too
        if self._storage is not None:
            _refresh_views(self)
        return self

    # ----- array metadata ----------------------------------------------------------------
    # jax's Array.shape/.dtype/.ndim are slow Python properties; the aval (a ShapedArray) is cheap to read
    @property
    def shape(self):
        return _new_size(Size, self._data.aval.shape)

    def size(self, dim=None):
        if dim is None:
            return _new_size(Size, self._data.aval.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return _dtype._FROM_NP[self._data.aval.dtype]

    @property
    def device(self):
        return _device_of(self._data)

    @property
    def ndim(self):
        return len(self._data.aval.shape)

    def dim(self):
        return len(self._data.aval.shape)

    def ndimension(self):
        return self._data.ndim

    def numel(self):
        return int(np.prod(self._data.shape, dtype=np.int64))

    nelement = numel

    def element_size(self):
        return self._data.dtype.itemsize

    @property
    def itemsize(self):
        return self._data.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self._data.dtype.itemsize

    def stride(self, dim=None):
        """Strides in elements, as torch's: row-major for a fresh tensor, torch's stride rules for views."""
        strides = self._sgeom[1] if self._sgeom is not None else _contiguous_strides(self._data.aval.shape)
        return strides if dim is None else strides[_wrap_dim(dim, len(strides))]

    def storage_offset(self):
        return self._sgeom[2] if self._sgeom is not None else 0

    def get_device(self):
        """-1 on CPU, else the device index (torch's convention)."""
        dev = self.device
        return -1 if dev.type == "cpu" else (dev.index or 0)

    is_sparse = is_quantized = is_meta = is_mps = is_nested = False

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def is_conj(self):
        return self._conj

    def is_contiguous(self, memory_format=None):
        g = self._sgeom
        if g is None and memory_format not in _CHANNELS_LAST:
            return True
        sizes, strides = (self._data.aval.shape, _contiguous_strides(self._data.aval.shape)) if g is None else g[:2]
        return _in_format(memory_format, sizes, strides)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_inference(self):
        return lambda: self._is_inference

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    # ----- conversion ----------------------------------------------------------------------
    def item(self):
        """The single value as a Python number."""
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        if isinstance(self._data, _Tracer):
            return self._data.reshape(()).item()  # (a JAX transform's value: known under grad, not under vmap)
        return np.asarray(self._data).reshape(()).item()

    def _scalar(self, kind):
        """The single value for float()/int()/complex(), with torch's errors."""
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if kind is not complex and isinstance(v, complex):
            if v.imag != 0:
                raise RuntimeError(f"value cannot be converted to type {'double' if kind is float else 'int64_t'} "
                                   "without overflow")
            v = v.real
        if kind is int and isinstance(v, float) and not np.isfinite(v):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
        return kind(v)

    def tolist(self):
        return np.asarray(self._data).tolist()

    def numpy(self, *, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if self._conj:
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                               "tensor.resolve_conj().numpy() instead.")
        return np.asarray(self._data)

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def __bool__(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError("Boolean value of Tensor with " + ("no values" if n == 0 else "more than one value")
                               + " is ambiguous")
        if isinstance(self._data, _Tracer):  # (under vmap: JAX's TracerBoolConversionError)
            return bool(self._data.reshape(()))
        return bool(self.item())

    def __float__(self):
        if self._requires_grad:  # (once a process, as torch's)
            warn_once("float of requires_grad", "Converting a tensor with requires_grad=True to a scalar may lead to "
                      "unexpected behavior.\nConsider using tensor.detach() first.", stacklevel=2)
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self.numel() != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __complex__(self):
        return self._scalar(complex)

    def __repr__(self):
        return _str(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __jax_array__(self):
        return self._data

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __reduce_ex__(self, proto):
        return (_rebuild, (np.asarray(self._data), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may "
                               "be because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        t = _wrap(self._data)
        t.__class__ = self.__class__
        t._requires_grad = self._requires_grad
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = t
        return t

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        return self.to("cuda" if device is None else device)

    def float(self):
        return self.to(_dtype.float32)

    def double(self):
        return self.to(_dtype.float64)

    def half(self):
        return self.to(_dtype.float16)

    def bfloat16(self):
        return self.to(_dtype.bfloat16)

    def long(self):
        return self.to(_dtype.int64)

    def int(self):
        return self.to(_dtype.int32)

    def short(self):
        return self.to(_dtype.int16)

    def bool(self):
        return self.to(_dtype.bool)

    def byte(self):
        return self.to(_dtype.uint8)

    def char(self):
        return self.to(_dtype.int8)

    def cfloat(self):
        return self.to(_dtype.complex64)

    def cdouble(self):
        return self.to(_dtype.complex128)

    def type_as(self, other):
        return self.to(other.dtype)


def _refresh_views(base):
    """After ``base``'s requires_grad changed: its views without history require grad as it does (and the error of
    one torch refuses to rebuild holds only while they do)."""
    rg = base._requires_grad
    for ref in base._storage.members:
        v = ref()
        if v is None or v._base is not base or v._grad_fn is not None or v._view_error and v._view_error[2]:
            continue
        v._requires_grad = v._rg_own or rg
        if rg and v._view_error_off is not None:
            v._view_error, v._view_error_off = v._view_error_off, None
        elif not rg and v._view_error is not None:
            v._view_error, v._view_error_off = None, v._view_error


def _rebuild(array, requires_grad):
    import jax
    t = _wrap(jax.device_put(array))  # no XLA program per shape, as jnp.asarray would build
    t._requires_grad = requires_grad
    return t


class Size(tuple):
    """torch.Size: a tuple of ints printed as ``torch.Size([2, 3])``; slicing, ``+`` and ``*`` give Sizes."""

    def __new__(cls, sizes=()):
        if type(sizes) is tuple and all(type(s) is int for s in sizes):  # fast path (shapes of jax arrays)
            return tuple.__new__(cls, sizes)
        out = []
        for i, s in enumerate(sizes):
            if not hasattr(s, "__index__"):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is '{type(s).__name__}')")
            out.append(s.__index__())
        return tuple.__new__(cls, out)

    def __repr__(self):
        return f"torch.Size({list(self)})"

    def numel(self):
        """Product of the sizes."""
        return int(np.prod(self, dtype=np.int64))

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))


def _history_start(node):
    """The sequence number of the first node of a tensor's history, from its grad_fn back through the in-place
    writes into it (each links the tensor's previous node first): whether a node that saved the tensor saw it
    without history (a leaf) is decided against it."""
    while node.next_functions and node.next_functions[0][0] is not None and \
            0 < _made(node.next_functions[0][0]) < _made(node):
        node = node.next_functions[0][0]
    return _made(node)


def _made(node):
    """A node's sequence number (an error node's ``_seq`` is UINT64_MAX, for the engine's order: its own is
    ``_made``)."""
    return getattr(node, "_made", node._seq)


def _differentiable_dtype(np_dtype):
    return np_dtype.kind in "fc" or np_dtype == _dtype.bfloat16._np


def _wrap_dim(dim, ndim):
    """Normalise a possibly negative dim, with torch's IndexError."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _typename(obj):
    """torch.typename: 'torch.FloatTensor' for tensors, else the qualified class name."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
