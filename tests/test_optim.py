"""torchlike.optim against torch.optim: the same parameters and gradients (each library's own autograd on the same
small MLP written with plain tensor ops) must give the same parameters, state and state_dict after every step.

Misuse covered (torch's exception type and message): negative lr / momentum / weight_decay / eps, betas out of
range or of mixed types, Nesterov without momentum or with dampening, a multi-element Tensor lr, fused together
with foreach, params given as a Tensor, an empty list, a set, non-Tensors or non-leaves, a parameter in two
groups, groups with and without names, a non-dict group, duplicate parameters (warning), loading a state dict with
a different number of groups or a group of a different size, a scheduler given a non-optimizer, resuming a
scheduler without ``initial_lr``, ``scheduler.step()`` before ``optimizer.step()`` (warning), ``step(epoch)``
(deprecation warning) and ``get_lr()`` outside ``step()`` (warning).
"""
import copy
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike.optim.optimizer import _traces
from oracle import assert_same

_rng = np.random.default_rng(0)
W1, B1, W2 = _rng.standard_normal((4, 3)), _rng.standard_normal(3), _rng.standard_normal((3, 2))
X, Y = _rng.standard_normal((5, 4)), _rng.standard_normal((5, 2))


def _params(lib, dtype=np.float64, extra=False):
    arrays = (W1, B1, W2) + ((np.ones(2),) if extra else ())  # extra: a parameter that never gets a gradient
    return [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]


def _loss(lib, ps):
    dtype = np.float64 if "64" in str(ps[0].dtype) else np.float32
    x, y = lib.tensor(X.astype(dtype)), lib.tensor(Y.astype(dtype))
    return ((lib.tanh(x @ ps[0] + ps[1]) @ ps[2] - y) ** 2).mean()


def _train(lib, opt, ps, steps):
    """``steps`` steps; returns the parameter values after each one."""
    history = []
    for _ in range(steps):
        opt.zero_grad()
        _loss(lib, ps).backward()
        opt.step()
        history.append([_np(p) for p in ps])
    return history


def _np(t):
    return np.asarray(t._data) if isinstance(t, tl.Tensor) else t.detach().numpy().copy()


def _run(make, steps=5, dtype=np.float64, extra=False):
    """The same training run in both libraries: (params, optimizer, history) per library."""
    out = []
    for lib in (tl, torch):
        ps = _params(lib, dtype, extra)
        opt = make(lib, ps)
        out.append((ps, opt, _train(lib, opt, ps, steps)))
    return out


def assert_state_dict_same(a, b, rtol=1e-12, atol=1e-14):
    """Same structure (ids, keys and their order, group options) and the same state values and dtypes."""
    assert a["param_groups"] == b["param_groups"]
    assert list(a["state"]) == list(b["state"])
    for k in b["state"]:
        assert list(a["state"][k]) == list(b["state"][k])
        for key, v in b["state"][k].items():
            assert_same(a["state"][k][key], v, rtol=rtol, atol=atol)


def _assert_runs_same(runs, rtol=1e-12, atol=1e-14):
    (tps, topt, thist), (ops, oopt, ohist) = runs
    for step_t, step_o in zip(thist, ohist):  # every step, not only the last
        for a, b in zip(step_t, step_o):
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert [p._version for p in tps] == [p._version for p in ops]
    assert_state_dict_same(topt.state_dict(), oopt.state_dict(), rtol, atol)
    for p, q in zip(topt.param_groups[0]["params"], oopt.param_groups[0]["params"]):
        for key, v in oopt.state.get(q, {}).items():
            assert topt.state[p][key]._version == v._version, key


SGD_CONFIGS = [
    dict(lr=0.1),
    dict(lr=0.1, momentum=0.9),
    dict(lr=0.1, momentum=0.9, dampening=0.5),
    dict(lr=0.05, momentum=0.8, nesterov=True),
    dict(lr=0.1, weight_decay=0.1),
    dict(lr=0.1, maximize=True),
    dict(lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.05, maximize=True),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True),
]


