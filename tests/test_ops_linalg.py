"""Matrix products against torch 2.13: matmul for every rank combination, mm, bmm, dot, mv, outer,
addmm, baddbmm, einsum; values, gradients, node names and graphs, saved attributes and error messages.

Each case runs ``fn(lib, *tensors)`` on torchlike and torch with the same NumPy inputs. Where torch records
a chain of view/expand/clone nodes around a batched matmul, torchlike records one node with the name of
the last node of torch's chain (see torchlike/ops/linalg.py), so those cases compare the output node name
and check that its edges lead straight to the inputs.
"""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, compare_graph

RNG = np.random.default_rng(1)
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-12), "complex64": (2e-5, 2e-5), "int64": (0, 0)}


def _t(lib, a, rg):
    a = np.asarray(a)
    return lib.tensor(a, requires_grad=bool(rg) and a.dtype.kind in "fc")


def _saved_attrs(node, skip=()):
    """The node's ``_saved_*`` attributes but ``skip`` (strides left out: torchlike tensors are contiguous)."""
    return {k: getattr(node, k) for k in dir(node)
            if k.startswith("_saved_") and not k.endswith("_sym_strides") and k not in skip}


def run(fn, arrays, rg=None, full_graph=True, top_saved=True):
    """Run fn on both libraries; compare values, graph and the gradients of inputs that require grad.

    full_graph=False: torchlike records one node for torch's chain; compare its name (and, with top_saved,
    the non-tensor _saved_* attributes torch's last node has) and check its edges go straight to the inputs.
    """
    rg = rg if rg is not None else [True] * len(arrays)
    tl_in = [_t(tl, a, r) for a, r in zip(arrays, rg)]
    th_in = [_t(torch, a, r) for a, r in zip(arrays, rg)]
    out_tl, out_th = fn(tl, *tl_in), fn(torch, *th_in)
    rtol, atol = TOL[str(out_th.dtype).split(".")[-1]]
    assert_same(out_tl, out_th, rtol, atol)
    if out_th.grad_fn is None:
        assert out_tl.grad_fn is None
        return out_tl, out_th
    if full_graph:
        compare_graph(out_tl.grad_fn, out_th.grad_fn)
    else:  # one node standing for torch's chain: its name, and edges straight to the inputs
        assert out_tl.grad_fn.name() == out_th.grad_fn.name()
        if top_saved:  # its non-tensor _saved_* are exactly those of torch's last node (its saved tensors differ)
            operands = ("_saved_self", "_saved_other")  # what torchlike's node saves for its backward
            assert _saved_attrs(out_tl.grad_fn, operands) == _saved_attrs(out_th.grad_fn)
        edges = [n for n, _ in out_tl.grad_fn.next_functions]
        assert [e is not None and e.name() for e in edges] == [
            bool(t.requires_grad) and "torch::autograd::AccumulateGrad" for t in tl_in]
    cot = RNG.standard_normal(out_th.shape).astype(out_th.numpy(force=True).dtype)
    out_tl.backward(tl.tensor(cot))
    out_th.backward(torch.tensor(cot))
    for a, b in zip(tl_in, th_in):
        assert_same(a.grad, b.grad, rtol, atol)
    return out_tl, out_th


def arr(*shape, dtype="float64"):
    return RNG.standard_normal(shape).astype(dtype)


