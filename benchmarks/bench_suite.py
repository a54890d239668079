"""The workloads and reports of ``python -m benchmarks`` (issue 16): each training step in seven implementations
(torchlike eager, lazy and compiled, torch eager and ``torch.compile``, JAX's ``value_and_grad`` un-jitted and under
``jax.jit``, the JAX ones with the optax update of the same optimizer), built from the same initial values and
inputs, run paired in one process: interleaved rounds, the median of the per-round ratios."""
import ctypes
import gc
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax
import torch

import torchlike as tl
from bench_core import _rounds
from bench_rnn import jax_encoder_layer

IMPLS = ("torchlike eager", "torchlike lazy", "torchlike compiled", "torch eager", "torch.compile", "jax", "jax.jit")
RTOL = 1e-4  # the first steps' losses of every implementation agree with jax.jit's (float32)
_OPTAX = {"SGD": lambda lr, momentum: optax.sgd(lr, momentum=momentum), "Adam": lambda lr: optax.adam(lr)}
_SGD, _ADAM = ("SGD", dict(lr=0.01, momentum=0.9)), ("Adam", dict(lr=1e-3))


def _cross_entropy(logits, y):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits, axis=1), y[:, None], axis=1))


def _mse(out, y):
    return jnp.mean((out - y) ** 2)


_LOSSES = {"cross_entropy": _cross_entropy, "mse_loss": _mse}


# ---- the models: one torch/torchlike builder (the same code for both) and its plain-JAX forward each ----

def _mlp(batch, sizes):
    def model(m):
        layers = [mod for i, o in zip(sizes[:-1], sizes[1:]) for mod in (m.nn.Linear(i, o), m.nn.ReLU())]
        return m.nn.Sequential(*layers[:-1])

    def forward(p, x):
        for i in range(len(sizes) - 1):
            x = x @ p[f"{2 * i}.weight"].T + p[f"{2 * i}.bias"]
            x = jax.nn.relu(x) if i < len(sizes) - 2 else x
        return x
    rng = np.random.RandomState(0)
    x, y = rng.randn(batch, sizes[0]).astype(np.float32), rng.randint(0, sizes[-1], batch)
    return _training(model, forward, x, y, "cross_entropy", _SGD, f"{batch}x{'-'.join(map(str, sizes))}, SGD")


def _cnn(batch=32, c1=8, c2=16):
    def model(m):
        return m.nn.Sequential(m.nn.Conv2d(1, c1, 3, padding=1), m.nn.ReLU(), m.nn.MaxPool2d(2),
                               m.nn.Conv2d(c1, c2, 3, padding=1), m.nn.ReLU(), m.nn.MaxPool2d(2), m.nn.Flatten(),
                               m.nn.Linear(c2 * 7 * 7, 10))

    def conv_relu_pool(x, w, b):
        x = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), dimension_numbers=("NCHW", "OIHW", "NCHW"))
        x = jax.nn.relu(x + b[None, :, None, None])
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def forward(p, x):
        x = conv_relu_pool(conv_relu_pool(x, p["0.weight"], p["0.bias"]), p["3.weight"], p["3.bias"])
        return x.reshape(x.shape[0], -1) @ p["7.weight"].T + p["7.bias"]
    rng = np.random.RandomState(0)
    x, y = rng.randn(batch, 1, 28, 28).astype(np.float32), rng.randint(0, 10, batch)
    return _training(model, forward, x, y, "cross_entropy", _SGD, f"{batch}x1x28x28, conv {c1}-{c2}, SGD")


def _transformer(batch=8, seq=128, width=256, heads=8):
    def model(m):
        return m.nn.TransformerEncoderLayer(width, heads, 4 * width, 0.0, batch_first=True)
    rng = np.random.RandomState(0)
    x, y = (rng.randn(batch, seq, width).astype(np.float32) for _ in range(2))
    return _training(model, lambda p, x: jax_encoder_layer(p, x, heads), x, y, "mse_loss", _ADAM,
                     f"{batch}x{seq}x{width}, {heads} heads, Adam")


def _lstm_cell(carry, xt):
    """One LSTM time step, torch's gate order (i, f, g, o); the recurrent weight rides in the carry."""
    h, c, w_hh = carry
    i, f, g, o = jnp.split(xt + h @ w_hh.T, 4, -1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c, w_hh), h


