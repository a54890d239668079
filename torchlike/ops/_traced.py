"""Traced ops: a function of arrays, traced once per signature, becomes one op of the table.

    traced = trace("fnBackward", fn, arrays)   # one jax.make_jaxpr of fn(*arrays)
    outs = traced(*tensors)                     # a recorded, differentiable op call (one node, one edge per tensor)
    outs = traced.forward(*arrays)              # the same jitted forward on raw arrays, nothing recorded

The op is an ``_FnOp``: its forward replays the jaxpr under one ``jax.jit``, its backward is a jitted
``jax.vjp`` of that replay, itself again an ``_FnOp``, so derivatives of any order work. ``custom_op``
(``torchlike.library``) and ``jax_op`` (``interop``) are both built on this; each keeps its own cache of
``Traced`` per signature, and must not cache one whose ``cacheable`` is False.
"""
import jax
import jax.numpy as jnp

from .._tensor import _wrap
from ._registry import _FnOp


class Traced:
    """One traced signature: ``op`` (an ``_FnOp`` over consts + inputs), ``consts`` (Tensors, no grad),
    ``out_tree`` (the structure of ``fn``'s result) and ``cacheable``."""

    __slots__ = ("op", "consts", "out_tree", "cacheable", "_jitted", "_const_arrays")

    def __call__(self, *tensors):
        return self.op(*self.consts, *tensors)

    def forward(self, *arrays):
        return self._jitted(*self._const_arrays, *arrays)


def trace(node_name, fn, arrays):
    """Trace ``fn(*arrays)`` (arrays or tracers; ``fn`` returns a pytree of arrays) into a ``Traced`` whose
    op's graph node is ``node_name``."""
    closed, out_shape = jax.make_jaxpr(fn, return_shape=True)(*arrays)
    jaxpr, consts = closed.jaxpr, list(closed.consts)
    nc = len(consts)

    # The closed-over constants are (non-differentiable) op inputs, not closure constants of the jitted
    # functions: jax 0.10.2 may mis-dispatch those once they come from the persistent compilation cache.
    def replay(*args):
        return tuple(jax.core.eval_jaxpr(jaxpr, args[:nc], *args[nc:]))

    traced = Traced()
    traced._jitted = jax.jit(replay)
    traced.op = _FnOp(node_name, replay, traced._jitted, nc + len(arrays), len(jaxpr.outvars))
    traced.op.diff = tuple(range(nc, nc + len(arrays)))  # the constants get no edge in the graph
    traced.consts = [_wrap(jnp.asarray(c)) for c in consts]
    traced._const_arrays = [c._data for c in traced.consts]
    traced.out_tree = jax.tree_util.tree_structure(out_shape)
    traced.cacheable = not any(isinstance(c, jax.core.Tracer) for c in consts)  # tracers of an outer trace
    return traced

