"""The backward engine: dependency-counted, iterative execution of the graph, in torch's order.

One call of ``_run_backward`` is one "graph task":
1. walk the graph reachable from the roots and count, for every node, the edges that point to it;
2. if ``inputs`` were given, mark the nodes that lie on a path to them (only those run) and the
   edges whose gradient is to be captured (``autograd.grad``);
3. seed the roots' input buffers, then repeatedly pop the ready node with the highest sequence
   number (the most recently created; AccumulateGrad nodes first, as in torch), and for it:
   tensor hooks -> retain_grad update -> node pre-hooks -> the node (AccumulateGrad: then the
   post-accumulate-grad hooks) -> node post-hooks, adding each gradient it returns into the
   buffer of the next node; a node whose count falls to zero is ready. ``autograd.grad`` captures
   an input's gradient before its tensor hooks when that node runs anyway, after them when it
   only is captured (torch's behaviour). A node's saved tensors are released right after it ran
   unless ``retain_graph``.
Gradient mode is set to ``create_graph`` for the whole run, so formulas record history exactly
when higher-order gradients were asked for. A run of nodes that each pass one gradient on to a node nothing else
feeds (an elementwise chain), with no hooks and nothing observing between them, runs its formulas as one cached
program (``_run_chain``): the order of effects a user can see is unchanged. Everything here is local to the call
(thread-safe), looks only at graph structure, shapes and dtypes (so it runs on JAX tracers), and never recurses.
"""
import heapq
import itertools
import logging
import threading

from .. import _lazy
from .._internal import (CHAIN_MAX, CHAIN_MIN, AccumulateGrad, Tensor, accumulate, anomaly, chain_link,
                         dtype_from_np, grad_enabled, grad_state, plain_dispatch, run_chain, type_string,
                         warn_forward_trace, wrap)

_log = logging.getLogger("torchlike.autograd")
_task_ids = itertools.count()
_current = threading.local()


_NO_TASK = (-1, None, None, None)


def _current_graph_task_id():
    """Id of the backward running in this thread (-1 outside backward), as torch's."""
    return getattr(_current, "task", _NO_TASK)[0]


def _is_checkpoint_valid():
    """False inside a backward given ``inputs`` (autograd.grad, backward(inputs=...)), as torch's."""
    return getattr(_current, "task", _NO_TASK)[2] is None


def _will_engine_execute_node(node):
    """Whether the backward running in this thread will run ``node`` (or capture its gradient), as torch's."""
    task_id, seen, needed, captures = getattr(_current, "task", _NO_TASK)
    if task_id == -1:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    if needed is None:  # no inputs given: every node reachable from the roots runs
        return node in seen
    if captures and node in captures and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return node in needed or node in captures


def _reachable(roots, cut=None):
    """The graph a backward runs: per node, how many edges reach it; the nodes reached; and ``cut``, the edges of
    create_graph formula nodes that torch's graph lacks. torch runs each output's formula as its own ops, so an
    input is reached only through an output that is reached itself; one node here computes all of them
    (``Node._edge_outputs``): its edges that no reached output depends on are cut (until nothing changes)."""
    deps, seen, stack, formulas = {}, set(), [], []
    for node, _ in roots:
        if node not in seen:
            seen.add(node)
            stack.append(node)
    while stack:
        node = stack.pop()
        edges = node.next_functions
        if node._edge_outputs is not None:
            formulas.append(node)
            if cut and node in cut:
                edges = [(None, 0) if j in cut[node] else e for j, e in enumerate(edges)]
        for nxt, _ in edges:
            if nxt is not None:
                if nxt in deps:
                    deps[nxt] += 1
                else:  # (reached for the first time: a root reached again is in deps from now on)
                    deps[nxt] = 1
                    if nxt not in seen:
                        stack.append(nxt)
    seen.update(deps)
    if not formulas:
        return deps, seen, None
    reached = {node: set() for node in formulas}
    for node, nr in roots:
        if node in reached:
            reached[node].add(nr)
    for node in seen:
        for j, (nxt, nr) in enumerate(node.next_functions):
            if nxt in reached and not (cut and node in cut and j in cut[node]):
                reached[nxt].add(nr)
    new = {}
    for node, outs in reached.items():
        dropped = frozenset(j for j, deps_on in enumerate(node._edge_outputs) if not deps_on & outs)
        if dropped:
            new[node] = dropped
    return (deps, seen, new or None) if new == (cut or {}) else _reachable(roots, new)


