"""torch.distributions.utils: broadcasting, probs/logits conversion, lazy properties."""
from functools import update_wrapper
from numbers import Number

import torchlike as torch
from .. import _dtype
from ..nn import functional as F
from ..ops import creation as _creation

euler_constant = 0.5772156649015329
_Number = (bool, int, float)
Number = Number
__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits", "lazy_property",
           "tril_matrix_to_vec", "vec_to_tril_matrix"]


def broadcast_all(*values):
    """Numbers become tensors (of the first tensor's dtype, else the default dtype); all are broadcast together."""
    if not all(isinstance(v, (torch.Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects implementing "
                         "__torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, torch.Tensor)), _dtype.get_default_dtype())
    values = [v if isinstance(v, torch.Tensor) else _creation.tensor(v, dtype=dtype) for v in values]
    return torch.broadcast_tensors(*values)


def _set_probs_or_logits(dist, probs, logits):
    """Set the one of probs and logits given (torch's ValueError unless exactly one is); returns the batch shape."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    name, value = ("probs", probs) if probs is not None else ("logits", logits)
    setattr(dist, name, broadcast_all(value)[0])
    dist._param = getattr(dist, name)
    return torch.Size() if isinstance(value, _Number) else dist._param.size()


def _expand_probs_or_logits(dist, new, shape):
    """``expand``: ``new`` gets whichever of probs and logits ``dist`` holds, expanded to ``shape``."""
    for name in ("probs", "logits"):
        if name in dist.__dict__:
            setattr(new, name, getattr(dist, name).expand(shape))
            new._param = getattr(new, name)


def _standard_normal(shape, dtype, device):
    return _creation.randn(tuple(shape), dtype=dtype, device=device)


def _sum_rightmost(value, dim):
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    return torch.sigmoid(logits) if is_binary else F.softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = _dtype.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return torch.log(ps_clamped) - torch.log1p(-ps_clamped)
    return torch.log(ps_clamped)


class lazy_property:
    """Used as a decorator for lazy loading of class attributes."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with torch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """We want lazy properties to look like multiple things."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def _tril_mask(n, diag):
    arange = torch.arange(n)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag)]


def vec_to_tril_matrix(vec, diag=0):
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > _dtype.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be expressed as "
                         "the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(tuple(vec.shape[:-1]) + (n, n))
    mat[..., _tril_mask(n, diag)] = vec
    return mat


class _BinaryProbsOrLogits:
    """The parameterisation of a distribution given the probability of a binary event as ``probs`` or as ``logits``
    (Bernoulli, Binomial, Geometric, ...): ``_param`` is the one given, the other is computed when first read."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _expand_binary(self, cls, batch_shape, _instance, *expanded, kept=()):
        """``expand`` of a ``cls``: probs or logits and the attributes ``expanded`` expanded, ``kept`` as they are."""
        new = self._get_checked_instance(cls, _instance)
        batch_shape = torch.Size(batch_shape)
        for name in kept:
            setattr(new, name, getattr(self, name))
        for name in expanded:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        _expand_probs_or_logits(self, new, batch_shape)
        super(cls, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new
