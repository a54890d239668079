"""torch.autograd.gradcheck: check autograd's gradients against central finite differences.

``gradcheck(func, inputs)`` compares, for every differentiable output and every input that requires
grad, the analytical Jacobian (one vector-Jacobian product per output element, through
``autograd.grad``) with a numerical one (each input element moved by ``-eps`` and ``+eps`` in place,
in the input's own dtype, as torch does through ``x.data``), using torch's rule
``|analytical - numerical| <= atol + rtol * |numerical|``. Then, as torch: the backward must be
deterministic (``nondet_tol``), multiplied by grad_output, and must accept undefined output
gradients. ``fast_mode=True`` compares ``v^T J u`` for random unit vectors ``u``, ``v`` instead of the
whole Jacobian (torch's random projection; the vectors come from a fixed-seed NumPy generator, so the
user's RNG is untouched). Complex outputs are checked as their real and imaginary parts, complex
inputs through the conjugate Wirtinger derivative, as in torch. ``check_forward_ad`` uses
``torchlike.autograd.forward_ad``.

``gradgradcheck`` runs ``gradcheck`` on the function ``(inputs, grad_outputs) -> autograd.grad(...,
create_graph=True)``. Failures raise ``GradcheckError`` (a RuntimeError) with torch's message, or
return False when ``raise_exception=False``.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import autograd as _autograd  # the package, still being initialised here: grad() is read at call time
from .._internal import dtype_from_np, wrap, write
from .._tensor import Tensor
from ..ops.creation import rand, randn_like, zeros_like
from . import forward_ad as fwAD
from .engine import _run_backward

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


# ----- small helpers -------------------------------------------------------------------------------------
def _is_tensor(x):
    return isinstance(x, Tensor)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_float_or_complex(t):
    return _is_tensor(t) and t._data.dtype.kind in "fcV"  # V: bfloat16


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _diff_inputs(inputs):
    return [t for t in inputs if _is_tensor(t) and t.requires_grad]


def _np(t):
    return np.asarray(t._data)


def _show(a):
    """A NumPy array as a torchlike Tensor, for torch's messages (which print tensors)."""
    return wrap(jnp.asarray(a))


def _real_dtype(dt):
    return np.finfo(dt).dtype if dt.kind == "c" else dt


def _allclose(a, b, rtol, atol):
    """torch.allclose after type promotion: |a - b| <= atol + rtol * |b|, NaN never close."""
    dt = np.promote_types(a.dtype, b.dtype)
    return bool(np.allclose(a.astype(dt), b.astype(dt), rtol=rtol, atol=atol))


def _max_abs(a):
    return np.abs(a).max() if a.size else 0.0


# ----- moving an input in place (torch writes through ``x.data``: no version bump, no autograd) ---------
def _set_data(t, array):
    if t._storage is None:
        t._data = array
    else:  # t shares storage with views or aliases: they see the new values too
        write(t, array)


@jax.jit
def _shift_entry(a, i, d):
    flat = a.reshape(-1)
    return flat.at[i].set(flat[i] + d).reshape(a.shape)


@jax.jit
def _shift_all(a, d):
    return (a + d.reshape(a.shape)).astype(a.dtype)


def _check_same_dtype_and_shape(out1, out2, eps, idx=None):
    on_index = f"on index {idx} " if idx is not None else ""
    if out1.shape != out2.shape:
        raise AssertionError(f"Expected `func` to return outputs with the same shape when inputs are perturbed "
                             f"{on_index}by {eps}, but got: shapes {out1.shape} and {out2.shape}.")
    if out1.dtype != out2.dtype:
        raise AssertionError(f"Expected `func` to return outputs with the same dtype when inputs are perturbed "
                             f"{on_index}by {eps}, but got: dtypes {out1.dtype} and {out2.dtype}.")


def _outputs_snapshot(fn, inputs):
    """Call fn; its outputs' current arrays (torch clones them: the input may be returned and then moved)."""
    return [wrap(o._data) for o in _as_tuple(fn(*inputs))]


