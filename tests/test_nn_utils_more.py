"""nn.utils against torch 2.13: parameters_to_vector / vector_to_parameters, weight_norm / spectral_norm (hook
and parametrization forms), parametrize (register / remove / cached / chains / right_inverse / several
originals), stateless.functional_call, the conv/linear-batchnorm fusions, Module.to_empty / share_memory and
DataParallel. Modules are built in torch (seeded), their state_dict copied into torchlike through NumPy; values,
gradients, state_dict keys and node names are compared.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, assert_same_error

RNG = np.random.default_rng(5)
X = RNG.standard_normal((2, 4))
XW = RNG.standard_normal((2, 5))
TOL = dict(rtol=1e-10, atol=1e-12)


def orth_map(m, name):
    """One map of parametrizations.orthogonal on a square matrix: torchlike's op, or torch's composite."""
    if m is not torch:  # (for test_higher_order)
        ops = __import__("torchlike.nn.utils.parametrizations", fromlist=["_"])
        return lambda x: getattr(ops, "_orth_" + name)(x, n=4, k=4)
    if name == "householder":
        return lambda x: torch.linalg.householder_product(x.tril(-1), 2 / (1 + (x.tril(-1) ** 2).sum(-2)))
    skew = (lambda x: x.tril() - x.tril().mT)
    if name == "exp":
        return lambda x: torch.linalg.matrix_exp(skew(x))
    return lambda x: torch.linalg.solve(torch.eye(4, dtype=x.dtype) - skew(x) / 2, torch.eye(4, dtype=x.dtype)
                                        + skew(x) / 2)


def copy_state(theirs, ours):
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours


def pair(build):
    """build(lib) for torch (seeded) and torchlike, float64, torchlike's state copied from torch's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        theirs = build(torch).double()
        ours = build(tl).double()
    return theirs, copy_state(theirs, ours)


def grads(mod, x):
    lib = tl if isinstance(mod, tl.nn.Module) else torch
    x = lib.tensor(x, requires_grad=True)
    out = mod(x)
    ps = [p for p in mod.parameters()]
    return out, lib.autograd.grad((out ** 3).sum(), [x] + ps)


def test_parameters_to_vector_and_back():
    theirs, ours = pair(lambda m: m.nn.Sequential(m.nn.Linear(4, 3), m.nn.Linear(3, 2)))
    v1, v2 = tl.nn.utils.parameters_to_vector(ours.parameters()), torch.nn.utils.parameters_to_vector(
        theirs.parameters())
    assert_same(v1, v2)
    assert v1.grad_fn.name() == v2.grad_fn.name() == "CatBackward0"
    new = RNG.standard_normal(v2.numel())
    tl.nn.utils.vector_to_parameters(tl.tensor(new), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs.parameters())
    assert_same(list(ours.parameters()), list(theirs.parameters()))
    assert all(p.is_leaf and p.requires_grad for p in ours.parameters())
    assert_same_error(lambda m: m.nn.utils.vector_to_parameters([1.0], m.nn.Linear(2, 2).parameters()))


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    theirs, ours = pair(lambda m: m.nn.utils.parametrizations.weight_norm(m.nn.Linear(4, 3), dim=dim))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert type(ours).__name__ == type(theirs).__name__ == "ParametrizedLinear"
    (o1, g1), (o2, g2) = grads(ours, X), grads(theirs, X)
    assert_same(o1, o2, **TOL) and assert_same(g1, g2, **TOL)
    assert ours.weight.grad_fn.name() == theirs.weight.grad_fn.name()


