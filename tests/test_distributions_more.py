"""The distributions, transforms, constraint registries and KL pairs added after the first 26 (Chi2 ... Wishart,
LKJCholesky, CorrCholesky/LowerCholesky/PositiveDefinite transforms, biject_to/transform_to) against torch 2.13 on
the same NumPy inputs, with test_distributions.py's checks: values and first-order gradients, sample shapes, sample
moments (torchlike's generator differs from torch's: draws are compared by their statistics), rsample's
reparameterisation, expand, KL divergences, validation errors and transforms."""

import warnings

import numpy as np
import pytest
import torch

import torchlike
from test_distributions import (CASES as BASE_CASES, LOC, LOGITS, POS, PROB, SCALE, SIMPLEX, X, XPOS, XUNIT, A, _make,
                                check_error, check_expand, check_kl_divergence, check_moments,
                                check_rsample_is_differentiable, check_sample_shapes, check_transform,
                                check_values_and_gradients)

F32 = np.float32
GP_CONC = np.array([0.2, 0.0, -0.3])
CORR_L = np.linalg.cholesky(A / np.sqrt(np.outer(np.diag(A), np.diag(A))))  # a correlation matrix's factor
SPD = A + 0.5 * np.eye(3)


def _D(m):
    return m.distributions


# name: (make(m, *params), params, value, extra methods) as in test_distributions.CASES
CASES = {
    "Chi2": (lambda m, a: _D(m).Chi2(a), (POS,), XPOS, ()),
    "Geometric_probs": (lambda m, p: _D(m).Geometric(probs=p), (PROB,), np.array([0.0, 2.0, 5.0]), ()),
    "Geometric_logits": (lambda m, p: _D(m).Geometric(logits=p), (LOC,), np.array([1.0, 0.0, 4.0]), ()),
    "HalfCauchy": (lambda m, s: _D(m).HalfCauchy(s), (SCALE,), XPOS, ("cdf", "icdf_u")),
    "HalfNormal": (lambda m, s: _D(m).HalfNormal(s), (SCALE,), XPOS, ("cdf", "icdf_u")),
    "Multinomial": (lambda m, p: _D(m).Multinomial(5, probs=p), (SIMPLEX,),
                    np.array([[1.0, 2.0, 0.0, 2.0], [0.0, 0.0, 5.0, 0.0]]), ()),
    "Multinomial_logits": (lambda m, p: _D(m).Multinomial(3, logits=p), (LOGITS,),
                           np.array([[1.0, 1.0, 0.0, 1.0], [0.0, 0.0, 3.0, 0.0]]), ()),
    "NegativeBinomial": (lambda m, c, p: _D(m).NegativeBinomial(c, probs=p), (POS, PROB), np.array([0.0, 3.0, 7.0]),
                         ()),
    "NegativeBinomial_logits": (lambda m, c, p: _D(m).NegativeBinomial(c, logits=p), (POS, LOC),
                                np.array([2.0, 0.0, 5.0]), ()),
    "Pareto": (lambda m, s, a: _D(m).Pareto(s, a), (SCALE, POS + 2), SCALE + XPOS, ("cdf", "icdf_u")),
    "Weibull": (lambda m, s, c: _D(m).Weibull(s, c), (SCALE, POS), XPOS, ("cdf", "icdf_u")),
    "VonMises": (lambda m, a, c: _D(m).VonMises(a, c), (LOC, POS), X, ()),
    "Kumaraswamy": (lambda m, a, b: _D(m).Kumaraswamy(a, b), (POS, SCALE), XUNIT, ("cdf", "icdf_u")),
    "InverseGamma": (lambda m, a, b: _D(m).InverseGamma(a, b), (POS, SCALE), XPOS, ()),
    "LogisticNormal": (lambda m, a, b: _D(m).LogisticNormal(a, b), (LOC, SCALE), SIMPLEX[0], ()),
    "ContinuousBernoulli_probs": (lambda m, p: _D(m).ContinuousBernoulli(probs=p), (np.array([0.2, 0.5, 0.9]),),
                                  XUNIT, ("cdf", "icdf_u")),
    "ContinuousBernoulli_logits": (lambda m, p: _D(m).ContinuousBernoulli(logits=p), (LOC,), XUNIT,
                                   ("cdf", "icdf_u")),
    "FisherSnedecor": (lambda m, a, b: _D(m).FisherSnedecor(a, b), (POS, POS + 3), XPOS, ()),
    # (float32: torch's log_prob compares the concentration with a float32 zero, and raises for float64)
    "GeneralizedPareto": (lambda m, a, b, c: _D(m).GeneralizedPareto(a, b, c),
                          (LOC.astype(F32), SCALE.astype(F32), GP_CONC.astype(F32)),
                          (LOC + 0.5 * SCALE).astype(F32), ("cdf", "icdf_u")),
    "Wishart_cov": (lambda m, df, c: _D(m).Wishart(df, covariance_matrix=c), (np.array([4.5, 3.5]), A), SPD, ()),
    "Wishart_tril": (lambda m, L: _D(m).Wishart(5.0, scale_tril=L), (np.linalg.cholesky(A),), SPD, ()),
    "Wishart_precision": (lambda m, df, p: _D(m).Wishart(df, precision_matrix=p), (np.array(6.0), A), SPD, ()),
    "LKJCholesky": (lambda m, c: _D(m).LKJCholesky(3, c), (POS,), CORR_L, ()),
    # light-tailed variants for the sample moments (the variance of the sample variance needs 4 moments)
    "Pareto_light": (lambda m, s, a: _D(m).Pareto(s, a), (SCALE, POS + 8), SCALE + XPOS, ()),
    "GeneralizedPareto_light": (lambda m, a, b, c: _D(m).GeneralizedPareto(a, b, c),
                                (LOC.astype(F32), SCALE.astype(F32), np.array([0.1, -0.2, 0.05], F32)),
                                (LOC + 0.5 * SCALE).astype(F32), ()),
    "InverseGamma_light": (lambda m, a, b: _D(m).InverseGamma(a, b), (POS + 8, SCALE), XPOS, ()),
    "FisherSnedecor_light": (lambda m, a, b: _D(m).FisherSnedecor(a, b), (POS + 10, POS + 30), XPOS, ()),
    "Uniform_unit": (lambda m, a: _D(m).Uniform(a * 0.5, a * 0.5 + 0.3), (XUNIT,), XUNIT * 0.5 + 0.1, ()),
}
ALL = {**BASE_CASES, **CASES}
RTOL = {"GeneralizedPareto": 2e-5}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart: "Low df values detected" (both libraries)
        check_values_and_gradients(name, CASES, rtol=RTOL.get(name, 1e-6))


