"""Lazy modules (UninitializedParameter / UninitializedBuffer, LazyModuleMixin, LazyLinear, LazyConv*,
LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*), SyncBatchNorm, AdaptiveLogSoftmaxWithLoss, nn.utils.skip_init
and convert_conv{2,3}d_weight_memory_format against torch 2.13. ("Lazy" here is torch's lazy *initialization*, not
torchlike's lazy execution mode of tests/test_lazy.py.)

Values: torchlike's generator is not torch's, so a lazy module's first draw is checked against the regular class's
draw under the same torchlike seed (torch's lazy modules draw exactly what the regular class draws), and values are
compared with torch after loading torch's state_dict (through NumPy) into the torchlike module. Errors: torch's type
and first line (for the uninitialized-tensor ValueError, the text before the function it names). Few small shapes.
"""
import copy
import io
import pickle
import warnings
import zipfile

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

RNG = np.random.default_rng(11)
X2 = RNG.standard_normal((4, 3)).astype(np.float32)  # (N, C) / (N, in_features)
X3 = RNG.standard_normal((2, 3, 5)).astype(np.float32)  # (N, C, L)
X4 = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
X5 = RNG.standard_normal((1, 3, 3, 3, 3)).astype(np.float32)
BAD_USE = "Attempted to use an uninitialized parameter in "


