"""torchlike.utils.data against torch.utils.data: collation, datasets, samplers, DataLoader options and errors,
seeded randomness, thread workers, and no compile per index when batching a TensorDataset."""
import collections
import math
import threading
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

Point = collections.namedtuple("Point", ["x", "y"])
_TRACE = "/jax/core/compile/jaxpr_trace_duration"  # once per new jit signature, even on a persistent-cache hit


def _same(a, b):
    """A torchlike structure equals torch's: same container types, keys, strings and tensors (values, dtypes)."""
    if isinstance(b, torch.Tensor):
        assert isinstance(a, tl.Tensor), type(a)
        assert_same(a, b)
    elif isinstance(b, dict):
        assert type(a) is type(b) and list(a) == list(b)
        for k in b:
            _same(a[k], b[k])
    elif isinstance(b, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        assert type(a) is type(b) and a == b, (a, b)


def _both(fn):
    """Run ``fn(m)`` for m = torch and torchlike; the same exception type and message, or the same result."""
    results = []
    for m in (torch, tl):
        try:
            results.append(("ok", fn(m)))
        except Exception as e:  # noqa: BLE001  (compared below)
            results.append((type(e), str(e)))
    (kind_t, out_t), (kind_l, out_l) = results
    assert kind_l == kind_t, (results[1], results[0])
    if kind_t == "ok":
        _same(out_l, out_t)
    else:
        assert out_l == out_t
    return results[0]


def _arrays(m, arrays):
    return [m.tensor(a) for a in arrays]


@pytest.fixture(autouse=True)
def _quiet_pin_memory():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="'pin_memory' argument")
        yield


# ----- default_collate / default_convert ------------------------------------------------------------------------
_A = np.arange(6, dtype=np.float32).reshape(2, 3)
_COLLATE = {
    "tensors": lambda m: [m.tensor(_A), m.tensor(_A * 2)],
    "int_tensors_0d": lambda m: [m.tensor(1), m.tensor(2)],
    "mixed_dtype_tensors": lambda m: [m.tensor([1, 2]), m.tensor([1.5, 2.5])],
    "numpy": lambda m: [_A, _A + 1],
    "numpy_mixed_dtype": lambda m: [np.arange(3), np.arange(3, dtype=np.float32)],
    "numpy_scalars": lambda m: [np.float32(1.5), np.float32(2)],
    "numpy_int_scalars": lambda m: [np.int16(1), np.int16(2)],
    "ints": lambda m: [1, 2, 3],
    "floats": lambda m: [1.0, 2.5],
    "bools": lambda m: [True, False],
    "strings": lambda m: ["a", "bc"],
    "bytes": lambda m: [b"a", b"b"],
    "dicts": lambda m: [{"a": 1, "b": m.tensor(_A)}, {"a": 2, "b": m.tensor(_A)}],
    "tuples": lambda m: [(1, "x", 2.0), (3, "y", 4.0)],
    "lists": lambda m: [[1, m.tensor([1.0])], [2, m.tensor([2.0])]],
    "namedtuples": lambda m: [Point(1, m.tensor([1.0])), Point(2, m.tensor([3.0]))],
    "nested": lambda m: [{"p": Point((1, 2), [np.float64(1)])}, {"p": Point((3, 4), [np.float64(2)])}],
}


@pytest.mark.parametrize("case", list(_COLLATE))
def test_default_collate_as_torch(case):
    _both(lambda m: m.utils.data.default_collate(_COLLATE[case](m)))


@pytest.mark.parametrize("case", list(_COLLATE))
def test_default_convert_as_torch(case):
    _both(lambda m: m.utils.data.default_convert(_COLLATE[case](m)))


@pytest.mark.parametrize("batch", [
    lambda m: [m.zeros(3), m.zeros(4)],                         # stack expects each tensor to be equal size ...
    lambda m: [np.zeros(3), np.zeros(4)],
    lambda m: [np.zeros(2, np.float32), np.zeros(3, np.float64)],
    lambda m: [[1, 2], [3]],                                    # each element in list of batch ...
    lambda m: [object(), object()],                             # batch must contain tensors ...
    lambda m: [np.array(["a"]), np.array(["b"])],
])
def test_collate_errors_as_torch(batch):
    kind, _ = _both(lambda m: m.utils.data.default_collate(batch(m)))
    assert kind in (RuntimeError, TypeError)


