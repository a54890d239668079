"""Tensor methods torchlike lacked, against torch on the same NumPy inputs: the in-place view ops (unsqueeze_,
squeeze_, t_, transpose_, swapaxes_, swapdims_, as_strided_) and as_strided; in-place arithmetic (cumsum_, cumprod_,
addmm_, baddbmm_, deg2rad(_), rad2deg(_), gcd(_), lcm(_), fill_diagonal_, put(_), index_reduce(_)); and fliplr, flipud,
ger, sum_to_size, is_signed, is_nonzero, is_same_size."""
import warnings

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
DTYPES = [np.float32, np.complex64]  # (the ops move geometry only: a real and a complex dtype; float64 added 140 cases)


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


@pytest.mark.parametrize("name", VIEW_OPS)
def test_inplace_view_op_forward_ad(name):
    """A dual tensor's tangent takes the same geometry; as_strided of it reads the tangent's storage (that tangent's
    own strides are left out: torchlike's is a copy, not a view of the tangent)."""
    a, t = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    res = {}
    for lib in (torch, tl):
        fa = lib.autograd.forward_ad
        with fa.dual_level():
            y = fa.make_dual(lib.tensor(a), lib.tensor(t)) * 2
            VIEW_OPS[name](y)
            z = y.as_strided((2,), (2,), 1)
            res[lib] = [x for d in (y, z) for x in fa.unpack_dual(d)]
    for k, (p, q) in enumerate(zip(res[tl], res[torch])):
        assert (tuple(p.shape), p.stride()) == (tuple(q.shape), q.stride()) or k == 3
        assert_same(p, q)


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


# ----- in-place arithmetic ----------------------------------------------------------------------------------
def _pair_run(fn, arrays, grad=True):
    """``fn(lib, *tensors)`` in both libraries on leaves (float ones require grad when ``grad``)."""
    res = {}
    for lib in (torch, tl):
        xs = [lib.tensor(a, requires_grad=grad and a.dtype.kind in "fc") for a in arrays]
        res[lib] = fn(lib, *xs), xs
    return res


def _check_inplace(fn, *arrays, rtol=1e-5, atol=1e-6):
    """``fn(lib, *leaves)`` writes into a non-leaf and returns it: values, dtype, version, graph (saved values too)
    and first- and second-order gradients of every float leaf agree with torch."""
    res = _pair_run(fn, arrays)
    (a, _), (b, _) = res[tl], res[torch]
    assert _meta(a) == _meta(b)
    assert_same(a, b)
    compare_graph(a.grad_fn, b.grad_fn)
    if b.requires_grad:
        assert_case_matches(fn, [x for x in arrays], rtol, atol)


CUM_SHAPES = [(5,), (3, 4), (2, 3, 4), ()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", CUM_SHAPES, ids=str)
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace(name, shape, dtype):
    a = RNG.uniform(0.5, 1.5, shape).astype(dtype)
    for dim in ((0, -1) if shape else (0,)):
        _check_inplace(lambda lib, x: getattr(x * 1, name)(dim), a)
        _check_inplace(lambda lib, x: getattr((x * 1).mT if x.ndim == 2 else x * 1, name)(dim), a)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.int8], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_integers(name, dtype):
    """Integers accumulate in their own dtype in place (wrapping as torch's)."""
    a = RNG.integers(-5, 6, (3, 4)).astype(dtype)
    res = _pair_run(lambda lib, x: getattr(x, name)(1), [a])
    assert _meta(res[tl][0]) == _meta(res[torch][0])
    assert_same(res[tl][0], res[torch][0])


CUM_ERRORS = {
    "leaf": lambda lib, n: getattr(lib.ones(2, 3, requires_grad=True), n)(1),
    "dtype": lambda lib, n: getattr(lib.ones(2, 3), n)(1, dtype=lib.float64),
    "int_dtype": lambda lib, n: getattr(lib.ones(2, 3, dtype=lib.int32), n)(1, dtype=lib.int64),
    "bool": lambda lib, n: getattr(lib.ones(2, 3, dtype=lib.bool), n)(1),
    "dim": lambda lib, n: getattr(lib.ones(2, 3), n)(2),
    "expanded": lambda lib, n: getattr(lib.ones(2, 1).expand(2, 3), n)(1),
    "dim_type": lambda lib, n: getattr(lib.ones(2, 3), n)("a"),
}


