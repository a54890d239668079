"""torch.linalg.ldl_factor / ldl_factor_ex / ldl_solve: LAPACK's Bunch-Kaufman factorization A = L D L^T
(sytrf; hetrf for a Hermitian complex A) and its solve (sytrs / hetrs), run by SciPy's LAPACK on the host
(``jax.pure_callback``), so LD (the lower triangle) and the 1-based pivots are LAPACK's, as torch's. torch has no
derivative for either: their nodes are torch::autograd::NotImplemented, whose backward raises."""
import functools

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg.lapack as _lapack

from ._registry import _apply as apply, op
from ._return_types import structseq
from .linalg_module import _word

_LDL_FACTOR_EX = structseq("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_LDL_FACTOR = structseq("linalg_ldl_factor", ["LD", "pivots"])


def _routine(kind, dtype, hermitian):
    return _lapack.get_lapack_funcs(("he" if hermitian and np.dtype(dtype).kind == "c" else "sy") + kind,
                                    dtype=np.dtype(dtype))


def _factor_host(a, hermitian):
    a = np.asarray(a)
    n = a.shape[-1]
    flat = a.reshape((int(np.prod(a.shape[:-2])), n, n))
    ld, piv, info = np.zeros_like(flat), np.zeros(flat.shape[:2], np.int32), np.zeros(len(flat), np.int32)
    trf = _routine("trf", a.dtype, hermitian)
    for i, m in enumerate(flat):
        if n:
            lu, p, info[i] = trf(m, lower=1)
            ld[i], piv[i] = np.tril(lu), p
    return ld.reshape(a.shape), piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2])


def _solve_host(ld, piv, b, hermitian):
    ld, piv, b = np.asarray(ld), np.asarray(piv), np.asarray(b)
    batch = np.broadcast_shapes(ld.shape[:-2], piv.shape[:-1], b.shape[:-2])
    n, k = b.shape[-2:]
    size = int(np.prod(batch))
    ld = np.broadcast_to(ld, batch + (n, n)).reshape(size, n, n)
    piv = np.broadcast_to(piv, batch + (n,)).reshape(size, n)
    b = np.broadcast_to(b, batch + (n, k)).reshape(size, n, k)
    trs = _routine("trs", ld.dtype, hermitian)
    out = np.zeros_like(b)
    for i in range(len(b)):
        if n and k:
            out[i] = trs(ld[i], piv[i], b[i], lower=1)[0]
    return out.reshape(batch + (n, k))


def _raises(aten_name):
    """torch's NotImplemented node: its backward raises."""
    def derivative(grads):
        raise RuntimeError(f"derivative for aten::{aten_name} is not implemented")
    return derivative


@op("torch::autograd::NotImplemented", save=(), outputs=("LD", "pivots", "info"), runs_first=True)
def _ldl_factor(self, *, hermitian):
    shapes = (jax.ShapeDtypeStruct(self.shape, self.dtype), jax.ShapeDtypeStruct(self.shape[:-1], jnp.int32),
              jax.ShapeDtypeStruct(self.shape[:-2], jnp.int32))
    return jax.pure_callback(functools.partial(_factor_host, hermitian=hermitian), shapes, self,
                             vmap_method="sequential")


_ldl_factor.derivative(_raises("linalg_ldl_factor_ex"))


@op("torch::autograd::NotImplemented", save=(), nondiff=("pivots",), runs_first=True)
def _ldl_solve(LD, pivots, B, *, hermitian):
    batch = jnp.broadcast_shapes(LD.shape[:-2], pivots.shape[:-1], B.shape[:-2])
    return jax.pure_callback(functools.partial(_solve_host, hermitian=hermitian),
                             jax.ShapeDtypeStruct(batch + B.shape[-2:], B.dtype), LD, pivots, B,
                             vmap_method="sequential")


_ldl_solve.derivative(_raises("linalg_ldl_solve"))

_ASSERT = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/BatchLinearAlgebra.cpp":1642, '
           'please report a bug to PyTorch. {}: Unknown error code: {}.')


def ldl_factor_ex(A, hermitian, check_errors, name="torch.linalg.ldl_factor_ex"):
    """(LD, pivots, info) with torch's checks; ``check_errors``: torch's error for a singular D (its internal
    assert: torch's error checks do not know sytrf's codes)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_factor_ex: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    kind = A._data.dtype
    if kind.kind not in "fc":
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: Expected a floating point or complex tensor as input. Got "
                           f"{_word(A)}")
    if kind.itemsize < 4 or kind == jnp.bfloat16:
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for '{_word(A)}'")
    result = _LDL_FACTOR_EX(*apply(_ldl_factor, (A,), (bool(hermitian),)))
    if check_errors:
        codes = np.asarray(result.info._data).reshape(-1)
        if codes.any():
            raise RuntimeError(_ASSERT.format(name, int(codes[np.argmax(codes != 0)])))
    return result


def ldl_solve(LD, pivots, B, hermitian):
    """X with A X = B from ldl_factor's (LD, pivots), with torch's checks."""
    if LD.ndim < 2:
        raise RuntimeError("torch.linalg.ldl_solve: The input tensor LD must have at least 2 dimensions.")
    if LD.shape[-1] != LD.shape[-2]:
        raise RuntimeError(f"torch.linalg.ldl_solve: A must be batches of square matrices, but they are "
                           f"{LD.shape[-2]} by {LD.shape[-1]} matrices")
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-{max(B.ndim, 1)}, "
                         f"{max(B.ndim, 1) - 1}], but got -2)")
    if tuple(LD.shape[:-1]) != tuple(pivots.shape):
        raise RuntimeError(f"torch.linalg.ldl_solve: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for torch.linalg.ldl_solve: each A matrix is {LD.shape[-1]} "
                           f"by {LD.shape[-1]} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if B._data.dtype != LD._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_word(B)} and A of type "
                           f"{_word(LD)} instead.")
    return apply(_ldl_solve, (LD, pivots.to(jnp.int32) if pivots._data.dtype != np.int32 else pivots, B),
                 (bool(hermitian),))
