"""torch.utils.data's samplers. Random ones draw from torchlike's JAX-keyed generators: ``manual_seed`` (or a
seeded ``Generator``) makes their orders reproducible, though not equal to torch's."""
import itertools
from typing import Generic, TypeVar

import numpy as np

from ... import _dtype
from ...ops.creation import Generator, as_tensor, rand, randint, randperm

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler", "SubsetRandomSampler",
           "WeightedRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)


class Sampler(Generic[_T_co]):
    """Base class: ``__iter__`` yields indices (or batches of indices); ``__len__`` optional."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _fresh_generator():
    """A generator seeded by one draw from the global one (as torch's samplers do without a ``generator``)."""
    return Generator().manual_seed(int(randint(0, 2 ** 63 - 1, ()).item()))


class RandomSampler(Sampler):
    """A random permutation (repeated to ``num_samples``), or ``num_samples`` draws with replacement."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:  # in chunks of 32, as torch
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            if self.num_samples % n:  # (torch draws a permutation here even when it keeps none of it)
                yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given ``indices`` in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


def _multinomial(weights, num_samples, replacement, generator):
    """torch.multinomial over a 1-d float64 array, with its errors: inverse-CDF draws with replacement,
    Efraimidis-Spirakis keys u ** (1 / w) without (both from torchlike's ``rand``)."""
    if not replacement and num_samples > weights.size:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    bad = ~(weights >= 0) | np.isinf(weights)
    if bad.any():
        if not replacement or num_samples == 1:
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        first = weights[bad.argmax()]  # torch's kernel with replacement names the first bad entry
        raise RuntimeError("invalid multinomial distribution (encountering probability entry "
                           f"{'= infinity or NaN' if first >= 0 else '< 0'})")
    if weights.sum() <= 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    u = rand(num_samples if replacement else weights.size, generator=generator, dtype=_dtype.float64).numpy()
    if replacement:
        cdf = np.cumsum(weights)
        return np.minimum(np.searchsorted(cdf, u * cdf[-1], side="right"), weights.size - 1)
    with np.errstate(divide="ignore"):
        keys = np.log(u) / weights  # log(u ** (1 / w)); -inf for zero weights, drawn last
    return np.argsort(-keys, kind="stable")[:num_samples]


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices of ``weights`` drawn with probabilities proportional to them."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights_tensor = as_tensor(weights, dtype=_dtype.float64)
        if len(weights_tensor.shape) != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights_tensor.shape)}")
        self.weights = weights_tensor
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        yield from _multinomial(self.weights.numpy(), self.num_samples, self.replacement, self.generator).tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of ``sampler`` into lists of ``batch_size`` (the last one shorter unless
    ``drop_last``)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            yield from (list(b) for b in zip(*[it] * self.batch_size))
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
