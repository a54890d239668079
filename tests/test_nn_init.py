"""torchlike.nn.init and torchlike.nn.utils.clip_grad against torch 2.13.

Initialisers are random, so they are compared through statistics (bounds, mean, std, orthogonality) on
60,000-element tensors, against the distribution torch documents and against torch's own sample; the
deterministic ones (constant_, eye_, dirac_, calculate_gain) and every error, warning and version bump are
compared exactly. clip_grad_norm_ / clip_grad_value_ run on the same gradients in both libraries.

Misuse cases covered: fans of a 1-D tensor, an unknown fan mode, unsupported nonlinearities and bad
negative slopes, eye_/dirac_/orthogonal_/sparse_ on the wrong number of dims, dirac_ groups not dividing
dim 0, integer tensors, uniform_ with a > b, normal_ with std < 0, zero-element kaiming, trunc_normal_ with
the mean far outside [a, b], non-finite total norms with error_if_nonfinite, an empty parameter generator.
"""
import math
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

RNG = np.random.default_rng(11)
SHAPE = (200, 300)  # fan_in 300, fan_out 200; 60,000 samples: std error of a mean ~ 0.004 sigma


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def sample(name, *args, shape=SHAPE, dtype=tl.float32, **kw):
    """Run torchlike's initialiser on a fresh Parameter; returns (values, version bump, parameter)."""
    p = tl.nn.Parameter(tl.empty(*shape, dtype=dtype))
    v = p._version
    out = getattr(tl.nn.init, name)(p, *args, **kw)
    assert out is p and p.requires_grad and p.grad_fn is None and p.dtype == dtype
    return np.asarray(p._data).astype(np.float64), p._version - v, p


def torch_sample(name, *args, shape=SHAPE, **kw):
    p = torch.nn.Parameter(torch.empty(*shape))
    v = p._version
    getattr(torch.nn.init, name)(p, *args, **kw)
    return p.detach().double().numpy(), p._version - v


def check_stats(values, mean, std, tol=0.02):
    assert abs(values.mean() - mean) < tol * std + 1e-12, (values.mean(), mean)
    assert abs(values.std() - std) < tol * std, (values.std(), std)


# ----- calculate_gain and fans ------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("conv_transpose3d",), ("sigmoid",), ("tanh",),
                                  ("relu",), ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 3), ("selu",)])
def test_calculate_gain(args):
    a, b = tl.nn.init.calculate_gain(*args), torch.nn.init.calculate_gain(*args)
    assert a == b and type(a) is type(b)


def test_gain_and_fan_errors():
    def run(lib):
        init = lib.nn.init
        return [err(lambda: init.calculate_gain("softmax")), err(lambda: init.calculate_gain("leaky_relu", True)),
                err(lambda: init.calculate_gain("leaky_relu", "x")),
                err(lambda: init.xavier_uniform_(lib.empty(5))),
                err(lambda: init.kaiming_normal_(lib.empty(3, 4), mode="fan_avg")),
                init._calculate_fan_in_and_fan_out(lib.empty(6, 4, 3, 2)),
                init._calculate_correct_fan(lib.empty(6, 4, 3), "FAN_OUT")]
    assert run(tl) == run(torch)


# ----- uniform / normal families ------------------------------------------------------------------------------
def test_uniform_normal_constant():
    u, bump, _ = sample("uniform_", -2.0, 3.0)
    assert bump == 1 and u.min() >= -2.0 and u.max() < 3.0
    check_stats(u, 0.5, 5 / math.sqrt(12))
    n, bump, _ = sample("normal_", 1.5, 0.5)
    assert bump == 1
    check_stats(n, 1.5, 0.5)
    d, _, p = sample("normal_", shape=(4, 5), dtype=tl.float64)
    assert p.dtype == tl.float64
    for name, args, value in (("constant_", (0.3,), 0.3), ("ones_", (), 1.0), ("zeros_", (), 0.0)):
        c, bump, p = sample(name, *args, shape=(3, 4))
        _, tbump = torch_sample(name, *args, shape=(3, 4))
        assert bump == tbump == 1 and np.all(c == np.float32(value))


