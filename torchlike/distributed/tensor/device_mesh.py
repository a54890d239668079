"""DeviceMesh over JAX devices, as torch.distributed.device_mesh, backed by a ``jax.sharding.Mesh``.

One Python process drives every device JAX sees (``jax.devices()``: all hosts' devices after
``jax.distributed.initialize``); ranks are positions in that list. torch runs one process per rank, so what torch
calls "this rank" is here the mesh's first device (rank 0 in every group): ``get_rank()`` is
``jax.process_index()``'s first device's rank, ``get_coordinate()`` its coordinate, and ``mesh["tp"]`` a mesh of
the ``tp`` dimension alone. Such a sub-mesh keeps the whole ``jax.sharding.Mesh`` underneath (the other dimensions
replicate), so a tensor placed on ``mesh["tp"]`` of a 2-D mesh lies on all its devices, as it would on each
``dp`` group of torch's ranks.
"""
import jax
import numpy as np
from jax.sharding import Mesh

from ...ops.creation import tensor

__all__ = ["DeviceMesh", "init_device_mesh"]

_MESHES = {}  # jax Mesh -> the first DeviceMesh made over it (the mesh of arrays whose DTensor lost it)
_PLATFORMS = {"cuda": "gpu", "cpu": "cpu", "tpu": "tpu", "gpu": "gpu"}


class DeviceMesh:
    """``DeviceMesh(device_type, mesh, *, mesh_dim_names=None)``: ``mesh`` an array of ranks (positions in
    ``jax.devices(device_type)``). ``jax_mesh`` is the ``jax.sharding.Mesh`` behind it."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _jax_mesh=None, _dims=None):
        self.device_type = device_type
        if _jax_mesh is None:
            ranks = np.asarray(mesh.numpy() if hasattr(mesh, "numpy") else mesh, dtype=np.int64)
            devices = jax.devices(_PLATFORMS.get(device_type, device_type))
            names = tuple(mesh_dim_names) if mesh_dim_names else tuple(f"dim_{i}" for i in range(ranks.ndim))
            _jax_mesh = Mesh(np.array([devices[r] for r in ranks.flat]).reshape(ranks.shape), names)
            _dims = names
        self.jax_mesh = _jax_mesh
        self._dims = tuple(_dims)  # the jax mesh's axis names this mesh has (a sub-mesh has fewer)
        self._named = mesh_dim_names is not None
        _MESHES.setdefault(_jax_mesh, self)

    @property
    def mesh(self):
        """The ranks of this mesh (for a sub-mesh: the group holding rank 0), a torchlike int64 tensor."""
        ids = {d: i for i, d in enumerate(jax.devices(_PLATFORMS.get(self.device_type, self.device_type)))}
        ranks = np.vectorize(lambda d: ids[d], otypes=[np.int64])(self.jax_mesh.devices)
        axes = self.jax_mesh.axis_names
        ranks = ranks[tuple(slice(None) if a in self._dims else 0 for a in axes)]
        kept = [a for a in axes if a in self._dims]
        return tensor(np.transpose(ranks, [kept.index(d) for d in self._dims]) if ranks.ndim > 1 else ranks)

    @property
    def mesh_dim_names(self):
        return self._dims if self._named else None

    @property
    def ndim(self):
        return len(self._dims)

    @property
    def shape(self):
        return tuple(self.jax_mesh.shape[d] for d in self._dims)

    def size(self, mesh_dim=None):
        return int(np.prod(self.shape)) if mesh_dim is None else self.shape[mesh_dim]

    def get_rank(self):
        return 0 if jax.process_index() == 0 else min(d.id for d in self.jax_mesh.local_devices)

    def get_local_rank(self, mesh_dim=None):
        if mesh_dim is None and self.ndim > 1:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                               "Optional kwarg `mesh_dim` needs to be specified when device_mesh.ndim > 1.")
        return 0

    def get_coordinate(self):
        return (0,) * self.ndim

    def __getitem__(self, mesh_dim_names):
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else tuple(mesh_dim_names)
        if not self._named:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        for n in names:
            if n not in self._dims:
                raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                               f"{list(self._dims)}.")
        return DeviceMesh(self.device_type, None, mesh_dim_names=names, _jax_mesh=self.jax_mesh, _dims=names)

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and other.jax_mesh == self.jax_mesh and other._dims == self._dims

    def __hash__(self):
        return hash((self.jax_mesh, self._dims))

    def __repr__(self):
        sizes = self.shape
        body = f"({', '.join(f'{k}={v}' for k, v in zip(self._dims, sizes))})" if self._named else f"{sizes}"
        full = self.jax_mesh.devices.shape
        strides = [int(np.prod(full[i + 1:])) for i in range(len(full))]
        stride = tuple(strides[self.jax_mesh.axis_names.index(d)] for d in self._dims)
        return f"DeviceMesh({body}, '{self.device_type}', stride={stride})"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A ``DeviceMesh`` of ``mesh_shape`` over the first ``prod(mesh_shape)`` devices of ``device_type``."""
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. "
                               f"Found repeated mesh_dim_name in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! "
                               f"Found len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):"
                               f"{len(mesh_shape)}.")
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to pass in 'device.type'.")
    n = int(np.prod(mesh_shape))
    have = len(jax.devices(_PLATFORMS.get(device_type, device_type)))
    if n > have:
        raise RuntimeError(f"init_device_mesh: the mesh needs {n} {device_type} devices, JAX has {have} (on CPU, "
                           "set XLA_FLAGS=--xla_force_host_platform_device_count=N before JAX starts)")
    return DeviceMesh(device_type, np.arange(n).reshape(tuple(mesh_shape)), mesh_dim_names=mesh_dim_names)
