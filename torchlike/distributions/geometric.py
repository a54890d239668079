import torchlike as torch
from . import constraints
from .distribution import Distribution, _all_valid
from .utils import _BinaryProbsOrLogits, _set_probs_or_logits, broadcast_all
from ..nn.functional import binary_cross_entropy_with_logits
__all__ = ['Geometric']


class Geometric(_BinaryProbsOrLogits, Distribution):
    """Creates a Geometric distribution parameterized by ``probs``: the number of failures before the first success in
    Bernoulli trials of success probability ``probs``."""
    arg_constraints = {'probs': constraints.unit_interval, 'logits': constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        batch_shape = _set_probs_or_logits(self, probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not _all_valid(valid, 'Expected parameter probs of distribution Geometric to be positive'):
                invalid_value = value.data[~valid]
                raise ValueError(f'Expected parameter probs ({type(value).__name__} of shape {tuple(value.shape)}) of distribution {repr(self)} to be positive but found invalid values:\n{invalid_value}')

    def expand(self, batch_shape, _instance=None):
        return self._expand_binary(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return torch.zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        tiny = torch.finfo(self.probs.dtype).tiny
        with torch.no_grad():
            u = torch.rand(shape, dtype=self.probs.dtype, device=self.probs.device).clamp(min=tiny)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = probs.clone()
        probs[(probs == 1) & (value == 0)] = 0
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction='none') / self.probs
