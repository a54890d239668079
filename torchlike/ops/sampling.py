"""torch's random sampling beyond rand/randn/randint/normal: the in-place samplers (``uniform_``, ``normal_``,
``random_``, ``exponential_``, ``bernoulli_``, ``geometric_``, ``log_normal_``, ``cauchy_``), ``bernoulli``,
``poisson``, ``multinomial`` and the global generator's state. Draws come from torchlike's generator (not torch's
stream: values differ from torch's, distributions agree). Each in-place sampler records torch's node, whose
gradient is zero, and bumps the version once."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap
from ._out import _check_dtype, _write_out
from ._registry import op, _apply, _apply_inplace
from ._bind import public
from .creation import (_type_name, _key, _sample, _sample_per_element, _draw_uniform, _draw_normal, _draw_randint,
                       default_generator)


def _draw_exponential(key, shape, dtype, lambd):
    u = jax.random.uniform(key, shape, jnp.float64 if dtype == jnp.float64 else jnp.float32)
    return (-jnp.log1p(-u) / lambd).astype(dtype)


def _draw_geometric(key, shape, dtype, p):
    u = jax.random.uniform(key, shape, jnp.float64, minval=jnp.finfo(jnp.float64).tiny)
    return jnp.ceil(jnp.log(u) / jnp.log1p(-p)).astype(dtype)


def _draw_log_normal(key, shape, dtype, mean, std):
    return jnp.exp(_draw_normal(key, shape, jnp.float64 if dtype == jnp.float64 else jnp.float32, mean,
                                std)).astype(dtype)


def _draw_cauchy(key, shape, dtype, median, sigma):
    u = jax.random.uniform(key, shape, jnp.float64 if dtype == jnp.float64 else jnp.float32)
    return (median + sigma * jnp.tan(jnp.pi * (u - 0.5))).astype(dtype)


def _draw_bernoulli(key, shape, dtype, p):
    return (jax.random.uniform(key, shape, jnp.float64) < p).astype(dtype)


def _num(v):
    """A number as torch's C++ messages print a double (2.0 -> 2)."""
    return f"{float(v):g}"


def _sampled(node):
    """The table entry of an in-place sampler: the sample replaces self; self's gradient is zero."""
    entry = op(node, save=(), nondiff=("sample",), attrs=(), const_grads=True)(lambda self, sample: sample)
    entry.derivative(lambda grad: jnp.zeros_like(grad))
    return entry


def _fill(entry, self, draw, generator, *params):
    sample = _sample(draw, _key(generator), tuple(self.shape), self._data.dtype, *params)
    return _apply_inplace(entry, self, (self, _wrap(sample)), ())


def _float_only(self, name):
    """``self``'s JAX dtype; torch's error when its kernel ``name`` has no version for it (not floating)."""
    if self._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"{name}\" not implemented for '{_dtype._SCALAR_TYPE[self.dtype.name]}'")
    return self._data.dtype


_uniform_node, _normal_node = _sampled("UniformBackward0"), _sampled("NormalBackward0")
_random_nodes = [_sampled(f"RandomBackward{i}") for i in range(3)]  # random_(from, to) / random_(to) / random_()
_exponential_node, _geometric_node = _sampled("ExponentialBackward0"), _sampled("GeometricBackward0")
_log_normal_node, _cauchy_node = _sampled("LogNormalBackward0"), _sampled("CauchyBackward0")
_bernoulli_node = _sampled("BernoulliBackward2")


@public(name="uniform_", function=False)
def _uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Fill with samples uniform in [from, to)."""
    a, b = kw.pop("from", from_), to
    _float_only(self, "check_uniform_bounds")
    if not a <= b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={_num(a)} > to={_num(b)}")
    return _fill(_uniform_node, self, _draw_uniform, generator, float(a), float(b))


@public(name="normal_", function=False)
def _normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std^2)."""
    _float_only(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(std)}")
    return _fill(_normal_node, self, _draw_normal, generator, float(mean), float(std))


def _random_bounds(self):
    """random_()'s default range: [0, 2^mantissa] for floats (every integer exactly representable), the dtype's
    non-negative range for integers."""
    d = self._data.dtype
    if d == np.bool_:
        return 0, 2
    if d.kind in "fV":
        return 0, 2 ** (np.finfo(d).nmant + 1) + 1
    return 0, int(np.iinfo(d).max) + (1 if d.itemsize < 8 else 0)


@public(name="random_", function=False)
def _random_(self, from_=None, to=None, *, generator=None, **kw):
    """Fill with integers: ``random_()`` over the dtype's range, ``random_(to)`` in [0, to), ``random_(from, to)``."""
    a = kw.pop("from", from_)
    if a is not None and to is None:
        node, (a, b) = _random_nodes[1], (0, a)
    elif a is None:
        node, (a, b) = _random_nodes[2], _random_bounds(self)
    else:
        node, b = _random_nodes[0], to
    if a >= b:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={a} >= to={b}")
    sample = _sample(_draw_randint, _key(generator), tuple(self.shape), np.int64, int(a), int(b))
    return _apply_inplace(node, self, (self, _wrap(sample.astype(self._data.dtype))), ())


@public(name="exponential_", function=False)
def _exponential_(self, lambd=1.0, *, generator=None):
    """Fill with samples from the exponential distribution of rate ``lambd``."""
    _float_only(self, "exponential_cpu")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_num(lambd)}")
    return _fill(_exponential_node, self, _draw_exponential, generator, float(lambd))