def test_collate_stacks_tensors_with_one_op():
    batch = tl.utils.data.default_collate([tl.tensor([1.0], requires_grad=True) for _ in range(5)])
    assert batch.shape == (5, 1) and batch.grad_fn.name() == "StackBackward0"


# ----- datasets ------------------------------------------------------------------------------------------------
_X = np.random.default_rng(0).standard_normal((10, 3)).astype(np.float32)
_Y = np.arange(10)


def test_tensor_dataset_items_and_batches_as_torch():
    _both(lambda m: [m.utils.data.TensorDataset(*_arrays(m, (_X, _Y)))[i] for i in (0, 3, -1)])
    _both(lambda m: len(m.utils.data.TensorDataset(*_arrays(m, (_X, _Y)))))
    _both(lambda m: m.utils.data.TensorDataset(m.zeros(2), m.zeros(3)))  # AssertionError
    # a batch read through __getitems__ (as the DataLoader does) holds the same samples as torch's per-item reads
    ds = tl.utils.data.TensorDataset(*_arrays(tl, (_X, _Y)))
    ref = torch.utils.data.TensorDataset(*_arrays(torch, (_X, _Y)))
    idx = [4, -2, 0, 4]
    got = ds.__getitems__(idx)
    assert len(got) == 4
    _same([tuple(s) for s in got], [ref[i] for i in idx])


@pytest.mark.parametrize("idx", [[1, 10], [-11, 0]])
def test_tensor_dataset_batch_out_of_range_as_torch(idx):
    """torch reads items one at a time and raises on the first index out of range; so does the gathered batch."""
    ref = torch.utils.data.TensorDataset(*_arrays(torch, (_X, _Y)))
    ds = tl.utils.data.TensorDataset(*_arrays(tl, (_X, _Y)))
    with pytest.raises(IndexError) as expected:
        [ref[i] for i in idx]
    with pytest.raises(IndexError, match=str(expected.value)):
        ds.__getitems__(idx)


def test_subset_concat_stack_chain_as_torch():
    def run(m):
        d = m.utils.data
        ds = d.TensorDataset(*_arrays(m, (_X, _Y)))
        sub = d.Subset(ds, [7, 2, 5])
        cat = d.ConcatDataset([sub, list(range(4))])
        stack = d.StackDataset(a=list(range(3)), b=sub)
        return ([sub[i] for i in range(3)], sub[[0, 2]], len(sub), sub.__getitems__([2, 0]) and
                [tuple(s) for s in sub.__getitems__([2, 0])], [cat[i] for i in (0, 3, 6, -1)], len(cat),
                cat.cumulative_sizes, [stack[i] for i in range(3)], len(ds + ds), stack.__getitems__([1, 0]))
    _both(run)


def test_subset_with_tensor_indices():
    ds = tl.utils.data.TensorDataset(*_arrays(tl, (_X, _Y)))
    sub = tl.utils.data.Subset(ds, tl.tensor([9, 1, 4]))
    assert [s[1].item() for s in sub.__getitems__([2, 0])] == [4, 9]


@pytest.mark.parametrize("make", [
    lambda d: d.ConcatDataset([]),
    lambda d: d.ConcatDataset([[1, 2], _Stream(0, 2, d)]),
    lambda d: d.ConcatDataset([[1, 2]])[-3],
    lambda d: d.StackDataset([1], a=[1]),
    lambda d: d.StackDataset(),
    lambda d: d.StackDataset([1], [1, 2]),
    lambda d: list(d.ChainDataset([[1, 2]])),
    lambda d: d.Dataset()[0],
])
def test_dataset_errors_as_torch(make):
    kind, _ = _both(lambda m: make(m.utils.data))
    assert kind != "ok"


class _Stream:
    """An IterableDataset of range(start, end) for either library (``m``: the library or its utils.data)."""

    def __new__(cls, start, end, m=torch):
        class Stream((m.utils.data if hasattr(m, "utils") else m).IterableDataset):
            def __init__(self):
                self.start, self.end = start, end

            def __iter__(self):
                return iter(range(self.start, self.end))

            def __len__(self):
                return self.end - self.start
        return Stream()


