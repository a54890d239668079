"""Classes of differences from torch found by the random programs (tests/random_programs.py, seeds 100000-104999),
each checked against torch on the same inputs: integer results of ops torch has no derivative for, where(out=)'s
check order, tensor hooks for undefined gradients, create_graph gradients through empty gradients, and Scalar
arguments that a backward does not free."""
import numpy as np
import pytest
import torch

import torchlike as tl
from test_random_classes3 import _plain, _same


def _int_with_history(m):
    """An int64 tensor of ones that requires grad: written in place by a comparison with a value that does."""
    return m.tensor(np.arange(1, 4)).eq_(m.tensor(np.arange(1.0, 4.0), dtype=m.float32, requires_grad=True))


def _history(t):
    return _plain(t), t.requires_grad, type(t.grad_fn).__name__, t._version


_NO_DERIVATIVE_INT = {  # torch's NotImplemented ops: an integer result takes no history and raises nothing
    "floor_divide_scalar": lambda m, x: x // 2,
    "floor_divide_tensor": lambda m, x: m.floor_divide(x, x),
    "rremainder": lambda m, x: 2 % x,
    "floor_divide_inplace_target": lambda m, x: x.floor_divide_(2),
    "floor_divide_inplace_other": lambda m, x: m.tensor([3, 4, 5]).floor_divide_(x),
    "view_of_it_refused": lambda m, x: m.tensor([3, 4]).floor_divide_(x[:2]),
    "float_records": lambda m, x: m.floor_divide(m.ones(3, requires_grad=True), 2),
}


@pytest.mark.parametrize("name", sorted(_NO_DERIVATIVE_INT))
def test_integer_results_of_ops_without_derivative_take_no_history(name):
    _same(lambda m: _history(_NO_DERIVATIVE_INT[name](m, _int_with_history(m))))


@pytest.mark.parametrize("cond", ["bool", "int64"])
@pytest.mark.parametrize("out", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((2, 3), (2, 3))])
def test_where_out_checks_its_dtype_first(cond, out, shapes):
    """where(..., out=) compares out's dtype with the operands' result type before the condition's dtype and the
    broadcast."""
    def fn(m):
        a, b = m.ones(*shapes[0]), m.ones(*shapes[1])
        o = m.zeros((), dtype=getattr(m, out))
        return m.where((a > 0).to(getattr(m, cond)), a, b, out=o)
    _same(fn)


def _hooks_seen(m, program):
    log = []
    try:
        program(m, log)
    except RuntimeError as e:
        log.append(("error", str(e)))
    return [(k, None if g is None else g.tolist()) if k != "error" else (k, g) for k, g in log]


_UNDEFINED_GRADIENTS = {  # a node (or leaf) that runs with no gradient for an output still calls its hooks, with None
    "unused_chunk": lambda m, log: _chunk_hooks(m, log, None),
    "unused_chunk_returns_value": lambda m, log: _chunk_hooks(m, log, lambda g: m.ones(2)),
    "norm_p0_leaf": lambda m, log: _norm0(m, log, "backward"),
    "norm_p0_grad": lambda m, log: _norm0(m, log, "grad"),
}


def _chunk_hooks(m, log, returns):
    x = m.ones(4, requires_grad=True)
    a, b = (x * 2).chunk(2)
    b.register_hook(lambda g: log.append(("b", g)))  # b's hooks run first (its first hook came first)
    a.register_hook(lambda g: log.append(("a", g)))
    if returns is not None:
        b.register_hook(returns)  # (so before a's)
    a.sum().backward()
    log.append(("x.grad", x.grad))


def _norm0(m, log, how):
    x = m.ones(3, dtype=m.float64, requires_grad=True)
    x.register_hook(lambda g: log.append(("x", g)))
    y = x * 1
    y.register_hook(lambda g: log.append(("y", g)))
    total = m.norm(y, 0)  # its gradient is undefined
    if how == "grad":
        log.append(("grad", m.autograd.grad(total, [x], allow_unused=True)[0]))
    else:
        total.backward()
        log.append(("x.grad", x.grad))


@pytest.mark.parametrize("name", sorted(_UNDEFINED_GRADIENTS))
def test_tensor_hooks_run_for_undefined_gradients(name):
    _same(lambda m: _hooks_seen(m, _UNDEFINED_GRADIENTS[name]))


