"""torchlike.library (custom_op, register_autograd, the legacy dict-backward checks) against torch 2.13's.

Each scenario defines the same custom op with ``lib.library.custom_op`` in torchlike and in torch (one namespace
per test, so registrations never collide), runs it on the same NumPy inputs and compares values, gradients,
node names, call records and (type, message) of every error."""
import itertools
import re
import typing
import warnings

import jax.numpy as jnp
import numpy as np
import torch

import torchlike as tl
from oracle import assert_same, graph_with_nr

X = np.array([0.5, -1.25, 2.0], np.float32)
Y = np.array([1.5, 0.25, -0.75], np.float32)
_ids = itertools.count()


def ns():
    """A fresh namespace (torch keeps registrations for the process)."""
    return f"tlib{next(_ids)}"


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - type and message are compared
        return type(e).__name__, str(e)
    return None


def same_errors(a, b, prefix=None):
    """Both raised the same type and message (or the same first ``prefix`` characters)."""
    assert a is not None and b is not None, (a, b)
    assert a[0] == b[0], (a, b)
    if prefix is None:
        assert a[1] == b[1], (a, b)
    else:
        assert a[1][:prefix] == b[1][:prefix], (a, b)


def names(text):
    """torch's spellings for torchlike's in messages that print classes, modules or signatures."""
    return (text.replace("torchlike._tensor.Tensor", "torch.Tensor").replace("torchlike.", "torch.")
            .replace("torch.library", "torch._library.custom_ops"))


def leaves(lib, *arrays, grad=True):
    return [lib.tensor(a, requires_grad=grad) for a in arrays]


# ----- forward values ----------------------------------------------------------------------------------------
def _torchlike_style_op(lib, space):
    """An op written with the shared tensor API (so its torchlike body is torchlike ops)."""
    @lib.library.custom_op(f"{space}::mix", mutates_args=())
    def mix(x: lib.Tensor, y: lib.Tensor, k: int, s: float, flip: bool,
            dims: list[int]) -> tuple[lib.Tensor, lib.Tensor, lib.Tensor]:
        a = x.sin() * y * k + s
        b = (x * y).sum(dim=dims[0], keepdim=True) if not flip else (x - y).exp()
        return a, b, (x > 0).long()
    return mix


def test_forward_torchlike_written_op_matches_torch():
    space = ns()

    def run(lib):
        mix = _torchlike_style_op(lib, space)
        x, y = leaves(lib, X.reshape(1, 3), Y.reshape(1, 3), grad=False)
        return [mix(x, y, 2, 0.5, False, [1]), mix(x, y, 3, -1.0, True, [0]), mix(x, y=y, k=1, s=2, flip=False,
                                                                                  dims=[0])]
    for a, b in zip(run(tl), run(torch)):
        assert isinstance(a, tuple) and len(a) == 3
        assert_same(list(a), list(b))
    mix = _torchlike_style_op(tl, ns())
    mix(tl.tensor(X), tl.tensor(Y), 1, 1.0, True, [0])
    assert mix._modes == {mix._init_fn: "tensor"}  # its body ran on torchlike Tensors


def test_forward_jax_written_op_matches_torch():
    space = ns()

    @tl.library.custom_op(f"{space}::soft", mutates_args=())
    def soft_tl(x: tl.Tensor, w: tl.Tensor, t: float) -> tl.Tensor:
        z = jnp.tanh(x) * w / t
        return jnp.exp(z) / jnp.sum(jnp.exp(z))

    @torch.library.custom_op(f"{space}::soft", mutates_args=())
    def soft_torch(x: torch.Tensor, w: torch.Tensor, t: float) -> torch.Tensor:
        z = torch.tanh(x) * w / t
        return torch.exp(z) / torch.exp(z).sum()

    for t in (1.0, 0.5):
        a, b = soft_tl(tl.tensor(X), tl.tensor(Y), t), soft_torch(torch.tensor(X), torch.tensor(Y), t)
        assert_same(a, b)
    # a jnp body cannot take torchlike Tensors unless interop has registered Tensor as a JAX pytree in this
    # process (then the first, Tensor-mode trace already works): either way it is traced once, values as torch's
    assert list(soft_tl._modes.values()) in (["jax"], ["tensor"])


