"""torch's submodules that training scripts import, against torch 2.13: nn.modules.utils, utils.data.distributed
(DistributedSampler), cuda.amp / cpu.amp (deprecated aliases and their warnings), amp.custom_fwd/custom_bwd, random,
types, storage, nn.modules.batchnorm's bases, utils._pytree, hub.load_state_dict_from_url / utils.model_zoo."""
import collections
import os
import warnings

import numpy as np
import pytest
import torch
import torch.distributed as torch_dist
import torch.utils._pytree as torch_pytree
import torch.utils.model_zoo  # noqa: F401  (not imported by `import torch`)
from torch.nn.modules import batchnorm as torch_batchnorm
from torch.nn.modules import utils as torch_nn_utils
from torch.utils.data.distributed import DistributedSampler as TorchSampler

import torchlike as tl
import torchlike.utils._pytree as tl_pytree
import torchlike.utils.model_zoo  # noqa: F401
from oracle import assert_same, error_of
from torchlike.nn.modules import batchnorm as tl_batchnorm
from torchlike.nn.modules import utils as tl_nn_utils
from torchlike.utils.data.distributed import DistributedSampler


def _warnings(fn):
    """fn()'s result and its warnings as (category, message, file)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn()
    return result, [(w.category.__name__, str(w.message), os.path.basename(w.filename)) for w in caught]


# ----- torch.nn.modules.utils -------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["_single", "_pair", "_triple", "_quadruple"])
def test_ntuple_parsers(name):
    ours, theirs = getattr(tl_nn_utils, name), getattr(torch_nn_utils, name)
    assert ours.__name__ == theirs.__name__ == name
    for value in (3, 2.5, None, (1, 2), [4, 5, 6], range(3), "ab", tl.Size([7, 8])):
        assert ours(value) == theirs(value)
    assert ours(x for x in (1, 2)) == (1, 2)  # any iterable becomes a tuple
    assert tl_nn_utils._ntuple(5)(1) == torch_nn_utils._ntuple(5)(1) == (1,) * 5
    assert tl_nn_utils._ntuple(3, "p").__name__ == "p"


def test_reverse_repeat_tuple_and_list_with_default():
    for t, n in (((1, 2, 3), 2), ((0,), 3), ((), 2), ((4, 5), 1)):
        assert tl_nn_utils._reverse_repeat_tuple(t, n) == torch_nn_utils._reverse_repeat_tuple(t, n)
    for out, defaults in ((5, [1, 2]), ([None, 3], [8, 9, 10]), ([2, None], [1, 6, 7])):
        assert tl_nn_utils._list_with_default(out, defaults) == torch_nn_utils._list_with_default(out, defaults)
    assert error_of(lambda: tl_nn_utils._list_with_default([1, 2], [3, 4])) == \
        error_of(lambda: torch_nn_utils._list_with_default([1, 2], [3, 4]))


def test_consume_prefix_in_state_dict_if_present():
    def make():
        sd = collections.OrderedDict([("module.a", 1), ("module.b.c", 2), ("other", 3)])
        sd._metadata = collections.OrderedDict([("", {"v": 0}), ("module", {"v": 1}), ("module.b", {"v": 2}),
                                                 ("x", {"v": 3})])
        return sd
    ours, theirs = make(), make()
    tl_nn_utils.consume_prefix_in_state_dict_if_present(ours, "module.")
    torch_nn_utils.consume_prefix_in_state_dict_if_present(theirs, "module.")
    assert list(ours.items()) == list(theirs.items()) and list(ours._metadata.items()) == list(theirs._metadata.items())
    assert tl_nn_utils.__all__ == torch_nn_utils.__all__


def test_conv_parses_its_arguments_as_torch():
    for kw in (dict(kernel_size=range(2, 4), padding=(1, 2)), dict(kernel_size=3, padding=[2, 0], stride=2),
               dict(kernel_size=(1, 3), padding="same")):
        ours, theirs = tl.nn.Conv2d(2, 4, **kw), torch.nn.Conv2d(2, 4, **kw)
        for attr in ("kernel_size", "stride", "padding", "dilation", "output_padding",
                     "_reversed_padding_repeated_twice"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr


# ----- torch.utils.data.distributed.DistributedSampler ------------------------------------------------------------
SETTINGS = [(10, 3, False), (10, 3, True), (9, 3, False), (9, 3, True), (2, 5, False), (2, 5, True), (7, 1, False),
            (1, 4, False), (11, 4, True), (0, 2, False)]


@pytest.mark.parametrize("n,replicas,drop_last", SETTINGS)
def test_distributed_sampler_without_shuffle_gives_torchs_indices(n, replicas, drop_last):
    for rank in range(replicas):
        ours = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        theirs = TorchSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)
        assert (ours.num_samples, ours.total_size) == (theirs.num_samples, theirs.total_size)


def _our_permutation(n, generator):
    """Our sampler's permutation for torch's generator's seed, as a torch tensor."""
    return torch.tensor(tl.randperm(n, generator=tl.Generator().manual_seed(generator.initial_seed())).tolist(),
                        dtype=torch.int64)


