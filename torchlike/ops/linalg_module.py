"""torch.linalg (exposed as ``torchlike.linalg``) and torch's matrix functions at the top level: det, inverse,
logdet, slogdet, cdist, chain_matmul, addbmm, addmv, addr, cholesky_solve, cholesky_inverse, lu_unpack, geqrf, orgqr,
ormqr (and the entries of legacy.py's lu, lu_solve, triangular_solve).

Each factorization is one table entry with torch's node name (LinalgInvExBackward0, LinalgSvdBackward0, ...) and
torch's hidden outputs (``info``, pivots); torch's composites (matrix norms, matrix_power, multi_dot, tensorinv,
vander, vecdot, logdet) are built from torchlike's own ops, so their graphs are torch's. A failed factorization
(a singular or non positive-definite matrix) raises torch's LinAlgError after one device->host read of ``info``,
only where torch checks too; the ``*_ex`` variants return ``info`` and never read it.

Known differences: singular vectors and eigenvectors come from JAX's LAPACK, whose sign (phase) choice for some
vectors differs from torch's MKL (both are valid; gradients of functions that do not depend on the choice agree);
torch's backward checks that a complex svd/eig loss is phase-invariant, this one does not; the values a failed
factorization leaves (L of cholesky_ex, the inverse of a singular matrix) are NaN here, LAPACK's partial results
in torch; cholesky_inverse of a complex "factor" whose diagonal is not real (not a Cholesky factor) is the inverse
of L L^H here, while torch's LAPACK potri reads only the diagonal's real part.
"""
import math
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.lax import linalg as _lax_linalg  # (geqrf: LAPACK's, which jax.lax.linalg does not export)

from .. import _dtype, _grad_mode as _gm
from .._tensor import _type_string, _wrap, _wrap_dim
from ._return_types import structseq
from ._registry import op, _apply, _apply_inplace, _OpNode
from ._bind import public
from ._out import _write_out
from .creation import eye
from .other import cumprod
from .pointwise import where
from .reduction import _linalg_vector_norm
from .shape import cat
from .linalg import mm, _broadcast_batch, _check_expand, _word, _x, _not_for_bool, _conj_t, _scaled, \
    _add_scaled, _conj_scalar


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): a matrix the factorization could not handle."""


LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "torchlike._C"


_RT = {name: structseq(name, fields.split()) for name, fields in (
    ("linalg_slogdet", "sign logabsdet"), ("slogdet", "sign logabsdet"), ("linalg_inv_ex", "inverse info"),
    ("linalg_solve_ex", "result info"), ("linalg_cholesky_ex", "L info"), ("linalg_qr", "Q R"),
    ("linalg_eig", "eigenvalues eigenvectors"), ("linalg_eigh", "eigenvalues eigenvectors"),
    ("linalg_svd", "U S Vh"), ("linalg_lu", "P L U"), ("linalg_lu_factor", "LU pivots"),
    ("linalg_lu_factor_ex", "LU pivots info"), ("linalg_lstsq", "solution residuals rank singular_values"),
    ("lu_unpack", "P L U"), ("_lu_with_info", "LU pivots info"), ("triangular_solve", "solution cloned_coefficient"),
    ("geqrf", "a tau"))}


# ----- torch's checks ---------------------------------------------------------------------------------------------
def _check(A, name, square=True, floating=True):
    """torch's checks of a batch of matrices: rank, squareness, dtype (in torch's order)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {A.shape[-2]} by "
                           f"{A.shape[-1]} matrices")
    if floating:
        kind = A._data.dtype.kind
        if kind not in "fcV":
            raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {_word(A)}")
        if A._data.dtype.itemsize == 2:
            raise RuntimeError(f"{name}: Low precision dtypes not supported. Got {_word(A)}")


def _check_equation(A, B, name, left):
    """torch's check that A X = B (X A = B) is well formed."""
    if B.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if B.shape[-2 if left else -1] != A.shape[-1]:
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation {'AX = B' if left else 'XA = B'} "
                           f"({_x(A.shape[-2:])} and {_x(B.shape[-2:])})")


def _raise_info(info, message, error=LinAlgError):
    """torch's error for the first matrix of a batch whose ``info`` is nonzero (one device->host read)."""
    flat = np.asarray(info._data).reshape(-1)
    if flat.any():
        batch = int(np.argmax(flat != 0))
        where = f"(Batch element {batch}): " if info.ndim else ""
        raise error(message.format(where=where, k=int(flat[batch])))


def _bcast(A, B):
    """A and B with their batch dims broadcast (torch's linalg_solve / lu_solve broadcasting)."""
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    return jnp.broadcast_to(A, batch + A.shape[-2:]), jnp.broadcast_to(B, batch + B.shape[-2:])


def _lu_info(lu):
    """LAPACK getrf's info: the first zero on U's diagonal (1-based), 0 if none."""
    zero = jnp.diagonal(lu, axis1=-2, axis2=-1) == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _lu_solve(lu, perm, B, adjoint=False):
    """X with A X = B (A^H X = B), A = P L U packed in ``lu`` with row permutation ``perm``."""
    lu, B = _bcast(lu, B)
    perm = jnp.broadcast_to(perm, lu.shape[:-1])
    tri = jax.lax.linalg.triangular_solve
    if not adjoint:
        x = jnp.take_along_axis(B, perm[..., None], axis=-2)
        x = tri(lu, x, left_side=True, lower=True, unit_diagonal=True)
        return tri(lu, x, left_side=True, lower=False)
    x = tri(lu, B, left_side=True, lower=False, transpose_a=True, conjugate_a=True)
    x = tri(lu, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=True)
    return jnp.take_along_axis(x, jnp.argsort(perm, -1)[..., None], axis=-2)  # P X


def _recomputed(fn, *names):
    """torch's ``_saved_<x>`` for a value the table does not save: ``fn(*saved arrays, *node statics)``, recomputed
    when the attribute is read (inspection only)."""
    return lambda node, saved: _wrap(fn(*[saved[n]._data for n in names], *node._statics))


def _lu_saved(k, transposed=False):
    """torch's saved LU (k=0) or pivots (k=1) of A (of A^T for det and slogdet, which factor A's column-major
    memory)."""
    def fn(A, *statics):
        lu, piv, _ = jax.lax.linalg.lu(jnp.swapaxes(A, -1, -2) if transposed else A)
        return (lu, piv + 1)[k]
    return _recomputed(fn, "A")


# ----- det, slogdet, inv, solve -----------------------------------------------------------------------------------
@op("LinalgDetBackward0", save=("A",), saved={"LU": _lu_saved(0, True), "pivots": _lu_saved(1, True),
                                              "result": _recomputed(jnp.linalg.det, "A")})
def _det(A):
    return jnp.linalg.det(A)


@op("LinalgSlogdetBackward0", save=("A",), outputs=("sign", "logabsdet"), saved={
    "LU": _lu_saved(0, True), "pivots": _lu_saved(1, True), "sign": _recomputed(lambda A: jnp.linalg.slogdet(A)[0], "A")})