@pytest.mark.parametrize("kw", SGD_CONFIGS, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_sgd_matches_torch(kw):
    _assert_runs_same(_run(lambda lib, ps: lib.optim.SGD(ps, **kw)))


ADAM_CONFIGS = [
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True, maximize=True)),
    ("AdamW", dict(lr=0.05)),
    ("AdamW", dict(lr=0.05, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.05, weight_decay=0.0, maximize=True)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
]


@pytest.mark.parametrize("name,kw", ADAM_CONFIGS, ids=lambda v: v if isinstance(v, str) else
                         ",".join(f"{k}={x}" for k, x in v.items()))
def test_adam_matches_torch(name, kw):
    _assert_runs_same(_run(lambda lib, ps: getattr(lib.optim, name)(ps, **kw)))


@pytest.mark.parametrize("make", [
    lambda lib, ps: lib.optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.1),
    lambda lib, ps: lib.optim.AdamW(ps, lr=0.05, weight_decay=0.1, amsgrad=True),
], ids=["sgd", "adamw"])
def test_float32_matches_torch(make):
    runs = _run(make, dtype=np.float32)
    _assert_runs_same(runs, rtol=1e-5, atol=1e-6)
    assert runs[0][0][0].dtype == tl.float32


@pytest.mark.parametrize("make", [
    lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),
    lambda lib, ps: lib.optim.Adam(ps, lr=0.1, amsgrad=True),
], ids=["sgd", "adam"])
def test_params_without_grad_are_skipped(make):
    runs = _run(make, steps=3, extra=True)
    _assert_runs_same(runs)
    (tps, topt, _), (ops, oopt, _) = runs
    assert tps[3] not in topt.state and np.array_equal(_np(tps[3]), np.ones(2)) and tps[3]._version == 0
    assert sorted(topt.state_dict()["state"]) == sorted(oopt.state_dict()["state"]) == [0, 1, 2]


def test_complex_parameters_match_torch():
    """Complex parameters (Adam updates them as real pairs, as torch's view_as_real); gradients set by hand."""
    rng = np.random.default_rng(1)
    init = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    grads = [rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)) for _ in range(4)]
    results = []
    for lib in (tl, torch):
        p, q = lib.tensor(init, requires_grad=True), lib.tensor(init, requires_grad=True)
        opts = [lib.optim.Adam([p], lr=0.1, weight_decay=0.1, amsgrad=True),
                lib.optim.SGD([q], lr=0.1, momentum=0.9, weight_decay=0.1)]
        for g in grads:
            p.grad, q.grad = lib.tensor(g), lib.tensor(g)
            for opt in opts:
                opt.step()
        results.append((p, q, opts[0].state_dict()))
    (a, b, sa), (c, d, sb) = results
    assert_same(a, c, rtol=1e-12, atol=1e-14)
    assert_same(b, d, rtol=1e-12, atol=1e-14)
    assert_state_dict_same(sa, sb)


def test_param_groups_with_different_options():
    def make(lib, ps):
        return lib.optim.SGD([{"params": ps[:2], "lr": 0.2, "momentum": 0.9},
                              {"params": [ps[2]], "weight_decay": 0.1}], lr=0.05, nesterov=False)
    runs = _run(make)
    _assert_runs_same(runs)
    (tps, topt, _), (ops, oopt, _) = runs
    assert [g["lr"] for g in topt.param_groups] == [0.2, 0.05]
    assert "momentum_buffer" in topt.state[tps[0]] and tps[2] not in topt.state  # as torch: no buffer at momentum 0
    assert repr(topt) == repr(oopt)

    def make_adam(lib, ps):
        opt = lib.optim.Adam([ps[0]], lr=0.05)
        opt.add_param_group({"params": ps[1:], "lr": 0.01, "amsgrad": True, "betas": (0.5, 0.9)})
        return opt
    _assert_runs_same(_run(make_adam))


