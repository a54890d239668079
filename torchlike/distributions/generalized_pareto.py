import math
from numbers import Number, Real
import torchlike as torch
from math import inf, nan
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all
__all__ = ['GeneralizedPareto']


class GeneralizedPareto(Distribution):
    """Creates a Generalized Pareto distribution parameterized by ``loc``, ``scale`` and ``concentration``."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive, 'concentration': constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers = isinstance(loc, Number) and isinstance(scale, Number) and isinstance(concentration, Number)
        super().__init__(torch.Size() if numbers else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance, 'loc', 'scale', 'concentration')

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        u = torch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _z_and_safe_concentration(self, value):
        """The standardized value, where the concentration is (close to) 0 and the concentration with 1 there."""
        eq_zero = torch.isclose(self.concentration, torch.tensor(0.0))
        safe_conc = torch.where(eq_zero, torch.ones_like(self.concentration), self.concentration)
        return (value - self.loc) / self.scale, eq_zero, safe_conc

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z, eq_zero, safe_conc = self._z_and_safe_concentration(value)
        y = 1 / safe_conc + torch.ones_like(z)
        where_nonzero = torch.where(y == 0, y, y * torch.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - torch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z, eq_zero, safe_conc = self._z_and_safe_concentration(value)
        where_nonzero = -torch.log1p(safe_conc * z) / safe_conc
        return torch.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        loc = self.loc
        scale = self.scale
        concentration = self.concentration
        eq_zero = torch.isclose(concentration, torch.zeros_like(concentration))
        safe_conc = torch.where(eq_zero, torch.ones_like(concentration), concentration)
        logu = torch.log1p(-value)
        where_nonzero = loc + scale / safe_conc * torch.expm1(-safe_conc * logu)
        where_zero = loc - scale * logu
        return torch.where(eq_zero, where_zero, where_nonzero)

    def _moment(self, bound, fn):
        """``fn(concentration)`` where the concentration is below ``bound`` (the moment exists), NaN elsewhere."""
        valid = self.concentration < bound
        return torch.where(valid, fn(torch.where(valid, self.concentration, bound / 2)), nan)

    @property
    def mean(self):
        return self._moment(1, lambda c: self.loc + self.scale / (1 - c))

    @property
    def variance(self):
        return self._moment(0.5, lambda c: self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)))

    def entropy(self):
        ans = torch.log(self.scale) + self.concentration + 1
        return torch.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration, inf)
        return constraints.interval(lower, upper)
