"""torch's pytree rules (``torch.utils._pytree``) on ``jax.tree_util``, as the library's flattening needs them.

Where the two differ, torch's rule is kept by ``_torch_leaf``:
- ``None`` is a leaf in torch (an empty node in JAX);
- only tuples (namedtuples too), lists and dicts are nodes in torch; JAX would also flatten other registered
  types, e.g. a torchlike Tensor once ``interop`` is imported.

One difference stays: JAX orders a dict's leaves (and an unflattened dict's keys) by sorted key, torch by
insertion. Only the legacy API's saved values may hold dicts; schema arguments and returns never do.
``_spec_repr`` prints a treedef as torch prints its ``TreeSpec`` (for torch's structure error messages).
"""
import jax


def _torch_leaf(x):
    return x is None or not isinstance(x, (list, tuple, dict))


def _tree_flatten(tree, is_leaf=None):
    """(leaves, treedef) with torch's leaves; ``is_leaf`` can make more subtrees leaves."""
    leaf = _torch_leaf if is_leaf is None else (lambda x: _torch_leaf(x) or is_leaf(x))
    return jax.tree_util.tree_flatten(tree, is_leaf=leaf)


def _tree_leaves(tree):
    return jax.tree_util.tree_leaves(tree, is_leaf=_torch_leaf)


def _tree_map(fn, tree):
    return jax.tree_util.tree_map(fn, tree, is_leaf=_torch_leaf)


def _spec_repr(spec, indent=0):
    """A treedef as torch's ``repr(TreeSpec)``: ``TreeSpec(list, None, [*,\\n  *])``."""
    data = spec.node_data()
    if data is None:
        return "*"
    typ, context = data
    name = typ.__name__
    if typ is dict:
        context = list(context)
    elif issubclass(typ, tuple) and hasattr(typ, "_fields"):
        name, context = "namedtuple", typ
    children = spec.children()
    text = f"TreeSpec({name}, {context}, ["
    if children:
        indent += 2
        text += ",".join(("\n" + " " * indent if i else "") + _spec_repr(c, indent) for i, c in enumerate(children))
    return text + "])"