def _lstm(seq=32, batch=16, inp=64, hidden=128):
    def model(m):
        return m.nn.LSTM(inp, hidden)

    def forward(p, x):
        zeros = jnp.zeros((x.shape[1], hidden), x.dtype)
        xs = x @ p["weight_ih_l0"].T + p["bias_ih_l0"] + p["bias_hh_l0"]
        return jax.lax.scan(_lstm_cell, (zeros, zeros, p["weight_hh_l0"]), xs)[1]
    rng = np.random.RandomState(0)
    x, y = rng.randn(seq, batch, inp).astype(np.float32), rng.randn(seq, batch, hidden).astype(np.float32)
    return _training(model, forward, x, y, "mse_loss", _ADAM, f"{seq}x{batch}x{inp}, hidden {hidden}, Adam")


def _training(model, forward, x, y, loss, opt, title):
    """The six steps of one training workload (factories: building one may fail, and then its column is n/a)."""
    torch.manual_seed(0)
    init = {k: v.detach().numpy().copy() for k, v in model(torch).state_dict().items()}
    name, kw = opt

    def make(m):
        net = model(m)
        net.load_state_dict({k: m.tensor(v) for k, v in init.items()})
        params, opt = list(net.parameters()), getattr(m.optim, name)(net.parameters(), **kw)
        mx, my, loss_fn = m.tensor(x), m.tensor(y), getattr(m.nn.functional, loss)

        def step():
            opt.zero_grad()
            out = net(mx)
            out = loss_fn(out[0] if isinstance(out, tuple) else out, my)
            out.backward()
            opt.step()
            return out
        return step, lambda: params

    tx, vg = _OPTAX[name](**kw), jax.value_and_grad(lambda p, x, y: _LOSSES[loss](forward(p, x), y))

    def update(state, x, y):
        params, opt_state = state
        value, grads = vg(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state), value
    params = {k: jnp.asarray(v) for k, v in init.items()}
    return title, {**_framework_steps(make), **_jax_steps(update, (params, tx.init(params)), x, y)}


def _chain(n_ops=1000):
    """The 1,000-op chain ``y = sin(y) * 1.0001`` on float32[1024], forward + backward of its sum."""
    x0 = np.random.RandomState(0).randn(1024).astype(np.float32)

    def make(m):
        x = m.tensor(x0, requires_grad=True)

        def step():
            x.grad = None
            y = x
            for _ in range(n_ops):
                y = y.sin() * 1.0001
            loss = y.sum()
            loss.backward()
            return loss
        return step, lambda: [x.grad]

    def update(state, unrolled=True):
        """Un-jitted JAX runs the Python loop op by op; under jax.jit it is a fori_loop, ~5x faster here than the
        unrolled program (which is what tracing the Python loop gives)."""
        def loss(x):
            if not unrolled:
                return jax.lax.fori_loop(0, n_ops, lambda i, y: jnp.sin(y) * 1.0001, x).sum()
            for _ in range(n_ops):
                x = jnp.sin(x) * 1.0001
            return x.sum()
        value, grad = jax.value_and_grad(loss)(state[0])
        return (state[0], grad), value
    x = jnp.asarray(x0)
    jax_steps = _jax_steps(update, (x, jnp.zeros_like(x)), jitted=lambda state: update(state, unrolled=False))
    return f"float32[1024], {n_ops} ops", {**_framework_steps(make), **jax_steps}


def _framework_steps(make):
    """torchlike steps (eager, lazy, compiled) and torch steps (eager, compiled), from ``make(module) -> (step,
    tensors to wait for)``."""
    def torchlike(mode):
        step, leaves = make(tl)
        run = tl.compile(step) if mode == "compiled" else step

        def call():
            with tl.lazy(mode == "lazy"):  # (leaving the block runs the pending program)
                loss = run()
            jax.block_until_ready([t._data for t in leaves()])
            return loss

        def compiled_call():  # (no lazy(False) block: a compiled call runs its program in either mode, as jax.jit does)
            loss = run()
            jax.block_until_ready([t._data for t in leaves()])
            return loss
        return compiled_call if mode == "compiled" else call

    def torch_(compiled):
        step, _ = make(torch)
        if compiled:
            torch._dynamo.reset()  # every workload's step is the same code object: no recompile limit, cold compile
        return torch.compile(step) if compiled else step
    return {"torchlike eager": lambda: torchlike("eager"), "torchlike lazy": lambda: torchlike("lazy"),
            "torchlike compiled": lambda: torchlike("compiled"),
            "torch eager": lambda: torch_(False), "torch.compile": lambda: torch_(True)}


