"""torch.nn.utils.memory_format: lay out the weights of a model's 2-d / 3-d convolutions in a memory format."""
from ..._tensor import preserve_format
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, classes):
    if isinstance(module, classes):
        weight_data = module.weight.detach().clone(memory_format=memory_format)
        if memory_format is preserve_format:  # (torch's resize_ to the same size refuses it)
            raise RuntimeError("Unsupported memory formatPreserve")
        module.weight.data = weight_data
    for child in module.children():
        _convert(child, memory_format, classes)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Lay out the weight of every Conv2d / ConvTranspose2d in ``module`` (itself included) in ``memory_format``
    (``torch.channels_last`` or ``torch.contiguous_format``), in place; returns ``module``."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Lay out the weight of every Conv3d / ConvTranspose3d in ``module`` in ``memory_format``
    (``torch.channels_last_3d`` or ``torch.contiguous_format``), in place; returns ``module``."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
