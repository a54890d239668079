"""interop torch bridges (torch_op, from_torch_op) and interop.testing.assert_grads_close.

Oracles: the same computation written directly in torch (values, first, second and third order gradients);
jax.grad through the JAX path. Misuse covered: unknown ``kind``; non-floating inputs to assert_grads_close;
a wrong custom backward is reported by assert_grads_close with the pair, input and element.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl
from interop._torch import from_torch_op, torch_op
from interop.testing import assert_grads_close

X = np.array([0.3, -1.2, 0.7])
W = np.array([[0.5, 1.0, -0.3], [0.2, 0.1, 0.9]])
G = np.array([1.0, 2.0])


def _np(t):
    return np.asarray(t.detach()._data) if isinstance(t, tl.Tensor) else t.detach().numpy()


def _close(got, want, rtol=1e-10, atol=1e-12):
    assert len(got) == len(want)
    for a, b in zip(got, want):
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def _f(T, x, w, scale):
    """Two outputs; T is torch, torchlike or jax.numpy."""
    return T.sin(T.tanh(w @ x) * x.sum()) * scale, T.exp(w)


def _torch_grads(op):
    """First, second and third order gradients through op (a function of torch tensors) under torch autograd."""
    x = torch.tensor(X, requires_grad=True)
    w = torch.tensor(W, requires_grad=True)
    a, b = op(x, w)
    loss = (a * torch.tensor(G)).sum() + (b * b).sum()
    gx, gw = torch.autograd.grad(loss, (x, w), create_graph=True)
    hx, hw = torch.autograd.grad((gx ** 2).sum() + gw.sum(), (x, w), create_graph=True)
    third = torch.autograd.grad(hx.sum(), (x, w), allow_unused=True, materialize_grads=True)
    return [a, b, gx, gw, hx, hw, *third]


REFERENCE = None


def _reference():
    global REFERENCE
    if REFERENCE is None:
        REFERENCE = _torch_grads(lambda x, w: _f(torch, x, w, 3.0))
    return REFERENCE


def test_torch_op_torchlike_function_double_and_triple_backward():
    op = torch_op(lambda x, w, scale: _f(tl, x, w, scale))
    assert op.kind == "torchlike"
    got = _torch_grads(lambda x, w: op(x, w, 3.0))
    _close(got, _reference())
    a, _ = op(torch.tensor(X, requires_grad=True), torch.tensor(W), 3.0)
    assert isinstance(a, torch.Tensor) and a.requires_grad
    assert type(a.grad_fn).__name__ == "TorchOpBackward"


def test_torch_op_jax_function_double_and_triple_backward():
    op = torch_op(lambda x, w, scale: _f(jnp, x, w, scale), kind="jax")
    got = _torch_grads(lambda x, w: op(x, w, 3.0))
    _close(got, _reference())
    # the JAX path also agrees with jax.grad directly
    x = torch.tensor(X, requires_grad=True)
    (gx,) = torch.autograd.grad(op(x, torch.tensor(W), 3.0)[0].sum(), x)
    want = jax.grad(lambda x: _f(jnp, x, jnp.asarray(W), 3.0)[0].sum())(jnp.asarray(X))
    np.testing.assert_allclose(gx.numpy(), np.asarray(want), rtol=1e-12)


def test_torch_op_kind_detection_single_output_and_no_grad():
    jitted = torch_op(jax.jit(lambda x: jnp.cos(x) * 2))
    assert jitted.kind == "jax"
    assert torch_op(lambda x: x.cos() * 2).kind == "torchlike"
    with pytest.raises(ValueError, match="kind must be"):
        torch_op(lambda x: x, kind="numpy")
    for op in (jitted, torch_op(kind="torchlike")(lambda x: x.cos() * 2)):
        x = torch.tensor(X, requires_grad=True)
        y = op(x)  # a single output stays a single tensor
        assert isinstance(y, torch.Tensor) and y.shape == (3,)
        (g,) = torch.autograd.grad(y.sum(), x)
        np.testing.assert_allclose(g.numpy(), -2 * np.sin(X), rtol=1e-12)
        with torch.no_grad():
            z = op(x)
        assert z.grad_fn is None and not z.requires_grad
        assert op(torch.tensor(X)).grad_fn is None


def test_torch_op_non_differentiable_inputs_and_outputs():
    def fn(x, idx):
        return x[idx] * 2, idx + 1

    op = torch_op(fn, kind="torchlike")
    x = torch.tensor(X, requires_grad=True)
    y, j = op(x, torch.tensor([2, 0]))
    assert j.dtype == torch.int64 and not j.requires_grad and j.tolist() == [3, 1]
    (g,) = torch.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(g.numpy(), [2.0, 0.0, 2.0])


def _from_torch_graph(lib, op):
    """A torchlike/torch graph with op in the middle (before and after other ops)."""
    x = lib.tensor(X, requires_grad=True)
    w = lib.tensor(W, requires_grad=True)
    a, b = op(x.exp(), w, 3.0)
    loss = (a.tanh() * lib.tensor(G)).sum() + (b * b).sum()
    gx, gw = lib.autograd.grad(loss, (x, w), create_graph=True)
    hx, hw = lib.autograd.grad((gx ** 2).sum() + (gw ** 2).sum(), (x, w))
    return [a, b, gx, gw, hx, hw]


def _torch_fn(x, w, scale):
    return torch.sin(w @ x) * scale, x.cumsum(0)


def test_from_torch_op_in_torchlike_graph_double_backward():
    op = from_torch_op(_torch_fn)
    got = _from_torch_graph(tl, op)
    _close(got, _from_torch_graph(torch, _torch_fn))
    a, b = op(tl.tensor(X, requires_grad=True), tl.tensor(W), 3.0)
    assert isinstance(a, tl.Tensor) and a.requires_grad and a.grad_fn.name() == "_torch_fnBackward"
    with tl.no_grad():
        a, _ = op(tl.tensor(X, requires_grad=True), tl.tensor(W), 3.0)
    assert a.grad_fn is None and not a.requires_grad


def test_from_torch_op_backward_accumulates_and_non_differentiable_output():
    op = from_torch_op(lambda x: (x.sort().values * 2, x.argmax()))
    x = tl.tensor(X, requires_grad=True)
    y, i = op(x)
    assert i.item() == 2 and not i.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(_np(x.grad), [2.0, 2.0, 2.0])


# ---- assert_grads_close ----

def test_assert_grads_close_passes():
    assert_grads_close(lambda T, x, w: _f(T, x, w, 3.0), X, W)
    assert_grads_close(lambda T, x: (x * x).sum() + x.exp().prod(), X)
    assert_grads_close(lambda T, x, w: T.nn.functional.softmax(w, dim=1) @ x.sin(), X, W)


class _WrongExp(tl.autograd.Function):
    """exp with a wrong gradient in element 2."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * tl.tensor([1.0, 1.0, 0.5])


