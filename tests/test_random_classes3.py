"""Classes of differences from torch found by the random programs (tests/random_programs.py, seeds 40000-44999),
each checked against torch on the same inputs: errors (type and leading message), values with the sign of zero,
dtypes, gradients of first and second order, saved tensors and their version errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl


def _outcome(fn, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(m)
        except Exception as e:  # noqa: BLE001
            return ("error", type(e).__name__, str(e).splitlines()[0])
    return _plain(r)


def _plain(r):
    if isinstance(r, (tuple, list)):
        return tuple(_plain(x) for x in r)
    if isinstance(r, (tl.Tensor, torch.Tensor)):
        a = np.asarray(r.detach().tolist())
        sign = np.signbit(a.real) & ~np.isnan(a.real)  # (the sign of zeros; a NaN's sign bit is the CPU's)
        return str(r.dtype).split(".")[-1], a.shape, repr(a.tolist()), repr(sign.tolist())
    return r


def _same(fn):
    a, b = _outcome(fn, tl), _outcome(fn, torch)
    assert a == b, (a, b)
    return b


def _stale_no_grad_view(m):
    """A view made in no_grad of a tensor that requires grad, whose base was then written in place."""
    x = m.tensor([0.4, 0.1, 0.9], requires_grad=True) * 1
    with m.no_grad():
        v = x.narrow(0, 0, 3)
    x.sigmoid_()
    return v


_USES = {  # ops whose own argument checks fail: torch's autograd reads the view's grad_fn first, unless the op
    # has no derivative (comparisons) or grad mode is off
    "t_3d": lambda m, v: v.reshape(1, 3, 1).t(),
    "add_shapes": lambda m, v: v + m.ones(2),
    "addcdiv_bool_target": lambda m, v: m.ones(2, 3, dtype=m.bool).addcdiv_(m.zeros(2, 3), v),
    "addcdiv_shapes": lambda m, v: m.addcdiv(m.zeros(2, 3), v, m.ones(2)),
    "index_out_of_range": lambda m, v: v[m.tensor([5])],
    "eq_shapes": lambda m, v: m.eq(v, m.ones(2)),
    "add_shapes_no_grad": lambda m, v: _no_grad(m, lambda: v + m.ones(2)),
    "works": lambda m, v: v * 2,
}


def _no_grad(m, fn):
    with m.no_grad():
        return fn()


@pytest.mark.parametrize("use", sorted(_USES))
def test_stale_no_grad_view_error_before_op_checks(use):
    _same(lambda m: _USES[use](m, _stale_no_grad_view(m)))


def test_in_place_target_checks_before_op_checks():
    def leaf_with_bad_shape(m):
        return m.ones(3, requires_grad=True).add_(m.ones(2))
    assert _same(leaf_with_bad_shape)[0] == "error"


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("float32", "int64"), ("float64", "float32")])
@pytest.mark.parametrize("shapes", [((1, 0, 1), (1, 1, 0)), ((1, 2, 0), (1, 0, 3)), ((0, 2, 1), (0, 1, 3))])
def test_empty_bmm_takes_mat2_dtype(dtypes, shapes):
    _same(lambda m: m.bmm(m.zeros(shapes[0], dtype=getattr(m, dtypes[0])),
                          m.zeros(shapes[1], dtype=getattr(m, dtypes[1]))))


@pytest.mark.parametrize("out_dtype", ["int64", "bool", "float32"])
@pytest.mark.parametrize("case", ["bool", "shapes", "ranks"])
def test_mm_out_checks_in_torch_order(out_dtype, case):
    def fn(m):
        a = m.ones(2, 3, dtype=m.bool) if case == "bool" else m.ones(2, 3)
        b = a.t() if case != "shapes" else m.ones(2, 3)
        if case == "ranks":
            a = a[0]
        return m.mm(a, b, out=m.zeros(1, dtype=getattr(m, out_dtype)))
    _same(fn)


_NAN_SIGN = {  # torch's sign of NaN is 0 in abs's and norm's derivatives; cdist's keeps the NaN
    "abs": lambda m, x: x.abs(),
    "norm1": lambda m, x: m.linalg.vector_norm(x, 1),
    "cdist1": lambda m, x: m.cdist(x.reshape(2, 2), m.zeros(1, 2, dtype=m.float64), p=1),
}


@pytest.mark.parametrize("name", sorted(_NAN_SIGN))
def test_sign_of_nan_in_derivatives(name):
    def fn(m):
        x = m.tensor([float("nan"), -1., 0., 2.], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(_NAN_SIGN[name](m, x).sum(), x)
        return g
    _same(fn)


def test_second_order_ignores_outputs_without_gradient():
    """A formula's output that receives no gradient takes no part in its derivative (no 0 * inf = NaN)."""
    def fn(m):
        x0 = m.tensor([[0.5, -1., 2.], [0.1, 0.2, -3.]], dtype=m.float64)
        x1 = m.tensor([[0.3, 0.5, 1.], [0.4, -0.2, -3.]], requires_grad=True)
        x3 = x0.ge_(x1)
        g, = m.autograd.grad(m.addcdiv(x3, x1, x3).sum(), x1, create_graph=True)
        s, = m.autograd.grad(g.sum(), x1, allow_unused=True)
        return g, s
    _same(fn)


def test_complex_gradient_for_real_index_put_values_is_refused():
    def fn(m):
        x1 = m.tensor([0.3, 0.5, 1.], dtype=m.float64, requires_grad=True)
        x0 = m.tensor([[1 + 1j, 2 - 1j, 0.5j]], dtype=m.complex128)
        x0[m.tensor([[False, False, True]])] = (x1 * 2)[..., :1]
        x0.real.sum().backward()
        return x1.grad
    assert _same(fn)[0] == "error"


def test_floor_divide_zero_quotient_keeps_sign():
    vals = [0., -0., 1., -1., 2.5, -2.5, 7., -7., float("inf"), -float("inf"), float("nan"), 1e300]

    def fn(m):
        a = m.tensor([[v] * len(vals) for v in vals], dtype=m.float64)
        b = m.tensor([vals] * len(vals), dtype=m.float64)
        return (m.floor_divide(a, b), m.div(a.float(), b.float(), rounding_mode="floor"),
                m.floor_divide(m.tensor([-0.5, 0.5, -3.]), 2), 1. / (m.tensor([-0.5, 5.]) // m.tensor([3., -0.])))
    _same(fn)


def test_version_error_after_detach_names_the_saving_node():
    def fn(m):
        x4 = m.tensor([0.5, 2.], dtype=m.float64, requires_grad=True).prod()
        x5 = m.cosh(x4)
        x4.detach_()
        x4[...] = 3.
        return x5.grad_fn._saved_self
    assert _same(fn)[0] == "error"


def test_float_op_on_integer_tensor_that_requires_grad_saves_it():
    def fn(m):
        x0 = m.tensor([[0.5, -1., 2.]], requires_grad=True)
        x3 = m.tensor([[True, False, True], [False, True, True]])
        x3.ge_(x0)  # a bool tensor with history
        y = m.sin(x3)
        saved = y.grad_fn._saved_self
        same = saved is x3
        with m.no_grad():
            x3.lt_(x3)
        try:
            y.grad_fn._saved_self
        except RuntimeError as e:
            return str(saved.dtype).split(".")[-1], same, str(e).splitlines()[0]
    _same(fn)
