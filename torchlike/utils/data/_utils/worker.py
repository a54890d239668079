"""DataLoader workers, run as threads (see ``DataLoader``): ``get_worker_info`` and the worker loop."""
import dataclasses
import sys
import threading
import traceback

from .fetch import _create_fetcher

_local = threading.local()


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """The current worker: ``id``, ``num_workers``, ``seed`` and its own (shallow) copy of the ``dataset``."""
    id: int
    num_workers: int
    seed: int
    dataset: object
    rng: object = None
    worker_method: str = "thread"


def get_worker_info():
    """The ``WorkerInfo`` of the DataLoader worker running this code; None outside a worker."""
    return getattr(_local, "info", None)


class _ExceptionWrapper:
    """An exception raised in a worker, re-raised in the main thread with torch's "Caught ..." text."""

    def __init__(self, where):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type = exc_type
        self.exc_msg = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


@dataclasses.dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


RESUME = object()  # sent to each worker at the start of a persistent loader's next epoch, and echoed back


def _worker_loop(iterable, dataset, index_queue, data_queue, auto_collation, collate_fn, drop_last, seed, init_fn,
                 worker_id, num_workers):
    """Take (task, indices) from ``index_queue`` until None; put (task, batch or error) on ``data_queue``."""
    _local.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
    where = f"in DataLoader worker process {worker_id}"

    def start():
        try:
            return _create_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last), None
        except Exception:
            return None, _ExceptionWrapper(where)

    error = None
    try:
        if init_fn is not None:
            init_fn(worker_id)
    except Exception:
        error = _ExceptionWrapper(where)
    fetcher, start_error = start() if error is None else (None, None)
    error = error or start_error
    ended = False
    while (task := index_queue.get()) is not None:
        if task is RESUME:
            fetcher, error = start()
            ended = False
            data_queue.put((RESUME, None))
            continue
        if ended:
            continue
        idx, index = task
        if error is not None:
            data, error = error, None
        else:
            try:
                data = fetcher.fetch(index)
            except Exception as e:
                if isinstance(e, StopIteration) and iterable:
                    data, ended = _IterableDatasetStopIteration(worker_id), True
                else:
                    data = _ExceptionWrapper(where)
        data_queue.put((idx, data))