def _jax_steps(update, state0, *args, jitted=None):
    """``update(state, *args) -> (state, loss)`` un-jitted and under ``jax.jit`` (state donated; `jitted` in place
    of `update` if given), each from its own copy of ``state0``."""
    def jax_(fn):
        state = [jax.tree.map(jnp.array, state0)]

        def call():
            state[0], value = fn(state[0], *args)
            jax.block_until_ready(state[0])
            return value
        return call
    return {"jax": lambda: jax_(update), "jax.jit": lambda: jax_(jax.jit(jitted or update, donate_argnums=0))}


WORKLOADS = {  # name: (row title, builder, its --quick arguments)
    "small_mlp": ("small MLP step", lambda: _mlp(32, (784, 128, 128, 10)), {}),
    "large_mlp": ("large MLP step", lambda batch=512, width=2048: _mlp(batch, (width, width, width, 10)),
                  dict(batch=64, width=256)),
    "chain": ("sin chain", _chain, dict(n_ops=100)),
    "cnn": ("small CNN step", _cnn, {}),
    "transformer": ("transformer block step", _transformer, dict(seq=16, width=64, heads=4)),
    "lstm": ("LSTM step", _lstm, dict(seq=8)),
}


# ---- measuring ----

def _detached(loss):
    return loss.detach() if hasattr(loss, "detach") else loss


def _warm_up(fns, calls=3):
    """Build each step and make its first `calls` calls: their total seconds (compiles included) and losses; a step
    that fails to build or run is dropped and its column reads n/a."""
    steps, first, losses, failed = {}, {}, {}, {}
    for k, factory in fns.items():
        try:
            t = time.perf_counter()
            step = factory()
            values = [float(_detached(step())) for _ in range(calls)]
            first[k], losses[k], steps[k] = time.perf_counter() - t, values, step
        except Exception as e:  # noqa: BLE001 (an implementation that does not work here is reported, not fatal)
            failed[k] = f"{type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
    return steps, first, losses, failed


def _inner(steps, target_ms):
    """Calls per round for each step, so that a round lasts about `target_ms`."""
    out = {}
    for k, f in steps.items():
        t = time.perf_counter()
        f()
        out[k] = max(1, round(target_ms / ((time.perf_counter() - t) * 1e3)))
    return out


def _paired(steps, rounds, target_ms):
    """Median ms per call of each step and the median over rounds of its ratio to torch eager and to jax.jit."""
    times = _rounds(steps, rounds, _inner(steps, target_ms))
    return {k: statistics.median(v) for k, v in times.items()}, _ratios(times, ("torch eager", "jax.jit"))


def _ratios(times, refs):
    """For each reference present: the median over rounds of each step's time over the reference's."""
    return {ref: {k: statistics.median(a / b for a, b in zip(v, times[ref])) for k, v in times.items()}
            for ref in refs if ref in times}


def _agreement(losses):
    """Largest relative difference of any implementation's first losses from jax.jit's (or torch eager's)."""
    ref = losses.get("jax.jit") or losses.get("torch eager") or next(iter(losses.values()))
    return max(abs(a - b) / max(abs(b), 1e-12) for v in losses.values() for a, b in zip(v, ref))


def run_workloads(names, quick, rounds, target_ms, skip=()):
    results = {}
    for name in names:
        title, build, quick_kw = WORKLOADS[name]
        sizes, fns = build(**(quick_kw if quick else {}))
        fns = {k: v for k, v in fns.items() if k not in skip}
        print(f"{title} ({sizes}) ...", flush=True)
        steps, first, losses, failed = _warm_up(fns)
        for k, why in failed.items():
            print(f"  {k}: n/a ({why})", flush=True)
        ms, ratio = _paired(steps, rounds, target_ms)
        results[name] = dict(title=f"{title} ({sizes})", ms=ms, ratio=ratio, first=first,
                             diff=_agreement(losses), failed=failed, skipped=set(skip))
    return results


