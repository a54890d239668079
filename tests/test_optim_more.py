"""torchlike.optim's other optimizers, schedulers and swa_utils against torch's: the same parameters and gradients
give the same parameters, state, state_dict and version counters after every step, over two parameter groups;
schedulers give bit-equal learning-rate sequences and equal state dicts.

Misuse covered (torch's exception type and message): every constructor's range checks (lr, eps, betas, rho,
alpha, momentum, weight_decay, lr_decay, initial_accumulator_value, momentum_decay), fused with foreach, LBFGS with
two groups or an unknown line search, SparseAdam with complex parameters or dense gradients, scheduler arguments
(lambda counts, factors, T_0/T_mult, plateau mode/factor/min_lr count, cyclic mode, optimizers without momentum,
OneCycleLR's step count and stepping past its end, SequentialLR's milestones, ReduceLROnPlateau in a chain),
EMA decay out of range, AveragedModel with both averaging functions, SWALR's strategy/epochs/lr count; warnings:
scheduler.step() before optimizer.step(), get_lr() outside step(), step(epoch) deprecation."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from test_optim import _assert_runs_same, _error, _np, _params, _run, _train, assert_state_dict_same


def _two_groups(name, kw, second):
    """``name`` over two groups: W1 and B1 with ``kw``, W2 with ``kw`` updated by ``second``."""
    return lambda lib, ps: getattr(lib.optim, name)([{"params": ps[:2]}, {"params": ps[2:], **second}], **kw)


CONFIGS = [
    ("RMSprop", dict(lr=0.01), dict(lr=0.02)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True), dict(alpha=0.9, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01, weight_decay=0.1, maximize=True, eps=1e-3), dict(momentum=0.5)),
    ("Adagrad", dict(lr=0.1), dict(lr=0.05)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.5, eps=1e-6),
     dict(maximize=True)),
    ("Adadelta", dict(), dict(lr=0.5)),
    ("Adadelta", dict(lr=0.9, rho=0.8, eps=1e-4, weight_decay=0.1), dict(maximize=True)),
    ("Adamax", dict(lr=0.05), dict(betas=(0.8, 0.99))),
    ("Adamax", dict(lr=0.05, weight_decay=0.1, eps=1e-3), dict(maximize=True)),
    ("NAdam", dict(lr=0.05), dict(momentum_decay=0.01)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1), dict(decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9)), dict(lr=0.02)),
    ("RAdam", dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1), dict(decoupled_weight_decay=True, maximize=True)),
]


def _cid(v):
    return v if isinstance(v, str) else ",".join(f"{k}={x}" for k, x in v.items()) or "-"


@pytest.mark.parametrize("name,kw,second", CONFIGS, ids=_cid)
def test_optimizer_matches_torch_step_for_step(name, kw, second):
    _assert_runs_same(_run(_two_groups(name, kw, second), steps=7))


NAMES = ["RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam"]
FULL = {"RMSprop": dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1),
        "Adagrad": dict(lr=0.1, lr_decay=0.1, weight_decay=0.1, initial_accumulator_value=0.1),
        "Adadelta": dict(lr=0.9, weight_decay=0.1),
        "Adamax": dict(lr=0.05, weight_decay=0.1),
        "NAdam": dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
        "RAdam": dict(lr=0.05, betas=(0.9, 0.9), weight_decay=0.1)}


def check_float32_and_a_parameter_without_grad(name, kw):
    """``name(**kw)`` on float32 parameters, one never getting a gradient, matches torch; returns the runs."""
    runs = _run(lambda lib, ps: getattr(lib.optim, name)(ps, **kw), steps=7, dtype=np.float32, extra=True)
    _assert_runs_same(runs, rtol=1e-5, atol=1e-6)
    (tps, topt, _), (ops, oopt, _) = runs
    assert sorted(topt.state_dict()["state"]) == sorted(oopt.state_dict()["state"])
    assert np.array_equal(_np(tps[3]), np.ones(2)) and tps[3]._version == ops[3]._version == 0
    return runs


def check_complex_parameters(name, kw):
    """``name(**kw)`` on a complex parameter, gradients set by hand, matches torch."""
    rng = np.random.default_rng(1)
    init = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3))
    grads = [rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)) for _ in range(7)]
    results = []
    for lib in (tl, torch):
        p = lib.tensor(init, requires_grad=True)
        opt = getattr(lib.optim, name)([p], **kw)
        for g in grads:
            p.grad = lib.tensor(g)
            opt.step()
        results.append((_np(p), opt.state_dict(), p._version))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12, atol=1e-14)
    assert_state_dict_same(results[0][1], results[1][1])
    assert results[0][2] == results[1][2]


def check_state_dict_round_trip(name, kw):
    """A state dict of ``name(**kw)`` over two groups: loaded into a fresh optimizer and into itself, continued."""
    results = []
    for lib in (tl, torch):
        cls = getattr(lib.optim, name)
        ps = _params(lib)
        opt = cls([{"params": ps[:2]}, {"params": ps[2:], "lr": 0.01}], **kw)
        _train(lib, opt, ps, 3)
        sd = opt.state_dict()
        fresh = cls([{"params": ps[:2]}, {"params": ps[2:]}], lr=0.5)
        fresh.load_state_dict(sd)
        opt.load_state_dict(opt.state_dict())
        hist = _train(lib, fresh, ps, 3)
        results.append((sd, fresh.state_dict(), opt.state_dict(), hist))
    for a, b in zip(results[0][:3], results[1][:3]):
        assert_state_dict_same(a, b)
    _assert_histories_close(results[0][3], results[1][3])


def check_torch_state_dict_loads(name, kw, steps=2):
    """torch's ``name(**kw)`` state dict, converted through NumPy, loads into torchlike's and continues identically
    for ``steps``; returns torchlike's optimizer and parameters."""
    tps, ops = _params(tl), _params(torch)
    topt, oopt = getattr(tl.optim, name)(tps, **kw), getattr(torch.optim, name)(ops, **kw)
    _train(torch, oopt, ops, 3)
    sd = oopt.state_dict()
    converted = {k: {n: tl.tensor(v.numpy()) for n, v in s.items()} for k, s in sd["state"].items()}
    topt.load_state_dict({"state": converted, "param_groups": sd["param_groups"]})
    oopt.load_state_dict(sd)
    assert_state_dict_same(topt.state_dict(), oopt.state_dict())
    with tl.no_grad():
        for p, q in zip(tps, ops):
            p.copy_(tl.tensor(q.detach().numpy()))
    _assert_histories_close(_train(tl, topt, tps, steps), _train(torch, oopt, ops, steps))
    return topt, tps


