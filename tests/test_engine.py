"""The backward engine against torch 2.13: backward/grad arguments, AccumulateGrad, retain_graph and
freeing, retain_grad, higher order, inputs=, execution and hook order, long chains, memory, threads."""
import gc
import random
import sys
import threading
import warnings
import weakref

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.autograd.graph import _FREED

LIBS = pytest.mark.parametrize("L", [torch, tl], ids=["torch", "torchlike"])
RNG = np.random.default_rng(0)
A34 = RNG.random((3, 4)).astype(np.float32) + 0.5
B34 = RNG.random((3, 4)).astype(np.float32) + 0.5
W42 = RNG.random((4, 2)).astype(np.float32)


def leaves(L, *arrays, dtype=None):
    return [L.tensor(a, requires_grad=True, dtype=dtype) for a in arrays]


def values(t):
    return None if t is None else np.asarray(t.detach().numpy(), dtype=np.float64)


def assert_grads(actual, expected, rtol=1e-5):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        if e is None:
            assert a is None
        else:
            np.testing.assert_allclose(values(a), values(e), rtol=rtol, atol=1e-6)


# ----- AccumulateGrad, accumulation, retain_graph ----------------------------------------------------
@LIBS
def test_accumulate_grad_node(L):
    x, w = leaves(L, A34, W42)
    y = L.mm(x.sin(), w)
    acc_w = y.grad_fn.next_functions[1][0]
    acc_x = y.grad_fn.next_functions[0][0].next_functions[0][0]
    assert acc_w.name() == acc_x.name() == "torch::autograd::AccumulateGrad"
    assert acc_w.variable is w and acc_x.variable is x
    assert acc_w.next_functions == ()
    assert (x * 2).grad_fn.next_functions[0][0] is acc_x  # one accumulator per leaf while a graph holds it
    assert (x * 2).grad_fn.next_functions[1] == (None, 0)
    assert y.grad_fn.next_functions[0][1] == 0


def test_accumulation_updates_the_same_grad_in_place():
    out = []
    for L in (torch, tl):
        x, = leaves(L, A34)
        y = (x.sin() * x).sum()
        y.backward(retain_graph=True)
        g = x.grad
        v0 = g._version
        y.backward(retain_graph=True)
        out.append((x.grad is g, g._version - v0, g.requires_grad, values(x.grad)))
        x.grad = None
        y.backward()
        out.append((x.grad is g, values(x.grad)))
    (same_t, dv_t, rg_t, v_t), (same_l, dv_l, rg_l, v_l) = out[0], out[2]
    assert (same_l, dv_l, rg_l) == (same_t, dv_t, rg_t) == (True, 1, False)
    np.testing.assert_allclose(v_l, v_t, rtol=1e-5)
    assert out[1][0] == out[3][0] is False
    np.testing.assert_allclose(out[3][1], out[1][1], rtol=1e-5)


def test_retain_graph_and_release():
    for L in (torch, tl):
        x, = leaves(L, A34)
        y = x.exp().sin()
        y.sum().backward(retain_graph=True)
        np.testing.assert_allclose(values(y.grad_fn._saved_self), np.exp(A34), rtol=1e-6)  # retained
        y.sum().backward()  # second backward through the retained graph
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            y.grad_fn._saved_self
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            y.grad_fn.next_functions[0][0]._saved_result
        np.testing.assert_allclose(values(x.grad), 2 * np.cos(np.exp(A34)) * np.exp(A34), rtol=1e-5)
        z = (x + 2).sum()  # AddBackward0 / SumBackward0 saved nothing: re-running is fine
        z.backward()
        z.backward()


def test_saved_arrays_are_released_after_backward():
    x, = leaves(tl, A34)
    y = x.exp()
    z = y.sin().sum()
    sin_node, exp_node = z.grad_fn.next_functions[0][0], y.grad_fn
    del y
    saved = [sin_node._for_backward[0].tensor._data, exp_node._for_backward[0].data]  # exp's output, saved twice
    refs = sys.getrefcount(saved[0])
    z.backward()
    assert _FREED in sin_node._for_backward and _FREED in exp_node._for_backward
    assert sys.getrefcount(saved[0]) == refs - 2  # neither the saved input nor the saved result holds it


