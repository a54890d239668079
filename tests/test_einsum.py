"""torch.einsum against torch 2.13: the whole recorded chain (aligning views, sums, bmm or mul, final view or sum),
the contraction order opt_einsum gives for 3+ operands, saved attributes, values, gradients of first and second
order, dtypes, views (``_is_view``, ``_base``, versions, writes through, the view-of-leaf error) and errors.
Strides are compared too (results computed by ``mul`` take their inputs' layout, as torch's TensorIterator gives
them, and so a later reshape is a view or a copy as in torch).
"""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same
from test_ops_linalg import run, arr, _err

CASES = [  # (equation, shapes); torch's node names and saved values are compared along the whole graph
    # one operand: a permuted view (diagonals for repeated labels), or a sum
    ("ij->ji", [(2, 3)]), ("ij->ij", [(2, 3)]), ("ba", [(2, 3)]), ("...", [(2, 3)]), ("ii->i", [(3, 3)]),
    ("iij->ji", [(3, 3, 2)]), ("bii->bi", [(4, 3, 3)]), ("...ij->...ji", [(4, 2, 3)]),
    ("ii", [(3, 3)]), ("iji->j", [(3, 2, 3)]), ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]), ("ij->j", [(2, 3)]),
    ("i...->...", [(2, 3, 4)]),
    # two operands: permute + reshape + bmm + view + permute, or mul when nothing is summed
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,jk->ki", [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(4, 2, 3), (4, 3, 5)]), ("bij,bjk->bki", [(4, 2, 3), (4, 3, 5)]),
    ("bij,jk->bik", [(4, 2, 3), (3, 5)]), ("i,j->ij", [(3,), (4,)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ij,ij->", [(2, 3), (2, 3)]), ("i,i->", [(3,), (3,)]), ("ij,j->i", [(2, 3), (3,)]),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 5)]), ("ij,jk->ik", [(2, 3), (1, 4)]), ("ij,ij->ij", [(2, 1), (1, 3)]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)]), ("ii,i->i", [(3, 3), (3,)]), ("ij,jj->i", [(2, 3), (3, 3)]),
    ("...ij,...jk", [(4, 2, 3), (4, 3, 5)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (4, 3, 2)]),
    ("i...,i...->...", [(3, 2, 4), (3, 4)]), ("ij,kl->i", [(2, 3), (4, 2)]), ("ij,jk->i", [(2, 3), (3, 4)]),
    ("bij,bjk->b", [(4, 2, 3), (4, 3, 5)]), ("ij,jk->ik", [(2, 0), (0, 3)]),
    # three and four operands: contracted pairwise along opt_einsum's path
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]), ("ij,jk,kl->li", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl,lm->im", [(2, 3), (3, 4), (4, 5), (5, 2)]), ("ab,bc,ca->", [(2, 3), (3, 4), (4, 2)]),
    ("i,i,i->", [(3,), (3,), (3,)]), ("ij,ij,jk->ik", [(2, 3), (2, 3), (3, 4)]),
    ("bi,oij,bj->bo", [(4, 3), (5, 3, 2), (4, 2)]), ("a,ab,bc,c->", [(2,), (2, 3), (3, 4), (4,)]),
    # multiply-only steps whose permuted result is reshaped later (ReshapeAliasBackward0 / a copy, as torch)
    ("bi,bj,bk->ijk", [(2, 3), (2, 4), (2, 5)]), ("ij,jk->kji", [(2, 3), (3, 4)]), ("i,j,k->kji", [(2,), (3,), (4,)]),
    ("ij,kj->jki", [(2, 3), (4, 3)]), ("ij,ij->ji", [(2, 3), (2, 3)]),
]


def _same_view_state(out_tl, out_th):
    assert out_tl._is_view() == out_th._is_view()
    assert out_tl._version == out_th._version
    assert [st for n, st in zip(out_th.shape, out_th.stride()) if n != 1] == \
        [st for n, st in zip(out_tl.shape, out_tl.stride()) if n != 1]


@pytest.mark.parametrize("eq,shapes", CASES, ids=[f"{e}|{s}" for e, s in CASES])
def test_einsum_graph(eq, shapes):
    _same_view_state(*run(lambda lib, *ops: lib.einsum(eq, *ops), [arr(*s) for s in shapes]))


