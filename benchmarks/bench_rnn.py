"""Side-by-side speed of recurrent and transformer layers: torchlike eager vs torch eager vs jax.jit, forward +
backward (the gradients of the input and every parameter of ``(out ** 2).mean()``).

    python benchmarks/bench_rnn.py             # prints ms per step and ratios

Workloads (issue 14): nn.LSTM and nn.GRU (seq 32, batch 16, input 64, hidden 128; one layer, and a 2-layer
bidirectional LSTM), whose torchlike time loop is one jax.lax.scan op per layer and direction, and one
nn.TransformerEncoderLayer (batch 16, seq 32, d_model 128, 4 heads, feed-forward 256, dropout 0, batch_first).
The three implementations share torch's initial weights; all run in one process, interleaved, best of N.
"""
import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np
import torch

import torchlike as tl
from torchlike.nn._rnn import _scan

from bench_core import _best  # (best-of-n timing, interleaved)

T, B, I, H = 32, 16, 64, 128


def _eager_steps(theirs, ours, x):
    """The torch and torchlike steps for a module pair with the same weights."""
    t_x, l_x = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
    t_params, l_params = list(theirs.parameters()), list(ours.parameters())

    def first(out):
        return out[0] if isinstance(out, tuple) else out

    def step_torch():
        loss = (first(theirs(t_x)) ** 2).mean()
        return torch.autograd.grad(loss, [t_x] + t_params)

    def step_torchlike():
        loss = (first(ours(l_x)) ** 2).mean()
        grads = tl.autograd.grad(loss, [l_x] + l_params)
        return grads[-1]._data.block_until_ready()

    return step_torch, step_torchlike


def _pair(cls, *args, **kwargs):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, cls)(*args, **kwargs)
    ours = getattr(tl.nn, cls)(*args, **kwargs)
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return theirs, ours


def rnn_workload(cls, num_layers=1, bidirectional=False):
    theirs, ours = _pair(cls, I, H, num_layers=num_layers, bidirectional=bidirectional)
    x = np.random.RandomState(0).randn(T, B, I).astype(np.float32)
    step_torch, step_torchlike = _eager_steps(theirs, ours, x)
    names = ours._flat_weights_names
    per = len(names) // (num_layers * (2 if bidirectional else 1))
    mode = "LSTM" if cls == "LSTM" else "GRU"

    def loss_fn(params, x):
        dirs = 2 if bidirectional else 1
        hx = jnp.zeros((B, H), x.dtype)
        for layer in range(num_layers):
            outs = []
            for d in range(dirs):
                w = params[(layer * dirs + d) * per:(layer * dirs + d + 1) * per]
                outs.append(_scan(mode, d == 1, x, *w, hx, hx if mode == "LSTM" else None, None, None)[0])
            x = outs[0] if dirs == 1 else jnp.concatenate(outs, -1)
        return (x ** 2).mean()

    j_step = jax.jit(jax.grad(loss_fn, argnums=(0, 1)))
    j_params = [jnp.asarray(getattr(theirs, n).detach().numpy()) for n in names]
    j_x = jnp.asarray(x)

    def step_jax():
        return jax.block_until_ready(j_step(j_params, j_x))

    return {"torchlike": step_torchlike, "torch": step_torch, "jax.jit": step_jax}


def _layer_norm(x, w, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * w + b


def jax_encoder_layer(p, x, heads):
    """nn.TransformerEncoderLayer's forward (batch_first, post-norm, relu, no dropout) in plain JAX, `p` mapping
    torch's parameter names to arrays."""
    b, t, e = x.shape
    q, k, v = jnp.split(x @ p["self_attn.in_proj_weight"].T + p["self_attn.in_proj_bias"], 3, -1)
    split = (lambda a: a.reshape(b, t, heads, e // heads).transpose(0, 2, 1, 3))
    att = jax.nn.softmax(split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(e // heads), -1) @ split(v)
    att = att.transpose(0, 2, 1, 3).reshape(b, t, e) @ p["self_attn.out_proj.weight"].T
    x = _layer_norm(x + att + p["self_attn.out_proj.bias"], p["norm1.weight"], p["norm1.bias"])
    h = jax.nn.relu(x @ p["linear1.weight"].T + p["linear1.bias"]) @ p["linear2.weight"].T + p["linear2.bias"]
    return _layer_norm(x + h, p["norm2.weight"], p["norm2.bias"])


def transformer_workload(E=128, heads=4, ff=256):
    theirs, ours = _pair("TransformerEncoderLayer", E, heads, ff, 0.0, batch_first=True)
    x = np.random.RandomState(0).randn(B, T, E).astype(np.float32)
    step_torch, step_torchlike = _eager_steps(theirs, ours, x)
    names = [n for n, _ in theirs.named_parameters()]

    def loss_fn(params, x):
        return (jax_encoder_layer(dict(zip(names, params)), x, heads) ** 2).mean()

    j_step = jax.jit(jax.grad(loss_fn, argnums=(0, 1)))
    j_params = [jnp.asarray(p.detach().numpy()) for p in theirs.parameters()]
    j_x = jnp.asarray(x)

    def step_jax():
        return jax.block_until_ready(j_step(j_params, j_x))

    return {"torchlike": step_torchlike, "torch": step_torch, "jax.jit": step_jax}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    rows = [("LSTM 1 layer (32x16x64, h 128)", rnn_workload("LSTM"), 3),
            ("LSTM 2 layers bidirectional", rnn_workload("LSTM", 2, True), 1),
            ("GRU 1 layer (32x16x64, h 128)", rnn_workload("GRU"), 3),
            ("TransformerEncoderLayer (16x32x128)", transformer_workload(), 3)]
    print(f"{'workload (forward + backward)':38s} {'torchlike':>10s} {'torch':>10s} {'jax.jit':>10s} "
          f"{'tl/torch':>9s} {'tl/jit':>8s}")
    for name, fns, inner in rows:
        best = _best(fns, args.repeats, inner)
        print(f"{name:38s} {best['torchlike']:9.3f}ms {best['torch']:9.3f}ms {best['jax.jit']:9.3f}ms "
              f"{best['torchlike'] / best['torch']:8.2f}x {best['torchlike'] / best['jax.jit']:7.2f}x")


if __name__ == "__main__":
    main()
