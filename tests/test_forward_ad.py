"""torchlike.autograd.forward_ad against torch.autograd.forward_ad: levels, make_dual / unpack_dual and their
errors, tangents (jvp) of a representative set of ops, views and in-place ops, grad-mode independence, and
forward AD mixed with a backward pass. Each check runs the same code with lib=torchlike and lib=torch."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import _dense, assert_same, graph

rng = np.random.RandomState(0)
X = rng.randn(3, 4).astype(np.float32)
TX = rng.randn(3, 4).astype(np.float32)
Y = rng.randn(4).astype(np.float32)
TY = rng.randn(4).astype(np.float32)


def fw(lib):
    return lib.autograd.forward_ad


def F(lib):
    return lib.nn.functional


def outcome(f):
    """(type name, message) of the error f raises, or ('OK', None); torch's C++ context lines are cut."""
    try:
        f()
    except Exception as e:  # noqa: BLE001  (any error type is compared with torch's)
        return type(e).__name__, str(e).split("\nException raised from")[0]
    return "OK", None


def same_errors(run):
    assert run(tl) == run(torch)


def as_tuple(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def dense(t):
    return _dense(t) if isinstance(t, torch.Tensor) else t


def jvp(lib, fn, tangents=(TX, TY)):
    """fn(lib, x, y) on duals x (3, 4) and y (4,) (a tangent None: a plain tensor): [(primal, tangent), ...]."""
    with fw(lib).dual_level():
        ins = [fw(lib).make_dual(lib.tensor(p), lib.tensor(t)) if t is not None else lib.tensor(p)
               for p, t in zip((X, Y), tangents)]
        outs = as_tuple(fn(lib, *ins))
        return [tuple(fw(lib).unpack_dual(o)) for o in outs]


def check_jvp(fn, tangents=(TX, TY), rtol=1e-5, atol=1e-5):
    ours, theirs = jvp(tl, fn, tangents), jvp(torch, fn, tangents)
    assert len(ours) == len(theirs)
    for (p, t), (tp, tt) in zip(ours, theirs):
        assert_same(p, tp, rtol, atol)
        assert_same(t, dense(tt), rtol, atol)


# ----- levels ----------------------------------------------------------------------------------------------
def test_levels_enter_exit_and_context():
    def run(lib):
        f = fw(lib)
        res = [f.enter_dual_level(), outcome(f.enter_dual_level), outcome(lambda: f.exit_dual_level(level=1)),
               outcome(lambda: f.exit_dual_level(level=-1))]
        f.exit_dual_level(level=0)
        res += [outcome(f.exit_dual_level), outcome(lambda: f.exit_dual_level(level=0))]
        with f.dual_level() as level:
            res.append(level)
            res.append(outcome(f.enter_dual_level))  # nesting the context manager is not supported either
        try:
            with f.dual_level():
                raise KeyError("boom")
        except KeyError:
            pass
        res.append(outcome(f.exit_dual_level))  # the level was exited despite the error

        @f.dual_level()
        def decorated():
            return f.make_dual(lib.tensor([1.0]), lib.tensor([2.0])) is not None
        res += [decorated(), outcome(f.exit_dual_level)]
        return res
    assert run(tl) == run(torch)
    assert tl.autograd.forward_ad._state.level is None


def test_public_names():
    assert tl.autograd.forward_ad.__all__ == torch.autograd.forward_ad.__all__
    assert tl.autograd.forward_ad.UnpackedDualTensor._fields == ("primal", "tangent")


# ----- make_dual / unpack_dual ----------------------------------------------------------------------------
MAKE_DUAL_MISUSES = {
    "no level": (False, lambda L: L.ones(3), lambda L: L.ones(3), {}),
    "level=-1 inside a level": (True, lambda L: L.ones(3), lambda L: L.ones(3), {"level": -1}),
    "integer primal": (True, lambda L: L.arange(3), lambda L: L.ones(3), {}),
    "integer tangent": (True, lambda L: L.ones(3), lambda L: L.arange(3), {}),
    "bool primal before a bad shape": (True, lambda L: L.ones(3) > 0, lambda L: L.ones(4), {}),
    "non-tensor primal": (True, lambda L: 1.0, lambda L: L.ones(3), {}),
    "non-tensor tangent": (True, lambda L: L.ones(3), lambda L: 2.0, {}),
    "tangent of another size": (True, lambda L: L.ones(3), lambda L: L.ones(4), {}),
    "tangent that would broadcast": (True, lambda L: L.ones(2, 3), lambda L: L.ones(3), {}),
    "0-d primal, [1] tangent": (True, lambda L: L.tensor(1.0), lambda L: L.ones(1), {}),
    "expanded primal (overlapping memory)": (True, lambda L: L.ones(4).expand(3, 4), lambda L: L.ones(3, 4), {}),
    "level=1": (True, lambda L: L.ones(3), lambda L: L.ones(3), {"level": 1}),
    "level=1 with a bad shape": (True, lambda L: L.ones(3), lambda L: L.ones(4), {"level": 1}),
    "level=0 without a level": (False, lambda L: L.ones(3), lambda L: L.ones(3), {"level": 0}),
    "level=0 without a level, bad shape": (False, lambda L: L.ones(3), lambda L: L.ones(4), {"level": 0}),
}


@pytest.mark.parametrize("case", list(MAKE_DUAL_MISUSES))
def test_make_dual_errors(case):
    in_level, primal, tangent, kw = MAKE_DUAL_MISUSES[case]

    def run(lib):
        f = fw(lib)
        if not in_level:
            return outcome(lambda: f.make_dual(primal(lib), tangent(lib), **kw))
        with f.dual_level():
            return outcome(lambda: f.make_dual(primal(lib), tangent(lib), **kw))
    result = run(tl)
    assert result == run(torch)
    assert result[0] != "OK"


def test_make_dual_twice_and_unpack_errors():
    def run(lib):
        f = fw(lib)
        res = [outcome(lambda: f.unpack_dual(3.0)), f.unpack_dual(3.0)]  # no level: returned as given
        with f.dual_level():
            d = f.make_dual(lib.ones(3), lib.ones(3))
            res.append(outcome(lambda: f.make_dual(d, lib.ones(3))))
            res.append(outcome(lambda: f.make_dual(d, lib.ones(4))))  # checked before the size
            res.append(outcome(lambda: f.make_dual(d, lib.ones(3), level=1)))
            res.append(outcome(lambda: f.unpack_dual(3.0)))
            res.append(outcome(lambda: f.unpack_dual(d, level=1)))
            res.append(f.unpack_dual(lib.ones(3), level=1).tangent)  # no tangent: any level is accepted
            res.append(f.unpack_dual(d, level=-1).primal is d)
        return res
    assert run(tl) == run(torch)


def test_make_dual_and_unpack_dual_semantics():
    def run(lib):
        f = fw(lib)
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(TX)
        assert f.unpack_dual(x).primal is x and f.unpack_dual(x).tangent is None  # outside a level
        with f.dual_level():
            d = f.make_dual(x, v)
            u = f.unpack_dual(d)
            plain = f.unpack_dual(x)
            info = [d is x, d._base is x, d.requires_grad, graph(d), u.tangent is v, u.primal is d,
                    u.primal._base is x, graph(u.primal), u.primal.requires_grad, plain.tangent,
                    plain.primal is x, plain.primal._base is x, type(u).__name__, u._fields]
            y = d * 2
        # the level is gone: tangents are dropped, and a new level does not see them
        info += [f.unpack_dual(d).tangent, f.unpack_dual(y).tangent, d._fw_tangent if lib is tl else None]
        with f.dual_level():
            info += [f.unpack_dual(d).tangent, f.unpack_dual(y).tangent]
            info.append(f.unpack_dual(d.sin()).tangent)
        return info
    assert run(tl) == run(torch)


def test_make_dual_tangent_layout():
    big_np = rng.randn(4, 3).astype(np.float32)

    def run(lib):
        f = fw(lib)
        with f.dual_level():
            big = lib.tensor(big_np)
            same = lib.ones(3, 4)
            d1 = f.make_dual(lib.zeros(3, 4), same)  # same layout: kept as given
            d2 = f.make_dual(lib.zeros(3, 4), big.t())  # another layout: copied
            d3 = f.make_dual(lib.zeros(4, 3).t(), lib.ones(3, 4))  # copied into the primal's layout
            t2, t3 = f.unpack_dual(d2).tangent, f.unpack_dual(d3).tangent
            return (f.unpack_dual(d1).tangent is same, t2 is big, t2._base is big, t2.stride(), t3.stride(),
                    t3.tolist(), t2.tolist() == big.t().tolist())
    assert run(tl) == run(torch)


def test_mixed_dtypes_of_primal_and_tangent():
    def run(lib):
        f = fw(lib)
        with f.dual_level():
            a = f.make_dual(lib.tensor(X), lib.tensor(TX).double())
            b = f.make_dual(lib.ones(2, dtype=lib.bfloat16), lib.ones(2))
            c = f.make_dual(lib.tensor([1.0, 2.0], dtype=lib.complex64), lib.tensor([1.0, -1.0]))
            return [str(f.unpack_dual(t).tangent.dtype).split(".")[-1] for t in (a, b, c)] + [
                f.unpack_dual(a).tangent.tolist(), f.unpack_dual(c * c).tangent.tolist()]
    assert run(tl) == run(torch)


# ----- tangents of ops --------------------------------------------------------------------------------------
def _idx(lib, values):
    return lib.tensor(np.array(values, np.int64))


OPS = {
    "sin": lambda L, x, y: x.sin(),
    "unary chain": lambda L, x, y: (x.exp() * 0.5).tanh() + (x.abs() + 1).log() + x.abs().sqrt(),
    "activations": lambda L, x, y: (F(L).relu(x), x.sigmoid(), F(L).gelu(x), F(L).softplus(x), F(L).leaky_relu(x, 0.1),
                                    F(L).silu(x), F(L).gelu(x, approximate="tanh")),
    "pow": lambda L, x, y: (x ** 3, 2.0 ** x, (x.abs() + 0.5) ** y, x.square()),
    "binary with broadcasting": lambda L, x, y: x * y - x / (y.abs() + 1) + (2 - x) + y,
    "maximum and where": lambda L, x, y: (L.maximum(x, y), L.where(x > 0, x, y), L.atan2(x, y)),
    "clamp and floor": lambda L, x, y: (x.clamp(-0.5, 0.5), x.floor(), x.sign()),
    "sum/mean with dims": lambda L, x, y: (x.sum(1, keepdim=True), x.mean((0, 1)), x.sum(), x.mean(0)),
    "prod/amax/logsumexp": lambda L, x, y: (x.prod(1), x.amax(0), x.logsumexp(1)),
    "var/std/norm/cumsum": lambda L, x, y: (x.var(1), x.std(0), x.norm(), x.cumsum(1)),
    "matmul": lambda L, x, y: (x @ x.t(), x @ y, L.mm(x, x.t()), L.einsum("ij,j->i", x, y)),
    "shape ops": lambda L, x, y: (x.t().reshape(2, 6).transpose(0, 1).flatten(), x.view(4, 3),
                                  x.unsqueeze(0).expand(2, 3, 4).permute(2, 0, 1), x.flip(0).repeat(2, 1),
                                  x.squeeze(), y.unsqueeze(1).squeeze(1)),
    "cat/stack": lambda L, x, y: (L.cat([x, y.unsqueeze(0)], 0), L.stack([x[0], y], 1)),
    "basic indexing": lambda L, x, y: (x[1:, ::2], x[0], x[..., None], x[:, -1], x.narrow(1, 1, 2)),
    "advanced indexing": lambda L, x, y: (x[_idx(L, [2, 0, 2])], x[x > 0], x[:, _idx(L, [3, 1])]),
    "index_select/gather/masked_fill": lambda L, x, y: (
        x.index_select(1, _idx(L, [0, 3])), x.gather(1, _idx(L, [[1, 0], [2, 2], [3, 0]])),
        x.masked_fill(x > 0, 0.0), L.diagonal(x)),
    "softmax/log_softmax": lambda L, x, y: (F(L).softmax(x, 1), F(L).log_softmax(x, 0)),
    "cross_entropy": lambda L, x, y: (F(L).cross_entropy(x, _idx(L, [0, 3, 1])),
                                      F(L).cross_entropy(x, _idx(L, [0, 3, 1]), label_smoothing=0.1),
                                      F(L).cross_entropy(x, F(L).softmax(x * 2, 1).detach() + 0 * y)),
    "losses": lambda L, x, y: (F(L).nll_loss(F(L).log_softmax(x, 1), _idx(L, [2, 1, 0])),
                               F(L).mse_loss(x, y.expand(3, 4)), F(L).l1_loss(x, y.expand(3, 4)),
                               F(L).binary_cross_entropy_with_logits(x, y.sigmoid().expand(3, 4))),
    "linear": lambda L, x, y: (F(L).linear(x, x[:2] * 2, y[:2]), F(L).linear(x, x[1:] + 1),
                               F(L).linear(x.unsqueeze(0), x[:2], y[1:3])),
    "dtype conversions": lambda L, x, y: (x.double() * 2, x.to(L.float64).sum(), x.long(), (x > 0).float()),
    "multi-output split/chunk/unbind": lambda L, x, y: x.split(3, 1) + x.chunk(3, 0) + x.unbind(1),
    "max/min over a dim": lambda L, x, y: tuple(x.max(1)) + tuple(x.min(0)) + (x.max(),),
    "integer and bool outputs": lambda L, x, y: (x.argmax(1), x > y, x == x, L.isnan(x)),
    "inputs without a tangent": lambda L, x, y: (x * L.tensor(X), L.arange(4) + x, L.tensor(Y) - y),
}


@pytest.mark.parametrize("name", list(OPS))
def test_op_tangents(name):
    check_jvp(OPS[name])


def test_tangents_when_only_one_input_is_dual():
    fn = OPS["binary with broadcasting"]
    check_jvp(fn, tangents=(None, TY))
    check_jvp(fn, tangents=(TX, None))


def test_complex_tangents():
    z = (rng.randn(3) + 1j * rng.randn(3)).astype(np.complex64)
    tz = (rng.randn(3) + 1j * rng.randn(3)).astype(np.complex64)

    def run(lib):
        f = fw(lib)
        with f.dual_level():
            d = f.make_dual(lib.tensor(z), lib.tensor(tz))
            return [f.unpack_dual(o).tangent for o in (d * d, d.abs(), d.conj() * 2, d.exp(), d.real, (d * 1j).sum())]
    for a, b in zip(run(tl), run(torch)):
        assert_same(a, dense(b), 1e-5, 1e-5)


# ----- in-place ops and views ---------------------------------------------------------------------------------
INPLACE = {
    "chain on a tensor without a tangent": lambda L, x, y: L.zeros(3, 4).add_(x).mul_(y).sin_().clamp_(-0.5, 0.5),
    "unary in-place ops": lambda L, x, y: x.clone().exp_().relu_().sqrt_().neg_(),
    "in-place with a plain operand": lambda L, x, y: (x * 1).mul_(L.tensor(X)).add_(2.0).div_(3.0),
    "setitem": lambda L, x, y: _setitem(L, x, y),
    "copy_/zero_/fill_": lambda L, x, y: (L.zeros(3, 4).copy_(x), x.clone().zero_(), (x * 1).fill_(2.0),
                                          (x * 1).copy_(L.ones(3, 4))),
    "masked_fill_/scatter_/index_add_": lambda L, x, y: (
        (x * 1).masked_fill_(x > 0, 1.0), L.zeros(3, 4).scatter_(1, _idx(L, [[1], [0], [3]]), x[:, :1] * 1),
        L.zeros(3, 4).index_add_(1, _idx(L, [0, 2]), x[:, 1:3] * 1), L.zeros(3, 4).scatter_add_(
            0, _idx(L, [[0, 1, 2, 0]]), y.unsqueeze(0) * 1)),
    "in-place on views": lambda L, x, y: _views_inplace(L, x, y),
    "in-place on the base of views": lambda L, x, y: _base_inplace(L, x, y),
}


def _setitem(L, x, y):
    a = L.zeros(3, 4)
    a[1:, 1] = y[:2]
    a[0] = x[0]
    a[a > 100] = 0.0
    b = x.clone()
    b[_idx(L, [2, 0]), 1] = y[1:3]
    return a, b


def _views_inplace(L, x, y):
    base = L.zeros(3, 4)
    v1, v2, v3 = base[1:], base[:, 1], base.t()
    v1.add_(x[:2])  # base had no tangent: it gets a zero one, v1's is a view of it; v2 and v3 see it
    v2.mul_(y[:3])
    other = x.clone()
    other[0].mul_(y)  # a view of a tensor that has a tangent
    return base, v1, v2, v3, other


def _base_inplace(L, x, y):
    base = L.zeros(3, 4)
    early = base[1]  # made before base had a tangent: torch gives it a view of base's tangent
    base.add_(x)
    late = base[:, 2]
    base.mul_(y)
    return base, early, late


@pytest.mark.parametrize("name", list(INPLACE))
def test_inplace_tangents(name):
    check_jvp(INPLACE[name])


def test_inplace_updates_the_given_tangent_and_views_share_it():
    def run(lib):
        f = fw(lib)
        with f.dual_level():
            v = lib.ones(4)
            d = f.make_dual(lib.tensor(Y), v)
            view = d[1:]
            view.mul_(3)  # the tangent of the view is a view of v: v changes
            t = f.unpack_dual(view).tangent
            base = lib.zeros(4)
            dv = f.make_dual(base[1:], lib.ones(3))  # a dual view of base: base itself has no tangent
            dv[1:].mul_(2)
            vr = lib.ones(4, requires_grad=True)
            dr = f.make_dual(lib.zeros(4), vr)
            err = outcome(lambda: dr.mul_(2))  # the tangent is a leaf that requires grad
            return (v.tolist(), t._base is v, t.tolist(), f.unpack_dual(dv).tangent.tolist(),
                    f.unpack_dual(base).tangent, err, dr.tolist(), vr.tolist(), v._version > 0)
    assert run(tl) == run(torch)


# ----- grad modes and reverse mode ---------------------------------------------------------------------------
def test_forward_ad_ignores_grad_mode():
    def run(lib):
        f = fw(lib)
        res = []
        with f.dual_level():
            d = f.make_dual(lib.tensor(X), lib.tensor(TX))
            with lib.no_grad():
                res.append(f.unpack_dual(d.sin() * 2).tangent)
                a = lib.zeros(3, 4)
                a.add_(d)
                res.append(f.unpack_dual(a).tangent)
                res.append(f.unpack_dual(d[1:]).tangent)
            with lib.inference_mode():  # inference mode turns forward AD off
                res.append(f.unpack_dual(d.exp()).tangent)
                res.append(f.unpack_dual(d).tangent)
                d.mul_(2)  # the tangent is not updated
                res.append(f.unpack_dual(f.make_dual(lib.ones(3), lib.ones(3))).tangent)
            res.append(f.unpack_dual(d).tangent)
        return res
    ours, theirs = run(tl), run(torch)
    assert [t is None for t in ours] == [t is None for t in theirs] == [False] * 3 + [True] * 3 + [False]
    for a, b in zip(ours, theirs):
        assert_same(a, b)


def test_tangent_propagation_records_no_nodes():
    with tl.autograd.forward_ad.dual_level():
        d = tl.autograd.forward_ad.make_dual(tl.tensor(X), tl.tensor(TX))
        y = (d.sin() * d).sum()
        t = tl.autograd.forward_ad.unpack_dual(y).tangent
        assert y.grad_fn is None and not y.requires_grad
        assert t.grad_fn is None and not t.requires_grad


def test_backward_through_dual_tensors():
    w_np = rng.randn(2, 4).astype(np.float32)
    b_np = rng.randn(2).astype(np.float32)

    def run(lib):
        f = fw(lib)
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(w_np, requires_grad=True)
        b = lib.tensor(b_np, requires_grad=True)
        with f.dual_level():
            d = f.make_dual(x, lib.tensor(TX))
            dw = f.make_dual(w, lib.tensor(w_np * 0.5))
            h = F(lib).linear(d, dw, b).tanh()
            loss = F(lib).cross_entropy(h, _idx(lib, [0, 1, 1])) + (f.unpack_dual(d).primal ** 2).sum()
            tangent = f.unpack_dual(loss).tangent.detach()
            g = graph(loss)
            gx, = lib.autograd.grad(loss, x, retain_graph=True)
            loss.backward()
        return [tangent, gx, x.grad, w.grad, b.grad], g
    (ours, g), (theirs, tg) = run(tl), run(torch)
    assert g == tg
    for a, b in zip(ours, theirs):
        assert_same(a, b, 1e-5, 1e-5)


# ----- the _fw_tangent contract (custom Functions read and write it directly) ----------------------------------
def test_directly_assigned_tangents_propagate_and_are_dropped():
    f = tl.autograd.forward_ad
    assert f._state.level is None
    with f.dual_level():
        assert f._state.level == 0
        x = tl.tensor(Y)
        x._fw_tangent = tl.tensor(TY)  # what a custom Function's forward AD does with its outputs
        y = x * x
        np.testing.assert_allclose(np.asarray(f.unpack_dual(y).tangent._data), 2 * Y * TY, rtol=1e-6)
        assert y._fw_tangent is f.unpack_dual(y).tangent
    assert x._fw_tangent is None and y._fw_tangent is None


def test_inplace_on_recorded_views_and_double_backward():
    """In-place ops on views of a tensor with history (CopySlices), then gradients of gradients: the values,
    gradients and every tangent, including the tangent of a gradient computed with create_graph=True."""
    def run(lib):
        f = fw(lib)
        x = lib.tensor(X, requires_grad=True)
        with f.dual_level():
            d = f.make_dual(lib.tensor(X), lib.tensor(TX))
            a = x * 1
            a[1:].mul_(d[1:])
            a[0].add_(d[0])
            s = (a.sin() ** 2).sum()
            g, = lib.autograd.grad(s, x, create_graph=True)
            gg, = lib.autograd.grad(g.sum(), x)
            return ([f.unpack_dual(a).tangent, f.unpack_dual(s).tangent, g, gg, f.unpack_dual(g).tangent],
                    graph(a))
    (ours, g), (theirs, tg) = run(tl), run(torch)
    assert g == tg
    for a, b in zip(ours, theirs):
        assert_same(a, b, 1e-5, 1e-5)


KINKS = {
    "relu at 0": lambda L, d: d.relu(),
    "abs at 0": lambda L, d: d.abs(),
    "clamp at its bounds": lambda L, d: d.clamp(0, 1),
    "clamp_min at its bound": lambda L, d: d.clamp_min(1),
    "maximum with ties": lambda L, d: L.maximum(d, L.ones(4)),
    "amax with ties": lambda L, d: d.amax(),
    "max over a dim with ties": lambda L, d: d.max(0)[0],
    "norm at 0": lambda L, d: (d * 0).norm(),
    "sqrt after abs at 0": lambda L, d: d.abs().sqrt(),
    "prod with a zero": lambda L, d: d.prod(),
}


@pytest.mark.parametrize("name", list(KINKS))
def test_tangents_at_kinks_follow_torch(name):
    """At points where the function has no derivative, torch's forward AD uses the same one-sided choice as
    its backward formulas (relu'(0) = 0, abs'(0) = 0, clamp passes the tangent at its bounds, ...)."""
    def run(lib):
        f = fw(lib)
        with f.dual_level():
            d = f.make_dual(lib.tensor([0.0, 1.0, 1.0, -2.0]), lib.tensor([1.0, 2.0, 3.0, 4.0]))
            return f.unpack_dual(KINKS[name](lib, d)).tangent
    assert_same(run(tl), dense(run(torch)))


def test_op_without_forward_derivative_raises_torchs_error():
    def run(lib):
        f = fw(lib)
        with f.dual_level():
            d = f.make_dual(lib.tensor([1.0, 3.0]), lib.tensor([1.0, 1.0]))
            return outcome(lambda: d // 2), f.unpack_dual(d.detach() // 2).tangent
    result = run(tl)
    assert result == run(torch)
    assert result[0][0] == "NotImplementedError"


def test_levels_do_not_nest_as_in_torch():
    """torch.autograd.forward_ad has one level at a time: entering a second raises torch's error and leaves the
    first level working (nested forward mode is torch.func's jvp/jacfwd, not dual_level's)."""
    def run(lib):
        f = fw(lib)
        with f.dual_level() as level:
            d = f.make_dual(lib.tensor([1.0, 3.0]), lib.tensor([1.0, 2.0]))
            nested = outcome(lambda: f.dual_level().__enter__())
            return level, nested, f.unpack_dual(d * d).tangent.tolist()
    result = run(tl)
    assert result == run(torch)
    assert result[1] == ("RuntimeError", "Nested forward mode AD is not supported at the moment")
