"""torch.nn.modules._functions: CrossMapLRN2d, the legacy cross-channel local response norm as torch's custom
autograd Function (node CrossMapLRN2dBackward), with its window sums and its hand-written backward: both are Lua
Torch's, whose windows are not symmetric (nor each other's transpose), so the gradient is torch's, not the
forward's exact derivative."""
import numpy as np

from ..._grad_mode import is_grad_enabled
from ...autograd.function import Function
from ...ops import creation as _creation, linalg as _linalg


def _forward_window(channels, size):
    """Which squares each channel's scale sums: torch's running sum (add the next, drop one behind)."""
    pre_pad = int((size - 1) / 2 + 1)
    m = np.zeros((channels, channels))
    m[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre_pad + 1:
            m[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            m[c, c - pre_pad] -= 1
    return m


def _backward_window(channels, size):
    """Which ratios each channel's gradient sums: torch's window over its zero-padded ratios."""
    inverse_pre_pad = int(size - (size - 1) / 2)
    if inverse_pre_pad + channels > channels + size - 1:  # (torch's narrow of the padded ratios fails)
        raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds dimension size "
                           f"({channels + size - 1}).")
    c = np.arange(channels)
    return ((c[None] >= c[:, None] - inverse_pre_pad) & (c[None] <= c[:, None] + size - 1 - inverse_pre_pad)) * 1.0


def _over_channels(window, x):
    """window (C, C) applied along the channel dim of x (N, C, H, W)."""
    return _linalg.einsum("dc,nchw->ndhw", _creation.tensor(window, dtype=x.dtype), x)


class CrossMapLRN2d(Function):
    """x / (k + alpha / size * sum of x ** 2 over a window of channels) ** beta, as torch's legacy Function."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        ctx.scale = _over_channels(_forward_window(input.size(1), size), input * input) * (alpha / size) + k
        output = ctx.scale.pow(-beta) * input
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        window = _backward_window(input.size(1), ctx.size)
        if is_grad_enabled():  # (torch's backward writes into out= tensors, which refuse to record)
            raise RuntimeError("mul(): functions with out=... arguments don't support automatic differentiation, but "
                               "one of the arguments requires grad.")
        accum = _over_channels(window, grad_output * output / ctx.scale)
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / ctx.size) * input * accum
        return grad_input, None, None, None, None
