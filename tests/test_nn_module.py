"""torchlike.nn modules against torch 2.13: Module registration and iteration, state_dict round trips and
strict errors, repr, train/eval, conversions, forward hooks and full backward hooks (built on
BackwardHookFunction nodes as torch builds them), containers, and the outputs and gradients of Linear,
Bilinear, the activations, Dropout and the losses with torch's weights copied in through NumPy.

Most tests run ``fn(lib)`` with ``lib`` = torchlike and torch and compare what they return. Misuse cases
covered: registration errors (names, types, non-leaf parameters, before __init__), get_submodule/parameter/buffer
errors, load_state_dict missing/unexpected/size mismatch/non-tensor values, train(non-bool), to(int dtype),
forward pre-hook bad return, backward hooks returning the wrong count, a backward hook on a module with no input
requiring grad returning gradients, in-place modification of a hooked module's output, mixing full and legacy
backward hooks, Dropout p out of range.
"""
import copy
import math
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

RNG = np.random.default_rng(7)


def arr(*shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def _norm(x):
    """torchlike's names as torch's: 'torchlike.float32' -> 'torch.float32', module paths likewise."""
    if isinstance(x, str):
        return x.replace("torchlike.", "torch.")
    if isinstance(x, (list, tuple)):
        return type(x)(_norm(v) for v in x)
    if isinstance(x, dict):
        return {k: _norm(v) for k, v in x.items()}
    return x


def both(fn):
    """fn(lib) for torchlike and torch (torchlike's names normalised to torch's)."""
    return _norm(fn(tl)), fn(torch)


def err(fn):
    """(exception type name, message) raised by fn(), or None."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def copy_weights(tl_mod, th_mod):
    """Load torch's state_dict into the torchlike module through NumPy."""
    sd = {k: tl.tensor(v.detach().numpy()) for k, v in th_mod.state_dict().items()}
    result = tl_mod.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"


def as_list(t):
    return None if t is None else np.asarray(t.detach().numpy() if isinstance(t, torch.Tensor) else t.detach()._data)


def tensors_equal(a, b):
    assert type(a) is type(b) or (isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)))
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            tensors_equal(x, y)
    else:
        assert_same(a, b)


# ----- Parameter ---------------------------------------------------------------------------------------------
def test_parameter_basics():
    def run(lib):
        data = lib.tensor([1.0, 2.0])
        p = lib.nn.Parameter(data)
        out = {"repr": repr(p), "rg": p.requires_grad, "leaf": p.is_leaf, "isinst": isinstance(p, lib.Tensor),
               "op_type": type(p * 2).__name__, "detach_type": type(p.detach()).__name__,
               "frozen": repr(lib.nn.Parameter(lib.tensor([1, 2]), requires_grad=False))}
        data.add_(1)  # shares storage and version counter with data
        out["shared"] = (p.tolist(), p._version)
        with lib.no_grad():
            out["no_grad_rg"] = lib.nn.Parameter(lib.zeros(1)).requires_grad
        out["int_error"] = err(lambda: lib.nn.Parameter(lib.tensor([1, 2])))
        out["empty"] = tuple(lib.nn.Parameter().shape)
        q = copy.deepcopy(p)
        out["deepcopy"] = (type(q).__name__, q.requires_grad, q.tolist(), q is not p)
        out["pickle"] = type(pickle.loads(pickle.dumps(p))).__name__
        return out
    a, b = both(run)
    assert a == b
    assert a["repr"] == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"


def test_buffer_class_registers_buffers():
    def run(lib):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.zeros(1), persistent=False)
        return (isinstance(m.a, lib.nn.Buffer), type(m.a).__name__, [n for n, _ in m.named_buffers()],
                list(m.state_dict()))
    a, b = both(run)
    assert a == b


# ----- registration, iteration --------------------------------------------------------------------------------
def _tree(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self, shared):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.shared = shared
            self.register_buffer("stat", lib.zeros(3))
            self.register_buffer("tmp", lib.ones(1), persistent=False)
            self.register_buffer("nothing", None)
            self.register_parameter("absent", None)
            self.scale = nn.Parameter(lib.ones(1))

        def forward(self, x):
            return self.shared(self.fc(x)) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            shared = nn.Linear(3, 3)
            self.b1 = Block(shared)
            self.b2 = Block(shared)
            self.head = shared  # the same module under three names
            self.empty = None
            self.alias = self.b1.fc.weight  # the same Parameter registered twice

        def forward(self, x):
            return self.b2(self.b1(x))

    return Net()


