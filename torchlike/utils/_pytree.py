"""torch.utils._pytree: nested containers flattened to their leaves and rebuilt, with torch's semantics (not
JAX's): tuple, list, dict, namedtuple, OrderedDict, defaultdict and deque are nodes, everything else (None and
tensors included) is a leaf, and dicts keep their insertion order. ``tree_flatten`` gives ``(leaves, spec)``,
the ``TreeSpec`` prints and compares as torch's, and ``register_pytree_node`` adds a container type. Key paths
and TreeSpec serialisation are not here."""
import collections
import functools
import threading
import types
import warnings
from collections import OrderedDict, defaultdict, deque, namedtuple
from typing import Any, Callable, NamedTuple

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "PyTreeSpec", "TreeSpec", "LeafSpec",
           "register_pytree_node", "tree_is_leaf", "tree_flatten", "tree_unflatten", "tree_iter", "tree_leaves",
           "tree_structure", "tree_map", "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance"]

PyTree = Any
Context = Any
FlattenFn = Callable[[PyTree], tuple[list[Any], Context]]
UnflattenFn = Callable[[list[Any], Context], PyTree]


class NodeDef(NamedTuple):
    type: Any
    flatten_fn: FlattenFn
    unflatten_fn: UnflattenFn
    flatten_with_keys_fn: Any


SUPPORTED_NODES = {}  # type -> NodeDef
_NODE_REGISTRY_LOCK = threading.Lock()


def _register(cls, flatten_fn, unflatten_fn, to_dumpable_context=None, from_dumpable_context=None,
              flatten_with_keys_fn=None):
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the previous registration.",
                          stacklevel=3)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} must be None or "
                             "registered.")


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None, to_dumpable_context=None,
                         from_dumpable_context=None, flatten_with_keys_fn=None):
    """Make ``cls`` a node: ``flatten_fn(x) -> (children, context)``, ``unflatten_fn(children, context) -> x``
    (the serialisation arguments are accepted, not used)."""
    with _NODE_REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
    _register(cls, flatten_fn, unflatten_fn, to_dumpable_context, from_dumpable_context, flatten_with_keys_fn)


def _register_pytree_node(cls, flatten_fn, unflatten_fn, to_str_fn=None, maybe_from_str_fn=None, *,
                          serialized_type_name=None, to_dumpable_context=None, from_dumpable_context=None,
                          flatten_with_keys_fn=None):
    """Deprecated: ``register_pytree_node`` (re-registering overwrites, with a warning)."""
    warnings.warn("`torch.utils._pytree._register_pytree_node` is deprecated. Please use "
                  "`torch.utils._pytree.register_pytree_node` instead.", FutureWarning, stacklevel=2)
    if to_str_fn is not None or maybe_from_str_fn is not None:
        warnings.warn("`to_str_fn` and `maybe_from_str_fn` is deprecated. Please use `to_dumpable_context` and "
                      "`from_dumpable_context` instead.", FutureWarning, stacklevel=2)
    _register(cls, flatten_fn, unflatten_fn, to_dumpable_context, from_dumpable_context, flatten_with_keys_fn)


def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class."""
    return (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(f) is str for f in cls._fields) and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    """Whether ``obj`` (a class or an instance) is a namedtuple."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    """Whether ``obj`` is a namedtuple instance."""
    return is_namedtuple_class(type(obj))


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _defaultdict_unflatten(values, context):
    default_factory, keys = context
    return defaultdict(default_factory, zip(keys, values))


_register(tuple, lambda t: (list(t), None), lambda values, _: tuple(values))
_register(list, lambda lst: (lst, None), lambda values, _: list(values))
_register(dict, _dict_flatten, lambda values, keys: dict(zip(keys, values)))
_register(namedtuple, lambda t: (list(t), type(t)), lambda values, cls: cls(*values))
_register(OrderedDict, _dict_flatten, lambda values, keys: OrderedDict(zip(keys, values)))
_register(defaultdict, lambda d: (list(d.values()), [d.default_factory, list(d.keys())]), _defaultdict_unflatten)
_register(deque, lambda d: (list(d), d.maxlen), lambda values, maxlen: deque(values, maxlen=maxlen))

_STANDARD_DICT_TYPES = frozenset({dict, OrderedDict, defaultdict})
_BUILTIN_TYPES = frozenset({tuple, list, dict, namedtuple, OrderedDict, defaultdict, deque})


def _get_node_type(tree):
    """The registry key of ``tree``: its type, or ``namedtuple`` for every namedtuple."""
    return namedtuple if is_namedtuple_class(type(tree)) else type(tree)


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: not a registered node type (or ``is_leaf(tree)`` says so)."""
    if is_leaf is not None and is_leaf(tree):
        return True
    return _get_node_type(tree) not in SUPPORTED_NODES