@public(name="geometric_", function=False)
def _geometric_(self, p, *, generator=None):
    """Fill with the number of Bernoulli(p) trials up to the first success."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return _fill(_geometric_node, self, _draw_geometric, generator, float(p))


@public(name="log_normal_", function=False)
def _log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill with exp of samples from N(mean, std^2)."""
    _float_only(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    return _fill(_log_normal_node, self, _draw_log_normal, generator, float(mean), float(std))


@public(name="cauchy_", function=False)
def _cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill with samples from the Cauchy distribution."""
    _float_only(self, "cauchy_cpu")
    return _fill(_cauchy_node, self, _draw_cauchy, generator, float(median), float(sigma))


@public(name="bernoulli_", function=False)
def _bernoulli_(self, p=0.5, *, generator=None):
    """Fill with 1 with probability ``p`` (a number or a tensor broadcast to self), else 0."""
    if isinstance(p, Tensor):
        u = _sample(_draw_uniform, _key(generator), tuple(self.shape), np.float64, 0.0, 1.0)
        sample = (u < jnp.broadcast_to(p._data, self.shape)).astype(self._data.dtype)
        return _apply_inplace(_bernoulli_tensor_node, self, (self, _wrap(sample)), ())
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_num(p)}")
    return _fill(_bernoulli_node, self, _draw_bernoulli, generator, float(p))


_bernoulli_tensor_node = _sampled("BernoulliBackward1")


@op("BernoulliBackward0", save=(), nondiff=("sample",), attrs=(), const_grads=True)
def _bernoulli(self, sample):
    return sample


_bernoulli.derivative(lambda grad: jnp.zeros_like(grad))


@public
def bernoulli(input, p=None, *, generator=None, out=None):
    """1 with probability ``input`` (or ``p``, given), else 0, elementwise (BernoulliBackward0: zero gradient)."""
    if p is not None:
        return _bernoulli_(input.clone(), p, generator=generator)
    if input._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                  f"'{_dtype._SCALAR_TYPE[input.dtype.name]}'")
    if bool(jnp.any((input._data < 0) | (input._data > 1))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    u = _sample(_draw_uniform, _key(generator), tuple(input.shape), np.float64, 0.0, 1.0)
    result = _apply(_bernoulli, (input, _wrap((u < input._data).astype(input._data.dtype))), ())
    if out is not None and out._data.dtype.kind == "c":
        raise NotImplementedError(f"\"bernoulli_tensor_cpu_self_\" not implemented for "
                                  f"'{_dtype._SCALAR_TYPE[out.dtype.name]}'")
    return result if out is None else _write_out("bernoulli", lambda: result, out, (input,), "any")


def _draw_poisson(key, shape, dtype, rate):
    return jax.random.poisson(key, rate, shape).astype(dtype)


@op("PoissonBackward0", save=(), nondiff=("sample",), attrs=(), const_grads=True)
def _poisson(self, sample):
    return sample


_poisson.derivative(lambda grad: jnp.zeros_like(grad))


@public(method=False)
def poisson(input, generator=None):
    """Samples from Poisson(rate = ``input``), elementwise (PoissonBackward0: zero gradient)."""
    if input._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_dtype._SCALAR_TYPE[input.dtype.name]}'")
    if bool(jnp.any(input._data < 0)):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    sample = _sample_per_element(_draw_poisson, _key(generator), tuple(input.shape), input._data.dtype, input._data)
    return _apply(_poisson, (input, _wrap(sample)), ())


@public
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categories weighted by ``input``'s rows (1-D or 2-D), int64."""
    if out is not None:  # (before anything else, the autograd check included)
        _check_dtype("multinomial", "multinomial", np.int64, out._data.dtype)
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if input._data.dtype.kind not in "fV":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    w = np.asarray(input._data, np.float64).reshape(-1, n)
    if (w < 0).any() or not np.isfinite(w).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (w.sum(1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    logits = jnp.log(jnp.asarray(w))
    key = _key(generator)
    if replacement:
        idx = jax.random.categorical(key, logits, axis=-1, shape=(num_samples, w.shape[0])).T
    else:  # Gumbel top-k: sampling without replacement
        g = jax.random.gumbel(key, logits.shape, jnp.float64)
        idx = jnp.argsort(-(logits + g), axis=-1)[:, :num_samples]
    idx = idx.astype(jnp.int64).reshape(tuple(input.shape[:-1]) + (num_samples,))
    return _wrap(idx) if out is None else _write_out("multinomial", lambda: _wrap(idx), out, (input,))


@public(method=False)
def get_rng_state():
    """The global generator's state as a uint8 tensor."""
    return default_generator.get_state()


@public(method=False)
def set_rng_state(new_state):
    """Restore the global generator's state from ``get_rng_state()``."""
    if not isinstance(new_state, Tensor):
        raise TypeError(f"expected a torch.ByteTensor, but got {_type_name(new_state)}")
    if new_state.dtype != _dtype.uint8:
        raise TypeError("RNG state must be a torch.ByteTensor")
    if new_state.numel() != get_rng_state().numel():
        raise RuntimeError("RNG state is wrong size")
    default_generator.set_state(new_state)
