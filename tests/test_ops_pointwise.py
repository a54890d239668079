"""Elementwise ops against torch 2.13: values, gradients, node graphs, saved attributes, in-place
semantics, special points, complex numbers and errors.

Every case runs the same function on torchlike and torch (``fn(lib, *tensors)``; ``F(lib)`` is the
home of the nn.functional-style activations) on the same NumPy inputs, then compares values and dtypes,
the whole autograd graph below the result (node names, edges with output_nr, every ``_saved_*``
attribute torch has) and the gradients of every input for a random cotangent. Shapes are reused
((3, 4), (4,), (3, 1), ()) so each op compiles a handful of times.
"""
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.ops import pointwise as P
from oracle import assert_same, compare_graph, graph_with_nr, saved_names, _dense

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4))
B = RNG.standard_normal((3, 4))
POS = RNG.uniform(0.5, 2.0, (3, 4))
UNIT = RNG.uniform(-0.9, 0.9, (3, 4))
GT1 = RNG.uniform(1.1, 3.0, (3, 4))
ROW = RNG.standard_normal(4)
COL = RNG.standard_normal((3, 1))
POS_ROW = RNG.uniform(0.5, 2.0, 4)
POS_COL = RNG.uniform(0.5, 2.0, (3, 1))
NONZERO = np.sign(B) * POS  # |.| >= 0.5: safe divisor
TOL = {np.float32: (1e-5, 1e-6), np.float64: (1e-9, 1e-12), np.complex64: (1e-5, 1e-6)}


def F(lib):
    """Where a library keeps its activation functions."""
    return torch.nn.functional if lib is torch else P


def _tensor(lib, a, grad):
    a = np.asarray(a)
    rg = grad and a.dtype.kind in "fc"
    return tl.tensor(a, requires_grad=rg) if lib is tl else torch.tensor(a, requires_grad=rg)


def check(fn, *arrays, grad=True, backward=True, check_saved=True, tol=None, cotangent=None):
    """Run fn on both libraries; compare values, graphs and input gradients. Returns both results.

    grad: float inputs require grad; backward: also compare the gradients (else only the graph)."""
    tl_in = [_tensor(tl, a, grad) for a in arrays]
    th_in = [_tensor(torch, a, grad) for a in arrays]
    out_tl, out_th = fn(tl, *tl_in), fn(torch, *th_in)
    rtol, atol = tol or TOL.get(out_th.numpy(force=True).dtype.type, (1e-5, 1e-6))
    assert_same(out_tl, _dense(out_th), rtol, atol)
    assert out_tl.requires_grad == out_th.requires_grad
    compare_graph(out_tl.grad_fn, out_th.grad_fn, check_saved)
    if grad and backward and out_th.requires_grad:
        g = cotangent if cotangent is not None else RNG.standard_normal(out_th.shape)
        g = np.asarray(g).astype(out_th.numpy(force=True).dtype)
        out_tl.backward(tl.tensor(g))
        out_th.backward(torch.tensor(g))
        for a, b in zip(tl_in, th_in):
            assert_same(a.grad, _dense(b.grad), rtol, atol)
    return out_tl, out_th


FLOATS = [np.float32, np.float64]

