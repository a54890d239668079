"""Classes of differences from torch found by the random programs (tests/random_programs.py, seeds 80000-84999),
each checked against torch on the same inputs: which check of an op comes first (dtype refusals before sizes or
memory overlap), and the layout of results that copy an empty tensor's strides."""
import numpy as np
import pytest
import torch

import torchlike as tl
from test_random_classes3 import _same

F = {torch: torch.nn.functional, tl: tl.nn.functional}


@pytest.mark.parametrize("dtype", ["complex64", "bool"])
@pytest.mark.parametrize("call", ["argmax", "argmin_dim", "argmax_keepdim", "max_dim", "amax", "aminmax_dim",
                                  "aminmax_neg_dim", "aminmax"])
def test_empty_reductions_check_the_dtype_first(call, dtype):
    """argmax/argmin refuse complex and bool inputs before the empty-size error; aminmax's text (no "()"), dims
    named wrapped."""
    fns = {"argmax": lambda m, x: m.argmax(x), "argmin_dim": lambda m, x: m.argmin(x, 0),
           "argmax_keepdim": lambda m, x: m.argmax(x, 1, keepdim=True), "max_dim": lambda m, x: m.max(x, 0),
           "amax": lambda m, x: m.amax(x, 0), "aminmax_dim": lambda m, x: m.aminmax(x, dim=0),
           "aminmax_neg_dim": lambda m, x: m.aminmax(x.real if x.is_complex() else x.float(), dim=-2),
           "aminmax": lambda m, x: m.aminmax(x)}
    _same(lambda m: fns[call](m, m.zeros(0, 2, dtype=getattr(m, dtype))))


_REFUSED_BEFORE_OVERLAP = {  # in-place ops whose own dtype checks come before TensorIterator's overlap check
    "relu_bool": ("bool", lambda m, x: x.relu_()), "relu_complex": ("complex64", lambda m, x: x.relu_()),
    "hardtanh_bool": ("bool", lambda m, x: F[m].hardtanh_(x)), "relu6_bool": ("bool", lambda m, x: F[m].relu6(x, True)),
    "hardtanh_complex": ("complex64", lambda m, x: F[m].hardtanh_(x)),
    "clamp_bool": ("bool", lambda m, x: x.clamp_(0, 1)), "clamp_complex": ("complex64", lambda m, x: x.clamp_(0, 1)),
    "clamp_tensor_complex": ("complex64", lambda m, x: x.clamp_(m.zeros(3))),
    "clamp_min_bool": ("bool", lambda m, x: x.clamp_min_(0)), "clamp_max_int": ("int64", lambda m, x: x.clamp_max_(.5)),
    "clamp_min_complex": ("complex64", lambda m, x: x.clamp_min_(0)),
    "floor_complex": ("complex64", lambda m, x: x.floor_()), "ceil_complex": ("complex64", lambda m, x: x.ceil_()),
    "trunc_complex": ("complex64", lambda m, x: x.trunc_()), "sign_complex": ("complex64", lambda m, x: x.sign_()),
    "sub_bool": ("bool", lambda m, x: x.sub_(x)), "neg_bool": ("bool", lambda m, x: x.neg_()),
    # and the ones where the overlap error comes first (a kernel's "not implemented", a cast of tensor bounds)
    "clamp_tensor_bound_cast": ("int64", lambda m, x: x.clamp_(m.zeros(3, dtype=m.float64))),
    "clamp_float_complex_bound": ("float32", lambda m, x: x.clamp_(m.zeros(3, dtype=m.complex64))),
    "erf_complex": ("complex64", lambda m, x: x.erf_()), "digamma_complex": ("complex64", lambda m, x: x.digamma_()),
    "logical_not": ("float32", lambda m, x: x.logical_not_()), "logical_and": ("bool", lambda m, x: x.logical_and_(x)),
}


