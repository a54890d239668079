"""Max unpooling (MaxUnpool{2,3}DBackward0; the 1-d form is the 2-d one over an unsqueezed width-1 dim, as torch)
and fractional max pooling (FractionalMaxPool{2,3}DBackward0).

Unpooling reads its indices' values to check them, as torch's kernel does (under torchlike.compile the check is in
the program; under other JAX transforms it is skipped). Fractional pooling's windows start where torch's
generate_intervals puts them, computed from the random samples in their own dtype (rounded as torch's Half and
BFloat16 arithmetic rounds), so given the same ``_random_samples`` the results and indices are torch's."""
import collections.abc
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import apply, layout, op, type_word
from ..ops import _util, creation as _creation, shape as _shape
from ._pooling import _channels_last, _ints, _new_shape, _nonempty, _scatter
from .functional import _not_differentiable

__all__ = ["max_unpool1d", "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


def _tuple(v, n):
    """torch.nn.modules.utils._ntuple: an iterable as a tuple, anything else repeated ``n`` times."""
    return tuple(v) if isinstance(v, collections.abc.Iterable) else (v,) * n


def _planes(shape, nd):
    """(number of planes, elements per plane) of an array whose last ``nd`` dims are pooled."""
    return math.prod(shape[:len(shape) - nd]), math.prod(shape[len(shape) - nd:])


# ----- max_unpool ------------------------------------------------------------------------------------------------
def _unpool_forward(self, indices, *, output_size, channels_last):
    """Each input value to its flat index within its output plane, zeros elsewhere (bad indices are dropped: the
    caller raises for them)."""
    nd = len(output_size)
    n, plane = _planes(self.shape, nd)
    size = math.prod(output_size)
    idx = indices.reshape(n, plane)
    idx = jnp.where((idx >= 0) & (idx < size), idx, size)
    out = jnp.zeros((n, size), self.dtype).at[jnp.arange(n)[:, None], idx].set(self.reshape(n, plane), mode="drop")
    return out.reshape(self.shape[:self.ndim - nd] + tuple(output_size))


def _unpool_backward(grad, indices, output_size):
    """torch's max_pool_double_backward: the gradient at each index."""
    n, plane = _planes(indices.shape, len(output_size))
    g = grad.reshape(n, math.prod(output_size))
    return jnp.take_along_axis(g, indices.reshape(n, plane), 1, mode="clip").reshape(indices.shape)


def _unpool_op(nd):
    kernel = f"max_unpool{nd}d"
    entry = op(f"MaxUnpool{nd}DBackward0", save=("indices",), nondiff=("indices",),
               layout=layout.suggested if nd == 2 else None,
               refuse={"biuc": lambda statics, args: None if 0 in args[0].shape[:-nd] + statics["output_size"] else
                       kernel + "_channels_last" if statics["channels_last"] else kernel})(_unpool_forward)
    entry.derivative(_unpool_backward)
    return entry


_UNPOOL = {nd: _unpool_op(nd) for nd in (2, 3)}


def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    """torch.nn.functional._unpool_output_size."""
    size = input.shape
    default = [(size[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(len(kernel_size))]
    if output_size is None:
        ret = default
    else:
        if len(output_size) == len(kernel_size) + 2:
            output_size = output_size[2:]
        if len(output_size) != len(kernel_size):
            raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} or "
                             f"{len(kernel_size) + 2} elements, but it has a length of '{len(output_size)}'")
        for d in range(len(kernel_size)):
            low, high = default[d] - stride[d], default[d] + stride[d]
            if not low < output_size[d] < high:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
        ret = output_size
    for d in range(len(kernel_size)):
        if ret[d] < 0:
            raise ValueError(f"max_unpooling: output_size must contain non-negative spatial dimensions, but got "
                             f"output_size[{d}]={ret[d]}")
    return ret


def _check_indices(indices, nd, output_size, channels_last):
    """torch's kernel's check of the indices: the last invalid one (in the input's memory order) is named."""
    size = math.prod(output_size)
    message = f"Found an invalid max index: {{v}} (output volumes are of size {'x'.join(map(str, output_size))})"
    data = indices._data
    if isinstance(data, jax.core.Tracer):
        flat = data.ravel()
        bad = (flat < 0) | (flat >= size)
        _util.check_later(bad.any(), RuntimeError, message, flat[flat.size - 1 - jnp.argmax(bad[::-1])])
        return
    a = np.asarray(data)
    if a.size == 0 or (a.min() >= 0 and a.max() < size):
        return
    flat = (a.transpose(0, 2, 3, 1) if channels_last else a).ravel()
    bad = np.nonzero((flat < 0) | (flat >= size))[0]
    raise RuntimeError(message.format(v=flat[bad[-1]]))


def _max_unpool(nd, input, indices, output_size, stride):
    """torch's max_unpooling2d/3d_forward_out_cpu: its checks, the op, then the kernel's index check."""
    name = f"max_unpooling{nd}d"
    if indices._data.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64" +
                           (f" but got: {type_word(indices)}" if nd == 2 else ""))
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to {name} should be a {nd + 1}d or {nd + 2}d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    if input.shape != indices.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(input.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    _nonempty(input, f"{name}_forward_out_cpu()", " got ", ".")
    if nd == 3 and min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    size = tuple(int(v) for v in output_size)
    channels_last = nd == 2 and layout.suggested_format(input) is not None
    out = apply(_UNPOOL[nd], (input, indices), (size, _channels_last(input)))
    if out.numel():
        _check_indices(indices, nd, size, channels_last)
    return out


def _unpool_args(nd, input, kernel_size, stride, padding, output_size):
    k = _tuple(kernel_size, nd)
    s = _tuple(stride, nd) if stride is not None else k
    p = _tuple(padding, nd)
    return _unpool_output_size(input, k, s, p, output_size), s


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool2d (MaxUnpool2DBackward0): each value to its index in a zero output of
    ``output_size`` (default: the size max_pool2d came from, without ceil_mode's remainder)."""
    size, _ = _unpool_args(2, input, kernel_size, stride, padding, output_size)
    return _max_unpool(2, input, indices, size, None)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool3d (MaxUnpool3DBackward0)."""
    size, s = _unpool_args(3, input, kernel_size, stride, padding, output_size)
    return _max_unpool(3, input, indices, size, s)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """The partial inverse of max_pool1d: max_unpool2d over an unsqueezed width-1 dim, as torch."""
    size, _ = _unpool_args(1, input, kernel_size, stride, padding, output_size)
    out = _max_unpool(2, _shape.unsqueeze(input, -1), _shape.unsqueeze(indices, -1), tuple(size) + (1,), None)
    return _shape.squeeze(out, -1)


# ----- fractional max pooling ------------------------------------------------------------------------------------
_BITS = {jnp.float16: (5, 10), jnp.bfloat16: (8, 7)}  # torch's Half / BFloat16 arithmetic rounds each result


def _intervals(sample, n_in, n_out, k):
    """torch's generate_intervals for each plane's sample ((P,) -> (P, n_out) window starts), in the sample's
    dtype."""
    last = jnp.full(sample.shape + (min(n_out, 1),), n_in - k, jnp.int64)
    if n_out <= 1:
        return last
    bits = _BITS.get(sample.dtype.type)
    ct = jnp.float32 if bits else sample.dtype

    def rnd(v):
        v = jnp.asarray(v, ct)
        return jax.lax.reduce_precision(v, *bits) if bits else v
    alpha = rnd(rnd(n_in - k) / rnd(n_out - 1))
    s = rnd(sample)[:, None]
    seq = (rnd(rnd(rnd(np.arange(n_out - 1)) + s) * alpha).astype(jnp.int32)
           - rnd(s * alpha).astype(jnp.int32)).astype(jnp.int64)
    return jnp.concatenate([seq, last], 1)


def _first_max_or_last_nan(win):
    """torch's pick in a window (last axis): the first maximum, or the last NaN."""
    nan = jnp.isnan(win)
    last_nan = win.shape[-1] - 1 - jnp.argmax(nan[..., ::-1], -1)
    return jnp.where(nan.any(-1), last_nan, jnp.argmax(win, -1))


def _fractional_forward(self, samples, *, kernel_size, output_size):
    nd = len(kernel_size)
    lead, sizes = self.shape[:self.ndim - nd], self.shape[self.ndim - nd:]
    n, plane = _planes(self.shape, nd)
    s = samples[:lead[0] if len(lead) == 2 else 1].reshape(n, nd)
    columns = (1, 0) if nd == 2 else (0, 1, 2)  # the sample of each pooled dim (2-d: the first is the width's)
    starts, windows = 0, 0
    for j, (size, o, k) in enumerate(zip(sizes, output_size, kernel_size)):
        stride = math.prod(sizes[j + 1:])
        start = _intervals(s[:, columns[j]], size, o, k)
        shape = [n] + [o if i == j else 1 for i in range(nd)]
        starts = starts + start.reshape(shape) * stride
        windows = windows + (np.arange(max(k, 0)) * stride).reshape([max(k, 0) if i == j else 1 for i in range(nd)])
    shape = (n, math.prod(output_size))
    if min(kernel_size) <= 0:  # (an empty window: torch's -inf at the window's start)
        out = jnp.full(shape, -jnp.inf, self.dtype)
        idx = jnp.broadcast_to(starts, (n,) + tuple(output_size)).reshape(shape)
    else:
        flat = (starts.reshape(shape + (1,)) + jnp.asarray(windows.ravel())).astype(jnp.int64)
        win = jnp.take_along_axis(self.reshape(n, plane), flat.reshape(n, math.prod(flat.shape[1:])), 1)
        win = win.reshape(flat.shape)
        pick = _first_max_or_last_nan(win)[..., None]
        out = jnp.take_along_axis(win, pick, -1)[..., 0]
        idx = jnp.take_along_axis(flat, pick, -1)[..., 0]
    shape = lead + tuple(output_size)
    return out.reshape(shape), idx.reshape(shape)


def _fractional_op(nd):
    entry = op(f"FractionalMaxPool{nd}DBackward0", save=("self", "result1"), nondiff=("samples",),
               outputs=("result", "result1"), attrs=("kernel_size", "output_size"))(_fractional_forward)
    entry.derivative(lambda grads, self, result1, kernel_size: _scatter(grads[0], result1, self.shape,
                                                                         len(kernel_size)))
    return entry


_FRACTIONAL = {nd: _fractional_op(nd) for nd in (2, 3)}


def _fractional(nd, input, kernel_size, output_size, samples):
    """torch's fractional_max_pool2d/3d: its checks (the meta function's, then the samples'), then the op."""
    fn = f"fractional_max_pool{nd}d"
    k = _ints(fn, "kernel_size", 2, kernel_size, nd)
    size = _ints(fn, "output_size", 3, output_size, nd)
    _not_differentiable(fn, "random_samples", samples)
    three = "" if nd == 2 else "three "
    if len(k) != nd:
        raise RuntimeError(f"{fn}: kernel_size must either be a single Int or tuple of {three}Ints")
    if len(size) != nd:
        raise RuntimeError(f"{fn}: output_size must either be a single Int or tuple of {three}Ints")
    what = f"{fn}()" if nd == 2 else f"{fn}_out()"
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{what}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {list(input.shape)}")
    _nonempty(input, what, " got", ".")
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    for j in (0, 1) if nd == 2 else (0, 2, 1):  # (torch's order)
        n = input.shape[input.ndim - nd + j]
        if (size[j] + k[j] - 1 > n) if nd == 2 else (k[j] > n or size[j] + k[j] - 1 >= n):
            raise RuntimeError(f"{what}: pool {names[j]} {k[j]} too large relative to input {names[j]} {n}")
    _new_shape(input.shape[:-nd] + size)
    if samples._data.dtype != input._data.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch, channels = (1, input.shape[0]) if input.ndim == nd + 1 else input.shape[:2]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got {samples.shape[2]}.")
    if input._data.dtype.kind in "biuc" and math.prod(input.shape[:-nd] + size):  # (the kernel runs: refuses)
        raise NotImplementedError(f"\"{fn}_out_frame\" not implemented for '{type_word(input)}'")
    return apply(_FRACTIONAL[nd], (input, samples), (k, size))


def _fractional_samples(nd, input, samples):
    """The given ``_random_samples``, or torch's draw of them: uniform [0, 1) from the default generator."""
    if samples is not None:
        return samples
    n_batch = 1 if input.dim() == nd + 1 else input.size(0)
    return _creation.rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """2-D fractional max pooling (FractionalMaxPool2DBackward0) and the flat h * W + w index of each maximum:
    kH x kW windows at pseudo-random starts that give ``output_size`` (or ``output_ratio`` of the input's size)."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = _tuple(output_ratio, 2)
        output_size = [int(input.size(-2) * ratio[0]), int(input.size(-1) * ratio[1])]
    return _fractional(2, input, kernel_size, output_size, _fractional_samples(2, input, _random_samples))


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """3-D fractional max pooling (FractionalMaxPool3DBackward0) and the flat (t * H + h) * W + w index of each
    maximum."""
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        ratio = _tuple(output_ratio, 3)
        output_size = [int(input.size(-3) * ratio[0]), int(input.size(-2) * ratio[1]),
                       int(input.size(-1) * ratio[2])]
    return _fractional(3, input, kernel_size, output_size, _fractional_samples(3, input, _random_samples))


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """2-D fractional max pooling; ``return_indices=True``: also the indices (see
    fractional_max_pool2d_with_indices)."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    """3-D fractional max pooling; ``return_indices=True``: also the indices."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]
