"""torchlike.autograd.functional: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``hvp``, ``vhp`` (torch's API).

Everything is built on ``autograd.grad``: a jvp is the double-backward trick (the backward is linear in its
grad_outputs, so differentiating it with respect to them gives J @ v), a Jacobian is one vjp per output
element, or with ``vectorize=True`` a single ``grad(..., is_grads_batched=True)`` call over the standard basis
(``jax.vmap``-ed). ``strategy="forward-mode"`` pushes the standard basis of the inputs through
``forward_ad`` dual tensors, batched by ``jax.vmap``. Checks and their order follow torch, so each misuse
raises torch's error (type and message).
"""
import jax
import jax.numpy as jnp

import torchlike as _tl

from .._internal import enable_grad, grad_enabled, set_grad_enabled
from . import forward_ad as fwAD

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# --- helpers -------------------------------------------------------------------------------------------------

def _as_tuple(x, arg_name, fn_name):
    """(was it a tuple, tuple of Tensors); torch's TypeError for anything that is not a Tensor."""
    is_tuple = isinstance(x, tuple)
    items = x if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, _tl.Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but the {where} has type {type(el)}.")
    return is_tuple, items


def _untuple(res, is_tuple):
    """Undo ``_as_tuple``: ``is_tuple`` is a bool, or (outer, inner) for a tuple of tuples."""
    if isinstance(is_tuple, tuple):
        outer, inner = is_tuple
        if not inner:
            res = tuple(r[0] for r in res)
        return res if outer else res[0]
    return res if is_tuple else res[0]


def _prepare(tensors, create_graph, need_graph):
    """Fresh Tensor objects: a differentiable alias when the caller wants history back, else detached."""
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(res, create_graph):
    """Detach (nested) results unless ``create_graph``."""
    if isinstance(res[0], _tl.Tensor):
        return res if create_graph else tuple(r.detach() for r in res)
    return tuple(_finish(r, create_graph) for r in res)


def _check_v(v, ref, ref_is_tuple):
    if len(v) != len(ref):
        if ref_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(ref)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, ref)):
        if a.size() != b.size():
            where = f"Entry {i} in " if ref_is_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")


_STRICT = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The outputs must be "
               "computed in a differentiable manner from the input when running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of the user-provided "
                   "function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
                "respect to input {i} is independent of the input. This is not allowed in strict mode. You "
                "should ensure that your function is twice differentiable and that the jacobian depends on the "
                "inputs (this would be violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is independent of the "
               "input. This is not allowed in strict mode. You should ensure that your function is thrice "
               "differentiable and that the hessian depends on the inputs.",
}


def _strict_requires_grad(tensors, kind, strict):
    """In strict mode every entry must exist and require grad."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None, is_grads_batched=False):
    """``autograd.grad`` over the outputs that require grad (None entries skipped); Nones if there are none."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _tl.autograd.grad(tuple(o for o, _ in pairs), inputs, tuple(g for _, g in pairs), allow_unused=True,
                             create_graph=create_graph, retain_graph=retain_graph,
                             is_grads_batched=is_grads_batched)


_ZERO_FILL = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not "
                   "allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    """Replace missing gradients by zeros (or raise torch's strict-mode error)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_FILL[stage].format(i=i))
            g = _tl.zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _call(func, inputs, fn_name, strict):
    outputs = func(*inputs)
    is_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _strict_requires_grad(outputs, "outputs", strict)
    return is_tuple, outputs


def _default_v_check(v, ref, ref_is_tuple, create_graph, fn_name, none_ok, none_msg):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _check_v(v, ref, ref_is_tuple)
        return v
    if not none_ok:
        raise RuntimeError(none_msg)
    return None


_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                 "with a single element.")


def _single_element(ts):
    return len(ts) == 1 and ts[0].nelement() == 1


