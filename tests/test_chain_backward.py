"""Backward runs of chained nodes (autograd/engine.py ``_run_chain``): a run of at least ``CHAIN_MIN`` nodes that
each pass one gradient on (elementwise chains: ``y = y.sin() * 1.0001`` a thousand times) runs its formulas as one
cached program. Gradients, hooks, released saved tensors, version errors and double backward stay torch's.

The random test builds chains of unary ops and scalar arithmetic with side branches, tensor hooks and
``retain_grad`` at random places (which split a run), and compares ``.grad`` and the hooks' gradients with torch.
More programs: ``python tests/test_chain_backward.py --n 200``.
"""
import argparse
import sys

import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.ops import _registry
from oracle import assert_same, assert_same_error

_N = _registry.CHAIN_MIN + 8
_X = np.random.RandomState(0).randn(5)  # float64: long chains compared to 1e-9
_STEPS = ("sin", "tanh", "atan", "scale", "shift", "neg", "exp_small")  # (gradients stay near 1)


def _step(y, kind):
    if kind == "exp_small":
        return ((y * 0.01).exp() - 1.0) * 100.0
    if kind == "scale":
        return y * 1.5
    if kind == "shift":
        return y + 0.25
    if kind == "neg":
        return -y
    return getattr(y, kind)()


class _Spy:
    """Counts the engine's fused runs and their lengths."""

    def __init__(self, monkeypatch):
        self.runs = []
        run = _registry._run_chain

        def spy(nodes, grad, release):
            out = run(nodes, grad, release)
            if out is not None:
                self.runs.append(len(nodes))
            return out
        monkeypatch.setattr("torchlike.autograd.engine.run_chain", spy)


def _chain(lib, x, n=_N):
    y = x
    for i in range(n):
        y = _step(y, _STEPS[i % len(_STEPS)])
    return y


def test_chain_gradient_matches_torch_and_runs_fused(monkeypatch):
    spy = _Spy(monkeypatch)
    results = []
    for lib in (tl, torch):
        x = lib.tensor(_X, requires_grad=True)
        _chain(lib, x).sum().backward()
        _chain(lib, x).sum().backward()  # (the second run replays the cached program; .grad accumulates)
        results.append(x.grad)
    assert_same(*results, rtol=1e-9, atol=1e-12)
    assert spy.runs and all(n >= _registry.CHAIN_MIN for n in spy.runs)
    assert len(spy.runs) == 2


def test_hook_in_the_middle_splits_the_run(monkeypatch):
    spy = _Spy(monkeypatch)
    seen, grads = {}, []
    for lib in (tl, torch):
        x = lib.tensor(_X, requires_grad=True)
        a = _chain(lib, x)
        a.register_hook(lambda g, lib=lib: seen.setdefault(lib.__name__, g * 1))
        mid = a.tanh()
        mid.retain_grad()
        b = _chain(lib, mid * 2.0)
        b.sum().backward()
        grads.append((x.grad, mid.grad))
    assert_same(seen["torchlike"], seen["torch"], rtol=1e-9, atol=1e-12)
    assert_same(grads[0][0], grads[1][0], rtol=1e-9, atol=1e-12)
    assert_same(grads[0][1], grads[1][1], rtol=1e-9, atol=1e-12)
    assert len(spy.runs) == 2  # one run above the hook and the retained tensor, one below them


def test_saved_tensors_released_and_retain_graph(monkeypatch):
    _Spy(monkeypatch)
    for retain in (True, False):
        outs = []
        for lib in (tl, torch):
            x = lib.tensor(_X, requires_grad=True)
            y = _chain(lib, x)
            node = y.grad_fn.next_functions[0][0].next_functions[0][0]  # a node inside the run
            y.sum().backward(retain_graph=retain)
            if retain:
                y.sum().backward()
                outs.append(x.grad)
            else:
                outs.append(node)
        if retain:
            assert_same(*outs, rtol=1e-9, atol=1e-12)
        else:  # its saved tensors were freed as torch frees them
            assert_same_error(lambda lib: (outs[0] if lib is tl else outs[1])._saved_self)