def test_jax_written_op_gradients_match_torch():
    space = ns()

    @tl.library.custom_op(f"{space}::tanh_pair", mutates_args=())
    def tanh_tl(x: tl.Tensor, t: float) -> tuple[tl.Tensor, tl.Tensor]:
        y = jnp.tanh(x) / t
        return y, jnp.sum(y * y, keepdims=True)

    @torch.library.custom_op(f"{space}::tanh_pair", mutates_args=())
    def tanh_torch(x: torch.Tensor, t: float) -> tuple[torch.Tensor, torch.Tensor]:
        y = torch.tanh(x) / t
        return y, (y * y).sum(dim=0, keepdim=True)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.t = inputs[1]

    def backward(ctx, gy, gs):  # written once, with the shared tensor API
        (x,) = ctx.saved_tensors
        y = x.tanh() / ctx.t
        return (gy + 2 * gs * y) * (1 - x.tanh() ** 2) / ctx.t, None

    results = []
    for lib, op in ((tl, tanh_tl), (torch, tanh_torch)):
        op.register_autograd(backward, setup_context=setup_context)
        x = lib.tensor(X, requires_grad=True)
        y, s = op(x, 0.5)
        g, = lib.autograd.grad((y * lib.tensor(Y)).sum() + 3 * s.sum(), x, create_graph=True)
        h, = lib.autograd.grad(g.sum(), x)
        results.append((y, s, g, h, y.grad_fn.name() == s.grad_fn.name()))
    assert_same(list(results[0][:4]), list(results[1][:4]))
    assert results[0][4] and results[1][4]


def test_schema_strings_match_torch():
    space = ns()

    def run(lib):
        def f(x: lib.Tensor, k: int = 3, s: float = 1e-05, b: bool = True, o: typing.Optional[lib.Tensor] = None,
              *, l: list[int], z: str = "a", dt: lib.dtype = lib.float64, g: float = -2.0) -> tuple[lib.Tensor]:
            return (x.clone(),)

        def h(xs: list[lib.Tensor], y: typing.Optional[lib.Tensor], w: list[float]) -> list[lib.Tensor]:
            return [t.clone() for t in xs]
        op1 = lib.library.custom_op(f"{space}::f", f, mutates_args=())
        op2 = lib.library.custom_op(f"{space}::h", h, mutates_args="unknown")
        op3 = lib.library.custom_op(f"{space}::h2", h, mutates_args=["xs"])
        op4 = lib.library.custom_op(f"{space}::m", schema="(Tensor(a!) x, int k=2, float s=2.5) -> ()",
                                    mutates_args={"x"})(lambda x, k=2, s=2.5: None)
        return [(op._schema, str(op._opoverload._schema), repr(op)) for op in (op1, op2, op3, op4)]
    assert run(tl) == run(torch)


# ----- gradients ---------------------------------------------------------------------------------------------
def _define_scaled_mul(lib, space, calls):
    @lib.library.custom_op(f"{space}::smul", mutates_args=())
    def smul(x: lib.Tensor, y: lib.Tensor, k: float) -> lib.Tensor:
        return x * y.cos() * k

    def setup_context(ctx, inputs, output):
        x, y, k = inputs
        calls.append(("setup", type(inputs).__name__, k, tuple(output.shape)))
        ctx.save_for_backward(x, y)
        ctx.k = k

    def backward(ctx, grad):
        calls.append(("backward", ctx.needs_input_grad))
        x, y = ctx.saved_tensors
        return grad * y.cos() * ctx.k, -grad * x * y.sin() * ctx.k, None
    smul.register_autograd(backward, setup_context=setup_context)
    return smul


def test_gradients_node_and_ctx_match_torch():
    space = ns()

    def run(lib):
        calls = []
        smul = _define_scaled_mul(lib, space, calls)
        x, y = leaves(lib, X, Y)
        out = smul(x, y, 1.5)
        node = out.grad_fn
        info = [node.name(), type(node).__name__, graph_with_nr(out), out.requires_grad,
                repr(node).split(" object")[0].replace("torchlike", "torch")]
        (out * out).sum().backward()
        g1 = x.grad.clone(), y.grad.clone()
        y2 = lib.tensor(Y)  # only x requires grad: needs_input_grad says so
        gx, = lib.autograd.grad(smul(x, y2, 2.0).sum(), x)
        return calls, info, g1, gx
    a, b = run(tl), run(torch)
    assert a[:2] == b[:2]
    assert_same(list(a[2]) + [a[3]], list(b[2]) + [b[3]])


def test_register_autograd_function_form_and_keyword_only_inputs():
    space = ns()

    def run(lib):
        calls = []

        @lib.library.custom_op(f"{space}::kw", mutates_args=())
        def kw(x: lib.Tensor, k: int = 3, s: float = 2.0, *, m: float = 1.0) -> lib.Tensor:
            return x * (k * s * m)

        def setup_context(ctx, inputs, keyword_only_inputs, output):
            calls.append(("setup", inputs[1:], keyword_only_inputs))
            ctx.c = inputs[1] * inputs[2] * keyword_only_inputs["m"]

        def backward(ctx, g):
            calls.append(("backward", ctx.needs_input_grad))
            return g * ctx.c
        lib.library.register_autograd(f"{space}::kw", backward, setup_context=setup_context)
        x = lib.tensor(X, requires_grad=True)
        results = []
        for args, kwargs in [((), {}), ((3,), {}), ((3, 2.0), {"m": 0.5}), ((5,), {}), ((), {"s": 1.0})]:
            results.append(err(lambda: kw(x, *args, **kwargs).sum().backward()))
        wrong = lambda ctx, inputs, output: None  # noqa: E731 - the 3-argument form on an op with kw-only args
        kw.register_autograd(backward, setup_context=wrong)
        results.append(err(lambda: kw(x).sum().backward()))
        return calls, results, x.grad
    a, b = run(tl), run(torch)
    assert a[:2] == b[:2]
    assert_same(a[2], b[2])