# ----- matmul: every rank combination ----------------------------------------------------------------------
MATMUL_CASES = [  # (shape a, shape b, torch's output node)
    ((3,), (3,), "DotBackward0"),
    ((2, 3), (3,), "MvBackward0"),
    ((3,), (3, 4), "SqueezeBackward4"),
    ((2, 3), (3, 4), "MmBackward0"),
    ((4, 2, 3), (3,), "UnsafeViewBackward0"),       # folded mv
    ((3,), (4, 3, 2), "UnsafeViewBackward0"),       # folded mv of b.mT
    ((4, 2, 3), (3, 5), "UnsafeViewBackward0"),     # folded mm
    ((2, 3), (4, 3, 5), "CloneBackward0"),          # folded mm of b.mT, result made contiguous
    ((1, 3), (4, 3, 5), "TransposeBackward0"),      # same, transposed result already contiguous
    ((4, 2, 3), (4, 3, 5), "UnsafeViewBackward0"),  # bmm
    ((4, 2, 3), (1, 3, 5), "UnsafeViewBackward0"),  # broadcast batch
    ((2, 1, 2, 3), (4, 3, 5), "UnsafeViewBackward0"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sa,sb,name", MATMUL_CASES, ids=[f"{a}@{b}" for a, b, _ in MATMUL_CASES])
def test_matmul_ranks(sa, sb, name, dtype):
    out, _ = run(lambda lib, a, b: lib.matmul(a, b), [arr(*sa, dtype=dtype), arr(*sb, dtype=dtype)])
    assert out.grad_fn.name() == name


@pytest.mark.parametrize("sa,sb,rg", [
    ((2, 3), (4, 3, 5), (False, True)),   # no fold: broadcast bmm, UnsafeViewBackward0
    ((2, 3), (4, 3, 5), (True, False)),   # fold: CloneBackward0
    ((3,), (4, 3, 2), (False, True)),
    ((3,), (4, 3, 2), (True, False)),
    ((4, 2, 3), (3, 5), (False, True)),
    ((1, 2, 3), (4, 3, 5), (True, False)),  # a batch of 1 that requires grad is squeezed, then folded
    ((4, 2, 3), (1, 3, 5), (False, True)),
    ((1, 2, 3), (4, 3, 5), (False, True)),
    ((0, 2, 3), (3, 5), (False, True)),     # empty: always folded
    ((2, 3, 0), (0, 5), (True, True)),
])
def test_matmul_path_depends_on_requires_grad(sa, sb, rg):
    """torch's _matmul_impl decides fold vs bmm (and squeezes) by requires_grad and strides: same nodes here."""
    run(lambda lib, a, b: a @ b, [arr(*sa), arr(*sb)], rg=rg)


@pytest.mark.parametrize("rg", [(True, False), (False, True), (False, False)])
@pytest.mark.parametrize("case", ["a.mT", "a.permute", "b.mT"])
def test_matmul_of_strided_views(case, rg):
    """Whether the big operand folds into a view depends on its strides, as in torch (else a broadcast bmm)."""
    fns = {"a.mT": (lambda lib, a, b: a.mT @ b, (4, 3, 2), (3,)),
           "a.permute": (lambda lib, a, b: a.permute(1, 0, 2) @ b, (2, 4, 3), (3, 5)),
           "b.mT": (lambda lib, a, b: a @ b.mT, (3,), (4, 2, 3))}
    fn, sa, sb = fns[case]
    run(fn, [arr(*sa), arr(*sb)], rg=rg)


def test_matmul_operator_rmatmul_and_methods():
    a, b = arr(2, 3), arr(3, 4)
    run(lambda lib, x, y: x @ y, [a, b])
    run(lambda lib, x, y: y.__rmatmul__(x), [a, b])
    run(lambda lib, x, y: x.matmul(y), [a, b])
    x = tl.tensor(a)
    with pytest.raises(TypeError, match="unsupported operand type"):
        [1.0, 2.0] @ x
    with pytest.raises(TypeError, match="unsupported operand type"):
        x @ [1.0, 2.0]


def test_matmul_integer_and_no_grad():
    a, b = RNG.integers(-3, 4, (4, 2, 3)), RNG.integers(-3, 4, (3, 5))
    run(lambda lib, x, y: x @ y, [a, b])
    with tl.no_grad():
        assert (tl.tensor(arr(4, 2, 3), requires_grad=True) @ tl.tensor(arr(3,))).grad_fn is None


def test_matmul_complex():
    a = (arr(2, 3) + 1j * arr(2, 3)).astype(np.complex64)
    b = (arr(4, 3, 5) + 1j * arr(4, 3, 5)).astype(np.complex64)
    run(lambda lib, x, y: x @ y, [a, b])
    run(lambda lib, x, y: lib.mm(x, y), [a, b[0]])


# ----- the single-node products ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mm_bmm_dot_mv(dtype):
    run(lambda lib, a, b: lib.mm(a, b), [arr(2, 3, dtype=dtype), arr(3, 4, dtype=dtype)])
    run(lambda lib, a, b: lib.bmm(a, b), [arr(4, 2, 3, dtype=dtype), arr(4, 3, 5, dtype=dtype)])
    run(lambda lib, a, b: lib.dot(a, b), [arr(3, dtype=dtype), arr(3, dtype=dtype)])
    run(lambda lib, a, b: lib.mv(a, b), [arr(2, 3, dtype=dtype), arr(3, dtype=dtype)])
    run(lambda lib, a, b: a.mm(b), [arr(2, 3, dtype=dtype), arr(3, 4, dtype=dtype)], rg=[True, False])
    run(lambda lib, a, b: a.bmm(b), [arr(4, 2, 3, dtype=dtype), arr(4, 3, 5, dtype=dtype)], rg=[False, True])
    run(lambda lib, a, b: a.dot(b), [arr(3, dtype=dtype), arr(3, dtype=dtype)], rg=[True, False])
    run(lambda lib, a, b: a.mv(b), [arr(2, 3, dtype=dtype), arr(3, dtype=dtype)], rg=[False, True])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_outer(dtype):
    run(lambda lib, a, b: lib.outer(a, b), [arr(3, dtype=dtype), arr(4, dtype=dtype)])
    run(lambda lib, a, b: a.outer(b), [arr(3, dtype=dtype), arr(4, dtype=dtype)], rg=[False, True])


def test_outer_promotes():
    run(lambda lib, a, b: lib.outer(a, b), [arr(3, dtype="float32"), RNG.integers(0, 3, 4)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("self_shape,beta,alpha", [((2, 4), 1, 1), ((4,), 0.5, 2.0), ((2, 1), 0, -1.5)])
def test_addmm(self_shape, beta, alpha, dtype):
    run(lambda lib, s, a, b: lib.addmm(s, a, b, beta=beta, alpha=alpha),
        [arr(*self_shape, dtype=dtype), arr(2, 3, dtype=dtype), arr(3, 4, dtype=dtype)])


def test_addmm_saved_and_partial_grads():
    run(lambda lib, s, a, b: s.addmm(a, b, beta=2, alpha=3), [arr(2, 4), arr(2, 3), arr(3, 4)],
        rg=[True, False, True])


def test_addmm_beta_zero_ignores_nan():
    s = np.full((2, 4), np.nan)
    run(lambda lib, s, a, b: lib.addmm(s, a, b, beta=0), [s, arr(2, 3), arr(3, 4)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_baddbmm(dtype):
    run(lambda lib, s, a, b: lib.baddbmm(s, a, b, beta=0.5, alpha=2.0),
        [arr(4, 2, 5, dtype=dtype), arr(4, 2, 3, dtype=dtype), arr(4, 3, 5, dtype=dtype)])
    run(lambda lib, s, a, b: s.baddbmm(a, b), [arr(2, 5, dtype=dtype), arr(4, 2, 3, dtype=dtype),
                                                arr(4, 3, 5, dtype=dtype)])


# ----- einsum ----------------------------------------------------------------------------------------------
EINSUM_CASES = [  # (equation, shapes, torch's output node)
    ("ij,jk->ik", [(2, 3), (3, 4)], "ViewBackward0"),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)], "ViewBackward0"),
    ("i,i->", [(3,), (3,)], "ViewBackward0"),
    ("ij->ji", [(2, 3)], "PermuteBackward0"),
    ("ii->i", [(3, 3)], "PermuteBackward0"),
    ("ij->", [(2, 3)], "SumBackward1"),
    ("i,j->ij", [(3,), (4,)], "MulBackward0"),
    ("ij,ij->ij", [(2, 3), (2, 3)], "MulBackward0"),
    ("bij,jk->bik", [(4, 2, 3), (3, 5)], "ViewBackward0"),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], "ViewBackward0"),
    ("...ij,...jk", [(4, 2, 3), (4, 3, 5)], "ViewBackward0"),
    ("ba", [(2, 3)], "PermuteBackward0"),
    ("ii", [(3, 3)], "SumBackward1"),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 5)], "ViewBackward0"),
    ("ij,jk->ik", [(2, 3), (1, 4)], "ViewBackward0"),
    (" b A , A c ", [(2, 3), (3, 2)], "ViewBackward0"),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("eq,shapes,name", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum(eq, shapes, name, dtype):
    """torch's whole chain of nodes (permute/unsqueeze/diagonal views, sums, bmm or mul, views), saved values."""
    out, _ = run(lambda lib, *ops: lib.einsum(eq, *ops), [arr(*s, dtype=dtype) for s in shapes])
    assert out.grad_fn.name() == name


def test_einsum_call_forms():
    a, b = arr(2, 3), arr(3, 4)
    run(lambda lib, x, y: lib.einsum("ij,jk->ik", [x, y]), [a, b])
    run(lambda lib, x, y: lib.einsum(x, [0, 1], y, [1, 2], [0, 2]), [a, b])
    run(lambda lib, x, y: lib.einsum(x, [Ellipsis, 1], y, [1, 2]), [a, b])
    run(lambda lib, x, y: lib.einsum("i,j->ij", x, y), [arr(2, dtype="float32"), arr(3)])
    run(lambda lib, x, y: lib.einsum("ij,jk->ik", x, y), [RNG.integers(0, 3, (2, 3)), RNG.integers(0, 3, (3, 4))])


# ----- errors ----------------------------------------------------------------------------------------------
def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e).split("\n")[0]
    return None


