"""torchlike.nn.functional: linear, activations, softmax family, losses, dropout, one_hot.

Losses that torch implements as one ATen op with its own backward (nll_loss, mse_loss,
binary_cross_entropy_with_logits) are table ops here with torch's node names and saved attributes;
the ones torch composes from other ops (linear, cross_entropy, l1_loss, dropout) are composed from
torchlike's ops the same way, so their graphs match torch's node by node.
"""
import functools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _lazy
from .._internal import OpDef, OpNode, apply, apply_inplace, broadcast_batch, grad_enabled, op, type_word, wrap
from ..ops import creation as _creation, linalg as _linalg, pointwise as _pw
from ..ops.linalg_module import _cdist
from ..ops import shape as _shape
from ..ops import _registry, _util
from ..ops._record import interpose

__all__ = ["linear", "relu", "gelu", "silu", "softplus", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax",
           "nll_loss", "cross_entropy", "mse_loss", "l1_loss", "binary_cross_entropy_with_logits", "dropout",
           "one_hot", "conv2d", "max_pool2d", "avg_pool2d", "layer_norm", "batch_norm", "embedding",
           "scaled_dot_product_attention", "multi_head_attention_forward", "pdist"]


def _size(shape):
    return f"torch.Size({list(shape)})"


def _is_float(t):
    return t._data.dtype.kind in "fcV"


def _not_differentiable(fn, name, t):
    if t is not None and t._requires_grad and grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument '{name}'. This input "
                           f"cannot have requires_grad True.")


# ----- linear and activations ------------------------------------------------------------------------------
# linear's common case (2-D input, 1-D bias) runs as ONE jitted call x @ W.T + b, yet records torch's graph
# AddmmBackward0 -> TBackward0 -> W: the TBackward0 node is interposed without materialising W.T (an XLA
# transpose is a real copy, unlike torch's view). Backward computes the weight gradient in W's layout and
# passes it on as a lazily transposed tensor (shape._TransposedGrad): what torch's AddmmBackward0 emits
# (W.T's layout) whenever anyone looks, free when only TBackward0 consumes it.
def _linear_apply(node, grads, mask=None):
    outs = list(OpNode._apply(node, grads, mask))  # a tuple when every input needs a gradient
    dw = outs[2]
    if dw is not None:  # present the W-layout gradient as the W.T-layout one torch's node returns
        outs[2] = dw.t() if grad_enabled() else _shape._transposed_grad(dw._data)
    return outs


def _saved_mat2(node, saved):
    """torch's ``_saved_mat2`` of linear's addmm: ``W.t()``, made on access, with the TBackward0 node."""
    w = saved["weight"]
    if w is None:
        return None
    t = wrap(jnp.transpose(w._data))
    if node.next_functions[2][0] is not None:
        t._grad_fn, t._requires_grad = node.next_functions[2][0], True
    return t


@op("AddmmBackward0", save={"mat1": ("weight",), "weight": ("mat1",)}, attrs=("alpha", "beta", "mat1_sym_sizes"),
    node_apply=_linear_apply, saved={"mat2": (_saved_mat2, lambda node, raw: raw["weight"]), "weight": None,
                                     "mat2_sym_sizes": lambda node, saved: tuple(node._in_meta[2].shape[::-1])})
def _linear_addmm(self, mat1, weight, *, beta, alpha):
    return mat1 @ weight.T + self


@_linear_addmm.derivative
def _(grad, mat1, weight):
    return (grad, grad @ jnp.conj(weight) if weight is not None else None,
            grad.T @ jnp.conj(mat1) if mat1 is not None else None)  # W's layout: (mat1^H @ grad)^T


def _fused_linear_ok(input, weight, bias):
    i, w, b = input._data.aval, weight._data.aval, bias._data.aval
    return (len(i.shape) == 2 and len(w.shape) == 2 and len(b.shape) == 1 and i.shape[1] == w.shape[1]
            and b.shape[0] in (1, w.shape[0]) and i.dtype == w.dtype == b.dtype and i.dtype.kind in "fc")


@functools.lru_cache(maxsize=4096)
def _transposed(aval):
    """The aval of a 2-d array's transpose (made once per weight shape: a ShapedArray costs microseconds)."""
    return jax.core.ShapedArray(aval.shape[::-1], aval.dtype)


