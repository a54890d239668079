"""torchlike.linalg: torch.linalg's functions, with torch's names, signatures, results (torch.return_types named
tuples), node names and errors. The ops are in ``ops/linalg_module.py``; each function here runs inside the guard
that gives a wrong-typed argument torch's TypeError (its parser name is ``linalg_<name>``, as torch's)."""
import numpy as _np

from .ops import ldl as _ldl, linalg_module as _m
from .ops._bind import _guard
from .ops.reduction import _linalg_vector_norm
from .ops.other import _cross
from .ops.linalg import matmul as _matmul
from . import _grad_mode
from ._internal import apply as _apply
from ._tensor import Tensor as _Tensor

LinAlgError = _m.LinAlgError

__all__ = ["LinAlgError", "norm", "vector_norm", "matrix_norm", "det", "slogdet", "inv", "inv_ex", "pinv", "solve",
           "solve_ex", "lstsq", "cholesky", "cholesky_ex", "qr", "eig", "eigvals", "eigh", "eigvalsh", "svd",
           "svdvals", "matrix_rank", "matrix_power", "matrix_exp", "cross", "multi_dot", "householder_product", "lu",
           "lu_factor", "lu_factor_ex", "lu_solve", "solve_triangular", "tensorinv", "tensorsolve", "vander",
           "vecdot", "matmul", "diagonal", "cond", "ldl_factor", "ldl_factor_ex", "ldl_solve"]
_out = _m._out
_RT = _m._RT


def norm(input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None):  # noqa: A002
    """A vector norm (of the flattened input without ``dim``) or, for 2 dims, a matrix norm."""
    return _out(_m._norm(input, ord, dim, keepdim, dtype), out)


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """The ``ord``-norm over ``dim`` (all dims by default) (LinalgVectorNormBackward0)."""
    return _out(_linalg_vector_norm(input, ord, dim, keepdim, dtype=dtype), out)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """'fro', 'nuc', 1, -1, 2, -2, inf or -inf norm of the matrices over ``dim``."""
    return _out(_m._matrix_norm(input, ord, dim, keepdim, dtype), out)


def det(A, *, out=None):
    """Determinant (LinalgDetBackward0)."""
    return _out(_m._det_impl(A), out)


def slogdet(A, *, out=None):
    """(sign, log|det|) (LinalgSlogdetBackward0)."""
    return _out(_m._slogdet_impl(A), out)


def inv(A, *, out=None):
    """The inverse (LinalgInvExBackward0); LinAlgError for a singular matrix."""
    return _out(_m._inv_ex_impl(A, True).inverse, out)


def inv_ex(A, *, check_errors=False, out=None):
    """(inverse, info): info is LAPACK's (nonzero for a singular matrix), checked only with ``check_errors``."""
    return _out(_m._inv_ex_impl(A, check_errors, "linalg.inv_ex"), out)


def pinv(input, rcond=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The Moore-Penrose pseudo-inverse (LinalgPinvBackward0)."""
    return _out(_m._pinv_impl(input, atol, rtol, hermitian, rcond), out)


def solve(A, B, *, left=True, out=None):
    """X with A X = B (``left``) or X A = B (LinalgSolveExBackward0); LinAlgError for a singular A."""
    return _out(_m._solve_ex_impl(A, B, left, True).result, out)


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info) of solve, info checked only with ``check_errors``."""
    return _out(_m._solve_ex_impl(A, B, left, check_errors), out)


def lstsq(input, b, rcond=None, *, driver=None, out=None):
    """Least-squares solution of input X = b (torch's CPU default driver 'gelsy': empty residuals and singular
    values, the rank) (LinalgLstsqBackward0)."""
    if input.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if input._data.dtype != b._data.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's "
                           f"dtype {_m._word(input)} and other's dtype {_m._word(b)}")
    vector = b.ndim == input.ndim - 1
    if b.shape[-1 if vector else -2] != input.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-{1 if vector else 2})")
    solution, residuals = _apply(_m._lstsq, (input, b), (vector,))
    rank = matrix_rank(input, rtol=rcond)
    return _out(_RT["linalg_lstsq"](solution, residuals, rank, residuals.new_zeros((0,)).detach()), out)