f32, f64, i64 = "float32", "float64", "int64"
ERROR_CASES = [  # (function of lib and tensors, [(shape, dtype)], requires_grad)
    (lambda lib, a, b: a @ b, [((2, 3), f32), ((4, 5), f32)]),
    (lambda lib, a, b: lib.mm(a, b), [((2, 3), f32), ((3, 4), f64)]),
    (lambda lib, a, b: lib.mm(a, b), [((2, 3), f32), ((4, 5), f64)]),
    (lambda lib, a, b: lib.mm(a, b), [((2, 3), i64), ((3, 4), f32)]),
    (lambda lib, a, b: lib.mm(a, b), [((3,), f32), ((3, 4), f32)]),
    (lambda lib, a, b: lib.mm(a, b), [((2, 3), f32), ((3,), f32)]),
    (lambda lib, a, b: lib.mm(a, b), [((2, 3), "bool"), ((3, 4), "bool")]),
    (lambda lib, a, b: a @ b, [((3,), f32), ((4,), f32)]),
    (lambda lib, a, b: lib.dot(a, b), [((3,), f32), ((3,), f64)]),
    (lambda lib, a, b: lib.dot(a, b), [((3, 1), f32), ((3,), f32)]),
    (lambda lib, a, b: a @ b, [((2, 3), f32), ((4,), f32)]),
    (lambda lib, a, b: lib.mv(a, b), [((2, 3), f32), ((3,), f64)]),
    (lambda lib, a, b: lib.mv(a, b), [((2, 3, 1), f32), ((3,), f32)]),
    (lambda lib, a, b: a @ b, [((3,), f32), ((4, 5), f32)]),
    (lambda lib, a, b: a @ b, [((4, 2, 3), f32), ((4, 4, 5), f32)]),
    (lambda lib, a, b: a @ b, [((4, 2, 3), f32), ((3, 3, 5), f32)]),
    (lambda lib, a, b: a @ b, [((4, 2, 3), f32), ((5,), f32)]),
    (lambda lib, a, b: a @ b, [((4, 2, 3), f32), ((4, 5), f32)]),
    (lambda lib, a, b: a @ b, [((4, 2, 3), f32), ((3,), f64)]),
    (lambda lib, a, b: a @ b, [((4, 2, 3), f64), ((4, 3, 5), f32)]),
    (lambda lib, a, b: a @ b, [((3,), f32), ((4, 3, 5), f64)]),
    (lambda lib, a, b: a @ b, [((2, 3), f32), ((4, 3, 5), f64)]),
    (lambda lib, a, b: a @ b, [((), f32), ((3,), f32)]),
    (lambda lib, a, b: lib.bmm(a, b), [((4, 2, 3), f32), ((4, 4, 5), f32)]),
    (lambda lib, a, b: lib.bmm(a, b), [((2, 3), f32), ((3, 5), f32)]),
    (lambda lib, a, b: lib.bmm(a, b), [((4, 2, 3), f32), ((3, 5), f32)]),
    (lambda lib, a, b: lib.bmm(a, b), [((4, 2, 3), f64), ((4, 3, 5), f32)]),
    (lambda lib, a, b: lib.outer(a, b), [((2, 5), f32), ((2,), f32)]),
    (lambda lib, a, b: lib.outer(a, b), [((2,), f32), ((2, 4), f32)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((2, 5), f32), ((2, 3), f32), ((4, 5), f32)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((3, 5), f32), ((2, 3), f32), ((3, 5), f32)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((2, 5), f64), ((2, 3), f32), ((3, 5), f32)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((2, 5), f32), ((2, 3), f32), ((3, 5), f64)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((2, 5), f32), ((2, 3), f64), ((3, 5), f32)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((2, 5), f32), ((3,), f32), ((3, 5), f32)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b), [((1, 2, 5), f32), ((2, 3), f32), ((3, 5), f32)]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [((4, 2, 5), f32), ((4, 2, 3), f32), ((4, 4, 5), f32)]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [((2, 4, 2, 5), f32), ((4, 2, 3), f32), ((4, 3, 5), f32)]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [((4, 2, 5), f64), ((4, 2, 3), f32), ((4, 3, 5), f32)]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [((4, 2, 5), f32), ((4, 2, 3), f32), ((4, 3, 5), f64)]),
    (lambda lib, s, a, b: lib.baddbmm(s, a, b), [((3, 2, 5), f32), ((4, 2, 3), f32), ((4, 3, 5), f32)]),
    (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [((2, 3), f32), ((4, 5), f32)]),
    (lambda lib, a: lib.einsum("ij,jk->ik", a), [((2, 3), f32)]),
    (lambda lib, a, b, c: lib.einsum("ij,jk->ik", a, b, c), [((2, 3), f32), ((3, 4), f32), ((4, 5), f32)]),
    (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [((2, 3), f32), ((3, 5), f64)]),
    (lambda lib, a, b: lib.einsum("ijk,jk->ik", a, b), [((2, 3), f32), ((3, 5), f32)]),
    (lambda lib, a: lib.einsum("ij->ij->", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij->k", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij->ii", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ii->i", a), [((3, 2), f32)]),
    (lambda lib, a: lib.einsum("i.j", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij", a, a), [((2, 3), f32)]),
]


@pytest.mark.parametrize("k", range(len(ERROR_CASES)))
def test_errors(k):
    fn, specs = ERROR_CASES[k]
    arrays = [np.ones(s, dtype=d) for s, d in specs]
    expected = _err(lambda: fn(torch, *[torch.tensor(a) for a in arrays]))
    assert expected is not None
    assert _err(lambda: fn(tl, *[tl.tensor(a) for a in arrays])) == expected


def test_fold_error_depends_on_requires_grad():
    """A 1-D operand that requires grad makes torch fold (mv message) instead of bmm."""
    for lib in (tl, torch):
        a, b = lib.ones(3, requires_grad=True), lib.ones(4, 4, 5)
        with pytest.raises(RuntimeError, match=r"size mismatch, got input \(20\), mat \(20x4\), vec \(3\)"):
            a @ b


@pytest.mark.parametrize("fn,shapes", [
    (lambda lib, a, b: a @ b, [(4, 2, 3), (3, 5)]),
    (lambda lib, a, b: a @ b, [(2, 3), (4, 3, 5)]),
    (lambda lib, a, b: lib.einsum("bij,jk->bik", a, b), [(4, 2, 3), (3, 5)]),
    (lambda lib, s, a, b: lib.addmm(s, a, b, beta=0.5, alpha=2.0), [(2, 5), (2, 3), (3, 5)]),
], ids=["fold", "clone", "einsum", "addmm"])
def test_double_backward(fn, shapes):
    """create_graph=True: the gradient of (sum of squared first gradients) matches torch."""
    arrays = [arr(*s) for s in shapes]
    results = []
    for lib in (tl, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        grads = lib.autograd.grad(fn(lib, *xs).sum(), xs, create_graph=True)
        results.append(lib.autograd.grad(sum((g * g).sum() for g in grads), xs, allow_unused=True))
    for a, b in zip(*results):
        assert_same(a, b, 1e-10, 1e-12)


@pytest.mark.parametrize("sa,sb,node", MATMUL_CASES)
def test_matmul_output_version_as_torch(sa, sb, node):
    """torch writes some matmul results in place internally (1-D @ 2-D: squeeze_): the output's _version shows it."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    for grad in (True, False):
        versions = [(lib.tensor(a, requires_grad=grad) @ lib.tensor(b))._version for lib in (tl, torch)]
        assert versions[0] == versions[1]
