"""torch's randomized low-rank factorizations (torch._lowrank, pure Python in torch): ``svd_lowrank`` and
``pca_lowrank`` (Halko, Martinsson and Tropp's algorithm 4.4 and 5.1), written as torch writes them over torchlike's
ops, so their graphs (linalg.qr, linalg.svd, matmul) and their errors are torch's.

Known difference: the random projection comes from torchlike's generator (``torchlike.manual_seed``), not torch's,
so for a matrix whose rank exceeds ``q`` the approximation differs from torch's by its random draw; for rank <= q
both are exact (U, S, V equal up to the signs of singular vectors).
"""
from .. import _dtype
from .._tensor import Tensor
from ._bind import public
from ._registry import _apply
from . import creation, linalg
from .linalg_module import _qr, _svd_impl


def _floating_dtype(A):
    """torch._linalg_utils.get_floating_dtype: A's dtype if a float type, else float32."""
    return A.dtype if A.dtype in (_dtype.float16, _dtype.float32, _dtype.float64) else _dtype.float32


def _matmul(A, B):
    """torch._linalg_utils.matmul: B when A is None; A must be a Tensor (torch's is_sparse check)."""
    if A is None:
        return B
    if not isinstance(A, Tensor):
        raise TypeError(f"expected Tensor but got {type(A)}")
    return linalg.matmul(A, B)  # (the bound function: torch's argument errors)


def _basis_of(X):
    """torch.linalg.qr(X).Q (LinalgQrBackward0)."""
    return _apply(_qr, (X,), ("reduced",))[0]


def _approximate_basis(A, q, niter=2, M=None):
    """An orthonormal basis Q (m x q) of A's range (of A - M's), by ``niter`` subspace iterations from a random
    projection: A ~ Q Q^H A."""
    niter = 2 if niter is None else niter
    dtype = _floating_dtype(A) if not A.is_complex() else A.dtype
    R = creation.randn(A.shape[-1], q, dtype=dtype, device=A.device)
    X = _matmul(A, R)
    if M is not None:
        X = X - _matmul(M, R)
    Q = _basis_of(X)
    for _ in range(niter):
        X = _matmul(A.mH, Q)
        if M is not None:
            X = X - _matmul(M.mH, Q)
        Q = _basis_of(X)
        X = _matmul(A, Q)
        if M is not None:
            X = X - _matmul(M, Q)
        Q = _basis_of(X)
    return Q


@public(method=False)
def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V), rank ``q``, of A (of A - M, M broadcast to A's shape) with A ~ U diag(S) V^H: torch's randomized
    SVD."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:  # (the basis of the smaller side)
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter=niter, M=M)
    B = _matmul(Q.mH, A)
    if M is not None:
        B = B - _matmul(Q.mH, M)
    U, S, Vh = _svd_impl(B, False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


@public(method=False)
def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the principal components of A's rows: svd_lowrank of A less its column means (``center``),
    q = min(6, m, n) by default."""
    (m, n) = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    C = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - C, q, niter=niter, M=None)
