"""The tensor ops the distributions need that torchlike does not declare publicly (yet): differentiable table
entries (torch's node names; backward by jax.vjp) and random draws from torchlike's generator."""

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import OpNode, apply, op, wrap
from .._tensor import Tensor
from ..ops import creation as _creation
from ..ops.sampling import _draw_poisson
from ..ops import linalg_module as _linalg


def cholesky(input, *, upper=False):
    """torch.linalg.cholesky, with its error for a matrix that is not positive-definite."""
    return _linalg._cholesky_ex_impl(input, upper, True).L


def solve_triangular(A, B, *, upper, left=True):
    """torch.linalg.solve_triangular: X with A X = B (left) or X A = B."""
    return apply(_linalg._solve_triangular, (A, B), (upper, left, False))


@op("StandardGammaBackward0", save=("self", "result"), nondiff=("sample",))
def _standard_gamma(self, sample):
    return sample


@_standard_gamma.derivative
def _(grad, self, result):  # the implicit reparameterisation gradient d sample / d concentration
    return grad * jax.lax.random_gamma_grad(self, result)


# ----- random draws with per-element parameters: padded to the draw's size bucket (one program per bucket) -------


def _draw_gamma(key, shape, dtype, alpha):
    return jax.random.gamma(key, alpha, shape, dtype)


def _draw_binomial(key, shape, dtype, count, probs):
    return jax.random.binomial(key, count, probs, shape, dtype)


def _draw_categorical(key, shape, dtype, logits):  # logits: (size, K): one class per row
    return jax.random.categorical(key, logits, axis=-1).astype(dtype)


def _padded(draw, shape, dtype, generator, *params):
    return wrap(_creation._sample_per_element(draw, _creation._key(generator), shape, dtype, *params))


def standard_gamma_sample(concentration, shape):
    """Gamma(concentration, 1) draws of ``shape``, differentiable w.r.t. the concentration (StandardGammaBackward0)."""
    conc = concentration.expand(shape)
    sample = _padded(_draw_gamma, tuple(shape), conc._data.dtype, None, conc._data)
    tiny = np.finfo(conc._data.dtype).tiny  # torch clamps the draws away from 0
    sample = wrap(jnp.maximum(sample._data, tiny))
    return apply(_standard_gamma, (conc, sample), ())


def poisson_sample(rate):
    return _padded(_draw_poisson, tuple(rate.shape), rate._data.dtype, None, rate._data)


def binomial_sample(count, probs):
    return _padded(_draw_binomial, tuple(probs.shape), probs._data.dtype, None, count._data, probs._data)


def categorical_sample(logits, shape):
    """Class indices (int64) of ``shape`` from logits broadcast to ``shape + (K,)``."""
    return _padded(_draw_categorical, tuple(shape), np.int64, None, logits._data)


def is_tensor(x):
    return isinstance(x, Tensor)


def _igamma_apply(node, grads, mask=None):
    if (node._mask if mask is None else mask)[0]:
        raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
    return OpNode._apply(node, grads, mask)


@op("IgammaBackward0", save=("self", "other"), node_apply=_igamma_apply)
def _gammainc(self, other):
    return jax.scipy.special.gammainc(self, other)


@_gammainc.derivative
def _(grad, self, other):  # torch has no derivative w.r.t. self (the node raises when it is asked for)
    return jnp.zeros_like(self), grad * jnp.exp((self - 1) * jnp.log(other) - other - jax.lax.lgamma(self))


def gammainc(input, other):
    """The regularized lower incomplete gamma function (no gradient w.r.t. ``input``, as in torch)."""
    return apply(_gammainc, (input, other), ())


@op("CholeskySolveBackward0", save=("self", "input2", "result"))
def _cholesky_solve(self, input2):
    batch = jnp.broadcast_shapes(self.shape[:-2], input2.shape[:-2])
    B, L = jnp.broadcast_to(self, batch + self.shape[-2:]), jnp.broadcast_to(input2, batch + input2.shape[-2:])
    y = jax.lax.linalg.triangular_solve(L, B, left_side=True, lower=True)
    return jax.lax.linalg.triangular_solve(L, y, left_side=True, lower=True, transpose_a=True)


@_cholesky_solve.derivative
def _(grad, input2, result):  # torch's formula: the factor's gradient is a full matrix (not only its triangle)
    grad_self = _cholesky_solve.forward(grad, input2)
    common = grad_self @ jnp.swapaxes(result, -1, -2)
    return grad_self, -((common + jnp.swapaxes(common, -1, -2)) @ input2)


def cholesky_solve(B, L):
    """torch.cholesky_solve(B, L) (lower): X with (L L^T) X = B, from a lower Cholesky factor L."""
    return apply(_cholesky_solve, (B, L), ())


@op("CholeskyInverseBackward0")
def _cholesky_inverse(self):
    eye = jnp.eye(self.shape[-1], dtype=self.dtype)
    inv = jax.scipy.linalg.solve_triangular(self, jnp.broadcast_to(eye, self.shape), lower=True)
    return jnp.swapaxes(inv, -1, -2) @ inv


def cholesky_inverse(input):
    """(L L^T)^-1 from a lower Cholesky factor L."""
    return apply(_cholesky_inverse, (input,), ())
