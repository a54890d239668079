"""torch's at::pad (F.pad): constant (ConstantPadNdBackward0), reflect / replicate (ReflectionPad{1,2,3}DBackward0,
ReplicationPad{1,2,3}DBackward0) and circular (copies into a new tensor: CopySlices, as torch). An op family of the
table, as ATen's: torch.stft pads its signal with it, torch.fft's lengths and istft's window with constant_pad_nd;
torchlike.nn.functional exposes ``pad``."""
import jax
import jax.numpy as jnp
import numpy as np

from . import _layout as layout
from ._registry import op, _apply as apply


def _pad_cfg(ndim, pad):
    """torch's pad list ((left, right) pairs from the last dim backwards) as per-dim (low, high) pairs."""
    cfg = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        cfg[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return cfg


@op("ConstantPadNdBackward0", save=(), attrs=("pad",), unsigned=("pad",), layout=layout.suggested)
def _constant_pad(self, *, pad, value):
    return jax.lax.pad(self, jnp.asarray(value, self.dtype), [(lo, hi, 0) for lo, hi in _pad_cfg(self.ndim, pad)])


@_constant_pad.derivative
def _(grad, pad):
    return jax.lax.pad(grad, jnp.zeros((), grad.dtype), [(-lo, -hi, 0) for lo, hi in _pad_cfg(grad.ndim, pad)])


def _gather_pad(x, padding, mode):
    """Reflect / replicate padding (negative entries crop) as one gather per padded dim."""
    for d, (lo, hi) in enumerate(_pad_cfg(x.ndim, padding)):
        if lo or hi:
            n = x.shape[d]
            i = np.arange(-lo, n + hi)
            i = np.clip(i, 0, n - 1) if mode == "edge" else np.where(i < 0, -i, np.where(i >= n, 2 * (n - 1) - i, i))
            x = jnp.take(x, i, axis=d)
    return x


def _pad_op(name, mode):
    def forward(self, *, padding):
        return _gather_pad(self, padding, mode)
    return op(name, save=("self",), attrs=("padding",), unsigned=("padding",), layout=layout.suggested)(forward)


_PAD_OPS = {(m, nd): _pad_op(f"{name}Pad{nd}DBackward0", m) for nd in (1, 2, 3)
            for m, name in (("reflect", "Reflection"), ("edge", "Replication"))}

_SUPPORTED = ("Supported combinations for non-constant padding:\n"
              "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
              "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
              "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _circular(input, pad):
    """torch's _pad_circular: copy the input into a new tensor, then copy its wrapped edges (CopySlices)."""
    nd = len(pad) // 2
    shape = list(input.shape)
    for i in range(nd):
        d = input.ndim - 1 - i
        if pad[2 * i] > shape[d] or pad[2 * i + 1] > shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        shape[d] += pad[2 * i] + pad[2 * i + 1]
    out = input.new_empty(shape)
    out_slice, in_slice = out, input
    for i in range(nd):
        d, lo, hi = input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        out_slice = out_slice.narrow(d, max(lo, 0), shape[d] - max(lo, 0) - max(hi, 0))
        in_slice = in_slice.narrow(d, max(-lo, 0), input.shape[d] - max(-lo, 0) - max(-hi, 0))
    out_slice.copy_(in_slice)
    for i in range(nd):
        d, lo, hi = input.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]
        if lo > 0:
            out.narrow(d, 0, lo).copy_(out.narrow(d, shape[d] - lo - max(hi, 0), lo))
        if hi > 0:
            out.narrow(d, shape[d] - hi, hi).copy_(out.narrow(d, max(lo, 0), hi))
    return out


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``'s last ``len(pad) // 2`` dims by ``pad`` = (left, right, top, bottom, ...), as torch's F.pad.

    ``mode``: "constant" (with ``value``, default 0; negative entries crop), "reflect", "replicate", "circular".
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    if mode == "constant":
        return apply(_constant_pad, (input,), (pad, 0 if value is None else value))
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pad) // 2
    if nd not in (1, 2, 3) or input.ndim not in (nd + 1, nd + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
                                  f"{_SUPPORTED}")
    if mode == "circular":
        return _circular(input, pad)
    for i in range(nd):
        d = input.ndim - 1 - i
        if mode == "reflect" and (pad[2 * i] >= input.shape[d] or pad[2 * i + 1] >= input.shape[d]):
            raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the corresponding input "
                               f"dimension, but got: padding ({pad[2 * i]}, {pad[2 * i + 1]}) at dimension {d} of "
                               f"input {list(input.shape)}")
    return apply(_PAD_OPS["reflect" if mode == "reflect" else "edge", nd], (input,), (pad,))


def _pad(input, pad_, mode):
    """The padding of ConvNd's non-zero padding modes."""
    return pad(input, pad_, mode)
