"""torch.nn.functional's losses beyond nll/cross_entropy/mse/l1/bce_with_logits (functional.py).

Losses torch computes as one ATen op with its own backward are one table entry each, with torch's node name and
saved attributes (SmoothL1LossBackward0, HuberLossBackward0, BinaryCrossEntropyBackward0, SoftMarginLossBackward0,
MultiMarginLossBackward0, MultilabelMarginLossBackward0, CtcLossBackward0); the ones torch composes, in C++ (kl_div,
cosine_embedding_loss, margin_ranking_loss, hinge_embedding_loss, triplet_margin_loss, poisson_nll_loss) or in
Python (gaussian_nll_loss, multilabel_soft_margin_loss, triplet_margin_with_distance_loss), are composed of
torchlike's ops the same way, so their graphs match torch's node by node. C++'s ``tensor + scalar`` and
``tensor - scalar`` are their own nodes (AddBackward1, SubBackward1), as ``tensor * scalar`` is (MulBackward1).
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import OpDef, apply, broadcast_batch, no_grad, type_word, wrap
from ..ops import _registry, pointwise as _pw, reduction as _rd
from ..ops._forward_ad import _state as _fw_state
from ..ops._registry import op
from ..ops.special import _add_scalar, xlogy
from ._activations import _first_order_only
from .functional import (_REDUCTIONS, _broadcast_pair, _mul_scalar, _not_differentiable, _reduce,
                         _reduce_grad, _reduction, _size, logsigmoid)  # (functional imports this module after defining these)

__all__ = ["smooth_l1_loss", "huber_loss", "binary_cross_entropy", "kl_div", "cosine_embedding_loss",
           "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "multilabel_soft_margin_loss", "multilabel_margin_loss",
           "multi_margin_loss", "soft_margin_loss", "ctc_loss"]

# ----- C++'s Scalar overloads and at::norm ------------------------------------------------------------------
@op("SubBackward1", save=(), attrs=())
def _sub_scalar(self, *, other):
    return self - jnp.asarray(other, self.dtype)


@_sub_scalar.derivative
def _(grad):
    return grad


_norm = _rd._norm  # (at::norm: NormBackward1)


def _scalar_op(entry, t, value):
    if isinstance(value, float) and t._data.dtype.kind in "biu":  # (an integer tensor and a float: the default dtype)
        t = _pw._to_float(t)
    return apply(entry, (t,), (value,))


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """torch.pairwise_distance: at::norm(x1 - x2 + eps, p, last dim) (NormBackward1 over AddBackward1)."""
    d = _scalar_op(_add_scalar, x1 - x2, eps)
    if max(x1.ndim, x2.ndim) == 0:
        return d.abs()
    dim = max(x1.ndim, x2.ndim) - 1
    dt = d._data.dtype
    return apply(_norm, (d,), (float(p), (max(dim, 0),) if d.ndim else None, bool(keepdim), dt))


_autocast = _registry.autocast_args  # (a composite loss's inputs: to float32 under autocast, as torch's)


def _apply_reduction(loss, red):
    """torch's apply_loss_reduction (MeanBackward0 / SumBackward0)."""
    return loss if red == 0 else (loss.mean() if red == 1 else loss.sum())


# ----- smooth_l1_loss, huber_loss ----------------------------------------------------------------------------
def _smooth_l1_forward(self, target, *, reduction, beta):
    dtype = jnp.promote_types(self.dtype, target.dtype)
    z = jnp.abs(self.astype(dtype) - target.astype(dtype))
    return _reduce(jnp.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)


def _smooth_l1_grad(grad, self, target, reduction, beta):
    dtype = jnp.promote_types(self.dtype, target.dtype)
    d = self.astype(dtype) - target.astype(dtype)
    inner = _pw._torch_mask(d, jnp.abs(d) < beta)  # torch's second derivative: 1/beta strictly inside
    g = _reduce_grad(grad, reduction, self.shape)
    g = jnp.where(d < -beta, -g, jnp.where(d > beta, g, inner / beta * g))
    return g, -g


def _huber_forward(self, target, *, reduction, delta):  # (in the input's dtype, as torch's kernel)
    z = jnp.abs(self - target.astype(self.dtype))
    return _reduce(jnp.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)


def _huber_grad(grad, self, target, reduction, delta):
    d = self - target.astype(self.dtype)
    inner = _pw._torch_mask(d, jnp.abs(d) < delta)
    g = _reduce_grad(grad, reduction, self.shape)
    g = jnp.where(d < -delta, -delta * g, jnp.where(d > delta, delta * g, inner * g))
    return g, -g


