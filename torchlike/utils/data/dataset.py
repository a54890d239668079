"""torch.utils.data's datasets: Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset,
ChainDataset, Subset and random_split.

``TensorDataset.__getitems__`` (the batch protocol torch's DataLoader uses) gathers a whole batch with one
index-tensor op per tensor, so loading never indexes a tensor one Python int at a time.
"""
import bisect
import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Generic, Iterable, TypeVar

import numpy as np

from ..._tensor import Tensor
from ...ops.creation import default_generator, from_numpy, randperm, tensor as _tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset",
           "Subset", "random_split"]

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys to samples: subclasses define ``__getitem__`` (and usually ``__len__``); an optional
    ``__getitems__(indices)`` returns a batch of samples at once (the DataLoader uses it when defined)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable):
    """A stream of samples: subclasses define ``__iter__``."""

    def __add__(self, other):
        return ChainDataset([self, other])


class _TensorBatch(Sequence):
    """The samples a TensorDataset's ``__getitems__`` returns: a sequence of tuples of tensors, held as one
    gathered tensor per column. ``default_collate`` returns the columns as they are; the per-sample tuples are
    made (one ``unbind`` per column) only when something reads them, e.g. a custom ``collate_fn``."""

    def __init__(self, columns):
        self._columns = columns
        self._rows = None

    def __len__(self):
        return self._columns[0].shape[0]

    def __getitem__(self, i):
        if self._rows is None:
            self._rows = list(zip(*(c.unbind(0) for c in self._columns)))
        return self._rows[i]

    def __repr__(self):
        return repr(list(self))


def _on_host(t):
    """Plain data in CPU memory (no autograd, no conjugate bit): a batch of it can be gathered by NumPy."""
    return not (t.requires_grad or t._conj) and all(d.platform == "cpu" for d in t._data.devices())


class TensorDataset(Dataset):
    """Samples are the rows (first dimension) of ``tensors``; each sample is a tuple, one entry per tensor."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices):
        """The samples at ``indices``, each tensor gathered with one ``index_select``."""
        index = np.asarray(indices)
        if index.ndim != 1 or index.size == 0 or index.dtype.kind not in "iu":  # not a batch of ints: as torch
            return [self[i] for i in indices]
        n = len(self)
        bad = (index < -n) | (index >= n)
        if bad.any():
            raise IndexError(f"index {index[bad.argmax()]} is out of bounds for dimension 0 with size {n}")
        index = np.where(index < 0, index + n, index).astype(np.int64)
        if all(_on_host(t) for t in self.tensors):  # gathered from the CPU array's own memory: no program
            return _TensorBatch(tuple(from_numpy(np.asarray(t._data)[index]) for t in self.tensors))
        index = from_numpy(index)
        return _TensorBatch(tuple(t.index_select(0, index) for t in self.tensors))

    def __len__(self):
        return self.tensors[0].size(0)


def _nested_items(dataset, indices):
    """``dataset``'s samples at ``indices`` through its ``__getitems__`` when it has one."""
    if callable(getattr(dataset, "__getitems__", None)):
        items = dataset.__getitems__(indices)
        if len(items) != len(indices):
            raise ValueError(f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}")
        return items
    return [dataset[i] for i in indices]


class StackDataset(Dataset):
    """Samples of several equal-length datasets side by side: a tuple (``*args``) or a dict (``**kwargs``)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like "
                             "input/output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        parts = list(args or kwargs.values())
        self._length = len(parts[0])
        if any(self._length != len(d) for d in parts):
            raise ValueError("Size mismatch between datasets")
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        if isinstance(self.datasets, dict):
            cols = {k: _nested_items(d, indices) for k, d in self.datasets.items()}
            return [{k: c[i] for k, c in cols.items()} for i in range(len(indices))]
        return list(zip(*(_nested_items(d, indices) for d in self.datasets)))

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The samples of ``datasets`` one after another."""

    @staticmethod
    def cumsum(sequence):
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        if any(isinstance(d, IterableDataset) for d in self.datasets):
            raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]


class ChainDataset(IterableDataset):
    """The streams of several IterableDatasets one after another."""

    def __init__(self, datasets):
        self.datasets = datasets

    def _checked(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._checked())


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        if type(self).__getitem__ is not Subset.__getitem__ and type(self).__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. When subclassing Subset and "
                "overriding __getitem__, you must also override __getitems__ to ensure DataLoader works correctly "
                "with your custom logic. A simple implementation:\n\ndef __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if isinstance(self.indices, Tensor):  # one gather, not one indexing op per int
            mapped = self.indices[_tensor(list(indices), dtype=self.indices.dtype)].tolist() if indices else []
        else:
            mapped = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(mapped)
        return [self.dataset[i] for i in mapped]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` at random into non-overlapping Subsets of the given lengths, or fractions of its
    length (floors, then the remainder given out one at a time from the first split)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            sizes.append(math.floor(len(dataset) * frac))
        for i in range(len(dataset) - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - n:end]) for end, n in zip(itertools.accumulate(lengths), lengths)]
