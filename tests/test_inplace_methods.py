"""Tensor methods torchlike lacked, against torch on the same NumPy inputs: the in-place view ops (unsqueeze_,
squeeze_, t_, transpose_, swapaxes_, swapdims_, as_strided_) and as_strided, then in-place arithmetic."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_case_matches, assert_same, assert_same_error, compare_graph, error_of

RNG = np.random.default_rng(0)


def _meta(t):
    """What an in-place view op changes: geometry, version, view-ness, history."""
    return (tuple(t.shape), t.stride(), t.storage_offset(), t._version, t._is_view(), t.is_leaf, t.requires_grad,
            None if t.grad_fn is None else (t.grad_fn.name(), type(t.grad_fn).__name__))


def _check(fn, *arrays, real=False):
    """``fn(lib, *leaves)`` agrees in torch and torchlike: values, geometry, versions, graphs, grads of both orders
    (``real``: of the outputs' abs(), for complex ones)."""
    outs = {}
    for lib in (torch, tl):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        outs[lib] = out if isinstance(out, tuple) else (out,)
    for a, b in zip(outs[tl], outs[torch]):
        assert _meta(a) == _meta(b)
        compare_graph(a.grad_fn, b.grad_fn)
        assert_same(a, b)
    if real:  # gradients of real scalars, of both orders
        grads = {}
        for lib in (torch, tl):
            xs = [lib.tensor(a, requires_grad=True) for a in arrays]
            first = lib.autograd.grad(sum((o.abs() ** 2).sum() for o in fn(lib, *xs)), xs, create_graph=True)
            grads[lib] = first + lib.autograd.grad(sum((g.abs() ** 3).sum() for g in first), xs)
        for a, b in zip(grads[tl], grads[torch]):
            assert_same(a, b, rtol=1e-4, atol=1e-5)
    else:
        assert_case_matches(fn, arrays)


SHAPES = [(2, 3), (3, 1, 4), (1, 5), (4, 1), (1,)]
VIEW_OPS = {  # in-place view ops on a tensor with history
    "unsqueeze_0": lambda y: y.unsqueeze_(0),
    "unsqueeze_-1": lambda y: y.unsqueeze_(-1),
    "squeeze_": lambda y: y.squeeze_(),
    "squeeze_0": lambda y: y.squeeze_(0),
    "squeeze_-1": lambda y: y.squeeze_(-1),
    "squeeze_dims": lambda y: y.squeeze_((0, -1)) if y.ndim > 1 else y,
    "squeeze_list": lambda y: y.squeeze_([0]),
    "transpose_": lambda y: y.transpose_(0, -1),
    "swapaxes_": lambda y: y.swapaxes_(-1, 0),
    "swapdims_": lambda y: y.swapdims_(0, -1),
    "t_": lambda y: y.t_() if y.ndim <= 2 else y,
    "chain": lambda y: y.unsqueeze_(0).transpose_(0, -1).squeeze_(),
    "as_strided_": lambda y: y.as_strided_((y.numel() // 2, 2), (1, y.numel() // 2)) if y.numel() > 1 else y,
    "as_strided_offset": lambda y: y.as_strided_((2,), (2,), 1) if y.numel() > 3 else y,
}
DTYPES = [np.float32, np.float64, np.complex64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", VIEW_OPS)
def test_inplace_view_op_with_history(name, shape, dtype):
    a = (RNG.standard_normal(shape) + (1j * RNG.standard_normal(shape) if dtype == np.complex64 else 0)).astype(dtype)
    op = VIEW_OPS[name]
    _check(lambda lib, x: (op(x * 2),), a, real=dtype == np.complex64)


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", VIEW_OPS)
def test_inplace_view_op_then_write(name, shape):
    """The new geometry is what later in-place writes and views see (the write goes to the right elements)."""
    a = RNG.standard_normal(shape).astype(np.float32)

    def fn(lib, x):
        y = x * 1
        op = VIEW_OPS[name]
        op(y)
        y.mul_(3)
        z = y.view(-1) if y.is_contiguous() else y.flatten()
        return y, z
    _check(fn, a)


@pytest.mark.parametrize("name", VIEW_OPS)
def test_inplace_view_op_on_a_view(name):
    """On a view: the node goes on the view itself (not CopySlices), the base keeps its node, the shared version
    moves; a later write through the view reaches the base at the view's new geometry."""
    a = RNG.standard_normal((3, 4)).astype(np.float32)

    def fn(lib, x):
        b = x * 1
        v = b[1:, 1:]
        VIEW_OPS[name](v)
        before = (_meta(v), _meta(b))
        v.mul_(2)
        return b, v, before
    outs = {lib: fn(lib, lib.tensor(a, requires_grad=True)) for lib in (torch, tl)}
    assert outs[tl][2] == outs[torch][2]
    _check(lambda lib, x: fn(lib, x)[:2], a)


@pytest.mark.parametrize("name", ["unsqueeze_0", "transpose_", "t_", "chain", "as_strided_"])
def test_inplace_view_op_on_a_base_with_views(name):
    """A base whose geometry changes under its views: the views keep their elements, writes through them reach the
    right elements of the base, and their regenerated nodes read the base at the new geometry."""
    a = RNG.standard_normal((2, 4)).astype(np.float32)

    def fn(lib, x):
        b = x * 1
        v = b[1]
        w = b[:, 1:3]
        VIEW_OPS[name](b)
        v.mul_(2)
        w.add_(1)
        return b, v, w
    # (the views' regenerated AsStridedBackward0 show their geometry in the base's elements, torch's in its storage)
    _check(lambda lib, x: fn(lib, x)[:1], a)
    outs = {lib: fn(lib, lib.tensor(a, requires_grad=True)) for lib in (torch, tl)}
    for p, q in zip(outs[tl], outs[torch]):
        assert _meta(p) == _meta(q)
        assert_same(p, q)
    for lib in (torch, tl):
        x = lib.tensor(a, requires_grad=True)
        b, v, w = fn(lib, x)
        outs[lib] = lib.autograd.grad((v * v).sum() + (w * w * w).sum(), x)[0]
    assert_same(outs[tl], outs[torch])


@pytest.mark.parametrize("name", VIEW_OPS)
@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_inplace_view_op_without_grad(name, dtype):
    """A plain tensor (and a leaf that requires grad under no_grad): geometry and version change, it stays a leaf."""
    a = (RNG.standard_normal((2, 3)) * 3).astype(dtype)
    res = {}
    for lib in (torch, tl):
        x = lib.tensor(a)
        VIEW_OPS[name](x)
        y = lib.tensor(a.astype(np.float32), requires_grad=True)
        with lib.no_grad():
            VIEW_OPS[name](y)
        res[lib] = (x, y)
    for a_, b_ in zip(res[tl], res[torch]):
        assert _meta(a_) == _meta(b_)
        assert_same(a_, b_)


@pytest.mark.parametrize("name", VIEW_OPS)
def test_inplace_view_op_on_expanded_and_transposed(name):
    """Non-contiguous inputs: an expanded tensor (allowed, no write) and a transposed one."""
    a = RNG.standard_normal((3, 1)).astype(np.float32)
    for make in (lambda lib: lib.tensor(a).expand(3, 4), lambda lib: lib.tensor(a).expand(3, 4).t().contiguous().t()):
        res = {}
        for lib in (torch, tl):
            x = make(lib)
            res[lib] = error_of(lambda: VIEW_OPS[name](x)), x
        assert res[tl][0] == res[torch][0]
        assert _meta(res[tl][1]) == _meta(res[torch][1])
        assert_same(res[tl][1], res[torch][1])


@pytest.mark.parametrize("make", ["leaf", "view_of_leaf"])
@pytest.mark.parametrize("name", VIEW_OPS)
def test_inplace_view_op_refusals(name, make):
    """torch's refusals of in-place ops apply (a leaf or a view of a leaf that requires grad); nothing changes."""
    a = RNG.standard_normal((2, 3)).astype(np.float32)

    def case(lib):
        x = lib.tensor(a, requires_grad=True)
        VIEW_OPS[name](x if make == "leaf" else x[0:])
    assert_same_error(case)
    x = tl.tensor(a, requires_grad=True)
    with pytest.raises(RuntimeError):
        VIEW_OPS[name](x)
    assert (tuple(x.shape), x.stride(), x._version, x.grad_fn) == ((2, 3), (3, 1), 0, None)


ERRORS = {
    "t_3d": lambda lib: lib.zeros(2, 3, 4).t_(),
    "transpose_range": lambda lib: lib.zeros(2, 3).transpose_(0, 5),
    "swapaxes_range": lambda lib: lib.zeros(2, 3).swapaxes_(-3, 0),
    "squeeze_range": lambda lib: lib.zeros(2, 3).squeeze_(5),
    "squeeze_repeat": lambda lib: lib.zeros(2, 3).squeeze_((0, 0)),
    "squeeze_none": lambda lib: lib.zeros(2, 3).squeeze_(None),
    "squeeze_kw_none": lambda lib: lib.zeros(2, 3).squeeze_(dim=None),
    "unsqueeze_range": lambda lib: lib.zeros(2, 3).unsqueeze_(4),
    "unsqueeze_type": lambda lib: lib.zeros(2, 3).unsqueeze_("a"),
    "t_args": lambda lib: lib.zeros(2, 3).t_(1),
    "as_strided_bounds": lambda lib: lib.zeros(2, 3).as_strided((3, 2), (1, 3), 1),
    "as_strided_bounds_f64": lambda lib: lib.zeros(2, 3, dtype=lib.float64)[1:].as_strided((3, 3), (1, 3)),
    "as_strided_len": lambda lib: lib.zeros(2, 3).as_strided((3, 2), (1,)),
    "as_strided_neg_size": lambda lib: lib.zeros(2, 3).as_strided((3, -2), (1, 3)),
    "as_strided_neg_stride": lambda lib: lib.zeros(2, 3).as_strided((3, 2), (1, -3)),
    "as_strided_neg_offset": lambda lib: lib.zeros(2, 3).as_strided((3, 2), (1, 3), -1),
    "as_strided__bounds": lambda lib: lib.zeros(2, 3).as_strided_((3, 2), (1, 3), 10),
    "as_strided_fn_bounds": lambda lib: lib.as_strided_(lib.zeros(2, 3), (3, 2), (1, 3), 10),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors(name):
    assert_same_error(ERRORS[name])


def test_error_leaves_tensor_unchanged():
    x = tl.zeros(2, 3)
    for bad in (lambda: x.as_strided_((3, 2), (1, 3), 10), lambda: x.squeeze_((0, 0)), lambda: x.transpose_(0, 5)):
        with pytest.raises((RuntimeError, IndexError)):
            bad()
        assert (tuple(x.shape), x.stride(), x.storage_offset(), x._version) == ((2, 3), (3, 1), 0, 0)


AS_STRIDED = {  # (size, stride, storage_offset) on a (3, 4) tensor or a view of it
    "transpose": ((4, 3), (1, 4), None),
    "offset": ((2, 2), (4, 1), 5),
    "overlap": ((3, 3), (1, 1), 0),
    "expand": ((2, 3), (0, 1), 2),
    "empty": ((0, 2), (1, 1), 11),
    "scalar": ((), (), 7),
}
SOURCES = {
    "whole": lambda y: y,
    "slice": lambda y: y[1:],
    "transposed": lambda y: y.t(),
    "column": lambda y: y[:, 1],
}


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", AS_STRIDED)
def test_as_strided(case, source):
    """torch.as_strided / Tensor.as_strided: a view of the input's storage (elements outside the input too), the
    default storage offset the input's own; AsStridedBackward0 and torch's as_strided_backward."""
    size, stride, offset = AS_STRIDED[case]
    a = RNG.standard_normal((3, 4)).astype(np.float64)

    def fn(lib, x):
        y = SOURCES[source](x * 1)
        if offset is None and source != "whole":
            return lib.as_strided(y, (1,), (1,))
        z = lib.as_strided(y, size, stride, offset) if source == "whole" else y.as_strided(size, stride, offset)
        assert z._base is not None
        return z
    _check(fn, a)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("case", AS_STRIDED)
def test_as_strided_inplace(case, source):
    size, stride, offset = AS_STRIDED[case]
    a = RNG.standard_normal((3, 4)).astype(np.float64)

    def fn(lib, x):
        b = x * 1
        y = SOURCES[source](b)
        if offset is None and source != "whole":
            return lib.as_strided_(y, (1,), (1,))
        y.as_strided_(size, stride, offset)
        if source == "whole":
            return y
        return y, b
    _check(fn, a)


def test_as_strided_of_as_strided_input_overlaps():
    """as_strided_backward divides the gradient among input elements sharing a storage element."""
    a = RNG.standard_normal(6).astype(np.float64)
    _check(lambda lib, x: (x * 1).as_strided((3, 2), (1, 1)).as_strided((2, 2), (2, 1), 1), a)
    _check(lambda lib, x: (x * 1).expand(2, 6).as_strided((4,), (1,), 1), a)


def test_as_strided_writes_through():
    """A write through an as_strided view reaches the base at its geometry (CopySlices) and other views see it."""
    a = RNG.standard_normal((3, 4)).astype(np.float32)

    def fn(lib, x):
        b = x * 1
        v = b[1]
        z = b.as_strided((2, 2), (1, 4), 1)
        z.mul_(5)
        return b, v, z
    _check(fn, a)


def test_as_strided_inference_and_no_grad():
    a = RNG.standard_normal((3, 4)).astype(np.float32)
    res = {}
    for lib in (torch, tl):
        x = lib.tensor(a, requires_grad=True)
        with lib.no_grad():
            z = x.as_strided((2, 2), (1, 4), 1)
        with lib.inference_mode():
            i = lib.tensor(a).as_strided((2,), (3,), 2)
        res[lib] = (z, i)
    for p, q in zip(res[tl], res[torch]):
        assert _meta(p) == _meta(q) if not q.is_inference() else p.is_inference() and p.stride() == q.stride()
        assert_same(p, q)