def test_weight_norm_hook_and_removal():
    theirs, ours = pair(lambda m: m.nn.utils.weight_norm(m.nn.Linear(4, 3), dim=1))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight_g", "weight_v"]
    (o1, g1), (o2, g2) = grads(ours, X), grads(theirs, X)
    assert_same(o1, o2, **TOL) and assert_same(g1, g2, **TOL)
    assert ours.weight.grad_fn.name() == theirs.weight.grad_fn.name() == "WeightNormInterfaceBackward0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tl.nn.utils.remove_weight_norm(ours), torch.nn.utils.remove_weight_norm(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert_same(ours.weight, theirs.weight, **TOL)
    assert_same_error(lambda m: m.nn.utils.remove_weight_norm(m.nn.Linear(2, 2)))
    # the old state dict loads into the parametrization
    new = tl.nn.utils.parametrizations.weight_norm(tl.nn.Linear(4, 3).double(), dim=1)
    sd = pair(lambda m: m.nn.utils.weight_norm(m.nn.Linear(4, 3), dim=1))[0].state_dict()
    new.load_state_dict({k: tl.tensor(v.numpy()) for k, v in sd.items()})
    assert_same(new.parametrizations.weight.original0, sd["weight_g"])


@pytest.mark.parametrize("form", ["hook", "parametrization"])
def test_spectral_norm(form):
    def build(m):
        fn = m.nn.utils.spectral_norm if form == "hook" else m.nn.utils.parametrizations.spectral_norm
        return fn(m.nn.Linear(4, 3), n_power_iterations=2)
    theirs, ours = pair(build)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for train in (True, False):
        theirs.train(train), ours.train(train)
        (o1, g1), (o2, g2) = grads(ours, X), grads(theirs, X)
        assert_same(o1, o2, **TOL) and assert_same(g1, g2, **TOL)
    assert_same(list(ours.buffers()), list(theirs.buffers()), **TOL)
    if form == "hook":
        tl.nn.utils.remove_spectral_norm(ours), torch.nn.utils.remove_spectral_norm(theirs)
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert_same(ours.weight, theirs.weight, **TOL)


def test_spectral_norm_estimates_the_largest_singular_value():
    tl.manual_seed(0)  # (the power iteration starts from random vectors: a fixed start, whatever ran before)
    m = tl.nn.utils.parametrizations.spectral_norm(tl.nn.Linear(5, 4).double())
    assert abs(np.linalg.svd(m.weight.detach().numpy(), compute_uv=False)[0] - 1) < 1e-6


class Symmetric:
    """A parametrization (as a Module of each library): X -> triu(X) + triu(X, 1).T."""

    @staticmethod
    def make(lib, with_inverse=True):
        class Sym(lib.nn.Module):
            def forward(self, x):
                return x.triu() + x.triu(1).transpose(0, 1)
        if with_inverse:
            Sym.right_inverse = lambda self, a: a.triu()
        return Sym()


class Scale:
    @staticmethod
    def make(lib):
        class Twice(lib.nn.Module):
            def forward(self, x):
                return 2 * x

            def right_inverse(self, x):
                return x / 2
        return Twice()


class Split:
    @staticmethod
    def make(lib):
        class Sum(lib.nn.Module):
            def forward(self, a, b):
                return a + b

            def right_inverse(self, x):
                return x * 0.25, x * 0.75
        return Sum()


def test_parametrize_register_chain_cached_remove():
    P = lambda m: m.nn.utils.parametrize  # noqa: E731
    res = []
    w0, b0 = RNG.standard_normal((4, 4)), RNG.standard_normal(4)
    for lib in (torch, tl):
        mod = lib.nn.Linear(4, 4).double()
        mod.load_state_dict({"weight": lib.tensor(w0), "bias": lib.tensor(b0)})
        P(lib).register_parametrization(mod, "weight", Symmetric.make(lib))
        P(lib).register_parametrization(mod, "weight", Scale.make(lib))
        assert P(lib).is_parametrized(mod) and P(lib).is_parametrized(mod, "weight")
        assert not P(lib).is_parametrized(mod, "bias")
        assert P(lib).type_before_parametrizations(mod) is lib.nn.Linear
        x = lib.tensor(X, requires_grad=True)
        with P(lib).cached():
            out = mod(x) + mod(x)
            same = mod.weight is mod.weight
        g = lib.autograd.grad(out.sum(), [x, mod.parametrizations.weight.original])
        with lib.no_grad():
            mod.weight = lib.tensor(np.eye(4) * 3)  # right_inverse of the chain
        orig = mod.parametrizations.weight.original.clone()
        names = list(mod.state_dict())
        rep = repr(mod)
        P(lib).remove_parametrizations(mod, "weight")
        res.append((out, g, same, orig, names, rep, type(mod).__name__, mod.weight.clone(), mod.weight.requires_grad))
    b, a = res
    for k in (0, 1, 3, 7):
        assert_same(a[k], b[k], **TOL)
    assert a[2] == b[2] is True
    assert a[4] == b[4] and a[5] == b[5] and a[6] == b[6] == "Linear" and a[8] == b[8]