# ----- retain_grad ---------------------------------------------------------------------------------
def test_retain_grad():
    out = []
    for L in (torch, tl):
        x, = leaves(L, A34)
        y = x * 2
        assert not y.retains_grad
        y.retain_grad()
        y.retain_grad()  # idempotent
        x.retain_grad()  # no-op on a leaf
        assert y.retains_grad and not x.retains_grad
        z = (y * y).sum()
        z.backward(retain_graph=True)
        g1 = y.grad
        z.backward(retain_graph=True)
        out.append((y.grad is g1, y.grad.requires_grad, y.grad.grad_fn, values(g1), values(y.grad),
                    values(x.grad)))
    t, l_ = out
    assert l_[:3] == t[:3] == (False, False, None)
    for a, b in zip(l_[3:], t[3:]):
        np.testing.assert_allclose(a, b, rtol=1e-5)


# ----- higher order -----------------------------------------------------------------------------------
HIGHER = {
    "sin": lambda x: x.sin(),
    "exp": lambda x: x.exp(),
    "mul": lambda x: x * x * x,
    "pow": lambda x: x ** 3,
    "pow_tensor": lambda x: x ** x,
    "div": lambda x: x.sin() / x.exp(),
    "chain": lambda x: (x.sin() / x.exp()) ** 2.5 * x,
}


@pytest.mark.parametrize("name", sorted(HIGHER))
def test_create_graph_orders_1_to_3(name):
    f = HIGHER[name]
    res = []
    for L in (torch, tl):
        x = L.tensor([0.5, 1.5, 2.0], dtype=L.float64, requires_grad=True)
        g1, = L.autograd.grad(f(x).sum(), x, create_graph=True)
        g2, = L.autograd.grad(g1.sum(), x, create_graph=True)
        g3, = L.autograd.grad(g2.sum(), x)
        res.append((g1, g2, g3, g1.requires_grad, g2.requires_grad, g3.requires_grad))
    assert res[1][3:] == res[0][3:] == (True, True, False)
    assert_grads(res[1][:3], res[0][:3], rtol=1e-10)


def test_create_graph_backward_accumulates_with_history():
    out = []
    for L in (torch, tl):
        x, = leaves(L, A34)
        h = x.sin()
        h.retain_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (h * x).sum().backward(create_graph=True)
        g = x.grad
        first = (g.grad_fn.name(), g.grad_fn.next_functions[0], h.grad.grad_fn.name())
        (x.sin() * x).sum().backward(create_graph=True)
        out.append((first, g.requires_grad, x.grad is g, x.grad.grad_fn.name(), values(x.grad)))
        x.grad.sum().backward(inputs=[x])
        x.grad = None
        (x * 3).sum().backward(create_graph=True)  # a gradient without history is stored as is
        out[-1] += (x.grad.grad_fn, x.grad.requires_grad)
    assert out[1][:4] == out[0][:4] == (("torch::autograd::CopyBackwards", (None, 0), "CloneBackward0"),
                                        True, False, "AddBackward0")
    assert out[1][5:] == out[0][5:] == (None, False)
    np.testing.assert_allclose(out[1][4], out[0][4], rtol=1e-5)


# ----- backward / grad arguments -----------------------------------------------------------------------
def test_backward_arguments():
    res = []
    for L in (torch, tl):
        x, w = leaves(L, A34, W42)
        y = L.mm(x, w)
        s = y.exp().sum()
        y.backward(L.tensor(np.ones((3, 2), np.float32) * 0.5), retain_graph=True)
        r = [x.grad.clone(), w.grad.clone()]
        L.autograd.backward([s, y], grad_tensors=[None, L.ones(3, 2)], retain_graph=True)
        r += [x.grad.clone(), w.grad.clone()]
        L.autograd.backward(s, inputs=w)  # only w accumulates
        r += [x.grad.clone(), w.grad.clone()]
        s2 = (x * x).sum()
        s2.backward(inputs=[x])
        r += [x.grad, w.grad]
        res.append(r)
    assert_grads(res[1], res[0])