def test_named_members_match_torch():
    def run(lib):
        net = _tree(lib)
        names = lambda it: [n for n, _ in it]  # noqa: E731
        return {
            "params": names(net.named_parameters()),
            "params_prefix": names(net.named_parameters(prefix="net")),
            "params_dup": names(net.named_parameters(remove_duplicate=False)),
            "params_norecurse": names(net.named_parameters(recurse=False)),
            "n_params": len(list(net.parameters())),
            "buffers": names(net.named_buffers()),
            "buffers_dup": names(net.named_buffers(remove_duplicate=False)),
            "children": names(net.named_children()),
            "n_children": len(list(net.children())),
            "modules": names(net.named_modules()),
            "modules_dup": names(net.named_modules(remove_duplicate=False)),
            "modules_prefix": names(net.named_modules(prefix="root")),
            "n_modules": len(list(net.modules())),
            "state_dict": list(net.state_dict()),
            "state_dict_prefix": list(net.state_dict(prefix="p.")),
            "dir_has": [k in dir(net) for k in ("b1", "alias", "forward", "head")],
            "submodule": type(net.get_submodule("b1.fc")).__name__,
            "parameter": tuple(net.get_parameter("b2.scale").shape),
            "buffer": tuple(net.get_buffer("b1.stat").shape),
        }
    a, b = both(run)
    assert a == b


def test_state_dict_values_are_detached_aliases():
    def run(lib):
        lin = lib.nn.Linear(2, 2)
        sd = lin.state_dict()
        kv = lin.state_dict(keep_vars=True)
        return (type(sd["weight"]).__name__, sd["weight"].requires_grad, kv["weight"] is lin.weight,
                sd["weight"]._version == lin.weight._version, hasattr(sd, "_metadata"), dict(sd._metadata))
    a, b = both(run)
    assert a == b


def test_registration_errors():
    def run(lib):
        nn = lib.nn
        m = nn.Module()
        m.w = nn.Parameter(lib.ones(2))
        m.sub = nn.Linear(2, 2)
        m.register_buffer("buf", lib.zeros(2))
        m.plain = 3
        out = {
            "tensor_to_param": err(lambda: setattr(m, "w", lib.ones(2))),
            "int_to_module": err(lambda: setattr(m, "sub", 3)),
            "int_to_buffer": err(lambda: setattr(m, "buf", 3)),
            "param_dot": err(lambda: m.register_parameter("a.b", None)),
            "param_empty": err(lambda: m.register_parameter("", None)),
            "param_exists": err(lambda: m.register_parameter("plain", None)),
            "param_type": err(lambda: m.register_parameter("q", lib.ones(1))),
            "param_name_type": err(lambda: m.register_parameter(1, None)),
            "param_nonleaf": err(lambda: m.register_parameter("q", nn.Parameter(lib.ones(1)) * 2)),
            "buffer_dot": err(lambda: m.register_buffer("a.b", None)),
            "buffer_empty": err(lambda: m.register_buffer("", None)),
            "buffer_exists": err(lambda: m.register_buffer("w", None)),
            "buffer_type": err(lambda: m.register_buffer("q", 3)),
            "module_type": err(lambda: m.add_module("q", 3)),
            "module_exists": err(lambda: m.add_module("plain", nn.ReLU())),
            "module_dot": err(lambda: m.add_module("a.b", nn.ReLU())),
            "module_empty": err(lambda: m.add_module("", nn.ReLU())),
            "missing_attr": err(lambda: m.nope),
            "submodule_missing": err(lambda: m.get_submodule("sub.nope")),
            "submodule_not_module": err(lambda: m.get_submodule("sub.weight")),
            "parameter_missing": err(lambda: m.get_parameter("sub.nope")),
            "parameter_not_param": err(lambda: m.get_parameter("buf")),
            "buffer_not_buffer": err(lambda: m.get_buffer("w")),
        }

        class Early(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(lib.ones(1))

        class EarlyMod(nn.Module):
            def __init__(self):
                self.m = nn.ReLU()

        class EarlyBuf(nn.Module):
            def __init__(self):
                self.register_buffer("b", lib.ones(1))

        out["early_param"] = err(Early)
        out["early_module"] = err(EarlyMod)
        out["early_buffer"] = err(EarlyBuf)
        out["init_args"] = err(lambda: nn.Module(3))
        out["init_kwargs"] = err(lambda: nn.Module(a=3))
        out["forward_missing"] = err(lambda: nn.Module()(lib.ones(1)))
        # reassignments move a name between kinds, None keeps the slot
        m.sub = None
        m.w = None
        m.buf = None
        m.x = nn.Parameter(lib.ones(1))
        out["param_to_module"] = err(lambda: setattr(m, "x", nn.ReLU()))
        del m.x
        m.x = nn.ReLU()
        m.plain = nn.Tanh()  # a plain attribute is replaced by the module
        out["after"] = (list(m._parameters), list(m._modules), list(m._buffers), "plain" in m.__dict__)
        del m.x
        out["after_del"] = list(m._modules)
        return out
    a, b = both(run)
    for k in a:
        assert a[k] == b[k], k


def test_set_submodule():
    def run(lib):
        net = lib.nn.Sequential(lib.nn.Sequential(lib.nn.ReLU()))
        net.set_submodule("0.0", lib.nn.Tanh())
        net.set_submodule("0.1", lib.nn.Sigmoid())
        return (repr(net), err(lambda: net.set_submodule("0.2", lib.nn.ReLU(), strict=True)),
                err(lambda: net.set_submodule("", lib.nn.ReLU())))
    a, b = both(run)
    assert a == b


# ----- state_dict / load_state_dict -----------------------------------------------------------------------------
def test_state_dict_round_trip_between_libraries():
    th = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    lm = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
    versions = [p._version for p in lm.parameters()]
    ids = [id(p) for p in lm.parameters()]
    copy_weights(lm, th)
    assert [id(p) for p in lm.parameters()] == ids  # copied in place
    assert [p._version for p in lm.parameters()] == [v + 1 for v in versions]
    for (ka, va), (kb, vb) in zip(lm.state_dict().items(), th.state_dict().items()):
        assert ka == kb
        assert_same(va, vb, 0, 0)
    assert all(p.requires_grad and p.grad_fn is None for p in lm.parameters())
    # and back: a torchlike state_dict loads into torch
    lm2 = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.ReLU(), tl.nn.Linear(4, 2))
    lm2.load_state_dict(lm.state_dict())
    th2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    th2.load_state_dict({k: torch.tensor(np.asarray(v._data)) for k, v in lm2.state_dict().items()})
    x = arr(5, 3)
    assert_same(lm2(tl.tensor(x)), th2(torch.tensor(x)), 1e-6, 1e-6)


