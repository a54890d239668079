"""DTensor on JAX sharding: a Tensor whose ``_data`` is one global ``jax.Array`` laid out on a DeviceMesh by a
``jax.sharding.NamedSharding`` (the pieces really lie on the devices: ``interop.to_jax(d).sharding`` shows it).

The op table runs unchanged: its jitted ops take the sharded arrays and XLA propagates the sharding, inserting the
collectives each op needs. While DTensors exist, the op table's dispatch hook makes an op's results DTensors
when an input is one, and their ``placements`` are read from the result's sharding (or are torch's pending
``Partial``, below). A leaf DTensor's ``.grad``
is a DTensor placed as the leaf (torch's grad of a ``Shard(0)`` parameter is ``Shard(0)``).

One process drives every device, where torch runs one process per rank; so:
- ``to_local()`` is what torch's rank 0 holds: the piece on the mesh's first device of this process (a Tensor of
  the local shape); its gradient flows back into that piece only.
- ``from_local(local, ...)`` reads ``local`` as every rank's local tensor (each rank runs the same code):
  ``Shard(d)`` joins the copies along ``d``, ``Replicate()`` keeps it, ``Partial("sum")`` sums the copies. On
  several processes (``jax.distributed``) each process's ``local`` fills its own devices' pieces.
- ``Partial`` is a label: JAX arrays hold reduced values (XLA reduces inside each program), so a Partial DTensor
  holds the reduced value and ``full_tensor()`` / ``redistribute`` give torch's values. Where torch's sharding
  propagation leaves a result pending (``Shard(1) @ Shard(0)``, a sum over a sharded dim, the gradient of a
  replicated parameter in data parallelism) the result reports torch's ``Partial`` (the rules of the common ops
  are in ``_partial``), and ``to_local()`` gives rank 0's share as torch's: ``value / n`` for ``distribute_tensor``
  / ``from_local``, the op run on rank 0's local inputs for an op's result. Not torch's: a gradient's share
  (``value / n``, where torch's rank 0 holds its own batch's), the gradient through ``to_local()`` of a Partial
  (spread as ``1 / n`` of it), in-place ops on a Partial (they report their sharding's placements), and ops
  without a rule on a Partial input report their sharding's placements (torch's redistribute to Replicate first,
  mostly the same).
- Shards must divide evenly: JAX shardings have no uneven pieces (torch pads the last ranks), so a ``Shard(d)``
  whose size is not a multiple of the mesh dimension raises ``ValueError``.
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer
from jax.sharding import NamedSharding, PartitionSpec

from ..._device import _device_of_jax
from ..._tensor import Tensor, _wrap
from ...amp import _hook
from ...autograd.function import Function
from ...nn.parameter import Parameter
from ...ops import _views
from . import _partial
from .device_mesh import _MESHES, init_device_mesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module"]


def _sharding(mesh, placements, ndim):
    """The NamedSharding of ``placements`` on ``mesh`` for a tensor of ``ndim`` dims."""
    axes = [[] for _ in range(ndim)]
    for name, p in zip(mesh._dims, placements):
        if isinstance(p, Shard):
            axes[p.dim % ndim if ndim else 0].append(name)
    return NamedSharding(mesh.jax_mesh, PartitionSpec(*[tuple(a) if len(a) > 1 else (a[0] if a else None)
                                                        for a in axes]))


def _placements_of(array, mesh):
    """The placements of a global array on ``mesh``, read from its sharding."""
    sharding = getattr(array, "sharding", None)
    if isinstance(sharding, NamedSharding):
        where = {}
        for d, entry in enumerate(sharding.spec):
            for name in (entry if isinstance(entry, tuple) else (entry,)):
                if name is not None:
                    where[name] = d
        return tuple(Shard(where[n]) if n in where else Replicate() for n in mesh._dims)
    if sharding is None or sharding.is_fully_replicated or mesh.ndim != 1:
        return (Replicate(),) * mesh.ndim
    sizes = sharding.shard_shape(array.shape)
    return (next((Shard(d) for d, (a, b) in enumerate(zip(array.shape, sizes)) if a != b), Replicate()),)


def _place(array, sharding):
    """``array`` laid out by ``sharding``: a constraint inside a JAX trace; on several processes, a process's own
    value gives the pieces of its devices, and a global array is resharded by XLA."""
    if isinstance(array, Tracer):
        return jax.lax.with_sharding_constraint(array, sharding)
    if sharding.is_fully_addressable:
        return jax.device_put(array, sharding)
    if array.is_fully_addressable:  # this process's value (every process holds one, as each rank in torch)
        host = np.asarray(array)
        return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])
    return _reshard(sharding)(array)


_RESHARD = {}


def _reshard(sharding):
    fn = _RESHARD.get(sharding)
    if fn is None:
        fn = _RESHARD[sharding] = jax.jit(lambda a: a, out_shardings=sharding)
    return fn


def _normalize(placements, mesh, ndim):
    if placements is None:
        return (Replicate(),) * mesh.ndim
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError("`placements` must have the same length as `device_mesh.ndim`! Found placements length: "
                         f"{len(placements)}, and device_mesh.ndim: {mesh.ndim}.")
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Placement objects (Shard, Replicate, Partial), got {p!r}")
        if isinstance(p, Shard):
            if not -ndim <= p.dim < max(ndim, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but "
                                 f"got {p.dim})")
            p = Shard(p.dim % ndim)
        out.append(p)
    if len({p.reduce_op for p in out if isinstance(p, Partial)}) > 1:
        raise ValueError(f"Mixed Partial reduce types are not supported: {tuple(out)}")
    return tuple(out)


def _check_even(shape, mesh, placements):
    parts = {}
    for size, p in zip(mesh.shape, placements):
        if isinstance(p, Shard):
            parts[p.dim] = parts.get(p.dim, 1) * size
    for d, n in parts.items():
        if shape[d] % n:
            raise ValueError(f"torchlike's DTensor shards evenly only (JAX shardings have no uneven pieces): dim {d} "
                             f"of size {shape[d]} is split {n} ways")


def _partial_share(placements, mesh):
    """Each device's share of a Partial value: 1/n for "sum" over the Partial mesh dims, 1 otherwise."""
    n = 1
    for size, p in zip(mesh.shape, placements):
        if isinstance(p, Partial) and p.reduce_op == "sum":
            n *= size
    return n