def test_backward_return_errors_match_torch():
    space = ns()
    cases = {
        "too_few": lambda g: (g, g),                      # one per tensor input only: k has no slot
        "trailing_nones": lambda g: (g, g, None, None),   # extra trailing Nones are fine
        "too_many": lambda g: (g, g, g),                  # a gradient for the int input
        "bad_shape": lambda g: (g[:2], g, None),
        "broadcast_shape": lambda g: (g.unsqueeze(0).expand(2, 3), g, None),  # summed back, as torch
        "dtype": lambda g: (g.double(), g, None),          # cast to the input's dtype
        "not_tensor": lambda g: (1.0, g, None),
        "single": lambda g: g,
    }

    def run(lib):
        @lib.library.custom_op(f"{space}::f", mutates_args=())
        def f(x: lib.Tensor, y: lib.Tensor, k: int) -> lib.Tensor:
            return x * y * k
        out = {}
        for name, ret in cases.items():
            f.register_autograd(lambda ctx, g, ret=ret: ret(g))
            x, y = leaves(lib, X, Y)
            out[name] = err(lambda: f(x, y, 2).sum().backward()), x.grad
        return out
    a, b = run(tl), run(torch)
    for name in cases:
        ea, eb = a[name][0], b[name][0]
        if eb is None:
            assert ea is None, (name, ea)
            assert_same(a[name][1], b[name][1])
        else:
            assert ea == eb, (name, ea, eb)


def test_no_formula_error_only_when_a_gradient_is_needed():
    space = ns()

    def run(lib):
        calls = []

        @lib.library.custom_op(f"{space}::plain", mutates_args=())
        def plain(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            calls.append("run")
            return x * y
        x, y = leaves(lib, X, Y)
        y0 = lib.tensor(Y)
        out = plain(x, y)
        e1 = err(lambda: out.sum().backward())
        ok = plain(lib.tensor(X), y0)  # nothing requires grad: no node, runs fine
        with lib.no_grad():
            ng = plain(x, y)
        w = lib.tensor(Y, requires_grad=True)
        z = plain(x, y0) + w * 2  # grad w.r.t. w never runs the op's node
        gx, = lib.autograd.grad(z.sum(), w)
        return e1, [out.requires_grad, ok.requires_grad, ok.grad_fn is None, ng.grad_fn is None], gx, len(calls)
    a, b = run(tl), run(torch)
    space_free = (a[0][0], re.sub(r"tlib\d+", "NS", a[0][1]))
    assert space_free == (b[0][0], re.sub(r"tlib\d+", "NS", b[0][1]))
    assert a[0][1].startswith("Trying to backward through tlib") and ".plain.default but no autograd" in a[0][1]
    assert a[1] == b[1]
    assert (a[3], b[3]) == (1, 4)  # torch runs the Python body per call; torchlike traced it once
    assert_same(a[2], b[2])


def test_apply_only_when_grad_enabled_and_an_argument_requires_grad():
    space = ns()

    def run(lib):
        calls = []
        smul = _define_scaled_mul(lib, space, calls)
        x, y = leaves(lib, X, Y)
        smul(lib.tensor(X), lib.tensor(Y), 1.0)
        with lib.no_grad():
            r = smul(x, y, 1.0)
        with lib.inference_mode():
            smul(x, y, 1.0)
        smul(x, y, 1.0)
        return [c[0] for c in calls], r.requires_grad
    assert run(tl) == run(torch)


def test_non_differentiable_outputs():
    space = ns()

    def run(lib):
        seen = []

        @lib.library.custom_op(f"{space}::sortish", mutates_args=())
        def sortish(x: lib.Tensor) -> tuple[lib.Tensor, lib.Tensor, lib.Tensor, int]:
            return x * 2, (x > 0).long(), x * 3, 7

        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[2])

        def backward(ctx, g, gi, g3, gint):
            seen.append((gi.dtype == lib.int64, gi.tolist(), g3.tolist(), gint))
            return g * 2
        sortish.register_autograd(backward, setup_context=setup_context)
        x = lib.tensor(X, requires_grad=True)
        a, i, c, n = sortish(x)
        a.sum().backward()
        return seen, [t.requires_grad for t in (a, i, c)], n, x.grad.tolist()
    assert run(tl) == run(torch)


def test_double_backward_through_registered_formula():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::cube", mutates_args=())
        def cube(x: lib.Tensor) -> lib.Tensor:
            return x * x * x

        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x
        cube.register_autograd(backward, setup_context=setup_context)
        x = lib.tensor(X, requires_grad=True)
        g, = lib.autograd.grad(cube(x).sum(), x, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), x, create_graph=True)
        h2, = lib.autograd.grad(h.sum(), x)
        return g, h, h2, graph_with_nr(g)[0]
    a, b = run(tl), run(torch)
    assert_same(list(a[:3]), list(b[:3]))
    assert a[3] == b[3] == "MulBackward0"