def outcome(fn):
    """(error type, first line: for the uninitialized-tensor ValueError its text up to the function it names), or
    ("ok", summary) with tensors summarised by class name, shape where it can be read, and dtype."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001 - an outcome to compare
        line = (str(e).splitlines() or [""])[0]
        return type(e).__name__, BAD_USE if line.startswith(BAD_USE) else line
    return "ok", summary(r)


def summary(r):
    if isinstance(r, (torch.Tensor, tl.Tensor)):
        try:
            shape = tuple(r.shape)
        except RuntimeError:
            shape = "no shape"
        return type(r).__name__, shape, str(r.dtype).split(".")[-1]
    if isinstance(r, (torch.Size, tl.Size)):
        return tuple(r)
    if isinstance(r, (tuple, list)):
        return type(r).__name__, [summary(v) for v in r]
    if isinstance(r, (torch.dtype, tl.dtype)):
        return str(r).split(".")[-1]
    if isinstance(r, (torch.nn.Module, tl.nn.Module)):
        return type(r).__name__, repr(r)
    if isinstance(r, dict):
        return [(k, summary(v)) for k, v in r.items()]
    return r if isinstance(r, (bool, int, float, str, type(None))) else type(r).__name__


def same(case):
    """``case(lib)`` has the same outcome with torch and torchlike."""
    assert outcome(lambda: case(tl)) == outcome(lambda: case(torch))


def to_tl(state):
    return {k: tl.tensor(v.detach().numpy()) for k, v in state.items()}


def assert_module_state(ml, mt, **tol):
    """Same parameter and buffer names, shapes, dtypes and values."""
    sl, st = ml.state_dict(), mt.state_dict()
    assert list(sl) == list(st)
    for k in st:
        assert_same(sl[k], st[k], **tol)


# ----- UninitializedParameter / UninitializedBuffer -----------------------------------------------------------------
UNINIT_CASES = {
    "repr": lambda lib, p: repr(p), "shape": lambda lib, p: p.shape, "size": lambda lib, p: p.size(),
    "size0": lambda lib, p: p.size(0), "dtype": lambda lib, p: p.dtype, "ndim": lambda lib, p: p.ndim,
    "dim": lambda lib, p: p.dim(), "numel": lambda lib, p: p.numel(), "data": lambda lib, p: p.data,
    "requires_grad": lambda lib, p: p.requires_grad, "is_leaf": lambda lib, p: p.is_leaf,
    "grad": lambda lib, p: p.grad, "add": lambda lib, p: p + 1, "radd": lambda lib, p: 1 + p,
    "fn_add": lambda lib, p: lib.add(p, 1), "mul": lambda lib, p: p * 2, "eq": lambda lib, p: p == p,
    "linear": lambda lib, p: lib.nn.functional.linear(lib.ones(2, 3), p), "float": lambda lib, p: p.float(),
    "double": lambda lib, p: p.double(), "long": lambda lib, p: p.long(), "to": lambda lib, p: p.to(lib.float64),
    "cpu": lambda lib, p: p.cpu(), "is_floating_point": lambda lib, p: p.is_floating_point(),
    "is_complex": lambda lib, p: p.is_complex(), "detach": lambda lib, p: p.detach(),
    "clone": lambda lib, p: p.clone(), "share_memory_": lambda lib, p: p.share_memory_(),
    "len": lambda lib, p: len(p), "bool": lambda lib, p: bool(p), "item": lambda lib, p: p.item(),
    "sum": lambda lib, p: p.sum(), "zero_": lambda lib, p: p.zero_(), "numpy": lambda lib, p: p.numpy(),
    "tolist": lambda lib, p: p.tolist(), "requires_grad_": lambda lib, p: p.requires_grad_(False),
    "getitem": lambda lib, p: p[0], "uniform_": lambda lib, p: lib.nn.init.uniform_(p),
    "kaiming": lambda lib, p: lib.nn.init.kaiming_uniform_(p), "is_lazy": lambda lib, p: lib.nn.parameter.is_lazy(p),
    "isinstance_param": lambda lib, p: isinstance(p, lib.nn.Parameter),
    "isinstance_buffer": lambda lib, p: isinstance(p, lib.nn.Buffer), "in": lambda lib, p: p in [p],
    "hash": lambda lib, p: hash(p) == hash(p), "deepcopy": lambda lib, p: copy.deepcopy(p),
    "pickle": lambda lib, p: pickle.loads(pickle.dumps(p)),
    "copy_": lambda lib, p: p.copy_(lib.ones(0)),
    "copy_no_grad": lambda lib, p: _no_grad(lib, lambda: p.copy_(lib.ones(0))),
    "copy_wrong_size": lambda lib, p: _no_grad(lib, lambda: p.copy_(lib.ones(3))),
    "set_data": lambda lib, p: (setattr(p, "data", lib.ones(3)), type(p).__name__, p.size()),
    # ops refuse it before they look at its (empty) data; torch.tensor and as_tensor take it
    "mm": lambda lib, p: lib.mm(lib.ones(2, 3), p), "matmul": lambda lib, p: lib.matmul(lib.ones(2, 3), p),
    "conv2d": lambda lib, p: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3), p),
    "layer_norm": lambda lib, p: lib.nn.functional.layer_norm(lib.ones(2, 3), (3,), p),
    "embedding": lambda lib, p: lib.nn.functional.embedding(lib.tensor([0]), p),
    "mse_loss": lambda lib, p: lib.nn.functional.mse_loss(p, p), "cat": lambda lib, p: lib.cat([p, p]),
    "fn_is_floating_point": lambda lib, p: lib.is_floating_point(p), "fn_numel": lambda lib, p: lib.numel(p),
    "tensor": lambda lib, p: lib.tensor(p), "as_tensor": lambda lib, p: lib.as_tensor(p),
    "nbytes": lambda lib, p: p.nbytes, "T": lambda lib, p: p.T,
}


def _no_grad(lib, fn):
    with lib.no_grad():
        return fn()


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
@pytest.mark.parametrize("name", sorted(UNINIT_CASES))
def test_uninitialized_tensor_use(kind, name):
    """Every use of an uninitialized tensor: what works (torch's allowed methods and the descriptors) gives torch's
    result; the rest raises torch's ValueError (``shape``, ``share_memory_``: its RuntimeError)."""
    same(lambda lib: UNINIT_CASES[name](lib, getattr(lib.nn, kind)()))


def test_uninitialized_construction_and_materialize():
    same(lambda lib: lib.nn.UninitializedParameter(False).requires_grad)
    same(lambda lib: lib.nn.UninitializedParameter(dtype=lib.float64).dtype)
    same(lambda lib: lib.nn.UninitializedParameter(dtype=lib.int64))  # can't require grad
    same(lambda lib: lib.nn.UninitializedParameter(False, dtype=lib.int64).dtype)
    same(lambda lib: (lambda b: (b.persistent, b._is_buffer, b.requires_grad))(
        lib.nn.UninitializedBuffer(persistent=False)))
    for kind in ("UninitializedParameter", "UninitializedBuffer"):
        for kw in ({}, {"dtype": "float64"}):
            def case(lib, kind=kind, kw=kw):
                p = getattr(lib.nn, kind)()
                p.materialize((2, 3), **{k: getattr(lib, v) for k, v in kw.items()})
                return type(p).__name__, p.shape, p.dtype, p.requires_grad, lib.nn.parameter.is_lazy(p)
            same(case)
    p = tl.nn.UninitializedParameter()
    p.materialize((2, 3))
    assert type(p) is tl.nn.Parameter and p.is_leaf
    (p * 2).sum().backward()
    assert_same(p.grad, torch.full((2, 3), 2.0))


def test_uninitialized_casts_keep_the_class():
    """A cast returns torch's class: a Parameter's cast is a plain tensor unless nothing changes (self), a buffer's
    stays an UninitializedBuffer (torch's __torch_function__ re-wraps it)."""
    for kind in ("UninitializedParameter", "UninitializedBuffer"):
        for method in ("float", "double", "half", "cpu", "int"):
            same(lambda lib, kind=kind, method=method: getattr(getattr(lib.nn, kind)(False), method)())


# ----- lazy layers ----------------------------------------------------------------------------------------------
# (class name, constructor args, input, regular class name, regular constructor args for the same-seed draw)
LAZY = [
    ("LazyLinear", (4,), X2, "Linear", (3, 4)),
    ("LazyConv1d", (4, 2), X3, "Conv1d", (3, 4, 2)),
    ("LazyConv2d", (4, 2), X4, "Conv2d", (3, 4, 2)),
    ("LazyConv3d", (2, 2), X5, "Conv3d", (3, 2, 2)),
    ("LazyConvTranspose1d", (4, 2), X3, "ConvTranspose1d", (3, 4, 2)),
    ("LazyConvTranspose2d", (2, 2), X4, "ConvTranspose2d", (3, 2, 2)),
    ("LazyConvTranspose3d", (2, 2), X5, "ConvTranspose3d", (3, 2, 2)),
    ("LazyBatchNorm1d", (), X3, "BatchNorm1d", (3,)),
    ("LazyBatchNorm2d", (), X4, "BatchNorm2d", (3,)),
    ("LazyBatchNorm3d", (), X5, "BatchNorm3d", (3,)),
    ("LazyInstanceNorm1d", (), X3, "InstanceNorm1d", (3, 1e-5, 0.1, True, True)),
    ("LazyInstanceNorm2d", (), X4, "InstanceNorm2d", (3, 1e-5, 0.1, True, True)),
    ("LazyInstanceNorm3d", (), X5, "InstanceNorm3d", (3, 1e-5, 0.1, True, True)),
]


def _state_summary(m):
    return [(k, type(v).__name__, summary(v)) for k, v in m.state_dict(keep_vars=True).items()]


@pytest.mark.parametrize("name,args,x,regular,regular_args", LAZY, ids=[c[0] for c in LAZY])
def test_lazy_layer(name, args, x, regular, regular_args):
    """Before the first forward: repr, uninitialized state_dict, has_uninitialized_params; the first forward infers
    the size, materializes, draws as the regular class does and turns the module into it (torch's repr, state_dict
    and hooks after); then, from torch's state, the same outputs, gradients and running statistics."""
    mt, ml = getattr(torch.nn, name)(*args), getattr(tl.nn, name)(*args)
    assert repr(ml) == repr(mt)
    assert _state_summary(ml) == _state_summary(mt)
    assert ml.has_uninitialized_params() == mt.has_uninitialized_params() is True
    assert isinstance(ml, tl.nn.modules.lazy.LazyModuleMixin)
    seed = 5
    torch.manual_seed(seed)
    yt = mt(torch.tensor(x))
    tl.manual_seed(seed)
    yl = ml(tl.tensor(x))
    assert type(ml) is getattr(tl.nn, regular) and type(mt) is getattr(torch.nn, regular)
    assert repr(ml) == repr(mt)
    assert _state_summary(ml) == _state_summary(mt)
    assert not ml.has_uninitialized_params() if hasattr(ml, "has_uninitialized_params") else True
    assert not ml._forward_pre_hooks and not ml._load_state_dict_pre_hooks and not hasattr(ml, "_initialize_hook")
    assert yl.shape == yt.shape and yl.dtype == tl.float32
    tl.manual_seed(seed)  # (torch's lazy draw is the regular class's draw)
    reference = getattr(tl.nn, regular)(*regular_args)
    reference(tl.tensor(x))
    assert_module_state(ml, _as_torch(reference), rtol=0, atol=0)
    # values, from torch's state
    ml.load_state_dict(to_tl(mt.state_dict()))
    _compare_forward(ml, mt, x)
    # a lazy module given torch's state by load_state_dict (its load hook materializes it): torch's outcome
    mt2, ml2 = getattr(torch.nn, name)(*args), getattr(tl.nn, name)(*args)
    same(lambda lib: (lambda m: (m.load_state_dict(mt.state_dict() if lib is torch else to_tl(mt.state_dict())),
                                 type(m).__name__, m.has_uninitialized_params(), _state_summary(m)))(
        mt2 if lib is torch else ml2))
    first = outcome(lambda: (mt2(torch.tensor(x)), repr(mt2)))
    assert outcome(lambda: (ml2(tl.tensor(x)), repr(ml2))) == first
    if first[0] == "ok":  # (an instance norm keeps num_features=0 then: its forward refuses)
        _compare_forward(ml2, mt2, x)


def _compare_forward(ml, mt, x):
    """Outputs, input and parameter gradients, and the state after (running statistics)."""
    xt, xl = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
    yt, yl = mt(xt), ml(xl)
    assert_same(yl, yt, rtol=1e-5, atol=1e-5)
    cot = RNG.standard_normal(yt.shape).astype(np.float32)
    yt.backward(torch.tensor(cot))
    yl.backward(tl.tensor(cot))
    assert_same(xl.grad, xt.grad, rtol=1e-4, atol=1e-5)
    for (k, pl), (_, pt) in zip(ml.named_parameters(), mt.named_parameters()):
        assert_same(pl.grad, pt.grad, rtol=1e-4, atol=1e-5)
    assert_module_state(ml, mt, rtol=1e-5, atol=1e-6)


def _as_torch(module):
    """A stand-in with torch tensors of a torchlike module's state (for assert_module_state)."""
    class State:
        def state_dict(self):
            return {k: torch.tensor(np.asarray(v._data)) for k, v in module.state_dict().items()}
    return State()


def test_lazy_layer_arguments():
    """Constructor arguments reach the regular module; cast before the dry run, materialize in that dtype."""
    def conv(lib):
        m = lib.nn.LazyConv2d(4, 3, stride=2, padding=1, bias=False, padding_mode="reflect")
        before = repr(m)
        y = m(lib.tensor(X4))
        return before, repr(m), y.shape, list(m.state_dict())
    same(conv)
    same(lambda lib: repr(lib.nn.LazyConvTranspose2d(4, 3, stride=2, output_padding=1, groups=1, dilation=2)))
    same(lambda lib: (lambda m: (m(lib.tensor(X3), output_size=[12]).shape, repr(m)))(
        lib.nn.LazyConvTranspose1d(4, 3, stride=2)))
    same(lambda lib: (lambda m: (m(input=lib.tensor(X3)).shape, repr(m)))(lib.nn.LazyConv1d(4, 3)))
    same(lambda lib: (lambda m: (m(lib.tensor(X4[0])).shape, repr(m)))(lib.nn.LazyConv2d(4, 3)))  # unbatched
    same(lambda lib: (lambda m: (m(lib.tensor(X4)).shape, repr(m)))(lib.nn.LazyConv2d(6, 1, groups=3)))
    same(lambda lib: (lambda m: (m(lib.tensor(X2[0])).shape, repr(m)))(lib.nn.LazyLinear(2)))
    same(lambda lib: (lambda m: (m(lib.tensor(X2)).shape, repr(m), list(m.state_dict())))(
        lib.nn.LazyLinear(2, bias=False)))
    same(lambda lib: (lambda m: (m.double(), m.weight.dtype, type(m.weight).__name__,
                                 m(lib.tensor(X2).double()).dtype, m.weight.dtype))(lib.nn.LazyLinear(2)))
    same(lambda lib: (lambda m: (m(lib.tensor(X2, dtype=lib.float64)), m.weight.dtype))(
        lib.nn.LazyLinear(2, dtype=lib.float64)))
    for kw in ({"affine": False}, {"track_running_stats": False}, {"affine": False, "track_running_stats": False},
               {"bias": False}, {"momentum": None, "eps": 1e-3}):
        same(lambda lib, kw=kw: (lambda m: (repr(m), _state_summary(m), m(lib.tensor(X3)).shape, repr(m),
                                            _state_summary(m)))(lib.nn.LazyBatchNorm1d(**kw)))
    same(lambda lib: (lambda m: (m.double(), _state_summary(m), m(lib.tensor(X2).double()).dtype,
                                 _state_summary(m)))(lib.nn.LazyBatchNorm1d()))
    # torch's lazy instance norms: affine and running stats on; num_features from size(1), unbatched input too
    same(lambda lib: (lambda m: (repr(m), m(lib.tensor(X3)).shape, repr(m)))(lib.nn.LazyInstanceNorm1d()))
    same(lambda lib: lib.nn.LazyInstanceNorm1d()(lib.tensor(X3[0])))
    same(lambda lib: (lambda m: (m(lib.tensor(X3[0])).shape, repr(m)))(lib.nn.LazyInstanceNorm1d(affine=False)))


def test_lazy_layer_errors():
    cases = [
        lambda lib: lib.nn.LazyLinear(3)(lib.tensor(1.0)),  # IndexError of input.shape[-1]
        lambda lib: lib.nn.LazyLinear(3)(lib.ones(2, 2, dtype=lib.int64)),
        lambda lib: lib.nn.LazyConv2d(4, 3)(lib.tensor(X2)),
        lambda lib: lib.nn.LazyConv3d(4, 3)(lib.tensor(X3)),
        lambda lib: lib.nn.LazyConv2d(4, 3, groups=2)(lib.tensor(X4)),
        lambda lib: lib.nn.LazyConvTranspose1d(4, 3, padding_mode="reflect"),
        lambda lib: lib.nn.LazyConv1d(4, 3, padding="same", stride=2),
        lambda lib: lib.nn.LazyConv1d(4, 3, groups=0),
        lambda lib: lib.nn.LazyBatchNorm2d()(lib.tensor(X3)),
        lambda lib: lib.nn.LazyBatchNorm1d()(lib.tensor(X2[0])),
        lambda lib: lib.nn.LazyInstanceNorm2d()(lib.tensor(X2)),
        lambda lib: lib.nn.LazyInstanceNorm1d()(lib.tensor(X4)),
        lambda lib: lib.nn.LazyInstanceNorm2d(affine=True)(lib.tensor(X3)),
        lambda lib: lib.nn.modules.lazy.LazyModuleMixin.initialize_parameters(lib.nn.LazyLinear(2)),
        lambda lib: lib.nn.LazyLinear(2)._replicate_for_data_parallel(),
    ]
    for case in cases:
        expected = outcome(lambda: case(torch))
        assert expected[0] != "ok"
        assert outcome(lambda: case(tl)) == expected


def test_lazy_module_in_a_network():
    """A lazy layer inside a model: state_dict before and after, materialized in the dry run, trained after."""
    def net(lib):
        return lib.nn.Sequential(lib.nn.LazyConv1d(4, 2), lib.nn.ReLU(), lib.nn.Flatten(), lib.nn.LazyLinear(2))
    same(lambda lib: (lambda m: (repr(m), _state_summary(m), m(lib.tensor(X3)).shape, repr(m), _state_summary(m)))(
        net(lib)))
    mt, ml = net(torch), net(tl)
    optt, optl = torch.optim.SGD(mt.parameters(), lr=0.1), tl.optim.SGD(ml.parameters(), lr=0.1)
    mt(torch.tensor(X3))
    ml.load_state_dict(to_tl(mt.state_dict()))
    for _ in range(2):
        for m, opt, lib in ((mt, optt, torch), (ml, optl, tl)):
            opt.zero_grad()
            m(lib.tensor(X3)).square().sum().backward()
            opt.step()
    assert_module_state(ml, mt, rtol=1e-4, atol=1e-5)


def test_lazy_state_dict_loading():
    """torch's _lazy_load_hook: an initialized state materializes a lazy module (which keeps it on its dry run);
    an uninitialized state loads into a lazy module and not into a regular one; a partial state leaves the rest
    uninitialized (then the dry run fails as torch's); a state of the wrong size fails at the dry run."""
    ones = {"weight": np.ones((2, 4), np.float32), "bias": np.ones(2, np.float32)}

    def load(lib, state, strict=True, into=None):
        m = into(lib) if into else lib.nn.LazyLinear(2)
        keys = m.load_state_dict({k: lib.tensor(v) for k, v in state.items()}, strict=strict)
        return m, keys

    same(lambda lib: (lambda mk: (repr(mk[0]), repr(mk[1]), _state_summary(mk[0]),
                                  mk[0](lib.ones(1, 4)).tolist(), repr(mk[0])))(load(lib, ones)))
    same(lambda lib: load(lib, ones)[0](lib.ones(1, 5)))  # the loaded in_features is kept: AssertionError
    same(lambda lib: (lambda mk: (repr(mk[1]), _state_summary(mk[0])))(
        load(lib, {"weight": ones["weight"]}, strict=False)))
    same(lambda lib: load(lib, {"weight": ones["weight"]}, strict=False)[0](lib.ones(1, 4)))
    same(lambda lib: load(lib, {"weight": np.ones((3, 4), np.float32), "bias": ones["bias"]})[0](lib.ones(1, 4)))
    same(lambda lib: repr(lib.nn.LazyLinear(2).load_state_dict(lib.nn.LazyLinear(2).state_dict())))
    same(lambda lib: lib.nn.Linear(3, 2).load_state_dict(lib.nn.LazyLinear(2).state_dict()))
    same(lambda lib: (lambda m: (m.load_state_dict(lib.nn.BatchNorm1d(3).state_dict()), _state_summary(m),
                                 m(lib.tensor(X2)).shape, repr(m)))(lib.nn.LazyBatchNorm1d()))


def test_lazy_module_conversions():
    """Module methods on a lazy module: torch's results and errors, and its pickle / deepcopy / torch.save."""
    cases = [
        lambda lib, m: m.state_dict(),
        lambda lib, m: m.state_dict(keep_vars=True),
        lambda lib, m: [n for n, _ in m.named_parameters()],
        lambda lib, m: m.requires_grad_(False),
        lambda lib, m: (m.eval(), m.training),
        lambda lib, m: m.zero_grad(),
        lambda lib, m: m.share_memory(),
        lambda lib, m: m.to_empty(device="cpu"),
        lambda lib, m: (m.half(), _state_summary(m)),
        lambda lib, m: (m.to(lib.float64), _state_summary(m)),
        lambda lib, m: copy.deepcopy(m),
        lambda lib, m: pickle.loads(pickle.dumps(m)),
        lambda lib, m: m.get_parameter("weight"),
        lambda lib, m: lib.nn.DataParallel(m)(lib.tensor(X2)).shape,
        lambda lib, m: lib.nn.utils.parameters_to_vector(m.parameters()),
        lambda lib, m: lib.nn.utils.clip_grad_norm_(m.parameters(), 1.0),
    ]
    for make in (lambda lib: lib.nn.LazyLinear(2), lambda lib: lib.nn.LazyBatchNorm1d()):
        for case in cases:
            same(lambda lib, case=case, make=make: case(lib, make(lib)))
    m = copy.deepcopy(tl.nn.LazyLinear(2))
    assert m(tl.tensor(X2)).shape == (4, 2) and type(m) is tl.nn.Linear


def test_lazy_state_dict_saves_in_torchs_format():
    """torch.save of an uninitialized state writes torch's pickle (the class called with requires_grad), which
    torch loads; either library's file loads in torchlike."""
    bt, bl = io.BytesIO(), io.BytesIO()
    torch.save(torch.nn.LazyLinear(2).state_dict(), bt)
    tl.save(tl.nn.LazyLinear(2).state_dict(), bl)

    def pkl(b):
        z = zipfile.ZipFile(io.BytesIO(b.getvalue()))
        return z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    assert pkl(bl) == pkl(bt)
    for b in (bt, bl):
        for lib in (torch, tl):
            loaded = lib.load(io.BytesIO(b.getvalue()), weights_only=False)
            assert [(k, type(v).__name__) for k, v in loaded.items()] == [("weight", "UninitializedParameter"),
                                                                          ("bias", "UninitializedParameter")]
        same(lambda lib, b=b: lib.load(io.BytesIO(b.getvalue()), weights_only=True))


OPTIMIZERS = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "RAdam", "RMSprop", "SGD",
              "SparseAdam"]


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_optimizer_with_lazy_parameters(name):
    """An optimizer built on uninitialized parameters: refused as torch refuses it (Adagrad's state, SparseAdam's
    dense gradients), else it steps on them once the dry run materialized them (the same Parameter objects)."""
    def run(lib):
        m = lib.nn.LazyLinear(2)
        opt = getattr(lib.optim, name)(m.parameters(), **({} if name == "LBFGS" else {"lr": 0.1}))
        if name != "LBFGS":
            opt.step()
        m(lib.ones(3, 4)).sum().backward()
        if name == "LBFGS":
            opt.step(lambda: m(lib.ones(3, 4)).sum())
        else:
            opt.step()
        return sorted(opt.state_dict()["state"]), m.weight.shape, opt.param_groups[0]["params"][0] is m.weight
    same(run)


