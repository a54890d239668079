"""Pooling: max / avg (MaxPool{2,3}DWithIndicesBackward0, AvgPool{2,3}DBackward0), adaptive avg / max
(AdaptiveAvgPool{2,3}DBackward0, AdaptiveMaxPool{2,3}DBackward0) and lp pooling (composed, as torch). The 1-d forms
unsqueeze, run the 2-d op and squeeze, as torch. The max poolings' ``*_with_indices`` forms are what their
``return_indices=True`` runs (torch's functions of those names).

torch's CPU kernels refuse integer and bool inputs but these (``refuse=`` of each op): avg pooling takes int64, max
pooling every integer type, adaptive pooling none. A 2-d kernel refused for a channels-last input is named
``..._channels_last``: the ops' static ``channels_last`` carries that (``_channels_last``)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import apply, layout, op, type_word
from ..ops import pointwise as _pw, reduction as _red, shape as _shape

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d_with_indices"]

_WORDS = {1: "one", 2: "two", 3: "three"}
_MEAN_REFUSAL = (RuntimeError, "mean(): could not infer output dtype. Input dtype must be either a floating point or "
                               "complex dtype. Got: {}")


def _channels_last(input):
    """The static ``channels_last`` of a pooling op: whether torch would run its channels-last kernel (the input's
    suggested memory format is channels-last), which names its refusal of an integer or bool input. A floating
    input is never refused, and gets False: one program serves both layouts."""
    return input._data.dtype.kind in "biu" and layout.suggested_format(input) is not None


def _kernel(name, supported=()):
    """The refusal of a pooling op by torch's kernel ``name`` (``name_channels_last`` for a channels-last input),
    but for the dtypes ``supported``."""
    def refusal(statics, args):
        if args[0].dtype in supported:
            return None
        return name + "_channels_last" if statics["channels_last"] else name
    return refusal


def _ntuple(v, nd):
    return v * nd if len(v) == 1 else v


def _pool_out(size, k, s, p, d, ceil_mode):
    """torch's pooling_output_shape."""
    span = size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)
    out = span // s + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pool_geometry(shape, nd, kernel_size, stride, padding, dilation, ceil_mode):
    k, p, d = _ntuple(kernel_size, nd), _ntuple(padding, nd), _ntuple(dilation, nd)
    s = _ntuple(stride, nd) if stride else k
    out = tuple(_pool_out(n, k_, s_, p_, d_, ceil_mode) for n, k_, s_, p_, d_ in zip(shape[-nd:], k, s, p, d))
    lead = len(shape) - nd
    pads = [(0, 0)] * lead + [(p_, max((o - 1) * s_ + d_ * (k_ - 1) + 1 - n - p_, 0))
                              for n, k_, s_, p_, d_, o in zip(shape[lead:], k, s, p, d, out)]
    return k, s, p, d, out, pads


def _tuple_arg(fn, name, value, nd, allow_empty=False, verb="must either be"):
    if value is None:
        value = ()
    elif isinstance(value, (int, np.integer)):
        value = (int(value),) * nd
    value = tuple(int(v) for v in value)
    if len(value) not in ((0,) if allow_empty else ()) + (1, nd):
        omitted = "omitted, " if allow_empty else ""
        raise RuntimeError(f"{fn}: {name} {verb} {omitted}a single int, or a tuple of {_WORDS[nd]} ints")
    return value


def _pool_params(fn, nd, kernel_size, stride, padding, dilation=1):
    return (_tuple_arg(fn, "kernel_size", kernel_size, nd), _tuple_arg(fn, "stride", stride, nd, True),
            _tuple_arg(fn, "padding", padding, nd), _tuple_arg(fn, "dilation", dilation, nd, verb="must be either"))


