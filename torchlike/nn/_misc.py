"""Channel-wise and alpha dropout (composed, as torch: input * noise [+ b]), embedding_bag (EmbeddingBagBackward0),
bilinear (TrilinearBackward0 between views), pairwise_distance (NormBackward1) and cosine_similarity (composed)."""
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _lazy
from .._internal import OpDef, OpNode, apply, broadcast_batch, grad_enabled, no_grad, op, type_word, views, wrap
from ..ops import creation as _creation, reduction as _reduction
from ..ops.indexing import _check_bounds
from ._layers import _renorm_rows
from . import _losses
from ..ops.other import cosine_similarity  # noqa: F401  (torch.nn.functional.cosine_similarity is torch's)

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "embedding_bag",
           "bilinear", "pairwise_distance", "cosine_similarity"]

_ALPHA = 1.7580993408473766


@functools.partial(jax.jit, static_argnames=("shape", "dtype", "alpha"))
def _noise(key, p, *, shape, dtype, alpha):
    """torch's _dropout_impl noise: keep/(1-p), or for alpha dropout (keep * a, (keep - 1) * alpha * a + alpha*a*p).
    ``p`` is traced (a float64 array: the same draws as a Python float), so a dropout schedule compiles nothing."""
    keep = jax.random.bernoulli(key, 1 - p, shape).astype(dtype)
    if not alpha:
        return keep * (1 / (1 - p)).astype(dtype), None
    a = 1 / jnp.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    return keep * a.astype(dtype), (keep - 1) * (_ALPHA * a).astype(dtype) + (_ALPHA * a * p).astype(dtype)


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout_impl(input, p, training, inplace, feature, alpha):
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = wrap(jnp.zeros((), input._data.dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else tuple(input.shape)
    noise, b = _noise(_creation._key(None), _lazy._number(float(p)), shape=shape, dtype=input._data.dtype, alpha=alpha)
    out = input.mul_(wrap(noise)) if inplace else input * wrap(noise)
    return out if b is None else out.add_(wrap(b))


def _feature(name, input, p, training, inplace, dims):
    _check_p(p)
    batched = input.ndim == dims + 2
    if input.ndim not in (dims + 1, dims + 2):
        if dims == 1:
            raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                               f"dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, "
                               f"a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
        import warnings
        warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is deprecated and will result in an "
                      f"error in a future release. To retain the behavior and silence this warning, please use "
                      f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
                      f"{dims} spatial dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{dims + 1}D or {dims + 2}D inputs).", stacklevel=3)
        batched = True
    elif dims == 2 and input.ndim == 3:
        import warnings
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "This behavior will change in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please "
                      "switch to using dropout1d instead.", stacklevel=3)
        batched = True
    x = input if batched else input.unsqueeze(0)
    out = _dropout_impl(x, p, training, inplace, True, False)
    return out if batched else out.squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) / (C, L) with probability p, scaling the rest by 1/(1-p)."""
    return _feature("dropout1d", input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) / (C, H, W) with probability p, scaling the rest by 1/(1-p)."""
    return _feature("dropout2d", input, p, training, inplace, 2)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) / (C, D, H, W) with probability p, scaling the rest by 1/(1-p)."""
    return _feature("dropout3d", input, p, training, inplace, 3)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout that keeps SELU's self-normalising mean and variance (input * a*keep + b)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """alpha_dropout of whole channels."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, True, True)


# ----- embedding_bag -----------------------------------------------------------------------------------------
def _raising(name, error, inputs):
    """torch's node for a gradient it cannot differentiate (the gradient passes through; its backward raises)."""
    def derivative(grads):
        raise error
    entry = OpDef(name, lambda result, *args: result, inputs=("result",) + inputs, statics=(), save=(),
                  nondiff=("result",), runs_first=name.startswith("torch::"))
    entry.derivative(derivative)
    return entry


_BAG_WEIGHT = _raising("EmbeddingBagBackwardBackward0", NotImplementedError(
    "the derivative for '_embedding_bag_backward' is not implemented."), ("grad", "per_sample_weights"))
_BAG_PSW = _raising("torch::autograd::NotImplemented", RuntimeError(
    "derivative for aten::_embedding_bag_per_sample_weights_backward is not implemented"), ("grad", "weight"))


def _embedding_bag_apply(node, grads, mask=None):
    """Under create_graph torch's gradients hang off nodes whose backward raises: EmbeddingBagBackwardBackward0
    (edges: the gradient, per_sample_weights) for weight's, NotImplemented (the gradient, weight) for
    per_sample_weights'."""
    if not grad_enabled():
        return OpNode._apply(node, grads, mask)
    with no_grad():
        outs = OpNode._apply(node, grads, mask)
    saved = {s[0]: k for k, s in enumerate(node._op.saves)}
    weight, psw = (node._for_backward[saved[n]] for n in ("weight", "per_sample_weights"))
    weight, psw = (None if s is None else s.unpack(node) for s in (weight, psw))
    return [None if outs[0] is None else apply(_BAG_WEIGHT, (outs[0], grads[0], psw), ()),
            None if outs[1] is None else apply(_BAG_PSW, (outs[1], grads[0], weight), ())]


@op("EmbeddingBagBackward0", outputs=("result", "result1", "result2", "result3"),
    save=("weight", "indices", "offsets", "per_sample_weights", "result1", "result2", "result3"),
    nondiff=("indices", "offsets", "result1", "result2", "result3"),
    attrs=("mode", "padding_idx", "scale_grad_by_freq", "sparse"), unsigned=("padding_idx",),
    node_apply=_embedding_bag_apply,
    saved={"weight_sym_argsize_0": lambda node, saved: node._in_meta[0].shape[0],  # (torch saves weight only
           "weight": (lambda node, saved: saved["weight"] if node._mask[1] else None,  # for per_sample_weights'
                      lambda node, raw: raw["weight"] if node._mask[1] else None)})  # gradient)
