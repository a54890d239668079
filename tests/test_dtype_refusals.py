"""torch's dtype refusals and dtype-dependent errors (GEN_REPORT classes A, AF, AT, AN, S, R, X, AQ, N), compared
with real torch on the same NumPy inputs: values, dtypes, node names, _version, gradients, error type and text."""
import numpy as np
import pytest
import torch

import torchlike
from tests import dtype_survey
from oracle import assert_same_error

LIBS = (torch, torchlike)


def _plain(m, v):
    if isinstance(v, m.Tensor):
        return ("tensor", repr(np.asarray(v.detach().tolist()).round(6).tolist()), str(v.dtype).split(".")[-1],
                type(v.grad_fn).__name__ if v.grad_fn is not None else None, v._version)
    if isinstance(v, (tuple, list)):
        return tuple(_plain(m, x) for x in v)
    return v


def _run(m, fn):
    """What a user sees of ``fn(m)``: the result (values, dtype, node, version) or the error's type and text."""
    try:
        return _plain(m, fn(m))
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__, str(e).split("\n")[0][:80])


def _same(fn):
    expected, got = (_run(m, fn) for m in LIBS)
    assert got == expected


# ----- class A: the survey's ops on every dtype (a sample of the operand pairs) --------------------------------------
_SAMPLE = {"float32", "int64", "bool", "complex64"}
_CASES = [(label, fn) for label, fn in dtype_survey.cases(False)
          if set(label[label.index("(") + 1:-1].replace(" ", "").split(",")) <= _SAMPLE | {"2", "0.5", "True", "1j"}
          and label.count(",") < 2]


@pytest.mark.parametrize("label, fn", _CASES, ids=[c[0] for c in _CASES])
def test_survey_case(label, fn):
    expected, got = (dtype_survey.outcome(m, fn, False) for m in LIBS)
    if expected.startswith("ok"):
        assert got == "ok"
    else:  # error type and leading text
        assert got.split(":")[0] == expected.split(":")[0] and got[:70] == expected[:70]


@pytest.mark.parametrize("case", [
    lambda m: m.tensor([1 + 1j]) > m.tensor([0j]),
    lambda m: m.tensor([1 + 1j]).clamp(0, 1),
    lambda m: m.tensor([True]).clamp(True),
    lambda m: m.tensor([True]).clamp(max=True),
    lambda m: m.tensor([True]).clamp(False, True),
    lambda m: m.clamp(m.tensor([1j]), m.tensor([0.]), m.tensor([1.])),
    lambda m: m.clamp(m.tensor([1.]), m.tensor([0.]), m.tensor([1j])),
    lambda m: m.clamp(m.tensor([1.]), min=m.tensor([1j])),
    lambda m: m.clamp(m.tensor([1.]), max=m.tensor([1j])),
    lambda m: m.clamp(m.tensor([True, False]), min=m.tensor([True, True])),
    lambda m: m.tensor([True, False]).clamp_(max=m.tensor([False, True])),
    lambda m: m.clamp(m.tensor([True, False]), m.tensor([True, True]), m.tensor([True, True])),
    lambda m: m.minimum(m.tensor([1j]), m.tensor([1j])),
    lambda m: m.round(m.tensor([True])),
    lambda m: m.round(m.tensor([1, 2]), decimals=1),
    lambda m: m.round(m.tensor([1, 2])),
    lambda m: m.nn.functional.silu(m.tensor([1, 2])),
    lambda m: m.nn.functional.celu(m.tensor([1, 2])),
    lambda m: m.nn.functional.hardtanh(m.tensor([True])),
    lambda m: m.nn.functional.relu6(m.tensor([1j])),
    lambda m: m.allclose(m.tensor([1.]), m.tensor([True])),
    lambda m: m.isclose(m.tensor([1.]), m.tensor([1.], dtype=m.float64)),
    lambda m: m.bitwise_and(m.tensor([1.]), m.tensor([1.])),
    lambda m: ~m.tensor([1.]),
    lambda m: ~m.tensor([1j]),
    lambda m: m.ceil(m.tensor([1j])),
    lambda m: m.tensor([1j]).argmax(),
    lambda m: m.tensor([1j]).max(0),
    lambda m: m.tensor([1j]).max(),
    lambda m: m.tensor([1j]).amin(0),
    lambda m: m.tensor([1j]).abs_(),
    lambda m: m.sign(m.tensor([1j])),
    lambda m: m.tensor([1j]).sign_(),
    lambda m: m.hypot(m.tensor([1j]), m.tensor([1j])),
    lambda m: m.hypot(m.tensor([1, 2]), m.tensor([3, 4])),
    lambda m: m.tensor([True]).hypot_(m.tensor([2])),
    lambda m: m.logaddexp(m.tensor([1, 2]), m.tensor([3, 4])),
    lambda m: m.isposinf(m.tensor([1j])),
    lambda m: m.tensor([True, False]).cumsum(0, dtype=m.bool),
    lambda m: m.tensor([True, False]) ** True,
    lambda m: m.tensor([True, False]) ** False,
    lambda m: m.tensor([True, False]) ** m.tensor([True, False]),
    lambda m: True ** m.tensor([True, False]),
    lambda m: m.tensor([True]) // m.tensor([True]),
    lambda m: m.div(m.tensor([1j]), m.tensor([1j]), rounding_mode="trunc"),
    lambda m: m.floor(m.tensor([1, -2])),
    lambda m: m.floor(m.tensor([1.5, -2.5], dtype=m.float32)),
    lambda m: m.sgn(m.tensor([True, False])),
    lambda m: m.tensor([True, False]).sgn_(),
    lambda m: m.tensor([[1j, 2j]]) > m.tensor([1j, 2j, 3j]),  # the shapes are checked first
    lambda m: m.lerp(m.tensor([1, 2]), m.tensor([3, 4]), 0.5),
    lambda m: m.addcmul(m.tensor([True]), m.tensor([True]), m.tensor([True])),
])
def test_refusal(case):
    _same(case)