def linear(input, weight, bias=None):
    """input @ weight.T + bias, recorded as torch records it (AddmmBackward0 / MmBackward0 / views)."""
    input, weight, bias = _registry.autocast_args("linear", input, weight, bias)  # (before its decomposition)
    if bias is not None and _fused_linear_ok(input, weight, bias):
        out = apply(_linear_addmm, (bias, input, weight), (1, 1))
        if out._grad_fn is not None:
            interpose(out._grad_fn, 2, _shape._t, weight, (), _transposed(weight._data.aval))
        return out
    if bias is None:
        return _linalg.matmul(input, weight.t())
    if input.ndim == 2:
        return _linalg.addmm(bias, input, weight.t())
    if bias.ndim == 1:  # torch flattens the batch dims into one addmm
        out = _linalg.addmm(bias, input.reshape(-1, input.shape[-1]), weight.t())
        return out.view(*input.shape[:-1], out.shape[-1])
    return _linalg.matmul(input, weight.t()).add_(bias)


def relu(input, inplace=False):
    """max(input, 0) (ReluBackward0); in place with ``inplace=True``."""
    return input.relu_() if inplace else _pw.relu(input)


def silu(input, inplace=False):
    """input * sigmoid(input) (SiluBackward0); in place with ``inplace=True``."""
    if inplace:
        return apply_inplace(_pw._silu, input, (input,), ())
    return _pw.silu(input)


gelu = _pw.gelu
softplus = _pw.softplus
leaky_relu = _pw.leaky_relu
sigmoid = _pw.sigmoid
tanh = _pw.tanh
elu = _pw.elu
celu = _pw.celu
selu = _pw.selu
hardtanh = _pw.hardtanh
relu6 = _pw.relu6
logsigmoid = _pw.logsigmoid


