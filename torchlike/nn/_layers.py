"""Layer ops of torchlike.nn.functional: conv2d, max_pool2d, avg_pool2d, layer_norm, batch_norm, embedding,
scaled_dot_product_attention.

Each is one op-table entry with torch's node name and ``_saved_*`` attributes (ConvolutionBackward0,
MaxPool2DWithIndicesBackward0, AvgPool2DBackward0, NativeLayerNormBackward0, NativeBatchNormBackward0,
EmbeddingBackward0, ScaledDotProductFlashAttentionForCpuBackward0), wrapped in the argument handling and the
checks (same exception types and messages) torch does around them. Where torch composes (unbatched conv2d:
unsqueeze / squeeze; padding="same" with an asymmetric pad: ConstantPadNdBackward0; attention outside the
CPU flash kernel's conditions: its math path), torchlike composes the same way.
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import (CPP_TYPE_NAMES, HALF_TYPES, apply, grad_enabled, layout, no_grad, op, opmath,
                         type_word, views, wrap)
from ..ops import linalg as _linalg, shape as _shape
from ..ops.creation import zeros
from ..backends import cuda as _backends_cuda
from ..ops.indexing import _check_bounds
from . import functional as F  # functional imports this module at its end: its names are read at call time
from ._conv import conv2d  # noqa: F401
from ._padding import _constant_pad, _pad  # noqa: F401
from ._pooling import avg_pool2d, max_pool2d  # noqa: F401

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "layer_norm", "batch_norm", "embedding",
           "scaled_dot_product_attention", "multi_head_attention_forward"]

_HIGHEST = jax.lax.Precision.HIGHEST


def _size_str(shape):
    return f"torch.Size({list(shape)})"


def _check_mixed(input, *params, mixed=False):
    """torch's CPU dtype rules for normalisation parameters: the first given one decides whether the call is
    "mixed" (float32 parameters for a bfloat16/float16 input); ``mixed``: the op computes mixed calls (batch_norm,
    which CPU autocast leaves in the input's dtype with the module's float32 parameters), else only unmixed ones."""
    given = [t for t in params if t is not None]
    dt = input._data.dtype
    if given and given[0]._data.dtype != dt:
        if dt not in (np.float32, jnp.bfloat16, np.float16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        if any(t._data.dtype != np.float32 for t in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if mixed:
            return
        raise NotImplementedError("torchlike: float32 parameters for a float16/bfloat16 input (torch's mixed "
                                  "dtype) are not supported; cast them to the input's dtype")
    for t in given:
        if t._data.dtype != dt:
            raise RuntimeError(f"expected scalar type {type_word(input)} but found {type_word(t)}")


# ----- layer_norm --------------------------------------------------------------------------------------------
@op("NativeLayerNormBackward0", save=("input", "weight", "bias", "result1", "result2"),
    outputs=("result", "result1", "result2"), attrs=("normalized_shape",), grad_outputs=1)
def _layer_norm(input, weight, bias, *, normalized_shape, eps):
    """In torch's opmath (half types in float32); mean and rstd in the parameters' dtype (float32 for a mixed
    call), the result in the input's."""
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    x = opmath(input)
    mean = jnp.mean(x, axes, keepdims=True)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(x - mean), axes, keepdims=True) + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * opmath(weight)
    if bias is not None:
        out = out + opmath(bias)
    stat = (weight if weight is not None else bias if bias is not None else input).dtype
    return out.astype(input.dtype), mean.astype(stat), rstd.astype(stat)


@_layer_norm.derivative
def _(grads, input, weight, result1, result2, normalized_shape):
    grad, g_mean, g_rstd = (opmath(g) for g in grads)  # mean and rstd are outputs too: create_graph sends them
    input, result1, result2 = opmath(input), opmath(result1), opmath(result2)  # gradients (each gradient is
    weight = None if weight is None else opmath(weight)  # then cast to its input's dtype)
    axes = tuple(range(input.ndim - len(normalized_shape), input.ndim))
    lead = tuple(range(input.ndim - len(normalized_shape)))
    n = math.prod(normalized_shape)
    xhat = (input - result1) * result2
    gxhat = grad if weight is None else grad * weight
    gx = result2 * (gxhat - jnp.mean(gxhat, axes, keepdims=True)
                    - xhat * jnp.mean(gxhat * xhat, axes, keepdims=True))
    gx = gx + (g_mean - g_rstd * jnp.square(result2) * xhat) / n
    return gx, jnp.sum(grad * xhat, lead), jnp.sum(grad, lead)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift (NativeLayerNormBackward0)."""
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(f"layer_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not "
                        f"{type(normalized_shape).__name__}")
    ns = tuple(int(n) for n in normalized_shape)
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(t.shape)} and normalized_shape = {list(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*, "
                           f"{', '.join(map(str, ns))}], but got input of size{list(input.shape)}")
    _check_mixed(input, weight, bias, mixed=True)
    return apply(_layer_norm, (input, weight, bias), (ns, float(eps)))[0]


# ----- batch_norm --------------------------------------------------------------------------------------------
def _bn_view(v, ndim):
    return v.reshape((1, -1) + (1,) * (ndim - 2))


def _bn_dtype(input, weight, running_mean):
    """The dtype batch norm computes in: its parameters' (float32 for a mixed call: torch's opmath), else the input's."""
    given = weight if weight is not None else running_mean
    return input.dtype if given is None else given.dtype


