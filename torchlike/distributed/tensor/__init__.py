"""torch.distributed.tensor on JAX sharding: DeviceMesh, DTensor, distribute_tensor and placements (see _api)."""
from .device_mesh import DeviceMesh, init_device_mesh
from .placement_types import Partial, Placement, Replicate, Shard
from ._api import DTensor, distribute_module, distribute_tensor

__all__ = ["DeviceMesh", "init_device_mesh", "DTensor", "distribute_tensor", "distribute_module", "Shard",
           "Replicate", "Partial", "Placement"]
