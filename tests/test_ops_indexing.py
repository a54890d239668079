"""Indexing ops against real torch: values, gradients, node structure, saved attributes and errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph_with_nr, pair

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((2, 3, 4))
X2 = RNG.standard_normal((3, 4))
DTYPES = [np.float32, np.float64]


def alternating(cases):
    """(case, dtype) pairs, float32 and float64 in turn: every case once, both dtypes throughout (compile time)."""
    return [(c, DTYPES[i % 2]) for i, c in enumerate(cases)]


def saved(node):
    return {a: getattr(node, a) for a in dir(node) if a.startswith("_saved_")}


def assert_saved_same(node, node_t):
    s, st = saved(node), saved(node_t)
    assert sorted(s) == sorted(st)
    for k in s:
        a, b = s[k], st[k]
        if isinstance(b, torch.Tensor) or (isinstance(b, tuple) and any(isinstance(e, torch.Tensor) for e in b)):
            assert_same(a, b)
        else:
            assert a == b, (k, a, b)


def _run(fn, lib, arrays, dtype):
    """fn(lib, *tensors) -> (output, leaves); leaves require grad."""
    leaves = [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    return fn(lib, *leaves), leaves


def check(fn, arrays=(X3,), dtype=np.float32, graph=True, saved=False):
    """Same values, gradients (a random cotangent) and graph (and _saved_* attributes) in torchlike and torch."""
    y, leaves = _run(fn, tl, arrays, dtype)
    yt, leaves_t = _run(fn, torch, arrays, dtype)
    assert_same(y, yt)
    if graph:
        assert graph_with_nr(y) == graph_with_nr(yt)
    if saved:
        assert_saved_same(y.grad_fn, yt.grad_fn)
    g = RNG.standard_normal(tuple(yt.shape)).astype(dtype)
    y.backward(tl.tensor(g))
    yt.backward(torch.tensor(g))
    for a, b in zip(leaves, leaves_t):
        assert_same(a.grad, b.grad)
    return y, yt


def raises_same(fn, *arrays):
    """fn raises in torch and in torchlike with the same exception type and message."""
    with pytest.raises(Exception) as et:
        fn(torch, *[torch.tensor(a) for a in arrays])
    with pytest.raises(type(et.value)) as el:
        fn(tl, *[tl.tensor(a) for a in arrays])
    assert str(el.value) == str(et.value)


# ----- __getitem__ -----------------------------------------------------------------------------------------
def _i(T, v):
    return T.tensor(v)


GETITEM = {
    "int": lambda T, x: x[1],
    "neg_int": lambda T, x: x[-1],
    "int_slice": lambda T, x: x[0, 1:3],
    "col": lambda T, x: x[:, 0],
    "three_ints": lambda T, x: x[1, 2, 3],
    "step": lambda T, x: x[:, ::2, 1:4:2],
    "neg_slice": lambda T, x: x[-2:, :-1],
    "clamped_slice": lambda T, x: x[0:5, 0],
    "single_full_slice": lambda T, x: x[:],
    "empty_slice": lambda T, x: x[:, 2:1],
    "none": lambda T, x: x[None],
    "none_int_none": lambda T, x: x[None, 0, None],
    "ellipsis": lambda T, x: x[...],
    "full_slices": lambda T, x: x[:, :],
    "ellipsis_int": lambda T, x: x[..., 1],
    "ellipsis_none": lambda T, x: x[..., None],
    "true": lambda T, x: x[True],
    "int_true": lambda T, x: x[0, True],
    "0d_int_tensor": lambda T, x: x[_i(T, 1)],
    "index": lambda T, x: x[_i(T, [1, 0, 1])],
    "index_dim1": lambda T, x: x[:, _i(T, [0, 2, 2])],
    "int_index": lambda T, x: x[0, _i(T, [0, 2, 2])],
    "slice_index": lambda T, x: x[1:, _i(T, [2, 0])],
    "neg_index": lambda T, x: x[:, _i(T, [-1, -3])],
    "int32_index": lambda T, x: x[_i(T, [1, 0]).int()],
    "list": lambda T, x: x[[1, 1, 0]],
    "numpy": lambda T, x: x[:, np.array([2, 0])],
    "index_2d": lambda T, x: x[:, _i(T, [[0, 1], [2, 2]])],
    "two_adjacent": lambda T, x: x[:, _i(T, [0, 2, 1]), _i(T, [3, 3, 0])],
    "two_broadcast": lambda T, x: x[_i(T, [[0], [1]]), _i(T, [0, 2, 1])],
    "separated": lambda T, x: x[_i(T, [0, 1, 1]), :, _i(T, [3, 0, 0])],
    "int_then_separated": lambda T, x: x[0, :, _i(T, [1, 3])],
    "index_none": lambda T, x: x[_i(T, [1, 0]), None],
    "int_none_index": lambda T, x: x[1, None, _i(T, [0, 2])],
    "index_then_int": lambda T, x: x[_i(T, [1, 0]), :, 2],
    "mask": lambda T, x: x[_i(T, [True, False])],
    "mask_dim1": lambda T, x: x[:, _i(T, [True, False, True])],
    "mask_2d": lambda T, x: x[_i(T, [[True, False, True], [False, True, True]])],
    "mask_2d_slice": lambda T, x: x[_i(T, [[True, False, True], [False, True, True]]), 1:3],
    "mask_2d_index": lambda T, x: x[_i(T, [[True, False, True], [False, True, True]]), _i(T, [0, 1, 2, 3])],
    "mask_numpy": lambda T, x: x[np.array([False, True])],
    "mask_from_values": lambda T, x: x[x > 0],
    "int_mask": lambda T, x: x[1, _i(T, [True, False, True])],
    "mask_ellipsis": lambda T, x: x[..., _i(T, [True, False, True, True])],
    "chain": lambda T, x: x[0][_i(T, [2, 0])][:, 1:],
}


@pytest.mark.parametrize("case,dtype", alternating(GETITEM))
def test_getitem(case, dtype):
    fn = GETITEM[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(lambda T, x: fn(T, x), dtype=dtype)


def test_getitem_repeated_indices_accumulate():
    y, yt = check(lambda T, x: x[_i(T, [1, 1, 1, 0])] * 2, arrays=(X2,))
    assert y.grad_fn.next_functions[0][0].name() == "IndexBackward0"


def test_getitem_saved_attributes():
    idx = [0, 2, 2]
    for fn in [lambda T, x: x[-1], lambda T, x: x[0, -3:-1], lambda T, x: x[:], lambda T, x: x[:, 1:100:2],
               lambda T, x: x[None], lambda T, x: x[...], lambda T, x: x[:, _i(T, idx)],
               lambda T, x: x[0, _i(T, idx)], lambda T, x: x[_i(T, [[True, False, True], [False, True, True]])],
               lambda T, x: x[_i(T, [0, 1]).int(), :, 1]]:
        y = fn(tl, tl.tensor(X3, requires_grad=True))
        yt = fn(torch, torch.tensor(X3, requires_grad=True))
        assert_saved_same(y.grad_fn, yt.grad_fn)


def test_getitem_no_grad_and_int_tensors():
    a = np.arange(24).reshape(2, 3, 4)
    x, xt = pair(a)
    for fn in [lambda T, x: x[1, :, _i(T, [0, 0])], lambda T, x: x[x > 5], lambda T, x: x[..., 1:3]]:
        y, yt = fn(tl, x), fn(torch, xt)
        assert_same(y, yt)
        assert y.grad_fn is None and not y.requires_grad
    with tl.no_grad():
        y = tl.tensor(X3, requires_grad=True)[0, _i(tl, [1])]
    assert y.grad_fn is None


def test_getitem_0d():
    x, xt = pair(np.float32(3.0), requires_grad=True)
    for fn in [lambda x: x[...], lambda x: x[None], lambda x: x[True]]:
        assert_same(fn(x), fn(xt))
        assert graph_with_nr(fn(x)) == graph_with_nr(fn(xt))


GETITEM_ERRORS = [
    lambda T, x: x[2],
    lambda T, x: x[:, -4],
    lambda T, x: x[0, 0, 0, 0],
    lambda T, x: x[..., 0, 0, 0, 0],
    lambda T, x: x[_i(T, [0, 5])],
    lambda T, x: x[:, _i(T, [-4])],
    lambda T, x: x[_i(T, [0, 1]), :, _i(T, [1, 4])],
    lambda T, x: x[_i(T, [True, False, True])],
    lambda T, x: x[:, _i(T, [True, False])],
    lambda T, x: x[0, T.ones(3, 3, dtype=T.bool)],
    lambda T, x: x[_i(T, [0, 1]), _i(T, [0, 1, 2])],
    lambda T, x: x[_i(T, [0.0, 1.0])],
    lambda T, x: x[1.5],
    lambda T, x: x[::-1],
    lambda T, x: x[::0],
    lambda T, x: x[0][0][0][0],
]


@pytest.mark.parametrize("k", range(len(GETITEM_ERRORS)))
def test_getitem_errors(k):
    raises_same(lambda T, x: GETITEM_ERRORS[k](T, x), X3)


# ----- __setitem__ -----------------------------------------------------------------------------------------
def _setitem(index, value=None):
    """x = a * 1 (a non-leaf), x[index] = value (a tensor made from v), return x * 1."""
    def fn(T, a, *v):
        x = a * 1
        x[index(T)] = v[0] if v else value
        return x * 1
    return fn


SETITEM = {
    "int": (lambda T: 1, (4,)),
    "int_scalar": (lambda T: 1, None),
    "slice": (lambda T: (slice(1, None), slice(0, 3)), (2, 3)),
    "full_broadcast": (lambda T: slice(None), (4,)),
    "ellipsis_0d": (lambda T: Ellipsis, ()),
    "ellipsis_same": (lambda T: Ellipsis, (3, 4)),
    "none": (lambda T: None, (1, 4)),
    "true": (lambda T: True, (4,)),
    "index": (lambda T: T.tensor([0, 2]), (4,)),
    "index_leading_ones": (lambda T: T.tensor([0, 2]), (1, 1, 4)),
    "index_scalar": (lambda T: T.tensor([2, 0]), None),
    "index_0d_value": (lambda T: T.tensor([2, 0]), ()),
    "index_dim1": (lambda T: (slice(None), T.tensor([3, 1])), (3, 1)),
    "int_index": (lambda T: (0, T.tensor([1, 3])), (2,)),
    "separated": (lambda T: (T.tensor([0, 2]), T.tensor([1, 3])), (2,)),
    "mask": (lambda T: T.tensor([True, False, True]), (4,)),
    "mask_2d_scalar": (lambda T: T.tensor(X2 > 0), None),
    "slice_mask": (lambda T: (slice(1, None), T.tensor([True, False, False, True])), (2, 1)),
}


@pytest.mark.parametrize("case,dtype", alternating(SETITEM))
def test_setitem(case, dtype):
    index, vshape = SETITEM[case]
    if vshape is None:
        check(_setitem(index, 2.5), arrays=(X2,), dtype=dtype)
    else:
        check(_setitem(index), arrays=(X2, RNG.standard_normal(vshape)), dtype=dtype)


def test_setitem_graph_and_saved():
    for index in [lambda T: T.tensor([0, 2]), lambda T: 0, lambda T: slice(None), lambda T: Ellipsis,
                  lambda T: T.tensor([True, False, True])]:
        out = []
        for T in (tl, torch):
            a = T.tensor(X2, requires_grad=True)
            v = T.tensor(X2[0], requires_grad=True)
            x = a.clone()
            x[index(T)] = v
            out.append(x)
        assert graph_with_nr(out[0]) == graph_with_nr(out[1])
        assert_saved_same(out[0].grad_fn, out[1].grad_fn)
        assert out[0]._version == out[1]._version


def test_setitem_values_and_cast():
    t, tt = pair(np.arange(12).reshape(3, 4))
    for T, x in ((tl, t), (torch, tt)):
        x[T.tensor([0, 2])] = 7
        x[1, 1:3] = 2.7
        x[:, 0] = T.tensor([5, 6, 7])
    assert_same(t, tt)
    x, xt = pair(X2.astype(np.float32))
    x[0] = tl.tensor(X2[1])  # float64 into float32 through copy_
    xt[0] = torch.tensor(X2[1])
    assert_same(x, xt)


def test_setitem_duplicate_indices_value_grad():
    # every duplicate receives the gradient of the position (as torch's IndexPutBackward0 does)
    a, at = pair(X2, requires_grad=True)
    v, vt = pair(X2[0], requires_grad=True)
    for T, a_, v_ in ((tl, a, v), (torch, at, vt)):
        x = a_ * 1
        x[T.tensor([1, 1])] = v_
        (x * T.tensor(X2)).sum().backward()
    assert_same(a.grad, at.grad)
    assert_same(v.grad, vt.grad)


SETITEM_ERRORS = [
    lambda T, a: a.__setitem__(T.tensor([0, 1]), T.ones(3)),
    lambda T, a: a.__setitem__(0, T.ones(4, 3)),
    lambda T, a: a.__setitem__(slice(None), T.ones(5)),
    lambda T, a: a.__setitem__(0, T.ones(2, 3, 4)),
    lambda T, a: a.__setitem__(T.tensor([0]), T.ones(4, dtype=T.float32)),
    lambda T, a: a.__setitem__(5, 1.0),
    lambda T, a: a.__setitem__(T.tensor([0, 5]), 1.0),
    lambda T, a: a.__setitem__(T.tensor([True, False]), 1.0),
    lambda T, a: a.__setitem__(0, np.ones(4)),
    lambda T, a: a.__setitem__(0, [1.0]),
]


@pytest.mark.parametrize("k", range(len(SETITEM_ERRORS)))
def test_setitem_errors(k):
    raises_same(SETITEM_ERRORS[k], X2)
    a = tl.tensor(X2)
    with pytest.raises(Exception):
        SETITEM_ERRORS[k](tl, a)
    assert_same(a, torch.tensor(X2))  # nothing half-changed
    assert a._version == 0


def test_setitem_leaf_errors():
    for index, msg in [(lambda T: T.tensor([0]), "a leaf Variable that requires grad is being used in an in-place"),
                       (lambda T: 0, "a view of a leaf Variable that requires grad is being used in an in-place"),
                       (lambda T: Ellipsis, "a leaf Variable that requires grad is being used in an in-place")]:
        for T in (tl, torch):
            a = T.tensor(X2, requires_grad=True)
            with pytest.raises(RuntimeError, match=msg):
                a[index(T)] = 1.0
            with T.no_grad():
                a[index(T)] = 1.0
            assert a.grad_fn is None
    b, bt = pair(X2)
    v, vt = pair(X2[0], requires_grad=True)
    b[0] = v
    bt[0] = vt
    assert graph_with_nr(b) == graph_with_nr(bt)


# ----- index_select / gather / take_along_dim --------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_select(dim, dtype):
    check(lambda T, x: T.index_select(x, dim, T.tensor([2, 0, 2, 2])), arrays=(X2,), dtype=dtype, saved=True)
    check(lambda T, x: x.index_select(dim, T.tensor([1]).int()), arrays=(X2,), dtype=dtype)


GATHER_INDEX = np.array([[0, 1, 2, 0], [2, 2, 1, 0]])


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather(dtype):
    check(lambda T, x: T.gather(x, 0, T.tensor(GATHER_INDEX)), arrays=(X2,), dtype=dtype, saved=True)
    check(lambda T, x: x.gather(1, T.tensor([[3, 3], [0, 1], [2, 2]])), arrays=(X2,), dtype=dtype)
    check(lambda T, x: x.gather(-1, T.tensor([[[0, 0]], [[3, 1]]])), arrays=(X3,), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_along_dim(dtype):
    check(lambda T, x: T.take_along_dim(x, T.tensor(GATHER_INDEX), 0), arrays=(X2,), dtype=dtype, saved=True)
    check(lambda T, x: x.take_along_dim(T.tensor([[-1], [0], [2]]), dim=1), arrays=(X2,), dtype=dtype)
    check(lambda T, x: T.take_along_dim(x, T.tensor([[0, 0, 2, 1]]), 0), arrays=(X2,), dtype=dtype)
    check(lambda T, x: T.take_along_dim(x, T.tensor([0, 5, 5])), arrays=(X2,), dtype=dtype)


# ----- scatter / scatter_add / index_add ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter_add(dtype):
    check(lambda T, x, s: T.scatter_add(x, 0, T.tensor(GATHER_INDEX), s[:2]), arrays=(X2, X2), dtype=dtype, saved=True)
    check(lambda T, x, s: x.scatter_add(1, T.tensor([[3, 3], [0, 1], [2, 2]]), s[:, :2]), arrays=(X2, X2), dtype=dtype)
    x, xt = pair(X2.astype(dtype), requires_grad=True)
    src = X2[:2].astype(dtype)
    y = x.scatter_add(0, tl.tensor(GATHER_INDEX), tl.tensor(src))
    yt = xt.scatter_add(0, torch.tensor(GATHER_INDEX), torch.tensor(src))
    assert_saved_same(y.grad_fn, yt.grad_fn)  # index is saved only for src's gradient


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatter(dtype):
    index = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])  # no duplicates along dim 0: a defined result
    check(lambda T, x, s: T.scatter(x, 0, T.tensor(index), s[:2]), arrays=(X2, X2), dtype=dtype, saved=True)
    check(lambda T, x: x.scatter(1, T.tensor([[3], [0], [2]]), 1.5), arrays=(X2,), dtype=dtype, saved=True)
    check(lambda T, x: T.scatter(x, 1, T.tensor([[3], [0], [2]]), value=-2), arrays=(X2,), dtype=dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_add(dtype):
    check(lambda T, x, s: T.index_add(x, 0, T.tensor([2, 0, 2]), s, alpha=2.0), arrays=(X2, X2), dtype=dtype,
          saved=True)
    check(lambda T, x, s: x.index_add(1, T.tensor([3, 3]), s[:, :2]), arrays=(X2, X2), dtype=dtype, saved=True)
    x, xt = pair(X2.astype(dtype), requires_grad=True)
    y = x.index_add(0, tl.tensor([0]), tl.tensor(X2[:1].astype(dtype)))
    yt = xt.index_add(0, torch.tensor([0]), torch.tensor(X2[:1].astype(dtype)))
    assert_saved_same(y.grad_fn, yt.grad_fn)


@pytest.mark.parametrize("dtype", DTYPES)
def test_inplace_variants(dtype):
    m = np.array([True, False, True, False])
    idx = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])
    check(lambda T, x: (x * 1).masked_fill_(T.tensor(m), -1.0), arrays=(X2,), dtype=dtype, saved=True)
    check(lambda T, x, s: (x * 1).scatter_add_(0, T.tensor(idx), s[:2]), arrays=(X2, X2), dtype=dtype)
    check(lambda T, x, s: (x * 1).scatter_(0, T.tensor(idx), s[:2]), arrays=(X2, X2), dtype=dtype)
    check(lambda T, x: (x * 1).scatter_(0, T.tensor(idx), 3.0), arrays=(X2,), dtype=dtype)
    check(lambda T, x, s: (x * 1).index_add_(0, T.tensor([1, 1]), s[:2], alpha=-1), arrays=(X2, X2), dtype=dtype)
    for T in (tl, torch):
        a = T.tensor(X2, requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            a.masked_fill_(T.tensor(m), 0.0)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            a.scatter_add_(0, T.tensor(idx), a.detach())
    x = tl.tensor(X2) * 1
    v = x._version
    x.index_add_(0, tl.tensor([0]), tl.ones(1, 4, dtype=tl.float64))
    assert x._version == v + 1


def test_repeated_indices_accumulate():
    idx = [1, 1, 1, 0]
    check(lambda T, x: T.index_select(x, 0, T.tensor(idx)), arrays=(X2,))
    check(lambda T, x: T.gather(x, 1, T.tensor([[0, 0, 0], [1, 1, 1], [3, 3, 3]])), arrays=(X2,))
    check(lambda T, x, s: T.scatter_add(x, 1, T.tensor([[0, 0, 0], [1, 1, 1], [3, 3, 3]]), s[:, :3]), arrays=(X2, X2))


# ----- masked_fill / masked_select -------------------------------------------------------------------------
MASKS = {
    "full": X2 > 0,
    "row": np.array([True, False, True, False]),
    "col": np.array([[True], [False], [True]]),
    "0d": np.array(True),
    "bigger": np.array([[[True]], [[False]]]) & (X2 > 0),
}


@pytest.mark.parametrize("mask,dtype", alternating(MASKS))
def test_masked_fill(mask, dtype):
    m = MASKS[mask]
    check(lambda T, x: T.masked_fill(x, T.tensor(m), 2.5), arrays=(X2,), dtype=dtype, saved=True)
    check(lambda T, x, v: x.masked_fill(T.tensor(m), v), arrays=(X2, np.array(-3.0)), dtype=dtype, saved=True)


@pytest.mark.parametrize("mask,dtype", alternating(["full", "row", "col", "bigger"]))
def test_masked_select(mask, dtype):
    check(lambda T, x: T.masked_select(x, T.tensor(MASKS[mask])), arrays=(X2,), dtype=dtype, saved=True)


def test_masked_fill_values():
    # int tensors, value tensor of another dtype, and a value tensor that requires grad with a float64 dtype
    a, at = pair(np.arange(4))
    m = np.array([True, False, True, False])
    assert_same(a.masked_fill(tl.tensor(m), 2), at.masked_fill(torch.tensor(m), 2))
    check(lambda T, x, v: x.masked_fill(T.tensor(m), v.double()), arrays=(X2, np.array(1.5)))


MASK_ERRORS = [
    lambda T, x: T.masked_fill(x, T.tensor([True, False]), 1.0),
    lambda T, x: T.masked_fill(x, T.tensor([1, 0, 1, 0], dtype=T.uint8), 1.0),
    lambda T, x: T.masked_fill(x, T.tensor([True, False, True, False]), T.tensor([1.0])),
    lambda T, x: x.masked_fill_(T.ones(2, 3, 4, dtype=T.bool), 1.0),
    lambda T, x: T.masked_select(x, T.tensor([True, False])),
    lambda T, x: T.masked_select(x, T.tensor([1, 0, 1, 0], dtype=T.uint8)),
]


@pytest.mark.parametrize("k", range(len(MASK_ERRORS)))
def test_masked_errors(k):
    raises_same(MASK_ERRORS[k], X2)


OTHER_ERRORS = [
    lambda T, x: T.index_select(x, 0, T.tensor([3])),
    lambda T, x: T.index_select(x, 0, T.tensor([-1])),
    lambda T, x: T.index_select(x, 0, T.tensor([[0]])),
    lambda T, x: T.index_select(x, 0, T.tensor([0.0])),
    lambda T, x: T.gather(x, 0, T.tensor([[3, 0, 0, 0]])),
    lambda T, x: T.gather(x, 0, T.tensor([[-1, 0, 0, 0]])),
    lambda T, x: T.gather(x, 0, T.tensor([0])),
    lambda T, x: T.gather(x, 0, T.zeros(2, 5, dtype=T.int64)),
    lambda T, x: T.gather(x, 0, T.zeros(2, 4)),
    lambda T, x: T.scatter_add(x, 0, T.tensor([[3]]), x),
    lambda T, x: T.scatter_add(x, 0, T.tensor([[0]]), x.float()),
    lambda T, x: T.scatter_add(x, 0, T.zeros(2, 5, dtype=T.int64), x),
    lambda T, x: T.scatter(x, 0, T.zeros(1, 5, dtype=T.int64), 1.0),
    lambda T, x: T.index_add(x, 0, T.tensor([5]), x[:1]),
    lambda T, x: T.index_add(x, 0, T.tensor([0]), x[:2]),
    lambda T, x: T.index_add(x, 0, T.tensor([0, 1]), x[:2, :3]),
    lambda T, x: T.index_add(x, 0, T.tensor([0]), x[:1].float()),
    lambda T, x: T.take_along_dim(x, T.tensor([0]), 1),
    lambda T, x: T.take_along_dim(x, T.tensor([[0]], dtype=T.int32), 1),
    lambda T, x: T.take_along_dim(x, T.tensor([[0], [1]]), 1),
]


@pytest.mark.parametrize("k", range(len(OTHER_ERRORS)))
def test_other_errors(k):
    raises_same(OTHER_ERRORS[k], X2)


# ----- nonzero ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a", [X2 > 0, np.array([0.0, 1.5, 0.0]), np.array(3.0), np.array(0.0), np.zeros((2, 3))])
def test_nonzero(a):
    x, xt = pair(a)
    assert_same(tl.nonzero(x), torch.nonzero(xt))
    assert_same(x.nonzero(as_tuple=True), xt.nonzero(as_tuple=True))
    assert_same(tl.argwhere(x), torch.argwhere(xt))
    if a.ndim:
        assert_same(tl.where(x), torch.where(xt))
    y = tl.nonzero(tl.tensor(np.asarray(a, np.float32), requires_grad=True))
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("vshape", [(), (1,), (2,)])
def test_setitem_value_dtype_and_shape_rules_as_torch(vshape):
    """torch's index_put_ runs as masked_fill_ for one boolean mask and a one-element value: the value is cast to
    the destination's dtype (a uint8 mask is refused there); every other advanced index needs matching dtypes; a
    value must broadcast *to* the indexed shape. Same results, nodes and gradients, or the same error."""
    def run(m):
        out = []
        for key in ("mask", "mask_u8", "mask_int", "idx", "mask2d", "slice_mask"):
            v = m.full(vshape, 2., dtype=m.float32, requires_grad=True)
            y = m.zeros(3, 2, dtype=m.float64, requires_grad=True) * 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # uint8 masks are deprecated
                    if key == "mask":
                        y[m.tensor([True, False, True])] = v
                    elif key == "mask_u8":
                        y[m.tensor([1, 0, 1], dtype=m.uint8)] = v
                    elif key == "mask_int":
                        y[m.tensor([True, False, True]), 0] = v
                    elif key == "idx":
                        y[m.tensor([0])] = v
                    elif key == "mask2d":
                        y[y.detach() >= 0] = v
                    else:
                        y[:, m.tensor([True, False])] = v
                y.sum().backward()
                out.append((key, y.grad_fn.name(), np.asarray(y.detach()).tolist(), float(v.grad.sum())))
            except RuntimeError as e:
                out.append((key, str(e)))
        return out
    assert run(tl) == run(torch)


@pytest.mark.parametrize("case", [
    lambda m: m.zeros(3).scatter_(0, m.tensor([0, 0, 1]), m.tensor([1.0, 2.0, 3.0]), reduce="add"),
    lambda m: m.ones(3).scatter(0, m.tensor([0, 0]), 2.0, reduce="multiply"),
    lambda m: m.ones(3).scatter_(0, m.tensor([0, 0]), 2.0, reduce="add"),
    lambda m: m.ones(2, 3).scatter(1, m.tensor([[0, 0], [1, 2]]), 2.0, reduce="add"),
    lambda m: m.ones(2, 3, dtype=m.int64).scatter(1, m.tensor([[0, 0], [1, 2]]), m.tensor([[2, 3], [4, 5]]),
                                                  reduce="multiply"),
    lambda m: m.ones(2, 3).scatter(0, m.tensor([[1, 0, 1]]), m.arange(6.0).reshape(2, 3), reduce="multiply"),
])
def test_scatter_with_reduce(case):
    """scatter's reduce= ("add" / "multiply"; repeated indices each applied) as torch: values, and torch's
    NotImplemented node whose backward raises."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = case(tl), case(torch)
    assert got.tolist() == want.tolist() and str(got.dtype)[10:] == str(want.dtype)[6:]


def test_scatter_with_reduce_has_no_derivative(monkeypatch):
    from torchlike import _warnings
    monkeypatch.setattr(_warnings, "_warned", set())
    for m in (tl, torch):
        x, s = m.ones(3, requires_grad=True), m.tensor([2.0, 3.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            y = x.clone().scatter(0, m.tensor([0, 0]), s, reduce="add")
            z = m.ones(3).scatter_(0, m.tensor([0, 0]), 2.0, reduce="multiply")
        if m is tl:  # (torch warns once a process: an earlier test may have had its warning)
            assert [str(w.message).split(" src")[0] for w in seen] == ["The reduce argument of torch.scatter with Tensor"]
        assert y.grad_fn.name() == "torch::autograd::NotImplemented" and len(y.grad_fn.next_functions) == 2
        assert z.grad_fn is None and y.tolist() == [6.0, 1.0, 1.0]
        with pytest.raises(RuntimeError, match="^derivative for aten::scatter is not implemented"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="^reduce argument must be either add or multiply.$"):
            m.ones(3).scatter(0, m.tensor([0]), 2.0, reduce="mean")