@pytest.mark.parametrize("name", NAMES)
def test_float32_and_a_parameter_without_grad(name):
    check_float32_and_a_parameter_without_grad(name, FULL[name])  # (Adagrad: state for all four)


@pytest.mark.parametrize("name", NAMES)
def test_complex_parameters_match_torch(name):
    check_complex_parameters(name, FULL[name])


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_and_loading_into_a_fresh_optimizer(name):
    check_state_dict_round_trip(name, FULL[name])


def _assert_histories_close(a, b):
    for x, y in zip(a, b):
        for u, v in zip(x, y):
            np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-14)


def test_torch_state_dict_loads_into_torchlike():
    """A torch NAdam's state_dict, converted through NumPy, continues identically (torch casts ``mu_product``
    to the parameters' dtype on loading, so both optimizers load it)."""
    topt, tps = check_torch_state_dict_loads("NAdam", dict(lr=0.05))
    assert topt.state[tps[0]]["mu_product"].dtype == tl.float64


@pytest.mark.eager_only("counts the optimizer's jitted traces; lazy mode records the update into "
                        "the step's program (tests/test_lazy.py: a loop compiles once)")
def test_changing_lr_does_not_recompile():
    from torchlike.optim.optimizer import _traces
    ps = [tl.tensor(np.linspace(-1.0, 1.0, 7), requires_grad=True)]
    opt = tl.optim.RMSprop(ps, lr=0.1, momentum=0.5)
    before = _traces["rmsprop"]
    for i in range(3):
        ps[0].grad = tl.ones_like(ps[0]) * (i + 1)
        opt.param_groups[0]["lr"] = 0.1 / (i + 1)
        opt.step()
    assert _traces["rmsprop"] - before == 1