def _run_backward(roots, root_grads, keep_graph, create_graph, inputs=None, accumulate_grad=True,
                  allow_unused=True):
    """roots: list of (node, output_nr); root_grads: Tensors; inputs: list of (node, output_nr) edges.

    Returns the captured gradients for ``inputs`` when ``accumulate_grad`` is False (autograd.grad).
    """
    # 1. dependencies over the reachable graph
    deps, seen, cut = _reachable(roots)

    # debug logging, as torch: temporary pre-hooks on the whole graph (nothing per node when off)
    log_handles = _register_logging_hooks(seen) if _log.isEnabledFor(logging.DEBUG) else None

    # 2. which nodes run, which gradients are captured
    needed = None
    captures = None
    captured = None
    if inputs is not None:
        captures = {}
        exec_targets = set()
        for i, (node, nr) in enumerate(inputs):
            if accumulate_grad:
                exec_targets.add(node)
            else:
                captures.setdefault(node, []).append((nr, i))
        needed = _nodes_to_execute([n for n, _ in roots], exec_targets, captures)
        captured = [None] * len(inputs)

    # 3. run
    buffers = {}
    for (node, nr), g in zip(roots, root_grads):
        g = _as_output_dtype(node, nr, g)
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * max(len(node._out_meta), nr + 1)
        if g is not None:
            buf[nr] = g if buf[nr] is None else buf[nr] + g
    heap = []
    tie = itertools.count()
    for node in buffers:
        if node not in deps:
            heapq.heappush(heap, (-node._seq, next(tie), node))

    prev_mode = grad_enabled()
    prev_task = getattr(_current, "task", _NO_TASK)
    check_nan = anomaly.enabled and anomaly.check_nan
    # runs of nodes that only pass one gradient along (a chain of elementwise ops) run as one program; not where
    # anything may look between them (hooks, anomaly mode, logging, a profiler, create_graph, captured inputs)
    chained = set() if not (create_graph or inputs is not None or anomaly.enabled or log_handles is not None
                            or cut is not None) and plain_dispatch() else None
    grad_state.grad_enabled = create_graph
    _current.task = (next(_task_ids), seen, needed, captures)
    node = None
    try:
        heappop, heappush = heapq.heappop, heapq.heappush
        while heap:
            node = heappop(heap)[2]
            grads = buffers.pop(node)
            if captures is not None:
                # torch's quirk: a node that also runs is captured before its tensor hooks, one that only
                # is captured after them
                cap = captures.get(node)
                if node not in needed:
                    if cap is not None:
                        if node._tensor_pre_hooks is not None or node._retains_grad is not None or \
                                type(node) is AccumulateGrad:
                            grads = _call_tensor_pre_hooks(node, grads)
                        for nr, i in cap:
                            captured[i] = grads[nr]
                    continue
                if cap is not None:
                    for nr, i in cap:
                        captured[i] = grads[nr]
            if node._tensor_pre_hooks is not None or node._retains_grad is not None or type(node) is AccumulateGrad:
                grads = _call_tensor_pre_hooks(node, grads)
            if node._pre_hooks:
                grads = _call_pre_hooks(node, grads)
            for g in grads:
                if g is not None:
                    if type(node) is AccumulateGrad:  # leaf accumulation is an op-layer function
                        accumulate(node.variable, g)
                        outputs = ()
                    elif needed is not None and node._mask is not None:
                        mask = tuple([m and (nxt in needed or nxt in captures)
                                      for m, (nxt, _) in zip(node._mask, node.next_functions)])
                        outputs = node._apply(grads, mask)
                    elif chained is not None and node not in chained and len(grads) == 1:
                        node, outputs = _run_chain(node, grads, deps, buffers, chained, keep_graph)
                    else:
                        outputs = node._apply(grads)
                    if check_nan:
                        _check_nan(node, outputs)
                    break
            else:  # no gradient reached this node: nothing to compute (custom Functions still run, as in torch)
                outputs = node._apply(grads) if node._runs_without_grads else [None] * len(node.next_functions)
            if not keep_graph and (node._for_backward or node._release_always):
                node._release()
            if node._post_hooks:
                outputs = _call_post_hooks(node, outputs, grads)
            edges = node.next_functions
            if cut and node in cut:
                edges = [(None, 0) if j in cut[node] else e for j, e in enumerate(edges)]
            for (nxt, nr), g in zip(edges, outputs):
                if nxt is None:
                    continue
                left = deps[nxt] - 1
                deps[nxt] = left
                if needed is not None and nxt not in needed and nxt not in captures:
                    continue
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * len(nxt._out_meta)
                if g is not None:
                    buf[nr] = g if buf[nr] is None else buf[nr] + g
                if left == 0:
                    heappush(heap, (-nxt._seq, next(tie), nxt))
    except BaseException:
        if anomaly.enabled and node is not None:
            warn_forward_trace(node)
        raise
    finally:
        grad_state.grad_enabled = prev_mode
        _current.task = prev_task
        if log_handles is not None:
            for h in log_handles:
                h.remove()

    if _lazy._State.on:  # lazy mode: the forward and backward start running while Python goes on (an optimizer's
        _lazy.start_early()  # step; see _lazy.start_early)
    if captured is not None and not allow_unused:
        for i, g in enumerate(captured):
            if g is None:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
    return captured