# ----- SyncBatchNorm ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("x", [X2, X3, X4], ids=["2d", "3d", "4d"])
def test_sync_batch_norm(x):
    """Without a process group torch's SyncBatchNorm is batch norm, in training and in evaluation: outputs,
    gradients, running statistics; its own input checks; repr and state_dict."""
    mt, ml = torch.nn.SyncBatchNorm(3, momentum=0.3), tl.nn.SyncBatchNorm(3, momentum=0.3)
    assert repr(ml) == repr(mt) and list(ml.state_dict()) == list(mt.state_dict())
    with torch.no_grad():
        mt.weight.copy_(torch.tensor(RNG.standard_normal(3).astype(np.float32)))
        mt.bias.copy_(torch.tensor(RNG.standard_normal(3).astype(np.float32)))
    ml.load_state_dict(to_tl(mt.state_dict()))
    for training in (True, False):
        mt.train(training)
        ml.train(training)
        xt, xl = torch.tensor(x, requires_grad=True), tl.tensor(x, requires_grad=True)
        yt, yl = mt(xt), ml(xl)
        assert_same(yl, yt, rtol=1e-5, atol=1e-5)
        assert yl.grad_fn.name() == yt.grad_fn.name()
        yt.pow(2).sum().backward()
        yl.pow(2).sum().backward()
        assert_same(xl.grad, xt.grad, rtol=1e-4, atol=1e-4)
        assert_same(ml.weight.grad, mt.weight.grad, rtol=1e-4, atol=1e-4)
        assert_module_state(ml, mt, rtol=1e-5, atol=1e-6)


