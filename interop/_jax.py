"""JAX functions as differentiable torchlike ops (``jax_op``) and torchlike functions as JAX functions (``as_jax``).

``jax_op(fn)``
    ``fn`` takes and returns pytrees of JAX arrays (plus static arguments). The wrapper takes torchlike Tensors
    anywhere in those pytrees and returns Tensors in the same output structure. Per *signature* (input pytree
    structure, each array leaf's shape/dtype, the static values) ``fn`` is traced exactly once
    (``jax.make_jaxpr``); the forward is that jaxpr replayed under one ``jax.jit`` and the backward is one jitted
    ``jax.vjp`` of it (a traced op, ``torchlike.ops._traced``, as ``custom_op`` uses), whose own backward is
    again a ``jax.vjp``, so ``create_graph=True`` and derivatives of any order work. The node is named
    ``<name>Backward`` (``name`` defaults to ``fn.__name__``, ``"JaxOp"`` for a lambda), one node for the whole call with one edge per
    Tensor input leaf (in flattening order) and one output per array output leaf. Integer/bool outputs never
    require grad, nor do outputs that do not depend on an input that requires grad (as in torch).

    Leaves that are Tensors, ``jax.Array`` s or NumPy arrays are the op's array inputs (only Tensors can carry
    gradients); any other leaf (Python numbers, strings, ...) is static: it is part of the signature, must be
    hashable, and a new value traces again. ``static_argnums`` / ``static_argnames`` name whole arguments that
    are static (as ``jax.jit``'s).

``as_jax(fn)``
    A function of torchlike Tensors becomes a function of JAX arrays that ``jax.grad``, ``jax.jit``,
    ``jax.vmap`` and ``jax.jvp`` accept: array leaves of the arguments become Tensors (no grad), Tensor leaves
    of the result become arrays. Importing this module registers torchlike's ``Tensor`` as a JAX pytree node
    (child: ``t._data``; aux: ``requires_grad``), so Tensors can also be passed to and returned from JAX
    transforms directly; inside a transform they wrap tracers.

    Decision: JAX differentiates the torchlike ops' JAX forwards directly (every torchlike op is a JAX
    function), so the torchlike tape plays no part in JAX's derivative. ``fn`` runs in the caller's grad mode;
    tensors made from JAX arrays do not require grad, so nothing is recorded unless ``fn`` asks for it (e.g.
    ``x.requires_grad_()`` then ``torchlike.autograd.grad`` or ``.backward()`` inside ``fn``). That works on
    tracers too (the engine reads only shapes and dtypes), and its hooks run.

    Hooks under ``jax.jit`` (and ``vmap``/``grad``) run at trace time, once per compilation, not once per call:
    a hook may transform the gradient with torchlike ops (return a new Tensor) and read shapes/dtypes; it may
    not read values (``.item()``, ``.tolist()``, ``bool(t)``, NumPy conversion, value-dependent Python control
    flow raise JAX's concretization errors), and Python side effects (appending to a list, counting) happen
    only while tracing and see tracers, not values. In-place changes to the *input* Tensors inside ``fn`` are
    not visible to the caller (JAX arrays are immutable).
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from torchlike._internal import Tensor, traced, wrap

__all__ = ["jax_op", "as_jax"]


# ----- Tensor as a JAX pytree node -------------------------------------------------------------------------------
def _tensor_flatten(t):
    return (t._data,), t._requires_grad


def _tensor_unflatten(requires_grad, children):
    t = wrap(children[0])
    if requires_grad:
        t._requires_grad = True
    return t


try:
    jax.tree_util.register_pytree_node(Tensor, _tensor_flatten, _tensor_unflatten)
except ValueError:  # already registered (module re-imported)
    pass


def _is_tensor(x):
    return isinstance(x, Tensor)


def _is_array(x):
    return isinstance(x, (jax.Array, np.ndarray, np.generic))


# ----- jax_op -------------------------------------------------------------------------------------------------------
class _JaxOp:
    """The differentiable torchlike function made by ``jax_op`` (see the module docstring)."""

    def __init__(self, fn, name, static_argnums, static_argnames):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "<lambda>")
        if self.name == "<lambda>":
            self.name = "JaxOp"
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        self.static_argnums = tuple(static_argnums)
        self.static_argnames = frozenset(static_argnames)
        self._cache = {}
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        n = len(args)
        snums = {i % n for i in self.static_argnums if -n <= i < n}
        static_pos = tuple((i, args[i]) for i in sorted(snums))
        dyn_args = tuple(a for i, a in enumerate(args) if i not in snums)
        static_kw = tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        dyn_kw = {k: v for k, v in kwargs.items() if k not in self.static_argnames}
        leaves, tree = jax.tree_util.tree_flatten((dyn_args, dyn_kw), is_leaf=_is_tensor)
        tensors, spec = [], []
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                tensors.append(leaf)
                spec.append(leaf._data.aval)
            elif _is_array(leaf):
                t = wrap(jnp.asarray(leaf))
                tensors.append(t)
                spec.append(t._data.aval)
            else:
                spec.append(("static", leaf))
        key = (tree, tuple(spec), n, static_pos, static_kw)
        try:
            sig = self._cache.get(key)
        except TypeError as e:
            raise TypeError(f"jax_op {self.name}: static arguments and non-array leaves must be hashable ({e})") \
                from None
        if sig is None:
            sig = self._trace(key, tensors)
        outs = sig(*tensors)
        return jax.tree_util.tree_unflatten(sig.out_tree, outs)

    def _trace(self, key, tensors):
        tree, spec, n, static_pos, static_kw = key
        fn = self.fn

        def flat_fn(*arrays):
            it = iter(arrays)
            leaves = [next(it) if not (isinstance(s, tuple) and s[:1] == ("static",)) else s[1] for s in spec]
            dyn_args, dyn_kw = jax.tree_util.tree_unflatten(tree, leaves)
            args, dyn = [], iter(dyn_args)
            statics = dict(static_pos)
            for i in range(n):
                args.append(statics[i] if i in statics else next(dyn))
            return fn(*args, **dyn_kw, **dict(static_kw))

        sig = traced.trace(self.name + "Backward", flat_fn, [t._data for t in tensors])
        if sig.cacheable:
            self._cache[key] = sig
        return sig

    def __repr__(self):
        return f"<jax_op {self.name}>"


def jax_op(fn=None, *, name=None, static_argnums=(), static_argnames=()):
    """Make a JAX function of pytrees of arrays a differentiable torchlike function (also a decorator).

    Tensors go in anywhere in the argument pytrees; Tensors come out in ``fn``'s output structure. One trace,
    one jitted forward and one jitted backward per signature; the graph node is ``<name>Backward``.
    """
    if fn is None:
        return functools.partial(jax_op, name=name, static_argnums=static_argnums, static_argnames=static_argnames)
    return _JaxOp(fn, name, static_argnums, static_argnames)


# ----- as_jax -------------------------------------------------------------------------------------------------------
def _to_tensor(x):
    if isinstance(x, Tensor):
        return x
    if _is_array(x):
        return wrap(jnp.asarray(x))
    return x


def _to_array(x):
    return x._data if isinstance(x, Tensor) else x


def as_jax(fn):
    """Make a torchlike function a JAX function (for ``jax.grad``/``jit``/``vmap``/``jvp``).

    Array leaves of the arguments become Tensors (Tensors pass through), Tensor leaves of the result become
    arrays. See the module docstring for what hooks may do under ``jax.jit``.
    """
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, kwargs = jax.tree_util.tree_map(_to_tensor, (args, kwargs), is_leaf=_is_tensor)
        out = fn(*args, **kwargs)
        return jax.tree_util.tree_map(_to_array, out, is_leaf=_is_tensor)
    return wrapper