def _p(lib):
    return lib.tensor([1.0, 2.0], requires_grad=True)


INVALID = {
    "rmsprop_lr": lambda lib: lib.optim.RMSprop([_p(lib)], lr=-0.1),
    "rmsprop_eps": lambda lib: lib.optim.RMSprop([_p(lib)], eps=-1.0),
    "rmsprop_momentum": lambda lib: lib.optim.RMSprop([_p(lib)], momentum=-1.0),
    "rmsprop_wd": lambda lib: lib.optim.RMSprop([_p(lib)], weight_decay=-1.0),
    "rmsprop_alpha": lambda lib: lib.optim.RMSprop([_p(lib)], alpha=-1.0),
    "rmsprop_tensor_lr": lambda lib: lib.optim.RMSprop([_p(lib)], lr=lib.tensor([0.1, 0.2])),
    "adagrad_lr": lambda lib: lib.optim.Adagrad([_p(lib)], lr=-0.1),
    "adagrad_lr_decay": lambda lib: lib.optim.Adagrad([_p(lib)], lr_decay=-0.1),
    "adagrad_wd": lambda lib: lib.optim.Adagrad([_p(lib)], weight_decay=-0.1),
    "adagrad_init": lambda lib: lib.optim.Adagrad([_p(lib)], initial_accumulator_value=-0.1),
    "adagrad_eps": lambda lib: lib.optim.Adagrad([_p(lib)], eps=-0.1),
    "adagrad_fused_foreach": lambda lib: lib.optim.Adagrad([_p(lib)], fused=True, foreach=True),
    "adadelta_lr": lambda lib: lib.optim.Adadelta([_p(lib)], lr=-0.1),
    "adadelta_rho": lambda lib: lib.optim.Adadelta([_p(lib)], rho=1.5),
    "adadelta_eps": lambda lib: lib.optim.Adadelta([_p(lib)], eps=-0.1),
    "adadelta_wd": lambda lib: lib.optim.Adadelta([_p(lib)], weight_decay=-0.1),
    "adamax_lr": lambda lib: lib.optim.Adamax([_p(lib)], lr=-0.1),
    "adamax_beta0": lambda lib: lib.optim.Adamax([_p(lib)], betas=(1.0, 0.9)),
    "adamax_beta1": lambda lib: lib.optim.Adamax([_p(lib)], betas=(0.9, -0.1)),
    "adamax_eps": lambda lib: lib.optim.Adamax([_p(lib)], eps=-0.1),
    "nadam_wd": lambda lib: lib.optim.NAdam([_p(lib)], weight_decay=-0.1),
    "nadam_momentum_decay": lambda lib: lib.optim.NAdam([_p(lib)], momentum_decay=-0.1),
    "nadam_beta1": lambda lib: lib.optim.NAdam([_p(lib)], betas=(0.9, 1.0)),
    "radam_lr": lambda lib: lib.optim.RAdam([_p(lib)], lr=-0.1),
    "radam_eps": lambda lib: lib.optim.RAdam([_p(lib)], eps=-0.1),
    "radam_beta0": lambda lib: lib.optim.RAdam([_p(lib)], betas=(-0.1, 0.9)),
    "radam_empty": lambda lib: lib.optim.RAdam([]),
    "sparse_adam_lr": lambda lib: lib.optim.SparseAdam([_p(lib)], lr=0.0),
    "sparse_adam_eps": lambda lib: lib.optim.SparseAdam([_p(lib)], eps=0.0),
    "sparse_adam_beta1": lambda lib: lib.optim.SparseAdam([_p(lib)], betas=(0.9, 1.0)),
    "sparse_adam_complex": lambda lib: lib.optim.SparseAdam([_p(lib), lib.tensor([1j], requires_grad=True)]),
    "sparse_adam_dense_grad": lambda lib: (lambda p: (setattr(p, "grad", lib.ones_like(p)),
                                                      lib.optim.SparseAdam([p]).step()))(_p(lib)),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_constructor_errors_match_torch(case):
    expected = _error(lambda: INVALID[case](torch))
    assert expected is not None
    assert _error(lambda: INVALID[case](tl)) == expected


# ----- LBFGS --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(), dict(line_search_fn="strong_wolfe"),
                                dict(lr=0.5, max_iter=4, history_size=3, tolerance_change=1e-12)],
                         ids=["plain", "strong_wolfe", "short_history"])