def _make(array, mesh, placements, requires_grad=False):
    """A DTensor leaf around ``array`` (already laid out); a Partial label is kept while its data is unchanged."""
    _watch()
    t = _wrap(array)
    t.__class__ = DTensor
    t._mesh = mesh
    t._pl = placements
    if any(isinstance(p, Partial) for p in placements):
        t._labels = (array, placements, None)
    if requires_grad:
        t._requires_grad = True
    return t


class DTensor(Tensor):
    """A Tensor laid out on a DeviceMesh (see the module docstring). ``placements``, ``device_mesh``,
    ``to_local()``, ``full_tensor()``, ``redistribute()``, ``DTensor.from_local()``."""

    _mesh = None
    _labels = None  # (array, placements, rank 0's share or None) of a DTensor with Partial placements (_partial)
    _gmarks = frozenset()  # a leaf's mesh dims where torch's gradient is Partial("sum") (_partial)
    _gfrom = None  # a view's or reduction's DTensor input, whose gradient is this one's (_partial)
    _pl = None  # the placements it was made with: what it reports while JAX traces it (a tracer has no sharding)

    @property
    def device_mesh(self):
        mesh = self._mesh
        if mesh is None:
            if isinstance(self._data, Tracer):
                return next(iter(_MESHES.values()))
            mesh = self._mesh = _MESHES[self._data.sharding.mesh]
        return mesh

    @property
    def placements(self):
        labels = self._labels
        if labels is not None and labels[0] is self._data:
            return labels[1]
        if isinstance(self._data, Tracer):
            return self._pl if self._pl is not None else (Replicate(),) * self.device_mesh.ndim
        return _placements_of(self._data, self.device_mesh)

    def _layout_sharding(self):
        """The NamedSharding of its data (from its placements while JAX traces it)."""
        if isinstance(self._data, Tracer):
            return _sharding(self.device_mesh, self.placements, self.ndim)
        return self._data.sharding

    def _as_parameter(self, t):
        """``nn.Parameter(self)`` made ``t`` (an alias): it stays a DTensor on the same mesh."""
        t.__class__ = _ParameterDTensor
        t._mesh, t._pl, t._labels = self.device_mesh, self.placements, self._labels

    @property
    def device(self):
        return _device_of_jax(self.device_mesh.jax_mesh.devices.flat[0])

    def _dist_place(self, g):
        """Lay out ``g`` (this leaf's .grad after accumulation, a ``zeros_like`` of it) as this DTensor: torch's
        grad of a ``Shard(0)`` parameter is ``Shard(0)``, its ``zeros_like`` too."""
        sharding = self._layout_sharding()
        labels = _partial.pending(self)
        if isinstance(g._data, Tracer) or g._data.sharding != sharding:
            g._data = _place(g._data, sharding)
        if not isinstance(g, DTensor):
            g.__class__ = DTensor
        g._mesh, g._pl = self.device_mesh, self._pl
        if labels is not None and g._data is self._data:  # detach(), .data: the same pending Partial
            g._labels = (g._data, labels[1], labels[2])
        elif self._gmarks and g is self._grad:  # torch's gradient of a replicated leaf used on sharded data (the
            pls, marks, self._gmarks = self.placements, self._gmarks, frozenset()  # marks of the forward since)
            g._labels = (g._data, tuple(Partial() if k in marks else p for k, p in enumerate(pls)), None)

    def to_local(self, *, grad_placements=None):
        """This process's first piece (what torch's rank 0 holds), differentiable (see the module docstring)."""
        return _ToTorchTensor.apply(self, grad_placements)

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor as a plain Tensor (all-gathered), differentiable."""
        return self.redistribute(placements=(Replicate(),) * self.device_mesh.ndim).to_local(
            grad_placements=grad_placements)

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False, forward_dtype=None,
                     backward_dtype=None):
        """The same values laid out by ``placements`` (XLA moves the pieces); the gradient goes back to the
        original placements (a Partial one as Replicate, as torch's)."""
        mesh = device_mesh or self.device_mesh
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        placements = _normalize(placements, mesh, self.ndim)
        for mine, p in zip(self.placements, placements):
            if isinstance(p, Partial) and mine != p:
                raise RuntimeError(f"Can not redistribute from {mine} to {p}, redistributing to Partial is for "
                                   "internal use only!")
        return Redistribute.apply(self, mesh, placements, forward_dtype, backward_dtype)

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False, shape=None, stride=None):
        """A DTensor from every rank's ``local_tensor`` (the same on every rank here: see the module docstring)."""
        mesh = device_mesh or _default_mesh()
        placements = _normalize(placements, mesh, local_tensor.ndim)
        return _FromTorchTensor.apply(local_tensor, mesh, placements)

    def __repr__(self):
        local = self.to_local().detach()
        local._requires_grad = self._requires_grad  # (torch shows its local tensor's flag)
        return f"DTensor(local_tensor={local!r}, device_mesh={self.device_mesh!r}, placements={self.placements!r})"

    __str__ = __repr__


