"""torchlike.distributions against torch.distributions on the same float64 inputs: log_prob, entropy, cdf/icdf,
mean/mode/variance/stddev and their gradients w.r.t. the parameters; sample shapes; sample moments."""

import jax
import numpy as np
import pytest
import torch

import torchlike

R = np.random.RandomState(0)
LOC = np.array([0.3, -1.2, 2.0])
SCALE = np.array([0.5, 1.5, 2.0])
POS = np.array([0.7, 2.5, 4.0])
PROB = np.array([0.2, 0.55, 0.9])
X = np.array([0.4, -0.3, 1.7])
XPOS = np.array([0.35, 1.2, 3.1])
XUNIT = np.array([0.15, 0.5, 0.8])
LOGITS = np.array([[0.1, -0.4, 1.2, 0.3], [2.0, 0.5, -1.0, 0.0]])
SIMPLEX = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]])
A = np.array([[1.5, 0.3, 0.1], [0.3, 2.0, 0.4], [0.1, 0.4, 1.2]])
LT = np.linalg.cholesky(A)
W = np.array([[0.5, 0.1], [0.2, -0.3], [0.0, 0.4]])


def _affine(m, loc, scale):
    D = m.distributions
    return D.TransformedDistribution(D.Normal(loc * 0, scale * 0 + 1), [D.AffineTransform(loc, scale),
                                                                      D.ExpTransform()])