def cholesky(A, *, upper=False, out=None):
    """The Cholesky factor (LinalgCholeskyExBackward0); LinAlgError if A is not positive-definite."""
    return _out(_m._cholesky_ex_impl(A, upper, True).L, out)


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    """(L, info) of cholesky, info checked only with ``check_errors``."""
    return _out(_m._cholesky_ex_impl(A, upper, check_errors), out)


def qr(A, mode="reduced", *, out=None):
    """(Q, R) with mode 'reduced', 'complete' or 'r' (an empty Q) (LinalgQrBackward0)."""
    _m._check(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           f"'complete'")
    return _out(_RT["linalg_qr"](*_apply(_m._qr, (A,), (mode,))), out)


def _check_eig(A, name):
    _m._check(A, name, floating=False)
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_m._word(A)}")
    _m._check(A, name)


def eig(A, *, out=None):
    """Eigenvalues and eigenvectors (complex) of general square matrices (LinalgEigBackward0)."""
    _check_eig(A, "linalg.eig")
    return _out(_RT["linalg_eig"](*_apply(_m._eig, (A,), ())), out)


def eigvals(A, *, out=None):
    """Eigenvalues (complex) of general square matrices (LinalgEigBackward0)."""
    _check_eig(A, "linalg.eigvals")
    return _out(_apply(_m._eig, (A,), ())[0], out)


def _check_eigh(A, UPLO):
    _m._check(A, "linalg.eigh", floating=False)
    if A._data.dtype.kind not in "fc":
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for '{_m._word(A)}'")
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _m._check(A, "linalg.eigh")


def eigh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) and eigenvectors of Hermitian matrices, from the ``UPLO`` triangle
    (LinalgEighBackward0)."""
    _check_eigh(A, UPLO)
    return _out(_RT["linalg_eigh"](*_apply(_m._eigh, (A,), (UPLO,))), out)


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues (ascending) of Hermitian matrices (LinalgEighBackward0)."""
    _check_eigh(A, UPLO)
    return _out(_apply(_m._eigh, (A,), (UPLO,))[0], out)


def svd(A, full_matrices=True, *, driver=None, out=None):
    """(U, S, Vh) (LinalgSvdBackward0)."""
    return _out(_m._svd_impl(A, full_matrices), out)


def svdvals(A, *, driver=None, out=None):
    """Singular values, descending (LinalgSvdBackward0)."""
    return _out(_m._svdvals(A), out)


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above max(atol, rtol * the largest) (int64, no gradient)."""
    if input.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if input._data.dtype.kind not in "fc":
        raise RuntimeError("This function doesn't handle types other than float and double")
    with _grad_mode.no_grad():
        s = eigvalsh(input).abs() if hermitian else svdvals(input)
        if tol is not None:
            atol, rtol = tol, 0.0
        if rtol is None:
            rtol = 0.0 if atol is not None and float(atol) > 0 else \
                float(_np.finfo(input._data.dtype).eps) * max(input.shape[-2:])
        atol = 0.0 if atol is None else atol
        smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
        cutoff = (smax * rtol).clamp_min(atol) if not isinstance(atol, _Tensor) else (smax * rtol).maximum(atol)
        return _out((s > cutoff).sum(-1), out)


def matrix_power(A, n, *, out=None):
    """A to the integer power n (n < 0: of its inverse), by torch's products (MmBackward0)."""
    return _out(_m._matrix_power(A, n), out)


def matrix_exp(A):
    """The matrix exponential (LinalgMatrixExpBackward0)."""
    return _m._matrix_exp_impl(A)


