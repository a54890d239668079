"""Indexing ops and shape messages at their edges, against torch on the same NumPy inputs (GEN_REPORT classes
E, I, L, M, Q, V, AH): 0-d operands of the index ops, masked_select of 0-d tensors, nonzero's layout, torch's
error types and messages, and writes whose input overlaps the written tensor."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, compare_graph

F = np.float64


def _run(fn, arrays, grad):
    """fn(m, *tensors) in both libraries: ((result, inputs) or the error) per library. ``grad``: indices of the
    float inputs that require grad."""
    out = []
    for m in (torch, tl):
        ts = [m.tensor(a, requires_grad=i in grad) for i, a in enumerate(arrays)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append((fn(m, *ts), ts))
        except Exception as e:  # noqa: BLE001 - the error is what is compared
            out.append((type(e), str(e).splitlines()[0] if str(e) else ""))
    return out


def check(fn, *arrays, grad=(), prefix=None, saved=True):
    """fn gives torch's result (values, graph, saved values unless not ``saved``, inputs' _version, gradients of
    ``grad`` inputs) or torch's error (type and message; ``prefix``: only the message's first ``prefix``
    characters)."""
    (b, bts), (a, ats) = _run(fn, arrays, grad)
    if isinstance(b, type):
        assert a is b, (a, b, ats, bts)
        n = prefix or len(bts)
        assert isinstance(ats, str) and ats[:n] == bts[:n], (ats, bts)
        return
    assert not isinstance(a, type), (a, ats, b)
    assert_same(a, b)
    compare_graph(a.grad_fn, b.grad_fn, saved)
    assert [t._version for t in ats] == [t._version for t in bts]
    if b.requires_grad:
        (gb, eb), (ga, ea) = [_grads(m, r, [ts[i] for i in grad]) for m, r, ts in ((torch, b, bts), (tl, a, ats))]
        assert ea == eb
        assert_same(ga, gb)


def _grads(m, result, inputs):
    """(gradients of result.sum() w.r.t. the inputs, None) or (None, (error type, message))."""
    try:
        return m.autograd.grad(result.sum(), inputs, allow_unused=True), None
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return None, (type(e).__name__, str(e).splitlines()[0])


# ----- L: index ops with 0-d operands --------------------------------------------------------------------
SELF = [np.array(1.5), np.array([1.5]), np.array([1., 2., 3.])]
INDEX = [np.array(0), np.array(1), np.array([0]), np.array([0, 0]), np.array([-1]), np.array([[0]]),
         np.array([], np.int64)]
SRC = [np.array(4.), np.array([4.]), np.array([4., 5.])]
CASES = [(s, i, d) for s in SELF for i in INDEX for d in (0, -1, 1)]


@pytest.mark.parametrize("s,i,dim", CASES)
def test_gather_select_take_0d(s, i, dim):
    check(lambda m, x, j: m.gather(x, dim, j), s, i, grad=(0,))
    check(lambda m, x, j: m.index_select(x, dim, j), s, i, grad=(0,))
    check(lambda m, x, j: m.take_along_dim(x, j, dim), s, i, grad=(0,))
    check(lambda m, x, j: m.scatter(x, dim, j, 7.), s, i, grad=(0,))


@pytest.mark.parametrize("s,i,dim", CASES)
def test_scatter_index_add_0d(s, i, dim):
    for src in SRC:
        check(lambda m, x, j, y: m.scatter(x, dim, j, y), s, i, src, grad=(0, 2))
        check(lambda m, x, j, y: m.scatter_add(x, dim, j, y), s, i, src, grad=(0, 2))
        check(lambda m, x, j, y: m.index_add(x, dim, j, y, alpha=2), s, i, src, grad=(0, 2))
        check(lambda m, x, j, y: (x * 1).index_add_(dim, j, y), s, i, src, grad=(0, 2))
        check(lambda m, x, j, y: (x * 1).scatter_(dim, j, y), s, i, src, grad=(0, 2))
        check(lambda m, x, j, y: x.scatter_add_(dim, j, y), s, i, src)



@pytest.mark.parametrize("dim", [0, 1, -1])
def test_gather_scatter_2d(dim):
    x, i, src = np.arange(6.).reshape(2, 3), np.array([[1, 0], [0, 1]]), np.arange(10., 16.).reshape(2, 3)
    check(lambda m, a, j: m.gather(a, dim, j), x, i, grad=(0,))
    check(lambda m, a, j: m.take_along_dim(a, j, dim), x, i, grad=(0,))
    check(lambda m, a, j, b: m.scatter_add(a, dim, j, b[:, :2]), x, i, src, grad=(0, 2))
    check(lambda m, a, j, b: m.scatter(a, dim, j, b[:, :2].contiguous()), x, i, src, grad=(0, 2))
    check(lambda m, a, j, b: m.scatter(a, dim, j, b), x, i, src, grad=(0, 2))  # torch's backward refuses src

# ----- M: messages of index_select / index_add bounds ----------------------------------------------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), (0, 3), (2, 0), (0, 2), (2, 1, 3), (2, 2, 2, 2)])
@pytest.mark.parametrize("index", [[-1], [5], [1, 7, -1], [0], []])
def test_index_select_bounds(shape, index):
    idx = np.array(index, np.int64)
    for dim in range(-len(shape), len(shape)):
        check(lambda m, x, j: m.index_select(x, dim, j), np.ones(shape), idx, grad=(0,))
        src = np.ones(shape[:dim % len(shape)] + (len(index),) + shape[dim % len(shape) + 1:])
        for alpha in (1, 2):  # (an empty self with an index out of range: torch's backward raises, not torchlike's)
            check(lambda m, x, j, y: m.index_add(x, dim, j, y, alpha=alpha), np.ones(shape), idx, src,
                  grad=(0, 2) if np.prod(shape) else (0,))
            check(lambda m, x, j, y: m.index_add(x, dim, j.int(), y, alpha=alpha), np.ones(shape), idx, src)


# ----- Q, V: masked_select of 0-d tensors, and an empty selection under create_graph ----------------------
MASKS = [np.array(True), np.array(False), np.array([True, False]), np.array([[False], [True]]),
         np.array([[False], [False]])]


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("x", [np.array(1.5), np.array([1., 2.]), np.array([[0.5], [2.]])])
def test_masked_select_shapes(x, mask):
    check(lambda m, a, k: m.masked_select(a, k), x, mask, grad=(0,))
    check(lambda m, a, k: a.masked_select(k) * 2, x, mask, grad=(0,))


@pytest.mark.parametrize("mask", MASKS)
def test_masked_select_create_graph(mask):
    """The first-order gradient requires grad (torch's MaskedScatterBackward0), also for an empty selection;
    the second-order gradient matches."""
    res = []
    for m in (torch, tl):
        x = m.tensor([[0.5], [2.]], requires_grad=True)
        w = m.masked_select(x, m.tensor(mask)).rsqrt()
        g, = m.autograd.grad(w.sum(), x, create_graph=True)
        g2, = m.autograd.grad(g.sum(), x, allow_unused=True) if g.requires_grad else (None,)
        res.append((g, g.requires_grad, g2))
    (gb, rb, g2b), (ga, ra, g2a) = res
    assert ra == rb
    assert_same(ga, gb)
    assert_same(g2a, g2b)


# ----- E: nonzero / argwhere results are column-major -------------------------------------------------------
def _outcome(f, t):
    try:
        return f(t)
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e), str(e).splitlines()[0]


@pytest.mark.parametrize("x", [np.array([[1, 0, 1], [1, 1, 0]]), np.zeros((2, 3)), np.array(1), np.array(0),
                               np.array([0., 2., 3.]), np.array([[[True], [False]]])])
@pytest.mark.parametrize("name", ["nonzero", "argwhere"])
def test_nonzero_layout(x, name):
    for f in (lambda t: t, lambda t: t.view(-1), lambda t: t.t().view(-1), lambda t: t.reshape(-1),
              lambda t: t.add_(1), lambda t: t[:, :1].mul_(3) and t, lambda t: t.contiguous(),
              lambda t: t.t()):
        b, a = [_outcome(f, getattr(m, name)(m.tensor(x))) for m in (torch, tl)]
        if isinstance(b, tuple):
            assert a == b
        else:
            assert_same(a, b)
            assert (a.stride(), a.is_contiguous(), a._version) == (b.stride(), b.is_contiguous(), b._version)


# ----- M: torch's spelling of a tensor type in messages, split / unflatten messages -----------------------------
DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_names_in_messages(dtype):
    """expand's message and the saved-tensor version error: torch.FloatTensor for the eight legacy types,
    CPUBoolType / CPUComplexDoubleType / CPUBFloat16Type for the others."""
    check(lambda m, x: x.to(getattr(m, dtype)).expand(()), np.zeros(3))
    check(lambda m, x: m.addmm(x.to(getattr(m, dtype)), m.ones(2, 2), m.ones(2, 2)), np.zeros((2, 2, 2)))
    if dtype in ("float64", "float32", "complex64", "complex128", "bfloat16", "float16"):
        for read in (lambda z: z.grad_fn._saved_self, lambda z: z.abs().sum().backward()):
            def fn(m, x):
                y = x.to(getattr(m, dtype)) * 1
                z = y.sin()
                y.mul_(2)
                return read(z)
            check(fn, np.ones((2, 3)), grad=(0,))


@pytest.mark.parametrize("x", [np.array(1.), np.ones(1), np.ones(3), np.ones(0), np.ones(4), np.ones((2, 1))])
@pytest.mark.parametrize("sizes", [(1,), (1, 1), (-1,), (2,), (), (-1, -1), (-1, 0), (0, -1), (-2, 1), (2, -1)])
def test_unflatten_messages(x, sizes):
    for dim in (0, -1, 1):
        check(lambda m, a: a.unflatten(dim, sizes), x, grad=(0,))
        check(lambda m, a: m.unflatten(a, dim, sizes), x)


@pytest.mark.parametrize("x", [np.array(1.), np.ones(3)])
@pytest.mark.parametrize("split", [[1], (1, 2), 1, [3], [-1, 4]])
def test_split_messages(x, split):
    check(lambda m, a: m.split(a, split, 0)[0], x, grad=(0,))
    check(lambda m, a: a.split(split)[-1], x, grad=(0,))


# ----- I: broadcast errors of logical / bitwise ops, rsub, isclose / allclose -------------------------------------
BINARY = {
    "logical_and": lambda m, a, b: m.logical_and(a, b), "logical_or": lambda m, a, b: a.logical_or(b),
    "logical_xor": lambda m, a, b: m.logical_xor(a, b), "bitwise_and": lambda m, a, b: m.bitwise_and(a, b),
    "bitwise_or": lambda m, a, b: a.bitwise_or(b), "bitwise_xor": lambda m, a, b: m.bitwise_xor(a, b),
    "and": lambda m, a, b: a & b, "or": lambda m, a, b: a | b, "xor": lambda m, a, b: a ^ b,
    "rsub": lambda m, a, b: m.rsub(a, b), "rsub_alpha": lambda m, a, b: m.rsub(a, b, alpha=2),
    "isclose": lambda m, a, b: m.isclose(a, b), "allclose": lambda m, a, b: m.tensor(m.allclose(a, b)),
}


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("shapes", [((2, 3), (2,)), ((2,), (2, 3)), ((3, 1, 2), (4, 3)), ((2, 3), (1, 3))])
@pytest.mark.parametrize("dtype", [np.int64, np.bool_, np.float64, np.complex64])
def test_broadcast_errors(name, shapes, dtype):
    a, b = (np.arange(np.prod(s)).reshape(s).astype(dtype) for s in shapes)
    check(BINARY[name], a, b)


# ----- AH: in-place writes whose input shares memory with the written tensor --------------------------------------
def _on_x(f):
    def run(m, x):
        y = x * 1  # a non-leaf that requires grad: the write is recorded
        f(m, y)
        return y
    return run


OVERLAP = {  # torch: partial overlaps refused (TensorIterator), any overlap refused by the index ops' inputs
    "x[:] = x[0]": lambda m, x: x.__setitem__(slice(None), x[0]),
    "x[1:] = x[0]": lambda m, x: x.__setitem__(slice(1, None), x[0]),
    "x[1:] = x[:3]": lambda m, x: x.__setitem__(slice(1, None), x[:3]),
    "x[:2] = x[2:]": lambda m, x: x.__setitem__(slice(None, 2), x[2:]),
    "x[:] = x": lambda m, x: x.__setitem__(slice(None), x),
    "x[...] = x": lambda m, x: x.__setitem__(Ellipsis, x),
    "x[idx] = x": lambda m, x: x.__setitem__(m.tensor([3, 2, 1, 0]), x),
    "x[idx] = x[:1]": lambda m, x: x.__setitem__(m.tensor([3]), x[:1]),
    "x[:2][idx] = x[2:3]": lambda m, x: x[:2].__setitem__(m.tensor([1]), x[2:3]),
    "x[mask] = x[0]": lambda m, x: x.__setitem__(x > 1, x[0]),
    "x[mask] = x[:1]": lambda m, x: x.__setitem__(x > 1, x[:1]),
    "x[mask] = x[:2]": lambda m, x: x.__setitem__(x > 1, x[:2]),
    "x.fill_(x[0])": lambda m, x: x.fill_(x[0]),
    "x.masked_fill_(mask, x[0])": lambda m, x: x.masked_fill_(x > 1, x[0]),
    "x.copy_(x[0])": lambda m, x: x.copy_(x[0]),
    "x.add_(x[0])": lambda m, x: x.add_(x[0]),
    "x.add_(x[1:2])": lambda m, x: x.add_(x[1:2]),
    "x.add_(x)": lambda m, x: x.add_(x),
    "x.add_(x.detach())": lambda m, x: x.add_(x.detach()),
    "x[::2].add_(x[1::2])": lambda m, x: x[::2].add_(x[1::2]),
    "x[:2].add_(x[2:])": lambda m, x: x[:2].add_(x[2:]),
    "x.view(2, 2).add_(x.view(2, 2).t())": lambda m, x: x.view(2, 2).add_(x.view(2, 2).t()),
    "x.view(2, 2)[0].add_(x.view(2, 2)[:, 0])": lambda m, x: x.view(2, 2)[0].add_(x.view(2, 2)[:, 0]),
    "x.view(2, 2).mul_(x.view(2, 2)[0])": lambda m, x: x.view(2, 2).mul_(x.view(2, 2)[0]),
    "x[:2].addcmul_(x[1:3], x[2:])": lambda m, x: x[:2].addcmul_(x[1:3], x[2:]),
    "x[:2].lerp_(x[1:3], 0.5)": lambda m, x: x[:2].lerp_(x[1:3], 0.5),
    "x[:2].clamp_(x[1:3])": lambda m, x: x[:2].clamp_(x[1:3]),
    "x[:2].copy_(x[1:3])": lambda m, x: x[:2].copy_(x[1:3]),
    "x[:2].pow_(x[1:3])": lambda m, x: x[:2].pow_(x[1:3]),
    "x[:2].div_(x[1:3], rounding_mode='floor')": lambda m, x: x[:2].div_(x[1:3], rounding_mode="floor"),
    "x[:2].sub_(x[1:3].expand(2))": lambda m, x: x[1:].sub_(x[:1].expand(3)),
    "x.scatter_(0, idx, x)": lambda m, x: x.scatter_(0, m.tensor([3, 2, 1, 0]), x),
    "x.scatter_(0, idx, x.detach())": lambda m, x: x.scatter_(0, m.tensor([3, 2, 1, 0]), x.detach()),
    "x.scatter_(0, idx, x[::2])": lambda m, x: x.scatter_(0, m.tensor([3, 2]), x[::2]),
    "x.scatter_add_(0, idx, x[2:])": lambda m, x: x.scatter_add_(0, m.tensor([0, 1]), x[2:]),
    "x[:2].scatter_add_(0, idx, x[2:])": lambda m, x: x[:2].scatter_add_(0, m.tensor([0, 1]), x[2:]),
    "x.index_add_(0, idx, x[2:])": lambda m, x: x.index_add_(0, m.tensor([0, 1]), x[2:]),
    "x[:2].index_add_(0, idx, x[2:])": lambda m, x: x[:2].index_add_(0, m.tensor([0, 1]), x[2:]),
    "sin(x[1:], out=x[:3])": lambda m, x: m.sin(x[1:].detach(), out=x.detach()[:3]),
    "add(x, 1, out=x)": lambda m, x: m.add(x.detach(), 1, out=x.detach()),
    "mul(x[:2], x[2:], out=x[1:3])": lambda m, x: m.mul(x[:2].detach(), x[2:].detach(), out=x.detach()[1:3]),
}


@pytest.mark.parametrize("name", OVERLAP)
def test_input_overlap(name):
    check(_on_x(OVERLAP[name]), np.arange(4.), grad=(0,), saved=False)  # (the oracle compares no tuples)


INT_OVERLAP = {  # an index tensor that is the written tensor
    "y.scatter_(0, y, y + 0)": lambda m, y: y.scatter_(0, y, y + 0),
    "y.scatter_(0, y.flip(0), y)": lambda m, y: y.scatter_(0, y.flip(0), y.flip(0)),
    "y[y] = 1": lambda m, y: y.__setitem__(y, 1),
    "y[y[:1]] = 5": lambda m, y: y.__setitem__(y[:1], 5),
    "y[:2].eq_(y[1:3])": lambda m, y: y[:2].eq_(y[1:3]),
    "y.eq_(y)": lambda m, y: y.eq_(y),
    "b[b] = True": lambda m, y: (y > 1).__setitem__(y > 1, True),
    "b.masked_fill_(b, True)": lambda m, y: (lambda b: b.masked_fill_(b, True))(y > 1),
    "b[:2].masked_fill_(b[1:3], True)": lambda m, y: (lambda b: b[:2].masked_fill_(b[1:3], True))(y > 1),
}


@pytest.mark.parametrize("name", INT_OVERLAP)
def test_index_overlap(name):
    def fn(m, y):
        INT_OVERLAP[name](m, y)
        return y
    check(fn, np.arange(4))


@pytest.mark.parametrize("name", ["x.scatter_(0, idx, x.detach())", "x.index_add_(0, idx, x[2:])", "x[idx] = x",
                                  "x.add_(x[1:2])", "x[1:] = x[:3]"])
def test_overlap_after_leaf_check(name):
    """torch's autograd refuses the write into a leaf before its kernel checks the overlap."""
    def fn(m, x):
        OVERLAP[name](m, x)
        return x
    check(fn, np.arange(4.), grad=(0,))


# ----- U: which failing node reports first -------------------------------------------------------------------
@pytest.mark.parametrize("op", ["floor_divide", "remainder_scalar"])
def test_not_implemented_node_runs_first(op):
    """torch's NotImplemented nodes (and AccumulateGrad) have sequence number UINT64_MAX: the engine runs them
    first, so their error comes before another node's saved-tensor version error."""
    def fn(m, a):
        b = m.tensor([[3.], [4.]])
        p = m.floor_divide(b, a) if op == "floor_divide" else m.remainder(3., a)
        q = m.fmod(b, a)
        with m.no_grad():
            a.mul_(0.5)
        return p.sum() + q.sum()
    check(fn, np.array([[1.], [2.]]), grad=(0,), saved=False)  # (reading _saved_other raises)
    for m in (torch, tl):
        a = m.tensor([[1.], [2.]], requires_grad=True)
        seqs = [(a * 1).grad_fn.next_functions[0][0]._sequence_nr(), m.floor_divide(m.ones(1), a).grad_fn._sequence_nr()]
        assert seqs == [2 ** 64 - 1] * 2


@pytest.mark.parametrize("shape", [(1, 3), (1, 1, 3), (2, 3), (1, 2), (3, 1)])
def test_setitem_shape_message(shape):
    """torch names the value's shape without its leading ones (it views it so before index_put_)."""
    check(lambda m, x, v: (x.__setitem__(x == 0, v), x)[1], np.zeros((2, 3)), np.ones(shape))
    check(lambda m, x, v: (x.__setitem__(m.tensor([0, 1]), v), x)[1], np.zeros((2, 3)), np.ones((1,) + shape))
