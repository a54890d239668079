"""Composite functions checked four ways with interop.testing.assert_grads_close: torchlike's tape, torch's
autograd, jax.grad of torchlike's forward (as_jax) and central finite differences, all on the same float64 inputs."""
import numpy as np
import pytest

from interop.testing import assert_grads_close

RNG = np.random.default_rng(11)


def mlp(T, x, w1, b1, w2):
    h = T.nn.functional.gelu(T.nn.functional.linear(x, w1, b1))
    return T.nn.functional.log_softmax(h @ w2, dim=-1)


def attention(T, q, k, v):
    scores = (q @ k.transpose(-2, -1)) / 2.0
    return T.softmax(scores, dim=-1) @ v


def conv_pool(T, img, w):
    y = T.nn.functional.conv2d(img, w, padding=1)
    return T.nn.functional.avg_pool2d(T.tanh(y), 2)


def norm_and_losses(T, x, target):
    y = T.nn.functional.layer_norm(x, (4,))
    return T.nn.functional.mse_loss(y, target) + (x.exp().sum(1).log() * x.norm(dim=1)).mean()


def in_place_on_views(T, x, y):
    b = x * 1
    b[0].mul_(y[0])
    b.t()[1].add_(y[1].sum())
    return b.cumsum(1) * b.prod(0)


CASES = {
    "mlp": (mlp, [(3, 4), (5, 4), (5,), (5, 2)]),
    "attention": (attention, [(2, 3, 4), (2, 3, 4), (2, 3, 4)]),
    "conv_pool": (conv_pool, [(1, 2, 4, 4), (3, 2, 3, 3)]),
    "norm_and_losses": (norm_and_losses, [(3, 4), (3, 4)]),
    "in_place_on_views": (in_place_on_views, [(4, 4), (4, 4)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_four_ways_agree(name):
    fn, shapes = CASES[name]
    assert_grads_close(fn, *[RNG.standard_normal(s) for s in shapes], rtol=1e-6, atol=1e-8)
