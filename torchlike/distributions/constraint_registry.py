"""torch.distributions.constraint_registry: the two registries linking constraints to transforms. ``biject_to(c)``
is a bijective transform from the reals to the set ``c`` (for HMC-style samplers); ``transform_to(c)`` any transform
onto ``c`` (for unconstrained optimization)."""
from . import constraints, transforms
from .utils import _Number
__all__ = ['ConstraintRegistry', 'biject_to', 'transform_to']


class ConstraintRegistry:
    """Registry to link constraints to transforms."""

    def __init__(self):
        self._registry = {}
        super().__init__()

    def register(self, constraint, factory=None):
        """Registers a constraint subclass (or singleton instance) with a factory from such a constraint to a
        transform; used as a decorator when ``factory`` is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint, constraints.Constraint):
            raise TypeError(f'Expected constraint to be either a Constraint subclass or instance, but got {constraint}')
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        """Looks up a transform to constrained space, given a constraint object."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f'Cannot transform {type(constraint).__name__} constraints') from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()
_BOTH = (biject_to, transform_to)


def _register(registries, *constraint_types):
    """Register the decorated factory in each of ``registries`` for each of ``constraint_types``."""
    def decorator(factory):
        for registry in registries:
            for constraint in constraint_types:
                registry.register(constraint, factory)
        return factory
    return decorator


@_register(_BOTH, constraints.real)
def _transform_to_real(constraint):
    return transforms.identity_transform


@_register(_BOTH, constraints.positive, constraints.nonnegative)
def _transform_to_positive(constraint):
    return transforms.ExpTransform()


@_register(_BOTH, constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(constraint.lower_bound, 1)])


@_register(_BOTH, constraints.less_than)
def _transform_to_less_than(constraint):
    return transforms.ComposeTransform([transforms.ExpTransform(), transforms.AffineTransform(constraint.upper_bound, -1)])


@_register(_BOTH, constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint):
    lower_is_0 = isinstance(constraint.lower_bound, _Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, _Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(), transforms.AffineTransform(loc, scale)])


@_register((biject_to,), constraints.simplex)
def _biject_to_simplex(constraint):
    return transforms.StickBreakingTransform()


@_register((transform_to,), constraints.simplex)
def _transform_to_simplex(constraint):
    return transforms.SoftmaxTransform()


@_register((transform_to,), constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return transforms.LowerCholeskyTransform()


@_register((transform_to,), constraints.positive_definite, constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return transforms.PositiveDefiniteTransform()


@_register(_BOTH, constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint):
    return transforms.CorrCholeskyTransform()


# the constraints made of other constraints: the transform made of each registry's transforms for them
for _registry in _BOTH:
    _registry.register(constraints.independent, lambda c, r=_registry: transforms.IndependentTransform(
        r(c.base_constraint), c.reinterpreted_batch_ndims))
    _registry.register(constraints.cat, lambda c, r=_registry: transforms.CatTransform(
        [r(part) for part in c.cseq], c.dim, c.lengths))
    _registry.register(constraints.stack, lambda c, r=_registry: transforms.StackTransform(
        [r(part) for part in c.cseq], c.dim))
