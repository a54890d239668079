"""torch.utils.data.DataLoader over torchlike datasets.

``num_workers > 0`` runs the workers as threads, not processes: JAX's runtime is not fork-safe, a spawned
process would re-import JAX and copy the data, and jitted ops release the GIL. Each worker gets a shallow copy
of the dataset (so ``worker_init_fn`` can configure its own, as torch users do) and batches come back in
order, ``prefetch_factor`` per worker in flight. Worker seeds are reported by ``get_worker_info`` but the
global generator, shared by all threads, is not reseeded per worker.
"""
import copy
import itertools
import math
import os
import queue
import threading
import warnings

import jax

from ...ops.creation import randint
from ._utils import collate as _collate, worker as _worker
from ._utils.fetch import _create_fetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

default_collate = _collate.default_collate
default_convert = _collate.default_convert
get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """None forever: the sampler of an IterableDataset."""

    def __iter__(self):
        while True:
            yield None


class DataLoader:
    """Iterates over ``dataset`` in batches: torch's DataLoader (see the module docstring for workers)."""

    __initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing.let num_workers > 0 "
                             "to enable multiprocessing, otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if multiprocessing_context is not None and num_workers == 0:
            raise ValueError("multiprocessing_context can only be used with multi-process loading (num_workers > 0), "
                             f"but got num_workers={num_workers}")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and "
                                 "drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._IterableDataset_len_called = None
        self._iterator = None
        self.__initialized = True
        self.check_worker_number_rationality()

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                           "persistent_workers"):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = _ThreadedIter(self)
            else:
                self._iterator._reset(self)
            return self._iterator
        return _SingleProcessIter(self) if self.num_workers == 0 else _ThreadedIter(self)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return length

    def check_worker_number_rationality(self):
        """Warn, as torch, when more workers are asked for than there are usable CPUs."""
        if not self.num_workers:
            return
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        if self.num_workers > cpus:
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. Our suggested max number "
                f"of worker in current system is {cpus}, which is smaller than what this DataLoader is going to "
                "create. Please be aware that excessive worker creation might get DataLoader running slow or even "
                "freeze, lower the worker number to avoid potential slowness/freeze if necessary.", stacklevel=2)


class _BaseIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._persistent_workers = loader.persistent_workers
        if loader.pin_memory and jax.default_backend() == "cpu":
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, then device pinned "
                          "memory won't be used.", stacklevel=3)
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(randint(0, 2 ** 63 - 1, (), generator=loader.generator).item())
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def __iter__(self):
        return self

    def _reset(self, loader):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if self._iterable and self._IterableDataset_len_called is not None and \
                self._num_yielded > self._IterableDataset_len_called:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {self._IterableDataset_len_called}"
                   f"(when accessing len(dataloader)), but {self._num_yielded} samples have been fetched. ")
            if self._num_workers > 0:
                msg += ("For multiprocessing data-loading, this could be caused by not properly configuring the "
                        "IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset for examples.")
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _create_fetcher(self._iterable, self._dataset, self._auto_collation, self._collate_fn,
                                        self._drop_last)

    def _next_data(self):
        return self._fetcher.fetch(next(self._sampler_iter))


class _ThreadedIter(_BaseIter):
    """Batches from ``num_workers`` worker threads, handed out round robin and returned in order."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        self._data_queue = queue.Queue()
        self._index_queues = [queue.Queue() for _ in range(self._num_workers)]
        self._workers = []
        for i, q in enumerate(self._index_queues):
            t = threading.Thread(target=_worker._worker_loop, daemon=True, name=f"DataLoader worker {i}", args=(
                self._iterable, copy.copy(self._dataset), q, self._data_queue, self._auto_collation,
                self._collate_fn, self._drop_last, self._base_seed + i, loader.worker_init_fn, i, self._num_workers))
            t.start()
            self._workers.append(t)
        self._shutdown = False
        self._start_epoch()

    def _start_epoch(self):
        self._send_idx = self._rcvd_idx = self._tasks_outstanding = 0
        self._task_info = {}  # task -> (worker,) while outstanding, (worker, data) when it came early
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _reset(self, loader):
        super()._reset(loader)
        for q in self._index_queues:
            q.put(_worker.RESUME)
        resumed = 0
        while resumed < self._num_workers:  # drop what the last epoch left in flight
            if self._get_data()[0] is _worker.RESUME:
                resumed += 1
        self._start_epoch()

    def _try_put_index(self):
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            w = next(self._worker_cycle)
            if self._workers_status[w]:
                break
        else:
            return
        self._index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._workers_num_tasks[w] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        try:
            return self._data_queue.get(timeout=self._timeout if self._timeout > 0 else None)
        except queue.Empty:
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds") from None

    def _next_data(self):
        while True:
            while self._rcvd_idx < self._send_idx:  # skip tasks of workers whose stream has ended
                info = self._task_info.get(self._rcvd_idx)
                if info and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                w, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, w)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if isinstance(data, _worker._IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx == self._rcvd_idx or not self._in_order:
                w = self._task_info.pop(idx)[0]
                self._rcvd_idx += idx == self._rcvd_idx
                return self._process_data(data, w)
            self._task_info[idx] += (data,)

    def _process_data(self, data, worker):
        self._workers_num_tasks[worker] -= 1
        self._try_put_index()
        if isinstance(data, _worker._ExceptionWrapper):
            data.reraise()
        return data

    def _shutdown_workers(self):
        if not self._shutdown:
            self._shutdown = True
            for q in self._index_queues:
                q.put(None)
            for t in self._workers:
                t.join(timeout=5)

    def __del__(self):
        if getattr(self, "_workers", None):
            self._shutdown_workers()