class TreeSpec:
    """The structure of a pytree: the root's node ``type``, its ``context`` (dict keys, namedtuple class, ...)
    and a spec per child; ``num_leaves``, ``num_nodes``, ``num_children``."""

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):  # noqa: A002 - torch's parameter name
        self.type, self._context, self._children = type, context, children_specs
        if type is None:  # a leaf
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
        self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
        self.num_leaves = 1 if type is None else sum(c.num_leaves for c in children_specs)
        self.num_children = len(children_specs)

    def __repr__(self, indent=0):
        inner = ""
        if self.num_children:
            indent += 2
            inner = ",".join([self._children[0].__repr__(indent)] +
                             ["\n" + " " * indent + c.__repr__(indent) for c in self._children[1:]])
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        t, ctx = self.type, self._context
        if t is defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif t in (dict, OrderedDict):
            ctx = tuple(ctx)
        elif not (t is None or t in _BUILTIN_TYPES):
            ctx = None  # a user type's context may not be hashable
        return hash((t, ctx, tuple(self._children)))

    @property
    def context(self):
        return self._context

    def is_leaf(self):
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """The children's specs (a new list)."""
        return list(self._children)

    def child(self, index):
        """The spec of child ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this spec as a prefix)."""
        subtrees = []
        self._flatten_up_to(tree, subtrees)
        return subtrees

    def _flatten_up_to(self, node, subtrees):
        if self.is_leaf():
            subtrees.append(node)
            return
        node_type = _get_node_type(node)
        both_dicts = self.type in _STANDARD_DICT_TYPES and node_type in _STANDARD_DICT_TYPES
        if self.type not in _BUILTIN_TYPES:  # a user type must match exactly
            if node_type != self.type:
                raise ValueError(f"Type mismatch; expected {self.type!r}, but got {node_type!r}.")
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if len(children) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(children)}.")
            if context != self._context:
                raise ValueError(f"Node context mismatch for custom node type {self.type!r}.")
        else:
            if not both_dicts and node_type != self.type:
                raise ValueError(f"Node type mismatch; expected {self.type!r}, but got {node_type!r}.")
            if len(node) != self.num_children:
                raise ValueError(f"Node arity mismatch; expected {self.num_children}, but got {len(node)}.")
            if both_dicts:  # dict types match one another by their keys (a defaultdict's factory aside)
                keys = self._context[1] if self.type is defaultdict else self._context
                got, expected = set(node), set(keys)
                if got != expected:
                    missing, extra = expected - got, got - expected
                    raise ValueError("Node keys mismatch" + (f"; missing key(s): {missing}" if missing else "")
                                     + (f"; extra key(s): {extra}" if extra else "") + ".")
                children = [node[k] for k in keys]
            else:
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if node_type is not deque and context != self._context:  # (a deque's maxlen may differ)
                    raise ValueError(f"Node context mismatch for node type {self.type!r}; expected "
                                     f"{self._context!r}, but got {context!r}.")
        for child, spec in zip(children, self._children):
            spec._flatten_up_to(child, subtrees)

    def unflatten(self, leaves):
        """The pytree of this structure with ``leaves`` at its leaves."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to "
                             f"a pytree that holds {self.num_leaves} items ({self}).")
        if self.is_leaf():
            return leaves[0]
        children, start = [], 0
        for spec in self._children:
            children.append(spec.unflatten(leaves[start:start + spec.num_leaves]))
            start += spec.num_leaves
        return SUPPORTED_NODES[self.type].unflatten_fn(children, self._context)


PyTreeSpec = TreeSpec


class LeafSpec(TreeSpec):
    """The spec of a leaf (printed ``*``). Deprecated in torch: test ``spec.is_leaf()``."""

    __slots__ = ()

    def __init__(self):
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use `isinstance(treespec, TreeSpec) and "
                      "treespec.is_leaf()` instead.", FutureWarning, stacklevel=2)
        super().__init__(None, None, [])

    def __repr__(self, indent=0):
        return "*"


_LEAF_SPEC = LeafSpec.__new__(LeafSpec)  # all leaves share one spec (made without the deprecation warning)
TreeSpec.__init__(_LEAF_SPEC, None, None, [])


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)``: the leaves in order (dicts in insertion order) and the structure to rebuild ``tree``."""
    leaves = []

    def flatten(node):
        if tree_is_leaf(node, is_leaf):
            leaves.append(node)
            return _LEAF_SPEC
        node_type = _get_node_type(node)
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        return TreeSpec(node_type, context, [flatten(c) for c in children])

    spec = flatten(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """Rebuild a pytree from ``leaves`` and the spec ``tree_flatten`` gave (the inverse of ``tree_flatten``)."""
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of type "
                            f"{type(treespec)}.")
        leaves, treespec = treespec, leaves  # (the spec may come first)
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """An iterator over the leaves of ``tree``."""
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree``, as a list."""
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    """The ``TreeSpec`` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """A pytree shaped as ``tree`` with ``func(leaf, *matching subtrees of rests)`` at each leaf (each of ``rests``
    has ``tree``'s structure as a prefix)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    return spec.unflatten(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on each leaf as ``tree_map`` would (for its side effects); returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    collections.deque(map(func, leaves, *[spec.flatten_up_to(r) for r in rests]), maxlen=0)
    return tree


def map_only(type_or_types_or_pred, /):
    """A decorator: apply the function only to values of the given type(s) (or passing the predicate); others
    pass through unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped

    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """``tree_map`` of ``func`` over the leaves of the given type(s); other leaves are kept."""
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """``tree_map_`` of ``func`` over the leaves of the given type(s)."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf."""
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf of the given type(s)."""
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf of the given type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))