def test_sync_batch_norm_options_and_errors():
    for kw in ({"affine": False}, {"track_running_stats": False}, {"momentum": None}, {"bias": False},
               {"process_group": None, "eps": 1e-3}):
        same(lambda lib, kw=kw: (lambda m: (repr(m), _state_summary(m), m(lib.tensor(X3)).shape,
                                            _state_summary(m), m.eval()(lib.tensor(X3)).shape))(
            lib.nn.SyncBatchNorm(3, **kw)))
    for case in (lambda lib: lib.nn.SyncBatchNorm(3)(lib.tensor(X2[0])),
                 lambda lib: lib.nn.SyncBatchNorm(0)(lib.zeros(2, 0)),
                 lambda lib: lib.nn.SyncBatchNorm(3)(lib.tensor(X4[:, :2])),
                 lambda lib: lib.nn.SyncBatchNorm(3)(lib.tensor(X2[:1])),
                 lambda lib: lib.nn.SyncBatchNorm(3).eval()(lib.tensor(X3)).shape,
                 lambda lib: lib.nn.SyncBatchNorm(3)(lib.ones(2, 3, 1, 1, 1, 2)).shape,
                 lambda lib: isinstance(lib.nn.SyncBatchNorm(3), lib.nn.modules.batchnorm._BatchNorm)):
        same(case)


