"""torchlike.compile: every compiled step equals the eager step, over several calls, and steady state compiles nothing.

Each test builds the same model and optimizer twice (same seed), runs ``fn`` eagerly on one and compiled on the
other, and compares losses, parameters, gradients, optimizer state, buffers and versions after every call.
"""
import itertools
import sys
import warnings
import weakref

import jax
import numpy as np
import pytest

import torchlike as torch
from torchlike import nn
from torchlike._dynamo import OptimizedModule

F = nn.functional


def _close(a, b, dtype):
    rtol = 1e-6 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=rtol)


def _pair(make):
    """Two copies of ``make()``'s objects from the same seed: one for eager, one for compiled."""
    torch.manual_seed(0)
    a = make()
    torch.manual_seed(0)
    b = make()
    return a, b


def _same_state(m1, m2, dtype, opts=()):
    for (n, p), q in zip(m1.named_parameters(), m2.parameters()):
        _close(p.detach().numpy(), q.detach().numpy(), dtype)
        assert (p.grad is None) == (q.grad is None), n
        if p.grad is not None:
            _close(p.grad.numpy(), q.grad.numpy(), dtype)
    for b1, b2 in zip(m1.buffers(), m2.buffers()):
        _close(b1.numpy(), b2.numpy(), dtype)
    for o1, o2 in opts:
        s1, s2 = o1.state_dict()["state"], o2.state_dict()["state"]
        assert s1.keys() == s2.keys()
        for k in s1:
            for name in s1[k]:
                _close(np.asarray(s1[k][name]), np.asarray(s2[k][name]), dtype)


def _train_step(loss_of):
    """A training step: zero_grad, ``loss_of(model, *data)``, backward, optimizer step; returns the loss."""
    def step(model, opt, *data):
        opt.zero_grad()
        loss = loss_of(model, *data)
        loss.backward()
        opt.step()
        return loss
    return step


def _mlp(dtype, *extra):
    return nn.Sequential(nn.Linear(6, 8), *extra, nn.Tanh(), nn.Linear(8, 3)).to(dtype)


_OPTIMIZERS = {
    "sgd_momentum": lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    "adam": lambda ps: torch.optim.Adam(ps, lr=1e-2),
    "adamw": lambda ps: torch.optim.AdamW(ps, lr=1e-2, amsgrad=True),
}


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("opt_name", sorted(_OPTIMIZERS))
def test_training_step_equals_eager(dtype, opt_name):
    (m1, o1), (m2, o2) = _pair(lambda: (lambda m: (m, _OPTIMIZERS[opt_name](m.parameters())))(_mlp(dtype)))
    x = torch.randn(5, 6, dtype=dtype)
    y = torch.tensor([0, 1, 2, 1, 0])
    step = _train_step(lambda model, x, y: F.cross_entropy(model(x), y))
    cstep = torch.compile(step)
    for i in range(4):
        v1 = [p._version for p in m1.parameters()]
        l1 = step(m1, o1, x, y)
        l2 = cstep(m2, o2, x, y)
        _close(l1.detach().numpy(), l2.detach().numpy(), dtype)
        _same_state(m1, m2, dtype, [(o1, o2)])
        assert [p._version - v for p, v in zip(m1.parameters(), v1)] == \
            [p._version - v for p, v in zip(m2.parameters(), v1)]
        assert l2.requires_grad and l2.grad_fn.name() == "CompiledFunctionBackward"
    assert cstep.compiles == 2  # first call (no .grad, no optimizer state yet), then the steady state
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        l2.backward()


def test_steady_state_compiles_nothing_and_leaks_nothing():
    (m1, o1), _ = _pair(lambda: (lambda m: (m, torch.optim.Adam(m.parameters())))(_mlp(torch.float32)))
    x, y = torch.randn(5, 6), torch.randn(5, 3)

    @torch.compile
    def step(x, y):
        o1.zero_grad()
        loss = F.mse_loss(m1(x), y)
        loss.backward()
        o1.step()
        return loss
    for _ in range(3):
        step(x, y)
    compiles = step.compiles
    jax.block_until_ready(step(x, y)._data)
    live = len(jax.live_arrays())
    for _ in range(30):
        step(x, y)
    assert step.compiles == compiles
    assert len(jax.live_arrays()) <= live + 2


