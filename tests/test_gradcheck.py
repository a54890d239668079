"""autograd.gradcheck / gradgradcheck against torch 2.13: same verdicts, same errors and messages.

Each case runs the same function with ``lib=torch`` and ``lib=torchlike`` on the same NumPy inputs and
compares the outcome: True / False, or (exception type, message). Messages print Jacobians as tensors;
torchlike prints dtypes as ``torchlike.float64`` where torch prints ``torch.float64``, so that prefix is
normalised. Wrong backward formulas are local op-table entries (torchlike) mirrored by custom
``autograd.Function``s (torch) with the same wrong formula.
"""
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.ops._registry import op

rs = np.random.RandomState(0)
X23 = rs.randn(2, 3)
Y3 = rs.randn(3)
G3 = rs.randn(3)
Z2 = rs.randn(2) + 1j * rs.randn(2)


def outcome(fn, lib):
    """(result or exception type name, message or None, [(warning category, message)]) of ``fn(lib)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            r = fn(lib)
            res = (r, None)
        except Exception as e:  # noqa: BLE001 - the exception itself is what is compared
            res = (type(e).__name__, str(e).replace("torchlike.", "torch."))
    # torch's first forward-AD use warns about torch.jit.script's deprecation: not part of gradcheck
    return res + ([(w.category.__name__, str(w.message)) for w in caught if w.category is not DeprecationWarning],)


def same(fn):
    a, b = outcome(fn, tl), outcome(fn, torch)
    assert a == b, f"\ntorchlike: {a}\ntorch:     {b}"
    return a


def leaf(lib, array, dtype=None):
    return lib.tensor(array, dtype=dtype, requires_grad=True)


# ----- wrong derivatives: a local op-table entry (torchlike) and a custom Function (torch) ------------------
@op("SinBackward0")
def _sin_double_grad(x):
    return jnp.sin(x)


@_sin_double_grad.derivative
def _(grad, x):
    return grad * jnp.cos(x) * 2  # wrong: twice the derivative


@op("SinBackward0")
def _sin_frozen(x):
    return jnp.sin(x)


@_sin_frozen.derivative
def _(grad, x):
    return grad * jnp.cos(jax.lax.stop_gradient(x))  # right first derivative, but no second derivative in x


@op("MulBackward0")
def _square_no_conj(z):
    return z * z


@_square_no_conj.derivative
def _(grad, z):
    return grad * 2 * z  # wrong for complex z: torch's convention needs conj(2 z)


class _TorchSinDoubleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.cos() * 2


class _TorchSinFrozen(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.sin()

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * x.detach().cos()


class _TorchSquareNoConj(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, g):
        z, = ctx.saved_tensors
        return g * 2 * z


def sin_double_grad(lib):
    return _sin_double_grad if lib is tl else _TorchSinDoubleGrad.apply


def sin_frozen(lib):
    return _sin_frozen if lib is tl else _TorchSinFrozen.apply


def square_no_conj(lib):
    return _square_no_conj if lib is tl else _TorchSquareNoConj.apply


def composite(a, b):
    """Several inputs, several outputs, broadcasting, a reduction and a matmul."""
    return (a * b).tanh(), (a @ b).exp(), a.sum(0) * b


# ----- module layout -------------------------------------------------------------------------------------
def test_module_layout_as_torch():
    import torchlike.autograd.gradcheck  # noqa: F401  (the submodule stays importable)
    mod = sys.modules["torchlike.autograd.gradcheck"]
    tmod = sys.modules["torch.autograd.gradcheck"]
    for m, autograd in ((mod, tl.autograd), (tmod, torch.autograd)):
        assert autograd.gradcheck is m.gradcheck and callable(autograd.gradcheck)  # the function shadows it
        assert autograd.gradgradcheck is m.gradgradcheck
        assert issubclass(m.GradcheckError, RuntimeError)
    from torchlike.autograd.gradcheck import GradcheckError, gradgradcheck  # noqa: F401
    import inspect
    for name in ("gradcheck", "gradgradcheck"):
        ours = inspect.signature(getattr(mod, name)).parameters
        theirs = inspect.signature(getattr(tmod, name)).parameters
        assert list(ours) == list(theirs)
        assert [(p.kind, p.default) for p in ours.values()] == [(p.kind, p.default) for p in theirs.values()]


# ----- correct gradients pass ------------------------------------------------------------------------------
OPS = {
    "sin": lambda L, a, b: a.sin(),
    "tanh_mul": lambda L, a, b: (a * b).tanh(),
    "exp_matmul": lambda L, a, b: (a @ b).exp(),
    "softmax": lambda L, a, b: L.softmax(a, 1),
    "div_pow": lambda L, a, b: a / (b * b + 1.0) ** 1.5,
    "sum_dim": lambda L, a, b: a.sum(0) * b,
    "sigmoid_where": lambda L, a, b: L.where(a > 0, a.sigmoid(), a * b),
}


@pytest.mark.parametrize("name", OPS)
def test_table_ops_pass(name):
    f = OPS[name]
    assert same(lambda L: L.autograd.gradcheck(lambda a, b: f(L, a, b), (leaf(L, X23), leaf(L, Y3)))) == \
        (True, None, [])


@pytest.mark.parametrize("kw", [{}, {"fast_mode": True}, {"check_batched_grad": True}], ids=str)
def test_composite_several_inputs_and_outputs(kw):
    assert same(lambda L: L.autograd.gradcheck(composite, (leaf(L, X23), leaf(L, Y3)), **kw)) == (True, None, [])


def test_inputs_not_requiring_grad_and_non_tensor_args():
    def f(L):
        x = leaf(L, X23)
        return L.autograd.gradcheck(lambda a, s, b, c: ((a * s)[0] + b * c).sin(), (x, 2.0, leaf(L, Y3), L.tensor(G3)))
    assert same(f) == (True, None, [])


def test_integer_and_detached_outputs_pass():
    assert same(lambda L: L.autograd.gradcheck(lambda a: (a * 2, a.argmax(), a.detach()), leaf(L, Y3))) == \
        (True, None, [])


def test_list_inputs_and_list_outputs():
    assert same(lambda L: L.autograd.gradcheck(lambda a: [a.sum(), a.prod()], [leaf(L, X23)])) == (True, None, [])


def test_inputs_untouched():
    """The perturbation goes through the data: values and version counters are as before (also for a view)."""
    def f(L):
        base = leaf(L, X23).clone()
        v = base[0]
        x = leaf(L, Y3)
        ok = L.autograd.gradcheck(lambda a, b: a * b * base[1], (v, x))
        return ok, v._version, base._version, x._version, base.tolist(), x.tolist()
    r = same(f)
    assert r[0][0] is True


def test_perturbation_reaches_the_base_of_a_view_input():
    """gradcheck moves a view input through its storage, so a function reading the base sees the move (a numerical
    derivative) while autograd has no path from the view to the base (analytical zero): torch's mismatch."""
    def f(L):
        base = leaf(L, X23).clone()
        return L.autograd.gradcheck(lambda a: base.sin(), (base[0],))
    assert same(f)[0] == "GradcheckError"