@pytest.mark.eager_only("counts the optimizer's jitted traces; lazy mode records the update into "
                        "the step's program (tests/test_lazy.py: a loop compiles once)")
def test_one_compile_per_structure_and_no_recompile_when_lr_changes():
    """A step over all parameters is one traced function: traced once, not again when lr (by hand or by a
    scheduler) or other numeric options change, or when the momentum buffers come into existence."""
    for make in (lambda ps: tl.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.1),
                 lambda ps: tl.optim.AdamW(ps, lr=0.1, amsgrad=True)):
        ps = [tl.tensor(np.linspace(-1.0, 1.0, 7), requires_grad=True),  # shapes no other test uses
              tl.tensor(np.ones((2, 7)), requires_grad=True)]
        opt = make(ps)
        kind = "sgd" if isinstance(opt, tl.optim.SGD) else "adam"
        sched = tl.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        before = _traces[kind]
        seen = []
        for i in range(6):
            for p in ps:
                p.grad = tl.ones_like(p) * (i + 1)
            opt.step()
            sched.step()
            seen.append(opt.param_groups[0]["lr"])
            opt.param_groups[0]["weight_decay"] = 0.1 + i / 10
        assert _traces[kind] - before == 1
        assert len(set(seen)) == 4  # the lr did change
        opt.param_groups[0]["lr"] = 0.123
        opt.step()
        assert _traces[kind] - before == 1
        opt.param_groups[0]["weight_decay"] = 0.0  # a new structure: no weight decay term
        opt.step()
        assert _traces[kind] - before == 2


def test_updates_are_in_place():
    """Parameters keep their identity, views of them see the update, and state tensors are updated in place."""
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        view = ps[0][1]
        opt = lib.optim.SGD(ps, lr=0.1, momentum=0.9)
        _train(lib, opt, ps, 1)
        buf = opt.state[ps[0]]["momentum_buffer"]
        ids = [id(p) for p in ps]
        _train(lib, opt, ps, 2)
        assert [id(p) for p in ps] == ids and opt.state[ps[0]]["momentum_buffer"] is buf
        outs.append((view, ps[0], buf, view._version))
    assert_same(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_array_equal(_np(outs[0][0]), _np(outs[0][1])[1])
    assert_same(outs[0][2], outs[1][2], rtol=1e-12)
    assert outs[0][3] == outs[1][3]


# ----- state_dict ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1))])
def test_state_dict_round_trip_and_loading_into_a_fresh_optimizer(name, kw):
    results = []
    for lib in (tl, torch):
        cls = getattr(lib.optim, name)
        ps = _params(lib)
        opt = cls([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.01}], **kw)
        _train(lib, opt, ps, 3)
        sd = opt.state_dict()
        assert sd["state"][0] is opt.state[ps[0]]  # torch's state_dict holds the optimizer's own state
        fresh = cls([{"params": ps[:2]}, {"params": ps[2:]}], lr=0.5)  # other lrs: loading restores them
        fresh.load_state_dict(sd)
        first = next(iter(sd["state"][0]))
        shares = fresh.state[ps[0]][first] is sd["state"][0][first]  # same-dtype tensors are shared, as torch
        opt.load_state_dict(opt.state_dict())  # round trip onto itself
        hist = _train(lib, fresh, ps, 2)
        results.append((sd, fresh.state_dict(), opt.state_dict(), hist, shares))
    (sd_t, fresh_t, own_t, hist_t, shares_t), (sd_o, fresh_o, own_o, hist_o, shares_o) = results
    assert_state_dict_same(sd_t, sd_o)
    assert_state_dict_same(fresh_t, fresh_o)
    assert_state_dict_same(own_t, own_o)
    assert [g["lr"] for g in fresh_t["param_groups"]] == [kw["lr"], 0.01]
    assert shares_t == shares_o
    for a, b in zip(hist_t, hist_o):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