def _embedding_bag(weight, indices, offsets, per_sample_weights, *, mode, padding_idx, scale_grad_by_freq, sparse,
                   include_last_offset):
    """The bags, and torch's offset2bag, bag_size and max_indices (empty / zeros where its CPU kernel leaves them
    so: offset2bag on its fast float sum path, bag_size in "sum" mode, max_indices = bag_size in "mean" mode).
    With ``include_last_offset``, as torch's CPU kernel: offset2bag, bag_size and "max" run the last bag to the
    end of ``indices``, "sum" and "mean" sum up to the last offset ("mean" divides by that bag_size)."""
    n = indices.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    seg = jnp.maximum(jnp.searchsorted(offsets[:bags], jnp.arange(n), side="right") - 1, 0)
    valid = indices != padding_idx
    rows = jnp.take(weight, indices, axis=0)
    if scale_grad_by_freq:  # same value; the gradient of each row divided by its index's count, as torch
        count = jnp.zeros(weight.shape[0], weight.dtype).at[indices].add(1)[indices][:, None]
        fixed = jax.lax.stop_gradient(rows)
        rows = fixed + (rows - fixed) / count
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    fast = mode == 0 and padding_idx < 0 and weight.dtype in (jnp.float32, jnp.float16, jnp.bfloat16)
    offset2bag = jnp.zeros(0, indices.dtype) if fast else seg.astype(indices.dtype)
    size = jax.ops.segment_sum(valid.astype(indices.dtype), seg, bags)
    if mode == 2:
        dseg = jnp.where(valid, seg, bags)  # padding entries go to a dropped extra bag
        low = jnp.asarray(-jnp.inf, weight.dtype)
        top = jax.ops.segment_max(jnp.where(valid[:, None], rows, low), dseg, bags + 1)[:bags]
        first = jax.ops.segment_min(jnp.where(valid[:, None] & (rows == top[seg]), jnp.arange(n)[:, None], n),
                                    dseg, bags + 1)[:bags]  # the first entry holding each bag's max
        where = jnp.take(jnp.append(indices, 0), jnp.minimum(first, n))
        return jnp.where(jnp.isneginf(top), 0, top), offset2bag, size, where.astype(indices.dtype)
    if include_last_offset:
        valid = valid & (jnp.arange(n) < offsets[-1])
    total = jax.ops.segment_sum(jnp.where(valid[:, None], rows, 0), jnp.where(valid, seg, bags), bags + 1)[:bags]
    if mode == 1:
        total = total / jnp.maximum(size, 1)[:, None].astype(weight.dtype)
        return total, offset2bag, size, size
    zeros = jnp.zeros(bags, indices.dtype)
    return total, offset2bag, zeros, zeros


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Sums, means or maxes of bags of embedding rows (EmbeddingBagBackward0): ``input`` (B, L) is B bags of L,
    or 1-D with ``offsets`` the start of each bag; ``per_sample_weights`` scale the rows (mode "sum")."""
    if weight.dtype == np.int64 and input._data.dtype.kind == "f":
        raise RuntimeError("embedding_bag: weight and input look swapped")
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not None, then "
                         f"it must have the same shape as the input ({list(input.shape)})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type <class 'torch.Tensor'>")
        b, l = input.shape
        offsets = wrap(jnp.arange(0, b * l, l, dtype=input._data.dtype) if l else jnp.zeros(b, input._data.dtype))
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  f"GitHub.")
    if input._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{type_word(input)}Tensor instead (while checking arguments for "
                           f"embedding_bag)")
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += weight.shape[0]
    if max_norm is not None:
        with no_grad():  # torch.embedding_renorm_: an in-place write outside autograd
            views._commit(weight, _renorm_rows(weight._data, input._data, jnp.asarray(max_norm, weight._data.dtype),
                                                jnp.asarray(norm_type, weight._data.dtype)))
    _check_bounds(input, weight.shape[0], 0, IndexError, msg="index out of range in self")
    return apply(_embedding_bag, (weight, input, offsets, per_sample_weights),
                 (modes[mode], int(padding_idx), bool(scale_grad_by_freq), bool(sparse), bool(include_last_offset)))[0]


# ----- bilinear, distances -----------------------------------------------------------------------------------
@op("TrilinearBackward0", save=("i1", "i2", "i3"), attrs=("expand1", "expand2", "expand3", "sumdim"))
def _trilinear(i1, i2, i3, *, expand1, expand2, expand3, sumdim):
    return jnp.einsum("bi,oij,bj->bo", i1, i2, i3, precision=jax.lax.Precision.HIGHEST)


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = input1 @ weight[o] @ input2 + bias[o]`` (TrilinearBackward0 between views, as torch)."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got {list(input1.shape[:-1])} and "
                           f"{list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but expected "
                           f"{weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but expected "
                           f"{weight.shape[2]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    out = apply(_trilinear, (x1, weight, x2), ((1, 3), (0,), (1, 2), (2, 3)))
    out = out.reshape(*input1.shape[:-1], weight.shape[0])
    return out if bias is None else out + bias


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dim, as torch: norm (NormBackward1) of (x1 - x2 + eps) (AddBackward1)."""
    return _losses._pairwise_distance(x1, x2, p, eps, keepdim)