def test_complex_inputs_and_outputs_pass():
    for fn in (lambda z: z * z, lambda z: (z * z).abs(), lambda z: (z * z.sin(), z.real)):
        assert same(lambda L: L.autograd.gradcheck(fn, leaf(L, Z2))) == (True, None, [])
        assert same(lambda L: L.autograd.gradcheck(fn, leaf(L, Z2), fast_mode=True)) == (True, None, [])


# ----- wrong gradients are caught ---------------------------------------------------------------------------
def test_wrong_backward_message():
    r = same(lambda L: L.autograd.gradcheck(sin_double_grad(L), (leaf(L, Y3),)))
    assert r[0] == "GradcheckError"
    assert r[1].startswith("Jacobian mismatch for output 0 with respect to input 0,\nnumerical:tensor([[")


def test_wrong_backward_raise_exception_false():
    assert same(lambda L: L.autograd.gradcheck(sin_double_grad(L), (leaf(L, Y3),), raise_exception=False)) == \
        (False, None, [])


def test_wrong_backward_in_a_composite_names_output_and_input():
    def f(L):
        fn = sin_double_grad(L)
        return L.autograd.gradcheck(lambda a, b: (a * b, fn(b) * 3.0), (leaf(L, X23), leaf(L, Y3)))
    r = same(f)
    assert r[1].startswith("Jacobian mismatch for output 1 with respect to input 1,")