def test_chain_dataset_as_torch():
    _both(lambda m: (list(m.utils.data.ChainDataset([_Stream(0, 2, m), _Stream(5, 7, m)])),
                     len(_Stream(0, 2, m) + _Stream(5, 7, m))))


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1 / 3] * 3, [0.25] * 4])
def test_random_split_lengths_as_torch(lengths):
    sizes = [len(s) for s in torch.utils.data.random_split(range(10), lengths)]
    tl.manual_seed(3)
    parts = tl.utils.data.random_split(range(10), lengths)
    assert [len(p) for p in parts] == sizes
    assert sorted(i for p in parts for i in p) == list(range(10))  # disjoint and covering
    tl.manual_seed(3)
    assert [list(p) for p in tl.utils.data.random_split(range(10), lengths)] == [list(p) for p in parts]
    g = tl.Generator().manual_seed(5)
    again = [list(p) for p in tl.utils.data.random_split(range(10), lengths, generator=tl.Generator().manual_seed(5))]
    assert [list(p) for p in tl.utils.data.random_split(range(10), lengths, generator=g)] == again


@pytest.mark.parametrize("lengths", [[3, 3], [1.2, -0.2], [0.5, 0.6]])
def test_random_split_errors_as_torch(lengths):
    kind, _ = _both(lambda m: m.utils.data.random_split(range(10), lengths))
    assert kind is ValueError


def test_random_split_warns_on_an_empty_split_as_torch():
    messages = []
    for m in (torch, tl):
        with pytest.warns(UserWarning) as record:
            m.utils.data.random_split(range(2), [0.9, 0.05, 0.05])
        messages.append([str(w.message) for w in record])
    assert messages[1] == messages[0] == [f"Length of split at index {i} is 0. This might result in an empty dataset."
                                          for i in (1, 2)]


# ----- samplers ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda d: list(d.SequentialSampler(range(5))),
    lambda d: len(d.RandomSampler(range(5), replacement=True, num_samples=70)),
    lambda d: [list(d.BatchSampler(range(10), 3, drop_last)) for drop_last in (False, True)],
    lambda d: [len(d.BatchSampler(range(10), 3, drop_last)) for drop_last in (False, True)],
    lambda d: d.RandomSampler(range(5), replacement=1),
    lambda d: d.RandomSampler(range(5), num_samples=0),
    lambda d: d.RandomSampler([]),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], 0),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], True),
    lambda d: d.WeightedRandomSampler([1.0, 2.0], 2, replacement=None),
    lambda d: d.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda d: list(d.WeightedRandomSampler([1.0, -1.0], 2)),
    lambda d: list(d.WeightedRandomSampler([0.0, 0.0], 2)),
    lambda d: list(d.WeightedRandomSampler([1.0, math.inf], 2)),
    lambda d: list(d.WeightedRandomSampler([1.0, math.nan], 2)),
    lambda d: list(d.WeightedRandomSampler([math.inf, -1.0], 2)),
    lambda d: list(d.WeightedRandomSampler([1.0, -1.0, math.inf], 1)),
    lambda d: list(d.WeightedRandomSampler([1.0, math.nan], 2, replacement=False)),
    lambda d: list(d.WeightedRandomSampler([1.0, 2.0], 3, replacement=False)),
    lambda d: d.BatchSampler(range(3), 0, False),
    lambda d: d.BatchSampler(range(3), True, False),
    lambda d: d.BatchSampler(range(3), 2, 0),
    lambda d: d.Sampler().__iter__(),
])
def test_samplers_as_torch(make):
    _both(lambda m: make(m.utils.data))