def _slogdet(A):
    return tuple(jnp.linalg.slogdet(A))


@op("LinalgInvExBackward0", save=("inverse",), outputs=("inverse", "info"))
def _inv_ex(A):
    lu, _, perm = jax.lax.linalg.lu(A)
    return _lu_solve(lu, perm, jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)), _lu_info(lu)


@_inv_ex.derivative
def _(grads, inverse):
    h = _conj_t(inverse)
    return (-(h @ grads[0] @ h),)


@op("LinalgSolveExBackward0", save=("A", "result"), outputs=("result", "info"), attrs=("left",),
    saved={"LU": _lu_saved(0), "pivots": _lu_saved(1)})
def _solve_ex(A, B, *, left, vector):
    if not left:
        A = jnp.swapaxes(A, -1, -2)
        B = B if vector else jnp.swapaxes(B, -1, -2)
    b = B[..., None] if vector else B
    lu, _, perm = jax.lax.linalg.lu(A)
    x = _lu_solve(lu, perm, b)
    x = x[..., 0] if vector else x
    info = jnp.broadcast_to(_lu_info(lu), x.shape[:-1] if vector else x.shape[:-2])
    return (x if left or vector else jnp.swapaxes(x, -1, -2)), info


@_solve_ex.derivative
def _(grads, A, result, left, vector):
    g, x = grads[0], result
    if vector:
        g, x = g[..., None], x[..., None]
    if left:  # A X = B: gB = A^-H g, gA = -gB X^H
        gB = jnp.linalg.solve(*_bcast(_conj_t(A), g))
        gA = -gB @ _conj_t(x)
    else:  # X A = B: gB = g A^-H, gA = -X^H gB
        gB = _conj_t(jnp.linalg.solve(*_bcast(A, _conj_t(g))))
        gA = -_conj_t(x) @ gB
    return gA, (gB[..., 0] if vector else gB)


def _det_impl(A, name="linalg.det"):
    _check(A, name)
    return _apply(_det, (A,), ())


def _slogdet_impl(A, name="linalg.slogdet", rtype="linalg_slogdet"):
    _check(A, name)
    return _RT[rtype](*_apply(_slogdet, (A,), ()))


def _inv_ex_impl(A, check_errors=False, name="linalg.inv"):
    _check(A, "linalg.inv")
    inverse, info = _apply(_inv_ex, (A,), ())
    if check_errors:
        _raise_info(info, name + ": {where}The diagonal element {k} is zero, the inversion could not be "
                          "completed because the input matrix is singular.")
    return _RT["linalg_inv_ex"](inverse, info)


def _solve_ex_impl(A, B, left=True, check_errors=False):
    _check(A, "linalg.solve")
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type {_word(A)} "
                           f"and B of type {_word(B)} instead")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    n = A.shape[-1]
    if (vector and B.shape[-1] != n) or (not vector and B.shape[-2 if left else -1] != n):
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({_x(A.shape[-2:])} and {_x(B.shape[-2:])})")
    result, info = _apply(_solve_ex, (A, B), (left, vector))
    if check_errors:
        _raise_info(info, "torch.linalg.solve: {where}The solver failed because the input matrix is singular.")
    return _RT["linalg_solve_ex"](result, info)


# ----- cholesky, qr, eigh, eig, svd -------------------------------------------------------------------------------
def _cholesky_info(A):
    """potrf's info (the order of the first leading minor that is not positive-definite) by Gaussian elimination
    of A's real part: runs only when the factorization failed."""
    def find(S):
        def step(k, carry):
            S, info = carry
            p = S[..., k, k]
            info = jnp.where((info == 0) & ~(p > 0), k + 1, info)
            pivot = jnp.where(p > 0, p, 1)[..., None, None]
            return S - S[..., :, k, None] * S[..., None, k, :] / pivot, info
        return jax.lax.fori_loop(0, S.shape[-1], step, (S, jnp.zeros(S.shape[:-2], jnp.int32)))[1]
    return find


@op("LinalgCholeskyExBackward0", save=("L",), outputs=("L", "info"), attrs=("upper",))
def _cholesky_ex(A, *, upper):
    L = jax.lax.linalg.cholesky(A)
    failed = jnp.isnan(L).any()
    S = jnp.real(A)
    info = jax.lax.cond(failed, _cholesky_info(A), lambda S: jnp.zeros(S.shape[:-2], jnp.int32), S)
    return (_conj_t(L) if upper else L), info


@_cholesky_ex.derivative
def _(grads, L, upper):  # torch's cholesky_backward (Murray 2016)
    gL = grads[0]
    if upper:
        L, gL = _conj_t(L), _conj_t(gL)
    gA = jnp.tril(_conj_t(L) @ gL)
    gA = 0.5 * (gA + _conj_t(jnp.tril(gA, -1)))
    tri = jax.lax.linalg.triangular_solve
    gA = tri(L, gA, left_side=True, lower=True, transpose_a=True, conjugate_a=True)  # L^-H gA
    return (tri(L, gA, left_side=False, lower=True),)  # ... L^-1


def _cholesky_ex_impl(A, upper=False, check_errors=False):
    _check(A, "linalg.cholesky")
    L, info = _apply(_cholesky_ex, (A,), (upper,))
    if check_errors:
        _raise_info(info, "linalg.cholesky: {where}The factorization could not be completed because the input is "
                          "not positive-definite (the leading minor of order {k} is not positive-definite).")
    return _RT["linalg_cholesky_ex"](L, info)


@op("LinalgQrBackward0", save=("A",), outputs=("Q", "R"), attrs=("mode",), saved={
    "A": None, "Q": _recomputed(lambda A, mode: _qr.forward(A, mode=mode)[0], "A"),
    "R": _recomputed(lambda A, mode: _qr.forward(A, mode=mode)[1], "A")})
def _qr(A, *, mode):
    if mode == "r":
        return jnp.zeros((0,), A.dtype), jnp.linalg.qr(A, mode="r")
    return tuple(jnp.linalg.qr(A, mode=mode))


@_qr.derivative
def _(grads, A, mode):
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please "
                           "use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    _, vjp = jax.vjp(lambda a: tuple(jnp.linalg.qr(a, mode=mode)), A)
    return (jnp.conj(vjp(tuple(jnp.conj(g) for g in grads))[0]),)


@op("LinalgEighBackward0", save=("eigenvalues", "eigenvectors"), outputs=("eigenvalues", "eigenvectors"))
def _eigh(A, *, UPLO):
    w, v = jnp.linalg.eigh(A, UPLO=UPLO, symmetrize_input=False)
    return w, v