def test_load_state_dict_errors_and_results():
    def run(lib):
        nn = lib.nn
        net = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
        net.register_buffer("running", lib.zeros(2))
        sd = OrderedDict((k, v.clone()) for k, v in net.state_dict().items())
        out = {}
        bad = OrderedDict(sd)
        del bad["0.bias"]
        bad["0.extra"] = lib.zeros(1)
        bad["5.weight"] = lib.zeros(1)
        bad["stray"] = lib.zeros(1)
        out["strict"] = err(lambda: net.load_state_dict(bad))
        res = net.load_state_dict(bad, strict=False)
        out["loose"] = (res.missing_keys, res.unexpected_keys, repr(res))
        out["ok"] = repr(net.load_state_dict(sd))
        shape = OrderedDict(sd)
        shape["1.weight"] = lib.zeros(2, 3)
        out["shape"] = err(lambda: net.load_state_dict(shape))
        out["shape_loose"] = err(lambda: net.load_state_dict(shape, strict=False))
        notensor = OrderedDict(sd)
        notensor["0.weight"] = [[1.0, 2.0]] * 3
        out["notensor"] = err(lambda: net.load_state_dict(notensor))
        out["notmapping"] = err(lambda: net.load_state_dict([1, 2]))
        # 1-element 1-D values load into 0-d parameters (old checkpoints)
        m = nn.Module()
        m.s = nn.Parameter(lib.tensor(1.0))
        m.load_state_dict({"s": lib.tensor([5.0])})
        out["scalar"] = m.s.item()
        # assign=True replaces the Parameter object and keeps requires_grad from the module
        lin = nn.Linear(2, 2)
        lin.weight.requires_grad_(False)
        old = lin.weight
        lin.load_state_dict({"weight": lib.ones(2, 2), "bias": lib.zeros(2)}, assign=True)
        out["assign"] = (lin.weight is old, type(lin.weight).__name__, lin.weight.requires_grad,
                         lin.bias.requires_grad, lin.weight.tolist())
        # dtype conversion on copy, and loading under grad mode leaves no history
        lin64 = nn.Linear(2, 2).double()
        lin64.load_state_dict({"weight": lib.ones(2, 2), "bias": lib.zeros(2)})
        out["cast"] = (str(lin64.weight.dtype), lin64.weight.grad_fn is None)
        return out
    a, b = both(run)
    for k in a:
        assert a[k] == b[k], k
    assert a["strict"][1].startswith("Error(s) in loading state_dict for Sequential:\n\tMissing key(s)")


def test_state_dict_and_load_hooks():
    def run(lib):
        nn = lib.nn
        log = []
        lin = nn.Linear(2, 2)
        lin.register_state_dict_pre_hook(lambda m, prefix, keep_vars: log.append(("pre", prefix, keep_vars)))

        def post(m, sd, prefix, meta):
            log.append(("post", prefix, sorted(sd)))
            sd[prefix + "added"] = 1
        lin.register_state_dict_post_hook(post)
        seq = nn.Sequential(lin)
        keys = list(seq.state_dict())
        seq.register_load_state_dict_post_hook(lambda m, keys: keys.unexpected_keys.clear())
        lin.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors: log.append(("load_pre", prefix, strict)))
        res = seq.load_state_dict({"0.weight": lib.ones(2, 2), "0.bias": lib.ones(2), "x": lib.ones(1)})
        bad = nn.Linear(1, 1)
        bad.register_state_dict_post_hook(lambda m, sd, prefix, meta: {})
        return log, keys, repr(res), err(bad.state_dict)
    a, b = both(run)
    assert a == b


