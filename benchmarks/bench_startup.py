"""First-call latency, side by side with torch, each measured in a fresh process: import-to-first-step of the
demo's model; PyTorch's two-layer-net tutorial (tensors and hand-written gradients, ``grad_h[h < 0] = 0``), the
whole script; and the first and second epoch of examples/cnn_digits.py (a small CNN on scikit-learn's digits
with DataLoader).

    python benchmarks/bench_startup.py [--rounds 3] [--threads N]
    python benchmarks/bench_startup.py --xla-study    # the CNN's epochs under several XLA compile options

torchlike is measured with an empty compilation cache (every program compiled: a new machine) and with a warm
one (the cache the first run filled: every later run on that machine). Figures are medians over ``--rounds``
fresh processes. ``--threads`` sets torch's intra-op threads and XLA's CPU threads alike (default: each
library's own default).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

FIRST_STEP = """
import time
t0 = time.perf_counter()
import {lib} as torch
nn = torch.nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
x, y = torch.ones(300, 2), torch.zeros(300, dtype=torch.int64)
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
optimizer.step()
loss.item()
print(time.perf_counter() - t0)
"""

TWO_LAYER_NET = """
import time
t0 = time.perf_counter()
import {lib} as torch
dtype = torch.float
N, D_in, H, D_out = 64, 1000, 100, 10
torch.manual_seed(0)
x = torch.randn(N, D_in, dtype=dtype)
y = torch.randn(N, D_out, dtype=dtype)
w1 = torch.randn(D_in, H, dtype=dtype)
w2 = torch.randn(H, D_out, dtype=dtype)
learning_rate = 1e-6
for t in range(500):
    h = x.mm(w1)
    h_relu = h.clamp(min=0)
    y_pred = h_relu.mm(w2)
    loss = (y_pred - y).pow(2).sum().item()
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.t().mm(grad_y_pred)
    grad_h_relu = grad_y_pred.mm(w2.t())
    grad_h = grad_h_relu.clone()
    grad_h[h < 0] = 0
    grad_w1 = x.t().mm(grad_h)
    w1 -= learning_rate * grad_w1
    w2 -= learning_rate * grad_w2
print(time.perf_counter() - t0)
"""

CNN = """
import json, sys
sys.path.insert(0, {examples!r})
import {lib} as torch
import cnn_digits
seconds, compiles, accuracy, _ = cnn_digits.train(torch, 2, log=lambda *a: None)
print(json.dumps(seconds))
"""


def _env(cache, threads, xla_flags=""):
    env = dict(os.environ, TORCHLIKE_COMPILATION_CACHE=cache)
    flags = xla_flags
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
        flags += f" --xla_cpu_multi_thread_eigen={'true' if threads > 1 else 'false'}"
        flags += f" intra_op_parallelism_threads={threads}"
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " " + flags).strip()
    return env


def _run(code, env):
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _median(runs):
    return statistics.median(runs)


def measure(rounds, threads, xla_flags=""):
    """{row: {column: seconds}} for the startup table."""
    examples = os.path.join(HERE, "..", "examples")
    rows = {"import to first step (demo's MLP)": {}, "two-layer-net tutorial, 500 steps, whole script": {},
            "CNN first epoch": {}, "CNN second epoch": {}}
    with tempfile.TemporaryDirectory() as warm:
        for column, lib, cache in (("torch", "torch", "0"), ("torchlike, empty cache", "torchlike", None),
                                   ("torchlike, warm cache", "torchlike", warm)):
            steps, nets, epochs1, epochs2 = [], [], [], []
            for _ in range(rounds):
                with tempfile.TemporaryDirectory() as empty:
                    env = _env(cache or empty, threads, xla_flags)
                    steps.append(_run(FIRST_STEP.format(lib=lib), env))
                    nets.append(_run(TWO_LAYER_NET.format(lib=lib), env))
                    e1, e2 = _run(CNN.format(lib=lib, examples=examples), env)
                    epochs1.append(e1)
                    epochs2.append(e2)
            if cache == warm and not os.listdir(warm):
                raise RuntimeError("the warm cache stayed empty")
            rows["import to first step (demo's MLP)"][column] = _median(steps)
            rows["two-layer-net tutorial, 500 steps, whole script"][column] = _median(nets)
            rows["CNN first epoch"][column] = _median(epochs1)
            rows["CNN second epoch"][column] = _median(epochs2)
            if column == "torch":  # fill the warm cache once before its rounds
                with tempfile.TemporaryDirectory():
                    env = _env(warm, threads, xla_flags)
                    _run(FIRST_STEP.format(lib="torchlike"), env)
                    _run(TWO_LAYER_NET.format(lib="torchlike"), env)
                    _run(CNN.format(lib="torchlike", examples=examples), env)
    return rows


def table(rows):
    lines = ["| | torch | torchlike, empty cache | torchlike, warm cache | empty / torch | warm / torch |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, r in rows.items():
        t, cold, warm = r["torch"], r["torchlike, empty cache"], r["torchlike, warm cache"]
        lines.append(f"| {name} | {t:.2f} s | {cold:.2f} s | {warm:.2f} s | {cold / t:.1f}x | {warm / t:.1f}x |")
    return "\n".join(lines)


STUDY = {  # XLA compile options tried for the per-op programs (XLA_FLAGS, in a fresh process each)
    "XLA defaults": "",
    "backend optimization level 0": "--xla_backend_optimization_level=0",
    "no expensive LLVM passes": "--xla_llvm_disable_expensive_passes=true",
    "both": "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true",
}


def study(rounds, threads):
    examples = os.path.join(HERE, "..", "examples")
    print("| XLA options | CNN first epoch (empty cache) | CNN second epoch |")
    print("|---|---:|---:|")
    for name, flags in STUDY.items():
        e1, e2 = [], []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as empty:
                a, b = _run(CNN.format(lib="torchlike", examples=examples), _env(empty, threads, flags))
                e1.append(a)
                e2.append(b)
        print(f"| {name} (`{flags}`) | {_median(e1):.2f} s | {_median(e2) * 1000:.0f} ms |", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--xla-study", action="store_true")
    args = p.parse_args()
    if args.xla_study:
        study(args.rounds, args.threads)
    else:
        print(table(measure(args.rounds, args.threads)))


if __name__ == "__main__":
    main()
