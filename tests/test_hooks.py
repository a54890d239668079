"""Node API, hook order, GradientEdge and multi-grad hooks, each recorded in torchlike and in torch and compared."""
import gc
import logging
import threading
import warnings
import weakref

import numpy as np
import pytest
import torch

import torchlike as tl

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 7 + 0.1


def both(fn):
    """Run ``fn(lib)`` with torchlike and with torch; return both results."""
    return fn(tl), fn(torch)


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - we compare exception types and messages
        return type(e).__name__, str(e)
    return None


# 1. Node API

def test_node_api():
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = (x * 2).sum(0)
        n = y.grad_fn
        acc = n.next_functions[0][0].next_functions[0][0]
        n.metadata["k"] = 1
        meta = n._input_metadata
        return [n.name(), isinstance(n, lib.autograd.graph.Node), isinstance(acc, lib.autograd.graph.Node),
                acc.name(), acc.variable is x, n.metadata is n.metadata, dict(n.metadata),
                type(meta).__name__, [(tuple(m.shape), str(m.dtype).split(".")[-1], str(m.device)) for m in meta],
                type(n._sequence_nr()).__name__, n._sequence_nr() > n.next_functions[0][0]._sequence_nr()]
    a, b = both(run)
    assert a == b


@pytest.mark.parametrize("kind", ["list", "count", "dtype", "shape", "int", "none", "post_count"])
def test_hook_return_checks(kind):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        c = lib.tensor(X)
        y = x * c
        if kind == "post_count":
            def bad(gi, go):
                return gi + gi
            y.grad_fn.register_hook(bad)
        elif kind == "none":
            def bad(gi, go):
                return (gi[0], go[0])  # replaces the None gradient of the constant
            y.grad_fn.register_hook(bad)
        else:
            def bad(go):
                g = go[0]
                return {"list": [g], "count": (g, g), "dtype": (g.double(),), "shape": (g[:1],), "int": (3,)}[kind]
            y.grad_fn.register_prehook(bad)
        return _err(lambda: y.sum().backward())
    a, b = both(run)
    assert b is not None
    assert a == b


def test_handles_remove_and_context_manager():
    def run(lib):
        log = []
        x = lib.tensor(X, requires_grad=True)
        y = x * 3
        with y.grad_fn.register_prehook(lambda go: log.append("pre")):
            pass
        h = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        h.remove()
        h.remove()  # idempotent
        x.register_hook(lambda g: log.append("leaf")).remove()
        x.register_post_accumulate_grad_hook(lambda t: log.append("acc")).remove()
        y.register_hook(lambda g: log.append("kept"))
        y.sum().backward()
        return log
    a, b = both(run)
    assert a == b == ["kept"]


@pytest.mark.parametrize("leaf", [True, False])
def test_handle_does_not_keep_hook_alive(leaf):
    class Hook:
        def __call__(self, g):
            return None

    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        t = x if leaf else x * 2
        f = Hook()
        ref = weakref.ref(f)
        handle = t.register_hook(f)
        del f, t, x
        gc.collect()
        return ref() is None, handle is not None
    a, b = both(run)
    assert a == b == (True, True)


# 2. Order

def _order_graph(lib):
    log = []
    x = lib.tensor(X, requires_grad=True)
    y = x * 2
    z = y.sin()
    y.retain_grad()
    y.register_hook(lambda g: log.append(("tensor1", y.grad is None)) or g * 2)
    y.register_hook(lambda g: log.append(("tensor2", round(float(g.sum()), 4))))
    y.grad_fn.register_prehook(lambda go: log.append(("pre", y.grad is None, round(float(go[0].sum()), 4))))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", x.grad is None, len(gi), len(go))))
    x.register_hook(lambda g: log.append(("leaf", x.grad is None)))
    x.register_post_accumulate_grad_hook(
        lambda t: log.append(("post_acc", t is x, t.grad is not None, lib.is_grad_enabled())))
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: log.append(("acc_pre", x.grad is None)))
    acc.register_hook(lambda gi, go: log.append(("acc_post", x.grad is None, len(gi), len(go))))
    return log, x, y, z


def test_hook_order_backward():
    def run(lib):
        log, x, y, z = _order_graph(lib)
        z.sum().backward()
        return log, round(float(y.grad.sum()), 4), round(float(x.grad.sum()), 4)
    a, b = both(run)
    assert a == b
    # tensor hooks, retain_grad update (seen by the pre-hook), pre-hook, node, post-hook
    assert [e[0] for e in b[0]] == ["tensor1", "tensor2", "pre", "post", "leaf", "acc_pre", "post_acc", "acc_post"]
    assert b[0][2][1] is False


def test_hook_order_grad():
    def run(lib):
        log, x, y, z = _order_graph(lib)
        g = lib.autograd.grad(z.sum(), x)
        return log, round(float(g[0].sum()), 4), x.grad is None
    a, b = both(run)
    assert a == b
    assert [e[0] for e in b[0]][-1] == "leaf"  # leaf tensor hooks fire under grad, AccumulateGrad does not run