# ----- repr ------------------------------------------------------------------------------------------------------
def test_repr_matches_torch():
    def run(lib):
        nn = lib.nn

        class Multi(nn.Module):
            def extra_repr(self):
                return "first\nsecond"

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Dropout(0.25),
                                          nn.Linear(4, 2, bias=False))
                self.heads = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.Tanh(), nn.Tanh(), nn.GELU()])
                self.extra = nn.ModuleDict({"sm": nn.Softmax(dim=1), "lsm": nn.LogSoftmax(dim=-1)})
                self.multi = Multi()
                self.none = None

        mods = [Net(), nn.Bilinear(2, 3, 4), nn.GELU(approximate="tanh"), nn.Sigmoid(), nn.Identity(),
                nn.SiLU(), nn.LeakyReLU(0.2, inplace=True), nn.Softplus(2.0, 10.0), nn.Softmax(), nn.ModuleList(),
                nn.Sequential(), nn.CrossEntropyLoss(label_smoothing=0.1), nn.MSELoss(), nn.L1Loss(),
                nn.NLLLoss(), nn.BCEWithLogitsLoss(), nn.Dropout(), nn.ModuleList([nn.ReLU()]),
                nn.ParameterList([nn.Parameter(lib.ones(2, 3)), lib.zeros(1)]),
                nn.ParameterDict({"b": nn.Parameter(lib.ones(2)), "a": lib.zeros(2, 2, dtype=lib.float64)})]
        return [repr(m) for m in mods]
    a, b = both(run)
    for x, y in zip(a, b):
        assert x == y


# ----- modes, conversions, gradients ---------------------------------------------------------------------------
def test_train_eval_zero_grad_requires_grad():
    def run(lib):
        nn = lib.nn
        net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.Linear(2, 1)))
        out = {"initial": [m.training for m in net.modules()]}
        out["eval_returns_self"] = net.eval() is net
        out["eval"] = [m.training for m in net.modules()]
        net[1].train()
        out["partial"] = [m.training for m in net.modules()]
        out["bad_mode"] = err(lambda: net.train(1))
        net(lib.ones(3, 2)).sum().backward()
        grads = [p.grad for p in net.parameters()]
        net.zero_grad(set_to_none=False)
        out["zeros"] = [(p.grad is g, p.grad.abs().sum().item(), p.grad._version) for p, g in
                        zip(net.parameters(), grads)]
        net.zero_grad()
        out["none"] = [p.grad is None for p in net.parameters()]
        out["rg"] = [p.requires_grad for p in net.requires_grad_(False).parameters()]
        out["rg_out"] = net(lib.ones(1, 2)).requires_grad
        net.requires_grad_()
        order = []
        net.apply(lambda m: order.append(type(m).__name__))
        out["apply"] = order
        return out
    a, b = both(run)
    assert a == b


def test_zero_grad_set_to_none_false_detaches_graph_grads():
    def run(lib):
        lin = lib.nn.Linear(2, 1)
        lin.weight.grad = lib.ones(1, 2, requires_grad=True) * 2  # a gradient with history
        lin.zero_grad(set_to_none=False)
        return lin.weight.grad.grad_fn is None, lin.weight.grad.requires_grad, lin.weight.grad.tolist()
    a, b = both(run)
    assert a == b


def test_to_and_dtype_conversions():
    def run(lib):
        nn = lib.nn
        lin = nn.Linear(2, 2)
        lin.register_buffer("count", lib.zeros(1, dtype=lib.int64))
        w = lin.weight
        lin(lib.ones(1, 2)).sum().backward()
        out = {"same_obj": lin.double() is lin}
        out["double"] = (lin.weight is w, str(lin.weight.dtype), str(lin.weight.grad.dtype), str(lin.count.dtype),
                         lin.weight.requires_grad, lin.weight.is_leaf)
        lin.to(lib.float32)
        out["to_float"] = str(lin.weight.dtype)
        lin.to("cpu", lib.float64)
        out["to_dev_dtype"] = str(lin.bias.dtype)
        lin.to(lib.zeros(1, dtype=lib.float32))
        out["to_tensor"] = str(lin.bias.dtype)
        lin.float()
        out["float"] = (str(lin.weight.dtype), str(lin.count.dtype))
        out["int_error"] = err(lambda: lin.to(lib.int32))
        out["to_dtype_kw"] = str(lin.to(dtype=lib.float64).weight.dtype)
        out["output"] = str(lin(lib.ones(1, 2, dtype=lib.float64)).dtype)
        out["cpu"] = lin.cpu() is lin
        return out
    a, b = both(run)
    assert a == b


def test_deepcopy_and_pickle_module():
    lin = tl.nn.Linear(3, 2)
    c = copy.deepcopy(lin)
    assert c.weight is not lin.weight and isinstance(c.weight, tl.nn.Parameter)
    assert_same(c.weight, torch.tensor(np.asarray(lin.weight._data)), 0, 0)
    p = pickle.loads(pickle.dumps(lin))
    assert type(p) is tl.nn.Linear and p.weight.requires_grad
    assert np.array_equal(np.asarray(p.bias._data), np.asarray(lin.bias._data))