# name: (make(m, *params), params, value, extra methods)
CASES = {
    "Normal": (lambda m, a, b: m.distributions.Normal(a, b), (LOC, SCALE), X, ("cdf", "icdf_u")),
    "Normal_scalar": (lambda m, a: m.distributions.Normal(a, 2.0), (LOC,), X, ("cdf",)),
    "Uniform": (lambda m, a, b: m.distributions.Uniform(a, a + b), (LOC, SCALE), LOC + 0.3 * SCALE, ("cdf", "icdf_u")),
    "Exponential": (lambda m, a: m.distributions.Exponential(a), (POS,), XPOS, ("cdf", "icdf_u")),
    "Laplace": (lambda m, a, b: m.distributions.Laplace(a, b), (LOC, SCALE), X, ("cdf", "icdf_u")),
    "Cauchy": (lambda m, a, b: m.distributions.Cauchy(a, b), (LOC, SCALE), X, ("cdf", "icdf_u")),
    "Gumbel": (lambda m, a, b: m.distributions.Gumbel(a, b), (LOC, SCALE), X, ("cdf", "icdf_u")),
    "LogNormal": (lambda m, a, b: m.distributions.LogNormal(a, b), (LOC, SCALE), XPOS, ("cdf", "icdf_u")),
    "Gamma": (lambda m, a, b: m.distributions.Gamma(a, b), (POS, SCALE), XPOS, ()),
    "Gamma_cdf": (lambda m, b: m.distributions.Gamma(m.tensor(POS), b), (SCALE,), XPOS, ("cdf",)),
    "Beta": (lambda m, a, b: m.distributions.Beta(a, b), (POS, SCALE), XUNIT, ()),
    "StudentT": (lambda m, a, b, c: m.distributions.StudentT(a + 2, b, c), (POS, LOC, SCALE), X, ()),
    "Dirichlet": (lambda m, a: m.distributions.Dirichlet(a), (np.abs(LOGITS) + 0.5,), SIMPLEX, ()),
    "Bernoulli_probs": (lambda m, p: m.distributions.Bernoulli(probs=p), (PROB,), np.array([1.0, 0.0, 1.0]), ()),
    "Bernoulli_logits": (lambda m, p: m.distributions.Bernoulli(logits=p), (LOC,), np.array([1.0, 0.0, 1.0]), ()),
    "Binomial": (lambda m, p: m.distributions.Binomial(10, probs=p), (PROB,), np.array([3.0, 0.0, 10.0]), ()),
    "Binomial_logits": (lambda m, p: m.distributions.Binomial(7, logits=p), (LOC,), np.array([3.0, 0.0, 7.0]), ()),
    "Poisson": (lambda m, r: m.distributions.Poisson(r), (POS,), np.array([0.0, 2.0, 5.0]), ()),
    "Categorical_probs": (lambda m, p: m.distributions.Categorical(probs=p), (SIMPLEX,), np.array([2, 0]), ()),
    "Categorical_logits": (lambda m, p: m.distributions.Categorical(logits=p), (LOGITS,), np.array([3, 1]), ()),
    "OneHotCategorical": (lambda m, p: m.distributions.OneHotCategorical(logits=p), (LOGITS,),
                          np.eye(4)[[1, 3]], ()),
    "MVN_scale_tril": (lambda m, a, L: m.distributions.MultivariateNormal(a, scale_tril=L), (LOC, LT), X, ()),
    "MVN_covariance": (lambda m, a, C: m.distributions.MultivariateNormal(a, covariance_matrix=C), (LOC, A), X, ()),
    "MVN_precision": (lambda m, a, P: m.distributions.MultivariateNormal(a, precision_matrix=P), (LOC, A), X, ()),
    "LowRankMVN": (lambda m, a, w, d: m.distributions.LowRankMultivariateNormal(a, w, d), (LOC, W, POS), X, ()),
    "Independent": (lambda m, a, b: m.distributions.Independent(m.distributions.Normal(a, b), 1), (LOC, SCALE), X,
                    ()),
    "RelaxedBernoulli": (lambda m, p: m.distributions.RelaxedBernoulli(m.tensor(0.7, dtype=m.float64), probs=p), (PROB,), XUNIT, ()),
    "RelaxedOneHotCategorical": (lambda m, p: m.distributions.RelaxedOneHotCategorical(m.tensor(0.8, dtype=m.float64), logits=p), (LOGITS,),
                                 SIMPLEX, ()),
    "MixtureSameFamily": (lambda m, p, a, b: m.distributions.MixtureSameFamily(
        m.distributions.Categorical(logits=p), m.distributions.Normal(a, b)), (LOGITS[0, :3], LOC, SCALE), X[:, None],
        ("cdf",)),
    "Transformed_affine_exp": (_affine, (LOC, SCALE), XPOS, ()),
    "Transformed_sigmoid": (lambda m, a, b: m.distributions.TransformedDistribution(
        m.distributions.Normal(a, b), m.distributions.SigmoidTransform()), (LOC, SCALE), XUNIT, ()),
    "Transformed_tanh_power": (lambda m, a, b: m.distributions.TransformedDistribution(
        m.distributions.Uniform(a * 0 + 0.1, a * 0 + 0.9 + b * 0), [m.distributions.PowerTransform(2.0),
                                                                   m.distributions.TanhTransform()]),
        (LOC, SCALE), np.array([0.2, 0.4, 0.6]), ()),
    "Transformed_stickbreaking": (lambda m, a, b: m.distributions.TransformedDistribution(
        m.distributions.Independent(m.distributions.Normal(a, b), 1), m.distributions.StickBreakingTransform()),
        (LOC, SCALE), SIMPLEX[0], ()),
}

STATS = ("mean", "variance", "stddev", "mode")


def _run(m, name, cases=CASES):
    """Every quantity the distribution has, and the gradients of their sum w.r.t. the parameters."""
    make, params, value, extra = cases[name]
    ps = [m.tensor(p, requires_grad=True) for p in params]
    d = make(m, *ps)
    v = m.tensor(value, requires_grad=not d.support.is_discrete and value.dtype == np.float64)
    if v.requires_grad:
        ps = ps + [v]  # the gradient w.r.t. the value (a score) too
    out = {"log_prob": d.log_prob(v), "batch_shape": tuple(d.batch_shape), "event_shape": tuple(d.event_shape)}
    for k in ("entropy",) + STATS:
        try:
            out[k] = getattr(d, k)() if k == "entropy" else getattr(d, k)
        except NotImplementedError:
            out[k] = "NotImplementedError"
    if "cdf" in extra:
        out["cdf"] = d.cdf(v)
    if "icdf_u" in extra:
        out["icdf"] = d.icdf(m.tensor(XUNIT))
    total = sum((t * (1 + i)).sum() for i, t in enumerate(out.values())
                if isinstance(t, m.Tensor) and t.requires_grad and t.dtype.is_floating_point)
    grads = m.autograd.grad(total, ps, allow_unused=True)
    values = {k: (t.detach().numpy() if isinstance(t, m.Tensor) else t) for k, t in out.items()}
    return values, [None if g is None else g.numpy() for g in grads]