def test_refusal_is_not_cached_as_a_result():
    """A refused call raises every time, and the same op with another dtype still runs."""
    for _ in range(2):
        _same(lambda m: m.gt(m.tensor([1j]), 0))
    _same(lambda m: m.gt(m.tensor([1.5, -1.]), 0))


def test_refused_inplace_changes_nothing():
    for m in LIBS:
        x = m.tensor([True, False])
        with pytest.raises(NotImplementedError):
            x.floor_()
        assert x._version == 0 and x.tolist() == [True, False]


def test_silu_complex_autograd():
    _same(lambda m: m.nn.functional.silu(m.tensor([1j, 2.], requires_grad=True)))
    _same(lambda m: m.nn.functional.silu(m.tensor([1j, 2.])))


# ----- AF: masked_fill of a bool/int tensor with a value that requires grad -------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
def test_masked_fill_value_requires_grad(dtype):
    _same(lambda m: m.zeros(2, dtype=getattr(m, dtype)).masked_fill(m.tensor([True, False]),
                                                                     m.tensor(1., requires_grad=True)))


# ----- AT: scatter_add / index_add of bools (a logical or) ------------------------------------------------------------
def test_scatter_add_bool():
    _same(lambda m: m.zeros(3, dtype=m.bool).scatter_add(0, m.tensor([0, 1, 1]), m.tensor([True, False, True])))
    _same(lambda m: m.tensor([True, False, False]).scatter_add_(0, m.tensor([2, 2]), m.tensor([False, True])))
    _same(lambda m: m.zeros(3, dtype=m.bool).index_add(0, m.tensor([0, 1, 1]), m.tensor([True, False, True])))


# ----- AN: torch's backward formulas with a bool operand ---------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda m, x, b: x ** b, lambda m, x, b: m.pow(x, b[0]), lambda m, x, b: m.atan2(b, x),
    lambda m, x, b: m.atan2(x, b), lambda m, x, b: m.logaddexp(x, b), lambda m, x, b: m.logaddexp(b, x),
    lambda m, x, b: m.hypot(x, b), lambda m, x, b: x ** True, lambda m, x, b: m.where(b, x, b),
    lambda m, x, b: m.addcdiv(x, x, b), lambda m, x, b: m.addcdiv(x, x, b.long()),
    lambda m, x, b: m.addcdiv(x, x.detach(), b.long()),
])
def test_bool_operand_backward(op):
    def grads(m):
        x = m.tensor([0.5, 1.5, 2.0], requires_grad=True)
        b = m.tensor([True, False, True])
        r = op(m, x, b)
        r.sum().backward()
        return x.grad.clone()  # (x.grad._version differs for a gradient passed through unchanged: not a dtype issue)
    _same(grads)