@pytest.mark.parametrize("n,replicas,drop_last", SETTINGS[:6] + [(11, 4, True), (13, 4, False)])
def test_distributed_sampler_shuffles_by_seed_and_epoch_as_torch(n, replicas, drop_last, monkeypatch):
    # torchlike's randperm draws other numbers than torch's (JAX's generator): torch's sampler is given ours, and the
    # padding, cutting and striding of that permutation must then be torch's
    monkeypatch.setattr(torch, "randperm", lambda k, generator: _our_permutation(k, generator))
    for seed in (0, 7):
        for rank in range(replicas):
            ours = DistributedSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            theirs = TorchSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            for epoch in (0, 1, 5):
                ours.set_epoch(epoch)
                theirs.set_epoch(epoch)
                assert list(ours) == list(theirs)
                assert list(ours) == list(ours)  # the same order until the epoch changes


def test_distributed_sampler_epochs_and_replicas_cover_the_dataset():
    samplers = [DistributedSampler(range(20), 4, r, seed=3) for r in range(4)]
    orders = []
    for epoch in range(3):
        for s in samplers:
            s.set_epoch(epoch)
        shards = [list(s) for s in samplers]
        assert sorted(i for shard in shards for i in shard) == list(range(20))  # disjoint and complete
        orders.append(shards[0])
    assert orders[0] != orders[1] != orders[2]
    assert list(DistributedSampler(range(20), 4, 0, seed=4)) != list(DistributedSampler(range(20), 4, 0, seed=3))


def test_distributed_sampler_in_a_dataloader():
    data = tl.utils.data.TensorDataset(tl.arange(10))
    loader = tl.utils.data.DataLoader(data, batch_size=2, sampler=DistributedSampler(data, 2, 1, shuffle=False))
    assert [b[0].tolist() for b in loader] == [[1, 3], [5, 7], [9]]
    assert tl.utils.data.DistributedSampler is DistributedSampler


def test_distributed_sampler_errors_and_distributed_queries_as_torch():
    assert (tl.distributed.is_available(), tl.distributed.is_initialized()) == (torch_dist.is_available(),
                                                                                torch_dist.is_initialized())
    for fn in (lambda m: m.get_rank(), lambda m: m.get_world_size()):
        ours = error_of(lambda: fn(tl.distributed))
        assert ours == error_of(lambda: fn(torch_dist)) and ours[0] == "ValueError"
    for kw in ({}, {"num_replicas": 2}, {"rank": 0}, {"num_replicas": 2, "rank": 2}, {"num_replicas": 2, "rank": -1}):
        ours = error_of(lambda: DistributedSampler(range(4), **kw))
        assert ours == error_of(lambda: TorchSampler(range(4), **kw)) and ours is not None


# ----- torch.cuda.amp / torch.cpu.amp / torch.amp.custom_fwd ------------------------------------------------------
AMP_CALLS = [
    lambda m: m.cuda.amp.GradScaler(),
    lambda m: m.cuda.amp.GradScaler(init_scale=8.0, enabled=False),
    lambda m: m.cuda.amp.autocast(),
    lambda m: m.cuda.amp.autocast(enabled=False),
    lambda m: m.cpu.amp.autocast(),
    lambda m: m.cpu.amp.autocast(dtype=m.float32),
    lambda m: m.cpu.amp.autocast(dtype=m.float16, cache_enabled=False),
    lambda m: m.cpu.amp.GradScaler(init_scale=4.0, growth_interval=3),
]