@pytest.mark.parametrize("case", CUM_ERRORS)
@pytest.mark.parametrize("name", ["cumsum_", "cumprod_"])
def test_cumulative_inplace_errors(name, case):
    assert_same_error(lambda lib: CUM_ERRORS[case](lib, name))
    x = tl.ones(2, 3, dtype=tl.int32)
    with pytest.raises(RuntimeError):
        getattr(x, name)(1, dtype=tl.int64)
    assert x._version == 0 and x.dtype == tl.int32


MM = {  # (self, mat1/batch1, mat2/batch2) shapes
    "addmm_": [((2, 4), (2, 3), (3, 4)), ((1, 1), (1, 5), (5, 1)), ((3, 2), (3, 0), (0, 2))],
    "baddbmm_": [((2, 2, 4), (2, 2, 3), (2, 3, 4)), ((1, 3, 3), (1, 3, 1), (1, 1, 3))],
}


@pytest.mark.parametrize("scales", [{}, {"beta": 2, "alpha": 0.5}, {"beta": 0}], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,shapes", [(n, s) for n, ss in MM.items() for s in ss], ids=str)
def test_matmul_inplace(name, shapes, dtype, scales):
    arrays = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else {}  # (float32 second-order sums of products)
    _check_inplace(lambda lib, s, a, b: getattr(s * 1, name)(a, b, **scales), *arrays, **tol)
    _check_inplace(lambda lib, s, a, b: getattr((s * 1).mT.contiguous().mT, name)(a, b, **scales), *arrays, **tol)


def test_matmul_inplace_integers():
    for name, (s, a, b) in (("addmm_", MM["addmm_"][0]), ("baddbmm_", MM["baddbmm_"][0])):
        arrays = [RNG.integers(-3, 4, sh) for sh in (s, a, b)]
        res = _pair_run(lambda lib, s, a, b: getattr(s, name)(a, b, beta=2, alpha=3), arrays)
        assert _meta(res[tl][0]) == _meta(res[torch][0])
        assert_same(res[tl][0], res[torch][0])


MM_ERRORS = {
    "addmm_leaf": lambda lib: lib.ones(2, 4, requires_grad=True).addmm_(lib.ones(2, 3), lib.ones(3, 4)),
    "addmm_broadcast": lambda lib: lib.ones(4).addmm_(lib.ones(2, 3), lib.ones(3, 4)),
    "addmm_shape": lambda lib: lib.ones(4, 2).addmm_(lib.ones(2, 3), lib.ones(3, 4)),
    "addmm_inner": lambda lib: lib.ones(4).addmm_(lib.ones(2, 3), lib.ones(4, 4)),
    "addmm_dtype": lambda lib: lib.ones(2, 4).addmm_(lib.ones(2, 3), lib.ones(3, 4, dtype=lib.float64)),
    "addmm_rank": lambda lib: lib.ones(2, 4).addmm_(lib.ones(3), lib.ones(3, 4)),
    "addmm_bool": lambda lib: lib.ones(2, 4, dtype=lib.bool).addmm_(lib.ones(2, 3, dtype=lib.bool),
                                                                   lib.ones(3, 4, dtype=lib.bool)),
    "baddbmm_leaf": lambda lib: lib.ones(1, 2, 4, requires_grad=True).baddbmm_(lib.ones(1, 2, 3), lib.ones(1, 3, 4)),
    "baddbmm_broadcast": lambda lib: lib.ones(2, 4).baddbmm_(lib.ones(1, 2, 3), lib.ones(1, 3, 4)),
    "baddbmm_dtype": lambda lib: lib.ones(1, 2, 4).baddbmm_(lib.ones(1, 2, 3).double(), lib.ones(1, 3, 4).double()),
    "baddbmm_rank": lambda lib: lib.ones(1, 2, 4).baddbmm_(lib.ones(2, 3), lib.ones(1, 3, 4)),
    "baddbmm_inner": lambda lib: lib.ones(1, 2, 4).baddbmm_(lib.ones(1, 2, 3), lib.ones(1, 2, 4)),
}


@pytest.mark.parametrize("case", MM_ERRORS)
def test_matmul_inplace_errors(case):
    assert_same_error(MM_ERRORS[case])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_angle_conversions(name, dtype):
    a = (RNG.standard_normal((3, 4)) * 100).astype(dtype)
    rtol = 1e-3 if dtype == np.float16 else 1e-6
    res = _pair_run(lambda lib, x: (getattr(lib, name)(x), getattr(x, name)(), getattr(x * 1, name + "_")()),
                    [a], grad=dtype != np.float16)
    for p, q in zip(res[tl][0], res[torch][0]):
        assert _meta(p) == _meta(q)
        assert_same(p, q, rtol=rtol)
    if dtype != np.float16:
        _check_inplace(lambda lib, x: getattr(x * 1, name + "_")(), a)
        _check_inplace(lambda lib, x: getattr(lib, name)(x.t()), a)


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["deg2rad", "rad2deg"])
def test_angle_conversions_of_integers(name, dtype):
    """Integers and bools convert to the default float dtype; in place they are refused (the float result)."""
    a = RNG.integers(-200, 200, (5,)).astype(dtype)
    res = _pair_run(lambda lib, x: getattr(lib, name)(x), [a])
    assert_same(res[tl][0], res[torch][0])
    assert_same_error(lambda lib: getattr(lib.tensor(a), name + "_")())
    assert_same_error(lambda lib: getattr(lib.ones(2, dtype=lib.complex64), name)())
    assert_same_error(lambda lib: getattr(lib.ones(2, dtype=lib.complex64), name + "_")())
    assert_same_error(lambda lib: getattr(lib.ones(2, requires_grad=True), name + "_")())


