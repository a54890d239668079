"""The one recording path: how a call becomes part of the autograd graph.

Table ops (``_registry._apply``), ``autograd.Function`` and, through them, ``library.custom_op`` and
``interop.jax_op`` record with these functions, so every node gets its sequence number, edges, anomaly trace
and saved tensors, and every output (or in-place target) its history, in one way:

- ``connect(node, inputs, avals)``: the node's edges to its inputs' nodes and which of them need a gradient;
- ``save(tensor, output_nr)``: one saved-tensor slot (through the innermost saved-tensor hooks if any, else the
  data plus what the version check needs);
- ``set_history`` / ``rebase_history``: an output, or an in-place target, becomes output ``nr`` of the node
  (``retain_grad`` follows a rebased tensor to its new node);
- ``record(op, ...)``: all of it for one call of a table op, with the op's save policy.
"""
import weakref

from .._tensor import Tensor, _new, _seq_counter, _type_string, _wrap
from .._anomaly_mode import _anomaly, _forward_trace
from .._graph import _LATE, _HookedSavedTensor, _SavedTensor, _saved_hooks, grad_accumulator

_ONE_TRUE = (True,)
_TRUE_FALSE = (True, False)
_TRUE_TRUE = (True, True)
_NO_EDGE = (None, 0)
_metas = {}  # one tuple per distinct node metadata (avals, masks: JAX interns avals): fewer objects for the collector


def _intern(t):
    """The one kept tuple equal to ``t`` (nodes share them; call as ``_metas.get(t) or _intern(t)``)."""
    if len(_metas) > 4096:
        _metas.clear()
    _metas[t] = t
    return t

_INFERENCE_SAVE_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use it "
    "in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def connect(node, inputs, avals):
    """Link a new node into the graph: its sequence number, one edge per input (``(None, 0)`` for an input that
    needs no gradient, a leaf's AccumulateGrad for a leaf), ``_mask`` (which edges need a gradient), the inputs'
    avals (``_in_meta``) and, in anomaly mode, the forward trace that made it."""
    node._seq = next(_seq_counter)
    if len(inputs) == 1 and inputs[0] is not None and inputs[0]._grad_fn is not None:  # the common case, made short
        t = inputs[0]
        node.next_functions = ((t._grad_fn, t._output_nr),)
        node._mask = _ONE_TRUE
    else:
        edges = []
        mask = []
        for t in inputs:
            if t is None or not t._requires_grad:
                edges.append((None, 0))
                mask.append(False)
            elif t._grad_fn is not None:
                edges.append((t._grad_fn, t._output_nr))
                mask.append(True)
            else:
                acc = grad_accumulator(t)
                edges.append((acc, 0))
                mask.append(acc is not None)
        node.next_functions = tuple(edges)
        mask = tuple(mask)
        node._mask = _metas.get(mask) or _intern(mask)
    node._in_meta = _metas.get(avals) or _intern(avals)
    if _anomaly.enabled:
        node._anomaly_trace = _forward_trace()
    return node


def set_history(t, node, nr):
    """``t`` is output ``nr`` of ``node``."""
    t._requires_grad = True
    t._grad_fn = node
    t._output_nr = nr


def rebase_history(t, node, nr):
    """An in-place write makes ``t`` output ``nr`` of ``node``; ``retain_grad`` follows it to the new node."""
    if t._retains_grad:
        old = t._grad_fn
        if old is not None and old._retains_grad:
            old._retains_grad.pop(t._output_nr, None)
        node._retains_grad = {nr: weakref.ref(t)}
    set_history(t, node, nr)


def save(t, output_nr=-1, check_version=True):
    """One slot of a node's ``_for_backward`` for tensor ``t`` (``output_nr >= 0``: ``t`` is that output of the node,
    kept as data only, so no Tensor <-> Node cycle). Inside ``saved_tensors_hooks`` the innermost pack hook runs now.
    A Python scalar (a wrapped number) is kept as it is; ``check_version=False``: nothing can modify what is saved
    (an in-place target's value before the write)."""
    if t._wrapped_number:
        return _saved_number(t)
    hooks = _saved_hooks.stack
    if hooks:
        return _HookedSavedTensor(t, hooks[-1], output_nr)
    if output_nr >= 0:
        return _SavedTensor(t._data, None, t._version_counter(), output_nr)
    if not check_version:
        return _SavedTensor(t._data, t, None, -1)
    if t._is_inference:
        raise RuntimeError(_INFERENCE_SAVE_MSG)
    return _SavedTensor(t._data, t, t._vc or _LATE, -1)


