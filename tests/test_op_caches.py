"""The caches torchlike keys by Python numbers and static arguments.

-0.0 and 0.0 are different numbers to torch (their signs show in results and gradients) but equal to Python's
``==``: every cache torchlike keys by a Python number (the wrapped scalars, the op table's compiled programs per
static argument, lazy mode's argument arrays, custom ops' programs, torchlike.compile's guards) must tell them apart
(_dtype._exact_key), in whichever order they come. A NaN static is one program, not a new one per call. And an op's
programs per static stay bounded when a static takes ever new values."""
import math

import numpy as np
import pytest
import torch

import torchlike as tl

# (name, f(module, x, z)): a Python float zero as a scalar operand or a static argument. Not here: max/min-like
# ops (clamp, hardtanh, maximum, fmax, elu's branch) of two equal zeros, where torch's CPU kernels return one
# operand or the other by their vector instructions, not by a rule (XLA returns IEEE max/min)
_CASES = [
    ("mul", lambda m, x, z: x * z),
    ("add", lambda m, x, z: x + z),
    ("radd", lambda m, x, z: z + x),
    ("sub", lambda m, x, z: x - z),
    ("add_alpha", lambda m, x, z: x.add(x, alpha=z)),
    ("full", lambda m, x, z: m.full((2,), z)),
    ("new_full", lambda m, x, z: x.new_full((2,), z)),
    ("fill_", lambda m, x, z: m.zeros(2).fill_(z)),
    ("threshold", lambda m, x, z: m.nn.functional.threshold(x, 0.5, z)),
    ("where", lambda m, x, z: m.where(x > 0, x, z)),
    ("masked_fill", lambda m, x, z: x.masked_fill(x > 0, z)),
    ("index_fill", lambda m, x, z: x.index_fill(0, m.tensor([0]), z)),
    ("leaky_relu", lambda m, x, z: m.nn.functional.leaky_relu(x, z)),
    ("lerp", lambda m, x, z: m.lerp(x, x + 1, z)),
    ("addcmul", lambda m, x, z: m.addcmul(x, x, x, value=z)),
    ("copysign", lambda m, x, z: m.copysign(m.ones(2), z)),
    ("pow", lambda m, x, z: m.pow(z, m.tensor([1.0, 3.0]))),
]


def _signs(t):
    """Values with each zero as its sign (+1.0 or -1.0): equal lists mean equal values and equal zero signs."""
    return [math.copysign(1.0, v) if v == 0 else v for v in t.detach().flatten().tolist()]


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_a_zero_scalar_keeps_its_sign_whatever_came_before(lazy):
    x_np = np.array([1.0, -0.0, 0.0, -2.0], np.float32)
    for zs in ((0.0, -0.0, 0.0), (-0.0, 0.0, -0.0)):
        for z in zs:
            with tl.lazy(lazy):
                got = [_signs(f(tl, tl.tensor(x_np), z)) for _, f in _CASES]
            want = [_signs(f(torch, torch.tensor(x_np), z)) for _, f in _CASES]
            for (name, _), g, w in zip(_CASES, got, want):
                assert g == w, (name, z, g, w)


def test_a_zero_static_keeps_its_sign_in_gradients():
    """leaky_relu's slope is a static of its backward program too; mul's scalar is saved for its backward."""
    for z in (0.0, -0.0, 0.0):
        grads = []
        for m in (tl, torch):
            x = m.tensor([-1.0, 2.0], requires_grad=True)
            (m.nn.functional.leaky_relu(x, z) + x * z).sum().backward()
            grads.append(_signs(x.grad))
        assert grads[0] == grads[1], (z, grads)


def test_a_custom_op_with_a_zero_argument_keeps_its_sign():
    @tl.library.custom_op("signed_zero::scale", mutates_args=())
    def scale(x: tl.Tensor, a: float) -> tl.Tensor:
        return x * a

    x = tl.tensor([1.0, -1.0])
    assert _signs(scale(x, 0.0)) == [1.0, -1.0]
    assert _signs(scale(x, -0.0)) == [-1.0, 1.0]
    assert _signs(scale(x, 0.0)) == [1.0, -1.0]


def test_a_nan_static_is_one_program():
    from torchlike.nn import _activations
    x = tl.tensor([1.0, 0.0])
    for _ in range(3):  # (a new NaN object each call: equal to no other)
        out = tl.nn.functional.threshold(x, 0.5, float("nan"))
        assert out[0].item() == 1.0 and np.isnan(out[1].item())
    assert sum(1 for k in _activations._threshold._fwd if "nan" in repr(k)) == 1


def test_a_compiled_function_recompiles_for_a_zero_of_the_other_sign_and_not_for_nan():
    """The guard checks a float it read by its exact value (as a key): -0.0 after 0.0 is a change, a NaN is not."""
    z = [0.0]

    def fn(x):
        return x * z[0]

    compiled = tl.compile(fn)
    x = tl.tensor([1.0, -1.0])
    for value, signs in ((0.0, [1.0, -1.0]), (-0.0, [-1.0, 1.0]), (0.0, [1.0, -1.0])):
        z[0] = value
        assert _signs(compiled(x)) == signs, value
    assert compiled.compiles == 2
    for _ in range(2):
        z[0] = float("nan")
        assert np.isnan(compiled(x).tolist()).all()
    assert compiled.compiles == 3


def test_an_op_keeps_a_bounded_number_of_programs(monkeypatch):
    """A static that takes ever new values (a slope set each step) compiles each; the op's caches start again
    past _registry._MAX_PROGRAMS instead of growing for the process's life."""
    from torchlike.ops import _registry, pointwise
    monkeypatch.setattr(_registry, "_MAX_PROGRAMS", 3)
    for cache in ("_fwd", "_bwd"):  # (start empty: other tests, in any order, may have filled them past 3)
        monkeypatch.setattr(pointwise._leaky_relu, cache, {})
    x = tl.tensor([-1.0, 2.0], requires_grad=True)
    for k in range(5):
        slope = 0.125 * (k + 1)
        y = tl.nn.functional.leaky_relu(x, slope)
        y.sum().backward()
        assert y.tolist() == [-slope, 2.0] and x.grad.tolist() == [slope, 1.0]
        x.grad = None
        assert len(pointwise._leaky_relu._fwd) <= 3 and len(pointwise._leaky_relu._bwd) <= 3


def test_numbers_first_made_inside_a_trace_are_concrete():
    """An optimizer's hyper-parameters become cached arrays (_lazy._number); the first use may be inside
    torchlike.compile's trace: the cache must hold concrete arrays, never the trace's tracers."""
    import jax
    from torchlike import _lazy
    net = tl.nn.Linear(3, 2)
    opt = tl.optim.SGD(net.parameters(), lr=0.01, momentum=0.8765)  # (a momentum no other test uses)
    x = tl.ones(4, 3)

    @tl.compile
    def step():
        opt.zero_grad()
        net(x).sum().backward()
        opt.step()

    step()
    assert not any(isinstance(a, jax.core.Tracer) for a in _lazy._numbers.values())
    assert not isinstance(_lazy._number(0.8765), jax.core.Tracer)
    before = net.weight.detach().clone()
    opt.zero_grad()
    net(x).sum().backward()
    opt.step()  # (eagerly, with the cached arrays)
    assert not np.allclose(net.weight.tolist(), before.tolist())