def test_convert_sync_batchnorm():
    """convert_sync_batchnorm replaces every BatchNorm*d (not instance norms) in place, keeping the very parameter
    and buffer tensors, training flag and qconfig; a BatchNorm itself gives a new module."""
    def model(lib):
        s = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3),
                              lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False)),
                              lib.nn.BatchNorm3d(3, track_running_stats=False), lib.nn.InstanceNorm1d(3),
                              lib.nn.BatchNorm1d(3, bias=False))
        s[1].qconfig = "q"
        s.eval()
        return s

    def convert(lib):
        s = model(lib)
        kept = [s[1].weight, s[1].running_mean, s[1].num_batches_tracked]
        c = lib.nn.SyncBatchNorm.convert_sync_batchnorm(s, process_group=None)
        return (repr(c), c is s, [a is b for a, b in zip(kept, [c[1].weight, c[1].running_mean,
                                                                   c[1].num_batches_tracked])],
                c[1].training, c[1].qconfig, c[1].process_group, hasattr(c[2][0], "qconfig"), _state_summary(c))
    same(convert)
    same(lambda lib: lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.BatchNorm1d(2)))
    same(lambda lib: lib.nn.SyncBatchNorm.convert_sync_batchnorm(lib.nn.LazyBatchNorm1d()))