# ----- forward hooks ---------------------------------------------------------------------------------------------
def test_forward_hooks_order_arguments_and_replacement():
    def run(lib):
        nn = lib.nn
        log = []

        class Add(nn.Module):
            def forward(self, x, y=0.0, *, scale=1.0):
                log.append(("forward", x.tolist(), float(y), scale))
                return (x + y) * scale

        m = Add()
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre1", len(args))))
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 10,))
        m.register_forward_pre_hook(lambda mod, args: log.append(("pre0",)), prepend=True)

        def kw_pre(mod, args, kwargs):
            log.append(("kwpre", sorted(kwargs)))
            return args, {**kwargs, "scale": 2.0}
        m.register_forward_pre_hook(kw_pre, with_kwargs=True)
        m.register_forward_pre_hook(lambda mod, args: args[0] + 1)  # a single value becomes a 1-tuple
        h = m.register_forward_hook(lambda mod, args, out: log.append(("post", args[0].tolist(), out.tolist())))
        m.register_forward_hook(lambda mod, args, kwargs, out: out + kwargs["scale"], with_kwargs=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("first", out.tolist())), prepend=True)
        out = m(lib.tensor([1.0]), scale=3.0)
        log.append(("result", out.tolist()))
        h.remove()
        with m.register_forward_hook(lambda mod, args, out: log.append(("ctx",))):
            m(lib.tensor([0.0]))
        m(lib.tensor([0.0]))
        bad = nn.Identity()
        bad.register_forward_pre_hook(lambda mod, args, kwargs: 3, with_kwargs=True)
        log.append(err(lambda: bad(lib.ones(1))))
        return log
    a, b = both(run)
    assert a == b


def test_forward_hook_always_call_on_exception():
    def run(lib):
        log = []

        class Boom(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Boom()
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
        m.register_forward_hook(lambda mod, args, out: log.append(("normal",)))

        def failing(mod, args, out):
            raise KeyError("inner")
        m.register_forward_hook(failing, always_call=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            log.append(err(lambda: m(lib.ones(1))))
        log.append([str(x.message) for x in w])
        return log
    a, b = both(run)
    assert a == b


def test_global_module_hooks():
    def run(lib):
        log = []
        mm = lib.nn.modules.module
        handles = [mm.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__))),
                   mm.register_module_forward_hook(lambda m, a, o: log.append(("gpost", type(m).__name__))),
                   mm.register_module_full_backward_pre_hook(lambda m, go: log.append(("gbpre", type(m).__name__))),
                   mm.register_module_full_backward_hook(lambda m, gi, go: log.append(("gb", type(m).__name__)))]
        net = lib.nn.Sequential(lib.nn.ReLU())
        net.register_forward_hook(lambda m, a, o: log.append(("own",)))
        net.register_full_backward_hook(lambda m, gi, go: log.append(("own_b",)))
        try:
            net(lib.ones(1, requires_grad=True)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        net(lib.ones(1))
        return log
    a, b = both(run)
    assert a == b


# ----- full backward hooks ------------------------------------------------------------------------------------------
def _fmt(gs):
    return tuple(None if g is None else np.round(as_list(g), 5).tolist() for g in gs)


def test_full_backward_hooks_multiple_inputs():
    w = arr(2, 3)

    def run(lib):
        nn = lib.nn
        log = []

        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 2)

            def forward(self, x, y, k=None):
                return self.lin(x) * y, x + 1, "extra"

        m = M()
        with lib.no_grad():
            m.lin.weight.copy_(lib.tensor(w))
            m.lin.bias.fill_(0.5)
        m.register_full_backward_hook(lambda mod, gi, go: log.append(("hook", _fmt(gi), _fmt(go))))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", _fmt(go))))
        m.lin.register_full_backward_hook(lambda mod, gi, go: log.append(("lin", _fmt(gi), _fmt(go))))
        m.lin.register_full_backward_pre_hook(lambda mod, go: (go[0] * 2,))
        m.lin.register_full_backward_pre_hook(lambda mod, go: log.append(("lin_pre_first", _fmt(go))),
                                              prepend=True)
        x = lib.ones(1, 3, requires_grad=True)
        y = lib.full((1, 2), 3.0)
        a, b, s = m(x, y, k=5)
        log.append((s, a.grad_fn.name(), b.grad_fn is a.grad_fn, a.grad_fn.name(),
                    [n.name() for n, _ in a.grad_fn.next_functions]))
        (a.sum() + (b * 2).sum()).backward()
        log.append(("x.grad", _fmt([x.grad])))
        # only one output used: the other grad_output is None
        x.grad = None
        a, b, s = m(x, y)
        a.sum().backward()
        log.append(("x.grad", _fmt([x.grad])))
        return log
    a, b = both(run)
    assert a == b


def test_full_backward_hooks_on_sequential():
    w1, w2, x0 = arr(4, 3), arr(2, 4), arr(2, 3)

    def run(lib):
        nn = lib.nn
        log = []
        net = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
        with lib.no_grad():
            net[0].weight.copy_(lib.tensor(w1))
            net[2].weight.copy_(lib.tensor(w2))
            net[0].bias.zero_()
            net[2].bias.zero_()
        for name, mod in net.named_modules():
            mod.register_full_backward_pre_hook(lambda m, go, n=name: log.append(("pre", n, _fmt(go))))
            mod.register_full_backward_hook(lambda m, gi, go, n=name: log.append(("hook", n, _fmt(gi), _fmt(go))))
        net[1].register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.5,))  # replaces grad_input
        net[1].register_full_backward_hook(lambda m, gi, go: log.append(("after", _fmt(gi))), prepend=False)
        x = lib.tensor(x0, requires_grad=True)
        out = net(x)
        out.backward(lib.ones(2, 2))
        log.append(("x.grad", _fmt([x.grad])))
        log.append(("w.grad", _fmt([net[0].weight.grad])))
        return log
    a, b = both(run)
    assert a == b


