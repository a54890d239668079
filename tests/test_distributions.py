"""torchlike.distributions against torch.distributions on the same float64 inputs: log_prob, entropy, cdf/icdf,
mean/mode/variance/stddev and their gradients w.r.t. the parameters; sample shapes; sample moments."""
import math

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


def _run(m, name):
    """Every quantity the distribution has, and the gradients of their sum w.r.t. the parameters."""
    make, params, value, extra = CASES[name]
    ps = [m.tensor(p, requires_grad=True) for p in params]
    d = make(m, *ps)
    v = m.tensor(value)
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


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_as_torch(name):
    (want, want_g), (got, got_g) = _run(torch, name), _run(torchlike, name)
    assert list(got) == list(want)
    for k in want:
        if isinstance(want[k], np.ndarray):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-6, atol=1e-10, err_msg=k)
        else:
            assert got[k] == want[k], k
    for a, b in zip(got_g, want_g):
        assert (a is None) == (b is None)
        if b is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-10)
