"""torch.lobpcg: the Locally Optimal Block Preconditioned Conjugate Gradient method for the k largest (or smallest)
eigenpairs of a symmetric positive-definite generalized eigenproblem A X = B X E, as torch writes it (torch/_lobpcg.py,
pure Python over torch's ops: here over torchlike's), with its backward (an autograd Function: the eigenvectors'
gradient through a Sylvester equation when only k < m eigenpairs are known).

Known differences: the initial X (when none is given) is drawn from torchlike's generator, not torch's, so the iterates
differ from torch's (the converged eigenpairs agree to the tolerance, the eigenvectors up to sign); torchlike has no
sparse tensors (torch's sparse A and B) and no TorchScript.
"""
import torchlike as torch
from .autograd import Function
from .ops.lowrank import _floating_dtype, _matmul

__all__ = ["lobpcg"]


# ----- torch._linalg_utils' helpers --------------------------------------------------------------------------------
def _qform(A, S):
    """S^T A S (A None: the identity)."""
    return _matmul(S.mT, _matmul(A, S))


def _basis(A):
    """An orthonormal basis of A's columns."""
    return torch.linalg.qr(A).Q


def _symeig(A, largest=False):
    """A's eigenpairs, ascending (descending with ``largest``)."""
    E, Z = torch.linalg.eigh(A, UPLO="U")
    if largest:
        E, Z = torch.flip(E, dims=(-1,)), torch.flip(Z, dims=(-1,))
    return E, Z


# ----- the backward ------------------------------------------------------------------------------------------------
def _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U):
    F = D.unsqueeze(-2) - D.unsqueeze(-1)  # F_ij = (d_j - d_i)^-1, F_ii = 0
    F.diagonal(dim1=-2, dim2=-1).fill_(float("inf"))
    F.pow_(-1)
    Ut = U.mT.contiguous()  # A.grad = U (D.grad + (U^T U.grad * F)) U^T
    return torch.matmul(U, torch.matmul(torch.diag_embed(D_grad) + torch.matmul(Ut, U_grad) * F, Ut))


def _polynomial_coefficients_given_roots(roots):
    """(a_0, ..., a_n = 1) of prod (x - r_i), by Horner's rule on copies (each step its own node)."""
    poly_order = roots.shape[-1]
    poly_coeffs_shape = list(roots.shape)
    poly_coeffs_shape[-1] += 2  # (one extra coefficient, for the vectorized steps)
    poly_coeffs = roots.new_zeros(poly_coeffs_shape)
    poly_coeffs[..., 0] = 1
    poly_coeffs[..., -1] = 1
    for i in range(1, poly_order + 1):
        poly_coeffs_new = poly_coeffs.clone() if roots.requires_grad else poly_coeffs
        out = poly_coeffs_new.narrow(-1, poly_order - i, i + 1)
        out -= roots.narrow(-1, i - 1, 1) * poly_coeffs.narrow(-1, poly_order - i + 1, i + 1)
        poly_coeffs = poly_coeffs_new
    return poly_coeffs.narrow(-1, 1, poly_order + 1)


def _polynomial_value(poly, x, zero_power, transition):
    """poly(x) by Horner's rule: ``transition(value, x, coefficient)`` is one step, x * value + coefficient."""
    res = zero_power.clone()
    for k in range(poly.size(-1) - 2, -1, -1):
        res = transition(res, x, poly[..., k])
    return res


def _matrix_polynomial_value(poly, x, zero_power=None):
    def transition(curr_poly_val, x, poly_coeff):
        res = x.matmul(curr_poly_val)
        res.diagonal(dim1=-2, dim2=-1).add_(poly_coeff.unsqueeze(-1))
        return res

    if zero_power is None:
        zero_power = torch.eye(x.size(-1), x.size(-1), dtype=x.dtype, device=x.device).view(
            *([1] * len(list(x.shape[:-2]))), x.size(-1), x.size(-1))
    return _polynomial_value(poly, x, zero_power, transition)