class _ParameterDTensor(DTensor, Parameter):
    """``nn.Parameter(dtensor)``: a parameter that is a DTensor (torch's ``Parameter`` keeps the data's class, and
    its name and repr)."""

    __repr__ = __str__ = DTensor.__repr__


_ParameterDTensor.__name__ = _ParameterDTensor.__qualname__ = "DTensor"


def _default_mesh():
    if not _MESHES:
        return init_device_mesh(jax.devices()[0].platform.replace("gpu", "cuda"), (len(jax.devices()),))
    return next(reversed(_MESHES.values()))


class _ToTorchTensor(Function):
    @staticmethod
    def forward(ctx, x, grad_placements):
        mesh, placements, array = x.device_mesh, x.placements, x._data
        device = _partial.first_device(mesh)
        index = x._layout_sharding().devices_indices_map(array.shape)[device]
        ctx.meta = (mesh, grad_placements or placements, index, array.shape, _partial_share(placements, mesh))
        labels = _partial.pending(x)
        if labels is not None and labels[2] is not None:  # an op's pending Partial: rank 0's share
            return _wrap(labels[2]())
        if isinstance(array, Tracer):
            local = array[index]
        else:
            local = next(s.data for s in array.addressable_shards if s.device == device)
        n = ctx.meta[-1]
        return _wrap(local / n if n > 1 else local)

    @staticmethod
    def backward(ctx, grad):
        mesh, placements, index, shape, n = ctx.meta
        g = jnp.zeros(shape, grad._data.dtype).at[index].set(grad._data / n if n > 1 else grad._data)
        placements = tuple(Replicate() if isinstance(p, Partial) else p for p in placements)
        return _make(_place(g, _sharding(mesh, placements, len(shape))), mesh, placements), None