def check_values_and_gradients(name, cases=CASES, rtol=1e-6):
    (want, want_g), (got, got_g) = _run(torch, name, cases), _run(torchlike, name, cases)
    assert list(got) == list(want)
    for k in want:
        if isinstance(want[k], np.ndarray):
            np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=1e-10, err_msg=k)
        else:
            assert got[k] == want[k], k
    for a, b in zip(got_g, want_g):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_as_torch(name):
    check_values_and_gradients(name)


def _make(m, name, cases=CASES):
    make, params, _, _ = cases[name]
    return make(m, *[m.tensor(p, requires_grad=True) for p in params])


# sample moments: (case, rtol of the mean and of the variance against the distribution's own)
MOMENTS = {"Normal": 0.08, "Uniform": 0.08, "Exponential": 0.1, "Laplace": 0.1, "Gumbel": 0.1, "Gamma": 0.1,
           "Beta": 0.1, "Dirichlet": 0.1, "Bernoulli_probs": 0.1, "Binomial": 0.1, "Poisson": 0.1,
           "Categorical_probs": 0.1, "OneHotCategorical": 0.1, "MVN_scale_tril": 0.1, "LowRankMVN": 0.1,
           "LogNormal": 0.25, "StudentT": 0.3, "Independent": 0.08, "MixtureSameFamily": 0.1}


def check_sample_shapes(name, cases=CASES):
    d, dt = _make(torchlike, name, cases), _make(torch, name, cases)
    assert d.has_rsample == dt.has_rsample
    for shape in ((), (2, 3)):
        s, st = d.sample(shape), dt.sample(shape)
        assert tuple(s.shape) == tuple(st.shape) and str(s.dtype)[10:] == str(st.dtype)[6:]
        assert bool(d.support.check(s).all()), name
        if dt.has_rsample:
            assert tuple(d.rsample(shape).shape) == tuple(dt.rsample(shape).shape)


@pytest.mark.parametrize("name", list(CASES))
def test_sample_shapes_as_torch(name):
    check_sample_shapes(name)


def check_moments(name, tol, cases=CASES):
    """Sample shapes as torch's; the mean and variance of 4000 seeded draws against torch's ``mean``/``variance``."""
    d, dt = _make(torchlike, name, cases), _make(torch, name, cases)
    for shape in ((), (5,), (2, 3)):
        assert tuple(d.sample(shape).shape) == tuple(dt.sample(shape).shape)
        if dt.has_rsample:
            assert tuple(d.rsample(shape).shape) == tuple(dt.rsample(shape).shape)
    torchlike.manual_seed(0)
    s = d.sample((4000,)).double()
    if name.startswith("Categorical"):  # moments of the class index
        p = dt.probs.detach().numpy()
        mean, var = (p * np.arange(p.shape[-1])).sum(-1), (p * np.arange(p.shape[-1]) ** 2).sum(-1)
        var = var - mean ** 2
    else:
        mean, var = dt.mean.detach().numpy(), dt.variance.detach().numpy()
    np.testing.assert_allclose(s.mean(0).numpy(), mean, rtol=tol, atol=tol * np.sqrt(var).max())
    np.testing.assert_allclose(s.var(0).numpy(), var, rtol=3 * tol, atol=tol * var.max())


@pytest.mark.parametrize("name", list(MOMENTS))
def test_sample_shapes_and_moments(name):
    check_moments(name, MOMENTS[name])


def check_rsample_is_differentiable(name, cases=CASES):
    make, params, _, _ = cases[name]
    ps = [torchlike.tensor(p, requires_grad=True) for p in params]
    d = make(torchlike, *ps)
    s = d.rsample((3,))
    grads = torchlike.autograd.grad(s.sum(), ps, allow_unused=True)
    assert grads[0] is not None and np.isfinite(grads[0].numpy()).all()
    assert tuple(grads[0].shape) == tuple(ps[0].shape)
    assert not d.sample((3,)).requires_grad


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Beta", "Dirichlet", "MVN_scale_tril", "Exponential",
                                  "Transformed_affine_exp", "RelaxedBernoulli"])