_numbers = {}  # id of a wrapped number -> its slot, shared by the nodes saving it (nothing changes a saved slot)


def _saved_number(t):
    """The saved slot of wrapped number ``t`` (a Python scalar operand: nothing to check; the slot keeps ``t``, so
    its id stays valid)."""
    s = _numbers.get(id(t))
    if s is None:
        if len(_numbers) > 4096:
            _numbers.clear()
        s = _numbers[id(t)] = _SavedTensor(t._data, t, None, -1)
    return s


def record(op, args, arrays, statics, outs, inplace=None):
    """Record one call of table op ``op``: its node, the output tensors that point to it (``inplace``: the target
    that the first output is written into) and the tensors the op saves. Returns the output tensors.
    (The package's hottest path: the common cases of ``set_history`` and ``save`` are written out here.)"""
    out_meta = tuple([None if o is None else o.aval for o in outs])
    out_meta = _metas.get(out_meta) or _intern(out_meta)
    node = new_node(op, args, arrays, statics, out_meta)
    if inplace is not None and op.saves:  # the target's value before the write, with its history (torch's
        original = _wrap(arrays[0])         # "original self"), for formulas and create_graph that need it
        original._grad_fn, original._output_nr = inplace._grad_fn, inplace._output_nr
        original._requires_grad = inplace._requires_grad
        version_before = inplace._version

    results = []
    for k, o in enumerate(outs):
        if o is None:  # only from a backward formula run as an op (create_graph) that gave no gradient
            results.append(None)
            continue
        if k == 0 and inplace is not None:
            t = inplace
            t._data = o
            t._version_counter().version += 1
            if out_meta[k].dtype.kind in "fcV":
                rebase_history(t, node, 0)
            elif not op.int_plain:  # an integer target takes the node too, and refuses any gradient (torch's
                rebase_history(t, node, 0)  # engine asserts that a gradient is floating)
                refuse_grads(node)
        else:
            t = _new(Tensor)  # grad mode is on here, so never an inference tensor
            t._data = o
            if out_meta[k].dtype.kind in "fcV":
                t._requires_grad = True
                t._grad_fn = node
                t._output_nr = k
            elif not op.int_plain:
                _check_int_result(op, args, o.dtype)
        results.append(t)

    if op.saves:
        mask = node._mask
        plain = not _saved_hooks.stack
        saved = []
        for name, kind, index, needed_by in op.saves:
            if needed_by:  # saved only if a gradient that uses it will be computed
                for j in needed_by:
                    if mask[j]:
                        break
                else:
                    saved.append(None)
                    continue
            if kind == "out":
                saved.append(save(results[index], index))
            elif kind == "nout":  # an output torch does not differentiate (log_sigmoid's buffer): no history
                t = results[index]
                t._grad_fn, t._requires_grad = None, False
                saved.append(save(t))
            else:
                t = args[index]
                if t is None:
                    saved.append(None)
                elif t is inplace and index == 0:
                    saved.append(save(original, check_version=False))
                elif inplace is not None and t._vc is inplace._vc:  # the target (or a view of it) passed again as
                    s = save(t)  # another input, y.mul_(y): saved as it was before the write, so that backward
                    if isinstance(s, _SavedTensor):  # sees the write and raises torch's version error
                        s.version = version_before
                    saved.append(s)
                elif t._wrapped_number:  # save(t)'s common cases
                    saved.append(_numbers.get(id(t)) or _saved_number(t))
                elif plain and not t._is_inference:
                    saved.append(_SavedTensor(t._data, t, t._vc or _LATE, -1))
                else:
                    saved.append(save(t))
        node._for_backward = tuple(saved)
    return results