def _softmax_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an "
                  f"argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Softmax along ``dim`` (SoftmaxBackward0); dim=None picks torch's legacy dim with a warning."""
    if dim is None:
        dim = _softmax_dim("softmax", input.ndim, _stacklevel)
    return input.softmax(dim) if dtype is None else input.softmax(dim, dtype=dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """Log-softmax along ``dim`` (LogSoftmaxBackward0); dim=None picks torch's legacy dim with a warning."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.ndim, _stacklevel)
    return input.log_softmax(dim) if dtype is None else input.log_softmax(dim, dtype=dtype)


# ----- reductions of losses ----------------------------------------------------------------------------------
_REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def _reduction(reduction, size_average=None, reduce=None):
    """torch's reduction enum (0 none, 1 mean, 2 sum), honouring the legacy size_average/reduce arguments."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                      f"instead.", stacklevel=3)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _REDUCTIONS[reduction]


def _reduce(loss, reduction):
    return loss if reduction == 0 else (jnp.mean(loss) if reduction == 1 else jnp.sum(loss))


def _reduce_grad(grad, reduction, shape):
    if reduction == 0:
        return grad
    return jnp.broadcast_to(grad / math.prod(shape) if reduction == 1 else grad, shape)


# ----- nll_loss ----------------------------------------------------------------------------------------------
def _nll_parts(self, target, weight, ignore_index):
    """(class axis, safe target, per-element weight incl. the ignore mask, valid mask)."""
    axis = 0 if self.ndim == 1 else 1
    t = (target.reshape(()) if self.ndim == 1 else target).astype(jnp.int64)  # 1-D input: target () or (1,)
    valid = t != ignore_index
    safe = jnp.where(valid, t, 0)
    w = valid.astype(self.dtype) if weight is None else jnp.where(valid, weight[safe], 0).astype(self.dtype)
    return axis, safe, w, valid


def _nll_forward(self, target, weight, *, reduction, ignore_index):
    axis, safe, w, valid = _nll_parts(self, target, weight, ignore_index)
    picked = jnp.squeeze(jnp.take_along_axis(self, jnp.expand_dims(safe, axis), axis=axis), axis)
    losses = jnp.where(valid, -picked * w, 0)
    if reduction == 0 and self.ndim > 1:
        return losses, jnp.zeros((), self.dtype)
    total = jnp.sum(w)  # a 1-D input reports its total weight even with reduction="none", as torch does
    if reduction == 0:
        return losses, total
    return (jnp.sum(losses) if reduction == 2 else jnp.sum(losses) / total), total


def _nll_backward(grads, self, target, weight, total_weight, reduction, ignore_index):
    grad = grads[0]
    axis, safe, w, valid = _nll_parts(self, target, weight, ignore_index)
    g = grad / total_weight if reduction == 1 else grad
    coef = jnp.where(valid, -w * g, 0)  # ignored targets get exactly 0, as torch's kernel skips them
    return jnp.expand_dims(coef, axis) * jax.nn.one_hot(safe, self.shape[axis], dtype=self.dtype, axis=axis)


def _nll_entry(node_name):
    entry = OpDef(node_name, _nll_forward, save=("self", "target", "weight", "total_weight"),
                  nondiff=("target", "weight", "total_weight"), outputs=("result", "total_weight"),
                  attrs=("ignore_index", "reduction"), unsigned=("ignore_index",))  # -100 reads 2**64 - 100
    entry.derivative(_nll_backward)
    return entry


_nll = _nll_entry("NllLossBackward0")
_nll2d = _nll_entry("NllLoss2DBackward0")


def _check_targets(target, n_classes, ignore_index):
    """torch's 'Target k is out of bounds.' check; reads the target values (skipped under jax tracing)."""
    if isinstance(target._data, jax.core.Tracer):
        t = target._data.astype(np.int64).ravel()
        bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
        _util.check_later(bad.any(), IndexError, "Target {v} is out of bounds.", t[jnp.argmax(bad)])
        return
    t = np.asarray(target._data).ravel()
    if not t.size or 0 <= t.min() and t.max() < n_classes:  # (every class in range: the common case, two reductions)
        return
    t = t.astype(np.int64)
    bad = (t != ignore_index) & ((t < 0) | (t >= n_classes))
    if bad.any():
        raise IndexError(f"Target {t[np.argmax(bad)]} is out of bounds.")


def _nll_call(entry, kernel, fname, input, target, weight, reduction, ignore_index):
    if target._data.dtype not in (np.int64, np.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {type_word(target)}")
    if not _is_float(input):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(input)}'")
    n_classes = input.shape[0 if input.ndim == 1 else 1]
    if weight is not None:
        if entry is _nll and (weight.ndim != 1 or weight.numel() != n_classes):
            raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes or no classes "
                               f"but got weight tensor of shape: {list(weight.shape)}")
        if entry is _nll2d and weight.numel() != n_classes:
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        if weight._data.dtype != input._data.dtype:
            raise RuntimeError(f"expected scalar type {type_word(input)} but found {type_word(weight)}")
        _not_differentiable(fname, "weight", weight)
        weight = weight.reshape(-1)
    _check_targets(target, n_classes, ignore_index)
    return apply(entry, (input, target, weight), (reduction, ignore_index))[0]


