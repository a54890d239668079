"""Views, grad modes and detach (GEN_REPORT classes AL, D, T, W, AB, AR), each program run in torchlike and in
torch 2.13 on the same NumPy inputs and compared step by step: values, requires_grad, is_leaf, grad_fn names,
_version, is_inference, _is_view, gradients, and errors (type and leading text)."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl

A = np.array([[1., -2., 3.], [0.5, 4., -1.]])
Z = np.array([1 + 1j, 2 - 1j, -0.5 + 2j])


def _state(t):
    """What a tensor looks like to a user (every read that may raise reads as its error)."""
    if t is None:
        return None
    out = {}
    for name, read in (("value", lambda: _Close(np.array(t.detach().resolve_conj().numpy()))),
                       ("requires_grad", lambda: t.requires_grad),
                       ("is_leaf", lambda: t.is_leaf), ("grad_fn", lambda: type(t.grad_fn).__name__),
                       ("version", lambda: t._version), ("inference", lambda: t.is_inference()),
                       ("view", lambda: t._is_view()), ("conj", lambda: t.is_conj())):
        out[name] = _try(read)
    return out


class _Close:
    """An array that compares equal to one close to it (float32/float64 roundings differ)."""

    def __init__(self, a):
        self.a = a

    def __eq__(self, other):
        return self.a.shape == other.a.shape and np.allclose(self.a, other.a, rtol=1e-6, atol=1e-9, equal_nan=True)

    def __repr__(self):
        return repr(self.a)


def _done(result):
    """A step whose result is not compared (in-place ops return self, compared afterwards)."""
    return None


def _values(ts):
    """Gradients by value (torch's backward formulas may return views or conj tensors)."""
    return [None if t is None else _Close(np.array(t.detach().resolve_conj().numpy())) for t in ts]


def _try(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - type and message are what is compared
        return type(e).__name__, str(e)[:120]


def _run(program):
    """program(m, see) calls see(label, value_or_callable) at each step; returns what it saw, errors included."""
    log = []

    def see(label, x):
        r = _try(x) if callable(x) else x
        if isinstance(r, (torch.Tensor, tl.Tensor)):
            r = _state(r)
        elif isinstance(r, tuple) and any(isinstance(t, (torch.Tensor, tl.Tensor)) for t in r):
            r = [_state(t) for t in r]
        elif isinstance(r, str):
            r = r.replace("torchlike.", "torch.")
        log.append((label, r))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program(tl, see)
        mine = log[:]
        log.clear()
        program(torch, see)
    return mine, log


def check(program):
    mine, theirs = _run(program)
    for (label, a), (_, b) in zip(mine, theirs):
        assert a == b, f"{label}: torchlike {a} vs torch {b}"
    assert len(mine) == len(theirs)


def _leaf(m, data=A):
    return m.tensor(data, requires_grad=True)


# ----- AL: detach_ of a tensor with live views ------------------------------------------------------------
VIEW_FNS = {
    "moveaxis": lambda x: x.moveaxis(0, 1), "select": lambda x: x[0], "slice": lambda x: x[:, 1:],
    "view": lambda x: x.view(-1), "T": lambda x: x.T, "expand": lambda x: x[:1].expand(3, 3),
    "diagonal": lambda x: x.diagonal(), "alias": lambda x: x[...],
}
WRITES = {
    "fill_": lambda v, m: v.fill_(0.5), "mul_": lambda v, m: v.mul_(2),
    "mul_grad": lambda v, m: v.mul_(m.tensor(3., requires_grad=True)),
    "setitem": lambda v, m: v.__setitem__(0, 7.), "zero_": lambda v, m: v.zero_(),
}


@pytest.mark.parametrize("view", VIEW_FNS)
@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("base", ["leaf", "nonleaf"])
def test_write_through_view_after_detach_(view, write, base):
    def program(m, see):
        x = _leaf(m)
        if base == "nonleaf":
            x = x * 1
        v = VIEW_FNS[view](x)
        x.detach_()
        see("view", v)
        see("write", lambda: _done(WRITES[write](v, m)))
        see("base", x)
        see("view after", v)
        w = VIEW_FNS[view](x)  # a view made after detach_
        see("new view", w)
        see("write new", lambda: _done(WRITES[write](w, m)))
        see("base after", x)
    check(program)


def test_detach__views_and_backward():
    def program(m, see):
        x = _leaf(m)
        v = x[0]
        u = v[1:]
        x.detach_()
        see("detach_ of a view", lambda: v.detach_())
        see("view of view", u)
        see("backward to a detached leaf", lambda: (v.sum() + u.sum()).backward())
        see("grad", lambda: x.grad)
        with m.no_grad():
            v.fill_(0.25)  # a write in no_grad regenerates the view's node on the (now plain) base
        see("view", v)
        see("base", x)
        see("write again", lambda: _done(u.mul_(2)))
        y = _leaf(m) * 2
        p = y.permute(1, 0)
        y.detach_()
        see("non-leaf base", y)
        see("write", lambda: _done(p.add_(1)))
    check(program)


def test_detach__post_accumulate_and_hooks():
    def program(m, see):
        x = _leaf(m)
        fired = []
        x.register_post_accumulate_grad_hook(lambda t: fired.append("post"))
        v = x[1]
        x.detach_()
        (v * 2).sum().backward()
        see("grad", x.grad)
        see("post hook", list(fired))
    check(program)


# ----- D: views under no_grad / inference_mode ---------------------------------------------------------------
MODE_VIEWS = {
    "view": lambda x: x.view(-1), "T": lambda x: x.T, "split": lambda x: x.split(1)[0],
    "unbind": lambda x: x.unbind()[1], "expand": lambda x: x[0].expand(2, 3), "reshape": lambda x: x.reshape(6),
    "getitem": lambda x: x[0], "diagonal": lambda x: x.diagonal(), "narrow": lambda x: x.narrow(1, 0, 2),
    "chunk": lambda x: x.chunk(2)[0], "alias": lambda x: x[...], "detach": lambda x: x.detach(),
    "mul": lambda x: x * 2, "clone": lambda x: x.clone(), "contiguous_T": lambda x: x.T.contiguous(),
    "unsqueeze": lambda x: x.unsqueeze(0), "squeeze": lambda x: x[:1].squeeze(0), "t": lambda x: x.t(),
    "data": lambda x: x.data, "to_same": lambda x: x.to(x.dtype), "index": lambda x: x[x.new_tensor([1]).long()],
}


@pytest.mark.parametrize("mode", ["no_grad", "inference_mode"])
@pytest.mark.parametrize("base", ["leaf", "nonleaf", "plain"])
@pytest.mark.parametrize("fn", MODE_VIEWS)
def test_results_made_in_a_grad_mode(mode, base, fn):
    def program(m, see):
        x = m.tensor(A) if base == "plain" else _leaf(m)
        if base == "nonleaf":
            x = x * 1
        with getattr(m, mode)():
            v = MODE_VIEWS[fn](x)
        see("result", v)
        see("use", lambda: v * 2)
        see("write", lambda: _done(v.mul_(2)))
        see("base", x)
        see("after", v)
        see("write base", lambda: _done(x.add_(1)))
        see("after base write", v)
        see("use after", lambda: v * 2)
        see("backward", lambda: v.sum().backward())
    check(program)


def test_no_grad_views_follow_their_base():
    def program(m, see):
        x = m.tensor(A)
        v = x[0]
        with m.no_grad():
            w = x[1]
        x.requires_grad_()
        see("view made before", v)
        see("no_grad view", w)
        see("write", lambda: v.mul_(2))
        w.requires_grad_(False)  # torch: accepted, and the view still requires grad through its base
        see("no_grad view", w)
        x.requires_grad_(False)
        see("after", (v, w))
        x.requires_grad = True
        see("set", (v, w))
        see("retain_grad", lambda: w.retain_grad())
        see("backward", lambda: (w * 2).sum().backward())
        see("grad", lambda: x.grad)
        see("autograd.grad", lambda: tl.autograd.grad if False else None)
        see("grad of the view", lambda: m.autograd.grad((w * 2).sum(), x))
        u = w[1:]  # a view (with history) of a no_grad view
        see("view of it", u)
        see("write", lambda: u.mul_(2))
        with m.no_grad():
            x.add_(1)
        see("after a no_grad write of the base", (u, w))
        see("op", lambda: u * 2)
        see("backward from it", lambda: w.sum().backward())
        see("hook", lambda: _done(w.register_hook(lambda g: g)))
        see("repr", lambda: repr(w))
        see("retain", lambda: u.retain_grad())
    check(program)


def test_inference_tensors_and_their_views():
    def program(m, see):
        x = _leaf(m)
        p = m.tensor(A)
        with m.inference_mode():
            i = m.ones(2, 3)
            see("inside", (i, i[0], i.T, i.detach(), i.data, x.detach(), x.data, p.detach(), p[0]))
            see("write a normal tensor", lambda: _done(p.add_(1)))
            see("version inside", lambda: p._version)
            vx = x[0]
            vx2 = x.unbind()[1]
            j = i[0:1]
            j.add_(1)
            see("write an inference view", (i, j))
        see("outside", (i[0], i.T, i.view(-1), i * 1, i.detach(), i.data, i.unbind()[0]))
        see("write inference", lambda: _done(i.add_(1)))
        see("write view made inside", lambda: _done(vx.mul_(2)))
        see("multi-output view made inside", lambda: _done(vx2.mul_(2)))
        see("with grad input", lambda: _done(p[0].mul_(x[0])))
        with m.no_grad():
            see("no_grad write", lambda: _done(vx.mul_(2)))
        see("after", (vx, vx2, x))
        see("view of it", lambda: vx[1:])
        see("save inference", lambda: x * i)
    check(program)


def test_creation_meta_propagates():
    def program(m, see):
        x = _leaf(m)
        with m.no_grad():
            a = x[0]
        b = a.unbind()[0]  # a multi-output view of a no_grad view
        see("b", b)
        see("write b", lambda: _done(b.mul_(2)))
        with m.inference_mode():
            c = x[1]
        with m.no_grad():
            d = c[1:]  # inference_mode stays
        see("write d", lambda: _done(d.mul_(2)))
        e = x.unbind()[1]
        f = e[1:]  # a view of a multi-output view
        see("write f", lambda: _done(f.mul_(2)))
        with m.no_grad():
            g = e[1:]
        see("write g", lambda: _done(g.mul_(2)))
    check(program)


# ----- T: a saved tensor detach_()-ed later ------------------------------------------------------------------
SAVING = {"sinc": lambda y: y.sinc(), "mul_self": lambda y: y * y, "exp_mul": lambda y: y.exp() * y,
          "sin": lambda y: y.sin(), "exp": lambda y: y.exp(), "pow": lambda y: y ** 3}


@pytest.mark.parametrize("fn", SAVING)
@pytest.mark.parametrize("when", ["after", "before", "after_then_write"])
def test_saved_tensor_detached_in_place(fn, when):
    def program(m, see):
        x = _leaf(m)
        w = _leaf(m)
        y = x * 1
        if when == "before":
            y.detach_()
            z = SAVING[fn](y) * w
        else:
            z = SAVING[fn](y)
            y.detach_()
            if when == "after_then_write":
                y.mul_(2)
        see("saved", lambda: _done([s for s in dir(z.grad_fn) if s.startswith("_saved_")]))
        see("backward", lambda: z.sum().backward())
        see("grads", (x.grad, w.grad))
    check(program)


def test_saved_tensor_detached_properties_unpack():
    def program(m, see):
        x = _leaf(m)
        y = x * 1
        z = y.sinc()
        y.detach_()
        see("_saved_self", lambda: z.grad_fn._saved_self)
        see("create_graph", lambda: m.autograd.grad(z.sum(), x, create_graph=True))
    check(program)


# ----- AR: multi-output views after a write to their base ---------------------------------------------------
def test_unbind_then_base_written():
    def program(m, see):
        x = _leaf(m)
        y = x.cos()
        u = y.unbind()
        s = y.split(1)
        y.expm1_()
        see("unbind output", u[0])
        see("split output", s[1])
        see("use", lambda: u[0] * 2)
        see("retain_grad", lambda: u[1].retain_grad())
        see("hook", lambda: _done(s[0].register_hook(lambda g: g)))
        see("write", lambda: _done(u[0].mul_(2)))
        see("repr", lambda: repr(u[0]))
        see("backward from it", lambda: u[1].sum().backward())
        see("grad wrt it", lambda: m.autograd.grad(y.sum(), u[0]))
        with m.no_grad():
            see("use in no_grad", lambda: u[0] * 2)
        see("detach", lambda: u[0].detach())
        see("backward from the base", lambda: y.sum().backward())
        see("grad", x.grad)
    check(program)


# ----- W: conj() of a complex tensor is a view that reads its storage conjugated ----------------------------
CONJ_WRITES = {
    "mul_": lambda t: t.mul_(2j), "add_": lambda t: t.add_(1 - 1j), "fill_": lambda t: t.fill_(3j),
    "setitem": lambda t: t.__setitem__(0, 5 + 1j), "copy_": lambda t: t.copy_(t * 1j),
}
CONJ_TARGETS = {
    "conj": lambda y: y.conj(), "view_of_conj": lambda y: y.conj()[1:], "conj_of_view": lambda y: y[1:].conj(),
    "conj_conj": lambda y: y.conj().conj(), "base": lambda y: (y.conj(), y)[1],
}


@pytest.mark.parametrize("target", CONJ_TARGETS)
@pytest.mark.parametrize("write", CONJ_WRITES)
@pytest.mark.parametrize("grad", [True, False])
def test_conj_is_a_view(target, write, grad):
    def program(m, see):
        x = m.tensor(Z, requires_grad=grad)
        y = x * 1 if grad else x.clone()
        c = y.conj()
        see("conj", c)
        see("base", lambda: c._base is y)
        t = CONJ_TARGETS[target](y)
        see("target", t)
        see("write", lambda: _done(CONJ_WRITES[write](t)))
        see("after", (y, c, t))
        see("detach", lambda: c.detach())
        see("data", lambda: c.data)
        see("numpy", lambda: _done(c.detach().numpy()))
        see("resolve_conj", lambda: c.resolve_conj())
        see("clone", lambda: c.clone())
        if grad:
            loss = (y.abs() ** 2).sum() + (c * (1 + 2j)).real.sum() + (t * t.conj()).real.sum()
            see("grad", lambda: _values(m.autograd.grad(loss, x)))
    check(program)


def test_conj_of_real_and_write_through_conj_of_leaf():
    def program(m, see):
        r = m.tensor(A)
        see("real conj", lambda: r.conj() is r)
        x = m.tensor(Z, requires_grad=True)
        c = x.conj()
        see("write into a view of a leaf", lambda: _done(c.mul_(2)))
        with m.no_grad():
            c.mul_(2)
        see("after", (x, c))
        p = m.tensor(Z)
        c = p.conj()
        see("write through a leaf that needs no grad", lambda: _done(c.mul_(m.tensor(2j, requires_grad=True))))
        see("after", (p, c))
        see("grad", lambda: _values(m.autograd.grad(p.abs().sum(), p)))
    check(program)


# ----- AB: mT / mH / H / adjoint() of 0-d, 1-d, 2-d and 3-d tensors -----------------------------------------
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 2, 3)])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("fn", ["mT", "mH", "H", "T", "adjoint"])
def test_matrix_transposes(shape, dtype, fn):
    def program(m, see):
        data = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape) * (1 + 1j if dtype == "complex128" else 1)
        x = m.tensor(data, requires_grad=True) * 1
        r = _try(lambda: x.adjoint() if fn == "adjoint" else getattr(x, fn))
        see("result", r)
        see("same", r is x)
        if not isinstance(r, tuple):
            see("grad", lambda: _values(m.autograd.grad((r * r.detach().conj()).real.sum(), x)))
    check(program)


def test_views_torch_refuses_to_rebuild_and_the_base_flag():
    def program(m, see):
        x = _leaf(m)
        with m.no_grad():
            v = x[0]
        u = x.unbind()[1]
        with m.no_grad():
            x.add_(1)
        x.requires_grad_(False)  # the no_grad view follows its base; the unbind output keeps its (stale) node
        see("after", (v, u))
        see("grad of the no_grad view", lambda: v.grad)
        x.requires_grad_(True)
        see("again", (v, u))
    check(program)