def test_assert_grads_close_reports_the_disagreeing_pair():
    def fn(T, x, w):
        e = _WrongExp.apply(x) if T is tl else x.exp()
        return w @ e

    with pytest.raises(AssertionError) as info:
        assert_grads_close(fn, X, W)
    msg = str(info.value)
    assert msg.startswith("torchlike and torch gradients disagree for input 0: worst element (2,): torchlike="), msg
    values = [float(v) for v in re.findall(r"=(-?[\d.e+-]+)", msg)[:2]]
    assert np.isclose(values[0], 0.5 * values[1], rtol=1e-9), msg
    # gradients of the other input are right: a wrong backward only for w's path is reported for input 1
    with pytest.raises(AssertionError, match=r"for input 1: worst element \(0, 2\)"):
        assert_grads_close(lambda T, x, w: (_WrongExp.apply(w[0]) if T is tl else w[0].exp()) @ x, X, W)


def test_assert_grads_close_misuse():
    with pytest.raises(TypeError, match="not a floating-point array"):
        assert_grads_close(lambda T, x: x * 2, np.array([1, 2, 3]))


def test_assert_grads_close_jax_mode_traces_the_function():
    # the jax.grad column runs the torchlike function under as_jax (Tensors wrapping tracers)
    assert_grads_close(lambda T, x, w: T.tanh(w @ x), X, W)
    with pytest.raises(AssertionError, match=r"^torchlike and jax.grad gradients disagree for input 0"):
        # a function that differs only when traced: only the jax.grad mode sees the difference
        assert_grads_close(lambda T, x: x.exp() * (1.5 if isinstance(x._data, jax.core.Tracer) else 1.0)
                           if T is tl else x.exp(), X)


def test_bridged_outputs_modified_in_place_raise_at_backward_as_torch():
    """The bridges share memory with what the inner graph saved: an in-place change of an output (or input) before
    backward raises torch's version-counter error on either side, as torch.exp's own graph does."""
    msg = r"^one of the variables needed for gradient computation has been modified by an inplace operation"
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    for fn in (torch.exp, torch_op(tl.exp)):
        y = fn(x)
        y.mul_(2)
        with pytest.raises(RuntimeError, match=msg):
            y.sum().backward()
    a = tl.tensor([1.0, 2.0], requires_grad=True)
    for fn in (tl.exp, from_torch_op(torch.exp)):
        b = fn(a)
        b.mul_(2)
        with pytest.raises(RuntimeError, match=msg):
            b.sum().backward()
    z = x * 1  # an input modified after the call: the same error
    y = torch_op(tl.sin)(z)
    z.add_(1)
    with pytest.raises(RuntimeError, match=msg):
        y.sum().backward()


def test_torch_op_jax_traces_once_per_signature():
    traces = []

    def f(x, s):
        traces.append(1)
        return jnp.sin(x) * s

    op = torch_op(f, kind="jax")
    counts = []
    for _ in range(3):
        x = torch.tensor(X, requires_grad=True)
        (g,) = torch.autograd.grad(op(x, 2.0).sum(), x, create_graph=True)
        (h,) = torch.autograd.grad(g.sum(), x)
        np.testing.assert_allclose(h.numpy(), -2 * np.sin(X), rtol=1e-12)
        counts.append(len(traces))
    assert counts[0] == counts[1] == counts[2]


