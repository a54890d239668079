"""torchlike.optim's Rprop, ASGD and Adafactor against torch's: the same parameters and gradients give the same
parameters, state (keys, dtypes, shapes), state_dict and version counters after every step, over two parameter groups
with different options; float32, complex parameters, Adafactor's factored (>= 2-d) and unfactored (0-d, 1-d)
parameters, torch's state dicts loaded and continued; a compiled step and a lazy step equal the eager one.

Misuse covered (torch's exception type and message): every constructor check (lr, a multi-element Tensor lr, etas,
weight_decay, beta2_decay, both epsilons, d, an empty parameter list), sparse gradients, complex parameters in
Adafactor; ``differentiable=True`` is refused as by the other optimizers (NotImplementedError)."""
import inspect

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same
from test_optim import _assert_runs_same, _error, _loss, _np, _params, _run, assert_state_dict_same
from test_optim_more import (_assert_histories_close, _two_groups, check_complex_parameters,
                              check_float32_and_a_parameter_without_grad, check_state_dict_round_trip,
                              check_torch_state_dict_loads)

NAMES = ["Rprop", "ASGD", "Adafactor"]

CONFIGS = [
    ("Rprop", dict(), dict(lr=0.02)),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.07), maximize=True), dict(etas=(0.6, 1.1))),
    ("Rprop", dict(lr=0.05, foreach=True, maximize=True), dict(step_sizes=(0.04, 0.06))),
    ("ASGD", dict(), dict(lr=0.02)),
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.5, t0=2, weight_decay=0.1), dict(maximize=True, t0=0)),
    # foreach=True: torch's multi-tensor update, which rounds eta and the parameters differently
    ("ASGD", dict(lr=0.05, lambd=0.1, alpha=0.6, t0=3, foreach=True), dict(weight_decay=0.1, maximize=True)),
    ("ASGD", dict(lr=0.05, foreach=False), dict(foreach=True)),
    ("Adafactor", dict(), dict(lr=0.5)),
    ("Adafactor", dict(lr=0.3, beta2_decay=-0.5, eps=(1e-3, 1e-2), d=1.5, weight_decay=0.1), dict(maximize=True)),
    ("Adafactor", dict(lr=0.3, foreach=True, weight_decay=0.1), dict(eps=(1e-20, 0.5), foreach=False)),
]

FULL = {"Rprop": dict(lr=0.05, etas=(0.4, 1.3), step_sizes=(1e-4, 0.08)),
        "ASGD": dict(lr=0.05, lambd=0.1, alpha=0.6, t0=2, weight_decay=0.1),
        "Adafactor": dict(lr=0.3, beta2_decay=-0.6, d=1.2, weight_decay=0.1)}


def _cid(v):
    return v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v.items()) or "-"


@pytest.mark.parametrize("name,kw,second", CONFIGS, ids=_cid)
def test_optimizer_matches_torch_step_for_step(name, kw, second):
    _assert_runs_same(_run(_two_groups(name, kw, second), steps=7))


@pytest.mark.parametrize("name", NAMES)
def test_signature_defaults_and_state_layout_match_torch(name):
    ours, theirs = inspect.signature(getattr(tl.optim, name)), inspect.signature(getattr(torch.optim, name))
    assert [(p.name, p.kind, p.default) for p in ours.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.parameters.values()]
    runs = _run(lambda lib, ps: getattr(lib.optim, name)(ps), steps=1)
    (tps, topt, _), (ops, oopt, _) = runs
    assert topt.defaults == oopt.defaults and list(topt.defaults) == list(oopt.defaults)
    for p, q in zip(tps, ops):
        assert [(k, v.dtype.name, tuple(v.shape)) for k, v in topt.state[p].items()] == \
            [(k, str(v.dtype).split(".")[1], tuple(v.shape)) for k, v in oopt.state[q].items()]


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_capturable_is_accepted(name):
    """``capturable=True`` is recorded and changes nothing (torch refuses it for CPU tensors at step time)."""
    runs = _run(lambda lib, ps: getattr(lib.optim, name)(ps, **FULL[name], capturable=lib is tl), steps=3)
    assert runs[0][1].defaults["capturable"] is True
    runs[0][1].param_groups[0]["capturable"] = False  # (for the state-dict comparison)
    _assert_runs_same(runs)


