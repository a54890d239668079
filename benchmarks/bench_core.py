"""Side-by-side speed of one training step: torchlike eager vs torch eager vs jax.jit(value_and_grad).

    python benchmarks/bench_core.py            # both workloads, prints ms per step and ratios

Workloads (issue 2): a small MLP step (batch 32, 784-128-128-10, relu, log_softmax + nll_loss, forward +
backward) and a 1,000-op chain ``y = sin(y) * 1.0001`` on float32[1024] (forward + backward of its sum).
All three run in one process, interleaved, and the best of N repeats is reported, so the ratios are paired.
"""
import argparse
import random
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import torchlike as tl
import torchlike.nn.functional as TF


def _rounds(fns, repeats, inner):
    """Per-round ms per call of each fn: after one warm-up call each, `repeats` interleaved rounds of `inner` calls
    (an int, or a dict giving each fn its own count). Each round runs the fns in a new (seeded) random order: what
    runs right after torch pays for its OpenMP threads, which spin on after their work on this 2-core machine (a
    lazy MLP step measured 1.39x torch in that place, 1.06-1.12x elsewhere)."""
    for f in fns.values():
        f()
    times = {k: [] for k in fns}
    order = list(fns.items())
    shuffle = random.Random(0).shuffle
    for _ in range(repeats):
        shuffle(order)
        for k, f in order:
            n = inner[k] if isinstance(inner, dict) else inner
            t = time.perf_counter()
            for _ in range(n):
                f()
            times[k].append((time.perf_counter() - t) / n * 1e3)
    return times


def _best(fns, repeats, inner):
    """Best-of-`repeats` time of `inner` calls of each fn (interleaved), in ms per call."""
    return {k: min(v) for k, v in _rounds(fns, repeats, inner).items()}


def mlp_data():
    """The MLP's weights and biases, inputs and labels (NumPy)."""
    rng = np.random.RandomState(0)
    sizes = [784, 128, 128, 10]
    ws = [(rng.randn(o, i) / np.sqrt(i)).astype(np.float32) for i, o in zip(sizes[:-1], sizes[1:])]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    x = rng.randn(32, 784).astype(np.float32)
    y = rng.randint(0, 10, size=32).astype(np.int64)
    return ws, bs, x, y


def mlp_loss(F, params, x, y):
    """The MLP's loss in torch or torchlike (``F``: its ``nn.functional``): linear layers with relu between them,
    then log_softmax and nll_loss."""
    h = x
    for i in range(3):
        h = F.linear(h, params[2 * i], params[2 * i + 1])
        if i < 2:
            h = F.relu(h)
    return F.nll_loss(F.log_softmax(h, dim=1), y)


def mlp_workload():
    ws, bs, x, y = mlp_data()

    tl_params = [tl.tensor(a, requires_grad=True) for pair in zip(ws, bs) for a in pair]
    tl_x, tl_y = tl.tensor(x), tl.tensor(y)

    def step_torchlike():
        loss = mlp_loss(TF, tl_params, tl_x, tl_y)
        for p in tl_params:
            p.grad = None
        loss.backward()
        return tl_params[0].grad._data.block_until_ready()

    t_params = [torch.tensor(a, requires_grad=True) for pair in zip(ws, bs) for a in pair]
    t_x, t_y = torch.tensor(x), torch.tensor(y)

    def step_torch():
        loss = mlp_loss(torch.nn.functional, t_params, t_x, t_y)
        for p in t_params:
            p.grad = None
        loss.backward()
        return t_params[0].grad

    def loss_fn(params, x, y):
        h = x
        for i in range(3):
            h = h @ params[2 * i].T + params[2 * i + 1]
            if i < 2:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    j_step = jax.jit(jax.value_and_grad(loss_fn))
    j_params = [jnp.asarray(a) for pair in zip(ws, bs) for a in pair]
    j_x, j_y = jnp.asarray(x), jnp.asarray(y)

    def step_jax():
        return jax.block_until_ready(j_step(j_params, j_x, j_y))

    return {"torchlike": step_torchlike, "torch": step_torch, "jax.jit": step_jax}


def chain_workload(n_ops=1000):
    x0 = np.random.RandomState(0).randn(1024).astype(np.float32)
    tl_x = tl.tensor(x0, requires_grad=True)

    def step_torchlike():
        y = tl_x
        for _ in range(n_ops):
            y = y.sin() * 1.0001
        tl_x.grad = None
        y.sum().backward()
        return tl_x.grad._data.block_until_ready()

    t_x = torch.tensor(x0, requires_grad=True)

    def step_torch():
        y = t_x
        for _ in range(n_ops):
            y = y.sin() * 1.0001
        t_x.grad = None
        y.sum().backward()
        return t_x.grad

    def loss_fn(x):
        return jax.lax.fori_loop(0, n_ops, lambda i, y: jnp.sin(y) * jnp.float32(1.0001), x).sum()

    j_step = jax.jit(jax.value_and_grad(loss_fn))
    j_x = jnp.asarray(x0)

    def step_jax():
        return jax.block_until_ready(j_step(j_x))

    return {"torchlike": step_torchlike, "torch": step_torch, "jax.jit": step_jax}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    rows = [("small MLP step (32x784-128-128-10)", mlp_workload(), 20),
            ("1,000-op sin chain, float32[1024]", chain_workload(), 1)]
    print(f"{'workload':38s} {'torchlike':>10s} {'torch':>10s} {'jax.jit':>10s} {'tl/torch':>9s} {'tl/jit':>8s}")
    for name, fns, inner in rows:
        best = _best(fns, args.repeats, inner)
        print(f"{name:38s} {best['torchlike']:9.3f}ms {best['torch']:9.3f}ms {best['jax.jit']:9.3f}ms "
              f"{best['torchlike'] / best['torch']:8.2f}x {best['torchlike'] / best['jax.jit']:7.2f}x")


if __name__ == "__main__":
    main()