def test_random_samplers_are_seeded_and_cover():
    d = tl.utils.data

    def draw(make):
        tl.manual_seed(0)
        first = list(make())
        tl.manual_seed(0)
        assert list(make()) == first
        return first

    perm = draw(lambda: d.RandomSampler(range(50)))
    assert sorted(perm) == list(range(50))
    assert perm != draw(lambda: iter(list(d.RandomSampler(range(50)))[::-1]))[::-1] or perm != list(range(50))
    more = draw(lambda: d.RandomSampler(range(10), num_samples=25))  # two whole permutations and a part of one
    assert len(more) == 25 and sorted(more[:10]) == sorted(more[10:20]) == list(range(10))
    assert len(set(more[20:])) == 5
    drawn = draw(lambda: d.RandomSampler(range(7), replacement=True, num_samples=100))
    assert len(drawn) == 100 and set(drawn) <= set(range(7)) and len(set(drawn)) > 1
    assert sorted(draw(lambda: d.SubsetRandomSampler([3, 8, 9]))) == [3, 8, 9]
    g1, g2 = tl.Generator().manual_seed(1), tl.Generator().manual_seed(1)
    assert list(d.RandomSampler(range(30), generator=g1)) == list(d.RandomSampler(range(30), generator=g2))
    assert list(d.RandomSampler(range(30), generator=g1)) != list(d.RandomSampler(range(30), generator=g1))


def test_weighted_random_sampler_draws_by_weight():
    tl.manual_seed(0)
    w = [0.0, 1.0, 3.0, 0.0]
    drawn = list(tl.utils.data.WeightedRandomSampler(w, 4000))
    counts = np.bincount(drawn, minlength=4)
    assert counts[0] == counts[3] == 0 and 0.7 < counts[2] / 4000 < 0.8
    without = list(tl.utils.data.WeightedRandomSampler([1.0, 5.0, 0.0, 2.0], 3, replacement=False))
    assert sorted(without) == [0, 1, 3]
    tl.manual_seed(0)
    assert list(tl.utils.data.WeightedRandomSampler(w, 4000)) == drawn


# ----- DataLoader ----------------------------------------------------------------------------------------------
def _loader(m, **kw):
    return m.utils.data.DataLoader(m.utils.data.TensorDataset(*_arrays(m, (_X, _Y))), **kw)


@pytest.mark.parametrize("kw", [
    {}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
    {"batch_size": 3, "collate_fn": lambda b: [s[1] for s in b]},
    {"batch_size": 3, "collate_fn": lambda b: b},
    {"batch_size": 3, "sampler": [9, 0, 4, 4]},
    {"batch_sampler": [[0, 1], [5], [9, 8, 7]]},
])
def test_loader_batches_as_torch(kw):
    _both(lambda m: (len(_loader(m, **kw)), list(_loader(m, **kw))))


def test_loader_over_python_data_as_torch():
    data = [{"x": np.float32(i), "name": f"s{i}", "v": [i, i + 0.5]} for i in range(5)]
    _both(lambda m: list(m.utils.data.DataLoader(data, batch_size=2)))
    _both(lambda m: list(m.utils.data.DataLoader(data, batch_size=None)))
    _both(lambda m: list(m.utils.data.DataLoader(np.arange(6.0).reshape(3, 2), batch_size=2)))


def test_loader_over_iterable_dataset_as_torch():
    for kw in ({}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None}):
        _both(lambda m: (list(m.utils.data.DataLoader(_Stream(3, 8, m), **kw)),
                         len(m.utils.data.DataLoader(_Stream(3, 8, m), **kw))))


def test_loader_warns_when_an_iterable_dataset_yields_more_than_its_len():
    for m in (torch, tl):
        stream = _Stream(0, 3, m)
        loader = m.utils.data.DataLoader(stream)
        assert len(loader) == 3
        stream.end = 5
        with pytest.warns(UserWarning) as record:
            list(loader)
        assert [str(w.message) for w in record] == [
            f"Length of IterableDataset {stream} was reported to be 3(when accessing len(dataloader)), but {n} samples "
            "have been fetched. " for n in (4, 5)]


@pytest.mark.parametrize("kw", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]}, {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True}, {"multiprocessing_context": "spawn"},
    {"batch_size": 0}, {"batch_size": 2, "drop_last": 1},
])
def test_loader_option_errors_as_torch(kw):
    kind, _ = _both(lambda m: _loader(m, **kw))
    assert kind is ValueError