def _central_difference(fn, inputs, x, lo, hi, norm, eps, idx=None):
    """(f(x = hi) - f(x = lo)) / (2 * norm) per output of fn, flattened (NumPy)."""
    orig = x._data
    try:
        _set_data(x, lo)
        outa = _outputs_snapshot(fn, inputs)
        _set_data(x, hi)
        outb = _outputs_snapshot(fn, inputs)
    finally:
        _set_data(x, orig)
    res = []
    for a, b in zip(outa, outb):
        _check_same_dtype_and_shape(a, b, eps, idx)
        diff = _np(b) - _np(a)
        d = diff / (2 * norm)
        res.append((d.astype(diff.dtype) if diff.dtype.kind in "fcV" else d).reshape(-1))  # bfloat16 stays
    return res


def _directional(fn, inputs, x, shift, eps, idx=None):
    """Numerical derivative of every output of fn along ``shift`` (a function of the delta), complex-aware:
    for a complex input, d/dx + 1j * d/dy (torch's conjugate Wirtinger convention)."""
    orig = x._data
    ds_dx = _central_difference(fn, inputs, x, shift(orig, -1.0), shift(orig, 1.0), eps, eps, idx)
    if orig.dtype.kind != "c":
        return ds_dx
    ds_dy = _central_difference(fn, inputs, x, shift(orig, -1j), shift(orig, 1j), eps, eps, idx)
    return [dx + dy * 1j for dx, dy in zip(ds_dx, ds_dy)]


def _numerical_jacobian(fn, inputs, eps, float_outputs=None):
    """Per input requiring grad, per float/complex output of fn: the (input numel, output numel) Jacobian."""
    if float_outputs is None:
        float_outputs = [_is_float_or_complex(o) for o in _as_tuple(fn(*inputs))]
    jacobians = []
    for x in _diff_inputs(inputs):
        cols = []
        for d_idx, idx in enumerate(np.ndindex(*x.shape)):
            def shift(a, sign, d_idx=d_idx):
                return _shift_entry(a, d_idx, sign * eps)
            cols.append(_directional(fn, inputs, x, shift, eps, idx))
        if not cols:  # an empty input: empty Jacobians of the outputs' widths
            cols = [[np.zeros((0, o.numel()), o._data.dtype) for o in _outputs_snapshot(fn, inputs)]]
            stack = np.concatenate
        else:
            stack = np.stack
        complex_dt = x._data.dtype if x._data.dtype.kind == "c" else None
        jacobians.append([stack([c[k] for c in cols]).astype(complex_dt or cols[0][k].dtype)
                          for k, keep in enumerate(float_outputs) if keep])
    return jacobians


# ----- analytical Jacobians (autograd.grad) -----------------------------------------------------------------
_FAILED_NONDET_MSG = """\n
NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""


def _vjp_rows(output, diff_inputs, grad_outputs):
    """One autograd.grad per grad_output: rows[j][i] is the gradient (Tensor or None) for input i."""
    return [_autograd.grad(output, diff_inputs, wrap(jnp.asarray(g)), retain_graph=True, allow_unused=True)
            for g in grad_outputs]


def _basis(output):
    """The one-hot grad_outputs that pick the rows of the Jacobian, one per element of ``output``."""
    n = output.numel()
    eye = np.eye(n, dtype=output._data.dtype)
    return [eye[j].reshape(output.shape) for j in range(n)]


def _stack_rows(rows, diff_inputs):
    """Per input: its Jacobian (numel, len(rows)) in the input's dtype; and whether sizes and dtypes were right."""
    sizes_ok = types_ok = True
    jacobians = []
    for i, inp in enumerate(diff_inputs):
        jac = np.zeros((inp.numel(), len(rows)), inp._data.dtype)
        for j, row in enumerate(rows):
            g = row[i]
            if g is None:
                continue
            if g.shape != inp.shape:
                sizes_ok = False
            elif g.dtype != inp.dtype:
                types_ok = False
            if g.numel() != inp.numel():
                raise AssertionError(f"Expected out_jacobian column to have {g.numel()} elements, "
                                     f"but got {inp.numel()}")
            jac[:, j] = _np(g).reshape(-1)
        jacobians.append(jac)
    return jacobians, sizes_ok, types_ok


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes, v=None):
    """Per input requiring grad: d output / d input from backward (all rows, or the single row ``v^T J``),
    computed twice to check that the backward is deterministic."""
    diff = _diff_inputs(inputs)
    grad_outputs = _basis(output) if v is None else [v.reshape(output.shape)]
    jac1, sizes_ok, types_ok = _stack_rows(_vjp_rows(output, diff, grad_outputs), diff)
    jac2, _, _ = _stack_rows(_vjp_rows(output, diff, grad_outputs), diff)
    reentrant = all(a.size == 0 or not _max_abs(a - b) > nondet_tol for a, b in zip(jac1, jac2))
    # torch swaps the two flags when it unpacks them; its messages follow from that, so do ours
    if not sizes_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not types_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + _FAILED_NONDET_MSG)
    return jac1