# ----- List[Tensor] arguments and returns (torch's supports_tensorlist) -----------------------------------
def test_tensor_lists_needs_input_grad_and_structure_errors():
    space = ns()
    returns = {
        "ok": lambda g: ([g * 1.0, g * 2.0], None, g),
        "list_of_none": lambda g: ([None, None], None, None),
        "tuple_for_list": lambda g: ((g, g), None, g),
        "short_list": lambda g: ([g], None, g),
        "flat": lambda g: (g, g, None, g),
        "none_for_list": lambda g: (None, None, g),
        "extra": lambda g: ([g, g], None, g, None),
        "grad_for_floats": lambda g: ([g, g], g, g),
        "list_for_floats": lambda g: ([g, g], [None, None], g),
    }

    def run(lib):
        seen = []

        @lib.library.custom_op(f"{space}::ws", mutates_args=())
        def ws(xs: list[lib.Tensor], w: list[float], y: lib.Tensor) -> lib.Tensor:
            return xs[0] * w[0] + xs[1] * w[1] + y
        out = {}
        for name, ret in returns.items():
            def backward(ctx, g, ret=ret):
                seen.append(ctx.needs_input_grad)
                return ret(g)
            ws.register_autograd(backward)
            a, b = lib.tensor(X, requires_grad=True), lib.tensor(Y)
            y = lib.tensor(Y, requires_grad=True)
            r = ws([a, b], [1.0, 2.0], y)
            node = r.grad_fn
            e = err(lambda: r.sum().backward())
            out[name] = e, a.grad, node.name(), len(node.next_functions)
        return seen, out
    a, b = run(tl), run(torch)
    assert a[0] == b[0]
    for name in returns:
        assert a[1][name][0] == b[1][name][0], name
        assert a[1][name][2:] == b[1][name][2:], name
        assert_same(a[1][name][1], b[1][name][1])


def test_tensor_list_return_and_backward_gets_a_list():
    space = ns()

    def run(lib):
        seen = []

        @lib.library.custom_op(f"{space}::split3", mutates_args=())
        def split3(x: lib.Tensor) -> list[lib.Tensor]:
            return [x * 2, x * 3]

        def backward(ctx, gs):
            seen.append((type(gs).__name__, len(gs)))
            return gs[0] * 2 + gs[1] * 3
        split3.register_autograd(backward)
        x = lib.tensor(X, requires_grad=True)
        out = split3(x)
        (out[0].sum() + (out[1] * out[1]).sum()).backward()
        return seen, type(out).__name__, [o.grad_fn is out[0].grad_fn for o in out], x.grad
    a, b = run(tl), run(torch)
    assert a[:3] == b[:3]
    assert_same(a[3], b[3])