def test_full_backward_hook_input_without_grad_and_errors():
    def run(lib):
        nn = lib.nn
        log = []
        lin = nn.Linear(2, 2)
        lin.register_full_backward_hook(lambda m, gi, go: log.append(("hook", [g is None for g in gi], len(go))))
        x = lib.ones(1, 2)  # no input requires grad: the hook fires at the outputs, with a warning
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin(x).sum().backward()
        log.append([str(m.message)[:60] for m in w])
        bad = nn.Linear(2, 2)
        bad.register_full_backward_hook(lambda m, gi, go: (lib.ones(1, 2),))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            log.append(err(lambda: bad(x).sum().backward()))
        count = nn.Tanh()
        count.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
        log.append(err(lambda: count(lib.ones(2, requires_grad=True)).sum().backward()))
        pre = nn.Tanh()
        pre.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
        log.append(err(lambda: pre(lib.ones(2, requires_grad=True)).sum().backward()))
        inplace = nn.ReLU(inplace=True)
        inplace.register_full_backward_hook(lambda m, gi, go: None)
        log.append(err(lambda: inplace(lib.ones(2, requires_grad=True) * 1)))
        mixed = nn.Tanh()
        mixed.register_backward_hook(lambda m, gi, go: None)
        log.append(err(lambda: mixed.register_full_backward_hook(lambda m, gi, go: None)))
        mixed2 = nn.Tanh()
        mixed2.register_full_backward_hook(lambda m, gi, go: None)
        log.append(err(lambda: mixed2.register_backward_hook(lambda m, gi, go: None)))
        d = nn.Module()
        d.forward = lambda x: {"out": x * 2}
        d.register_full_backward_hook(lambda m, gi, go: None)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            d(lib.ones(1, requires_grad=True))
        log.append([str(m.message)[:70] for m in w])
        # no grad mode: no BackwardHookFunction node is made
        with lib.no_grad():
            log.append(lin(lib.ones(1, 2, requires_grad=True)).grad_fn is None)
        return log
    a, b = both(run)
    assert a == b


def test_full_backward_hook_views_and_removal():
    def run(lib):
        log = []
        t = lib.nn.Tanh()
        h = t.register_full_backward_hook(lambda m, gi, go: log.append("hook"))
        x = lib.ones(2, requires_grad=True)
        y = t(x)
        log.append((y._is_view(), y.grad_fn.name()))
        h.remove()
        t(x).sum().backward()
        y.sum().backward()  # the node was made while the hook was registered: it still runs the (removed) list
        return log
    a, b = both(run)
    assert a == b


def test_legacy_backward_hook():
    def run(lib):
        log = []
        t = lib.nn.Tanh()
        t.register_backward_hook(lambda m, gi, go: log.append((len(gi), len(go), _fmt(gi))))
        x = lib.tensor([0.5, -1.0], requires_grad=True)
        t(x).sum().backward()
        lin = lib.nn.Linear(2, 2)
        lin.register_backward_hook(lambda m, gi, go: log.append(len(gi)))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin(lib.ones(1, 2, requires_grad=True))
        log.append([str(m.message)[:60] for m in w])
        return log
    a, b = both(run)
    assert a == b


# ----- containers -----------------------------------------------------------------------------------------------
def test_sequential_api():
    def run(lib):
        nn = lib.nn
        s = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
        names = lambda m: [type(x).__name__ for x in m]  # noqa: E731
        out = {"len": len(s), "iter": names(s), "idx": type(s[-1]).__name__, "slice": repr(s[1:]),
               "slice_type": type(s[::2]).__name__, "oob": err(lambda: s[3]), "oob_neg": err(lambda: s[-4])}
        s.append(nn.Identity())
        s.insert(1, nn.GELU())
        s.insert(-1, nn.SiLU())
        out["insert_bad"] = err(lambda: s.insert(10, nn.ReLU()))
        s.extend([nn.Dropout()])
        s[0] = nn.LeakyReLU()
        del s[2]
        out["edited"] = (names(s), list(s._modules))
        out["pop"] = type(s.pop(1)).__name__
        out["add"] = names(s + nn.Sequential(nn.ReLU()))
        out["add_bad"] = err(lambda: s + nn.ReLU())
        out["mul"] = len(nn.Sequential(nn.ReLU(), nn.Tanh()) * 3)
        out["mul_bad"] = err(lambda: s * 0)
        t = nn.Sequential(nn.ReLU())
        t *= 2
        t += nn.Sequential(nn.Tanh())
        out["imul"] = names(t)
        od = nn.Sequential(OrderedDict([("act", nn.ReLU()), ("out", nn.Tanh())]))
        out["od"] = (list(od._modules), repr(od))
        out["forward"] = od(lib.tensor([-1.0, 1.0])).tolist()
        del od[0:1]
        out["del_slice"] = list(od._modules)
        return out
    a, b = both(run)
    for k in a:
        assert a[k] == b[k], k


