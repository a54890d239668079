"""torchlike.utils.checkpoint against torch.utils.checkpoint on the same NumPy inputs: values, gradients (first
and second order), the recorded nodes, RNG replay, torch's errors and warnings; and the memory it saves."""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import error_of

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 3))


def _run(m, reentrant, order=1):
    x = m.tensor(X, requires_grad=True)
    w = m.tensor(W, requires_grad=True)

    def f(a, scale):
        return ((a @ w).sin() * scale).exp().tanh()
    y = m.utils.checkpoint.checkpoint(f, x, 2.0, use_reentrant=reentrant)
    names = [y.grad_fn.name()] + [n.name() for n, _ in y.grad_fn.next_functions if n is not None]
    if reentrant:
        (y ** 2).sum().backward()
        return names, y, x.grad, w.grad
    g = m.autograd.grad((y ** 2).sum(), (x, w), create_graph=order > 1)
    if order == 1:
        return names, y, *g
    return names, y, *m.autograd.grad(sum((t ** 2).sum() for t in g), (x, w))


@pytest.mark.parametrize("reentrant,order", [(False, 1), (False, 2), (True, 1)])
def test_against_torch(reentrant, order):
    expected, actual = _run(torch, reentrant, order), _run(tl, reentrant, order)
    assert actual[0] == expected[0]
    for a, b in zip(expected[1:], actual[1:]):
        np.testing.assert_allclose(np.asarray(b.detach()), a.detach().numpy(), rtol=1e-7, atol=1e-10)


def _dropout_grads(checkpointed, reentrant=False):
    tl.manual_seed(5)
    x = tl.tensor(X, requires_grad=True)

    def f(a):
        return tl.nn.functional.dropout(a.sin(), 0.5, training=True).exp()
    y = tl.utils.checkpoint.checkpoint(f, x, use_reentrant=reentrant) if checkpointed else f(x)
    y.sum().backward()
    return np.asarray(y.detach()), np.asarray(x.grad), np.asarray(tl.rand(2))


@pytest.mark.parametrize("reentrant", [False, True])
def test_rng_state_is_replayed(reentrant):
    """Recomputation draws the same dropout mask, and leaves the generator where the first run left it."""
    plain, ckpt = _dropout_grads(False), _dropout_grads(True, reentrant)
    for a, b in zip(plain, ckpt):
        np.testing.assert_array_equal(a, b)


def test_backward_twice_with_retain_graph_recomputes():
    x = tl.tensor(X, requires_grad=True)
    y = tl.utils.checkpoint.checkpoint(lambda a: a.sin().exp(), x, use_reentrant=False)
    g1, = tl.autograd.grad(y.sum(), x, retain_graph=True)
    g2, = tl.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(np.asarray(g1), np.asarray(g2))


def test_checkpoint_sequential():
    outs = []
    for m in (torch, tl):
        m.manual_seed(0)
        layers = [m.nn.Linear(3, 3).double() for _ in range(4)]
        for i, layer in enumerate(layers):
            with m.no_grad():
                layer.weight.copy_(m.tensor(W * (i + 1) / 4))
                layer.bias.fill_(0.1 * i)
        model = m.nn.Sequential(*[mod for layer in layers for mod in (layer, m.nn.Tanh())])
        x = m.tensor(X, requires_grad=True)
        y = m.utils.checkpoint.checkpoint_sequential(model, 3, x, use_reentrant=False)
        y.sum().backward()
        outs.append((y, x.grad, layers[0].weight.grad))
    for a, b in zip(*outs):
        np.testing.assert_allclose(np.asarray(b.detach()), a.detach().numpy(), rtol=1e-7)


ERRORS = {
    "grad_with_reentrant": lambda m: m.autograd.grad(
        m.utils.checkpoint.checkpoint(lambda a: a.sin(), m.ones(3, requires_grad=True), use_reentrant=True).sum(),
        m.ones(3)),
    "context_fn_with_reentrant": lambda m: m.utils.checkpoint.checkpoint(lambda a: a, m.ones(3), use_reentrant=True,
                                                                         debug=True),
    "bad_determinism_check": lambda m: m.utils.checkpoint.checkpoint(lambda a: a.sin(), m.ones(3), use_reentrant=False,
                                                                     determinism_check="x"),
}


def _recompute_differs(m):
    calls = [0]
    x = m.ones(3, requires_grad=True)

    def f(a):
        calls[0] += 1
        return (a if calls[0] == 1 else a.repeat(2)).sin().sum()
    m.utils.checkpoint.checkpoint(f, x, use_reentrant=False).backward()


ERRORS["recomputed_metadata_differs"] = _recompute_differs


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    if name == "grad_with_reentrant":  # (the grad's input must be in the graph for torch to get that far)
        x = {m: m.ones(3, requires_grad=True) for m in (torch, tl)}
        case = lambda m: m.autograd.grad(m.utils.checkpoint.checkpoint(  # noqa: E731
            lambda a: a.sin(), x[m], use_reentrant=True).sum(), x[m])
    else:
        case = ERRORS[name]
    expected, actual = error_of(lambda: case(torch)), error_of(lambda: case(tl))
    assert expected is not None
    assert actual[0] in (expected[0], "CheckpointError") and actual[1] == expected[1]


@pytest.mark.parametrize("call", ["default", "no_input_requires_grad"])
def test_warnings(call):
    msgs = []
    for m in (torch, tl):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            if call == "default":
                m.utils.checkpoint.checkpoint(lambda a: a.sin(), m.ones(3, requires_grad=True))
            else:
                m.utils.checkpoint.checkpoint(lambda a: a.sin(), m.ones(3), use_reentrant=True)
        msgs.append([str(x.message)[:120] for x in w])
    assert msgs[0] == msgs[1] and msgs[0]


def _live_bytes_after_forward(checkpointed, depth=12, width=256, batch=64):
    """Bytes of live JAX arrays after the forward of a deep tanh MLP (what backward will need), and the
    gradient of the first layer."""
    tl.manual_seed(0)
    model = tl.nn.Sequential(*[mod for _ in range(depth) for mod in (tl.nn.Linear(width, width), tl.nn.Tanh())])
    x = tl.ones(batch, width)
    base = sum(a.nbytes for a in jax.live_arrays())
    y = tl.utils.checkpoint.checkpoint_sequential(model, 4, x, use_reentrant=False) if checkpointed else model(x)
    held = sum(a.nbytes for a in jax.live_arrays()) - base
    y.sum().backward()
    return held, np.asarray(model[0].weight.grad)


def test_memory_is_saved():
    """4 checkpointed segments of a 12-layer MLP (the last runs normally) keep half its activations until
    backward (3 segment inputs and the last segment's 3 layers, against 12); the gradients are the same."""
    plain, ckpt = _live_bytes_after_forward(False), _live_bytes_after_forward(True)
    assert plain[0] >= 12 * 64 * 256 * 4 and ckpt[0] <= 0.51 * plain[0]
    np.testing.assert_allclose(ckpt[1], plain[1], rtol=1e-6)