def test_backward_twice_and_modified_saved_tensor_errors(monkeypatch):
    _Spy(monkeypatch)

    def twice(lib):
        y = _chain(lib, lib.tensor(_X, requires_grad=True)).sum()
        y.backward()
        y.backward()
    assert_same_error(twice)

    def modified(lib):
        x = lib.tensor(_X, requires_grad=True)
        a = _chain(lib, x, 10)
        b = a.sin()
        c = _chain(lib, b, 20)
        a.add_(1.0)  # SinBackward0 of b saved a: its version changed
        c.sum().backward()
    assert_same_error(modified)


def test_create_graph_and_grad_of_an_intermediate_match_torch(monkeypatch):
    spy = _Spy(monkeypatch)
    firsts, seconds, mids = [], [], []
    for lib in (tl, torch):
        x = lib.tensor(_X, requires_grad=True)
        a = _chain(lib, x)
        y = _chain(lib, a).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        h, = lib.autograd.grad(g.sum(), x)
        m, = lib.autograd.grad(_chain(lib, a).sum(), a)
        firsts.append(g)
        seconds.append(h)
        mids.append(m)
    for pair in (firsts, seconds, mids):
        assert_same(*pair, rtol=1e-9, atol=1e-12)
    assert not spy.runs  # create_graph records the formulas; autograd.grad with inputs runs node by node


def test_branches_feed_each_other(monkeypatch):
    """A value used twice ends a run (its node waits for both gradients); each part fuses on its own."""
    spy = _Spy(monkeypatch)
    grads = []
    for lib in (tl, torch):
        x = lib.tensor(_X, requires_grad=True)
        a = _chain(lib, x)
        y = _chain(lib, a) + _chain(lib, a.cos())
        y.sum().backward()
        grads.append(x.grad)
    assert_same(*grads, rtol=1e-9, atol=1e-12)
    assert len(spy.runs) == 3


def _random_program(seed):
    """Random chained ops: each step a unary op; now and then a side branch joining later, a hook or
    retain_grad."""
    rng = np.random.RandomState(seed)
    steps = []
    for _ in range(rng.randint(_registry.CHAIN_MIN - 4, 3 * _registry.CHAIN_MIN)):
        r = rng.rand()
        steps.append(("branch" if r < 0.04 else "hook" if r < 0.07 else "retain" if r < 0.09 else "op",
                      _STEPS[rng.randint(len(_STEPS))]))
    return steps


def _run(lib, steps):
    x = lib.tensor(_X, requires_grad=True)
    y, pending, hooks, retained = x, [], [], []
    for kind, op in steps:
        if kind == "branch":
            pending.append(y.cos())
        elif kind == "hook":
            y.register_hook(lambda g: hooks.append(g * 1))
        elif kind == "retain" and y.grad_fn is not None:
            y.retain_grad()
            retained.append(y)
        y = _step(y, op)
        if pending and kind == "op" and len(steps) % 3 == 0:
            y = y + pending.pop()
    for p in pending:
        y = y * p
    y.sum().backward()
    return [x.grad] + hooks + [r.grad for r in retained]


def _differs(seed):
    steps = _random_program(seed)
    a, b = _run(tl, steps), _run(torch, steps)
    if len(a) != len(b):
        return f"{len(a)} gradients against {len(b)}"
    for u, v in zip(a, b):
        try:
            assert_same(u, v, rtol=1e-9, atol=1e-12)
        except AssertionError as e:
            return str(e).splitlines()[0]
    return None


@pytest.mark.parametrize("seed", range(6))
def test_random_chains_match_torch(seed):
    assert _differs(seed) is None


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    args = parser.parse_args()
    bad = [(s, r) for s in range(args.start, args.start + args.n) if (r := _differs(s)) is not None]
    for s, r in bad:
        print("seed", s, r)
    print(f"{len(bad)} of {args.n} differ")
    sys.exit(1 if bad else 0)
