"""torch.nn.utils.parametrizations: orthogonal, weight_norm and spectral_norm as parametrizations (parametrize.py).

orthogonal's maps are one op each, named as torch's node for the map (LinalgMatrixExpBackward0, LinalgSolveExBackward0
for Cayley, LinalgHouseholderProductBackward0), taking the raw parameter (torch's tril / padding / skew steps are
inside the op); the sign fix and the product with ``base`` are torch's ops (MulBackward0, MmBackward0). Where
torch draws random columns (a non-square matrix with use_trivialization), the draws differ from torch's.
"""
import enum

import jax
import jax.numpy as jnp
import numpy as np

from ... import _grad_mode
from ..._internal import op
from ..._tensor import Tensor
from ...ops.creation import eye, randn, tensor, zeros_like
from ...ops.linalg import mv
from ...ops.shape import cat
from ..modules.module import Module
from . import parametrize
from .spectral_norm import _matrix, _normalize, _transposed_conv
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "weight_norm", "spectral_norm"]


def _skew(x, n, k):
    """torch's skew-symmetric A from the raw (n, k) parameter: tril, padded to (n, n), A = X - X^H."""
    x = jnp.tril(x)
    if n != k:
        x = jnp.concatenate([x, jnp.zeros(x.shape[:-1] + (n - k,), x.dtype)], -1)
    return x - jnp.conj(jnp.swapaxes(x, -1, -2))


@op("LinalgMatrixExpBackward0")
def _orth_exp(x, *, n, k):
    return jax.scipy.linalg.expm(_skew(x, n, k))[..., :k]


@op("LinalgSolveExBackward0")
def _orth_cayley(x, *, n, k):
    a = _skew(x, n, k)
    i = jnp.eye(n, dtype=a.dtype)
    return jnp.linalg.solve(i - 0.5 * a, i + 0.5 * a)[..., :k]


@op("LinalgHouseholderProductBackward0")
def _orth_householder(x, *, n, k):
    """householder_product(tril(x, -1), 2 / (1 + |columns|^2)): the first k columns of H_1 ... H_k."""
    a = jnp.tril(x, -1)
    tau = 2.0 / (1.0 + (a * a).sum(-2))
    q = jnp.broadcast_to(jnp.eye(n, dtype=x.dtype), x.shape[:-2] + (n, n))
    for i in range(k):
        v = a[..., :, i].at[..., i].set(1)
        q = q - tau[..., i, None, None] * (q @ v[..., :, None]) * v[..., None, :]
    return q[..., :k]


def _make_orthogonal(a):
    """Q of the QR decomposition of ``a`` with R's diagonal made non-negative (torch's geqrf + householder)."""
    q, r = jnp.linalg.qr(a._data)
    return tensor(q * jnp.sign(jnp.diagonal(r, axis1=-2, axis2=-1))[..., None, :])


def _householder_inverse(q):
    """torch's right_inverse without trivialization: LAPACK's geqrf of each matrix of ``q`` with the diagonal
    replaced by its signs (flipped where tau is 0), computed on the host."""
    out = []
    for m in np.asarray(q.detach().numpy()).reshape((-1,) + tuple(q.shape[-2:])):
        h, tau = np.linalg.qr(m, mode="raw")
        a = h.T.copy()
        i = np.arange(len(tau))
        a[i, i] = np.sign(a[i, i]) * np.where(tau == 0, -1, 1)
        out.append(a)
    return tensor(np.stack(out).reshape(tuple(q.shape)), dtype=q.dtype)


class _OrthMaps(enum.Enum):
    matrix_exp = enum.auto()
    cayley = enum.auto()
    householder = enum.auto()


_ORTH_OPS = {_OrthMaps.matrix_exp: _orth_exp, _OrthMaps.cayley: _orth_cayley,
             _OrthMaps.householder: _orth_householder}


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        Q = _ORTH_OPS[self.orthogonal_map](X, n=n, k=k)
        if self.orthogonal_map == _OrthMaps.householder:
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        with _grad_mode.no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of "
                                 f"shape {Q.shape}.")
            Q_init = Q
            n, k = Q.size(-2), Q.size(-1)
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                              "parametrizations when use_trivialization=False.")
                A = _householder_inverse(Q)
                return A.mT if transpose else A
            if n == k:
                eps = 10.0 * n * np.finfo(np.dtype(str(Q.dtype).rpartition(".")[2])).eps
                ident = eye(k, dtype=Q.dtype)
                Q = Q.clone() if bool(((Q.mH @ Q - ident).abs() <= eps).all()) else _make_orthogonal(Q)
            else:
                N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, N], -1))
            self.base = Q
            neg_id = zeros_like(Q_init)
            neg_id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """``module.<name>`` constrained to orthogonal (unitary) matrices through ``orthogonal_map``: "matrix_exp",
    "cayley" or "householder" (default: matrix_exp for square or complex matrices, else householder)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". Got: '
                         f"{orthogonal_map}")
    parametrize.register_parametrization(module, name, _Orthogonal(weight, orth_enum,
                                                                   use_trivialization=use_trivialization),
                                         unsafe=True)
    return module


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
