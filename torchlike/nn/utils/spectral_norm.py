"""Spectral normalisation by a forward pre-hook (torch.nn.utils.spectral_norm): ``<name>`` is recomputed before
each forward as ``<name>_orig / sigma``, sigma estimated by power iteration (in training mode) with the buffers
``<name>_u`` and ``<name>_v``. (torch's hooks converting state dicts saved before its version 1 are not kept.)"""
from ... import _grad_mode
from ...ops.linalg import mv
from ..parameter import Parameter
from .weight_norm import _remove_hook

__all__ = ["SpectralNorm", "spectral_norm", "remove_spectral_norm"]


def _normalize(x, eps):
    """F.normalize(x, dim=0, eps=eps): x / max(||x||, eps)."""
    return x / x.norm(2, 0, keepdim=True).clamp_min(eps).expand_as(x)


def _matrix(weight, dim):
    """``weight`` with ``dim`` first, flattened to a matrix."""
    if dim != 0:
        weight = weight.permute(dim, *[d for d in range(weight.dim()) if d != dim])
    return weight.reshape(weight.size(0), -1)


def _transposed_conv(module):
    return type(module).__name__ in ("ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d")


class SpectralNorm:
    """The forward pre-hook of spectral_norm."""

    _version = 1

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        return _matrix(weight, self.dim)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with _grad_mode.no_grad():
                for _ in range(self.n_power_iterations):  # in place into the buffers, as torch's out=
                    v.copy_(_normalize(mv(weight_mat.t(), u), self.eps))
                    u.copy_(_normalize(mv(weight_mat, v), self.eps))
                u, v = u.clone(), v.clone()
        sigma = (u * mv(weight_mat, v)).sum()
        return weight / sigma

    def remove(self, module):
        with _grad_mode.no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with _grad_mode.no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = _normalize(weight.new_empty(h).normal_(0, 1), fn.eps)
            v = _normalize(weight.new_empty(w).normal_(0, 1), fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        return fn


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Normalise ``module.<name>`` by its largest singular value before each forward."""
    if dim is None:
        dim = 1 if _transposed_conv(module) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo spectral_norm: ``<name>`` becomes one Parameter again."""
    return _remove_hook(module, SpectralNorm, name, "spectral_norm")