def _notallclose_msg(analytical, numerical, output_idx, input_idx, complex_indices, test_imag=False,
                     is_forward_ad=False):
    out_is_complex = (not is_forward_ad) and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if test_imag else "real"
    element = "inputs" if is_forward_ad else "outputs"
    prefix = (f"While considering the {part} part of complex {element} only, "
              if out_is_complex or inp_is_complex else "")
    mode = "computed with forward mode " if is_forward_ad else ""
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{_show(numerical)}\nanalytical:{_show(analytical)}\n")


def _check_no_differentiable_outputs(func, inputs, eps, float_outputs):
    for per_output in _numerical_jacobian(func, inputs, eps, float_outputs):
        for jac in per_output:
            if np.count_nonzero(jac) > 0:
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


# ----- slow mode: whole Jacobians --------------------------------------------------------------------------
def _slow_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, *,
                    use_forward_ad=False, complex_indices=None, test_imag=False, masked=False):
    func_out = _as_tuple(func_out)
    float_outputs = [_is_float_or_complex(o) for o in func_out]
    if not outputs:
        return _check_no_differentiable_outputs(func, inputs, eps, float_outputs)
    numerical = _numerical_jacobian(func, inputs, eps, float_outputs)  # [input][float output]
    float_out = [o for o in func_out if _is_float_or_complex(o)]
    # keep the Jacobians of the differentiable outputs: [output][input]
    numerical = [[per_in[k] for per_in in numerical] for k, o in enumerate(float_out) if o.requires_grad]
    if use_forward_ad:
        analytical = _forward_jacobian(func, inputs, func_out, check_grad_dtypes=check_grad_dtypes)
        for i, n_per_out in enumerate(numerical):
            for j, n in enumerate(n_per_out):
                a = analytical[j][i]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_notallclose_msg(a, n, i, j, complex_indices, test_imag, True))
        return True
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, complex_indices, test_imag))
    return True


# ----- fast mode: random projections v^T J u -----------------------------------------------------------------
_FAST_FAIL_SLOW_OK_MSG = """
Fast gradcheck failed but element-wise differences are small. This means that the
test might've passed in slow_mode!

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck:

If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `fast_mode=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_fast_mode=False`
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_fast_mode=False`
""".strip()


def _unit_vector(rng, n, dtype):
    vec = rng.random(n, dtype=np.float32).astype(dtype)
    return (vec / np.sqrt(np.sum(vec.astype(np.float64) ** 2))).astype(dtype)


def _make_vectors(inp_tensors, outputs, use_forward_ad):
    """Random non-negative unit vectors u (per input; (ur, ui) for complex) and v (per output), drawn from a
    generator of our own so that the user's RNG state is left alone (torch does the same)."""
    rng = np.random.default_rng(0)
    all_u = []
    for inp in inp_tensors:
        dt = inp._data.dtype
        ur = _unit_vector(rng, inp.numel(), _real_dtype(dt))
        all_u.append((ur, _unit_vector(rng, inp.numel(), _real_dtype(dt))) if dt.kind == "c" else ur)
    all_v = None if use_forward_ad else [_unit_vector(rng, o.numel(), o._data.dtype) for o in outputs]
    return all_v, all_u


