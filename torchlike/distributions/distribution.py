import warnings
import jax
import torchlike as torch
from ..ops import _util
from . import constraints
from .utils import _Number, broadcast_all, lazy_property
__all__ = ['Distribution']


def _all_valid(valid, message):
    """Whether every value satisfies its constraint. Traced values (under vmap, torchlike.compile) are not read on
    the host: compile checks them in its program (raised after the call), vmap's examples go unchecked."""
    if isinstance(valid._data, jax.core.Tracer):
        _util.check_later(~valid._data.all(), ValueError, message)
        return True
    return bool(valid.all())


class Distribution:
    """Distribution is the abstract base class for probability distributions."""
    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value):
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=torch.Size(), event_shape=torch.Size(), validate_args=None):
        self._batch_shape = batch_shape
        self._event_shape = event_shape
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f'{self.__class__} does not define `arg_constraints`. ' + 'Please set `arg_constraints = {}` or initialize the distribution ' + 'with `validate_args=False` to turn off validation.', stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue
                value = getattr(self, param)
                valid = constraint.check(value)
                if not _all_valid(valid, f'Expected parameter {param} of distribution {type(self).__name__} to satisfy the constraint {repr(constraint)}'):
                    raise ValueError(f'Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) of distribution {repr(self)} to satisfy the constraint {repr(constraint)}, but found invalid values:\n{value}')
        super().__init__()

    def expand(self, batch_shape, _instance=None):
        raise NotImplementedError

    @property
    def batch_shape(self):
        return self._batch_shape

    @property
    def event_shape(self):
        return self._event_shape

    @property
    def arg_constraints(self):
        raise NotImplementedError

    @property
    def support(self):
        raise NotImplementedError

    @property
    def mean(self):
        raise NotImplementedError

    @property
    def mode(self):
        raise NotImplementedError(f'{self.__class__} does not implement mode')

    @property
    def variance(self):
        raise NotImplementedError

    @property
    def stddev(self):
        return self.variance.sqrt()

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=torch.Size()):
        raise NotImplementedError

    def sample_n(self, n):
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(torch.Size((n,)))

    def log_prob(self, value):
        raise NotImplementedError

    def cdf(self, value):
        raise NotImplementedError

    def icdf(self, value):
        raise NotImplementedError

    def enumerate_support(self, expand=True):
        raise NotImplementedError

    def entropy(self):
        raise NotImplementedError

    def perplexity(self):
        return torch.exp(self.entropy())

    def _extended_shape(self, sample_shape=torch.Size()):
        if not isinstance(sample_shape, torch.Size):
            sample_shape = torch.Size(sample_shape)
        return torch.Size(sample_shape + self._batch_shape + self._event_shape)

    def _validate_sample(self, value):
        if not isinstance(value, torch.Tensor):
            raise ValueError('The value argument to log_prob must be a Tensor')
        event_dim_start = len(value.size()) - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f'The right-most size of value must match event_shape: {value.size()} vs {self._event_shape}.')
        actual_shape = value.size()
        expected_shape = self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and (i != j):
                raise ValueError(f'Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs {expected_shape}.')
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f'{self.__class__} does not define `support` to enable ' + 'sample validation. Please initialize the distribution with ' + '`validate_args=False` to turn off validation.', stacklevel=2)
            return
        if support is None:
            raise AssertionError('support is unexpectedly None')
        valid = support.check(value)
        if not _all_valid(valid, f'Expected value argument to be within the support ({repr(support)}) of the distribution {type(self).__name__}'):
            raise ValueError(f'Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) to be within the support ({repr(support)}) of the distribution {repr(self)}, but found invalid values:\n{value}')

    def _get_checked_instance(self, cls, _instance=None):
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f'Subclass {self.__class__.__name__} of {cls.__name__} that defines a custom __init__ method must also define a custom .expand() method.')
        return self.__new__(type(self)) if _instance is None else _instance

    def _expand_params(self, cls, batch_shape, _instance, *names):
        """``expand`` of a ``cls`` whose attributes ``names`` are all expanded to the new batch shape."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in names:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        super(cls, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _broadcast_params(self, validate_args, **params):
        """Set the parameters broadcast together (numbers become tensors); the batch shape is theirs, () when all
        are numbers."""
        values = broadcast_all(*params.values())
        for name, value in zip(params, values):
            setattr(self, name, value)
        numbers = all(isinstance(v, _Number) for v in params.values())
        Distribution.__init__(self, torch.Size() if numbers else values[0].size(), validate_args=validate_args)

    def __repr__(self):
        param_names = [k for k in self.arg_constraints if k in self.__dict__]
        args_string = ', '.join([f'{p}: {(self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size())}' for p in param_names])
        return self.__class__.__name__ + '(' + args_string + ')'
