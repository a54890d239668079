"""LayerNorm, GroupNorm, RMSNorm, LocalResponseNorm (torch.nn's): weight ones, bias zeros."""
import numbers

from ...ops.creation import empty
from .. import init
from .._layers import layer_norm
from .._normalization import group_norm, local_response_norm, rms_norm
from ..parameter import Parameter
from ._functions import CrossMapLRN2d as _cross_map_lrn2d
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm", "CrossMapLRN2d"]


def _affine_params(module, shape, affine, bias, device, dtype):
    """Give ``module`` a weight and a bias (or None parameters) of ``shape``, then reset them (ones, zeros)."""
    for name, wanted in (("weight", affine), ("bias", affine and bias)):
        module.register_parameter(name, Parameter(empty(shape, device=device, dtype=dtype)) if wanted else None)
    module.reset_parameters()


def _reset_affine(module):
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class LayerNorm(Module):
    """Normalise over the trailing ``normalized_shape`` dims; optional elementwise affine weight and bias."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_params(self, self.normalized_shape, elementwise_affine, bias, device, dtype)

    def reset_parameters(self):
        """weight = 1, bias = 0."""
        _reset_affine(self)

    def forward(self, input):
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalisation over ``num_groups`` groups of ``num_channels``; per-channel affine weight and bias."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_params(self, num_channels, affine, bias, device, dtype)

    def reset_parameters(self):
        """weight = 1, bias = 0."""
        _reset_affine(self)

    def forward(self, input):
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, bias={self.bias is not None}"


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims; optional weight (ones)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        """weight = 1."""
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    """Normalise each channel by the activity of ``size`` neighbouring channels."""

    __constants__ = ["size", "alpha", "beta", "k"]

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The legacy cross-channel local response norm of 4-D inputs (torch's CrossMapLRN2d Function)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