def test_backward_inputs_non_leaf_retains_grad_and_runs_its_node():
    res = []
    for L in (torch, tl):
        x, w = leaves(L, A34, B34)
        h = x * w
        log = []
        h.grad_fn.register_prehook(lambda g: log.append("h"))
        s = (h.sin() * w).sum()
        s.backward(inputs=[h, w])
        res.append((log, h.retains_grad, x.grad, h.grad, w.grad))
    assert res[1][:2] == res[0][:2] == (["h"], True)
    assert_grads(res[1][2:], res[0][2:])


def test_grad_arguments_and_never_touching_grad():
    res = []
    for L in (torch, tl):
        x, w = leaves(L, A34, W42)
        u = L.tensor([1.], requires_grad=True)
        y = L.mm(x.exp(), w)
        s = y.sum()
        r = list(L.autograd.grad(y, [x, w], grad_outputs=L.ones(3, 2) * 2, retain_graph=True))
        r += L.autograd.grad([s, y], [w], grad_outputs=[None, L.ones(3, 2)], retain_graph=True)
        r += L.autograd.grad(s, x, retain_graph=True)
        r += L.autograd.grad(s, [x, u], allow_unused=True, retain_graph=True)
        m = L.autograd.grad(s, [u, w], materialize_grads=True, retain_graph=True)
        r += m
        d = L.autograd.grad(s, {"w": w, "x": x}, retain_graph=True)
        assert list(d) == ["w", "x"]
        r += [d["w"], d["x"]]
        edge = L.autograd.graph.get_gradient_edge(y)
        r += L.autograd.grad(edge, [L.autograd.graph.get_gradient_edge(w)], grad_outputs=[L.ones(3, 2)])
        assert x.grad is None and w.grad is None and u.grad is None
        res.append((r, m[0].requires_grad))
        mg = L.autograd.grad((x * 2).sum(), [x, u], materialize_grads=True, create_graph=True)
        assert mg[1].requires_grad and mg[1].is_leaf
    assert res[1][1] == res[0][1] is False
    assert_grads(res[1][0], res[0][0])


def test_grad_of_non_leaf_and_scalar_leaf_roots():
    res = []
    for L in (torch, tl):
        x, = leaves(L, A34)
        h = x.sin()
        s = (h * h).mean()
        r = list(L.autograd.grad(s, [h, x]))
        c = L.tensor(2.0, requires_grad=True)
        c.backward()  # a leaf as root: its accumulator takes the implicit gradient
        c.backward(L.tensor(3.0))
        r.append(c.grad)
        res.append(r)
    assert_grads(res[1], res[0])


def test_is_grads_batched():
    V = RNG.random((5, 3, 2)).astype(np.float32)
    res = []
    for L in (torch, tl):
        x, w = leaves(L, A34, W42)
        u = L.tensor([1.], requires_grad=True)
        y = L.mm(x.sin(), w).exp()
        r = list(L.autograd.grad(y, [x, w, u], L.tensor(V), is_grads_batched=True, allow_unused=True,
                                 retain_graph=True))
        g = L.autograd.grad(y, [x, w], L.tensor(V), is_grads_batched=True, create_graph=True)
        assert all(t.requires_grad for t in g)
        r += g
        r += L.autograd.grad((g[0] ** 2).sum() + g[1].sum(), [x, w])
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            y.sum().backward()
        res.append(r)
    assert [None if t is None else tuple(t.shape) for t in res[1]] == \
        [None if t is None else tuple(t.shape) for t in res[0]]
    assert_grads(res[1], res[0], rtol=2e-5)


