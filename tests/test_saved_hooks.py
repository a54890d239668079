"""Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks and friends) against torch 2.13."""
import threading

import numpy as np
import pytest
import torch

import torchlike as tl


def _trace(T):
    """Pack/unpack calls, what _saved_* returns under hooks, gradients, and the skipped version check."""
    calls = []

    def pack(t):
        calls.append(("pack", tuple(t.shape), T.is_grad_enabled(), t.requires_grad))
        return t.detach()

    def unpack(t):
        calls.append(("unpack", tuple(t.shape)))
        return t

    out = {}
    x = T.tensor([1., 2., 3.], dtype=T.float64, requires_grad=True)  # (float32 sums round as the program fuses)
    with T.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = x * 2.0  # the wrapped scalar is saved without going through pack
        z = y.exp()
        w = x * y
    out["packs"] = sorted(calls)
    calls.clear()
    out["scalar"] = y.grad_fn._saved_other.item()
    s = w.grad_fn._saved_self
    out["saved_leaf"] = (s is x, s.requires_grad, s.grad_fn is None, s.is_leaf, list(calls))
    calls.clear()
    s = w.grad_fn._saved_other
    out["saved_nonleaf"] = (s is y, s.requires_grad, s.grad_fn is y.grad_fn)
    r = z.grad_fn._saved_result
    out["saved_result"] = (r is z, r.grad_fn is z.grad_fn)
    calls.clear()
    (z.sum() + w.sum()).backward()
    out["backward"] = sorted(calls)
    out["grad"] = x.grad.tolist()
    a = x * 1
    # pack copies
    with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), unpack):
        m = a * a
    with T.no_grad():
        a.add_(1)  # hooks active at save time: no version check, unpack's (old) data is used
    m.sum().backward()
    out["no_version_check"] = x.grad.tolist()
    x.grad = None
    b = x * 1
    # pack detaches: the saved alias shares b's storage, so a later in-place write shows through at unpack
    with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), unpack):
        m = b * b
    with T.no_grad():
        b.add_(1)
    m.sum().backward()
    out["shared_storage"] = x.grad.tolist()
    return out


def test_pack_unpack_semantics_match_torch():
    assert _trace(tl) == _trace(torch)


def _errors(T):
    x = T.tensor([1., 2., 3.], requires_grad=True)
    msgs = []

    def bad_pack(t):
        t.add_(1)
        return t
    a = x * 1
    with T.autograd.graph.saved_tensors_hooks(bad_pack, lambda t: t):
        with pytest.raises(RuntimeError) as e:
            a.exp()
    msgs.append(str(e.value))
    with T.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
        with pytest.raises(RuntimeError) as e:
            with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    msgs.append(str(e.value))
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
        q = x.exp()
    with pytest.raises(TypeError) as e:
        q.sum().backward()
    msgs.append(str(e.value))
    with T.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # usable again after disable exits
        msgs.append("ok")
    return msgs


def test_errors_match_torch():
    assert _errors(tl) == _errors(torch)


def test_innermost_hooks_win_and_thread_local():
    seen = []
    x = tl.tensor([1., 2.], requires_grad=True)
    with tl.autograd.graph.saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with tl.autograd.graph.saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t):
            y = x.exp()
            other = []
            thread = threading.Thread(target=lambda: other.append((x.sin(), list(seen))))
            thread.start()
            thread.join()
    assert seen == ["inner"]  # the thread's sin() did not pack through this thread's hooks
    assert other[0][1] == ["inner"]
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([1., 2.]), rtol=1e-6)


def test_save_on_cpu_gradients_match_torch():
    def run(T):
        x = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        with T.autograd.graph.save_on_cpu():
            y = (x @ x).sin().sum()
        y.backward()
        return x.grad.tolist()
    np.testing.assert_allclose(run(tl), run(torch), rtol=1e-6)


def test_hooked_saved_tensors_support_double_backward():
    def run(T):
        x = T.tensor([0.5, 1.5], requires_grad=True)
        with T.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            y = (x * x * x).sum()
        g, = T.autograd.grad(y, x, create_graph=True)
        h, = T.autograd.grad(g.sum(), x)
        return g.tolist(), h.tolist()
    assert run(tl) == run(torch)