@_eigh.derivative
def _(grads, eigenvalues, eigenvectors):  # torch's linalg_eig_backward for Hermitian input
    gL, gV = grads
    L, V = eigenvalues, eigenvectors
    VhgV = _conj_t(V) @ gV
    eye = jnp.eye(L.shape[-1], dtype=bool)
    E = L[..., None, :] - L[..., :, None]
    gA = jnp.where(eye, gL[..., None, :], 0.5 * (VhgV - _conj_t(VhgV)) / jnp.where(eye, 1, E))
    return (V @ gA @ _conj_t(V),)


@op("LinalgEigBackward0", save=("eigenvalues", "eigenvectors"), outputs=("eigenvalues", "eigenvectors"))
def _eig(A):
    w, v = jnp.linalg.eig(A)
    return w, v


@_eig.derivative
def _(grads, eigenvalues, eigenvectors):  # torch's linalg_eig_backward
    gL, gV = grads
    L, V = eigenvalues, eigenvectors
    Vh = _conj_t(V)
    VhgV = Vh @ gV
    VhgV = VhgV - Vh @ (V * jnp.real(jnp.diagonal(VhgV, axis1=-2, axis2=-1))[..., None, :])
    Lc = jnp.conj(L)
    E = Lc[..., None, :] - Lc[..., :, None]
    n = L.shape[-1]
    eye = jnp.eye(n, dtype=bool)
    gA = jnp.where(eye, 0, VhgV / jnp.where(eye, 1, E)) + jnp.where(eye, gL[..., None, :], 0)
    return jnp.linalg.solve(Vh, gA @ Vh)  # V^-H gA V^H


@op("LinalgSvdBackward0", save=("A",), outputs=("U", "S", "Vh"), attrs=("full_matrices",), saved={
    "A": None, **{n: _recomputed(lambda A, full, k=k: _svd.forward(A, full_matrices=full)[k], "A")
                  for k, n in enumerate(("U", "S", "Vh"))}, "S_sym_argsize_minus_1": lambda node, saved: min(saved["A"].shape[-2:])})
def _svd(A, *, full_matrices):
    u, s, vh = jnp.linalg.svd(A, full_matrices=full_matrices)
    return u, s, vh


@_svd.derivative
def _(grads, A, full_matrices):
    gU, gS, gVh = grads
    k = min(A.shape[-2:])
    _, vjp = jax.vjp(lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), A)
    return (jnp.conj(vjp((jnp.conj(gU[..., :k]), gS, jnp.conj(gVh[..., :k, :])))[0]),)


def _svd_impl(A, full_matrices=True):
    _check(A, "linalg.svd", square=False)
    return _RT["linalg_svd"](*_apply(_svd, (A,), (full_matrices,)))


# ----- pinv, lstsq, matrix_exp, householder_product ---------------------------------------------------------------
@op("LinalgPinvBackward0", save=("self", "result"))
def _pinv(self, *, atol, rtol, hermitian):
    if hermitian:
        w, v = jnp.linalg.eigh(self)
        s = jnp.abs(w)
    else:
        u, s, vh = jnp.linalg.svd(self, full_matrices=False)
    cutoff = jnp.maximum(atol, rtol * jnp.max(s, -1, initial=0.0))[..., None]
    s_inv = jnp.where(s > cutoff, 1 / jnp.where(s > cutoff, s, 1), 0)
    if hermitian:
        return (v * (s_inv * jnp.sign(w)).astype(v.dtype)[..., None, :]) @ _conj_t(v)
    return _conj_t(vh) @ (s_inv.astype(u.dtype)[..., :, None] * _conj_t(u))


@_pinv.derivative
def _(grad, self, result, atol, rtol, hermitian):  # torch's pinv_backward
    A, P = self, result
    Ph, gh = _conj_t(P), _conj_t(grad)
    if A.shape[-2] <= A.shape[-1]:
        K = gh @ P
        KPh = K @ Ph
        gA = -_conj_t(P @ K) + KPh - (A @ P) @ KPh + (Ph @ P) @ (gh - K @ A)
    else:
        K = P @ gh
        PhK = Ph @ K
        gA = -_conj_t(K @ P) + PhK - PhK @ (P @ A) + (gh - A @ K) @ P @ Ph
    return gA


def _tol(value):
    return 0.0 if value is None else float(value)


def _pinv_impl(input, atol=None, rtol=None, hermitian=False, rcond=None):
    if input.ndim < 2 or input._data.dtype.kind not in "fc" or input._data.dtype.itemsize == 2:
        t = _type_string(input._data.dtype)[6:-6]
        raise RuntimeError(f"linalg.pinv({t}{{{list(input.shape)}}}): expected a tensor with 2 or more dimensions "
                           f"of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    if rtol is None:
        eps = float(np.finfo(input._data.dtype).eps)
        rtol = eps * max(input.shape[-2:]) if atol is None or _tol(atol) <= 0 else 0.0
    return _apply(_pinv, (input,), (_tol(atol), _tol(rtol), bool(hermitian)))


@op("LinalgLstsqBackward0", save=("self", "b"), outputs=("solution", "residuals"),
    saved={"solution": _recomputed(lambda A, b, vector: _lstsq.forward(A, b, vector=vector)[0], "self", "b")})
def _lstsq(self, b, *, vector):
    A, B = _bcast(self, b[..., None] if vector else b)
    x = jnp.linalg.pinv(A) @ B
    return (x[..., 0] if vector else x), jnp.zeros((0,), self.dtype)


@op("LinalgMatrixExpBackward0", save=("self",))
def _matrix_exp(self):
    return jnp.vectorize(jax.scipy.linalg.expm, signature="(n,n)->(n,n)")(self)


@op("LinalgHouseholderProductBackward0", save=("input", "tau"),
    saved={"result": _recomputed(lambda a, t: _householder_product.forward(a, t), "input", "tau")})
def _householder_product(input, tau):  # noqa: A002 - torch's name
    self = input
    m, n = self.shape[-2:]
    Q = jnp.broadcast_to(jnp.eye(m, n, dtype=self.dtype), self.shape)
    rows = jnp.arange(m)
    for i in reversed(range(tau.shape[-1])):
        v = jnp.where(rows == i, 1, jnp.where(rows > i, self[..., :, i], 0)).astype(self.dtype)
        Q = Q - tau[..., i, None, None] * v[..., :, None] * (jnp.conj(v)[..., None, :] @ Q)
    return Q


# ----- lu ---------------------------------------------------------------------------------------------------------
@op("LinalgLuFactorExBackward0", save=("A",), outputs=("LU", "pivots", "info"), saved={
    "A": None, "LU": _lu_saved(0), "pivots": _lu_saved(1), "pivot": lambda node, saved: True})
def _lu_factor_ex(A):
    lu, piv, _ = jax.lax.linalg.lu(A)
    return lu, piv + 1, _lu_info(lu)


def _unpack_lu(lu, perm, m, n):
    k = min(m, n)
    L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=lu.dtype)
    U = jnp.triu(lu[..., :k, :])
    P = jnp.swapaxes(jax.nn.one_hot(perm, m, dtype=lu.dtype), -1, -2)
    return P, L, U