# ----- AdaptiveLogSoftmaxWithLoss -----------------------------------------------------------------------------------
XA = RNG.standard_normal((6, 8)).astype(np.float32)
TA = np.array([0, 4, 9, 2, 7, 5])


def _asm_pair(head_bias=False, **kw):
    mt = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=head_bias, **kw)
    ml = tl.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=head_bias, **kw)
    assert repr(ml) == repr(mt)
    assert _state_summary(ml) == _state_summary(mt)
    ml.load_state_dict(to_tl(mt.state_dict()))
    return mt, ml


@pytest.mark.parametrize("head_bias", [False, True])
def test_adaptive_log_softmax(head_bias):
    """Output and loss (torch's _ASMoutput namedtuple and nodes), gradients of input and parameters, log_prob,
    predict, unbatched input."""
    mt, ml = _asm_pair(head_bias)
    xt, xl = torch.tensor(XA, requires_grad=True), tl.tensor(XA, requires_grad=True)
    ot, ol = mt(xt, torch.tensor(TA)), ml(xl, tl.tensor(TA))
    assert type(ol).__name__ == "_ASMoutput" and ol._fields == ("output", "loss")
    assert type(ol) is tl.nn.modules.adaptive._ASMoutput
    assert_same(ol.output, ot.output, rtol=1e-5, atol=1e-6)
    assert_same(ol.loss, ot.loss, rtol=1e-5, atol=1e-6)
    assert (ol.output.grad_fn.name(), ol.loss.grad_fn.name()) == (ot.output.grad_fn.name(), ot.loss.grad_fn.name())
    ot.loss.backward()
    ol.loss.backward()
    assert_same(xl.grad, xt.grad, rtol=1e-5, atol=1e-6)
    for (k, pl), (_, pt) in zip(ml.named_parameters(), mt.named_parameters()):
        assert_same(pl.grad, pt.grad, rtol=1e-5, atol=1e-6)
    assert_same(ml.log_prob(xl), mt.log_prob(xt), rtol=1e-5, atol=1e-6)
    assert_same(ml.predict(xl), mt.predict(xt))
    for i in (0, 2):
        ot, ol = mt(xt[i], torch.tensor(TA[i])), ml(xl[i], tl.tensor(TA[i]))
        assert_same(ol.output, ot.output, rtol=1e-5, atol=1e-6)
        assert_same(ol.loss, ot.loss, rtol=1e-5, atol=1e-6)