def test_is_grads_batched_frees_the_graph():
    x, w = leaves(tl, A34, W42)
    y = tl.mm(x, w).exp()
    tl.autograd.grad(y, [x], tl.ones(4, 3, 2), is_grads_batched=True)
    assert _FREED in y.grad_fn._for_backward and y.grad_fn.next_functions[0][0]._for_backward[0] is _FREED


def test_create_graph_warning_once_and_only_for_backward():
    import torchlike.autograd as ta
    ta._warned_create_graph.clear()
    x, = leaves(tl, A34)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        tl.autograd.grad((x * x).sum(), x, create_graph=True)
        assert w == []
        (x * x).sum().backward(create_graph=True)
        (x * x).sum().backward(create_graph=True)
    assert len(w) == 1 and str(w[0].message).startswith("Using backward() with create_graph=True will create")


# ----- execution order and hooks ------------------------------------------------------------------------
def _random_graph(L, seed):
    """A random DAG over three leaves; every node gets a pre-hook logging its name in run order."""
    rng = random.Random(seed)
    log = []
    xs = [L.tensor([1. + i, 0.5], requires_grad=True) for i in range(3)]
    pool = list(xs)
    for _ in range(12):
        k = rng.randrange(5)
        a, b = rng.choice(pool), rng.choice(pool)
        pool.append(a * b if k == 0 else a.sin() if k == 1 else a + b if k == 2 else a.exp() * 0.1 if k == 3
                    else a * 0.5)
    out = pool[-4] + pool[-3] + pool[-2] + pool[-1]
    out = out.sum()
    seen, stack = set(), [out.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        tag = f"{n.name()}#{len(seen)}"
        n.register_prehook(lambda g, tag=tag: log.append(tag))
        stack.extend(m for m, _ in n.next_functions)
    return out, log, xs, pool


@pytest.mark.parametrize("seed", range(12))
def test_execution_order_matches_torch(seed):
    res = []
    for L in (torch, tl):
        out, log, xs, pool = _random_graph(L, seed)
        inputs = [xs[0]] + ([pool[5]] if pool[5].requires_grad else [])
        out.backward(inputs=inputs, retain_graph=True)
        log.append("|")
        g = L.autograd.grad(out, [xs[1], pool[6], pool[7]], allow_unused=True, retain_graph=True)
        log.append("|")
        out.backward()
        res.append((log, [x.grad for x in xs] + list(g) + [pool[5].grad if pool[5].retains_grad else None]))
    assert res[1][0] == res[0][0]
    assert_grads(res[1][1], res[0][1], rtol=1e-4)


def test_hook_order_matches_torch():
    def run(L):
        log = []
        a, b = L.tensor([1., 2.], requires_grad=True), L.tensor([3., 4.], requires_grad=True)
        c = a * b
        d, e, f = c.sin(), c.exp(), a.cos()
        g = d * e + f * b
        h = (g + c).sum()
        for k, t in {"c": c, "d": d, "e": e, "f": f, "g": g, "h": h}.items():
            t.grad_fn.register_prehook(lambda go, k=k: log.append("pre_" + k))
            t.grad_fn.register_hook(lambda gi, go, k=k: log.append("post_" + k))
            t.register_hook(lambda gr, k=k: log.append("tensor_" + k))
        for i, (k, t) in enumerate({"a": a, "b": b}.items()):
            t.register_hook(lambda gr, k=k: log.append("tensor_" + k))
            t.register_post_accumulate_grad_hook(lambda t, k=k: log.append(("post_acc_" + k, t.grad is not None)))
            acc = c.grad_fn.next_functions[i][0]
            acc.register_prehook(lambda go, k=k: log.append("acc_pre_" + k))
            acc.register_hook(lambda gi, go, k=k: log.append("acc_post_" + k))
        c.retain_grad()
        # a hook registered after retain_grad still runs before the retained grad is updated;
        # the node pre-hook registered first still runs after it
        c.register_hook(lambda gr: log.append(("tensor_c2", c.grad is None)))
        c.grad_fn.register_prehook(lambda go: log.append(("pre_c2", c.grad is None)))
        h.backward()
        return log
    assert run(tl) == run(torch)


def test_tensor_hooks_replace_gradients():
    res = []
    for L in (torch, tl):
        a, = leaves(L, A34)
        a.register_hook(lambda g: g * 10)
        a.register_hook(lambda g: None)  # None keeps the gradient
        b = a * 3
        b.register_hook(lambda g: g + 1)
        b.retain_grad()
        h = b.register_hook(lambda g: g * 100)
        h.remove()
        (b * b).sum().backward()
        res.append([a.grad, b.grad])
    assert_grads(res[1], res[0])


def test_grad_captures_like_torch():
    """torch captures a gradient before tensor hooks when the node also runs, after them when it does not."""
    res = []
    for L in (torch, tl):
        x, = leaves(L, A34)
        y = x * 2
        z = y * 3
        y.register_hook(lambda g: g * 100)
        x.register_hook(lambda g: g * 7)
        r = list(L.autograd.grad(z.sum(), [y, x], retain_graph=True))
        r += L.autograd.grad(z.sum(), [y], retain_graph=True)
        r += L.autograd.grad(z.sum(), [x])
        res.append(r)
    assert_grads(res[1], res[0])


def test_node_pre_and_post_hooks_change_gradients():
    res = []
    for L in (torch, tl):
        x, = leaves(L, A34)
        y = x.sin()
        z = y * y
        z.grad_fn.register_prehook(lambda go: (go[0] * 2,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
        z.sum().backward()
        res.append([x.grad])
    assert_grads(res[1], res[0])


# ----- long chains, memory, threads ----------------------------------------------------------------------
def test_100k_node_chain_backward_and_free_without_recursion():
    x = tl.tensor([1., 2.], requires_grad=True)
    y = x
    for _ in range(50_000):  # 100,000 nodes: SinBackward0 saves its input, so tensors chain too
        y = y.sin() * 1.0001
    node, depth = y.grad_fn, 0
    while node.next_functions[0][0].name() != "torch::autograd::AccumulateGrad":
        node, depth = node.next_functions[0][0], depth + 1
    assert depth == 100_000 - 1
    first, deep = weakref.ref(node), weakref.ref(y.grad_fn)
    del node
    y.sum().backward()
    assert x.grad is not None and np.isfinite(values(x.grad)).all()
    gc.disable()
    try:
        del y
        assert deep() is None  # freed by reference counting, without recursion errors
    finally:
        gc.enable()
    assert first() is None


def test_no_array_growth_and_no_reference_cycles():
    x = tl.tensor(A34, requires_grad=True)
    w = tl.tensor(W42, requires_grad=True)

    def step():
        h = tl.mm(x, w) + 1.0
        h = (h.sin() * h.exp()) ** 2
        h.retain_grad()
        h.register_hook(lambda g: g * 2)
        y = h.t().reshape((6,)).mean()
        y.backward()
        g, = tl.autograd.grad((w.sin() * w).sum(), w, create_graph=True)
        g.sum().backward()

    for _ in range(5):
        step()
    gc.collect()
    gc.disable()
    try:
        tl.sync()  # (lazy mode: a pending program holds its inputs until it runs)
        n0 = len(jax.live_arrays())
        for _ in range(1000):
            step()
        tl.sync()
        n1 = len(jax.live_arrays())
        assert gc.collect() == 0  # nothing was left to the cycle collector
    finally:
        gc.enable()
    assert n1 <= n0


def test_graph_freed_when_last_output_goes():
    gc.disable()
    try:
        x, = leaves(tl, A34)
        y = x.exp()
        z = (y.sin() * y).sum()
        refs = [weakref.ref(z.grad_fn), weakref.ref(y.grad_fn)]
        del y
        assert all(r() is not None for r in refs)
        del z
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


def test_concurrent_backward_on_separate_graphs():
    errors, results = [], {}

    def worker(k):
        try:
            x = tl.tensor(A34 * (k + 1), requires_grad=True)
            for _ in range(30):
                with tl.no_grad() if k % 2 else tl.enable_grad():
                    pass
                x.grad = None
                (x.sin() * x).sum().backward()
            results[k] = values(x.grad)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(4):
        a = A34.astype(np.float64) * (k + 1)
        np.testing.assert_allclose(results[k], np.cos(a) * a + np.sin(a), rtol=1e-4)


def test_graph_task_id():
    from torchlike.autograd.engine import _current_graph_task_id
    seen = []
    x, = leaves(tl, A34)
    y = x.sin()
    y.grad_fn.register_prehook(lambda g: seen.append(_current_graph_task_id()))
    y.sum().backward()
    assert _current_graph_task_id() == -1 and seen[0] >= 0


def test_slot_never_saved_reads_none_after_backward():
    """x * w with only w requiring grad saves x, not w: after backward _saved_other is None, _saved_self raises."""
    def run(T):
        x = T.tensor([1., 2., 3.])
        w = T.tensor([4., 5., 6.], requires_grad=True)
        y = x * w
        node = y.grad_fn
        y.sum().backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
            node._saved_self
        return node._saved_other
    assert run(tl) is None and run(torch) is None


def test_root_gradient_of_another_float_dtype_is_cast_as_torch():
    """backward(grad) with a float64 gradient for a float32 output: torch's engine casts it to the output's dtype."""
    grads = []
    for m in (torch, tl):
        x = m.ones(3, requires_grad=True)
        y = m.nn.functional.conv1d(x.reshape(1, 1, 3), m.ones(1, 1, 2))
        y.backward(m.tensor([[[1.0, 2.0]]], dtype=m.float64))
        grads.append((str(x.grad.dtype).split(".")[-1], np.asarray(x.grad.detach()).tolist()))
    assert grads[0] == grads[1]


def test_nodes_that_run_their_own_way_take_the_engines_call():
    """The engine runs a node as ``node._apply(grads)``; create_graph and autograd.grad pass a mask too. Every op
    node that replaces ``_apply`` (node_apply=) must take both (cdist's and pdist's once needed the mask: their plain
    backward raised TypeError)."""
    import inspect
    from torchlike.ops._registry import _OpNode

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    own = {cls._name: cls.__dict__["_apply"] for cls in subclasses(_OpNode) if "_apply" in cls.__dict__}
    assert {"CdistBackward0", "PdistBackward0", "TBackward0"} <= set(own)
    for name, fn in own.items():
        params = inspect.signature(fn).parameters
        assert list(params)[:2] == ["node", "grads"] and params["mask"].default is None, name


@pytest.mark.parametrize("fn", [lambda m, x, y: m.cdist(x, y), lambda m, x, y: m.nn.functional.pdist(x),
                                lambda m, x, y: m.cdist(x, y, p=1.0)])
def test_distance_backward_as_torch(fn):
    import torch
    got = []
    for m in (tl, torch):
        x = m.tensor([[0.5, 0.5], [1.0, 2.0], [-1.0, 0.25]], requires_grad=True)
        y = m.tensor([[0.0, 1.0], [2.0, -1.0]], requires_grad=True)
        fn(m, x, y).square().sum().backward()
        got.append([x.grad.tolist(), None if y.grad is None else y.grad.tolist()])
    np.testing.assert_allclose(np.array(got[0][0]), np.array(got[1][0]), rtol=1e-5, atol=1e-5)
    assert (got[0][1] is None) == (got[1][1] is None)
    if got[1][1] is not None:
        np.testing.assert_allclose(np.array(got[0][1]), np.array(got[1][1]), rtol=1e-5, atol=1e-5)