@pytest.mark.parametrize("name", NAMES)
def test_float32_and_a_parameter_without_grad(name):
    (_, topt, _), _ = check_float32_and_a_parameter_without_grad(name, FULL[name])
    assert sorted(topt.state_dict()["state"]) == [0, 1, 2]


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_complex_parameters_match_torch(name):
    check_complex_parameters(name, FULL[name])


@pytest.mark.parametrize("foreach", [None, True])
def test_adafactor_factored_and_unfactored_parameters(foreach):
    """A 3-d parameter (row/col factors over the last two dims), a 0-d and a 1-d one, in one group. Single-tensor:
    the first parameter is float32 and torch takes eps1 from its dtype for the whole group (the 0-d float64
    parameter's tiny gradients make it show); foreach groups by dtype in a hash map's order, so one dtype there."""
    rng = np.random.default_rng(2)
    inits = [rng.standard_normal(3).astype(np.float64 if foreach else np.float32), rng.standard_normal((2, 3, 4)),
             np.array(0.7)]
    grads = [[rng.standard_normal(a.shape).astype(a.dtype) * (1e-9 if a.ndim == 0 else 1) for a in inits]
             for _ in range(6)]
    results = []
    for lib in (tl, torch):
        ps = [lib.tensor(a, requires_grad=True) for a in inits]
        opt = lib.optim.Adafactor(ps, lr=0.3, weight_decay=0.05, foreach=foreach)
        hist = []
        for gs in grads:
            for p, g in zip(ps, gs):
                p.grad = lib.tensor(g)
            opt.step()
            hist.append([_np(p) for p in ps])
        results.append((hist, opt.state_dict(), [p._version for p in ps]))
    for a, b in zip(results[0][0], results[1][0]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-5 if x.dtype == np.float32 else 1e-12, atol=1e-7)
    assert_state_dict_same(results[0][1], results[1][1], rtol=1e-5, atol=1e-7)
    assert results[0][2] == results[1][2]
    assert list(results[0][1]["state"][1]) == ["step", "row_var", "col_var"]
    assert list(results[0][1]["state"][2]) == ["step", "variance"]


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_and_loading_into_a_fresh_optimizer(name):
    check_state_dict_round_trip(name, FULL[name])


@pytest.mark.parametrize("name", NAMES)
def test_torch_state_dict_loads_into_torchlike(name):
    """torch's state dict, converted through NumPy, continues identically (loading casts ASGD's ``eta`` and ``mu``
    to the parameters' dtype, in both)."""
    topt, tps = check_torch_state_dict_loads(name, FULL[name], steps=3)
    if name == "ASGD":
        assert topt.state[tps[0]]["eta"].dtype == tl.float64


def test_asgd_old_checkpoint_numbers_become_tensors():
    outs = []
    for lib in (tl, torch):
        p = lib.tensor([1.0, 2.0], requires_grad=True)
        opt = lib.optim.ASGD([p])
        opt.load_state_dict({"state": {0: {"step": 3, "eta": 0.01, "mu": 1.0, "ax": lib.zeros(2)}},
                             "param_groups": [{**opt.defaults, "params": [0]}]})
        st = opt.state[p]
        outs.append([(k, type(v).__name__, str(v.dtype).split(".")[1], float(v.sum())) for k, v in st.items()])
    assert outs[0] == outs[1]


def test_tensor_lr_matches_torch():
    """A Tensor lr: Rprop's initial step sizes, ASGD's initial eta (then torch's float32 tensor arithmetic for eta:
    hence the tolerance), Adafactor's rho and weight decay."""
    for name in NAMES:
        (tps, topt, thist), (ops, oopt, ohist) = _run(lambda lib, ps: getattr(lib.optim, name)(ps, lr=lib.tensor(0.05)),
                                                      steps=3)
        for a, b in zip(thist, ohist):
            for x, y in zip(a, b):
                np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)
        for p, q in zip(tps, ops):
            for key, v in oopt.state[q].items():
                assert_same(topt.state[p][key], v, rtol=1e-6, atol=1e-7)


def _sparse_grad(lib, p):
    """A gradient torch stores sparse; torchlike has no sparse layout, so one that says it is sparse."""
    if lib is torch:
        return torch.ones(2, 2, dtype=p.dtype).to_sparse()
    g = tl.ones(2, 2, dtype=p.dtype)
    g.is_sparse = True
    return g


