"""Weight normalisation by a forward pre-hook (torch.nn.utils.weight_norm, deprecated in torch in favour of
parametrizations.weight_norm), and the ``_weight_norm`` / ``norm_except_dim`` functions both use.

``_weight_norm(v, g, dim)`` = v * g / ||v|| (the norm over every dim but ``dim``) is one op,
WeightNormInterfaceBackward0 as torch's fused kernel, for ``dim`` first or last; other dims (and -1: the norm of
the whole tensor) are torch's composite (MulBackward0).
"""
import warnings

import jax.numpy as jnp

from ..._internal import op
from ..parameter import Parameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def _norm_keep(v, dim):
    return jnp.sqrt(jnp.sum(v * v, axis=tuple(d for d in range(v.ndim) if d != dim), keepdims=True))


@op("WeightNormInterfaceBackward0")
def _weight_norm_interface(v, g, *, dim):
    return v * (g / _norm_keep(v, dim))


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (kept as size-1 dims); ``dim=-1``: of all of ``v``."""
    if dim == -1:
        return v.norm(pow)
    return v.norm(pow, [d for d in range(v.dim()) if d != dim], keepdim=True)


def _weight_norm(v, g, dim=0):
    """v * (g / norm_except_dim(v, 2, dim))."""
    if dim in (0, v.dim() - 1) and v.dim() > 0:
        return _weight_norm_interface(v, g, dim=dim)
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook recomputing ``<name>`` from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"), self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Replace ``module.<name>`` by ``<name>_g`` (magnitude) and ``<name>_v`` (direction) parameters."""
    WeightNorm.apply(module, name, dim)
    return module


def _remove_hook(module, kind, name, label):
    """Remove the ``kind`` pre-hook on ``name`` (its ``remove`` restores the Parameter); returns ``module``."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"{label} of '{name}' not found in {module}")


def remove_weight_norm(module, name="weight"):
    """Undo weight_norm: ``<name>`` becomes one Parameter again."""
    return _remove_hook(module, WeightNorm, name, "weight_norm")
