"""Fully sharded data parallel, as torch.distributed.fsdp's FSDP2: ``fully_shard(module, mesh=...)``.

Each parameter becomes a DTensor ``Shard(0)`` on the mesh (an nn.Parameter, so optimizers see it as usual), so
each device holds 1/N of it; the optimizer's state made from a parameter (``zeros_like``, in-place updates) takes
the same layout. torch gathers the parameters before each module's forward and reduce-scatters the gradients
after backward; here XLA gathers what each jitted op needs inside the op itself, and a parameter's gradient is
placed as the parameter (``Shard(0)``). ``unshard()`` and ``reshard()`` therefore have nothing to do. The module's
outputs are plain Tensors, as torch's. JAX shards evenly only: a parameter whose dim 0 is not a multiple of the
mesh size stays replicated (torch pads it).
"""
from ..._tensor import _wrap
from ...autograd.function import Function
from ...nn.parameter import Parameter
from ..tensor import DTensor, Replicate, Shard, distribute_tensor
from ..tensor._api import _default_mesh

__all__ = ["fully_shard", "FSDPModule"]


class FSDPModule:
    """The class ``fully_shard`` adds to a module (its class becomes ``FSDP<Name>``)."""

    def unshard(self, async_op=False):
        """torch all-gathers the parameters here; XLA gathers inside each op, so nothing to do."""

    def reshard(self):
        """torch frees the gathered parameters here; nothing was gathered outside the ops."""

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """Accepted for torch's API; gradients are always placed as their parameters."""


class _Plain(Function):
    """A DTensor output as a plain Tensor with the same data (identity for autograd)."""

    @staticmethod
    def forward(ctx, x):
        return _wrap(x._data)

    @staticmethod
    def backward(ctx, grad):
        return grad


def _plain_outputs(module, inputs, output):
    if isinstance(output, DTensor):
        return _Plain.apply(output)
    if isinstance(output, tuple):
        return tuple(_Plain.apply(o) if isinstance(o, DTensor) else o for o in output)
    return output


_CLASSES = {}


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None, mp_policy=None,
                offload_policy=None, ignored_params=None):
    """Shard ``module``'s parameters (those not already DTensors, none of ``ignored_params``) on dim 0 over
    ``mesh`` (default: all devices); returns ``module``, now also an ``FSDPModule``."""
    mesh = mesh or _default_mesh()
    if mesh.ndim != 1:
        raise ValueError(f"fully_shard expects a 1D DeviceMesh but got {mesh}")
    ignored = set(map(id, ignored_params or ()))
    for sub in module.modules():
        for name, p in list(sub._parameters.items()):
            if p is None or isinstance(p, DTensor) or id(p) in ignored:
                continue
            placement = shard_placement_fn(p) if shard_placement_fn is not None else None
            placement = placement or Shard(0)
            if p.ndim == 0 or p.shape[placement.dim] % mesh.size():
                placement = Replicate()
            sub.register_parameter(name, Parameter(distribute_tensor(p.detach(), mesh, [placement]),
                                                   p.requires_grad))
    cls = type(module)
    if not isinstance(module, FSDPModule):
        new = _CLASSES.get(cls)
        if new is None:
            new = _CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls), {})
        module.__class__ = new
        module.register_forward_hook(_plain_outputs)
    return module