@pytest.mark.parametrize("name", _REFUSED_BEFORE_OVERLAP)
def test_in_place_dtype_checks_before_the_overlap_check(name):
    dtype, fn = _REFUSED_BEFORE_OVERLAP[name]
    _same(lambda m: fn(m, m.zeros(1, dtype=getattr(m, dtype)).expand(3)))


def test_logical_in_place_ops_refuse_partial_overlap():
    def fn(m):
        x = m.tensor([True, False, True])
        return x[1:].logical_and_(x[:2])
    _same(fn)


@pytest.mark.parametrize("case", ["threshold_", "threshold_inplace", "nan_to_num_int", "nan_to_num_bool"])
def test_in_place_writes_torch_lets_into_an_expanded_target(case):
    """threshold_ (its TensorIterator skips the overlap check) and nan_to_num_ of integers (a self-copy) write an
    expanded target; the version counter is bumped."""
    def fn(m):
        if case.startswith("threshold"):
            x = m.tensor([[0.5], [2.0]]).expand(2, 3)
            r = F[m].threshold_(x, 1.0, 3.0) if case == "threshold_" else F[m].threshold(x, 1.0, 3.0, inplace=True)
        else:
            x = m.tensor([3], dtype=m.int64 if case.endswith("int") else m.bool).expand(3)
            r = x.nan_to_num_()
        return r, x, x._version, x.stride()
    _same(fn)


@pytest.mark.parametrize("shape", [(2, 3), (3, 0, 2)])
@pytest.mark.parametrize("op", ["flip0", "flip_last", "clone", "empty_like", "zeros_like"])
def test_preserve_format_copies_of_empty_tensors_keep_their_strides(op, shape):
    """An empty tensor is contiguous for torch, so empty_like (flip, clone, *_like) keeps its strides, even the
    odd ones nonzero and a transpose give."""
    fns = {"flip0": lambda m, t: t.flip(0), "flip_last": lambda m, t: t.flip(-1), "clone": lambda m, t: t.clone(),
           "empty_like": lambda m, t: m.empty_like(t), "zeros_like": lambda m, t: m.zeros_like(t)}

    def fn(m):
        t = m.zeros(shape[0], dtype=m.float64).nonzero() if len(shape) == 2 else m.zeros(*shape).transpose(0, 2)
        r = fns[op](m, t)
        return t.stride(), r.stride(), tuple(r.shape)
    _same(fn)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["by_scalar", "by_row", "by_max", "by_0d", "fmod_grad", "trunc", "floor", "div_"])
def test_division_by_a_broadcast_divisor_is_ieee_division(case, dtype):
    """torch divides real numbers elementwise (IEEE, correctly rounded); XLA would multiply by the reciprocal of a
    broadcast divisor (an ulp off: x / x.max() missing 1 at the max; trunc(x / x) = 0 in fmod's gradient).
    (Complex quotients are not compared bit for bit: torch's and XLA's complex division algorithms differ.)"""
    x = np.random.default_rng(1).uniform(0.1, 3, (200, 7)).astype(dtype)

    def fn(m):
        t = m.tensor(x, requires_grad=case == "fmod_grad")
        if case == "by_scalar":
            return t / 3.1
        if case == "by_row":
            return t / t[3]
        if case == "by_max":
            return t / t.max(1, keepdim=True).values
        if case == "by_0d":
            return t / t[0, 0]
        if case == "trunc":
            return m.div(t * 1, t[:, :1], rounding_mode="trunc")
        if case == "floor":
            return m.div(t, t[:, :1], rounding_mode="floor")
        if case == "div_":
            return t.clone().div_(t[2])
        u = t[:, :1] * 1  # fmod's gradient for other: -trunc(self / other) * grad
        g, = m.autograd.grad(m.fmod(u.expand(200, 7), u).sum(), u)
        return g
    assert _same(fn) is not None


