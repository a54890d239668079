"""The compiled small-MLP step against ``jax.jit`` steps that do the same work as torch's step (issue 16's 1.05x).

    python benchmarks/bench_same_work.py [--rounds 25]

torch's training step leaves each parameter's ``.grad`` readable after ``optimizer.step()`` and raises IndexError for
a class index out of range in ``cross_entropy``; the suite's ``jax.jit`` step (``value_and_grad`` and an optax update)
does neither. This script times, paired in one process, the suite's ``jax.jit`` step, the same step also returning
the gradients, and that step also checking the targets (a status read after each call, and the donated state kept
unchanged by a failed check, as ``torchlike.compile`` does), next to ``torchlike.compile`` of the torch-style step.
"""
import argparse
import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax

import bench_core
import bench_suite


def _jax_steps(params, x, y):
    """The three ``jax.jit`` steps (state donated): plain, keeping the gradients, and checking the targets too (the
    suite's optimizer and loss)."""
    name, kw = bench_suite._SGD
    tx = bench_suite._OPTAX[name](**kw)

    def loss(p):
        h = x
        for i in range(3):
            h = h @ p[f"{2 * i}.weight"].T + p[f"{2 * i}.bias"]
            h = jax.nn.relu(h) if i < 2 else h
        return bench_suite._LOSSES["cross_entropy"](h, y)

    def update(state):
        p, o = state[:2]
        value, g = jax.value_and_grad(loss)(p)
        u, o = tx.update(g, o, p)
        return optax.apply_updates(p, u), o, g, value

    def plain(state):
        p, o, _, value = update(state)
        return (p, o), value

    def grads(state):
        p, o, g, value = update(state)
        return (p, o, g), value

    def checked(state):
        p, o, g, value = update(state)
        bad = jnp.any((y < 0) | (y >= 10))
        keep = lambda old, new: jnp.where(bad, old, new)  # noqa: E731
        return (jax.tree.map(keep, state[0], p), jax.tree.map(keep, state[1], o), g), (value, bad)

    def make(fn, with_grads):
        p = jax.tree.map(jnp.array, params)
        state = [(p, tx.init(p)) + ((jax.tree.map(jnp.zeros_like, p),) if with_grads else ())]
        jitted = jax.jit(fn, donate_argnums=0)

        def call():
            state[0], value = jitted(state[0])
            if isinstance(value, tuple):
                np.asarray(value[1])  # (the check's status, read on the host as torchlike.compile reads it)
            jax.block_until_ready(state[0])
        return call
    return {"jax.jit": make(plain, False), "jax.jit + .grad kept": make(grads, True),
            "jax.jit + .grad kept + target check": make(checked, True)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=25)
    args = parser.parse_args(argv)
    import torch
    _, steps = bench_suite.WORKLOADS["small_mlp"][1]()
    torch.manual_seed(0)  # (bench_suite's models start from torch's initialisation with seed 0)
    net = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128), torch.nn.ReLU(),
                              torch.nn.Linear(128, 10))
    params = {k: jnp.asarray(v.detach().numpy()) for k, v in net.state_dict().items()}
    rng = np.random.RandomState(0)
    x, y = jnp.asarray(rng.randn(32, 784).astype(np.float32)), jnp.asarray(rng.randint(0, 10, 32))
    fns = {"torchlike compiled": steps["torchlike compiled"](), **_jax_steps(params, x, y)}
    for f in fns.values():
        for _ in range(10):
            f()
    times = {k: np.array(v) for k, v in bench_core._rounds(fns, args.rounds, 50).items()}
    print(f"small MLP step (32x784-128-128-10, SGD), {args.rounds} interleaved rounds of 50 calls; medians of the "
          f"per-round ratios")
    print("| step | ms | / jax.jit | torchlike compiled / this |")
    print("|---|---:|---:|---:|")
    for k, v in times.items():
        print(f"| {k} | {np.median(v):.3f} | {np.median(v / times['jax.jit']):.2f}x | "
              f"{np.median(times['torchlike compiled'] / v):.2f}x |")


if __name__ == "__main__":
    sys.exit(main())