def cross(input, other, *, dim=-1, out=None):
    """The 3-vector cross product along ``dim`` (inputs broadcast) (LinalgCrossBackward0)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if input._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {_m._word(input)} but found {_m._word(other)}")
    d = _m._wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    _m._broadcast_batch(tuple(input.shape), tuple(other.shape))  # torch's error for shapes that do not broadcast
    return _out(_apply(_cross, (input, other), (int(dim),)), out)


def multi_dot(tensors, *, out=None):
    """The product of a chain of matrices (the first and last may be vectors), in the cheapest order."""
    return _out(_m._multi_dot(list(tensors)), out)


def householder_product(input, tau, *, out=None):
    """The first n columns of the product of the Householder reflectors (input, tau)
    (LinalgHouseholderProductBackward0)."""
    return _out(_m._householder_product_impl(input, tau), out)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): the packed LU factorization, LAPACK's 1-based pivots (LinalgLuFactorExBackward0)."""
    return _out(_m._lu_factor_ex_impl(A, pivot, check_errors), out)


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of lu_factor_ex; an error for an exactly singular U."""
    result = _m._lu_factor_ex_impl(A, pivot, True, "torch.linalg.lu_factor")
    return _out(_RT["linalg_lu_factor"](result.LU, result.pivots), out)


def lu(A, *, pivot=True, out=None):
    """(P, L, U) with A = P L U (LinalgLuBackward0)."""
    _m._check_lu(A, pivot, "linalg.lu")
    return _out(_RT["linalg_lu"](*_apply(_m._lu, (A,), ())), out)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B from lu_factor's (LU, pivots); ``adjoint``: A^H X = B; not ``left``: X A = B
    (LinalgLuSolveBackward0)."""
    return _out(_m._lu_solve_impl(LU, pivots, B, left, adjoint), out)


def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B) for a triangular A, reading only its triangle
    (LinalgSolveTriangularBackward0)."""
    _m._check(input, "linalg.solve_triangular", floating=False)
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f"\"triangular_solve_cpu\" not implemented for '{_m._word(input)}'")
    _m._check_equation(input, B, "linalg.solve_triangular", left)
    return _out(_apply(_m._solve_triangular, (input, B), (upper, left, unitriangular)), out)


def tensorinv(input, ind=2, *, out=None):
    """The inverse of a tensor seen as a matrix: its first ``ind`` dims against the rest."""
    return _out(_m._tensorinv(input, ind), out)


def tensorsolve(A, B, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B."""
    return _out(_m._tensorsolve(A, B, dims), out)


def vander(x, *, N=None):
    """The Vandermonde matrix of x: powers 0 .. N-1 (CatBackward0)."""
    return _m._vander(x, N)


def vecdot(x, y, *, dim=-1, out=None):
    """The dot product of vectors along ``dim``, the first conjugated (SumBackward1)."""
    return _out(_m._vecdot(x, y, dim), out)


def matmul(input, other, *, out=None):
    """torch.matmul."""
    return _out(_matmul(input, other), out)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices (a view): torch.diagonal over the last two dims."""
    return A.diagonal(offset, dim1, dim2)


def cond(input, p=None, *, out=None):
    """The condition number in the ``p`` matrix norm (None, 2, -2: ratios of singular values)."""
    if p in (None, 2, -2):
        s = svdvals(input)
        return _out(s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0], out)
    return _out(matrix_norm(input, p) * matrix_norm(inv(input), p), out)


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):  # noqa: A002 - torch's name
    """(LD, pivots, info): LAPACK's Bunch-Kaufman A = L D L^T (L D L^H for ``hermitian``) in compact form."""
    return _out(_ldl.ldl_factor_ex(input, hermitian, check_errors), out)


def ldl_factor(input, *, hermitian=False, out=None):  # noqa: A002 - torch's name
    """(LD, pivots) of ldl_factor_ex; torch's error for a singular D."""
    result = _ldl.ldl_factor_ex(input, hermitian, True, "torch.linalg.ldl_factor")
    return _out(_ldl._LDL_FACTOR(result.LD, result.pivots), out)


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B from ldl_factor's (LD, pivots)."""
    return _out(_ldl.ldl_solve(LD, pivots, B, hermitian), out)


for _name in __all__[1:]:
    globals()[_name] = _guard(globals()[_name], "linalg_" + _name, False)
del _name