@pytest.mark.parametrize("view", ["empty_cols", "empty_rows", "empty_t", "column", "t"])
@pytest.mark.parametrize("op", ["abs", "angle", "abs_plus", "real_abs", "real_angle"])
def test_real_results_of_complex_views_are_laid_out_as_torchs(op, view):
    """abs of a complex input allocates its real result with empty_like (an empty one keeps its strides), angle
    allocates it row-major; of real inputs both are TensorIterator's."""
    views = {"empty_cols": lambda x: x[:, 1:1], "empty_rows": lambda x: x[:0], "empty_t": lambda x: x.t()[:, :0],
             "column": lambda x: x[:, 1:2], "t": lambda x: x.t()}
    ops = {"abs": lambda v: v.abs(), "angle": lambda v: v.angle(), "abs_plus": lambda v: v.abs() + 1,
           "real_abs": lambda v: v.real.abs(), "real_angle": lambda v: v.real.angle()}

    def fn(m):
        v = views[view](m.tensor(np.arange(6).reshape(2, 3) * (1 + 1j)))
        r = ops[op](v)
        return np.round(np.asarray(r.tolist()), 12).tolist(), r.stride(), str(r.dtype)[-7:]  # (|z|: an ulp apart)
    _same(fn)


_MULTI_OUTPUT = {
    "logsigmoid": lambda m, x: m.nn.functional.logsigmoid(x), "batch_norm": lambda m, x: m.nn.functional.batch_norm(
        x, None, None, training=True), "layer_norm": lambda m, x: m.nn.functional.layer_norm(x, (4,)),
    "group_norm": lambda m, x: m.nn.functional.group_norm(x[None], 2), "max_dim": lambda m, x: m.max(x, 1)[0],
    "nll_loss": lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0, 1])), "sort": lambda m, x: m.sort(x, 1)[0],
    "max_pool": lambda m, x: m.nn.functional.max_pool1d(x[None], 2, return_indices=True)[0],
    "slogdet": lambda m, x: m.linalg.slogdet(x[:, :2])[1], "var_mean": lambda m, x: m.var_mean(x, 1)[1],
}


@pytest.mark.parametrize("name", _MULTI_OUTPUT)
def test_node_hooks_see_the_outputs_torch_registers(name):
    """A node's hooks get one gradient per output torch registers: not its trailing integer outputs nor those its
    derivative declares not differentiable (log_sigmoid's buffer, nll_loss's total weight, batch/layer norm's
    saved statistics)."""
    def fn(m):
        x = m.tensor([[1., 3, 2, 5], [4, 0, 6, 2]], requires_grad=True)
        y = _MULTI_OUTPUT[name](m, x)
        log = []
        y.grad_fn.register_prehook(lambda go: log.append(("pre", len(go))))
        y.grad_fn.register_hook(lambda gi, go: log.append(("post", len(gi), len(go))))
        y.sum().backward()
        return y.grad_fn.name(), log
    _same(fn)


@pytest.mark.parametrize("name", ["logsumexp", "logit", "polygamma", "i0", "sin", "digamma", "entr", "mvlgamma"])
def test_float_ops_on_integer_tensors_with_history_save_the_integer_input(name):
    """An integer tensor with history (written in place from a value that requires grad) given to an op that
    computes in float: torch's node saves the integer input itself (its dtype, its version)."""
    ops = {"logsumexp": lambda m, x: m.logsumexp(x, 1), "logit": lambda m, x: m.logit(x),
           "polygamma": lambda m, x: m.polygamma(1, x), "i0": lambda m, x: m.special.i0(x), "sin": lambda m, x: x.sin(),
           "digamma": lambda m, x: m.digamma(x), "entr": lambda m, x: m.special.entr(x),
           "mvlgamma": lambda m, x: m.mvlgamma(x + 3, 1)}

    def fn(m):
        x = m.tensor([[1, 2], [3, 0]])
        x.masked_fill_(x > 1, m.tensor(0.5, requires_grad=True))
        node = ops[name](m, x).grad_fn
        return node.name(), [(n, str(getattr(node, n).dtype).split(".")[-1], getattr(node, n)._version)
                             for n in sorted(dir(node)) if n.startswith("_saved_") and n != "_saved_tensors"
                             and isinstance(getattr(node, n), m.Tensor)]
    _same(fn)


