"""Reductions vs real torch: values, gradients, node graph, saved attributes, dtypes and errors."""
import math
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph

RNG = np.random.default_rng(0)
A34 = RNG.standard_normal((3, 4))
A234 = RNG.standard_normal((2, 3, 4))
TIES = np.array([[1.0, 3.0, 3.0, -1.0], [2.0, 2.0, 2.0, 2.0], [0.5, -4.0, 0.25, -4.0]])
ZEROS = A234.copy()
ZEROS[0, 1, 2] = 0.0                       # one zero in a row
ZEROS[1, 2, 0] = ZEROS[1, 2, 3] = 0.0      # two zeros in a row
DTYPES = [np.float32, np.float64]


def _tol(dtype):
    return dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-7, atol=1e-9)


def test_cumsum_float_dim():
    _same_error(lambda m: m.tensor(A34).cumsum(1.5))


def _saved(node):
    out = {}
    for name in dir(node):
        if name.startswith("_saved_"):
            out[name] = getattr(node, name)
    return out


def _assert_saved_same(n1, n2, tol):
    s1, s2 = _saved(n1), _saved(n2)
    assert set(s1) == set(s2), (sorted(s1), sorted(s2))
    for k, v2 in s2.items():
        v1 = s1[k]
        if isinstance(v2, torch.Tensor):
            assert_same(v1, v2, **tol)
        else:
            assert v1 == v2 and type(v1) is type(v2), (k, v1, v2)


def check(fn, array, dtype, grad_seed=1, saved=True):
    """fn(x, module) in torchlike and torch: outputs, graph, saved attributes and input gradient agree."""
    tol = _tol(dtype)
    x = tl.tensor(array.astype(dtype), requires_grad=True)
    y = torch.tensor(array.astype(dtype), requires_grad=True)
    r1, r2 = fn(x, tl), fn(y, torch)
    assert_same(r1, r2, **tol)
    o1, o2 = (r1[0], r2[0]) if isinstance(r2, tuple) else (r1, r2)
    assert graph(o1) == graph(o2)
    if saved:
        _assert_saved_same(o1.grad_fn, o2.grad_fn, tol)
    g = np.random.default_rng(grad_seed).standard_normal(tuple(o2.shape)).astype(o2.detach().numpy().dtype)
    o1.backward(tl.tensor(g))
    o2.backward(torch.tensor(g))
    assert_same(x.grad, y.grad, **tol)
    return o1, o2