def _chain(lib):
    log = []
    x = lib.tensor(X, requires_grad=True)
    a = x * 2
    b = a.sin()
    c = b * 3
    for name, t in [("x", x), ("a", a), ("b", b)]:
        t.register_hook(lambda g, n=name: log.append(("tensor", n)))
    for name, t in [("a", a), ("b", b), ("c", c)]:
        t.grad_fn.register_prehook(lambda go, n=name: log.append(("pre", n)))
        t.grad_fn.register_hook(lambda gi, go, n=name: log.append(("post", n)))
    a.grad_fn.next_functions[0][0].register_prehook(lambda go: log.append(("pre", "acc")))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post_acc", "x")))
    return log, x, a, b, c


@pytest.mark.parametrize("how", ["backward_b", "backward_a", "grad_b", "grad_ab", "grad_x", "grad_bx"])
def test_inputs_backward_vs_grad(how):
    def run(lib):
        log, x, a, b, c = _chain(lib)
        t = {"x": x, "a": a, "b": b}
        names = how.split("_")[1]
        inputs = [t[n] for n in names]
        if how.startswith("backward"):
            c.sum().backward(inputs=inputs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # reading .grad of non-leaves
                return log, [None if v.grad is None else round(float(v.grad.sum()), 4) for v in (x, a, b)]
        g = lib.autograd.grad(c.sum(), inputs)
        return log, [round(float(v.sum()), 4) for v in g]
    a, b = both(run)
    assert a == b


def test_inplace_keeps_hooks_on_old_node_retain_grad_follows():
    def run(lib):
        log = []
        x = lib.tensor(X, requires_grad=True)
        y = x * 1
        y.retain_grad()
        y.register_hook(lambda g: log.append(("old", round(float(g.sum()), 4))))
        y.mul_(5)
        y.register_hook(lambda g: log.append(("new", round(float(g.sum()), 4))))
        (y * 2).sum().backward()
        return log, round(float(y.grad.sum()), 4), y.grad_fn.name()
    a, b = both(run)
    assert a == b


def test_hooks_chain_and_replace():
    def run(lib):
        log = []
        x = lib.tensor(X, requires_grad=True)
        y = x * 1
        y.register_hook(lambda g: g * 2)
        y.register_hook(lambda g: log.append(round(float(g.sum()), 4)) or g + 1)
        x.register_hook(lambda g: log.append(round(float(g.sum()), 4)) or g * 10)
        x.register_hook(lambda g: log.append(round(float(g.sum()), 4)))
        y.sum().backward(retain_graph=True)
        g = lib.autograd.grad(y.sum(), x, retain_graph=True)
        y.grad_fn.register_prehook(lambda go: (go[0] * 0,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,) + gi[1:])
        x.grad = None
        (x * 1).sum().backward()  # a different graph: no hooks except x's leaf hooks
        g2 = lib.autograd.grad(y.sum(), x, retain_graph=True)
        return log, np.asarray(g[0].tolist()).round(4).tolist(), np.asarray(g2[0].tolist()).round(4).tolist()
    a, b = both(run)
    assert a == b


# 3. GradientEdge

def test_gradient_edge():
    def run(lib):
        gge = lib.autograd.graph.get_gradient_edge
        out = []
        x = lib.tensor(X, requires_grad=True)
        y = x.sin()
        loss = (y * 2).sum()
        e = gge(x)
        out.append((e.node.name(), e.output_nr, isinstance(e, tuple), isinstance(e, lib.autograd.graph.GradientEdge)))
        g1 = lib.autograd.grad(loss, e, retain_graph=True)[0]
        g2 = lib.autograd.grad(loss, x, retain_graph=True)[0]
        out.append(np.allclose(np.asarray(g1.tolist()), np.asarray(g2.tolist())))
        out.append(lib.autograd.grad(loss, gge(y), retain_graph=True)[0].tolist())
        g3 = lib.autograd.grad(gge(y), x, grad_outputs=lib.ones_like(y), retain_graph=True)[0]
        out.append(np.asarray(g3.tolist()).round(5).tolist())
        out.append(_err(lambda: lib.autograd.grad(gge(y), x, retain_graph=True)))
        lib.autograd.backward(gge(y), lib.ones_like(y), inputs=[gge(x)], retain_graph=True)
        out.append(np.asarray(x.grad.tolist()).round(5).tolist())
        out.append(_err(lambda: gge(lib.tensor(X))))
        out.append(_err(lambda: lib.autograd.grad(loss, [x, 3])))
        out.append(_err(lambda: lib.autograd.grad(loss, [e], retain_graph=True, materialize_grads=True)))
        s = lib.tensor(np.ones((1, 1), np.float32), requires_grad=True) * 3
        out.append(lib.autograd.grad(gge(s), [s])[0].tolist())
        return out
    a, b = both(run)
    assert a == b


# 4. register_multi_grad_hook

def test_multi_grad_hook_all():
    def run(lib):
        out = []
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X, requires_grad=True)
        c = a * b
        d = a * b
        h = lib.autograd.graph.register_multi_grad_hook((a, b, c, d),
                                                        lambda gs: out.append([g is not None for g in gs]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        out.append(_err(lambda: lib.autograd.grad(c.sum(), (a,), retain_graph=True)))
        out.append(lib.autograd.grad((c * 2).sum(), (c,), retain_graph=True)[0].tolist())
        (c.sum() + d.sum()).backward(retain_graph=True)
        h.remove()
        c.sum().backward(retain_graph=True)
        out.append(type(h).__name__)
        out.append(_err(lambda: lib.autograd.graph.register_multi_grad_hook((a,), print, mode="x")))
        return out
    x, y = both(run)
    assert x == y
    assert y[:2] == [[True, True, True, False], [True, False, True, False]]


def test_multi_grad_hook_any():
    def run(lib):
        out = []
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(X)
        c = a * 3
        lib.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: out.append(np.asarray(g.tolist()).sum()),
                                                    mode="any")
        (c * 2).sum().backward(retain_graph=True)
        c.sum().backward()
        return [round(float(v), 4) for v in out]
    a, b = both(run)
    assert a == b


def test_multi_grad_hook_threads():
    """Per-backward state: concurrent backwards in threads each call fn once with their own gradients."""
    results = []
    xs = [tl.tensor(X * (i + 1), requires_grad=True) for i in range(4)]

    def work(i):
        x = xs[i]
        y = x * 2
        tl.autograd.graph.register_multi_grad_hook((x, y), lambda gs: results.append((i, float(gs[0].sum()))))
        (y * (i + 1)).sum().backward()
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [(i, pytest.approx(2.0 * (i + 1) * 6)) for i in range(4)]


def test_graph_task_id_and_will_execute():
    from torchlike.autograd import engine
    seen = []
    x = tl.tensor(X, requires_grad=True)
    y = x * 2
    z = y.sin()
    other = (x * 5).grad_fn
    y.register_hook(lambda g: seen.append((engine._current_graph_task_id(),
                                           engine._will_engine_execute_node(y.grad_fn),
                                           engine._will_engine_execute_node(other))))
    assert engine._current_graph_task_id() == -1
    z.sum().backward(retain_graph=True)
    z.sum().backward(retain_graph=True)
    assert seen[0][1:] == seen[1][1:] == (True, False)
    assert seen[0][0] != seen[1][0]
    with pytest.raises(RuntimeError, match="only be called during the backward pass"):
        engine._will_engine_execute_node(other)


# 6. Debug logging

class _ListHandler(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _logged(logger_name, fn):
    """Messages ``fn()`` logs on ``logger_name`` with the logger at DEBUG (torch's loggers do not propagate)."""
    logger = logging.getLogger(logger_name)
    handler, level = _ListHandler(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        fn()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    return handler.messages


def test_debug_logging():
    def run(lib, logger):
        x = lib.tensor(X, requires_grad=True)
        a, _ = (x.sin() * 2).split(1)
        msgs = _logged(logger, lambda: a.sum().backward())
        return [m.split(" ")[1].lstrip("<") + " " + m.split(" with ")[1] for m in msgs]
    a = run(tl, "torchlike.autograd")
    b = run(torch, "torch.autograd.graph")
    assert a == b == ["SumBackward0 grad_outputs: [f32[]]", "SplitBackward0 grad_outputs: [f32[1, 3],None]",
                      "MulBackward0 grad_outputs: [f32[2, 3]]", "SinBackward0 grad_outputs: [f32[2, 3]]",
                      "AccumulateGrad grad_outputs: [f32[2, 3]]"]
    x = tl.tensor(X, requires_grad=True)
    y = x * 2
    msgs = _logged("torchlike.autograd", lambda: y.sum().backward(retain_graph=True))
    assert msgs[0].startswith("Executing: <SumBackward0 object at 0x")
    assert not y.grad_fn._pre_hooks  # the temporary logging hooks are gone
    handler = _ListHandler()
    logging.getLogger("torchlike.autograd").addHandler(handler)
    try:
        y.sum().backward()  # logger not at DEBUG: nothing logged
    finally:
        logging.getLogger("torchlike.autograd").removeHandler(handler)
    assert handler.messages == []


def test_increment_version_matches_torch():
    def run(T):
        x = T.tensor([1., 2.], requires_grad=True)
        y = x * 2
        z = y * y  # saves y at version 0
        T.autograd.graph.increment_version(y)
        T.autograd.graph.increment_version([x, y])
        with pytest.raises(RuntimeError) as err:
            z.sum().backward()
        T.autograd.graph.set_warn_on_accumulate_grad_stream_mismatch(False)
        return x._version, y._version, str(err.value).split(";")[0]
    assert run(tl) == run(torch)