# --- vjp / jvp -----------------------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(*inputs), v^T J)``: the vector-Jacobian product at ``inputs``."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        v = _default_v_check(v, outputs, outputs_tuple, create_graph, "vjp", _single_element(outputs),
                             "The vector v can only be None if the user-provided function returns a single "
                             "Tensor with a single element.")
    with set_grad_enabled(True if create_graph else grad_enabled()):
        res = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "back")
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(res, create_graph), inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(*inputs), J v)``, computed with the double-backward trick as torch does."""
    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _default_v_check(v, inputs, inputs_tuple, create_graph, "jvp", _single_element(inputs),
                             "The vector v can only be None if the input to the user-provided function is a "
                             "single Tensor with a single element.")
        outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # The backward is linear in these dummy grad_outputs: any finite value works.
        dummies = tuple(_tl.zeros_like(o, requires_grad=True) for o in outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _strict_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else grad_enabled()):
        res = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, outputs, strict, create_graph, "back_trick")
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(res, create_graph), outputs_tuple))


# --- jacobian / hessian --------------------------------------------------------------------------------------

def _basis(tensors, numels):
    """The identity of size sum(numels), split by columns: one (total, numel_i) chunk per tensor, its dtype."""
    total = sum(numels)
    chunks, start = [], 0
    for t, n in zip(tensors, numels):
        chunk = jnp.eye(total, n, k=-start, dtype=t._data.dtype)
        chunks.append(_tl._tensor._wrap(chunk))
        start += n
    return tuple(chunks)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      '`strategy="forward-mode"` are not supported together (yet). Please either '
                                      'set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)

    with enable_grad():
        inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are "
                                   "not supported together. Please either set `strict=False` or "
                                   "`vectorize=False`.")
            jac = _jacrev_vectorized(outputs, inputs, create_graph)
        else:
            jac = _jacrev_rows(outputs, inputs, create_graph, strict)
        return _untuple(_finish(jac, create_graph), (outputs_tuple, inputs_tuple))


def _jacrev_vectorized(outputs, inputs, create_graph):
    """One batched vjp over the standard basis of all outputs, split back per output."""
    numels = tuple(o.numel() for o in outputs)
    flat = tuple(o.reshape(-1) for o in outputs)
    rows = list(_grad(flat, inputs, _basis(outputs, numels), create_graph=create_graph, is_grads_batched=True))
    for k, r in enumerate(rows):
        if r is None:
            rows[k] = _tl.zeros_like(inputs[k]).expand((sum(numels),) + tuple(inputs[k].shape))
    per_input = [[part.view(tuple(o.shape) + tuple(inp.shape)) for part, o in zip(r.split(numels, dim=0), outputs)]
                 for r, inp in zip(rows, inputs)]
    return tuple(zip(*per_input))


def _jacrev_rows(outputs, inputs, create_graph, strict):
    """One vjp per output element, stacked."""
    jac = []
    for i, out in enumerate(outputs):
        cols = [[] for _ in inputs]
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            row = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (g, inp) in enumerate(zip(row, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                           f"{k}. This is not allowed in strict mode.")
                    g = _tl.zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    # torch reports the output index here
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode when create_graph=True.")
                cols[k].append(g)
        jac.append(tuple(_tl.stack(c, dim=0).view(tuple(out.shape) + tuple(inp.shape))
                         for c, inp in zip(cols, inputs)))
    return tuple(jac)


def _jacfwd(func, inputs, strict, vectorize):
    """Forward-mode Jacobian: the inputs' standard basis as tangents of dual inputs, batched by jax.vmap."""
    if strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` are "
                           "not supported together (yet). Please either set `strict=False` or "
                           '`strategy="reverse-mode"`.')
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    wrap = _tl._tensor._wrap
    numels = tuple(inp.numel() for inp in inputs)
    info = []  # filled while tracing: (outputs were a tuple, output shapes)

    def push(*tangents):  # one column of the basis per input -> the outputs' tangents (J @ e_k)
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(inp, wrap(t).view_as(inp)) for inp, t in zip(inputs, tangents))
            is_tuple, outs = _as_tuple(func(*duals), "outputs", None)
            jv = []
            for out in outs:
                primal, tangent = fwAD.unpack_dual(out)
                jv.append((_tl.zeros_like(primal) if tangent is None else tangent)._data)
            info[:] = [is_tuple, [tuple(o.shape) for o in outs]]
        return tuple(jv)

    columns = jax.vmap(push)(*(b._data for b in _basis(inputs, numels)))  # each (sum(numels), *out_shape)
    outputs_tuple, out_shapes = info
    jac = []
    for col, out_shape in zip(columns, out_shapes):
        blocks, start = [], 0
        for inp, n in zip(inputs, numels):
            part = jnp.moveaxis(col[start:start + n], 0, -1)  # the basis (input) dim goes last
            blocks.append(wrap(part.reshape(out_shape + tuple(inp.shape))))
            start += n
        jac.append(blocks)
    return _untuple(jac, (outputs_tuple, inputs_tuple))  # lists, as torch returns them here


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func``: ``H[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*inp):
        out = func(*inp)
        is_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _strict_requires_grad(outs, "outputs", strict)
        if is_tuple or not isinstance(out, _tl.Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(scalar_func, inp, create_graph=True)
        _strict_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _untuple(res, (inputs_tuple, inputs_tuple))


# --- hvp / vhp -----------------------------------------------------------------------------------------------

def _scalar_setup(func, inputs, v, create_graph, strict, fn_name):
    """Shared start of vhp/hvp: checked inputs, v, the scalar output and its gradient (with history)."""
    inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    v = _default_v_check(v, inputs, inputs_tuple, create_graph, fn_name, _single_element(inputs),
                         _V_NONE_INPUT)
    outputs_tuple, outputs = _call(func, inputs, fn_name, strict)
    if outputs_tuple or not isinstance(outputs[0], _tl.Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                           "element")
    jac = _grad(outputs, inputs, create_graph=True)
    _strict_requires_grad(jac, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(*inputs), v^T H)`` for a scalar ``func``."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _scalar_setup(func, inputs, v, create_graph,
                                                                             strict, "vhp")
    with set_grad_enabled(True if create_graph else grad_enabled()):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back")
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(res, create_graph), inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Return ``(func(*inputs), H v)`` for a scalar ``func`` (double-backward trick, as torch)."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs_tuple, outputs, jac = _scalar_setup(func, inputs, v, create_graph,
                                                                             strict, "hvp")
        dummies = tuple(_tl.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _strict_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else grad_enabled()):
        res = _grad(double_back, dummies, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back_trick")
    return (_untuple(_finish(outputs, create_graph), outputs_tuple),
            _untuple(_finish(res, create_graph), inputs_tuple))