def test_hooks_transform_gradients():
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    for m in (m1, m2):
        m[0].weight.register_hook(lambda g: g * 3)
        m[2].register_full_backward_hook(lambda mod, gin, gout: (gin[0] * 0.5,))
        m[2].bias.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(2))
    x = torch.randn(4, 6, dtype=torch.float64)

    def fn(model, x):
        h = model[0](x)
        h.register_hook(lambda g: g.clamp(-0.1, 0.1))
        out = model[2](model[1](h)).pow(2).sum()
        out.grad_fn.register_prehook(lambda gs: (gs[0] * 2,))
        out.backward()
        return out
    cfn = torch.compile(fn)
    for _ in range(3):
        _close(fn(m1, x).detach().numpy(), cfn(m2, x).detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64)


def test_grad_accumulates_across_calls_without_zero_grad():
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    x = torch.randn(4, 6, dtype=torch.float64)

    def fn(model, x):
        model(x).sum().backward()
    cfn = torch.compile(fn)
    for _ in range(3):
        fn(m1, x)
        cfn(m2, x)
        _same_state(m1, m2, torch.float64)
    assert cfn.compiles == 2


def test_grads_made_inside_are_new_tensors_on_every_call():
    """A .grad after zero_grad is a new tensor each call, as in eager: one kept from an earlier call keeps its values
    (it was one tensor updated in place)."""
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    o1, o2 = torch.optim.SGD(m1.parameters(), lr=0.1), torch.optim.SGD(m2.parameters(), lr=0.1)
    step = _train_step(lambda model, x: model(x).pow(2).sum())
    cstep = torch.compile(step)
    kept = []
    for k in range(4):
        x = torch.full((4, 6), float(k + 1), dtype=torch.float64)
        step(m1, o1, x)
        cstep(m2, o2, x)
        _same_state(m1, m2, torch.float64)
        kept.append([(g, g.numpy().copy()) for g in (m1[0].weight.grad, m2[0].weight.grad)])
    for (eager, eager_then), (compiled, compiled_then) in kept:
        _close(compiled.numpy(), compiled_then, torch.float64)
        _close(compiled.numpy(), eager.numpy(), torch.float64)
    assert len({id(c) for _, (c, _) in kept}) == 4
    assert cstep.compiles == 2


def test_python_side_effects_in_a_hook_are_reported():
    m = _mlp(torch.float32)
    seen = []
    m[0].weight.register_hook(lambda g: seen.append(g.shape))

    @torch.compile
    def fn(x):
        m(x).sum().backward()
    with pytest.warns(UserWarning, match="list"):
        fn(torch.randn(2, 6))
    n = len(seen)
    fn(torch.randn(2, 6))
    fn(torch.randn(2, 6))
    assert len(seen) == n  # the hook ran while tracing, not once per call


def test_saved_tensor_hooks_of_a_long_chain_unpack_once_while_tracing():
    """A run of >= 16 elementwise nodes runs its formulas together (autograd/engine.py's _run_chain); inside the
    trace each saved tensor is still unpacked once, as in eager and in torch (20 packs, 20 unpacks here)."""
    counts = {}
    for mode in ("eager", "compiled"):
        packs, unpacks = itertools.count(), itertools.count()  # (not a list: the trace's list changes are put back)

        def pack(t, packs=packs):
            next(packs)
            return t

        def unpack(t, unpacks=unpacks):
            next(unpacks)
            return t
        x = torch.tensor(np.linspace(0, 1, 5), requires_grad=True)

        def step(x):
            with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
                y = x
                for _ in range(20):
                    y = y.sin()
            y.sum().backward()
            return x.grad
        g = (torch.compile(step) if mode == "compiled" else step)(x)
        counts[mode] = (next(packs), next(unpacks))
        _close(g.numpy(), _chain_grad(np.linspace(0, 1, 5), 20), torch.float64)
    assert counts == {"eager": (20, 20), "compiled": (20, 20)}  # (compiled: the trace's calls; it was 20, 40)


def _chain_grad(x, n):
    """d/dx of sum(sin^n(x)) (n nested sines)."""
    g = np.ones_like(x)
    for _ in range(n):
        g, x = g * np.cos(x), np.sin(x)
    return g