def test_lbfgs_matches_torch(kw):
    from test_optim import _loss
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        opt = lib.optim.LBFGS(ps, **kw)
        calls = []

        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps)
            loss.backward()
            calls.append(loss.item())
            return loss
        losses = [opt.step(closure).item() for _ in range(3)]
        state = opt.state[ps[0]]
        outs.append((losses, calls, [_np(p) for p in ps], state["func_evals"], state["n_iter"], len(state["old_dirs"]),
                     _np(state["d"]), float(state["t"])))
    (lt, ct, pt, *rt), (lo, co, po, *ro) = outs
    np.testing.assert_allclose(lt, lo, rtol=1e-10)
    assert len(ct) == len(co)
    np.testing.assert_allclose(ct, co, rtol=1e-8)
    for a, b in zip(pt + rt[3:4], po + ro[3:4]):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)
    assert rt[:3] == ro[:3]
    assert rt[4] == pytest.approx(ro[4], rel=1e-8)


def test_lbfgs_errors_match_torch():
    for make in (lambda lib: lib.optim.LBFGS([_p(lib)], lr=-1.0),
                 lambda lib: lib.optim.LBFGS([{"params": [_p(lib)]}, {"params": [_p(lib)]}]),
                 lambda lib: (lambda p, o: (setattr(p, "grad", lib.ones_like(p)), o.step(lambda: p.sum())))(
                     *(lambda p: (p, lib.optim.LBFGS([p], line_search_fn="wolfe")))(_p(lib)))):
        expected = _error(lambda: make(torch))
        assert expected is not None and _error(lambda: make(tl)) == expected


# ----- learning-rate schedulers -------------------------------------------------------------------------------
def _s(lib):
    return lib.optim.lr_scheduler


SCHEDULERS = {
    "lambda": lambda lib, opt: _s(lib).LambdaLR(opt, lambda e: 0.95 ** e),
    "lambda_per_group": lambda lib, opt: _s(lib).LambdaLR(opt, [lambda e: 1 / (e + 1), lambda e: 0.9 ** e]),
    "multiplicative": lambda lib, opt: _s(lib).MultiplicativeLR(opt, lambda e: 0.9),
    "multistep": lambda lib, opt: _s(lib).MultiStepLR(opt, milestones=[3, 7, 7, 12], gamma=0.3),
    "constant": lambda lib, opt: _s(lib).ConstantLR(opt, factor=0.25, total_iters=4),
    "linear": lambda lib, opt: _s(lib).LinearLR(opt, start_factor=0.2, end_factor=0.9, total_iters=7),
    "exponential": lambda lib, opt: _s(lib).ExponentialLR(opt, gamma=0.87),
    "polynomial": lambda lib, opt: _s(lib).PolynomialLR(opt, total_iters=9, power=1.7),
    "warm_restarts": lambda lib, opt: _s(lib).CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.001),
    "cyclic": lambda lib, opt: _s(lib).CyclicLR(opt, base_lr=0.01, max_lr=[0.1, 0.2], step_size_up=3,
                                                step_size_down=4),
    "cyclic_triangular2": lambda lib, opt: _s(lib).CyclicLR(opt, 0.01, 0.1, step_size_up=2, mode="triangular2",
                                                            cycle_momentum=False),
    "cyclic_exp_range": lambda lib, opt: _s(lib).CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="exp_range",
                                                          gamma=0.9),
    "one_cycle": lambda lib, opt: _s(lib).OneCycleLR(opt, max_lr=0.5, total_steps=25),
    "one_cycle_linear": lambda lib, opt: _s(lib).OneCycleLR(opt, max_lr=[0.5, 0.2], epochs=5, steps_per_epoch=5,
                                                            anneal_strategy="linear", three_phase=True),
    "sequential": lambda lib, opt: _s(lib).SequentialLR(opt, [_s(lib).LinearLR(opt, 0.1, total_iters=4),
                                                              _s(lib).ExponentialLR(opt, 0.8)], milestones=[5]),
    "chained": lambda lib, opt: _s(lib).ChainedScheduler([_s(lib).ConstantLR(opt, 0.5, total_iters=3),
                                                          _s(lib).ExponentialLR(opt, 0.9)]),
}