def test_parametrize_several_originals_and_leave_unparametrized():
    res = []
    w = RNG.standard_normal((3, 4))
    for lib in (tl, torch):
        mod = lib.nn.Linear(4, 3, bias=False).double()
        with lib.no_grad():
            mod.weight.copy_(lib.tensor(w))
        P = lib.nn.utils.parametrize
        P.register_parametrization(mod, "weight", Split.make(lib))
        o0, o1 = mod.parametrizations.weight.original0, mod.parametrizations.weight.original1
        names = list(mod.state_dict())
        g = lib.autograd.grad(mod(lib.tensor(X)).pow(2).sum(), [o0, o1])
        P.remove_parametrizations(mod, "weight")
        res.append((o0, o1, g, names, type(mod.weight).__name__, mod.weight))
    for k in (0, 1, 2, 5):
        assert_same(res[0][k], res[1][k], **TOL)
    assert res[0][3] == res[1][3] and res[0][4] == res[1][4]


PARAMETRIZE_ERRORS = {
    "no_such_tensor": lambda m: m.nn.utils.parametrize.register_parametrization(m.nn.Linear(2, 2), "w",
                                                                                Scale.make(m)),
    "shape_change": lambda m: m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(2, 3), "weight", m.nn.Flatten(0)),
    "remove_missing": lambda m: m.nn.utils.parametrize.remove_parametrizations(m.nn.Linear(2, 2), "weight"),
    "no_right_inverse": lambda m: setattr(m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(2, 2), "weight", Symmetric.make(m, False)), "weight", m.zeros(2, 2)),
    "leave_unparametrized_sequence": lambda m: m.nn.utils.parametrize.remove_parametrizations(
        m.nn.utils.parametrize.register_parametrization(m.nn.Linear(2, 2), "weight", Split.make(m)), "weight",
        leave_parametrized=False),
    "empty_list": lambda m: m.nn.utils.parametrize.ParametrizationList([], m.zeros(2)),
    "spectral_dim": lambda m: m.nn.utils.parametrizations.spectral_norm(m.nn.Linear(2, 2), dim=2),
    "spectral_iterations": lambda m: m.nn.utils.spectral_norm(m.nn.Linear(2, 2), n_power_iterations=0),
    "spectral_twice": lambda m: m.nn.utils.spectral_norm(m.nn.utils.spectral_norm(m.nn.Linear(2, 2))),
    "pickle": lambda m: __import__("pickle").dumps(m.nn.utils.parametrize.register_parametrization(
        m.nn.Linear(2, 2), "weight", m.nn.Identity())),
}


@pytest.mark.parametrize("name", PARAMETRIZE_ERRORS)
def test_parametrize_errors(name):
    assert_same_error(PARAMETRIZE_ERRORS[name])