def test_batch_shape_change_compiles_once_per_shape():
    (m1, o1), (m2, o2) = _pair(lambda: (lambda m: (m, torch.optim.SGD(m.parameters(), lr=0.1)))(_mlp(torch.float64)))
    step = _train_step(lambda model, x: model(x).square().mean())
    cstep = torch.compile(step)
    shapes = [3, 3, 7, 7, 3, 7]
    for n in shapes:
        x = torch.randn(n, 6, dtype=torch.float64)
        _close(step(m1, o1, x).detach().numpy(), cstep(m2, o2, x).detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64, [(o1, o2)])
    assert cstep.compiles == 3  # 3 (no .grad yet), 3, 7


def test_no_grad_region_and_manual_update():
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    x = torch.randn(4, 6, dtype=torch.float64)

    def fn(model, x):
        with torch.no_grad():
            target = model(x) * 0.5
        loss = (model(x) - target).pow(2).sum()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
                p.grad = None
        return loss, target
    cfn = torch.compile(fn)
    for _ in range(3):
        (l1, t1), (l2, t2) = fn(m1, x), cfn(m2, x)
        _close(l1.detach().numpy(), l2.detach().numpy(), torch.float64)
        _close(t1.numpy(), t2.numpy(), torch.float64)
        assert not t2.requires_grad
        _same_state(m1, m2, torch.float64)
    assert cfn.compiles == 1


def test_batchnorm_statistics_and_dropout_train_and_eval():
    m1, m2 = _pair(lambda: nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.Dropout(0.4), nn.Linear(8, 2)).double())
    x = torch.randn(5, 6, dtype=torch.float64)

    def fn(model, x):
        out = model(x).sum()
        if model.training:
            out.backward()
        return out
    cfn = torch.compile(fn)
    for i, train in enumerate([True, True, True, False, False, True]):
        m1.train(train)
        m2.train(train)
        torch.manual_seed(i)
        l1 = fn(m1, x)
        torch.manual_seed(i)
        l2 = cfn(m2, x)
        _close(l1.detach().numpy(), l2.detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64)
        assert m1[1].num_batches_tracked.item() == m2[1].num_batches_tracked.item()
    assert cfn.compiles == 3  # train (no .grad), train, eval


def test_custom_function_custom_op_and_autograd_grad_inside():
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 10  # not the true derivative: the compiled step must use it

    @torch.library.custom_op("compile_test::cube", mutates_args=())
    def cube(x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(np.asarray(x.numpy()) ** 3)

    @cube.register_fake
    def _(x):
        return torch.empty_like(x)

    cube.register_autograd(lambda ctx, g: g * 3 * ctx.saved_tensors[0] ** 2,
                           setup_context=lambda ctx, inputs, output: ctx.save_for_backward(inputs[0]))
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    x = torch.randn(4, 6, dtype=torch.float64)

    def fn(model, x):
        xr = x.clone().requires_grad_()
        h = Scale.apply(model(xr))
        (gx,) = torch.autograd.grad(h.sum(), xr, create_graph=True)
        loss = h.pow(2).sum() + gx.pow(2).sum()
        loss.backward()
        return loss
    cfn = torch.compile(fn)
    for _ in range(2):
        _close(fn(m1, x).detach().numpy(), cfn(m2, x).detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64)
    del cube


def test_fullgraph_host_read_error_names_the_line_and_graph_break_stays_correct():
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    x = torch.randn(4, 6, dtype=torch.float64)

    def fn(model, x):
        loss = model(x).sum()
        if loss.item() > 0:  # a host read
            loss = loss * 2
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match=r"fullgraph=True.*test_compile.py:\d+: if loss.item\(\) > 0"):
        torch.compile(fn, fullgraph=True)(m2, x)
    assert all(p.grad is None for p in m2.parameters())  # nothing half-changed
    cfn = torch.compile(fn)
    for _ in range(2):
        _close(fn(m1, x).detach().numpy(), cfn(m2, x).detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64)


@pytest.mark.eager_only("counts the lazy programs of the graph break, which an eager reference run in lazy mode adds "
                        "to")