def test_modulelist_moduledict_api():
    def run(lib):
        nn = lib.nn
        names = lambda m: [type(x).__name__ for x in m]  # noqa: E731
        ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
        ml.append(nn.Sigmoid())
        ml.extend([nn.GELU()])
        ml.insert(0, nn.Identity())
        ml += [nn.SiLU()]
        out = {"ml": names(ml), "len": len(ml), "neg": type(ml[-1]).__name__, "slice": names(ml[1:3]),
               "oob": err(lambda: ml[10]), "extend_bad": err(lambda: ml.extend(3)),
               "add": names(ml + nn.ModuleList([nn.ReLU()]))}
        ml[1] = nn.LeakyReLU()
        del ml[0]
        out["pop"] = type(ml.pop(0)).__name__
        out["after"] = (names(ml), list(ml._modules), len(list(ml.parameters())))
        md = nn.ModuleDict({"b": nn.ReLU(), "a": nn.Tanh()})
        md["c"] = nn.Linear(1, 1)
        md.update([("d", nn.Sigmoid())])
        out["md"] = (list(md), list(md.keys()), names(md.values()), [k for k, _ in md.items()], "a" in md, len(md))
        out["md_pop"] = type(md.pop("a")).__name__
        del md["b"]
        out["md_params"] = [n for n, _ in md.named_parameters()]
        out["md_bad"] = (err(lambda: md.update(3)), err(lambda: md.update([("x",)])), err(lambda: md.update([3])))
        md.clear()
        out["md_clear"] = len(md)
        pl = nn.ParameterList([lib.ones(2), nn.Parameter(lib.zeros(1))])
        pl.append(lib.ones(3))
        out["pl"] = (len(pl), [type(p).__name__ for p in pl], [n for n, _ in pl.named_parameters()],
                     err(lambda: pl(1)))
        pd = nn.ParameterDict({"w": lib.ones(2)})
        pd["v"] = lib.zeros(1)
        out["pd"] = (list(pd), [n for n, _ in pd.named_parameters()], "w" in pd, type(pd["v"]).__name__,
                     pd.get("zz", 5))
        return out
    a, b = both(run)
    for k in a:
        assert a[k] == b[k], k


# ----- layers: outputs and gradients with torch's weights ------------------------------------------------------------
def _compare_module(tl_mod, th_mod, inputs, rtol=2e-5, atol=2e-6, target=None, check_node=True):
    copy_weights(tl_mod, th_mod)
    tl_in = [tl.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    th_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    extra = () if target is None else (target,)
    out_tl = tl_mod(*tl_in, *[tl.tensor(t) for t in extra])
    out_th = th_mod(*th_in, *[torch.tensor(t) for t in extra])
    assert_same(out_tl, out_th, rtol, atol)
    if out_th.grad_fn is not None:
        assert not check_node or out_tl.grad_fn.name() == out_th.grad_fn.name()
        cot = RNG.standard_normal(tuple(out_th.shape)).astype(np.float32)
        out_tl.backward(tl.tensor(cot).to(out_tl.dtype))
        out_th.backward(torch.tensor(cot).to(out_th.dtype))
        for a, b in zip(tl_in, th_in):
            assert_same(a.grad, b.grad, rtol, atol)
        for (na, pa), (nb, pb) in zip(tl_mod.named_parameters(), th_mod.named_parameters()):
            assert na == nb
            assert_same(pa.grad, pb.grad, rtol, atol)
    return out_tl, out_th


@pytest.mark.parametrize("shape,bias", [((4, 3), True), ((2, 4, 3), True), ((4, 3), False), ((3,), True)])
def test_linear(shape, bias):
    _compare_module(tl.nn.Linear(3, 5, bias=bias), torch.nn.Linear(3, 5, bias=bias), [arr(*shape)])


def test_linear_float64_and_functional_graph():
    th = torch.nn.Linear(3, 5, dtype=torch.float64)
    lm = tl.nn.Linear(3, 5, dtype=tl.float64)
    assert lm.weight.dtype == tl.float64
    _compare_module(lm, th, [arr(4, 3, dtype="float64")], 1e-12, 1e-12)


def test_bilinear():
    # values and gradients; torch records one TrilinearBackward0 node, torchlike an einsum
    for shape in ((5,), (2, 3)):
        out_tl, _ = _compare_module(tl.nn.Bilinear(3, 2, 4), torch.nn.Bilinear(3, 2, 4),
                                    [arr(*shape, 3), arr(*shape, 2)], check_node=False)
        assert out_tl.shape == shape + (4,)


@pytest.mark.parametrize("name,args", [("ReLU", ()), ("GELU", ()), ("GELU", ("tanh",)), ("Tanh", ()),
                                       ("Sigmoid", ()), ("Softmax", (1,)), ("LogSoftmax", (-1,)), ("SiLU", ()),
                                       ("LeakyReLU", (0.1,)), ("Softplus", (2.0, 1.0)), ("Identity", ())])
def test_activations(name, args):
    _compare_module(getattr(tl.nn, name)(*args), getattr(torch.nn, name)(*args), [arr(4, 3)])


def test_relu_inplace_and_softmax_implicit_dim():
    def run(lib):
        x = lib.tensor([-1.0, 2.0], requires_grad=True) * 1
        y = lib.nn.ReLU(inplace=True)(x)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            s = lib.nn.Softmax()(lib.ones(2, 3))
        return y is x, y.grad_fn.name(), x._version, [str(m.message) for m in w], tuple(s.shape)
    a, b = both(run)
    assert a == b


def test_dropout_train_eval():
    a, b = both(lambda lib: [err(lambda: lib.nn.Dropout(p)) for p in (1.5, -0.1)])
    assert a == b and a[0] is not None
    drop = tl.nn.Dropout(0.3)
    x = tl.ones(200, 250, requires_grad=True)
    y = drop(x)
    vals = np.asarray(y.detach()._data)
    zero = (vals == 0).mean()
    assert abs(zero - 0.3) < 0.01  # 50,000 Bernoulli draws: 4.6 sigma
    np.testing.assert_allclose(vals[vals != 0], 1 / 0.7, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad._data), vals)  # gradient is the same mask
    assert y.grad_fn.name() == "MulBackward0"
    drop.eval()
    assert drop(x) is x
    assert tl.nn.Dropout(0.0)(x) is x
    assert np.all(np.asarray(tl.nn.Dropout(1.0)(x).detach()._data) == 0)
    z = tl.ones(10) * 1
    assert tl.nn.Dropout(0.5, inplace=True)(z) is z


