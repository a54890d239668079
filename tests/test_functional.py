"""torchlike.autograd.functional against torch.autograd.functional on the same NumPy inputs.

Each case is ``run(lib)`` using only the shared API; results are compared with their exact nesting (Tensor vs
tuple vs tuple of tuples), values, dtypes, and whether they carry history. With ``create_graph=True`` the
results are differentiated again and those gradients compared too. Misuse cases compare (exception type, message).
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

# torch's forward-mode jacobian runs through torch.jit-decorated vmap internals, which warn on every call
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal(3)
M = RNG.standard_normal((2, 3))
V3 = RNG.standard_normal(3)
V3B = RNG.standard_normal(3)
V2 = RNG.standard_normal(2)
S = np.array(0.7)


def F(lib):
    return lib.autograd.functional


def T(lib, a, requires_grad=False):
    return lib.tensor(a, requires_grad=requires_grad)


def assert_nested(a, b, grad=None, check_grad=True):
    """Same nesting of tuples/lists and Tensors, same values, dtypes and requires_grad (unless not
    ``check_grad``); ``grad``: also assert torch's requires_grad is this."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, tl.Tensor), (type(a), b)
        assert_same(a, b, rtol=1e-6, atol=1e-9)
        if check_grad:
            assert a.requires_grad == b.requires_grad
        if grad is not None:
            assert b.requires_grad == grad
        return
    assert type(b) in (tuple, list) and type(a) is type(b), (type(a), type(b))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert_nested(x, y, grad, check_grad)


def both(run, grad=None, check_grad=True):
    """Run ``run(lib)`` for torch and torchlike and compare the results."""
    expected = run(torch)
    actual = run(tl)
    assert_nested(actual, expected, grad, check_grad)
    return actual, expected


