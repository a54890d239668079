"""A data-parallel and an FSDP training step on 8 simulated CPU devices: ``torchlike.compile`` of the step (one
SPMD program over the mesh) against ``jax.jit`` of the same sharded step written in JAX, and the eager step.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/bench_sharded.py [--steps N]

Prints, per regime, the median step time of each and the largest parameter difference after the same steps.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import interop  # noqa: E402
import torchlike as torch  # noqa: E402
from torchlike import nn  # noqa: E402
from torchlike.distributed.fsdp import fully_shard  # noqa: E402
from torchlike.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh  # noqa: E402

D, H, B, LR = 256, 1024, 512, 0.1


def mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, D))


def replicated(model, mesh):
    for sub in model.modules():
        for k, p in list(sub._parameters.items()):
            sub.register_parameter(k, nn.Parameter(distribute_tensor(p.detach(), mesh, [Replicate()])))
    return model


def torchlike_step(model):
    opt = torch.optim.SGD(model.parameters(), lr=LR)

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


def jax_loss(params, x, y):
    w1, b1, w2, b2 = params
    return jnp.mean(jnp.square(jax.nn.relu(x @ w1.T + b1) @ w2.T + b2 - y))


@jax.jit
def jax_step(params, x, y):
    loss, grads = jax.value_and_grad(jax_loss)(params, x, y)
    return [p - LR * g for p, g in zip(params, grads)], loss


def timed(fns, steps):
    """Median milliseconds per call of each function, the calls interleaved (a shared machine's load falls on all
    alike); the first call of each (its compile) is left out."""
    times = [[] for _ in fns]
    for _ in range(steps):
        for fn, t in zip(fns, times):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            t.append(time.perf_counter() - start)
    return [float(np.median(t[1:])) * 1e3 for t in times]


def regime(name, model, x, y, steps):
    params = [interop.to_jax(p) for p in model.parameters()]  # the same arrays, laid out as the model's
    start = [np.asarray(p) for p in params]
    state = {"p": params}

    def run_jax():
        state["p"], loss = jax_step(state["p"], x._data, y._data)
        return loss
    compiled = torch.compile(torchlike_step(model))
    t_jax, t_compiled = timed([run_jax, lambda: compiled(x, y)._data], steps)
    diff = max(float(jnp.abs(p._data - q).max()) for p, q in zip(model.parameters(), state["p"]))
    moved = min(float(np.abs(np.asarray(q) - s).max()) for q, s in zip(state["p"], start))
    assert moved > 0 and all(p._data.sharding.is_equivalent_to(q.sharding, q.ndim)  # (same layouts)
                             for p, q in zip(model.parameters(), state["p"]))
    print(f"{name:14s} torchlike.compile {t_compiled:7.2f} ms   jax.jit {t_jax:7.2f} ms   ratio "
          f"{t_compiled / t_jax:5.2f}   param diff {diff:.1e} (moved {moved:.1e})   programs {compiled.compiles} "
          f"(eager {sum(p.eager for p in compiled.programs)})   "
          f"{[str(p._data.sharding.spec) for p in model.parameters()][:2]}")
    return diff


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    steps = parser.parse_args().steps
    mesh = init_device_mesh("cpu", (8,))
    torch.manual_seed(1)
    x, y = torch.randn(B, D), torch.randn(B, D)
    xs, ys = distribute_tensor(x, mesh, [Shard(0)]), distribute_tensor(y, mesh, [Shard(0)])
    for name, make in (("data parallel", lambda: replicated(mlp(), mesh)),
                       ("fsdp", lambda: fully_shard(mlp(), mesh=mesh))):
        step = torchlike_step(make())
        (t_eager,) = timed([lambda: step(xs, ys)._data], steps)
        print(f"{name:14s} eager             {t_eager:7.2f} ms")
        regime(name, make(), xs, ys, steps)


if __name__ == "__main__":
    main()