@op("LinalgLuBackward0", save=("A",), outputs=("P", "L", "U"), saved={
    "A": None, **{n: _recomputed(lambda A, k=k: _lu.forward(A)[k], "A") for k, n in enumerate("PLU")},
    "pivot": lambda node, saved: True})
def _lu(A):
    lu, _, perm = jax.lax.linalg.lu(A)
    return _unpack_lu(lu, perm, *A.shape[-2:])


@op("LinalgLuSolveBackward0", save=("LU", "pivots", "B"), nondiff=("pivots",), attrs=("left", "adjoint"), saved={
    "B": None, "result": _recomputed(lambda LU, p, B, left, adjoint: _lu_solve_op.forward(
        LU, p, B, left=left, adjoint=adjoint), "LU", "pivots", "B")})
def _lu_solve_op(LU, pivots, B, *, left, adjoint):
    perm = jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, LU.shape[-1])
    if left:
        return _lu_solve(LU, perm, B, adjoint)
    return _conj_t(_lu_solve(LU, perm, _conj_t(B), not adjoint))  # X A = B: A^H X^H = B^H


@op("LuUnpackBackward0", save=(), nondiff=("LU_pivots",), outputs=("P", "L", "U"), saved={
    "LU_data_sym_argsize_minus_1": lambda node, saved: node._in_meta[0].shape[-1],
    "LU_data_sym_argsize_minus_2": lambda node, saved: node._in_meta[0].shape[-2]})
def _lu_unpack(LU_data, LU_pivots, *, unpack_data, unpack_pivots):
    m, n = LU_data.shape[-2:]
    batch = LU_data.shape[:-2]
    if unpack_pivots:
        pivots = jnp.broadcast_to(LU_pivots, batch + LU_pivots.shape[-1:])
        perm = jax.lax.linalg.lu_pivots_to_permutation(pivots - 1, m)
    else:
        perm = jnp.broadcast_to(jnp.arange(m), batch + (m,))
    P, L, U = _unpack_lu(LU_data, perm, m, n)
    empty = jnp.zeros((0,), LU_data.dtype)
    return (P if unpack_pivots else empty), *((L, U) if unpack_data else (empty, empty))


@_lu_unpack.derivative
def _(grads, LU_data_shape, unpack_data):  # torch's lu_unpack_backward: L's strict lower and U's upper triangle
    if not unpack_data:  # (torch's formula on the empty L)
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    _, gL, gU = grads
    m, n = LU_data_shape[-2:]
    k = min(m, n)
    g = jnp.zeros(gL.shape[:-2] + (m, n), gL.dtype)
    return g.at[..., :, :k].add(jnp.tril(gL, -1)).at[..., :k, :].add(jnp.triu(gU))


def _check_lu(A, pivot, name):
    """torch's checks of the LU factorizations (lu_factor's name in its rank message)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: {list(A.shape)} instead")
    if A._data.dtype.kind not in "fc":
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_word(A)}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _lu_factor_ex_impl(A, pivot=True, check_errors=False, name="torch.linalg.lu_factor_ex",
                       rtype="linalg_lu_factor_ex"):
    """(LU, pivots, info) of linalg.lu_factor_ex (torch.lu's too), torch's error for a zero on U's diagonal with
    ``check_errors``."""
    _check_lu(A, pivot, "torch.lu_factor")
    result = _RT[rtype](*_apply(_lu_factor_ex, (A,), ()))
    if check_errors:
        _raise_info(result.info, name + ": {where}U[{k},{k}] is zero and using it on lu_solve would result in a "
                                        "division by zero. If you still want to perform the factorization, consider "
                                        "calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)", RuntimeError)
    return result


def _lu_solve_impl(LU, pivots, B, left=True, adjoint=False):
    """linalg.lu_solve (torch.lu_solve's too), after torch's checks in torch's order."""
    if LU._data.dtype.kind not in "fcV":
        raise RuntimeError(f"torch.linalg.lu_solve: Expected a floating point or complex tensor as input. Got "
                           f"{_word(LU)}")
    if LU._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type "
                           f"{_word(LU)} and B of type {_word(B)} instead")
    if pivots._data.dtype != np.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    _check(LU, "torch.linalg.lu_solve", floating=False)
    _check_equation(LU, B, "linalg.lu_solve", left)
    if pivots.ndim == 0 or pivots.shape[-1] != LU.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the same, but got pivots "
                           f"with shape {list(pivots.shape)} instead")
    _broadcast_batch(tuple(B.shape[:-2]), tuple(LU.shape[:-2]))
    if LU._data.dtype.itemsize == 2:
        raise NotImplementedError(f"\"linalg.lu_solve_cpu\" not implemented for '{_word(LU)}'")
    if not isinstance(pivots._data, jax.core.Tracer) and pivots.numel():  # (a host read, as torch's)
        p = np.asarray(pivots._data)
        if (p < 1).any():
            raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did you properly pass the "
                               "result of lu_factor?")
        if (p > LU.shape[-2]).any():
            raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to LU.size(-2). Did you properly "
                               "pass the result of lu_factor?")
    return _apply(_lu_solve_op, (LU, pivots, B), (left, adjoint))


@op("LinalgSolveTriangularBackward0", save=("self", "B"), attrs=("left", "upper", "unitriangular"), saved={
    "B": None, "result": _recomputed(lambda A, B, upper, left, unit: _solve_triangular.forward(
        A, B, upper=upper, left=left, unitriangular=unit), "self", "B")})
def _solve_triangular(self, B, *, upper, left, unitriangular):
    dt = jnp.result_type(self, B)
    A, B = _bcast(self.astype(dt), B.astype(dt))
    mask = jnp.triu(jnp.ones(A.shape[-2:], bool)) if upper else jnp.tril(jnp.ones(A.shape[-2:], bool))
    A = jnp.where(mask, A, 0)  # only the triangle is read (and gets a gradient)
    if unitriangular:
        A = jnp.where(jnp.eye(A.shape[-1], dtype=bool), 1, A)
    return jax.lax.linalg.triangular_solve(A, B, left_side=left, lower=not upper)


def _householder_product_impl(input, tau):  # noqa: A002 - torch's name
    """linalg.householder_product (torch.orgqr's too), after torch's checks."""
    if input.ndim < 2:
        raise RuntimeError("torch.linalg.householder_product: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"torch.linalg.householder_product: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to {input.ndim}")
    if tau._data.dtype != input._data.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {_word(tau)} does not match input dtype "
                           f"{_word(input)}")
    if tau.shape[-1] > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    return _apply(_householder_product, (input, tau), ())