def test_torch_state_dict_loads_into_torchlike():
    """A torch optimizer's state_dict (tensors converted through NumPy) continues training identically."""
    tps, ops = _params(tl), _params(torch)
    topt, oopt = tl.optim.AdamW(tps, lr=0.05), torch.optim.AdamW(ops, lr=0.05)
    _train(torch, oopt, ops, 3)
    for p, q in zip(tps, ops):
        p.data = tl.tensor(q.detach().numpy())
    sd = oopt.state_dict()
    topt.load_state_dict({"state": {k: {n: tl.tensor(v.numpy()) for n, v in s.items()} for k, s in sd["state"].items()},
                          "param_groups": sd["param_groups"]})
    assert topt.state[tps[0]]["step"].dtype == tl.float32
    for a, b in zip(_train(tl, topt, tps, 2), _train(torch, oopt, ops, 2)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-14)


def _error(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, str(e)
    return None


def test_load_state_dict_errors():
    cases = {}
    for lib in (tl, torch):
        ps = _params(lib)
        sd = lib.optim.SGD([{"params": ps[:2]}, {"params": ps[2:]}]).state_dict()
        cases[lib] = [(lib.optim.SGD(ps), sd),  # one group, two saved
                      (lib.optim.SGD([{"params": ps[:1]}, {"params": ps[1:]}]), sd)]  # group sizes differ
    for (ot, st), (oo, so) in zip(cases[tl], cases[torch]):
        expected = _error(lambda: oo.load_state_dict(so))
        assert expected is not None and _error(lambda: ot.load_state_dict(st)) == expected


# ----- zero_grad ----------------------------------------------------------------------------------------------
def test_zero_grad_both_ways():
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        opt = lib.optim.SGD(ps, lr=0.1)
        _loss(lib, ps).backward(create_graph=True)  # grads with history: zero_grad detaches them
        grads = [p.grad for p in ps]
        versions = [g._version for g in grads]
        opt.zero_grad(set_to_none=False)
        row = [(p.grad is g, g.grad_fn is None, g.requires_grad, g._version - v, float(g.abs().sum()))
               for p, g, v in zip(ps, grads, versions)]
        opt.zero_grad()
        outs.append((row, [p.grad is None for p in ps]))
    assert outs[0] == outs[1]
    assert outs[0][1] == [True] * 3 and outs[0][0][0][:3] == (True, True, False)


# ----- closure and hooks --------------------------------------------------------------------------------------
def test_closure_and_step_hooks():
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        opt = lib.optim.Adam(ps, lr=0.05)
        calls = []

        def record(name):  # torch passes (optimizer, args, kwargs), args starting with the optimizer itself
            return lambda o, a, k: calls.append((name, o is opt, len(a), a[0] is opt, a[-1] is closure, k))
        opt.register_step_pre_hook(record("pre"))
        handle = opt.register_step_post_hook(record("post"))

        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps)
            loss.backward()
            calls.append(("closure", lib.is_grad_enabled()))
            return loss
        with lib.no_grad():
            loss = opt.step(closure)
        handle.remove()
        opt.step(closure)
        outs.append((calls, loss.item(), [_np(p) for p in ps]))
    assert outs[0][0] == outs[1][0]
    assert outs[0][1] == pytest.approx(outs[1][1], rel=1e-12)
    for a, b in zip(outs[0][2], outs[1][2]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# ----- validation errors --------------------------------------------------------------------------------------
def _p(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


INVALID = {
    "sgd_lr": lambda lib: lib.optim.SGD([_p(lib)], lr=-0.1),
    "sgd_momentum": lambda lib: lib.optim.SGD([_p(lib)], momentum=-0.5),
    "sgd_weight_decay": lambda lib: lib.optim.SGD([_p(lib)], weight_decay=-1),
    "nesterov_no_momentum": lambda lib: lib.optim.SGD([_p(lib)], nesterov=True),
    "nesterov_dampening": lambda lib: lib.optim.SGD([_p(lib)], momentum=0.9, dampening=0.1, nesterov=True),
    "tensor_lr": lambda lib: lib.optim.SGD([_p(lib)], lr=lib.tensor([0.1, 0.2])),
    "fused_foreach": lambda lib: lib.optim.SGD([_p(lib)], fused=True, foreach=True),
    "adam_lr": lambda lib: lib.optim.Adam([_p(lib)], lr=-1.0),
    "adam_eps": lambda lib: lib.optim.Adam([_p(lib)], eps=-1e-8),
    "adam_beta0": lambda lib: lib.optim.Adam([_p(lib)], betas=(1.0, 0.999)),
    "adam_beta1": lambda lib: lib.optim.Adam([_p(lib)], betas=(0.9, -0.1)),
    "adam_weight_decay": lambda lib: lib.optim.AdamW([_p(lib)], weight_decay=-0.1),
    "adam_int_beta": lambda lib: lib.optim.Adam([_p(lib)], betas=(0, 0.999)),
    "adam_mixed_betas": lambda lib: lib.optim.Adam([_p(lib)], betas=(lib.tensor(0.9), 0.999)),
    "params_tensor": lambda lib: lib.optim.SGD(_p(lib)),
    "params_empty": lambda lib: lib.optim.SGD([]),
    "params_set": lambda lib: lib.optim.SGD([{"params": {_p(lib)}}]),
    "params_not_tensor": lambda lib: lib.optim.SGD([_p(lib), 1.5]),
    "params_non_leaf": lambda lib: lib.optim.SGD([_p(lib) * 2]),
    "params_names_missing": lambda lib: lib.optim.SGD([("a", _p(lib)), _p(lib)]),
    "group_not_dict": lambda lib: lib.optim.SGD([_p(lib)]).add_param_group([_p(lib)]),
    "group_overlap": lambda lib: (lambda p: lib.optim.SGD([p]).add_param_group({"params": [p]}))(_p(lib)),
    "group_names_mixed": lambda lib: lib.optim.SGD([("a", _p(lib))]).add_param_group({"params": [_p(lib)]}),
    "scheduler_not_optimizer": lambda lib: lib.optim.lr_scheduler.StepLR([_p(lib)], step_size=2),
    "scheduler_resume_without_initial_lr": lambda lib: lib.optim.lr_scheduler.CosineAnnealingLR(
        lib.optim.SGD([_p(lib)]), T_max=3, last_epoch=2),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_validation_errors_match_torch(case):
    expected = _error(lambda: INVALID[case](torch))
    assert expected is not None
    assert _error(lambda: INVALID[case](tl)) == expected


def test_duplicate_parameters_warn_like_torch():
    msgs = []
    for lib in (tl, torch):
        p = _p(lib)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.optim.SGD([p, p])
        msgs.append([str(x.message) for x in w])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1


def test_named_parameters_state_dict():
    sds = []
    for lib in (tl, torch):
        a, b = _p(lib), _p(lib)
        sds.append(lib.optim.SGD([("w", a), ("b", b)], lr=0.1).state_dict())
    assert_state_dict_same(*sds)
    assert sds[0]["param_groups"][0]["param_names"] == ["w", "b"]


# ----- learning-rate schedulers -------------------------------------------------------------------------------
def _lr_run(lib, make_sched, epochs=20, lrs=(0.1, 0.03)):
    ps = _params(lib)
    opt = lib.optim.SGD([{"params": ps[:1], "lr": lrs[0]}, {"params": ps[1:], "lr": lrs[1]}], momentum=0.5)
    sched = make_sched(lib, opt)
    seq = [sched.get_last_lr()]
    for _ in range(epochs):
        opt.step()  # no grads: a no-op, but counts as called
        sched.step()
        seq.append(sched.get_last_lr())
        assert [g["lr"] for g in opt.param_groups] == seq[-1]
    return seq, sched, opt


SCHEDULERS = {
    "step": lambda lib, opt: lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5),
    "cosine": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=0.001),
    "cosine_t1": lambda lib, opt: lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=1),
}


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_sequences_match_torch(name):
    (seq_t, sched_t, opt_t), (seq_o, sched_o, opt_o) = [_lr_run(lib, SCHEDULERS[name]) for lib in (tl, torch)]
    assert seq_t == seq_o  # bit for bit: the same float operations in the same order
    assert len(set(map(tuple, seq_t))) >= 2
    assert sched_t.state_dict() == sched_o.state_dict()
    assert [g["initial_lr"] for g in opt_t.param_groups] == [0.1, 0.03]
    assert sched_t.last_epoch == 20
    # a fresh scheduler loaded from the state dict continues the same sequence
    conts = []
    for sched, lib in ((sched_t, tl), (sched_o, torch)):
        again = SCHEDULERS[name](lib, sched.optimizer)
        again.load_state_dict(sched.state_dict())
        for _ in range(5):
            sched.optimizer.step()
            again.step()
        conts.append(again.get_last_lr())
    assert conts[0] == conts[1]