def test_graph_break_splits_into_fused_programs_replayed_by_later_calls():
    from torchlike import _lazy
    _lazy._reset_guard()  # (earlier tests' one-off programs may have paused recording)
    m1, m2 = _pair(lambda: _mlp(torch.float64))
    o1, o2 = (torch.optim.SGD(m.parameters(), lr=0.1) for m in (m1, m2))

    def fn(model, opt, x):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scale = 2.0 if loss.item() > 0.5 else 0.5  # a host read: the program is split here
        (loss * scale).backward()
        opt.step()
        return loss
    cfn = torch.compile(fn)
    compiles = []
    for i in range(4):
        x = torch.randn(4, 6, dtype=torch.float64) * (1 + i % 2)  # both branches are taken
        before = dict(_lazy.stats)
        _close(fn(m1, o1, x).detach().numpy(), cfn(m2, o2, x).detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64, [(o1, o2)])
        assert _lazy.stats["syncs"] - before["syncs"] >= 2  # the ops before the read, then the rest
        compiles.append(_lazy.stats["compiles"] - before["compiles"])
    assert compiles[2:] == [0, 0]  # each branch's programs are cached
    assert all(p.split for p in cfn.programs)  # (two guards: before and after the first .grad exists)
    x = torch.randn(4, 6, dtype=torch.float64)
    first = weakref.ref(x)
    cfn2 = torch.compile(fn)
    cfn2(m2, o2, x)
    del x
    assert first() is None  # (the split program keeps nothing of its first call)


def test_graph_break_runs_hooks_registered_before_it_once():
    """The first call traces fn up to its host read, then runs it again: the hooks the trace registered are gone."""
    x1 = torch.ones(3, dtype=torch.float64, requires_grad=True)
    x2 = x1.detach().clone().requires_grad_()

    def fn(x):
        handle = x.register_hook(lambda g: g * 2)
        y = x * 3
        if y.sum().item() > 0:  # a host read
            y = y * 2
        y.sum().backward()
        handle.remove()
    cfn = torch.compile(fn)
    for _ in range(2):
        fn(x1)
        cfn(x2)
        _close(x1.grad.numpy(), x2.grad.numpy(), torch.float64)


def test_global_step_calling_opt_step_compiles_twice_then_replays():
    """``@torch.compile def step(...): ... opt.step()`` at module level: the walk follows the global names the code
    reads, not its attribute names, so it does not guard on the compiled ``step`` itself (it recompiled per call)."""
    ns = {"torch": torch, "nn": nn, "__name__": "user_script"}
    exec(compile("""
model = nn.Linear(6, 3, dtype=torch.float64)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

@torch.compile
def step(x):
    opt.zero_grad()
    loss = model(x).pow(2).sum()
    loss.backward()
    opt.step()
    return loss
""", "<module with a global step>", "exec"), ns)
    x = torch.randn(4, 6, dtype=torch.float64)
    for _ in range(2):  # (no .grad and no momentum yet, then the steady state)
        ns["step"](x)
    warm = ns["step"].compiles
    for _ in range(3):
        ns["step"](x)
    assert ns["step"].compiles == warm <= 2


def test_compiled_module_is_an_optimized_module():
    m1, m2 = _pair(lambda: _mlp(torch.float64, nn.BatchNorm1d(8)))
    cm = torch.compile(m2)
    assert isinstance(cm, OptimizedModule) and cm._orig_mod is m2
    assert list(cm.state_dict()) == ["_orig_mod." + k for k in m2.state_dict()]
    assert getattr(cm, "0") is m2[0] and cm.training  # attributes are the original module's
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    for _ in range(3):
        o1, o2 = m1(x), cm(x2)
        assert o2.grad_fn.name() == "CompiledFunctionBackward"
        _close(o1.detach().numpy(), o2.detach().numpy(), torch.float64)
        o1.pow(2).sum().backward()
        o2.pow(2).sum().backward()
        _close(x.grad.numpy(), x2.grad.numpy(), torch.float64)
        _same_state(m1, m2, torch.float64)
    cm.eval()
    m1.eval()
    _close(m1(x).detach().numpy(), cm(x2).detach().numpy(), torch.float64)
    out = cm(x2).sum()
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        torch.autograd.grad(torch.autograd.grad(out, x2, create_graph=True)[0].sum(), x2)
    torch._dynamo.reset()
    assert cm._compiled.programs == []


def test_recompile_limit_warns_with_the_cause():
    global _SCALE
    m = _mlp(torch.float32)
    x = torch.randn(2, 6)

    @torch.compile
    def fn(x):
        return (m(x) * _SCALE).sum()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(torch._dynamo.config.recompile_limit + 2):
            _SCALE = float(i)
            assert fn(x).item() == pytest.approx((m(x) * float(i)).sum().item(), rel=1e-5)
    msgs = [str(w.message) for w in caught if "recompile_limit" in str(w.message)]
    assert len(msgs) == 1 and "_SCALE changed" in msgs[0]