def _numerical_jvp(fn, inputs, x, u, eps):
    """J u for every output of fn, by moving the whole input along u * eps (a complex input: its real part
    along ur, its imaginary part along ui)."""
    ur, ui = (u if isinstance(u, tuple) else (u, None))
    ur, ui = jnp.asarray(ur * eps), (None if ui is None else jnp.asarray(ui * eps))

    def shift(a, sign):
        return _shift_all(a, (ur if isinstance(sign, float) else ui) * sign)
    return _directional(fn, inputs, x, shift, eps)


def _adjusted_atol(atol, u, v):
    """Slow mode allows atol per element; for v^T J u that becomes atol * sum(u) * sum(v)."""
    sum_v = 1.0 if v is None else float(v.sum())
    if isinstance(u, tuple):
        return atol * (float(u[0].sum()) + float(u[1].sum())) * sum_v
    return atol * float(u.sum()) * sum_v


def _run_slow_mode_and_get_error(func, inputs, outputs, input_idx, output_idx, rtol, atol, eps, is_forward_ad):
    slow_numerical = _numerical_jacobian(func, inputs, eps)[input_idx][output_idx]
    if is_forward_ad:
        slow_analytical = _forward_jacobian(func, inputs, outputs)[input_idx][output_idx]
    else:
        slow_analytical = _analytical_jacobian(inputs, outputs[output_idx], float("inf"), False)[input_idx]
    dt = np.promote_types(slow_numerical.dtype, slow_analytical.dtype)
    slow_max_diff = np.abs(slow_numerical.astype(dt) - slow_analytical.astype(dt)).max()
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \n"
           "in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \n"
           "about fast mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\n"
           f"Numerical:\n {_show(slow_numerical)}\n"
           f"Analytical:\n{_show(slow_analytical)}\n\n"
           f"The max per-element difference (slow mode) is: {_show(slow_max_diff)}.\n")
    if _allclose(slow_analytical, slow_numerical, rtol, atol):
        msg += _FAST_FAIL_SLOW_OK_MSG
    return msg


def _fast_gradcheck(func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, *,
                    use_forward_ad=False, complex_indices=None, test_imag=False, masked=False):
    inp_idx = [i for i, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    inp_tensors = [inputs[i] for i in inp_idx]
    all_v, all_u = _make_vectors(inp_tensors, outputs, use_forward_ad)
    func_out = _as_tuple(func_out)
    diff_float = [o.requires_grad for o in func_out if _is_float_or_complex(o)]

    numerical = []  # [input][output]: v^T (J u), or J u with forward AD
    for x, u in zip(inp_tensors, all_u):
        all_ju = _numerical_jvp(func, inputs, x, u, eps)
        if not outputs and not use_forward_ad:  # no differentiable output: J u must vanish
            for ju in all_ju:
                if ju.size and _max_abs(ju) > nondet_tol:
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        ju_float = [ju for ju, o in zip(all_ju, func_out) if _is_float_or_complex(o)]
        if all_v is None:
            numerical.append(ju_float)
        else:
            ju_diff = [ju for ju, d in zip(ju_float, diff_float) if d]
            numerical.append([np.sum(v * ju) for v, ju in zip(all_v, ju_diff)])

    if use_forward_ad:
        analytical = _forward_jacobian(func, inputs, func_out, check_grad_dtypes=check_grad_dtypes, all_u=all_u)
    else:
        analytical = []  # [output][input]: (v^T J) u
        for o, v in zip(outputs, all_v):
            all_vj = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes, v=v)
            row = []
            for vj, u in zip(all_vj, all_u):
                vj = vj[:, 0]
                if vj.dtype.kind == "c":
                    row.append(vj.real.dot(u[0]) + 1j * vj.imag.dot(u[1]))
                else:
                    row.append(vj.dot(u))
            analytical.append(row)

    for i, per_input in enumerate(numerical):
        for j, n in enumerate(per_input):
            a = analytical[i][j] if use_forward_ad else analytical[j][i]
            a, n = np.asarray(a), np.asarray(n)
            tol = _adjusted_atol(atol, all_u[i], all_v[j] if all_v else None)
            if not _allclose(a, n, rtol, tol):
                detail = _run_slow_mode_and_get_error(func, inputs, outputs, i, j, rtol, atol, eps, use_forward_ad)
                raise GradcheckError(_notallclose_msg(a, n, j, i, complex_indices, test_imag, use_forward_ad)
                                     + detail)
    return True