@op("NativeBatchNormBackward0", save=("input", "weight", "running_mean", "running_var", "result1", "result2"),
    nondiff=("running_mean", "running_var"), outputs=("result", "result1", "result2"), attrs=("training", "eps"),
    grad_outputs=1, layout=layout.normalized)
def _batch_norm(input, weight, bias, running_mean, running_var, *, training, eps):
    axes = (0,) + tuple(range(2, input.ndim))
    x = input.astype(_bn_dtype(input, weight, running_mean))  # (a mixed call: the result in the input's dtype)
    if training:
        mean = jnp.mean(x, axes)
        invstd = jax.lax.rsqrt(jnp.mean(jnp.square(x - _bn_view(mean, x.ndim)), axes) + eps)
        saved = (mean, invstd)
    else:
        mean, invstd = running_mean, jax.lax.rsqrt(running_var + eps)
        saved = (jnp.zeros((0,), x.dtype),) * 2
    scale = invstd if weight is None else invstd * weight
    out = (x - _bn_view(mean, x.ndim)) * _bn_view(scale, x.ndim)
    if bias is not None:
        out = out + _bn_view(bias, x.ndim)
    return (out.astype(input.dtype),) + saved


@_batch_norm.derivative
def _(grads, input, weight, running_mean, running_var, result1, result2, training, eps):
    grad, g_mean, g_invstd = grads  # save_mean / save_invstd get gradients under create_graph
    cdt = _bn_dtype(input, weight, running_mean)  # (a mixed call: computed in float32, each gradient then cast to
    input, grad = input.astype(cdt), grad.astype(cdt)  # its input's dtype by the table)
    nd = input.ndim
    axes = (0,) + tuple(range(2, nd))
    if training:
        mean, invstd = result1, result2
    else:
        mean, invstd = running_mean, jax.lax.rsqrt(running_var + eps)
    xhat = (input - _bn_view(mean, nd)) * _bn_view(invstd, nd)
    gb = jnp.sum(grad, axes)
    gw = jnp.sum(grad * xhat, axes)
    scale = invstd if weight is None else invstd * weight
    if training:
        n = input.size // input.shape[1]
        gx = _bn_view(scale, nd) * (grad - _bn_view(gb / n, nd) - xhat * _bn_view(gw / n, nd))
        gx = gx + (_bn_view(g_mean, nd) - _bn_view(g_invstd * jnp.square(invstd), nd) * xhat) / n
    else:
        gx = grad * _bn_view(scale, nd)
    return gx, gw, gb