def op_overhead(rounds, target_ms):
    """One small op (sin of float32[64]) with and without grad recorded, and the same op as a cached jax.jit call,
    an un-jitted jnp call and a torch op; microseconds per call, each result waited for."""
    x0 = np.random.RandomState(0).randn(64).astype(np.float32)
    a, g = tl.tensor(x0), tl.tensor(x0, requires_grad=True)
    ta, tg = torch.tensor(x0), torch.tensor(x0, requires_grad=True)
    jx, jsin = jnp.asarray(x0), jax.jit(jnp.sin)
    steps = {"torchlike, no grad": lambda: a.sin()._data.block_until_ready(),
             "torchlike, grad recorded": lambda: g.sin()._data.block_until_ready(),
             "torch, no grad": ta.sin, "torch, grad recorded": tg.sin,
             "jax.jit (cached)": lambda: jsin(jx).block_until_ready(),
             "jnp (un-jitted)": lambda: jnp.sin(jx).block_until_ready()}
    times = _rounds(steps, rounds, _inner(steps, target_ms))
    us = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    return us, _ratios(times, ("torch, no grad", "jax.jit (cached)"))


def _status_bytes(field):
    with open("/proc/self/status") as f:
        return int(re.search(rf"{field}:\s+(\d+) kB", f.read()).group(1)) * 1024


def chain_peak_probe(impl, n_ops, steps=5):
    """How far a warm `n_ops` chain step of `impl` raises the resident set above where it started, the most over
    `steps` steps (one step's figure depends on where the allocator happens to find memory: torchlike's eager step
    measured 2.5-7.4 MB from one process to the next, its peak over five steps 5.6-7.7 MB). Linux: the peak is
    reset through /proc/self/clear_refs and read as VmHWM; freed heap is returned with malloc_trim first, so each
    step's allocations show. In bytes; run in a fresh process."""
    step = _chain(n_ops)[1][impl]()
    step()  # compiles: every program the measured calls run
    rises = []
    for _ in range(steps):
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # VmHWM := VmRSS
        before = _status_bytes("VmHWM")
        step()
        rises.append(_status_bytes("VmHWM") - before)  # the kernel batches RSS counters: +-0.2 MB
    return max(0, *rises)


def chain_memory(n_ops, skip=()):
    """Peak memory of one warm chain step of each implementation, each in a fresh process (chain_peak_probe);
    None where it cannot be measured."""
    out = {}
    for impl in (k for k in IMPLS if k not in skip):
        proc = subprocess.run([sys.executable, "-m", "benchmarks", "--peak-probe", impl, "--chain-ops", str(n_ops)],
                              capture_output=True, text=True, cwd=os.path.dirname(os.path.dirname(__file__)))
        out[impl] = int(proc.stdout.split()[-1]) if proc.returncode == 0 else None
    return out


# ---- the report ----

def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def machine():
    load = os.getloadavg()
    return (f"{os.cpu_count()} cores ({_cpu()}), load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
            f"python {platform.python_version()}, jax {jax.__version__}, torch {torch.__version__}, "
            f"optax {optax.__version__}")


def _cell(r, k, fmt):
    if k in r["skipped"]:
        return "skipped"
    return "n/a" if k in r["failed"] or k not in r["ms"] else fmt(k)