@pytest.mark.parametrize("eq,shapes", [c for c in CASES if c[0] in ("ii->i", "ij->i", "bij,bjk->bki", "i,j->ij",
                                                                    "ij,jk,kl,lm->im", "bi,oij,bj->bo")])
def test_einsum_float32(eq, shapes):
    _same_view_state(*run(lambda lib, *ops: lib.einsum(eq, *ops), [arr(*s, dtype="float32") for s in shapes]))


@pytest.mark.parametrize("eq,shapes,rg", [
    ("ij,jk->ik", [(2, 3), (3, 4)], [True, False]),
    ("ij,jk->ik", [(2, 3), (3, 4)], [False, True]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)], [False, True]),
    ("ij,kl->i", [(2, 3), (4, 2)], [False, True]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], [False, True, False]),
    ("bi,oij,bj->bo", [(4, 3), (5, 3, 2), (4, 2)], [True, False, True]),
    ("ij,jk->ik", [(2, 3), (3, 4)], [False, False]),
])
def test_einsum_some_operands_require_grad(eq, shapes, rg):
    _same_view_state(*run(lambda lib, *ops: lib.einsum(eq, *ops), [arr(*s) for s in shapes], rg=rg))


def test_einsum_integers_and_promotion():
    ints = np.random.default_rng(0).integers(-3, 4, (3, 3))
    run(lambda lib, x: lib.einsum("ii->i", x), [ints])
    run(lambda lib, x: lib.einsum("ij->", x), [ints.astype("int32")])  # sums integers to int64, as torch
    run(lambda lib, x, y: lib.einsum("ij,jk->ik", x, y), [ints, ints])
    i32 = ints.astype("int32")  # bmm keeps int32
    assert_same(tl.einsum("ij,jk->ik", tl.tensor(i32), tl.tensor(i32)),
                torch.einsum("ij,jk->ik", torch.tensor(i32), torch.tensor(i32)))
    run(lambda lib, x, y: lib.einsum("i,j->ij", x, y), [ints[0].astype("int32"), arr(3, dtype="float32")])  # mul
    run(lambda lib, x, y: lib.einsum("ij,ij->ij", x, y), [arr(3, 3, dtype="float32"), arr(3, 3)])


@pytest.mark.parametrize("eq,shapes,rg", [
    ("ij,jk->ik", [(2, 3), (3, 4)], [True, True]),
    ("bij,bjk->bki", [(4, 2, 3), (4, 3, 5)], [True, False]),
    ("iij,jk->ik", [(3, 3, 2), (2, 4)], [True, True]),
    ("i,j->ij", [(3,), (4,)], [True, True]),
    ("ii->i", [(3, 3)], [True]),
    ("ij->i", [(2, 3)], [True]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)], [True, False, True]),
])
def test_einsum_second_order(eq, shapes, rg):
    """create_graph=True: the first gradients and the gradients of their squared sum match torch's."""
    arrays = [arr(*s) for s in shapes]
    results = []
    for lib in (tl, torch):
        xs = [lib.tensor(a, requires_grad=r) for a, r in zip(arrays, rg)]
        wrt = [x for x in xs if x.requires_grad]
        out = lib.einsum(eq, *xs)
        first = lib.autograd.grad((out * out).sum(), wrt, create_graph=True)
        second = lib.autograd.grad(sum((g * g * g).sum() for g in first), wrt, allow_unused=True)
        results.append((first, second))
    (f1, s1), (f2, s2) = results
    assert_same(list(f1), list(f2), 1e-10, 1e-12)
    assert_same(list(s1), list(s2), 1e-10, 1e-12)


@pytest.mark.parametrize("eq", ["ij->ji", "ii->i"])
def test_one_operand_einsum_is_a_view(eq):
    """Its result shares x's storage and version counter: writes go through both ways, as torch's."""
    base = arr(3, 3)
    seen = []
    for lib in (tl, torch):
        x = lib.tensor(base)
        y = lib.einsum(eq, x)
        assert y._is_view() and y._base is x
        x.add_(1)
        after_x = y.clone()
        y.mul_(2)
        seen.append(((after_x, x.clone(), y.clone()), (x._version, y._version, tuple(y.stride()), y.is_contiguous())))
    (values, state), (th_values, th_state) = seen
    assert_same(list(values), list(th_values))
    assert state == th_state