def _sched_run(lib, make, epochs=20):
    from test_optim import _lr_run
    seq, sched, opt = _lr_run(lib, make, epochs)
    return seq, sched, opt, [g.get("momentum") for g in opt.param_groups]


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_sequences_and_state_dicts_match_torch(name):
    (seq_t, sched_t, opt_t, mom_t), (seq_o, sched_o, opt_o, mom_o) = [_sched_run(lib, SCHEDULERS[name])
                                                                      for lib in (tl, torch)]
    assert seq_t == seq_o  # bit for bit
    assert len(set(map(tuple, seq_t))) >= 2
    assert mom_t == mom_o
    assert sched_t.state_dict() == sched_o.state_dict()
    assert _continued(tl, sched_t, name) == _continued(torch, sched_o, name)


def _continued(lib, sched, name):
    """A fresh scheduler loaded from ``sched``'s state dict: its next five learning rates and momenta."""
    again = SCHEDULERS[name](lib, sched.optimizer)
    again.load_state_dict(sched.state_dict())
    out = []
    for _ in range(5):
        sched.optimizer.step()
        again.step()
        out.append((again.get_last_lr(), [g.get("momentum") for g in sched.optimizer.param_groups]))
    return out


def test_reduce_lr_on_plateau_matches_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.8, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.7, 0.71, 0.72, 0.73]
    outs = []
    for lib in (tl, torch):
        opt = lib.optim.SGD([{"params": [_p(lib)]}, {"params": [_p(lib)], "lr": 0.05}], lr=0.1)
        scheds = [_s(lib).ReduceLROnPlateau(opt, patience=1, factor=0.5, cooldown=1, min_lr=[0.01, 0.02]),
                  _s(lib).ReduceLROnPlateau(opt, mode="max", threshold_mode="abs", threshold=0.01, patience=0)]
        seq = []
        for m in metrics:
            for s in scheds:
                s.step(m)
                seq.append(s.get_last_lr())
        outs.append((seq, [s.state_dict() for s in scheds]))
    assert outs[0] == outs[1]


