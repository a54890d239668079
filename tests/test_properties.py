"""Property tests (hypothesis): random broadcasting binary-op graphs agree with torch in values and gradients.

Shapes come from a small fixed set so that each (op, shapes, dtype) compiles once however many examples run.
"""
import numpy as np
import torch
from hypothesis import given, settings, strategies as st

import torchlike as tl

SHAPE_PAIRS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((), (3,))]
OPS = ["add", "sub", "mul", "div", "maximum", "minimum"]
UNARY = ["sin", "exp", "tanh", "sigmoid", "relu", "abs"]


def _run(T, op, unary, a, b, scalar):
    x = T.tensor(a, requires_grad=True)
    y = T.tensor(b, requires_grad=True)
    z = getattr(T, op)(getattr(T, unary)(x), y)
    z = z * scalar
    loss = (z * z).sum()
    loss.backward()
    return z.detach().numpy(), x.grad.numpy(), y.grad.numpy(), z.grad_fn.name()


@settings(max_examples=40, deadline=None)
@given(pair=st.sampled_from(SHAPE_PAIRS), op=st.sampled_from(OPS), unary=st.sampled_from(UNARY),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2 ** 31 - 1),
       scalar=st.floats(-3, 3, allow_nan=False).filter(lambda v: abs(v) > 1e-3))
def test_random_binary_graphs_match_torch(pair, op, unary, dtype, seed, scalar):
    rng = np.random.RandomState(seed)
    a = rng.uniform(-2, 2, pair[0]).astype(dtype)
    b = rng.uniform(0.5, 2, pair[1]).astype(dtype) * rng.choice([-1, 1], pair[1]).astype(dtype)
    ours = _run(tl, op, unary, a, b, scalar)
    theirs = _run(torch, op, unary, a, b, scalar)
    tol = dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    for mine, ref in zip(ours[:3], theirs[:3]):
        assert mine.shape == ref.shape and mine.dtype == ref.dtype
        np.testing.assert_allclose(mine, ref, **tol)
    assert ours[3] == theirs[3] == "MulBackward0"
