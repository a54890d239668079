"""Fetching one batch (or one sample) from a map-style or iterable dataset, as torch's fetchers do."""
from ..dataset import _TensorBatch
from .collate import default_collate


class _IterableDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset_iter = iter(dataset)
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.dataset_iter))
        data = []
        for _ in possibly_batched_index:
            try:
                data.append(next(self.dataset_iter))
            except StopIteration:
                self.ended = True
                break
        if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
            raise StopIteration
        return self.collate_fn(data)


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn

    def fetch(self, possibly_batched_index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[possibly_batched_index])
        if getattr(self.dataset, "__getitems__", None):
            data = self.dataset.__getitems__(possibly_batched_index)
            if isinstance(data, _TensorBatch) and self.collate_fn is not default_collate:
                data = list(data)  # a collate_fn of the user's gets torch's list of tuples
            return self.collate_fn(data)
        return self.collate_fn([self.dataset[i] for i in possibly_batched_index])


def _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)