@jax.jit
def _bn_running(running_mean, running_var, mean, invstd, momentum, eps, n):
    """torch's running-statistics update; the batch variance is recovered from the saved invstd (unbiased)."""
    var = (1 / jnp.square(invstd) - eps) * (n / jnp.maximum(n - 1, 1))
    m = momentum.astype(running_mean.dtype)
    return ((1 - m) * running_mean + m * mean.astype(running_mean.dtype),
            (1 - m) * running_var + m * var.astype(running_var.dtype))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """Batch normalisation over dim 1 (NativeBatchNormBackward0). In training, normalise by the batch statistics
    and update ``running_mean``/``running_var`` in place (no version bump, as torch); else use them.

    Checks in torch's order (its _batch_norm_impl_index): an empty input is returned at once (a clone, times
    ``weight[0]``, plus ``bias[0]``: the other arguments go unchecked); then running_mean's size (or, in evaluation,
    that it is given), running_var's, weight's, bias's; then that the running statistics are both given or neither.
    """
    if training:
        size = tuple(input.shape)
        if size[0] * math.prod(size[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{_size_str(size)}")
    if momentum is None or isinstance(momentum, bool) or not isinstance(momentum, (int, float)):
        raise TypeError(f"batch_norm(): argument 'momentum' (position 7) must be float, not "
                        f"{type(momentum).__name__}")
    if input.numel() == 0:  # (no statistics to take: the running ones are left as they are)
        out = input.clone()
        if weight is not None:
            out = out * weight.select(0, 0)  # (C++'s weight[0]: select's error for an empty weight)
        return out if bias is None else out + bias.select(0, 0)
    c = input.shape[1] if input.ndim > 1 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight),
                    ("bias", bias)):
        if t is None and not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    if input.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")
    _check_mixed(input, weight, bias, running_mean, running_var, mixed=True)
    out, mean, invstd = apply(_batch_norm, (input, weight, bias, running_mean, running_var),
                               (bool(training), float(eps)))
    if training and running_mean is not None:
        n = input.numel() // max(c, 1)
        dt = running_mean._data.dtype
        rm, rv = _bn_running(running_mean._data, running_var._data, mean._data, invstd._data,
                             np.asarray(momentum, dt), np.asarray(eps, dt), np.asarray(n, dt))
        views._write_quiet(running_mean, rm)
        views._write_quiet(running_var, rv)
    return out


# ----- embedding ---------------------------------------------------------------------------------------------
@op("EmbeddingBackward0", save=("indices",), nondiff=("indices",),
    attrs=("padding_idx", "scale_grad_by_freq", "sparse"), unsigned=("padding_idx",),
    saved={"weight_sym_argsize_0": lambda node, saved: node._in_meta[0].shape[0]})
def _embedding(weight, indices, *, padding_idx, scale_grad_by_freq, sparse):
    return jnp.take(weight, indices, axis=0)


@_embedding.derivative
def _(grad, indices, weight_shape, padding_idx, scale_grad_by_freq):
    idx = indices.reshape(-1)
    g = grad.reshape(idx.shape[0], math.prod(weight_shape[1:]))  # (not -1: no rows gives no size to infer)
    if padding_idx >= 0:
        g = jnp.where((idx == padding_idx)[:, None], 0, g)
    if scale_grad_by_freq:
        counts = jnp.zeros(weight_shape[0], g.dtype).at[idx].add(1)
        g = g / counts[idx][:, None]
    return jnp.zeros(weight_shape, g.dtype).at[idx].add(g), None