def test_adaptive_log_softmax_predict_branches():
    """predict's three paths: every row in the shortlist, none, some (set through the head's bias)."""
    mt, ml = _asm_pair(head_bias=True)
    for bias in ([9, 9, 9, 0, 0], [0, 0, 0, 9, 9], None):
        with torch.no_grad():
            if bias is not None:
                mt.head.bias.copy_(torch.tensor(bias, dtype=torch.float32))
            else:  # half the rows to the shortlist, half to the clusters
                mt.head.bias.zero_()
                mt.head.weight.zero_()
                mt.head.weight[:3, 0] = 5
                mt.head.weight[3:, 0] = -5
        ml.load_state_dict(to_tl(mt.state_dict()))
        pt, pl = mt.predict(torch.tensor(XA)), ml.predict(tl.tensor(XA))
        assert_same(pl, pt)
    assert 0 < int((pt >= 3).sum()) < len(XA)


def test_adaptive_log_softmax_errors():
    cases = [
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [0, 3]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.5]),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lib.tensor(XA), lib.tensor(TA[:4])),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lib.tensor(XA[None]), lib.tensor(TA[:1])),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lib.tensor(XA), lib.tensor(TA[0])),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lib.tensor(XA), lib.tensor(TA[None])),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lib.tensor(XA), lib.tensor(TA + 5)),
        lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])(lib.tensor(XA), lib.tensor(TA - 1)),
    ]
    for case in cases:
        expected = outcome(lambda: case(torch))
        assert expected[0] != "ok"
        assert outcome(lambda: case(tl)) == expected