# ----- cholesky_solve, cholesky_inverse, triangular_solve, geqrf, ormqr ------------------------------------------
@op("CholeskySolveBackward0", save=("self", "input2", "result"), attrs=("upper",))
def _cholesky_solve(self, input2, *, upper):
    """X with A X = B, A = L L^H (U^H U with ``upper``) given its Cholesky factor ``input2`` (only its triangle
    read): two triangular solves."""
    L, B = _bcast(input2, self)
    tri = _solve_triangular.forward
    if upper:
        return tri(L, tri(_conj_t(L), B, upper=False, left=True, unitriangular=False), upper=True, left=True,
                   unitriangular=False)
    return tri(_conj_t(L), tri(L, B, upper=False, left=True, unitriangular=False), upper=True, left=True,
               unitriangular=False)


def _cholesky_solve_whole(B, L, upper):
    """cholesky_solve's value, differentiable as torch's formulas differentiate it: as (L L^H)^-1 B of the whole of
    L (their gradient for input2 is not confined to its triangle), to every order."""
    tri = jnp.triu(L) if upper else jnp.tril(L)
    L = L - jax.lax.stop_gradient(L - tri)  # (the triangle's values, the whole matrix's derivative)
    return jnp.linalg.solve(*_bcast(_conj_t(L) @ L if upper else L @ _conj_t(L), B))


@_cholesky_solve.derivative
def _(grad, input2, result, upper):  # torch's cholesky_solve_backward (a gradient for the whole of input2)
    gB = _cholesky_solve_whole(grad, input2, upper)
    common = gB @ _conj_t(result)
    common = common + _conj_t(common)
    return gB, (-(input2 @ common) if upper else -(common @ input2))


@op("CholeskyInverseBackward0", save=("self", "result"), attrs=("upper",))
def _cholesky_inverse(self, *, upper):
    return _cholesky_solve.forward(jnp.broadcast_to(jnp.eye(self.shape[-1], dtype=self.dtype), self.shape), self,
                                   upper=upper)


@_cholesky_inverse.derivative
def _(grad, self, result, upper):  # torch's cholesky_inverse_backward
    common = result @ (grad + _conj_t(grad)) @ result
    return -(self @ common) if upper else -(common @ self)


@op("TriangularSolveBackward0", save=("self", "A", "solution"), outputs=("solution", "cloned_coefficient"),
    attrs=("upper", "transpose", "unitriangular"))
def _triangular_solve(self, A, *, upper, transpose, unitriangular):
    """torch.triangular_solve: X with A X = b (A^T X = b with ``transpose``), and A broadcast (its clone)."""
    A, B = _bcast(A, self)
    X = _solve_triangular.forward(jnp.swapaxes(A, -1, -2) if transpose else A, B, upper=upper != transpose,
                                  left=True, unitriangular=unitriangular)
    return X, A


@op("GeqrfBackward0", save=(), outputs=("a", "tau"))
def _geqrf(self):
    return tuple(_lax_linalg.geqrf(self))


@_geqrf.derivative
def _(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@op("OrmqrBackward0", save=("self", "input2", "input3", "result"), attrs=("left", "transpose"))
def _ormqr(self, input2, input3, *, left, transpose):
    """Q (the product of geqrf's reflectors (self, input2), all mn columns) times input3: Q C, Q^H C, C Q or
    C Q^H."""
    k = input2.shape[-1]
    mn = self.shape[-2]
    pad = [(0, 0)] * (self.ndim - 1) + [(0, mn - k)]
    Q = _householder_product.forward(jnp.pad(self[..., :, :k], pad), input2)
    if transpose:
        Q = _conj_t(Q)
    return Q @ input3 if left else input3 @ Q


# ----- cdist, addbmm, addmv, addr ---------------------------------------------------------------------------------
def _cdist_apply(node, grads, mask=None):
    """Under create_graph, torch's gradients of cdist come from one CdistBackwardBackward0 node, which has no
    derivative."""
    mask = node._mask if mask is None else mask
    if not _gm._state.grad_enabled:
        return _OpNode._apply(node, grads, mask)
    g1, g2 = _apply(_cdist_backward, (grads[0], node._saved_x1, node._saved_x2, node._saved_result), node._statics)
    return [g1 if mask[0] else None, g2 if mask[1] else None]


@op("CdistBackward0", save=("x1", "x2", "result"), attrs=("p",), node_apply=_cdist_apply)
def _cdist(x1, x2, *, p):
    d = jnp.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if p == 0:
        return jnp.sum(d != 0, -1).astype(x1.dtype)
    if p == float("inf"):
        return jnp.max(d, -1, initial=0.0)
    if p == 1:
        return jnp.sum(d, -1)
    if p == 2:
        return jnp.sqrt(jnp.sum(d * d, -1))
    return jnp.sum(d ** p, -1) ** (1 / p)


@_cdist.derivative
def _(grad, x1, x2, result, p):  # torch's _cdist_backward: no gradient through zero distances
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    g, r = grad[..., None], result[..., None]
    if p == 0:
        return jnp.zeros_like(x1), jnp.zeros_like(x2)
    if p == 1:
        t = g * jnp.sign(diff)
    elif p == float("inf"):
        t = g * jnp.sign(diff) * (jnp.abs(diff) == r)
    elif p == 2:
        t = jnp.where(r == 0, 0, g * diff / jnp.where(r == 0, 1, r))
    else:
        a = jnp.abs(diff)
        t = jnp.where(r == 0, 0, g * diff * a ** (p - 2) / jnp.where(r == 0, 1, r) ** (p - 1))
        if p < 2:
            t = jnp.where(diff == 0, 0, t)
    return jnp.sum(t, -2), -jnp.sum(t, -3)


@op("CdistBackwardBackward0", save=(), outputs=("x1", "x2"))
def _cdist_backward(grad, x1, x2, result, *, p):
    return _cdist.backward(grad, x1, x2, result, p)


@_cdist_backward.derivative
def _(grads):
    raise NotImplementedError("the derivative for '_cdist_backward' is not implemented.")


@op("AddbmmBackward0", save={"batch1": ("batch2",), "batch2": ("batch1",)}, attrs=("alpha", "beta"))
def _addbmm(self, batch1, batch2, *, beta, alpha):
    return _add_scaled(self, jnp.einsum("bij,bjk->ik", batch1, batch2), beta, alpha)


@_addbmm.derivative
def _(grad, batch1, batch2, beta, alpha):
    g = _scaled(grad, _conj_scalar(alpha))
    return (_scaled(grad, _conj_scalar(beta)),
            None if batch2 is None else jnp.broadcast_to(g, (batch2.shape[0],) + g.shape) @ _conj_t(batch2),
            None if batch1 is None else _conj_t(batch1) @ g)


@op("AddmvBackward0", save={"mat": ("vec",), "vec": ("mat",)}, attrs=("alpha", "beta"))
def _addmv(self, mat, vec, *, beta, alpha):
    return _add_scaled(self, mat @ vec, beta, alpha)


@_addmv.derivative
def _(grad, mat, vec, beta, alpha):
    g = _scaled(grad, _conj_scalar(alpha))
    return (_scaled(grad, _conj_scalar(beta)), None if vec is None else g[:, None] * jnp.conj(vec)[None, :],
            None if mat is None else _conj_t(mat) @ g)


@op("AddrBackward0", save={"vec1": ("vec2",), "vec2": ("vec1",)}, attrs=("alpha", "beta"))
def _addr(self, vec1, vec2, *, beta, alpha):
    if vec1.dtype == bool and vec2.dtype == bool and self.dtype == bool:  # torch: logical and / or
        return (bool(beta) & self) | (bool(alpha) & vec1[:, None] & vec2[None, :])
    return _add_scaled(self, _scaled(vec1, alpha)[:, None] * vec2[None, :], beta, 1)  # (torch: alpha * vec1 * vec2)


@_addr.derivative
def _(grad, vec1, vec2, beta, alpha):
    g = _scaled(grad, _conj_scalar(alpha))
    return (_scaled(grad, _conj_scalar(beta)), None if vec2 is None else g @ jnp.conj(vec2),
            None if vec1 is None else jnp.conj(vec1) @ g)


def _check_addmv(input, mat, vec):
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (input.ndim == 1 and input.shape[0] not in (1, mat.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat ({_x(mat.shape)}), "
                           f"vec ({vec.shape[0]})")
    if not (input._data.dtype == mat._data.dtype == vec._data.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {_word(input)}, {_word(mat)}, "
                           f"and {_word(vec)}")
    _not_for_bool("addmv_impl_cpu", mat)


def _check_addr(input, vec1, vec2):
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec{1 if vec1.ndim != 1 else 2}, but got "
                           f"{vec1.ndim if vec1.ndim != 1 else vec2.ndim}-D")
    _check_expand(input, (vec1.shape[0], vec2.shape[0]))


def _check_addr_scalars(input, vec1, vec2, beta, alpha):
    """torch's addr refuses scalars its (promoted) result type cannot take: bool ones for a non-bool result,
    floating ones for an integer result."""
    kind = jnp.result_type(input._data.dtype, vec1._data.dtype, vec2._data.dtype).kind
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, bool) and kind != "b":
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if isinstance(s, (float, complex)) and kind in "biu":
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")


