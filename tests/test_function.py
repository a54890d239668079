"""Custom autograd.Function (issue 4, point 1): each scenario written once against the torch API and run with
torchlike and with torch 2.13 on the same NumPy inputs; values, node names, call records and errors compared."""
import gc
import warnings
import weakref

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph_with_nr

X = np.array([0.5, -1.25, 2.0])
Y = np.array([1.5, 0.25, -0.75])


def both(fn):
    return fn(tl), fn(torch)


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - type and message are compared
        return type(e).__name__, str(e)
    return None


def _cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale, note=None):
            ctx.scale = scale
            ctx.note = note
            ctx.save_for_backward(x)
            return x ** 3 * scale

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2 * ctx.scale, None, None
    return Cube


def test_forward_backward_node_and_ctx():
    def run(lib):
        calls = []

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                calls.append(("forward", lib.is_grad_enabled(), ctx.needs_input_grad, x.requires_grad))
                ctx.k = k
                ctx.save_for_backward(x, y)
                return x * k + y, k, (x > 0).long()

            @staticmethod
            def backward(ctx, g, gk, gi):
                calls.append(("backward", lib.is_grad_enabled(), gk, gi.dtype.is_floating_point, gi.tolist()))
                x, y = ctx.saved_tensors
                return g * ctx.k, None, g * x
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(Y, requires_grad=True)
        out, k, pos = Scale.apply(x, 2.5, y)
        node = out.grad_fn
        info = [type(node).__name__, node.name(), type(node).__module__, k, pos.requires_grad, pos.grad_fn is None,
                isinstance(node, lib.autograd.graph.Node), node.k, graph_with_nr(out), out.output_nr,
                repr(node).split(" object")[0], node.needs_input_grad]
        out.sum().backward()
        return calls, info, x.grad.tolist(), y.grad.tolist()
    t, p = both(run)
    t[1][2], t[1][10] = t[1][2].replace("torchlike", "torch"), t[1][10].replace("torchlike", "torch")
    assert t == p