# ---- bfloat16 through both bridges (DLPack carries it; NumPy cannot) ----

def _bf16_fn(T, x, w):
    return T.sin(x) * w, T.exp(x) * 0.5


def _bf16_torch_grads(op, lib_x, lib_w, grad):
    """Outputs and first-order gradients of op in bfloat16; lib_* make the inputs, grad is lib's autograd.grad."""
    x, w = lib_x(X, requires_grad=True), lib_w(X[::-1].copy(), requires_grad=True)
    a, b = op(x, w)
    gx, gw = grad((a * 3.0).sum() + (b * b).sum(), (x, w))
    return [a, b, gx, gw]


def _bf16(lib):
    return lambda v, requires_grad: lib.tensor(v, dtype=lib.bfloat16, requires_grad=requires_grad)


def _close_bf16(got, want):
    for a, b in zip(got, want, strict=True):
        assert str(a.dtype).endswith("bfloat16") and str(b.dtype).endswith("bfloat16")
        np.testing.assert_allclose(_np(a.float()), _np(b.float()), rtol=2e-2, atol=1e-2)


@pytest.mark.parametrize("kind", ["torchlike", "jax"])
def test_torch_op_bfloat16_values_and_gradients(kind):
    lib = tl if kind == "torchlike" else jnp
    op = torch_op(lambda x, w: _bf16_fn(lib, x, w), kind=kind)
    got = _bf16_torch_grads(op, _bf16(torch), _bf16(torch), torch.autograd.grad)
    want = _bf16_torch_grads(lambda x, w: _bf16_fn(torch, x, w), _bf16(torch), _bf16(torch), torch.autograd.grad)
    _close_bf16(got, want)


def test_from_torch_op_bfloat16_values_and_gradients():
    op = from_torch_op(lambda x, w: _bf16_fn(torch, x, w))
    got = _bf16_torch_grads(op, _bf16(tl), _bf16(tl), tl.autograd.grad)
    want = _bf16_torch_grads(lambda x, w: _bf16_fn(torch, x, w), _bf16(torch), _bf16(torch), torch.autograd.grad)
    _close_bf16(got, want)


def test_from_torch_op_bfloat16_backward_accumulates_into_grad():
    x = tl.tensor(X, dtype=tl.bfloat16, requires_grad=True)
    from_torch_op(lambda x: (x * x).sum())(x).backward()
    xt = torch.tensor(X, dtype=torch.bfloat16, requires_grad=True)
    (xt * xt).sum().backward()
    assert x.grad.dtype == tl.bfloat16
    np.testing.assert_allclose(_np(x.grad.float()), xt.grad.float().numpy(), rtol=1e-2)


def test_torch_op_detects_a_plain_jax_function_from_what_it_returns():
    f = torch_op(lambda x: jnp.sin(x) * 2)  # neither jitted nor defined in a jax module
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    y = f(x)
    y.sum().backward()
    assert f.kind == "jax"
    np.testing.assert_allclose(x.grad.numpy(), (2 * torch.cos(x.detach())).numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match=r"must return torchlike Tensors \(or a tuple of them\), got builtins.int"):
        torch_op(lambda x: 3)(x)
    with pytest.raises(TypeError, match=r"returned JAX arrays: pass kind='jax' to torch_op"):
        torch_op(lambda x: jnp.sin(x), kind="torchlike")(x)


def test_bridged_functions_closing_over_modules_fill_their_parameters_grad():
    """A function that uses an nn.Module's parameters (not passed as arguments) gives them .grad as a plain
    backward would, on either side of a bridge, accumulating over calls."""
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    ref = torch.nn.Linear(3, 2)
    ref.load_state_dict(lin.state_dict())
    f = from_torch_op(lambda x: lin(x).tanh())
    x = tl.tensor(np.ones((4, 3), np.float32), requires_grad=True)
    xt = torch.ones(4, 3, requires_grad=True)
    for _ in range(2):
        f(x).sum().backward()
        ref(xt).tanh().sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad._data), xt.grad.numpy(), rtol=1e-6)
    for p, q in zip(lin.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6)
    tl.manual_seed(0)
    tlin = tl.nn.Linear(3, 2)
    weight = torch.tensor(np.asarray(tlin.weight._data), requires_grad=True)
    bias = torch.tensor(np.asarray(tlin.bias._data), requires_grad=True)
    z = torch.ones(4, 3, requires_grad=True)
    torch_op(lambda z: tlin(z).tanh())(z).sum().backward()
    torch.nn.functional.linear(torch.ones(4, 3), weight, bias).tanh().sum().backward()
    np.testing.assert_allclose(np.asarray(tlin.weight.grad._data), weight.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(tlin.bias.grad._data), bias.grad.numpy(), rtol=1e-6)
    # no argument requires grad: no gradient could reach the parameters, and the bridge says so
    with pytest.raises(RuntimeError, match=r"outputs require grad through tensors it closes over"):
        f(tl.tensor(np.ones((4, 3), np.float32)))
    with pytest.raises(RuntimeError, match=r"outputs require grad through tensors it closes over"):
        torch_op(lambda z: tlin(z))(torch.ones(4, 3))