# (beta and delta are dynamic statics, traced: a new value each step compiles nothing)
_smooth_l1 = OpDef("SmoothL1LossBackward0", _smooth_l1_forward, save=("self", "target"), attrs=("beta", "reduction"),
                   dynamic=("beta",))
_smooth_l1.derivative(_smooth_l1_grad)
_huber = OpDef("HuberLossBackward0", _huber_forward, save=("self", "target"), attrs=("delta", "reduction"),
               refuse={"biuc": "huber_cpu"}, dynamic=("delta",))
_huber.derivative(_huber_grad)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (SmoothL1LossBackward0; beta=0: l1_loss)."""
    a, b = _broadcast_pair(input, target)
    red = _reduction(reduction, size_average, reduce)
    if beta == 0.0:
        err = (a - b).abs()
        return _apply_reduction(err, red)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    dt = _pw._binary_dtype(a, b)
    if np.dtype(dt).kind in "biuc":  # (by the promoted dtype)
        raise NotImplementedError(f"\"smooth_l1_cpu\" not implemented for '{_pw._type_word(dt)}'")
    return apply(_smooth_l1, (a, b), (red, beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta) (HuberLossBackward0); optional elementwise weight."""
    a, b = _broadcast_pair(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is None:
        return apply(_huber, (a, b), (_reduction(reduction), delta))
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = apply(_huber, (a, b), (0, delta)) * weight
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    return loss if reduction == "none" else (loss.sum() if reduction == "sum" else loss.mean())


# ----- binary_cross_entropy ------------------------------------------------------------------------------------
@op("BinaryCrossEntropyBackward0", save=("self", "target", "weight"), nondiff=("weight",), attrs=("reduction",),
    refuse={"biuc": "binary_cross_entropy"})
def _bce(self, target, weight, *, reduction):
    loss = (target - 1) * jnp.maximum(jnp.log1p(-self), -100) - target * jnp.maximum(jnp.log(self), -100)
    return _reduce(loss if weight is None else loss * weight, reduction)


@_bce.derivative
def _(grad, self, target, weight, reduction):
    g = _reduce_grad(grad, reduction, self.shape)
    if weight is not None:
        g = g * weight
    return g * (self - target) / jnp.maximum((1 - self) * self, 1e-12), g * (jnp.log1p(-self) - jnp.log(self))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """-(t log x + (1 - t) log(1 - x)), logs clamped at -100 (BinaryCrossEntropyBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    input, target, weight = _autocast("binary_cross_entropy", input, target, weight)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({_size(target.shape)}) that is different to the input size "
                         f"({_size(input.shape)}) is deprecated. Please ensure they have the same size.")
    if weight is not None:
        weight = weight.expand(*broadcast_batch(target.shape, weight.shape))
        _not_differentiable("binary_cross_entropy", "weight", weight)
    if target._data.dtype != input._data.dtype:
        raise RuntimeError(f"Found dtype {type_word(target)} but expected {type_word(input)}")
    x = input._data
    if not isinstance(x, jax.core.Tracer) and x.dtype.kind in "fV":
        v = np.asarray(x)
        if ((v < 0) | (v > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
    return apply(_bce, (input, target, weight), (red,))


# ----- soft_margin_loss, multi_margin_loss, multilabel_margin_loss -------------------------------------------
@op("SoftMarginLossBackward0", save=("self", "target"), nondiff=("target",), attrs=("reduction",))
def _soft_margin(self, target, *, reduction):  # (in the input's dtype, as torch's kernel)
    return _reduce(jnp.log1p(jnp.exp(-target.astype(self.dtype) * self)), reduction)


@_soft_margin.derivative
def _(grad, self, target, reduction):
    t = target.astype(self.dtype)
    z = jnp.exp(-t * self)
    return -t * z / (1 + z) * _reduce_grad(grad, reduction, self.shape)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)) (SoftMarginLossBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    _not_differentiable("soft_margin_loss", "target", target)
    kind = input._data.dtype.kind
    if kind == "b":
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
                           "a mask, use the `~` or `logical_not()` operator instead.")
    if kind in "iu":
        raise RuntimeError(f"result type {type_word(_pw._to_float(input))} can't be cast to the desired output type "
                           f"{type_word(input)}")
    return apply(_soft_margin, (input, target), (red,))


def _margin_rows(self, target):
    x = self if self.ndim == 2 else self.reshape(1, -1)
    return x, target.reshape(x.shape[0]).astype(jnp.int64)


@op("MultiMarginLossBackward0", save=("self", "target", "weight"), nondiff=("target", "weight"),
    attrs=("margin", "p", "reduction"),
    node_apply=_first_order_only("multi_margin_loss_backward"))
def _multi_margin(self, target, weight, *, p, margin, reduction):
    x, t = _margin_rows(self, target)
    picked = jnp.take_along_axis(x, t[:, None], 1)
    z = margin - picked + x
    z = jnp.where((z > 0) & (jnp.arange(x.shape[1]) != t[:, None]), z, 0)
    z = z if p == 1 else z * z
    if weight is not None:
        z = z * weight[t][:, None]
    loss = jnp.sum(z, 1) / x.shape[1]
    if self.ndim < 2 and reduction == 0:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """sum over j != y of max(0, margin - x[y] + x[j])^p (times weight[y]) / C (MultiMarginLossBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    nframe = input.shape[0] if input.ndim == 2 else 1
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    if target.ndim > 1 or target.numel() != nframe:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{nframe}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    input, weight = _autocast("multi_margin_loss", input, weight)
    _check_float(input, "multi_margin_loss_cpu_kernel")
    _check_scalar_type(target, np.int64)
    if weight is not None:
        _check_scalar_type(weight, input._data.dtype)
    _no_forward_ad("multi_margin_loss", input)
    if weight is not None:
        _not_differentiable("multi_margin_loss", "weight", weight)
    _check_classes(target, input.shape[-1] if input.ndim else 1)
    return apply(_multi_margin, (input, target, weight), (p, margin, red))


def _no_forward_ad(aten_name, t):
    """torch's refusal of an op without a forward derivative, for an input with a tangent."""
    if _fw_state.level is not None and t._fw_tangent is not None:
        raise NotImplementedError(f"Trying to use forward AD with {aten_name} that does not support it because it has "
                                  f"not been implemented yet.\nPlease file an issue to PyTorch at https://github.com/"
                                  f"pytorch/pytorch/issues/new?template=feature-request.yml so that we can prioritize "
                                  f"its implementation or submit a PR adding the implementation to derivatives.yaml")


def _check_float(input, kernel):
    """torch's margin kernels run for float and double only."""
    if input._data.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(input)}'")


def _check_scalar_type(t, dtype):
    if t._data.dtype != dtype:
        raise RuntimeError(f"expected scalar type {_pw._type_word(dtype)} but found {type_word(t)}")


def _check_classes(target, n_classes, allow_minus_one=False):
    t = target._data
    if isinstance(t, jax.core.Tracer):
        return
    v = np.asarray(t)
    if ((v < (-1 if allow_minus_one else 0)) | (v >= n_classes)).any():
        raise RuntimeError("target out of range" if not allow_minus_one else "argument #2 'target' is out of range")


def _multilabel_forward(self, target, *, reduction):
    x = self if self.ndim == 2 else self.reshape(1, -1)
    t = target.reshape(x.shape).astype(jnp.int64)
    valid = jnp.cumprod(t != -1, axis=1).astype(bool)  # the labels before the first -1
    safe = jnp.where(valid, t, 0)
    is_target = jnp.any(valid[:, :, None] & (safe[:, :, None] == jnp.arange(x.shape[1])), axis=1)
    z = 1 - jnp.take_along_axis(x, safe, 1)[:, :, None] + x[:, None, :]
    z = jnp.where(valid[:, :, None] & ~is_target[:, None, :] & (z > 0), z, 0)
    loss = jnp.sum(z, (1, 2)) / x.shape[1]
    if self.ndim < 2 and reduction == 0:
        loss = loss.reshape(())
    return _reduce(loss, reduction), is_target.astype(self.dtype).reshape(self.shape)


_multilabel_margin = OpDef("MultilabelMarginLossBackward0", _multilabel_forward, save=("self", "target", "is_target"),
                           nondiff=("target",), outputs=("result", "is_target"), attrs=("reduction",),
                           node_apply=_first_order_only("multilabel_margin_loss_backward"))
_multilabel_margin.derivative(lambda grads, self, target, reduction: jax.vjp(
    lambda x: _multilabel_forward(x, target, reduction=reduction)[0], self)[1](grads[0])[0])


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Hinge loss between each target label (up to the first -1) and each non-target class
    (MultilabelMarginLossBackward0)."""
    red = _reduction(reduction, size_average, reduce)
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0) or target.shape != input.shape:
        if input.ndim <= 2 and target.shape != input.shape:
            raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                               f"{list(input.shape)}")
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    input, = _autocast("multilabel_margin_loss", input)
    _check_float(input, "multilabel_margin_loss_forward_out_frame")
    _check_scalar_type(target, np.int64)
    _no_forward_ad("multilabel_margin_loss_forward", input)
    _check_classes(target, input.shape[-1] if input.ndim else 1, allow_minus_one=True)
    return apply(_multilabel_margin, (input, target), (red,))[0]


# ----- composites of C++ (ATen) --------------------------------------------------------------------------------
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence target * (log target - input), reduced ('batchmean': sum / batch size)."""
    input, target = _autocast("kl_div", input, target)
    if size_average is not None or reduce is not None:
        red = _reduction("mean", size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
                          "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
                          "'mean' will be changed to behave the same as 'batchmean' in the next major release.",
                          stacklevel=2)
        red = _reduction("sum" if reduction == "batchmean" else reduction)
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if input._data.dtype.kind in "biu" or target._data.dtype.kind in "biu":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _special_xlogy(target, target) - target * input
    loss = _apply_reduction(loss, red)
    if reduction == "batchmean" and input.ndim != 0:
        loss = loss / input.shape[0]
    return loss


def _special_xlogy(a, b):
    return xlogy(a, b)


def _fill_sub(value, t):
    """C++'s ``scalar - tensor``: empty_like(t).fill_(scalar).sub_(t) (SubBackward0 with no first edge)."""
    return t.new_full(t.shape, value).sub_(t)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1."""
    input1, input2, target = _autocast("cosine_embedding_loss", input1, input2, target)
    red = _reduction(reduction, size_average, reduce)
    tdim = target.ndim
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    if tdim == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod_sum = (input1 * input2).sum(tdim)
    mag1 = _scalar_op(_add_scalar, (input1 * input1).sum(tdim), 1e-12)
    mag2 = _scalar_op(_add_scalar, (input2 * input2).sum(tdim), 1e-12)
    cos = prod_sum / (mag1 * mag2).sqrt_()
    zeros = cos.new_zeros(cos.shape)
    pos = _fill_sub(1, cos)
    neg = _scalar_op(_sub_scalar, cos, margin).clamp_min_(0)
    out = _pw.where(target == 1, pos, zeros) + _pw.where(target == -1, neg, zeros)
    return _apply_reduction(out, red)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """max(0, -target * (input1 - input2) + margin)."""
    input1, input2, target = _autocast("margin_ranking_loss", input1, input2, target)
    red = _reduction(reduction, size_average, reduce)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {_size(input1.shape)}, input2: {_size(input2.shape)}, target: "
                           f"{_size(target.shape)} ")
    out = _scalar_op(_add_scalar, -target * (input1 - input2), margin).clamp_min_(0)
    return _apply_reduction(out, red)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """input where target is 1, max(0, margin - input) where target is -1."""
    input, target = _autocast("hinge_embedding_loss", input, target)
    red = _reduction(reduction, size_average, reduce)
    zeros = input.new_zeros(input.shape)
    margin_clamp = _fill_sub(margin, input).clamp_min_(0)
    out = _pw.where(target != 1, margin_clamp, zeros) + _pw.where(target != -1, input, zeros)
    return _apply_reduction(out, red)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """max(0, margin + d(a, p) - d(a, n)), d the pairwise p-distance (``swap``: d(a, n) = min(d(a, n), d(p, n)))."""
    anchor, positive, negative = _autocast("triplet_margin_loss", anchor, positive, negative)
    red = _reduction(reduction, size_average, reduce)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist_pos = _pairwise_distance(anchor, positive, p, eps)
    dist_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        dist_neg = _pw.minimum(dist_neg, _pairwise_distance(positive, negative, p, eps))
    out = (_scalar_op(_add_scalar, dist_pos, margin) - dist_neg).clamp_min(0)
    return _apply_reduction(out, red)


def _check_triplet_dims(a, p, n):
    if not a.ndim == p.ndim == n.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {a.ndim}D, positive {p.ndim}D, and negative {n.ndim}D inputs")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """triplet_margin_loss with any ``distance_function`` (default pairwise_distance)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = distance_function or _pairwise_distance
    dist_pos = dist(anchor, positive)
    dist_neg = dist(anchor, negative)
    if swap:
        dist_neg = _pw.minimum(dist_neg, dist(positive, negative))
    loss = _pw.clamp_min(margin + dist_pos - dist_neg, 0)
    return loss.sum() if reduction == "sum" else (loss.mean() if reduction == "mean" else loss)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """exp(input) - target * input (log_input), else input - target * log(input + eps); ``full``: + Stirling."""
    input, target = _autocast("poisson_nll_loss", input, target)
    if size_average is not None or reduce is not None:
        reduction = {0: "none", 1: "mean", 2: "sum"}[_reduction("mean", size_average, reduce)]
    if reduction not in _REDUCTIONS:
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * _scalar_op(_add_scalar, input, eps).log()
    if full:
        stirling = (target * target.log() - target
                    + _scalar_op(_mul_scalar, _scalar_op(_mul_scalar, target, 2 * math.pi).log(), 0.5))
        loss += stirling.masked_fill(target <= 1, 0)
    return _apply_reduction(loss, _REDUCTIONS[reduction])


# ----- composites of Python (torch.nn.functional) ---------------------------------------------------------------
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log var + (input - target)^2 / var) (+ 0.5 log 2 pi with ``full``), var clamped at eps."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * input.new_ones(input.shape)
    elif not hasattr(var, "_data"):
        raise TypeError(f"any() received an invalid combination of arguments - got ({type(var < 0).__name__}), but "
                        f"expected one of:\n * (Tensor input, *, Tensor out = None)")
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss += 0.5 * math.log(2 * math.pi)
    return loss.mean() if reduction == "mean" else (loss.sum() if reduction == "sum" else loss)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Mean over classes of the binary logistic losses, optionally weighted per class."""
    if size_average is not None or reduce is not None:
        reduction = {0: "none", 1: "mean", 2: "sum"}[_reduction("mean", size_average, reduce)]
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(reduction + " is not valid")


# ----- ctc_loss ------------------------------------------------------------------------------------------------
def _lse(*xs):
    """log(sum(exp(xs))) with finite gradients where every term is -inf (jnp.logaddexp's are NaN there)."""
    m = xs[0]
    for x in xs[1:]:
        m = jnp.maximum(m, x)
    finite = m > -jnp.inf
    ms = jax.lax.stop_gradient(jnp.where(finite, m, 0))
    s = sum(jnp.exp(x - ms) for x in xs)
    return jnp.where(finite, ms + jnp.log(jnp.where(finite, s, 1)), -jnp.inf)


def _ctc_nll(log_probs, targets, input_lengths, target_lengths, blank, alphas=False):
    """-log p(target | input) per batch element: the CTC forward (alpha) recursion, lax.scan over time.
    log_probs (T, N, C), targets (N, S) padded, lengths (N,). ``alphas``: also torch's log_alpha (N, T, 2S+1),
    -inf where torch leaves it unwritten (t >= input length, or t > 0 and s > 2 * target length)."""
    T, N, C = log_probs.shape
    S = targets.shape[1]
    L = 2 * S + 1
    pos = jnp.arange(L)
    labels = jnp.where(pos % 2 == 1, jnp.take_along_axis(targets, jnp.clip((pos // 2)[None, :], 0, max(S - 1, 0)),
                                                         1) if S else blank, blank)
    labels = jnp.broadcast_to(labels, (N, L)).astype(jnp.int32)
    skip = (pos >= 2) & (labels != blank) & (labels != jnp.roll(labels, 2, axis=1))
    neg_inf = jnp.asarray(-jnp.inf, log_probs.dtype)
    lp0 = jnp.take_along_axis(log_probs[0], labels, 1)
    alpha0 = jnp.where(pos[None, :] < jnp.minimum(2, 2 * target_lengths[:, None] + 1), lp0, neg_inf)

    def step(alpha, inputs):
        lp_t, t = inputs
        a1 = jnp.concatenate([jnp.full((N, 1), neg_inf), alpha[:, :-1]], 1)
        a2 = jnp.where(skip, jnp.concatenate([jnp.full((N, 2), neg_inf), alpha[:, :-2]], 1), neg_inf)
        new = _lse(alpha, a1, a2) + jnp.take_along_axis(lp_t, labels, 1)
        written = (t < input_lengths)[:, None]
        return jnp.where(written, new, alpha), jnp.where(written & (pos < 2 * target_lengths[:, None] + 1), new,
                                                         neg_inf) if alphas else None

    alpha, rows = jax.lax.scan(step, alpha0, (log_probs[1:], jnp.arange(1, T)))
    end = 2 * target_lengths
    last = jnp.take_along_axis(alpha, end[:, None], 1)[:, 0]
    prev = jnp.where(target_lengths > 0, jnp.take_along_axis(alpha, jnp.maximum(end - 1, 0)[:, None], 1)[:, 0],
                     neg_inf)
    if alphas:
        return -_lse(last, prev), jnp.moveaxis(jnp.concatenate([alpha0[None], rows]), 0, 1)
    return -_lse(last, prev)


def _ctc_forward(log_probs, targets, input_lengths, target_lengths, padded, *, blank, zero_infinity):
    """(``targets`` as given, which torch saves; ``padded``: them as an (N, S) array, which the recursion reads.)"""
    return _ctc_nll(log_probs, padded, input_lengths, target_lengths, blank, alphas=True)


def _ctc_grad(grads, log_probs, padded, input_lengths, target_lengths, blank, zero_infinity):
    """torch's ctc_loss_backward: exp(log_probs) - (the posterior of each label), up to each input length
    (the gradient of the loss through a log_softmax, which torch assumes)."""
    nll, vjp = jax.vjp(lambda lp: _ctc_nll(lp, padded, input_lengths, target_lengths, blank), log_probs)
    keep = jnp.isfinite(nll) if zero_infinity else jnp.ones_like(nll, bool)
    g = jnp.where(keep, grads[0], 0)
    inside = (jnp.arange(log_probs.shape[0])[:, None] < input_lengths[None, :])[:, :, None]
    exact = vjp(g)[0]
    return jnp.where(inside, jnp.exp(log_probs) * g[None, :, None] + exact, 0)


_ctc = OpDef("CtcLossBackward0", _ctc_forward, outputs=("result0", "result1"),
             save=("log_probs", "targets", "input_lengths", "target_lengths", "padded", "result0", "result1"),
             nondiff=("targets", "input_lengths", "target_lengths", "padded", "result1"),
             attrs=("blank", "zero_infinity"), saved={"padded": None, **{
                 n: (lambda node, saved, n=n: tuple(int(v) for v in np.asarray(saved[n]._data)))
                 for n in ("input_lengths", "target_lengths")}},  # (torch saves them as int lists)
             node_apply=_first_order_only("_ctc_loss_backward"))
_ctc.derivative(_ctc_grad)


def _lengths(x, name):
    if not hasattr(x, "_data"):
        return [int(v) for v in x]
    if x._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name} must be integral")
    return [int(v) for v in np.asarray(x._data).reshape(-1)]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """Connectionist temporal classification loss (CtcLossBackward0): log_probs (T, N, C) or (T, C), targets
    padded (N, S) or concatenated; 'mean' divides each loss by its target length, then averages."""
    log_probs, = _autocast("ctc_loss", log_probs)
    red = _reduction(reduction)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    _no_forward_ad("_ctc_loss", lp)
    il, tl = _lengths(input_lengths, "input_lengths"), _lengths(target_lengths, "target_lengths")
    T, N, C = lp.shape
    if len(il) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    for b in range(N):
        if il[b] > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value {il[b]} (while "
                               f"checking arguments for ctc_loss_allocate_outputs)")
    tv = np.asarray(targets._data).astype(np.int64)
    smax = max(tl) if tl else 0
    padded = np.zeros((N, smax), np.int64)
    if tv.ndim == 1 or not batched and tv.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(tl)])
        for b in range(N):
            padded[b, :tl[b]] = tv[offsets[b]:offsets[b] + tl[b]]
    else:
        tv = tv.reshape(N, -1)
        for b in range(N):
            if tl[b] > tv.shape[1]:
                raise RuntimeError(f"Expected tensor to have size at least {tl[b]} at dimension 1, but got size "
                                   f"{tv.shape[1]} for argument #2 'targets' (while checking arguments for "
                                   f"ctc_loss_cpu)")
            padded[b, :tl[b]] = tv[b, :tl[b]]
    res = apply(_ctc, (lp, targets, wrap(jnp.asarray(il, jnp.int64)), wrap(jnp.asarray(tl, jnp.int64)),
                       wrap(jnp.asarray(padded))), (blank, bool(zero_infinity)))[0]
    if zero_infinity:
        res = _pw.where(res == float("inf"), res.new_zeros(()), res)
    if red == 1:
        return (res / wrap(jnp.asarray(tl, jnp.int64)).clamp_min(1)).mean()
    if red == 2:
        return res.sum()
    return res if batched else res.squeeze(0)