@pytest.mark.parametrize("i", range(len(AMP_CALLS)))
def test_deprecated_amp_aliases_warn_and_behave_as_torchs(i):
    ours, our_warnings = _warnings(lambda: AMP_CALLS[i](tl))
    theirs, their_warnings = _warnings(lambda: AMP_CALLS[i](torch))
    assert [w[:2] for w in our_warnings] == [w[:2] for w in their_warnings]
    assert our_warnings[0][0] == "FutureWarning" and our_warnings[0][2] == "test_submodules.py"  # at the caller
    if hasattr(theirs, "get_scale"):
        assert isinstance(ours, tl.amp.GradScaler)
        assert (ours.is_enabled(), ours.get_scale(), ours._device) == (theirs.is_enabled(), theirs.get_scale(),
                                                                       theirs._device)
        if theirs.is_enabled():  # (a disabled torch scaler keeps no settings)
            assert ours.get_growth_interval() == theirs.get_growth_interval()
    else:
        assert isinstance(ours, tl.amp.autocast)
        assert (ours._enabled, ours.device, str(ours.fast_dtype).split(".")[1]) == \
            (theirs._enabled, theirs.device, str(theirs.fast_dtype).split(".")[1])


def test_cpu_amp_autocast_and_grad_scaler_run_as_torchs():
    a = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with tl.cpu.amp.autocast():
            ours = tl.tensor(a) @ tl.tensor(a.T)
        with torch.cpu.amp.autocast():
            theirs = torch.tensor(a) @ torch.tensor(a.T)
        assert ours.dtype == tl.bfloat16 and theirs.dtype == torch.bfloat16
        assert_same(ours.float(), theirs.float(), 1e-2, 1e-2)
        loss_ours = tl.cpu.amp.GradScaler(init_scale=8.0).scale(tl.tensor(1.5))
        loss_theirs = torch.cpu.amp.GradScaler(init_scale=8.0).scale(torch.tensor(1.5))
    assert_same(loss_ours, loss_theirs)
    assert tl.cuda.amp.amp_definitely_not_available() == torch.cuda.amp.amp_definitely_not_available()


