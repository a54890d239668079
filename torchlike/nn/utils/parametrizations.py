"""torch.nn.utils.parametrizations: weight_norm and spectral_norm as parametrizations (parametrize.py)."""
from ... import _grad_mode
from ..._tensor import Tensor
from ...ops.linalg import mv
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _matrix, _normalize, _transposed_conv
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["weight_norm", "spectral_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """``module.<name>`` = g * v / ||v|| with ``parametrizations.<name>.original0`` (g) and ``original1`` (v);
    state dicts of the old ``weight_norm`` (``<name>_g``, ``<name>_v``) load into it."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            with _grad_mode.no_grad():
                u = _normalize(weight_mat.new_empty(h).normal_(0, 1), self.eps)
                v = _normalize(weight_mat.new_empty(w).normal_(0, 1), self.eps)
            self.register_buffer("_u", u)
            self.register_buffer("_v", v)
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got {weight.ndim}")
        return _matrix(weight, self.dim)

    def _power_method(self, weight_mat, n_power_iterations):
        with _grad_mode.no_grad():  # in place into the buffers, as torch's out=
            for _ in range(n_power_iterations):
                self._u.copy_(_normalize(mv(weight_mat, self._v), self.eps))
                self._v.copy_(_normalize(mv(weight_mat.mH, self._u), self.eps))

    def forward(self, weight):
        if weight.ndim == 1:
            return _normalize(weight, self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / (u.conj() * mv(weight_mat, v)).sum()

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """``module.<name>`` divided by its largest singular value (power iteration, buffers ``_u`` and ``_v`` in
    ``parametrizations.<name>.0``)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if _transposed_conv(module) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
