"""Cross-framework gradient checking.

    def f(T, x, w):
        return T.tanh(x @ w).sum(0), x.exp()

    assert_grads_close(f, np.random.rand(3, 4), np.random.rand(4, 2))

``f`` is written once against a torch-like module ``T`` and differentiated four ways: torchlike's tape
(``T=torchlike``), torch's autograd (``T=torch``), ``jax.grad`` of the torchlike function run on traced Tensors
(JAX's own autodiff of torchlike's forward ops) and central finite differences of the torchlike forward in
float64. The scalar loss is the sum of the outputs times fixed random weights.
"""
import jax
import numpy as np
import torch

import torchlike as tl

from ._jax import as_jax

__all__ = ["assert_grads_close"]

_METHODS = ("torchlike", "torch", "jax.grad", "finite differences")


def _outputs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _loss(T, fn, tensors, weights):
    outs = _outputs(fn(T, *tensors))
    total = 0
    for o, w in zip(outs, weights):
        total = total + (o * T.tensor(w)).sum()
    return total


def _torchlike_grads(fn, arrays, weights):
    xs = [tl.tensor(a, requires_grad=True) for a in arrays]
    loss = _loss(tl, fn, xs, weights)
    grads = tl.autograd.grad(loss, xs, allow_unused=True, materialize_grads=True)
    return [np.asarray(g.detach()._data) for g in grads]


def _torch_grads(fn, arrays, weights):
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    loss = _loss(torch, fn, xs, weights)
    grads = torch.autograd.grad(loss, xs, allow_unused=True, materialize_grads=True)
    return [g.detach().numpy() for g in grads]


def _jax_grads(fn, arrays, weights):
    loss = as_jax(lambda *xs: _loss(tl, fn, xs, weights))
    grads = jax.grad(loss, argnums=tuple(range(len(arrays))))(*[jax.numpy.asarray(a) for a in arrays])
    return [np.asarray(g) for g in grads]


def _fd_grads(fn, arrays, weights, eps=1e-6):

    def loss(values):
        with tl.no_grad():
            return float(_loss(tl, fn, [tl.tensor(v) for v in values], weights).item())

    grads = []
    for k, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            values = [v.copy() for v in arrays]
            values[k][idx] = a[idx] + eps
            up = loss(values)
            values[k][idx] = a[idx] - eps
            g[idx] = (up - loss(values)) / (2 * eps)
        grads.append(g)
    return grads


def _compare(name_a, ga, name_b, gb, rtol, atol):
    for k, (a, b) in enumerate(zip(ga, gb)):
        if a.shape != b.shape:
            raise AssertionError(f"{name_a} and {name_b} gradients differ in shape for input {k}: "
                                 f"{a.shape} vs {b.shape}")
        with np.errstate(invalid="ignore"):
            excess = np.abs(a - b) - (atol + rtol * np.abs(b))
        ok = (excess <= 0) | (a == b) | (np.isnan(a) & np.isnan(b))
        if not ok.all():
            excess = np.where(ok, -np.inf, np.where(np.isnan(excess), np.inf, excess))
            idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), a.shape))
            raise AssertionError(f"{name_a} and {name_b} gradients disagree for input {k}: worst element {idx}: "
                                 f"{name_a}={a[idx].item()!r}, {name_b}={b[idx].item()!r} (rtol={rtol}, atol={atol})")


def assert_grads_close(fn, *arrays, rtol=1e-6, atol=1e-8, fd_rtol=1e-5, fd_atol=1e-6, seed=0):
    """Check that torchlike, torch, ``jax.grad`` and finite differences agree on the gradients of ``fn``.

    ``fn(T, *tensors)`` returns a tensor or a tuple of tensors using only the API shared by ``T=torchlike`` and
    ``T=torch``; ``arrays`` are floating-point NumPy arrays (checked in float64). Gradients of
    ``sum_k (out_k * w_k).sum()`` (``w_k`` fixed random weights from ``seed``) are compared pairwise: torchlike vs
    torch, jax.grad and finite differences, then torch vs jax.grad, with ``rtol``/``atol`` (finite differences
    with the looser ``fd_rtol``/``fd_atol``). Raises AssertionError naming the two methods that disagree, the
    input index and the worst element (its index and both values).
    """
    for k, a in enumerate(arrays):
        if np.asarray(a).dtype.kind != "f":
            raise TypeError(f"assert_grads_close: input {k} is not a floating-point array")
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    with torch.no_grad():
        outs = _outputs(fn(torch, *[torch.tensor(a) for a in arrays]))
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(tuple(o.shape)) for o in outs]

    grads = {"torchlike": _torchlike_grads(fn, arrays, weights), "torch": _torch_grads(fn, arrays, weights),
             "jax.grad": _jax_grads(fn, arrays, weights), "finite differences": _fd_grads(fn, arrays, weights)}
    for a, b in (("torchlike", "torch"), ("torchlike", "jax.grad"), ("torch", "jax.grad")):
        _compare(a, grads[a], b, grads[b], rtol, atol)
    for a in ("torchlike", "torch", "jax.grad"):
        _compare(a, grads[a], "finite differences", grads["finite differences"], fd_rtol, fd_atol)