@jax.jit
def _renorm_rows(weight, indices, max_norm, norm_type):
    norms = jnp.sum(jnp.abs(weight) ** norm_type, 1) ** (1 / norm_type)
    used = jnp.zeros(weight.shape[0], bool).at[indices.reshape(-1)].set(True)
    scale = jnp.where(used & (norms > max_norm), max_norm / (norms + 1e-7), 1)
    return weight * scale[:, None].astype(weight.dtype)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` picked by the integer ``input`` (EmbeddingBackward0). ``padding_idx``'s row gets no
    gradient; ``max_norm`` renormalises the picked rows of ``weight`` in place first, as torch.

    ``sparse=True`` is recorded on the node, but the gradient is dense (torchlike has no sparse tensors).
    """
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    if input._data.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{type_word(input)}Tensor instead (while checking arguments for "
                           f"embedding)")
    _check_bounds(input, weight.shape[0], 0, IndexError, msg="index out of range in self")
    if max_norm is not None:
        with no_grad():  # torch.embedding_renorm_: an in-place write (version bump) outside autograd
            views._commit(weight, _renorm_rows(weight._data, input._data, jnp.asarray(max_norm, weight._data.dtype),
                                                jnp.asarray(norm_type, weight._data.dtype)))
    return apply(_embedding, (weight, input), (int(padding_idx), bool(scale_grad_by_freq), bool(sparse)))


# ----- scaled_dot_product_attention --------------------------------------------------------------------------
def _attn_scores(query, key, attn_mask, is_causal, scale):
    """Scaled scores (B, H, L, S) with the causal / additive mask; key repeated for grouped-query heads."""
    rep = query.shape[1] // key.shape[1]
    if rep > 1:
        key = jnp.repeat(key, rep, axis=1)
    s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = jnp.einsum("bhle,bhse->bhls", query, key, precision=_HIGHEST) * jnp.asarray(s, query.dtype)
    if is_causal:
        L, S = scores.shape[-2:]
        scores = jnp.where(np.tril(np.ones((L, S), bool)), scores, -jnp.inf)
    if attn_mask is not None:
        scores = scores + attn_mask.astype(query.dtype)
    return scores


def _repeat_heads(x, rep):
    return jnp.repeat(x, rep, axis=1) if rep > 1 else x


def _sum_heads(g, heads):
    b, h = g.shape[:2]
    return g.reshape((b, heads, h // heads) + g.shape[2:]).sum(2) if h != heads else g


@op("ScaledDotProductFlashAttentionForCpuBackward0",
    save=("query", "key", "value", "attn_mask", "output", "logsumexp"), nondiff=("attn_mask",),
    outputs=("output", "logsumexp"), attrs=("dropout_p", "is_causal", "scale"))
def _flash(query, key, value, attn_mask, *, dropout_p, is_causal, scale):
    """In torch's opmath (half types in float32, as torch's CPU kernel): the output in the query's dtype, logsumexp
    in float32."""
    dtype = query.dtype
    query, key, value = opmath(query), opmath(key), opmath(value)
    attn_mask = None if attn_mask is None else opmath(attn_mask)
    scores = _attn_scores(query, key, attn_mask, is_causal, scale)
    top = jnp.max(scores, -1, keepdims=True)
    top = jnp.where(jnp.isfinite(top), top, 0)
    p = jnp.exp(scores - top)
    total = jnp.sum(p, -1, keepdims=True)
    empty = total == 0  # a fully masked row: output 0 and logsumexp 0, as torch's CPU kernel
    v = _repeat_heads(value, query.shape[1] // value.shape[1])
    out = jnp.einsum("bhls,bhse->bhle", p / jnp.where(empty, 1, total), v, precision=_HIGHEST)
    lse = jnp.where(empty, 0, top + jnp.log(jnp.where(empty, 1, total)))[..., 0]
    return out.astype(dtype), lse


@_flash.derivative
def _(grads, query, key, value, attn_mask, output, logsumexp, is_causal, scale):
    g, g_lse = (opmath(t) for t in grads)  # logsumexp is an output too: create_graph sends it a gradient
    query, key, value, output = opmath(query), opmath(key), opmath(value), opmath(output)  # (float32; each
    attn_mask = None if attn_mask is None else opmath(attn_mask)  # gradient is then cast to its input's dtype)
    rep = query.shape[1] // key.shape[1]
    scores = _attn_scores(query, key, attn_mask, is_causal, scale)
    p = jnp.exp(scores - logsumexp[..., None])
    p = jnp.where(jnp.isneginf(scores), 0, p)
    s = jnp.asarray(1 / math.sqrt(query.shape[-1]) if scale is None else scale, query.dtype)
    dv = jnp.einsum("bhls,bhle->bhse", p, g, precision=_HIGHEST)
    dp = jnp.einsum("bhle,bhse->bhls", g, _repeat_heads(value, rep), precision=_HIGHEST)
    ds = p * (dp - jnp.sum(g * output, -1, keepdims=True) + g_lse[..., None]) * s
    dq = jnp.einsum("bhls,bhse->bhle", ds, _repeat_heads(key, rep), precision=_HIGHEST)
    dk = jnp.einsum("bhls,bhle->bhse", ds, query, precision=_HIGHEST)
    return dq, _sum_heads(dk, key.shape[1]), _sum_heads(dv, value.shape[1])


@op("SafeSoftmaxBackward0", save=("result",), attrs=("dim",), unsigned=("dim",))
def _safe_softmax(self, *, dim):
    top = jnp.max(self, dim, keepdims=True)
    p = jnp.exp(self - jnp.where(jnp.isfinite(top), top, 0))
    total = jnp.sum(p, dim, keepdims=True)
    return jnp.where(total == 0, 0, p / jnp.where(total == 0, 1, total))


@_safe_softmax.derivative
def _(grad, result, dim):
    return result * (grad - jnp.sum(grad * result, dim, keepdims=True))


@jax.jit
def _bool_to_additive(mask, like):
    """A bool "take part" mask as an additive float mask in ``like``'s dtype (False -> -inf)."""
    return jnp.where(mask, jnp.zeros((), like.dtype), -jnp.inf).astype(like.dtype)


@jax.jit
def _bool_to_penalty(mask, like):
    """A bool "masked out" mask (torch.nn's convention) as an additive float mask (True -> -inf)."""
    return jnp.where(mask, -jnp.inf, jnp.zeros((), like.dtype)).astype(like.dtype)


def _flash_refusal(q, k, v, mask, dropout_p, enable_gqa):
    """Why torch 2.13's CPU flash kernel cannot run this call (None: it can): its check's text where torch's
    debug warning gives one."""
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        return (f"All fused kernels requires query, key and value to be 4 dimensional, but got Query dim: {q.ndim}, "
                f"Key dim: {k.ndim}, Value dim: {v.ndim} instead.")
    if dropout_p != 0.0:
        return "Both fused kernels do not support non-zero dropout."
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1]) or 0 in (q.shape[-2], k.shape[-2]):
        return "Flash attention requires q,k,v to have the same last dimension and non-empty sequences."
    if not (q.shape[0] == k.shape[0] == v.shape[0]) or k.shape[1] != v.shape[1]:
        return "Flash attention requires query, key and value to have the same batch size."
    if q.shape[1] != k.shape[1] and not (enable_gqa and q.shape[1] % k.shape[1] == 0):
        return "Flash attention requires query, key and value to have the same number of heads."
    if mask is not None and (mask.ndim not in (2, 4) or (mask._requires_grad and grad_enabled())):
        return "Flash attention does not support this attention mask."
    if not (q._data.dtype in (np.float32, np.float64) or q._data.dtype in HALF_TYPES):
        return "Flash attention does not support this dtype."
    return None


def _sdpa_backend(query, key, value, attn_mask, dropout_p, enable_gqa):
    """torch's CPU choice (select_sdp_backend_cpp): flash when enabled and possible, else math when enabled, else
    its errors (with its warning of why flash could not run, when flash was the one enabled)."""
    sdp = _backends_cuda._SDP
    refusal = _flash_refusal(query, key, value, attn_mask, dropout_p, enable_gqa)
    if sdp["flash"] and refusal is None:
        return "flash"
    if sdp["math"]:
        return "math"
    if sdp["flash"]:
        warnings.warn("Flash attention kernel not used because:", stacklevel=3)
        warnings.warn(refusal, stacklevel=3)
        raise RuntimeError("No available kernel.  Aborting execution.")
    raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is likely due to turning "
                       "off both the math kernel and the fused kernels.")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    """softmax(query @ key^T * scale + mask) @ value, as torch on CPU: 4-D inputs without dropout run as one op
    (ScaledDotProductFlashAttentionForCpuBackward0); other cases, and every case under
    ``torch.nn.attention.sdpa_kernel(SDPBackend.MATH)``, follow torch's math path op by op.

    ``attn_mask``: bool (True = take part) or additive float, broadcastable to (..., L, S); ``is_causal``: the
    lower-triangular (top-left aligned) mask; ``scale``: default 1/sqrt(E); ``enable_gqa``: key/value with
    fewer heads, each shared by a group of query heads.
    """
    dts = [t._data.dtype for t in (query, key, value)]
    if not dts[0] == dts[1] == dts[2]:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{CPP_TYPE_NAMES[np.dtype(dts[0]).name]} key.dtype: {CPP_TYPE_NAMES[np.dtype(dts[1]).name]} and "
                           f"value.dtype: {CPP_TYPE_NAMES[np.dtype(dts[2]).name]} instead.")
    if attn_mask is not None:
        md = attn_mask._data.dtype
        if md not in (np.bool_, np.float32, dts[0]):
            raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {CPP_TYPE_NAMES[np.dtype(md).name]} and  query.dtype: "
                               f"{CPP_TYPE_NAMES[np.dtype(dts[0]).name]} instead.")
        if is_causal:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        if md == np.bool_:
            attn_mask = wrap(_bool_to_additive(attn_mask._data, query._data))
    if enable_gqa and query.ndim >= 3 and key.ndim >= 3 and query.shape[-3] % key.shape[-3]:
        raise RuntimeError("Number of heads in key and value must divide the number of heads in ")
    if _sdpa_backend(query, key, value, attn_mask, dropout_p, enable_gqa) == "flash":
        statics = (float(dropout_p), bool(is_causal), None if scale is None else float(scale))
        return apply(_flash, (query, key, value, attn_mask), statics)[0]
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """torch's _scaled_dot_product_attention_math, op by op: half types computed in float32 (ToCopyBackward0 in
    and out, as torch's)."""
    origin = query.dtype
    if query._data.dtype in HALF_TYPES:
        query, key, value = query.float(), key.float(), value.float()
    s = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    root = math.sqrt(abs(s))
    q = apply(F._mul_scalar, (query,), (-root if s < 0 else root,))
    if is_causal:
        L, S = query.shape[-2], key.shape[-2]
        attn_mask = wrap(_bool_to_additive(np.tril(np.ones((L, S), bool)), query._data))
    if enable_gqa and query.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key = _repeat_interleave(key, rep)
        value = _repeat_interleave(value, rep)
    attn = _linalg.matmul(q, apply(F._mul_scalar, (key.transpose(-2, -1),), (root,)))
    if attn_mask is not None:
        attn = attn + attn_mask
    attn = apply(_safe_softmax, (attn,), (-1,))
    if dropout_p > 0.0:
        attn = F.dropout(attn, dropout_p, True)
    return _linalg.matmul(attn, value).to(origin)


def _repeat_interleave(x, rep):
    """x.repeat_interleave(rep, dim=-3) from views: (..., H, L, E) -> (..., H, 1, L, E) -> expand -> reshape."""
    shape = tuple(x.shape)
    y = _shape.unsqueeze(x, -3).expand(*shape[:-2], rep, *shape[-2:])
    return y.reshape(*shape[:-3], shape[-3] * rep, *shape[-2:])


# ----- multi_head_attention_forward --------------------------------------------------------------------------
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """torch's mask canonicalisation: a bool mask becomes an additive float mask (True -> -inf)."""
    if mask is None:
        return None
    is_float = mask._data.dtype.kind == "f"
    if mask._data.dtype != np.bool_ and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask._data.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      f"instead.", stacklevel=3)
    if not is_float:
        mask = wrap(_bool_to_penalty(mask._data, np.zeros((), target_type)))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(f"For batched (3-D) `query`, expected `key` and `value` to be 3-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError(f"For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D but "
                                 f"found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D but "
                                 f"found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key` and `value` to be 2-D but found "
                                 f"{key.dim()}-D and {value.dim()}-D tensors respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError(f"For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D "
                                 f"but found {key_padding_mask.dim()}-D tensor instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError(f"For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D "
                                     f"but found {attn_mask.dim()}-D tensor instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query "
                         f"tensor")


