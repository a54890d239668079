"""Steady state compiles nothing: Python ints and slices given to indexing and views are traced, not
compile-time constants, so a loop over new indices reuses the programs of its first iteration."""
import logging
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

import torch

import torchlike as tl

_traces = [0]
jax.monitoring.register_event_duration_secs_listener(
    lambda event, duration, **kw: _traces.__setitem__(0, _traces[0] + (event in _BUILT)))
_BUILT = ("/jax/core/compile/jaxpr_trace_duration", tl._xcache.LOAD_EVENT)  # traced, or loaded by torchlike's cache


def _traced_programs(fn, *args):
    """How many JAX programs ``fn(*args)`` built (traced, then compiled or loaded; or loaded from torchlike's
    executable cache)."""
    before = _traces[0]
    fn(*args)
    return _traces[0] - before


def _reads(x, indices):
    total = 0
    for i in indices:
        total = total + x[i].sum() + x[i:i + 3].sum() + x[-i - 1, 1:].sum() + x.narrow(0, i, 2).sum() \
            + x.select(1, i % 4).sum() + x[i, ::2].sum()
    total.backward()


def _writes(y, indices):
    for i in indices:
        y[i] = 1.0
        y[i, 1:3] = y[i + 1, :2] * 2
        y[:, i % 4] = 0.5


def test_indexing_with_new_ints_compiles_nothing():
    x = tl.tensor(np.random.default_rng(0).standard_normal((23, 4)), requires_grad=True)  # shapes no other test uses
    assert _traced_programs(_reads, x, range(2)) > 0  # first iteration: traces (the counter sees it)
    assert _traced_programs(_reads, x, range(2, 12)) == 0


def test_writes_at_new_ints_compile_nothing():
    y = tl.zeros(23, 4, dtype=tl.float64)
    assert _traced_programs(_writes, y, range(2)) > 0
    before = y.clone()
    assert _traced_programs(_writes, y, range(2, 12)) == 0
    expected = before.numpy().copy()
    for i in range(2, 12):
        expected[i] = 1.0
        expected[i, 1:3] = expected[i + 1, :2] * 2
        expected[:, i % 4] = 0.5
    np.testing.assert_array_equal(y.numpy(), expected)


def _relu_grad(x_np):
    """The two-layer-net tutorial's ``grad_input[input < 0] = 0``."""
    x = tl.tensor(x_np)
    g = x.clone()
    g[x < 0] = 0
    return g


def test_mask_assignment_with_new_masks_compiles_nothing():
    rng = np.random.default_rng(1)
    _relu_grad(rng.standard_normal((29, 5)))
    for _ in range(5):  # masks with other counts of True values
        x = rng.standard_normal((29, 5))
        before = _traces[0]
        g = _relu_grad(x)
        assert _traces[0] == before
        np.testing.assert_array_equal(g.numpy(), np.where(x < 0, 0.0, x))


def _epoch(model, opt, data, target, order):
    for start in order:  # new batches at new indices every step
        x, y = data[start:start + 4], target[start:start + 4]
        hidden = model[0](x)
        hidden[hidden < -1.0] = -1.0  # a new mask every step
        loss = tl.nn.functional.mse_loss(model[2](model[1](hidden)), y)
        opt.zero_grad()
        loss.backward()
        opt.step()


def test_second_epoch_of_a_training_loop_compiles_nothing():
    tl.manual_seed(0)
    model = tl.nn.Sequential(tl.nn.Linear(7, 13), tl.nn.Tanh(), tl.nn.Linear(13, 3))
    rng = np.random.default_rng(2)
    data = tl.tensor(rng.standard_normal((40, 7)), dtype=tl.float32)
    target = tl.tensor(rng.standard_normal((40, 3)), dtype=tl.float32)
    for opt in (tl.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), tl.optim.Adam(model.parameters(), lr=1e-2)):
        _epoch(model, opt, data, target, [0, 8])
        before = _traces[0]
        _epoch(model, opt, data, target, rng.permutation(36)[:10].tolist())
        assert _traces[0] == before


def test_compile_logs_name_the_op(caplog):
    """``with jax.log_compiles():`` shows which op (and which pass) compiled, with its shapes."""
    x = tl.tensor(np.ones((31, 2)), requires_grad=True)
    with caplog.at_level(logging.WARNING), jax.log_compiles():
        x[3].sinh().sum().backward()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "SelectBackward0.forward" in logged and "SinhBackward0.backward" in logged


@pytest.mark.parametrize("env,expected", [({}, "{cache}/torchlike/jax"), ({"TORCHLIKE_COMPILATION_CACHE": "0"}, "None"),
                                          ({"TORCHLIKE_COMPILATION_CACHE": "{cache}/mine"}, "{cache}/mine")])
def test_persistent_compilation_cache_is_on_by_default(tmp_path, env, expected):
    code = "import jax, torchlike; print(jax.config.jax_compilation_cache_dir)"
    full = {**os.environ, "XDG_CACHE_HOME": str(tmp_path), **{k: v.format(cache=tmp_path) for k, v in env.items()}}
    out = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, check=True).stdout
    assert out.strip() == expected.format(cache=tmp_path)


