"""Pictures of the autograd graph: ``to_dot`` (Graphviz DOT text) and ``draw`` (SVG in Jupyter).

The picture reads top-down: output tensors (green) -> their ``grad_fn`` -> ``next_functions`` ... ->
AccumulateGrad leaves (blue, with shape and, through ``params``, their name). Each node's saved
tensors hang off it (orange, dashed), "(freed)" once a backward released them. Nodes with hooks are
drawn red with a ``hooks:`` line. An edge is labelled with its output number when that is not 0.
Ids are given in visit order (depth-first, ``next_functions`` in order), so the text is
deterministic; the walk is iterative (deep chains are fine) and visits each node once.
Only ``name()``, ``next_functions``, ``_saved_*`` and hook attributes of the nodes are read.
"""
import shutil

from .._internal import AccumulateGrad, gradient_edge
from .._tensor import Tensor

__all__ = ["to_dot", "draw"]


def _shape(t):
    return "(" + ", ".join(str(int(s)) for s in t.shape) + ")"


def _dtype(t):
    return str(t.dtype).rsplit(".", 1)[-1]


def _quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _count(hooks):
    return len(hooks) if hooks else 0


def _hook_summary(node, leaf):
    """``"tensor 1, pre 2"``-style summary of the hooks on ``node`` ("" when it has none)."""
    parts = []
    if leaf is not None:
        parts.append(("tensor", _count(getattr(leaf, "_hooks", None))))
        parts.append(("post_accumulate", _count(getattr(leaf, "_post_acc_hooks", None))))
    tensor_hooks = getattr(node, "_tensor_pre_hooks", None) or {}
    parts.append(("tensor", sum(_count(h) for h in tensor_hooks.values())))
    parts.append(("pre", _count(getattr(node, "_pre_hooks", None))))
    parts.append(("post", _count(getattr(node, "_post_hooks", None))))
    merged = {}
    for kind, n in parts:
        merged[kind] = merged.get(kind, 0) + n
    return ", ".join(f"{kind} {n}" for kind, n in merged.items() if n)


def _saved(node):
    """[(name, Tensor or a note)] for the ``_saved_*`` attributes of ``node`` that hold tensors.

    The note is "(freed)" after a backward without retain_graph, "(modified in-place)" when the
    version check fails (only saved tensors raise on access).
    """
    out = []
    for attr in sorted(a for a in dir(type(node)) if a.startswith("_saved_")):
        try:
            value = getattr(node, attr)
        except RuntimeError as e:
            freed = str(e).startswith("Trying to backward through the graph a second time")
            out.append((attr[len("_saved_"):], "(freed)" if freed else "(modified in-place)"))
            continue
        if isinstance(value, Tensor):
            out.append((attr[len("_saved_"):], value))
    return out


def _roots(tensors):
    """(label tensor or None, node, output_nr) per root; tensors, Nodes and GradientEdges are accepted."""
    roots = []
    for t in tensors:
        if isinstance(t, (list, tuple)) and not hasattr(t, "node"):
            roots.extend(_roots(t))
        elif isinstance(t, Tensor):
            node, nr = gradient_edge(t)
            roots.append((t, node, nr))
        elif hasattr(t, "node") and hasattr(t, "output_nr"):  # GradientEdge
            roots.append((None, t.node, t.output_nr))
        else:  # a Node
            roots.append((None, t, 0))
    return roots


def to_dot(*tensors, params=None):
    """Graphviz DOT text of the autograd graph below ``tensors`` (``params``: name -> tensor, for labels)."""
    names = {id(p): name for name, p in (params or {}).items()}
    lines = ["digraph autograd {",
             '  graph [rankdir=TB, fontsize=12];',
             '  node [shape=box, style=filled, fillcolor=white, fontname=monospace, fontsize=12, '
             'height=0.2];',
             '  edge [fontsize=10];']
    ids = {}  # node -> "n<k>", in order of discovery
    order = []

    def node_id(node):
        nid = ids.get(node)
        if nid is None:
            nid = ids[node] = f"n{len(ids)}"
            order.append(node)
        return nid

    def label_of(t, fallback=""):
        name = names.get(id(t))
        return (name + "\n" if name else fallback) + _shape(t)

    # the outputs at the top
    roots = _roots(tensors)
    for k, (t, node, nr) in enumerate(roots):
        if t is not None:
            lines.append(f"  o{k} [label={_quote(label_of(t) + ' ' + _dtype(t))}, fillcolor=darkolivegreen1];")
            if node is not None:
                lines.append(f"  o{k} -> {node_id(node)}" + (f" [label={_quote(str(nr))}];" if nr else ";"))

    # depth-first, iterative; each node once
    stack = [node for _, node, _ in reversed(roots) if node is not None]
    done = set()
    body = []
    saved_count = 0
    while stack:
        node = stack.pop()
        if node in done:
            continue
        done.add(node)
        nid = node_id(node)
        leaf = node.variable if isinstance(node, AccumulateGrad) else None
        if leaf is not None:
            label = label_of(leaf, "AccumulateGrad\n") + " " + _dtype(leaf)
            fill = "lightblue"
        else:
            label = node.name()
            fill = "lightgrey"
        hooks = _hook_summary(node, leaf)
        attrs = ""
        if hooks:
            label += "\nhooks: " + hooks
            attrs = ", color=red, penwidth=2"
        body.append(f"  {nid} [label={_quote(label)}, fillcolor={fill}{attrs}];")
        for name, value in _saved(node):
            sid = f"s{saved_count}"
            saved_count += 1
            if isinstance(value, str):
                text = f"{name}\n{value}"
            else:
                pname = names.get(id(value))
                text = f"{name}{' (' + pname + ')' if pname else ''}\n{_shape(value)} {_dtype(value)}"
            body.append(f"  {sid} [label={_quote(text)}, fillcolor=orange];")
            body.append(f"  {sid} -> {nid} [style=dashed, arrowhead=none];")
        children = []
        for nxt, nr in node.next_functions:
            if nxt is None:
                continue
            body.append(f"  {nid} -> {node_id(nxt)}" + (f" [label={_quote(str(nr))}];" if nr else ";"))
            if nxt not in done:
                children.append(nxt)
        stack.extend(reversed(children))
    lines.extend(body)
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_program():
    return shutil.which("dot")


class Digraph:
    """What ``draw`` returns: ``.source`` is the DOT text; Jupyter shows SVG when Graphviz is available."""

    _NOT_RENDERED = object()

    def __init__(self, source):
        self.source = source
        self._svg = self._NOT_RENDERED

    def svg(self):
        """The SVG text, or None when the ``graphviz`` package or the ``dot`` program is missing."""
        if self._svg is self._NOT_RENDERED:
            self._svg = self._render()
        return self._svg

    def _render(self):
        try:
            import graphviz
        except ImportError:
            return None
        if _dot_program() is None:
            return None
        errors = (OSError,) + tuple(e for e in (getattr(graphviz, "ExecutableNotFound", None),) if e)
        try:
            out = graphviz.Source(self.source).pipe(format="svg")
        except errors:
            return None
        return out.decode("utf-8") if isinstance(out, bytes) else out

    def _repr_svg_(self):
        return self.svg()

    def _repr_markdown_(self):
        if self.svg() is not None:
            return None
        return "```dot\n" + self.source + "```"

    def __repr__(self):
        return self.source

    __str__ = __repr__


def draw(*tensors, params=None):
    """``to_dot`` wrapped in an object Jupyter shows as SVG (graphviz + dot present) or as DOT text."""
    return Digraph(to_dot(*tensors, params=params))