def _custom_function(m, cast_inputs, deprecated):
    seen = {}

    class Mul(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            seen["forward"] = (str(x.dtype).split(".")[1], m.is_autocast_enabled("cpu"))
            ctx.save_for_backward(x, w)
            return x @ w

        @staticmethod
        def backward(ctx, g):
            seen["backward"] = m.is_autocast_enabled("cpu")
            x, w = ctx.saved_tensors  # (autocast may be off here: the dtypes are matched by hand)
            return (g @ w.t().to(g.dtype)).to(x.dtype), (x.t().to(g.dtype) @ g).to(w.dtype)

    if deprecated:  # torch.cuda.amp's (device 'cuda': on cpu tensors they change nothing)
        Mul.forward = staticmethod(m.cuda.amp.custom_fwd(Mul.forward, cast_inputs=cast_inputs))
        Mul.backward = staticmethod(m.cuda.amp.custom_bwd(Mul.backward))
    else:
        Mul.forward = staticmethod(m.amp.custom_fwd(Mul.forward, device_type="cpu", cast_inputs=cast_inputs))
        Mul.backward = staticmethod(m.amp.custom_bwd(Mul.backward, device_type="cpu"))
    return Mul, seen


@pytest.mark.parametrize("cast_inputs", [None, "float32"])
@pytest.mark.parametrize("deprecated", [False, True])
def test_custom_fwd_and_custom_bwd(cast_inputs, deprecated):
    a, b = np.ones((2, 3), np.float32), np.full((3, 2), 0.5, np.float32)
    results = []
    for m in (tl, torch):
        fn, seen = _custom_function(m, None if cast_inputs is None else getattr(m, cast_inputs), deprecated)
        x, w = m.tensor(a, requires_grad=True), m.tensor(b, requires_grad=True)
        with m.autocast("cpu"):
            y = fn.apply(x.to(m.bfloat16), w)
        y.float().sum().backward()
        results.append((seen, str(y.dtype).split(".")[1], x.grad.tolist(), w.grad.tolist()))
    assert results[0] == results[1]
    assert error_of(lambda: tl.amp.custom_fwd(device_type=0)) == error_of(lambda: torch.amp.custom_fwd(device_type=0))
    _, our_warnings = _warnings(lambda: tl.cuda.amp.custom_fwd(cast_inputs=tl.float32))
    _, their_warnings = _warnings(lambda: torch.cuda.amp.custom_fwd(cast_inputs=torch.float32))
    assert our_warnings == their_warnings and our_warnings[0][2] == "test_submodules.py"


# ----- torch.random ----------------------------------------------------------------------------------------------
def test_random_is_the_top_level_generator_api():
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"):
        assert getattr(tl.random, name) is getattr(tl, name)
    assert tl.random.__all__ == torch.random.__all__
    assert tl.random.manual_seed(123) is tl.default_generator and tl.random.initial_seed() == 123
    state = tl.random.get_rng_state()
    first = tl.rand(4).tolist()
    tl.random.set_rng_state(state)
    assert tl.rand(4).tolist() == first
    s = tl.random.seed()
    assert isinstance(s, int) and tl.random.initial_seed() == s
    for bad in (lambda m: m.random.set_rng_state(m.zeros(3)), lambda m: m.random.set_rng_state([1])):
        assert error_of(lambda: bad(tl)) == error_of(lambda: bad(torch))


def test_fork_rng_restores_the_generator():
    tl.manual_seed(5)
    expected = tl.rand(3).tolist()
    tl.manual_seed(5)
    with tl.random.fork_rng():
        inside = tl.rand(3).tolist()
    assert inside == expected and tl.rand(3).tolist() == expected  # the draws inside did not move the outside
    tl.manual_seed(5)
    with tl.random.fork_rng(devices=[]):
        tl.rand(3)
        tl.manual_seed(99)
    assert tl.rand(3).tolist() == expected and tl.initial_seed() == 99  # (torch restores the state, not the seed)
    tl.manual_seed(5)
    with tl.random.fork_rng(enabled=False):
        tl.rand(3)
    assert tl.rand(3).tolist() != expected
    with tl.random.fork_rng(device_type="meta"):
        pass
    for kw in ({"devices": [0]}, {"device_type": "foo"}, {"device_type": "cpu"}):
        def fork(m):
            with m.random.fork_rng(**kw):
                pass
        ours, theirs = error_of(lambda: fork(tl)), error_of(lambda: fork(torch))
        assert ours[0] == theirs[0] and ours[1].replace("torchlike.", "torch.") == theirs[1]
    assert tl.random.thread_safe_generator() is None and torch.random.thread_safe_generator() is None


def test_cuda_rng_state_without_a_gpu_answers_as_torchs_cpu_build():
    for fn in (lambda m: m.cuda.get_rng_state(), lambda m: m.cuda.get_rng_state(0),
               lambda m: m.cuda.get_rng_state_all(),
               lambda m: m.cuda.set_rng_state(m.get_rng_state()), lambda m: m.cuda.set_rng_state_all([])):
        assert error_of(lambda: fn(tl)) == error_of(lambda: fn(torch))
    assert tl.cuda.get_rng_state_all() == torch.cuda.get_rng_state_all() == []


# ----- torch.types, torch.storage ---------------------------------------------------------------------------------
def test_types_aliases():
    assert tl.types.__all__ == torch.types.__all__
    assert tl.types.Number.__args__ == torch.types.Number.__args__ == (int, float, bool)
    assert tl.types._Number == torch.types._Number and isinstance(2.5, tl.types.Number)
    assert tl.types.Device.__args__ == (tl.device, str, int, type(None))
    assert tl.types._size.__args__[1:] == torch.types._size.__args__[1:] and tl.types._size.__args__[0] is tl.Size
    assert isinstance(tl.device("cpu"), tl.types.Device) and not isinstance(1.5, tl.types.Device)
    assert (tl.types._int, tl.types._float, tl.types._bool) == (torch.types._int, torch.types._float, torch.types._bool)
    assert tl.types._dtype is tl.dtype and tl.types.Tensor is tl.Tensor


def test_storage_module():
    assert tl.storage.__all__ == torch.storage.__all__
    assert tl.storage.UntypedStorage is tl.UntypedStorage and tl.storage.TypedStorage is tl.TypedStorage
    x = tl.arange(6.0)
    assert isinstance(x.untyped_storage(), tl.storage.UntypedStorage)
    assert x.untyped_storage().nbytes() == torch.arange(6.0).untyped_storage().nbytes()


# ----- torch.nn.modules.batchnorm._NormBase / _BatchNorm ----------------------------------------------------------
def _user_batch_norm(module):
    class MyBatchNorm(module._BatchNorm):  # as user code (e.g. frozen or masked batch norms) writes it
        def _check_input_dim(self, input):
            if input.dim() < 2:
                raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
    return MyBatchNorm


def test_user_code_subclasses_batchnorm_as_torchs():
    x = np.random.default_rng(1).standard_normal((4, 3, 5)).astype(np.float32)
    ours, theirs = _user_batch_norm(tl_batchnorm)(3, momentum=0.3), _user_batch_norm(torch_batchnorm)(3, momentum=0.3)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    for train in (True, True, False):
        ours.train(train)
        theirs.train(train)
        assert_same(ours(tl.tensor(x)), theirs(torch.tensor(x)), 1e-5, 1e-5)
    assert_same(ours.running_mean, theirs.running_mean)
    assert_same(ours.running_var, theirs.running_var)
    assert_same(ours.num_batches_tracked, theirs.num_batches_tracked)
    assert error_of(lambda: ours(tl.ones(3))) == error_of(lambda: theirs(torch.ones(3)))


def test_batchnorm_class_hierarchy_as_torchs():
    for name in ("BatchNorm1d", "BatchNorm2d", "InstanceNorm2d"):
        ours, theirs = getattr(tl.nn, name)(3), getattr(torch.nn, name)(3)
        for base in ("_NormBase", "_BatchNorm"):
            assert isinstance(ours, getattr(tl_batchnorm, base)) == isinstance(theirs, getattr(torch_batchnorm, base))
    ours = tl_batchnorm._NormBase(3, affine=False)
    theirs = torch_batchnorm._NormBase(3, affine=False)
    assert ours.extra_repr() == theirs.extra_repr()
    for norm in (ours, theirs):
        with pytest.raises(NotImplementedError):
            norm._check_input_dim(None)


# ----- torch.utils._pytree ----------------------------------------------------------------------------------------
Point = collections.namedtuple("Point", "x y")
TREES = [
    1, None, [], (), {}, [1, 2, 3], (1, [2, (3, None)]),
    {"b": [1, (2, None)], "a": 3, "c": collections.OrderedDict(x=4)},
    Point(1, [2, 3]), collections.defaultdict(list, {"k": (5, 6)}), collections.deque([1, [2]], maxlen=4),
    [{"w": 1.5, "b": None}, ("s", b"t", 2 + 1j)], {"nested": {"deep": [[], [[7]]]}},
]


@pytest.mark.parametrize("i", range(len(TREES)))
def test_pytree_flatten_unflatten_map_as_torchs(i):
    tree = TREES[i]
    leaves, spec = tl_pytree.tree_flatten(tree)
    their_leaves, their_spec = torch_pytree.tree_flatten(tree)
    assert leaves == their_leaves and repr(spec) == repr(their_spec) and str(spec) == str(their_spec)
    assert (spec.num_leaves, spec.num_nodes, spec.num_children, spec.is_leaf()) == \
        (their_spec.num_leaves, their_spec.num_nodes, their_spec.num_children, their_spec.is_leaf())
    assert spec.context == their_spec.context
    rebuilt = tl_pytree.tree_unflatten(leaves, spec)
    assert rebuilt == tree and type(rebuilt) is type(tree)
    assert tl_pytree.tree_unflatten(spec, leaves) == tree  # (the spec may come first, as torch allows)
    assert tl_pytree.tree_leaves(tree) == torch_pytree.tree_leaves(tree)
    assert tl_pytree.tree_structure(tree) == spec and hash(tl_pytree.tree_structure(tree)) == hash(spec)
    assert tl_pytree.tree_map(repr, tree) == torch_pytree.tree_map(repr, tree)
    assert tl_pytree.tree_map(lambda a, b: (a, b), tree, tree) == torch_pytree.tree_map(lambda a, b: (a, b), tree, tree)
    is_int = lambda v: isinstance(v, int)  # noqa: E731
    assert tl_pytree.tree_all(is_int, tree) == torch_pytree.tree_all(is_int, tree)
    assert tl_pytree.tree_any(is_int, tree) == torch_pytree.tree_any(is_int, tree)
    assert tl_pytree.tree_map_only(int, str, tree) == torch_pytree.tree_map_only(int, str, tree)
    assert tl_pytree.tree_all_only(int, lambda v: v > 1, tree) == torch_pytree.tree_all_only(int, lambda v: v > 1, tree)
    assert tl_pytree.tree_any_only(int, lambda v: v > 5, tree) == torch_pytree.tree_any_only(int, lambda v: v > 5, tree)


def test_pytree_specs_compare_and_prefixes_as_torchs():
    assert tl_pytree.tree_structure([1, 2]) == tl_pytree.tree_structure([3, 4]) != tl_pytree.tree_structure((3, 4))
    assert tl_pytree.tree_structure({"a": 1, "b": 2}) != tl_pytree.tree_structure({"b": 1, "a": 2})  # key order
    is_tuple = lambda v: isinstance(v, tuple)  # noqa: E731
    tree = [(1, 2), {"a": (3,)}]
    assert tl_pytree.tree_leaves(tree, is_leaf=is_tuple) == torch_pytree.tree_leaves(tree, is_leaf=is_tuple)
    assert repr(tl_pytree.tree_structure(tree, is_tuple)) == repr(torch_pytree.tree_structure(tree, is_tuple))
    # a tree_map's further trees need the first's structure only as a prefix: dicts match dicts by key
    for m in (tl_pytree, torch_pytree):
        assert m.tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]]) == [[5, 7, 9], [6, 1, 2]]
    both = (({"a": 1, "b": 2}, collections.OrderedDict(b=10, a=20)), ([1, 2], [1]), ({"a": 1}, {"b": 1}),
            ([1, 2], (1, 2)), (Point(1, 2), (1, 2)), ([1, [2]], [1, 2]),
            (collections.deque([1], maxlen=2), collections.deque([5], maxlen=9)))
    for a, b in both:
        def mapped(m):
            return m.tree_map(lambda x, y: (x, y), a, b)
        assert error_of(lambda: mapped(tl_pytree)) == error_of(lambda: mapped(torch_pytree))
        if error_of(lambda: mapped(torch_pytree)) is None:
            assert mapped(tl_pytree) == mapped(torch_pytree)
    spec, their_spec = tl_pytree.tree_structure(TREES[7]), torch_pytree.tree_structure(TREES[7])
    messages = []
    for s in (spec, their_spec):
        with pytest.raises(ValueError) as info:
            s.unflatten([1])
        messages.append(str(info.value))
    assert messages[0] == messages[1]  # (all of it: it prints the spec)
    for m in (tl_pytree, torch_pytree):
        messages.append(error_of(lambda: m.tree_unflatten([1], [2])))
    assert messages[2] == messages[3] and messages[2][0] == "TypeError"
    tree = [1, [2]]
    assert tl_pytree.tree_map_(lambda v: None, tree) is tree