@pytest.mark.parametrize("setting,frozen", [(None, True), ("0", False)])
@pytest.mark.parametrize("own", [False, True])
def test_objects_alive_at_import_are_frozen_out_of_the_collector(setting, frozen, own):
    """torchlike's import ends with gc.freeze() (the tape's objects trigger full collections, which would rescan
    everything alive since start-up) and collects the youngest generation every 20,000 new objects instead of 700,
    unless the program set its own threshold; TORCHLIKE_GC_FREEZE=0 turns both off."""
    code = ("import gc; gc.set_threshold(1234)\n" if own else "") + \
        "import gc, torchlike; print(gc.get_freeze_count(), gc.get_threshold()[0])"
    env = {k: v for k, v in os.environ.items() if k != "TORCHLIKE_GC_FREEZE"}
    if setting is not None:
        env["TORCHLIKE_GC_FREEZE"] = setting
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    count, threshold = map(int, out.split())
    assert (count > 10000) is frozen, out
    assert threshold == (1234 if own else 20000 if frozen else 700), out


def test_mask_reads_compile_a_bounded_number_of_times(caplog):
    """x[mask] and masked_select run a program padded to a power of two and cut on the host: masks of one shape
    with any counts of True values reuse a handful of programs; values and gradients are torch's."""
    rng = np.random.default_rng(3)

    def run(lib, a):
        x = lib.tensor(a, requires_grad=True)
        parts = [x[x > 0.3], x.masked_select(x > 1.0), x[:, x[0] > 0]]
        sum(p.sum() for p in parts).backward()
        return [p.detach().numpy() for p in parts] + [x.grad.numpy()]

    arrays = [rng.standard_normal((17, 6)) for _ in range(16)]
    with caplog.at_level(logging.WARNING), jax.log_compiles():
        for a in arrays:
            for ours, theirs in zip(run(tl, a), run(torch, a)):
                np.testing.assert_allclose(ours, theirs)
    traced = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Finished tracing")]
    programs = [m for m in traced if "IndexBackward0" in m or "MaskedSelectBackward0" in m]
    counts = {(int((a > 0.3).sum()), int((a > 1.0).sum())) for a in arrays}
    assert len(counts) >= 12  # the masks have many different counts of True values ...
    assert len(programs) <= 3 * 2 * 4  # ... yet 3 reads x (forward, backward) x at most 4 padded sizes compile


@pytest.mark.parametrize("make", [lambda ps: tl.optim.Adam(ps, lr=0.01), lambda ps: tl.optim.SGD(ps, lr=0.1, momentum=0.9)])
def test_optimizer_steps_after_the_first_compile_nothing(make):
    # optimizer state made with zeros_like(param) and the gradient's seed stay uncommitted, as JAX's own results:
    # a program called with committed and then uncommitted arrays compiles twice
    model = tl.nn.Sequential(tl.nn.Linear(7, 5), tl.nn.ReLU(), tl.nn.Linear(5, 3))
    opt = make(model.parameters())
    x = tl.tensor(np.ones((6, 7), np.float32))

    def step():
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    assert _traced_programs(step) > 0
    assert _traced_programs(step) == 0 and _traced_programs(step) == 0


def test_tensors_from_host_data_build_no_program():
    # jnp.asarray of a NumPy array builds a program per shape (lax.stage); device_put builds none
    for shape in ((3, 29), (29, 3, 2), (31,)):
        data = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
        assert _traced_programs(lambda: (tl.tensor(data), tl.from_numpy(data), tl.as_tensor(data), tl.zeros(shape),
                                         tl.ones(shape, dtype=tl.int64), tl.full(shape, 2.5), tl.empty(shape),
                                         tl.arange(shape[0]), tl.linspace(0, 1, shape[0]))) == 0


def test_random_draws_of_new_shapes_reuse_the_sampler():
    # jax.random's samplers take up to seconds to compile: they run at a power-of-two size, cut to shape
    tl.randn(17, 3), tl.rand(50), tl.randint(0, 5, (33,)), tl.nn.init.uniform_(tl.empty(40), -1.0, 2.0)
    for make in (lambda: tl.randn(5, 9), lambda: tl.rand(7, 7), lambda: tl.randint(2, 9, (6, 6)),
                 lambda: tl.nn.init.uniform_(tl.empty(3, 13), 0.5, 0.75)):
        assert _traced_programs(make) <= 1  # only the cut to the new shape
    x = tl.nn.init.uniform_(tl.empty(3, 13), 0.5, 0.75)
    assert x.shape == (3, 13) and 0.5 <= x.min().item() and x.max().item() < 0.75
    r = tl.randint(2, 9, (6, 6))
    assert r.dtype == tl.int64 and 2 <= r.min().item() and r.max().item() < 9