def test_functional_call():
    theirs, ours = pair(lambda m: m.nn.Sequential(m.nn.Linear(4, 3), m.nn.BatchNorm1d(3)))
    new = {"0.weight": RNG.standard_normal((3, 4)), "1.running_mean": RNG.standard_normal(3)}
    res = []
    for mod in (ours, theirs):
        lib = tl if mod is ours else torch
        params = {k: lib.tensor(v, requires_grad=k.endswith("weight")) for k, v in new.items()}
        before = [t.clone() for t in mod.state_dict().values()]
        mod.eval()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = lib.nn.utils.stateless.functional_call(mod, params, (lib.tensor(X),))
        g = lib.autograd.grad(out.sum(), params["0.weight"])
        after = list(mod.state_dict().values())
        res.append((out, g, before, after))
    assert_same(res[0][0], res[1][0], **TOL) and assert_same(res[0][1], res[1][1], **TOL)
    assert_same(res[0][2], res[0][3]) and assert_same(res[0][3], res[1][3])

    def strict(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.nn.utils.stateless.functional_call(m.nn.Linear(2, 2), {"weight": m.zeros(2, 2), "w": m.zeros(1)},
                                                 (m.zeros(2),), strict=True)
    assert_same_error(strict)

    def data_parallel(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m.nn.utils.stateless.functional_call(m.nn.DataParallel(m.nn.Linear(2, 2)), {}, (m.zeros(2),))
    assert_same_error(data_parallel)


def test_functional_call_tied_weights():
    res = []
    for lib in (tl, torch):
        mod = lib.nn.Sequential(lib.nn.Linear(2, 2, bias=False), lib.nn.Linear(2, 2, bias=False)).double()
        mod[1].weight = mod[0].weight
        with lib.no_grad():
            mod[0].weight.copy_(lib.tensor([[0.5, -1.0], [2.0, 0.25]]))
        w = lib.tensor(np.arange(4.0).reshape(2, 2))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res.append([lib.nn.utils.stateless.functional_call(mod, {"0.weight": w}, lib.tensor(X[:, :2]),
                                                               tie_weights=t) for t in (True, False)])
    assert_same(res[0], res[1], **TOL)


@pytest.mark.parametrize("kind", ["conv", "conv_transpose_weights", "linear"])
def test_fusion(kind):
    if kind == "conv":
        theirs, ours = pair(lambda m: m.nn.Sequential(m.nn.Conv2d(2, 3, 3), m.nn.BatchNorm2d(3)))
        x = RNG.standard_normal((2, 2, 5, 5))
    else:
        theirs, ours = pair(lambda m: m.nn.Sequential(m.nn.Linear(4, 3, bias=kind == "linear"), m.nn.BatchNorm1d(3)))
        x = X
    res = []
    for mod in (ours, theirs):
        lib = tl if mod is ours else torch
        with lib.no_grad():
            mod[1].running_mean.copy_(lib.tensor(np.linspace(-1, 1, 3)))
            mod[1].running_var.copy_(lib.tensor(np.linspace(0.5, 2, 3)))
            mod[1].weight.copy_(lib.tensor(np.linspace(0.5, 1.5, 3)))
        mod.eval()
        U = lib.nn.utils
        if kind == "conv":
            fused = U.fuse_conv_bn_eval(mod[0], mod[1])
        elif kind == "linear":
            fused = U.fuse_linear_bn_eval(mod[0], mod[1])
        else:  # the weight function alone, transpose layout
            fused = U.fuse_conv_bn_weights(mod[0].weight.reshape(4, 3, 1), None, mod[1].running_mean,
                                           mod[1].running_var, 1e-3, None, mod[1].bias, transpose=True)
            res.append((list(fused), [type(p).__name__ for p in fused], [p.requires_grad for p in fused]))
            continue
        y = lib.tensor(x)
        res.append(([fused(y), mod(y)], [type(p).__name__ for p in fused.parameters()], fused is mod[0]))
    assert_same(res[0][0], res[1][0], **TOL)
    assert res[0][1:] == res[1][1:]
    if kind != "conv_transpose_weights":
        assert_same(res[0][0][0], res[0][0][1].detach(), rtol=1e-9)
    assert_same_error(lambda m: m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3)))


