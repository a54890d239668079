"""torchlike.func against torch.func and plain JAX, side by side in one process (issue 15).

    python benchmarks/bench_func.py            # prints first-call seconds, steady ms per call and ratios

Workloads: per-sample gradients ``vmap(grad(loss))`` of a small MLP (32-64-1, tanh, squared error) over a batch
of 1,000 through ``functional_call``; ``jacrev`` and ``hessian`` of ``sum(tanh(W @ x))`` at width 512. torchlike's
vmap runs each op once, batched (one cached program per op); "compiled" is ``torchlike.compile`` of the same
transformed function (one program); the JAX column is the same function under ``jax.jit`` (one program).
"""
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import torchlike as tl


def _time(fn, repeats=5, inner=3):
    t = time.perf_counter()
    fn()
    first = time.perf_counter() - t
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        best = min(best, (time.perf_counter() - t) / inner * 1e3)
    return first, best


def _ready(x):
    leaves = jax.tree_util.tree_leaves(x, is_leaf=lambda v: isinstance(v, tl.Tensor))
    for v in leaves:
        (v._data if isinstance(v, tl.Tensor) else v).block_until_ready() if not isinstance(v, torch.Tensor) else None
    return x


def per_sample_grads(batch=1000, d=32, h=64):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((batch, d)).astype(np.float32), rng.standard_normal((batch, 1)).astype(np.float32)
    w1, w2 = (rng.standard_normal((h, d)) / np.sqrt(d)).astype(np.float32), (rng.standard_normal((1, h)) / 8).astype(
        np.float32)
    fns = {}
    for m in (torch, tl):
        model = m.nn.Sequential(m.nn.Linear(d, h), m.nn.Tanh(), m.nn.Linear(h, 1))
        params = {"0.weight": m.tensor(w1), "0.bias": m.zeros(h), "2.weight": m.tensor(w2), "2.bias": m.zeros(1)}

        def loss(p, xi, yi, m=m, model=model):
            return ((m.func.functional_call(model, p, (xi.unsqueeze(0),)) - yi.unsqueeze(0)) ** 2).mean()
        psg = m.func.vmap(m.func.grad(loss), in_dims=(None, 0, 0))
        tx, ty = m.tensor(x), m.tensor(y)
        fns[m.__name__] = lambda psg=psg, params=params, tx=tx, ty=ty: _ready(psg(params, tx, ty))
        if m is tl:
            cpsg = tl.compile(psg)
            fns["compiled"] = lambda params=params, tx=tx, ty=ty: _ready(cpsg(params, tx, ty))

    def jloss(p, xi, yi):
        out = jnp.tanh(xi @ p["0.weight"].T + p["0.bias"]) @ p["2.weight"].T + p["2.bias"]
        return ((out - yi) ** 2).mean()
    jpsg = jax.jit(jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0)))
    jp = {"0.weight": jnp.asarray(w1), "0.bias": jnp.zeros(h, jnp.float32), "2.weight": jnp.asarray(w2),
          "2.bias": jnp.zeros(1, jnp.float32)}
    fns["jax.jit"] = lambda: jax.block_until_ready(jpsg(jp, jnp.asarray(x), jnp.asarray(y)))
    return fns


def jacobians(width=512, which="jacrev"):
    rng = np.random.default_rng(1)
    w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
    x = rng.standard_normal(width).astype(np.float32)
    fns = {}
    for m in (torch, tl):
        tw, tx = m.tensor(w), m.tensor(x)
        f = (lambda v, m=m, tw=tw: (tw @ v).tanh()) if which == "jacrev" else (lambda v, tw=tw: (tw @ v).tanh().sum())
        t = getattr(m.func, which)(f)
        fns[m.__name__] = lambda t=t, tx=tx: _ready(t(tx))
        if m is tl:
            ct = tl.compile(t)
            fns["compiled"] = lambda tx=tx: _ready(ct(tx))
    jw = jnp.asarray(w)
    jf = (lambda v: jnp.tanh(jw @ v)) if which == "jacrev" else (lambda v: jnp.tanh(jw @ v).sum())
    jt = jax.jit(jax.jacrev(jf) if which == "jacrev" else jax.hessian(jf))
    fns["jax.jit"] = lambda: jax.block_until_ready(jt(jnp.asarray(x)))
    return fns


def main():
    rows = [("vmap(grad) per-sample, batch 1000", per_sample_grads()), ("jacrev, width 512", jacobians(512, "jacrev")),
            ("hessian, width 512", jacobians(512, "hessian"))]
    print("| workload | torch.func first s | torchlike first s | compiled first s | torch.func ms | torchlike ms | "
          "compiled ms | jax.jit ms | torchlike / torch | compiled / torch | compiled / jax.jit |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, fns in rows:
        r = {k: _time(f) for k, f in fns.items()}
        print(f"| {name} | {r['torch'][0]:.2f} | {r['torchlike'][0]:.2f} | {r['compiled'][0]:.2f} | "
              f"{r['torch'][1]:.2f} | {r['torchlike'][1]:.2f} | {r['compiled'][1]:.2f} | {r['jax.jit'][1]:.2f} | "
              f"{r['torchlike'][1] / r['torch'][1]:.2f}x | {r['compiled'][1] / r['torch'][1]:.2f}x | "
              f"{r['compiled'][1] / r['jax.jit'][1]:.2f}x |")


if __name__ == "__main__":
    main()