@pytest.mark.parametrize("name", list(CASES))
def test_sample_shapes_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's rsample warns of a "Singular sample" each call, as torch's does
        check_sample_shapes(name, CASES)


MOMENTS = {"Chi2": 0.1, "Geometric_probs": 0.1, "HalfNormal": 0.08, "Multinomial": 0.1, "NegativeBinomial": 0.1,
           "Pareto_light": 0.1, "Weibull": 0.1, "Kumaraswamy": 0.1, "InverseGamma_light": 0.1,
           "ContinuousBernoulli_probs": 0.08, "ContinuousBernoulli_logits": 0.08, "FisherSnedecor_light": 0.1,
           "GeneralizedPareto": 0.2, "Wishart_tril": 0.15, "Geometric_logits": 0.1}


@pytest.mark.parametrize("name", list(MOMENTS))
def test_sample_moments(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_moments(name, MOMENTS[name], CASES)


@pytest.mark.parametrize("name", ["HalfCauchy", "Pareto", "InverseGamma", "Weibull", "Kumaraswamy", "HalfNormal"])
def test_draws_through_torchs_cdf_are_uniform(name):
    """Heavy tails: torchlike's draws mapped through torch's cdf have the uniform distribution's quantiles."""
    d, dt = _make(torchlike, name, CASES), _make(torch, name, CASES)
    torchlike.manual_seed(1)
    u = dt.cdf(torch.tensor(d.sample((4000,)).numpy())).detach().numpy()
    np.testing.assert_allclose(np.quantile(u, [0.1, 0.5, 0.9], axis=0),
                               np.broadcast_to(np.array([[0.1], [0.5], [0.9]]), (3,) + u.shape[1:]), atol=0.03)


def test_von_mises_draws_have_the_circular_moments():
    d, dt = _make(torchlike, "VonMises", CASES), _make(torch, "VonMises", CASES)
    torchlike.manual_seed(2)
    s = d.sample((4000,))
    assert s.dtype == torchlike.float64 and bool(((s >= -np.pi) & (s < np.pi)).all())
    angle = s.numpy() - LOC
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - the circular variance; E[sin(x - loc)] = 0
    np.testing.assert_allclose(np.cos(angle).mean(0), 1 - dt.variance.detach().numpy(), atol=0.03)
    np.testing.assert_allclose(np.sin(angle).mean(0), 0, atol=0.04)
    assert torchlike.distributions.VonMises(0.0, 1.0).sample((2,)).dtype == torchlike.float32


def test_lkj_cholesky_draws_as_torchs():
    d, dt = _make(torchlike, "LKJCholesky", CASES), _make(torch, "LKJCholesky", CASES)
    torchlike.manual_seed(3)
    s, st = d.sample((4000,)).numpy(), dt.sample((4000,)).numpy()
    corr, corr_t = s @ np.swapaxes(s, -1, -2), st @ np.swapaxes(st, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(s.mean(0), st.mean(0), atol=0.04)  # the off-diagonal correlations: both centred at 0
    np.testing.assert_allclose((corr ** 2).mean(0), (corr_t ** 2).mean(0), atol=0.03)  # their spread, by concentration


RSAMPLE = ["Chi2", "HalfCauchy", "HalfNormal", "Pareto", "Weibull", "Kumaraswamy", "InverseGamma", "LogisticNormal",
           "ContinuousBernoulli_probs", "FisherSnedecor", "GeneralizedPareto"]  # (Wishart's: see ERRORS)


@pytest.mark.parametrize("name", RSAMPLE)
def test_rsample_is_differentiable(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_rsample_is_differentiable(name, CASES)


@pytest.mark.parametrize("name,tol", [("Chi2", 0.1), ("HalfNormal", 0.08), ("Pareto_light", 0.1), ("Weibull", 0.1),
                                      ("Kumaraswamy", 0.1), ("InverseGamma_light", 0.1),
                                      ("ContinuousBernoulli_logits", 0.1), ("FisherSnedecor_light", 0.1),
                                      ("GeneralizedPareto_light", 0.15)])
def test_rsample_gradient_is_the_reparameterisation(name, tol):
    """d/dparam of the mean of 4000 rsample draws against the gradient of torch's analytic mean."""
    make, params, _, _ = CASES[name]
    ps, pt = [torchlike.tensor(p, requires_grad=True) for p in params], [torch.tensor(p, requires_grad=True)
                                                                         for p in params]
    torchlike.manual_seed(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = torchlike.autograd.grad(make(torchlike, *ps).rsample((4000,)).mean(0).sum(), ps)
    want = torch.autograd.grad(make(torch, *pt).mean.sum(), pt, allow_unused=True)  # (F's mean: df2's alone)
    for g, w, p in zip(got, want, pt):
        w = torch.zeros_like(p) if w is None else w
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=tol, atol=tol * max(np.abs(w.numpy()).max(), 0.1))


@pytest.mark.parametrize("name", [n for n in CASES if not n.endswith(("_light", "_logits", "_unit"))])
def test_expand_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_expand(name, CASES)


def test_supports_arg_constraints_and_flags_as_torch():
    for name in CASES:
        d, dt = _make(torchlike, name, CASES), _make(torch, name, CASES)
        assert type(d.support).__name__ == type(dt.support).__name__, name
        assert d.support.event_dim == dt.support.event_dim and d.support.is_discrete == dt.support.is_discrete
        assert {k: repr(c).replace("torchlike.", "torch.") for k, c in d.arg_constraints.items()} == \
            {k: repr(c) for k, c in dt.arg_constraints.items()}, name
        assert (d.has_rsample, d.has_enumerate_support) == (dt.has_rsample, dt.has_enumerate_support), name
        assert isinstance(d, getattr(torchlike.distributions, type(dt).__name__))
        for base in type(dt).__mro__[1:]:  # torch's class hierarchy (Chi2 is a Gamma, HalfNormal transformed, ...)
            if base.__module__.startswith("torch.distributions"):
                assert isinstance(d, getattr(torchlike.distributions, base.__name__)), (name, base)


def test_lowercase_submodules_and_names_as_torch():
    TD, D = torch.distributions, torchlike.distributions
    for name in dir(TD):
        if not name.startswith("_"):
            assert hasattr(D, name), name
    for module in ("chi2", "geometric", "half_cauchy", "half_normal", "multinomial", "negative_binomial", "pareto",
                   "weibull", "von_mises", "kumaraswamy", "inverse_gamma", "logistic_normal", "continuous_bernoulli",
                   "fishersnedecor", "generalized_pareto", "wishart", "lkj_cholesky", "constraint_registry"):
        assert sorted(getattr(D, module).__all__) == sorted(getattr(TD, module).__all__), module
    assert sorted(D.transforms.__all__) == sorted(TD.transforms.__all__)
    assert set(TD.__all__) <= set(D.__all__)
    assert D.biject_to is D.constraint_registry.biject_to and D.chi2.Chi2 is D.Chi2


def _library_pairs(registry, package):
    """The registry's pairs of the library's own classes (other tests register pairs of their subclasses)."""
    return {(p.__name__, q.__name__) for p, q in registry
            if p.__module__.startswith(package) and q.__module__.startswith(package)}


def test_kl_registry_as_torch():
    assert _library_pairs(torchlike.distributions.kl._KL_REGISTRY, "torchlike.") == \
        _library_pairs(torch.distributions.kl._KL_REGISTRY, "torch.")


def _q_params(p, q, params):
    """q's parameters: p's moved a little where p and q are of the same family (a KL that is not 0)."""
    return [x * 0.8 + 0.05 if p.split("_")[0] == q.split("_")[0] and x.ndim <= 1 else x for x in params]


KL = [("ContinuousBernoulli_probs", "ContinuousBernoulli_logits"), ("ContinuousBernoulli_logits",
                                                                    "ContinuousBernoulli_probs"),
      ("Geometric_probs", "Geometric_logits"), ("Geometric_logits", "Geometric_probs"), ("HalfNormal", "HalfNormal"),
      ("Pareto", "Pareto"), ("Pareto", "Pareto_light"), ("Beta", "ContinuousBernoulli_probs"), ("Beta", "Pareto"),
      ("ContinuousBernoulli_probs", "Pareto"), ("ContinuousBernoulli_probs", "Exponential"),
      ("ContinuousBernoulli_logits", "Normal"), ("ContinuousBernoulli_probs", "Uniform"),
      ("ContinuousBernoulli_probs", "Uniform_unit"), ("Exponential", "Beta"),
      ("Exponential", "ContinuousBernoulli_probs"), ("Exponential", "Pareto"), ("Exponential", "Uniform"),
      ("Gamma", "Beta"), ("Gamma", "ContinuousBernoulli_logits"), ("Gamma", "Pareto"), ("Gamma", "Uniform"),
      ("Gumbel", "Beta"), ("Gumbel", "Exponential"), ("Gumbel", "Gamma"), ("Gumbel", "Uniform"),
      ("Laplace", "Beta"), ("Laplace", "Exponential"), ("Laplace", "Gamma"), ("Laplace", "Uniform"),
      ("Normal", "Beta"), ("Normal", "Exponential"), ("Normal", "Gamma"), ("Normal", "Uniform"), ("Normal", "Pareto"),
      ("Pareto", "Beta"), ("Pareto", "ContinuousBernoulli_probs"), ("Pareto", "Uniform"), ("Pareto", "Exponential"),
      ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Uniform", "ContinuousBernoulli_probs"),
      ("Uniform_unit", "ContinuousBernoulli_logits"), ("Uniform", "Pareto"), ("Uniform_unit", "Pareto"),
      ("Chi2", "Chi2"), ("Chi2", "Gamma"), ("HalfCauchy", "HalfNormal"), ("Wishart_cov", "Wishart_tril"),
      ("InverseGamma", "InverseGamma"), ("LogisticNormal", "LogisticNormal"), ("Weibull", "Weibull")]


@pytest.mark.parametrize("p,q", KL)
def test_kl_divergence_as_torch(p, q):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_kl_divergence(p, q, ALL, _q_params)


ERRORS = {
    "geometric_zero": lambda m: _D(m).Geometric(m.tensor([0.0, 0.5]), validate_args=True),
    "geometric_both": lambda m: _D(m).Geometric(probs=m.tensor([0.5]), logits=m.tensor([0.0])),
    "geometric_value": lambda m: _D(m).Geometric(m.tensor([0.5]), validate_args=True).log_prob(m.tensor([1.5])),
    "negative_binomial_neither": lambda m: _D(m).NegativeBinomial(m.tensor([2.0])),
    "negative_binomial_probs_1": lambda m: _D(m).NegativeBinomial(m.tensor([2.0]), m.tensor([1.0]),
                                                                  validate_args=True),
    "negative_binomial_count": lambda m: _D(m).NegativeBinomial(m.tensor([-2.0]), m.tensor([0.5]),
                                                                validate_args=True),
    "continuous_bernoulli_probs": lambda m: _D(m).ContinuousBernoulli(m.tensor([1.5]), validate_args=False),
    "continuous_bernoulli_both": lambda m: _D(m).ContinuousBernoulli(),
    "multinomial_count": lambda m: _D(m).Multinomial(m.tensor(3), probs=m.tensor([0.5, 0.5])),
    "multinomial_probs": lambda m: _D(m).Multinomial(3, probs=m.tensor([0.5, -0.5]), validate_args=True),
    "multinomial_value": lambda m: _D(m).Multinomial(3, probs=m.tensor([0.5, 0.5]), validate_args=True).log_prob(
        m.tensor([3.0, 1.0])),
    "chi2_df": lambda m: _D(m).Chi2(m.tensor([-1.0]), validate_args=True),
    "half_normal_value": lambda m: _D(m).HalfNormal(m.tensor([1.0]), validate_args=True).log_prob(m.tensor([-1.0])),
    "half_cauchy_scale": lambda m: _D(m).HalfCauchy(m.tensor([0.0]), validate_args=True),
    "pareto_value": lambda m: _D(m).Pareto(m.tensor([1.0]), m.tensor([2.0]), validate_args=True).log_prob(
        m.tensor([0.5])),
    "weibull_concentration": lambda m: _D(m).Weibull(m.tensor([1.0]), m.tensor([-2.0]), validate_args=True),
    "von_mises_concentration": lambda m: _D(m).VonMises(m.tensor([0.0]), m.tensor([-1.0]), validate_args=True),
    "kumaraswamy_value": lambda m: _D(m).Kumaraswamy(m.tensor([1.0]), m.tensor([2.0]), validate_args=True).log_prob(
        m.tensor([1.5])),
    "inverse_gamma_rate": lambda m: _D(m).InverseGamma(m.tensor([1.0]), m.tensor([-2.0]), validate_args=True),
    "logistic_normal_value": lambda m: _D(m).LogisticNormal(m.zeros(2), m.ones(2), validate_args=True).log_prob(
        m.tensor([0.5, 0.6, 0.2])),
    "fisher_snedecor_df": lambda m: _D(m).FisherSnedecor(m.tensor([1.0]), m.tensor([0.0]), validate_args=True),
    "generalized_pareto_value": lambda m: _D(m).GeneralizedPareto(
        m.tensor([0.0]), m.tensor([1.0]), m.tensor([-0.5]), validate_args=True).log_prob(m.tensor([3.0])),
    "generalized_pareto_float64": lambda m: _D(m).GeneralizedPareto(
        m.tensor([0.0], dtype=m.float64), m.tensor([1.0], dtype=m.float64), m.tensor([0.5], dtype=m.float64)).log_prob(
        m.tensor([1.0], dtype=m.float64)),
    "wishart_two_matrices": lambda m: _D(m).Wishart(3.0, m.eye(2), scale_tril=m.eye(2)),
    "wishart_vector": lambda m: _D(m).Wishart(3.0, m.ones(2)),
    "wishart_df": lambda m: _D(m).Wishart(1.0, m.eye(3)),
    "wishart_not_pd": lambda m: _D(m).Wishart(3.0, m.tensor([[1.0, 2.0], [2.0, 1.0]]), validate_args=True),
    "wishart_value": lambda m: _D(m).Wishart(3.0, m.eye(2), validate_args=True).log_prob(
        m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "lkj_dim": lambda m: _D(m).LKJCholesky(1),
    "lkj_concentration": lambda m: _D(m).LKJCholesky(2, m.tensor([0.0]), validate_args=True),
    "lkj_value": lambda m: _D(m).LKJCholesky(2, validate_args=True).log_prob(m.tensor([[1.0, 0.0], [0.5, 1.0]])),
    "corr_cholesky_shape": lambda m: _D(m).CorrCholeskyTransform().forward_shape((4,)),
    "corr_cholesky_square": lambda m: _D(m).CorrCholeskyTransform().inverse_shape((2, 3)),
    "biject_to_unknown": lambda m: _D(m).biject_to(_D(m).constraints.lower_cholesky),
    "transform_to_unknown": lambda m: _D(m).transform_to(_D(m).constraints.boolean),
    "register_not_a_constraint": lambda m: _D(m).biject_to.register(int, lambda c: None),
    # torch 2.13's Wishart.rsample re-draws every sample its support check passes (the check's result is named
    # is_singular) and then writes into that mask in place: its backward always fails, the same way here
    "wishart_rsample_backward": lambda m: (lambda c: m.autograd.grad(
        _D(m).Wishart(4.5, covariance_matrix=c).rsample((3,)).sum(), c))(m.tensor(A, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    check_error(ERRORS[name])


MATRIX = np.array([[0.3, 0.5, -0.2], [-0.4, 0.1, 0.7], [0.2, -0.6, -0.3]])
TRANSFORMS = {
    "CorrCholesky": (lambda D, a: D.CorrCholeskyTransform(), X),
    "CorrCholesky_a": (lambda D, a: D.CorrCholeskyTransform(), X * 0.5 + LOC),
    "LowerCholesky": (lambda D, a: D.LowerCholeskyTransform(), MATRIX),
    "PositiveDefinite": (lambda D, a: D.PositiveDefiniteTransform(), MATRIX),
    "biject_real": (lambda D, a: D.biject_to(D.constraints.real), X),
    "biject_positive": (lambda D, a: D.biject_to(D.constraints.positive), X),
    "transform_nonnegative": (lambda D, a: D.transform_to(D.constraints.nonnegative), X),
    "biject_greater_than": (lambda D, a: D.biject_to(D.constraints.greater_than(a)), X),
    "transform_greater_than_eq": (lambda D, a: D.transform_to(D.constraints.greater_than_eq(1.5)), X),
    "biject_less_than": (lambda D, a: D.biject_to(D.constraints.less_than(a)), X),
    "biject_interval": (lambda D, a: D.biject_to(D.constraints.interval(a, a + 2)), X),
    "biject_unit_interval": (lambda D, a: D.biject_to(D.constraints.unit_interval), X),
    "transform_half_open": (lambda D, a: D.transform_to(D.constraints.half_open_interval(-1.0, a)), X),
    "biject_simplex": (lambda D, a: D.biject_to(D.constraints.simplex), X),
    "transform_simplex": (lambda D, a: D.transform_to(D.constraints.simplex), X),
    "biject_independent": (lambda D, a: D.biject_to(D.constraints.independent(D.constraints.positive, 1)), X),
    "transform_independent": (lambda D, a: D.transform_to(D.constraints.independent(D.constraints.greater_than(a), 1)),
                              X),
    "biject_corr_cholesky": (lambda D, a: D.biject_to(D.constraints.corr_cholesky), X),
    "transform_lower_cholesky": (lambda D, a: D.transform_to(D.constraints.lower_cholesky), MATRIX),
    "transform_positive_definite": (lambda D, a: D.transform_to(D.constraints.positive_definite), MATRIX),
    "transform_positive_semidefinite": (lambda D, a: D.transform_to(D.constraints.positive_semidefinite), MATRIX),
    "biject_cat": (lambda D, a: D.biject_to(D.constraints.cat([D.constraints.real, D.constraints.positive], 0,
                                                               [1, 2])), X),
    "transform_stack": (lambda D, a: D.transform_to(D.constraints.stack(
        [D.constraints.real, D.constraints.positive, D.constraints.unit_interval], 0)), X),
    "biject_support_of_pareto": (lambda D, a: D.biject_to(D.Pareto(a.abs() + 0.5, 2.0).support), X),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms_as_torch(name):
    check_transform(name, TRANSFORMS)


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_types_domains_and_codomains_as_torch(name):
    make, x = TRANSFORMS[name]
    out = {}
    for m in (torch, torchlike):
        t = make(m.distributions, m.tensor(LOC))
        parts = t.parts if isinstance(t, m.distributions.ComposeTransform) else [t]
        y = t(m.tensor(x))
        out[m] = ([type(p).__name__ for p in parts], type(t.domain).__name__, type(t.codomain).__name__,
                  t.domain.event_dim, t.codomain.event_dim, bool(t.codomain.check(y).all()), t == t, t == t.inv.inv)
    assert out[torchlike] == out[torch]
    assert out[torch][5]  # the image is in the codomain


def test_transform_reprs_and_registry_as_torch():
    for m in (torch, torchlike):
        D = m.distributions
        got = [repr(D.biject_to(c)).replace("torchlike.", "torch.") for c in
               (D.constraints.greater_than(1.5), D.constraints.interval(0.0, 2.0), D.constraints.simplex)]
        assert got == [repr(torch.distributions.biject_to(c)) for c in
                       (torch.distributions.constraints.greater_than(1.5),
                        torch.distributions.constraints.interval(0.0, 2.0), torch.distributions.constraints.simplex)]
        assert D.LowerCholeskyTransform() == D.LowerCholeskyTransform()
        assert D.PositiveDefiniteTransform() != D.LowerCholeskyTransform()
        registry = D.constraint_registry.ConstraintRegistry()

        @registry.register(D.constraints.positive)
        def _(constraint):
            return D.ExpTransform()
        assert isinstance(registry(D.constraints.greater_than(3.0)), D.ExpTransform)  # by the constraint's class
        assert sorted(type(c).__name__ for c in D.biject_to._registry) == sorted(
            type(c).__name__ for c in torch.distributions.biject_to._registry)