# ----- forward mode -------------------------------------------------------------------------------------------
def _forward_jacobian(fn, inputs, outputs, *, check_grad_dtypes=False, all_u=None):
    """Per input requiring grad, per float/complex output: the Jacobian from forward-mode AD, column by column
    (one jvp per input element), or the single column J u when ``all_u`` is given."""
    diff_pos = [p for p, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    if any(inputs[p].is_complex() for p in diff_pos):
        raise ValueError("Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad.")
    float_out = [o for o in outputs if _is_float_or_complex(o)]
    jacobians = []
    with fwAD.dual_level():
        plain = [t.detach() if p in diff_pos else t for p, t in enumerate(inputs)]
        for k, pos in enumerate(diff_pos):
            x = plain[pos]
            dt = x._data.dtype
            tangents = [all_u[k]] if all_u is not None else list(np.eye(x.numel(), dtype=dt))
            cols = [[] for _ in float_out]
            for tangent in tangents:
                args = list(plain)
                args[pos] = fwAD.make_dual(x, wrap(jnp.asarray(tangent.reshape(x.shape), dt)))
                duals = [o for o in _as_tuple(fn(*args)) if _is_float_or_complex(o)]
                for m, d in enumerate(duals):
                    val, res = fwAD.unpack_dual(d)
                    if check_grad_dtypes and res is not None and val.is_complex() != res.is_complex():
                        raise GradcheckError("Forward AD gradient has dtype mismatch.")
                    cols[m].append(np.zeros(val.numel(), val._data.dtype) if res is None else _np(res).reshape(-1))
            if all_u is not None:  # J u: one column
                jacobians.append([c[0] for c in cols])
            else:  # (input numel, output numel), as the numerical Jacobian
                jacobians.append([np.stack(c) if c else np.zeros((0, o.numel()), o._data.dtype)
                                  for c, o in zip(cols, float_out)])
    return jacobians


def _test_undefined_forward_mode(func, outputs, inputs):
    """Tangents that are absent must behave as zero tangents."""
    diff_pos = [p for p, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]
    _, all_u = _make_vectors([inputs[p] for p in diff_pos], outputs, True)
    with fwAD.dual_level():
        duals = list(inputs)
        for p, u in zip(diff_pos, all_u):
            x = inputs[p]
            duals[p] = fwAD.make_dual(x.detach(), wrap(jnp.asarray(u.reshape(x.shape), x._data.dtype)))
        for p in diff_pos:
            inp = inputs[p]
            keep = duals[p]
            duals[p] = fwAD.make_dual(inp.detach(), zeros_like(inp.detach()))
            outs1 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[p] = inp.detach()
            outs2 = [o for o in _as_tuple(func(*duals)) if _is_float_or_complex(o)]
            duals[p] = keep
            for index_o, (o1, o2) in enumerate(zip(outs1, outs2)):
                res1, res2 = fwAD.unpack_dual(o1)[1], fwAD.unpack_dual(o2)[1]
                if res1 is not None and res2 is not None and not _allclose(_np(res1), _np(res2), 1e-5, 1e-8):
                    raise GradcheckError("Mismatch in tangent values for output with index: ", index_o,
                                         " when input: ", inp, " has an undefined tangent value. ",
                                         " Got: ", res1, " but expected: ", res2)
    return True


# ----- complex outputs and inputs: check real and imaginary parts -------------------------------------------
def _real_and_imag_output(fn):
    def apply(part):
        def wrapped(*inputs):
            return tuple(getattr(o, part) if o.is_complex() else o for o in _as_tuple(fn(*inputs)))
        return wrapped
    return apply("real"), apply("imag")


def _real_and_imag_input(fn, complex_idx, inputs):
    def apply(make):
        def wrapped(*args):
            args = list(args)
            for k in complex_idx:
                args[k] = make(args[k], inputs[k])
            return _as_tuple(fn(*args))
        return wrapped
    return apply(lambda inp, orig: inp + orig.imag * 1j), apply(lambda inp, orig: orig.real + inp * 1j)


def _gradcheck_real_imag(gradcheck_fn, func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                         check_forward_ad, check_backward_ad, nondet_tol, check_undefined_grad):
    complex_out = [i for i, o in enumerate(outputs) if o.is_complex()]
    common = dict(eps=eps, rtol=rtol, atol=atol, check_grad_dtypes=check_grad_dtypes, nondet_tol=nondet_tol)
    if check_backward_ad:
        if any(o.is_complex() for o in _as_tuple(func_out)):
            real_fn, imag_fn = _real_and_imag_output(func)
            imag_out = imag_fn(*inputs)
            gradcheck_fn(imag_fn, imag_out, inputs, _differentiable_outputs(imag_out), **common,
                         complex_indices=complex_out, test_imag=True)
            real_out = real_fn(*inputs)
            gradcheck_fn(real_fn, real_out, inputs, _differentiable_outputs(real_out), **common,
                         complex_indices=complex_out)
        else:
            gradcheck_fn(func, func_out, inputs, outputs, **common)
    if check_forward_ad:
        complex_in = [i for i, t in enumerate(inputs) if _is_tensor(t) and t.is_complex()]
        if complex_in:
            real_fn, imag_fn = _real_and_imag_input(func, complex_in, inputs)
            imag_inputs = [t.imag if _is_tensor(t) and t.is_complex() else t for t in inputs]
            imag_out = imag_fn(*imag_inputs)
            gradcheck_fn(imag_fn, imag_out, imag_inputs, _differentiable_outputs(imag_out), **common,
                         complex_indices=complex_in, test_imag=True, use_forward_ad=True)
            real_inputs = [t.real if _is_tensor(t) and t.is_complex() else t for t in inputs]
            real_out = real_fn(*real_inputs)
            gradcheck_fn(real_fn, real_out, real_inputs, _differentiable_outputs(real_out), **common,
                         complex_indices=complex_in, use_forward_ad=True)
            if check_undefined_grad:
                _test_undefined_forward_mode(imag_fn, imag_out, imag_inputs)
                _test_undefined_forward_mode(real_fn, real_out, real_inputs)
        else:
            gradcheck_fn(func, func_out, inputs, outputs, **common, use_forward_ad=True)
            if check_undefined_grad:
                _test_undefined_forward_mode(func, outputs, inputs)


# ----- the other checks ------------------------------------------------------------------------------------
def _check_inputs(inputs):
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp._data.dtype not in (np.float64, np.complex128):
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", stacklevel=3)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return True


_FAILED_BATCHED_GRAD_MSG = """
gradcheck or gradgradcheck failed while testing batched gradient computation.
This could have been invoked in a number of ways (via a test that calls
gradcheck/gradgradcheck directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_grad=False` and/or `check_batched_gradgrad=False`.

If you're modifying an existing operator that supports batched grad computation,
or wish to make a new operator work with batched grad computation, please read
the following.

To compute batched grads (e.g., jacobians, hessians), we vmap over the backward
computation. The most common failure case is if there is a 'vmap-incompatible
operation' in the backward pass. Please see
NOTE: [How to write vmap-compatible backward formulas]
in the codebase for an explanation of how to fix this.
""".strip()


def _test_batched_grad(inputs, output, output_idx):
    """vjps of a batch of grad_outputs (autograd.grad(is_grads_batched=True)) equal the vjps one by one."""
    diff = _diff_inputs(inputs)

    def fill(results, batch=()):
        return [np.zeros(batch + tuple(i.shape), i._data.dtype) if g is None else _np(g)
                for g, i in zip(results, diff)]

    grad_outputs = [randn_like(output.detach()) for _ in range(2)]
    expected = [fill(_autograd.grad(output, diff, g, retain_graph=True, allow_unused=True)) for g in grad_outputs]
    expected = [np.stack(shards) for shards in zip(*expected)]
    stacked = wrap(jnp.stack([g._data for g in grad_outputs]))
    try:
        result = fill(_autograd.grad(output, diff, stacked, retain_graph=True, allow_unused=True, is_grads_batched=True),
                      (2,))
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{_FAILED_BATCHED_GRAD_MSG}") from ex
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        if not _allclose(res, exp, 1e-5, 1e-8):
            raise _batched_mismatch(output_idx, input_idx, _FAILED_BATCHED_GRAD_MSG, res, exp)
    return True


def _test_backward_mul_by_grad_output(outputs, inputs, masked):
    """Zero grad_outputs must give zero gradients of the inputs' type and size."""
    diff = _diff_inputs(inputs)
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads = _autograd.grad(outputs, diff, [zeros_like(o.detach()) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff):
        if gi is None:
            continue
        g = _np(gi)
        if masked:
            if not np.allclose(g, 0):
                raise GradcheckError("backward not multiplied by grad_output")
        elif not (g == 0).all():
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func, outputs, inputs):
    """Backward must accept undefined output gradients (here: None roots, torchlike's undefined gradient) and
    then give undefined or zero input gradients."""
    diff = _diff_inputs(inputs)
    if not diff:
        raise GradcheckError("no Tensors requiring grad found in input")

    def warn_bc_breaking():
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled by "
                      "default, but it may break existing callers of this function. If this is true for you, you "
                      'can call this function with "check_undefined_grad=False" to disable the feature',
                      stacklevel=3)

    def check(outs, undefined):
        grads = [None if u else zeros_like(o.detach()) for o, u in zip(outs, undefined)]
        try:
            grads_input = _run_backward(_autograd._roots(outs, grads), grads, False, False,
                                        inputs=_autograd._input_edges(diff, False),
                                        accumulate_grad=False, allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError('Expected backward function to handle undefined output grads. Please look at '
                                 '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
        for gi in grads_input:
            if gi is not None and not (_np(gi) == 0).all():
                warn_bc_breaking()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are undefined or zero. "
                    'Please look at "Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"')
        return True

    outs = [o for o in _differentiable_outputs(func(*inputs)) if _is_tensor(o)]
    cases = [(outs, [True] * len(outs))]
    if len(outs) > 1:  # undefine one output gradient at a time
        for k in range(len(outputs)):
            fresh = _differentiable_outputs(func(*inputs))
            cases.append((fresh, [idx == k for idx in range(len(fresh))]))
    return all(check(o, u) for o, u in cases)


# ----- public API --------------------------------------------------------------------------------------------
def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check the gradients of ``func`` at ``inputs`` (float64 tensors with requires_grad) against finite
    differences; True, or GradcheckError (False with ``raise_exception=False``)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    args = dict(func=func, inputs=inputs, eps=eps, atol=atol, rtol=rtol, nondet_tol=nondet_tol,
                check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                check_batched_grad=check_batched_grad, check_batched_forward_grad=check_batched_forward_grad,
                check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad, fast_mode=fast_mode,
                masked=masked)
    if not raise_exception:
        try:
            return _gradcheck_helper(**args)
        except GradcheckError:
            return False
    return _gradcheck_helper(**args)


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                      check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad,
                      fast_mode, masked):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = func(*inputs)
    outputs = _differentiable_outputs(func_out)

    def gradcheck_fn(*a, **k):
        return (_fast_gradcheck if fast_mode else _slow_gradcheck)(*a, masked=masked, **k)
    _gradcheck_real_imag(gradcheck_fn, func, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                         check_forward_ad=check_forward_ad, check_backward_ad=check_backward_ad,
                         nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad)
    if check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, inputs)
    if not check_backward_ad:
        return True
    for i, o in enumerate(outputs):
        if check_batched_grad:
            _test_batched_grad(inputs, o, i)
    _test_backward_mul_by_grad_output(outputs, inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, inputs)
    return True


