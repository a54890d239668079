"""The half (folded at zero) distributions HalfNormal and HalfCauchy: ``|X|`` for a base ``X`` centred at 0."""
import math
import torchlike as torch
from math import inf
from . import constraints
from .transformed_distribution import TransformedDistribution, _base_dist_param
from .transforms import AbsTransform


class _Half(TransformedDistribution):
    """``|X|`` for ``X ~ _base(0, scale)``."""
    arg_constraints = {'scale': constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    scale = _base_dist_param('scale')

    def __init__(self, scale, validate_args=None):
        super().__init__(self._base(0, scale, validate_args=False), AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(_Half, batch_shape, _instance)

    @property
    def mode(self):
        return torch.zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = torch.as_tensor(value, dtype=self.base_dist.scale.dtype, device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return torch.where(value >= 0, log_prob, -inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