_SCALE = 1.0


def test_outputs_structure_and_input_writes():
    m = _mlp(torch.float64)
    x = torch.randn(3, 6, dtype=torch.float64)

    @torch.compile
    def fn(x, k):
        x.mul_(2)
        return {"out": m(x), "k": k, "pair": (x.sum(), None)}
    for k in range(2):
        x1 = x.clone()
        x2 = x.clone()
        r = fn(x2, 3)
        _close(x2.numpy(), (x1 * 2).numpy(), torch.float64)
        assert x2._version == 1
        assert r["k"] == 3 and r["pair"][1] is None
        _close(r["out"].detach().numpy(), m(x1 * 2).detach().numpy(), torch.float64)
    assert fn.compiles == 1


@pytest.mark.parametrize("opt_name", sorted(_OPTIMIZERS))
def test_learning_rate_schedule_never_recompiles(opt_name):
    def make():
        m = _mlp(torch.float64)
        opt = _OPTIMIZERS[opt_name](m.parameters())
        return m, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    (m1, o1, s1), (m2, o2, s2) = _pair(make)
    x = torch.randn(4, 6, dtype=torch.float64)
    step = _train_step(lambda model, x: model(x).pow(2).mean())
    cstep = torch.compile(step)
    for _ in range(5):
        _close(step(m1, o1, x).detach().numpy(), cstep(m2, o2, x).detach().numpy(), torch.float64)
        s1.step()
        s2.step()
        _same_state(m1, m2, torch.float64, [(o1, o2)])
    assert type(o2.param_groups[0]["lr"]) is float
    assert cstep.compiles == 2


class _LSTMHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 6, batch_first=True)
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1])


_MODELS = {  # (model, input, target, loss): CNN, transformer block, LSTM, embedding; float64 so equality is tight
    "cnn": (lambda: nn.Sequential(nn.Conv2d(1, 3, 3, padding=1), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2),
                                  nn.Flatten(), nn.Dropout(0.2), nn.Linear(12, 4)),
            lambda: torch.randn(3, 1, 4, 4, dtype=torch.float64), lambda: torch.tensor([0, 3, 1]), F.cross_entropy),
    "transformer": (lambda: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True),
                    lambda: torch.randn(2, 3, 8, dtype=torch.float64),
                    lambda: torch.randn(2, 3, 8, dtype=torch.float64), F.mse_loss),
    "lstm": (_LSTMHead, lambda: torch.randn(2, 5, 4, dtype=torch.float64),
             lambda: torch.randn(2, 2, dtype=torch.float64), F.mse_loss),
    "embedding": (lambda: nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.LayerNorm(12), nn.Linear(12, 3)),
                  lambda: torch.tensor([[1, 2, 3], [4, 5, 9]]), lambda: torch.tensor([2, 0]), F.cross_entropy),
}


@pytest.mark.parametrize("name", sorted(_MODELS))
def test_model_families_compile_to_one_program_each(name):
    make, make_x, make_y, loss_fn = _MODELS[name]
    (m1, o1), (m2, o2) = _pair(lambda: (lambda m: (m, torch.optim.Adam(m.parameters(), lr=1e-3)))(make().double()))
    x, y = make_x(), make_y()
    step = _train_step(lambda model, x, y: loss_fn(model(x), y))
    cstep = torch.compile(step, fullgraph=True)  # no host read anywhere: one program per guard
    for i in range(3):
        torch.manual_seed(i)
        l1 = step(m1, o1, x, y)
        torch.manual_seed(i)
        l2 = cstep(m2, o2, x, y)
        _close(l1.detach().numpy(), l2.detach().numpy(), torch.float64)
        _same_state(m1, m2, torch.float64, [(o1, o2)])
    assert cstep.compiles == 2


def test_compiled_function_transforms_are_one_program():
    """torchlike.compile(vmap(grad(f))): per-sample gradients of a module as one XLA program per signature."""
    model = _mlp(torch.float64)
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(p, xi, yi):
        return (torch.func.functional_call(model, p, (xi.unsqueeze(0),)) - yi).pow(2).sum()
    psg = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))
    cpsg = torch.compile(psg, fullgraph=True)
    x, y = torch.randn(7, 6, dtype=torch.float64), torch.randn(7, 3, dtype=torch.float64)
    for _ in range(3):
        eager, compiled = psg(params, x, y), cpsg(params, x, y)
        assert list(compiled) == list(eager)
        for k in params:
            _close(eager[k].numpy(), compiled[k].numpy(), torch.float64)
    assert cpsg.compiles == 1
    hess = torch.compile(torch.func.hessian(lambda v: (v.sin() * v).sum()))
    v = torch.randn(5, dtype=torch.float64)
    _close(hess(v).numpy(), torch.func.hessian(lambda v: (v.sin() * v).sum())(v).numpy(), torch.float64)


