"""Classes of differences from torch found by the random programs (tests/random_programs.py, seeds 40000-44999),
each checked against torch on the same inputs: errors (type and leading message), values with the sign of zero,
dtypes, gradients of first and second order, saved tensors and their version errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl


def _outcome(fn, m):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = fn(m)
        except Exception as e:  # noqa: BLE001
            return ("error", type(e).__name__, str(e).splitlines()[0])
    return _plain(r)


def _plain(r):
    if isinstance(r, (tuple, list)):
        return tuple(_plain(x) for x in r)
    if isinstance(r, (tl.Tensor, torch.Tensor)):
        a = np.asarray(r.detach().tolist())
        sign = np.signbit(a.real) & ~np.isnan(a.real)  # (the sign of zeros; a NaN's sign bit is the CPU's)
        return str(r.dtype).split(".")[-1], a.shape, repr(a.tolist()), repr(sign.tolist())
    return r


def _same(fn):
    a, b = _outcome(fn, tl), _outcome(fn, torch)
    assert a == b, (a, b)
    return b


def _stale_no_grad_view(m):
    """A view made in no_grad of a tensor that requires grad, whose base was then written in place."""
    x = m.tensor([0.4, 0.1, 0.9], requires_grad=True) * 1
    with m.no_grad():
        v = x.narrow(0, 0, 3)
    x.sigmoid_()
    return v


_USES = {  # ops whose own argument checks fail: torch's autograd reads the view's grad_fn first, unless the op
    # has no derivative (comparisons) or grad mode is off
    "t_3d": lambda m, v: v.reshape(1, 3, 1).t(),
    "add_shapes": lambda m, v: v + m.ones(2),
    "addcdiv_bool_target": lambda m, v: m.ones(2, 3, dtype=m.bool).addcdiv_(m.zeros(2, 3), v),
    "addcdiv_shapes": lambda m, v: m.addcdiv(m.zeros(2, 3), v, m.ones(2)),
    "index_out_of_range": lambda m, v: v[m.tensor([5])],
    "eq_shapes": lambda m, v: m.eq(v, m.ones(2)),
    "add_shapes_no_grad": lambda m, v: _no_grad(m, lambda: v + m.ones(2)),
    "works": lambda m, v: v * 2,
}


def _no_grad(m, fn):
    with m.no_grad():
        return fn()


@pytest.mark.parametrize("use", sorted(_USES))
def test_stale_no_grad_view_error_before_op_checks(use):
    _same(lambda m: _USES[use](m, _stale_no_grad_view(m)))


def test_in_place_target_checks_before_op_checks():
    def leaf_with_bad_shape(m):
        return m.ones(3, requires_grad=True).add_(m.ones(2))
    assert _same(leaf_with_bad_shape)[0] == "error"


@pytest.mark.parametrize("dtypes", [("int64", "float32"), ("float32", "int64"), ("float64", "float32")])
@pytest.mark.parametrize("shapes", [((1, 0, 1), (1, 1, 0)), ((1, 2, 0), (1, 0, 3)), ((0, 2, 1), (0, 1, 3))])
def test_empty_bmm_takes_mat2_dtype(dtypes, shapes):
    _same(lambda m: m.bmm(m.zeros(shapes[0], dtype=getattr(m, dtypes[0])),
                          m.zeros(shapes[1], dtype=getattr(m, dtypes[1]))))


@pytest.mark.parametrize("out_dtype", ["int64", "bool", "float32"])
@pytest.mark.parametrize("case", ["bool", "shapes", "ranks"])
def test_mm_out_checks_in_torch_order(out_dtype, case):
    def fn(m):
        a = m.ones(2, 3, dtype=m.bool) if case == "bool" else m.ones(2, 3)
        b = a.t() if case != "shapes" else m.ones(2, 3)
        if case == "ranks":
            a = a[0]
        return m.mm(a, b, out=m.zeros(1, dtype=getattr(m, out_dtype)))
    _same(fn)


_NAN_SIGN = {  # torch's sign of NaN is 0 in abs's and norm's derivatives; cdist's keeps the NaN
    "abs": lambda m, x: x.abs(),
    "norm1": lambda m, x: m.linalg.vector_norm(x, 1),
    "cdist1": lambda m, x: m.cdist(x.reshape(2, 2), m.zeros(1, 2, dtype=m.float64), p=1),
}


@pytest.mark.parametrize("name", sorted(_NAN_SIGN))
def test_sign_of_nan_in_derivatives(name):
    def fn(m):
        x = m.tensor([float("nan"), -1., 0., 2.], dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(_NAN_SIGN[name](m, x).sum(), x)
        return g
    _same(fn)


def test_second_order_ignores_outputs_without_gradient():
    """A formula's output that receives no gradient takes no part in its derivative (no 0 * inf = NaN)."""
    def fn(m):
        x0 = m.tensor([[0.5, -1., 2.], [0.1, 0.2, -3.]], dtype=m.float64)
        x1 = m.tensor([[0.3, 0.5, 1.], [0.4, -0.2, -3.]], requires_grad=True)
        x3 = x0.ge_(x1)
        g, = m.autograd.grad(m.addcdiv(x3, x1, x3).sum(), x1, create_graph=True)
        s, = m.autograd.grad(g.sum(), x1, allow_unused=True)
        return g, s
    _same(fn)