SCHED_INVALID = {
    "lambda_count": lambda lib: _s(lib).LambdaLR(lib.optim.SGD([_p(lib)]), [lambda e: 1, lambda e: 2]),
    "multiplicative_not_callable": lambda lib: _s(lib).MultiplicativeLR(lib.optim.SGD([_p(lib)]), [3]),
    "constant_factor": lambda lib: _s(lib).ConstantLR(lib.optim.SGD([_p(lib)]), factor=1.5),
    "linear_start": lambda lib: _s(lib).LinearLR(lib.optim.SGD([_p(lib)]), start_factor=0),
    "linear_end": lambda lib: _s(lib).LinearLR(lib.optim.SGD([_p(lib)]), end_factor=2),
    "warm_t0": lambda lib: _s(lib).CosineAnnealingWarmRestarts(lib.optim.SGD([_p(lib)]), T_0=0),
    "warm_tmult": lambda lib: _s(lib).CosineAnnealingWarmRestarts(lib.optim.SGD([_p(lib)]), T_0=2, T_mult=0),
    "plateau_factor": lambda lib: _s(lib).ReduceLROnPlateau(lib.optim.SGD([_p(lib)]), factor=1.0),
    "plateau_mode": lambda lib: _s(lib).ReduceLROnPlateau(lib.optim.SGD([_p(lib)]), mode="up"),
    "plateau_min_lrs": lambda lib: _s(lib).ReduceLROnPlateau(lib.optim.SGD([_p(lib)]), min_lr=[0.1, 0.2]),
    "cyclic_mode": lambda lib: _s(lib).CyclicLR(lib.optim.SGD([_p(lib)], momentum=0.9), 0.1, 1.0, mode="sine"),
    "cyclic_no_momentum": lambda lib: _s(lib).CyclicLR(lib.optim.Adagrad([_p(lib)]), 0.1, 1.0),
    "one_cycle_no_steps": lambda lib: _s(lib).OneCycleLR(lib.optim.SGD([_p(lib)]), max_lr=0.1),
    "one_cycle_pct": lambda lib: _s(lib).OneCycleLR(lib.optim.SGD([_p(lib)]), 0.1, total_steps=5, pct_start=2.0),
    "one_cycle_past_end": lambda lib: (lambda s: [s.step() for _ in range(4)])(
        _s(lib).OneCycleLR(lib.optim.SGD([_p(lib)], momentum=0.9), 0.1, total_steps=3)),
    "sequential_milestones": lambda lib: (lambda o: _s(lib).SequentialLR(o, [_s(lib).ExponentialLR(o, 0.9)], [3]))(
        lib.optim.SGD([_p(lib)])),
    "sequential_empty": lambda lib: _s(lib).SequentialLR(lib.optim.SGD([_p(lib)]), [], []),
    "chained_plateau": lambda lib: _s(lib).ChainedScheduler([_s(lib).ReduceLROnPlateau(lib.optim.SGD([_p(lib)]))]),
}


@pytest.mark.parametrize("case", list(SCHED_INVALID))
def test_scheduler_errors_match_torch(case):
    expected = _error(lambda: SCHED_INVALID[case](torch))
    assert expected is not None
    assert _error(lambda: SCHED_INVALID[case](tl)) == expected


@pytest.mark.parametrize("name", ["multistep", "constant", "linear", "exponential", "polynomial", "warm_restarts"])
def test_scheduler_step_with_epoch_matches_torch(name):
    """``step(epoch)``: the closed form where torch has one (warm restarts: its own epoch arithmetic), with
    torch's deprecation warning."""
    outs = []
    for lib in (tl, torch):
        opt = lib.optim.SGD([_p(lib)], lr=0.2)
        sched = SCHEDULERS[name](lib, opt)
        vals = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for epoch in (4, 9, 2, 13, 5.5) if name == "warm_restarts" else (4, 9, 2, 13):
                opt.step()
                sched.step(epoch)
                vals.append(sched.get_last_lr())
        outs.append((vals, sorted({str(x.message)[:40] for x in w}), sched.state_dict()))
    assert outs[0] == outs[1]


# ----- swa_utils ----------------------------------------------------------------------------------------------
def _net(lib, rng):
    """The same Linear-BatchNorm-Linear net in both libraries, from ``rng``'s weights."""
    net = lib.nn.Sequential(lib.nn.Linear(4, 3), lib.nn.BatchNorm1d(3), lib.nn.Linear(3, 2)).double()
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape))))
    return net


def _state(net):
    return {k: _np(v) for k, v in net.state_dict().items()}