def test_pytree_registered_nodes_and_leaf_spec():
    class Box:
        def __init__(self, items, tag):
            self.items, self.tag = items, tag

        def __eq__(self, other):
            return type(other) is Box and (self.items, self.tag) == (other.items, other.tag)

    for m in (tl_pytree, torch_pytree):
        m.register_pytree_node(Box, lambda b: (b.items, b.tag), lambda items, tag: Box(list(items), tag))
    tree = {"box": Box([1, (2, 3)], "t"), "x": 4}
    leaves, spec = tl_pytree.tree_flatten(tree)
    their_leaves, their_spec = torch_pytree.tree_flatten(tree)
    assert leaves == their_leaves == [1, 2, 3, 4] and repr(spec) == repr(their_spec)
    assert tl_pytree.tree_unflatten([10, 20, 30, 40], spec) == {"box": Box([10, (20, 30)], "t"), "x": 40}
    for other in (Box([1, (2, 3)], "u"), Box([1], "t"), [1, (2, 3)]):
        assert error_of(lambda: spec.flatten_up_to({"box": other, "x": 4})) == \
            error_of(lambda: their_spec.flatten_up_to({"box": other, "x": 4}))
    assert error_of(lambda: tl_pytree.register_pytree_node(Box, None, None)) == \
        error_of(lambda: torch_pytree.register_pytree_node(Box, None, None))
    leaf, our_warnings = _warnings(tl_pytree.LeafSpec)
    their_leaf, their_warnings = _warnings(torch_pytree.LeafSpec)
    assert [w[:2] for w in our_warnings] == [w[:2] for w in their_warnings]
    assert repr(leaf) == "*" and leaf == tl_pytree.tree_structure(0) and leaf.is_leaf()
    spec = tl_pytree.TreeSpec(list, None, [leaf, leaf])
    assert spec == tl_pytree.tree_structure([0, 0]) and spec.children() == [leaf, leaf] and spec.child(1) is leaf
    for obj in (Point(1, 2), Point, (1, 2), tuple):
        assert tl_pytree.is_namedtuple(obj) == torch_pytree.is_namedtuple(obj)
    assert tl_pytree.is_namedtuple_instance(Point(1, 2)) and tl_pytree.is_namedtuple_class(Point)