def outcome(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is what is compared
            return type(e).__name__, str(e)
    return "ok", None


def same_error(fn):
    expected = outcome(fn, torch)
    assert expected[0] != "ok"
    assert outcome(fn, tl) == expected


# --- the functions under test (shared API only) ----------------------------------------------------------------

def f_single(x):                       # (3,) -> (3,)
    return x.sin() * x


def f_matrix(m):                       # (2, 3) -> (2,)
    return m.exp().sum(dim=1)


def f_tuple(x, y):                     # ((3,), (3,)) -> ((3,), ())
    return x * y.cos(), (x ** 2).sum() * y[0]


def f_scalar(x):                       # (3,) -> ()
    return (x ** 3 * x.sin()).sum()


def f_scalar2(x, y):                   # ((3,), (3,)) -> ()
    return (x.sin() * y ** 2).sum() + (x ** 3).sum()


# --- vjp ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_single(create_graph):
    def run(L):
        return F(L).vjp(f_matrix, T(L, M), T(L, V2), create_graph=create_graph)
    both(run)  # with create_graph the results carry history from the internal copies of the inputs


def test_vjp_tuple_inputs_and_outputs():
    def run(L):
        return F(L).vjp(f_tuple, (T(L, X), T(L, Y)), (T(L, V3), T(L, S)))
    both(run)


def test_vjp_scalar_output_v_none():
    def run(L):
        out, g = F(L).vjp(f_scalar2, (T(L, X), T(L, Y)))
        return out, g
    both(run)


def test_vjp_create_graph_differentiates_again():
    def run(L):
        x = T(L, X, True)
        out, g = F(L).vjp(f_single, x, T(L, V3), create_graph=True)
        assert g.grad_fn is not None and out.grad_fn is not None
        g2, = L.autograd.grad((g * g).sum() + out.sum(), x)
        return out, g, g2
    both(run)


def test_vjp_results_detached_and_no_grad_context():
    def run(L):
        x = T(L, X, True)
        with L.no_grad():
            out, g = F(L).vjp(f_single, x, T(L, V3))
        assert x.grad is None
        return out, g
    both(run, grad=False)


def test_vjp_create_graph_under_no_grad_keeps_history():
    def run(L):
        x = T(L, X, True)
        with L.no_grad():
            out, g = F(L).vjp(f_single, x, T(L, V3), create_graph=True)
        return out, g
    both(run, grad=True)


# --- jvp ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp_single(create_graph):
    def run(L):
        return F(L).jvp(f_matrix, T(L, M), T(L, M * 0.5), create_graph=create_graph)
    both(run)


def test_jvp_tuple():
    def run(L):
        return F(L).jvp(f_tuple, (T(L, X), T(L, Y)), (T(L, V3), T(L, V3B)))
    both(run)


def test_jvp_scalar_input_v_none():
    def run(L):
        return F(L).jvp(lambda s: (s.exp(), s * 3), T(L, S))
    both(run)


def test_jvp_create_graph_differentiates_again():
    def run(L):
        x, v = T(L, X, True), T(L, V3, True)
        out, g = F(L).jvp(f_single, x, v, create_graph=True)
        gx, gv = L.autograd.grad((g ** 2).sum(), (x, v))
        return out, g, gx, gv
    both(run)


# --- jacobian ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("case", ["single", "matrix", "tuple_in", "tuple_out", "tuple_both"])
def test_jacobian_nesting(case, vectorize):
    funcs = {
        "single": (f_single, lambda L: T(L, X)),
        "matrix": (f_matrix, lambda L: T(L, M)),                        # shape (2, 2, 3)
        "tuple_in": (lambda x, y: x * y, lambda L: (T(L, X), T(L, Y))),  # tuple of Tensors
        "tuple_out": (lambda x: (x.exp(), x.sum()), lambda L: T(L, X)),  # tuple of Tensors
        "tuple_both": (f_tuple, lambda L: (T(L, X), T(L, Y))),           # tuple of tuples
    }
    func, inputs = funcs[case]
    both(lambda L: F(L).jacobian(func, inputs(L), vectorize=vectorize), grad=False)


def test_jacobian_single_input_in_a_tuple_stays_nested():
    both(lambda L: F(L).jacobian(lambda x: (x.exp(),), (T(L, X),)))


@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian_create_graph(vectorize):
    def run(L):
        x, y = T(L, X, True), T(L, Y, True)
        jac = F(L).jacobian(f_tuple, (x, y), create_graph=True, vectorize=vectorize)
        assert jac[0][0].grad_fn.name() == "ViewBackward0"
        total = sum(((j * j).sum() for row in jac for j in row), T(L, np.array(0.0)))
        return jac, L.autograd.grad(total, (x, y))
    both(run)


def test_jacobian_vectorize_equals_loop():
    def run(L):
        x, y = T(L, X), T(L, Y)
        a = F(L).jacobian(f_tuple, (x, y))
        b = F(L).jacobian(f_tuple, (x, y), vectorize=True)
        for ra, rb in zip(a, b):
            for p, q in zip(ra, rb):
                assert_same(p, q.numpy() if L is torch else np.asarray(q._data), rtol=1e-12, atol=1e-12)
        return b
    both(run)


def test_jacobian_mixed_dtypes():
    # float32 output of a float64 input: each block has the input's dtype (reverse mode).
    def run(L):
        x, y = T(L, X.astype(np.float32)), T(L, Y)
        return F(L).jacobian(lambda a, b: (a * 2, (a.double() * b).sum()), (x, y))
    both(run)


# --- hessian -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_single(vectorize):
    both(lambda L: F(L).hessian(f_scalar, T(L, X), vectorize=vectorize), grad=False)


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian_two_inputs_nested_tuple(vectorize):
    def run(L):
        h = F(L).hessian(f_scalar2, (T(L, X), T(L, Y)), vectorize=vectorize)
        assert len(h) == 2 and all(len(r) == 2 for r in h)
        return h
    both(run)


def test_hessian_of_a_one_element_output():
    both(lambda L: F(L).hessian(lambda m: (m ** 3).sum().reshape(1, 1), T(L, M)))


def test_hessian_create_graph():
    def run(L):
        x = T(L, X, True)
        h = F(L).hessian(f_scalar, x, create_graph=True)
        return h, L.autograd.grad(h.sum(), x)
    both(run, grad=None)


# --- forward-mode (forward_ad dual tensors batched by jax.vmap) -------------------------------------------------

FWD = {"vectorize": True, "strategy": "forward-mode"}


@pytest.mark.parametrize("case", ["single", "matrix", "tuple_in", "tuple_out", "tuple_both"])
def test_jacobian_forward_mode_nesting(case):
    # torch returns lists here (a list of lists for tuple inputs and outputs), tuples for tuple outputs alone.
    funcs = {
        "single": (f_single, lambda L: T(L, X)),
        "matrix": (f_matrix, lambda L: T(L, M)),
        "tuple_in": (lambda x, m: x * m, lambda L: (T(L, X), T(L, M))),
        "tuple_out": (lambda x: (x.exp(), x.sum()), lambda L: T(L, X)),
        "tuple_both": (f_tuple, lambda L: (T(L, X), T(L, Y))),
    }
    func, inputs = funcs[case]
    both(lambda L: F(L).jacobian(func, inputs(L), **FWD), grad=False)


def test_jacobian_forward_mode_equals_reverse_mode():
    def run(L):
        fwd = F(L).jacobian(f_tuple, (T(L, X), T(L, Y)), **FWD)
        rev = F(L).jacobian(f_tuple, (T(L, X), T(L, Y)))
        for rf, rr in zip(fwd, rev):
            for p, q in zip(rf, rr):
                assert_same(p, q.numpy() if L is torch else np.asarray(q._data), rtol=1e-12, atol=1e-12)
        return fwd
    both(run)


def test_jacobian_forward_mode_dtype_and_constant_output():
    # Blocks have the output's dtype; an output without a tangent gives zeros.
    both(lambda L: F(L).jacobian(lambda x: ((x.float() * 2).sum(), L.ones(2, 2)), T(L, X), **FWD))


@pytest.mark.parametrize("case", ["single", "two_inputs"])
def test_hessian_forward_over_reverse(case):
    # torch's forward-over-reverse results carry history from the inner create_graph; torchlike's tangents do not.
    def run(L):
        if case == "single":
            return F(L).hessian(f_scalar, T(L, X), vectorize=True, outer_jacobian_strategy="forward-mode")
        return F(L).hessian(f_scalar2, (T(L, X), T(L, Y)), vectorize=True, outer_jacobian_strategy="forward-mode")
    both(run, check_grad=False)


def test_forward_mode_non_tensor_output():
    same_error(lambda L: F(L).jacobian(lambda x: [x], T(L, X), **FWD))


# --- hvp / vhp ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp_single(name):
    both(lambda L: getattr(F(L), name)(f_scalar, T(L, X), T(L, V3)), grad=False)


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp_tuple(name):
    both(lambda L: getattr(F(L), name)(f_scalar2, (T(L, X), T(L, Y)), (T(L, V3), T(L, V3B))))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp_scalar_input_v_none(name):
    both(lambda L: getattr(F(L), name)(lambda s: s.sin() * s, T(L, S)))


@pytest.mark.parametrize("name", ["hvp", "vhp"])
def test_hvp_vhp_create_graph(name):
    def run(L):
        x = T(L, X, True)
        out, r = getattr(F(L), name)(f_scalar, x, T(L, V3), create_graph=True)
        assert out.requires_grad and r.requires_grad
        return out, r, L.autograd.grad((r * r).sum(), x)
    both(run)


# --- outputs independent of inputs: zeros, or torch's strict-mode errors ------------------------------------------

def _w(L):
    return T(L, V3, True)  # a captured leaf: outputs require grad without depending on the inputs


INDEPENDENT = {
    # name: (function, inputs, v)
    "vjp_unused_input": ("vjp", lambda L: (lambda x, y: x * 2), lambda L: (T(L, X), T(L, Y)), lambda L: T(L, V3)),
    "vjp_output_no_grad": ("vjp", lambda L: (lambda x: x.detach() * 2), lambda L: T(L, X), lambda L: T(L, V3)),
    "jvp_unused_input": ("jvp", lambda L: (lambda x, y: x * 2), lambda L: (T(L, X), T(L, Y)),
                         lambda L: (T(L, V3), T(L, V3B))),
    "jvp_output_disconnected": ("jvp", lambda L: (lambda x, w=_w(L): (x * 2, w * 3)), lambda L: T(L, X),
                                lambda L: T(L, V3)),
    "vhp_linear": ("vhp", lambda L: (lambda x: (x * 2).sum()), lambda L: T(L, X), lambda L: T(L, V3)),
    "vhp_jacobian_disconnected": ("vhp", lambda L: (lambda x, y, w=_w(L): (x ** 2).sum() + (y * w).sum()),
                                  lambda L: (T(L, X), T(L, Y)), lambda L: (T(L, V3), T(L, V3B))),
    "hvp_linear": ("hvp", lambda L: (lambda x: (x * 2).sum()), lambda L: T(L, X), lambda L: T(L, V3)),
    "hvp_jacobian_disconnected": ("hvp", lambda L: (lambda x, y, w=_w(L): (x ** 2).sum() + (y * w).sum()),
                                  lambda L: (T(L, X), T(L, Y)), lambda L: (T(L, V3), T(L, V3B))),
    "jacobian_unused_input": ("jacobian", lambda L: (lambda x, y: x * 2), lambda L: (T(L, X), T(L, Y)), None),
    "jacobian_output_no_grad": ("jacobian", lambda L: (lambda x: x.detach()), lambda L: T(L, X), None),
    "hessian_linear": ("hessian", lambda L: (lambda x: (x * 2).sum()), lambda L: T(L, X), None),
    "hessian_unused_input": ("hessian", lambda L: (lambda x, y: (x ** 3).sum()), lambda L: (T(L, X), T(L, Y)),
                             None),
}


def _call_independent(L, key, **kw):
    name, func, inputs, v = INDEPENDENT[key]
    args = (func(L), inputs(L)) + (() if v is None else (v(L),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(F(L), name)(*args, **kw)


@pytest.mark.parametrize("key", sorted(INDEPENDENT))
def test_independent_gives_zeros_when_not_strict(key):
    both(lambda L: _call_independent(L, key))


@pytest.mark.parametrize("key", [k for k in sorted(INDEPENDENT) if k != "vhp_jacobian_disconnected"])
def test_independent_strict_errors(key):
    same_error(lambda L: _call_independent(L, key, strict=True))


def test_strict_vhp_through_one_formula_node():
    """Once a known gap: the create_graph backward of ``y * w`` is one formula op for both gradients (torch records
    one node per gradient formula); strict mode now finds the double backward of the gradient for y independent
    of y, and raises torch's "independent of input" error."""
    same_error(lambda L: _call_independent(L, "vhp_jacobian_disconnected", strict=True))


@pytest.mark.parametrize("key", ["jacobian_unused_input", "hessian_unused_input", "vjp_unused_input"])
def test_independent_zeros_with_vectorize_or_create_graph(key):
    kw = {"vectorize": True} if INDEPENDENT[key][0] in ("jacobian", "hessian") else {"create_graph": True}
    both(lambda L: _call_independent(L, key, **kw))


@pytest.mark.parametrize("name", ["jacobian", "hessian"])
def test_strict_with_vectorize_is_rejected(name):
    same_error(lambda L: getattr(F(L), name)(f_scalar, T(L, X), strict=True, vectorize=True))


@pytest.mark.parametrize("name", ["vjp", "jacobian"])
def test_strict_create_graph_linear_function(name):
    # The results exist but carry no history: rejected in strict mode with create_graph=True.
    def run(L):
        x = T(L, X, True)
        args = (lambda a: a * 2, x) + ((T(L, V3),) if name == "vjp" else ())
        return getattr(F(L), name)(*args, create_graph=True, strict=True)
    same_error(run)


@pytest.mark.parametrize("name", ["vhp", "hvp", "hessian"])
def test_strict_create_graph_quadratic_function(name):
    # The Hessian of x * x is constant: rejected in strict mode with create_graph=True.
    def run(L):
        args = (lambda a: (a * a).sum(), T(L, X, True)) + ((T(L, V3),) if name != "hessian" else ())
        return getattr(F(L), name)(*args, create_graph=True, strict=True)
    same_error(run)


def test_strict_mode_passes_when_everything_depends():
    both(lambda L: F(L).jacobian(f_tuple, (T(L, X), T(L, Y)), strict=True))
    both(lambda L: F(L).hvp(f_scalar2, (T(L, X), T(L, Y)), (T(L, V3), T(L, V3B)), strict=True))


# --- validation errors -------------------------------------------------------------------------------------------

ALL = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]
WITH_V = ["vjp", "jvp", "hvp", "vhp"]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", ["float", "list", "tuple_with_int", "ndarray"])
def test_non_tensor_inputs(name, bad):
    def run(L):
        inputs = {"float": 3.0, "list": [T(L, X)], "tuple_with_int": (T(L, X), 2), "ndarray": X}[bad]
        getattr(F(L), name)(f_scalar, inputs)
    same_error(run)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("bad", ["list", "float", "tuple_with_none"])
def test_non_tensor_outputs(name, bad):
    def run(L):
        func = {"list": lambda x: [x.sum()], "float": lambda x: 1.0, "tuple_with_none": lambda x: (x.sum(), None)}
        getattr(F(L), name)(func[bad], T(L, X), *([T(L, V3)] if name in ("jvp", "hvp", "vhp") else []))
    same_error(run)


@pytest.mark.parametrize("name", WITH_V)
def test_v_not_a_tensor(name):
    same_error(lambda L: getattr(F(L), name)(f_scalar, T(L, X), [T(L, V3)]))
    same_error(lambda L: getattr(F(L), name)(f_scalar, T(L, X), (T(L, V3), "v")))


@pytest.mark.parametrize("name", WITH_V)
def test_v_wrong_size(name):
    func = f_single if name in ("vjp", "jvp") else f_scalar
    same_error(lambda L: getattr(F(L), name)(func, T(L, X), T(L, V2)))


@pytest.mark.parametrize("name", WITH_V)
def test_v_wrong_size_in_tuple(name):
    func = {"vjp": lambda x, y: (x * y, y.exp()), "jvp": f_tuple}.get(name, f_scalar2)
    same_error(lambda L: getattr(F(L), name)(func, (T(L, X), T(L, Y)), (T(L, V3), T(L, V2))))


@pytest.mark.parametrize("name", WITH_V)
def test_v_wrong_length(name):
    func = {"vjp": lambda x, y: (x * y, y.exp()), "jvp": f_tuple}.get(name, f_scalar2)
    same_error(lambda L: getattr(F(L), name)(func, (T(L, X), T(L, Y)), (T(L, V3),)))   # tuple of wrong length
    single = f_single if name in ("vjp", "jvp") else f_scalar
    same_error(lambda L: getattr(F(L), name)(single, T(L, X), (T(L, V3), T(L, V3))))   # should be one Tensor


@pytest.mark.parametrize("name", WITH_V)
def test_v_none_needs_a_single_element(name):
    func = f_single if name in ("vjp", "jvp") else f_scalar
    same_error(lambda L: getattr(F(L), name)(func, T(L, X)))
    if name == "vjp":  # a tuple of one-element outputs is not enough either
        same_error(lambda L: F(L).vjp(lambda s: (s * 2, s * 3), T(L, S)))


@pytest.mark.parametrize("name", ["hessian", "hvp", "vhp"])
def test_scalar_function_required(name):
    v = lambda L: [T(L, V3)] if name != "hessian" else []  # noqa: E731
    same_error(lambda L: getattr(F(L), name)(lambda x: (x.sum(),), T(L, X), *v(L)))   # a tuple
    same_error(lambda L: getattr(F(L), name)(lambda x: x * 2, T(L, X), *v(L)))        # several elements


def test_strategy_errors():
    same_error(lambda L: F(L).jacobian(f_single, T(L, X), strategy="sideways"))
    same_error(lambda L: F(L).jacobian(f_single, T(L, X), strategy="forward-mode", create_graph=True))
    same_error(lambda L: F(L).jacobian(f_single, T(L, X), strategy="forward-mode", strict=True))
    same_error(lambda L: F(L).jacobian(f_single, T(L, X), strategy="forward-mode"))             # vectorize=False
    same_error(lambda L: F(L).jacobian(f_single, 1.0, strategy="forward-mode", vectorize=True))  # input checked
    same_error(lambda L: F(L).hessian(f_scalar, T(L, X), outer_jacobian_strategy="sideways"))
    same_error(lambda L: F(L).hessian(f_scalar, T(L, X), outer_jacobian_strategy="forward-mode"))


def test_all_and_signatures():
    import inspect
    assert tl.autograd.functional.__all__ == torch.autograd.functional.__all__
    for name in ALL:
        a = inspect.signature(getattr(tl.autograd.functional, name))
        b = inspect.signature(getattr(torch.autograd.functional, name))
        assert [(p.name, p.default) for p in a.parameters.values()] == \
               [(p.name, p.default) for p in b.parameters.values()]