GCD_DTYPES = [np.int64, np.int32, np.int16, np.int8, np.uint8]


@pytest.mark.parametrize("dtype", GCD_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm(name, dtype):
    lo = 0 if dtype == np.uint8 else -40
    a = RNG.integers(lo, 40, (4, 5)).astype(dtype)
    b = RNG.integers(lo, 40, (5,)).astype(dtype)
    a[0, :2] = 0
    b[:2] = 0
    res = _pair_run(lambda lib, x, y: (getattr(lib, name)(x, y), getattr(x, name)(y), getattr(x.clone(), name + "_")(y),
                                       getattr(lib, name)(x, y.long()), getattr(lib, name)(x.t(), x.t())), [a, b])
    for p, q in zip(res[tl][0], res[torch][0]):
        assert (tuple(p.shape), p.stride(), p._version, p.dtype.is_signed) == (tuple(q.shape), q.stride(), q._version,
                                                                                 q.dtype.is_signed)
        assert_same(p, q)


@pytest.mark.parametrize("dtype", GCD_DTYPES[:-1], ids=lambda d: np.dtype(d).name)
def test_gcd_lcm_wrap_as_torch(dtype):
    """At the dtype's extremes: the most negative value keeps its sign, products wrap as torch's C++ computes them."""
    info = np.iinfo(dtype)
    a = np.array([info.min, info.min, 0, 5, info.max, info.min, info.max // 2 + 1, -18], dtype)
    b = np.array([3, info.min, info.min, info.min, info.max - 1, -1, 6, 17], dtype)
    res = _pair_run(lambda lib, x, y: (lib.gcd(x, y), lib.lcm(x, y)), [a, b])
    for p, q in zip(res[tl][0], res[torch][0]):
        assert_same(p, q)


GCD_ERRORS = {
    "float": lambda lib, n: getattr(lib, n)(lib.ones(2), lib.ones(2)),
    "bool": lambda lib, n: getattr(lib, n)(lib.ones(2, dtype=lib.bool), lib.ones(2, dtype=lib.bool)),
    "shape": lambda lib, n: getattr(lib, n)(lib.ones(2, dtype=lib.int64), lib.ones(3, dtype=lib.int64)),
    "inplace_broadcast": lambda lib, n: getattr(lib.ones(2, dtype=lib.int64), n + "_")(lib.ones(3, 2, dtype=lib.int64)),
    "inplace_float": lambda lib, n: getattr(lib.ones(2, dtype=lib.int64), n + "_")(lib.ones(2)),
    "scalar": lambda lib, n: getattr(lib, n)(lib.ones(2, dtype=lib.int64), 3),
}


@pytest.mark.parametrize("case", GCD_ERRORS)
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_errors(name, case):
    assert_same_error(lambda lib: GCD_ERRORS[case](lib, name))


@pytest.mark.parametrize("wrap", [False, True])
@pytest.mark.parametrize("shape", [(3, 3), (3, 5), (7, 3), (8, 3), (2, 2, 2), (4, 4, 4, 4), (1, 1)], ids=str)
def test_fill_diagonal(shape, wrap):
    a = RNG.standard_normal(shape).astype(np.float32)
    _check_inplace(lambda lib, x: (x * 1).fill_diagonal_(2.5, wrap=wrap), a)
    _check_inplace(lambda lib, x: (x * 1).transpose(0, 1).fill_diagonal_(-1, wrap), a)
    _check_inplace(lambda lib, x: (x * 1)[..., :1].fill_diagonal_(3) if x.ndim == 2 else x * 1, a)
    res = _pair_run(lambda lib, x: x.fill_diagonal_(7, wrap=wrap), [RNG.integers(0, 5, shape)])
    assert _meta(res[tl][0]) == _meta(res[torch][0])
    assert_same(res[tl][0], res[torch][0])


FILL_DIAGONAL_ERRORS = {
    "1d": lambda lib: lib.ones(3).fill_diagonal_(1),
    "unequal": lambda lib: lib.ones(3, 3, 2).fill_diagonal_(1),
    "leaf": lambda lib: lib.ones(3, 3, requires_grad=True).fill_diagonal_(1),
    "view_of_leaf": lambda lib: lib.ones(3, 3, requires_grad=True)[1:].fill_diagonal_(1),
    "value": lambda lib: lib.ones(3, 3).fill_diagonal_("a"),
}


@pytest.mark.parametrize("case", FILL_DIAGONAL_ERRORS)
def test_fill_diagonal_errors(case):
    assert_same_error(FILL_DIAGONAL_ERRORS[case])


PUT = [  # (self shape, index, source shape)
    ((2, 3), [[0, -1], [3, 2]], (4,)),
    ((5,), [4, 0], (2, 1)),
    ((2, 2), [], (0,)),
    ((), [0], (1,)),
]


@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("case", range(len(PUT)))
def test_put(case, accumulate):
    shape, index, src = PUT[case]
    a, s = RNG.standard_normal(shape), RNG.standard_normal(src)
    i = np.array(index, np.int64)
    _check_inplace(lambda lib, x, v: (x * 1).put_(lib.tensor(i), v * 1, accumulate=accumulate), a, s)
    _check_inplace(lambda lib, x, v: lib.put(x, lib.tensor(i), v, accumulate), a, s)
    _check_inplace(lambda lib, x, v: x.put(lib.tensor(i), v, accumulate=accumulate), a, s)
    res = _pair_run(lambda lib, x, v: x.put_(lib.tensor(i), v, accumulate), [a.astype(np.int64), s.astype(np.int64)])
    assert _meta(res[tl][0]) == _meta(res[torch][0])
    assert_same(res[tl][0], res[torch][0])


PUT_ERRORS = {
    "index_dtype": lambda lib: lib.ones(2, 3).put(lib.tensor([0, 1], dtype=lib.int32), lib.ones(2)),
    "numel": lambda lib: lib.ones(2, 3).put(lib.tensor([0, 1]), lib.ones(3)),
    "dtype": lambda lib: lib.ones(2, 3).put(lib.tensor([0, 1]), lib.ones(2, dtype=lib.float64)),
    "range": lambda lib: lib.ones(2, 3).put(lib.tensor([0, -7]), lib.ones(2)),
    "range_inplace": lambda lib: lib.ones(2, 3).put_(lib.tensor([6]), lib.ones(1)),
    "empty": lambda lib: lib.ones(0).put(lib.tensor([0]), lib.ones(1)),
    "expanded": lambda lib: lib.ones(3, 1).expand(3, 2).put_(lib.tensor([0]), lib.ones(1)),
    "leaf": lambda lib: lib.ones(3, requires_grad=True).put_(lib.tensor([0]), lib.ones(1)),
    "overlap": lambda lib: (lambda x: x.put_(lib.tensor([0]), x[1:2]))(lib.ones(3)),
}


@pytest.mark.parametrize("case", PUT_ERRORS)
def test_put_errors(case):
    assert_same_error(PUT_ERRORS[case])
    x = tl.ones(2, 3)
    with pytest.raises(IndexError):
        x.put_(tl.tensor([0, 6]), tl.ones(2) * 5)
    assert x._version == 0 and x.sum().item() == 6


IR_CASES = [  # (self shape, dim, index, source shape)
    ((4, 3), 0, [0, 2, 0, 3, 0], (5, 3)),
    ((2, 5), -1, [4, 4, 1], (2, 3)),
    ((3, 2, 2), 1, [1, 1], (3, 2, 2)),
    ((5,), 0, [], (0,)),
    ((), 0, [0], ()),
]


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("case", range(len(IR_CASES)))
def test_index_reduce(case, reduce, include_self):
    shape, dim, index, src = IR_CASES[case]
    a, s = RNG.standard_normal(shape), RNG.standard_normal(src)
    if a.ndim == 2 and s.ndim == 2:
        a.flat[1], s.flat[-1] = 0, 0  # (prod's zeros: one in self, one in source)
    i = np.array(index, np.int64)
    with pytest.warns(UserWarning, match="index_reduce"):
        tl.zeros(shape).index_reduce(dim, tl.tensor(i), tl.zeros(src), reduce)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_inplace(lambda lib, x, v: lib.index_reduce(x, dim, lib.tensor(i), v, reduce, include_self=include_self),
                       a, s)
        _check_inplace(lambda lib, x, v: (x * 1).index_reduce_(dim, lib.tensor(i), v * 2, reduce,
                                                               include_self=include_self), a, s)
        ints = [RNG.integers(-4, 5, shape), RNG.integers(-4, 5, src)]  # (an int32 index: torch's backward refuses it)
        res = _pair_run(lambda lib, x, v: x.index_reduce_(dim, lib.tensor(i, dtype=lib.int32), v, reduce,
                                                          include_self=include_self), ints)
        assert _meta(res[tl][0]) == _meta(res[torch][0])
        assert_same(res[tl][0], res[torch][0])


IR_ERRORS = {
    "reduce": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([0]), lib.ones(1, 3), "sum"),
    "index_2d": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([[0]]), lib.ones(1, 3), "prod"),
    "index_dtype": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([0.]), lib.ones(1, 3), "prod"),
    "dtype": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([0]), lib.ones(1, 3).double(), "prod"),
    "count": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([0, 1]), lib.ones(1, 3), "prod"),
    "shape": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([0]), lib.ones(1, 2), "amax"),
    "rank": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([0]), lib.ones(1, 3, 1), "amax"),
    "bounds": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([4]), lib.ones(1, 3), "amin"),
    "negative": lambda lib: lib.ones(4, 3).index_reduce(0, lib.tensor([-1]), lib.ones(1, 3), "amin"),
    "dim": lambda lib: lib.ones(4, 3).index_reduce(2, lib.tensor([0]), lib.ones(1, 3), "amin"),
    "bool": lambda lib: lib.ones(2, dtype=lib.bool).index_reduce(0, lib.tensor([0]), lib.ones(1, dtype=lib.bool),
                                                                 "prod"),
    "leaf": lambda lib: lib.ones(2, requires_grad=True).index_reduce_(0, lib.tensor([0]), lib.ones(1), "prod"),
    "overlap": lambda lib: (lambda x: x.index_reduce_(0, lib.tensor([0]), x[1:2], "prod"))(lib.ones(3)),
}


