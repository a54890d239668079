"""Issue 14's remaining torch-level functions and Tensor methods against torch 2.13 on the same NumPy inputs: take,
index_copy/index_fill/index_put, masked_scatter, scatter_reduce, unique/unique_consecutive, quantile/nanquantile,
histc, bincount, repeat_interleave, tril/triu_indices, block_diag, combinations, renorm, cosine_similarity,
Tensor.unfold, apply_/map_, pin_memory/is_pinned/share_memory_/is_shared: values, the recorded graph (node names down
to the leaves) with saved attributes, first- and second-order gradients, in-place variants (versions), out= and
errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_case_matches, assert_same, assert_same_error, graph

RNG = np.random.default_rng(14)
A = RNG.standard_normal((3, 4))
R = np.round(A[:2] * 2) / 2  # (a few equal values: ties of amax/amin)
I = np.array([0, 2, -1, 5])
IDX = np.array([[0, 1, 0, 1], [2, 2, 0, 0]])
Z = A.copy()
Z[0, 0] = 0.0
ZS = np.round(A[:2])
ZS[:, 1] = 0.0
NANS = A.copy()
NANS[0, 1] = np.nan
NANS[2, :] = np.nan
V = A[0].copy()


def _i(m, a):
    return m.tensor(np.asarray(a))


CASES = {  # name: (function of lib and tensors, arrays)
    "take": (lambda m, x: m.take(x, _i(m, I)), [A]),
    "take_2d_index": (lambda m, x: x.take(_i(m, [[0, 11], [-12, 3]])), [A]),
    "index_copy": (lambda m, x, s: x.index_copy(0, _i(m, [2, 0]), s), [A, A[:2] * 2]),
    "index_copy_dim1": (lambda m, x, s: m.index_copy(x, -1, _i(m, [3, 1]), s), [A, A[:, :2] * 2]),
    "index_fill": (lambda m, x: x.index_fill(1, _i(m, [2, -1]), 2.5), [A]),
    "index_fill_tensor": (lambda m, x, v: m.index_fill(x, -1, _i(m, [2, 0]), v), [A, np.array(1.5)]),
    "index_put": (lambda m, x, v: x.index_put((_i(m, [2, 0, 2]),), v), [A, A[0]]),
    "index_put_accumulate": (lambda m, x, v: m.index_put(x, (_i(m, [2, 0, 2]),), v, True), [A, A[::-1].copy()]),
    "index_put_two": (lambda m, x, v: x.index_put((_i(m, [2, 0, 2]), _i(m, [1, 1, 3])), v, accumulate=True),
                      [A, A[0, :3]]),
    "index_put_mask": (lambda m, x, v: x.index_put((_i(m, [True, False, True]),), v), [A, A[1]]),
    "index_put_mask_scalar": (lambda m, x, v: x.index_put((_i(m, A > 0),), v), [A, np.array(2.0)]),
    "masked_scatter": (lambda m, x, s: x.masked_scatter(x > 0, s), [A, A.reshape(-1)[::-1] * 3]),
    "masked_scatter_broadcast": (lambda m, x, s: m.masked_scatter(x, _i(m, [True, False, True, True]), s),
                                 [A, RNG.standard_normal((4, 4))]),
    **{f"scatter_reduce_{r}{'' if inc else '_exclude'}": (
        lambda m, x, s, r=r, inc=inc: x.scatter_reduce(0, _i(m, IDX), s, r, include_self=inc), [A, R])
       for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)},
    "scatter_reduce_amax_dim1": (lambda m, x, s: m.scatter_reduce(x, -1, _i(m, IDX[:, ::-1].copy()), s, "amax"), [A, R]),
    "scatter_reduce_sum_small_index": (lambda m, x, s: m.scatter_reduce(x, -1, _i(m, IDX[:1, :3]), s, "sum"),
                                       [A, R[:1, :3]]),
    "scatter_reduce_prod_zeros": (lambda m, x, s: x.scatter_reduce(0, _i(m, IDX), s, "prod"), [Z, ZS]),
    "scatter_reduce_prod_zeros_exclude": (lambda m, x, s: x.scatter_reduce(0, _i(m, IDX), s, "prod",
                                                                           include_self=False), [Z, ZS]),
    "quantile": (lambda m, x: m.quantile(x, 0.3), [A]),
    "quantile_dim": (lambda m, x: x.quantile(_i(m, [0.25, 0.5, 1.0]), dim=1), [A]),
    "quantile_dim0_keepdim": (lambda m, x: m.quantile(x, 0.6, 0, True), [A]),
    "quantile_lower": (lambda m, x: m.quantile(x, 0.3, dim=0, interpolation="lower"), [A]),
    "quantile_higher_keepdim": (lambda m, x: m.quantile(x, _i(m, [0.3, 0.9]), keepdim=True,
                                                        interpolation="higher"), [A]),
    "quantile_midpoint": (lambda m, x: m.quantile(x, 0.3, dim=0, interpolation="midpoint"), [A]),
    "quantile_nearest": (lambda m, x: m.quantile(x, _i(m, [0.1, 0.7]), dim=-1, interpolation="nearest"), [A]),
    "quantile_nan": (lambda m, x: m.quantile(x, 0.4, dim=1), [NANS]),
    "nanquantile": (lambda m, x: m.nanquantile(x, _i(m, [0.2, 0.8]), dim=1), [NANS]),
    "nanquantile_all": (lambda m, x: x.nanquantile(0.5), [NANS]),
    "repeat_interleave_int": (lambda m, x: x.repeat_interleave(2, 0), [A]),
    "repeat_interleave_flat": (lambda m, x: m.repeat_interleave(x, 3), [A]),
    "repeat_interleave_tensor": (lambda m, x: m.repeat_interleave(x, _i(m, [1, 0, 2]), dim=0), [A]),
    "repeat_interleave_one": (lambda m, x: x.repeat_interleave(_i(m, [2]), dim=1, output_size=8), [A]),
    "repeat_interleave_tensor_flat": (lambda m, x: x.repeat_interleave(_i(m, 2)), [A]),
    "block_diag": (lambda m, x, y, z: m.block_diag(x, y, z), [A, V, np.array(2.0)]),
    "combinations": (lambda m, x: m.combinations(x), [V]),
    "combinations_3": (lambda m, x: m.combinations(x, 3), [V]),
    "combinations_replacement": (lambda m, x: m.combinations(x, 2, with_replacement=True), [V]),
    "combinations_1": (lambda m, x: m.combinations(x, 1), [V]),
    "renorm": (lambda m, x: m.renorm(x, 2, 0, 1.0), [A]),
    "renorm_p1": (lambda m, x: x.renorm(1, -1, 2.0), [A]),
    "renorm_inf": (lambda m, x: x.renorm(float("inf"), 1, 0.5), [A]),
    "renorm_p3": (lambda m, x: m.renorm(x, 3, 0, 1.0), [A]),
    "cosine_similarity": (lambda m, x, y: m.cosine_similarity(x, y), [A, A[::-1].copy()]),
    "cosine_similarity_broadcast": (lambda m, x, y: m.cosine_similarity(x, y, -1), [A, V]),
    "cosine_similarity_eps": (lambda m, x, y: m.cosine_similarity(x, y, 0, eps=0.5), [A * 0.1, A]),
    "unfold": (lambda m, x: x.unfold(1, 2, 1), [A]),
    "unfold_step": (lambda m, x: x.unfold(-1, 3, 2) * 1, [A]),
    "unfold_dim0": (lambda m, x: x.unfold(0, 2, 1).sum(-1), [A]),
}


@pytest.mark.parametrize("name", CASES)
def test_against_torch(name):
    assert_case_matches(*CASES[name])


INPLACE = {  # name: function of (lib, a tensor to change, a tensor that requires grad) -> the changed tensor
    "index_copy_": lambda m, x, w: x.index_copy_(1, _i(m, [3, 0]), w[:, :2] * 2),
    "index_fill_": lambda m, x, w: x.index_fill_(0, _i(m, [1]), -1.0),
    "index_fill_tensor_": lambda m, x, w: x.index_fill_(0, _i(m, [1, 2]), w[0, 0] * 3),
    "index_put_": lambda m, x, w: x.index_put_((_i(m, [0, 0]), _i(m, [1, 1])), w[0, :2] * 2, accumulate=True),
    "index_put_mask_": lambda m, x, w: x.index_put_((_i(m, A > 0),), w[0, 0] * 2),
    "masked_scatter_": lambda m, x, w: x.masked_scatter_(_i(m, [True, False, False, True]), w * 2),
    "scatter_reduce_": lambda m, x, w: x.scatter_reduce_(1, _i(m, IDX), w[:2] * 2, "amax", include_self=False),
    "renorm_": lambda m, x, w: x.renorm_(2, 0, 0.5),
}


@pytest.mark.parametrize("name", INPLACE)
@pytest.mark.parametrize("grad", [False, True])
def test_in_place_variants_as_torch(name, grad):
    """The in-place variants: values, version, the node and the gradient through it."""
    results = []
    for m in (torch, tl):
        w = m.tensor(A, requires_grad=True)
        x = w * 1 if grad else m.tensor(A)
        v0 = x._version
        out = INPLACE[name](m, x, w)
        assert out is x
        g = m.autograd.grad(x.sum(), w, allow_unused=True)[0] if x.requires_grad else None
        results.append((x, x._version - v0, graph(x), g))
    (tx, tv, tg, tgrad), (lx, lv, lg, lgrad) = results
    assert_same(lx, tx)
    assert (lv, lg) == (tv, tg)
    assert_same(lgrad, tgrad)


def test_unique_against_torch():
    x = np.array([[3, 1, 3], [1, 1, 2], [3, 1, 3], [0, 5, 5]])
    calls = [lambda m, t, **kw: m.unique(t, **kw), lambda m, t, **kw: t.unique(dim=0, **kw),
             lambda m, t, **kw: m.unique(t, sorted=False, dim=1, **kw),
             lambda m, t, **kw: m.unique_consecutive(t, **kw), lambda m, t, **kw: t.unique_consecutive(dim=0, **kw)]
    for a in (x, np.array(5.0), np.array([np.nan, 1.0, np.nan, 1.0]), np.zeros(0), x > 1):
        for call in calls[:1] + calls[3:4] if a.ndim < 2 else calls:
            for kw in ({}, {"return_inverse": True}, {"return_counts": True},
                       {"return_inverse": True, "return_counts": True}):
                assert_same(call(tl, tl.tensor(a), **kw), call(torch, torch.tensor(a), **kw))


def test_unique_nodes_refuse_backward_as_torch():
    for fn in (lambda m, x: m.unique(x), lambda m, x: m.unique(x, dim=0, return_counts=True)[0],
               lambda m, x: m.unique_consecutive(x, return_inverse=True)[0], lambda m, x: x.unique_consecutive(dim=1)):
        outcomes = []
        for m in (torch, tl):
            x = m.tensor(A, requires_grad=True)
            y = fn(m, x)
            with pytest.raises(NotImplementedError) as e:
                y.sum().backward()
            outcomes.append((graph(y), y.requires_grad, str(e.value)))
        assert outcomes[0] == outcomes[1]


def test_histc_bincount_against_torch():
    for dt in (np.float32, np.float64):
        for args in ((5,), (4, -1, 1), (), (3, 0.5, 0.5)):
            assert_same(tl.histc(tl.tensor(A.astype(dt)), *args), torch.histc(torch.tensor(A.astype(dt)), *args))
    x = np.array([1, 1, 3, 0, 7])
    for w in (None, np.arange(5.0), np.arange(5.0, dtype=np.float32), np.arange(5), np.arange(5) > 2):
        for minlength in (0, 10):
            args = [] if w is None else [w]
            assert_same(tl.bincount(tl.tensor(x), *[tl.tensor(a) for a in args], minlength=minlength),
                        torch.bincount(torch.tensor(x), *[torch.tensor(a) for a in args], minlength=minlength))
    assert_same(tl.bincount(tl.tensor(x[:0]), minlength=3), torch.bincount(torch.tensor(x[:0]), minlength=3))
    outcomes = []
    for m in (torch, tl):
        w = m.tensor(np.arange(5.0), requires_grad=True)
        y = m.bincount(m.tensor(x), w)
        assert m.histc(w, 3).grad_fn is None
        with pytest.raises(RuntimeError) as e:
            y.sum().backward()
        outcomes.append((graph(y), str(e.value)))
    assert outcomes[0] == outcomes[1]


def test_index_helpers_against_torch():
    for row, col, off in ((3, 4, 0), (4, 3, 1), (4, 4, -2), (0, 3, 0)):
        for name in ("tril_indices", "triu_indices"):
            assert_same(getattr(tl, name)(row, col, off), getattr(torch, name)(row, col, off))
    assert_same(tl.tril_indices(3, 3, dtype=tl.int32), torch.tril_indices(3, 3, dtype=torch.int32))
    assert_same(tl.repeat_interleave(tl.tensor([1, 0, 3])), torch.repeat_interleave(torch.tensor([1, 0, 3])))
    assert_same(tl.combinations(tl.tensor(V), 0), torch.combinations(torch.tensor(V), 0))
    assert_same(tl.block_diag(tl.tensor([[1, 2]]), tl.tensor(V)), torch.block_diag(torch.tensor([[1, 2]]),
                                                                                   torch.tensor(V)))


def test_unfold_is_a_view_as_torch():
    outcomes = []
    for m in (torch, tl):
        x = m.tensor(A)
        u = x.unfold(1, 2, 1)
        x.add_(1)  # the view sees the write
        u[0, 0, 1] = 10.0  # and writes through
        outcomes.append((u._base is x, u.is_contiguous(), u.stride(), x._version, x.clone(), u.clone()))
    for a, b in zip(outcomes[1], outcomes[0]):
        assert_same(a, b) if isinstance(b, torch.Tensor) else None
        assert isinstance(b, torch.Tensor) or a == b


def test_out_as_torch():
    """out= of another dtype than the result's where torch allows it, or resized (with torch's warning)."""
    results = []
    for m in (torch, tl):
        x, i, f64 = m.tensor(A), m.tensor(np.array([0, 2])), m.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [m.take(x, i, out=m.empty(5, dtype=m.float64)), m.quantile(x, 0.5, 1, out=m.empty(3, dtype=f64)),
                    m.index_copy(x, 0, i, x[:2] * 2, out=m.empty(1, dtype=f64)), m.renorm(x, 2, 0, 1.0, out=x * 0),
                    m.scatter_reduce(x, 0, m.tensor(IDX), x[:2], "sum", out=m.empty(0, dtype=f64)),
                    m.histc(x, 4, out=m.empty(4, dtype=f64)), m.nanquantile(x, 0.5, out=m.empty((), dtype=f64))]
        results.append(outs)
    for a, b in zip(results[1], results[0]):
        assert_same(a, b)


def test_host_callables_and_memory_methods_as_torch():
    results = []
    for m in (torch, tl):
        x, y, b = m.tensor(A), m.arange(3), m.tensor([True, False])
        x.apply_(lambda v: v * 2 + 1)
        y.map_(m.tensor([1, 2, 3]), lambda p, q: p * q + (type(p) is int))
        b.apply_(lambda v: not v)
        s = m.ones(3)
        view = s[:2]
        flags = (s.is_shared(), s.share_memory_() is s, s.is_shared(), view.is_shared(), m.ones(1).is_shared(),
                 s.is_pinned(), x._version, y._version)
        results.append((x, y, b, flags))
    for a, b in zip(results[1], results[0]):
        assert a == b if isinstance(b, tuple) else assert_same(a, b) is None


ERRORS = [
    lambda m: m.take(m.ones(3, 4), m.tensor([12])),
    lambda m: m.take(m.ones(3, 4), m.tensor([-13])),
    lambda m: m.take(m.ones(3, 4), m.tensor([1.0])),
    lambda m: m.take(m.ones(3), m.tensor([1]), out=m.ones(1, dtype=m.float64)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([[0, 2]]), m.ones(2, 4)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, 2], dtype=m.int32), m.ones(2, 4)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, 2]), m.ones(2, 4, dtype=m.float64)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, 2]), m.ones(3, 4)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, 2]), m.ones(2, 5)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, 2]), m.ones(2, 4, 1)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, 3]), m.ones(2, 4)),
    lambda m: m.ones(3, 4).index_copy(0, m.tensor([0, -1]), m.ones(2, 4)),
    lambda m: m.ones(3, 4).index_copy(2, m.tensor([0, 1]), m.ones(2, 4)),
    lambda m: m.ones(3, 4).index_fill(0, m.tensor([[0, 2]]), 1.0),
    lambda m: m.ones(3, 4).index_fill(0, m.tensor([0, 2], dtype=m.int32), 1.0),
    lambda m: m.ones(3, 4).index_fill(0, m.tensor([0, 3]), 1.0),
    lambda m: m.ones(3, 4).index_fill(0, m.tensor([0, -4]), 1.0),
    lambda m: m.ones(3, 4).index_fill(0, m.tensor([0]), m.ones(1)),
    lambda m: m.ones(3, 4).index_put((m.tensor([0, 2]),), m.ones(4, dtype=m.float64)),
    lambda m: m.ones(3, 4).index_put((m.tensor([5]),), m.ones(4)),
    lambda m: m.ones(3, 4).index_put((m.tensor([0, 2]),), m.ones(3)),
    lambda m: m.ones(3, 4).index_put((m.tensor([0.0]),), m.ones(4)),
    lambda m: m.ones(3, 4).index_put((m.tensor([0]),) * 3, m.ones(1)),
    lambda m: m.ones(3, 4).index_put((None, m.tensor([0])), m.ones(1)),
    lambda m: m.index_put(m.ones(3, 4), (m.tensor([0]), 1.5), m.ones(1)),
    lambda m: m.ones(3, 4).masked_scatter(m.ones(3, 4) > 0, m.ones(12, dtype=m.float64)),
    lambda m: m.ones(3, 4).masked_scatter(m.ones(3, 4, dtype=m.int32), m.ones(12)),
    lambda m: m.ones(3, 4).masked_scatter(m.ones(3, 4, dtype=m.bool), m.ones(5)),
    lambda m: m.ones(3, 4).masked_scatter(m.ones(5, dtype=m.bool), m.ones(12)),
    lambda m: m.ones(3, 4).masked_scatter_(m.ones(2, 3, 4, dtype=m.bool), m.ones(30)),
    lambda m: m.ones(3, 4).scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 2), "add"),
    lambda m: m.ones(3, 4).scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 2, dtype=m.float64), "sum"),
    lambda m: m.ones(3, 4).scatter_reduce(0, m.tensor([[0, 5]]), m.ones(1, 2), "sum"),
    lambda m: m.ones(3, 4).scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 2), "sum", out=m.ones(3, 4).double()),
    lambda m: m.scatter_reduce(m.ones(3, 4, requires_grad=True), 0, m.tensor([[0, 1]]), m.ones(1, 2), "max").sum()
    .backward(),
    lambda m: m.ones(3, 4, requires_grad=True).scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 3), "amin").sum()
    .backward(),
    lambda m: m.ones(3, 4).scatter_reduce(0, m.tensor([[0, 1]]), m.ones(1, 3, requires_grad=True), "mean").sum()
    .backward(),
    lambda m: m.quantile(m.ones(3), 1.5),
    lambda m: m.quantile(m.ones(3), m.tensor([1.5])),
    lambda m: m.quantile(m.ones(3), 0.5, interpolation="foo"),
    lambda m: m.quantile(m.ones(3), m.tensor([0.5], dtype=m.float64)),
    lambda m: m.quantile(m.ones(3, dtype=m.int64), 0.5),
    lambda m: m.quantile(m.ones(3), m.ones(1, 1) * 0.5),
    lambda m: m.quantile(m.ones(0), 0.5),
    lambda m: m.nanquantile(m.ones(3, 4), 0.5, dim=2),
    lambda m: m.quantile(m.ones(3), 0.5, out=m.ones(1, dtype=m.float64)),
    lambda m: m.histc(m.tensor([1, 2]), 3),
    lambda m: m.histc(m.ones(3), 0),
    lambda m: m.histc(m.ones(3), 3, 2, 1),
    lambda m: m.histc(m.ones(3), 3, 0, float("inf")),
    lambda m: m.histc(m.ones(3), 3, out=m.ones(3, dtype=m.float64)),
    lambda m: m.bincount(m.tensor([-1, 2])),
    lambda m: m.bincount(m.tensor([1.0, 2])),
    lambda m: m.bincount(m.tensor([[1, 2]])),
    lambda m: m.bincount(m.tensor([1, 2]), m.ones(3)),
    lambda m: m.bincount(m.tensor([1, 2]), minlength=-1),
    lambda m: m.ones(3, 4).repeat_interleave(-1),
    lambda m: m.ones(3, 4).repeat_interleave(m.tensor([1, -1, 1]), 0),
    lambda m: m.ones(3, 4).repeat_interleave(m.tensor([1, 1]), 0),
    lambda m: m.ones(3, 4).repeat_interleave(m.tensor([1.0, 1, 1]), 0),
    lambda m: m.ones(3, 4).repeat_interleave(m.tensor([1, 1, 1]), 0, output_size=4),
    lambda m: m.ones(3, 4).repeat_interleave(2, 0, output_size=4),
    lambda m: m.repeat_interleave(m.ones(2, 2, dtype=m.int64)),
    lambda m: m.combinations(m.ones(3), -1),
    lambda m: m.combinations(m.ones(3, 4)),
    lambda m: m.tril_indices(-1, 3),
    lambda m: m.triu_indices(3, -2),
    lambda m: m.block_diag(m.ones(1, 1, 1)),
    lambda m: m.block_diag(m.ones(1), 1.5),
    lambda m: m.cosine_similarity(m.ones(3, 4), m.ones(5)),
    lambda m: m.cosine_similarity(m.ones(3, 4, dtype=m.int64), m.ones(3, 4, dtype=m.int64)),
    lambda m: m.renorm(m.ones(3, 4), -1, 0, 1.0),
    lambda m: m.renorm(m.ones(3, 4), 2, 0, -1.0),
    lambda m: m.renorm(m.ones(3, 4, dtype=m.int64), 2, 0, 1.0),
    lambda m: m.renorm(m.ones(3, 4), 2, 5, 1.0),
    lambda m: m.ones(3, 4).unfold(1, 5, 1),
    lambda m: m.ones(3, 4).unfold(1, 2, 0),
    lambda m: m.ones(3, 4).unfold(2, 2, 1),
    lambda m: m.unique(m.ones(3, 4), dim=3),
    lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v),
    lambda m: (m.ones(2, requires_grad=True) * 1).apply_(lambda v: v),
    lambda m: m.ones(2).apply_(lambda v: "a"),
    lambda m: m.ones(2).apply_(1),
    lambda m: m.ones(2).apply_(),
    lambda m: m.ones(2).map_(m.ones(2, requires_grad=True), lambda a, b: a),
    lambda m: m.ones(2).map_(m.ones(2, 3), lambda a, b: a),
    lambda m: m.arange(2).map_(m.ones(2), lambda a, b: a),
    lambda m: m.ones(2).pin_memory(),
    lambda m: m.ones(2).is_pinned("a"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    assert_same_error(ERRORS[k])