@pytest.mark.parametrize("name", ["step", "cosine"])
def test_scheduler_closed_form_and_resume_match_torch(name):
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        opt = lib.optim.SGD(ps, lr=0.2)
        sched = SCHEDULERS[name](lib, opt)
        vals = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for epoch in (4, 9, 2, 13):
                opt.step()
                sched.step(epoch)  # deprecated: the closed form
                vals.append(sched.get_last_lr())
        resumed = (lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5, last_epoch=4) if name == "step" else
                   lib.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=6, eta_min=0.001, last_epoch=4))
        for _ in range(4):
            opt.step()
            resumed.step()
            vals.append(resumed.get_last_lr())
        outs.append((vals, sorted({str(x.message) for x in w})))
    assert outs[0] == outs[1]
    assert len(outs[0][1]) == 1 and "epoch parameter" in outs[0][1][0]


def test_scheduler_warnings_match_torch():
    outs = []
    for lib in (tl, torch):
        opt = lib.optim.SGD(_params(lib), lr=0.1)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sched.step()  # before any optimizer.step(): torch warns
            sched.get_lr()  # outside step(): torch warns
            opt2 = lib.optim.SGD(_params(lib), lr=0.1)
            sched2 = lib.optim.lr_scheduler.CosineAnnealingLR(opt2, T_max=4)
            opt2.step()
            sched2.step()  # correct order: no warning
        outs.append([(x.category.__name__, str(x.message)) for x in w])
    assert outs[0] == outs[1] and len(outs[0]) == 2


def test_scheduler_with_tensor_lr():
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        opt = lib.optim.SGD(ps, lr=lib.tensor(0.1))
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        hist = []
        for _ in range(4):
            hist += _train(lib, opt, ps, 1)
            sched.step()
        assert isinstance(opt.param_groups[0]["lr"], lib.Tensor)
        outs.append((hist, [float(x) for x in sched.get_last_lr()]))
    assert outs[0][1] == pytest.approx(outs[1][1], rel=1e-7)
    for a, b in zip(outs[0][0], outs[1][0]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)


def test_optimizer_pickles_and_deepcopies():
    opt = tl.optim.Adam(_params(tl), lr=0.05)
    _train(tl, opt, opt.param_groups[0]["params"], 2)
    clone = copy.deepcopy(opt)
    assert_state_dict_same(clone.state_dict(), opt.state_dict())
    assert clone.state_dict()["state"][0]["exp_avg"] is not opt.state_dict()["state"][0]["exp_avg"]
