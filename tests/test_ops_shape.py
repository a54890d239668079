"""Shape ops vs torch: values, gradients, node names / next_functions / _saved_* and error messages."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph_with_nr, pair

A, B = (3, 4), (2, 3, 4)
DTYPES = ["float32", "float64"]


def _array(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _saved(node):
    return {n: getattr(node, n) for n in dir(node) if n.startswith("_saved_")}


def _check_node(y_tl, y_th):
    """Same graph (names, edges with output_nr) and the same _saved_* attributes (names and values)."""
    assert graph_with_nr(y_tl) == graph_with_nr(y_th)
    if y_th.grad_fn is not None:
        assert _saved(y_tl.grad_fn) == _saved(y_th.grad_fn)


def _backward_both(outs_tl, outs_th, dtype, seed=1):
    """Backward through each library with the same random output gradients."""
    ws = [_array(tuple(o.shape), dtype, seed + i) for i, o in enumerate(outs_th)]
    tl.autograd.backward(list(outs_tl), [tl.tensor(w) for w in ws])
    torch.autograd.backward(list(outs_th), [torch.tensor(w) for w in ws])


# (id, input shape, fn(lib, x)) -- lib is torchlike or torch
CASES = [
    ("view", B, lambda m, x: x.view(6, 4)),
    ("view_infer", B, lambda m, x: x.view(-1, 4)),
    ("reshape_fn", B, lambda m, x: m.reshape(x, (4, -1))),
    ("reshape_kw", B, lambda m, x: m.reshape(x, shape=[4, 6])),
    ("flatten", B, lambda m, x: x.flatten()),
    ("flatten_from1", B, lambda m, x: m.flatten(x, 1)),
    ("flatten_01", B, lambda m, x: x.flatten(0, -2)),
    ("ravel", A, lambda m, x: m.ravel(x)),
    ("unflatten", B, lambda m, x: x.unflatten(-1, (2, -1))),
    ("view_as", B, lambda m, x: x.view_as(m.zeros(6, 4))),
    ("reshape_as", A, lambda m, x: x.reshape_as(m.zeros(2, 6))),
    ("transpose", B, lambda m, x: x.transpose(0, 2)),
    ("transpose_neg", B, lambda m, x: m.transpose(x, -1, 0)),
    ("swapaxes", B, lambda m, x: m.swapaxes(x, 0, 1)),
    ("swapdims", B, lambda m, x: x.swapdims(1, -1)),
    ("t", A, lambda m, x: x.t()),
    ("t_fn", A, lambda m, x: m.t(x)),
    ("T", A, lambda m, x: x.T),
    ("mT", B, lambda m, x: x.mT),
    ("permute", B, lambda m, x: x.permute(2, 0, 1)),
    ("permute_neg", B, lambda m, x: m.permute(x, (-1, 0, 1))),
    ("permute_kw", B, lambda m, x: x.permute(dims=[2, 0, 1])),
    ("movedim", B, lambda m, x: x.movedim(0, -1)),
    ("movedim_tuple", B, lambda m, x: m.movedim(x, (0, 1), (2, 0))),
    ("moveaxis", A, lambda m, x: m.moveaxis(x, 0, 1)),
    ("squeeze_all", B, lambda m, x: x.unsqueeze(1).squeeze()),
    ("squeeze_dim", B, lambda m, x: m.squeeze(x.unsqueeze(-2), -2)),
    ("squeeze_noop", B, lambda m, x: x.squeeze(1)),
    ("squeeze_tuple", B, lambda m, x: x.unsqueeze(0).unsqueeze(2).squeeze((0, 2, -1))),
    ("unsqueeze", A, lambda m, x: m.unsqueeze(x, -1)),
    ("expand", A, lambda m, x: x.unsqueeze(1).expand(2, 3, 5, -1)),
    ("expand_as", A, lambda m, x: x.expand_as(m.zeros(2, 3, 4))),
    ("repeat", B, lambda m, x: x.repeat(2, 1, 2)),
    ("repeat_lead", A, lambda m, x: x.repeat(repeats=(2, 1, 3))),
    ("narrow", B, lambda m, x: x.narrow(2, 1, 2)),
    ("narrow_neg", B, lambda m, x: m.narrow(x, -1, -3, 2)),
    ("select", B, lambda m, x: x.select(1, -1)),
    ("select_neg_dim", A, lambda m, x: m.select(x, -1, 2)),
    ("flip", B, lambda m, x: x.flip(0, 2)),
    ("flip_fn", A, lambda m, x: m.flip(x, dims=(-1,))),
    ("cat_self", B, lambda m, x: m.cat([x, x.flip(0)], -1)),
    ("concat", A, lambda m, x: m.concat((x, x), dim=0)),
    ("stack", B, lambda m, x: m.stack([x, x.flip(0)], 1)),
    ("stack_neg", A, lambda m, x: m.stack((x, x, x), dim=-1)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shape,fn", CASES, ids=[c[0] for c in CASES])
def test_single_output(name, shape, fn, dtype):
    x_tl, x_th = pair(_array(shape, dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y_tl, y_th = fn(tl, x_tl), fn(torch, x_th)
    assert_same(y_tl, y_th)
    _check_node(y_tl, y_th)
    _backward_both([y_tl], [y_th], dtype)
    assert_same(x_tl.grad, x_th.grad)


# ----- multi-output ops: one node, output_nr 0..k-1 ------------------------------------------------------
MULTI = [
    ("split", lambda m, x: x.split(3, 2)),
    ("split_neg", lambda m, x: m.split(x, 2, dim=-1)),
    ("split_sizes", lambda m, x: m.split(x, [1, 3], dim=-1)),
    ("split_sizes_0", lambda m, x: x.split((1, 0, 2), 1)),
    ("chunk", lambda m, x: x.chunk(2, 2)),
    ("chunk_uneven", lambda m, x: m.chunk(x, 3, -1)),
    ("unbind", lambda m, x: x.unbind(1)),
    ("unbind_fn", lambda m, x: m.unbind(x)),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,fn", MULTI, ids=[c[0] for c in MULTI])
def test_multi_output(name, fn, dtype):
    x_tl, x_th = pair(_array(B, dtype), requires_grad=True)
    outs_tl, outs_th = fn(tl, x_tl), fn(torch, x_th)
    assert isinstance(outs_tl, tuple) and len(outs_tl) == len(outs_th)
    assert_same(outs_tl, outs_th)
    node = outs_tl[0].grad_fn
    for k, (o_tl, o_th) in enumerate(zip(outs_tl, outs_th)):
        assert o_tl.grad_fn is node and o_tl.output_nr == o_th.output_nr == k
        _check_node(o_tl, o_th)
    _backward_both(outs_tl, outs_th, dtype)
    assert_same(x_tl.grad, x_th.grad)


@pytest.mark.parametrize("dtype", DTYPES)
def test_split_partial_use(dtype):
    """Only some outputs reach the loss: the others get zero gradient; edges carry output_nr."""
    x_tl, x_th = pair(_array(B, dtype), requires_grad=True)
    for m, x in ((tl, x_tl), (torch, x_th)):
        a, b, c = m.split(x, [1, 2, 1], dim=2)
        y = a * c
        y.backward(m.ones_like(y))
        d, e, f = x.unbind(1)
        e.sum().backward()
    graphs = []
    for m, x in ((tl, x_tl), (torch, x_th)):
        a, b, c = m.split(x, [1, 2, 1], dim=2)
        graphs.append(graph_with_nr(c * a))
    assert graphs[0] == graphs[1]
    assert graphs[0][1][0][1] == 2 and graphs[0][1][1][1] == 0
    assert_same(x_tl.grad, x_th.grad)


# ----- cat / stack with several inputs, dtypes and empty tensors ---------------------------------------------
def _inputs(specs):
    """[(shape, dtype, requires_grad)] -> (torchlike tensors, torch tensors)."""
    tls, ths = [], []
    for i, (shape, dtype, rg) in enumerate(specs):
        if "float" in dtype:
            arr = _array(shape, dtype, seed=i)
        else:
            arr = np.arange(np.prod(shape)).reshape(shape).astype(dtype)
        a, b = pair(arr, requires_grad=rg)
        tls.append(a)
        ths.append(b)
    return tls, ths


CAT = [
    ("promote_f32_f64", "cat", 1, [(B, "float32", True), ((2, 2, 4), "float64", True)]),
    ("promote_int", "cat", -1, [(B, "float32", True), ((2, 3, 2), "int64", False)]),
    ("legacy_empty", "cat", 1, [((0,), "float32", True), (B, "float32", True), ((0,), "float64", False)]),
    ("zero_size", "cat", 1, [(B, "float64", True), ((2, 0, 4), "float64", True)]),
    ("all_empty", "cat", 0, [((0,), "float64", True), ((0,), "float32", True)]),
    ("concatenate", "concatenate", 0, [(A, "float64", True), ((1, 4), "float64", False)]),
    ("stack_promote", "stack", 2, [(A, "int32", False), (A, "float32", True), (A, "float64", True)]),
]


@pytest.mark.parametrize("name,fname,dim,specs", CAT, ids=[c[0] for c in CAT])
def test_cat_stack_inputs(name, fname, dim, specs):
    tls, ths = _inputs(specs)
    if fname == "concatenate":
        y_tl, y_th = tl.concatenate(tls, axis=dim), torch.concatenate(ths, axis=dim)
    else:
        y_tl, y_th = getattr(tl, fname)(tls, dim=dim), getattr(torch, fname)(ths, dim=dim)
    assert_same(y_tl, y_th)
    _check_node(y_tl, y_th)
    _backward_both([y_tl], [y_th], str(y_th.dtype).split(".")[-1])
    for a, b in zip(tls, ths):
        assert_same(a.grad, b.grad)


def test_double_backward_through_split_and_cat():
    x_tl, x_th = pair(_array(A, "float64"), requires_grad=True)
    grads = []
    for m, x in ((tl, x_tl), (torch, x_th)):
        a, b = (x * x).split([1, 3], 1)
        y = m.cat([b, a.expand(3, 2)], 1).unbind(0)[1]
        g, = m.autograd.grad((y * y).sum(), x, create_graph=True)
        g.sum().backward()
        grads.append(g)
    assert_same(*grads)
    assert_same(x_tl.grad, x_th.grad)


# ----- no node / same object / ints --------------------------------------------------------------------
def test_no_node_cases():
    v_tl, v_th = pair(_array((6,), "float32"), requires_grad=True)
    x_tl, x_th = pair(_array(B, "float32"), requires_grad=True)
    assert v_tl.flatten() is v_tl and v_th.flatten() is v_th
    assert x_tl.flatten(1, 1) is x_tl
    assert x_tl.contiguous() is x_tl
    i_tl, i_th = pair(np.arange(6).reshape(2, 3))
    for f in (lambda t: t.view(-1), lambda t: t.t(), lambda t: t.unbind(0)[0], lambda t: t.split(2, 1)[1],
              lambda t: t.expand(2, 2, 3)):
        a, b = f(i_tl), f(i_th)
        assert_same(a, b)
        assert a.grad_fn is None and not a.requires_grad


def test_zero_dim_inputs():
    s_tl, s_th = pair(np.float64(1.5), requires_grad=True)
    cases = [lambda m, s: s.flatten(), lambda m, s: s.squeeze(0), lambda m, s: s.unsqueeze(-1),
             lambda m, s: s.repeat(2, 3), lambda m, s: s.expand(2), lambda m, s: s.transpose(0, -1),
             lambda m, s: s.flip(0), lambda m, s: s.movedim(0, 0)]
    for f in cases:
        a, b = f(tl, s_tl), f(torch, s_th)
        assert_same(a, b)
        _check_node(a, b)


def test_T_warns_on_non_2d():
    x_tl, _ = pair(_array(B, "float32"), requires_grad=True)
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        y = x_tl.T
    assert y.shape == (4, 3, 2) and y.grad_fn.name() == "PermuteBackward0"


# ----- errors ------------------------------------------------------------------------------------------
ERRORS = [
    lambda m, x: x.view(5, 5),
    lambda m, x: x.reshape(-1, -1),
    lambda m, x: x.view(-2, 12),
    lambda m, x: m.zeros(0, 3).view(-1, 0),
    lambda m, x: x.view(-1, 0),
    lambda m, x: x.view_as(m.zeros(6)),
    lambda m, x: x.flatten(2, 1),
    lambda m, x: x.flatten(0, 3),
    lambda m, x: x.unflatten(2, (2, 3)),
    lambda m, x: x.unflatten(2, ()),
    lambda m, x: x.transpose(0, 3),
    lambda m, x: x.transpose(-4, 0),
    lambda m, x: x.t(),
    lambda m, x: x.flatten().mT,
    lambda m, x: x.permute(0, 1),
    lambda m, x: x.permute(0, 1, -2),
    lambda m, x: x.permute(0, 1, 3),
    lambda m, x: x.movedim((0, 1), (2,)),
    lambda m, x: x.movedim((0, -3), (1, 2)),
    lambda m, x: x.movedim((0, 1), (2, 2)),
    lambda m, x: x.squeeze(3),
    lambda m, x: x.squeeze((0, -3)),
    lambda m, x: x.unsqueeze(4),
    lambda m, x: x.unsqueeze(-5),
    lambda m, x: x.expand(2, 3, 5),
    lambda m, x: x.expand(3, 4),
    lambda m, x: x.expand(-1, 2, 3, 4),
    lambda m, x: x.expand_as(m.zeros(6)),
    lambda m, x: x.repeat(2, 2),
    lambda m, x: x.repeat(2, -1, 2),
    lambda m, x: m.cat([]),
    lambda m, x: m.cat(x),
    lambda m, x: m.cat([x, x.flip(0).narrow(1, 0, 2)], 2),
    lambda m, x: m.cat([x, x.unbind(0)[0]], 0),
    lambda m, x: m.cat([x.sum(), x.sum()]),
    lambda m, x: m.cat([x, x], 3),
    lambda m, x: m.stack([]),
    lambda m, x: m.stack([x, x.unbind(0)[0]]),
    lambda m, x: m.stack([x, x], 4),
    lambda m, x: x.split(0, 2),
    lambda m, x: x.split(-1, 2),
    lambda m, x: x.split([1, 2], 2),
    lambda m, x: x.split([5, -1], 2),
    lambda m, x: x.split(2, 3),
    lambda m, x: x.sum().split(1),
    lambda m, x: x.chunk(0, 2),
    lambda m, x: x.sum().chunk(1),
    lambda m, x: x.unbind(3),
    lambda m, x: x.sum().unbind(0),
    lambda m, x: x.narrow(2, 5, 1),
    lambda m, x: x.narrow(2, -2, 3),
    lambda m, x: x.narrow(2, 2, -1),
    lambda m, x: x.sum().narrow(0, 0, 1),
    lambda m, x: x.select(1, 3),
    lambda m, x: x.select(-1, -5),
    lambda m, x: x.select(3, 0),
    lambda m, x: x.sum().select(0, 0),
    lambda m, x: x.flip(0, 0),
    lambda m, x: x.flip(3),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    fn = ERRORS[k]
    x_tl, x_th = pair(_array(B, "float32"), requires_grad=True)
    with pytest.raises(Exception) as e_th:
        fn(torch, x_th)
    with pytest.raises(Exception) as e_tl:
        fn(tl, x_tl)
    assert type(e_tl.value) is type(e_th.value)
    assert str(e_tl.value).split("\n")[0] == str(e_th.value).split("\n")[0]
