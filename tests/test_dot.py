"""to_dot / draw: Graphviz pictures of the autograd graph (issue 3, point 9)."""
import re
import sys
import types

import numpy as np
import pytest

import torchlike as tl
import torchlike.nn.functional as F
from torchlike.autograd import _dot
from torchlike.autograd._dot import draw, to_dot


def _mlp():
    rng = np.random.default_rng(0)
    x = tl.tensor(rng.standard_normal((2, 3)).astype(np.float32))
    w = tl.tensor(rng.standard_normal((4, 3)).astype(np.float32), requires_grad=True)
    b = tl.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)
    y = F.relu(F.linear(x, w, b)).sum()
    return y, {"fc.weight": w, "fc.bias": b}


def _parse(text):
    """{id: label} of the boxes and [(src, dst, label or None)] of the edges in DOT text."""
    nodes = {m.group(1): m.group(2).replace("\\n", "\n")
             for m in re.finditer(r'^  (\w+) \[label="((?:[^"\\]|\\.)*)"', text, re.M)}
    edges = []
    for m in re.finditer(r'^  (\w+) -> (\w+)(?: \[(.*)\])?;$', text, re.M):
        label = re.search(r'label="([^"]*)"', m.group(3) or "")
        edges.append((m.group(1), m.group(2), label.group(1) if label else None))
    return nodes, edges


def _ids(nodes, first_line):
    return [k for k, v in nodes.items() if v.split("\n")[0] == first_line]


def _walk(root):
    """Every node and edge (name-level) below a grad_fn, by direct traversal of next_functions."""
    seen, stack, edges = [root], [root], []
    while stack:
        n = stack.pop()
        for m, nr in n.next_functions:
            if m is not None:
                edges.append((n, m, nr))
                if m not in seen:
                    seen.append(m)
                    stack.append(m)
    return seen, edges


def test_mlp_graph():
    y, params = _mlp()
    text = to_dot(y, params=params)
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    nodes, edges = _parse(text)
    graph_nodes, graph_edges = _walk(y.grad_fn)
    # every node once, with its name; leaves show their parameter name, shape and dtype
    labels = sorted(v.split("\n")[0] for k, v in nodes.items() if k.startswith("n"))
    expected = sorted("fc.weight" if n.name().endswith("AccumulateGrad") and n.variable is params["fc.weight"]
                      else "fc.bias" if n.name().endswith("AccumulateGrad") else n.name() for n in graph_nodes)
    assert labels == expected
    assert {"SumBackward0", "ReluBackward0", "AddmmBackward0", "TBackward0"} <= set(labels)
    assert nodes[_ids(nodes, "fc.weight")[0]] == "fc.weight\n(4, 3) float32"
    assert nodes[_ids(nodes, "fc.bias")[0]] == "fc.bias\n(4) float32"
    # every edge, by names
    name_of = {k: v.split("\n")[0] for k, v in nodes.items()}
    node_edges = sorted((name_of[s], name_of[d]) for (s, d, _) in edges if s.startswith("n"))
    pname = {id(t): n for n, t in params.items()}

    def short(n):
        return pname[id(n.variable)] if n.name().endswith("AccumulateGrad") else n.name()
    assert node_edges == sorted((short(a), short(b)) for a, b, _ in graph_edges)
    assert len(graph_edges) == 5
    # the output at the top, pointing at its grad_fn
    assert nodes["o0"] == "() float32" and ("o0", _ids(nodes, "SumBackward0")[0], None) in edges
    # saved tensors: name, shape, dtype, attached to their node
    relu, addmm = _ids(nodes, "ReluBackward0")[0], _ids(nodes, "AddmmBackward0")[0]
    saved = {nodes[s]: d for (s, d, _) in edges if s.startswith("s")}
    assert saved["result\n(2, 4) float32"] == relu
    assert saved["mat1\n(2, 3) float32"] == addmm
    assert "hooks" not in text and "freed" not in text
    # deterministic text
    assert to_dot(y, params=params) == text
    # without params the leaves still show their shape
    plain, _ = _parse(to_dot(y))
    assert "AccumulateGrad\n(4, 3) float32" in plain.values()


def test_freed_saved_tensors():
    y, params = _mlp()
    y.backward()
    nodes, edges = _parse(to_dot(y, params=params))
    relu = _ids(nodes, "ReluBackward0")[0]
    freed = [s for (s, d, _) in edges if s.startswith("s") and d == relu]
    assert [nodes[s] for s in freed] == ["result\n(freed)"]
    assert "mat1\n(freed)" in nodes.values()
    # a saved tensor changed in place is not "freed"
    x = tl.tensor(np.ones(3, np.float32), requires_grad=True)
    h = x * 1
    z = h * h
    h.add_(1)
    nodes, edges = _parse(to_dot(z))
    assert nodes["n0"] == "MulBackward0"  # z's grad_fn: both its saved tensors were changed
    saved = sorted(nodes[s] for (s, d, _) in edges if d == "n0" and s.startswith("s"))
    assert saved == ["other\n(modified in-place)", "self\n(modified in-place)"]


