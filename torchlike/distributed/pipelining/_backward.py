"""Split backward for pipeline schedules, as ``torch.distributed.pipelining._backward`` (torch 2.13).

A zero-bubble schedule splits a stage's backward in two: ``stage_backward_input`` computes the gradients of the
stage's inputs (sent upstream at once) and, on the way, captures the gradients reaching the *intermediates*, the
nodes where the weights' paths join the input's path; ``stage_backward_weight`` later runs the weight branches
from those intermediates (``GradientEdge`` roots) to the weights' AccumulateGrad nodes. ``stage_backward`` is the
plain, unsplit backward. The graph walks, hooks, ``param_groups`` and messages are torch's.
"""
import collections

from ... import autograd
from ..._tensor import Tensor
from ...autograd.graph import GradientEdge
from ...ops.creation import ones_like

__all__ = ["stage_backward", "stage_backward_input", "stage_backward_weight"]


def _friendly_debug_info(v):
    if isinstance(v, Tensor):
        return f"Tensor({v.shape}, grad={v.requires_grad}, dtype={v.dtype})"
    return str(v)


def map_debug_info(a):
    """Tensors in ``a`` (nested lists, tuples, dicts) as torch's short description, everything else as str."""
    if isinstance(a, (list, tuple)):
        mapped = [map_debug_info(x) for x in a]
        return type(a)(mapped) if isinstance(a, list) or type(a) is tuple else tuple(mapped)
    if isinstance(a, dict):
        return {k: map_debug_info(v) for k, v in a.items()}
    return _friendly_debug_info(a)


def _get_grad_fn_or_grad_acc(t):
    """``t.grad_fn``, or a leaf's AccumulateGrad (through a view, as torch makes it)."""
    if t.requires_grad and t.grad_fn is None:
        grad_fn = t.view_as(t).grad_fn
        if grad_fn is not None:
            return grad_fn.next_functions[0][0]
        raise RuntimeError("Attempted to get grad_fn, but got None.Is this being created in a no-grad context?")
    return t.grad_fn


def _queue(roots, seen):
    """A breadth-first queue of the distinct roots that are not None, each added to ``seen``."""
    q = collections.deque()
    for node in roots:
        if node is not None and node not in seen:
            seen.add(node)
            q.append(node)
    return q


def reverse_closure(roots, target_nodes, reverse_edges_dict):
    """Nodes reachable from ``roots`` over the reverse edges (towards the outputs), stopping at
    ``target_nodes``: ``(closure, the target nodes reached)``."""
    closure = set()
    visited_target_nodes = set()
    q = _queue(roots, closure)
    while q:
        node = q.popleft()
        for fn in reverse_edges_dict[node]:
            if fn in closure or fn is None:
                continue
            if fn in target_nodes:
                visited_target_nodes.add(fn)
                continue
            closure.add(fn)
            q.append(fn)
    return closure, visited_target_nodes


def construct_reverse_graph(roots):
    """node -> the nodes that have an edge to it, over the graph below ``roots`` (breadth first)."""
    q = _queue(roots, set())
    reverse_edges_dict = collections.defaultdict(list)
    while q:
        node = q.popleft()
        for fn, _ in node.next_functions:
            if fn is not None:
                if len(reverse_edges_dict[fn]) == 0:
                    q.append(fn)
                reverse_edges_dict[fn].append(node)
    return reverse_edges_dict


def get_param_groups(inputs, params, reverse_edges_dict):
    """Groups of ``{"params", "intermediates"}``: each param's AccumulateGrad with the nodes where its path towards
    the outputs meets the inputs' path; groups sharing an intermediate are merged."""
    inputs_closure, _ = reverse_closure(inputs, set(), reverse_edges_dict)
    param_groups = {}  # keyed on intermediates
    for param in params:
        _, intersected = reverse_closure([param], inputs_closure, reverse_edges_dict)
        param_group = {"params": {param}, "intermediates": intersected}
        for input_node in intersected:
            existing = param_groups.get(input_node)
            if existing is not None:
                existing["params"] = existing["params"].union(param_group["params"])
                existing["intermediates"] = existing["intermediates"].union(param_group["intermediates"])
                param_group = existing
            else:
                param_groups[input_node] = param_group
    unique, seen = [], set()
    for param_group in param_groups.values():
        if id(param_group) not in seen:
            seen.add(id(param_group))
            unique.append(param_group)
    return unique