@pytest.mark.parametrize("case", IR_ERRORS)
def test_index_reduce_errors(case):
    assert_same_error(IR_ERRORS[case])


# ----- other missing names: fliplr, flipud, ger, sum_to_size, is_signed, is_nonzero, is_same_size ----------------
@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("name", ["fliplr", "flipud"])
def test_flips(name, shape):
    a = RNG.standard_normal(shape)
    if name == "fliplr" and len(shape) < 2:
        assert_same_error(lambda lib: lib.fliplr(lib.tensor(a)))
        return
    _check(lambda lib, x: (getattr(lib, name)(x), getattr(x.mT if x.ndim > 1 else x, name)()), a)


def test_flip_errors():
    assert_same_error(lambda lib: lib.flipud(lib.ones(())))


def test_ger():
    _check(lambda lib, x, y: (lib.ger(x, y), x.ger(y)), RNG.standard_normal(3), RNG.standard_normal(4))
    assert_same_error(lambda lib: lib.ger(lib.ones(2, 2), lib.ones(2)))


@pytest.mark.parametrize("size", [(3,), (1, 3), (2, 1), (1, 1), (2, 3), (), (4, 2, 3)], ids=str)
def test_sum_to_size(size):
    a = RNG.standard_normal((2, 3))
    fn = (lambda lib, x: (x * 1).sum_to_size(*size)) if size else (lambda lib, x: (x * 1).sum_to_size(size))
    if size == (4, 2, 3):
        assert_same_error(lambda lib: fn(lib, lib.tensor(a)))
        return
    _check(fn, a)
    for lib in (torch, tl):
        x = lib.ones(2, 3)
        assert (x.sum_to_size(2, 3) is x) and (x.sum_to_size((2, 3)) is x)
    assert_same_error(lambda lib: lib.ones(2, 3).sum_to_size(1, 2))


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "complex64", "int8"])
def test_predicates(dtype):
    res = {}
    for lib in (torch, tl):
        dt = getattr(lib, dtype)
        x, one = lib.zeros(2, 3, dtype=dt), lib.ones(1, dtype=dt)
        res[lib] = (lib.is_signed(x), x.is_signed(), lib.is_nonzero(one), one.is_nonzero(), lib.is_nonzero(x[0, :1]),
                    lib.is_same_size(x, x), x.is_same_size(one), error_of(lambda: x.is_nonzero()),
                    error_of(lambda: lib.is_nonzero(lib.ones(0, dtype=dt))))
    assert res[tl] == res[torch]


