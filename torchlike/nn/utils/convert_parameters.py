"""parameters_to_vector / vector_to_parameters (torch.nn.utils.convert_parameters)."""
from ..._internal import typename
from ..._tensor import Tensor
from ...ops.shape import cat

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_param_device(param, old_param_device):
    """torch's check that all parameters are on one device (-1: the CPU)."""
    device = param.get_device() if param.device.type == "cuda" else -1
    if old_param_device is not None and device != old_param_device:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return device


def parameters_to_vector(parameters):
    """One vector of all ``parameters``, flattened and concatenated in order (CatBackward0)."""
    device = None
    vec = []
    for param in parameters:
        device = _check_param_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec, parameters):
    """Set the data of ``parameters`` to consecutive slices of ``vec`` (their values, not their history)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {typename(vec)}")
    device = None
    pointer = 0
    for param in parameters:
        device = _check_param_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
