"""torchlike.linalg and torch's top-level matrix functions (det, inverse, logdet, slogdet, cdist, chain_matmul,
addbmm, addmv, addr) against torch 2.13 on the same NumPy inputs: values, result structure (torch.return_types),
node names, first- and second-order gradients, and torch's errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

RNG = np.random.default_rng(11)
M = RNG.standard_normal((3, 3))                      # a general 3x3
M2 = RNG.standard_normal((2, 3, 3))                  # a batch of two
R = RNG.standard_normal((4, 3))                      # tall
V = RNG.standard_normal(3)
B = RNG.standard_normal((3, 2))
_S = RNG.standard_normal((2, 3, 3))
SPD = _S @ _S.transpose(0, 2, 1) + 3 * np.eye(3)    # a batch of positive-definite matrices
SYM = M + M.T
TRI = np.triu(M) + 3 * np.eye(3)
SINGULAR = np.array([[1., 2, 3], [2, 4, 6], [1, 1, 1]])
NOT_PD = np.array([[1., 2, 0], [2, 1, 0], [0, 0, 1]])
TOL = dict(rtol=1e-7, atol=1e-9)


def L(m):
    return m.linalg


def _sym(x):
    return x + x.mT


def _spd(x):
    return x @ x.mT + 3 * torch.eye(3, dtype=torch.float64) if isinstance(x, torch.Tensor) else \
        x @ x.mT + 3 * tl.eye(3, dtype=tl.float64)


# name -> (fn(lib, *xs), input arrays, node name of the first output (None: not checked)); every input requires grad
CASES = {
    "det": (lambda m, x: L(m).det(x), [M2], "LinalgDetBackward0"),
    "det_singular": (lambda m, x: L(m).det(x), [SINGULAR], "LinalgDetBackward0"),
    "torch_det": (lambda m, x: m.det(x) + x.det(), [M], "AddBackward0"),
    "slogdet": (lambda m, x: L(m).slogdet(x).logabsdet * L(m).slogdet(x).sign, [M2], "MulBackward0"),
    "slogdet_node": (lambda m, x: L(m).slogdet(x)[1], [M], "LinalgSlogdetBackward0"),
    "torch_slogdet": (lambda m, x: m.slogdet(x).logabsdet, [M], "LinalgSlogdetBackward0"),
    "logdet": (lambda m, x: m.logdet(_spd(x)) + x.logdet(), [M], "AddBackward0"),
    "inv": (lambda m, x: L(m).inv(x), [M2], "LinalgInvExBackward0"),
    "inv_ex": (lambda m, x: L(m).inv_ex(x).inverse, [M], "LinalgInvExBackward0"),
    "inverse": (lambda m, x: m.inverse(x) + x.inverse(), [M], "AddBackward0"),
    "pinv": (lambda m, x: L(m).pinv(x), [R], "LinalgPinvBackward0"),
    "pinv_wide": (lambda m, x: L(m).pinv(x.mT), [R], "LinalgPinvBackward0"),
    "pinv_hermitian": (lambda m, x: L(m).pinv(_spd(x), hermitian=True), [M], "LinalgPinvBackward0"),
    "solve": (lambda m, a, b: L(m).solve(a, b), [M, B], "LinalgSolveExBackward0"),
    "solve_vector": (lambda m, a, b: L(m).solve(a, b), [M, V], "LinalgSolveExBackward0"),
    "solve_batched": (lambda m, a, b: L(m).solve(a, b), [M2, B], "LinalgSolveExBackward0"),
    "solve_right": (lambda m, a, b: L(m).solve(a, b.mT, left=False), [M, B], "LinalgSolveExBackward0"),
    "solve_ex": (lambda m, a, b: L(m).solve_ex(a, b).result, [M, B], "LinalgSolveExBackward0"),
    "lstsq": (lambda m, a, b: L(m).lstsq(a, b).solution, [R, RNG.standard_normal((4, 2))],
              "LinalgLstsqBackward0"),
    "cholesky": (lambda m, x: L(m).cholesky(_spd(x)), [M], "LinalgCholeskyExBackward0"),
    "cholesky_upper": (lambda m, x: L(m).cholesky_ex(_spd(x), upper=True).L, [M], "LinalgCholeskyExBackward0"),
    "legacy_cholesky": (lambda m, x: m.cholesky(_spd(x), upper=True), [M], "CholeskyBackward0"),  # (deprecated in torch)
    "qr": (lambda m, x: L(m).qr(x), [R], "LinalgQrBackward0"),
    "qr_square": (lambda m, x: L(m).qr(x), [M2], "LinalgQrBackward0"),
    "eigh": (lambda m, x: (L(m).eigh(_sym(x)).eigenvalues, L(m).eigh(_sym(x)).eigenvectors ** 2), [M],
             "LinalgEighBackward0"),
    "eigh_upper": (lambda m, x: L(m).eigh(x, UPLO="U").eigenvalues, [M], "LinalgEighBackward0"),
    "eigvalsh": (lambda m, x: L(m).eigvalsh(x), [M], "LinalgEighBackward0"),
    "eigvals": (lambda m, x: L(m).eigvals(x).abs(), [M2], "AbsBackward0"),
    "eig": (lambda m, x: (L(m).eig(x).eigenvectors.abs(), L(m).eig(x).eigenvalues.real), [M], "AbsBackward0"),
    "svd": (lambda m, x: (L(m).svd(x, full_matrices=False).S, (L(m).svd(x, False).U[:, 0] *
                                                                L(m).svd(x, False).Vh[0, 0])), [R],
            "LinalgSvdBackward0"),
    "svd_full": (lambda m, x: L(m).svd(x).U[:, :3].abs(), [R], "AbsBackward0"),
    "svdvals": (lambda m, x: L(m).svdvals(x), [M2], "LinalgSvdBackward0"),
    "matrix_power": (lambda m, x: L(m).matrix_power(x, 5), [M], "MmBackward0"),
    "matrix_power_neg": (lambda m, x: L(m).matrix_power(x, -2), [M], "MmBackward0"),
    "matrix_power_0_1": (lambda m, x: L(m).matrix_power(x, 0) + L(m).matrix_power(x, 1), [M], "AddBackward0"),
    "matrix_exp": (lambda m, x: L(m).matrix_exp(x * 0.5), [M2], "LinalgMatrixExpBackward0"),
    "torch_matrix_functions": (lambda m, x: m.matrix_exp(x) + x.matrix_power(3) + m.pinverse(x) + x.pinverse(1e-3),
                               [M], "AddBackward0"),
    "cross": (lambda m, x, y: L(m).cross(x, y[:1]), [M2, M2], "LinalgCrossBackward0"),
    "multi_dot": (lambda m, a, b, v: L(m).multi_dot([v, a, b]), [M, B, V], "ViewBackward0"),
    "multi_dot_4": (lambda m, a, b, r: L(m).multi_dot([r, a, b, b.mT]), [M, B, R], "ViewBackward0"),
    "chain_matmul": (lambda m, a, b: m.chain_matmul(a, b, b.mT), [M, B], "ViewBackward0"),
    "householder_product": (lambda m, x, t: L(m).householder_product(x, t), [R, V[:2]],
                            "LinalgHouseholderProductBackward0"),
    "lu_factor": (lambda m, x: L(m).lu_factor(x).LU, [M2], "LinalgLuFactorExBackward0"),
    "lu": (lambda m, x: (L(m).lu(x).L, L(m).lu(x).U), [M], "LinalgLuBackward0"),
    "lu_solve": (lambda m, x, b: L(m).lu_solve(*L(m).lu_factor(x), b), [M, B], "LinalgLuSolveBackward0"),
    "lu_solve_adjoint": (lambda m, x, b: L(m).lu_solve(*L(m).lu_factor(x), b, adjoint=True), [M, B],
                         "LinalgLuSolveBackward0"),
    "lu_solve_right": (lambda m, x, b: L(m).lu_solve(*L(m).lu_factor(x), b.mT, left=False), [M, B],
                       "LinalgLuSolveBackward0"),
    "solve_triangular": (lambda m, x, b: L(m).solve_triangular(x, b, upper=True), [TRI, B],
                         "LinalgSolveTriangularBackward0"),
    "solve_triangular_lower_right": (lambda m, x, b: L(m).solve_triangular(x, b.mT, upper=False, left=False),
                                     [TRI.T.copy(), B], "LinalgSolveTriangularBackward0"),
    "solve_triangular_unit": (lambda m, x, b: L(m).solve_triangular(x, b, upper=True, unitriangular=True),
                              [TRI, B], "LinalgSolveTriangularBackward0"),
    "tensorinv": (lambda m, x: L(m).tensorinv(x.reshape(3, 1, 3), ind=2), [M], None),
    "tensorsolve": (lambda m, a, b: L(m).tensorsolve(a.reshape(3, 3), b), [M, V], "ViewBackward0"),
    "vander": (lambda m, x: L(m).vander(x, N=4), [V], "CatBackward0"),
    "vecdot": (lambda m, x, y: L(m).vecdot(x, y), [M, M2], "SumBackward1"),
    "norm": (lambda m, x: L(m).norm(x), [M2], "LinalgVectorNormBackward0"),
    "norm_nuc": (lambda m, x: L(m).norm(x, "nuc"), [M], "SumBackward1"),
    "norm_2": (lambda m, x: L(m).norm(x, 2, dim=(0, 2)), [M2], "AmaxBackward0"),
    "vector_norm": (lambda m, x: L(m).vector_norm(x, 3, dim=-1), [M2], "LinalgVectorNormBackward0"),
    "matrix_norm_fro": (lambda m, x: L(m).matrix_norm(x), [M2], "LinalgVectorNormBackward0"),
    "matrix_norm_1": (lambda m, x: L(m).matrix_norm(x, 1, keepdim=True), [M2], "AmaxBackward0"),
    "matrix_norm_inf": (lambda m, x: L(m).matrix_norm(x, -float("inf")), [M2], "AminBackward0"),
    "matrix_norm_-2": (lambda m, x: L(m).matrix_norm(x, -2, dim=(-1, -2)), [M2], "AminBackward0"),
    "torch_norm_nuc": (lambda m, x: m.norm(x, "nuc", dim=(1, 2)) + x.norm("fro", dim=(0, 1)).sum(), [M2],
                       "AddBackward0"),
    "cond": (lambda m, x: L(m).cond(x) + L(m).cond(x, -2), [M2], "AddBackward0"),
    "matmul_diagonal": (lambda m, x, y: L(m).diagonal(L(m).matmul(x, y), offset=1), [M2, M], "DiagonalBackward0"),
    "cdist": (lambda m, x, y: m.cdist(x, y), [R, M], "CdistBackward0"),
    "cdist_p1": (lambda m, x, y: m.cdist(x, y, p=1), [R, M], "CdistBackward0"),
    "cdist_p3_batched": (lambda m, x, y: m.cdist(x, y, p=3), [M2, R[None]], "CdistBackward0"),
    "cdist_mm": (lambda m, x, y: m.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), [M2, R[None]],
                 "ViewBackward0"),
    "cdist_mm_rows": (lambda m, x, y: m.cdist(x, y), [RNG.standard_normal((26, 3)), R], "ViewBackward0"),
    "cdist_inf": (lambda m, x, y: m.cdist(x, y, p=float("inf")), [R, M], "CdistBackward0"),
    "addbmm": (lambda m, s, a, b: m.addbmm(s, a, b, beta=0.5, alpha=2), [M, M2, M2], "AddbmmBackward0"),
    "addmv": (lambda m, s, a, v: m.addmv(s, a, v, beta=2, alpha=-1), [V, M, V], "AddmvBackward0"),
    "addr": (lambda m, s, a, b: m.addr(s, a, b, alpha=0.5), [M, V, V], "AddrBackward0"),
    "inplace_add": (lambda m, s, a, b, v: (s * 1).addr_(v, v, beta=0.5).addbmm_(b, b) + (v * 1).addmv_(a, v),
                    [M, M, M2, V], "AddBackward0"),
}
SECOND_ORDER = ["det", "slogdet", "inv", "solve", "cholesky", "eigh", "svd", "pinv", "matrix_exp", "lu_solve",
                "solve_triangular", "addbmm", "householder_product", "logdet", "eig", "qr", "lu_factor"]
COMPLEX = {"det", "inv", "solve", "slogdet_node", "svdvals", "matrix_exp", "addmv"}


def _run(lib, name, arrays, order=1, complex_=False, cases=CASES, dtype=None):
    """``cases[name]``'s function on leaves made from ``arrays`` (cast to ``dtype``; times 1 + 0.5j with
    ``complex_``): (its output, [its floating outputs, their gradients (create_graph for ``order`` 2), the second-order
    gradients])."""
    fn, _, _ = cases[name]
    xs = [lib.tensor(a if dtype is None else a.astype(dtype), requires_grad=True) for a in arrays]
    ins = [x * (1 + 0.5j) if complex_ else x for x in xs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, *ins)
    outs = list(out) if isinstance(out, tuple) else [out]
    outs = [o for o in outs if o.dtype.is_floating_point or o.dtype.is_complex]
    cots = [lib.tensor(np.random.default_rng(k).standard_normal(tuple(o.shape)) * (1 + (0.3j if o.is_complex() else 0)))
            .to(o.dtype) for k, o in enumerate(outs)]
    grads = lib.autograd.grad(outs, xs, cots, create_graph=order > 1, allow_unused=True)
    result = [outs, grads]
    if order > 1:
        ws = [lib.tensor(np.random.default_rng(10 + k).standard_normal(tuple(g.shape))) for k, g in enumerate(grads)]
        used = [(g * w).sum() for g, w in zip(grads, ws) if g is not None and g.requires_grad]
        result.append(lib.autograd.grad(sum(used), xs, allow_unused=True) if used else None)
    return out, result


@pytest.mark.parametrize("name", CASES)
def test_values_grads_and_node_names(name):
    _, arrays, node = CASES[name]
    out, ours = _run(tl, name, arrays)
    expected_out, theirs = _run(torch, name, arrays)
    first = out[0] if isinstance(out, tuple) else out
    if node is not None:
        assert first.grad_fn.name() == node == (expected_out[0] if isinstance(expected_out, tuple)
                                                else expected_out).grad_fn.name()
    if hasattr(expected_out, "_fields"):
        assert type(out).__name__ == type(expected_out).__name__ and out._fields == tuple(expected_out._fields)
    if name == "det_singular":  # torch's gradient at an exactly singular matrix depends on its LAPACK's last pivot
        cot = float(ours[0][0].detach().numpy()) * 0 + np.random.default_rng(0).standard_normal(())  # (a rounding
        cof = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(SINGULAR, i, 0), j, 1))  # 0 on some
                         for j in range(3)] for i in range(3)])  # CPUs); d det / dA is the cofactor matrix
        np.testing.assert_allclose(ours[1][0].numpy(), cot * cof, **TOL)
        ours, theirs = ours[:1], theirs[:1]
    for a, b in zip(ours, theirs):
        assert_same(list(a), list(b), **TOL)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    _, ours = _run(tl, name, CASES[name][1], order=2)
    _, theirs = _run(torch, name, CASES[name][1], order=2)
    assert_same(list(ours[2]), list(theirs[2]), rtol=1e-6, atol=1e-8)


def test_cdist_has_no_second_derivative():
    """As torch: under create_graph cdist's gradients come from CdistBackwardBackward0, whose backward raises."""
    errors = []
    for m in (tl, torch):
        x, y = m.tensor(R, requires_grad=True), m.tensor(M, requires_grad=True)
        g = m.autograd.grad(m.cdist(x, y).sum(), (x, y), create_graph=True)
        assert g[0].grad_fn.name() == "CdistBackwardBackward0"
        with pytest.raises(NotImplementedError) as e:
            m.autograd.grad(g[0].sum(), x)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex_inputs(name):
    _, ours = _run(tl, name, CASES[name][1], complex_=True)
    _, theirs = _run(torch, name, CASES[name][1], complex_=True)
    for a, b in zip(ours, theirs):
        assert_same(list(a), list(b), **TOL)