def _vector_polynomial_value(poly, x, zero_power=None):
    def transition(curr_poly_val, x, poly_coeff):
        return torch.addcmul(poly_coeff.unsqueeze(-1), x, curr_poly_val)

    if zero_power is None:
        zero_power = x.new_ones(1).expand(x.shape)
    return _polynomial_value(poly, x, zero_power, transition)


def _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest):
    """The gradient in span(U) and, through the Sylvester equation U_o^T A U_o dX - dX D = -U_o^T A U solved by
    polynomials (Hu and Cheng 2006), in its orthogonal complement U_o (a random basis: the result does not depend
    on it)."""
    Ut = U.mT.contiguous()
    proj_U_ortho = -U.matmul(Ut)  # I - U U^T
    proj_U_ortho.diagonal(dim1=-2, dim2=-1).add_(1)
    gen = torch.Generator(A.device)  # (a fixed generator: deterministic)
    U_ortho = proj_U_ortho.matmul(torch.randn((*A.shape[:-1], A.size(-1) - D.size(-1)), dtype=A.dtype,
                                              device=A.device, generator=gen))
    U_ortho_t = U_ortho.mT.contiguous()
    chr_poly_D = _polynomial_coefficients_given_roots(D)  # (D's characteristic polynomial)
    U_grad_projected = U_grad
    series_acc = U_grad_projected.new_zeros(U_grad_projected.shape)
    for k in range(1, chr_poly_D.size(-1)):
        poly_D = _vector_polynomial_value(chr_poly_D[..., k:], D)
        series_acc += U_grad_projected * poly_D.unsqueeze(-2)
        U_grad_projected = A.matmul(U_grad_projected)
    chr_poly_D_at_A = _matrix_polynomial_value(chr_poly_D, A)
    chr_poly_D_at_A_to_U_ortho = torch.matmul(U_ortho_t, torch.matmul(chr_poly_D_at_A, U_ortho))
    # positive-definite unless largest with k odd (A's eigenvalues distinct): then negative-definite
    chr_poly_D_at_A_to_U_ortho_sign = -1 if (largest and (k % 2 == 1)) else +1
    chr_poly_D_at_A_to_U_ortho_L = torch.linalg.cholesky(chr_poly_D_at_A_to_U_ortho_sign * chr_poly_D_at_A_to_U_ortho)
    res = _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
    res -= U_ortho.matmul(chr_poly_D_at_A_to_U_ortho_sign * torch.cholesky_solve(
        U_ortho_t.matmul(series_acc), chr_poly_D_at_A_to_U_ortho_L)).matmul(Ut)
    return res


def _symeig_backward(D_grad, U_grad, A, D, U, largest):
    if U.size(-1) == U.size(-2):  # U's columns are the whole eigenspace
        return _symeig_backward_complete_eigenspace(D_grad, U_grad, A, D, U)
    return _symeig_backward_partial_eigenspace(D_grad, U_grad, A, D, U, largest)


class LOBPCGAutogradFunction(Function):
    @staticmethod
    def forward(ctx, A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None,
                tracker=None, ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
        A = A.contiguous()
        if B is not None:
            B = B.contiguous()
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                       ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A_grad = B_grad = None
        grads = [None] * 14
        A, B, D, U = ctx.saved_tensors
        largest = ctx.largest
        if A.dtype in (torch.complex64, torch.complex128) or B is not None and B.dtype in (torch.complex64,
                                                                                           torch.complex128):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that lobpcg.forward does "
                             "though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        if largest is None:
            largest = True
        if B is None:
            A_grad = _symeig_backward(D_grad, U_grad, A, D, U, largest)
        grads[0] = A_grad
        grads[2] = B_grad
        return tuple(grads)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None,
           ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    """The k largest (``largest=False``: smallest) eigenpairs (E, X) of A X = B X E, A and B symmetric positive
    definite (B None: the identity), by LOBPCG (``method`` "ortho", the default, or "basic") from X (n random columns
    by default), preconditioned by ``iK``, at most ``niter`` iterations (1000 by default) to the relative tolerance
    ``tol``. ``tracker(worker)`` is called after each iteration. Differentiable in A (its symmetric part)."""
    if A.requires_grad or (B is not None and B.requires_grad):
        A_sym = (A + A.mT) / 2  # (so that A's gradient is symmetric)
        B_sym = (B + B.mT) / 2 if (B is not None) else None
        return LOBPCGAutogradFunction.apply(A_sym, k, B_sym, X, n, iK, niter, tol, largest, method, tracker,
                                            ortho_iparams, ortho_fparams, ortho_bparams)
    return _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
                   ortho_bparams)


