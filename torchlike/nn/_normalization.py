"""group_norm (NativeGroupNormBackward0), and what torch composes: instance_norm (views around batch_norm),
rms_norm (x * rsqrt(mean(x^2) + eps) * weight), local_response_norm (avg pooling of x^2 over channels)."""
import math

import jax
import jax.numpy as jnp
import numpy as np

from .._dtype import bfloat16, float16
from .._warnings import warn_once
from .._internal import CPP_TYPE_NAMES, apply, layout, no_grad, op, opmath, views
from ..ops import pointwise as _pw
from ..ops._registry import _OpNode
from ..ops.special import _add_scalar
from ._layers import _check_mixed, batch_norm
from ._padding import pad
from ._pooling import avg_pool2d, avg_pool3d

__all__ = ["group_norm", "instance_norm", "rms_norm", "local_response_norm"]


def _group_norm_apply(node, grads, mask=None):
    """Without the result's gradient (only the mean's / rstd's reach the node, under create_graph) torch's weight
    and bias gradients are undefined."""
    mask = node._mask if mask is None else mask
    if grads[0] is None:
        mask = (mask[0], False, False)
    return _OpNode._apply(node, grads, mask)


@op("NativeGroupNormBackward0", outputs=("result", "result1", "result2"),
    save=("input", "weight", "result1", "result2"), attrs=("N", "C", "HxW", "group", "eps"),
    node_apply=_group_norm_apply, layout=layout.suggested)
def _group_norm(input, weight, bias, *, N, C, HxW, group, eps):
    """In torch's opmath (as layer_norm's): mean and rstd in the parameters' dtype, the result in the input's."""
    x = opmath(input).reshape(N, group, -1)
    mean = jnp.mean(x, -1)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(x - mean[..., None]), -1) + eps)
    out = ((x - mean[..., None]) * rstd[..., None]).reshape(input.shape)
    chan = (1, -1) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * opmath(weight).reshape(chan)
    if bias is not None:
        out = out + opmath(bias).reshape(chan)
    stat = (weight if weight is not None else bias if bias is not None else input).dtype
    return out.astype(input.dtype), mean.astype(stat), rstd.astype(stat)


@_group_norm.derivative
def _(grads, input, weight, result1, result2, N, C, group, bias_shape=None):
    """torch's formula from the saved mean and rstd (result1, result2; bias, which only shifts, is not saved):
    under create_graph their history carries their own dependence on the input, as torch's."""
    grads = [opmath(g) for g in grads]  # (each gradient is then cast to its input's dtype)
    input, result1, result2 = opmath(input), opmath(result1), opmath(result2)
    weight = None if weight is None else opmath(weight)
    g = grads[0].reshape(N, C, -1)
    xhat = ((input.reshape(N, group, -1) - result1[..., None]) * result2[..., None]).reshape(N, C, -1)
    dw = None if weight is None else jnp.sum(g * xhat, (0, 2))
    db = None if bias_shape is None else jnp.sum(g, (0, 2))
    dxhat = (g if weight is None else g * weight[:, None]).reshape(N, group, -1)
    xhat = xhat.reshape(N, group, -1)
    rstd = result2[..., None]
    dx = rstd * (dxhat - jnp.mean(dxhat, -1, keepdims=True) - xhat * jnp.mean(dxhat * xhat, -1, keepdims=True))
    # the gradients of the mean and rstd outputs (reached under create_graph through the saved result1 / result2)
    dx = dx + (grads[1][..., None] - grads[2][..., None] * rstd * rstd * xhat) / xhat.shape[-1]
    return dx.reshape(input.shape), dw, db


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each of ``num_groups`` channel groups per sample, then scale and shift per channel."""
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    N, C = input.shape[:2]
    if C % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    _check_mixed(input, weight, bias, mixed=True)
    hxw = math.prod(input.shape[2:])
    return apply(_group_norm, (input, weight, bias), (N, C, hxw, int(num_groups), float(eps)))[0]


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Per-sample, per-channel normalisation, as torch: batch_norm of the (1, N*C, ...) view, with weight, bias
    and running statistics repeated N times (the running statistics get the mean of the N updates)."""
    if use_input_stats:
        size = tuple(input.shape)
        if math.prod(size[2:]) == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"torch.Size({list(size)})")
    n, c = input.shape[:2]
    x = input.contiguous().view(1, n * c, *input.shape[2:])
    rep = [None if t is None else t.repeat(n) for t in (weight, bias)]
    with no_grad():
        stats = [None if t is None else t.repeat(n) for t in (running_mean, running_var)]
    out = batch_norm(x, stats[0], stats[1], rep[0], rep[1], use_input_stats, momentum, eps)
    if use_input_stats:
        for t, s in zip((running_mean, running_var), stats):
            if t is not None:
                views._write_quiet(t, jnp.mean(s._data.reshape(n, c), 0))
    return out.view(*input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """x * rsqrt(mean(x^2 over the trailing ``normalized_shape`` dims) + eps) (* weight), composed as torch: half
    types computed in float32, the result in the input's dtype; ``eps`` defaults to float32's (or float64's)
    machine epsilon."""
    ns = (int(normalized_shape),) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    if weight is not None and tuple(weight.shape) != ns:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(ns)}")
    if input.ndim < len(ns) or tuple(input.shape[input.ndim - len(ns):]) != ns:
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape [*{', '.join(map(str, ns))}"
                           f"], but got input of size{list(input.shape)}")
    if weight is not None and weight.dtype != input.dtype:  # (once a process, as torch)
        warn_once("rms_norm dtypes", f"Mismatch dtype between input and weight: input dtype = "
                  f"{CPP_TYPE_NAMES[input.dtype.name]}, weight dtype = {CPP_TYPE_NAMES[weight.dtype.name]}, Cannot "
                  f"dispatch to fused implementation.", stacklevel=3)
    dims = list(range(input.ndim - 1, input.ndim - 1 - len(ns), -1))
    x = input.float() if input.dtype in (float16, bfloat16) else input  # (torch's opmath: float32 for half types)
    if eps is None:
        eps = float(jnp.finfo(x._data.dtype).eps)
    out = x * _pw.rsqrt(apply(_add_scalar, (x.pow(2).mean(dims, keepdim=True),), (float(eps),)))
    return (out if weight is None else out * weight).type_as(input)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + alpha * mean of input^2 over ``size`` neighbouring channels) ** beta, composed as torch."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.shape
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(*sizes)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