def markdown(results, ops, memory, header):
    lines = [f"# torchlike benchmarks\n", *header, ""]
    cols = "| workload | " + " | ".join(IMPLS)
    rule = "|---|" + "---:|" * len(IMPLS)
    for ref, what in (("torch eager", "ratio to torch eager"), ("jax.jit", "ratio to jax.jit")):
        lines += [f"## Step time, {what} (median of per-round ratios; lower is faster)\n", cols + " | losses agree |",
                  rule + "---|"]
        for r in results.values():
            ok = "yes" if r["diff"] <= RTOL else "NO"
            cells = [_cell(r, k, lambda k: f"{r['ratio'][ref][k]:.2f}x" if ref in r["ratio"] else "n/a")
                     for k in IMPLS]
            lines.append(f"| {r['title']} | " + " | ".join(cells) + f" | {ok} ({r['diff']:.0e}) |")
        lines.append("")
    lines += ["## Step time, ms (median)\n", cols + " |", rule]
    lines += [f"| {r['title']} | " + " | ".join(_cell(r, k, lambda k: f"{r['ms'][k]:.3f}") for k in IMPLS) + " |"
              for r in results.values()]
    lines += ["", "## First three calls, s (tracing and compiling included)\n", cols + " |", rule]
    lines += [f"| {r['title']} | " + " | ".join(_cell(r, k, lambda k: f"{r['first'][k]:.2f}") for k in IMPLS)
              + " |" for r in results.values()]
    failed = {}
    for r in results.values():
        for k, why in r["failed"].items():
            failed.setdefault((k, why), []).append(r["title"].split(" (")[0])
    failures = [f"- {k} ({', '.join(where)}): {why}" for (k, why), where in failed.items()]
    lines += ["", "n/a: the implementation failed to build or run here:", "", *failures] if failures else []
    if ops:
        us, ratio = ops
        lines += ["", "## Per-op overhead: sin of float32[64], result waited for\n",
                  "| call | us | ratio to torch, no grad | ratio to jax.jit (cached) |", "|---|---:|---:|---:|"]
        lines += [f"| {k} | {v:.1f} | {ratio['torch, no grad'][k]:.2f}x | {ratio['jax.jit (cached)'][k]:.2f}x |"
                  for k, v in us.items()]
    if memory:
        n_ops, mem = memory
        base = mem.get("torch eager")
        lines += ["", f"## Peak memory of a chain step ({n_ops} ops, float32[1024])\n",
                  "The most a warm step raises the process's peak resident set, over five steps, each "
                  "implementation in a fresh process: Linux's VmHWM, reset through /proc/self/clear_refs before "
                  "each step (after a first, compiling one), with freed heap returned by malloc_trim first so the "
                  "step's own allocations show. n/a: not "
                  "measured or not measurable here.\n",
                  "| implementation | peak MB | ratio to torch eager |", "|---|---:|---:|"]
        for k, v in mem.items():
            mb = "n/a" if v is None else f"{v / 2 ** 20:.1f}"
            rel = f"{v / base:.2f}x" if v is not None and base else "n/a"
            lines.append(f"| {k} | {mb} | {rel} |")
    return "\n".join(lines) + "\n"


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(15, 5.5))
    names = list(results)
    width = 0.8 / len(IMPLS)
    for ax, ref in zip(axes, ("torch eager", "jax.jit")):
        for i, k in enumerate(IMPLS):
            vals = [results[n]["ratio"].get(ref, {}).get(k, np.nan) for n in names]
            ax.bar(np.arange(len(names)) + (i - (len(IMPLS) - 1) / 2) * width, vals, width, label=k)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_yscale("log")
        ax.set_xticks(np.arange(len(names)), [results[n]["title"].split(" (")[0] for n in names], rotation=20,
                      ha="right")
        ax.set_ylabel(f"step time / {ref} (log scale; lower is faster)")
        ax.set_title(f"ratio to {ref}")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(args):
    if args.peak_probe:
        print(chain_peak_probe(args.peak_probe, args.chain_ops))
        return 0
    known = [*WORKLOADS, "op_overhead", "chain_memory"]
    names = args.only.split(",") if args.only else known
    if set(names) - set(known):
        raise SystemExit(f"unknown workload(s) {sorted(set(names) - set(known))}; choose from {known}")
    rounds, target = (3, 5.0) if args.quick else (args.rounds, 40.0)
    if os.getloadavg()[0] > 0.5 * os.cpu_count():
        print(f"warning: load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores: other processes skew the "
              "ratios (torch's OpenMP threads spin-wait for a descheduled peer)", file=sys.stderr)
    header = [f"Machine: {machine()} (before the run).", "",
              f"Command: `{' '.join(['python -m benchmarks', *sys.argv[1:]])}`; {rounds} interleaved rounds of about "
              f"{target:.0f} ms per implementation and workload; compile caches on disk "
              f"{'as found' if args.warm_caches else 'off (cold compiles)'}."]
    skip = ("torch.compile",) if args.quick else ()
    results = run_workloads([n for n in names if n in WORKLOADS], args.quick, rounds, target, skip)
    ops = op_overhead(rounds, target) if "op_overhead" in names else None
    n_ops = WORKLOADS["chain"][2]["n_ops"] if args.quick else 1000
    memory = (n_ops, chain_memory(n_ops, skip)) if "chain_memory" in names else None
    header[0] += f" Load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}."
    os.makedirs(args.out, exist_ok=True)
    text = markdown(results, ops, memory, header)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write(text)
    if results:
        plot(results, os.path.join(args.out, "results.png"))
    print(text)
    bad = [r["title"] for r in results.values() if r["diff"] > RTOL]
    if bad:
        print(f"losses disagree (rtol {RTOL}): {bad}", file=sys.stderr)
    return 1 if bad else 0

