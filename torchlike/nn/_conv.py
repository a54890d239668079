"""conv1d/2d/3d and conv_transpose1d/2d/3d: one op (ConvolutionBackward0) for every rank, as torch's
``convolution``; unbatched input is unsqueezed / squeezed, and padding="same" with an asymmetric pad goes
through F.pad (ConstantPadNdBackward0), as torch."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import CPP_TYPE_NAMES, apply, layout, op, type_word
from ..ops import _registry, shape as _shape
from ._padding import _constant_pad

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]

_HIGHEST = jax.lax.Precision.HIGHEST
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _conv(x, w, stride, padding, dilation, groups, transposed, output_padding):
    nd = x.ndim - 2
    sp = _SPATIAL[nd]
    pad = padding * nd if len(padding) == 1 else padding  # padding="valid" is saved as (0,), as torch
    dn = ("NC" + sp, "OI" + sp, "NC" + sp)
    if not transposed:
        return jax.lax.conv_general_dilated(x, w, stride, [(p, p) for p in pad], rhs_dilation=dilation,
                                            dimension_numbers=dn, feature_group_count=groups, precision=_HIGHEST)
    cin, cout_g, *k = w.shape  # (C_in, C_out / groups, k...) -> (C_out, C_in / groups, k...), flipped
    w = w.reshape(groups, cin // groups, cout_g, *k).swapaxes(1, 2).reshape(groups * cout_g, cin // groups, *k)
    w = jnp.flip(w, tuple(range(2, w.ndim)))
    op_ = output_padding * nd if len(output_padding) == 1 else output_padding
    pads = [(d * (k_ - 1) - p, d * (k_ - 1) - p + o) for d, k_, p, o in zip(dilation, k, pad, op_)]
    return jax.lax.conv_general_dilated(x, w, (1,) * nd, pads, lhs_dilation=stride, rhs_dilation=dilation,
                                        dimension_numbers=dn, feature_group_count=groups, precision=_HIGHEST)


@op("ConvolutionBackward0", save=("input", "weight"), layout=layout.convolution,
    attrs=("stride", "padding", "dilation", "transposed", "output_padding", "groups"),
    saved={"bias_sym_sizes_opt": lambda node, saved: tuple(node._in_meta[2].shape) if node._in_meta[2] is not None
           else (0,)})
def _convolution(input, weight, bias, *, stride, padding, dilation, transposed, output_padding, groups):
    out = _conv(input, weight, stride, padding, dilation, groups, transposed, output_padding)
    return out if bias is None else out + bias.reshape((-1,) + (1,) * (out.ndim - 2))


@_convolution.derivative
def _(grad, input, weight, stride, padding, dilation, transposed, output_padding, groups):
    _, vjp = jax.vjp(lambda x, w: _conv(x, w, stride, padding, dilation, groups, transposed, output_padding),
                     input, weight)
    gx, gw = vjp(grad)  # XLA drops the half nobody asked for
    return gx, gw, jnp.sum(grad, (0,) + tuple(range(2, grad.ndim)))


def _conv_param(value, k, name):
    """torch's expand_param_if_needed: an int or a 1-element list binds to all ``k`` spatial dims."""
    value = (int(value),) * k if isinstance(value, (int, np.integer)) else tuple(int(v) for v in value)
    if len(value) == 1:
        return value * k
    if len(value) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={list(value)}")
    return value


def _cpp_name(t):
    return CPP_TYPE_NAMES[np.dtype(t._data.dtype).name]