# ----- nn.utils: skip_init, convert_conv{2,3}d_weight_memory_format --------------------------------------------------
def test_skip_init():
    """The module built with torch's shapes and classes, the global generator untouched; torch's errors."""
    for case in (lambda lib: lib.nn.utils.skip_init(lib.nn.Linear, 3, 2),
                 lambda lib: lib.nn.utils.skip_init(lib.nn.Linear, in_features=3, out_features=2, device="cpu"),
                 lambda lib: _state_summary(lib.nn.utils.skip_init(lib.nn.BatchNorm1d, 3)),
                 lambda lib: type(lib.nn.utils.skip_init(lib.nn.Conv2d, 2, 3, 1).weight).__name__,
                 lambda lib: lib.nn.utils.skip_init(lib.nn.ReLU),
                 lambda lib: lib.nn.utils.skip_init(int),
                 lambda lib: lib.nn.utils.skip_init(lib.nn.Linear, 3),
                 lambda lib: lib.nn.utils.skip_init(lib.nn.LazyLinear, 3)):
        same(case)
    tl.manual_seed(0)
    a = tl.rand(3)
    tl.manual_seed(0)
    m = tl.nn.utils.skip_init(tl.nn.Linear, 3, 2)
    assert_same(tl.rand(3), a.numpy())
    assert m.weight.requires_grad and type(m.weight) is tl.nn.Parameter


def test_convert_conv_weight_memory_format():
    """The 2-d (3-d) convolutions' weights, nested ones too, laid out in the format (strides as torch's), the same
    Parameter objects; other layers untouched; torch's errors."""
    def model(lib):
        return lib.nn.Sequential(lib.nn.Conv2d(2, 3, 2), lib.nn.Sequential(lib.nn.ConvTranspose2d(3, 2, 2)),
                                 lib.nn.Conv1d(2, 2, 1), lib.nn.Conv3d(2, 2, 2), lib.nn.ConvTranspose3d(2, 2, 2))

    def strides(m):
        return [p.stride() for p in m.parameters()]

    def convert(lib, fn, fmt):
        m = model(lib)
        before = list(m.parameters())
        out = getattr(lib.nn.utils, fn)(m, getattr(lib, fmt))
        return (out is m, strides(m), [a is b for a, b in zip(before, m.parameters())],
                [p.requires_grad for p in m.parameters()])
    for fn, fmt in (("convert_conv2d_weight_memory_format", "channels_last"),
                    ("convert_conv3d_weight_memory_format", "channels_last_3d")):
        same(lambda lib, fn=fn, fmt=fmt: convert(lib, fn, fmt))
        same(lambda lib, fn=fn, fmt=fmt: strides(getattr(lib.nn.utils, fn)(
            getattr(lib.nn.utils, fn)(model(lib), getattr(lib, fmt)), lib.contiguous_format)))
    m = tl.nn.utils.convert_conv2d_weight_memory_format(tl.nn.Conv2d(3, 2, 2), tl.channels_last)
    m2 = torch.nn.Conv2d(3, 2, 2)
    m.load_state_dict(to_tl(m2.state_dict()))
    torch.nn.utils.convert_conv2d_weight_memory_format(m2, torch.channels_last)
    assert_same(m(tl.tensor(X4)), m2(torch.tensor(X4)), rtol=1e-5, atol=1e-5)
    for case in (lambda lib: lib.nn.utils.convert_conv2d_weight_memory_format(lib.nn.Conv2d(1, 1, 1),
                                                                            lib.preserve_format),
                 lambda lib: lib.nn.utils.convert_conv3d_weight_memory_format(lib.nn.Conv3d(1, 1, 1),
                                                                            lib.channels_last),
                 lambda lib: lib.nn.utils.convert_conv2d_weight_memory_format(lib.nn.Conv2d(1, 1, 1),
                                                                            lib.channels_last_3d),
                 lambda lib: lib.nn.utils.convert_conv2d_weight_memory_format(lib.nn.Conv2d(1, 1, 1), "x"),
                 lambda lib: lib.nn.utils.convert_conv2d_weight_memory_format(lib.nn.LazyConv2d(1, 1),
                                                                            lib.channels_last)):
        same(case)
