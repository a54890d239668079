"""``autograd.grad(..., is_grads_batched=True)``: one engine run per row of the grad_outputs, vectorised.

Without ``create_graph`` the engine itself is ``jax.vmap``-ed over dim 0 of every grad_output: the
engine and the op table only read shapes and dtypes, so a single graph walk runs with batch
tracers wrapped in Tensors, and each node's jitted formula is batched by JAX. With
``create_graph`` the result must itself carry history, which tracers cannot, so the rows are run
one after another (retaining the graph) and stacked by differentiable ops.
"""
import jax

from .._internal import wrap
from ..ops.creation import zeros_like
from ..ops.shape import cat, stack
from .engine import _run_backward, _nodes_to_execute


def _batched_grad(roots, grads, edges, retain_graph, create_graph, allow_unused):
    """Gradients for ``edges`` with a leading batch dim, one vector-Jacobian product per row of ``grads``."""
    if create_graph:
        return _looped(roots, grads, edges, retain_graph, allow_unused)
    batched = [g is not None and g._data.ndim > 0 for g in grads]
    arrays = [g._data if g is not None else None for g in grads]

    def vjp(*arrs):
        gs = [None if a is None else wrap(a) for a in arrs]
        res = _run_backward(roots, gs, True, False, inputs=edges, accumulate_grad=False, allow_unused=True)
        return [None if r is None else r._data for r in res]

    out = jax.vmap(vjp, in_axes=tuple(0 if b else None for b in batched))(*arrays)
    result = [None if o is None else wrap(o) for o in out]
    _check_unused(result, allow_unused)
    if not retain_graph:
        _release(roots, edges)
    return result


def _looped(roots, grads, edges, retain_graph, allow_unused):
    n = next(g._data.shape[0] for g in grads if g is not None)
    rows = [_unbind(g, n) if g is not None else [None] * n for g in grads]
    per_row = []
    for b in range(n):
        keep = True if b < n - 1 else retain_graph
        per_row.append(_run_backward(roots, [r[b] for r in rows], keep, True, inputs=edges,
                                     accumulate_grad=False, allow_unused=True))
    result = []
    for k in range(len(edges)):
        col = [row[k] for row in per_row]
        if all(c is None for c in col):
            result.append(None)
            continue
        if any(c is None for c in col):  # some rows reached this input, others not: zeros for the others
            ref = next(c for c in col if c is not None)
            col = [zeros_like(ref) if c is None else c for c in col]
        result.append(_stack(col))
    _check_unused(result, allow_unused)
    return result


_CHUNK = 64  # ops joining more tensors than this are built from ops of this arity (bounded compiles)


def _unbind(t, n):
    return [t[b] for b in range(n)]  # select's index is traced: one program for every row


def _stack(ts):
    if len(ts) <= _CHUNK:
        return stack(ts)
    return _cat([stack(ts[i:i + _CHUNK]) for i in range(0, len(ts), _CHUNK)])


def _cat(ts):
    if len(ts) <= _CHUNK:
        return cat(ts)
    return _cat([cat(ts[i:i + _CHUNK]) for i in range(0, len(ts), _CHUNK)])


def _check_unused(result, allow_unused):
    if not allow_unused:
        for i, g in enumerate(result):
            if g is None:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")


def _release(roots, edges):
    """Free what the vmapped run kept (it ran with retain_graph=True): the saved tensors of the nodes it ran."""
    captures = {node: [] for node, _ in edges}
    for node in _nodes_to_execute([n for n, _ in roots], set(), captures):
        node._release()