_EMPTY_GRADIENTS = {  # ops whose gradient formula gets an empty gradient
    "diagonal_off_the_matrix": lambda m, x: x.diagonal(1),
    "index_with_no_indices": lambda m, x: x[m.tensor([], dtype=m.long)],
    "index_select": lambda m, x: x.index_select(0, m.tensor([], dtype=m.long)),
    "gather": lambda m, x: x.gather(0, m.zeros(0, 1, dtype=m.long)),
    "take": lambda m, x: x.take(m.tensor([], dtype=m.long)),
    "embedding": lambda m, x: m.nn.functional.embedding(m.zeros(0, dtype=m.long), x),
    "topk_0": lambda m, x: x.topk(0, 0)[0],
    "slice": lambda m, x: x[:, 1:],
    # and ops of an empty input, whose formulas give empty gradients
    "sort_empty": lambda m, x: x[:0].sort(0)[0], "prod_empty": lambda m, x: x[:0].prod(),
    "gather_empty": lambda m, x: x[:0].gather(0, m.zeros(0, 1, dtype=m.long)),
    "floor_empty": lambda m, x: x[:0].floor(), "var_empty": lambda m, x: x[:0].var(),
    # torch's formulas that return zeros without reading the gradient
    "as_strided_empty": lambda m, x: x.as_strided((0,), (1,)),
    "repeat_0": lambda m, x: x.repeat(0, 1),
}


@pytest.mark.parametrize("name", sorted(_EMPTY_GRADIENTS))
def test_create_graph_gradient_through_an_empty_gradient(name):
    """JAX drops an operand with no elements (a scatter of no values); torch's formula still records the op, so
    the create_graph gradient requires grad when torch's does."""
    def fn(m):
        x = m.ones(2, 1, dtype=m.float64, requires_grad=True)
        w = m.ones((), dtype=m.float64, requires_grad=True)
        gx, gw = m.autograd.grad((_EMPTY_GRADIENTS[name](m, x) * w).sum(), [x, w], create_graph=True)
        return _plain(gx), gx.requires_grad, gw.requires_grad
    _same(fn)


def test_std_of_an_empty_diagonal_second_order():
    """Seed 100728: std of an empty diagonal, its gradient under create_graph."""
    def fn(m):
        x = m.ones(2, 1, dtype=m.float64, requires_grad=True)
        g, = m.autograd.grad(x.diagonal(1).std(), [x], create_graph=True)
        return _plain(g), g.requires_grad
    _same(fn)


_SCALAR_SAVED = {  # torch's Scalar arguments are not saved variables: a backward does not free them
    "lerp_weight": (lambda m, a, b: m.lerp(a, b, 0.25), "_saved_weight"),
    "pow_exponent": (lambda m, a, b: a ** 2.5 + b, "_saved_exponent"),
    "pow_exponent_self": (lambda m, a, b: a ** 2.5 + b, "_saved_self"),
    "addcmul_value": (lambda m, a, b: m.addcmul(a, a, b, value=0.5), "_saved_value"),
    "xlogy_scalar_self": (lambda m, a, b: m.special.xlogy(2.0, a) + b, "_saved_self"),
}


@pytest.mark.parametrize("name", sorted(_SCALAR_SAVED))
def test_scalar_arguments_survive_a_backward(name):
    """After a backward without retain_graph: a Scalar saved value is still readable, and a second-order
    gradient may pass through the node again (seed 103037: var of lerp with a scalar weight)."""
    fn, attr = _SCALAR_SAVED[name]

    def program(m):
        a = m.tensor(np.arange(1.0, 7.0).reshape(2, 3) / 5, requires_grad=True)
        b = m.tensor(np.arange(1.0, 7.0).reshape(2, 3) / 7, requires_grad=True)
        y = fn(m, a, b)
        node = y.grad_fn if type(y.grad_fn).__name__ != "AddBackward0" else y.grad_fn.next_functions[0][0]
        y.var().backward(create_graph=True, retain_graph=False)
        try:
            saved = getattr(node, attr)
            saved = np.round(saved if isinstance(saved, float) else saved.tolist(), 10).tolist()
        except RuntimeError as e:
            saved = str(e)[:40]
        try:
            grads = m.autograd.grad(a.grad.sum() + b.grad.sum(), [a, b], allow_unused=True, materialize_grads=True)
            again = [np.round(g.tolist(), 10).tolist() for g in grads]
        except RuntimeError as e:
            again = str(e)[:40]
        return saved, again
    _same(program)