def _pool_shape(input, nd, k, s, p, d, ceil_mode, max_pool):
    """torch's pool2d/3d checks; the output size."""
    if max_pool and input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if input.ndim < nd + 1:
        if nd == 3:
            raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(input.ndim, 1)}, "
                         f"{max(input.ndim, 1) - 1}], but got -3)")
    k, s, p, d = _ntuple(k, nd), (_ntuple(s, nd) if s else _ntuple(k, nd)), _ntuple(p, nd), _ntuple(d, nd)
    out = []
    for n, k_, s_, p_, d_ in zip(input.shape[-nd:], k, s, p, d):
        if s_ == 0:
            raise RuntimeError("stride should not be zero")
        if p_ < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {p_}")
        if p_ > ((k_ - 1) * d_ + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p_}, "
                               f"kernel_size={k_} and dilation={d_}")
        out.append(_pool_out(n, k_, s_, p_, d_, ceil_mode))
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {k[0]} kW: {k[-1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {s[0]} dW: {s[-1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {d[0]} dilationW: {d[-1]}")
    sh = input.shape
    if 0 in sh[-nd - 1:] or (input.ndim == nd + 1 and sh[0] == 0):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(sh)}")
    if min(out) < 1:
        if nd == 3 and not max_pool:
            raise RuntimeError(f"input image (T: {sh[-3]} H: {sh[-2]} W: {sh[-1]}) smaller than kernel size (kT: "
                               f"{k[0]} kH: {k[1]} kW: {k[2]})")
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, sh[-nd - 1:]))}). Calculated output size: "
                           f"({'x'.join(map(str, (sh[-nd - 1],) + tuple(out)))}). Output size is too small")
    return tuple(out)


def _argmax_pair(a, b):
    """reduce_window's reducer over (value, flat index): torch's pick is the first maximum, or the last NaN."""
    av, ai = a
    bv, bi = b
    a_nan, b_nan = jnp.isnan(av), jnp.isnan(bv)
    take_b = jnp.where(a_nan | b_nan, b_nan & (~a_nan | (bi > ai)), (bv > av) | ((bv == av) & (bi < ai)))
    return jnp.where(take_b, bv, av), jnp.where(take_b, bi, ai)


def _low(dtype):
    return -jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).min


def _max_pool_forward(nd):
    def forward(self, *, kernel_size, stride, padding, dilation, ceil_mode, channels_last):
        k, s, p, d, out, pads = _pool_geometry(self.shape, nd, kernel_size, stride, padding, dilation, ceil_mode)
        plane = self.shape[-nd:]
        index = jnp.broadcast_to(jnp.arange(math.prod(plane), dtype=jnp.int64).reshape(plane), self.shape)
        one = (1,) * (self.ndim - nd)
        # padding reads (low, int64 max): it never beats an input element, even one equal to low
        return jax.lax.reduce_window((self, index), (jnp.asarray(_low(self.dtype), self.dtype),
                                                     jnp.asarray(np.iinfo(np.int64).max)),
                                     _argmax_pair, one + k, one + s, pads, window_dilation=one + d)
    return forward


def _scatter(grad, idx, shape, nd):
    """Backward of the max poolings: each gradient to its maximum's flat index within its plane."""
    lead = shape[:len(shape) - nd]
    n = math.prod(lead)
    flat = jnp.zeros((n, math.prod(shape[len(lead):])), grad.dtype)
    return flat.at[jnp.arange(n)[:, None], idx.reshape(n, -1)].add(grad.reshape(n, -1)).reshape(shape)


def _max_pool_op(nd, name):
    entry = op(name, save=("self", "result1"), outputs=("result", "result1"),
               attrs=("kernel_size", "stride", "padding", "dilation", "ceil_mode"),
               layout=layout.suggested, refuse={"b": _kernel(f"max_pool{nd}d")})(_max_pool_forward(nd))

    @entry.derivative
    def _(grads, self, result1):
        return _scatter(grads[0], result1, self.shape, nd)
    return entry


_MAX_POOL = {nd: _max_pool_op(nd, f"MaxPool{nd}DWithIndicesBackward0") for nd in (2, 3)}


def _max_poolnd(nd, fn, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    k, s, p, d = _pool_params(fn, nd, kernel_size, stride, padding, dilation)
    _pool_shape(input, nd, k, s, p, d, ceil_mode, True)
    out, indices = apply(_MAX_POOL[nd], (input,), (k, s, p, d, bool(ceil_mode), _channels_last(input)))
    return (out, indices) if return_indices else out


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W) (MaxPool2DWithIndicesBackward0); with
    ``return_indices=True`` also the flat ``h * W + w`` index of each maximum."""
    return _max_poolnd(2, "max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W) (MaxPool3DWithIndicesBackward0)."""
    return _max_poolnd(3, "max_pool3d", input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)