def test_wrong_backward_fast_mode():
    """The projected numbers depend on the random vectors (ours are not torch's); the slow-mode recomputation
    that follows them in the message is the same as torch's."""
    a, b = (outcome(lambda L: L.autograd.gradcheck(sin_double_grad(L), (leaf(L, Y3),), fast_mode=True), lib)
            for lib in (tl, torch))
    assert a[0] == b[0] == "GradcheckError"
    head = "Jacobian mismatch for output 0 with respect to input 0,\nnumerical:"
    assert a[1].startswith(head) and b[1].startswith(head)
    tail = "Below, we recompute numerical and analytical jacobians in slow mode:"
    assert a[1][a[1].index(tail):] == b[1][b[1].index(tail):]
    assert same(lambda L: L.autograd.gradcheck(sin_double_grad(L), (leaf(L, Y3),), fast_mode=True,
                                               raise_exception=False)) == (False, None, [])


def test_wrong_complex_backward_message():
    r = same(lambda L: L.autograd.gradcheck(square_no_conj(L), (leaf(L, Z2),)))
    assert r[1].startswith("While considering the imaginary part of complex outputs only, Jacobian mismatch")


def _custom(lib, kind):
    """Custom Functions with a correct Jacobian but another defect."""
    calls = [0]

    class F(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            calls[0] += 1
            if kind == "nondet":  # differs from call to call
                return g * (2 + 1e-3 * calls[0])
            return g * 2 if g.abs().sum() > 0 else lib.ones_like(g)  # "nomul": not linear in g
    return F.apply


@pytest.mark.parametrize("kind,kw", [("nondet", {}), ("nondet", {"nondet_tol": 1.0}), ("nomul", {})], ids=str)
def test_backward_defects(kind, kw):
    r = same(lambda L: L.autograd.gradcheck(_custom(L, kind), (leaf(L, X23),), **kw))
    assert r[0] == "GradcheckError"


def test_backward_that_ignores_undefined_grads():
    def f(L):
        class F(L.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                ctx.set_materialize_grads(False)
                return a * 1

            @staticmethod
            def backward(ctx, g):
                return L.ones(3, dtype=L.float64) if g is None else g
        return L.autograd.gradcheck(F.apply, leaf(L, Y3))
    assert same(f)[0] == "GradcheckError"


# ----- gradgradcheck ----------------------------------------------------------------------------------------
def test_gradgradcheck_passes():
    assert same(lambda L: L.autograd.gradgradcheck(composite, (leaf(L, X23), leaf(L, Y3)))) == (True, None, [])
    assert same(lambda L: L.autograd.gradgradcheck(lambda a: a.sin() * a, (leaf(L, Y3),), (leaf(L, G3),))) == \
        (True, None, [])


def test_gradgradcheck_with_0d_outputs_and_inputs():
    """Its random grad_outputs are made with the output's shape, 0-d included."""
    assert same(lambda L: L.autograd.gradgradcheck(lambda a: (a * a * a).sum(), (leaf(L, Y3),))) == (True, None, [])
    assert same(lambda L: L.autograd.gradgradcheck(lambda a: a ** 3, (leaf(L, np.array(1.5)),))) == (True, None, [])


@pytest.mark.parametrize("kw", [{"fast_mode": True, "gen_non_contig_grad_outputs": True},
                                {"check_batched_grad": True}], ids=str)
def test_gradgradcheck_options(kw):
    assert same(lambda L: L.autograd.gradgradcheck(lambda a: a.sin() * a, (leaf(L, Y3),), **kw)) == \
        (True, None, [])


def test_gradgradcheck_catches_wrong_second_derivative():
    def run(L, **kw):
        return L.autograd.gradgradcheck(sin_frozen(L), (leaf(L, Y3),), (leaf(L, G3),), **kw)
    assert same(lambda L: L.autograd.gradcheck(sin_frozen(L), (leaf(L, Y3),))) == (True, None, [])
    r = same(run)
    assert r[0] == "GradcheckError" and r[1].startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert same(lambda L: run(L, raise_exception=False)) == (False, None, [])


# ----- forward mode (check_forward_ad) -----------------------------------------------------------------------
def _sin_bad_jvp_function(lib):
    class SinBadJvp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.x = x
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * x.cos()  # the backward is right

        @staticmethod
        def jvp(ctx, dx):
            return 2 * ctx.x.cos() * dx  # wrong: twice the derivative
    return SinBadJvp


_TL_SIN_BAD_JVP, _TORCH_SIN_BAD_JVP = _sin_bad_jvp_function(tl), _sin_bad_jvp_function(torch)


def sin_bad_jvp(lib):
    return (_TL_SIN_BAD_JVP if lib is tl else _TORCH_SIN_BAD_JVP).apply


@pytest.mark.parametrize("kw", [{}, {"fast_mode": True}, {"check_backward_ad": False},
                                {"check_batched_forward_grad": True}], ids=str)
def test_forward_ad_passes(kw):
    assert same(lambda L: L.autograd.gradcheck(composite, (leaf(L, X23), leaf(L, Y3)), check_forward_ad=True,
                                               **kw)) == (True, None, [])


def test_forward_ad_complex_input_and_fwd_over_rev():
    assert same(lambda L: L.autograd.gradcheck(lambda z: z * z.sin(), leaf(L, Z2), check_forward_ad=True)) == \
        (True, None, [])
    assert same(lambda L: L.autograd.gradgradcheck(lambda a: a.sin() * a, leaf(L, Y3), check_fwd_over_rev=True)) \
        == (True, None, [])


def test_forward_ad_catches_wrong_jvp():
    def run(L, **kw):
        return L.autograd.gradcheck(sin_bad_jvp(L), (leaf(L, Y3),), **kw)
    assert same(run) == (True, None, [])  # backward only: nothing wrong
    r = same(lambda L: run(L, check_forward_ad=True))
    assert r[1].startswith("Jacobian computed with forward mode mismatch for output 0 with respect to input 0,")
    assert same(lambda L: run(L, check_forward_ad=True, raise_exception=False)) == (False, None, [])
    a, b = (outcome(lambda L: run(L, check_forward_ad=True, fast_mode=True), lib) for lib in (tl, torch))
    tail = "Below, we recompute numerical and analytical jacobians in slow mode:"
    assert a[0] == b[0] == "GradcheckError" and a[1][a[1].index(tail):] == b[1][b[1].index(tail):]


# ----- misuse: torch's errors and warnings ------------------------------------------------------------------
MISUSE = {
    "float32_input": lambda L: L.autograd.gradcheck(lambda a: a * a, leaf(L, X23, L.float32)),
    "float32_input_no_raise": lambda L: L.autograd.gradcheck(lambda a: a * a, leaf(L, X23, L.float32),
                                                             raise_exception=False),
    "float32_second_input": lambda L: L.autograd.gradcheck(lambda a, b: a * b,
                                                           (leaf(L, X23), leaf(L, X23, L.float32))),
    "bfloat16_input": lambda L: L.autograd.gradcheck(lambda a: a * 2, leaf(L, Y3, L.bfloat16), eps=1e-2, atol=0.1,
                                                     rtol=0.1),
    "no_input_requires_grad": lambda L: L.autograd.gradcheck(lambda a: a.sin(), (L.tensor(Y3), 1.0)),
    "int_output": lambda L: L.autograd.gradcheck(lambda a: 3, leaf(L, Y3)),
    "none_in_outputs": lambda L: L.autograd.gradcheck(lambda a: (a, None), leaf(L, Y3)),
    "expanded_input": lambda L: L.autograd.gradcheck(lambda a: a.sin(), leaf(L, Y3).expand(2, 3)),
    "no_differentiable_output": lambda L: L.autograd.gradcheck(lambda a: a.detach() * 2, leaf(L, Y3)),
    "no_differentiable_output_fast": lambda L: L.autograd.gradcheck(lambda a: a.detach() * 2, leaf(L, Y3),
                                                                    fast_mode=True),
    "no_ad_mode": lambda L: L.autograd.gradcheck(lambda a: a, leaf(L, Y3), check_backward_ad=False),
    "batched_without_backward": lambda L: L.autograd.gradcheck(lambda a: a, leaf(L, Y3), check_forward_ad=True,
                                                               check_backward_ad=False, check_batched_grad=True),
    "batched_forward_without_forward": lambda L: L.autograd.gradcheck(lambda a: a, leaf(L, Y3),
                                                                      check_batched_forward_grad=True),
    "gg_no_mode": lambda L: L.autograd.gradgradcheck(lambda a: a, leaf(L, Y3), check_rev_over_rev=False),
    "gg_undefined_without_rev": lambda L: L.autograd.gradgradcheck(lambda a: a, leaf(L, Y3), check_fwd_over_rev=True,
                                                                   check_rev_over_rev=False),
    "gg_wrong_grad_outputs": lambda L: L.autograd.gradgradcheck(lambda a: a.sin(), leaf(L, Y3), (leaf(L, X23),)),
    "keyword_only": lambda L: L.autograd.gradcheck(lambda a: a, leaf(L, Y3), 1e-6),
}


@pytest.mark.parametrize("name", MISUSE)
def test_misuse(name):
    r = same(MISUSE[name])
    assert r[0] is not True or r[2]  # every case raises or warns
