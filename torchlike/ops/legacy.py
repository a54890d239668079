"""torch's deprecated functions that old code still calls: ``torch.range`` (inclusive of its end), ``torch.svd``
(V, not Vh), ``torch.qr`` (``some``), ``torch.cholesky`` (its own CholeskyBackward0), ``torch.lu`` (linalg.lu_factor_ex,
torch.functional's Python function), ``torch.lu_solve`` (linalg.lu_solve), ``torch.triangular_solve`` (its own
TriangularSolveBackward0), ``torch.nuclear_norm`` and ``torch.frobenius_norm`` (at::norm's NormBackward1), each with
torch's once-a-process warning where torch warns; and the ones torch 2.x removed (matrix_rank, solve, lstsq, eig,
symeig), which raise torch's error. (A module of their own: ``range`` must not shadow Python's in a module that uses
it.)"""
import math
import warnings

import jax.numpy as jnp
import numpy as np

from .._warnings import warn_once
from .. import _dtype
from ._bind import public
from ._out import _resize_shared
from ._views import _commit
from ._registry import _apply, op
from ._return_types import structseq
from .creation import _check_requires_grad, _finish, _number, zeros
from .linalg_module import _RT, _check, _check_lapack_dtype, _check_linear_solve, _cholesky_ex, _lu_factor_ex_impl, \
    _lu_solve_impl, _matrix_norm, _out, _qr, _raise_info, _svd, _triangular_solve
from .linalg import _word
from .reduction import _dim_list, _keepdim, _norm

_LEGACY = {  # torch's once-a-process warnings
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
          "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
          "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
    "range": "torch.range is deprecated and will be removed in a future release because its behavior is inconsistent "
             "with Python's range builtin. Instead, use torch.arange, which produces values in [start, end).",
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
                "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
                "transform will produce equivalent results for all valid (symmetric positive definite) inputs.",
    "lu": "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed "
          "in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
          "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, "
          "get_infos=True)\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)",
    "lu_solve": "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
                "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, "
                "pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
    "triangular_solve": "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
                        "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
                        "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
                        "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).",
    **{name: f"at::{name} is deprecated and it is just left for JIT compatibility. It will be removed in a future "
             f"PyTorch release. Please use `{instead}` instead" for name, instead in (
                 ("nuclear_norm", "linalg.matrix_norm(A, 'nuc', dim, keepdim)"),
                 ("frobenius_norm", "linalg.vector_norm(A, 2., dim, keepdim)"))},
}


def _legacy_warning(name, stacklevel=4):
    warn_once(("legacy", name), _LEGACY[name], stacklevel=stacklevel)


@public
def svd(input, some=True, compute_uv=True, *, out=None):
    """torch.svd: (U, S, V) with V the conjugate transpose of linalg.svd's Vh (LinalgSvdBackward0), reduced unless
    ``some=False``; ``compute_uv=False``: U and V zero (m x m, n x n), S alone differentiable."""
    if input.ndim < 2:  # (torch's svd has a message of its own)
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has {input.ndim} dimensions "
                           f"instead")
    _check(input, "linalg.svd", square=False)
    if not compute_uv:
        S = _apply(_svd, (input,), (False,))[1]
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _out(structseq("svd", ("U", "S", "V"))(zeros(*batch, m, m, dtype=input.dtype), S,
                                                      zeros(*batch, n, n, dtype=input.dtype)), out)
    U, S, Vh = _apply(_svd, (input,), (not some,))
    return _out(structseq("svd", ("U", "S", "V"))(U, S, Vh.mH), out)


@public
def qr(input, some=True, *, out=None):
    """torch.qr: linalg.qr in mode 'reduced' (or 'complete' with ``some=False``), after torch's warning."""
    _legacy_warning("qr")
    _check(input, "linalg.qr", square=False)
    return _out(structseq("qr", ("Q", "R"))(*_apply(_qr, (input,), ("reduced" if some else "complete",))), out)


@op("CholeskyBackward0", save=("result",), attrs=("upper",))
def _cholesky(self, *, upper):
    return _cholesky_ex.forward(self, upper=upper)[0]