def _one(v):
    return (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)


def _via_2d(input, fn, name):
    """``fn`` of ``input`` with an unsqueezed height-1 dim, squeezed again (torch's checkDimRange first; fn None:
    only that)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {name})")
    if fn is None:
        return None
    out = fn(_shape.unsqueeze(input, -2))
    return tuple(_shape.squeeze(o, -2) for o in out) if isinstance(out, tuple) else _shape.squeeze(out, -2)


def _check_1d(fn, name, v):
    """torch's check_1d of an int[1] argument of a 1-d pooling."""
    if len(v) != 1:
        raise RuntimeError(f"{fn}() argument '{name}' should contain one int (got {len(v)})")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """1-D max pooling and the index of each maximum (torch.max_pool1d_with_indices: max_pool2d over an
    unsqueezed height-1 dim); what max_pool1d(return_indices=True) runs."""
    names = ("kernel_size", "stride", "padding", "dilation")
    k, s, p, d = (_ints("max_pool1d_with_indices", n, i + 2, v, 1) for i, (n, v) in
                  enumerate(zip(names, (kernel_size, () if stride is None else stride, padding, dilation))))
    _via_2d(input, None, "max_pool1d")
    for name, v in zip(names, (k, s or k, p, d)):  # (an empty stride is the kernel size)
        _check_1d("max_pool1d", name, v)
    s = s or k
    return _via_2d(input, lambda x: max_pool2d(x, (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode, True),
                   "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool2d's (output, indices), whatever ``return_indices`` says, as torch's."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    """max_pool3d's (output, indices), whatever ``return_indices`` says, as torch's."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L): max_pool2d over an unsqueezed height-1 dim, as torch."""
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    k, p, d = _one(kernel_size), _one(padding), _one(dilation)
    s = k if stride is None or _one(stride) == () else _one(stride)
    n = input.shape[-1]
    if (n + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1 < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: "
                           f"{(n + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1}")
    if input._data.dtype.kind in "biu":  # (torch's max_pool1d_impl: floating types only; with indices it runs
        # max_pool2d's kernel, which takes integers; an integer input never requires grad)
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for '{type_word(input)}'")
    return _via_2d(input, lambda x: max_pool2d(x, (1,) + k, (1,) + s, (0,) + p, (1,) + d, ceil_mode), "max_pool1d")


@op("AvgPool2DBackward0", save=("self",), layout=layout.suggested,  # (torch's 3-d pools are row-major but max's)
    attrs=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    refuse={"biu": _kernel("avg_pool2d", (np.int64,))})
def _avg_pool2(self, *, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, channels_last):
    return _avg_forward(2, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


@op("AvgPool3DBackward0", save=("self",),
    attrs=("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"),
    refuse={"biu": lambda statics, args: None if args[0].dtype == np.int64 else "avg_pool3d_out_frame"})
def _avg_pool3(self, *, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, channels_last):
    return _avg_forward(3, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def _avg_forward(nd, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, d, out, pads = _pool_geometry(self.shape, nd, kernel_size, stride, padding, (1,), ceil_mode)
    one = (1,) * (self.ndim - nd)
    total = jax.lax.reduce_window(self, np.zeros((), self.dtype), jax.lax.add, one + k, one + s, pads)
    if divisor_override:
        div = np.full(out, divisor_override)
    else:  # torch: windows clipped to the padded input (count_include_pad) or to the input itself
        div = np.ones((), np.int64)
        for i, (n, k_, s_, p_, o) in enumerate(zip(self.shape[-nd:], k, s, p, out)):
            start = np.arange(o) * s_ - p_
            end = np.minimum(start + k_, n + p_)
            ext = end - start if count_include_pad else np.minimum(end, n) - np.maximum(start, 0)
            div = div[..., None] * ext.reshape((1,) * i + (o,))
    if jnp.issubdtype(self.dtype, jnp.integer):
        return jax.lax.div(total, jnp.broadcast_to(jnp.asarray(div, self.dtype), total.shape))
    return total / jnp.asarray(div, self.dtype)


_AVG_POOL = {2: _avg_pool2, 3: _avg_pool3}


def _avg_poolnd(nd, fn, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override):
    k, s, p, _ = _pool_params(fn, nd, kernel_size, stride, padding)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _pool_shape(input, nd, k, s, p, (1,), ceil_mode, False)
    return apply(_AVG_POOL[nd], (input,), (k, s, p, bool(ceil_mode), bool(count_include_pad),
                                           None if divisor_override is None else int(divisor_override),
                                           _channels_last(input)))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """2-D average pooling over (N, C, H, W) or (C, H, W) (AvgPool2DBackward0)."""
    return _avg_poolnd(2, "avg_pool2d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W) (AvgPool3DBackward0)."""
    return _avg_poolnd(3, "avg_pool3d", input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    """1-D average pooling: avg_pool2d over an unsqueezed height-1 dim, as torch."""
    k, p = _one(kernel_size), _one(padding)
    s = k if stride is None or _one(stride) == () else _one(stride)
    return _via_2d(input, lambda x: avg_pool2d(x, (1,) + k, (1,) + s, (0,) + p, ceil_mode, count_include_pad),
                   "avg_pool1d")


# ----- adaptive pooling --------------------------------------------------------------------------------------
def _windows(n, o):
    i = np.arange(o)
    return (i * n) // o, -((-(i + 1) * n) // o)


def _adaptive_avg(self, *, output_size, channels_last):
    """A box mean is separable: one averaging matrix per pooled dim."""
    nd = len(output_size)
    out = self
    for j, o in enumerate(output_size):
        n = self.shape[self.ndim - nd + j]
        start, end = _windows(n, o)
        cols = np.arange(n)
        m = ((cols >= start[:, None]) & (cols < end[:, None])) / (end - start)[:, None]
        out = jnp.moveaxis(jnp.tensordot(jnp.moveaxis(out, self.ndim - nd + j, -1), jnp.asarray(m, self.dtype).T,
                                         1, precision=jax.lax.Precision.HIGHEST), -1, self.ndim - nd + j)
    return out


def _adaptive_avg_refusal(statics, args):
    """torch's adaptive_avg_pool2d/3d of an integer or bool input: to a single element per plane it is a mean (which
    refuses the dtype); else its kernel refuses it, but for an empty result in 2-d (the kernel does not run)."""
    size = statics["output_size"]
    if all(o == 1 for o in size):
        return _MEAN_REFUSAL
    if len(size) == 3:
        return "adaptive_avg_pool3d_cpu"
    if math.prod(args[0].shape[:-2]) * math.prod(size) == 0:
        return None
    return "adaptive_avg_pool2d_channels_last" if statics["channels_last"] else "adaptive_avg_pool2d"


_ADAPTIVE_AVG = {nd: op(f"AdaptiveAvgPool{nd}DBackward0", save=("self",), layout=layout.suggested if nd == 2 else None,
                        refuse={"biu": _adaptive_avg_refusal})(_adaptive_avg) for nd in (2, 3)}


def _adaptive_max(self, *, output_size, channels_last):
    """The max of each adaptive window and its flat index within the plane (first max; NaN wins, as torch)."""
    nd, lead = len(output_size), self.ndim - len(output_size)
    sizes = self.shape[lead:]
    if 0 in output_size:
        shape = self.shape[:lead] + tuple(output_size)
        return jnp.zeros(shape, self.dtype), jnp.zeros(shape, jnp.int64)
    idx = []  # per pooled dim: (o, k) source indices, broadcast to (o0, k0, o1, k1, ...)
    for j, (n, o) in enumerate(zip(sizes, output_size)):
        start, end = _windows(n, o)
        ij = np.minimum(start[:, None] + np.arange(int(max(end - start))), end[:, None] - 1)  # repeats never win
        idx.append(ij.reshape([ij.shape[0] if i == 2 * j else ij.shape[1] if i == 2 * j + 1 else 1
                               for i in range(2 * nd)]))
    order = [2 * j for j in range(nd)] + [2 * j + 1 for j in range(nd)]  # (o0, o1, ..., k0, k1, ...)
    win = jnp.transpose(self[(Ellipsis,) + tuple(idx)], list(range(lead)) + [lead + i for i in order])
    k = math.prod(i.shape[2 * j + 1] for j, i in enumerate(idx))  # (not -1: an empty batch gives no size to infer)
    win = win.reshape(self.shape[:lead] + tuple(output_size) + (k,))
    flat = np.transpose(sum(i * math.prod(sizes[j + 1:]) for j, i in enumerate(idx)), order)
    flat = jnp.asarray(flat.reshape(tuple(output_size) + (k,)))
    pick = jnp.argmax(win, -1)[..., None]
    return (jnp.take_along_axis(win, pick, -1)[..., 0],
            jnp.take_along_axis(jnp.broadcast_to(flat, win.shape), pick, -1)[..., 0].astype(jnp.int64))


_ADAPTIVE_MAX = {nd: op(f"AdaptiveMaxPool{nd}DBackward0", save=("self", "result1"), outputs=("result", "result1"),
                        layout=layout.suggested if nd == 2 else None,
                        refuse={"biu": _kernel("adaptive_max_pool2d") if nd == 2 else "adaptive_max_pool3d_cpu"})(
    _adaptive_max) for nd in (2, 3)}


def _adaptive_max_backward(nd):
    def backward(grads, self, result1):
        for i in range(1, grads[0].ndim):  # (torch's backward refuses an empty result's gradient)
            if grads[0].shape[i] == 0:
                raise RuntimeError(f"adaptive_max_pool{nd}d_backward(): Expected grad_output to have non-zero size for "
                                   f"non-batch dimensions, but grad_output has sizes {list(grads[0].shape)} with "
                                   f"dimension {i} being empty")
        return _scatter(grads[0], result1, self.shape, nd)
    return backward


for _nd, _entry in _ADAPTIVE_MAX.items():
    _entry.derivative(_adaptive_max_backward(_nd))


def _output_size(output_size, nd, shape):
    size = (output_size,) * nd if isinstance(output_size, (int, np.integer)) or output_size is None \
        else tuple(output_size)
    return tuple(shape[len(shape) - nd + i] if v is None else int(v) for i, v in enumerate(size))


def _adaptive_check(input, nd, fn, colon=""):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} {list(input.shape)}")


def _one_per_plane(input, nd):
    """torch's adaptive average pooling to one element per plane: a mean over the pooled dims (MeanBackward1; its
    error for integers), laid out channels-last again for a channels-last input (AsStridedBackward1)."""
    out = _red.mean(input, tuple(range(-1, -nd - 1, -1)), keepdim=True)
    if input.ndim == nd + 2 and layout.suggested_format(input) is not None:
        n, c = input.shape[:2]
        out.as_strided_((n, c) + (1,) * nd, (c, 1) + (c,) * nd)
    return out


def adaptive_avg_pool2d(input, output_size):
    """Average over adaptive windows to an (oH, oW) output (AdaptiveAvgPool2DBackward0; a mean for 1 x 1, as torch);
    None keeps a size."""
    _adaptive_check(input, 2, "adaptive_avg_pool2d")
    size = _output_size(output_size, 2, input.shape)
    if size == (1, 1):
        return _one_per_plane(input, 2)
    return apply(_ADAPTIVE_AVG[2], (input,), (size, _channels_last(input)))


def adaptive_avg_pool3d(input, output_size):
    """Average over adaptive windows to an (oD, oH, oW) output (AdaptiveAvgPool3DBackward0; a mean for 1 x 1 x 1)."""
    _adaptive_check(input, 3, "adaptive_avg_pool3d")
    size = _output_size(output_size, 3, input.shape)
    if size == (1, 1, 1):
        return _one_per_plane(input, 3)
    return apply(_ADAPTIVE_AVG[3], (input,), (size, _channels_last(input)))


def adaptive_avg_pool1d(input, output_size):
    """adaptive_avg_pool2d over an unsqueezed height-1 dim, as torch."""
    size = _output_size(output_size, 1, input.shape)
    return _via_2d(input, lambda x: adaptive_avg_pool2d(x, (1,) + size), "adaptive_avg_pool1d")


def _ints(fn, name, pos, value, n):
    """An int[n] argument as torch's argument parser takes it: an int (repeated n times) or a sequence of ints."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, not {type(value).__name__}")
    for i, v in enumerate(value):
        if isinstance(v, (int, np.integer)):
            continue
        if i == 0:  # (the parser matches the signature by the first element, then unpacks the rest)
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be tuple of ints, but found element of "
                            f"type {type(v).__name__} at pos 0")
        raise TypeError(f"{fn}(): argument '{name}' failed to unpack the object at pos {i + 1} with error \"type must "
                        f"be tuple of ints,but got {type(v).__name__}\"")
    return tuple(int(v) for v in value)


def _nonempty(input, what, sizes=" input has sizes ", end=""):
    """torch's check that no dim but the batch dim is empty (``what``, ``sizes``, ``end``: its message's words)."""
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            raise RuntimeError(f"{what}: Expected input to have non-zero size for non-batch dimensions, but"
                               f"{sizes}{list(input.shape)} with dimension {i} being empty{end}")


def _new_shape(shape):
    """``shape`` for a new result (torch's error for a negative size)."""
    for n in shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {list(shape)}")
    return shape


def _adaptive_max_pool(nd, input, output_size):
    """torch's adaptive_max_pool2d/3d with _list_with_default's Nones: (output, indices)."""
    fn = f"adaptive_max_pool{nd}d"
    if not isinstance(output_size, (int, np.integer)):
        if input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = [d if v is None else v for v, d in zip(output_size, input.shape[-len(output_size):])]
    size = _ints(fn, "output_size", 2, output_size, nd)
    _adaptive_check(input, nd, fn, ":")
    _nonempty(input, f"{fn}()")
    if len(size) != nd:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
    _new_shape(input.shape[:-nd] + size)
    return apply(_ADAPTIVE_MAX[nd], (input,), (size, _channels_last(input)))


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Max over adaptive windows (AdaptiveMaxPool2DBackward0) and the flat h * W + w index of each maximum."""
    return _adaptive_max_pool(2, input, output_size)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Max over adaptive windows (AdaptiveMaxPool3DBackward0) and the flat (d * H + h) * W + w index of each."""
    return _adaptive_max_pool(3, input, output_size)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """torch.adaptive_max_pool1d: adaptive_max_pool2d over an unsqueezed height-1 dim, and the indices."""
    size = _ints("adaptive_max_pool1d", "output_size", 2, output_size, 1)
    _via_2d(input, None, "adaptive_max_pool1d")
    _check_1d("adaptive_max_pool1d", "output_size", size)
    _nonempty(input, "adaptive_max_pool1d()")
    return _via_2d(input, lambda x: _adaptive_max_pool(2, x, (1,) + size), "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Max over adaptive windows (AdaptiveMaxPool2DBackward0); ``return_indices``: flat h * W + w indices."""
    out = _adaptive_max_pool(2, input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Max over adaptive windows (AdaptiveMaxPool3DBackward0); ``return_indices``: flat (d * H + h) * W + w."""
    out = _adaptive_max_pool(3, input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """adaptive_max_pool2d over an unsqueezed height-1 dim, as torch."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ----- lp pooling (torch composes it) ------------------------------------------------------------------------
def _lp(out, norm_type, n):
    return (_pw.sign(out) * _pw.relu(_pw.abs(out))).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x ** p) ** (1 / p), composed as torch: avg_pool1d of x.pow(p), rescaled."""
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kernel_size)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling, composed as torch: avg_pool2d of x.pow(p), rescaled."""
    kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, (int, np.integer)) else kernel_size
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, kh * kw)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling, composed as torch: avg_pool3d of x.pow(p), rescaled."""
    k = (kernel_size,) * 3 if isinstance(kernel_size, (int, np.integer)) else kernel_size
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, math.prod(k))