def _autograd_grad_for_inputs(outputs, inputs, grad_outputs=None, retain_graph=False, allow_unused=False):
    """``autograd.grad`` for the inputs that require grad; None for the others."""
    grad_indices, requiring = [], []
    for i, inp in enumerate(inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            grad_indices.append(i)
            requiring.append(inp)
    if not requiring:
        return tuple(None for _ in inputs)
    grads = autograd.grad(outputs=outputs, inputs=requiring, grad_outputs=grad_outputs, retain_graph=retain_graph,
                          allow_unused=allow_unused)
    result = [None] * len(inputs)
    for idx, g in zip(grad_indices, grads):
        result[idx] = g
    return tuple(result)


def _failure(what, stage_output, output_grads, input_values):
    return RuntimeError(f"""
        Failed to run {what}:
        Stage output: {map_debug_info(stage_output)}
        Output gradient: {map_debug_info(output_grads)}
        Input: {map_debug_info(input_values)}
        """)


def stage_backward_input(stage_outputs_or_loss, output_grads, input_values, weights):
    """The input gradients of a stage (``(dinputs, param_groups)``): accumulated into the inputs' ``.grad``, with
    the gradients reaching the weight branches captured in ``param_groups`` for ``stage_backward_weight``. The
    outputs are detached in place afterwards (the graph above the stage is no longer needed)."""
    valid_outputs, valid_output_grads = [], []
    for i, stage_output in enumerate(stage_outputs_or_loss):
        if not stage_output.requires_grad and stage_output.grad_fn is None:
            continue
        valid_outputs.append(stage_output)
        valid_output_grads.append(ones_like(stage_output) if output_grads is None else output_grads[i])

    stage_output_grad_fns = [n for n in map(_get_grad_fn_or_grad_acc, valid_outputs) if n is not None]
    stage_input_grad_fns = [n for n in (_get_grad_fn_or_grad_acc(inp) for inp in input_values
                                        if isinstance(inp, Tensor)) if n is not None]
    weight_grad_fns = [n for n in map(_get_grad_fn_or_grad_acc, weights) if n is not None]

    reverse_edges_dict = construct_reverse_graph(stage_output_grad_fns)
    param_groups = get_param_groups(stage_input_grad_fns, weight_grad_fns, reverse_edges_dict)

    handles = []
    try:
        for param_group in param_groups:
            intermediates = list(param_group["intermediates"])
            param_group["intermediates"] = intermediates
            for i, intermediate in enumerate(intermediates):
                handles.append(intermediate.register_prehook(_capture(param_group, i)))

        if valid_outputs:
            dinputs = _autograd_grad_for_inputs(valid_outputs, input_values, valid_output_grads, retain_graph=True,
                                                allow_unused=True)
        else:
            dinputs = tuple(None for _ in input_values)

        for inp, dinput in zip(input_values, dinputs):
            if isinstance(inp, Tensor) and dinput is not None:
                if inp.grad is None:
                    inp.grad = dinput
                else:
                    inp.grad += dinput

        for t in stage_outputs_or_loss:  # drop the output side's graph state
            t.detach_()
        return dinputs, param_groups
    except Exception as e:
        raise _failure("stage backward input", stage_outputs_or_loss, output_grads, input_values) from e
    finally:
        for handle in handles:
            handle.remove()


def _capture(param_group, i):
    """The pre-hook storing the gradients that reach intermediate ``i`` of ``param_group``."""
    def hook(grad_inputs):
        if param_group.get("grads", None) is None:
            param_group["grads"] = [None] * len(param_group["intermediates"])
        param_group["grads"][i] = grad_inputs
    return hook


def stage_backward_weight(weights, param_groups, retain_graph=False):
    """The weight gradients of a stage from what ``stage_backward_input`` captured, accumulated into the weights'
    ``.grad``. Returns the weights' ``.grad`` as they were *before* this call (torch's behaviour)."""
    grad_acc_to_weight = {}
    weight_grads = []
    for index, weight in enumerate(weights):
        grad_acc = _get_grad_fn_or_grad_acc(weight)
        grad_acc_to_weight[grad_acc] = weight, index
        weight_grads.append(weight.grad)

    for param_group in param_groups:
        valid_edges, valid_grad_outputs = [], []
        for grads_tuple, intermediate in zip(param_group["grads"], param_group["intermediates"]):
            for i, grad in enumerate(grads_tuple):
                if grad is not None:
                    valid_edges.append(GradientEdge(intermediate, i))
                    valid_grad_outputs.append(grad)

        handles = []
        try:
            if len(param_group["intermediates"]) > 1:  # the saved gradients, not again through descendants
                for grads_tuple, intermediate in zip(param_group["grads"], param_group["intermediates"]):
                    handles.append(intermediate.register_prehook(lambda grad_outputs, sg=grads_tuple: sg))
            del param_group["intermediates"]  # break the hook -> param_group -> intermediates cycle

            if valid_edges:
                weights_edges = tuple(GradientEdge(w, 0) for w in param_group["params"])
                dweights = autograd.grad(valid_edges, weights_edges, grad_outputs=valid_grad_outputs,
                                         retain_graph=retain_graph)
                del param_group["grads"]
                for grad_acc, dw in zip(param_group["params"], dweights):
                    weight, index = grad_acc_to_weight[grad_acc]
                    if weight.grad is None:
                        weight.grad = dw
                    else:
                        weight.grad += dw
        finally:
            for handle in handles:
                handle.remove()
    return tuple(weight_grads)


def stage_backward(stage_output, output_grads, input_values, outputs_with_grads_idxs=None):
    """The plain (unsplit) backward of a stage: gradients accumulated into its parameters; returns the gradients
    of ``input_values`` (None for non-tensors), whose ``.grad`` is reset to None, as torch does."""
    if outputs_with_grads_idxs is not None:  # deprecated in torch, kept for its signature
        stage_output = [stage_output[i] for i in outputs_with_grads_idxs]
        output_grads = [output_grads[i] for i in outputs_with_grads_idxs]
    try:
        stage_output_tensors, output_grad_tensors = [], []
        _extract_tensors_with_grads(stage_output, output_grads, stage_output_tensors, output_grad_tensors)
        autograd.backward(stage_output_tensors, grad_tensors=output_grad_tensors)
        grad_inputs = []
        for val in input_values:
            if isinstance(val, Tensor):
                grad_inputs.append(val.grad)
                val.grad = None
            else:
                grad_inputs.append(None)
    except Exception as e:
        raise _failure("stage backward", stage_output, output_grads, input_values) from e
    return tuple(grad_inputs)


def _extract_tensors_with_grads(output_val, grad_val, outputs, grads):
    """Pair the tensors of a nested output (tensors, tuples, lists, dicts) with their gradients."""
    if isinstance(output_val, Tensor):
        if not output_val.requires_grad and output_val.grad_fn is None:
            return
        if not isinstance(grad_val, (Tensor, type(None))):
            raise AssertionError(f"Expected Tensor or None gradient but got {type(grad_val)}")
        outputs.append(output_val)
        grads.append(grad_val)
    elif isinstance(output_val, (tuple, list)):
        if grad_val is None:
            return
        if not isinstance(grad_val, (tuple, list)):
            raise AssertionError(f"grad_value expected to have type {type(output_val)} but got {type(grad_val)}")
        if not len(output_val) == len(grad_val):
            raise AssertionError(f"Expected len(output_val) == len(grad_val), got {len(output_val)} != "
                                 f"{len(grad_val)}")
        for ov, gv in zip(output_val, grad_val):
            _extract_tensors_with_grads(ov, gv, outputs, grads)
    elif isinstance(output_val, dict):
        if grad_val is None:
            return
        if not isinstance(grad_val, dict):
            raise AssertionError(f"Expected dict, got {type(grad_val)}")
        if not set(output_val.keys()) == set(grad_val.keys()):
            raise AssertionError(f"Expected keys {set(output_val.keys())}, got {set(grad_val.keys())}")
        for k in output_val:
            _extract_tensors_with_grads(output_val[k], grad_val[k], outputs, grads)


def _null_coalesce_accumulate(lhs, rhs):
    """The non-None operand, or their sum."""
    if lhs is None:
        return rhs
    if rhs is None:
        return lhs
    return lhs + rhs
