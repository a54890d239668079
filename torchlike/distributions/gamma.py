import torchlike as torch
from . import _ops
from . import constraints
from .exp_family import ExponentialFamily
__all__ = ['Gamma']


def _standard_gamma(concentration):
    return _ops.standard_gamma_sample(concentration, concentration.shape)


class Gamma(ExponentialFamily):
    """Creates a Gamma distribution parameterized by shape ``concentration`` and ``rate``."""
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def __init__(self, concentration, rate, validate_args=None):
        self._broadcast_params(validate_args, concentration=concentration, rate=rate)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, 'concentration', 'rate')

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return torch.xlogy(self.concentration, self.rate) + torch.xlogy(self.concentration - 1, value) - self.rate * value - torch.lgamma(self.concentration)

    def entropy(self):
        return self.concentration - torch.log(self.rate) + torch.lgamma(self.concentration) + (1.0 - self.concentration) * torch.digamma(self.concentration)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _ops.gammainc(self.concentration, self.rate * value)