# ----- unary ops --------------------------------------------------------------------------------------------
UNARY = {  # name: (fn(lib, x), input)
    "neg": (lambda m, x: -x, A), "abs": (lambda m, x: m.abs(x), A), "exp": (lambda m, x: m.exp(x), A),
    "exp2": (lambda m, x: m.exp2(x), A), "expm1": (lambda m, x: m.expm1(x), A), "log": (lambda m, x: m.log(x), POS),
    "log1p": (lambda m, x: m.log1p(x), POS), "log2": (lambda m, x: m.log2(x), POS),
    "log10": (lambda m, x: m.log10(x), POS), "sqrt": (lambda m, x: m.sqrt(x), POS),
    "rsqrt": (lambda m, x: m.rsqrt(x), POS), "square": (lambda m, x: m.square(x), A),
    "sin": (lambda m, x: m.sin(x), A), "cos": (lambda m, x: m.cos(x), A), "tan": (lambda m, x: m.tan(x), UNIT),
    "tanh": (lambda m, x: m.tanh(x), A), "sinh": (lambda m, x: m.sinh(x), A), "cosh": (lambda m, x: m.cosh(x), A),
    "asin": (lambda m, x: m.asin(x), UNIT), "acos": (lambda m, x: m.acos(x), UNIT),
    "atan": (lambda m, x: m.atan(x), A), "asinh": (lambda m, x: m.asinh(x), A),
    "acosh": (lambda m, x: m.acosh(x), GT1), "atanh": (lambda m, x: m.atanh(x), UNIT),
    "erf": (lambda m, x: m.erf(x), A), "erfc": (lambda m, x: m.erfc(x), A),
    "sigmoid": (lambda m, x: m.sigmoid(x), A), "reciprocal": (lambda m, x: m.reciprocal(x), NONZERO),
    "relu": (lambda m, x: m.relu(x), A), "sign": (lambda m, x: m.sign(x), A), "sgn": (lambda m, x: m.sgn(x), A),
    "floor": (lambda m, x: m.floor(x), A * 3), "ceil": (lambda m, x: m.ceil(x), A * 3),
    "round": (lambda m, x: m.round(x), A * 3), "round_decimals": (lambda m, x: m.round(x, decimals=2), A * 3),
    "trunc": (lambda m, x: m.trunc(x), A * 3), "frac": (lambda m, x: m.frac(x), A * 3),
    "clone": (lambda m, x: m.clone(x), A), "angle": (lambda m, x: m.angle(x), A),
    "sinc": (lambda m, x: m.sinc(x), A), "logit": (lambda m, x: m.logit(x), (UNIT + 1) / 2),
    "logit_eps": (lambda m, x: m.logit(x, eps=0.2), (UNIT + 1) / 2),
    "silu": (lambda m, x: F(m).silu(x), A), "gelu": (lambda m, x: F(m).gelu(x), A),
    "gelu_tanh": (lambda m, x: F(m).gelu(x, approximate="tanh"), A),
    "softplus": (lambda m, x: F(m).softplus(x), A * 10),
    "softplus_beta": (lambda m, x: F(m).softplus(x, beta=2, threshold=5.0), A * 3),
    "leaky_relu": (lambda m, x: F(m).leaky_relu(x, 0.2), A), "hardtanh": (lambda m, x: F(m).hardtanh(x), A),
    "hardtanh_range": (lambda m, x: F(m).hardtanh(x, -0.5, 2.0), A), "relu6": (lambda m, x: F(m).relu6(x), A * 5),
    "elu": (lambda m, x: F(m).elu(x, alpha=0.5), A), "selu": (lambda m, x: m.selu(x), A),
    "celu": (lambda m, x: m.celu(x, 1.5), A), "celu_functional": (lambda m, x: F(m).celu(x, alpha=0.5), A),
    "logsigmoid": (lambda m, x: F(m).logsigmoid(x), A * 5),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary(name, dtype):
    fn, data = UNARY[name]
    check(fn, data.astype(dtype))


METHODS = ["abs", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square", "sin", "cos",
           "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin", "arccos",
           "arctan", "erf", "erfc", "sigmoid", "reciprocal", "relu", "sign", "sgn", "floor", "ceil", "round", "trunc",
           "fix", "frac", "clone", "neg", "negative", "absolute", "angle", "positive", "sinc", "logit"]


def test_methods_match_functions():
    x = tl.tensor(UNIT + 1.5)
    t = torch.tensor(UNIT + 1.5)
    for name in METHODS:
        assert_same(getattr(x, name)(), getattr(t, name)())
        assert_same(getattr(tl, name)(x), getattr(torch, name)(t))


# in-place unary variants: y = x * 1 (a non-leaf), then y.op_() -> graph, version, value, gradient
INPLACE_UNARY = ["neg_", "abs_", "exp_", "exp2_", "expm1_", "log_", "log1p_", "log2_", "log10_", "sqrt_", "rsqrt_",
                 "square_", "sin_", "cos_", "tan_", "tanh_", "sinh_", "cosh_", "asin_", "acos_", "atan_", "erf_", "erfc_",
                 "sigmoid_", "reciprocal_", "relu_", "sign_", "sgn_", "floor_", "ceil_", "round_", "trunc_", "frac_",
                 "sinc_", "logit_"]


@pytest.mark.parametrize("name", INPLACE_UNARY)
def test_inplace_unary(name):
    def fn(m, x):
        y = x * 1
        v = y._version
        r = getattr(y, name)()
        assert r is y and y._version == v + 1
        return y
    check(fn, UNIT.astype(np.float64))


def test_inplace_activations():
    def fn(m, x):
        y = x * 1
        F(m).hardtanh(y, -0.5, 0.5, inplace=True)  # saves its input: later in-place ops are fine
        F(m).silu(y, inplace=True)
        return y
    check(fn, A.astype(np.float64))
    for f in (lambda m, x: F(m).leaky_relu(x * 1, 0.1, inplace=True),  # these save their result
              lambda m, x: F(m).elu(x * 1, alpha=0.7, inplace=True), lambda m, x: F(m).selu(x * 1, inplace=True),
              lambda m, x: F(m).celu(x * 1, alpha=0.7, inplace=True), lambda m, x: m.celu_(x * 1, 2.0)):
        check(f, A.astype(np.float64))


def test_inplace_without_derivative():
    """torch has no derivative for asinh_, acosh_, atanh_: the node exists and its backward raises."""
    for name in ("asinh_", "acosh_", "atanh_"):
        def fn(m, x):
            y = x * 1
            assert getattr(y, name)() is y and y._version == 1
            return y
        out_tl, out_th = check(fn, GT1 / 4 + 0.5, backward=False)
        with pytest.raises(NotImplementedError) as expected:
            out_th.sum().backward()
        with pytest.raises(NotImplementedError, match=str(expected.value)):
            out_tl.sum().backward()


def test_unary_out():
    """``out=``: the result written into ``out`` (cast to its dtype), no autograd through it, torch's error when an
    input requires grad."""
    for name in ["sin", "exp", "sinc", "logit", "floor"]:
        x, t = tl.tensor((UNIT + 1) / 2), torch.tensor((UNIT + 1) / 2)
        o, ot = tl.zeros(3, 4, dtype=tl.float64), torch.zeros(3, 4, dtype=torch.float64)
        assert getattr(tl, name)(x, out=o) is o
        getattr(torch, name)(t, out=ot)
        assert_same(o, ot)
    x = tl.tensor(A, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"^sin\(\): functions with out=\.\.\. arguments don't support automatic"):
        tl.sin(x, out=tl.zeros(3, 4))
    with pytest.raises(RuntimeError, match=r"^sin\(\): functions with out=\.\.\. arguments don't support automatic"):
        torch.sin(torch.tensor(A, requires_grad=True), out=torch.zeros(3, 4))


def test_unary_on_integers_and_0d():
    i = np.array([[-2, 0, 3]], dtype=np.int64)
    for name in ["exp", "sqrt", "sigmoid", "abs", "neg", "relu", "sign", "floor", "round", "trunc", "reciprocal",
                 "angle", "sin", "square", "sinc", "logit"]:
        assert_same(getattr(tl, name)(tl.tensor(i)), getattr(torch, name)(torch.tensor(i)))
    for name in ["exp", "tanh", "abs", "sqrt", "relu"]:  # 0-d tensors
        check(lambda m, x: getattr(m, name)(x), np.float32(1.5))


# ----- binary ops -------------------------------------------------------------------------------------------
BINARY = {  # name: (fn(lib, a, b), a, b)
    "add": (lambda m, a, b: a + b, A, B), "add_alpha": (lambda m, a, b: m.add(a, b, alpha=2.5), A, B),
    "sub": (lambda m, a, b: a - b, A, B), "sub_alpha": (lambda m, a, b: m.sub(a, b, alpha=-3), A, B),
    "rsub": (lambda m, a, b: m.rsub(a, b), A, B), "rsub_alpha": (lambda m, a, b: m.rsub(a, b, alpha=2), A, B),
    "mul": (lambda m, a, b: a * b, A, B), "div": (lambda m, a, b: a / b, A, NONZERO),
    "div_trunc": (lambda m, a, b: m.div(a, b, rounding_mode="trunc"), A * 5, NONZERO),
    "div_floor": (lambda m, a, b: m.div(a, b, rounding_mode="floor"), A * 5, NONZERO),
    "pow": (lambda m, a, b: a ** b, POS, B), "maximum": (lambda m, a, b: m.maximum(a, b), A, B),
    "minimum": (lambda m, a, b: m.minimum(a, b), A, B), "atan2": (lambda m, a, b: m.atan2(a, b), A, B),
    "hypot": (lambda m, a, b: m.hypot(a, b), A, B), "logaddexp": (lambda m, a, b: m.logaddexp(a, b), A, B),
    "fmod": (lambda m, a, b: m.fmod(a, b), A * 5, NONZERO), "remainder": (lambda m, a, b: a % b, A * 5, NONZERO),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary(name, dtype):
    fn, a, b = BINARY[name]
    check(fn, a.astype(dtype), b.astype(dtype))
    if dtype == np.float64 and name in PARTIAL:  # one input without grad: torch saves (and computes) less
        check(lambda m, x, y: fn(m, x, y.detach()), a, b)
        check(lambda m, x, y: fn(m, x.detach(), y), a, b)


PARTIAL = ["mul", "div", "div_trunc", "pow", "maximum", "atan2", "hypot", "fmod", "remainder"]
BROADCAST = [((3, 4), (4,)), ((3, 4), (3, 1)), ((3, 1), (4,)), ((4,), (3, 4)), ((3, 4), ())]


@pytest.mark.parametrize("shapes", BROADCAST, ids=str)
@pytest.mark.parametrize("name", ["add", "mul", "div", "pow", "maximum"])
def test_binary_broadcast(name, shapes):
    fn, a, b = BINARY[name]
    sa, sb = shapes
    check(fn, np.resize(a, sa).astype(np.float32), np.resize(b, sb).astype(np.float32))


SCALAR = {  # name: fn(lib, x) with a Python scalar on either side
    "x+2.5": lambda m, x: x + 2.5, "2.5+x": lambda m, x: 2.5 + x, "x+2": lambda m, x: x + 2,
    "x-2.5": lambda m, x: x - 2.5, "2-x": lambda m, x: 2 - x, "x*2.0": lambda m, x: x * 2.0,
    "2*x": lambda m, x: 2 * x, "x/2": lambda m, x: x / 2, "2.5/x": lambda m, x: 2.5 / x,
    "x**2": lambda m, x: x ** 2, "x**-1.5": lambda m, x: x ** -1.5, "2**x": lambda m, x: 2 ** x,
    "2.5**x": lambda m, x: 2.5 ** x, "x%1.5": lambda m, x: x % 1.5, "fmod1.5": lambda m, x: m.fmod(x, 1.5),
    "x//0.7": lambda m, x: m.div(x, 0.7, rounding_mode="floor"), "max": lambda m, x: m.maximum(x, m.tensor(0.5)),
    "rsub": lambda m, x: m.rsub(x, 2, alpha=2), "x+1j": lambda m, x: x + 1j,
    "np.float64": lambda m, x: x * np.float64(3.0), "np.int64": lambda m, x: x + np.int64(3),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(SCALAR))
def test_scalar_operand(name, dtype):
    check(SCALAR[name], POS.astype(dtype))


def test_scalar_operand_0d():
    for name in ["x*2.0", "2-x", "2.5/x", "x**2", "2**x", "x+2"]:
        check(SCALAR[name], np.float32(1.5))
        check(SCALAR[name], np.float64(0.5))


def test_node_structure_of_reversed_operators():
    x = tl.tensor(POS.astype(np.float32), requires_grad=True)
    y = x * 2.0
    assert y.grad_fn.name() == "MulBackward0"
    (n0, i0), (n1, i1) = y.grad_fn.next_functions
    assert n0.name() == "torch::autograd::AccumulateGrad" and n0.variable is x and (i0, n1, i1) == (0, None, 0)
    other = y.grad_fn._saved_other
    assert other.dtype == tl.float64 and other.ndim == 0 and other.item() == 2 and y.grad_fn._saved_self is None
    y = 1 - x
    assert y.grad_fn.name() == "RsubBackward1" and len(y.grad_fn.next_functions) == 1
    y = 2 / x
    assert y.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.next_functions[0][0].name() == "ReciprocalBackward0" and y.grad_fn._saved_other.dtype == tl.int64
    y = 2 ** x
    assert y.grad_fn.name() == "PowBackward2" and y.grad_fn._saved_self == 2 and type(y.grad_fn._saved_self) is int
    assert (x ** 0.5).grad_fn._saved_exponent == 0.5


def test_mixed_dtype_gradients():
    """Results promote; each input's gradient comes back in the input's own dtype and shape."""
    check(lambda m, a, b: a * b + a, A.astype(np.float32), B.astype(np.float64))
    check(lambda m, a, b: a * b - b, A.astype(np.float32), np.float64(1.5))
    check(lambda m, a, b: a / b, A.astype(np.float64), np.float32(1.5))
    check(lambda m, a, b: m.maximum(a, b), A.astype(np.float32), ROW.astype(np.float64))
    check(lambda m, a, b: a * b, A.astype(np.float32), np.arange(4, dtype=np.int64))


def test_floor_divide_not_differentiable():
    x, t = tl.tensor(A * 5, requires_grad=True), torch.tensor(A * 5, requires_grad=True)
    w, tw = tl.tensor(NONZERO), torch.tensor(NONZERO)
    for f in (lambda a, b: a // b, lambda a, b: b // a, lambda a, b: 2 // a, lambda a, b: a // 2,
              lambda a, b: 2 % a):
        r, rt = f(x, w), f(t, tw)
        assert_same(r, rt)
        compare_graph(r.grad_fn, rt.grad_fn)
    r, rt = x // x, t // t
    compare_graph(r.grad_fn, rt.grad_fn)
    with pytest.raises(RuntimeError) as e:
        torch.autograd.backward(rt, torch.ones_like(rt))
    with pytest.raises(RuntimeError, match=str(e.value)):
        r.backward(tl.ones_like(r))


# ----- three-operand ops ------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
def test_lerp_addcmul_addcdiv(dtype):
    a, b, c = A.astype(dtype), B.astype(dtype), POS.astype(dtype)
    check(lambda m, x, y: x.lerp(y, 0.3), a, b)
    check(lambda m, x, y: m.lerp(x, y, 0.7), a, b)
    check(lambda m, x, y, w: m.lerp(x, y, w), a, b, UNIT.astype(dtype))
    check(lambda m, x, y, z: m.addcmul(x, y, z, value=2), a, b, c)
    check(lambda m, x, y, z: x.addcmul(y, z), a, ROW.astype(dtype), COL.astype(dtype))
    check(lambda m, x, y, z: m.addcdiv(x, y, z, value=-0.5), a, b, c)
    check(lambda m, x, y, z: x.addcdiv(y, z), a, b, c)


def test_lerp_addcmul_partial_grads_and_inplace():
    a, b, c = A.astype(np.float64), B.astype(np.float64), POS.astype(np.float64)

    def partial(m, x, y, z):  # only some inputs require grad: torch saves less
        return m.addcmul(x, y.detach(), z) + m.addcdiv(x, y, z.detach()) + x.lerp(y.detach(), 0.25)
    check(partial, a, b, c)

    def inplace(m, x, y, z):
        u = x * 1
        u.lerp_(y, 0.4)
        u.addcmul_(y, z, value=0.5)
        u.addcdiv_(y, z, value=2)
        u.lerp_(z, y)
        return u
    check(inplace, a, b, c)


# ----- clamp, where -----------------------------------------------------------------------------------------
CLAMP = {
    "clamp": lambda m, x: x.clamp(-0.5, 0.5), "clamp_min": lambda m, x: m.clamp(x, min=0.0),
    "clamp_max": lambda m, x: m.clamp(x, max=0.2), "clamp_int_bounds": lambda m, x: m.clamp(x, -1, 1),
    "clip": lambda m, x: m.clip(x, -0.3, 0.4), "clamp_min_fn": lambda m, x: m.clamp_min(x, 0.1),
    "clamp_max_fn": lambda m, x: x.clamp_max(-0.1),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.__name__)
@pytest.mark.parametrize("name", list(CLAMP))
def test_clamp_scalar(name, dtype):
    check(CLAMP[name], A.astype(dtype))


def test_clamp_tensor_bounds():
    lo, hi = -np.abs(B) * 0.5, np.abs(UNIT)
    check(lambda m, x, a, b: m.clamp(x, a, b), A, lo, hi)
    check(lambda m, x, a, b: x.clamp(min=a) + x.clamp(max=b), A, lo, hi)
    check(lambda m, x, a: m.clamp_min(x, a) + m.clamp_max(x, a), A, lo)
    check(lambda m, x, a, b: m.clamp(x, a, b), A, hi, lo)  # min > max: the result is max, and max gets the grad
    check(lambda m, x, a, b: m.clamp(x, a, b), A, ROW * 0.2, np.float64(0.5))
    check(lambda m, x, a: m.clamp(x, min=a), A.astype(np.float32), np.float64(0.1))


def test_where():
    cond_tl, cond_th = tl.tensor(A > 0), torch.tensor(A > 0)
    check(lambda m, x, y: m.where(cond_tl if m is tl else cond_th, x, y), A, B)
    check(lambda m, x, y: m.where(cond_tl if m is tl else cond_th, x, y), A, ROW)
    check(lambda m, x: m.where(cond_tl if m is tl else cond_th, x, 0.5), A)
    check(lambda m, x: m.where(cond_tl if m is tl else cond_th, 1.0, x), A.astype(np.float32))
    check(lambda m, x: x.where(cond_tl if m is tl else cond_th, 2), A)
    check(lambda m, x, y: m.where(cond_tl[0] if m is tl else cond_th[0], x, y), A.astype(np.float32), B)


# ----- gradients at special points, as torch defines them -----------------------------------------------------
SPECIAL = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
SPECIAL_CASES = {
    "relu": lambda m, x: m.relu(x), "abs": lambda m, x: m.abs(x), "sqrt": lambda m, x: m.sqrt(m.abs(x)),
    "clamp": lambda m, x: m.clamp(x, -1, 1), "clamp_min": lambda m, x: m.clamp_min(x, 0.5),
    "clamp_max": lambda m, x: m.clamp_max(x, 0.5), "hardtanh": lambda m, x: F(m).hardtanh(x),
    "leaky_relu": lambda m, x: F(m).leaky_relu(x), "elu": lambda m, x: F(m).elu(x),
    "pow0": lambda m, x: x ** 0, "pow1": lambda m, x: x ** 1, "pow2": lambda m, x: x ** 2,
    "pow_half": lambda m, x: m.abs(x) ** 0.5, "zero_pow": lambda m, x: 0 ** x, "sign": lambda m, x: m.sign(x),
    "floor": lambda m, x: m.floor(x), "round": lambda m, x: m.round(x), "angle": lambda m, x: m.angle(x),
    "sgn": lambda m, x: m.sgn(x), "reciprocal": lambda m, x: m.reciprocal(x), "log": lambda m, x: m.log(m.abs(x)),
    "atan2": lambda m, x: m.atan2(x, m.zeros_like(x)), "hypot": lambda m, x: m.hypot(x, m.zeros_like(x)),
}


@pytest.mark.parametrize("name", list(SPECIAL_CASES))
def test_special_points(name):
    check(SPECIAL_CASES[name], SPECIAL, cotangent=np.ones(SPECIAL.shape))


def test_special_points_binary():
    x = np.array([0.0, 0.0, 1.0, 2.0, -1.0, 0.0, 3.0])
    e = np.array([0.0, 2.0, 0.0, 2.0, 2.0, -1.0, 3.0])
    check(lambda m, a, b: a ** b, x, e, cotangent=np.ones(7))  # 0 ** e, x ** 0
    check(lambda m, a, b: m.maximum(a, b), x, e, cotangent=np.ones(7))  # ties split the gradient
    check(lambda m, a, b: m.minimum(a, b), x, e, cotangent=np.ones(7))
    nan = np.array([np.nan, 1.0, 2.0])
    check(lambda m, a, b: m.maximum(a, b), nan, np.array([0.0, np.nan, 2.0]), cotangent=np.ones(3))
    check(lambda m, a, b: m.clamp(a, b, b), x, e, cotangent=np.ones(7))  # min == max
    check(lambda m, a, b: m.where(a > b, a, b), x, e, cotangent=np.ones(7))
    check(lambda m, a: m.clamp(a, 0.5), nan, cotangent=np.ones(3))


def test_integer_clamp_promotes():
    for f in (lambda m, i: m.clamp(i, 0.5), lambda m, i: m.clamp(i, 0, 2), lambda m, i: m.clamp_min(i, 1.5),
              lambda m, i: i.clamp(max=m.tensor([1.5, 2.5, 0.5])), lambda m, i: i.clamp_max(2)):
        assert_same(f(tl, tl.tensor([1, 2, 3])), f(torch, torch.tensor([1, 2, 3])))


# ----- _saved_* names: exactly torch's (no extra statics such as a _saved_dtype) ----------------------------
def _nll(m, x):
    return m.nn.functional.nll_loss(m.log_softmax(x, 1), m.tensor([0, 3, 1]))


SAVED_NAMES = {  # torch's node: fn(lib, x, y) whose grad_fn is that node
    "MulBackward0": lambda m, x, y: x * y, "AddBackward0": lambda m, x, y: x + y,
    "DivBackward0": lambda m, x, y: x / y, "PowBackward0": lambda m, x, y: x ** 2,
    "PowBackward1": lambda m, x, y: x ** y, "PowBackward2": lambda m, x, y: 2 ** y,
    "ExpBackward0": lambda m, x, y: m.exp(x), "SinBackward0": lambda m, x, y: m.sin(x),
    "ClampBackward1": lambda m, x, y: m.clamp(x, 0.7, 1.5), "WhereBackward0": lambda m, x, y: m.where(x > y, x, y),
    "SumBackward0": lambda m, x, y: x.sum(), "SumBackward1": lambda m, x, y: x.sum(-1),
    "MeanBackward1": lambda m, x, y: x.mean((0, -1), keepdim=True), "ViewBackward0": lambda m, x, y: x.view(4, 3),
    "TransposeBackward0": lambda m, x, y: x.transpose(0, -1),
    "AddmmBackward0": lambda m, x, y: m.addmm(x[0, :3], x, y.t(), beta=0.5),
    "NllLossBackward0": lambda m, x, y: _nll(m, x), "LogSoftmaxBackward0": lambda m, x, y: m.log_softmax(x, -1),
}


@pytest.mark.parametrize("name", SAVED_NAMES)
def test_saved_attribute_names(name):
    out_tl, out_th = (SAVED_NAMES[name](m, _tensor(m, POS, True), _tensor(m, NONZERO, True)) for m in (tl, torch))
    node_tl, node_th = out_tl.grad_fn, out_th.grad_fn
    assert node_tl.name() == node_th.name() == name
    assert saved_names(node_tl) == saved_names(node_th)
    assert "_saved_dtype" not in saved_names(node_tl)
    for attr in saved_names(node_th):  # the non-tensor ones (dims, sizes, scalars) also have torch's values
        expected = getattr(node_th, attr)
        if not isinstance(expected, torch.Tensor):
            assert getattr(node_tl, attr) == expected, attr


DOUBLE = {  # second derivatives through create_graph=True: each formula is differentiated again
    "pow": lambda m, x: x ** 3 + 2 ** x + x ** x, "div": lambda m, x: 1 / x + x / (x + 1),
    "sigmoid_tanh": lambda m, x: m.sigmoid(x) * m.tanh(x), "atan2": lambda m, x: m.atan2(x, x * x),
    "logsigmoid": lambda m, x: F(m).logsigmoid(x) + F(m).softplus(x) + F(m).gelu(x, approximate="tanh"),
    "maximum_clamp": lambda m, x: m.maximum(x, 1 - x) * m.clamp(x, 0.7, 1.5) * x,
    "lerp_addcdiv": lambda m, x: m.lerp(x, x * x, x) + m.addcdiv(x, x, x * x, value=0.3),
    "complex": lambda m, x: m.abs(m.exp(x * (1 + 2j)) * x) + m.angle(x * (1 - 1j)) * x,
}


@pytest.mark.parametrize("name", list(DOUBLE))
def test_double_backward(name):
    results = []
    for m in (tl, torch):
        x = m.tensor(POS, requires_grad=True)
        g, = m.autograd.grad(DOUBLE[name](m, x).sum(), x, create_graph=True)
        g2, = m.autograd.grad((g * g * g).sum(), x)
        results.append(g2)
    assert_same(results[0], results[1], 1e-9, 1e-12)


# ----- in-place binary ops -----------------------------------------------------------------------------------
INPLACE_BINARY = {
    "add_": lambda y, w: y.add_(w), "add_alpha": lambda y, w: y.add_(w, alpha=2), "iadd": lambda y, w: y.__iadd__(w),
    "sub_": lambda y, w: y.sub_(w, alpha=3), "isub_scalar": lambda y, w: y.__isub__(1.5),
    "mul_": lambda y, w: y.mul_(w), "mul_scalar": lambda y, w: y.mul_(2), "div_": lambda y, w: y.div_(w),
    "div_scalar": lambda y, w: y.div_(2), "div_floor": lambda y, w: y.div_(w, rounding_mode="floor"),
    "pow_": lambda y, w: y.pow_(w), "pow_scalar": lambda y, w: y.pow_(2), "ipow": lambda y, w: y.__ipow__(0.5),
    "clamp_": lambda y, w: y.clamp_(-0.5, 1.5), "clamp_tensor": lambda y, w: y.clamp_(max=w),
    "clamp_min_": lambda y, w: y.clamp_min_(0.7), "clamp_max_": lambda y, w: y.clamp_max_(w),
    "atan2_": lambda y, w: y.atan2_(w), "fmod_": lambda y, w: y.fmod_(0.3), "remainder_": lambda y, w: y.remainder_(w),
    "imul_row": lambda y, w: y.__imul__(w[0]), "itruediv": lambda y, w: y.__itruediv__(w),
}


@pytest.mark.parametrize("name", list(INPLACE_BINARY))
def test_inplace_binary(name):
    op = INPLACE_BINARY[name]

    def fn(m, x, w):
        y = x * 1
        v = y._version
        assert op(y, w) is y and y._version == v + 1
        return y
    check(fn, POS.astype(np.float64), NONZERO.astype(np.float64) if "div" in name else POS.astype(np.float64))


def test_inplace_chain_gradients():
    def fn(m, x, w):
        y = x * 1
        y.add_(w)
        y.mul_(2)
        y.clamp_(max=2.0)
        y *= w
        y -= 1
        y.sin_()
        y.exp_()  # saves its result: the last in-place op on y
        return y * x
    check(fn, A, B)


def test_inplace_graph_rebase():
    x, w = tl.tensor(A, requires_grad=True), tl.tensor(B, requires_grad=True)
    y = x * 1
    old = y.grad_fn
    y.add_(1)
    assert y.grad_fn.name() == "AddBackward0" and y.grad_fn.next_functions == ((old, 0), (None, 0))
    assert not y.is_leaf and y.requires_grad
    z = tl.tensor(A)  # does not require grad: an in-place op with an input that does makes it require grad
    z.add_(w)
    assert z.requires_grad and z.grad_fn.name() == "AddBackward0"
    assert z.grad_fn.next_functions[0] == (None, 0) and z.grad_fn.next_functions[1][0].variable is w
    with tl.no_grad():  # under no_grad: no history, but the version still counts
        z2 = x * 1
        v = z2._version
        z2.mul_(w)
    assert z2.grad_fn is None and not z2.requires_grad and z2._version == v + 1


def test_inplace_leaf_errors():
    msg = "a leaf Variable that requires grad is being used in an in-place operation."
    for lib in (tl, torch):
        x = lib.tensor(A, requires_grad=True)
        for f in (lambda: x.add_(1), lambda: x.mul_(x), lambda: x.exp_(), lambda: x.clamp_(0, 1),
                  lambda: x.relu_(), lambda: x.__iadd__(1), lambda: x.pow_(2), lambda: x.sigmoid_(),
                  lambda: x.lerp_(x, 0.5), lambda: x.addcmul_(x, x)):
            with pytest.raises(RuntimeError, match=msg):
                f()
        assert x._version == 0
        with lib.no_grad():
            x.add_(1)
            x.mul_(2)
        assert x._version == 2 and x.is_leaf and x.requires_grad and x.grad_fn is None
        np.testing.assert_allclose(x.detach().numpy(), (A + 1) * 2)


def test_inplace_dtype_errors():
    cases = [lambda t, lib: t.add_(1.5), lambda t, lib: t.div_(2), lambda t, lib: t.exp_(), lambda t, lib: t.sigmoid_(),
             lambda t, lib: t.mul_(lib.ones(3)), lambda t, lib: t.pow_(0.5), lambda t, lib: t.sqrt_(),
             lambda t, lib: t.__iadd__(0.5), lambda t, lib: t.__itruediv__(t), lambda t, lib: t.clamp_(0.5),
             lambda t, lib: t.sub_(lib.ones(3, dtype=lib.float64)), lambda t, lib: t.add_(1, alpha=1.5),
             lambda t, lib: t.atan2_(t), lambda t, lib: t.mul_(1j)]
    for f in cases:
        with pytest.raises(RuntimeError) as e:
            f(torch.tensor([1, 2, 3]), torch)
        t = tl.tensor([1, 2, 3])
        with pytest.raises(RuntimeError) as e2:
            f(t, tl)
        assert str(e2.value) == str(e.value)
        assert t._version == 0 and t.tolist() == [1, 2, 3]
    for lib in (tl, torch):  # allowed: integer results, and a float tensor with an int operand
        t = lib.tensor([1, 2, 3])
        t.add_(2)
        t.mul_(lib.tensor([1, 2, 3], dtype=lib.int32))
        t.div_(2, rounding_mode="floor")
        t += True
        t.clamp_(2, 4)
        f = lib.tensor([1.0, 2.0]).float()
        f.mul_(lib.tensor([3, 4]))
        f.add_(lib.tensor([0.5, 0.5], dtype=lib.float64))
        assert t.tolist() == [2, 4, 4] and t.dtype == lib.int64 and f.tolist() == [3.5, 8.5]
        assert f.dtype == lib.float32


def test_inplace_broadcast_error():
    for lib in (tl, torch):
        y = lib.tensor(ROW)
        with pytest.raises(RuntimeError, match=r"output with shape \[4\] doesn't match the broadcast shape \[3, 4\]"):
            y.add_(lib.tensor(A))
        with pytest.raises(RuntimeError, match="The size of tensor a"):
            lib.tensor(A) + lib.tensor(np.ones(3))
        y.add_(lib.tensor(COL[0]))  # (4,) += (1,) is fine


def test_inplace_modified_saved_tensor():
    msgs = []
    for lib in (tl, torch):
        x = lib.tensor(A, requires_grad=True)
        y = x * 1
        z = y.sin()
        y.add_(1)
        with pytest.raises(RuntimeError) as e:
            z.backward(lib.ones_like(z))
        msgs.append(str(e.value))
        y2 = x * 1
        z2 = y2.exp()  # saves its result
        z2.add_(1)
        with pytest.raises(RuntimeError) as e:
            z2.backward(lib.ones_like(z2))
        msgs.append(str(e.value))
    assert msgs[:2] == msgs[2:]


def test_out_argument():
    for lib in (tl, torch):
        out = lib.zeros(3, 4, dtype=lib.float64)
        r = lib.add(lib.tensor(A), lib.tensor(B), out=out)
        assert r is out and out._version == 1
        np.testing.assert_allclose(out.numpy(), A + B)
        lib.mul(lib.tensor(A), 2, out=out)
        np.testing.assert_allclose(out.numpy(), A * 2)
        with pytest.raises(RuntimeError, match="out=... arguments don't support automatic differentiation"):
            lib.mul(lib.tensor(A, requires_grad=True), 2, out=out)


# ----- complex -----------------------------------------------------------------------------------------------
Z = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
W = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)
COMPLEX = {
    "mul": lambda m, z, w: z * w, "add": lambda m, z, w: z + w * 2, "exp": lambda m, z, w: m.exp(z) * w,
    "abs": lambda m, z, w: m.abs(z) + m.abs(w), "div": lambda m, z, w: z / w, "conj": lambda m, z, w: m.conj(z) * w,
    "real_imag": lambda m, z, w: m.real(z) * m.imag(w) + z.real, "angle": lambda m, z, w: m.angle(z * w),
    "sgn": lambda m, z, w: m.sgn(z) * w, "sqrt": lambda m, z, w: m.sqrt(z), "sigmoid": lambda m, z, w: m.sigmoid(z),
    "pow": lambda m, z, w: z ** 2 + 2 ** w + z ** w, "scalar": lambda m, z, w: (1j * z - 2.5) / (z + 1j),
    "real_mixed": lambda m, z, w: z * m.tensor(A.astype(np.float32)), "tanh": lambda m, z, w: m.tanh(z) * m.log(w),
    "sinc": lambda m, z, w: m.sinc(z) * w,
}


@pytest.mark.parametrize("name", list(COMPLEX))
def test_complex(name):
    fn = COMPLEX[name]

    def loss_sq(m, z, w):
        y = fn(m, z, w)
        return (y * y.conj()).real.sum() if y.is_complex() else (y * y).sum()

    def loss_abs(m, z, w):
        return m.abs(fn(m, z, w)).sum()
    out_tl, out_th = check(fn, Z, W, grad=False)
    assert out_tl.requires_grad is False
    check(loss_sq, Z, W, tol=(1e-4, 1e-5))
    check(loss_abs, Z, W, tol=(1e-4, 1e-5))


def test_complex_real_imag_graph():
    check(lambda m, z: z.real, Z, cotangent=np.ones((3, 4)))
    check(lambda m, z: z.imag, Z, cotangent=np.ones((3, 4)))
    check(lambda m, z: m.conj(z), Z)
    x = tl.tensor(A)
    assert tl.real(x) is x and x.conj() is x and x.real is x
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-complex dtypes."):
        x.imag
    check(lambda m, x: m.angle(x) + m.real(x), np.array([-1.0, 0.0, 2.0]))


# ----- comparisons, logical ops, non-differentiable ops ------------------------------------------------------
CMP = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal"]


def test_comparisons():
    a = np.array([[1.0, 2.0, np.nan, 4.0], [0.0, -1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0]])
    xa, ta = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    row, trow = tl.tensor(np.array([1.0, 2.0, 2.0, 3.0], np.float32)), torch.tensor([1.0, 2.0, 2.0, 3.0])
    for name in CMP:
        for other_tl, other_th in ((row, trow), (2.0, 2.0), (1, 1), (tl.tensor(2), torch.tensor(2))):
            r = getattr(tl, name)(xa, other_tl)
            assert_same(r, getattr(torch, name)(ta, other_th))
            assert r.grad_fn is None and not r.requires_grad
            assert_same(getattr(xa, name)(other_tl), getattr(ta, name)(other_th))
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        assert_same(getattr(xa, op)(row), getattr(ta, op)(trow))
    assert_same(2.0 < xa, 2.0 < ta)
    assert_same(tl.tensor([1, 2, 3]) == tl.tensor([1.0, 2.5, 3.0]),
                torch.tensor([1, 2, 3]) == torch.tensor([1.0, 2.5, 3.0]))
    assert (xa == None) is False and (xa != None) is True  # noqa: E711
    y, ty = tl.tensor(a), torch.tensor(a)
    y.gt_(1.0)
    ty.gt_(1.0)
    assert_same(y, ty)
    assert y._version == 1


def test_logical_and_predicates():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, 1.5, -2.0])
    b = np.array([True, False, True, False, True, True])
    xa, ta, xb, tb = tl.tensor(a), torch.tensor(a), tl.tensor(b), torch.tensor(b)
    for name in ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "logical_not"]:
        assert_same(getattr(tl, name)(xa), getattr(torch, name)(ta))
        assert_same(getattr(xa, name)(), getattr(ta, name)())
    for name in ["logical_and", "logical_or", "logical_xor"]:
        assert_same(getattr(tl, name)(xa, xb), getattr(torch, name)(ta, tb))
    assert_same(~xb, ~tb)
    assert_same(xb & tl.tensor(~b), tb & torch.tensor(~b))
    assert_same(xb | tl.tensor(~b), tb | torch.tensor(~b))
    assert_same(xb ^ xb, tb ^ tb)
    i, ti = tl.tensor([5, 3, 12]), torch.tensor([5, 3, 12])
    for name in ["bitwise_and", "bitwise_or", "bitwise_xor"]:
        assert_same(getattr(tl, name)(i, tl.tensor([3, 3, 10])), getattr(torch, name)(ti, torch.tensor([3, 3, 10])))
    assert_same(~i, ~ti)
    assert tl.allclose(tl.tensor(a[3:]), tl.tensor(a[3:] + 1e-9)) and not tl.equal(tl.tensor(b), tl.tensor(~b))
    assert_same(tl.isclose(tl.tensor(A), tl.tensor(A + 1e-3)), torch.isclose(torch.tensor(A), torch.tensor(A + 1e-3)))