def test_errors_inside_are_the_eager_errors_and_change_nothing():
    m = _mlp(torch.float64)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    before = [p.detach().clone() for p in m.parameters()]
    versions = [p._version for p in m.parameters()]

    def step(x):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
        return m(x[:, :5])  # a shape error after the update
    with pytest.raises(RuntimeError) as eager_error:
        m2 = _mlp(torch.float64)
        m2(torch.randn(2, 6, dtype=torch.float64)[:, :5])
    with pytest.raises(RuntimeError) as compiled_error:
        torch.compile(step)(torch.randn(2, 6, dtype=torch.float64))
    assert str(compiled_error.value) == str(eager_error.value)
    for p, b in zip(m.parameters(), before):
        assert p.grad is None and np.array_equal(p.detach().numpy(), b.numpy())
    assert [p._version for p in m.parameters()] == versions and opt.state_dict()["state"] == {}


def test_a_compiled_function_called_inside_another_one():
    m = _mlp(torch.float64)
    inner = torch.compile(lambda x: m(x).tanh())

    @torch.compile
    def outer(x):
        return inner(x * 2).sum()
    x = torch.randn(3, 6, dtype=torch.float64)
    for _ in range(2):
        _close(outer(x).detach().numpy(), m(x * 2).tanh().sum().detach().numpy(), torch.float64)
        _close(inner(x).detach().numpy(), m(x).tanh().detach().numpy(), torch.float64)


def test_overwritten_state_is_donated_only_when_nothing_else_holds_it():
    from torchlike._dynamo import eval_frame
    t = torch.randn(3)
    arrays = [t._data]
    count = sys.getrefcount(arrays[0])  # (outside the assert: pytest's rewriting holds one more)
    assert count == eval_frame._OWNED
    m = nn.Linear(4, 2)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x = torch.randn(5, 4)

    @torch.compile
    def step(x):
        opt.zero_grad()
        m(x).sum().backward()
        opt.step()
    step(x)
    step(x)
    pointer = m.weight._data.unsafe_buffer_pointer()
    step(x)
    assert m.weight._data.unsafe_buffer_pointer() == pointer  # the old buffer was given to XLA for the new weight
    held = m.weight.detach()  # an alias shares the memory: not donated, and it sees the update (as in torch)
    before = held.numpy().copy()
    step(x)
    assert not held._data.is_deleted()
    np.testing.assert_array_equal(held.numpy(), m.weight.detach().numpy())
    assert not np.array_equal(held.numpy(), before)


def test_a_replaced_grad_gives_its_buffer_to_the_new_one_only_when_nothing_else_holds_it():
    """zero_grad then backward makes new .grad tensors each call: the old ones' buffers hold the new values when only
    their parameters held them; a .grad the user kept keeps its values, as in eager."""
    (m1, o1), (m2, o2) = _pair(lambda: (_mlp(torch.float64), None))
    opt1, opt2 = torch.optim.SGD(m1.parameters(), lr=0.1), torch.optim.SGD(m2.parameters(), lr=0.1)
    x, target = torch.randn(5, 6, dtype=torch.float64), torch.tensor([0, 2, 1, 1, 0])
    step = _train_step(lambda m, x, t: F.cross_entropy(m(x), t))
    compiled = torch.compile(step)
    for i in range(5):
        pointers = [p.grad._data.unsafe_buffer_pointer() for p in m2.parameters()] if i >= 1 else None
        old = weakref.ref(m2[0].weight.grad) if i >= 1 else None
        kept = m2[0].weight.grad if i == 3 else None
        values = kept.numpy().copy() if kept is not None else None
        _close(compiled(m2, opt2, x, target).item(), step(m1, opt1, x, target).item(), torch.float64)
        _same_state(m1, m2, torch.float64)
        if pointers is not None:  # (from the call that compiles the program with .grads: it keeps none of them)
            reused = [p.grad._data.unsafe_buffer_pointer() == q for p, q in zip(m2.parameters(), pointers)]
            assert reused == [i != 3] * len(reused)
            assert (old() is None) == (i != 3)
        if kept is not None:
            assert not kept._data.is_deleted()
            np.testing.assert_array_equal(kept.numpy(), values)
    assert compiled.compiles == 2
    # a failed value check puts the old .grads back with their values (their buffers held the new ones)
    before = [p.grad.numpy().copy() for p in m2.parameters()]
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        compiled(m2, opt2, x, torch.tensor([0, 3, 1, 1, 0]))
    for p, b in zip(m2.parameters(), before):
        np.testing.assert_array_equal(p.grad.numpy(), b)
    _close(compiled(m2, opt2, x, target).item(), step(m1, opt1, x, target).item(), torch.float64)
    _same_state(m1, m2, torch.float64)