def test_rsample_is_differentiable(name):
    check_rsample_is_differentiable(name)


def test_gamma_rsample_gradient_is_the_implicit_one():
    # d sample / d concentration for Gamma(a, 1): check against a finite difference of the CDF relation
    a = torchlike.tensor([0.8, 2.5, 6.0], requires_grad=True)
    x = torchlike.distributions.Gamma(a, torchlike.ones(3, dtype=torchlike.float32)).rsample()
    (g,) = torchlike.autograd.grad(x.sum(), a)
    ta, tx = torch.tensor(a.detach().numpy(), requires_grad=True), torch.tensor(x.detach().numpy())
    # implicit function theorem: dx/da = -(dF/da) / (dF/dx), with F the regularised incomplete gamma
    eps = 1e-3
    dfda = (torch.special.gammainc(ta.detach().double() + eps, tx.double())
            - torch.special.gammainc(ta.detach().double() - eps, tx.double())) / (2 * eps)
    dfdx = torch.distributions.Gamma(ta.detach().double(), 1.0).log_prob(tx.double()).exp()
    np.testing.assert_allclose(g.numpy(), (-dfda / dfdx).numpy(), rtol=2e-3)


KL = [("Normal", "Normal"), ("Normal_scalar", "Normal"), ("Uniform", "Uniform"), ("Exponential", "Exponential"),
      ("Laplace", "Laplace"), ("Gamma", "Gamma"), ("Beta", "Beta"), ("Dirichlet", "Dirichlet"),
      ("Bernoulli_probs", "Bernoulli_logits"), ("Binomial", "Binomial"), ("Poisson", "Poisson"),
      ("Categorical_probs", "Categorical_logits"), ("OneHotCategorical", "OneHotCategorical"),
      ("MVN_scale_tril", "MVN_covariance"), ("MVN_precision", "LowRankMVN"), ("LowRankMVN", "MVN_scale_tril"),
      ("LowRankMVN", "LowRankMVN"), ("Independent", "Independent"), ("Gumbel", "Gumbel"), ("Cauchy", "Cauchy"),
      ("Uniform", "Normal"), ("Uniform", "Gamma"), ("Exponential", "Gamma"), ("Gamma", "Normal"),
      ("Laplace", "Normal"), ("Normal", "Laplace"), ("Beta", "Uniform"), ("Exponential", "Normal"),
      ("Uniform", "Gumbel"), ("Normal", "Gumbel"), ("Gamma", "Exponential"), ("Transformed_affine_exp", "LogNormal")]


def _kl_q_params(p, q, params_q):
    return [x * 1.3 if x.ndim == 1 and p != q and "Categorical" not in q and q != "LowRankMVN" and
            not q.startswith("MVN") else x for x in params_q]


def check_kl_divergence(p, q, cases=CASES, q_params=_kl_q_params):
    """KL(p || q) and its gradients w.r.t. both distributions' parameters (q's from ``q_params(p, q, params)``)."""
    out = {}
    for m in (torch, torchlike):
        mk_p, params_p, _, _ = cases[p]
        mk_q, params_q, _, _ = cases[q]
        pp = [m.tensor(x, requires_grad=True) for x in params_p]
        pq = [m.tensor(x, requires_grad=True) for x in q_params(p, q, params_q)]
        try:
            kl = m.distributions.kl_divergence(mk_p(m, *pp), mk_q(m, *pq))
        except NotImplementedError as e:
            out[m] = ("NotImplementedError", str(e).split(" ")[0])
            continue
        grads = m.autograd.grad(kl.sum(), pp + pq, allow_unused=True) if kl.requires_grad else [None] * len(pp + pq)
        out[m] = (kl.detach().numpy(), [None if g is None else g.numpy() for g in grads])  # (infinite KLs: no grad)
    want, got = out[torch], out[torchlike]
    if isinstance(want[0], str):
        assert got == want
        return
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-10)
    for a, b in zip(got[1], want[1]):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("p,q", KL)
def test_kl_divergence_as_torch(p, q):
    check_kl_divergence(p, q)