def test_inplace_on_einsum_view_of_a_non_leaf():
    """An in-place op on the view rebases the input's history (CopySlices), as torch."""
    def fn(lib, x):
        y = x * 1
        lib.einsum("ij->ji", y).mul_(2)
        return y
    run(fn, [arr(2, 3)])


def test_inplace_on_einsum_view_of_a_leaf_is_refused():
    errors = [_err(lambda: lib.einsum("ij->ji", lib.tensor(arr(2, 3), requires_grad=True)).add_(1))
              for lib in (tl, torch)]
    assert errors[0] == errors[1] and errors[1][0] == "RuntimeError" and "view of a leaf Variable" in errors[1][1]


def test_einsum_results_that_are_not_views():
    for eq, shapes in (("ij->i", [(2, 3)]), ("i,j->ij", [(3,), (4,)])):
        outs = [lib.einsum(eq, *[lib.tensor(arr(*s)) for s in shapes]) for lib in (tl, torch)]
        assert outs[0]._is_view() is outs[1]._is_view() is False


def test_einsum_under_no_grad():
    for lib in (tl, torch):
        x = lib.tensor(arr(2, 3), requires_grad=True)
        with lib.no_grad():
            y, z = lib.einsum("ij->ji", x), lib.einsum("ij,kj->ik", x, x)
        assert y.grad_fn is None and z.grad_fn is None and y._is_view() and y._base is x


def test_einsum_sublist_forms():
    a, b, c = arr(2, 3), arr(3, 4), arr(4, 2)
    run(lambda lib, x, y, z: lib.einsum(x, [0, 1], y, [1, 2], z, [2, 27], [27, 0]), [a, b, c])
    run(lambda lib, x, y: lib.einsum(x, [Ellipsis, 30], y, [30, Ellipsis]), [a, arr(3, 2)])
    run(lambda lib, x, y, z: lib.einsum("ij,jk,kl->il", [x, y, z]), [a, b, c])


f32, f64, i64 = "float32", "float64", "int64"
ERRORS = [  # (function of lib and tensors, [(shape, dtype)])
    (lambda lib, a, b: lib.einsum("...i,...i", a, b), [((2, 3), f32), ((4, 3), f32)]),
    (lambda lib, a, b: lib.einsum("i...,i...", a, b), [((2, 3), f32), ((2, 4), f32)]),
    (lambda lib, a: lib.einsum("i...j..", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij->.", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij->...i...", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij->ii1", a), [((2, 3), f32)]),
    (lambda lib, a: lib.einsum("ij->i1", a), [((2, 3), f32)]),
    (lambda lib, a, b: lib.einsum("i1,j", a, b), [((2, 3), f32), ((2,), f32)]),
    (lambda lib, a, b: lib.einsum("ii,i", a, b), [((2, 3), f32), ((2,), f32)]),
    (lambda lib, a, b: lib.einsum("ij,jk", a, b), [((2, 3), f32), ((4, 5), f32)]),
    (lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c), [((2, 3), f32), ((4, 4), f32), ((4, 5), f32)]),
    (lambda lib, a, b, c: lib.einsum("i,i,i", a, b, c), [((2,), f32), ((2,), f32), ((2, 2), f32)]),
    (lambda lib, a, b, c: lib.einsum("ij,jk,kl->il", a, b, c), [((2, 3), f32), ((3, 4), f64), ((4, 5), f32)]),
    (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [((2, 3), i64), ((3, 4), f32)]),
    (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b), [((2, 3), "bool"), ((3, 4), "bool")]),
    (lambda lib, a: lib.einsum(a, [60]), [((2,), f32)]),
    (lambda lib, a: lib.einsum(a, ["a"]), [((2,), f32)]),
    (lambda lib, a: lib.einsum("i,i", a, 3), [((2,), f32)]),
    (lambda lib, a: lib.einsum("i,i,i", a, a, 3), [((2,), f32)]),
    (lambda lib, a: lib.einsum(5, a), [((2,), f32)]),
    (lambda lib, a: lib.einsum("ij"), [((2,), f32)]),
    (lambda lib, a: lib.einsum("ij", []), [((2,), f32)]),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_einsum_errors(k):
    fn, specs = ERRORS[k]
    arrays = [np.ones(s, dtype=d) for s, d in specs]
    expected = _err(lambda: fn(torch, *[torch.tensor(a) for a in arrays]))
    assert expected is not None
    assert _err(lambda: fn(tl, *[tl.tensor(a) for a in arrays])) == expected