def _check_conv(x, weight, bias, stride, padding, dilation, groups, transposed, output_padding):
    """torch's convolution checks, in torch's order (x is batched)."""
    nd = x.ndim - 2
    if bias is not None and bias._data.dtype != x._data.dtype:
        raise RuntimeError(f"Input type ({_cpp_name(x)}) and bias type ({_cpp_name(bias)}) should be the same")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if weight.ndim != nd + 2:  # stride, padding and dilation given as 1-element lists got this far
        _conv_param((0,) * nd, weight.ndim - 2, "output_padding")
    if not transposed and weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")
    if transposed and x.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} channels "
                           f"instead")
    if not transposed and x.shape[1] != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(x.shape)} to have {weight.shape[1] * groups} channels, but got {x.shape[1]} "
                           f"channels instead")
    cout = weight.shape[1] * groups if transposed else weight.shape[0]
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != cout):
        raise RuntimeError(f"Given {'transposed=1, ' if transposed else ''}weight of size {list(weight.shape)}, "
                           f"expected bias to be 1-dimensional with {cout} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if not transposed:
        pad = padding * nd if len(padding) == 1 else padding
        padded = [n + 2 * p for n, p in zip(x.shape[2:], pad)]
        kernel = [d * (n - 1) + 1 for d, n in zip(dilation, weight.shape[2:])]
        if any(k_ > p_ for k_, p_ in zip(kernel, padded)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                               f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual "
                               f"input size")
    if x._data.dtype != weight._data.dtype:
        if x._data.dtype == np.float32:
            raise RuntimeError(f"Input type (torch.{type_word(x)}Tensor) and weight type (torch.{type_word(weight)}"
                               f"Tensor) should be the same or input should be a MKLDNN tensor and weight is a dense "
                               f"tensor")
        raise RuntimeError(f"expected scalar type {type_word(x)} but found {type_word(weight)}")
    if any(d <= 0 for d in dilation):  # the float64 kernel words it differently
        if x._data.dtype == np.float64:
            raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
        raise RuntimeError("non-positive dilation is not supported")
    if transposed and any(o >= s and o >= d for o, s, d in zip(output_padding, stride, dilation)):
        words = ("depth", "height", "width")[3 - nd:] if nd > 1 else ("height", "width")
        lead = (1,) * (len(words) - nd)  # conv_transpose1d runs as a 2-d kernel of height 1
        parts = [f"{what}_{w}: {v}" for what, vals in (("output_padding", (0,) * len(lead) + tuple(output_padding)),
                                                       ("stride", lead + tuple(stride)),
                                                       ("dilation", lead + tuple(dilation)))
                 for w, v in zip(words, vals)]
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but got {' '.join(parts)}")


def _batched(input, nd, name):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got input of "
                           f"size: {list(input.shape)}")
    return input.ndim == nd + 2


def _autocast(input, weight, bias):
    """Under autocast, a convolution's operands in its dtype before any check (torch casts at conv2d's entry)."""
    if _registry._composite_cast is None:
        return input, weight, bias
    return _registry._composite_cast("convolution", (input, weight, bias))


def _convnd(nd, name, input, weight, bias, stride, padding, dilation, groups):
    batched = _batched(input, nd, name)
    input, weight, bias = _autocast(input, weight, bias)
    k = weight.ndim - 2
    stride = _conv_param(stride, k, "stride")
    dilation = _conv_param(dilation, k, "dilation")
    mode = None
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        if padding == "same" and any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        mode = padding
        padding = (0,) * k
    else:
        padding = _conv_param(padding, k, "padding")
    x = input if batched else _shape.unsqueeze(input, 0)
    output_padding = (0,) * nd
    if mode == "valid":  # torch calls convolution(..., padding={0}, output_padding={0})
        padding = output_padding = (0,)
    elif mode == "same" and weight.ndim == nd + 2:
        total = [d * (n - 1) for d, n in zip(dilation, weight.shape[2:])]
        left = [t // 2 for t in total]
        padding = tuple(left)
        if any(t % 2 for t in total):  # torch pads the extra row/column on the right first
            warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require a zero-padded "
                          "copy of the input be created", stacklevel=3)
            pad = []
            for t, l in zip(reversed(total), reversed(left)):
                pad += [0, t - 2 * l]
            x = apply(_constant_pad, (x,), (tuple(pad), 0))
    _check_conv(x, weight, bias, stride, padding, dilation, groups, False, output_padding)
    out = apply(_convolution, (x, weight, bias), (stride, padding, dilation, False, output_padding, groups))
    return out if batched else _shape.squeeze(out, 0)


def _conv_transposend(nd, name, input, weight, bias, stride, padding, output_padding, groups, dilation):
    batched = _batched(input, nd, name)
    input, weight, bias = _autocast(input, weight, bias)
    k = weight.ndim - 2
    stride, padding = _conv_param(stride, k, "stride"), _conv_param(padding, k, "padding")
    output_padding, dilation = _conv_param(output_padding, k, "output_padding"), _conv_param(dilation, k, "dilation")
    x = input if batched else _shape.unsqueeze(input, 0)
    _check_conv(x, weight, bias, stride, padding, dilation, groups, True, output_padding)
    out = apply(_convolution, (x, weight, bias), (stride, padding, dilation, True, output_padding, groups))
    return out if batched else _shape.squeeze(out, 0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution over (N, C, L) or unbatched (C, L) (ConvolutionBackward0); padding int/"valid"/"same"."""
    return _convnd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over (N, C, H, W) or unbatched (C, H, W) (ConvolutionBackward0); padding int/pair/"valid"/
    "same" (stride 1 only); ``groups`` splits the channels."""
    return _convnd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over (N, C, D, H, W) or unbatched (C, D, H, W) (ConvolutionBackward0)."""
    return _convnd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 1-D convolution; weight (C_in, C_out / groups, kL) (ConvolutionBackward0)."""
    return _conv_transposend(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 2-D convolution; weight (C_in, C_out / groups, kH, kW) (ConvolutionBackward0)."""
    return _conv_transposend(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    """Transposed 3-D convolution; weight (C_in, C_out / groups, kD, kH, kW) (ConvolutionBackward0)."""
    return _conv_transposend(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                             dilation)