def _tiled(local, mesh, placements):
    """The global array of every rank's identical ``local`` (the forward of from_local, as a JAX function)."""
    out = local
    for size, p in zip(mesh.shape, placements):
        if isinstance(p, Shard):
            out = jnp.concatenate([out] * size, axis=p.dim)
        elif isinstance(p, Partial) and p.reduce_op == "sum":
            out = out * size
    return out


class _FromTorchTensor(Function):
    @staticmethod
    def forward(ctx, local, mesh, placements):
        partial = any(p == Partial("sum") for p in placements)
        sharding = _sharding(mesh, placements, local.ndim)
        if partial and not sharding.is_fully_addressable and not isinstance(local._data, Tracer):
            # several processes: the sum of every device's copy of its process's tensor (an all-reduce)
            if len(mesh._dims) != len(mesh.jax_mesh.axis_names) or any(isinstance(p, Shard) for p in placements):
                raise NotImplementedError("from_local with Partial placements on several processes takes a whole "
                                          "mesh and no Shard placements")
            host = np.asarray(local._data)
            copies = jax.make_array_from_callback((mesh.size(),) + host.shape, NamedSharding(
                mesh.jax_mesh, PartitionSpec(mesh.jax_mesh.axis_names)), lambda index: host[None])
            ctx.meta = (None, partial)
            return _make(jax.jit(lambda a: a.sum(0), out_shardings=sharding)(copies), mesh, placements)
        array, vjp = jax.vjp(lambda a: _tiled(a, mesh, placements), local._data)
        ctx.meta = (vjp, partial)
        return _make(_place(array, sharding), mesh, placements)

    @staticmethod
    def backward(ctx, grad):
        vjp, partial = ctx.meta
        g = grad._data
        if vjp is not None and (isinstance(g, Tracer) or g.is_fully_addressable):
            return _wrap(vjp(g)[0]), None, None
        # several processes: this process's tensor filled its own devices' pieces; its gradient is the sum of
        # their distinct pieces (each device's copy counts under Partial("sum"))
        pieces = {}
        for shard in g.addressable_shards:
            key = str(shard.index)
            n = pieces[key][1] + 1 if key in pieces else 1
            pieces[key] = (shard.data, n)
        total = sum(np.asarray(data) * (n if partial else 1) for data, n in pieces.values())
        return _wrap(jax.device_put(total, jax.local_devices()[0])), None, None