LOSSES = [
    ("MSELoss", {}, "float"), ("MSELoss", {"reduction": "sum"}, "float"), ("MSELoss", {"reduction": "none"}, "float"),
    ("L1Loss", {}, "float"), ("L1Loss", {"reduction": "none"}, "float"),
    ("CrossEntropyLoss", {}, "index"), ("CrossEntropyLoss", {"reduction": "sum"}, "index"),
    ("CrossEntropyLoss", {"weight": True}, "index"), ("CrossEntropyLoss", {"ignore_index": 1}, "index"),
    ("CrossEntropyLoss", {"label_smoothing": 0.2}, "index"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "weight": True, "ignore_index": 2, "reduction": "mean"}, "index"),
    ("CrossEntropyLoss", {"reduction": "none"}, "index"), ("CrossEntropyLoss", {}, "probs"),
    ("NLLLoss", {}, "index"), ("NLLLoss", {"weight": True, "reduction": "sum"}, "index"),
    ("NLLLoss", {"ignore_index": 0}, "index"),
    ("BCEWithLogitsLoss", {}, "binary"), ("BCEWithLogitsLoss", {"reduction": "none"}, "binary"),
    ("BCEWithLogitsLoss", {"weight": True}, "binary"), ("BCEWithLogitsLoss", {"pos_weight": True}, "binary"),
]
WEIGHT = np.array([0.5, 1.5, 2.0], np.float32)


@pytest.mark.parametrize("name,kw,kind", LOSSES)
def test_losses(name, kw, kind):
    x = arr(4, 3)
    target = {"float": arr(4, 3), "index": np.array([0, 2, 1, 2]), "binary": (arr(4, 3) > 0).astype(np.float32),
              "probs": np.full((4, 3), 1 / 3, np.float32)}[kind]
    if name == "NLLLoss":
        x = np.log(np.exp(x) / np.exp(x).sum(1, keepdims=True)).astype(np.float32)

    def make(lib):
        args = dict(kw)
        for key in ("weight", "pos_weight"):
            if args.get(key):
                args[key] = lib.tensor(WEIGHT)
        return getattr(lib.nn, name)(**args)

    lm, th = make(tl), make(torch)
    assert list(lm.state_dict()) == list(th.state_dict())  # weight/pos_weight are buffers
    assert repr(lm) == repr(th)
    _compare_module(lm, th, [x], target=target)


def test_loss_legacy_arguments():
    def run(lib):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = lib.nn.MSELoss(size_average=False)
        return loss.reduction, [str(m.message) for m in w]
    a, b = both(run)
    assert a == b


# ----- default initialisation ---------------------------------------------------------------------------------------
def test_linear_default_init_distribution():
    lin = tl.nn.Linear(400, 300)
    w, b = np.asarray(lin.weight._data), np.asarray(lin.bias._data)
    bound = 1 / math.sqrt(400)  # kaiming_uniform_(a=sqrt(5)) gives the same bound as the bias
    assert w.dtype == np.float32 and w.shape == (300, 400)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert abs(w.mean()) < 0.01 * bound * 3 and abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert abs(np.abs(w).max() - bound) < 0.01 * bound  # fills the whole interval
    th = torch.nn.Linear(400, 300)
    assert abs(th.weight.detach().std().item() - w.std()) < 0.01 * bound
    assert lin.weight._version == 1 and lin.bias._version == 1  # one in-place fill each, like torch
    assert th.weight._version == 1 and th.bias._version == 1
    assert tl.nn.Linear(0, 3).bias.shape == (3,)  # fan_in 0: bound 0, no error (and the no-op warning)
