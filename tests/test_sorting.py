"""Sorting and selection against torch 2.13: values, indices, nodes and their saved attributes, first- and
second-order gradients, NaN and tie handling, dtypes, 0-d inputs and errors."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, assert_same_error

RNG = np.random.default_rng(7)
A = RNG.permutation(20).reshape(4, 5).astype(np.float64) / 3 - 2  # distinct values: no tie-order ambiguity
W = RNG.standard_normal((4, 5))
NAN = np.array([[1.0, np.nan, -2.0, 5.0, 3.0], [np.nan, 0.5, np.nan, -1.0, 2.0]])
TIES = np.array([[1.0, 2.0, 2.0, 3.0, 3.0], [4.0, 4.0, 1.0, 1.0, 5.0], [7.0, 7.0, 7.0, 7.0, 7.0]])

CASES = {
    "sort": lambda m, x: m.sort(x, 1),
    "sort_desc": lambda m, x: m.sort(x, 0, descending=True),
    "sort_method": lambda m, x: x.sort(dim=-1, stable=True),
    "argsort": lambda m, x: m.argsort(x, 1, descending=True),
    "msort": lambda m, x: m.msort(x),
    "topk": lambda m, x: m.topk(x, 3),
    "topk_smallest_dim0": lambda m, x: x.topk(2, 0, largest=False),
    "kthvalue": lambda m, x: m.kthvalue(x, 2, 1),
    "kthvalue_keepdim": lambda m, x: x.kthvalue(3, 0, True),
    "median_all": lambda m, x: m.median(x),
    "median_dim": lambda m, x: m.median(x, 1),
    "median_keepdim": lambda m, x: x.median(0, keepdim=True),
    "nanmedian_all": lambda m, x: m.nanmedian(x),
    "nanmedian_dim": lambda m, x: m.nanmedian(x, 1),
    "mode": lambda m, x: m.mode(x, 1),
    "mode_dim0_keepdim": lambda m, x: x.mode(0, True),
    "cummax": lambda m, x: m.cummax(x, 1),
    "cummin": lambda m, x: x.cummin(0),
}


def _parts(out):
    return list(out) if isinstance(out, tuple) else [out]


def _check(name, data, grads=True):
    results = []
    for m in (torch, tl):
        x = m.tensor(data, requires_grad=grads)
        out = CASES[name](m, x)
        parts = _parts(out)
        values = parts[0]
        record = {"type": type(out).__name__, "n": len(parts)}
        if grads and values.dtype.is_floating_point:
            node = values.grad_fn
            record["node"] = node.name()
            record["saved"] = {a: getattr(node, a) for a in dir(node)
                               if a.startswith("_saved_") and not isinstance(getattr(node, a), m.Tensor)}
            w = m.tensor(W[:values.shape[0], :values.shape[1]] if values.ndim == 2 else
                         W[0, :values.shape[0]] if values.ndim == 1 else W[0, 0])
            g, = m.autograd.grad((values * w).sum(), x, create_graph=True)
            # the gradient is a scatter of w: it needs no grad, in both (torch's formulas are linear in grad)
            record["grad"], record["g_requires_grad"] = g, g.requires_grad
        results.append((parts, record))
    (tparts, trec), (lparts, lrec) = results
    assert lrec["type"] == trec["type"] and lrec["n"] == trec["n"]
    for a, b in zip(lparts, tparts):
        assert_same(a, b)
    for key in ("node", "saved"):
        assert lrec.get(key) == trec.get(key), key
    if "grad" in trec:
        assert_same(lrec["grad"], trec["grad"])
        assert lrec["g_requires_grad"] == trec["g_requires_grad"]


@pytest.mark.parametrize("name", CASES)
def test_against_torch_distinct_values(name):
    _check(name, A)


@pytest.mark.parametrize("name", [n for n in CASES if not n.startswith(("sort", "argsort", "msort", "topk",
                                                                          "kthvalue", "mode"))])
def test_against_torch_with_nan(name):
    _check(name, NAN)


@pytest.mark.parametrize("name", ["sort", "sort_desc", "argsort", "msort", "topk", "kthvalue"])
def test_nan_sorts_largest(name):
    _check(name, NAN[:, [0, 2, 3, 4, 1]] if name == "kthvalue" else NAN)


@pytest.mark.parametrize("name", ["mode", "mode_dim0_keepdim", "cummax", "cummin", "median_dim", "sort_method"])
def test_ties(name):
    _check(name, TIES)


@pytest.mark.parametrize("dtype", ["int64", "int32", "float32", "bool"])
@pytest.mark.parametrize("name", ["sort", "argsort", "topk", "kthvalue", "median_dim", "mode", "cummax"])
def test_dtypes(name, dtype):
    data = (A > 0) if dtype == "bool" else (A * 3).astype(dtype)
    if dtype == "bool" and name in ("kthvalue", "median_dim", "topk"):  # torch has no CPU kernel for these
        assert_same_error(lambda m: CASES[name](m, m.tensor(data)))
        return
    _check(name, data, grads=dtype == "float32")


REFUSED = {  # name -> dtypes torch's CPU kernels refuse (each with its own message)
    **{n: ["complex64"] for n in ("sort", "argsort", "msort", "mode", "cummax", "cummin")},
    **{n: ["bool", "complex64"] for n in ("topk", "kthvalue", "median_all", "median_dim", "nanmedian_all",
                                           "nanmedian_dim", "searchsorted")},
}


@pytest.mark.parametrize("name,dtype", [(n, d) for n, ds in REFUSED.items() for d in ds])
def test_refused_dtypes(name, dtype):
    fn = (lambda m, x: m.searchsorted(x, x)) if name == "searchsorted" else CASES[name]
    assert_same_error(lambda m: fn(m, m.tensor(A).to(getattr(m, dtype))))


@pytest.mark.parametrize("name", ["sort", "topk", "median_all", "cummax", "kthvalue"])
def test_zero_dim(name):
    fn = {"sort": lambda m, x: m.sort(x), "topk": lambda m, x: m.topk(x, 1), "median_all": lambda m, x: m.median(x),
          "cummax": lambda m, x: m.cummax(x, 0), "kthvalue": lambda m, x: m.kthvalue(x, 1)}[name]
    outs = []
    for m in (torch, tl):
        x = m.tensor(2.5, requires_grad=True)
        parts = _parts(fn(m, x))
        g, = m.autograd.grad(parts[0] * 3, x)
        outs.append(parts + [g])
    for a, b in zip(outs[1], outs[0]):
        assert_same(a, b)


ERRORS = [
    lambda m: m.topk(m.ones(3), 4),
    lambda m: m.kthvalue(m.ones(3), 0),
    lambda m: m.kthvalue(m.ones(3), 4),
    lambda m: m.sort(m.ones(3), 1),
    lambda m: m.median(m.ones(0), 0),
    lambda m: m.median(m.ones(2, 0), 1),
    lambda m: m.mode(m.ones(2, 0), 1),
    lambda m: m.searchsorted(m.ones(2, 3), m.ones(3, 2)),
    lambda m: m.searchsorted(m.ones(3), m.ones(2), side="middle"),
    lambda m: m.searchsorted(m.ones(3), m.ones(2), side="left", right=True),
    lambda m: m.bucketize(m.ones(2), m.ones(2, 2)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    assert_same_error(ERRORS[k])


SEARCH = [
    (lambda m, s, v: m.searchsorted(s, v), np.array([1.0, 3.0, 3.0, 5.0]), np.array([[0.0, 3.0, 4.0, 6.0]])),
    (lambda m, s, v: m.searchsorted(s, v, right=True), np.array([1.0, 3.0, 3.0, 5.0]), np.array([0.0, 3.0, 6.0])),
    (lambda m, s, v: m.searchsorted(s, v, side="right", out_int32=True), np.array([1, 3, 5]), np.array([3, 4])),
    (lambda m, s, v: m.searchsorted(s, v), np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]),
     np.array([[2.5, 0.0], [4.0, 7.0]])),
    (lambda m, s, v: m.searchsorted(s, v, sorter=m.tensor([1, 2, 0])), np.array([5.0, 1.0, 3.0]),
     np.array([0.0, 2.0, 4.0, 6.0])),
    (lambda m, s, v: m.searchsorted(s, 3.0), np.array([1.0, 3.0, 5.0]), None),
    (lambda m, s, v: m.bucketize(v, s), np.array([1.0, 3.0, 5.0]), np.array([[0.0, 1.0], [3.0, 9.0]])),
    (lambda m, s, v: m.bucketize(v, s, right=True), np.array([1.0, 3.0, 5.0]), np.array([0.0, 1.0, 3.0, 9.0])),
    (lambda m, s, v: m.median(v), None, np.zeros(0)),
    (lambda m, s, v: m.nanmedian(v), None, np.zeros(0)),
]


@pytest.mark.parametrize("k", range(len(SEARCH)))
def test_searchsorted_and_bucketize(k):
    fn, seq, values = SEARCH[k]
    outs = [fn(m, None if seq is None else m.tensor(seq), None if values is None else m.tensor(values))
            for m in (torch, tl)]
    assert_same(outs[1], outs[0])