# ----- torch.hub.load_state_dict_from_url / torch.utils.model_zoo -------------------------------------------------
def test_load_state_dict_from_a_file_url_and_the_cache(tmp_path, capsys):
    state = {"w": tl.arange(6.0).reshape(2, 3), "b": tl.tensor([1, 2])}
    source = tmp_path / "net-0123.pth"
    tl.save(state, source)
    url = source.as_uri()
    for m, sub in ((tl, "ours"), (torch, "theirs")):
        loaded = m.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / sub), progress=False)
        assert loaded["w"].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and loaded["b"].tolist() == [1, 2]
        assert isinstance(loaded["w"], m.Tensor)
        assert (tmp_path / sub / "net-0123.pth").exists()
    out = capsys.readouterr().out.splitlines()
    assert out == [f'Downloading: "{url}" to {tmp_path / sub / "net-0123.pth"}'.replace("theirs", s)
                   for s in ("ours", "theirs")]
    source.unlink()  # loaded from the cache now, without opening the URL
    again = tl.utils.model_zoo.load_url(url, model_dir=str(tmp_path / "ours"))
    assert again["b"].tolist() == [1, 2] and capsys.readouterr().out == ""
    assert tl.utils.model_zoo.load_url is tl.hub.load_state_dict_from_url


