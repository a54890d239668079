"""Split backward (torchlike.distributed.pipelining) against torch's own private module on the same graphs.

Each case builds the same stage in both libraries from the same NumPy weights (a chain of Linear layers, shared
weights, an nn.Module with a skip connection, nested outputs) and compares ``stage_backward``,
``stage_backward_input`` and ``stage_backward_weight``: returned gradients, ``.grad`` of inputs and parameters,
the ``param_groups`` (which parameters, which intermediate nodes), detached outputs, errors; and that the split
passes give exactly the gradients of one plain backward.
"""
import gc

import jax
import numpy as np
import pytest
import torch
from torch.distributed.pipelining import _backward as TB

import torchlike as tl
from torchlike.distributed.pipelining import _backward as LB
from torchlike.distributed import pipelining
from oracle import assert_same

RNG = np.random.default_rng(3)
X = RNG.standard_normal((2, 4))
W1, B1 = RNG.standard_normal((5, 4)), RNG.standard_normal(5)
W2, B2 = RNG.standard_normal((3, 5)), RNG.standard_normal(3)
G = RNG.standard_normal((2, 3))


class Stage:
    """A two-layer stage, ``tanh(x @ W1.T + b1) @ W2.T + b2`` (+ ``x @ W1.T`` again with ``shared``), built in one
    library; ``skip`` adds a second output path from the input."""

    def __init__(self, m, shared=False, skip=False, input_grad=True):
        self.m = m
        self.params = {name: m.tensor(a, requires_grad=True) for name, a in
                       (("w1", W1), ("b1", B1), ("w2", W2), ("b2", B2))}
        self.x = m.tensor(X, requires_grad=input_grad)
        self.shared, self.skip = shared, skip

    def forward(self):
        F, p = self.m.nn.functional, self.params
        h = self.m.tanh(F.linear(self.x, p["w1"], p["b1"]))
        if self.shared:
            h = h * F.linear(self.x, p["w1"])
        out = F.linear(h, p["w2"], p["b2"])
        if self.skip:
            out = out + self.x[:, :3].sin()
        return out

    def weights(self):
        return list(self.params.values())

    def names(self):
        return {id(t): n for n, t in self.params.items()} | {id(self.x): "x"}


def _groups(stage, groups):
    """param_groups as comparable data: (sorted parameter names, sorted intermediate node names) per group."""
    names = stage.names()
    out = []
    for g in groups:
        params = sorted(names[id(acc.variable)] for acc in g["params"])
        out.append((params, sorted(n.name() for n in g["intermediates"])))
    return sorted(out)


def _both(**kw):
    return Stage(tl, **kw), Stage(torch, **kw)


@pytest.mark.parametrize("kw", [{}, {"shared": True}, {"skip": True}, {"shared": True, "skip": True}])
def test_stage_backward_input_then_weight_as_torch(kw):
    ours, theirs = _both(**kw)
    outs = {}
    for st, lib, mod in ((ours, tl, LB), (theirs, torch, TB)):
        out = st.forward()
        dinputs, groups = mod.stage_backward_input([out], [lib.tensor(G)], [st.x], st.weights())
        outs[lib] = (out, dinputs, groups, st)
    (o1, d1, g1, s1), (_, d2, g2, s2) = outs[tl], outs[torch]
    assert len(d1) == len(d2) == 1
    assert_same(d1[0], d2[0])
    assert_same(s1.x.grad, s2.x.grad)
    assert _groups(s1, g1) == _groups(s2, g2)
    assert [len(g["grads"]) for g in g1] == [len(g["grads"]) for g in g2]
    assert not o1.requires_grad and o1.grad_fn is None  # outputs detached in place, as torch
    assert all(p.grad is None for p in s1.weights())
    before = LB.stage_backward_weight(s1.weights(), g1)
    before_t = TB.stage_backward_weight(s2.weights(), g2)
    assert before == (None,) * 4 and before_t == (None,) * 4  # .grad as it was before the weight pass
    for p, q in zip(s1.weights(), s2.weights()):
        assert_same(p.grad, q.grad)
    assert all("intermediates" not in g and "grads" not in g for g in g1)


@pytest.mark.parametrize("kw", [{}, {"shared": True, "skip": True}])
def test_split_passes_equal_one_plain_backward(kw):
    split, plain = Stage(tl, **kw), Stage(tl, **kw)
    _, groups = LB.stage_backward_input([split.forward()], [tl.tensor(G)], [split.x], split.weights())
    LB.stage_backward_weight(split.weights(), groups)
    plain.forward().backward(tl.tensor(G))
    for p, q in zip(split.weights() + [split.x], plain.weights() + [plain.x]):
        np.testing.assert_array_equal(np.asarray(p.grad._data), np.asarray(q.grad._data))


def test_weight_pass_accumulates_and_returns_the_old_grads():
    ours, theirs = _both()
    for st, lib, mod in ((ours, tl, LB), (theirs, torch, TB)):
        for p in st.weights():
            p.grad = lib.ones_like(p)
        _, groups = mod.stage_backward_input([st.forward()], [lib.tensor(G)], [st.x], st.weights())
        old = mod.stage_backward_weight(st.weights(), groups)
        # the .grad objects from before the pass, which `+=` then updated in place (torch's quirk)
        assert all(o is p.grad for o, p in zip(old, st.weights()))
        assert all(not (p.grad == 1).all() for p in st.weights())
    for p, q in zip(ours.weights(), theirs.weights()):
        assert_same(p.grad, q.grad)