_LAYOUTS = {  # inputs of several geometries: empty with a step, transposed, stepped, expanded, permuted 3-d
    "empty_step": lambda b: b.flatten()[2:2:2], "transposed": lambda b: b.t(), "stepped": lambda b: b[::2],
    "expanded": lambda b: b[:1].expand(5, 3), "permuted": lambda b: b.reshape(2, 2, 3).permute(2, 0, 1),
}


@pytest.mark.parametrize("dtype", ["int64", "bool", "float32", "complex64"])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
@pytest.mark.parametrize("fn", ["isfinite", "isinf", "isnan", "isreal", "signbit", "logical_not"])
def test_dtype_test_results_take_torchs_layout(fn, layout, dtype):
    """isfinite/isinf of an integer input and isreal of a real one are torch's ones_like/zeros_like
    (preserve_format: an empty input's strides are kept); the others TensorIterator's."""
    def strides(m):
        x = _LAYOUTS[layout](m.zeros(4, 3, dtype=getattr(m, dtype)))
        return getattr(m, fn)(x).stride()
    _same(strides)


@pytest.mark.parametrize("value", [True, False])
@pytest.mark.parametrize("how", ["method", "attribute"])
@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_requires_grad_of_a_non_leaf(dtype, how, value):
    """requires_grad_(True) checks the dtype also on a non-leaf (a bool written in place by ne_ with a value that
    requires grad); the attribute refuses any change on a non-leaf first."""
    def fn(m):
        t = m.zeros(2, 3, dtype=getattr(m, dtype))
        x = m.ones(2, 3, requires_grad=True)
        t.ne_(x) if dtype == "bool" else t.add_(x)
        if how == "method":
            t.requires_grad_(value)
        else:
            t.requires_grad = value
        return t.requires_grad, t.is_leaf
    _same(fn)


def test_second_order_graph_reaches_only_what_torchs_formulas_reach():
    """A create_graph formula computes all its outputs in one node here; torch runs each output's formula as its
    own ops, so an input only another output depends on is not in torch's second-order graph: a hook on it is not
    called there, not even with None (seed 110217)."""
    def fn(m):
        x = m.tensor(np.arange(1.0, 7.0).reshape(2, 3), requires_grad=True)
        y = x + 1
        log = []
        y.register_hook(lambda g: log.append(None if g is None else round(g.sum().item(), 10)))
        y.div_((x * 1).ceil_() + 1)  # the divisor's gradient depends on y's old value; it goes nowhere
        g, = m.autograd.grad(y.sum(), [x], create_graph=True)
        g2, = m.autograd.grad(g.sum(), [x], allow_unused=True)
        return log, _plain(g2)
    _same(fn)


@pytest.mark.parametrize("use", ["masked_select", "mul", "sin", "index", "prod"])
@pytest.mark.parametrize("source", ["floor_divide", "mul"])
def test_saved_input_detached_in_place_after_an_error_node(use, source):
    """A saved non-leaf detach_()-ed since: torch's error when its node unpacks it, also when the tensor came from
    an error node (NotImplemented, whose engine order is first but whose creation order is its own; seed 115708)."""
    uses = {"masked_select": lambda m, x: x.masked_select(m.ones(2, 3, dtype=m.bool)), "mul": lambda m, x: x * x,
            "sin": lambda m, x: x.sin(), "index": lambda m, x: x[m.tensor([0])], "prod": lambda m, x: x.prod()}

    def fn(m):
        x = m.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        y = x // 0.7 if source == "floor_divide" else x * 0.7
        z = uses[use](m, y)
        y.detach_()
        return _plain(m.autograd.grad(z.sum(), [x])[0])
    _same(fn)


@pytest.mark.parametrize("view", ["movedim", "t", "view"])
def test_float_op_on_a_no_grad_view_of_an_integer_tensor_with_history(view):
    """A bool tensor with history (gt_ with a value that requires grad), viewed under no_grad: a float op on the
    view records no edge to it (torch: a view that requires grad through its base has none; seed 115574)."""
    def fn(m):
        x = m.tensor([[True], [False]])
        x.gt_(m.tensor(0.5, requires_grad=True))
        with m.no_grad():
            v = {"movedim": lambda: x.movedim(0, 1), "t": lambda: x.t(), "view": lambda: x.view(2, 1)}[view]()
        y = m.expm1(v)
        return y.requires_grad, [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions]
    _same(fn)


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_of_an_empty_integer_tensor_is_row_major(fn):
    """torch runs no kernel on an empty integer input: the result is a new row-major tensor (seed 116296)."""
    _same(lambda m: getattr(m.nonzero(m.zeros(3, 2).t()), fn)(0).stride())
