"""interop costs, measured in one process: conversions per size, and the per-call overhead of the bridges
(jax_op, torch_op, from_torch_op) against calling the same computation directly.

    python benchmarks/bench_interop.py [--repeats 200]

Each figure is the best of ``repeats`` calls' medians over 5 rounds (this machine is noisy); times in us.
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import interop
import torchlike as tl


def _block(result):
    """Wait for JAX's asynchronous work (a conversion or step is done only when its array is ready)."""
    if isinstance(result, tl.Tensor):
        result = result._data
    if isinstance(result, jax.Array):
        result.block_until_ready()
    return result


def bench(fn, repeats):
    _block(fn())  # warm up (compiles)
    _block(fn())
    best = float("inf")
    for _ in range(5):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            _block(fn())
            times.append(time.perf_counter() - t0)
        best = min(best, statistics.median(times))
    return best * 1e6


def conversions(repeats):
    print("conversion (float32)            " + "".join(f"{n:>12,d}" for n in (1_000, 100_000, 10_000_000)))
    rows = {
        "torch -> torchlike (from_torch)": lambda n: (lambda t=torch.ones(n): interop.from_torch(t)),
        "torchlike -> torch (to_torch)": lambda n: (lambda t=tl.ones(n): interop.to_torch(t)),
        "torchlike -> jax (to_jax)": lambda n: (lambda t=tl.ones(n): interop.to_jax(t)),
        "numpy -> torchlike (from_numpy)": lambda n: (lambda a=np.ones(n, np.float32): interop.from_numpy(a)),
        "torchlike -> numpy (to_numpy)": lambda n: (lambda t=tl.ones(n): interop.to_numpy(t)),
    }
    for name, make in rows.items():
        print(f"{name:32s}" + "".join(f"{bench(make(n), repeats):10.1f}us" for n in (1_000, 100_000, 10_000_000)))


def bridges(repeats):
    x_np = np.linspace(-1, 1, 1024).astype(np.float32)

    def f_jax(a):
        return jnp.sin(a) * 2.0

    # jax_op: a JAX function as a torchlike op, forward + backward, against the same torchlike ops
    op = interop.jax_op(f_jax)
    xt = tl.tensor(x_np, requires_grad=True)

    def via_jax_op():
        op(xt).sum().backward()
        return xt.grad

    def direct_tl():
        (xt.sin() * 2.0).sum().backward()
        return xt.grad

    # torch_op: a torchlike function inside torch autograd, against torch doing it natively
    tfn = interop.torch_op(lambda a: a.sin() * 2.0, kind="torchlike")
    xp = torch.tensor(x_np, requires_grad=True)

    def via_torch_op():
        tfn(xp).sum().backward()

    def direct_torch():
        (xp.sin() * 2.0).sum().backward()

    # from_torch_op: a torch function inside torchlike autograd, against torchlike doing it natively
    ffn = interop.from_torch_op(lambda a: a.sin() * 2.0)

    def via_from_torch_op():
        ffn(xt).sum().backward()
        return xt.grad

    print()
    print("bridge (float32[1024], forward + backward)      bridge    direct   overhead")
    for name, a, b in (("jax_op vs torchlike ops", via_jax_op, direct_tl),
                       ("torch_op(torchlike fn) vs torch ops", via_torch_op, direct_torch),
                       ("from_torch_op(torch fn) vs torchlike ops", via_from_torch_op, direct_tl)):
        ta, tb = bench(a, repeats), bench(b, repeats)
        print(f"{name:44s}{ta:9.1f}us{tb:9.1f}us{ta - tb:+10.1f}us")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    print(f"jax {jax.__version__}, torch {torch.__version__}, {jax.devices()[0].platform}")
    conversions(args.repeats)
    bridges(args.repeats)


if __name__ == "__main__":
    main()
