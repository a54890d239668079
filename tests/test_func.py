"""torchlike.func against torch.func on the same NumPy inputs: values of every transform and their compositions,
gradients flowing to tensors outside the transform (first and second order), vmap's randomness modes, and
torch's errors for misuse."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import error_of

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3))
W = RNG.standard_normal((3, 2))


def _same(a, b):
    """torch result ``a`` and torchlike result ``b``: same structure (dict key order too), values, shapes."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, tl.Tensor), type(b)
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(np.asarray(b.detach()), a.detach().numpy(), rtol=1e-7, atol=1e-9)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (list(a), b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert a == b


def _f(m, x):
    return (x.sin() * x).sum()


VALUES = {
    "grad": lambda m: m.func.grad(lambda x: _f(m, x))(m.tensor(X)),
    "grad_and_value": lambda m: m.func.grad_and_value(lambda x: _f(m, x))(m.tensor(X)),
    "grad_argnums": lambda m: m.func.grad(lambda x, w: (x @ w).tanh().sum(), argnums=(0, 1))(m.tensor(X), m.tensor(W)),
    "grad_argnum_neg": lambda m: m.func.grad(lambda x, w: (x @ w).tanh().sum(), argnums=-1)(m.tensor(X), m.tensor(W)),
    "grad_has_aux": lambda m: m.func.grad(lambda x: ((x ** 2).sum(), {"c": x.cos()}), has_aux=True)(m.tensor(X)),
    "grad_dict_input": lambda m: m.func.grad(lambda d: (d["b"] * d["a"]).sum())(
        {"b": m.tensor(X), "a": m.tensor(X[::-1].copy())}),
    "grad_control_flow": lambda m: m.func.grad(lambda x: (x * 2).sum() if x.sum() > 0 else (x ** 3).sum())(
        m.tensor(X)),
    "grad_kwargs": lambda m: m.func.grad(lambda x, scale=1.0: (x * scale).sin().sum())(m.tensor(X), scale=3.0),
    "vjp": lambda m: m.func.vjp(lambda x: x.sin(), m.tensor(X))[1](m.tensor(X[::-1].copy())),
    "vjp_output": lambda m: m.func.vjp(lambda x: x.sin(), m.tensor(X))[0],
    "vjp_two_calls": lambda m: (lambda out, fn: (fn(m.ones(4, 2, dtype=m.float64)), fn(out)))(
        *m.func.vjp(lambda x, w: x @ w, m.tensor(X), m.tensor(W))),
    "vjp_has_aux": lambda m: m.func.vjp(lambda x: (x.exp(), x.sum()), m.tensor(X), has_aux=True)[2],
    "jvp": lambda m: m.func.jvp(lambda x: x.sin() * 2, (m.tensor(X),), (m.tensor(X[::-1].copy()),)),
    "jvp_has_aux": lambda m: m.func.jvp(lambda x: (x.sin(), x.cos()), (m.tensor(X),), (m.tensor(X),), has_aux=True),
    "linearize": lambda m: m.func.linearize(lambda x: x.exp(), m.tensor(X))[1](m.tensor(X)),
    "jacrev": lambda m: m.func.jacrev(lambda x: x.sin() @ m.tensor(W))(m.tensor(X)),
    "jacrev_argnums": lambda m: m.func.jacrev(lambda x, w: x @ w, argnums=(0, 1))(m.tensor(X[0]), m.tensor(W)),
    "jacrev_dict_out": lambda m: m.func.jacrev(lambda x: {"s": x.sin(), "c": x.cos().sum()})(m.tensor(X[0])),
    "jacrev_has_aux": lambda m: m.func.jacrev(lambda x: (x.sin(), x.sum()), has_aux=True)(m.tensor(X[0])),
    "jacrev_chunked": lambda m: m.func.jacrev(lambda x: x.sin(), chunk_size=2)(m.tensor(X[0])),
    "jacfwd": lambda m: m.func.jacfwd(lambda x: x.sin() @ m.tensor(W))(m.tensor(X)),
    "hessian": lambda m: m.func.hessian(lambda x: (x.sin() * x).sum())(m.tensor(X[0])),
    "jacfwd_jacrev": lambda m: m.func.jacfwd(m.func.jacrev(lambda x: x.sin().prod()))(m.tensor(X[0])),
    "vmap": lambda m: m.func.vmap(lambda x: x @ m.tensor(W))(m.tensor(X)),
    "vmap_alias": lambda m: m.vmap(lambda x: x.sum())(m.tensor(X)),
    "vmap_in_dims": lambda m: m.func.vmap(lambda x, w: x * w, in_dims=(1, None))(m.tensor(X), m.tensor(X[:, 0].copy())),
    "vmap_nested_in_dims": lambda m: m.func.vmap(lambda p: p[0] * p[1]["k"], in_dims=((0, {"k": 1}),))(
        (m.tensor(X), {"k": m.tensor(X.T.copy())})),
    "vmap_out_dims": lambda m: m.func.vmap(lambda x: x.outer(x), out_dims=1)(m.tensor(X)),
    "vmap_out_dims_tuple": lambda m: m.func.vmap(lambda x: (x.sin(), x.sum()), out_dims=(1, 0))(m.tensor(X)),
    "vmap_negative_dims": lambda m: m.func.vmap(lambda x: x.sum(), in_dims=-1, out_dims=-1)(m.tensor(X)),
    "vmap_nested": lambda m: m.func.vmap(m.func.vmap(lambda x: x.sin()))(m.tensor(X)),
    "vmap_chunk_size": lambda m: m.func.vmap(lambda x: x.sin(), chunk_size=3)(m.tensor(X)),
    "vmap_dict_out": lambda m: m.func.vmap(lambda x: {"z": x.sin(), "a": x.cos()})(m.tensor(X)),
    "vmap_none_arg": lambda m: m.func.vmap(lambda x, n: x * n, in_dims=(0, None))(m.tensor(X), 2.0),
    "per_sample_grads": lambda m: m.func.vmap(m.func.grad(lambda w, x: (x @ w).tanh().sum()), in_dims=(None, 0))(
        m.tensor(W), m.tensor(X)),
    "vmap_jacrev": lambda m: m.func.vmap(m.func.jacrev(lambda x: x.sin() * x.sum()))(m.tensor(X)),
    "grad_of_vmap": lambda m: m.func.grad(lambda x: m.func.vmap(lambda r: r.sin().sum())(x).sum())(m.tensor(X)),
}


@pytest.mark.parametrize("name", list(VALUES))
def test_values(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = VALUES[name](torch)
    _same(expected, VALUES[name](tl))


def _model(m):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(), torch.nn.Linear(5, 2)).double()
    if m is torch:
        return model
    ours = tl.nn.Sequential(tl.nn.Linear(3, 5), tl.nn.Tanh(), tl.nn.Linear(5, 2)).double()
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in model.state_dict().items()})
    return ours