def _nll_nd(input, target, weight, reduction, ignore_index):
    """torch's nll_loss_nd: 1-D/2-D -> NllLossBackward0, 4-D -> NllLoss2DBackward0, else viewed as 4-D."""
    dim = input.ndim
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if dim != 1 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({target.shape[0] if target.ndim else 0}).")
    if dim <= 2:
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if dim == 1 and target.ndim == 1:
            if target.shape[0] != 1:
                raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {target.shape[0]}")
        return _nll_call(_nll, "nll_loss_out_frame", "nll_loss_forward", input, target, weight, reduction,
                         ignore_index)
    if dim == 4:
        if target.ndim != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of "
                               f"dimension: {target.ndim}")
        if target.shape != (input.shape[0],) + input.shape[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: {list(target.shape)}")
        return _nll_call(_nll2d, "nll_loss2d_forward_out_frame", "nll_loss2d_forward", input, target, weight,
                         reduction, ignore_index)
    n, c = input.shape[:2]
    out_size = (n,) + input.shape[2:]
    if target.shape[1:] != input.shape[2:]:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(target.shape)}")
    empty = input.numel() == 0
    input4 = input.reshape(n, c, 0, 0) if empty else input.reshape(n, c, 1, -1)
    target3 = target.reshape(n, 0, 0) if target.numel() == 0 else target.reshape(n, 1, -1)
    out = _nll_call(_nll2d, "nll_loss2d_forward_out_frame", "nll_loss2d_forward", input4, target3, weight,
                    reduction, ignore_index)
    return out.view(*out_size) if reduction == 0 else out


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log likelihood of class-index targets (NllLossBackward0 / NllLoss2DBackward0)."""
    return _nll_nd(input, target, weight, _reduction(reduction, size_average, reduce), ignore_index)


# ----- cross_entropy -----------------------------------------------------------------------------------------
# torch's C++ composites multiply/divide by Scalars: the Scalar overloads are their own nodes, MulBackward1 and
# DivBackward1 (Python's `t * 0.5` is MulBackward0 in torch too), saving the scalar as _saved_other.
@op("MulBackward1", save=(), attrs=("other",))
def _mul_scalar(self, *, other):
    return self * jnp.asarray(other, self.dtype)


@_mul_scalar.derivative
def _(grad, other):
    return grad * other


@op("DivBackward1", save=(), attrs=("other",))
def _div_scalar(self, *, other):
    return self / jnp.asarray(other, self.dtype)


@_div_scalar.derivative
def _(grad, other):
    return grad / other


def _class_view(weight, ndim, axis):
    """weight (C,) viewed to broadcast along the class axis of an ndim-D input."""
    if ndim <= 1:
        return weight
    return weight.view(*[weight.shape[0] if d == axis else 1 for d in range(ndim)])


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax + nll_loss for class indices (with label smoothing), or soft class-probability targets."""
    red = _reduction(reduction, size_average, reduce)
    axis = 0 if input.ndim == 1 else 1
    if input.shape == target.shape:
        return _cross_entropy_probs(input, target, weight, red, ignore_index, label_smoothing, axis)
    if label_smoothing > 0.0:
        if label_smoothing > 1.0:
            raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
        return _cross_entropy_smooth(input, target, weight, red, ignore_index, label_smoothing, axis)
    return _nll_nd(input.log_softmax(axis), target, weight, red, ignore_index)


