"""bfloat16 and float16 as torch's CPU kernels compute them: reductions accumulate in float32 and round once, and
rms_norm computes in float32 (torch's opmath) and returns the input's dtype. Against torch 2.13 on the same values."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl

_X = np.random.default_rng(0).standard_normal((4, 2048)).astype(np.float32) * 0.5 + 0.3
_REDUCTIONS = {
    "sum": lambda x: x.sum(), "sum_dim": lambda x: x.sum(1), "sum_dtype": lambda x: x.float().sum(1, dtype=x.dtype),
    "mean": lambda x: x.mean(1), "mean_all": lambda x: x.mean(), "cumsum": lambda x: x.cumsum(1)[:, -8:],
    "nansum": lambda x: x.nansum(1), "l1_loss": lambda x: (x - x * 0).abs().mean(),
    "cumprod": lambda x: (x[:, :256].abs() * 0.05 + 0.98).cumprod(1)[:, -4:],
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(_REDUCTIONS))
def test_reductions_of_half_types_accumulate_in_float32(name, dtype):
    """A 2,048-element bfloat16 row summed in bfloat16 is ~1% off; torch's (and now torchlike's) sum is the float32
    sum rounded once, so the two agree to the last bit but for float32 summation order."""
    got, want = (_REDUCTIONS[name](m.tensor(_X).to(getattr(m, dtype))) for m in (tl, torch))
    assert str(got.dtype)[10:] == str(want.dtype)[6:]
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-2)
    if name == "cumprod":  # (its input is computed in the half type first: no float64 truth of the same values)
        return
    exact = (m.tensor(_X).to(getattr(m, dtype)).double() for m in (tl, torch))
    truth = _REDUCTIONS[name](next(exact)).numpy()
    assert np.abs(got.float().numpy() - truth).max() <= np.abs(want.float().numpy() - truth).max() * 1.01 + 1e-6


_RMS_CASES = [("float32", "float32", None), ("bfloat16", "float32", None), ("bfloat16", None, None),
              ("float16", "float16", None), ("float32", "float64", None), ("float64", "float64", 1e-3),
              ("bfloat16", "bfloat16", None), ("float16", "float32", 1e-6)]


@pytest.mark.parametrize("xd,wd,eps", _RMS_CASES)
def test_rms_norm_dtypes_as_torch(xd, wd, eps, monkeypatch):
    """Result dtype (the input's), graph (ToCopyBackward0 when it casts), values and gradients (small inputs: the
    default eps is float32's for half types), and torch's warning for a half input with a float32 weight."""
    x_np = np.random.default_rng(1).standard_normal((3, 8)).astype(np.float32) * 0.01
    from torchlike import _warnings
    monkeypatch.setattr(_warnings, "_warned", set())
    seen = []
    for m in (tl, torch):
        x = m.tensor(x_np).to(getattr(m, xd)).requires_grad_()
        w = None if wd is None else m.linspace(0.5, 1.5, 8).to(getattr(m, wd)).requires_grad_()
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            y = m.nn.functional.rms_norm(x, (8,), w, eps)
        y.float().square().sum().backward()
        seen.append((str(y.dtype).split(".")[-1], y.grad_fn.name(), y.detach().double().numpy(),
                     x.grad.double().numpy()))
        if m is tl:  # (torch warns once a process, whichever call came first)
            assert [str(a.message).split(",")[0] for a in ws] == ([] if wd in (None, xd) else [
                f"Mismatch dtype between input and weight: input dtype = {tl.ops.linalg._CPP_NAMES[xd]}"])
    assert seen[0][:2] == seen[1][:2]
    tol = 2e-2 if "16" in xd else 1e-5
    np.testing.assert_allclose(seen[0][2], seen[1][2], rtol=tol, atol=tol)
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=tol, atol=tol * np.abs(seen[1][3]).max())


_BF16_CASES = [  # ops that tested a dtype's NumPy kind for "f" and so took bfloat16 (kind "V") for something else
    "m.histc(b, 4)", "m.sign(m.tensor([-0.0, float('nan'), -2.0]).bfloat16())",
    "m.zeros(3).bfloat16().index_reduce(0, m.tensor([0, 0, 1]), m.tensor([1.0, 2.0, 3.0]).bfloat16(), 'amax')",
    "m.zeros(3).bfloat16().index_reduce(0, m.tensor([0, 0, 1]), m.tensor([1.0, 2.0, 3.0]).bfloat16(), 'amin', "
    "include_self=False)",
    "b.reshape(2, 2).clone().apply_(lambda v: v * 2)", "m.bincount(m.tensor([0, 1, 1]), weights=b[:3])",
    "m.cdist(b.reshape(2, 2), b.reshape(2, 2))", "m.cdist(b.reshape(2, 2).half(), b.reshape(2, 2).half())",
    "m.cdist(b.reshape(2, 2).float(), b.reshape(2, 2))", "m.cdist(b.reshape(2, 2).float(), b.reshape(2, 2).double())",
    "m.nn.functional.pdist(b.reshape(2, 2))", "m.nn.functional.cosine_similarity(b.reshape(2, 2), b.reshape(2, 2))",
]


@pytest.mark.parametrize("expr", _BF16_CASES)
def test_bfloat16_is_a_floating_type_everywhere(expr):
    seen = []
    for m in (tl, torch):
        b = m.tensor([0.5, -1.0, 0.0, 2.0]).bfloat16()  # noqa: F841 - used by the expressions
        try:
            r = eval(expr)  # noqa: S307 - fixed test expressions
            seen.append((str(r.dtype).split(".")[1], r.float().tolist()))
        except Exception as e:  # noqa: BLE001 - an error is an outcome to compare
            seen.append((type(e).__name__, str(e)))
    assert seen[0] == seen[1]


_NORMS = {  # f(module, x, w): half inputs with float32 (CPU autocast's) or half parameters
    "layer_norm": lambda m, x, w: m.nn.functional.layer_norm(x, (8,), w, None if w is None else w * 0.5),
    "group_norm": lambda m, x, w: m.nn.functional.group_norm(x.reshape(3, 4, 2), 2, None if w is None else w[:4],
                                                             None if w is None else w[:4] * 0.5),
    "sdpa": lambda m, x, w: m.nn.functional.scaled_dot_product_attention(
        x.reshape(1, 3, 2, 4), x.reshape(1, 3, 2, 4) * 0.5, x.reshape(1, 3, 2, 4),
        attn_mask=None if w is None else w[:4].reshape(2, 2)),
}


@pytest.mark.parametrize("xd,wd", [("bfloat16", "float32"), ("bfloat16", "bfloat16"), ("bfloat16", None),
                                   ("float16", "float32"), ("float32", "float32")])
@pytest.mark.parametrize("name", list(_NORMS))
def test_normalizations_of_half_types_as_torch(name, xd, wd):
    """layer_norm / group_norm of a half input with float32 parameters (torch's CPU mixed dtype: what autocast
    gives a LayerNorm after a Linear) computed in float32, the result in the input's dtype, the parameters'
    gradients in theirs; sdpa of half inputs (a float32 additive mask too) in float32 as torch's flash kernel."""
    x0 = np.random.default_rng(2).standard_normal((3, 8)).astype(np.float32)
    seen = []
    for m in (tl, torch):
        x = m.tensor(x0).to(getattr(m, xd)).requires_grad_()
        w = None if wd is None else m.linspace(0.5, 1.5, 8).to(getattr(m, wd)).requires_grad_()
        y = _NORMS[name](m, x, w)
        y.float().square().sum().backward()
        seen.append((str(y.dtype).split(".")[1], y.grad_fn.name(), str(x.grad.dtype).split(".")[1],
                     y.detach().float().numpy(), x.grad.float().numpy()))
    assert seen[0][:3] == seen[1][:3]
    tol = 2e-2 if "16" in xd else 1e-5
    np.testing.assert_allclose(seen[0][3], seen[1][3], rtol=tol, atol=tol)
    np.testing.assert_allclose(seen[0][4], seen[1][4], rtol=tol, atol=tol * np.abs(seen[1][4]).max())
