"""torchlike.nn.utils: gradient clipping, parameter vectors, rnn packing, weight / spectral norm,
parametrizations, stateless calls, conv/linear-batchnorm fusion."""
from . import clip_grad
from . import rnn, parametrize, parametrizations, stateless, fusion  # noqa: F401
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, clip_grads_with_norm_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .init import skip_init  # noqa: F401
from .memory_format import convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format  # noqa: F401
from .fusion import fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights  # noqa: F401
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

__all__ = ["clip_grad", "clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm", "rnn", "parametrize", "parametrizations", "stateless", "fusion",
           "parameters_to_vector", "vector_to_parameters", "fuse_conv_bn_eval", "fuse_conv_bn_weights",
           "fuse_linear_bn_eval", "fuse_linear_bn_weights", "remove_spectral_norm", "spectral_norm",
           "remove_weight_norm", "weight_norm", "skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]
