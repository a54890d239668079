"""Special functions (torchlike/ops/special.py) against torch: values, node names, first and second derivatives."""
import numpy as np
import pytest
import torch

import torchlike

X = np.array([0.3, 1.5, 4.0, 7.2])
P = np.array([0.0, 0.4, -0.7, 0.9])

CASES = {
    "lgamma": (lambda m, x: m.lgamma(x), X),
    "lgamma_method": (lambda m, x: x.lgamma(), X),
    "digamma": (lambda m, x: m.digamma(x), X),
    "erfinv": (lambda m, x: m.erfinv(x), P),
    "polygamma1": (lambda m, x: m.polygamma(1, x), X),
    "polygamma3": (lambda m, x: m.polygamma(3, x), X),
    "mvlgamma": (lambda m, x: m.mvlgamma(x, 3), X + 2),
    "xlogy": (lambda m, x: m.xlogy(x, x.flip(0) + 1), P),
    "xlogy_zero": (lambda m, x: m.xlogy(x * 0, x), X),
    "xlogy_scalar": (lambda m, x: m.xlogy(x, 2.0) * x, P),
    "xlogy_scalar_self": (lambda m, x: m.xlogy(2.0, x) * x, X),
    "xlogy_masked": (lambda m, x: m.xlogy(x * (x > 1), x) * x, X),
}


@pytest.mark.parametrize("name", list(CASES))
def test_values_and_gradients(name):
    fn, x = CASES[name]
    outs = {}
    for m in (torch, torchlike):
        t = m.tensor(x, requires_grad=True)
        y = fn(m, t)
        (g,) = m.autograd.grad(y.sum(), t, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), t)
        outs[m] = (y.detach().numpy(), g.detach().numpy(), gg.numpy(), y.grad_fn.name())
    for a, b in zip(outs[torchlike][:3], outs[torch][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)
    assert outs[torchlike][3] == outs[torch][3]


def test_polygamma_negative_n():
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n."):
        torchlike.polygamma(-1, torchlike.tensor([1.0]))


def test_integer_input_is_float():
    assert torchlike.lgamma(torchlike.tensor([1, 2])).dtype == torchlike.float32


def test_methods_inplace_and_out_as_torch():
    x = np.array([1.5, 2.5, 4.0])
    for fn in (lambda m, t: t.polygamma(2), lambda m, t: t.clone().polygamma_(1), lambda m, t: t.mvlgamma(2),
               lambda m, t: t.clone().xlogy_(t), lambda m, t: t.clone().lgamma_(),
               lambda m, t: m.xlogy(t, 3.0, out=m.empty(3, dtype=m.float64)),
               lambda m, t: m.polygamma(1, t, out=m.empty(3, dtype=m.float64)),
               lambda m, t: m.mvlgamma(t, 2, out=m.empty(3, dtype=m.float64))):
        np.testing.assert_allclose(fn(torchlike, torchlike.tensor(x)).numpy(), fn(torch, torch.tensor(x)).numpy(),
                                   rtol=1e-6)