def _in_projection_packed(q, k, v, w, b):
    E = q.size(-1)
    if k is v:
        if q is k:
            proj = F.linear(q, w, b).unflatten(-1, (3, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
            return proj[0], proj[1], proj[2]
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        kv = F.linear(k, w_kv, b_kv).unflatten(-1, (2, E)).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return F.linear(q, w_q, b_q), kv[0], kv[1]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _in_projection(q, k, v, w_q, w_k, w_v, b_q, b_k, b_v):
    Eq, Ek, Ev = q.size(-1), k.size(-1), v.size(-1)
    for name, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)), ("key bias", b_k, (Eq,)),
                           ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {name} shape of {shape}, but got {t.shape}")
    return F.linear(q, w_q, b_q), F.linear(k, w_k, b_k), F.linear(v, w_v, b_v)


def _mask_pad(mask):
    """F.pad(mask, (0, 1)): one more key column that every query may attend to."""
    return apply(_constant_pad, (mask,), ((0, 1), 0))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """torch.nn.functional.multi_head_attention_forward on (L, N, E) / unbatched (L, E) inputs, composed of
    torchlike ops as torch composes it (bmm + softmax with need_weights, else scaled_dot_product_attention)."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask._data.dtype, "attn_mask",
                                       query._data.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention makes the causal mask itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query._data.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be "
                                   f"{(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be "
                               f"{(bsz * num_heads, tgt_len, src_len)}.")
    if bias_k is not None and bias_v is not None:
        k = _shape.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _shape.cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else _mask_pad(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _mask_pad(key_padding_mask)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")
    q = q.view(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = k.view(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.view(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = _shape.cat([k, zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)], 1)
        v = _shape.cat([v, zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype)], 1)
        attn_mask = None if attn_mask is None else _mask_pad(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _mask_pad(key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.shape[-1]))
        if attn_mask is not None:
            weights = _linalg.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = _linalg.bmm(q_scaled, k.transpose(-2, -1))
        weights = weights.softmax(-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = _linalg.bmm(weights, v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.view(bsz, num_heads, -1, src_len)
    q = q.view(bsz, num_heads, tgt_len, head_dim)
    k = k.view(bsz, num_heads, src_len, head_dim)
    v = v.view(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, -1)
    return (out.squeeze(1) if not batched else out), None