def _raw(T):
    out = []
    x = T.tensor([1., 2.], requires_grad=True)
    y = x.exp()
    raw = y.grad_fn._raw_saved_result
    raw.register_hooks(lambda t: out.append(("pack", tuple(t.shape))) or t.detach(),
                       lambda t: out.append("unpack") or t)
    out.append("registered")
    for fn in (lambda: raw.register_hooks(lambda t: t, lambda t: t),):
        with pytest.raises(RuntimeError) as e:
            fn()
        out.append(str(e.value))
    y.sum().backward()
    out.append(x.grad.tolist())
    with pytest.raises(RuntimeError) as e:
        raw.register_hooks(lambda t: t, lambda t: t)
    out.append(str(e.value))
    z = T.tensor([1., 2.]) * x  # only `self` is saved: `other` is an empty slot
    with pytest.raises(RuntimeError) as e:
        z.grad_fn._raw_saved_other.register_hooks(lambda t: t, lambda t: t)
    out.append(str(e.value))
    return out


def test_raw_saved_register_hooks_match_torch():
    assert _raw(tl) == _raw(torch)


def _mutation(T):
    out = []
    x = T.tensor([1., 2., 3.], requires_grad=True)
    with T.autograd.graph.allow_mutation_on_saved_tensors() as ctx:
        out.append(type(ctx).__name__)
        a = x * 1
        y = a * a
        a.mul_(10)  # allowed: backward sees a's saved (old) values
        out.append((y.grad_fn._saved_self.tolist(), y.grad_fn._saved_self.grad_fn.name(), a.tolist()))
        y.sum().backward()
    out.append(x.grad.tolist())
    with T.autograd.graph.allow_mutation_on_saved_tensors():
        z = (x * 1).sin()
    with pytest.raises(AssertionError) as e:
        z.sum().backward()
    out.append(str(e.value))
    with pytest.raises(RuntimeError) as e:
        with T.autograd.graph.allow_mutation_on_saved_tensors():
            with T.autograd.graph.allow_mutation_on_saved_tensors():
                pass
    out.append(str(e.value))
    return out


def test_allow_mutation_on_saved_tensors_matches_torch():
    assert _mutation(tl) == _mutation(torch)


def test_no_growth_of_live_arrays_with_hooks():
    """Hooks of every kind over many steps keep no arrays alive once each step's graph is gone."""
    import gc

    import jax
    x = tl.tensor(np.arange(6.).reshape(2, 3), requires_grad=True)
    w = tl.tensor(np.ones((3, 2)), requires_grad=True)

    def step():
        with tl.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            h = (x @ w).sin()
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        h.grad_fn.register_prehook(lambda go: None)
        w.grad = None
        (h * h).sum().backward()

    for _ in range(3):
        step()
    gc.collect()
    start = len(jax.live_arrays())
    gc.disable()  # no reference cycles may be needed to free them
    try:
        for _ in range(200):
            step()
    finally:
        gc.enable()
    assert len(jax.live_arrays()) <= start


PACK_ORDER = {
    "mul": lambda m, a, b: a * b, "div": lambda m, a, b: a / b, "pow": lambda m, a, b: a ** b,
    "atan2": lambda m, a, b: m.atan2(a, b), "addcmul": lambda m, a, b: m.addcmul(a, a, b, value=2),
    "addcdiv": lambda m, a, b: m.addcdiv(a, a, b), "lerp": lambda m, a, b: m.lerp(a, b, a),
    "maximum": lambda m, a, b: m.maximum(a, b), "hypot": lambda m, a, b: m.hypot(a, b),
    "mm": lambda m, a, b: m.mm(a.view(1, 2), b.view(2, 1)), "dot": lambda m, a, b: m.dot(a, b),
    "clamp": lambda m, a, b: m.clamp(a, min=b * 0.5, max=b), "logaddexp": lambda m, a, b: m.logaddexp(a, b),
    "fmod": lambda m, a, b: m.fmod(a, b), "where": lambda m, a, b: m.where(a > 1, a, b),
    "outer": lambda m, a, b: m.outer(a, b), "matmul": lambda m, a, b: a @ b, "sin_mul": lambda m, a, b: (a * b).sin(),
}


@pytest.mark.parametrize("name", PACK_ORDER)
def test_pack_hooks_see_saved_tensors_in_torchs_order(name):
    """torch's nodes save their inputs in alphabetical order of their names, then their outputs."""
    orders = []
    for m in (torch, tl):
        a = m.tensor([0.5, 1.5], requires_grad=True)
        b = m.tensor([2.0, 3.0], requires_grad=True)
        packed = []

        def pack(t):
            packed.append("a" if t is a else "b" if t is b else f"other{tuple(t.shape)}")
            return t
        with m.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            PACK_ORDER[name](m, a, b)
        orders.append(packed)
    assert orders[0] == orders[1]