_FAILED_BATCHED_GRAD_MSG_FWD_AD = """
gradcheck failed while testing batched gradient computation with forward-mode AD.
This test is enabled automatically when both `check_batched_grad=True`
and `check_forward_ad=True`, but can be disabled in the following ways
dependong on how the test was invoked (via a test that calls gradcheck
directly or via an autogenerated test).

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `check_batched_forward_grad=False` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `check_batched_forward_grad=False`
"""


def _batched_mismatch(output_idx, input_idx, msg, got, expected):
    """torch's error for a batched gradient that differs from the one computed per row."""
    return GradcheckError(f"""
For output {output_idx} and input {input_idx}:

{msg}

Got:
{_show(got)}

Expected:
{_show(expected)}
""".strip())


def _test_batched_grad_forward_ad(func, inputs):
    """jvps of a batch of tangents (``jax.vmap`` over the tangent) equal the jvps one by one."""
    for input_idx, current in enumerate(inputs):
        if not (_is_tensor(current) and current.requires_grad):
            continue

        def jvp(tangent, input_idx=input_idx, current=current):
            with fwAD.dual_level():
                dual = fwAD.make_dual(current.detach(), tangent)
                args = [dual if i == input_idx else (t.detach() if _is_tensor(t) else t)
                        for i, t in enumerate(inputs)]
                ret = []
                for out in _as_tuple(func(*args)):
                    if out is None:
                        continue
                    primal, tangent_out = fwAD.unpack_dual(out)
                    ret.append(tangent_out._data if tangent_out is not None else
                               jnp.zeros(primal.shape, primal._data.dtype))
                return ret

        if not _is_float_or_complex(current):
            continue
        tangents = [randn_like(current.detach()) for _ in range(2)]
        expected = [np.stack(shards) for shards in zip(*[jvp(t) for t in tangents])]
        try:
            result = jax.vmap(lambda t: jvp(wrap(t)))(jnp.stack([t._data for t in tangents]))
        except Exception as ex:  # noqa: BLE001 - torch reports a failing vmap as a GradcheckError too
            raise GradcheckError(f"While computing batched gradients, got: {ex}\n\n{_FAILED_BATCHED_GRAD_MSG_FWD_AD}"
                                 ) from ex
        for k, (res, exp) in enumerate(zip(result, expected)):  # torch names output and input both k
            res = np.asarray(res)
            if not _allclose(res, exp, 1e-5, 1e-8):
                raise _batched_mismatch(k, k, _FAILED_BATCHED_GRAD_MSG_FWD_AD, res, exp)
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False, masked=False):
    """Check the second derivatives of ``func``: gradcheck of ``(inputs, grad_outputs) -> autograd.grad(func(
    inputs), inputs, grad_outputs, create_graph=True)``; random grad_outputs in [-1, 1) when not given."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(_random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_input_idx = {i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad}
    diff_grad_output_idx = {i for i, x in enumerate(grad_outputs) if x.requires_grad}

    def new_func(*args):
        # gradcheck detaches its inputs for forward AD: restore requires_grad
        input_args = tuple(x.requires_grad_() if i in diff_input_idx else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        gos = tuple(x.requires_grad_() if i in diff_grad_output_idx else x
                    for i, x in enumerate(args[-num_outputs:]))
        diff_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_idx)
        grad_inputs = _autograd.grad(outputs, diff_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)


def _random_grad_output(out, noncontiguous):
    """Uniform in [-1, 1) like ``out`` (torch.testing.make_tensor), from torchlike's global RNG; with
    ``noncontiguous`` a strided view, as make_tensor makes it."""
    dt = out._data.dtype if out._data.dtype.kind in "fcV" else np.dtype(np.float64)
    shape = tuple(out.shape)
    wide = noncontiguous and out.numel() > 1
    full = shape[:-1] + (shape[-1] * 2,) if wide else shape
    real = _real_dtype(dt)
    data = rand(tuple(full), dtype=dtype_from_np(real))._data * 2 - 1
    if dt.kind == "c":
        data = data + 1j * (rand(tuple(full), dtype=dtype_from_np(real))._data * 2 - 1)
    t = wrap(data.astype(dt))
    if wide:
        t = t[..., ::2]
    return t.requires_grad_()