# ----- S: integer division by zero --------------------------------------------------------------------------------------
@pytest.mark.parametrize("op", [
    lambda m, a, b: m.remainder(a, b), lambda m, a, b: a // b, lambda m, a, b: m.fmod(a, b),
    lambda m, a, b: m.div(a, b, rounding_mode="trunc"), lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    lambda m, a, b: a % 0, lambda m, a, b: a // 0, lambda m, a, b: 3 // b, lambda m, a, b: a.remainder_(b),
    lambda m, a, b: a.fmod_(b), lambda m, a, b: a.floor_divide_(b), lambda m, a, b: a.div_(b, rounding_mode="trunc"),
    lambda m, a, b: a // b.bool(), lambda m, a, b: a / b, lambda m, a, b: a.double() // b,
    lambda m, a, b: a.fmod(0.0),
])
def test_int_zero_division(op):
    def run(m):
        a, b = m.tensor([3, -4]), m.tensor([0, 2])
        try:
            return op(m, a, b)
        finally:
            assert a.tolist() == [3, -4] and a._version == 0  # nothing written before the error
    _same(run)


# ----- R: values that do not fit, missing arguments --------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.zeros(2, dtype=m.long).masked_fill(m.tensor([True, False]), float("nan")),
    lambda m: m.zeros(2, dtype=m.long).masked_fill_(m.tensor([True, False]), float("inf")),
    lambda m: m.zeros(2, dtype=m.long).masked_fill(m.tensor([True, False]), 2.5),
    lambda m: m.zeros(2, dtype=m.int32).masked_fill(m.tensor([True, False]), 2 ** 40),
    lambda m: m.zeros(2).masked_fill(m.tensor([True, False]), 1e300),
    lambda m: m.zeros(2).masked_fill(m.tensor([True, False]), 1j),
    lambda m: m.zeros(2).masked_fill(m.tensor([True, False]), m.tensor(1j)),
    lambda m: m.zeros(2, dtype=m.long).masked_fill(m.tensor([True, False]), m.tensor(float("nan"))),
    lambda m: m.zeros(2, dtype=m.bool).masked_fill(m.tensor([True, False]), 2),
    lambda m: m.zeros(2).fill_(1j),
    lambda m: m.zeros(2).fill_(1 + 0j),
    lambda m: m.zeros(2, dtype=m.long).fill_(float("nan")),
    lambda m: m.zeros(2).clamp(1j),
    lambda m: m.zeros(2, dtype=m.long).clamp(1j),
    lambda m: m.ones(1).view(),
    lambda m: m.tensor(1.).permute(),
    lambda m: m.tensor([1., 2.]).atan2_(0.5),
])
def test_argument_checks(case):
    _same(case)


# ----- X: angle ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m: m.angle(m.tensor([-0.0, -1.0, 2.0, float("nan")])),
    lambda m: m.angle(m.tensor(0.097, dtype=m.float32, requires_grad=True)),
    lambda m: m.angle(m.tensor([1, -2])),
    lambda m: m.angle(m.tensor([True, False])),
    lambda m: m.angle(m.tensor([-1 - 0j, 1j], dtype=m.complex64)),
])
def test_angle(case):
    _same(case)