def test_register_kl():
    D = torchlike.distributions

    class MyNormal(D.Normal):
        pass

    @D.register_kl(MyNormal, D.Normal)
    def _(p, q):
        return torchlike.zeros(p.batch_shape)
    assert D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)).item() == 0.0
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Poisson(torchlike.tensor(1.0)), D.Normal(0.0, 1.0))


def _error(m, fn):
    try:
        fn(m)
    except Exception as e:  # noqa: BLE001 - the error is compared
        return type(e), str(e).replace("torchlike.", "torch.")
    return None


ERRORS = {
    "normal_scale": lambda m: m.distributions.Normal(m.tensor([0.0]), m.tensor([-1.0]), validate_args=True),
    "bernoulli_both": lambda m: m.distributions.Bernoulli(probs=m.tensor([0.5]), logits=m.tensor([0.0])),
    "bernoulli_neither": lambda m: m.distributions.Bernoulli(),
    "categorical_probs": lambda m: m.distributions.Categorical(probs=m.tensor([0.5, -0.5]), validate_args=True),
    "sample_outside_support": lambda m: m.distributions.Exponential(m.tensor([1.0]), validate_args=True).log_prob(
        m.tensor([-1.0])),
    "sample_wrong_shape": lambda m: m.distributions.Normal(m.zeros(3), m.ones(3), validate_args=True).log_prob(
        m.zeros(2)),
    "sample_not_tensor": lambda m: m.distributions.Normal(0.0, 1.0, validate_args=True).log_prob(0.5),
    "mvn_no_matrix": lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    "mvn_two_matrices": lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2), scale_tril=m.eye(2)),
    "mvn_not_pd": lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]]),
                                                              validate_args=True),
    "dirichlet_scalar": lambda m: m.distributions.Dirichlet(m.tensor(1.0)),
    "uniform_bounds": lambda m: m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.0]), validate_args=True),
    "independent_ndims": lambda m: m.distributions.Independent(m.distributions.Normal(m.zeros(2), m.ones(2)), 2),
    "no_rsample": lambda m: m.distributions.Bernoulli(m.tensor([0.5])).rsample(),
    "expand_bad": lambda m: m.distributions.Normal(m.zeros(3), m.ones(3)).expand((2,)),
    "poisson_value": lambda m: m.distributions.Poisson(m.tensor([1.0]), validate_args=True).log_prob(m.tensor([0.5])),
    "broadcast_all": lambda m: m.distributions.Normal("a", 1.0),
    "binomial_count": lambda m: m.distributions.Binomial(m.tensor([-1.0]), m.tensor([0.5]), validate_args=True),
}


def check_error(fn):
    want = _error(torch, fn)
    assert want is not None
    got = _error(torchlike, fn)
    assert got[0] is want[0]
    assert got[1] == want[1]


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    check_error(ERRORS[name])


def test_default_validate_args():
    D = torchlike.distributions
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(torchlike.tensor([0.0]), torchlike.tensor([-1.0]))  # no check
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Expected parameter scale"):
        D.Normal(torchlike.tensor([0.0]), torchlike.tensor([-1.0]))


def check_expand(name, cases=CASES):
    out = {}
    for m in (torch, torchlike):
        d = _make(m, name, cases)
        e = d.expand((4,) + tuple(d.batch_shape))
        v = m.tensor(cases[name][2])
        out[m] = (tuple(e.batch_shape), tuple(e.event_shape), e.log_prob(v).detach().numpy(),
                  tuple(e.sample((2,)).shape))
    assert out[torchlike][:2] == out[torch][:2] and out[torchlike][3] == out[torch][3]
    np.testing.assert_allclose(out[torchlike][2], out[torch][2], rtol=1e-6)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Categorical_logits", "MVN_scale_tril", "Independent", "Beta",
                                  "Bernoulli_probs", "Dirichlet", "Transformed_affine_exp", "MixtureSameFamily"])
def test_expand_as_torch(name):
    check_expand(name)