def _check_addbmm(input, batch1, batch2):
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if input._data.dtype != batch2._data.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_word(input)} and {_word(batch2)}")
    if batch1._data.dtype != batch2._data.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {_word(batch1)} and {_word(batch2)}")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    _check_expand(input, (batch1.shape[1], batch2.shape[2]))
    _not_for_bool("addmm_impl_cpu_", input)


def _addmv_(self, mat, vec, *, beta=1, alpha=1):
    _check_addmv(self, mat, vec)
    return _apply_inplace(_addmv, self, (self, mat, vec), (beta, alpha))


@public(inplace=_addmv_)
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat @ vec) (AddmvBackward0)."""
    _check_addmv(input, mat, vec)
    return _out(_apply(_addmv, (input, mat, vec), (beta, alpha)), out)


def _addr_(self, vec1, vec2, *, beta=1, alpha=1):
    _check_addr(self, vec1, vec2)
    _check_addr_scalars(self, vec1, vec2, beta, alpha)
    return _apply_inplace(_addr, self, (self, vec1, vec2), (beta, alpha))


@public(inplace=_addr_)
def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * outer(vec1, vec2) (AddrBackward0)."""
    _check_addr(input, vec1, vec2)
    _check_addr_scalars(input, vec1, vec2, beta, alpha)
    return _out(_apply(_addr, (input, vec1, vec2), (beta, alpha)), out)


def _addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
    _check_addbmm(self, batch1, batch2)
    return _apply_inplace(_addbmm, self, (self, batch1, batch2), (beta, alpha))


@public(inplace=_addbmm_)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * sum_b batch1[b] @ batch2[b] (AddbmmBackward0)."""
    _check_addbmm(input, batch1, batch2)
    return _out(_apply(_addbmm, (input, batch1, batch2), (beta, alpha)), out)


_OUT_NAMES = {  # the kernel torch's out= refusal names, where it is not the function's own
    "linalg_inv": "linalg_inv_ex", "inverse": "linalg_inv_ex", "linalg_solve": "_linalg_solve_ex",
    "linalg_solve_ex": "_linalg_solve_ex", "linalg_cholesky": "linalg_cholesky_ex",
    "linalg_lu_factor": "linalg_lu_factor_ex", "linalg_det": "_linalg_det", "linalg_slogdet": "_linalg_slogdet",
    "slogdet": "_linalg_slogdet", "linalg_svd": "_linalg_svd", "linalg_svdvals": "_linalg_svd",
    "linalg_eigh": "_linalg_eigh", "linalg_eigvalsh": "_linalg_eigh", "linalg_matrix_power": "matmul"}


def _out(result, out):
    """torch's ``out=``: the result written into ``out`` (one tensor per result of a tuple), with torch's checks
    (``_write_out``), named after the calling function (linalg_<name> for torch.linalg's)."""
    if out is None:
        return result
    caller = sys._getframe(1)
    name = ("linalg_" if caller.f_globals["__name__"] == "torchlike.linalg" else "") + caller.f_code.co_name
    name = _OUT_NAMES.get(name, name)
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors")
        written = [_write_out(name, lambda r=r: r, o, (r,), "found") for o, r in zip(out, result)]
        if not hasattr(result, "_fields"):
            return tuple(written)
        kind = type(result).__name__ + "_out"  # torch's out= variants return e.g. return_types.linalg_slogdet_out
        cls = _RT.get(kind) or _RT.setdefault(kind, structseq(kind, result._fields))
        return cls(*written)
    return _write_out(name, lambda: result, out, (result,), "found")


# ----- the torch-level functions --------------------------------------------------------------------------------
@public
def det(input):
    """Determinant of a batch of square matrices (LinalgDetBackward0)."""
    return _det_impl(input)


@public
def slogdet(input, *, out=None):
    """(sign, log|det|) of a batch of square matrices (LinalgSlogdetBackward0)."""
    return _out(_slogdet_impl(input, rtype="slogdet"), out)


@public
def logdet(input):
    """log det: NaN for a negative determinant (torch's where(sign == -1, nan, logabsdet): WhereBackward0)."""
    sign, logabsdet = _slogdet_impl(input, "logdet")
    if input.is_complex():
        return sign.log() + logabsdet
    return where(sign == -1, float("nan"), logabsdet)


@public
def inverse(input, *, out=None):
    """The inverse of a batch of square matrices (LinalgInvExBackward0); LinAlgError if one is singular."""
    return _out(_inv_ex_impl(input, True).inverse, out)


@public
def matrix_power(input, n, *, out=None):
    """input to the integer power n, as torch.linalg.matrix_power."""
    return _out(_matrix_power(input, n), out)


@public
def matrix_exp(input):
    """The matrix exponential (LinalgMatrixExpBackward0)."""
    return _matrix_exp_impl(input)


def _matrix_exp_impl(A):
    _check(A, "linalg.matrix_exp")
    return _apply(_matrix_exp, (A,), ())


@public
def pinverse(input, rcond=1e-15):
    """The pseudo-inverse with relative tolerance ``rcond`` (LinalgPinvBackward0)."""
    return _pinv_impl(input, rtol=rcond)


def _check_linear_solve(b, A, name):
    """torch's linearSolveCheckInputs (cholesky_solve, triangular_solve): dtypes, square A, matching sizes, then
    batch dims that broadcast."""
    if b._data.dtype != A._data.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type {_word(b)} and A of type "
                           f"{_word(A)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                           f"matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {A.shape[-1]} by {A.shape[-1]} "
                           f"but each b matrix is {b.shape[-2]} by {b.shape[-1]}")
    _broadcast_batch(tuple(b.shape[:-2]), tuple(A.shape[:-2]))