def test_multi_output_edge_label_and_dag():
    a = tl.tensor(np.arange(6, dtype=np.float64), requires_grad=True)
    p = a.split(2)
    z = p[1] * p[2] + p[1]  # split reached three times, a's AccumulateGrad once
    nodes, edges = _parse(to_dot(z, params={"a": a}))
    (split,) = _ids(nodes, "SplitBackward0")
    (mul,) = _ids(nodes, "MulBackward0")
    (add,) = _ids(nodes, "AddBackward0")
    (leaf,) = _ids(nodes, "a")
    assert nodes[leaf] == "a\n(6) float64"
    assert sorted((s, lbl) for (s, d, lbl) in edges if d == split) == sorted([(mul, "1"), (mul, "2"), (add, "1")])
    assert [(d, lbl) for (s, d, lbl) in edges if s == split] == [(leaf, None)]  # output 0: no label
    assert sum(line.startswith(f"  {split} [") for line in to_dot(z).splitlines()) == 1
    # several outputs of one node as roots: one box each, labelled edges to the shared node
    nodes, edges = _parse(to_dot(p[0], p[2]))
    (split,) = _ids(nodes, "SplitBackward0")
    assert edges == [("o0", split, None), ("o1", split, "2"), (split, "n1", None)]
    assert nodes["o0"] == nodes["o1"] == "(2) float64"


def test_hooks_marked():
    y, params = _mlp()
    w, b = params["fc.weight"], params["fc.bias"]
    relu = y.grad_fn.next_functions[0][0]
    addmm = relu.next_functions[0][0]
    h1 = relu.register_prehook(lambda g: None)
    h2 = y.grad_fn.register_hook(lambda gi, go: None)
    h3 = w.register_hook(lambda g: g)
    h4 = b.register_post_accumulate_grad_hook(lambda t: None)
    nodes, _ = _parse(to_dot(y, params=params))
    marked = {v.split("\n")[0]: v.split("\n")[-1] for v in nodes.values() if "hooks:" in v}
    assert marked == {"ReluBackward0": "hooks: pre 1", "SumBackward0": "hooks: post 1",
                      "fc.weight": "hooks: tensor 1", "fc.bias": "hooks: post_accumulate 1"}
    for h in (h1, h2, h3, h4):
        h.remove()
    assert "hooks" not in to_dot(y, params=params)
    # a tensor hook on a non-leaf lives on its grad_fn: that node is marked
    x = tl.tensor(np.ones(3, np.float32), requires_grad=True)
    mid = x * 2
    h5 = mid.register_hook(lambda g: g)
    text = to_dot(mid.sum())
    assert 'label="MulBackward0\\nhooks: tensor 1", fillcolor=lightgrey, color=red' in text
    h5.remove()
    assert "hooks" not in to_dot(mid.sum())
    # a handle used as a context manager: marked inside, gone after
    with addmm.register_hook(lambda gi, go: None):
        assert "AddmmBackward0\\nhooks: post 1" in to_dot(y)
    assert "hooks" not in to_dot(y)


def test_long_chain():
    x = tl.tensor(np.ones(2, np.float32), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y.neg()
    text = to_dot(y, params={"x": x})
    nodes, edges = _parse(text)
    assert sum(v == "NegBackward0" for v in nodes.values()) == 10_000
    assert nodes["n10000"] == "x\n(2) float32"
    assert len(edges) == 10_001


def test_draw_fallback(monkeypatch):
    y, params = _mlp()
    monkeypatch.setitem(sys.modules, "graphviz", None)  # import graphviz -> ImportError
    d = draw(y, params=params)
    source = to_dot(y, params=params)
    assert d.source == source and repr(d) == source and str(d) == source
    assert d._repr_svg_() is None
    assert d._repr_markdown_() == "```dot\n" + source + "```"
    # graphviz importable but no `dot` program: still the text
    monkeypatch.setitem(sys.modules, "graphviz", types.ModuleType("graphviz"))
    monkeypatch.setattr(_dot, "_dot_program", lambda: None)
    d = draw(y)
    assert d._repr_svg_() is None and d._repr_markdown_().startswith("```dot\ndigraph")


def test_draw_svg_with_fake_graphviz(monkeypatch):
    y, params = _mlp()
    calls = []

    class Source:
        def __init__(self, source):
            calls.append(source)

        def pipe(self, format):
            assert format == "svg"
            return b"<svg>fake</svg>"

    fake = types.ModuleType("graphviz")
    fake.Source = Source
    monkeypatch.setitem(sys.modules, "graphviz", fake)
    monkeypatch.setattr(_dot, "_dot_program", lambda: "/usr/bin/dot")
    d = draw(y, params=params)
    assert d._repr_svg_() == "<svg>fake</svg>"
    assert d._repr_markdown_() is None  # Jupyter uses the SVG
    assert calls == [to_dot(y, params=params)]  # rendered once, from the DOT text

    # the `dot` program failing to run falls back to text
    class Broken(Source):
        def pipe(self, format):
            raise OSError("dot not runnable")

    fake.Source = Broken
    d = draw(y)
    assert d._repr_svg_() is None and d._repr_markdown_().startswith("```dot")


@pytest.mark.parametrize("kind", ["leaf", "edge"])
def test_other_roots(kind):
    x = tl.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    if kind == "leaf":  # a leaf as root: its box and its AccumulateGrad
        nodes, edges = _parse(to_dot(x, params={"x": x}))
        assert nodes == {"o0": "x\n(2, 3) float32", "n0": "x\n(2, 3) float32"} and edges == [("o0", "n0", None)]
    else:  # a GradientEdge as root
        y = x.exp()
        edge = tl.autograd.graph.get_gradient_edge(y)
        nodes, edges = _parse(to_dot(edge))
        assert nodes["n0"] == "ExpBackward0" and "o0" not in nodes
        assert nodes["s0"] == "result\n(2, 3) float32"