def test_download_checks_the_hash_in_the_file_name(tmp_path):
    source = tmp_path / "net-deadbeef.pth"
    tl.save({"x": tl.ones(2)}, source)
    def load(m, sub):
        return m.hub.load_state_dict_from_url(source.as_uri(), str(tmp_path / sub), check_hash=True, progress=False)
    ours, theirs = error_of(lambda: load(tl, "a")), error_of(lambda: load(torch, "b"))
    assert ours == theirs and ours[0] == "RuntimeError"
    assert not os.listdir(tmp_path / "a")  # no partial file is left
    tl.hub.download_url_to_file(source.as_uri(), str(tmp_path / "copy.pth"), progress=False)
    assert (tmp_path / "copy.pth").read_bytes() == source.read_bytes()


def test_hub_dir(monkeypatch, tmp_path):
    for env in ({"TORCH_HOME": str(tmp_path / "th")}, {"XDG_CACHE_HOME": str(tmp_path / "xdg")}, {}):
        monkeypatch.delenv("TORCH_HOME", raising=False)
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        assert tl.hub.get_dir() == torch.hub.get_dir()
    old = tl.hub._hub_dir[0]
    try:
        tl.hub.set_dir("~/hub_here")
        assert tl.hub.get_dir() == os.path.expanduser("~/hub_here")
    finally:
        tl.hub._hub_dir[0] = old