_cholesky.derivative(lambda grad, result, upper: _cholesky_ex.backward((grad, None), result, upper))


@public
def cholesky(input, upper=False, *, out=None):
    """torch.cholesky: the lower (or ``upper``) Cholesky factor (CholeskyBackward0), after torch's warning."""
    _legacy_warning("cholesky")
    _check(input, "cholesky")
    result = _apply(_cholesky, (input,), (bool(upper),))
    if jnp.isnan(result._data).any():  # (as torch's, a host read; only then is info computed)
        _raise_info(_apply(_cholesky_ex, (input.detach(),), (bool(upper),))[1],
                    "cholesky: {where}The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order {k} is not positive-definite).")
    return _out(result, out)


def _lu_with_info(A, pivot=True, check_errors=True):
    """torch._lu_with_info: linalg.lu_factor_ex's (LU, pivots, info), never checked (torch passes its
    ``check_errors`` on as False), after torch's warning."""
    _legacy_warning("lu", 5)
    return _lu_factor_ex_impl(A, pivot, rtype="_lu_with_info")


@public(method=False)
def lu(A, pivot=True, get_infos=False, out=None):
    """torch.lu (torch.functional's): (LU, pivots), with ``get_infos`` torch.return_types._lu_with_info (LU, pivots,
    info); ``out`` written as torch's Python code writes it (LinalgLuFactorExBackward0)."""
    result = _lu_with_info(A, pivot=pivot, check_errors=(not get_infos))
    if out is not None:  # (torch's _check_list_size)
        if len(out) - (1 if get_infos else 0) != 2:
            raise TypeError(f"expected tuple of {2 + int(get_infos)} elements but got {len(out)}")
        if not isinstance(out, (tuple, list)):
            raise TypeError(f"argument 'out' must be tuple of Tensors, not {type(out).__name__}")
        for o, r in zip(out, result):  # (torch's resize_as_ and copy_)
            if o.shape != r.shape:
                if o._storage is not None:
                    _resize_shared(o, tuple(r.shape))
                _commit(o, jnp.zeros(tuple(r.shape), o._data.dtype))
            o.copy_(r)
        return out
    return result if get_infos else (result[0], result[1])


@public(name="lu", function=False)
def _lu_method(self, pivot=True, get_infos=False):
    """Tensor.lu: a plain tuple, (LU, pivots) or with ``get_infos`` (LU, pivots, info)."""
    result = _lu_with_info(self, pivot=pivot, check_errors=(not get_infos))
    return tuple(result) if get_infos else (result[0], result[1])


@public
def lu_solve(input, LU_data, LU_pivots, *, out=None):
    """X with A X = input from lu_factor's (LU_data, LU_pivots): linalg.lu_solve (LinalgLuSolveBackward0), after
    torch's warning."""
    _legacy_warning("lu_solve")
    return _out(_lu_solve_impl(LU_data, LU_pivots, input), out)


@public
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(solution, cloned_coefficient): X with A X = input (A^T X with ``transpose``) for the ``upper`` (or lower)
    triangle of A, and A broadcast to the batch (TriangularSolveBackward0), after torch's warning."""
    _legacy_warning("triangular_solve")
    for name, t in (("b", input), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 dimensions, but it has "
                               f"{t.ndim} dimensions instead")
    _check_linear_solve(input, A, "triangular_solve")
    _check_lapack_dtype("triangular_solve_cpu", input)
    return _out(_RT["triangular_solve"](*_apply(_triangular_solve, (input, A), (bool(upper), bool(transpose),
                                                                                bool(unitriangular)))), out)


@public(method=False)
def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """The sum of the singular values over ``dim`` (the last two by default): linalg.matrix_norm(input, 'nuc', ...),
    after torch's warning. (torch's overloads: ``nuclear_norm(input, keepdim=False)`` and ``(input, dim, keepdim)``.)"""
    if isinstance(dim, bool):  # (the overload without dim)
        dim, keepdim = None, dim
    _legacy_warning("nuclear_norm")
    return _out(_matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, _keepdim(keepdim)), out)


