"""torch.distributed.device_mesh's names (the mesh lives in torchlike.distributed.tensor.device_mesh)."""
from .tensor.device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DeviceMesh", "init_device_mesh"]
