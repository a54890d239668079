import torchlike as torch
from . import _ops
from . import constraints
from .distribution import Distribution
from .utils import _BinaryProbsOrLogits, broadcast_all
__all__ = ['Binomial']


def _set_count_and_probs_or_logits(dist, total_count, probs, logits):
    """``total_count`` and the one of probs and logits given, broadcast together (the count in the parameter's dtype);
    returns the batch shape (Binomial, NegativeBinomial)."""
    if (probs is None) == (logits is None):
        raise ValueError('Either `probs` or `logits` must be specified, but not both.')
    name, value = ('probs', probs) if probs is not None else ('logits', logits)
    total_count, dist._param = broadcast_all(total_count, value)
    setattr(dist, name, dist._param)
    dist.total_count = total_count.type_as(dist._param)
    return dist._param.size()


def _clamp_by_zero(x):
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_BinaryProbsOrLogits, Distribution):
    """Creates a Binomial distribution parameterized by ``total_count`` and either ``probs`` or ``logits`` (but not both)."""
    arg_constraints = {'total_count': constraints.nonnegative_integer, 'probs': constraints.unit_interval, 'logits': constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        batch_shape = _set_count_and_probs_or_logits(self, total_count, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Binomial, batch_shape, _instance, 'total_count')

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        with torch.no_grad():
            return _ops.binomial_sample(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_factorial_n = torch.lgamma(self.total_count + 1)
        log_factorial_k = torch.lgamma(value + 1)
        log_factorial_nmk = torch.lgamma(self.total_count - value + 1)
        normalize_term = self.total_count * _clamp_by_zero(self.logits) + self.total_count * torch.log1p(torch.exp(-torch.abs(self.logits))) - log_factorial_n
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError('Inhomogeneous total count not supported by `entropy`.')
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(torch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        total_count = int(self.total_count.max())
        if not self.total_count.min() == total_count:
            raise NotImplementedError('Inhomogeneous total count not supported by `enumerate_support`.')
        values = torch.arange(1 + total_count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