@public(method=False)
def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """The 2-norm over ``dim`` (every dim if empty): at::norm (NormBackward1), after torch's warning."""
    _legacy_warning("frobenius_norm")
    if isinstance(dim, (tuple, list)) and len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions instead.")
    if input._data.dtype.kind not in "fcV":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got {_word(input)} "
                           f"instead.")
    dims = _dim_list(dim, input.ndim, "frobenius_norm")
    return _out(_apply(_norm, (input,), (2.0, dims, _keepdim(keepdim), input._data.dtype)), out)


# ----- removed in torch 2.x: stubs that raise torch's error ----------------------------------------------------
_REMOVED = "This function was deprecated since version 1.9 and is now removed."
_REMOVED_TEXT = {  # torch._linalg_utils' messages, after _REMOVED
    "matrix_rank": "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
                   "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.",
    "solve": " `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` "
             "has its arguments reversed and does not return the LU factorization.\n\nTo get the "
             "LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
             "`torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = "
             "torch.linalg.solve(A, B)",
    "lstsq": " `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` "
             "has reversed arguments and does not return the QR decomposition in the returned tuple "
             "(although it returns other information about the problem).\n\nTo get the QR "
             "decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in "
             "`torch.lstsq` stored the residuals of the solution in the last m - n columns of the "
             "returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field "
             "'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, "
             "_ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = "
             "torch.linalg.lstsq(A, B).solution",
    "eig": " `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather "
           "than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be "
           "replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, "
           "eigenvectors=True) should be replaced with:\nL_complex, V_complex = "
           "torch.linalg.eig(A)",
    "symeig": " The default behavior has changed from using the upper triangular portion of the "
              "matrix by default to using the lower triangular portion.\n\nL, _ = "
              "torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
              "UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
              "should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
}


@public(method=False)
def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from torch (linalg.matrix_rank): raises torch's error."""
    raise RuntimeError(_REMOVED + _REMOVED_TEXT["matrix_rank"])


@public(method=False)
def solve(input, A, *, out=None):
    """Removed from torch (linalg.solve): raises torch's error."""
    raise RuntimeError(_REMOVED + _REMOVED_TEXT["solve"])


@public(method=False)
def lstsq(input, A, *, out=None):
    """Removed from torch (linalg.lstsq): raises torch's error."""
    raise RuntimeError(_REMOVED + _REMOVED_TEXT["lstsq"])


@public(method=False)
def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from torch (linalg.eig): raises torch's error."""
    raise RuntimeError(_REMOVED + _REMOVED_TEXT["eig"])


@public(method=False)
def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from torch (linalg.eigh): raises torch's error."""
    raise RuntimeError(_REMOVED + _REMOVED_TEXT["symeig"])


# torch's Tensor methods of the removed functions (Python methods calling them)
@public(name="solve", function=False)
def _solve_method(self, other):
    return solve(self, other)


@public(name="lstsq", function=False)
def _lstsq_method(self, other):
    return lstsq(self, other)


@public(name="eig", function=False)
def _eig_method(self, eigenvectors=False):
    return eig(self, eigenvectors=eigenvectors)


@public(name="symeig", function=False)
def _symeig_method(self, eigenvectors=False):
    return symeig(self, eigenvectors=eigenvectors)


@public(method=False)
def range(start, end, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.range (deprecated in torch for arange): start to end *inclusive* by step, in the default dtype."""
    _legacy_warning("range")
    d = _dtype.to_dtype(dtype) or _dtype.get_default_dtype()
    _check_requires_grad(d._np, requires_grad)
    a0, a1, st = (float(_number(v)) for v in (start, end, step))
    if st == 0:
        raise RuntimeError("step must be nonzero")
    if (st > 0 and a1 < a0) or (st < 0 and a1 > a0):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    values = (a0 + st * np.arange(int(math.floor((a1 - a0) / st)) + 1)).astype(d._np)
    return _finish(values, device, requires_grad, out)


def _get_volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning, stacklevel=2)
    return False


def _set_volatile(self, value):
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", UserWarning,
                  stacklevel=2)


# Variable.volatile (removed in torch 0.4; old code still reads and sets it): always False, with torch's warnings
public(_get_volatile, name="volatile", function=False, method=property(_get_volatile, _set_volatile))