def test_defaults_match_torch_distribution():
    # uniform_ with no bounds: U(0, 1); normal_: N(0, 1); both libraries' samples agree statistically
    for name, mean, std in (("uniform_", 0.5, 1 / math.sqrt(12)), ("normal_", 0.0, 1.0)):
        ours, _, _ = sample(name)
        theirs, _ = torch_sample(name)
        check_stats(ours, mean, std)
        check_stats(theirs, mean, std)


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier(gain):
    fan_in, fan_out = 300, 200
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    u, bump, _ = sample("xavier_uniform_", gain)
    bound = math.sqrt(3.0) * std
    assert bump == 1 and np.abs(u).max() <= bound * (1 + 1e-6) and np.abs(u).max() > 0.99 * bound
    check_stats(u, 0.0, std)
    n, bump, _ = sample("xavier_normal_", gain)
    assert bump == 1
    check_stats(n, 0.0, std)


@pytest.mark.parametrize("kw", [{}, {"a": math.sqrt(5)}, {"mode": "fan_out", "nonlinearity": "relu"},
                                {"nonlinearity": "tanh"}, {"a": 0.2, "mode": "fan_in"}])
def test_kaiming(kw):
    fan = 200 if kw.get("mode") == "fan_out" else 300
    gain = torch.nn.init.calculate_gain(kw.get("nonlinearity", "leaky_relu"), kw.get("a", 0))
    std = gain / math.sqrt(fan)
    u, bump, _ = sample("kaiming_uniform_", **kw)
    assert bump == 1 and np.abs(u).max() <= math.sqrt(3) * std * (1 + 1e-6)
    check_stats(u, 0.0, std)
    theirs, _ = torch_sample("kaiming_uniform_", **kw)
    assert abs(theirs.std() - u.std()) < 0.03 * std
    n, bump, _ = sample("kaiming_normal_", **kw)
    assert bump == 1
    check_stats(n, 0.0, std)


def test_kaiming_conv_shaped_fans():
    u, _, _ = sample("kaiming_uniform_", shape=(64, 16, 3, 3), a=math.sqrt(5))
    bound = 1 / math.sqrt(16 * 9)  # Conv2d's default weight init
    assert np.abs(u).max() <= bound and np.abs(u).max() > 0.99 * bound


def test_trunc_normal():
    t, bump, _ = sample("trunc_normal_", 0.5, 1.0, -1.0, 1.5)
    assert bump >= 1 and t.min() >= -1.0 and t.max() <= 1.5
    theirs, _ = torch_sample("trunc_normal_", 0.5, 1.0, -1.0, 1.5)
    # the truncated normal's mean and std, analytically
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    al, be = -1.5, 1.0
    z = cdf(be) - cdf(al)
    mean = 0.5 + (phi(al) - phi(be)) / z
    std = math.sqrt(1 + (al * phi(al) - be * phi(be)) / z - ((phi(al) - phi(be)) / z) ** 2)
    check_stats(t, mean, std)
    check_stats(theirs, mean, std)
    narrow, _, _ = sample("trunc_normal_", 0.0, 0.02, -0.04, 0.04)  # ViT's usual call
    assert np.abs(narrow).max() <= 0.04
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        sample("trunc_normal_", 10.0, 1.0, shape=(3,))
    with warnings.catch_warnings(record=True) as w2:
        warnings.simplefilter("always")
        torch.nn.init.trunc_normal_(torch.empty(3), 10.0, 1.0)
    assert [str(m.message) for m in w] == [str(m.message) for m in w2]