def test_first_stage_and_outputs_without_grad_fn():
    """A stage whose input needs no gradient: no dinputs, no groups (torch does the weights in its full backward);
    an output without history is skipped; a loss stage with output_grads=None uses ones."""
    ours, theirs = _both(input_grad=False)
    res = {}
    for st, lib, mod in ((ours, tl, LB), (theirs, torch, TB)):
        plain = lib.tensor(np.ones(3))  # no grad_fn, no requires_grad: skipped
        d, groups = mod.stage_backward_input([st.forward(), plain], [lib.tensor(G), None], [st.x, 7], st.weights())
        res[lib] = (d, groups)
    assert res[tl][0] == res[torch][0] == (None, None)
    assert res[tl][1] == res[torch][1] == []
    ours, theirs = _both()
    for st, lib, mod in ((ours, tl, LB), (theirs, torch, TB)):
        loss = st.forward().sum()
        d, groups = mod.stage_backward_input([loss], None, [st.x], st.weights())
        mod.stage_backward_weight(st.weights(), groups)
        res[lib] = d
    assert_same(res[tl][0], res[torch][0])
    for p, q in zip(ours.weights(), theirs.weights()):
        assert_same(p.grad, q.grad)


def test_stage_backward_nested_outputs_as_torch():
    res = {}
    for lib, mod in ((tl, LB), (torch, TB)):
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W1, requires_grad=True)
        y = x @ w.T
        out = {"a": (y.sin(), [y * 2, "tag"]), "b": y.exp().sum(), "c": lib.ones(2)}  # "c": no history, skipped
        g = {"a": (lib.ones(2, 5, dtype=lib.float64), [lib.full((2, 5), 0.5, dtype=lib.float64), None]), "b": None,
             "c": None}
        grads = mod.stage_backward(out, g, [x, 3, None])
        res[lib] = (grads, x.grad, w.grad)
    (g1, xg1, wg1), (g2, xg2, wg2) = res[tl], res[torch]
    assert g1[1:] == g2[1:] == (None, None)
    assert_same(g1[0], g2[0])
    assert xg1 is None and xg2 is None  # stage_backward resets the inputs' .grad
    assert_same(wg1, wg2)


def test_stage_backward_with_an_nn_module_stage():
    res = {}
    for lib, mod in ((tl, LB), (torch, TB)):
        lib.manual_seed(0)
        net = lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.Tanh(), lib.nn.Linear(5, 3))
        with lib.no_grad():
            for p, a in zip(net.parameters(), (W1, B1, W2, B2)):
                p.copy_(lib.tensor(a))
        x = lib.tensor(X, dtype=lib.float32, requires_grad=True)
        grads = mod.stage_backward(net(x), lib.tensor(G, dtype=lib.float32), [x])
        res[lib] = (grads, [p.grad for p in net.parameters()])
    assert_same(res[tl][0][0], res[torch][0][0])
    for p, q in zip(res[tl][1], res[torch][1]):
        assert_same(p, q, atol=1e-5)  # (float32 sums over the batch: rounding differs with the tests' XLA flags)


def test_stage_backward_errors_as_torch():
    cases = [
        lambda m: ((m.tensor(X, requires_grad=True) * 2,), (3,)),          # a gradient that is not a tensor
        lambda m: ((m.tensor(X, requires_grad=True) * 2,), [None, None]),  # lengths differ
        lambda m: ({"a": m.tensor(X, requires_grad=True) * 2}, {"b": None}),  # keys differ
        lambda m: ({"a": m.tensor(X, requires_grad=True) * 2}, (None,)),   # not a dict
    ]
    for case in cases:
        msgs = []
        for lib, mod in ((tl, LB), (torch, TB)):
            out, g = case(lib)
            with pytest.raises(RuntimeError) as info:
                mod.stage_backward(out, g, [])
            cause = info.value.__cause__
            msgs.append((str(info.value).split("Stage output")[0], type(cause), str(cause).replace("torchlike", "torch")))
        assert msgs[0] == msgs[1]


def test_get_grad_fn_error_in_no_grad_context():
    for lib, mod in ((tl, LB), (torch, TB)):
        x = lib.tensor(X, requires_grad=True)
        with lib.no_grad():
            with pytest.raises(RuntimeError, match=r"^Attempted to get grad_fn, but got None\.Is this being created"):
                mod._get_grad_fn_or_grad_acc(x)


def test_weight_branch_saved_tensors_released_after_the_weight_pass():
    """The input pass keeps the weight branches' saved tensors (retain_graph); the weight pass frees them."""
    st = Stage(tl, shared=True)
    out = st.forward()
    _, groups = LB.stage_backward_input([out], [tl.tensor(G)], [st.x], st.weights())
    del out
    nodes = [n for g in groups for n in g["intermediates"]]
    assert nodes and all(n._for_backward and "freed" not in repr(n._for_backward) for n in nodes)
    gc.collect()
    live = len(jax.live_arrays())
    LB.stage_backward_weight(st.weights(), groups)
    gc.collect()
    assert all(not n._for_backward or all(s is LB_FREED for s in n._for_backward) for n in nodes)
    del nodes, groups
    gc.collect()
    assert len(jax.live_arrays()) < live


LB_FREED = __import__("torchlike.autograd.graph", fromlist=["_FREED"])._FREED


def test_public_names():
    assert set(pipelining.__all__ if hasattr(pipelining, "__all__") else dir(pipelining)) >= {
        "stage_backward", "stage_backward_input", "stage_backward_weight"}