def test_to_empty_share_memory_data_parallel():
    for lib in (tl, torch):
        mod = lib.nn.Linear(3, 2)
        assert mod.to_empty(device="cpu") is mod and mod.weight.shape == (2, 3) and mod.weight.requires_grad
        assert isinstance(mod.weight, lib.nn.Parameter) and mod.share_memory() is mod
    theirs, ours = pair(lambda m: m.nn.DataParallel(m.nn.Linear(4, 3)))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["module.weight", "module.bias"]
    assert repr(ours) == repr(theirs) and ours.device_ids == theirs.device_ids == []
    (o1, g1), (o2, g2) = grads(ours, X), grads(theirs, X)
    assert_same(o1, o2, **TOL) and assert_same(g1, g2, **TOL)
    assert type(ours.module).__name__ == "Linear"


@pytest.mark.parametrize("dim", [0, 1])
def test_weight_norm_second_order_is_the_composites(dim):
    """torch's fused _weight_norm (WeightNormInterfaceBackward0) gets second derivatives in v wrong (its double
    backward treats the saved norms as constants); torchlike's equals torch's composite v * (g / ||v||)."""
    from torchlike.nn.utils.weight_norm import _weight_norm
    g_arr = RNG.standard_normal((3, 1) if dim == 0 else (1, 4))
    res = []
    for lib, fn in ((tl, _weight_norm), (torch, lambda v, g, d: v * (g / torch.norm_except_dim(v, 2, d)))):
        v, g = lib.tensor(X.repeat(2, 0)[:3], requires_grad=True), lib.tensor(g_arr, requires_grad=True)
        first = lib.autograd.grad((fn(v, g, dim) ** 3).sum(), [v, g], create_graph=True)
        res.append((first, lib.autograd.grad(sum((a * a).sum() for a in first), [v, g])))
    assert_same(res[0], res[1], rtol=1e-9, atol=1e-11)


ORTHOGONAL = [((3, 3), {}), ((4, 4), {"orthogonal_map": "cayley"}), ((3, 5), {"use_trivialization": False}),
              ((5, 3), {"orthogonal_map": "householder", "use_trivialization": False}),
              ((3, 3), {"orthogonal_map": "householder"}), ((4, 2), {})]


@pytest.mark.parametrize("shape,kwargs", ORTHOGONAL)
def test_orthogonal(shape, kwargs):
    w0 = RNG.standard_normal(shape)
    res = []
    for lib in (tl, torch):
        m = lib.nn.Linear(shape[1], shape[0], bias=False).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w0))
        lib.nn.utils.parametrizations.orthogonal(m, **kwargs)
        original = m.parametrizations.weight.original
        x = lib.tensor(XW[:, :shape[1]], requires_grad=True)
        g = lib.autograd.grad((m(x) ** 3).sum(), [x, original])
        res.append((m.weight, original, g, m.weight.grad_fn.name(), list(m.state_dict())))
    assert_same(res[0][0], res[1][0].detach(), **TOL) and assert_same(res[0][1], res[1][1].detach(), **TOL)
    w = res[0][0].detach().numpy()
    small = min(shape)
    np.testing.assert_allclose(w.T @ w if shape[0] > shape[1] else w @ w.T, np.eye(small), atol=1e-12)
    if shape != (4, 2):  # (a non-square matrix with trivialization: torch draws random columns for its base)
        assert_same(res[0][2], res[1][2], rtol=1e-9, atol=1e-11)
    assert res[0][3:] == res[1][3:]


def test_orthogonal_errors():
    assert_same_error(lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(2, 2), orthogonal_map="qr"))
    assert_same_error(lambda m: m.nn.utils.parametrizations.orthogonal(m.nn.Linear(2, 2), name="bias"))
    assert_same_error(lambda m: setattr(m.nn.utils.parametrizations.orthogonal(
        m.nn.Linear(2, 2), use_trivialization=False), "weight", m.eye(2)))