def test_eye_and_dirac_exact():
    def run(lib):
        out = []
        for shape in ((3, 5), (4, 2)):
            t = lib.nn.Parameter(lib.empty(*shape))
            v = t._version
            lib.nn.init.eye_(t)
            out.append((t.tolist(), t._version - v, t.requires_grad))
        for shape, groups in (((4, 2, 3), 1), ((4, 2, 3, 3), 2), ((2, 3, 1, 3, 3), 1)):
            t = lib.empty(*shape)
            v = t._version
            lib.nn.init.dirac_(t, groups)
            out.append((t.tolist(), t._version - v))
        return out
    assert run(tl) == run(torch)


def test_orthogonal():
    for shape, gain in (((6, 10), 1.0), ((10, 6), 2.0), ((4, 2, 3), 1.0)):
        q, bump, _ = sample("orthogonal_", gain, shape=shape)
        _, tbump = torch_sample("orthogonal_", gain, shape=shape)
        assert bump == tbump == 2
        m = q.reshape(shape[0], -1)
        small = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
        np.testing.assert_allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-5)


def test_sparse():
    s, bump, _ = sample("sparse_", 0.3, 0.5, shape=(10, 400))
    _, tbump = torch_sample("sparse_", 0.3, 0.5, shape=(10, 400))
    assert bump == tbump == 401
    assert np.all((s == 0).sum(axis=0) >= 3)  # ceil(0.3 * 10) zeros per column
    nonzero = s[s != 0]
    check_stats(nonzero, 0.0, 0.5, tol=0.05)


def test_init_errors_and_warnings():
    def run(lib):
        init = lib.nn.init
        out = [err(lambda: init.eye_(lib.empty(3))), err(lambda: init.dirac_(lib.empty(3, 3))),
               err(lambda: init.dirac_(lib.empty(3, 2, 2), groups=2)), err(lambda: init.orthogonal_(lib.empty(3))),
               err(lambda: init.sparse_(lib.empty(3, 2, 1), 0.1)),
               err(lambda: init.uniform_(lib.empty(3, dtype=lib.int64))),
               err(lambda: init.normal_(lib.empty(3, dtype=lib.int64))),
               err(lambda: init.uniform_(lib.empty(3), 1, 0)), err(lambda: init.normal_(lib.empty(3), 0, -1))]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            z = lib.empty(0, 3)
            out.append(init.kaiming_uniform_(z) is z)
            out.append(init.kaiming_normal_(z) is z)
            init.uniform(lib.empty(2))  # deprecated alias
        out.append([(m.category.__name__, str(m.message)) for m in w])
        return out
    assert run(tl) == run(torch)


def test_init_bumps_version_seen_by_saved_tensors():
    def run(lib):
        lin = lib.nn.Linear(3, 4)
        x = lib.ones(2, 3, requires_grad=True)  # the weight is saved for x's gradient
        y = lin(x).sum()
        lib.nn.init.kaiming_uniform_(lin.weight)  # under grad mode: allowed (runs without recording)
        out = [lin.weight.grad_fn is None, lin.weight.requires_grad]
        try:
            y.backward()
        except RuntimeError as e:
            out.append(str(e).split(":")[0])  # the version-counter error (the saved tensor's shape differs:
            #                                    torch saves weight.t(), torchlike the weight)
        return out
    assert run(tl) == run(torch) == [True, True, "one of the variables needed for gradient computation has been "
                                                 "modified by an inplace operation"]


def test_generator_argument_is_reproducible():
    g1, g2 = tl.Generator().manual_seed(3), tl.Generator().manual_seed(3)
    a = tl.nn.init.xavier_normal_(tl.empty(4, 5), generator=g1)
    b = tl.nn.init.xavier_normal_(tl.empty(4, 5), generator=g2)
    assert np.array_equal(np.asarray(a._data), np.asarray(b._data))


# ----- clip_grad --------------------------------------------------------------------------------------------
GRADS = [RNG.standard_normal((4, 3)).astype(np.float32), RNG.standard_normal(5).astype(np.float32),
         RNG.standard_normal((2, 2)).astype(np.float32)]