@pytest.mark.parametrize("name", ["elu", "selu", "celu", "elu_", "selu_"])
def test_elu_second_order_keeps_nan_gradients_as_torchs_mask_product(name):
    """torch's elu double backward multiplies by the mask (self < 0): where self >= 0 a NaN gradient (logit of
    a value outside [0, 1]) stays NaN at second order."""
    def fn(m):
        F = m.nn.functional
        x = m.tensor([-1.3, -0.07, 0.0, 1.57, 0.92], requires_grad=True)
        f = {"elu": lambda t: F.elu(t), "selu": lambda t: F.selu(t), "celu": lambda t: F.celu(t, 0.5),
             "elu_": lambda t: F.elu(t * 1, inplace=True), "selu_": lambda t: F.selu(t * 1, inplace=True)}[name]
        g, = m.autograd.grad(m.logit(f(x)).sum(), x, create_graph=True)
        gg, = m.autograd.grad((g * m.tensor([1., 2, 3, 4, 5])).sum(), x)
        return repr(np.isnan(np.asarray(g.tolist()))), repr(np.round(np.asarray(gg.tolist()), 1))  # (NaN == NaN)
    _same(fn)


@pytest.mark.parametrize("call", ["floor_divide", "floordiv_dunder", "rfloordiv"])
def test_floor_divide_runs_autograd_checks_before_its_own(call):
    """floor_divide records torch's NotImplemented node, so a stale multi-output view among its inputs raises the
    view error before the op's shape check."""
    def fn(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True) * 1
        a, b = x.split([1, 2])
        x.mul_(2)
        other = m.ones(3)
        return {"floor_divide": lambda: m.floor_divide(b, other), "floordiv_dunder": lambda: b // other,
                "rfloordiv": lambda: other // b}[call]()
    _same(fn)


@pytest.mark.parametrize("op", ["ceil", "floor", "round", "trunc", "fix"])
@pytest.mark.parametrize("rows", [0, 1, 2])
def test_rounding_integers_copies_with_tensor_iterators_layout(op, rows):
    """ceil/floor/round/trunc of an integer tensor copy it into a TensorIterator output (not preserve_format):
    nonzero's column-major results come back row-major where TensorIterator says so."""
    def fn(m):
        n = m.tensor([[1, 1, 0]] if rows == 2 else [[0, 1, 0]] if rows == 1 else [[0, 0, 0]]).nonzero()
        return [(tuple(r.shape), r.stride()) for r in (getattr(n, op)(), getattr(n.t(), op)(), getattr(n[::2], op)())]
    _same(fn)


_NAN_SLOPES = {"elu": lambda F, t: F.elu(t), "selu": lambda F, t: F.selu(t), "celu": lambda F, t: F.celu(t, 0.5),
               "elu_": lambda F, t: F.elu(t * 1, inplace=True), "relu": lambda F, t: F.relu(t),
               "relu_": lambda F, t: F.relu(t * 1, inplace=True), "relu6": lambda F, t: F.relu6(t),
               "leaky_relu": lambda F, t: F.leaky_relu(t), "threshold": lambda F, t: F.threshold(t, 0.1, 2.0),
               "hardtanh": lambda F, t: F.hardtanh(t), "hardswish": lambda F, t: F.hardswish(t)}


@pytest.mark.parametrize("name", _NAN_SLOPES)
def test_piecewise_activations_give_a_nan_input_torchs_branch(name):
    """torch's backward kernels test ``x <= 0`` (or the threshold) for the flat branch, so a NaN input takes the
    other branch's slope (elu: scale; relu: 1)."""
    def fn(m):
        x = m.tensor([float("nan"), 1.0, -1.0, 0.0], requires_grad=True)
        g, = m.autograd.grad(_NAN_SLOPES[name](m.nn.functional, x).sum(), x)
        return repr(np.round(np.asarray(g.tolist()), 6))
    _same(fn)


@pytest.mark.parametrize("case", ["equal", "apart_by_2pi", "mixed", "infinities", "nan"])
def test_complex_logaddexp_keeps_the_larger_operands_imaginary_part(case):
    """torch computes a complex logaddexp as max + log1p(exp(min - max)) (by real part): the imaginary part is
    not wrapped into (-pi, pi]."""
    pairs = {"equal": ([0.3 - 4.2j, 1 + 2j], [0.3 - 4.2j, 1 + 2j]), "apart_by_2pi": ([2 - 9j], [3 + 7j]),
             "mixed": ([1 + 2j, -0.5 + 3.1j], [0.5 - 1j, -0.5 + 3.1j]),
             "infinities": ([complex("inf"), complex("-inf")], [1 + 1j, complex("-inf")]),
             "nan": ([complex("nan"), 1 + 1j], [1.0 + 0j, complex(1, float("nan"))])}
    a, b = (np.array(v, np.complex128) for v in pairs[case])

    def fn(m):
        return repr(np.round(np.asarray(m.logaddexp(m.tensor(a), m.tensor(b)).tolist()), 10))
    _same(fn)


@pytest.mark.parametrize("case", ["std_rows", "var_all", "var_mean", "std_mean", "std_grad", "one", "inf", "nan",
                                  "dof0", "complex"])
def test_variance_of_equal_values_is_exactly_zero(case):
    """torch's Welford variance is exactly 0 for equal finite values (the mean here could be an ulp off them), and
    std's backward then gives 0 (its masked 1 / (2 std)); one value, infinities and NaN keep torch's NaN."""
    v = np.full((2, 6), 2.7827534e-08, np.float32)
    v[1] = 0.1

    def fn(m):
        t = m.tensor(v, requires_grad=True)
        return {"std_rows": lambda: t.std(1), "var_all": lambda: t[1].var(), "var_mean": lambda: m.var_mean(t, 1)[0],
                "std_mean": lambda: m.std_mean(t, 1, keepdim=True)[0],
                "std_grad": lambda: m.autograd.grad(t.std(1).sum(), t)[0].abs(),
                "one": lambda: m.tensor([3.0]).var(), "inf": lambda: m.tensor([float("inf")] * 3).std(),
                "nan": lambda: m.tensor([float("nan")] * 3).var(), "dof0": lambda: m.tensor([3.0, 3.0]).var(
                    correction=2), "complex": lambda: m.tensor([1 + 1j, 1 + 1j]).var()}[case]()
    _same(fn)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_of_x_over_x_is_exactly_zero(dtype):
    """torch's gradient for div's divisor is -grad * (self / other) / other: XLA would rewrite it as
    self / (other * other), which does not cancel grad / other exactly."""
    x = np.random.default_rng(3).uniform(-1.5, 1.5, 50).astype(dtype)

    def fn(m):
        t = m.tensor(x, requires_grad=True)
        g, = m.autograd.grad((t / t).sum(), t)
        return g
    _same(fn)


def test_lerp_weight_gradient_refuses_bool_operands():
    """lerp's weight gradient is grad * (end - self): for bool self and end torch's subtraction refuses."""
    def fn(m):
        b = m.tensor([[True, False, True]])
        w = m.tensor(0.3, dtype=m.float64, requires_grad=True)
        return m.autograd.grad(m.lerp(b, b, w).sum(), w)
    _same(fn)


@pytest.mark.parametrize("call", ["add", "sub", "rsub", "add_ok_shapes"])
def test_float_alpha_on_integers_is_checked_after_broadcasting(call):
    """torch checks alpha after TensorIterator has broadcast the operands: a shape error comes first."""
    def fn(m):
        a, b = m.ones(2, 1, 3, dtype=m.int64), m.ones(2, dtype=m.int64)
        return {"add": lambda: m.add(a, b, alpha=0.5), "sub": lambda: m.sub(a, b, alpha=0.5),
                "rsub": lambda: m.rsub(a, b, alpha=0.5), "add_ok_shapes": lambda: m.add(a, a, alpha=0.5)}[call]()
    _same(fn)