def test_float32_and_structure():
    for m in (tl, torch):
        x = m.tensor(M2.astype(np.float32))
        r = m.linalg.inv_ex(x)
        assert str(r.info.dtype).endswith("int32") and tuple(r.info.shape) == (2,)
    a, b = tl.tensor(M2.astype(np.float32)), torch.tensor(M2.astype(np.float32))
    assert_same(tl.linalg.det(a), torch.linalg.det(b))
    assert_same(tl.linalg.svd(a).S, torch.linalg.svd(b).S)
    assert_same(tl.linalg.lu_factor_ex(a), torch.linalg.lu_factor_ex(b))
    assert_same(tl.linalg.lu(a), torch.linalg.lu(b))
    assert_same(tl.linalg.qr(a, mode="complete"), torch.linalg.qr(b, mode="complete"), atol=1e-5)
    assert_same(tl.linalg.qr(a, mode="r"), torch.linalg.qr(b, mode="r"), atol=1e-5)
    assert_same(tl.linalg.matrix_rank(tl.tensor(SINGULAR)), torch.linalg.matrix_rank(torch.tensor(SINGULAR)))
    assert_same(tl.linalg.matrix_rank(a, hermitian=True), torch.linalg.matrix_rank(b, hermitian=True))
    assert_same(tl.linalg.cond(a, "fro"), torch.linalg.cond(b, "fro"), rtol=1e-5)
    assert_same(tl.linalg.lstsq(tl.tensor(R), tl.tensor(B[:1].T.repeat(4, 0)[:4])),
                torch.linalg.lstsq(torch.tensor(R), torch.tensor(B[:1].T.repeat(4, 0)[:4])))