def test_support_constraints_and_enumerate_support():
    D, TD = torchlike.distributions, torch.distributions
    for name, cls in [("Normal", "real"), ("Exponential", "positive"), ("Beta", "unit_interval"),
                      ("Dirichlet", "simplex")]:
        d, t = _make(torchlike, name), _make(torch, name)
        assert type(d.support).__name__ == type(t.support).__name__
        assert sorted(d.arg_constraints) == sorted(t.arg_constraints)
    x = torchlike.tensor([-1.0, 0.5, 2.0])
    assert D.constraints.positive.check(x).tolist() == TD.constraints.positive.check(torch.tensor([-1.0, 0.5, 2.0])).tolist()
    assert D.constraints.unit_interval.check(x).tolist() == [False, True, False]
    assert D.constraints.simplex.check(torchlike.tensor(SIMPLEX)).tolist() == [True, True]
    assert D.constraints.positive_definite.check(torchlike.tensor(A)).item()
    assert not D.constraints.positive_definite.check(torchlike.tensor([[1.0, 2.0], [2.0, 1.0]])).item()
    c = D.Categorical(logits=torchlike.tensor(LOGITS))
    assert c.enumerate_support().tolist() == TD.Categorical(logits=torch.tensor(LOGITS)).enumerate_support().tolist()
    b = D.Bernoulli(torchlike.tensor(PROB))
    assert b.enumerate_support(expand=False).tolist() == [[0.0], [1.0]]


def test_draws_follow_the_generator_seed():
    D = torchlike.distributions
    dists = [D.Normal(0.0, 1.0), D.Gamma(torchlike.tensor([2.0]), 1.0), D.Categorical(logits=torchlike.zeros(3)),
             D.Poisson(torchlike.tensor([3.0])), D.Bernoulli(torchlike.tensor([0.3]))]
    torchlike.manual_seed(7)
    first = [d.sample((5,)).tolist() for d in dists]
    torchlike.manual_seed(7)
    assert [d.sample((5,)).tolist() for d in dists] == first
    assert D.Normal(0.0, 1.0).sample().dtype == torchlike.float32 and D.Normal(0.0, 1.0).sample().shape == ()


def test_repr_as_torch():
    for name in ("Normal", "Categorical_probs", "MVN_scale_tril", "Independent"):
        got = repr(_make(torchlike, name)).replace("torchlike.", "torch.")
        assert got == repr(_make(torch, name))


def _number(x):
    return x.tolist() if hasattr(x, "tolist") else x


def _or_none(fn):
    """``fn()``, or None where it raises NotImplementedError (a method the transform does not have)."""
    try:
        return fn()
    except NotImplementedError:
        return None


TRANSFORMS = {
    "Exp": (lambda D, a: D.ExpTransform(), X),
    "Affine": (lambda D, a: D.AffineTransform(a, a * a + 0.5), X),
    "Sigmoid": (lambda D, a: D.SigmoidTransform(), X),
    "Tanh": (lambda D, a: D.TanhTransform(), X),
    "Power": (lambda D, a: D.PowerTransform(a * 0 + 2.5), XPOS),
    "Abs": (lambda D, a: D.AbsTransform(), X),
    "Softmax": (lambda D, a: D.SoftmaxTransform(), X),
    "StickBreaking": (lambda D, a: D.StickBreakingTransform(), X),
    "Compose": (lambda D, a: D.ComposeTransform([D.AffineTransform(a, 2.0), D.ExpTransform(),
                                                 D.PowerTransform(0.5)]), X),
    "Inverse": (lambda D, a: D.ExpTransform().inv, XPOS),
    "Softplus": (lambda D, a: D.SoftplusTransform(), X),
}


def check_transform(name, transforms=TRANSFORMS):
    make, x = transforms[name]
    out = {}
    for m in (torch, torchlike):
        a = m.tensor(LOC, requires_grad=True)
        xt = m.tensor(x, requires_grad=True)
        t = make(m.distributions, a)
        y = t(xt)
        res = [y, _or_none(lambda: t.inv(y)), _or_none(lambda: t.log_abs_det_jacobian(xt, y))]
        implemented = [r is not None for r in res]
        res = [r for r in res if r is not None]
        grads = m.autograd.grad(sum((r * (i + 1)).sum() for i, r in enumerate(res)), [xt, a], allow_unused=True)
        out[m] = ([r.detach().numpy() for r in res], [None if g is None else g.numpy() for g in grads],
                  tuple(t.forward_shape((2, 3))), t.bijective, _or_none(lambda: _number(t.sign)), implemented)
    (vw, gw, *rw), (vg, gg, *rg) = out[torch], out[torchlike]
    assert rg == rw
    for a, b in zip(vg + gg, vw + gw):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-10)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms_as_torch(name):
    check_transform(name)


