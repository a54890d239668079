"""torch's linear-algebra functions outside torch.linalg (cholesky_solve, cholesky_inverse, lu, lu_solve, lu_unpack,
triangular_solve, geqrf, orgqr, ormqr, nuclear_norm, frobenius_norm, svd_lowrank, pca_lowrank), their Tensor methods,
and the stubs of the ones torch 2.x removed (matrix_rank, solve, lstsq, eig, symeig), against torch 2.13 on the same
NumPy inputs: values, result types (torch.return_types), node names and saved attributes, first- and second-order
gradients (float64, float32, complex, batched and broadcast inputs), warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, compare_graph
import test_linalg_module as LM

RNG = np.random.default_rng(23)
M = RNG.standard_normal((3, 3))                       # a general 3x3
M2 = RNG.standard_normal((2, 3, 3))                   # a batch of two
R = RNG.standard_normal((4, 3))                       # tall
B = RNG.standard_normal((3, 2))
B2 = RNG.standard_normal((2, 3, 2))
LOW = np.tril(M) + 3 * np.eye(3)                      # a Cholesky factor (positive diagonal), and batches of them
LOW2 = np.tril(M2) + 3 * np.eye(3)
_GQ = torch.geqrf(torch.tensor(M))                    # geqrf's (a, tau) of M and of R, as inputs of orgqr / ormqr
GA, GT = _GQ.a.numpy(), _GQ.tau.numpy()
_GR = torch.geqrf(torch.tensor(R))
RA, RT = _GR.a.numpy(), _GR.tau.numpy()
LU, PIVOTS = (t.numpy() for t in torch.linalg.lu_factor(torch.tensor(M2)))
LOWRANK = RNG.standard_normal((4, 2)) @ RNG.standard_normal((2, 3))   # rank 2
SINGULAR = np.array([[1., 2, 3], [2, 4, 6], [1, 1, 1]])
TOL = dict(rtol=1e-7, atol=1e-9)


def _lu(m, x):
    return m.linalg.lu_factor(x)


def _factor(m, x):
    """A Cholesky factor (a real diagonal: LAPACK's potri reads only its real part) from a complex x."""
    return x.tril(-1) + x.diagonal(0, -2, -1).real.diag_embed() if x.is_complex() else x


# name -> (fn(lib, *xs), input arrays, node name of the first output); every input requires grad
CASES = {
    "cholesky_solve": (lambda m, b, u: m.cholesky_solve(b, u), [B, LOW], "CholeskySolveBackward0"),
    "cholesky_solve_upper": (lambda m, b, u: m.cholesky_solve(b, u.mT, upper=True), [B, LOW],
                             "CholeskySolveBackward0"),
    "cholesky_solve_broadcast": (lambda m, b, u: b.cholesky_solve(u), [B2, LOW], "CholeskySolveBackward0"),
    "cholesky_solve_batched": (lambda m, b, u: m.cholesky_solve(b, u, True), [B, LOW2], "CholeskySolveBackward0"),
    "cholesky_inverse": (lambda m, u: m.cholesky_inverse(u), [LOW], "CholeskyInverseBackward0"),
    "cholesky_inverse_upper": (lambda m, u: _factor(m, u).mT.cholesky_inverse(upper=True), [LOW2],
                               "CholeskyInverseBackward0"),
    "lu": (lambda m, a: m.lu(a)[0], [M2], "LinalgLuFactorExBackward0"),
    "lu_method": (lambda m, a: a.lu(get_infos=True)[0], [R], "LinalgLuFactorExBackward0"),
    "lu_solve": (lambda m, b, a: m.lu_solve(b, *m.lu(a)), [B2, M], "LinalgLuSolveBackward0"),
    "lu_solve_method": (lambda m, b, a: b.lu_solve(*_lu(m, a)), [B, M2], "LinalgLuSolveBackward0"),
    "lu_unpack": (lambda m, a: m.lu_unpack(*_lu(m, a))[1:], [M2], "LuUnpackBackward0"),
    "lu_unpack_tall": (lambda m, a: tuple(m.lu_unpack(*_lu(m, a), unpack_pivots=False))[1:], [R],
                       "LuUnpackBackward0"),
    "lu_unpack_wide": (lambda m, a: m.lu_unpack(*_lu(m, a.mT)).U, [R], "LuUnpackBackward0"),
    "lu_unpack_leaf": (lambda m, lu: m.lu_unpack(lu, m.tensor(PIVOTS))[1:], [LU], "LuUnpackBackward0"),
    "triangular_solve": (lambda m, b, a: m.triangular_solve(b, a), [B, LOW.T.copy()], "TriangularSolveBackward0"),
    "triangular_solve_both": (lambda m, b, a: tuple(m.triangular_solve(b, a, upper=False, transpose=True)), [B2, LOW],
                              "TriangularSolveBackward0"),
    "triangular_solve_unit": (lambda m, b, a: b.triangular_solve(a, False, unitriangular=True).solution, [B, M2],
                              "TriangularSolveBackward0"),
    "orgqr": (lambda m, a, t: m.orgqr(a, t), [RA, RT], "LinalgHouseholderProductBackward0"),
    "ormqr": (lambda m, a, t, c: m.ormqr(a, t, c), [GA, GT, B], "OrmqrBackward0"),
    "ormqr_right_transpose": (lambda m, a, t, c: a.ormqr(t, c.mT, left=False, transpose=True), [GA, GT, B],
                              "OrmqrBackward0"),
    "ormqr_tall": (lambda m, a, t, c: m.ormqr(a, t, c, transpose=True), [RA, RT, R[:, :2]], "OrmqrBackward0"),
    "nuclear_norm": (lambda m, a: m.nuclear_norm(a), [M2], "SumBackward1"),
    "nuclear_norm_dim": (lambda m, a: m.nuclear_norm(a, (0, 2), keepdim=True), [M2], "PermuteBackward0"),
    "frobenius_norm": (lambda m, a: m.frobenius_norm(a, (0, -1)), [M2], "NormBackward1"),
    "frobenius_norm_keepdim": (lambda m, a: m.frobenius_norm(a, 1, True), [R], "NormBackward1"),
}
SECOND_ORDER = ["cholesky_solve", "cholesky_solve_upper", "cholesky_inverse", "lu_unpack", "lu_unpack_tall",
                "triangular_solve", "triangular_solve_both", "triangular_solve_unit", "ormqr", "ormqr_right_transpose",
                "lu_solve", "frobenius_norm"]
COMPLEX = ["cholesky_solve", "cholesky_inverse_upper", "triangular_solve_both", "ormqr_right_transpose",
           "lu_unpack"]


def _run(lib, name, order=1, complex_=False, dtype=None):
    return LM._run(lib, name, CASES[name][1], order, complex_, CASES, dtype)


@pytest.mark.parametrize("name", CASES)
def test_values_grads_and_node_names(name):
    out, ours = _run(tl, name)
    expected, theirs = _run(torch, name)
    first, tfirst = (out[0], expected[0]) if isinstance(out, tuple) else (out, expected)
    assert first.grad_fn.name() == CASES[name][2] == tfirst.grad_fn.name()
    assert type(out).__name__ == type(expected).__name__
    if hasattr(expected, "_fields"):
        assert out._fields == tuple(expected._fields)
    for a, b in zip(ours, theirs):
        assert_same(list(a), list(b), **TOL)


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    _, ours = _run(tl, name, order=2)
    _, theirs = _run(torch, name, order=2)
    assert_same(list(ours[2]), list(theirs[2]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_inputs(name):
    _, ours = _run(tl, name, complex_=True)
    _, theirs = _run(torch, name, complex_=True)
    for a, b in zip(ours, theirs):
        assert_same(list(a), list(b), **TOL)


@pytest.mark.parametrize("name", ["cholesky_solve_broadcast", "cholesky_inverse", "triangular_solve_both", "ormqr",
                                  "lu_unpack", "lu_solve"])
def test_float32(name):
    _, ours = _run(tl, name, dtype=np.float32)
    _, theirs = _run(torch, name, dtype=np.float32)
    for a, b in zip(ours, theirs):
        assert_same(list(a), list(b), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cholesky_solve_broadcast", "cholesky_inverse_upper", "triangular_solve_both",
                                  "ormqr_right_transpose", "lu_unpack_leaf", "frobenius_norm"])
def test_graphs_and_saved_attributes(name):
    """The whole graph below the first output, with every _saved_* attribute torch shows."""
    fn, arrays, _ = CASES[name]
    outs = []
    for m in (tl, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn(m, *[m.tensor(a, requires_grad=True) for a in arrays])
        outs.append(out[0] if isinstance(out, tuple) else out)
    compare_graph(outs[0].grad_fn, outs[1].grad_fn)


def test_results_without_gradients():
    """geqrf (LAPACK's values), lu's tuples and infos, lu_unpack's P and its empty parts, triangular_solve's
    broadcast coefficient, the norms' values, on float32, float64, complex and batched inputs."""
    for arr in (M, R, R.T.copy(), M2, (M + 1j * M2[0]).astype(np.complex64), R.astype(np.float32)):
        assert_same(tl.geqrf(tl.tensor(arr)), torch.geqrf(torch.tensor(arr)), rtol=1e-5, atol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = tl.lu(tl.tensor(SINGULAR), get_infos=True), torch.lu(torch.tensor(SINGULAR), get_infos=True)
        assert type(ours).__name__ == type(theirs).__name__ == "_lu_with_info"
        assert_same(ours, theirs)  # (no error for a singular matrix: torch.lu never checks)
        for m in (tl, torch):
            r = m.tensor(M2).lu(get_infos=True)
            assert type(r) is tuple and len(r) == 3 and type(m.lu(m.tensor(M))) is tuple
        ours = tl.lu_unpack(*tl.linalg.lu_factor(tl.tensor(M)), unpack_data=False)
        theirs = torch.lu_unpack(*torch.linalg.lu_factor(torch.tensor(M)), unpack_data=False)
        assert_same(ours, theirs)
        ours = tl.lu_unpack(tl.tensor(M2.astype(np.float32)), tl.tensor([[1, 3, 3], [2, 2, 3]], dtype=tl.int32))
        theirs = torch.lu_unpack(torch.tensor(M2.astype(np.float32)), torch.tensor([[1, 3, 3], [2, 2, 3]],
                                                                                     dtype=torch.int32))
        assert_same(ours, theirs)
        assert_same(tl.nuclear_norm(tl.tensor(M), keepdim=True), torch.nuclear_norm(torch.tensor(M), keepdim=True))
        assert_same(tl.frobenius_norm(tl.tensor(M2), ()), torch.frobenius_norm(torch.tensor(M2), ()))


def test_lowrank_factorizations():
    """svd_lowrank and pca_lowrank of a rank-2 matrix with q >= 2 are exact: the singular values, the product U S V^H
    and the gradients of functions of them equal torch's (the random projection is torchlike's own draw)."""
    results = []
    for m in (tl, torch):
        m.manual_seed(0)
        a = m.tensor(LOWRANK, requires_grad=True)
        U, S, V = m.svd_lowrank(a, q=3)
        Uw, Sw, Vw = m.svd_lowrank(a.mT, q=2, niter=1)
        Up, Sp, Vp = m.pca_lowrank(a, q=2)
        Un, Sn, Vn = m.pca_lowrank(a, center=False)
        prods = [U @ S.diag_embed() @ V.mT, Uw @ Sw.diag_embed() @ Vw.mT, Up @ Sp.diag_embed() @ Vp.mT]
        loss = sum((p * p).sum() for p in prods) + S[:2].sum() + Sp.sum() + (Sn[:2] ** 2).sum()
        results.append([S[:2], Sw, Sp, Sn[:2], *prods, *m.autograd.grad(loss, a)])
        assert [t.grad_fn.name() for t in (U, S, V)] == ["MmBackward0", "LinalgSvdBackward0", "TransposeBackward0"]
    assert_same(results[0], results[1], rtol=1e-7, atol=1e-8)


def _backward(m, fn, *arrays):
    xs = [m.tensor(a, requires_grad=True) for a in arrays]
    return m.autograd.grad(fn(m, *xs).sum(), xs)


_I = np.ones((3, 3), np.int64)
ERRORS = {
    "cholesky_solve_1d": lambda m: m.cholesky_solve(m.tensor(B[:, 0]), m.tensor(LOW)),
    "cholesky_solve_1d_u": lambda m: m.cholesky_solve(m.tensor(B), m.tensor(LOW[0])),
    "cholesky_solve_dtypes": lambda m: m.cholesky_solve(m.tensor(B), m.tensor(LOW, dtype=m.float32)),
    "cholesky_solve_square": lambda m: m.cholesky_solve(m.tensor(B), m.tensor(R)),
    "cholesky_solve_sizes": lambda m: m.cholesky_solve(m.tensor(R), m.tensor(LOW)),
    "cholesky_solve_int": lambda m: m.cholesky_solve(m.tensor(_I), m.tensor(_I)),
    "cholesky_solve_batch": lambda m: m.cholesky_solve(m.tensor(B2), m.tensor(np.stack([LOW] * 3))),
    "cholesky_inverse_1d": lambda m: m.cholesky_inverse(m.tensor(B[:, 0])),
    "cholesky_inverse_square": lambda m: m.cholesky_inverse(m.tensor(R)),
    "cholesky_inverse_half": lambda m: m.cholesky_inverse(m.ones(3, 3, dtype=m.float16)),
    "cholesky_inverse_singular": lambda m: m.cholesky_inverse(m.tensor(np.diag([1.0, 0, 0])), upper=True),
    "cholesky_inverse_singular_batch": lambda m: m.cholesky_inverse(m.tensor(np.stack([LOW, np.diag([1., 2, 0])]))),
    "lu_1d": lambda m: m.lu(m.tensor(B[:, 0])),
    "lu_int": lambda m: m.lu(m.tensor(_I)),
    "lu_no_pivot": lambda m: m.lu(m.tensor(M), pivot=False),
    "lu_out_size": lambda m: m.lu(m.tensor(M), out=(m.empty(0, dtype=m.float64),)),
    "lu_out_infos_size": lambda m: m.lu(m.tensor(M), get_infos=True, out=(m.empty(0, dtype=m.float64),)),
    "lu_solve_1d": lambda m: m.lu_solve(m.tensor(B[:, 0]), *_lu(m, m.tensor(M))),
    "lu_solve_shape": lambda m: m.lu_solve(m.tensor(R), *_lu(m, m.tensor(M))),
    "lu_solve_pivots_dtype": lambda m: m.lu_solve(m.tensor(B), m.tensor(M), m.ones(3, dtype=m.int64)),
    "lu_solve_dtypes": lambda m: m.lu_solve(m.tensor(B, dtype=m.float32), *_lu(m, m.tensor(M))),
    "lu_solve_pivots_count": lambda m: m.lu_solve(m.tensor(B), m.tensor(M), m.ones(2, dtype=m.int32)),
    "lu_solve_pivots_batch": lambda m: m.lu_solve(m.tensor(B), m.tensor(M2), m.ones(3, 3, dtype=m.int32)),
    "lu_solve_pivot_values": lambda m: m.lu_solve(m.tensor(B), m.tensor(M), m.tensor([5, 1, 1], dtype=m.int32)),
    "lu_solve_pivot_zero": lambda m: m.lu_solve(m.tensor(B), m.tensor(M), m.tensor([0, 1, 1], dtype=m.int32)),
    "lu_solve_int": lambda m: m.lu_solve(m.tensor(_I[:, :2]), m.tensor(_I), m.ones(3, dtype=m.int32)),
    "lu_solve_square": lambda m: m.lu_solve(m.tensor(B), m.tensor(R), m.ones(3, dtype=m.int32)),
    "lu_solve_batch": lambda m: m.lu_solve(m.tensor(np.stack([B] * 3)), m.tensor(M2), m.ones(2, 3, dtype=m.int32)),
    "lu_solve_half": lambda m: m.lu_solve(m.ones(3, 2, dtype=m.float16), m.ones(3, 3, dtype=m.float16),
                                          m.ones(3, dtype=m.int32)),
    "linalg_lu_solve_1d": lambda m: m.linalg.lu_solve(*_lu(m, m.tensor(M)), m.tensor(B[:, 0])),
    "linalg_lu_solve_LU_1d": lambda m: m.linalg.lu_solve(m.tensor(B[:, 0]), m.ones(3, dtype=m.int32), m.tensor(B)),
    "lu_factor_ex_check": lambda m: m.linalg.lu_factor_ex(m.tensor(SINGULAR), check_errors=True),
    "lu_unpack_1d": lambda m: m.lu_unpack(m.tensor(B[:, 0]), m.ones(3, dtype=m.int32)),
    "lu_unpack_pivots_dtype": lambda m: m.lu_unpack(m.tensor(M), m.ones(3, dtype=m.int64)),
    "lu_unpack_pivot_values": lambda m: m.lu_unpack(m.tensor(M), m.tensor([5, 1, 1], dtype=m.int32)),
    "lu_unpack_no_pivots": lambda m: m.lu_unpack(m.tensor(M), m.tensor([7, 1, 1]), unpack_pivots=False),
    "lu_unpack_no_data_backward": lambda m: _backward(m, lambda k, a: k.lu_unpack(*_lu(k, a), unpack_data=False).L, M),
    "triangular_solve_1d": lambda m: m.triangular_solve(m.tensor(B[:, 0]), m.tensor(M)),
    "triangular_solve_1d_A": lambda m: m.triangular_solve(m.tensor(B), m.tensor(B[:, 0])),
    "triangular_solve_square": lambda m: m.triangular_solve(m.tensor(B), m.tensor(R)),
    "triangular_solve_sizes": lambda m: m.triangular_solve(m.tensor(R), m.tensor(M)),
    "triangular_solve_dtypes": lambda m: m.triangular_solve(m.tensor(B), m.tensor(M, dtype=m.float32)),
    "triangular_solve_half": lambda m: m.triangular_solve(m.ones(3, 2, dtype=m.float16), m.ones(3, 3, dtype=m.float16)),
    "geqrf_1d": lambda m: m.geqrf(m.tensor(B[:, 0])),
    "geqrf_int": lambda m: m.tensor(_I).geqrf(),
    "geqrf_backward": lambda m: _backward(m, lambda k, a: k.geqrf(a).a, M),
    "orgqr_tau": lambda m: m.orgqr(m.tensor(R), m.tensor(M)),
    "orgqr_wide": lambda m: m.orgqr(m.tensor(R.T), m.tensor(RT[:2])),
    "ormqr_1d": lambda m: m.ormqr(m.tensor(GT), m.tensor(GT), m.tensor(B)),
    "ormqr_other_1d": lambda m: m.ormqr(m.tensor(GA), m.tensor(GT), m.tensor(GT)),
    "ormqr_rows": lambda m: m.ormqr(m.tensor(GA), m.tensor(GT), m.tensor(R)),
    "ormqr_columns": lambda m: m.ormqr(m.tensor(GA), m.tensor(GT), m.tensor(R.T), left=False),
    "ormqr_tau_size": lambda m: m.ormqr(m.tensor(RA), m.tensor(GT[:2]), m.tensor(R.T), left=False),
    "ormqr_tau_0d": lambda m: m.ormqr(m.tensor(RA), m.tensor(1.0, dtype=m.float64), m.tensor(R)),
    "ormqr_tau_ndim": lambda m: m.ormqr(m.tensor(GA), m.tensor(GA), m.tensor(B)),
    "ormqr_other_ndim": lambda m: m.ormqr(m.tensor(GA), m.tensor(GT), m.tensor(B2)),
    "ormqr_tau_batch": lambda m: m.ormqr(m.tensor(M2), m.tensor(M), m.tensor(B2)),
    "ormqr_other_batch": lambda m: m.ormqr(m.tensor(M2), m.tensor(M2[:, 0]), m.tensor(np.stack([B] * 3))),
    "ormqr_dtypes": lambda m: m.ormqr(m.tensor(GA), m.tensor(GT, dtype=m.float32), m.tensor(B)),
    "ormqr_other_dtype": lambda m: m.ormqr(m.tensor(GA), m.tensor(GT), m.tensor(B, dtype=m.float32)),
    "ormqr_int": lambda m: m.ormqr(m.tensor(_I), m.ones(3, dtype=m.int64), m.tensor(_I)),
    "nuclear_norm_1d": lambda m: m.nuclear_norm(m.tensor(GT)),
    "nuclear_norm_dim": lambda m: m.nuclear_norm(m.tensor(M2), (0,)),
    "nuclear_norm_int": lambda m: m.nuclear_norm(m.tensor(_I)),
    "frobenius_norm_dims": lambda m: m.frobenius_norm(m.tensor(M), (0, 1, 1)),
    "frobenius_norm_repeat": lambda m: m.frobenius_norm(m.tensor(M), (0, 0)),
    "frobenius_norm_range": lambda m: m.frobenius_norm(m.tensor(M), (0, 5)),
    "frobenius_norm_int": lambda m: m.frobenius_norm(m.tensor(_I), (0, 1)),
    "pca_lowrank_q": lambda m: m.pca_lowrank(m.tensor(M), q=5),
    "pca_lowrank_niter": lambda m: m.pca_lowrank(m.tensor(M), niter=-1),
    "svd_lowrank_1d": lambda m: m.svd_lowrank(m.tensor(GT)),
    "svd_lowrank_int": lambda m: m.svd_lowrank(m.tensor(_I), q=2),
    "pca_lowrank_int": lambda m: m.pca_lowrank(m.tensor(_I), q=2),
    **{f"removed_{n}": (lambda m, n=n: getattr(m, n)(m.tensor(M), m.tensor(M)) if n in ("solve", "lstsq")
                        else getattr(m, n)(m.tensor(M))) for n in ("matrix_rank", "solve", "lstsq", "eig", "symeig")},
    **{f"removed_method_{n}": (lambda m, n=n: getattr(m.tensor(M), n)(m.tensor(M)) if n in ("solve", "lstsq")
                               else getattr(m.tensor(M), n)(True)) for n in ("solve", "lstsq", "eig", "symeig")},
    "removed_symeig_arguments": lambda m: m.symeig(m.tensor(M), True, True, True),
    "removed_eig_method_arguments": lambda m: m.tensor(M).eig(True, True),
    "removed_method_matrix_rank": lambda m: m.tensor(M).matrix_rank(),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torch(name):
    """The same exception type and the whole message (or the same values where torch raises nothing)."""
    ours, theirs = LM._outcome(ERRORS[name], tl, True), LM._outcome(ERRORS[name], torch, True)
    assert theirs[0] != "ok" or name in ("lu_unpack_no_pivots",)
    assert ours == theirs


_WARNING_CALLS = [  # (torch's once-a-process warnings are checked in a fresh process: other tests fire them)
    "m.lu(m.tensor(M))", "m.tensor(M).lu()", "m.lu_solve(m.tensor(B), *m.linalg.lu_factor(m.tensor(M)))",
    "m.triangular_solve(m.tensor(B), m.tensor(M))", "m.nuclear_norm(m.tensor(M))",
    "m.nuclear_norm(m.tensor(M), (0, 1))",
    "m.frobenius_norm(m.tensor(M), (0, 1))", "m.cholesky_solve(m.tensor(B), m.tensor(M))",
    "m.cholesky_inverse(m.tensor(M))", "m.geqrf(m.tensor(M))", "m.ormqr(*m.geqrf(m.tensor(M)), m.tensor(B))",
    "m.lu_unpack(*m.linalg.lu_factor(m.tensor(M)))", "m.svd_lowrank(m.tensor(M), 2)", "m.pca_lowrank(m.tensor(M))"]
_WARNING_SCRIPT = """
import json, sys, warnings
import numpy as np
m = __import__(sys.argv[1])
M, B = np.eye(3) * 2 + 0.5, np.ones((3, 2))
seen = []
for expr in json.loads(sys.argv[2]) * 2:
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        eval(expr)
    seen.append([(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in ws])
print(json.dumps(seen))
"""


def test_deprecation_warnings_once():
    """torch's once-a-process warnings (torch.lu and Tensor.lu share one; lu_solve, triangular_solve, nuclear_norm's
    two overloads share one, frobenius_norm), none for the others, with torch's texts (less its "Triggered
    internally at" suffix), in a fresh process for each library."""
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    seen = [json.loads(subprocess.run([sys.executable, "-c", _WARNING_SCRIPT, lib, json.dumps(_WARNING_CALLS)],
                                      capture_output=True, text=True, check=True, env=env).stdout.splitlines()[-1])
            for lib in ("torchlike", "torch")]
    assert seen[0] == seen[1]
    assert sum(map(len, seen[1])) == 5


def test_out_arguments():
    outs = []
    for m in (tl, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s, c = m.empty(0, dtype=m.float64), m.empty(0, dtype=m.float64)
            r = m.triangular_solve(m.tensor(B), m.tensor(LOW), False, out=(s, c))
            assert r.solution is s and type(r).__name__ == "triangular_solve_out"
            a, t = m.empty(0, dtype=m.float64), m.empty(0, dtype=m.float64)
            assert m.geqrf(m.tensor(M), out=(a, t)).tau is t
            lu_out = (m.empty(0, dtype=m.float64), m.empty(0, dtype=m.int32))
            assert m.lu(m.tensor(M), out=lu_out) is lu_out
            o = m.empty(0, dtype=m.float64)
            assert m.cholesky_solve(m.tensor(B), m.tensor(LOW), out=o) is o
            outs.append([s, c, a, t, *lu_out, o])
    assert_same(outs[0], outs[1])


_Q = np.linalg.qr(RNG.standard_normal((9, 9)))[0]
SPD9 = _Q @ np.diag(np.arange(1.0, 10.0)) @ _Q.T          # distinct eigenvalues 1..9
SPD9_B = np.eye(9) + 0.1 * np.ones((9, 9))
X9 = RNG.standard_normal((9, 2))


def _lobpcg_case(m, **kwargs):
    a = m.tensor(SPD9, requires_grad=True)
    E, V = m.lobpcg(a, X=m.tensor(X9), **kwargs)
    V = V * V[:1].sign()  # (the eigenvectors' signs: the first row positive)
    weights = m.arange(9.0, dtype=m.float64)[:, None]
    return [E, V, *m.autograd.grad(E.sum() + (V ** 2 * weights).sum(), a)]


@pytest.mark.parametrize("kwargs", [{}, {"k": 1, "n": 2}, {"largest": False}, {"method": "basic"},
                                    {"largest": False, "method": "basic", "niter": 50, "tol": 1e-10}])
def test_lobpcg(kwargs):
    """torch.lobpcg (torch's Python, ported over torchlike's ops) from the same X: eigenpairs and the gradient of its
    autograd Function (the partial eigenspace's Sylvester solution), as torch's."""
    assert_same(_lobpcg_case(tl, **kwargs), _lobpcg_case(torch, **kwargs), rtol=1e-6, atol=1e-7)


def test_lobpcg_generalized_batched_and_errors():
    results = []
    for m in (tl, torch):
        E, V = m.lobpcg(m.tensor(SPD9), B=m.tensor(SPD9_B), X=m.tensor(X9))
        Eb, Vb = m.lobpcg(m.tensor(np.stack([SPD9, SPD9 * 2])), X=m.tensor(np.stack([X9, X9])), largest=False)
        steps = []
        m.lobpcg(m.tensor(SPD9), X=m.tensor(X9), tracker=lambda w: steps.append(w.ivars["istep"]))
        results.append([E, V.abs(), Eb, Vb.abs(), m.tensor(steps)])
        errors = [LM._outcome(fn, m, True) for fn in (
            lambda _: m.lobpcg(m.tensor(SPD9), k=4),
            lambda _: _backward(m, lambda k, a: k.lobpcg(a, B=k.tensor(SPD9_B), X=k.tensor(X9))[0], SPD9),
            lambda _: m.lobpcg(m.tensor(R)))]
        results[-1].append(errors)
    assert results[0][-1] == results[1][-1]
    assert [e[0] for e in results[0][-1]] == ["ValueError", "ValueError", "AssertionError"]
    assert_same(results[0][:-1], results[1][:-1], rtol=1e-6, atol=1e-7)
