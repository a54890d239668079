from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution, _base_dist_param
from .transforms import StickBreakingTransform
__all__ = ['LogisticNormal']


class LogisticNormal(TransformedDistribution):
    """Creates a logistic-normal distribution parameterized by ``loc`` and ``scale``: the stick-breaking transform of
    a Normal(loc, scale) vector, on the simplex of one more dimension."""
    arg_constraints = {'loc': constraints.real, 'scale': constraints.positive}
    support = constraints.simplex
    has_rsample = True
    loc = _base_dist_param('loc', depth=2)  # (the base is an Independent Normal)
    scale = _base_dist_param('scale', depth=2)

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_with(LogisticNormal, batch_shape, _instance)
