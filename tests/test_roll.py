"""Loop rolling (torchlike/_roll.py): a compiled or lazy program's repeated runs of ops run as lax.scan loops, with
the program's results unchanged.

The random test builds loops the way users write them (an RNN-like body over time steps: carried state, a
per-step input row, weights read every step, values kept in a list and used after the loop, sometimes a value
from two steps back) and compares the compiled step (rolled) with the eager one: values and gradients. More
programs: ``python tests/test_roll.py --n 300``.
"""
import argparse
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike
from torchlike import _lazy, _roll
from torchlike._dynamo import config

_D, _UNARY, _BINARY = 6, ("sin", "tanh", "sigmoid", "neg", "relu", "scale"), ("add", "mul", "sub", "maximum")


def _program(seed):
    """A random loop: (iterations, body ops, carried outputs, kept outputs, reads a value from two steps back).
    Body inputs: carry 0, carry 1, the step's row of x, the value of carry 0 two steps back."""
    rng = np.random.RandomState(seed)
    n_in = 4
    ops = []
    for i in range(rng.randint(2, 7)):
        kind = rng.choice(["unary", "binary", "matmul"], p=[0.45, 0.4, 0.15])
        avail = n_in + i
        ops.append((kind, rng.choice(_UNARY) if kind == "unary" else rng.choice(_BINARY),
                    rng.randint(avail), rng.randint(avail)))
    n = n_in + len(ops)
    carries = (n - 1, rng.randint(n))
    kept = sorted(set(rng.randint(n_in, n, size=rng.randint(0, 3))))
    far = rng.rand() < 0.25
    if not far:  # (no op reads input 3 then)
        ops = [(k, f, a if a != 3 else 0, b if b != 3 else 1) for k, f, a, b in ops]
        carries = tuple(c if c != 3 else 1 for c in carries)
    return rng.randint(8, 14), ops, carries, kept, far


def _step(lib, program):
    iters, ops, carries, kept, far = program

    def step(x, w, h0):
        h, g, back = h0, h0 * 0.5, [h0, h0]
        saved = []
        for t in range(iters):
            vals = [h, g, x[t], back[-2]]
            for kind, f, a, b in ops:
                u, v = vals[a], vals[b]
                if kind == "matmul":
                    vals.append(lib.tanh(u @ w))
                elif kind == "binary":
                    vals.append(lib.maximum(u, v) if f == "maximum" else getattr(u, f"__{f}__")(v))
                elif f == "scale":
                    vals.append(u * 0.9)
                else:
                    vals.append(getattr(lib, f)(u))
            h, g = vals[carries[0]], vals[carries[1]]
            back.append(h)
            saved += [vals[k] for k in kept]
        loss = h.sum() + g.sum() * 0.5
        for k, s in enumerate(saved):
            loss = loss + s.sum() * (0.1 + 0.01 * k)
        loss.backward()
        return loss
    return step


def _inputs(seed, iters):
    rng = np.random.RandomState(1000 + seed)
    return [rng.randn(iters, _D), rng.randn(_D, _D) * 0.5, rng.randn(_D)]


def _run(program, seed, compiled):
    step = _step(torchlike, program)
    fn = torchlike.compile(step) if compiled else step
    for _ in range(2 if compiled else 1):  # (compiled: the trace, then the cached program)
        leaves = [torchlike.tensor(a, dtype=torchlike.float64, requires_grad=True)
                  for a in _inputs(seed, program[0])]
        loss = fn(*leaves)
    return [loss.item()] + [None if t.grad is None else t.grad.numpy() for t in leaves], fn


def _scans(fn, seed, program):
    """How many loops the compiled program's rolled form has."""
    closed = fn.programs[0].jaxpr
    rolled = jax.make_jaxpr(lambda *a: _roll.evaluate(closed, a))(*closed.in_avals)
    return sum(e.primitive.name == "scan" for e in rolled.jaxpr.eqns)


def differs(seed):
    """None if the compiled (rolled) step agrees with the eager one, else what differs."""
    program = _program(seed)
    eager, _ = _run(program, seed, False)
    got, fn = _run(program, seed, True)
    for k, (a, b) in enumerate(zip(eager, got)):
        if (a is None) != (b is None) or a is not None and not np.allclose(a, b, rtol=1e-9, atol=1e-12):
            return f"seed {seed}: result {k} differs: {a} vs {b}"
    iters, ops, carries, kept, far = program
    swap = carries[0] == 1 or carries[1] == 0  # (a carry passed on unchanged as the other: two steps back too)
    if not (far or swap) and _scans(fn, seed, program) == 0:
        return f"seed {seed}: no loop rolled"
    return None