def test_add_and_sub_with_new_alphas_compile_nothing():
    # p.add_(g, alpha=-lr) with a learning rate that changes every step (a scheduler) reuses one program
    p, g = tl.ones(13, dtype=tl.float64), tl.full((13,), 2.0, dtype=tl.float64)
    q = tl.ones(13, dtype=tl.float64, requires_grad=True)
    with tl.no_grad():
        p.add_(g, alpha=-0.1)
        p.sub_(g, alpha=0.25)
    tl.add(q, g, alpha=1.5).sum().backward()
    tl.add(q, g, alpha=1.5).sum().backward()  # (the first accumulation into q.grad compiles its add)
    before = _traces[0]
    with tl.no_grad():
        for lr in (0.2, 0.3, 0.05):
            p.add_(g, alpha=-lr)
            p.sub_(g, alpha=lr / 2)
    for a in (2.5, -0.75):
        tl.add(q, g, alpha=a).sum().backward()
    assert _traces[0] == before
    np.testing.assert_allclose(p.numpy(), 1 - 0.1 * 2 - 0.25 * 2 - sum(1.5 * lr * 2 for lr in (0.2, 0.3, 0.05)))
    np.testing.assert_allclose(q.grad.numpy(), 4.0)


_NUMBERED = {  # f(module, x, v): an activation whose number v a schedule may change every step
    "threshold": lambda m, x, v: m.nn.functional.threshold(x, v, -v),
    "threshold_": lambda m, x, v: m.nn.functional.threshold(x * 1, v, -v, True),
    "softshrink": lambda m, x, v: m.nn.functional.softshrink(x, v),
    "hardshrink": lambda m, x, v: m.nn.functional.hardshrink(x, v),
    "smooth_l1_loss": lambda m, x, v: m.nn.functional.smooth_l1_loss(x, x.detach().flip(0), beta=v),
    "huber_loss": lambda m, x, v: m.nn.functional.huber_loss(x, x.detach().flip(0), reduction="sum", delta=v),
    "leaky_relu": lambda m, x, v: m.nn.functional.leaky_relu(x, v),
    "leaky_relu_": lambda m, x, v: m.nn.functional.leaky_relu(x * 1, v, True),
    "hardtanh": lambda m, x, v: m.nn.functional.hardtanh(x, -v, v * 2),
    "softplus": lambda m, x, v: m.nn.functional.softplus(x, 1 + v, 4 * v),
    "elu": lambda m, x, v: m.nn.functional.elu(x, v),
    "clamp": lambda m, x, v: x.clamp(-v, v),
    "clamp_min": lambda m, x, v: x.clamp_min(v),
    "clamp_max_": lambda m, x, v: (x * 1).clamp_max_(v),
}


@pytest.mark.parametrize("name", sorted(_NUMBERED))
def test_activations_with_new_numbers_compile_nothing(name):
    """Their numbers are traced (dynamic statics): a new value each step reuses the first step's programs, and
    the values and gradients stay torch's."""
    f = _NUMBERED[name]
    data = np.array([-1.5, -0.25, 0.0, 0.375, 2.0, -0.625, 1.25], np.float32)  # (a length no other test uses)

    def step(m, x, v):
        y = f(m, x, v)
        y.sum().backward()
        return y

    results = []
    for k, v in enumerate((0.5, 0.125, 0.75, 0.3)):
        x, xt = tl.tensor(data, requires_grad=True), torch.tensor(data, requires_grad=True)
        before = _traces[0]
        y = step(tl, x, v)
        if k >= 2:  # (the first two steps: the first compiles; the second, .grad's first accumulation pattern)
            assert _traces[0] == before, v
        yt = step(torch, xt, v)
        results.append((y.tolist(), x.grad.tolist(), yt.tolist(), xt.grad.tolist()))
    for y, g, yt, gt in results:
        np.testing.assert_allclose(y, yt, rtol=1e-6)
        np.testing.assert_allclose(g, gt, rtol=1e-6)


def test_clamp_bounds_that_do_not_fit_an_integer_tensor_raise_as_torch():
    """The bounds are traced: torch's check that they fit the integer type is made before (-255 wraps in uint8)."""
    for m in (tl, torch):
        x = m.tensor([1, 2, 100], dtype=m.uint8)
        assert x.clamp(min=-255).tolist() == [1, 2, 100] and x.clamp(max=-1).tolist() == [1, 2, 100]
        for f in (lambda: x.clamp(max=300), lambda: x.clamp_min(-256), lambda: x.clamp_max_(2 ** 40)):
            with pytest.raises(RuntimeError, match="^value cannot be converted to type uint8_t without overflow$"):
                f()


def test_dropout_with_a_new_p_compiles_nothing():
    """p is traced (a float64 array: the same draws as a Python float): a schedule changing it compiles nothing."""
    F = tl.nn.functional
    x = tl.ones(2, 263)  # (a length no other test uses)
    for p in (0.5, 0.25):  # (the first two calls: programs of the first p)
        F.dropout(x, p), F.dropout1d(x, p), F.alpha_dropout(x, p, True)
    before = _traces[0]
    for p in (0.375, 0.125, 0.75):
        for y in (F.dropout(x, p), F.dropout1d(x, p)):
            assert set(np.unique(y.numpy())) <= {0.0, np.float32(1 / (1 - p))}
        assert len(np.unique(F.alpha_dropout(x, p, True).numpy())) <= 2
    assert _traces[0] == before