class Redistribute(Function):
    @staticmethod
    def forward(ctx, x, mesh, placements, forward_dtype, backward_dtype):
        _check_even(x.shape, mesh, placements)
        ctx.meta = (x.device_mesh, x.placements, x._data.dtype) if isinstance(x, DTensor) else (None, None,
                                                                                                  x._data.dtype)
        array = x._data if forward_dtype is None else x._data.astype(forward_dtype.np)
        return _make(_place(array, _sharding(mesh, placements, x.ndim)), mesh, placements)

    @staticmethod
    def backward(ctx, grad):
        mesh, placements, dtype = ctx.meta
        g = grad._data.astype(dtype)
        if mesh is None:  # (from a plain Tensor: _layout)
            return _wrap(g), None, None, None, None
        placements = tuple(Replicate() if isinstance(p, Partial) else p for p in placements)
        return _make(_place(g, _sharding(mesh, placements, grad.ndim)), mesh, placements), None, None, None, None


def _layout(x, mesh, placements):
    """``x`` laid out by ``placements``, differentiable: a DTensor redistributed, a plain Tensor distributed (read
    as the whole tensor, as one process holds it)."""
    placements = _normalize(placements, mesh, x.ndim)
    if isinstance(x, DTensor) and x.device_mesh == mesh and x.placements == placements:
        return x
    return Redistribute.apply(x, mesh, placements, None, None)


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """A leaf DTensor with ``tensor``'s values laid out on ``device_mesh`` by ``placements`` (default: all
    Replicate); it requires grad when ``tensor`` does, as torch's."""
    mesh = device_mesh or _default_mesh()
    if isinstance(tensor, DTensor):
        placements = _normalize(placements, mesh, tensor.ndim)
        if tensor.device_mesh != mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh {tensor.device_mesh} to a different "
                             f"device mesh {mesh}.")
        if tensor.placements != placements:
            raise ValueError(f"Cannot distribute a DTensor with placements {tensor.placements} to a different "
                             f"placements {placements}. do you want to call `redistribute` instead?")
        return tensor
    placements = _normalize(placements, mesh, tensor.ndim)
    _check_even(tensor.shape, mesh, placements)
    return _make(_place(tensor._data, _sharding(mesh, placements, tensor.ndim)), mesh, placements,
                 tensor._requires_grad)


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None, output_fn=None):
    """Lay out ``module``'s parameters and buffers: ``partition_fn(name, submodule, mesh)`` for each submodule
    (default: every parameter and buffer replicated); ``input_fn(module, inputs, mesh)`` and
    ``output_fn(module, outputs, mesh)`` become forward pre-hook and hook."""
    mesh = device_mesh or _default_mesh()
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        for key, p in list(sub._parameters.items()):
            if p is not None and not isinstance(p, DTensor):
                sub.register_parameter(key, Parameter(distribute_tensor(p.detach(), mesh), p.requires_grad))
        for key, b in list(sub._buffers.items()):
            if b is not None and not isinstance(b, DTensor):
                sub._buffers[key] = distribute_tensor(b, mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs, mesh))
    return module


def _to_dtensors(op, run, args, inplace, statics):
    """Run an op from the op table's dispatch hook while DTensors exist: results of an op with a DTensor input are
    DTensors; an in-place op keeps its DTensor target's layout (a plain source written into it is laid out as it)."""
    for a in args:
        if isinstance(a, DTensor):
            break
    else:
        return run(args)
    mesh = a.device_mesh
    if inplace:
        before = {id(a): a._data.sharding for a in args if isinstance(a, DTensor) and not isinstance(a._data, Tracer)}
        out = run(args)
        sharding = before.get(id(out))
        if sharding is not None and out._data.sharding != sharding:
            _views._write_quiet(out, _place(out._data, sharding))
        return out
    out = run(args)
    for o in (out if isinstance(out, (tuple, list)) else (out,)):
        if type(o) is Tensor and isinstance(getattr(o._data, "sharding", None), NamedSharding):
            o.__class__ = DTensor
            o._mesh = mesh
    if type(out) is DTensor and not isinstance(out._data, Tracer) and (
            op.name in _partial.RULES or any(_partial.pending(a) for a in args)):
        _partial.relabel(op, run, args, statics, out, mesh, _placements_of, _sharding)
    return out


def _watch():
    if _hook._sharded[0] is None:
        _hook._sharded[0] = _to_dtensors
        _hook._update()