# ----- errors ------------------------------------------------------------------------------------------------
ERRORS = [
    lambda m: -m.tensor([True, False]),
    lambda m: m.tensor([True]) - m.tensor([True]),
    lambda m: 1 - m.tensor([True]),
    lambda m: m.tensor([True]) - 1,
    lambda m: m.tensor([1.0]) - m.tensor([True]),
    lambda m: m.add(m.tensor([1, 2]), 1, alpha=1.5),
    lambda m: m.where(m.ones(2), m.ones(2), m.zeros(2)),
    lambda m: m.clamp(m.ones(2)),
    lambda m: m.ones(3, 4) * m.ones(3),
    lambda m: m.imag(m.ones(2)),
    lambda m: m.addcdiv(m.ones(2), m.tensor([1, 2]), m.tensor([1, 2])),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors(k):
    with pytest.raises(RuntimeError) as expected:
        ERRORS[k](torch)
    with pytest.raises(RuntimeError) as actual:
        ERRORS[k](tl)
    assert str(actual.value) == str(expected.value)


def _whole_tensor_writes(T):
    """zero_/fill_/copy_ on non-leaves, leaves under no_grad, and the leaf error; graphs and gradients."""
    x = T.tensor([1., 2., 3.], requires_grad=True)
    s = T.tensor([4., 5., 6.], requires_grad=True)
    v = T.tensor(2., requires_grad=True)
    w = T.tensor([1., 2., 3.])
    out = []
    y = x * 2
    y.zero_()
    out.append((graph_with_nr(y), y._version))
    (y * x).sum().backward()
    out.append(x.grad.tolist())
    y = x * 2
    y.fill_(3.)
    out.append((graph_with_nr(y), y.tolist()))
    y = x * 2
    y.fill_(v)
    out.append(graph_with_nr(y))
    (y * w).sum().backward()
    out.append(v.grad.tolist())
    y = x * 2
    y.copy_(s)
    out.append((graph_with_nr(y), y.tolist()))
    (y * w).sum().backward()
    out.append(s.grad.tolist())
    z = T.zeros(3)
    b = T.ones(1, dtype=T.float64, requires_grad=True)
    z.copy_(b)  # broadcast and cast: src's gradient comes back summed, in float64
    out.append((graph_with_nr(z), str(z.dtype).split(".")[-1]))
    z.sum().backward()
    out.append((b.grad.tolist(), str(b.grad.dtype).split(".")[-1]))
    with pytest.raises(RuntimeError) as err:
        x.zero_()
    out.append(str(err.value))
    with T.no_grad():
        x.fill_(7.)
    out.append((x.tolist(), x._version))
    return out


def test_zero_fill_copy_match_torch():
    assert _whole_tensor_writes(tl) == _whole_tensor_writes(torch)


def test_copy_from_a_number_as_torch():
    """copy_ takes a Python or NumPy number (CopyBackwards; no gradient for self), and names a wrong argument 'other'."""
    check(lambda m, x: (x * 1).copy_(2.5) * x, A)
    for src in (1.5, 2, True, np.float32(0.25)):
        ours, theirs = tl.zeros(2, dtype=tl.float64), torch.zeros(2, dtype=torch.float64)
        assert_same(ours.copy_(src), theirs.copy_(src))
    for m in (tl, torch):
        with pytest.raises(TypeError, match=r"^copy_\(\): argument 'other' \(position 1\) must be Tensor, not str$"):
            m.zeros(2).copy_("a")


def test_integer_to_negative_integer_powers():
    """torch's integer pow: a negative exponent gives 0, except for bases 1 and -1 (XLA's would overflow)."""
    base, exponent = np.array([2, 3, -1, 1, -1, 0, 5]), np.array([-1, 2, -3, -5, -2, 3, -2])
    results = [[(m.tensor(base) ** m.tensor(exponent)).tolist(), (2 ** m.tensor(exponent)).tolist(),
                m.tensor(base).pow(m.tensor(exponent)).dtype == m.int64] for m in (tl, torch)]
    assert results[0] == results[1]