# ----- mutation ------------------------------------------------------------------------------------------------
def test_mutates_args_writes_back_and_bumps_versions_like_torch():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::sin_", mutates_args={"x"})
        def sin_(x: lib.Tensor, y: lib.Tensor) -> None:
            x.copy_(x.sin() + y)

        @lib.library.custom_op(f"{space}::twice", mutates_args=("x",))
        def twice(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            x.mul_(2)
            x.add_(y)
            return y * 2

        @lib.library.custom_op(f"{space}::unk", mutates_args="unknown")
        def unk(x: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            return x + y
        x, y = leaves(lib, X, Y, grad=False)
        rec = [sin_(x, y), x.clone(), x._version]
        rec += [twice(x, y), x.clone(), x._version, y._version]
        rec += [unk(x, y), x._version, y._version]
        base = lib.zeros(2, 3)
        view = base[0]
        sin_(view, lib.ones(3))
        rec += [base, base._version]
        leaf = lib.tensor(X, requires_grad=True)  # torch lets a custom op mutate a leaf that requires grad
        sin_(leaf, y)
        rec += [leaf.detach(), leaf._version, leaf.grad_fn is None]
        errors = [err(lambda: twice.register_autograd(lambda ctx, g: g)),
                  err(lambda: lib.library.register_autograd(f"{space}::unk", lambda ctx, g: g))]
        return rec, errors
    a, b = run(tl), run(torch)
    for u, v in zip(a[0], b[0]):
        if isinstance(v, torch.Tensor):
            assert_same(u, v)
        else:
            assert u == v
    assert a[1] == b[1]


def test_mutating_tensor_lists_and_undeclared_mutation():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::m", mutates_args={"xs"})
        def m(xs: list[lib.Tensor], y: lib.Tensor) -> None:
            for x in xs:
                x.mul_(2)
            xs[0].add_(y)

        @lib.library.custom_op(f"{space}::n", mutates_args=())
        def n(x: lib.Tensor) -> lib.Tensor:
            x.add_(1)  # not declared: the data still changes in torch, without the extra version bump
            return x * 2
        a, b, y, c = lib.ones(2), lib.ones(2), lib.ones(2), lib.ones(2)
        m([a, b], y)
        r = n(c)
        return [a.tolist(), b.tolist(), a._version, b._version, y._version, c.tolist(), c._version, r.tolist()]
    assert run(tl) == run(torch)


def test_mutable_op_with_grad_inputs_gets_a_node_without_formula():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::acc", mutates_args={"buf"})
        def acc(buf: lib.Tensor, y: lib.Tensor) -> lib.Tensor:
            buf.add_(y)
            return y * 2
        buf, y = lib.tensor(X), lib.tensor(Y, requires_grad=True)
        z = acc(buf, y)
        e = err(lambda: z.sum().backward())
        return z.requires_grad, buf.tolist(), buf._version, (e[0], re.sub(r"tlib\d+", "NS", e[1]))
    assert run(tl) == run(torch)


# ----- errors at definition and call time ----------------------------------------------------------------------
def test_custom_op_definition_errors_match_torch():
    space = ns()

    def run(lib):
        T = lib.Tensor

        def f(x: T) -> T:
            return x.clone()

        def g(x: T, k: int) -> T:
            return x * k

        def noann(x, k: int) -> T:
            return x

        def noret(x: T, k: int):
            return x

        def varargs(x: T, *args: int) -> T:
            return x

        def badtype(x: T, k: dict) -> T:
            return x

        def baddefault(x: T, l: list[int] = [1]) -> T:  # noqa: B006
            return x

        def kwtensor(x: T, *, y: T) -> T:
            return x
        c = lib.library.custom_op
        attempts = [
            lambda: c("noname", f, mutates_args=()),
            lambda: c("a::b::c", f, mutates_args=()),
            lambda: c("::b", f, mutates_args=()),
            lambda: c(f"{space}::", f, mutates_args=()),
            lambda: c(f"{space}::c-d", f, mutates_args=()),
            lambda: c("a.b::c", f, mutates_args=()),
            lambda: c("prim::foo", f, mutates_args=()),
            lambda: c(f"{space}::nomut", f),
            lambda: c(f"{space}::mutstr", f, mutates_args="x"),
            lambda: c(f"{space}::mutnone", f, mutates_args=None),
            lambda: c(f"{space}::mutbad", f, mutates_args=("z",)),
            lambda: c(f"{space}::mutint", g, mutates_args=("k",)),
            lambda: c(f"{space}::noann", noann, mutates_args=()),
            lambda: c(f"{space}::noret", noret, mutates_args=()),
            lambda: c(f"{space}::varargs", varargs, mutates_args=()),
            lambda: c(f"{space}::baddefault", baddefault, mutates_args=()),
            lambda: c(f"{space}::kwtensor", kwtensor, mutates_args=()),
            lambda: c(f"{space}::sch", g, mutates_args=("x",), schema="(Tensor x, int k) -> Tensor"),
        ]
        out = [err(a) for a in attempts]
        bad = err(lambda: c(f"{space}::badtype", badtype, mutates_args=()))
        return out, (bad[0], bad[1].split(" The valid types")[0])
    a, b = run(tl), run(torch)
    for u, v in zip(a[0] + [a[1]], b[0] + [b[1]]):
        assert (u[0], names(u[1])) == (v[0], v[1]), (u, v)


def test_call_argument_errors_match_torch():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::f", mutates_args=())
        def f(x: lib.Tensor, k: int = 3, s: float = 2.0, *, m: float = 1.0) -> lib.Tensor:
            return x * k * s * m
        x = lib.tensor(X)
        out = [err(lambda: f(x, zz=2.0)), err(lambda: f(x, 1, 2.0, 3)), err(lambda: f()),
               err(lambda: f(x, 2.5)), err(lambda: f(3.0))]
        ok = [f(x, k=True).tolist(), f(x, 2, 1).tolist()]  # torch converts bool -> int and int -> float
        return out, ok
    a, b = run(tl), run(torch)
    for u, v in zip(a[0], b[0]):
        same_errors(u, (v[0], v[1].split("\nCast error details")[0]), prefix=len(v[1].split("\nCast error")[0]))
    assert a[1] == b[1]


def test_output_aliasing_an_input_is_refused():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::same", mutates_args=())
        def same(x: lib.Tensor) -> lib.Tensor:
            return x

        @lib.library.custom_op(f"{space}::view", mutates_args=())
        def view(x: lib.Tensor) -> lib.Tensor:
            return x.view(-1)

        @lib.library.custom_op(f"{space}::twice", mutates_args=())
        def twice(x: lib.Tensor) -> tuple[lib.Tensor, lib.Tensor]:
            y = x * 2
            return y, y
        x = lib.tensor(X)
        return [err(lambda: op(x)) for op in (same, view, twice)]
    for u, v in zip(run(tl), run(torch)):
        assert u[0] == v[0]
        head, tail = v[1].split(" (with implementation in ")
        assert u[1].startswith(head + " (with implementation in <module 'torchlike.library'")
        assert u[1].endswith(tail.split(">", 1)[1])


def test_jax_written_op_alias_and_errors():
    @tl.library.custom_op(f"{ns()}::ident", mutates_args=())
    def ident(x: tl.Tensor) -> tl.Tensor:
        return jnp.asarray(x)
    e = err(lambda: ident(tl.tensor(X)))
    assert e[0] == "RuntimeError" and "must not also be an input to this custom operator" in e[1]

    @tl.library.custom_op(f"{ns()}::broken", mutates_args=())
    def broken(x: tl.Tensor) -> tl.Tensor:
        return jnp.sin(x) + undefined_name  # noqa: F821 - the user's own error surfaces, not the retry's
    assert err(lambda: broken(tl.tensor(X))) == ("NameError", "name 'undefined_name' is not defined")


# ----- torchlike.ops.<ns>.<name>, registration functions --------------------------------------------------------
def test_ops_namespace_and_registration_lookups():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::f", mutates_args=())
        def f(x: lib.Tensor) -> lib.Tensor:
            return x * 2
        packet = getattr(lib.ops, space).f
        x = lib.tensor(X)
        rec = [str(packet), repr(packet), str(packet.default), repr(packet.default), packet.default.name(),
               packet.overloads(), packet(x).tolist(), packet.default(x).tolist(), f._opoverload is packet.default,
               err(lambda: packet.nope), err(lambda: getattr(lib.ops, space).nope)]
        lib_ = lib.library
        rec += [err(lambda: lib_.register_autograd(3, lambda ctx, g: g)),
                err(lambda: lib_.register_autograd("nope", lambda ctx, g: g)),
                err(lambda: lib_.register_autograd(f"{space}::nope", lambda ctx, g: g)),
                err(lambda: lib_.register_fake(3, lambda x: x)),
                err(lambda: lib_.register_fake(f"{space}::nope", lambda x: x))]
        fake = lambda x: x.new_empty(x.shape)  # noqa: E731
        rec += [lib_.register_fake(f"{space}::f", fake) is fake, f.register_fake(fake) is fake,
                lib_.register_fake(packet.default)(fake) is fake, f._abstract_fn is fake]

        def backward(ctx, g):
            return g * 2
        lib_.register_autograd(packet.default, backward)
        y = lib.tensor(X, requires_grad=True)
        f(y).sum().backward()
        rec.append(y.grad.tolist())
        return rec
    assert run(tl) == run(torch)


def test_register_kernel_replaces_the_implementation():
    space = ns()

    def run(lib):
        @lib.library.custom_op(f"{space}::f", mutates_args=(), device_types="cpu")
        def f(x: lib.Tensor) -> lib.Tensor:
            return x * 2
        x = lib.tensor(X)
        first = f(x).tolist()
        f.register_kernel("cpu")(lambda x: x * 3)
        return first, f(x).tolist()
    assert run(tl) == run(torch)


# ----- compilation: one trace per input signature ---------------------------------------------------------------
def test_one_trace_per_signature():
    calls = []

    @tl.library.custom_op(f"{ns()}::f", mutates_args=())
    def f(x: tl.Tensor, k: int) -> tl.Tensor:
        calls.append(k)
        return x.sin() * k

    x = tl.tensor(X, requires_grad=True)
    for _ in range(3):
        f(x, 2)
        with tl.no_grad():
            f(x, 2)
    assert (len(calls), f._trace_count) == (1, 1)
    f(x, 3)                       # a static argument's value is part of the signature
    f(tl.tensor(X.reshape(3, 1)), 3)  # so are shapes
    f(tl.tensor(X.astype(np.float64)), 3)  # and dtypes
    f(x, 3)
    assert (calls, f._trace_count) == ([2, 3, 3, 3], 4)
    assert_same(f(x, 3), torch.sin(torch.tensor(X)) * 3)

    @tl.library.custom_op(f"{ns()}::g", mutates_args=())
    def g(x: tl.Tensor, k: int) -> tl.Tensor:
        return jnp.cos(x) * k
    for _ in range(3):
        g(x, 2)
    g(x, 4)
    assert g._trace_count == 2 and len(g._cache) == 2


def test_inside_no_grad_and_inference_mode():
    space = ns()

    def run(lib):
        calls = []
        smul = _define_scaled_mul(lib, space, calls)
        x, y = leaves(lib, X, Y)
        with lib.no_grad():
            a = smul(x, y, 2.0)
        with lib.inference_mode():
            b = smul(x, y, 2.0)
        return a, b, [a.requires_grad, b.requires_grad, b.is_inference(), len(calls)]
    a, b = run(tl), run(torch)
    assert_same(list(a[:2]), list(b[:2]))
    assert a[2] == b[2]


# ----- the legacy CustomOp API (torch._custom_op): dict-returning backward ---------------------------------------
def _legacy_torch_op(space):
    from torch._custom_op.impl import custom_op
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        @custom_op(f"{space}::foo")
        def foo(x: torch.Tensor, xs: list[torch.Tensor], k: int) -> torch.Tensor:
            ...
    foo._register_impl("backward", lambda ctx, saved, grad: None)
    return foo


def _legacy_cases(lib):
    g = lib.ones(3)
    return {
        "ok": {"x": g * 2, "xs": [g, None]},
        "tuple_list": {"x": None, "xs": (g, g)},
        "not_dict": [g],
        "missing_key": {"x": g},
        "extra_key": {"x": g, "xs": [g, g], "k": None},
        "list_not_list": {"x": g, "xs": g},
        "list_length": {"x": g, "xs": [g]},
        "list_element": {"x": g, "xs": [g, 1.0]},
        "list_tensor_for_non_tensor": {"x": g, "xs": [g, g]},
        "scalar": {"x": 2.0, "xs": [g, g]},
    }


def test_legacy_validate_grad_inputs_dict_matches_torch():
    from torch._custom_op import autograd as legacy
    from torch.utils import _pytree
    space = ns()
    torch_op = _legacy_torch_op(space)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def foo(x: tl.Tensor, xs: list[tl.Tensor], k: int) -> tl.Tensor:
            return x * k + xs[0]
        tl_op = tl.library._legacy_custom_op(f"{space}::foo")(foo)
    tl_op.impl_backward()(lambda ctx, saved, grad: None)
    tl_args = (tl.tensor(X), [tl.tensor(Y), 3], 2)  # an xs with a non-Tensor element exercises the index checks
    pt_args = (torch.tensor(X), [torch.tensor(Y), 3], 2)
    tl_info = tl.library._namedtuple_args(tl_op._schema, tl.library._tree_map(type, tl_args))
    pt_info = legacy.namedtuple_args(torch_op._schema, _pytree.tree_map(type, pt_args))
    assert tl_info._fields == pt_info._fields and type(tl_info).__name__ == type(pt_info).__name__
    locs = (tl_op._get_impl("backward").location, torch_op._get_impl("backward").location)
    for (name, d_tl), d_pt in zip(_legacy_cases(tl).items(), _legacy_cases(torch).values()):
        e_tl = err(lambda: tl.library._validate_grad_inputs_dict(d_tl, tl_op, tl_info))
        e_pt = err(lambda: legacy.validate_grad_inputs_dict(d_pt, torch_op, pt_info))
        if e_pt is None:
            assert e_tl is None, name
            flat_tl = tl.library._grad_inputs_dict_to_flat_tuple(d_tl, tl_info)
            flat_pt = legacy.grad_inputs_dict_to_flat_tuple(d_pt, pt_info)
            assert [type(v).__name__ for v in flat_tl] == [type(v).__name__ for v in flat_pt], name
            continue
        assert e_tl is not None, name
        assert e_tl[0] == e_pt[0], name
        assert names(e_tl[1].replace(locs[0], "LOC")) == e_pt[1].replace(locs[1], "LOC"), name
    # a missing key becomes one None per leaf of that argument (torch pytree keeps None as a leaf)
    partial = {"xs": [tl.ones(3), None]}
    assert tl.library._grad_inputs_dict_to_flat_tuple(partial, tl_info)[0] is None
    assert len(tl.library._grad_inputs_dict_to_flat_tuple(partial, tl_info)) == len(
        legacy.grad_inputs_dict_to_flat_tuple({"xs": [torch.ones(3), None]}, pt_info)) == 4


def test_legacy_custom_op_end_to_end():
    space = ns()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def foo(x: tl.Tensor, xs: list[tl.Tensor], k: int) -> tl.Tensor:
            return x * k + xs[0] * xs[1]
        op = tl.library._legacy_custom_op(f"{space}::foo")(foo)
    x, a, b = leaves(tl, X, Y, X)
    assert err(lambda: op(x, [a, b], 3)) == ("RuntimeError", "Autograd has not been implemented for operator")
    with tl.no_grad():
        assert_same(op(x, [a, b], 3), torch.tensor(X) * 3 + torch.tensor(Y) * torch.tensor(X))

    @op.impl_save_for_backward()
    def _(inputs, output):
        return inputs.xs, inputs.k

    e = err(lambda: op(x, [a, b], 3))
    assert e[0] == "RuntimeError" and e[1].startswith(
        f"We found a 'save_for_backward' registration for <CustomOp(op=\"{space}::foo\")> at ")
    result = {}

    @op.impl_backward()
    def _(ctx, saved, grad):
        (xs0, xs1), k = saved
        return result.get("r") or {"x": grad * k, "xs": [grad * xs1, grad * xs0]}

    out = op(x, [a, b], 3)
    assert out.grad_fn.name() == "foo_customopBackward"
    out.sum().backward()
    assert_same([x.grad, a.grad, b.grad], [torch.full((3,), 3.0), torch.tensor(X), torch.tensor(Y)])
    result["r"] = {"x": tl.ones(3)}
    e = err(lambda: op(x, [a, b], 3).sum().backward())
    loc = op._get_impl("backward").location
    assert loc.startswith(__file__) and e == ("RuntimeError", (
        f"In the backward function defined for <CustomOp(op=\"{space}::foo\")> at {loc} using the CustomOp API, "
        f"expected the returned grad_input dict to have keys {({n for n in ('x', 'xs')})} but got dict_keys(['x']). The backward "
        f"function must return a gradient (can be None) for each arg to the CustomOp that may be a Tensor or "
        f"Sequence[Tensor]. Args declared to be non-Tensor-like types should not appear in the grad_input dict"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert err(lambda: tl.library._legacy_custom_op("aten::foo")(foo)) == (
            "ValueError", "custom_op(..., ns='aten'): 'aten' is a reserved namespace, please choose something else. ")
        assert err(lambda: tl.library._legacy_custom_op(f"{space}::bar")(foo))[1].startswith(
            f"custom_op(qualname='{space}::bar', ...)(func): expected `func` to have name 'bar' but got 'foo'.")


def test_legacy_output_differentiability_checks_match_torch():
    from torch._custom_op import autograd as legacy
    space = ns()
    torch_op = _legacy_torch_op(space)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def foo(x: tl.Tensor, xs: list[tl.Tensor], k: int) -> tl.Tensor:
            return x * k
        tl_op = tl.library._legacy_custom_op(f"{space}::foo")(foo)
    for bad in ("yes", [1], [True, False]):
        same_errors(err(lambda: tl_op.impl_backward(output_differentiability=bad)),
                    err(lambda: torch_op.impl_backward(output_differentiability=bad)))

    class Ctx:
        def __init__(self):
            self.marked = None

        def mark_non_differentiable(self, *ts):
            self.marked = len(ts)

    for lib, mark in ((tl, tl.library._mark_non_differentiable), (torch, legacy.mark_non_differentiable)):
        t = lib.ones(2)
        outs = [(t, [t, t], 3), (t, 3)]
        rec = []
        for out, diff in zip(outs, ([False, False, False], [True, True])):
            ctx = Ctx()
            rec.append((err(lambda: mark(ctx, out, diff)), ctx.marked))
        if lib is tl:
            got = rec
        else:
            assert got == rec and rec[1][0][1].startswith("With output_differentiability=[True, True]. At idx 1")


# ----- the package's structure: one traced-op mechanism, torch's pytree rules, the legacy module path -------------
def test_custom_op_and_jax_op_share_the_traced_op():
    from interop import jax_op
    from torchlike.ops import _traced

    @tl.library.custom_op(f"{ns()}::tsin", mutates_args=())
    def tsin(x: tl.Tensor) -> tl.Tensor:
        return jnp.sin(x) * 2.0
    jsin = jax_op(lambda x: jnp.sin(x) * 2.0, name="jsin")
    x = tl.tensor(X, requires_grad=True)
    a, b = tsin(x), jsin(x)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy())
    (compiled,), (sig,) = tsin._cache.values(), jsin._cache.values()
    assert type(compiled.traced) is type(sig) is _traced.Traced
    assert type(b.grad_fn) is sig.op.node_cls  # jax_op's node is its traced op's
    assert type(compiled.traced.op) is type(sig.op)


def test_library_pytree_flattens_as_torch():
    import collections
    from torch.utils import _pytree
    import interop  # noqa: F401 - makes Tensor a JAX pytree node: torch's rules must still see a leaf
    from torchlike.library import _pytree as tl_pytree
    pair = collections.namedtuple("pair", "a b")
    t1, t2 = tl.ones(2), tl.zeros(1)
    trees = [([t1, None], (t2,), {"a": 3, "b": [None, 4.0]}, None, pair(5, [t1])),  # dict keys in sorted order:
             (), [[], ()], None, t1, [1, (2, [3, {"k": None}])]]                     # JAX sorts them, torch not
    for tree in trees:
        leaves, spec = tl_pytree._tree_flatten(tree)
        pt_leaves, pt_spec = _pytree.tree_flatten(tree)
        assert len(leaves) == len(pt_leaves) and all(a is b for a, b in zip(leaves, pt_leaves))
        assert tl_pytree._spec_repr(spec) == repr(pt_spec)
        assert tl_pytree._tree_map(type, tree) == _pytree.tree_map(type, tree)
        assert tl_pytree._tree_leaves(tree) == _pytree.tree_leaves(tree)


def test_legacy_api_at_torchs_module_path():
    from torchlike._custom_op.impl import CustomOp, custom_op
    import torch._custom_op.impl as pt_impl
    assert custom_op is tl.library._legacy_custom_op and CustomOp.__name__ == "_CustomOp"
    assert hasattr(pt_impl, "custom_op") and hasattr(pt_impl, "CustomOp")