def _check_lapack_dtype(kernel, *tensors):
    """torch's CPU kernels of these functions: float, double, cfloat and cdouble only."""
    for t in tensors:
        if t._data.dtype.kind not in "fc" or t._data.dtype.itemsize == 2:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{_word(t)}'")


@public
def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = input, A = L L^H (U^H U with ``upper``) given its Cholesky factor ``input2``, batch dims
    broadcast (CholeskySolveBackward0)."""
    if input.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {input.ndim} dimensions instead")
    if input2.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {input2.ndim} dimensions instead")
    _check_linear_solve(input, input2, "cholesky_solve")
    _check_lapack_dtype("cholesky_solve_cpu", input)
    return _out(_apply(_cholesky_solve, (input, input2), (bool(upper),)), out)


@public
def cholesky_inverse(input, upper=False, *, out=None):
    """(L L^H)^-1 (or (U^H U)^-1 with ``upper``) from a Cholesky factor (CholeskyInverseBackward0); LinAlgError for
    a zero on its diagonal."""
    _check(input, "cholesky_inverse", floating=False)
    _check_lapack_dtype("cholesky_inverse_out_cpu", input)
    result = _apply(_cholesky_inverse, (input,), (bool(upper),))
    if not isinstance(input._data, jax.core.Tracer):  # (potri's info: a host read, as torch's)
        _raise_info(_wrap(_lu_info(input._data)), "cholesky_inverse: {where}The diagonal element {k} is zero, the "
                                                  "inversion could not be completed because the input matrix is "
                                                  "singular.")
    return _out(result, out)


@public(method=False)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) of lu_factor's packed (LU, pivots) (LuUnpackBackward0; P has no gradient); ``unpack_data`` or
    ``unpack_pivots`` False: empty L and U, or P."""
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(LU_data.shape)} instead")
    if unpack_pivots:
        if LU_pivots._data.dtype != np.int32:
            raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                               "dtype.\nNote: this function is intended to be used with the output produced by "
                               "torch.linalg.lu_factor")
        m = LU_data.shape[-2]
        bad = LU_pivots.ndim == 0 or LU_pivots.shape[-1] != min(m, LU_data.shape[-1])
        if not bad and not isinstance(LU_pivots._data, jax.core.Tracer):  # (a host read, as torch's)
            p = np.asarray(LU_pivots._data)
            bad = bool(((p < 1) | (p > m)).any())
        if bad:
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) inclusive.Did you "
                               "properly pass the result of lu_factor?")
    P, L, U = _apply(_lu_unpack, (LU_data, LU_pivots), (bool(unpack_data), bool(unpack_pivots)))
    return _out(_RT["lu_unpack"](_wrap(P._data), L, U), out)  # (P: not differentiable, as torch's)