# ----- AQ: acosh of complex numbers (the principal branch of torch's formula) -----------------------------------------
@pytest.mark.parametrize("dtype", ["complex128", "float64"])
def test_acosh_gradients(dtype):
    g = np.random.default_rng(0)
    z = (g.uniform(-2, 2, 24) + 1j * g.uniform(-2, 2, 24)).round(3)
    z = np.concatenate([z, [0.5, -0.5, -1.5, 1.5, complex(0.5, -0.0), complex(-1.5, -0.0), 2j, 3]])
    if dtype == "float64":
        z = z.real

    def grads(m):
        x = m.tensor(z, dtype=getattr(m, dtype), requires_grad=True)
        y = m.acosh(x)
        y = y.real + 0.5 * y.imag if y.is_complex() else y
        g1, = m.autograd.grad(y.sum(), x, create_graph=True)
        g2, = m.autograd.grad((g1.real + 0.3 * g1.imag).sum() if g1.is_complex() else g1.sum(), x)
        return g1, g2
    expected, got = (grads(m) for m in LIBS)
    for e, r in zip(expected, got):
        np.testing.assert_allclose(np.asarray(r.tolist()), np.asarray(e.tolist()), rtol=1e-10, equal_nan=True)


# ----- N: a complex gradient into a real input --------------------------------------------------------------------------
@pytest.mark.parametrize("case", [
    lambda m, z, w: m.where(m.tensor([True, False]), z, w),
    lambda m, z, w: m.where(m.tensor([True, False]), w, z),
    lambda m, z, w: m.logaddexp(z, w),
    lambda m, z, w: z.detach().masked_fill(m.tensor([True, False]), w[0]),
    lambda m, z, w: m.zeros(2, dtype=m.complex128).fill_(w[0]) * z,
    lambda m, z, w: m.where(m.tensor([True, False]), w, 1j),
    lambda m, z, w: m.where(m.tensor([True, False]), 1j, w),
    lambda m, z, w: z + w,
    lambda m, z, w: z * w,
])
@pytest.mark.parametrize("wrt", ["both", "complex"])
def test_complex_gradient_into_real_input(case, wrt):
    def grads(m):
        z = m.tensor([1j, 2 + 1j], dtype=m.complex128, requires_grad=True)
        w = m.tensor([1., 2.], dtype=m.float64, requires_grad=True)
        y = case(m, z, w)
        return y.grad_fn, m.autograd.grad((y.real + y.imag).sum(), [z, w] if wrt == "both" else [z],
                                          allow_unused=True)

    def run(m):
        node, gs = grads(m)
        names = [type(n).__name__ for n, _ in node.next_functions if n is not None]
        return (type(node).__name__, names, gs)
    _same(run)


def test_not_implemented_node_runs_first():
    """torch's NotImplemented nodes have sequence number UINT64_MAX: with another failing node (a bool exponent's
    pow), the engine reports theirs, whatever the order the nodes were made in."""
    def run(m):
        x = m.tensor([0.5, 1.2], requires_grad=True)
        a = (x * 1) ** m.tensor(True)
        b = (x * 1) // 2
        return b.grad_fn._sequence_nr(), m.autograd.grad(a.sum() + b.sum(), [x])
    _same(run)


@pytest.mark.parametrize("case", [
    lambda m: m.clamp(m.ones(2, 3, dtype=m.complex64), min=m.ones(2, 6)),
    lambda m: m.ones(2, 3, dtype=m.complex64).clamp_(min=m.ones(2, 6)),
    lambda m: m.clamp_min(m.ones(2, 3, dtype=m.complex64), m.ones(2, 6)),
    lambda m: m.clamp(m.ones(2, 3), min=m.ones(2, 6, dtype=m.complex64)),
    lambda m: m.clamp_max(m.ones(2, 3, dtype=m.complex64), 1.0),
    lambda m: m.maximum(m.ones(2, 3, dtype=m.complex64), m.ones(2, 2)),
    lambda m: m.minimum(m.ones(3), m.ones(2, dtype=m.complex64)),
    lambda m: m.bmm(m.ones(1, 2, 2, dtype=m.bool), m.ones(1, 2, 2)),
    lambda m: m.bmm(m.ones(1, 2, 2), m.ones(1, 2, 2, dtype=m.bool)),
    lambda m: m.matmul(m.ones(1, 2, 2, dtype=m.bool), m.ones(1, 2, 2)),
])
def test_refusals_come_before_broadcast_and_dtype_checks(case):
    # torch's clamp/maximum/minimum check a complex input first (clamp_min/max with a tensor bound broadcast
    # first), bmm refuses a bool first operand before comparing dtypes (seeds 7077, 10057, 10328)
    assert_same_error(case)