def test_compiled_module_releases_its_inputs_after_backward():
    cm = torch.compile(_mlp(torch.float64))
    x = torch.randn(4, 6, dtype=torch.float64, requires_grad=True)
    out = cm(x).sum()
    out.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        out.backward()
    out = cm(x).sum()
    out.backward(retain_graph=True)
    out.backward()  # retained: a second backward accumulates again


def test_compiled_method_and_compiled_forward():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(6, 3)

        @torch.compile
        def forward(self, x):
            return self.fc(x).relu()
    net = Net().double()
    x = torch.randn(4, 6, dtype=torch.float64)
    _close(net(x).detach().numpy(), net.fc(x).relu().detach().numpy(), torch.float64)
    net.fc.weight.data.mul_(2)  # a parameter changed outside: the program reads the new values
    _close(net(x).detach().numpy(), net.fc(x).relu().detach().numpy(), torch.float64)
    net(x).sum().backward()
    assert net.fc.weight.grad is not None
    lin = nn.Linear(6, 3).double()
    lin.forward = torch.compile(lin.forward)
    _close(lin(x).detach().numpy(), (x @ lin.weight.T + lin.bias).detach().numpy(), torch.float64)


def test_value_checks_inside_a_program_raise_torchs_errors_and_write_nothing():
    """Index bounds read the values: inside a compiled program they are outputs checked after each call (as
    torch.compile's kernel asserts); a failed one leaves the state as it was."""
    m = nn.Sequential(nn.Embedding(5, 3), nn.Flatten(), nn.Linear(6, 4))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    @torch.compile
    def step(idx, target, rows):
        opt.zero_grad()
        out = m(idx).index_select(0, rows)
        loss = F.cross_entropy(out, target)
        loss.backward()
        opt.step()
        return loss
    good = (torch.tensor([[1, 2], [3, 4]]), torch.tensor([0, 3]), torch.tensor([1, 0]))
    step(*good)
    step(*good)
    before = [p.detach().clone() for p in m.parameters()]
    grads = [p.grad for p in m.parameters()]
    for args, error in (((torch.tensor([[1, 2], [3, 5]]),) + good[1:], "index out of range in self"),
                        ((good[0], torch.tensor([0, 4]), good[2]), "Target 4 is out of bounds."),
                        (good[:2] + (torch.tensor([1, 2]),), "index out of range in self")):
        with pytest.raises(IndexError) as compiled:
            step(*args)
        assert str(compiled.value) == error
        for p, b, g in zip(m.parameters(), before, grads):
            np.testing.assert_array_equal(p.detach().numpy(), b.numpy())
            assert p.grad is g  # (the call's new .grad tensors were attached, then taken back)
    assert step.compiles == 2
    # the state is still donated (a failed check gives it back unchanged): the weight keeps its buffer
    pointer = m[2].weight._data.unsafe_buffer_pointer()
    step(*good)
    assert m[2].weight._data.unsafe_buffer_pointer() == pointer
    with pytest.raises(IndexError):
        step(good[0], torch.tensor([0, 4]), good[2])
    assert m[2].weight._data.unsafe_buffer_pointer() == pointer
    after = m[2].weight.detach().numpy().copy()
    assert step(*good).item() > 0 and not np.array_equal(m[2].weight.detach().numpy(), after)