@public
def geqrf(input, *, out=None):
    """LAPACK's geqrf: (a, tau), R above a's diagonal and the Householder reflectors below it (GeqrfBackward0: no
    derivative)."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack_dtype("geqrf_cpu", input)
    return _out(_RT["geqrf"](*_apply(_geqrf, (input,), ())), out)


@public
def orgqr(input, input2, *, out=None):
    """The first n columns of the product of geqrf's Householder reflectors: linalg.householder_product
    (LinalgHouseholderProductBackward0)."""
    return _out(_householder_product_impl(input, input2), out)


@public
def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """Q input3 (input3 Q without ``left``; Q^H with ``transpose``), Q the product of geqrf's reflectors (input,
    input2) (OrmqrBackward0)."""
    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if input3.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    cond = -2 if left else -1
    if input3.shape[cond] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{cond}] must be equal to input.shape[-2]")
    if input2.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input2.shape[-1] != min(input3.shape[cond], input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{cond}], input.shape[-1])")
    if input2.ndim != input.ndim - 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, but got tau.ndim equal "
                           f"to {input2.ndim} and input.ndim is equal to {input.ndim}")
    if input3.ndim != input.ndim:
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions as input, but got "
                           f"other.ndim equal to {input3.ndim} and input.ndim is equal to {input.ndim}")
    for name, t, k in (("tau", input2, 1), ("other", input3, 2)):
        if tuple(t.shape[:t.ndim - k]) != tuple(input.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {name} to be equal to input.shape[:-2], "
                               f"but got {list(t.shape[:t.ndim - k])}")
    for name, t in (("tau", input2), ("other", input3)):
        if t._data.dtype != input._data.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {name} to have the same dtype, but input has dtype"
                               f"{_word(input)} and {name} has dtype {_word(t)}")
    _check_lapack_dtype("ormqr_cpu", input)
    return _out(_apply(_ormqr, (input, input2, input3), (bool(left), bool(transpose))), out)


@public(method=False)
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of x1 and x2 (CdistBackward0; computed directly in every
    compute_mode)."""
    if compute_mode not in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                            "donot_use_mm_for_euclid_dist"):
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if x1._data.dtype.kind not in "fV":  # ("V": bfloat16)
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: {_word(x1)}")
    if x2._data.dtype.kind not in "fV":
        raise RuntimeError(f"cdist only supports floating-point dtypes, X2 got: {_word(x2)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"expected scalar type {_word(x1)} but found {_word(x2)}")
    if x1._data.dtype.itemsize == 2:  # (torch's CPU kernel: float and double only)
        raise NotImplementedError(f"\"cdist\" not implemented for '{_word(x1)}'")
    batch = _broadcast_batch(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if p == 2 and x1.numel() and x2.numel() and (compute_mode == "use_mm_for_euclid_dist" or (
            compute_mode == "use_mm_for_euclid_dist_if_necessary" and (r1 > 25 or r2 > 25))):
        n = math.prod(batch)  # torch's cdist_impl: the matmul form, as torch records it
        if n != 1:
            x1 = x1.expand(batch + tuple(x1.shape[-2:])).reshape(n, r1, x1.shape[-1])
            x2 = x2.expand(batch + tuple(x2.shape[-2:])).reshape(n, r2, x2.shape[-1])
        return _euclidean_dist(x1, x2).view(batch + (r1, r2))
    return _apply(_cdist, (x1, x2), (float(p),))


def _euclidean_dist(x1, x2):
    """torch's _euclidean_dist: sqrt(|x1|^2 - 2 x1.x2 + |x2|^2) by one matmul, clamped at 1e-30."""
    n1, n2 = x1.pow(2).sum(-1, True), x2.pow(2).sum(-1, True)
    x1_ = cat([x1.mul(-2), n1, n1.new_ones(n1.shape)], -1)
    x2_ = cat([x2, n2.new_ones(n2.shape), n2], -1)
    return x1_.matmul(x2_.mT).clamp_min_(1e-30).sqrt_()


@public(method=False)
def chain_matmul(*matrices, out=None):
    """The product of 2-D matrices, in the cheapest order (torch's deprecated form of linalg.multi_dot)."""
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for i, m in enumerate(matrices):
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return _out(matrices[0].clone(), out)
    return _out(_multi_dot(list(matrices), "chain_matmul"), out)


# ----- composites: multi_dot, matrix_power, norms, vander, vecdot, tensorinv, tensorsolve ---------------------
def _multi_dot(tensors, name="multi_dot"):
    """torch's multi_dot: 1-D ends as matrices, the cheapest order of mm's (its dynamic programme), then a view."""
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0].ndim, tensors[-1].ndim
    for i, t in enumerate(tensors):
        expected = (1, 2) if i in (0, n - 1) else (2,)
        if t.ndim not in expected:
            raise RuntimeError(f"{name}(): the {'first' if i == 0 else 'last' if i == n - 1 else 'middle'} tensor "
                               f"must be 1D or 2D but got {t.ndim}D" if i in (0, n - 1) else
                               f"{name}(): tensor {i} must be 2D but got {t.ndim}D")
    mats = list(tensors)
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(f"{name}(): tensors {i} and {i + 1} with shapes {list(mats[i].shape)} and "
                               f"{list(mats[i + 1].shape)} cannot be multiplied")
    out_shape = ([mats[0].shape[0]] if first == 2 else []) + ([mats[-1].shape[1]] if last == 2 else [])
    if n == 2:
        result = mm(mats[0], mats[1])
    elif n == 3:
        a, b, c = mats[0].shape[0], mats[1].shape[0], mats[2].shape[0]
        d = mats[2].shape[1]
        result = mm(mm(mats[0], mats[1]), mats[2]) if a * c * (b + d) < b * d * (a + c) else \
            mm(mats[0], mm(mats[1], mats[2]))
    else:
        p = [m.shape[0] for m in mats] + [mats[-1].shape[1]]
        cost = [[0] * n for _ in range(n)]
        order = [[0] * n for _ in range(n)]
        for length in range(1, n):
            for i in range(n - length):
                j = i + length
                cost[i][j] = None
                for k in range(i, j):
                    q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                    if cost[i][j] is None or q < cost[i][j]:
                        cost[i][j], order[i][j] = q, k

        def chain(i, j):
            return mats[i] if i == j else mm(chain(i, order[i][j]), chain(order[i][j] + 1, j))
        result = chain(0, n - 1)
    return result.view(out_shape)


def _matrix_power(A, n):
    _check(A, "linalg.matrix_power", floating=False)
    if n == 0:
        return A.clone().copy_(eye(A.shape[-1], dtype=A.dtype).expand(A.shape))
    if n < 0:
        A, n = _inv_ex_impl(A, True).inverse, -n
    if n == 1:
        return A.clone()
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else z @ z
        if bit:
            result = z.clone() if result is None else result @ z
    return result


def _matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    if ord not in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    _check(A, "linalg.matrix_norm", square=False)
    dim = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if ord == "fro":
        return A.norm(2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        moved = A.movedim((d0, d1), (-2, -1))
        s = _svd_impl(moved, False).S if moved.requires_grad and _gm._state.grad_enabled else _svdvals(moved)
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:  # (torch's: two trailing dims, permuted back)
            perm = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
            r = r.unsqueeze(-1).unsqueeze(-1).permute([perm.index(d) for d in range(A.ndim)])
        return r
    if ord in (1, -1, float("inf"), -float("inf")):
        if ord in (float("inf"), -float("inf")):
            d0, d1 = d1, d0
        if not keepdim and d0 < d1:
            d1 -= 1
        r = _linalg_vector_norm(A, 1, d0, keepdim)
        return r.amax(d1, keepdim) if ord > 0 else r.amin(d1, keepdim)


def _svdvals(A):
    _check(A, "linalg.svd", square=False)
    return _apply(_svd, (A,), (False,))[1]


def _norm(A, ord=None, dim=None, keepdim=False, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) not in (1, 2):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dim)}")
    if dim is not None and len(dim) == 2 or dim is None and ord is not None and A.ndim == 2:
        return _matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype)
    if dim is None and ord is not None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported.")
    return _linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def _vander(x, N=None):
    n = (x.shape[-1] if x.ndim else 1) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    if x._data.dtype.kind in "biu":
        x = x.to(_dtype.int64)
    shape = tuple(x.shape) + (n - 1,)
    result = cumprod(x.unsqueeze(-1).expand(shape), -1)
    return cat([result.new_ones(shape[:-1] + (1,)), result], -1)


def _vecdot(x, y, dim=-1):
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type {_word(x)} "
                           f"and y of type {_word(y)} instead")
    return (x.conj() * y).sum(dim) if x.is_complex() else (x * y).sum(dim)


def _tensorinv(input, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(input.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    return _inv_ex_impl(input.reshape(rows, cols), True).inverse.reshape(shape[ind:] + shape[:ind])


def _tensorsolve(A, B, dims=None):
    if dims is not None:
        moved = [_wrap_dim(d, A.ndim) for d in dims]
        A = A.movedim(moved, list(range(A.ndim - len(moved), A.ndim)))
    rest = tuple(A.shape[B.ndim:])
    n = math.prod(rest)
    if math.prod(A.shape[:B.ndim]) != n:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           f"prod(self.shape[:other.ndim]), but got {n} != {math.prod(A.shape[:B.ndim])}")
    return _solve_ex_impl(A.reshape(n, n), B.reshape(n), check_errors=True).result.view(rest)


# ----- torch.norm (its matrix norms are matrix_norm) -----------------------------------------------------------
@public(method=False)
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """Vector p-norm over ``dim`` (all dims by default), as torch.norm: LinalgVectorNormBackward0; 'nuc' (or 'fro'
    over more than 2 dims) is linalg.matrix_norm over ``dim`` (all dims by default)."""
    if isinstance(p, str):
        if p != "fro" or not (dim is None or isinstance(dim, int) or len(dim) <= 2):
            dims = list(range(input.ndim)) if dim is None else dim
            return _matrix_norm(input, p, dims, keepdim, dtype)
        p = 2
    if p is None:
        p = 2
    return _linalg_vector_norm(input, p, dim, keepdim, dtype=dtype)


@public(name="norm", function=False)
def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    return norm(self, p, dim, keepdim, dtype=dtype)