def _run_chain(node, grads, deps, buffers, tried, keep_graph):
    """Run ``node``, and with it the nodes after it that only it reaches (no other edge left to wait for, nothing
    received yet) while each passes one gradient on (``chain_link``): as one cached program when there are
    ``CHAIN_MIN`` to ``CHAIN_MAX`` of them. Returns the last node run and its outputs (the engine goes on from
    there); every node of a run shorter than ``CHAIN_MIN`` goes into ``tried``."""
    run = [node]
    edge = chain_link(node)
    while edge is not None:
        nxt = edge[0]
        if nxt is None or deps.get(nxt) != 1 or nxt in buffers or nxt in tried:
            break
        edge = chain_link(nxt)
        if edge is not None:
            run.append(nxt)
            if len(run) == CHAIN_MAX:  # (longer runs go as several: one program reused, quick to compile)
                break
    if len(run) < CHAIN_MIN:
        tried.update(run)
        return node, node._apply(grads)
    g = run_chain(run, grads[0], not keep_graph)
    last = run[-1]
    outputs = [None] * len(last.next_functions)
    outputs[last._mask.index(True)] = g
    return last, outputs


def _as_output_dtype(node, nr, g):
    """A root gradient of another floating dtype than the output it is for, cast to it (torch's validate_outputs
    does: ``y.backward(float64 ones)`` for a float32 ``y``)."""
    meta = node._out_meta[nr] if g is not None and nr < len(node._out_meta or ()) else None
    dtype = getattr(meta, "dtype", None)
    if dtype is None or g._data.dtype == dtype or g._data.dtype.kind not in "fV" or dtype.kind not in "fV":
        return g
    return g.to(dtype_from_np(dtype))


def _fmt_grad(g):
    """torch's short form of a gradient in the debug log: 'f32[2, 3]', 'None'."""
    if g is None:
        return "None"
    dt = g._data.dtype
    abbr = "bf16" if dt.name == "bfloat16" else f"{dt.kind if dt.kind != 'b' else 'b'}{dt.itemsize * 8}"
    return f"{abbr}[{', '.join(map(str, g._data.shape))}]"


def _register_logging_hooks(nodes):
    """One logging pre-hook per node of the graph (torch's _register_logging_hooks_on_whole_graph)."""
    def hook_for(node):
        def log_prehook(grad_outputs):
            _log.debug("Executing: %s with grad_outputs: [%s]", node, ",".join(map(_fmt_grad, grad_outputs)))
        return log_prehook
    return [node.register_prehook(hook_for(node)) for node in nodes]