def _params(lib, grads, dtypes=None):
    ps = []
    for i, g in enumerate(grads):
        dt = np.dtype(dtypes[i] if dtypes else g.dtype)
        p = lib.nn.Parameter(lib.zeros(*g.shape, dtype=getattr(lib, str(dt))))
        if g is not None:
            p.grad = lib.tensor(g.astype(dt))
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1, "inf", 0.5, 3.0, 0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    def run(lib):
        ps = _params(lib, GRADS)
        grads = [p.grad for p in ps]
        versions = [g._version for g in grads]
        total = lib.nn.utils.clip_grad_norm_(ps, max_norm, norm_type=norm_type)
        assert all(p.grad is g for p, g in zip(ps, grads))  # in place
        return total, [p.grad for p in ps], [g._version - v for g, v in zip(grads, versions)]
    (ta, ga, va), (tb, gb, vb) = run(tl), run(torch)
    assert_same(ta, tb, 1e-5, 1e-6)
    assert ta.grad_fn is None and not ta.requires_grad
    assert_same(ga, gb, 1e-5, 1e-6)
    assert va == vb


def test_clip_grad_norm_mixed_dtypes_none_grads_and_single_tensor():
    def run(lib):
        ps = _params(lib, GRADS, dtypes=[np.float32, np.float64, np.float32])
        ps.append(lib.nn.Parameter(lib.zeros(2)))  # no grad: skipped
        total = lib.nn.utils.clip_grad_norm_(iter(ps), 1.0)
        single = lib.nn.Parameter(lib.zeros(3))
        single.grad = lib.tensor([3.0, 4.0, 0.0])
        t2 = lib.nn.utils.clip_grad_norm_(single, 1.0, foreach=False)
        nograds = lib.nn.utils.clip_grad_norm_([lib.nn.Parameter(lib.zeros(1))], 1.0)
        t4 = lib.nn.utils.get_total_norm([p.grad for p in ps[:3]], 2.0)
        lib.nn.utils.clip_grads_with_norm_(ps[:1], 0.1, t4)
        return [total, [p.grad for p in ps[:3]], t2, single.grad, nograds, t4, ps[0].grad]
    a, b = run(tl), run(torch)
    for x, y in zip(a, b):
        assert_same(x, y, 1e-5, 1e-6)


def test_clip_grad_norm_errors_and_warnings():
    def run(lib):
        ps = _params(lib, [np.array([1.0, np.inf], np.float32), np.array([1.0], np.float32)])
        before = [p.grad.tolist() for p in ps]
        out = [err(lambda: lib.nn.utils.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)),
               [p.grad.tolist() for p in ps] == before]  # nothing written when it raises
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            total = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
            lib.nn.utils.clip_grad_norm(ps[1:], 1.0)
        out.append([(m.category.__name__, str(m.message)) for m in w])
        out.append((total.item(), str(total.dtype)))
        lib.nn.utils.clip_grad_norm_(ps, 1.0)  # inf norm without the check: finite grads become 0, inf nan
        out.append(np.nan_to_num(np.array([p.grad.tolist() for p in ps[1:]]), nan=-7).tolist())
        return out
    a, b = run(tl), run(torch)
    a[3] = (a[3][0], a[3][1].replace("torchlike.", "torch."))
    assert a == b


@pytest.mark.parametrize("foreach", [None, False])
def test_clip_grad_value(foreach):
    def run(lib):
        ps = _params(lib, GRADS)
        ps[1].grad[0] = float("nan")
        grads = [p.grad for p in ps]
        versions = [g._version for g in grads]
        assert lib.nn.utils.clip_grad_value_(ps, 0.5, foreach=foreach) is None
        return [p.grad for p in ps], [g._version - v for g, v in zip(grads, versions)]
    (ga, va), (gb, vb) = run(tl), run(torch)
    assert_same(ga, gb, 0, 0)
    assert va == vb