SPLITS = {  # name -> (shape, argument sets)
    "tensor_split": ((7, 4), [(3,), (3, 1), ([1, 5],), ([1, 5], 1), ([],), ([6, 2],), (7,), (1, -1)]),
    "hsplit": ((3, 4), [(2,), ([1, 3],), (1,)]),
    "vsplit": ((4, 3), [(2,), ([3],)]),
    "dsplit": ((2, 2, 4), [(4,), ([1, 2],)]),
    "split_with_sizes": ((5, 3), [([2, 3],), ([0, 3], 1), ([1, 1, 1], -1)]),
}


@pytest.mark.parametrize("name", SPLITS)
def test_splits(name):
    """Each piece a view (SliceBackward0 with torch's saved start and end, or one SplitWithSizesBackward0)."""
    shape, argsets = SPLITS[name]
    a = RNG.standard_normal(shape)
    for args in argsets:
        _check(lambda lib, x: tuple(getattr(lib, name)(x * 1, *args)), a)
        _check(lambda lib, x: tuple(getattr(x * 1, name)(*args)), a)
    if name == "tensor_split":
        _check(lambda lib, x: lib.tensor_split(x * 1, lib.tensor(3), 1) + lib.tensor_split(x * 1, lib.tensor([1, 2])), a)


SPLIT_ERRORS = {
    "hsplit_divisible": lambda lib: lib.hsplit(lib.ones(2, 4), 3),
    "hsplit_zero": lambda lib: lib.hsplit(lib.ones(2, 4), 0),
    "hsplit_0d": lambda lib: lib.hsplit(lib.ones(()), 1),
    "vsplit_1d": lambda lib: lib.vsplit(lib.ones(3), 1),
    "dsplit_2d": lambda lib: lib.dsplit(lib.ones(2, 2), 2),
    "sections_0": lambda lib: lib.tensor_split(lib.ones(3), 0),
    "tensor_split_0d": lambda lib: lib.tensor_split(lib.ones(()), 2),
    "tensor_float": lambda lib: lib.tensor_split(lib.ones(3), lib.tensor([1.0])),
    "tensor_2d": lambda lib: lib.tensor_split(lib.ones(3), lib.tensor([[1]])),
    "dim": lambda lib: lib.tensor_split(lib.ones(3), 2, 1),
    "with_sizes_sum": lambda lib: lib.ones(3).split_with_sizes([1, 1]),
}


@pytest.mark.parametrize("case", SPLIT_ERRORS)
def test_split_errors(case):
    assert_same_error(SPLIT_ERRORS[case])
