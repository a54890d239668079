"""torchlike.fft against torch.fft 2.13: values, torch's nodes (FftC2C/R2C/C2R, the pad or slice of a requested
length, the conj of an inverse real transform), their saved attributes and the gradients of |y|^2."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same_error

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 6))
C = RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))

CASES = {
    "fft_real": lambda m, x, c: m.fft.fft(x), "fft_real_n": lambda m, x, c: m.fft.fft(x, n=3, dim=0),
    "fft_c_pad_ortho": lambda m, x, c: m.fft.fft(c, n=8, norm="ortho"), "ifft": lambda m, x, c: m.fft.ifft(c, dim=0),
    "ifft_real": lambda m, x, c: m.fft.ifft(x), "rfft": lambda m, x, c: m.fft.rfft(x),
    "rfft_n": lambda m, x, c: m.fft.rfft(x, n=9, norm="ortho"), "irfft": lambda m, x, c: m.fft.irfft(c),
    "irfft_n": lambda m, x, c: m.fft.irfft(c, n=7), "fft2": lambda m, x, c: m.fft.fft2(c),
    "fft2_real": lambda m, x, c: m.fft.fft2(x), "ifft2": lambda m, x, c: m.fft.ifft2(c, norm="ortho"),
    "rfft2": lambda m, x, c: m.fft.rfft2(x, norm="forward"), "irfft2": lambda m, x, c: m.fft.irfft2(c),
    "fftn_s": lambda m, x, c: m.fft.fftn(c, s=(3, 3)),
    "fftn_real_s": lambda m, x, c: m.fft.fftn(x, s=(5, 4), norm="forward"),
    "ifftn_real": lambda m, x, c: m.fft.ifftn(x), "rfftn": lambda m, x, c: m.fft.rfftn(x, dim=(0,)),
    "irfftn": lambda m, x, c: m.fft.irfftn(c, s=(4, 9)), "hfft": lambda m, x, c: m.fft.hfft(c),
    "ihfft": lambda m, x, c: m.fft.ihfft(x), "fftshift": lambda m, x, c: m.fft.fftshift(x),
    "ifftshift": lambda m, x, c: m.fft.ifftshift(x, dim=1),
}


def _np(t):
    return t.detach().resolve_conj().numpy()


def _run(m, name):
    x, c = m.tensor(X, requires_grad=True), m.tensor(C, requires_grad=True)
    y = CASES[name](m, x, c)
    node = y.grad_fn
    seen = (node.name(), [n.name() if n else None for n, _ in node.next_functions],
            {a: getattr(node, a) for a in dir(node) if a.startswith("_saved_") and a != "_saved_self"})
    (y.abs().pow(2).sum() if y.is_complex() else (y * y).sum()).backward()
    return _np(y), str(y.dtype).split(".")[-1], seen, [None if g is None else _np(g) for g in (x.grad, c.grad)]


@pytest.mark.parametrize("name", CASES)
def test_against_torch(name):
    (ty, tdt, tseen, tgrads), (ly, ldt, lseen, lgrads) = _run(torch, name), _run(tl, name)
    assert ly.shape == ty.shape and ldt == tdt and lseen == tseen
    np.testing.assert_allclose(ly, ty, rtol=1e-10, atol=1e-10)
    for lg, tg in zip(lgrads, tgrads):
        assert (lg is None) == (tg is None)
        if tg is not None:
            np.testing.assert_allclose(lg, tg, rtol=1e-9, atol=1e-9)


def test_frequencies_and_float32():
    for n, d in ((5, 1.0), (8, 0.25)):
        np.testing.assert_allclose(tl.fft.fftfreq(n, d).numpy(), torch.fft.fftfreq(n, d).numpy())
        np.testing.assert_allclose(tl.fft.rfftfreq(n, d).numpy(), torch.fft.rfftfreq(n, d).numpy())
    assert tl.fft.fftfreq(4, dtype=tl.float64).dtype == tl.float64
    y = tl.fft.rfft(tl.ones(8))
    assert y.dtype == tl.complex64 and tl.fft.irfft(y).dtype == tl.float32
    assert tl.fft.fft(tl.arange(4)).dtype == tl.complex64  # integers as the default float, as torch


@pytest.mark.parametrize("case", [
    lambda m: m.fft.fft(m.ones(4), norm="bad"),
    lambda m: m.fft.fft(m.ones(4), n=0),
    lambda m: m.fft.fftn(m.ones(4, 4), s=(2,), dim=(0, 1)),
    lambda m: m.fft.rfft(m.ones(4, dtype=m.complex64)),
])
def test_errors_as_torch(case):
    assert_same_error(case)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfftn", "irfftn"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_types_are_refused_as_torch(name, dtype):
    """torch's CPU FFTs refuse half types with its RuntimeError (JAX's ValueError, or a silent float32 result,
    reached users before)."""
    for m in (tl, torch):
        x = m.ones(4, 4, dtype=getattr(m, dtype))
        with pytest.raises(RuntimeError, match=f"^Unsupported dtype {'Half' if dtype == 'float16' else 'BFloat16'}$"):
            getattr(m.fft, name)(x)
