"""torchlike.autocast / amp.GradScaler against torch 2.13 (CPU autocast: bfloat16 or float16)."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl


X = (np.arange(12.0).reshape(3, 4) / 7).astype(np.float32)
W = (np.arange(20.0).reshape(5, 4) / 9 - 1).astype(np.float32)
B = (np.arange(5.0) / 3).astype(np.float32)


def _names(t):
    return [None if n is None else n.name() for n, _ in t.grad_fn.next_functions]


CASES = {
    "mm": lambda m, x, w, b: m.mm(x, w.t()),
    "matmul": lambda m, x, w, b: x @ w.t(),
    "matvec": lambda m, x, w, b: x @ w[0],
    "mv_stays_on_cpu": lambda m, x, w, b: m.mv(x, w[0]),
    "dot_stays_on_cpu": lambda m, x, w, b: m.dot(x[0], w[0]),
    "addmm": lambda m, x, w, b: m.addmm(b, x, w.t()),
    "bmm": lambda m, x, w, b: m.bmm(x[None], w.t()[None]),
    "linear_bias": lambda m, x, w, b: m.nn.functional.linear(x, w, b),
    "conv2d": lambda m, x, w, b: m.nn.functional.conv2d(x[None, None], w[None, None, :2, :2]),
    "mse_loss": lambda m, x, w, b: m.nn.functional.mse_loss(x @ w.t(), m.zeros(3, 5)),
    "cross_entropy": lambda m, x, w, b: m.nn.functional.cross_entropy(x @ w.t(), m.tensor([0, 1, 2])),
    "softmax_stays": lambda m, x, w, b: m.softmax(x @ w.t(), -1),
    "sum_stays": lambda m, x, w, b: (x @ w.t()).sum(),
    "exp_stays": lambda m, x, w, b: m.exp(x),
    "float64_untouched": lambda m, x, w, b: x.double() @ w.double().t(),
    "int_untouched": lambda m, x, w, b: m.ones(2, 2, dtype=m.int64) @ m.ones(2, 2, dtype=m.int64),
    "half_input": lambda m, x, w, b: x.half() @ w.t(),
}


def _run(m, case, dtype):
    x, w, b = (m.tensor(a, requires_grad=True) for a in (X, W, B))
    with m.autocast("cpu", dtype=getattr(m, dtype)):
        y = CASES[case](m, x, w, b)
    if y.requires_grad:
        y.float().sum().backward()
    return y, x, w


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", list(CASES))
def test_autocast_casts_as_torch(case, dtype):
    ty, tx, tw = _run(torch, case, dtype)
    ly, lx, lw = _run(tl, case, dtype)
    assert str(ly.dtype)[10:] == str(ty.dtype)[6:]
    if ty.grad_fn is not None and case not in ("mse_loss", "cross_entropy"):
        assert _names(ly) == _names(ty)
    tol = 2e-2  # float32 results may come from lower-precision steps (cross_entropy's log_softmax)
    np.testing.assert_allclose(ly.float().detach().numpy(), ty.float().detach().numpy(), rtol=tol, atol=tol)
    for lg, tg in ((lx.grad, tx.grad), (lw.grad, tw.grad)):
        assert (lg is None) == (tg is None)
        if tg is not None:
            assert str(lg.dtype)[10:] == str(tg.dtype)[6:]
            np.testing.assert_allclose(lg.numpy(), tg.numpy(), rtol=5e-2, atol=5e-2)


def test_weight_casts_are_cached_inside_a_region():
    for m in (torch, tl):
        a = m.ones(2, 2, requires_grad=True)
        with m.autocast("cpu"):
            y, z = a @ a, m.mm(a, a)
            assert y.grad_fn.next_functions[0][0] is z.grad_fn.next_functions[1][0]
        with m.autocast("cpu"):
            assert (a @ a).grad_fn.next_functions[0][0] is not y.grad_fn.next_functions[0][0]


def test_nested_disable_and_decorator():
    for m in (torch, tl):
        x = m.ones(2, 2)
        with m.autocast("cpu"):
            with m.autocast("cpu", enabled=False):
                assert (x @ x).dtype == m.float32 and not m.is_autocast_enabled("cpu")
            assert (x @ x).dtype == m.bfloat16 and m.is_autocast_enabled("cpu")

        @m.autocast("cpu")
        def f(a):
            return a @ a
        assert f(x).dtype == m.bfloat16 and not m.is_autocast_enabled("cpu")
        assert (x @ x).dtype == m.float32


STATE = {
    "enabled_default": lambda m: m.is_autocast_enabled(),
    "dtype_cpu": lambda m: str(m.get_autocast_dtype("cpu")).split(".")[1],
    "dtype_cuda": lambda m: str(m.get_autocast_dtype("cuda")).split(".")[1],
    "dtype_bad": lambda m: m.get_autocast_dtype("foo"),
    "device_not_str": lambda m: m.autocast(1),
    "device_bad": lambda m: m.autocast("foo"),
    "cuda_disabled": lambda m: m.autocast("cuda")._enabled,
    "cpu_float32_disabled": lambda m: m.autocast("cpu", dtype=m.float32)._enabled,
    "inside": lambda m: _inside(m),
    "amp_alias": lambda m: m.amp.autocast is m.autocast,
    "mps_accepted": lambda m: m.autocast("mps")._enabled,
    "available": lambda m: [m.amp.is_autocast_available(d) for d in ("cpu", "cuda", "mps", "meta")],
}


def _inside(m):
    with m.autocast("cpu", dtype=m.float16):
        return m.is_autocast_enabled("cpu"), str(m.get_autocast_dtype("cpu")).split(".")[1], m.is_autocast_enabled()


def _outcome(fn, m):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn(m)
        return "ok", r, [str(x.message) for x in w]
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", list(STATE))
def test_autocast_state_as_torch(name):
    assert _outcome(STATE[name], tl) == _outcome(STATE[name], torch)


# ----- GradScaler ------------------------------------------------------------------------------------------
def _train(m, grads_nan_at, **kw):
    """A few scaled steps of SGD; the gradient is poisoned with inf at the steps in ``grads_nan_at``."""
    p = m.nn.Parameter(m.tensor([1.0, -2.0, 3.0]))
    opt = m.optim.SGD([p], lr=0.1)
    scaler = m.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2, **kw)
    log = []
    for step in range(5):
        opt.zero_grad()
        loss = (p * p).sum() * (float("inf") if step in grads_nan_at else 1.0)
        scaler.scale(loss).backward()
        if step == 3:
            scaler.unscale_(opt)
            log.append(p.grad.tolist())
        scaler.step(opt)
        scaler.update()
        log.append((p.tolist(), scaler.get_scale(), scaler.state_dict()))
    return log


@pytest.mark.parametrize("bad", [(), (1,), (0, 3)])
def test_grad_scaler_steps_skips_and_rescales_as_torch(bad):
    assert _train(tl, bad) == _train(torch, bad)


SCALER = {
    "cuda_disabled": lambda m: (m.amp.GradScaler().is_enabled(), m.amp.GradScaler().state_dict(),
                                m.amp.GradScaler().get_scale()),
    "cpu_state": lambda m: m.amp.GradScaler("cpu").state_dict(),
    "scale": lambda m: m.amp.GradScaler("cpu", init_scale=8.0).scale(m.tensor([1.0, 2.0])).tolist(),
    "scale_list": lambda m: [t.tolist() for t in m.amp.GradScaler("cpu", init_scale=4.0).scale([m.ones(1), m.ones(2)])],
    "update_without_step": lambda m: m.amp.GradScaler("cpu").update(),
    "load_empty": lambda m: m.amp.GradScaler("cpu").load_state_dict({}),
    "unscale_twice": lambda m: _twice(m, "unscale_"),
    "step_twice": lambda m: _twice(m, "step"),
    "closure": lambda m: m.amp.GradScaler("cpu").step(m.optim.SGD([m.nn.Parameter(m.ones(1))], lr=1), closure=None),
    "new_scale": lambda m: _new_scale(m),
    "load": lambda m: _load(m),
}


def _twice(m, what):
    p = m.nn.Parameter(m.ones(2))
    opt = m.optim.SGD([p], lr=1)
    s = m.amp.GradScaler("cpu")
    s.scale(p.sum()).backward()
    getattr(s, what)(opt)
    getattr(s, what)(opt)


def _new_scale(m):
    s = m.amp.GradScaler("cpu")
    s.update(3.0)
    return s.get_scale()


def _load(m):
    s = m.amp.GradScaler("cpu")
    s.load_state_dict({"scale": 4.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 7,
                       "_growth_tracker": 2})
    return s.state_dict()


@pytest.mark.parametrize("name", list(SCALER))
def test_grad_scaler_as_torch(name):
    assert _outcome(SCALER[name], tl) == _outcome(SCALER[name], torch)


_IMG = np.random.default_rng(3).standard_normal((2, 3, 5, 5)).astype(np.float32)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_batch_norm_of_a_lower_precision_input_with_float32_parameters_as_torch(dtype, training):
    """torch's CPU "mixed dtype" batch norm (what a BatchNorm2d meets after an autocast convolution): computed in
    float32, the result and the input's gradient in the input's dtype, the parameters' gradients and the running
    statistics in float32."""
    rng = np.random.default_rng(4)
    w, b, g = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32), \
        rng.standard_normal(_IMG.shape).astype(np.float32)
    out = []
    for m in (tl, torch):
        dt = getattr(m, dtype)
        x = m.tensor(_IMG).to(dt).requires_grad_()
        weight, bias = m.tensor(w, requires_grad=True), m.tensor(b, requires_grad=True)
        rm, rv = m.zeros(3), m.ones(3)
        y = m.nn.functional.batch_norm(x, rm, rv, weight, bias, training=training, momentum=0.1)
        y.backward(m.tensor(g).to(dt))
        out.append([(str(t.dtype).rpartition(".")[2], t.detach().float().numpy()) for t in
                    (y, x.grad, weight.grad, bias.grad, rm, rv)])
    for (ld, lv), (td, tv) in zip(*out):
        assert ld == td
        np.testing.assert_allclose(lv, tv, rtol=1e-2 if ld != "float32" else 1e-5, atol=1e-2 if ld != "float32" else 1e-5)


def _resnet_block(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Conv2d(3, 4, 3, padding=1, bias=False), m.nn.BatchNorm2d(4), m.nn.ReLU(),
                           m.nn.Conv2d(4, 3, 3, padding="same"), m.nn.ConvTranspose2d(3, 3, 1))


@pytest.mark.parametrize("checkpointed", [None, True, False], ids=["plain", "reentrant", "non_reentrant"])
def test_a_convolution_block_under_autocast_as_torch(checkpointed):
    """A convolution of an autocast convolution's (bfloat16) output casts its operands before its dtype checks, and a
    checkpointed block recomputes under the autocast state of its first run (torch's checkpoint does both), with
    backward outside the region."""
    results = []
    for m in (tl, torch):
        block = _resnet_block(m)
        if m is tl:  # (the same initial values as torch's)
            block.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in _resnet_block(torch).state_dict().items()})
        x = m.tensor(_IMG, requires_grad=True)
        with m.autocast("cpu", dtype=m.bfloat16):
            if checkpointed is None:
                y = block(x)
            else:
                y = m.utils.checkpoint.checkpoint(block, x, use_reentrant=checkpointed)
        y.float().sum().backward()
        results.append((str(y.dtype).rpartition(".")[2], y.detach().float().numpy(), x.grad.numpy(),
                        block[0].weight.grad.numpy()))
    (ld, ly, lgx, lgw), (td, ty, tgx, tgw) = results
    assert ld == td == "bfloat16"
    for a, b in ((ly, ty), (lgx, tgx), (lgw, tgw)):
        np.testing.assert_allclose(a, b, rtol=5e-2, atol=5e-2)


_ENTRY_CASES = [  # ops whose own checks ran before autocast's cast, or composites autocast casts as a whole
    "m.baddbmm(a[None], b[None], b[None])", "m.addbmm(a, b[None], b[None])", "F.prelu(b[None], m.ones(1))",
    "m.prelu(b[None], m.ones(1))", "F.l1_loss(b, b * 0)", "b.prod()", "m.cdist(b, b)", "m.inverse(b + m.eye(2))",
    "m.linalg.inv(b + m.eye(2))", "m.fft.rfft(b)", "m.fft.fft2(b)", "F.conv_transpose1d(b[None], m.ones(2, 2, 2))",
    "F.cross_entropy(b, m.tensor([0, 1]))", "m.trace(b)", "F.binary_cross_entropy_with_logits(b, b)",
    "F.mse_loss(b, a)", "F.linear(a, b)", "m.mm(a, b)", "m.polar(b, b)",
    "m.nn.LayerNorm(4)(m.nn.Linear(4, 4)(m.ones(2, 4)))",
    "m.nn.GroupNorm(2, 4)(m.nn.Linear(4, 4)(m.ones(2, 4)))",
    "mha(x, x, x, key_padding_mask=m.tensor([[False, False, True]]))[0]",
    "mha(x, x, x, attn_mask=m.zeros(3, 3))[0]",
    "m.nn.LSTM(4, 2)(x)[0]", "m.nn.LSTM(4, 2)(x)[1][1]", "m.nn.GRU(4, 2)(x)[0]", "m.nn.RNN(4, 2)(x)[1]",
    "m.nn.LSTMCell(4, 2)(x[0])[0]", "m.nn.GRUCell(4, 2)(x[0])",
]


@pytest.mark.parametrize("expr", _ENTRY_CASES)
def test_autocast_casts_whole_ops_as_torch(expr):
    """Result dtypes under CPU autocast as torch's: the lower-precision ops cast every tensor argument (an attention
    mask, baddbmm's float32 input) before their checks, the float32 ops and composites (losses, prod, linalg, fft)
    run in float32; LayerNorm after a Linear takes the bfloat16 input with its float32 parameters."""
    got = []
    for m in (tl, torch):
        F = m.nn.functional  # noqa: F841, N806 - used by the expressions
        a = m.ones(2, 2)
        b = a.bfloat16()  # noqa: F841
        m.manual_seed(0)
        mha, x = m.nn.MultiheadAttention(4, 2, batch_first=True), m.ones(1, 3, 4)  # noqa: F841
        with m.autocast("cpu"):
            got.append(str(eval(expr).dtype).split(".")[1])  # noqa: S307 - fixed test expressions
    assert got[0] == got[1]


def _state_script(m):
    """torch's autocast state functions, as code that manages the state itself calls them."""
    a = m.ones(2, 2)
    log = [m.is_autocast_cpu_enabled(), str(m.get_autocast_cpu_dtype()), str(m.get_autocast_gpu_dtype()),
           str(m.get_autocast_xla_dtype()), str(m.get_autocast_ipu_dtype()), m.is_autocast_xla_enabled()]
    try:
        m.set_autocast_cpu_enabled(True)
        log += [m.is_autocast_enabled("cpu"), str((a @ a).dtype)]
        m.set_autocast_enabled("cpu", False)
        log += [str((a @ a).dtype)]
        m.set_autocast_enabled(True)
        log += [m.is_autocast_enabled(), m.is_autocast_enabled("cuda")]
        m.set_autocast_enabled(False)
        log += [m.autocast_increment_nesting(), m.autocast_increment_nesting(), m.autocast_decrement_nesting(),
                m.autocast_decrement_nesting()]
        log.append(m.is_autocast_cache_enabled())
        m.set_autocast_cache_enabled(False)
        log.append(m.is_autocast_cache_enabled())
        m.set_autocast_dtype("cpu", m.float16)
        log.append(str(m.get_autocast_dtype("cpu")))
        m.set_autocast_cpu_dtype(m.bfloat16)
        log += [str(m.get_autocast_dtype("cpu")), m.clear_autocast_cache()]
        with m.autocast("cpu"):
            log += [m.is_autocast_enabled("cpu"), m.autocast_increment_nesting(), m.autocast_decrement_nesting()]
        for bad in (lambda: m.set_autocast_enabled("foo", True), lambda: m.set_autocast_enabled(1),
                    lambda: m.set_autocast_enabled("cpu", 1)):
            try:
                bad()
            except (RuntimeError, TypeError) as e:
                log.append((type(e).__name__, str(e)))
    finally:
        m.set_autocast_enabled("cpu", False)
        m.set_autocast_enabled("cuda", False)
        m.set_autocast_cache_enabled(True)
        m.set_autocast_dtype("cpu", m.bfloat16)
    return [x.replace("torchlike.", "torch.") if isinstance(x, str) else x for x in log]


def test_autocast_state_functions_as_torch():
    got = {}
    for m in (tl, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            got[m] = _state_script(m), [str(x.message).split(" (Triggered internally")[0] for x in w]
    assert got[tl] == got[torch]
    assert any("is deprecated. Please use torch.get_autocast_dtype('cpu')" in x for x in got[tl][1])