def test_gamma_cdf_has_no_concentration_gradient_as_torch():
    for m in (torch, torchlike):
        a = m.tensor(POS, requires_grad=True)
        c = m.distributions.Gamma(a, m.tensor(SCALE)).cdf(m.tensor(XPOS))
        with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input' is not implemented."):
            c.sum().backward()


_traces = [0]


def _count_traces(event, duration, **kw):
    _traces[0] += event in ("/jax/core/compile/jaxpr_trace_duration", torchlike._xcache.LOAD_EVENT)


jax.monitoring.register_event_duration_secs_listener(_count_traces)


def test_draws_with_parameters_reuse_the_sampler_for_new_shapes():
    # per-element parameters are padded to the draw's power-of-two bucket: a new shape traces only the cut
    from torchlike.distributions import _ops
    _ops.poisson_sample(torchlike.full((5, 3), 2.0, dtype=torchlike.float64))
    _ops.standard_gamma_sample(torchlike.full((7,), 2.0, dtype=torchlike.float64), (7,))
    for shape in ((4, 4), (2, 9), (17,)):
        rate = torchlike.full(shape, 3.0, dtype=torchlike.float64)
        before = _traces[0]
        s = _ops.poisson_sample(rate)
        assert _traces[0] - before <= 1 and tuple(s.shape) == shape and s.dtype == torchlike.float64


def test_bernoulli_mode_straight_through_and_sample_n_as_torch():
    for m in (torch, torchlike):
        D = m.distributions
        assert np.allclose(D.Bernoulli(m.tensor([0.5, 0.7])).mode.numpy(), [np.nan, 1.0], equal_nan=True)
        st = D.OneHotCategoricalStraightThrough(logits=m.tensor([[0.1, 0.5, 2.0]], requires_grad=True))
        s = st.rsample((2,))
        assert tuple(s.shape) == (2, 1, 3) and s.requires_grad and set(s.detach().numpy().sum(-1).ravel()) == {1.0}
        with pytest.warns(FutureWarning, match="`sample_n\\(n\\)` will be deprecated"):
            assert tuple(D.Normal(0.0, 1.0).sample_n(2).shape) == (2,)


@pytest.mark.parametrize("cov", [[[1.0, 2.0], [2.0, 1.0]], [[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 1.0]]],
                                 [[-1.0, 0.0], [0.0, 1.0]]])
def test_cholesky_of_a_matrix_not_positive_definite_as_torch(cov):
    msgs = []
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError) as e:
            m.distributions.MultivariateNormal(m.zeros(2), m.tensor(cov), validate_args=False)
        msgs.append(str(e.value))
    assert msgs[1] == msgs[0]


def test_utils_as_torch():
    from torch.distributions import utils as TU

    from torchlike.distributions import utils as U
    m = np.arange(9.0).reshape(3, 3)
    for d in (0, -1):
        v = U.tril_matrix_to_vec(torchlike.tensor(m), d)
        assert np.array_equal(v.numpy(), TU.tril_matrix_to_vec(torch.tensor(m), d).numpy())
        assert np.array_equal(U.vec_to_tril_matrix(v, d).numpy(),
                              TU.vec_to_tril_matrix(torch.tensor(v.numpy()), d).numpy())
    for binary in (True, False):
        np.testing.assert_allclose(U.probs_to_logits(torchlike.tensor(PROB), binary).numpy(),
                                   TU.probs_to_logits(torch.tensor(PROB), binary).numpy(), rtol=1e-12)
        np.testing.assert_allclose(U.logits_to_probs(torchlike.tensor(LOC), binary).numpy(),
                                   TU.logits_to_probs(torch.tensor(LOC), binary).numpy(), rtol=1e-12)
    a, b = U.broadcast_all(torchlike.ones(2, 1, dtype=torchlike.float64), 3.0)
    assert tuple(b.shape) == (2, 1) and b.dtype == torchlike.float64
