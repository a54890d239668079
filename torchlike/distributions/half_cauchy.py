import math
import torchlike as torch
from ._half import _Half
from .cauchy import Cauchy
__all__ = ['HalfCauchy']


class HalfCauchy(_Half):
    """Creates a half-Cauchy distribution parameterized by ``scale``: ``|X|`` for ``X ~ Cauchy(0, scale)``; its mean
    is infinite."""
    _base = Cauchy

    @property
    def mean(self):
        return torch.full(self._extended_shape(), math.inf, dtype=self.scale.dtype, device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