AVERAGERS = {
    "swa": lambda lib: {},
    "ema_multi": lambda lib: dict(multi_avg_fn=lib.optim.swa_utils.get_ema_multi_avg_fn(0.9)),
    "swa_multi": lambda lib: dict(multi_avg_fn=lib.optim.swa_utils.get_swa_multi_avg_fn()),
    "ema_fn_buffers": lambda lib: dict(avg_fn=lib.optim.swa_utils.get_ema_avg_fn(0.8), use_buffers=True),
}


@pytest.mark.parametrize("kind", list(AVERAGERS))
def test_averaged_model_matches_torch(kind):
    outs = []
    for lib in (tl, torch):
        rng = np.random.default_rng(3)
        net = _net(lib, rng)
        avg = lib.optim.swa_utils.AveragedModel(net, **AVERAGERS[kind](lib))
        x = lib.tensor(rng.standard_normal((5, 4)))
        for _ in range(4):
            with lib.no_grad():
                for p in net.parameters():
                    p.add_(lib.tensor(rng.standard_normal(tuple(p.shape))))
            net(x)  # training mode: batch norm's running statistics move
            avg.update_parameters(net)
        outs.append((_state(avg), _np(avg(x))))
    assert list(outs[0][0]) == list(outs[1][0])
    for k in outs[1][0]:
        np.testing.assert_allclose(outs[0][0][k], outs[1][0][k], rtol=1e-12, atol=1e-14, err_msg=k)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-14)


def test_update_bn_matches_torch():
    outs = []
    for lib in (tl, torch):
        rng = np.random.default_rng(4)
        net = _net(lib, rng).eval()
        loader = [(lib.tensor(rng.standard_normal((5, 4))), 0) for _ in range(3)]
        lib.optim.swa_utils.update_bn(loader, net)
        outs.append((_state(net), net.training, net[1].momentum))
    assert outs[0][1:] == outs[1][1:]
    for k in outs[1][0]:
        np.testing.assert_allclose(outs[0][0][k], outs[1][0][k], rtol=1e-12, atol=1e-14, err_msg=k)


@pytest.mark.parametrize("kw", [dict(swa_lr=0.05, anneal_epochs=5), dict(swa_lr=[0.01, 0.2], anneal_epochs=5,
                                                                      anneal_strategy="linear"),
                                dict(swa_lr=0.05, anneal_epochs=0)], ids=["cos", "linear", "no_anneal"])
def test_swalr_matches_torch(kw):
    from test_optim import _lr_run
    runs = [_lr_run(lib, lambda lib, opt: lib.optim.swa_utils.SWALR(opt, **kw), 15) for lib in (tl, torch)]
    (seq_t, sched_t, _), (seq_o, sched_o, _) = runs
    assert seq_t == seq_o
    assert len(set(map(tuple, seq_t))) == (1 if kw.get("anneal_epochs") == 0 else 6)  # 0: swa_lr at once
    assert sched_t.state_dict() == sched_o.state_dict()


SWA_INVALID = {
    "ema_decay": lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(1.5),
    "ema_fn_decay": lambda lib: lib.optim.swa_utils.get_ema_avg_fn(-0.1),
    "both_fns": lambda lib: lib.optim.swa_utils.AveragedModel(lib.nn.Linear(2, 2), avg_fn=lambda *a: 0,
                                                               multi_avg_fn=lambda *a: 0),
    "swalr_strategy": lambda lib: lib.optim.swa_utils.SWALR(lib.optim.SGD([_p(lib)]), 0.1, anneal_strategy="exp"),
    "swalr_epochs": lambda lib: lib.optim.swa_utils.SWALR(lib.optim.SGD([_p(lib)]), 0.1, anneal_epochs=-1),
    "swalr_lrs": lambda lib: lib.optim.swa_utils.SWALR(lib.optim.SGD([_p(lib)]), [0.1, 0.2]),
}


@pytest.mark.parametrize("case", list(SWA_INVALID))
def test_swa_errors_match_torch(case):
    expected = _error(lambda: SWA_INVALID[case](torch))
    assert expected is not None
    assert _error(lambda: SWA_INVALID[case](tl)) == expected


