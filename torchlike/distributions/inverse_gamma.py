import torchlike as torch
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution, _base_dist_param
from .transforms import PowerTransform
__all__ = ['InverseGamma']


class InverseGamma(TransformedDistribution):
    """Creates an inverse gamma distribution parameterized by ``concentration`` and ``rate``: ``1 / X`` for
    ``X ~ Gamma(concentration, rate)``."""
    arg_constraints = {'concentration': constraints.positive, 'rate': constraints.positive}
    support = constraints.positive
    has_rsample = True
    concentration = _base_dist_param('concentration')
    rate = _base_dist_param('rate')

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(InverseGamma, batch_shape, _instance)

    @property
    def mean(self):
        result = self.rate / (self.concentration - 1)
        return torch.where(self.concentration > 1, result, torch.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        result = self.rate.square() / ((self.concentration - 1).square() * (self.concentration - 2))
        return torch.where(self.concentration > 2, result, torch.inf)

    def entropy(self):
        return self.concentration + self.rate.log() + self.concentration.lgamma() - (1 + self.concentration) * self.concentration.digamma()