def _lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None, method=None, tracker=None,
            ortho_iparams=None, ortho_fparams=None, ortho_bparams=None):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating_dtype(A)
    device = A.device
    if tol is None:
        feps = {torch.float32: 1.2e-07, torch.float64: 2.23e-16}[dtype]
        tol = feps**0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) is smaller than 3 x the "
                         f"number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        if ortho_iparams is not None:
            iparams.update(ortho_iparams)
        if ortho_fparams is not None:
            fparams.update(ortho_fparams)
        if ortho_bparams is not None:
            bparams.update(ortho_bparams)
        iparams["ortho_i_max"] = iparams.get("ortho_i_max", 3)
        iparams["ortho_j_max"] = iparams.get("ortho_j_max", 3)
        fparams["ortho_tol"] = fparams.get("ortho_tol", tol)
        fparams["ortho_tol_drop"] = fparams.get("ortho_tol_drop", tol)
        fparams["ortho_tol_replace"] = fparams.get("ortho_tol_replace", tol)
        bparams["ortho_use_drop"] = bparams.get("ortho_use_drop", False)
    if len(A.shape) > 2:  # a batch: one worker per matrix
        N = int(torch.prod(torch.tensor(A.shape[:-2])))
        bA = A.reshape((N,) + A.shape[-2:])
        bB = B.reshape((N,) + A.shape[-2:]) if B is not None else None
        bX = X.reshape((N,) + X.shape[-2:]) if X is not None else None
        bE = torch.empty((N, k), dtype=dtype, device=device)
        bXret = torch.empty((N, m, k), dtype=dtype, device=device)
        for i in range(N):
            A_ = bA[i]
            B_ = bB[i] if bB is not None else None
            X_ = torch.randn((m, n), dtype=dtype, device=device) if bX is None else bX[i]
            if not (len(X_.shape) == 2 and X_.shape == (m, n)):
                raise AssertionError(f"X_ shape mismatch: got {X_.shape}, expected {(m, n)}")
            iparams["batch_index"] = i
            worker = LOBPCG(A_, B_, X_, iK, iparams, fparams, bparams, method, tracker)
            worker.run()
            bE[i] = worker.E[:k]
            bXret[i] = worker.X[:, :k]
        return bE.reshape(A.shape[:-2] + (k,)), bXret.reshape(A.shape[:-2] + (m, k))
    X = torch.randn((m, n), dtype=dtype, device=device) if X is None else X
    if not (len(X.shape) == 2 and X.shape == (m, n)):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    worker = LOBPCG(A, B, X, iK, iparams, fparams, bparams, method, tracker)
    worker.run()
    return worker.E[:k], worker.X[:, :k]