@pytest.mark.parametrize("seed", range(10))
def test_random_loops_roll_and_agree(seed):
    assert differs(seed) is None


def test_chain_rolls_into_a_forward_and_a_backward_loop():
    x = torchlike.tensor(np.linspace(-1, 1, 8), dtype=torchlike.float32, requires_grad=True)

    def step():
        x.grad = None
        y = x
        for _ in range(20):
            y = y.sin() * 1.0001
        y.sum().backward()
    fn = torchlike.compile(step)
    fn()
    closed = fn.programs[0].jaxpr
    rolled = jax.make_jaxpr(lambda *a: _roll.evaluate(closed, a))(*closed.in_avals)
    loops = [e for e in rolled.jaxpr.eqns if e.primitive.name == "scan"]
    assert [e.params["length"] for e in loops] == [20, 20]
    assert len(rolled.jaxpr.eqns) < 12  # (the unrolled program has 83)
    # the backward loop runs in reverse over the forward's stacked intermediates as they are: no copy of them
    assert not any(e.primitive.name in ("concatenate", "rev", "slice") for e in rolled.jaxpr.eqns)
    assert [e.params["reverse"] for e in loops] == [False, True]
    y = torchlike.tensor(np.linspace(-1, 1, 8), dtype=torchlike.float32, requires_grad=True)
    z = y
    for _ in range(20):
        z = z.sin() * 1.0001
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.grad.numpy(), rtol=1e-6)


def test_roll_loops_off_keeps_the_unrolled_program(monkeypatch):
    calls = []
    monkeypatch.setattr(_roll, "_scan", lambda run, *a: calls.append(run.iters) or _SCAN(run, *a))
    x = torchlike.tensor(np.ones(4), dtype=torchlike.float64, requires_grad=True)
    for roll in (False, True):
        monkeypatch.setattr(config, "roll_loops", roll)
        out = torchlike.compile(lambda t: _chain(t, 10))(x)
        want = np.ones(4)
        for _ in range(10):
            want = np.sin(want)
        np.testing.assert_allclose(out.detach().numpy(), want, rtol=1e-12)
        assert calls == ([] if not roll else [10])


_SCAN = _roll._scan


def _chain(t, n):
    for _ in range(n):
        t = t.sin()
    return t


def test_jaxpr_level_loops_with_two_step_dependencies_and_literals():
    """Straight JAX: a Fibonacci-like recurrence (reads two steps back: not one loop's carry) and a loop whose steps
    use different literals, then a loop: the rolled program must give the same values and gradients. (JAX's
    ``xs[t]`` with a Python int is a slice whose parameters change with t: such a loop is not rolled.)"""
    def f(a, b, xs):
        p, q = a, b
        for t in range(12):
            p, q = q, jnp.sin(p) + q * 0.5 + xs[t]
        r = q
        for t in range(10):
            r = r * (1.0 + t)  # a different literal each step: not rolled
        for t in range(10):
            r = jnp.tanh(r) * a + b
        return r.sum()
    args = (jnp.ones(3), jnp.full(3, 0.5), jnp.linspace(0, 1, 36).reshape(12, 3))
    g = jax.value_and_grad(f, argnums=(0, 1, 2))
    closed = jax.make_jaxpr(g)(*args)
    want = jax.extend.core.jaxpr_as_fun(closed)(*args)
    got = _roll.evaluate(closed, args)
    for a, b in zip(jax.tree.leaves(want), jax.tree.leaves(got)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    rolled = jax.make_jaxpr(lambda *a: _roll.evaluate(closed, a))(*args)
    assert any(e.primitive.name == "scan" for e in rolled.jaxpr.eqns)


def test_lazy_mode_chain_is_rolled_and_agrees(monkeypatch):
    calls = []
    monkeypatch.setattr(_roll, "_scan", lambda run, *a: calls.append(run.iters) or _SCAN(run, *a))
    monkeypatch.setattr("torchlike._lazy._programs", {})  # (traced anew, even if a test before ran the same chain)
    _lazy._reset_guard()  # (earlier tests' one-off programs may have paused recording: then nothing is traced)
    x = torchlike.tensor(np.linspace(-1, 1, 8), dtype=torchlike.float64, requires_grad=True)
    with torchlike.lazy():
        y = _chain(x, 16) * 2.0
        y.sum().backward()
    got = x.grad.numpy()
    assert calls == [16, 16]  # (forward and backward)
    x.grad = None
    _chain(x, 16).mul(2.0).sum().backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-12)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    args = parser.parse_args()
    bad = [m for m in map(differs, range(args.start, args.start + args.n)) if m]
    print("\n".join(bad) or f"all {args.n} agree")
    sys.exit(1 if bad else 0)
