"""Random sampling against torch 2.13: the in-place samplers' nodes, versions and zero gradients, bernoulli /
poisson / multinomial, and torch's errors. Values come from another generator than torch's: their distributions
are checked by moments."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same_error

INPLACE = {
    "uniform_": ((), lambda n: (0.5, 1 / 12)),
    "uniform_ab": ((-2.0, 4.0), lambda n: (1.0, 3.0)),
    "normal_": ((1.0, 2.0), lambda n: (1.0, 4.0)),
    "random_to": ((10,), lambda n: (4.5, 8.25)),
    "random_from_to": ((3, 7), lambda n: (4.5, 1.25)),
    "exponential_": ((2.0,), lambda n: (0.5, 0.25)),
    "geometric_": ((0.25,), lambda n: (4.0, 12.0)),
    "log_normal_": ((0.0, 0.5), lambda n: (np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25))),
    "bernoulli_": ((0.3,), lambda n: (0.3, 0.21)),
    "cauchy_": ((), None),
}


def _method(name):
    return name if name in ("uniform_", "normal_", "exponential_", "geometric_", "log_normal_", "bernoulli_",
                            "cauchy_") else {"uniform_ab": "uniform_", "random_to": "random_",
                                             "random_from_to": "random_"}[name]


@pytest.mark.parametrize("name", INPLACE)
def test_in_place_samplers_record_torchs_node_and_zero_gradient(name):
    args, _ = INPLACE[name]
    seen = []
    for m in (torch, tl):
        x = m.ones(4, requires_grad=True)
        y = x * 2
        out = getattr(y, _method(name))(*args)
        (y * 3).sum().backward()
        seen.append((out is y, y.grad_fn.name(), y._version, y.dtype == m.float32, x.grad.tolist()))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("name", [n for n, (_, moments) in INPLACE.items() if moments is not None])
def test_in_place_samplers_distribution(name):
    args, moments = INPLACE[name]
    tl.manual_seed(1)
    x = getattr(tl.empty(40000, dtype=tl.float64), _method(name))(*args).numpy()
    mean, var = moments(len(x))
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / len(x)) + 1e-9
    assert abs(x.var() - var) < 0.08 * var


def test_cauchy_median_and_random_defaults():
    tl.manual_seed(2)
    c = tl.empty(40000, dtype=tl.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.1 and abs(np.percentile(c, 75) - 3.0) < 0.15
    r = tl.empty(20000).random_().numpy()
    assert r.min() >= 0 and r.max() <= 2 ** 24 and r.max() > 2 ** 23 and (r == np.round(r)).all()
    i = tl.empty(1000, dtype=tl.int8).random_().numpy()
    assert i.min() >= 0 and i.max() <= 127 and i.max() > 100


def test_bernoulli_poisson_multinomial():
    tl.manual_seed(3)
    p = tl.full((20000,), 0.3, requires_grad=True)
    b = tl.bernoulli(p)
    tb = torch.bernoulli(torch.full((3,), 0.3, requires_grad=True))
    assert b.grad_fn.name() == tb.grad_fn.name() and abs(b.mean().item() - 0.3) < 0.02
    b.sum().backward()
    assert (p.grad.numpy() == 0).all()
    assert set(np.unique(tl.bernoulli(tl.ones(100), 0.5).numpy())) == {0.0, 1.0}
    rate = tl.full((20000,), 3.0, requires_grad=True)
    s = tl.poisson(rate)
    assert s.grad_fn.name() == torch.poisson(torch.full((3,), 3.0, requires_grad=True)).grad_fn.name()
    assert abs(s.mean().item() - 3.0) < 0.1 and (s.detach().numpy() == np.round(s.detach().numpy())).all()
    w = tl.tensor([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]])
    draws = tl.multinomial(w, 3000, replacement=True)
    assert draws.dtype == tl.int64 and draws.shape == (2, 3000)
    freq = np.stack([np.bincount(r, minlength=3) / 3000 for r in draws.numpy()])
    np.testing.assert_allclose(freq, w.numpy(), atol=0.04)
    perm = tl.multinomial(tl.tensor([1.0, 1.0, 1.0, 1.0]), 4)
    assert sorted(perm.tolist()) == [0, 1, 2, 3]


def test_rng_state_round_trip():
    state = tl.get_rng_state()
    a = tl.rand(5)
    tl.set_rng_state(state)
    assert tl.rand(5).tolist() == a.tolist()


ERRORS = [
    lambda m: m.ones(3).uniform_(2.0, 1.0),
    lambda m: m.ones(3).normal_(0.0, -1.0),
    lambda m: m.ones(3).random_(5, 2),
    lambda m: m.ones(3).exponential_(-1.0),
    lambda m: m.ones(3).geometric_(1.5),
    lambda m: m.ones(3).bernoulli_(1.5),
    lambda m: m.ones(3, dtype=m.int64).uniform_(),
    lambda m: m.ones(3, dtype=m.int64).normal_(),
    lambda m: m.ones(3, requires_grad=True).uniform_(),
    lambda m: m.poisson(m.tensor([-1.0])),
    lambda m: m.multinomial(m.ones(2, 2, 2), 1),
    lambda m: m.multinomial(m.ones(3), 4),
    lambda m: m.multinomial(m.ones(3), 0),
    lambda m: m.multinomial(m.tensor([1.0, -1.0]), 1),
    lambda m: m.multinomial(m.zeros(3), 1),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    assert_same_error(ERRORS[k])


def test_manual_seed_takes_torchs_64_bit_seeds():
    """Negative seeds wrap to 64 bits (the same stream), seeds out of range raise torch's ValueError, a Generator
    refuses a string as torch's does."""
    outcomes = []
    for m in (tl, torch):
        row = []
        for s in (2 ** 64, 2 ** 64 - 1, -1, -2 ** 63 - 1, -2 ** 63, 1.5, True, "3"):
            try:
                row.append(m.manual_seed(s).initial_seed())
            except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
                row.append((type(e).__name__, str(e)))
        try:
            m.Generator().manual_seed("3")
        except RuntimeError as e:
            row.append(str(e))
        outcomes.append(row)
    assert outcomes[0] == outcomes[1]
    tl.manual_seed(-1)
    a = tl.rand(3)
    tl.manual_seed(2 ** 64 - 1)
    assert (tl.rand(3) == a).all()
    tl.manual_seed(0)