class LOBPCG:
    """Worker class of LOBPCG methods (torch's: a tracker reads its iparams, fparams, bparams, ivars, fvars, bvars,
    tvars, X, E, R, S)."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK  # constant parameters
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method = method
        self.tracker = tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X  # variable parameters
        self.E = torch.zeros((n,), dtype=X.dtype, device=X.device)
        self.R = torch.zeros((m, n), dtype=X.dtype, device=X.device)
        self.S = torch.zeros((m, 3 * n), dtype=X.dtype, device=X.device)
        self.tvars = {}
        self.ivars = {"istep": 0}
        self.fvars = {"_": 0.0}
        self.bvars = {"_": False}

    def __str__(self):
        names = ("iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B", "iK", "X", "E")
        return "LOBPCG:\n" + "".join(f"  {name}={getattr(self, name)}\n" for name in names)

    def update(self):
        """Set and update iteration variables."""
        if self.ivars["istep"] == 0:
            X_norm = float(torch.norm(self.X))
            iX_norm = X_norm**-1
            self.fvars["X_norm"] = X_norm
            self.fvars["A_norm"] = float(torch.norm(_matmul(self.A, self.X))) * iX_norm
            self.fvars["B_norm"] = float(torch.norm(_matmul(self.B, self.X))) * iX_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] = self.ivars["iterations_left"] - 1
        self.ivars["istep"] = self.ivars["istep"] + 1

    def update_residual(self):
        """Update residual R from A, B, X, E."""
        self.R = _matmul(self.A, self.X) - _matmul(self.B, self.X) * self.E

    def update_converged_count(self):
        """The number of converged eigenpairs by the backward stable criterion of [DuerschEtal2018] 4.3 (users may
        redefine it)."""
        prev_count = self.ivars["converged_count"]
        tol = self.fparams["tol"]
        A_norm, B_norm = self.fvars["A_norm"], self.fvars["B_norm"]
        E, X, R = self.E, self.X, self.R
        rerr = torch.norm(R, 2, (0,)) / (torch.norm(X, 2, (0,)) * (A_norm + torch.abs(E[: X.shape[-1]]) * B_norm))
        converged = rerr < tol
        count = 0
        for b in converged:
            if not b:  # (the following pairs' convergence is ignored: strict ordering of eigenpairs)
                break
            count += 1
        if count < prev_count:
            raise AssertionError(f"the number of converged eigenpairs (was {prev_count}, got {count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def stop_iteration(self):
        """True to stop iterations (a tracker can set ``worker.bvars['force_stop'] = True``)."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def run(self):
        """Run LOBPCG iterations."""
        self.update()
        if self.tracker is not None:
            self.call_tracker()
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.call_tracker()

    def call_tracker(self):
        self.tracker(self)

    def _update_basic(self):
        """Update or initialize iteration variables when `method == "basic"`."""
        self._update(True)

    def _update_ortho(self):
        """Update or initialize iteration variables when `method == "ortho"`."""
        self._update(False)

    def _update(self, basic):
        """One step of either method: Rayleigh-Ritz on X (the first step) or on S's active columns, X, E and the
        search directions P; the residual, the converged count; S = [X, P, W], W the preconditioned residual (basic)
        or its B-orthonormal part B-orthogonal to [X, P] (ortho)."""
        mm = torch.matmul
        ns = self.ivars["converged_end"]
        nc = self.ivars["converged_count"]
        n = self.iparams["n"]
        largest = self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            if basic:
                self.X[:] = mm(self.X, mm(Ri, Z))
                self.E[:] = E
            else:
                self.X = mm(self.X, mm(Ri, Z))
            np = 0
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            W = _matmul(self.iK, self.R) if basic else self._get_ortho(self.R, self.X)
        else:
            S_ = self.S[:, nc:ns]
            if basic:
                Ri = self._get_rayleigh_ritz_transform(S_)
                E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
                self.X[:, nc:] = mm(S_, mm(Ri, Z[:, : n - nc]))
                P = mm(S_, mm(Ri, Z[:, n: 2 * n - nc]))
            else:
                E_, Z = _symeig(_qform(self.A, S_), largest)
                self.X[:, nc:] = mm(S_, Z[:, : n - nc])
                P = mm(S_, mm(Z[:, n - nc:], _basis(Z[: n - nc, n - nc:].mT)))
            self.E[nc:] = E_[: n - nc]
            np = P.shape[-1]
            self.update_residual()
            nc = self.update_converged_count()
            self.S[:, :n] = self.X
            self.S[:, n: n + np] = P
            W = _matmul(self.iK, self.R[:, nc:]) if basic else self._get_ortho(self.R[:, nc:], self.S[:, : n + np])
        ns = self.ivars["converged_end"] = n + np + W.shape[-1]
        self.S[:, n + np: ns] = W

    def _get_rayleigh_ritz_transform(self, S):
        """Ri, upper triangular (n x n), reducing (S^T A S) C = (S^T B S) C E to (Ri^T S^T A S Ri) Z = Z E with
        C = Ri Z: with d = diag(S^T B S)^-1/2, R^T R = Cholesky(d d^T * S^T B S) and Ri = R^-1 * d."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = torch.linalg.cholesky((SBS * d_row) * d_col, upper=True)
        return torch.linalg.solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U, drop, tau):
        """B-orthonormal U (U^T B U = I) ([DuerschPhD2015]'s algorithm 4); ``drop``: without the columns whose
        contribution to span(U) is below ``tau``."""
        if torch.numel(U) == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = torch.where(abs(d) != 0.0)  # (exact zero columns dropped first: d ** -0.5 below)
        if len(nz) != 1:
            raise AssertionError(f"expected nz to have length 1, got {nz}")
        if len(nz[0]) < len(d):
            U = U[:, nz[0]]
            if torch.numel(U) == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
            nz = torch.where(abs(d) != 0.0)
            if len(nz[0]) != len(d):
                raise AssertionError(f"expected nz[0] length {len(d)}, got {len(nz[0])}")
        d_col = (d**-0.5).reshape(d.shape[0], 1)
        DUBUD = (UBU * d_col) * d_col.mT
        E, Z = _symeig(DUBUD)
        t = tau * abs(E).max()
        if drop:
            keep = torch.where(E > t)
            if len(keep) != 1:
                raise AssertionError(f"expected keep to have length 1, got {keep}")
            E = E[keep[0]]
            Z = Z[:, keep[0]]
            d_col = d_col[keep[0]]
        else:
            E[(torch.where(E < t))[0]] = t
        return torch.matmul(U * d_col.mT, Z * E**-0.5)

    def _get_ortho(self, U, V):
        """B-orthonormal U B-orthogonal to V ([DuerschPhD2015]'s algorithm 3, or 6 with
        ``bparams["ortho_use_drop"]``); empty if all of U is B-collinear to V."""
        mm = torch.matmul
        m = self.iparams["m"]
        tau_ortho = self.fparams["ortho_tol"]
        tau_drop = self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max = self.iparams["ortho_i_max"]
        j_max = self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for vkey in list(self.fvars.keys()):  # (the previous call's variables)
            if vkey.startswith("ortho_") and vkey.endswith("_rerr"):
                self.fvars.pop(vkey)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = torch.norm(_matmul(self.B, V))
        BU = _matmul(self.B, U)
        VBU = mm(V.mT, BU)
        i = j = 0
        for i in range(i_max):
            U = U - mm(V, VBU)
            drop = False
            tau_svqb = tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop = True
                    tau_svqb = tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if torch.numel(U) == 0:  # all of U is B-collinear to V
                    self.ivars["ortho_i"] = i
                    self.ivars["ortho_j"] = j
                    return U
                BU = _matmul(self.B, U)
                UBU = mm(U.mT, BU)
                U_norm = torch.norm(U)
                BU_norm = torch.norm(BU)
                R = UBU - torch.eye(UBU.shape[-1], device=UBU.device, dtype=UBU.dtype)
                R_norm = torch.norm(R)
                rerr = float(R_norm) * float(BU_norm * U_norm) ** -1
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = mm(V.mT, BU)
            VBU_norm = torch.norm(VBU)
            U_norm = torch.norm(U)
            rerr = float(VBU_norm) * float(BV_norm * U_norm) ** -1
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                B = self.B
                if B is None:
                    raise AssertionError("B must not be None")
                raise ValueError(f"Overdetermined shape of U: #B-cols(={B.shape[-1]}) >= #U-cols(={U.shape[-1]}) + "
                                 f"#V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"] = i
        self.ivars["ortho_j"] = j
        return U