def _check_nan(node, outputs):
    """Anomaly mode: torch's error when a backward formula returns NaN (skipped on JAX tracers)."""
    import jax
    import numpy as np
    for i, g in enumerate(outputs):
        if g is not None and not isinstance(g._data, jax.core.Tracer) and g._data.dtype.kind in "fc" \
                and np.isnan(np.asarray(g._data)).any():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _nodes_to_execute(roots, exec_targets, captures):
    """Nodes with a path to an exec target or a captured node (exec targets themselves included)."""
    needed = {}
    for root in roots:
        if root in needed:
            continue
        stack = [(root, iter(root.next_functions))]
        needed[root] = root in exec_targets
        while stack:
            node, it = stack[-1]
            for nxt, _ in it:
                if nxt is None:
                    continue
                if nxt not in needed:
                    needed[nxt] = nxt in exec_targets
                    stack.append((nxt, iter(nxt.next_functions)))
                    break
                if needed[nxt] or nxt in captures:
                    needed[node] = True
            else:
                stack.pop()
                if stack and (needed[node] or node in captures):
                    needed[stack[-1][0]] = True
    return {n for n, flag in needed.items() if flag}


def _wrap_grad_check(hook, value, original):
    """torch's checks on a tensor hook's replacement gradient."""
    if not isinstance(value, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(value).__name__}'")
    name = getattr(hook, "__name__", "<unknown>")
    if value._data.dtype != original._data.dtype:
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {type_string(original._data.dtype)} "
                           f"got {type_string(value._data.dtype)})")
    if value._data.shape != original._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return value


def _call_tensor_pre_hooks(node, grads):
    """Tensor hooks (Tensor.register_hook), then the retain_grad update, per output of the node. As torch's, a
    hook also runs for an output that got no gradient (it is given None)."""
    if isinstance(node, AccumulateGrad):
        hooks = node.variable._hooks
        if hooks:
            grads = [_run_tensor_hooks(hooks.values(), grads[0])]
        return grads
    if node._tensor_pre_hooks:  # (per output, in the order of each output's first hook, as torch's)
        grads = list(grads)
        for nr, hooks in node._tensor_pre_hooks.items():
            grads[nr] = _run_tensor_hooks(hooks.values(), grads[nr])
    if node._retains_grad:
        for nr, ref in list(node._retains_grad.items()):
            t = ref()
            g = grads[nr]
            if t is None or g is None:
                continue
            if t._grad is None:  # torch clones (CloneBackward0 under create_graph)
                t._grad = g.clone() if grad_enabled() else wrap(g._data)
            else:
                t._grad = t._grad + g
    return grads


def _run_tensor_hooks(hooks, g):
    for hook in list(hooks):
        r = hook(g)
        if r is not None:
            if g is None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
            g = _wrap_grad_check(hook, r, g)
    return g


def _check_hook_tuple(hook, result, expected):
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(expected):
        name = getattr(hook, "__name__", "<unknown>")
        raise RuntimeError(f"hook '{name}' has returned an incorrect number of values "
                           f"(got {len(result)}, but expected {len(expected)})")
    out = []
    for r, e in zip(result, expected):
        if r is None:
            out.append(e)
        elif e is None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
        else:
            out.append(_wrap_grad_check(hook, r, e))
    return out


def _call_pre_hooks(node, grads):
    n = node._n_grad_outputs()
    for hook in list(node._pre_hooks.values()):
        r = hook(tuple(grads[:n]))
        if r is not None:
            grads = _check_hook_tuple(hook, r, grads[:n]) + list(grads[n:])
    return grads


def _call_post_hooks(node, outputs, grads):
    grads = grads[:node._n_grad_outputs()]
    for hook in list(node._post_hooks.values()):
        r = hook(tuple(outputs), tuple(grads))
        if r is not None:
            outputs = _check_hook_tuple(hook, r, outputs)
    return outputs