def test_needs_input_grad_and_no_recording():
    def run(lib):
        seen = []

        class Id(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                seen.append(ctx.needs_input_grad)
                return a * 1, b * 1

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, gb
        a = lib.tensor(X, requires_grad=True)
        b = lib.tensor(Y)
        with lib.no_grad():
            r = Id.apply(a, b)
        r2 = Id.apply(b, b)
        r3 = Id.apply(a, b)
        return seen, [t.requires_grad for t in r + r2 + r3], [t.grad_fn is None for t in r + r2 + r3]
    assert run(tl) == run(torch)


def test_setup_context_style_binds_defaults():
    def run(lib):
        seen = []

        class Mul(lib.autograd.Function):
            @staticmethod
            def forward(x, y, alpha=2.0):
                return x * y * alpha

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append((len(inputs), inputs[2], tuple(output.shape)))
                x, y, alpha = inputs
                ctx.alpha = alpha
                ctx.save_for_backward(x, y)

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y * ctx.alpha, g * x * ctx.alpha, None
        x = lib.tensor(X, requires_grad=True)
        y = lib.tensor(Y, requires_grad=True)
        Mul.apply(x, y).sum().backward()
        Mul.apply(x, y, alpha=3.0).sum().backward()
        return seen, x.grad.tolist(), y.grad.tolist()
    assert run(tl) == run(torch)


def test_materialize_grads_and_non_differentiable_outputs():
    def run(lib):
        seen = []

        def make(materialize):
            class Two(lib.autograd.Function):
                @staticmethod
                def forward(ctx, x):
                    ctx.set_materialize_grads(materialize)
                    a, b = x * 2, x * 3
                    ctx.mark_non_differentiable(b)
                    return a, b, x.argmax()

                @staticmethod
                def backward(ctx, ga, gb, gi):
                    seen.append([None if g is None else g.tolist() for g in (ga, gb, gi)])
                    return ga * 2
            return Two
        x = lib.tensor(X, requires_grad=True)
        for m in (True, False):
            a, b, i = make(m).apply(x)
            seen.append((a.requires_grad, b.requires_grad, b.grad_fn is None, i.requires_grad))
            a.sum().backward()
        return seen, x.grad.tolist()
    assert run(tl) == run(torch)


def test_mark_dirty_rebases_the_input():
    def run(lib):
        class AddOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        a = lib.tensor(X, requires_grad=True)
        b = a * 1
        b.retain_grad()
        c = AddOne.apply(b)
        info = [c is b, b.grad_fn.name(), b._version, graph_with_nr(b), b.tolist()]
        (c * c).sum().backward()
        return info, a.grad.tolist(), b.grad.tolist()
    assert run(tl) == run(torch)


def test_input_modified_without_mark_dirty_returns_a_view():
    def run(lib):
        class Sneaky(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5
        a = lib.tensor(X, requires_grad=True)
        b = a * 1
        c = Sneaky.apply(b)
        info = [c is b, c._base is b, c.grad_fn.name(), b.grad_fn.name(), c._version, b._version]
        c.sum().backward()
        return info, a.grad.tolist(), err(lambda: c.mul_(2))
    assert run(tl) == run(torch)


def test_returned_input_is_a_view_that_cannot_be_modified():
    def run(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x, y[0]

            @staticmethod
            def backward(ctx, gx, gy):
                return gx * 3, None
        a = lib.tensor(X, requires_grad=True)
        b = a * 1
        out, first = Ident.apply(b, lib.tensor(Y, requires_grad=True) * 1)
        info = [out is b, out._base is b, out.grad_fn.name(), first._base is not None]
        e1, e2 = err(lambda: out.mul_(2)), err(lambda: first.mul_(2))
        out.sum().backward()
        return info, e1, e2, a.grad.tolist(), b.tolist()
    assert run(tl) == run(torch)


DIRTY_ERRORS = {
    "dirty_leaf": lambda lib, x: _dirty_fn(lib, "leaf").apply(x),
    "dirty_not_returned": lambda lib, x: _dirty_fn(lib, "not_returned").apply(x * 1),
}


def test_mark_dirty_of_a_non_input_warns_and_rebases():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = _dirty_fn(lib, "not_input").apply(lib.tensor(X, requires_grad=True) * 1)
        return [str(m.message).split(" (Triggered")[0] for m in w], r.grad_fn.name(), r._version
    assert run(tl) == run(torch)


def _dirty_fn(lib, how):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            if how == "not_input":
                y = x * 2
                ctx.mark_dirty(y)
                return y
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1 if how == "not_returned" else x

        @staticmethod
        def backward(ctx, g):
            return g
    return Bad


@pytest.mark.parametrize("name", sorted(DIRTY_ERRORS))
def test_mark_dirty_errors(name):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        return err(lambda: DIRTY_ERRORS[name](lib, x))
    t, p = both(run)
    assert t is not None and t == p


def _bad_backward(lib, result):
    class Bad(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, g):
            return result(lib, g)
    return Bad


GRAD_ERRORS = {
    "too_few": lambda lib, g: (g,)[:0],
    "too_many_non_none": lambda lib, g: (g, None, g),
    "not_none_for_non_tensor": lambda lib, g: (g, g),
    "wrong_shape": lambda lib, g: (lib.ones(5, dtype=lib.float64), None),
    "not_a_tensor": lambda lib, g: ("grad", None),
}


@pytest.mark.parametrize("name", sorted(GRAD_ERRORS))
def test_backward_return_errors(name):
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        y = _bad_backward(lib, GRAD_ERRORS[name]).apply(x, 2.0)
        return err(lambda: y.sum().backward()), x.grad
    (t, tg), (p, pg) = both(run)
    assert t is not None and tg is None and pg is None
    assert t == p


def test_backward_return_accepted_forms():
    """Extra trailing Nones are dropped; a broadcastable gradient is summed; a float32 gradient is cast."""
    def run(lib):
        x = lib.tensor(X, requires_grad=True)
        cases = [lambda lib, g: (g * 2, None, None, None),
                 lambda lib, g: (lib.ones(4, 3, dtype=lib.float64) * g, None),
                 lambda lib, g: ((g * 3).to(lib.float32), None)]
        out = []
        for c in cases:
            x.grad = None
            _bad_backward(lib, c).apply(x, 2.0).sum().backward()
            out.append((x.grad.tolist(), str(x.grad.dtype).split(".")[-1]))
        return out
    assert run(tl) == run(torch)


def test_definition_errors_and_legacy_use():
    def run(lib):
        class NoBackward(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

        class Both(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g

            @staticmethod
            def vjp(ctx, g):
                return g

        class SavesNumber(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x

        class VjpOnly(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def vjp(ctx, g):
                return g * 7
        x = lib.tensor(X, requires_grad=True)
        out = [err(lambda: NoBackward.apply(x).sum().backward()), err(lambda: Both.apply(x).sum().backward()),
               err(lambda: SavesNumber.apply(x))]
        VjpOnly.apply(x).sum().backward()
        out.append(x.grad.tolist())
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            inst = VjpOnly()
        out.append([(c.category.__name__, str(c.message).replace("torchlike", "torch")) for c in w])
        out.append(err(lambda: inst(x)))
        return out
    t, p = both(run)
    t[-2] = [(c, m.replace("test_function.", "")) for c, m in t[-2]]
    p[-2] = [(c, m.replace("test_function.", "")) for c, m in p[-2]]
    assert t == p


def test_once_differentiable():
    def run(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        x = lib.tensor(X, requires_grad=True)
        (g,) = lib.autograd.grad(Square.apply(x).sum(), x)
        out = [g.tolist(), g.requires_grad]
        # create_graph, but the incoming gradient (ones) does not require grad: no error node
        (g1,) = lib.autograd.grad(Square.apply(x).sum(), x, create_graph=True)
        out += [g1.requires_grad, g1.grad_fn is None]
        # the incoming gradient requires grad: the result goes through torch's error node
        (g2,) = lib.autograd.grad(Square.apply(x).pow(2).sum(), x, create_graph=True)
        out += [g2.requires_grad, graph_with_nr(g2), g2.tolist(), err(lambda: g2.sum().backward())]
        return out
    assert run(tl) == run(torch)


def test_double_backward_through_function():
    def run(lib):
        Cube = _cube(lib)
        x = lib.tensor(X, requires_grad=True)
        y = Cube.apply(x, 1.5)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg
    (a, b, c), (pa, pb, pc) = both(run)
    assert_same([a, b, c], [pa, pb, pc])


def test_saved_tensor_hooks_apply_to_save_for_backward():
    def run(lib):
        calls = []

        def pack(t):
            calls.append(("pack", tuple(t.shape)))
            return t * 1

        def unpack(t):
            calls.append(("unpack", tuple(t.shape)))
            return t

        class SaveBoth(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(x, y)
                return y

            @staticmethod
            def backward(ctx, g):
                x, y = ctx.saved_tensors
                return g * y
        x = lib.tensor(X, requires_grad=True)
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = SaveBoth.apply(x)
        calls.append("forward done")
        y.sum().backward()
        return calls, x.grad.tolist()
    assert run(tl) == run(torch)


def test_saved_tensors_version_check_and_freeing():
    def run(lib):
        Cube = _cube(lib)
        a = lib.tensor(X, requires_grad=True)
        b = a * 1
        y = Cube.apply(b, 2.0)
        b.add_(1)
        e1 = err(lambda: y.sum().backward())
        y2 = Cube.apply(a * 1, 2.0)
        y2.sum().backward()
        e2 = err(lambda: y2.grad_fn.saved_tensors)
        y3 = Cube.apply(a, 2.0)
        saved = y3.grad_fn.saved_tensors[0] is a
        return e1, e2, saved, a.grad.tolist()
    assert run(tl) == run(torch)


def test_saving_an_output_gives_it_back_with_history():
    def run(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                (y,) = ctx.saved_tensors
                return g * y
        x = lib.tensor(X, requires_grad=True)
        y = Exp.apply(x)
        s = y.grad_fn.saved_tensors[0]
        info = [s is y, s.grad_fn is y.grad_fn, s.requires_grad]
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return info, g.tolist(), gg.tolist()
    t, p = both(run)
    assert t[0][1:] == p[0][1:] and t[1:] == p[1:]


def test_node_hooks_on_function_nodes():
    def run(lib):
        calls = []
        Cube = _cube(lib)
        x = lib.tensor(X, requires_grad=True)
        y = Cube.apply(x, 1.0)
        y.grad_fn.register_prehook(lambda go: calls.append(("pre", go[0].tolist())))
        y.grad_fn.register_hook(lambda gi, go: calls.append(("post", gi[0].tolist())) or (gi[0] * 0 + 1,))
        y.register_hook(lambda g: calls.append(("tensor", g.tolist())))
        y.sum().backward()
        return calls, x.grad.tolist()
    assert run(tl) == run(torch)


def test_no_reference_cycle_between_outputs_and_node():
    Cube = _cube(tl)
    x = tl.tensor(X, requires_grad=True)
    gc.collect()
    gc.disable()
    try:
        y = Cube.apply(x * 1, 2.0)
        node = weakref.ref(y.grad_fn)
        out = weakref.ref(y)
        del y
        assert node() is None and out() is None  # freed by reference counting alone
    finally:
        gc.enable()


def test_input_modified_in_forward_without_mark_dirty_trips_the_version_check():
    def run(lib):
        class Sneaky(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g
        a = lib.tensor(X, requires_grad=True)
        b = a.exp()  # ExpBackward0 saves its result b
        c = Sneaky.apply(b)
        return err(lambda: c.sum().backward()), b._version
    t, p = both(run)
    assert t[0] is not None and t == p


def test_jvp_staticmethod_for_forward_mode():
    def run(lib):
        fwAD = lib.autograd.forward_ad

        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                ctx.k = k
                return x * k, (x > 0).long()

            @staticmethod
            def backward(ctx, g, gi):
                return g * ctx.k, None

            @staticmethod
            def jvp(ctx, tx, tk):
                return tx * ctx.k, None

        class NoJvp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        with fwAD.dual_level():
            d = fwAD.make_dual(lib.tensor(X), lib.tensor(Y))
            y, pos = Scale.apply(d, 3.0)
            t = fwAD.unpack_dual(y).tangent
            out = [t.tolist(), fwAD.unpack_dual(pos).tangent, err(lambda: NoJvp.apply(d))]
            y2 = (Scale.apply(d.sin(), 2.0)[0] ** 2).sum()
            out.append(round(fwAD.unpack_dual(y2).tangent.item(), 12))
        out.append(fwAD.unpack_dual(y).tangent)
        return out
    assert run(tl) == run(torch)


def test_version_error_names_a_custom_function_as_torch():
    """torch's version-counter error names a custom Function's output by the Function's name ('output 0 of Saved',
    not its node's 'SavedBackward')."""
    messages = []
    for m in (tl, torch):
        class Saved(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 2
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                return g * y

        z = Saved.apply(m.ones(2, requires_grad=True))
        with m.no_grad():
            z.mul_(2)
        with pytest.raises(RuntimeError) as info:
            z.sum().backward()
        messages.append(str(info.value).split(";")[0].replace("torchlike", "torch"))
    assert messages[0] == messages[1] and "output 0 of Saved," in messages[0]


def test_functional_call_lists_missing_and_unexpected_keys_sorted():
    messages = []
    for m in (tl, torch):
        net = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.ReLU(), m.nn.Linear(2, 1))
        with pytest.raises(RuntimeError) as info:
            m.func.functional_call(net, {"0.weight": m.ones(2, 2), "zz": m.ones(1), "aa": m.ones(1)},
                                   (m.ones(1, 2),), strict=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
