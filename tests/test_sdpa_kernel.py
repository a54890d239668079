"""torch.nn.attention.sdpa_kernel / SDPBackend and torch.backends.cuda's sdp flags against torch 2.13: which backend
scaled_dot_product_attention takes on the CPU (its node), values and second-order gradients under each, the
errors and warnings when the enabled backends cannot run, the flags read back, the deprecated sdp_kernel."""
import warnings

import numpy as np
import pytest
import torch
from torch.nn.attention import SDPBackend as TorchBackend, sdpa_kernel as torch_kernel

import torchlike as tl
from torchlike.nn.attention import SDPBackend, sdpa_kernel

_X = np.random.RandomState(0).randn(1, 2, 4, 8)
_LIBS = {"torchlike": (tl, sdpa_kernel, SDPBackend), "torch": (torch, torch_kernel, TorchBackend)}


def _flags(lib):
    c = lib.backends.cuda
    return (c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.math_sdp_enabled(), c.cudnn_sdp_enabled())


def _script(name):
    lib, kernel, B = _LIBS[name]
    q = lib.tensor(_X, requires_grad=True)
    sdpa = lib.nn.functional.scaled_dot_product_attention
    log = [sdpa(q, q, q).grad_fn.name(), _flags(lib)]
    for backends in (B.MATH, [B.MATH, B.FLASH_ATTENTION], B.FLASH_ATTENTION):
        with kernel(backends):
            r = sdpa(q, q, q)
            (g,) = lib.autograd.grad((r * r).sum(), q, create_graph=True)
            # (torch's CPU flash node has no double backward, torchlike's has: second order on the math path only)
            g2 = lib.autograd.grad(g.pow(2).sum(), q)[0] if r.grad_fn.name() == "UnsafeViewBackward0" else g
            log.append((r.grad_fn.name(), _flags(lib), r.detach().numpy(), g2.detach().numpy()))
            try:  # (3-d: the math path when math is on, else torch's refusal)
                log.append(sdpa(q[0], q[0], q[0]).grad_fn.name())
            except RuntimeError as e:
                log.append(str(e))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for backends in (B.EFFICIENT_ATTENTION, B.FLASH_ATTENTION, []):
            with kernel(backends):
                try:
                    sdpa(q, q, q, dropout_p=0.5)
                except RuntimeError as e:
                    log.append(str(e))
    log.append([str(m.message).split(" (Triggered")[0] for m in w])
    for bad in ("math", 1):
        try:
            with kernel(bad):
                pass
        except AssertionError as e:
            log.append(str(e))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with lib.backends.cuda.sdp_kernel(enable_flash=False):
            log.append((sdpa(q, q, q).grad_fn.name(), _flags(lib)))
    log += [[str(m.message) for m in w], _flags(lib), str(B.MATH), repr(B.FLASH_ATTENTION), int(B.ERROR),
            lib.backends.cuda.is_flash_attention_available()]
    return log


def test_sdpa_kernel_as_torch():
    ours, theirs = _script("torchlike"), _script("torch")
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a, tuple) and len(a) == 4:
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-12)
            np.testing.assert_allclose(a[3], b[3], rtol=1e-10)
        else:
            assert a == b


@pytest.mark.parametrize("priority", [False, True])
def test_flags_come_back_after_the_block(priority):
    before = _flags(tl)
    with pytest.raises(ValueError):
        with sdpa_kernel([SDPBackend.MATH], set_priority=priority):
            assert _flags(tl) == (False, False, True, False)
            raise ValueError
    assert _flags(tl) == before == (True, True, True, True)