def record_pending(op, args, data, statics):
    """``record``'s commonest case made short (lazy mode, see ``_registry._apply``): ``args`` a tensor with a node
    and, if two, a tensor with a node, a wrapped number or a tensor that does not require grad; ``data`` the one
    floating output; no saved-tensor hooks, no anomaly mode. Returns the output tensor."""
    a = args[0]
    node = _new(op.node_cls)
    node._seq = next(_seq_counter)
    if len(args) == 1:
        node.next_functions = ((a._grad_fn, a._output_nr),)
        mask = node._mask = _ONE_TRUE
        in_meta = (a._data.aval,)
    else:
        b = args[1]
        if b._grad_fn is None:  # a wrapped number, or a tensor that does not require grad
            node.next_functions = ((a._grad_fn, a._output_nr), _NO_EDGE)
            mask = node._mask = _TRUE_FALSE
        else:
            node.next_functions = ((a._grad_fn, a._output_nr), (b._grad_fn, b._output_nr))
            mask = node._mask = _TRUE_TRUE
        in_meta = (a._data.aval, b._data.aval)
    node._in_meta = _metas.get(in_meta) or _intern(in_meta)
    out_meta = (data.aval,)
    node._out_meta = _metas.get(out_meta) or _intern(out_meta)
    node._statics = statics
    t = _new(Tensor)
    t._data = data
    t._requires_grad = True
    t._grad_fn = node
    t._output_nr = 0
    if op.saves:
        saved = []
        for name, kind, index, needed_by in op.saves:
            if needed_by and not mask[needed_by[0]]:  # (one position: see OpDef's saves)
                saved.append(None)
            elif kind == "out":
                saved.append(_SavedTensor(data, None, t._version_counter(), index))
            else:
                s = args[index]
                saved.append((_numbers.get(id(s)) or _saved_number(s)) if s._wrapped_number else
                             _SavedTensor(s._data, s, s._vc or _LATE, -1))
        node._for_backward = tuple(saved)
    else:
        node._for_backward = ()
    return t


def refuse_grads(node):
    """The node of an integer tensor that requires grad: a gradient reaching it is torch's engine assert."""
    node._apply = _refuse_int_grad


def _refuse_int_grad(grads, mask=None):
    raise RuntimeError(INT_GRAD_MSG)


INT_GRAD_MSG = ('isDifferentiableType(grad.scalar_type()) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/'
                'csrc/autograd/engine.cpp":998, please report a bug to PyTorch. ')


def _check_int_result(op, args, dtype):
    """torch refuses an integer result of a differentiable op from an integer input that requires grad (one written
    in place from a value that requires grad)."""
    for i in op.diff:
        a = args[i]
        if a is not None and a._requires_grad and a._data.dtype.kind not in "fcV":
            raise RuntimeError(f"Autograd not support dtype: {_type_string(dtype)[6:-6]}")


def new_node(op, args, arrays, statics, out_meta):
    """A node of table op ``op`` connected to the inputs' nodes (no outputs, nothing saved yet)."""
    node = _new(op.node_cls)
    diff = op.diff
    t = args[diff[0]] if len(diff) == 1 else None
    if t is not None and t._grad_fn is not None and not _anomaly.enabled:  # connect()'s commonest case
        node._seq = next(_seq_counter)
        node.next_functions = ((t._grad_fn, t._output_nr),)
        node._mask = _ONE_TRUE
        in_meta = (arrays[diff[0]].aval,)
        node._in_meta = _metas.get(in_meta) or _intern(in_meta)
    elif len(args) == 2 and len(diff) == 2 and not _anomaly.enabled and args[1] is not None \
            and args[1]._wrapped_number and args[0]._grad_fn is not None:  # y * 2.0: the next commonest case
        t = args[0]
        node._seq = next(_seq_counter)
        node.next_functions = ((t._grad_fn, t._output_nr), _NO_EDGE)
        node._mask = _TRUE_FALSE
        in_meta = (arrays[0].aval, arrays[1].aval)
        node._in_meta = _metas.get(in_meta) or _intern(in_meta)
    elif len(diff) == len(args):  # every input differentiable
        connect(node, args, tuple([None if a is None else a.aval for a in arrays]))
    else:
        connect(node, [args[i] for i in diff], tuple([None if arrays[i] is None else arrays[i].aval for i in diff]))
    node._statics = statics
    node._out_meta = out_meta
    node._for_backward = ()  # (record fills it when the op saves tensors)
    return node


def interpose(node, pos, op, tensor, statics, out_aval):
    """Put a node of the one-input, nothing-saving ``op`` (applied to ``tensor``) on edge ``pos`` of ``node``.

    For fused forwards that must still show torch's graph: e.g. ``linear`` computes ``x @ W.T + b`` in one
    jitted call, but torch records AddmmBackward0 -> TBackward0 -> W, so the TBackward0 node is made here
    without ever materialising ``W.T``. ``out_aval`` is what ``op`` would have produced; the outer node
    must hand the inner one a gradient of that shape.
    """
    if node.next_functions[pos][0] is None:
        return
    inner = new_node(op, (tensor,), (tensor._data,), statics, (out_aval,))
    edges = list(node.next_functions)
    edges[pos] = (inner, 0)
    node.next_functions = tuple(edges)
