"""Lazy modules (torch.nn's): LazyModuleMixin, and LazyLinear, LazyConv*, LazyConvTranspose*, LazyBatchNorm*,
LazyInstanceNorm*, whose parameters (and running-statistics buffers) are UninitializedParameter /
UninitializedBuffer until the first forward. A forward pre-hook then infers the input size (in_features,
in_channels or num_features), materializes the tensors, draws them with the regular class's
``reset_parameters`` and turns the module into that class (``cls_to_become``), as torch's.

torch defines LazyModuleMixin in torch.nn.modules.lazy and each layer beside its regular class; torchlike keeps
them together here (``__all__``: the mixin, as torch's module; the layers are exported by nn.modules).
"""
import itertools

from ..._grad_mode import no_grad
from ... import int64
from ...ops.creation import tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm, _NormBase
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .linear import Linear

__all__ = ["LazyModuleMixin"]
_LAYERS = ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """A mixin for modules whose parameters' shapes come from their first input: until the first forward they hold
    UninitializedParameters (not to be used), afterwards regular Parameters, and the module becomes
    ``cls_to_become`` when that is set. A state_dict of initialized tensors loads into an uninitialized lazy module
    (materializing it); move / cast lazy modules before their first forward ("dry run")."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                        error_msgs):
        """load_state_dict pre-hook: an uninitialized tensor of this module takes the shape of an initialized one
        being loaded (so either kind of state_dict loads into either kind of module)."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                input_param = state_dict[key]
                if is_lazy(param) and not is_lazy(input_param):
                    with no_grad():
                        param.materialize(input_param.shape)

    def initialize_parameters(self, *args, **kwargs):
        """Initialize the parameters from the input batch's properties (each lazy module defines it)."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module is still uninitialized."""
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        """The forward pre-hook: initialize from the first input, then drop the hooks and become the regular
        class."""
        kwargs = kwargs if kwargs else {}
        module.initialize_parameters(*args, **kwargs)
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")


def _uninitialized(module, size_name, size, bias, device, dtype):
    """A lazy layer's weight (and bias) as UninitializedParameters and its output size, once the regular class's
    ``__init__`` has run with zero sizes and no bias."""
    module.weight = UninitializedParameter(device=device, dtype=dtype)
    setattr(module, size_name, size)
    if bias:
        module.bias = UninitializedParameter(device=device, dtype=dtype)


# ----- LazyLinear ---------------------------------------------------------------------------------------------
class LazyLinear(LazyModuleMixin, Linear):
    """A Linear whose ``in_features`` is inferred from ``input.shape[-1]`` at the first forward (then it becomes a
    Linear)."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)  # (no bias yet: it would be replaced at once)
        _uninitialized(self, "out_features", out_features, bias, device, dtype)

    def reset_parameters(self):
        """Linear's initialization, once the parameters exist."""
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Infer ``in_features`` from ``input`` and initialize the parameters."""
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                                     f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]


# ----- LazyConv*, LazyConvTranspose* --------------------------------------------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if not isinstance(self.weight, UninitializedParameter):
                raise AssertionError("self.weight must be an UninitializedParameter")
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups, *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups, *self.kernel_size))
            if self.bias is not None:
                if not isinstance(self.bias, UninitializedParameter):
                    raise AssertionError("self.bias must be an UninitializedParameter")
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        """The channel count of a batched or unbatched input."""
        no_batch = self._get_num_spatial_dims() + 1
        if input.dim() not in (no_batch, no_batch + 1):
            raise RuntimeError(f"Expected {no_batch}D (unbatched) or {no_batch + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == no_batch + 1 else input.shape[0]

    def _get_num_spatial_dims(self):
        return self._nd


def _lazy_conv(regular):
    """LazyConv{n}d of ``regular`` (Conv{n}d): its arguments less ``in_channels``."""

    class LazyConv(_LazyConvXdMixin, regular):
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False, padding_mode, device,
                             dtype)
            _uninitialized(self, "out_channels", out_channels, bias, device, dtype)

    return _named(LazyConv, regular)


def _lazy_conv_transpose(regular):
    """LazyConvTranspose{n}d of ``regular``: its arguments less ``in_channels``."""

    class LazyConvTranspose(_LazyConvXdMixin, regular):
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False, dilation,
                             padding_mode, device, dtype)
            _uninitialized(self, "out_channels", out_channels, bias, device, dtype)

    return _named(LazyConvTranspose, regular)


def _named(cls, regular):
    cls.__name__ = cls.__qualname__ = "Lazy" + regular.__name__
    cls.__module__ = __name__
    cls.__doc__ = (f"{regular.__name__} with ``in_channels`` inferred from the first input's ``size(1)`` "
                   f"(``size(0)`` unbatched); the module then becomes a {regular.__name__}.")
    cls.cls_to_become = regular
    return cls


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(c) for c in (Conv1d, Conv2d, Conv3d))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv_transpose(c) for c in (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))


# ----- LazyBatchNorm*, LazyInstanceNorm* ----------------------------------------------------------------------
class _LazyNormBase(LazyModuleMixin, _NormBase):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                 bias=True):
        # affine, bias and track_running_stats off at first: their tensors would be replaced at once
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64, device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            if self.affine:
                if not isinstance(self.weight, UninitializedParameter):
                    raise AssertionError("self.weight must be an UninitializedParameter")
                self.weight.materialize((self.num_features,))
                if self.bias is not None:
                    if not isinstance(self.bias, UninitializedParameter):
                        raise AssertionError("self.bias must be an UninitializedParameter")
                    self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean.materialize((self.num_features,))
                self.running_var.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_norm(base, regular):
    """Lazy{regular}: _LazyNormBase on ``base`` (_BatchNorm or _InstanceNorm) with ``regular``'s input checks."""
    attrs = {k: v for k, v in vars(regular).items() if not k.startswith("__")}  # (_check_input_dim, _no_batch_dim)
    doc = (f"{regular.__name__} with ``num_features`` inferred from the first input's ``size(1)``; the module then "
           f"becomes a {regular.__name__}.")
    if base is _InstanceNorm:
        doc += " As torch's, ``affine`` and ``track_running_stats`` default to True, and unbatched input also gives "
        doc += "``size(1)``."
    return type("Lazy" + regular.__name__, (_LazyNormBase, base),
                dict(attrs, cls_to_become=regular, __doc__=doc, __module__=__name__))


LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d = (
    _lazy_norm(_BatchNorm, c) for c in (BatchNorm1d, BatchNorm2d, BatchNorm3d))
LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d = (
    _lazy_norm(_InstanceNorm, c) for c in (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d))