def _cross_entropy_probs(input, target, weight, red, ignore_index, label_smoothing, axis):
    if not _is_float(target):
        raise RuntimeError(f"Expected floating point type for target with class probabilities, got {type_word(target)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    n_classes = input.shape[axis]
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")
    logp = input.log_softmax(axis)
    if label_smoothing > 0.0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _class_view(weight, input.ndim, axis)
    if red == 0:
        return -prod.sum(axis)
    if red == 2:
        return -prod.sum()
    if input.numel() == 0:
        return -prod.sum() * float("nan")
    return apply(_div_scalar, (-prod.sum(),), (input.numel() // n_classes,))


def _cross_entropy_smooth(input, target, weight, red, ignore_index, label_smoothing, axis):
    logp = input.log_softmax(axis)
    nll = _nll_nd(logp, target, weight, red, ignore_index)
    n_classes = input.shape[axis]
    smooth = -(logp * _class_view(weight, input.ndim, axis)).sum(axis) if weight is not None else -logp.sum(axis)
    ignore = target == ignore_index
    smooth = smooth.masked_fill_(ignore, 0.0)
    if red == 1:  # divided by the count (or the total weight) of the kept targets, like nll_loss
        keep = ~ignore._data
        if weight is not None:
            t = jnp.where(keep, target._data, 0).astype(jnp.int64)
            denom = wrap(jnp.sum(jnp.where(keep, weight._data[t], 0)))
        else:
            denom = wrap(jnp.sum(keep, dtype=jnp.int64))
        smooth = smooth.sum() / denom
    elif red == 2:
        smooth = smooth.sum()
    return (apply(_mul_scalar, (nll,), (1 - label_smoothing,))
            + apply(_mul_scalar, (smooth,), (label_smoothing / n_classes,)))


# ----- mse_loss, l1_loss -------------------------------------------------------------------------------------
@op("MseLossBackward0", save=("self", "target"), attrs=("reduction",))
def _mse(self, target, *, reduction, dtype):
    d = self.astype(dtype) - target.astype(dtype)
    return _reduce(d * d, reduction)


@_mse.derivative
def _(grad, self, target, reduction, dtype):
    g = 2 * (self.astype(dtype) - target.astype(dtype)) * _reduce_grad(grad, reduction, self.shape)
    return g, -g


def _broadcast_pair(input, target):
    """torch.nn.functional's size warning + broadcast_tensors (ExpandBackward0 on the expanded one)."""
    if input.shape != target.shape:
        warnings.warn(f"Using a target size ({_size(target.shape)}) that is different to the input size "
                      f"({_size(input.shape)}). This will likely lead to incorrect results due to broadcasting. "
                      f"Please ensure they have the same size.", stacklevel=3)
        shape = broadcast_batch(input.shape, target.shape)
        input = input if input.shape == shape else input.expand(*shape)
        target = target if target.shape == shape else target.expand(*shape)
    return input, target


def _weighted(err, weight, input, reduction):
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    err = err * weight
    if reduction == "none":
        return err
    if reduction == "sum":
        return err.sum()
    if reduction == "mean":
        return err.sum() / weight.sum()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error (MseLossBackward0); optional elementwise ``weight``."""
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((a - b) ** 2, weight, input, reduction)
    red = _reduction(reduction, size_average, reduce)
    if not _is_float(a) and not _is_float(b):
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{type_word(a)}'")
    dt = _pw._binary_dtype(a, b)
    return apply(_mse, (a, b), (red, dt))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error, composed as torch does: abs(input - target) then mean/sum."""
    input, target, weight = _registry.autocast_args("l1_loss", input, target, weight)
    a, b = _broadcast_pair(input, target)
    if weight is not None:
        return _weighted((a - b).abs(), weight, input, reduction)
    red = _reduction(reduction, size_average, reduce)
    err = (a - b).abs()
    return err if red == 0 else (err.mean() if red == 1 else err.sum())


# ----- binary_cross_entropy_with_logits ----------------------------------------------------------------------
def _bce_terms(self, target, pos_weight):
    log_sig = jax.nn.log_sigmoid(self)
    log_w = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    return log_sig, log_w


@op("BinaryCrossEntropyWithLogitsBackward0", save=("self", "target", "weight", "pos_weight"),
    nondiff=("weight", "pos_weight"), attrs=("reduction",))
def _bce(self, target, weight, pos_weight, *, reduction, dtype):
    log_sig, log_w = _bce_terms(self, target, pos_weight)
    loss = (1 - target) * self - log_w * log_sig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.astype(dtype), reduction)


@_bce.derivative
def _(grad, self, target, weight, pos_weight, reduction):
    log_sig, log_w = _bce_terms(self, target, pos_weight)
    g = _reduce_grad(grad, reduction, self.shape)
    if weight is not None:
        g = g * weight
    g_self = g * (log_w * jax.nn.sigmoid(self) - (target if pos_weight is None else pos_weight * target))
    g_target = -g * (self if pos_weight is None else self + (pos_weight - 1) * log_sig)
    return g_self, g_target


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Sigmoid + binary cross entropy in one stable op (BinaryCrossEntropyWithLogitsBackward0)."""
    input, target, weight, pos_weight = _registry.autocast_args("binary_cross_entropy_with_logits", input, target,
                                                                 weight, pos_weight)
    red = _reduction(reduction, size_average, reduce)
    if input.shape != target.shape:
        raise ValueError(f"Target size ({_size(target.shape)}) must be the same as input size ({_size(input.shape)})")
    if not _is_float(input):
        raise NotImplementedError(f"\"log_sigmoid_cpu\" not implemented for '{type_word(input)}'")
    if not _is_float(target):  # torch computes (1 - target).mul_(input) in place
        raise RuntimeError(f"result type {type_word(input)} can't be cast to the desired output type {type_word(target)}")
    if weight is not None:  # torch: loss.mul_(weight)
        broadcast_batch(input.shape, weight.shape)
        _not_differentiable("binary_cross_entropy_with_logits", "weight", weight)
    if pos_weight is not None:  # torch: (pos_weight - 1).mul(target)
        broadcast_batch(pos_weight.shape, input.shape)
        _not_differentiable("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    return apply(_bce, (input, target, weight, pos_weight), (red, target._data.dtype))


# ----- dropout, one_hot --------------------------------------------------------------------------------------
def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p and scale the rest by 1/(1-p) (MulBackward0 by a saved mask)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if not _is_float(input):
        raise RuntimeError(f"result type Float can't be cast to the desired output type {type_word(input)}")
    dt = input._data.dtype
    if p == 1:
        mask = wrap(jnp.zeros((), dt))
    else:
        mask = wrap(_misc._noise(_creation._key(None), _lazy._number(float(p)), shape=tuple(input.shape), dtype=dt,
                                 alpha=False)[0])
    return input.mul_(mask) if inplace else input * mask


def one_hot(tensor, num_classes=-1):
    """int64 one-hot encoding with a new last dim of size num_classes (inferred from the max when -1).

    Reads the values of ``tensor`` to check them (and to infer num_classes), as torch does.
    """
    if tensor._data.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return wrap(jnp.zeros(tuple(tensor.shape) + (num_classes,), jnp.int64))
    if isinstance(tensor._data, jax.core.Tracer) and num_classes != -1:  # (vmap, compile: checked in the program)
        _util.check_later(tensor._data.min() < 0, RuntimeError, "Class values must be non-negative.")
        _util.check_later(tensor._data.max() >= num_classes, RuntimeError,
                          "Class values must be smaller than num_classes.")
        return wrap(jax.nn.one_hot(tensor._data, num_classes, dtype=jnp.int64))
    values = np.asarray(tensor._data)
    if values.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(values.max()) + 1
    elif values.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return wrap(jax.nn.one_hot(tensor._data, num_classes, dtype=jnp.int64))


# ----- pdist ----------------------------------------------------------------------------------------------------
# torch's _pdist_forward: the upper triangle (row-major) of cdist(input, input), by cdist's own formulas
def _pdist_apply(node, grads, mask=None):
    """Under create_graph, torch's gradient of pdist comes from a PdistBackwardBackward0 node, which has no
    derivative."""
    if not grad_enabled():
        return OpNode._apply(node, grads, mask)
    return [apply(_pdist_backward, (grads[0], node._saved_self, node._saved_result), node._statics)]


@op("PdistBackward0", save=("self", "result"), attrs=("p",), node_apply=_pdist_apply)
def _pdist(self, *, p):
    i, j = np.triu_indices(self.shape[0], 1)
    return _cdist.forward(self, self, p=p)[i, j]


def _pdist_grad(grad, self, result, p):
    n = self.shape[0]
    i, j = np.triu_indices(n, 1)
    g = jnp.zeros((n, n), grad.dtype).at[i, j].set(grad)
    g1, g2 = _cdist.backward(g, self, self, jnp.zeros((n, n), result.dtype).at[i, j].set(result), p)
    return g1 + g2


_pdist.derivative(lambda grad, self, result, p: (_pdist_grad(grad, self, result, p),))


@op("PdistBackwardBackward0", save=())
def _pdist_backward(grad, self, result, *, p):
    return _pdist_grad(grad, self, result, p)


@_pdist_backward.derivative
def _(grads):
    raise NotImplementedError("the derivative for '_pdist_backward' is not implemented.")


def pdist(input, p=2):
    """p-norm distances between each pair of rows of a 2-D input, as torch.pdist (PdistBackward0)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if input._data.dtype.kind not in "fV":  # ("V": bfloat16)
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input._data.dtype.itemsize == 2:  # (torch's CPU kernel: float and double only)
        raise NotImplementedError(f"\"pdist\" not implemented for '{type_word(input)}'")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return apply(_pdist, (input,), (float(p),))


from ._layers import (conv2d, max_pool2d, avg_pool2d, layer_norm, batch_norm, embedding,  # noqa: E402,F401
                      scaled_dot_product_attention, multi_head_attention_forward)
from ._activations import *  # noqa: E402,F401,F403  (issue 14's activations and losses)
from ._losses import *  # noqa: E402,F401,F403
from . import _activations, _losses, _misc  # noqa: E402
__all__ += [n for n in _activations.__all__ + _losses.__all__ if n not in __all__]
from ._spatial import *  # noqa: E402,F401,F403  (issue 14's spatial layers: _conv, _pooling, _padding, ...)