def test_scheduler_warnings_match_torch():
    outs = []
    for lib in (tl, torch):
        opt = lib.optim.SGD([_p(lib)], lr=0.1)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sched = _s(lib).MultiStepLR(opt, [2])
            sched.step()  # before optimizer.step()
            sched.get_lr()  # outside step()
            plateau = _s(lib).ReduceLROnPlateau(opt)
            plateau.step(1.0, epoch=3)  # deprecated epoch
        outs.append(([(x.category.__name__, str(x.message)) for x in w], plateau.last_epoch))
    assert outs[0] == outs[1] and len(outs[0][0]) == 3


def test_cyclic_and_one_cycle_drive_adams_beta1():
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        opt = lib.optim.Adam([{"params": ps[:2]}, {"params": ps[2:]}], lr=0.01)
        scheds = [_s(lib).CyclicLR(opt, 0.01, 0.1, step_size_up=2, base_momentum=0.8, max_momentum=0.95)]
        seq = []
        for _ in range(6):
            _train(lib, opt, ps, 1)
            scheds[0].step()
            seq.append([(g["lr"], g["betas"]) for g in opt.param_groups])
        opt2 = lib.optim.NAdam(ps, lr=0.01)
        one = _s(lib).OneCycleLR(opt2, max_lr=0.1, total_steps=8)
        for _ in range(6):
            opt2.step()
            one.step()
            seq.append([(g["lr"], g["betas"]) for g in opt2.param_groups])
        outs.append((seq, [_np(p) for p in ps]))
    assert outs[0][0] == outs[1][0]
    _assert_histories_close([outs[0][1]], [outs[1][1]])


def test_tensor_lr_and_lbfgs_state_dict_round_trip():
    """RMSprop with a Tensor lr; LBFGS's state (history lists) saved, loaded into a fresh optimizer, continued."""
    from test_optim import _loss
    outs = []
    for lib in (tl, torch):
        ps = _params(lib)
        hist = _train(lib, lib.optim.RMSprop(ps, lr=lib.tensor(0.01), momentum=0.5), ps, 3)
        opt = lib.optim.LBFGS(ps, max_iter=3, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = _loss(lib, ps)
            loss.backward()
            return loss
        opt.step(closure)
        sd = opt.state_dict()
        opt = lib.optim.LBFGS(ps, max_iter=3, line_search_fn="strong_wolfe")
        opt.load_state_dict(sd)
        opt.step(closure)
        st = opt.state_dict()["state"][0]
        outs.append((hist, [_np(p) for p in ps], list(st), st["n_iter"], st["func_evals"], len(st["old_dirs"])))
    for a, b in zip(outs[0][0], outs[1][0]):
        for x, y in zip(a, b):
            np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-7)  # a float32 lr tensor
    for x, y in zip(outs[0][1], outs[1][1]):
        np.testing.assert_allclose(x, y, rtol=1e-8, atol=1e-10)
    assert outs[0][2:] == outs[1][2:]


def test_lbfgs_complex_parameters_match_torch():
    """A complex parameter is optimised as its real pairs (torch's view_as_real), next to a real one."""
    rng = np.random.default_rng(5)
    z0, w0 = rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)), rng.standard_normal(3)
    a0 = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    outs = []
    for lib in (tl, torch):
        z, w, a = lib.tensor(z0, requires_grad=True), lib.tensor(w0, requires_grad=True), lib.tensor(a0)
        opt = lib.optim.LBFGS([z, w], max_iter=5, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            r = z @ a - 1.0 + w
            loss = (r.real ** 2 + r.imag ** 2).sum() + (w ** 2).sum()
            loss.backward()
            return loss
        for _ in range(2):
            opt.step(closure)
        outs.append((_np(z), _np(w), opt.state[z]["func_evals"], _np(opt.state[z]["prev_flat_grad"])))
    for x, y in zip(outs[0], outs[1]):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)
