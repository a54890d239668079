"""interop._jax: jax_op (JAX function -> differentiable torchlike function) and as_jax (torchlike -> JAX).

Oracle: jax.grad / jax.vjp / jax.jvp / jax.vmap / jax.jit of the equivalent pure-JAX function.
Misuse covered: unhashable static argument (TypeError).
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torch

import torchlike as tl
import torchlike.autograd.forward_ad as fwAD
from interop._jax import as_jax, jax_op

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3,))
Y = RNG.normal(size=(3,))
M = RNG.normal(size=(2, 3))


def close(a, b, rtol=1e-10, atol=1e-12):
    a = a._data if isinstance(a, tl.Tensor) else a
    b = b._data if isinstance(b, tl.Tensor) else b
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol)


def leaf(a, requires_grad=True):
    return tl.tensor(a, requires_grad=requires_grad)


# ----- jax_op ---------------------------------------------------------------------------------------------------
def _pure(d, k):
    return {"a": jnp.sin(d["x"]) * d["y"] ** k, "b": (jnp.cos(d["x"]).sum(), jnp.argmax(d["y"]))}


def test_jax_op_pytrees_values_grads_node():
    calls = []

    @jax_op
    def f(d, k):
        calls.append(1)
        return _pure(d, k)

    x, y = leaf(X), leaf(Y)
    out = f({"x": x, "y": y}, 2)
    ref = _pure({"x": X, "y": Y}, 2)
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple) and len(out["b"]) == 2
    close(out["a"], ref["a"])
    close(out["b"][0], ref["b"][0])
    # the node: named after the function, one edge per tensor input, outputs numbered in flattening order
    node = out["a"].grad_fn
    assert type(node).__name__ == "fBackward" and node.name() == "fBackward"
    assert out["b"][0].grad_fn is node and out["a"].output_nr == 0 and out["b"][0].output_nr == 1
    assert [type(n).__name__ for n, _ in node.next_functions] == ["AccumulateGrad", "AccumulateGrad"]
    # integer outputs do not require grad
    assert out["b"][1].dtype == tl.int64 and not out["b"][1].requires_grad and out["b"][1].grad_fn is None
    assert int(out["b"][1]) == int(np.argmax(Y))
    # gradients of a combination of several outputs against jax.grad
    loss = (out["a"] * 3).sum() + out["b"][0] * 2
    loss.backward()

    def ref_loss(x, y):
        r = _pure({"x": x, "y": y}, 2)
        return (r["a"] * 3).sum() + r["b"][0] * 2
    gx, gy = jax.grad(ref_loss, argnums=(0, 1))(X, Y)
    close(x.grad, gx)
    close(y.grad, gy)
    assert len(calls) == 1


def test_jax_op_no_retrace_per_signature():
    calls = []

    @jax_op(static_argnums=1)
    def f(x, n):
        calls.append(x.shape)
        return jnp.tanh(x) ** n

    x = leaf(X)
    for _ in range(4):
        out = f(x, 3)
        (g,) = tl.autograd.grad(out.sum(), x)
    close(g, jax.grad(lambda x: (jnp.tanh(x) ** 3).sum())(X))
    assert len(calls) == 1
    sig, = f._cache.values()
    assert len(sig.op._fwd) == 1 and len(sig.op._bwd) == 1  # one jitted forward, one jitted backward
    f(x, 2)  # new static value: one more trace
    f(leaf(M), 3)  # new shape: one more trace
    f(leaf(M), 3)
    f(x, 3)
    assert len(calls) == 3


def test_jax_op_create_graph_second_and_third_order():
    f = jax_op(lambda x, y: jnp.sin(x) * jnp.exp(y) * x, name="sinexp")
    pure = (lambda x, y: jnp.sum(jnp.sin(x) * jnp.exp(y) * x))
    x, y = leaf(X), leaf(Y)
    out = f(x, y)
    assert type(out.grad_fn).__name__ == "sinexpBackward"
    (gx,) = tl.autograd.grad(out.sum(), x, create_graph=True)
    assert gx.requires_grad and type(gx.grad_fn).__name__ == "sinexpBackwardBackward"
    close(gx, jax.grad(pure)(X, Y))
    ggx, ggy = tl.autograd.grad(gx.sum(), (x, y), create_graph=True)
    close(ggx, jax.grad(lambda x, y: jax.grad(pure)(x, y).sum())(X, Y))
    close(ggy, jax.grad(lambda x, y: jax.grad(pure)(x, y).sum(), argnums=1)(X, Y))
    (gggx,) = tl.autograd.grad(ggx.sum(), x)
    close(gggx, jax.grad(lambda x: jax.grad(lambda x: jax.grad(pure)(x, Y).sum())(x).sum())(X))


def test_jax_op_inside_larger_graph_and_mixed_inputs():
    @jax_op(static_argnames=("mode",))
    def mix(x, w, mode):
        y = x @ w.T
        return jnp.maximum(y, 0) if mode == "relu" else y

    w_np = M
    x, w = leaf(X), leaf(w_np)
    h = (x * 2).exp()
    out = mix(h, w, mode="relu")
    assert out.requires_grad
    loss = (out.tanh() * tl.tensor(np.array([1.0, -2.0]))).sum()
    loss.backward()

    def ref(x, w):
        h = jnp.exp(x * 2)
        return (jnp.tanh(jnp.maximum(h @ w.T, 0)) * jnp.array([1.0, -2.0])).sum()
    gx, gw = jax.grad(ref, argnums=(0, 1))(X, w_np)
    close(x.grad, gx)
    close(w.grad, gw)
    # a JAX array as input: usable, never requires grad; the output depends on no grad input -> no history
    out2 = mix(jnp.asarray(X), jnp.asarray(w_np), mode="linear")
    close(out2, X @ w_np.T)
    assert not out2.requires_grad and out2.grad_fn is None
    # only the weight requires grad: the gradient flows to it alone
    out3 = mix(tl.tensor(X), w, mode="linear")
    assert out3.requires_grad
    (gw3,) = tl.autograd.grad(out3.sum(), w)
    close(gw3, jax.grad(lambda w: (X @ w.T).sum())(w_np))


def test_jax_op_no_grad_and_misuse():
    f = jax_op(lambda x, s: x * s["scale"])
    x = leaf(X)
    with tl.no_grad():
        out = f(x, {"scale": 2.0})
    assert not out.requires_grad and out.grad_fn is None
    close(out, X * 2.0)
    # a Python number leaf is static: part of the signature
    out = f(x, s={"scale": 3.0})  # keyword arguments are pytrees too
    assert out.requires_grad and type(out.grad_fn).__name__ == "JaxOpBackward"  # a lambda's node name
    close(out, X * 3.0)
    g = jax_op(lambda x, opts: x * len(opts), static_argnums=1)
    with pytest.raises(TypeError, match="hashable"):
        g(x, ["unhashable", "list"])


def test_jax_op_closed_over_constant_complex_vs_torch_and_forward_ad():
    C = jnp.asarray(np.arange(1.0, 4.0))  # a concrete array the function closes over: an input, but no edge
    f = jax_op(lambda z: jnp.abs(z * C) ** 2 + jnp.sin(z))
    zn = X + 1j * Y
    for _ in range(2):  # the second call replays the cached compiled program
        z = leaf(zn)
        out = f(z)
        assert len(out.grad_fn.next_functions) == 1
        (g,) = tl.autograd.grad(out.real.sum(), z, create_graph=True)
        (gg,) = tl.autograd.grad(g.abs().sum(), z)
        zt = torch.tensor(zn, requires_grad=True)
        ot = (zt * torch.tensor(np.arange(1.0, 4.0))).abs() ** 2 + zt.sin()
        (gt,) = torch.autograd.grad(ot.real.sum(), zt, create_graph=True)
        (ggt,) = torch.autograd.grad(gt.abs().sum(), zt)
        close(out, ot.detach().numpy())
        close(g, gt.detach().numpy())
        close(gg, ggt.numpy())
    # forward-mode AD through the op
    h = jax_op(lambda x: jnp.sin(x) * C)
    with fwAD.dual_level():
        d = fwAD.make_dual(tl.tensor(X), tl.tensor(Y))
        tangent = fwAD.unpack_dual(h(d)).tangent
    close(tangent, jax.jvp(lambda x: jnp.sin(x) * C, (X,), (Y,))[1])


# ----- as_jax ---------------------------------------------------------------------------------------------------
def _tl_fn(x, w):
    return ((x * w).sin() * x).sum() + (x ** 2).mean()


def _jax_fn(x, w):
    return (jnp.sin(x * w) * x).sum() + (x ** 2).mean()


def test_as_jax_grad_jit_vmap_jvp():
    f = as_jax(_tl_fn)
    xa, wa = jnp.asarray(X), jnp.asarray(Y)
    close(f(xa, wa), _jax_fn(xa, wa))
    assert isinstance(f(xa, wa), jax.Array)
    for gf, rf in [(jax.grad(f, argnums=(0, 1)), jax.grad(_jax_fn, argnums=(0, 1))),
                   (jax.jit(jax.grad(f)), jax.grad(_jax_fn))]:
        for a, b in zip(jax.tree_util.tree_leaves(gf(xa, wa)), jax.tree_util.tree_leaves(rf(xa, wa))):
            close(a, b)
    # higher order
    hf = jax.grad(lambda x: jax.grad(f)(x, wa).sum())
    close(hf(xa), jax.grad(lambda x: jax.grad(_jax_fn)(x, wa).sum())(xa))
    # vmap and jvp
    xs = jnp.asarray(M)
    close(jax.vmap(f, in_axes=(0, None))(xs, wa), jax.vmap(_jax_fn, in_axes=(0, None))(xs, wa))
    p, t = jax.jvp(f, (xa, wa), (jnp.ones(3), jnp.asarray(X)))
    rp, rt = jax.jvp(_jax_fn, (xa, wa), (jnp.ones(3), jnp.asarray(X)))
    close(p, rp)
    close(t, rt)


def test_as_jax_pytrees_and_tensor_pytree_node():
    def tl_fn(params, x):
        h = (x @ params["w"].T + params["b"]).tanh()
        return {"loss": (h ** 2).sum(), "h": h}

    def jx_fn(params, x):
        h = jnp.tanh(x @ params["w"].T + params["b"])
        return {"loss": (h ** 2).sum(), "h": h}

    params = {"w": jnp.asarray(M), "b": jnp.asarray(Y[:2])}
    xa = jnp.asarray(X)
    out = jax.jit(as_jax(tl_fn))(params, xa)
    ref = jx_fn(params, xa)
    close(out["loss"], ref["loss"])
    close(out["h"], ref["h"])
    g = jax.grad(lambda p, x: as_jax(tl_fn)(p, x)["loss"])(params, xa)
    rg = jax.grad(lambda p, x: jx_fn(p, x)["loss"])(params, xa)
    close(g["w"], rg["w"])
    close(g["b"], rg["b"])
    # Tensors are pytree nodes: passed to JAX transforms directly, the gradient comes back as a Tensor
    t = tl.tensor(X, requires_grad=True)
    leaves, treedef = jax.tree_util.tree_flatten({"t": t})
    assert len(leaves) == 1 and leaves[0] is t._data
    back = jax.tree_util.tree_unflatten(treedef, leaves)["t"]
    assert isinstance(back, tl.Tensor) and back.requires_grad and back.is_leaf
    gt = jax.grad(as_jax(lambda a: (a.sin() * a).sum()))(t.detach())
    assert isinstance(gt, tl.Tensor)
    close(gt, jax.grad(lambda a: (jnp.sin(a) * a).sum())(X))


def test_as_jax_internal_autograd_grad_with_hook_under_jit():
    hook_calls = []

    def tl_fn(x):  # a torchlike function that differentiates itself with torchlike's engine
        x = x.detach().requires_grad_()
        h = x * 2

        def hook(g):
            hook_calls.append(g.shape)  # a trace-time side effect; shapes are fine to read
            return g * 10
        h.register_hook(hook)
        (g,) = tl.autograd.grad((h.sin() * x).sum(), x, create_graph=True)
        return (g ** 2).sum()

    def jx_fn(x):  # d/dx sum(sin(2x) * x) with the hook scaling the gradient through h by 10
        g = 10 * 2 * jnp.cos(2 * x) * x + jnp.sin(2 * x)
        return (g ** 2).sum()

    f = jax.jit(as_jax(tl_fn))
    xa = jnp.asarray(X)
    close(f(xa), jx_fn(xa))
    close(f(xa + 1), jx_fn(xa + 1))
    assert len(hook_calls) == 1  # ran once, at trace time
    # jax.grad through torchlike's own create_graph backward, under jit
    gf = jax.jit(jax.grad(as_jax(tl_fn)))
    close(gf(xa), jax.grad(jx_fn)(xa))
    close(jax.vmap(as_jax(tl_fn))(jnp.asarray(M)), jax.vmap(jx_fn)(jnp.asarray(M)))


def test_as_jax_backward_inside_jit_and_hook_reading_values():
    def tl_fn(x):  # .backward() and .grad inside a jitted function
        x = x.detach().requires_grad_()
        ((x * 2).sin() * x).sum().backward()
        return x.grad

    xa = jnp.asarray(X)
    close(jax.jit(as_jax(tl_fn))(xa), jax.grad(lambda x: (jnp.sin(2 * x) * x).sum())(xa))

    def reads_value(x):  # misuse: a hook that reads a value (.item()) under jax.jit
        x = x.detach().requires_grad_()
        h = x * 2
        h.register_hook(lambda g: g * g.sum().item())
        h.sum().backward()
        return x.grad

    close(as_jax(reads_value)(xa), np.full(3, 2 * 3.0))  # eager (concrete arrays): allowed
    with pytest.raises((jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError)):
        jax.jit(as_jax(reads_value))(xa)


def test_jax_op_inside_as_jax():
    calls = []

    @jax_op
    def inner(x, y):
        calls.append(1)
        return jnp.sin(x) * y

    def tl_fn(x, y):
        return (inner(x.exp(), y) ** 2).sum()

    def jx_fn(x, y):
        return ((jnp.sin(jnp.exp(x)) * y) ** 2).sum()

    xa, ya = jnp.asarray(X), jnp.asarray(Y)
    f = as_jax(tl_fn)
    close(jax.jit(f)(xa, ya), jx_fn(xa, ya))
    close(jax.grad(f, argnums=1)(xa, ya), jax.grad(jx_fn, argnums=1)(xa, ya))
    close(jax.grad(lambda x: jax.grad(f)(x, ya).sum())(xa), jax.grad(lambda x: jax.grad(jx_fn)(x, ya).sum())(xa))
    close(jax.vmap(f)(jnp.asarray(M), jnp.asarray(M)), jax.vmap(jx_fn)(jnp.asarray(M), jnp.asarray(M)))
    assert len(calls) == 1  # one signature (shape (3,) float64): traced once across all transforms
