"""Lazy mode (issue 18) side by side: torchlike lazy vs torchlike eager vs torch eager, paired in one process.

    python -m benchmarks.bench_lazy

Workloads: the 1,000-op chain ``y = sin(y) * 1.0001`` on float32[1024] (forward + backward of its sum), and a
small MLP training step (batch 32, 784-128-128-10, relu, log_softmax + nll_loss, backward, Adam).
"""
import argparse
import statistics

import numpy as np
import torch

import torchlike as tl
import torchlike.nn.functional as TF
from torchlike import _lazy

from . import bench_core


def _lazy_step(step):
    def run():
        with tl.lazy():
            return step()
    return run


def chain_workload():
    fns = bench_core.chain_workload()
    return {"lazy": _lazy_step(fns["torchlike"]), "eager": fns["torchlike"], "torch": fns["torch"]}


def _mlp_step(lib, F, params, x, y, opt):
    loss = bench_core.mlp_loss(F, params, x, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss


def mlp_workload():
    ws, bs, x, y = bench_core.mlp_data()
    arrays = [a for pair in zip(ws, bs) for a in pair]
    fns = {}
    for name, lib, F in (("lazy", tl, TF), ("eager", tl, TF), ("torch", torch, torch.nn.functional)):
        params = [lib.tensor(a, requires_grad=True) for a in arrays]
        opt = lib.optim.Adam(params, lr=1e-3)
        tx, ty = lib.tensor(x), lib.tensor(y)
        step = (lambda lib=lib, F=F, params=params, tx=tx, ty=ty, opt=opt:
                np.asarray(_mlp_step(lib, F, params, tx, ty, opt).detach()))
        fns[name] = _lazy_step(step) if name == "lazy" else step
    return fns


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    print("median ms per step over rounds; ratios: median over rounds of the round's ratio to torch")
    print(f"{'workload':36s} {'lazy':>9s} {'eager':>9s} {'torch':>9s} {'lazy/torch':>10s} {'eager/torch':>11s}")
    for name, fns, inner in (("small MLP + Adam step", mlp_workload(), 20),
                             ("1,000-op sin chain fwd+bwd", chain_workload(), 2)):
        times = bench_core._rounds(fns, args.repeats, inner)
        ms = {k: statistics.median(v) for k, v in times.items()}
        ratio = {k: statistics.median(a / b for a, b in zip(v, times["torch"])) for k, v in times.items()}
        print(f"{name:36s} {ms['lazy']:7.3f}ms {ms['eager']:7.3f}ms {ms['torch']:7.3f}ms "
              f"{ratio['lazy']:9.2f}x {ratio['eager']:10.2f}x")
    print("lazy stats:", _lazy.stats)


if __name__ == "__main__":
    main()