def _outcome(fn, lib, whole=False):
    """(exception type, its message's first line (``whole``: all of it)) or ("ok", the last result's values (``whole``:
    every result's))."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e).__name__, str(e) if whole else str(e).split("\n")[0]
    values = [np.asarray(t.detach().numpy()).tolist() for t in (r if isinstance(r, tuple) else (r,))]
    return "ok", values if whole else values[-1]


def _qr_backward(m, mode, a):
    x = m.tensor(a, requires_grad=True)
    q, r = m.linalg.qr(x, mode=mode)
    return m.autograd.grad(r.sum() + (q.sum() if q.numel() else 0), x)


ERRORS = {
    "inv_singular": lambda m: m.linalg.inv(m.tensor(SINGULAR)),
    "inv_singular_batch": lambda m: m.linalg.inv(m.tensor(np.stack([np.eye(3), SINGULAR]))),
    "inverse_singular": lambda m: m.inverse(m.tensor(SINGULAR)),
    "inv_ex_info": lambda m: m.linalg.inv_ex(m.tensor(np.stack([np.eye(3), SINGULAR]))),
    "inv_ex_check": lambda m: m.linalg.inv_ex(m.tensor(SINGULAR), check_errors=True),
    "inv_1d": lambda m: m.linalg.inv(m.tensor(V)),
    "inv_nonsquare": lambda m: m.linalg.inv(m.tensor(R)),
    "inv_int": lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.int64)),
    "inv_half": lambda m: m.linalg.inv(m.ones(3, 3, dtype=m.float16)),
    "det_nonsquare": lambda m: m.det(m.tensor(R)),
    "logdet_int": lambda m: m.logdet(m.ones(3, 3, dtype=m.int64)),
    "slogdet_1d": lambda m: m.linalg.slogdet(m.tensor(V)),
    "cholesky_not_pd": lambda m: m.linalg.cholesky(m.tensor(NOT_PD)),
    "cholesky_batch": lambda m: m.linalg.cholesky(m.tensor(np.stack([np.eye(3), SINGULAR]))),
    "cholesky_ex_info": lambda m: m.linalg.cholesky_ex(m.tensor(np.stack([np.eye(3), NOT_PD]))),
    "solve_singular": lambda m: m.linalg.solve(m.tensor(SINGULAR), m.tensor(B)),
    "solve_ex_info": lambda m: m.linalg.solve_ex(m.tensor(SINGULAR), m.tensor(B)),
    "solve_dtypes": lambda m: m.linalg.solve(m.tensor(M, dtype=m.float32), m.tensor(B)),
    "lu_factor_singular": lambda m: m.linalg.lu_factor(m.tensor(np.stack([np.eye(3), SINGULAR]))),
    "lu_factor_ex_info": lambda m: m.linalg.lu_factor_ex(m.tensor(SINGULAR)),
    "lu_no_pivot": lambda m: m.linalg.lu_factor(m.tensor(M), pivot=False),
    "lu_int": lambda m: m.linalg.lu(m.ones(3, 3, dtype=m.int64)),
    "eig_int": lambda m: m.linalg.eig(m.ones(3, 3, dtype=m.int64)),
    "eigh_uplo": lambda m: m.linalg.eigh(m.tensor(M), UPLO="x"),
    "eigh_int": lambda m: m.linalg.eigvalsh(m.ones(3, 3, dtype=m.int64)),
    "svd_1d": lambda m: m.linalg.svdvals(m.tensor(V)),
    "qr_mode": lambda m: m.linalg.qr(m.tensor(M), mode="x"),
    "pinv_int": lambda m: m.linalg.pinv(m.ones(3, 3, dtype=m.int64)),
    "matrix_norm_ord": lambda m: m.linalg.matrix_norm(m.tensor(M), 3),
    "norm_3d": lambda m: m.linalg.norm(m.tensor(M2), 2),
    "norm_dims": lambda m: m.linalg.norm(m.tensor(M2), dim=(0, 1, 2)),
    "matrix_norm_dims": lambda m: m.linalg.matrix_norm(m.tensor(M2), dim=(0,)),
    "matrix_norm_dim_range": lambda m: m.linalg.matrix_norm(m.tensor(M), dim=(0, 5)),
    "torch_norm_nuc_3d": lambda m: m.norm(m.tensor(M2), "nuc"),
    "matrix_power_float": lambda m: m.linalg.matrix_power(m.tensor(M), 1.5),
    "matrix_rank_1d": lambda m: m.linalg.matrix_rank(m.tensor(V)),
    "multi_dot_one": lambda m: m.linalg.multi_dot([m.tensor(M)]),
    "cross_length": lambda m: m.linalg.cross(m.tensor(R[:, :2]), m.tensor(R[:, :2])),
    "vecdot_dtypes": lambda m: m.linalg.vecdot(m.tensor(V), m.tensor(V, dtype=m.float32)),
    "vander_n": lambda m: m.linalg.vander(m.tensor(V), N=1),
    "tensorinv_ind": lambda m: m.linalg.tensorinv(m.tensor(M), 0),
    "solve_triangular_int": lambda m: m.linalg.solve_triangular(m.ones(3, 3, dtype=m.int64), m.ones(3, 1),
                                                                upper=True),
    "qr_r_backward": lambda m: _qr_backward(m, "r", M),
    "qr_complete_backward": lambda m: _qr_backward(m, "complete", R),
    "det_arg_type": lambda m: m.linalg.det("a"),
    "solve_keyword": lambda m: m.linalg.solve(m.tensor(M), m.tensor(B), foo=1),
    "addmv_sizes": lambda m: m.addmv(m.tensor(V), m.tensor(R), m.tensor(V)),
    "addr_1d": lambda m: m.addr(m.tensor(M), m.tensor(M), m.tensor(V)),
    "addbmm_batches": lambda m: m.addbmm(m.tensor(M), m.tensor(M2), m.tensor(M2[:1])),
    "cdist_columns": lambda m: m.cdist(m.tensor(R), m.tensor(B)),
    "cdist_mode": lambda m: m.cdist(m.tensor(M), m.tensor(M), compute_mode="x"),
    "lu_solve_shape": lambda m: m.linalg.lu_solve(*m.linalg.lu_factor(m.tensor(M)), m.tensor(R)),
    "lu_solve_pivots": lambda m: m.linalg.lu_solve(m.tensor(M), m.ones(3, dtype=m.int64), m.tensor(M)),
    "solve_triangular_shape": lambda m: m.linalg.solve_triangular(m.tensor(TRI), m.tensor(R), upper=True),
    "solve_triangular_dtypes": lambda m: m.linalg.solve_triangular(m.tensor(TRI), m.tensor(B, dtype=m.float32),
                                                                   upper=True).mul(1e9).round(),  # (BLAS's
    # last bit differs between CPUs)
    "householder_tau": lambda m: m.linalg.householder_product(m.tensor(R), m.tensor(M)),
    "addbmm_dtypes": lambda m: m.addbmm(m.tensor(M), m.ones(2, 3, 3), m.ones(2, 3, 3)),
    "cross_dtypes": lambda m: m.linalg.cross(m.tensor(M), m.tensor(M, dtype=m.float32)),
    "vander_0d": lambda m: m.linalg.vander(m.tensor(1.0)),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name):
    ours, theirs = _outcome(ERRORS[name], tl), _outcome(ERRORS[name], torch)
    assert ours == theirs


def test_out_arguments():
    for m in (tl, torch):
        o = m.empty(3, 3, dtype=m.float64)
        assert m.linalg.inv(m.tensor(M), out=o) is o
        s, ld = m.empty(0, dtype=m.float64), m.empty(0, dtype=m.float64)
        r = m.linalg.slogdet(m.tensor(M), out=(s, ld))
        assert r.sign is s and type(r).__name__ == "linalg_slogdet_out"
    assert_same(o, torch.linalg.inv(torch.tensor(M)))
    outcomes = [_outcome(lambda m: m.linalg.inv(m.tensor(M, requires_grad=True), out=m.empty(3, 3, dtype=m.float64)),
                         lib) for lib in (tl, torch)]
    assert outcomes[0] == outcomes[1]


def test_linalg_error_class():
    assert issubclass(tl.linalg.LinAlgError, RuntimeError) and tl.linalg.LinAlgError is tl._C._LinAlgError
    with pytest.raises(tl.linalg.LinAlgError):
        tl.linalg.cholesky(tl.tensor(NOT_PD))
    assert tl.linalg.det.__name__ == torch.linalg.det.__name__ == "linalg_det"


def test_ex_variants_do_not_check():
    """The *_ex variants return info without raising (and without reading it on the host)."""
    r = tl.linalg.cholesky_ex(tl.tensor(NOT_PD))
    assert int(r.info) == 2
    r = tl.linalg.solve_ex(tl.tensor(SINGULAR), tl.tensor(V))
    assert int(r.info) == 3 and tuple(r.info.shape) == ()


def test_forward_ad():
    """Tangents through the table entries (jax.jvp of their forwards) equal torch's."""
    results = []
    for m in (tl, torch):
        fw = m.autograd.forward_ad
        with fw.dual_level():
            x = fw.make_dual(m.tensor(M), m.tensor(SYM))
            outs = [m.linalg.det(x), m.linalg.inv(x), m.linalg.svdvals(x), m.linalg.solve(x, x[:, :1]),
                    m.addmv(x[0], x, x[1]), m.linalg.eigvalsh(x + x.mT), m.linalg.matrix_exp(x)]
            results.append([fw.unpack_dual(o).tangent for o in outs])
    assert_same(results[0], results[1], **TOL)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c[2] and c[2].startswith(("Linalg", "Cdist"))])
def test_saved_attributes_are_torchs(name):
    """The nodes show torch's _saved_* names (hidden outputs such as LU and pivots are recomputed when read), and
    the values torch saves as tensors equal torch's."""
    fn, arrays, _ = CASES[name]
    nodes = []
    for m in (tl, torch):
        out = fn(m, *[m.tensor(a, requires_grad=True) for a in arrays])
        nodes.append((out[0] if isinstance(out, tuple) else out).grad_fn)
    names = [sorted(a for a in dir(n) if a.startswith("_saved_")) for n in nodes]
    assert names[0] == names[1]
    if name == "det_singular":  # (an exactly singular matrix: the LAPACK's last pivots are rounding)
        return
    for a in names[1]:
        ours, theirs = getattr(nodes[0], a), getattr(nodes[1], a)
        if isinstance(theirs, torch.Tensor) and a not in ("_saved_U", "_saved_Vh", "_saved_eigenvectors"):
            assert_same(ours, theirs, **TOL)
        elif not isinstance(theirs, torch.Tensor):
            assert ours == theirs, a