MODULES = {
    "functional_call": lambda m, mod: m.func.functional_call(
        mod, {k: v.detach() * 2 for k, v in mod.named_parameters()}, (m.tensor(X),)),
    "functional_call_partial": lambda m, mod: m.func.functional_call(mod, {"0.bias": m.zeros(5, dtype=m.float64)},
                                                                      m.tensor(X)),
    "functional_call_two_dicts": lambda m, mod: m.func.functional_call(
        mod, ({"0.weight": m.ones(5, 3, dtype=m.float64)}, {"2.bias": m.ones(2, dtype=m.float64)}), (m.tensor(X),)),
    "grad_of_functional_call": lambda m, mod: m.func.grad(
        lambda p, x: m.func.functional_call(mod, p, (x,)).pow(2).sum())(
        {k: v.detach() for k, v in mod.named_parameters()}, m.tensor(X)),
    "per_sample_grads_of_module": lambda m, mod: m.func.vmap(m.func.grad(
        lambda p, x: m.func.functional_call(mod, p, (x.unsqueeze(0),)).pow(2).sum()), in_dims=(None, 0))(
        {k: v.detach() for k, v in mod.named_parameters()}, m.tensor(X)),
    "hessian_of_functional_call": lambda m, mod: m.func.hessian(
        lambda b: m.func.functional_call(mod, {"2.bias": b}, (m.tensor(X),)).sin().sum())(m.zeros(2, dtype=m.float64)),
    "ensemble": lambda m, mod: m.func.vmap(lambda p, b, x: m.func.functional_call(mod, (p, b), (x,)),
                                           in_dims=(0, 0, None))(*m.func.stack_module_state([mod, mod]), m.tensor(X)),
    "stack_module_state": lambda m, mod: m.func.stack_module_state([mod, mod]),
    "vmap_module_direct": lambda m, mod: m.func.vmap(mod)(m.tensor(X)),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_modules(name):
    _same(MODULES[name](torch, _model(torch)), MODULES[name](tl, _model(tl)))


def test_stacked_state_are_leaves_and_module_is_restored():
    mod = _model(tl)
    before = {k: v for k, v in mod.named_parameters()}
    params, buffers = tl.func.stack_module_state([mod, mod])
    assert all(p.is_leaf and p.requires_grad for p in params.values()) and buffers == {}
    tl.func.functional_call(mod, {"0.weight": tl.zeros(5, 3, dtype=tl.float64)}, (tl.tensor(X),))
    assert all(before[k] is v for k, v in mod.named_parameters())


def _history(m, case):
    x = m.tensor(X, requires_grad=True)
    w = m.tensor(W, requires_grad=True)
    if case == "grad":
        out = m.func.grad(lambda x: (x ** 3 * w.sum()).sum())(x)
    elif case == "vmap_captured":
        out = m.func.vmap(lambda r: (r @ w).tanh())(x)
    elif case == "jacrev":
        out = m.func.jacrev(lambda r: (r @ w).sin())(x[0])
    elif case == "vjp":
        out = m.func.vjp(lambda r: r.exp() * w[0, 0], x)[1](x.cos())[0]
    else:
        out = m.func.jvp(lambda r: r.sin() @ w, (x,), (x.cos(),))[1]
    g1 = m.autograd.grad((out ** 2).sum(), (x, w), create_graph=True)
    g2 = m.autograd.grad(sum((g ** 2).sum() for g in g1), (x, w))
    return g1, g2


@pytest.mark.parametrize("case", ["grad", "vmap_captured", "jacrev", "vjp", "jvp"])
def test_history_through_transforms(case):
    """Tensors that require grad outside a transform (inputs, or read from the closure) get gradients through
    it, at first and second order."""
    _same(_history(torch, case), _history(tl, case))


def test_backward_inside_a_transform():
    """.backward() inside a transformed function runs the tape on JAX tracers (torch refuses requires_grad_ there;
    torchlike allows it)."""
    def f(x):
        x = x.detach().requires_grad_()
        (x.sin().sum()).backward()
        return x.grad
    np.testing.assert_allclose(np.asarray(tl.func.vmap(f)(tl.tensor(X))), np.cos(X))


def test_vmap_randomness():
    draws = {mode: tl.func.vmap(lambda x: tl.rand(3, dtype=tl.float64) + x * 0, randomness=mode)(tl.tensor(X))
             for mode in ("different", "same")}
    d, s = np.asarray(draws["different"]), np.asarray(draws["same"])
    assert d.shape == s.shape == (4, 3)
    assert len({tuple(r) for r in d}) == 4 and len({tuple(r) for r in s}) == 1
    assert ((d >= 0) & (d < 1)).all()
    drop = tl.func.vmap(lambda x: tl.nn.functional.dropout(x, 0.5), randomness="different")(tl.ones(64, 32))
    kept = np.asarray(drop) > 0
    assert 0.3 < kept.mean() < 0.7 and len({tuple(r) for r in kept}) == 64


ERRORS = {
    "grad_non_scalar": lambda m: m.func.grad(lambda x: x * 2)(m.tensor(X)),
    "grad_not_tensor": lambda m: m.func.grad(lambda x: 3.0)(m.tensor(X)),
    "grad_aux_not_tuple": lambda m: m.func.grad(lambda x: x.sum(), has_aux=True)(m.tensor(X)),
    "grad_argnum_range": lambda m: m.func.grad(lambda x: x.sum(), argnums=1)(m.tensor(X)),
    "grad_not_a_tensor_input": lambda m: m.func.grad(lambda x: x.sum())(3.0),
    "vmap_sizes": lambda m: m.func.vmap(lambda x, y: x + y)(m.tensor(X), m.tensor(W)),
    "vmap_non_tensor_in_dim": lambda m: m.func.vmap(lambda x, y: x + y, in_dims=(0, 0))(m.tensor(X), 1.0),
    "vmap_control_flow": lambda m: m.func.vmap(lambda x: x if x.sum() > 0 else -x)(m.tensor(X)),
    "vmap_item": lambda m: m.func.vmap(lambda x: x.sum().item())(m.tensor(X)),
    "vmap_random_error": lambda m: m.func.vmap(lambda x: m.rand(3) + x)(m.tensor(X)),
    "vmap_in_dim_range": lambda m: m.func.vmap(lambda x: x, in_dims=2)(m.tensor(X)),
    "vmap_in_dims_structure": lambda m: m.func.vmap(lambda x: x, in_dims=(0, 0))(m.tensor(X)),
    "vmap_out_dim_range": lambda m: m.func.vmap(lambda x: x, out_dims=3)(m.tensor(X)),
    "vmap_returns_float": lambda m: m.func.vmap(lambda x: 1.0)(m.tensor(X)),
    "vmap_randomness_value": lambda m: m.func.vmap(lambda x: x, randomness="foo")(m.tensor(X)),
    "vmap_in_dims_none": lambda m: m.func.vmap(lambda x: x, in_dims=None)(m.tensor(X)),
    "vjp_cotangent_shape": lambda m: m.func.vjp(lambda x: x.sin(), m.tensor(X))[1](m.ones(2)),
    "jvp_tangent_shape": lambda m: m.func.jvp(lambda x: x.sin(), (m.tensor(X),), (m.ones(2),)),
    "jvp_primals_tuple": lambda m: m.func.jvp(lambda x: x.sin(), m.tensor(X), (m.ones(3),)),
    "functional_call_strict": lambda m: m.func.functional_call(m.nn.Linear(2, 2), {"weight": m.ones(2, 2)},
                                                               (m.ones(2),), strict=True),
    "functional_call_repeated": lambda m: m.func.functional_call(
        m.nn.Linear(2, 2), ({"weight": m.ones(2, 2)}, {"weight": m.ones(2, 2)}), (m.ones(2),)),
    "stack_module_state_empty": lambda m: m.func.stack_module_state([]),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    expected = error_of(lambda: ERRORS[name](torch))
    assert expected is not None
    actual = error_of(lambda: ERRORS[name](tl))
    if name == "vmap_in_dims_structure":  # (the tree structures print in each library's own notation)
        expected, actual = (expected[0], expected[1][:100]), (actual[0], actual[1][:100])
    assert actual == expected


def _captured_write(m, kind):
    c = m.zeros(2, 3)
    view = c[1]
    x = m.tensor(X[0])
    if kind == "grad_add_":
        m.func.grad(lambda r: (c.add_(r) * r).sum())(x)
    elif kind == "grad_view":
        m.func.grad(lambda r: (view.mul_(r) * r).sum())(x)
    elif kind == "grad_setitem":
        m.func.grad(lambda r: (c.__setitem__(0, r), (c * r).sum())[1])(x)
    else:
        m.func.vmap(lambda r: c[0].mul_(r))(m.tensor(X[:2, :3]))


@pytest.mark.parametrize("kind", ["grad_add_", "grad_view", "grad_setitem", "vmap_mul_"])
def test_write_into_captured_tensor(kind):
    """torch's error, up to the name of torch's internal op; the tensor keeps its data and version."""
    expected = error_of(lambda: _captured_write(torch, kind))
    actual = error_of(lambda: _captured_write(tl, kind))
    cut = expected[1].index("(aten::") if "(aten::" in expected[1] else len(expected[1])
    assert (actual[0], actual[1][:cut]) == (expected[0], expected[1][:cut])


def test_local_tensors_may_be_written():
    def f(m, r):
        out = m.zeros(2, 3, dtype=m.float64)
        out[0] = r * 2
        out[1].add_(r.sin())
        return (out * out).sum()
    _same(torch.func.grad(lambda r: f(torch, r))(torch.tensor(X[0])), tl.func.grad(lambda r: f(tl, r))(tl.tensor(X[0])))


def test_no_state_left_behind_after_errors():
    """A failing vmap restores creation's keys; a captured tensor is not left holding a tracer."""
    w = tl.tensor(W, requires_grad=True)
    with pytest.raises(RuntimeError):
        tl.func.vmap(lambda x: (x @ w).sum().item())(tl.tensor(X))
    assert tl.ops.creation._key_hook is None and type(w._data).__name__ == "ArrayImpl"
    c = tl.zeros(3)
    with pytest.raises(RuntimeError):
        tl.func.grad(lambda r: (c.add_(r) * r).sum())(tl.tensor(X[0]))
    assert type(c._data).__name__ == "ArrayImpl" and c._version == 0 and not c.any()
    assert tl.rand(2).shape == (2,)


MORE_ERRORS = {
    "jacrev_aux": lambda m: m.func.jacrev(lambda x: x, has_aux=True)(m.ones(3)),
    "jacfwd_aux": lambda m: m.func.jacfwd(lambda x: x, has_aux=True)(m.ones(3)),
    "vjp_aux": lambda m: m.func.vjp(lambda x: x, m.ones(3), has_aux=True),
    "jvp_aux": lambda m: m.func.jvp(lambda x: x, (m.ones(3),), (m.ones(3),), has_aux=True),
    "jacrev_float": lambda m: m.func.jacrev(lambda x: 1.0)(m.ones(3)),
    "jacfwd_float": lambda m: m.func.jacfwd(lambda x: 1.0)(m.ones(3)),
    "vjp_float": lambda m: m.func.vjp(lambda x: 1.0, m.ones(3)),
    "jvp_float": lambda m: m.func.jvp(lambda x: 1.0, (m.ones(3),), (m.ones(3),)),
    "jvp_tangents_tuple": lambda m: m.func.jvp(lambda x: x, (m.ones(3),), m.ones(3)),
}


@pytest.mark.parametrize("name", list(MORE_ERRORS))
def test_output_errors(name):
    expected, actual = error_of(lambda: MORE_ERRORS[name](torch)), error_of(lambda: MORE_ERRORS[name](tl))
    if name == "jvp_tangents_tuple":  # (the tree structures print in each library's own notation)
        expected, actual = (expected[0], expected[1][:170]), (actual[0], actual[1][:170])
    assert expected is not None and actual == expected


@pytest.mark.parametrize("case", [
    (lambda m, a, j: a[j], ((2, 3), (2,)), (0, 0)),
    (lambda m, a, j: a[:, j], ((2, 2, 3), (2,)), (0, 0)),
    (lambda m, a, j: a[j] * 2, ((6,), (3,)), (None, 0)),
    (lambda m, a, j: m.nn.functional.one_hot(j, 6) * a[j], ((6,), (3,)), (None, 0)),
])
def test_vmap_over_index_values(case):
    """Each example's 0-d index (vmap's) selects as torch's, and one_hot of traced values checks them in the
    program: no host read (torch.func's batching rules), same values as torch.func.vmap."""
    fn, (shape_a, shape_j), in_dims = case
    a_np = np.arange(np.prod(shape_a), dtype=np.float32).reshape(shape_a)
    j_np = np.array([0, 2, 1][:shape_j[0]], np.int64)
    got, want = (m.func.vmap(lambda a, j, m=m: fn(m, a, j), in_dims=in_dims)(m.tensor(a_np), m.tensor(j_np))
                 for m in (tl, torch))
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_compiled_one_hot_checks_its_values_in_the_program():
    f = tl.compile(lambda b: tl.nn.functional.one_hot(b, 3) * 2)
    assert f(tl.tensor([0, 2])).tolist() == [[2, 0, 0], [0, 0, 2]]
    with pytest.raises(RuntimeError, match="^Class values must be smaller than num_classes.$"):
        f(tl.tensor([0, 3]))
    assert f(tl.tensor([1, 2])).tolist() == [[0, 2, 0], [0, 0, 2]] and f.compiles == 1


def test_vmap_and_compile_over_validated_distributions():
    """Distributions validate their parameters and values; under vmap (torch.func's) the examples are traced and
    not read, under torchlike.compile the check is part of the program and raises after the call."""
    import torch.distributions  # noqa: F401
    for m in (tl, torch):
        d = m.distributions
        got = m.func.vmap(lambda mu, d=d, m=m: d.Normal(mu, 1.0).log_prob(m.zeros(2)))(m.zeros(3, 2))
        np.testing.assert_allclose(got.numpy(), np.full((3, 2), -0.9189385), rtol=1e-6)
        got = m.func.vmap(lambda p, d=d, m=m: d.Categorical(probs=p).log_prob(m.tensor(1)))(m.ones(2, 3) / 3)
        np.testing.assert_allclose(got.numpy(), np.log([1 / 3, 1 / 3]), rtol=1e-6)
    f = tl.compile(lambda s: tl.distributions.Normal(tl.zeros(2), s).log_prob(tl.zeros(2)))
    np.testing.assert_allclose(f(tl.ones(2)).numpy(), [-0.9189385] * 2, rtol=1e-6)
    with pytest.raises(ValueError, match="^Expected parameter scale"):
        f(-tl.ones(2))