def test_complex_gradient_for_real_index_put_values_is_refused():
    def fn(m):
        x1 = m.tensor([0.3, 0.5, 1.], dtype=m.float64, requires_grad=True)
        x0 = m.tensor([[1 + 1j, 2 - 1j, 0.5j]], dtype=m.complex128)
        x0[m.tensor([[False, False, True]])] = (x1 * 2)[..., :1]
        x0.real.sum().backward()
        return x1.grad
    assert _same(fn)[0] == "error"


def test_floor_divide_zero_quotient_keeps_sign():
    vals = [0., -0., 1., -1., 2.5, -2.5, 7., -7., float("inf"), -float("inf"), float("nan"), 1e300]

    def fn(m):
        a = m.tensor([[v] * len(vals) for v in vals], dtype=m.float64)
        b = m.tensor([vals] * len(vals), dtype=m.float64)
        return (m.floor_divide(a, b), m.div(a.float(), b.float(), rounding_mode="floor"),
                m.floor_divide(m.tensor([-0.5, 0.5, -3.]), 2), 1. / (m.tensor([-0.5, 5.]) // m.tensor([3., -0.])))
    _same(fn)


def test_version_error_after_detach_names_the_saving_node():
    def fn(m):
        x4 = m.tensor([0.5, 2.], dtype=m.float64, requires_grad=True).prod()
        x5 = m.cosh(x4)
        x4.detach_()
        x4[...] = 3.
        return x5.grad_fn._saved_self
    assert _same(fn)[0] == "error"


def test_float_op_on_integer_tensor_that_requires_grad_saves_it():
    def fn(m):
        x0 = m.tensor([[0.5, -1., 2.]], requires_grad=True)
        x3 = m.tensor([[True, False, True], [False, True, True]])
        x3.ge_(x0)  # a bool tensor with history
        y = m.sin(x3)
        saved = y.grad_fn._saved_self
        same = saved is x3
        with m.no_grad():
            x3.lt_(x3)
        try:
            y.grad_fn._saved_self
        except RuntimeError as e:
            return str(saved.dtype).split(".")[-1], same, str(e).splitlines()[0]
    _same(fn)


@pytest.mark.parametrize("dtype", ["bool", "int64"])
@pytest.mark.parametrize("name", ["atan_", "sin_", "logit_", "digamma_"])
def test_float_in_place_on_expanded_integer_refuses_overlap_first(dtype, name):
    _same(lambda m: getattr(m.ones(1, 3, dtype=getattr(m, dtype)).expand(2, 3), name)())


@pytest.mark.parametrize("weight_dtype", ["float32", "float64"])
def test_lerp_refuses_complex_gradient_for_a_real_weight(weight_dtype):
    def fn(m):
        w = m.tensor(0.3, dtype=getattr(m, weight_dtype), requires_grad=True)
        x = m.tensor([[1 + 1j], [2 - 1j]], dtype=m.complex128)
        m.lerp(x, x * 2, w).abs().sum().backward()
        return w.grad
    assert _same(fn)[0] == "error"


_BOOL_FORMULAS = {"atan2": lambda m, a, b: m.atan2(a, b), "pow": lambda m, a, b: m.pow(a, b)}


@pytest.mark.parametrize("name", sorted(_BOOL_FORMULAS))
@pytest.mark.parametrize("which", ["first", "second", "both"])
def test_bool_operand_refusal_only_for_the_gradients_asked(name, which):
    """Integer tensors with history (written in place from a value that requires grad): a formula refuses a bool
    operand only in the part torch computes for the inputs that need a gradient."""
    def fn(m):
        x0 = m.tensor([[0.5, 0.2, 0.9], [0.1, 0.7, 0.3]], requires_grad=True)
        a = m.tensor([[True, False, True], [False, True, False]])
        b = m.tensor([[True, True, False], [False, True, False]])
        for t, on in ((a, which != "second"), (b, which != "first")):
            if on:
                t.gt_(x0)
        y = _BOOL_FORMULAS[name](m, a, b)
        return m.autograd.grad(y.float().sum(), x0, allow_unused=True)
    _same(fn)


_COPIES = {"copy_": lambda m, t, s: t.copy_(s), "copy_bad_shape": lambda m, t, s: t.copy_(s[:2]),
           "setitem_same_size": lambda m, t, s: t.__setitem__(1, s[0]),
           "setitem_row": lambda m, t, s: t.__setitem__(slice(0, 2), s[:2]),
           "setitem_fill": lambda m, t, s: t.__setitem__(slice(0, 2), s[0]),
           "add_": lambda m, t, s: t.add_(s)}


@pytest.mark.parametrize("target", ["history", "no_grad_view"])
@pytest.mark.parametrize("dtype", ["bool", "int64", "float32"])
@pytest.mark.parametrize("name", sorted(_COPIES))
def test_copy_into_integer_tensor_is_outside_autograd(name, dtype, target):
    """copy_ (and setitem's copies) into an integer tensor: no autograd check, no node, its history kept."""
    def fn(m):
        x0 = m.tensor([0.5, 0.2, 0.9], requires_grad=True)
        src = m.tensor([0.3, 0.6, 0.1], requires_grad=True)
        t = m.zeros(3, dtype=getattr(m, dtype))
        if target == "history" and dtype != "float32":
            t.gt_(x0)
        else:
            with m.no_grad():
                t = t.view(3)
        _COPIES[name](m, t, src)
        return t, t.grad_fn.name() if t.grad_fn is not None else None, t.requires_grad, t._version
    _same(fn)


@pytest.mark.parametrize("which", ["input", "end", "both"])
@pytest.mark.parametrize("weight", ["bool", "int64"])
def test_lerp_with_a_0d_integer_weight(which, weight):
    def fn(m):
        x = m.tensor([1., 2.], dtype=m.float64, requires_grad=which != "end")
        e = m.tensor([3., 4.], dtype=m.float64, requires_grad=which != "input")
        y = m.lerp(x, e, m.tensor(1, dtype=getattr(m, weight)))
        return y, m.autograd.grad(y.sum(), [t for t in (x, e) if t.requires_grad])
    _same(fn)


def test_advanced_index_result_layout_follows_torchs_tensoriterator():
    """x[indices] of a non-contiguous x (or with non-contiguous index tensors): the result's strides."""
    import random
    rng = random.Random(0)
    for trial in range(120):
        nd = rng.choice([2, 3, 4])
        perm = list(range(nd))
        rng.shuffle(perm)
        base = [rng.choice([1, 2, 3]) for _ in range(nd)]
        kinds = [rng.choice(["full", "idx", "idx2", "int", "mask", "slice"]) for _ in range(nd)]
        if not any(k in ("idx", "idx2", "mask") for k in kinds):
            continue
        seen = []
        for m in (tl, torch):
            x = m.arange(float(np.prod(base))).reshape(base).permute(*perm)
            r, key = random.Random(trial), []
            for d, kind in enumerate(kinds):
                n = x.shape[d]
                if kind == "full":
                    key.append(slice(None))
                elif kind == "idx":
                    key.append(m.tensor([r.randrange(n) for _ in range(2)]))
                elif kind == "idx2":
                    i2 = m.tensor([[r.randrange(n)], [r.randrange(n)]])
                    key.append(i2.t() if r.random() < 0.5 else i2)
                elif kind == "int":
                    key.append(r.randrange(n))
                elif kind == "mask":
                    key.append(m.tensor([r.random() < 0.6 for _ in range(n)]))
                else:
                    key.append(slice(0, n, 2))
            try:
                y = x[tuple(key)]
            except IndexError as e:
                seen.append(str(e))
                continue
            seen.append((tuple(y.shape), y.stride() if y.numel() else None, y.tolist()))
        assert seen[0] == seen[1], (trial, base, perm, kinds, seen)


@pytest.mark.parametrize("case", [((3,), (1, 3)), ((3,), (2, 1, 3)), ((1, 3), (1, 1, 3)), ((2, 1), (1, 2, 4)),
                                  ((2, 1), (1, 1, 2, 1)), ((), (1, 1))])
def test_expand_strides_of_new_dims(case):
    _same(lambda m: m.zeros(case[0]).expand(*case[1]).stride())


@pytest.mark.parametrize("writes", [0, 1, 2])
@pytest.mark.parametrize("leaf_at_save", [False, True])
def test_saved_tensor_detached_after_in_place_writes(writes, leaf_at_save):
    """The version error (and backward) after a saved tensor was written in place and then detach_()-ed: torch
    decides by whether the tensor had history when it was saved."""
    def fn(m):
        x = m.tensor([[0.5], [2.]], dtype=m.float64, requires_grad=True)
        t = m.tensor([[1.], [3.]], dtype=m.float64) if leaf_at_save else x * 1
        y = m.clamp(t, max=x)
        for _ in range(writes):
            t.mul_(x)
        t.detach_()
        out = []
        for read in (lambda: y.grad_fn._saved_self, lambda: m.autograd.grad(y.sum(), x)):
            try:
                out.append(_plain(read()))
            except RuntimeError as e:
                out.append(str(e).splitlines()[0])
        return out
    _same(fn)


_BLAS = {"addmm": lambda m, c, a, b, kw: m.addmm(c, a, b, **kw),
         "baddbmm": lambda m, c, a, b, kw: m.baddbmm(c, a.unsqueeze(0).expand(2, -1, -1), b.unsqueeze(0), **kw),
         "addbmm": lambda m, c, a, b, kw: m.addbmm(c, a.unsqueeze(0), b.unsqueeze(0), **kw),
         "addmv": lambda m, c, a, b, kw: m.addmv(c.expand(1), a, b[:, 0], **kw),
         "addr": lambda m, c, a, b, kw: m.addr(c, a[0], b[:, 0], **kw),
         "addr_": lambda m, c, a, b, kw: m.zeros(1, 3, dtype=c.dtype).addr_(a[0, :1], b[:, 0], **kw)}


@pytest.mark.parametrize("kw", [dict(beta=0.5, alpha=2.7), dict(beta=1, alpha=-1.5), dict(beta=0, alpha=2),
                                dict(beta=True), dict(alpha=False), dict(beta=2, alpha=3)])
@pytest.mark.parametrize("dtype", ["int64", "float64", "bool"])
@pytest.mark.parametrize("name", sorted(_BLAS))
def test_blas_scalars_take_the_tensors_dtype(name, dtype, kw):
    """beta and alpha are converted to the op's dtype as torch does (0.5 is 0 for integers; bool is logical)."""
    def fn(m):
        dt = getattr(m, dtype)
        a = m.tensor([[2, 3, 0]]).to(dt)
        return _BLAS[name](m, m.tensor(5).to(dt), a, a.t() * 1 if dtype != "bool" else a.t(), kw)
    _same(fn)


@pytest.mark.parametrize("name", ["log_", "sin_", "sqrt_", "exp_", "tanh_", "sigmoid_", "rsqrt_", "reciprocal_",
                                  "log1p_", "expm1_", "atan_", "erf_", "digamma_", "lgamma_", "logit_", "acos_",
                                  "cosh_", "log2_", "exp2_", "sinc_", "erfinv_", "i0_"])
@pytest.mark.parametrize("history", [False, True])
def test_float_in_place_on_integer_tensor(name, history):
    """torch's autograd kernel clones the input its formula saves before its own dtype refusal."""
    def fn(m):
        x0 = m.tensor([1, 2, 3])
        if history:
            x0.le_(m.tensor(0.5, requires_grad=True))
        return getattr(x0, name)()
    _same(fn)


def test_copyslices_cannot_run_again_after_its_graph_was_freed():
    """A create_graph gradient that reaches back through a CopySlices of a freed graph (retain_graph=False)."""
    def fn(m):
        x0 = m.tensor([0.3, -0.7], dtype=m.float32)
        x1 = m.tensor([[0.5], [-1.2]], dtype=m.float64, requires_grad=True)
        x2 = m.tensor([[0.1, 0.2, 0.3], [0.4, 0.5, -0.6]], dtype=m.float64, requires_grad=True)
        x0[:1] = x2.sum()
        total = x0.double().sum() + m.remainder(x0, x1).sum()
        total.backward(create_graph=True, retain_graph=False)
        return m.autograd.grad(x1.grad.sum(), [x1, x2], allow_unused=True)
    assert _same(fn)[0] == "error"


def test_second_order_does_not_reach_inputs_the_gradient_does_not_use():
    """A create_graph formula computes every input's gradient as one op; the second order through one of its
    outputs reaches only the inputs that output depends on (torch's separate formulas), not a freed node."""
    def fn(m):
        x0 = m.tensor([[-0.7, -0.2, -0.4], [1.2, -0.9, -0.1]], dtype=m.float64, requires_grad=True)
        x2 = x0.round()
        t = x0 * 1
        t.mul_(x2)
        (x2.sum() + t.sum()).backward(create_graph=True, retain_graph=False)
        return x0.grad, m.autograd.grad(x0.grad.sum(), x0)
    _same(fn)


@pytest.mark.parametrize("name", ["div", "mul", "atan2", "hypot", "pow", "maximum"])
@pytest.mark.parametrize("which", ["self", "other", "both", "view_without_edge"])
def test_saved_tensors_used_by_two_formulas_are_always_saved(name, which):
    """torch guards a saved tensor by an input's need only when one formula uses it."""
    def fn(m):
        x0 = m.tensor([0.99, 1.5], requires_grad=True)
        if which == "view_without_edge":
            with m.no_grad():
                a = x0.view(2)
            b = a
        else:
            a = m.tensor([0.5, 0.7], requires_grad=which != "other")
            b = m.tensor([1.5, 0.3], requires_grad=which != "self")
        node = getattr(m, name)(a, b).grad_fn
        return [getattr(node, f"_saved_{k}", "absent") for k in ("self", "other", "result", "exponent")]
    _same(fn)


@pytest.mark.parametrize("order", ["tensor_bool", "bool_tensor"])
def test_gradient_through_a_bool_factor_keeps_inf_times_zero_nan(order):
    """XLA rewrites x * convert(bool) as a select; torch's product gives NaN for inf * False."""
    def fn(m):
        x0 = m.tensor([[0.5], [2.]], dtype=m.float64, requires_grad=True)
        b = m.tensor([[False, True, False], [True, False, False]])
        y = x0 * b if order == "tensor_bool" else b * x0
        return m.autograd.grad(y, x0, grad_outputs=m.full((2, 3), float("inf"), dtype=m.float64))
    _same(fn)


@pytest.mark.parametrize("name", ["atan2_", "atan2_bad_shape", "add_bad_shape", "mul_", "mul_grad", "pow_", "log_",
                                  "div_", "sub_", "copy_"])
def test_in_place_on_integer_tensor_with_history(name):
    """torch clones an in-place target its formula saves before the op's own checks: for an integer target with
    history the clone fails ('Autograd not support dtype'); ops that do not save it reach their own checks."""
    def fn(m):
        x1 = m.tensor([0.5, -0.2, 0.9], requires_grad=True)
        t = m.tensor([[[True, False, True]], [[False, True, True]]])
        t[m.tensor([[[True, True, True]], [[False, True, False]]])] = x1[0]
        {"atan2_": lambda: t.atan2_(m.tensor([True, False, True])),
         "atan2_bad_shape": lambda: t.atan2_(m.tensor([[True], [False]])),
         "add_bad_shape": lambda: t.add_(m.tensor([[1], [0]])), "mul_": lambda: t.mul_(m.tensor([True, False, True])),
         "mul_grad": lambda: t.mul_(x1), "pow_": lambda: t.pow_(2), "log_": lambda: t.log_(),
         "div_": lambda: t.div_(x1), "sub_": lambda: t.sub_(x1), "copy_": lambda: t.copy_(x1)}[name]()
        return t, t.grad_fn.name() if t.grad_fn is not None else None
    _same(fn)


@pytest.mark.parametrize("k", range(6))
def test_real_value_written_into_complex_tensor_gradients(k):
    """Only copy_'s formula turns a complex gradient real for a real value; fill_'s and index_put_'s refuse."""
    def fn(m):
        x1 = m.ones(2, 3, dtype=m.complex128, requires_grad=True) * 1
        v = m.tensor([0.5, 1., 2.], dtype=m.float64, requires_grad=True)
        key, value = [(0, v.sum()), (0, v), (Ellipsis, v.sum()), ((0, 1), v.sum()),
                      ((0, m.tensor([0, 2])), v[:2]), (slice(None), v)][k]
        x1[key] = value
        x1.abs().sum().backward()
        return x1.grad_fn.name(), v.grad
    _same(fn)


@pytest.mark.parametrize("how", ["clamp_max", "clamp_min", "clamp_both", "clamp_min_kw"])
def test_clamp_with_a_wider_0d_bound_compares_in_the_result_type(how):
    """A float32 tensor clamped by a 0-d float64 bound: torch's backward compares in float32, as its forward."""
    def fn(m):
        s = m.tensor([0.1, 0.7, 0.672], dtype=m.float64, requires_grad=True).sum()  # not a float32 number
        x = m.full((2, 3), s.item(), dtype=m.float32, requires_grad=True)
        y = {"clamp_max": lambda: x.clamp_max(s), "clamp_min": lambda: m.clamp_min(x, s),
             "clamp_both": lambda: x.clamp(s, s + 1), "clamp_min_kw": lambda: x.clamp(min=s)}[how]()
        return m.autograd.grad(y.sum(), x)
    _same(fn)


@pytest.mark.parametrize("how", ["floor", "trunc", "floordiv", "int_floor"])
def test_bool_operands_keep_the_sign_of_zero_in_rounded_division(how):
    """XLA turns a bool operand's conversion into a select: 0 / -2.5 must stay -0 as in torch."""
    def fn(m):
        b = m.tensor([True, False])
        r = {"floor": lambda: m.div(b, -2.5, rounding_mode="floor"),
             "trunc": lambda: m.div(b, -2.5, rounding_mode="trunc"), "floordiv": lambda: b // -2.5,
             "int_floor": lambda: m.floor_divide(m.tensor([0, 1]), -2.5)}[how]()
        return 1 / r
    _same(fn)


@pytest.mark.parametrize("name", ["add", "mul", "sub", "maximum"])
def test_out_that_is_an_input_checks_its_shape_before_its_dtype(name):
    def fn(m):
        b = m.tensor([[1], [2]])
        return getattr(m, name)(m.tensor([0.5, 1.5]), b, out=b)
    _same(fn)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["log2", "log10"])
def test_log2_log10_exact_at_powers_of_their_base(name, dtype):
    """frac(log10(x)) and friends: XLA's log(x) / log(base) is off by an ulp at exact powers, torch's is exact."""
    def fn(m):
        powers = [0.1, 0.001, 1000., 1e-5, 100.] if name == "log10" else [8., 0.125, 1024., 2. ** -30]
        x = m.tensor(powers + [1., 0., -1., float("inf"), float("nan")], dtype=getattr(m, dtype))  # (elsewhere
        # both are within an ulp of each other, not equal)
        y = getattr(m, name)(x)
        return y, y.frac()
    _same(fn)