CASES = {
    "sum": lambda x, m: x.sum(),
    "sum_dims_neg": lambda x, m: m.sum(x, (0, -1)),
    "sum_keepdim": lambda x, m: x.sum(1, keepdim=True),
    "sum_none_keepdim": lambda x, m: m.sum(x, None, True),
    "sum_empty_dims": lambda x, m: x.sum(()),
    "sum_dtype": lambda x, m: x.sum(-1, dtype=m.float64),
    "mean": lambda x, m: x.mean(),
    "mean_dim": lambda x, m: m.mean(x, -1, keepdim=True),
    "mean_dims": lambda x, m: x.mean([0, 2]),
    "prod": lambda x, m: x.prod(),
    "prod_dim": lambda x, m: x.prod(-1),
    "prod_dim_keepdim": lambda x, m: m.prod(x, 1, keepdim=True),
    "amax": lambda x, m: x.amax(),
    "amax_dims": lambda x, m: x.amax((0, -1), keepdim=True),
    "amin_dim": lambda x, m: m.amin(x, 1),
    "max_all": lambda x, m: x.max(),
    "min_all": lambda x, m: m.min(x),
    "max_dim": lambda x, m: x.max(1),
    "max_dim_keepdim": lambda x, m: m.max(x, -1, keepdim=True),
    "min_dim": lambda x, m: x.min(dim=0),
    "var": lambda x, m: x.var(),
    "var_dim": lambda x, m: x.var(1),
    "var_none": lambda x, m: m.var(x, None),
    "var_correction": lambda x, m: x.var((0, -1), correction=0, keepdim=True),
    "var_unbiased_false": lambda x, m: x.var(-1, unbiased=False),
    "std": lambda x, m: x.std(),
    "std_dim": lambda x, m: x.std(-1, keepdim=True),
    "std_correction": lambda x, m: m.std(x, 1, correction=2),
    "logsumexp": lambda x, m: x.logsumexp(1),
    "logsumexp_dims": lambda x, m: m.logsumexp(x, (0, -1), keepdim=True),
    "softmax": lambda x, m: x.softmax(1),
    "softmax_neg": lambda x, m: m.softmax(x, -1),
    "log_softmax": lambda x, m: m.log_softmax(x, 0),
    "log_softmax_neg": lambda x, m: x.log_softmax(-1),
    "cumsum": lambda x, m: x.cumsum(1),
    "cumsum_neg_dtype": lambda x, m: m.cumsum(x, dim=-1, dtype=m.float64),
    "norm": lambda x, m: x.norm(),
    "norm_fro_dim": lambda x, m: m.norm(x, "fro", 1),
    "norm_p1_keepdim": lambda x, m: x.norm(p=1, dim=-1, keepdim=True),
    "norm_inf": lambda x, m: x.norm(p=math.inf),
    "norm_neg_inf_dims": lambda x, m: m.norm(x, -math.inf, (0, -1)),
    "norm_p3": lambda x, m: x.norm(3, dim=0),
    "norm_p_half": lambda x, m: x.norm(0.5),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_against_torch(case, dtype):
    check(CASES[case], A234, dtype)


@pytest.mark.parametrize("case", ["sum_dims_neg", "prod_dim", "max_dim", "var_dim", "softmax", "norm_p1_keepdim"])
def test_2d(case):
    check(CASES[case], A34, np.float32)


@pytest.mark.parametrize("case", ["prod", "prod_dim", "prod_dim_keepdim"])
def test_prod_gradient_with_zeros(case):
    check(CASES[case], ZEROS, np.float64)


@pytest.mark.parametrize("fn", [
    lambda x, m: x.amax(1), lambda x, m: x.amin(), lambda x, m: x.amax((0, 1), keepdim=True),
    lambda x, m: x.max(), lambda x, m: x.min(), lambda x, m: x.norm(math.inf, 1)])
def test_ties_share_gradient(fn):
    check(fn, TIES, np.float64)


@pytest.mark.parametrize("fn", [
    lambda x, m: x.sum(1), lambda x, m: x.mean(), lambda x, m: x.prod(1), lambda x, m: x.var(-1),
    lambda x, m: x.std(), lambda x, m: x.norm(), lambda x, m: x.norm(1, 0), lambda x, m: x.cumsum(0)])
def test_complex(fn):
    check(fn, A34 + 1j * A34[::-1], np.complex128)


def test_max_dim_ties_pick_first_index():
    check(lambda x, m: x.max(1).values, TIES, np.float64)
    assert_same(tl.tensor(TIES).max(1).indices, torch.tensor(TIES).max(1).indices)
    assert_same(tl.tensor(TIES).min(1).indices, torch.tensor(TIES).min(1).indices)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_of_two_tensors_is_elementwise(name):
    # saved attributes are pointwise.py's business (MaximumBackward0 / MinimumBackward0)
    other = A234[::-1].copy()
    check(lambda x, m: getattr(m, name)(x, m.tensor(other, dtype=x.dtype)), A234, np.float64, saved=False)
    check(lambda x, m: getattr(x, name)(other=m.tensor(other, dtype=x.dtype)), A234, np.float32, saved=False)


def test_max_dim_return_type():
    x = tl.tensor(A34, requires_grad=True)
    res = tl.max(x, 1)
    values, indices = res
    assert values is res.values and indices is res.indices and res[1] is indices
    assert indices.dtype == tl.int64 and not indices.requires_grad and indices.grad_fn is None
    assert values.grad_fn.name() == "MaxBackward0"
    assert_same(indices, torch.tensor(A34).max(1).indices)
    assert_same(x.min(0, True).indices, torch.tensor(A34).min(0, True).indices)
    assert repr(res).startswith("torchlike.return_types.max(\nvalues=tensor(")


def test_argmax_argmin_all_any():
    a1, a2 = tl.tensor(A234), torch.tensor(A234)
    for f in [lambda x: x.argmax(), lambda x: x.argmax(1), lambda x: x.argmin(-1, keepdim=True),
              lambda x: x.argmax(keepdim=True), lambda x: torch_or_tl(x).argmin(x, dim=0),
              lambda x: x.all(), lambda x: (x > 1).any((0, 2)), lambda x: (x > 0).all(1, True), lambda x: x.all(()),
              lambda x: (x > 0).any(dim=-1), lambda x: (x * 0).any()]:
        assert_same(f(a1), f(a2))
    x = tl.tensor(A234, requires_grad=True)
    assert x.argmax().grad_fn is None and x.all().grad_fn is None


def torch_or_tl(x):
    return tl if isinstance(x, tl.Tensor) else torch


def test_large_inputs_are_stable():
    big = A234 * 1000
    for f in [CASES["logsumexp"], CASES["softmax"], CASES["log_softmax"]]:
        o1, _ = check(f, big, np.float32)
        assert np.isfinite(np.asarray(o1._data)).all()
    assert_same(tl.logsumexp(tl.tensor([-math.inf, -math.inf]), 0), torch.logsumexp(torch.tensor([-math.inf] * 2), 0))
    assert_same(tl.logsumexp(tl.tensor([math.inf, 1.0]), 0), torch.logsumexp(torch.tensor([math.inf, 1.0]), 0))


def test_softmax_dtype_copies_first():
    o1, _ = check(lambda x, m: x.log_softmax(1, dtype=m.float64), A234, np.float32)
    assert graph(o1) == ("LogSoftmaxBackward0", [("ToCopyBackward0", [("torch::autograd::AccumulateGrad", [])])])
    i = np.arange(6).reshape(2, 3)
    assert_same(tl.softmax(tl.tensor(i), 1, dtype=tl.float32), torch.softmax(torch.tensor(i), 1, dtype=torch.float32))


def _same_error(f):
    with pytest.raises(Exception) as e2:
        f(torch)
    with pytest.raises(type(e2.value)) as e1:
        f(tl)
    assert str(e1.value) == str(e2.value).split("\n")[0]


def _ints(m):
    return m.tensor([[1, 2, 3], [4, 5, 6]], dtype=m.int32)


def test_integer_inputs():
    for f in [lambda m: _ints(m).sum(), lambda m: _ints(m).sum(0), lambda m: (_ints(m) > 2).sum(),
              lambda m: _ints(m).sum(dtype=m.float32), lambda m: _ints(m).mean(dtype=m.float64),
              lambda m: _ints(m).prod(), lambda m: _ints(m).prod(1), lambda m: _ints(m).amax(),
              lambda m: _ints(m).amin(1), lambda m: _ints(m).max(), lambda m: _ints(m).max(1),
              lambda m: (_ints(m) > 2).max(0), lambda m: _ints(m).cumsum(1), lambda m: (_ints(m) > 2).cumsum(0),
              lambda m: _ints(m).cumsum(0, dtype=m.float32), lambda m: _ints(m).logsumexp(1),
              lambda m: _ints(m).argmax(), lambda m: _ints(m).argmin(1, keepdim=True),
              lambda m: _ints(m).all(), lambda m: (_ints(m) > 3).any(1), lambda m: _ints(m).to(m.uint8).all()]:
        assert_same(f(tl), f(torch))


@pytest.mark.parametrize("f", [
    lambda m: _ints(m).mean(), lambda m: (_ints(m) > 2).mean(), lambda m: _ints(m).var(), lambda m: _ints(m).std(1),
    lambda m: _ints(m).norm(), lambda m: _ints(m).softmax(1), lambda m: _ints(m).log_softmax(0),
    lambda m: (_ints(m) > 2).argmax(), lambda m: m.zeros(0).max(), lambda m: m.zeros(0).amax(),
    lambda m: m.zeros(0).argmax(), lambda m: m.zeros(0, 3).max(-2), lambda m: m.zeros(0, 3).amax(0),
    lambda m: m.ones(2, 3, dtype=m.float64).norm(dtype=m.float32),
])
def test_dtype_and_empty_errors(f):
    _same_error(f)


@pytest.mark.parametrize("f", [
    lambda m, x: x.sum(2), lambda m, x: x.sum((0, -3)), lambda m, x: x.mean(5), lambda m, x: m.prod(x, -3),
    lambda m, x: x.amax(2), lambda m, x: x.max(2), lambda m, x: m.min(x, -3), lambda m, x: x.var(2),
    lambda m, x: x.std((0, 2)), lambda m, x: x.logsumexp(2), lambda m, x: x.softmax(2),
    lambda m, x: m.log_softmax(x, -3), lambda m, x: x.cumsum(2), lambda m, x: x.norm(dim=2),
    lambda m, x: x.argmax(2), lambda m, x: x.argmin(-3), lambda m, x: x.all(2), lambda m, x: x.any((0, 5)),
    lambda m, x: x.sum((0, 0)), lambda m, x: x.mean((1, -1)), lambda m, x: x.amax((1, 1)),
    lambda m, x: x.var((0, 0)), lambda m, x: x.norm(dim=(0, -2)), lambda m, x: x.any((0, 0)),
])
def test_bad_dims(f):
    _same_error(lambda m: f(m, m.tensor(A34, dtype=m.float32)))


def test_bad_dim_message():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        tl.tensor(A34).sum(2)


def test_zero_dim_inputs():
    s = np.array(1.5)
    for f in [lambda x, m: x.sum(0), lambda x, m: x.max(0).values, lambda x, m: x.softmax(-1),
              lambda x, m: x.cumsum(0), lambda x, m: x.prod(0), lambda x, m: x.logsumexp(0)]:
        check(f, s, np.float64)
    assert_same(tl.tensor(s).max(0).indices, torch.tensor(s).max(0).indices)
    assert_same(tl.tensor(s).argmax(0), torch.tensor(s).argmax(0))


def test_var_correction_record_and_dof_warning():
    x, y = tl.tensor(A34, requires_grad=True), torch.tensor(A34, requires_grad=True)
    for f in [lambda t: t.var(), lambda t: t.std(), lambda t: t.var(None), lambda t: t.var(True),
              lambda t: t.var(False), lambda t: t.var(0, correction=None), lambda t: t.std(0, correction=0.5),
              lambda t: t.var(keepdim=True), lambda t: t.std(None, keepdim=True)]:
        r1, r2 = f(x), f(y)
        assert_same(r1, r2)
        assert r1.grad_fn._saved_correction == r2.grad_fn._saved_correction
        assert type(r1.grad_fn._saved_correction) is type(r2.grad_fn._saved_correction)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = tl.tensor([3.0]).std()
    assert np.isnan(r.item())
    assert any("std(): degrees of freedom is <= 0" in str(m.message) for m in w)


def test_var_std_gradients_with_no_degrees_of_freedom():
    """dof <= 0: torch's forward is inf/NaN (with its warning) and its backward 2 / dof, where a full reduction gives
    NaN where the input equals its mean and inf elsewhere; over a dim, 2 / 0 is inf and a negative dof counts."""
    for f in (lambda m, x: m.var(x), lambda m, x: m.std(x, correction=2), lambda m, x: m.var(x, correction=3),
              lambda m, x: m.var(x, dim=0, correction=2), lambda m, x: m.var(x, dim=0, correction=3),
              lambda m, x: m.std(x, dim=-1, correction=1, keepdim=True)):
        for data in ([0.5], [0.5, 1.0], [[0.5], [2.0]]):
            grads = []
            for m in (tl, torch):
                x = m.tensor(data, dtype=m.float64, requires_grad=True)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    y = f(m, x)
                    y.sum().backward()
                grads.append((y.detach(), x.grad))
            assert_same(*grads[0][:1], grads[1][0])
            assert_same(grads[0][1], grads[1][1])


def test_norm_special_cases():
    zero = np.zeros((2, 3))
    check(lambda x, m: x.norm(dim=1), zero, np.float64)
    check(lambda x, m: x.norm(p=3), zero, np.float64)
    x = tl.tensor(A34, requires_grad=True)
    assert x.norm(p=2.0).grad_fn._saved_ord == 2.0 and x.norm().grad_fn._saved_ord == 2
    n = x.norm(p=0)
    assert_same(n, torch.tensor(A34).norm(p=0))
    n.backward()
    assert x.grad is None  # torch returns no gradient at all for p=0


def test_double_backward():
    for f in [lambda x, m: x.softmax(1), lambda x, m: x.logsumexp(1), lambda x, m: x.var(0), lambda x, m: x.prod(1)]:
        x, y = tl.tensor(A34, requires_grad=True), torch.tensor(A34, requires_grad=True)
        (g1,) = tl.autograd.grad((f(x, tl) ** 2).sum(), x, create_graph=True)
        (g2,) = torch.autograd.grad((f(y, torch) ** 2).sum(), y, create_graph=True)
        assert_same(g1, g2)
        (h1,) = tl.autograd.grad(g1.sum(), x)
        (h2,) = torch.autograd.grad(g2.sum(), y)
        assert_same(h1, h2, rtol=1e-6)


def test_public_names():
    for name in ["sum", "mean", "prod", "amax", "amin", "max", "min", "var", "std", "logsumexp", "softmax",
                 "log_softmax", "cumsum", "norm", "argmax", "argmin", "all", "any"]:
        assert callable(getattr(tl, name)) and callable(getattr(tl.Tensor, name))