def _stepped(lib, name, grad, complex_param=False):
    """A step of ``name`` over a 2x2 parameter (complex: ``complex_param``) with gradient ``grad(lib, p)``."""
    p = lib.tensor([[1.0, 2.0], [3.0, 4.0 + 1j if complex_param else 4.0]], requires_grad=True)
    opt = getattr(lib.optim, name)([p])
    p.grad = grad(lib, p)
    opt.step()


def _p(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


INVALID = {
    "rprop_lr": lambda lib: lib.optim.Rprop([_p(lib)], lr=-0.1),
    "rprop_tensor_lr": lambda lib: lib.optim.Rprop([_p(lib)], lr=lib.tensor([0.1, 0.2])),
    "rprop_etaminus": lambda lib: lib.optim.Rprop([_p(lib)], etas=(1.0, 1.2)),
    "rprop_etaplus": lambda lib: lib.optim.Rprop([_p(lib)], etas=(0.5, 1.0)),
    "rprop_empty": lambda lib: lib.optim.Rprop([]),
    "asgd_lr": lambda lib: lib.optim.ASGD([_p(lib)], lr=-0.1),
    "asgd_tensor_lr": lambda lib: lib.optim.ASGD([_p(lib)], lr=lib.tensor([0.1, 0.2])),
    "asgd_wd": lambda lib: lib.optim.ASGD([_p(lib)], weight_decay=-0.1),
    "adafactor_lr": lambda lib: lib.optim.Adafactor([_p(lib)], lr=-0.1),
    "adafactor_tensor_lr": lambda lib: lib.optim.Adafactor([_p(lib)], lr=lib.tensor([0.1, 0.2])),
    "adafactor_beta2_decay": lambda lib: lib.optim.Adafactor([_p(lib)], beta2_decay=0.1),
    "adafactor_eps1": lambda lib: lib.optim.Adafactor([_p(lib)], eps=(-1e-3, 1e-3)),
    "adafactor_eps2": lambda lib: lib.optim.Adafactor([_p(lib)], eps=(None, -1e-3)),
    "adafactor_d": lambda lib: lib.optim.Adafactor([_p(lib)], d=0.5),
    "adafactor_wd": lambda lib: lib.optim.Adafactor([_p(lib)], weight_decay=-0.1),
    "adafactor_complex": lambda lib: _stepped(lib, "Adafactor", lambda lib, p: lib.ones_like(p), complex_param=True),
    **{f"{name.lower()}_sparse": (lambda name: lambda lib: _stepped(lib, name, _sparse_grad))(name)
       for name in NAMES + ["RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam"]},  # (the element-wise ones' shared check)
}


@pytest.mark.parametrize("case", list(INVALID))
def test_errors_match_torch(case):
    expected = _error(lambda: INVALID[case](torch))
    assert expected is not None
    assert _error(lambda: INVALID[case](tl)) == expected


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_differentiable_is_refused_like_the_other_optimizers(name):
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        getattr(tl.optim, name)([_p(tl)], differentiable=True)
    with pytest.raises(NotImplementedError, match="differentiable=True is not supported"):
        tl.optim.RMSprop([_p(tl)], differentiable=True)


@pytest.mark.parametrize("name", NAMES)
def test_compiled_and_lazy_steps_equal_eager(name):
    """The same three training steps eagerly, as one ``torchlike.compile`` program each, and in lazy mode."""
    runs = []
    for mode in ("eager", "compiled", "lazy"):
        ps = _params(tl)
        opt = getattr(tl.optim, name)(ps, **FULL[name])

        def step():
            opt.zero_grad()
            loss = _loss(tl, ps)
            loss.backward()
            opt.step()
            return loss
        fn = tl.compile(step) if mode == "compiled" else step
        losses = []
        for _ in range(3):
            with tl.lazy(mode == "lazy"):
                losses.append(fn().item())
        if mode == "compiled":
            assert fn.compiles == 2  # first call (no .grad, no optimizer state yet), then the steady state
        runs.append((losses, [[_np(p) for p in ps]], opt.state_dict(), [p._version for p in ps]))
    eager = runs[0]
    for other in runs[1:]:
        np.testing.assert_allclose(other[0], eager[0], rtol=1e-12)
        _assert_histories_close(other[1], eager[1])
        assert other[2]["param_groups"] == eager[2]["param_groups"]
        for k, s in eager[2]["state"].items():
            for key, v in s.items():
                np.testing.assert_allclose(_np(other[2]["state"][k][key]), _np(v), rtol=1e-12, atol=1e-14)
    assert runs[0][3] == runs[2][3]  # lazy mode keeps the version counters