def test_a_failed_value_check_puts_back_everything_the_call_wrote():
    """The state is written back while the program runs and the value checks are read after: a failed check puts
    back each .grad (the same tensor as before), the optimizer's state, the versions and the RNG key; the next
    calls equal an eager run that never made the failed call."""
    def make():
        m = nn.Sequential(nn.Linear(6, 5), nn.Dropout(0.3), nn.Linear(5, 3)).double()
        return m, torch.optim.Adam(m.parameters(), lr=0.05)
    (m1, o1), (m2, o2) = _pair(make)

    def step(m, opt, x, target):
        loss = F.cross_entropy(m(x), target)  # (no zero_grad: each call's .grad accumulates on the last one)
        loss.backward()
        opt.step()
        return loss
    compiled = torch.compile(step)
    x = torch.randn(4, 6, dtype=torch.float64)
    good, bad = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 3, 1, 2])
    torch.manual_seed(1)
    eager = [step(m1, o1, x, good).item() for _ in range(3)]
    torch.manual_seed(1)
    losses = [compiled(m2, o2, x, good).item() for _ in range(2)]
    grads = [p.grad for p in m2.parameters()]
    values = [(p.detach().numpy().copy(), p.grad.numpy().copy(), p._version) for p in m2.parameters()]
    state = {k: {n: np.asarray(v).copy() for n, v in s.items()} for k, s in o2.state_dict()["state"].items()}
    key = np.asarray(torch.default_generator._key).copy()
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        compiled(m2, o2, x, bad)
    assert all(p.grad is g for p, g in zip(m2.parameters(), grads))  # the same tensors
    for p, (value, grad, version) in zip(m2.parameters(), values):
        np.testing.assert_array_equal(p.detach().numpy(), value)
        np.testing.assert_array_equal(p.grad.numpy(), grad)
        assert p._version == version
    for k, s in o2.state_dict()["state"].items():
        for n, v in s.items():
            np.testing.assert_array_equal(np.asarray(v), state[k][n])
    np.testing.assert_array_equal(np.asarray(torch.default_generator._key), key)
    losses.append(compiled(m2, o2, x, good).item())
    _close(losses, eager, torch.float64)
    _same_state(m1, m2, torch.float64, [(o1, o2)])
    assert compiled.compiles == 2  # (the first call's .grad was None)


@pytest.mark.parametrize("seed", [*range(12), 16041])  # (16041: a no_grad view whose base is then written in place)
def test_random_programs_compiled_equal_eager(seed):
    """tests/random_compiled.py: a random op graph with its backward, compiled and eager (more: run the script)."""
    from random_compiled import differs
    assert differs(seed) is None


def test_a_compiled_forward_whose_grads_are_set_to_none_before_backward():
    """The usual loop with a compiled model (not step): forward, then zero_grad(set_to_none=True), then backward. The
    second call's program read the parameters' .grads (there by then) as state; its backward program must not read
    them again (they are None by then): it uses the forward call's tensors. Gradients equal eager ones."""
    results = []
    for compiled in (False, True):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        run = torch.compile(model) if compiled else model
        x = torch.tensor(np.arange(12.0, dtype=np.float32).reshape(3, 4) / 10)
        grads = []
        for _ in range(3):
            loss = run(x).square().sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            grads.append([p.grad.numpy().copy() for p in model.parameters()])
            opt.step()
        results.append(grads)
    for eager, comp in zip(*results):
        for a, b in zip(eager, comp):
            np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_compiler_disable_and_is_compiling():
    """torch.compiler.disable keeps a function out of the program (it runs eagerly, every call, with its Python
    side effects; fullgraph=True refuses it as torch's does); is_compiling is True only while tracing."""
    log = []

    @torch.compiler.disable
    def side(x):
        log.append(float(x.sum()))
        return x * 3

    def f(x):
        log.append(torch.compiler.is_compiling())
        return side(x.sin() * 2) + 1

    compiled = torch.compile(f)
    x = torch.ones(3)
    want = (torch.ones(3).sin() * 6 + 1).tolist()
    for _ in range(3):
        np.testing.assert_allclose(compiled(x).tolist(), want, rtol=1e-6)
    assert log.count(True) <= 1 and len([v for v in log if isinstance(v, float) and not isinstance(v, bool)]) == 3
    assert not torch.compiler.is_compiling() and not torch._dynamo.is_compiling()
    with pytest.raises(RuntimeError, match="Skip calling `torch.compiler.disable\\(\\)`d function"):
        torch.compile(f, fullgraph=True)(x)
    assert torch.compiler.disable(recursive=False)(len)([1, 2]) == 2