@pytest.mark.parametrize("kw", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_loader_iterable_dataset_option_errors_as_torch(kw):
    kind, _ = _both(lambda m: m.utils.data.DataLoader(_Stream(0, 3, m), **kw))
    assert kind is ValueError


def test_loader_attributes_are_frozen_as_torch():
    def run(m):
        loader = _loader(m, batch_size=2)
        loader.num_workers = 0  # allowed
        loader.batch_size = 3
    _both(run)
    _both(lambda m: (_loader(m).prefetch_factor, _loader(m, num_workers=1).prefetch_factor,
                     _loader(m, num_workers=1, prefetch_factor=0).prefetch_factor))


def test_pin_memory_warns_on_cpu_as_torch():
    for m in (torch, tl):
        with pytest.warns(UserWarning) as record:
            batches = list(_loader(m, batch_size=5, pin_memory=True))
        assert len(batches) == 2
        assert [str(w.message) for w in record] == ["'pin_memory' argument is set as true but no accelerator is "
                                                    "found, then device pinned memory won't be used."]


def test_shuffle_is_seeded_and_covers_every_sample():
    def epoch(loader):
        return [y for _, ys in loader for y in ys.tolist()]

    tl.manual_seed(0)
    loader = _loader(tl, batch_size=3, shuffle=True)
    first, second = epoch(loader), epoch(loader)
    assert sorted(first) == sorted(second) == list(range(10)) and first != second
    assert [len(ys) for _, ys in loader] == [3, 3, 3, 1]
    tl.manual_seed(0)
    assert epoch(loader) == first and epoch(loader) == second
    a = epoch(_loader(tl, batch_size=4, shuffle=True, generator=tl.Generator().manual_seed(7)))
    b = epoch(_loader(tl, batch_size=4, shuffle=True, generator=tl.Generator().manual_seed(7)))
    assert a == b and sorted(a) == list(range(10))


# ----- workers (threads) ---------------------------------------------------------------------------------------
def _shard(worker_id):
    """torch's documented worker_init_fn: each worker's copy of the dataset reads its own part of the range."""
    info = tl.utils.data.get_worker_info()
    d = info.dataset
    per = int(math.ceil((d.end - d.start) / float(info.num_workers)))
    d.start = d.start + worker_id * per
    d.end = min(d.start + per, d.end)


def test_workers_keep_the_order_of_single_process_loading():
    for kw in ({"batch_size": 3}, {"batch_size": 3, "shuffle": True}, {"batch_size": None},
               {"batch_size": 4, "prefetch_factor": 1, "in_order": False}):
        tl.manual_seed(1)
        expected = list(_loader(tl, **{k: v for k, v in kw.items() if k not in ("prefetch_factor", "in_order")}))
        tl.manual_seed(1)
        got = list(_loader(tl, num_workers=2, **kw))
        if kw.get("in_order", True):
            assert [[b.tolist() for b in batch] for batch in got] == [[b.tolist() for b in batch] for batch in expected]
        else:
            assert sorted(y for _, ys in got for y in ys.tolist()) == list(range(10))


def test_workers_over_an_iterable_dataset_as_torch():
    """torch's outputs with two worker processes (from its documentation; checked on torch 2.13)."""
    out = lambda loader: [b.tolist() for b in loader]  # noqa: E731
    assert out(tl.utils.data.DataLoader(_Stream(3, 7, tl), num_workers=2, worker_init_fn=_shard)) == \
        [[3], [5], [4], [6]]
    assert out(tl.utils.data.DataLoader(_Stream(3, 7, tl), num_workers=2)) == \
        [[3], [3], [4], [4], [5], [5], [6], [6]]
    assert out(tl.utils.data.DataLoader(_Stream(3, 10, tl), num_workers=2, batch_size=2, worker_init_fn=_shard)) == \
        [[3, 4], [7, 8], [5, 6], [9]]


def test_worker_info():
    seen = []

    class Probe(tl.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            info = tl.utils.data.get_worker_info()
            seen.append((info.id, info.num_workers, info.seed, info.dataset is self and self is not probe,
                         threading.current_thread()))
            return i

    probe = Probe()
    loader = tl.utils.data.DataLoader(probe, num_workers=2, worker_init_fn=lambda wid: seen.append(wid))
    assert [b.tolist() for b in loader] == [[0], [1], [2], [3]]
    assert tl.utils.data.get_worker_info() is None
    inits = sorted(s for s in seen if isinstance(s, int))
    calls = [s for s in seen if isinstance(s, tuple)]
    assert inits == [0, 1] and sorted(c[0] for c in calls) == [0, 0, 1, 1]
    assert {c[1] for c in calls} == {2} and all(c[3] for c in calls)
    seeds = {c[0]: c[2] for c in calls}
    assert seeds[1] == seeds[0] + 1 and all(c[4] is not threading.main_thread() for c in calls)


def test_worker_errors_as_torch():
    class Bad(tl.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise ValueError("bad item")

    with pytest.raises(ValueError, match="bad item"):
        list(tl.utils.data.DataLoader(Bad()))
    with pytest.raises(ValueError, match=r"^Caught ValueError in DataLoader worker process 0.\nOriginal Traceback "
                                         r"\(most recent call last\):\n(.|\n)*bad item"):
        list(tl.utils.data.DataLoader(Bad(), num_workers=1))

    def fail(worker_id):
        raise KeyError("no init")
    with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
        list(tl.utils.data.DataLoader([1, 2], num_workers=1, worker_init_fn=fail))


def test_persistent_workers_reuse_their_threads():
    threads = set()

    def note(worker_id):
        threads.add(threading.current_thread())

    loader = tl.utils.data.DataLoader(_Stream(0, 6, tl), num_workers=2, worker_init_fn=note, persistent_workers=True,
                                      batch_size=2)
    first = [b.tolist() for b in loader]
    it = iter(loader)
    next(it)  # stop half-way: the next epoch must start clean
    assert [b.tolist() for b in loader] == first
    assert sorted(sum(first, [])) == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5] and len(threads) == 2
    assert all(t.is_alive() for t in threads)


def test_too_many_workers_warns_as_torch():
    for m in (torch, tl):
        with pytest.warns(UserWarning, match="This DataLoader will create 64 worker processes in total. Our suggested "
                                             "max number of worker in current system is"):
            m.utils.data.DataLoader([1], num_workers=64)


# ----- speed: no compile per index ---------------------------------------------------------------------------
@pytest.fixture
def traces():
    """The names of the jit traces that run while the fixture is active (the list is cleared on demand)."""
    seen = []

    def listen(name, secs, **kw):
        if name in (_TRACE, tl._xcache.LOAD_EVENT):  # traced, or loaded from torchlike's executable cache
            seen.append(name)
    jax.monitoring.register_event_duration_secs_listener(listen)
    yield seen
    jax.monitoring.unregister_event_duration_listener(listen)


def test_tensor_dataset_batches_without_a_compile_per_index(traces):
    """3,000 samples, batch 32, shuffled: the first epoch compiles a handful of programs (gathers per batch shape,
    the permutation), not one per index; the second compiles nothing."""
    tl.manual_seed(0)
    x = tl.tensor(np.random.default_rng(1).standard_normal((3000, 7)).astype(np.float32))  # shapes no other test uses
    ds = tl.utils.data.TensorDataset(x, tl.arange(3000) * 3)
    loader = tl.utils.data.DataLoader(ds, batch_size=32, shuffle=True)
    traces.clear()
    ys = []
    for _, y in loader:  # checked batch by batch, so a compile per index fails at the first batch
        ys.append(y)
        assert len(traces) < 30, len(traces)
    traces.clear()
    batches = list(loader)
    assert traces == []
    assert len(batches) == 94 and batches[-1][0].shape == (3000 % 32, 7)
    seen = np.concatenate([y.numpy() for _, y in batches])
    assert sorted(seen.tolist()) == list(range(0, 9000, 3)) and not np.array_equal(seen, np.concatenate(ys))
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x.numpy()[seen // 3])


def test_subset_of_a_tensor_dataset_batches_without_a_compile_per_index(traces):
    ds = tl.utils.data.TensorDataset(tl.zeros(500, 5), tl.arange(500))
    train, _ = tl.utils.data.random_split(ds, [0.8, 0.2])
    loader = tl.utils.data.DataLoader(train, batch_size=16, shuffle=True, num_workers=1)
    traces.clear()
    seen = []
    for _, y in loader:
        seen += y.tolist()
        assert len(traces) < 30, len(traces)
    assert sorted(seen) == sorted(train.indices)
