"""torch.nn.functional's activations beyond ops/pointwise's (relu, elu, selu, celu, hardtanh, relu6, logsigmoid...).

Where torch records one node (MishBackward0, HardswishBackward0, HardsigmoidBackward0, SoftshrinkBackward0,
HardshrinkBackward0, ThresholdBackward0/1, GluBackward0, PreluKernelBackward0, RreluWithNoiseBackward0/1) the
activation is one table entry; torch's Python composites (softmin, softsign, tanhshrink, gumbel_softmax,
normalize) are composed of torchlike's ops the same way, so their graphs match torch's node by node.
"""
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._internal import OpDef, OpNode, apply, apply_inplace, grad_enabled, no_grad, type_word, wrap
from .._tensor import _wrap_dim
from ..ops import _layout, creation as _creation, pointwise as _pw
from ..ops._registry import autocast_args as _autocast_args, op as _op
from ..ops.pointwise import _check_tensor_arg, _torch_mask
from .functional import _softmax_dim  # (functional imports this module after defining it)

__all__ = ["gelu", "softplus", "relu6", "selu", "celu", "elu", "leaky_relu", "logsigmoid", "hardtanh", "hardtanh_",
           "elu_", "celu_", "selu_", "leaky_relu_", "relu_", "mish", "hardswish", "hardsigmoid", "softshrink",
           "hardshrink", "threshold", "threshold_", "glu", "prelu", "rrelu", "rrelu_", "softmin", "softsign",
           "tanhshrink", "gumbel_softmax", "normalize"]

op = functools.partial(_op, layout=_layout.ti)  # elementwise: a result takes its input's layout, as in torch
_NOT_REAL = "biuc"


def _entry(node_name, save, forward, derivative, **kw):
    entry = OpDef(node_name, forward, save=save, layout=_layout.ti, **kw)
    entry.derivative(derivative)
    return entry


def _tensor_args(aten_name, *names):
    """Raise torch's TypeError for an argument of ``names`` that is not a Tensor (checked only when the call fails,
    so free on the common path)."""
    def deco(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except (AttributeError, TypeError):
                for k, (name, value) in enumerate(zip(names, args)):
                    _check_tensor_arg(aten_name, name, k + 1, value)
                for name in names:
                    if name in kwargs:
                        _check_tensor_arg(aten_name, name, names.index(name) + 1, kwargs[name])
                raise
        return checked
    return deco


# torch's ATen activations that torchlike's ops/pointwise declares: with torch's TypeError for a non-Tensor input
gelu, softplus, relu6, selu, celu = (_tensor_args(n, "input")(getattr(_pw, n))
                                     for n in ("gelu", "softplus", "relu6", "selu", "celu"))
elu, leaky_relu = _tensor_args("elu", "input")(_pw.elu), _tensor_args("leaky_relu", "input")(_pw.leaky_relu)
logsigmoid = _tensor_args("log_sigmoid", "input")(_pw.logsigmoid)


def _first_order_only(aten_name):
    """``node_apply`` of an entry whose backward torch cannot differentiate: under create_graph its gradient hangs
    off torch's NotImplemented node (edges to the incoming gradient and the saved input), whose backward raises."""
    def derivative(grad):
        raise RuntimeError(f"derivative for aten::{aten_name} is not implemented")
    entry = OpDef("torch::autograd::NotImplemented", lambda result, self, grad: result, save=(), runs_first=True)
    entry.derivative(derivative)

    def node_apply(node, grads, mask=None):
        if not grad_enabled():
            return OpNode._apply(node, grads, mask)
        with no_grad():
            outs = OpNode._apply(node, grads, mask)
        op = node._op
        name = op.inputs[op.diff[0]]  # (the differentiable input, which the entry saves)
        self = node._for_backward[next(k for k, s in enumerate(op.saves) if s[0] == name)].unpack(node)
        return [None if o is None else apply(entry, (o, self, grads[0]), ()) for o in outs]
    return node_apply


def _unary(entry, input, statics=(), inplace=False, inplace_entry=None):
    if inplace:
        return apply_inplace(inplace_entry or entry, input, (input,), statics)
    return apply(entry, (input,), statics)


# ----- mish, hardswish, hardsigmoid ------------------------------------------------------------------------
@op("MishBackward0", save=("self",), attrs=(), refuse={_NOT_REAL: "mish_cpu"})
def _mish(self):
    return self * jnp.tanh(jax.nn.softplus(self))


@_mish.derivative
def _(grad, self):
    t = jnp.tanh(jax.nn.softplus(self))
    return grad * (t + self * jax.nn.sigmoid(self) * (1 - t * t))


@op("HardswishBackward0", save=("self",), attrs=(), refuse={_NOT_REAL: "hardswish_cpu"})
def _hardswish(self):
    return self * jnp.clip(self + 3, 0, 6) / 6


@_hardswish.derivative
def _(grad, self):  # slope 0 up to -3 included, x / 3 + 1/2 strictly inside (-3, 3), 1 from 3
    inner = _torch_mask(self, (self > -3) & (self < 3))
    return jnp.where(self <= -3, 0, jnp.where(self < 3, grad * (inner / 3 + 0.5), grad))


@op("HardsigmoidBackward0", save=("self",), attrs=(), refuse={_NOT_REAL: "hardsigmoid_cpu"},
    node_apply=_first_order_only("hardsigmoid_backward"))
def _hardsigmoid(self):
    return jnp.clip(self + 3, 0, 6) / 6


@_hardsigmoid.derivative
def _(grad, self):
    return jnp.where((self > -3) & (self < 3), grad / 6, 0)


@_tensor_args("mish", "input")
def mish(input, inplace=False):
    """x * tanh(softplus(x)) (MishBackward0)."""
    return _unary(_mish, input, (), inplace)


@_tensor_args("hardswish", "input")
def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6 (HardswishBackward0)."""
    return _unary(_hardswish, input, (), inplace)


@_tensor_args("hardsigmoid", "input")
def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6 (HardsigmoidBackward0)."""
    return _unary(_hardsigmoid, input, (), inplace)


@_tensor_args("hardtanh", "input")
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """clamp(x, min_val, max_val) with zero gradient at and beyond the bounds (HardtanhBackward0)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _pw.hardtanh(input, min_val, max_val, inplace)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place hardtanh (HardtanhBackward0)."""
    return hardtanh(input, min_val, max_val, True)


def elu_(input, alpha=1.0):
    """In-place elu (EluBackward1)."""
    return _pw.elu(input, alpha, True)


def celu_(input, alpha=1.0):
    """In-place celu (CeluBackward1)."""
    return _pw.celu(input, alpha, True)


def selu_(input):
    """In-place selu (EluBackward1)."""
    return _pw.selu(input, True)


def leaky_relu_(input, negative_slope=0.01):
    """In-place leaky_relu (LeakyReluBackward1)."""
    return _pw.leaky_relu(input, negative_slope, True)


def relu_(input):
    """In-place relu (ReluBackward0)."""
    return input.relu_()


# ----- shrinks, threshold ----------------------------------------------------------------------------------
def _shrink_grad(grad, self, lambd):
    return jnp.where((self >= -lambd) & (self <= lambd), 0, grad)


def _softshrink_forward(self, *, lambd):
    lam = jnp.asarray(lambd, self.dtype)
    return jnp.where(self > lam, self - lam, jnp.where(self < -lam, self + lam, jnp.zeros((), self.dtype)))


def _hardshrink_forward(self, *, lambd):
    lam = jnp.asarray(lambd, self.dtype)
    return jnp.where((self >= -lam) & (self <= lam), jnp.zeros((), self.dtype), self)


# (the numbers are dynamic statics, traced: a new value each step compiles nothing)
_softshrink = _entry("SoftshrinkBackward0", ("self",), _softshrink_forward, _shrink_grad, attrs=("lambd",),
                     fused_backward=True, refuse={_NOT_REAL: "softshrink_check"}, dynamic=("lambd",))
_hardshrink = _entry("HardshrinkBackward0", ("self",), _hardshrink_forward, _shrink_grad, attrs=("lambd",),
                     fused_backward=True, refuse={_NOT_REAL: "hardshrink_cpu"}, dynamic=("lambd",))


@_tensor_args("softshrink", "input")
def softshrink(input, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0 (SoftshrinkBackward0)."""
    if lambd < 0:
        top = float(np.finfo(input._data.dtype).max) if input._data.dtype.kind in "fV" else 3.40282e+38
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {type_word(input)}, but found "
                           f"{lambd:g}")
    return apply(_softshrink, (input,), (lambd,))


@_tensor_args("hardshrink", "input")
def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0 (HardshrinkBackward0)."""
    return apply(_hardshrink, (input,), (lambd,))


def _threshold_forward(self, *, threshold, value):
    return jnp.where(self <= threshold, jnp.asarray(value, self.dtype), self)


_threshold = _entry("ThresholdBackward0", ("self",), _threshold_forward,
                    lambda grad, self, threshold, value: jnp.where(self <= threshold, 0, grad),
                    attrs=("threshold",), fused_backward=True, refuse={"bc": "threshold_cpu"},
                    dynamic=("threshold", "value"))
_threshold_inplace = _entry("ThresholdBackward1", ("self",), _threshold_forward, _threshold.backward,  # (its input's
                            # values before the write, as torch saves: where value > threshold, no gradient)
                            attrs=("threshold",), fused_backward=True, refuse={"bc": "threshold_cpu"},
                            dynamic=("threshold", "value"))


@_tensor_args("threshold", "input")
def threshold(input, threshold, value, inplace=False):
    """value where x <= threshold, else x (ThresholdBackward0; in place: ThresholdBackward1)."""
    if inplace:
        return threshold_(input, threshold, value)
    return apply(_threshold, (input,), (threshold, value))


def threshold_(input, threshold, value):
    """In-place threshold (ThresholdBackward1); a target whose elements share memory is written as torch does
    (its TensorIterator skips the overlap check here)."""
    return apply_inplace(_threshold_inplace, input, (input,), (threshold, value), overlap=())


# ----- glu, prelu, rrelu -----------------------------------------------------------------------------------
@op("GluBackward0", save=("self",), attrs=("dim",), unsigned=("dim",), refuse={_NOT_REAL: "glu_cpu"}, layout=None)
def _glu(self, *, dim):
    a, b = jnp.split(self, 2, axis=dim)
    return a * jax.nn.sigmoid(b)


def glu(input, dim=-1):
    """First half of ``dim`` times the sigmoid of the second half (GluBackward0)."""
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return apply(_glu, (input,), (dim,))


@op("PreluKernelBackward0", save=("self", "weight"), attrs=(), refuse={_NOT_REAL: "prelu_cpu"})
def _prelu(self, weight):
    return jnp.where(self > 0, self, weight * self)


@_prelu.derivative
def _(grad, self, weight):
    return jnp.where(self > 0, grad, weight * grad), jnp.where(self > 0, 0, self * grad)


@_tensor_args("prelu", "input", "weight")
def prelu(input, weight):
    """x where x > 0, else weight * x, weight per channel (dim 1) or shared (PreluKernelBackward0)."""
    input, weight = _autocast_args("prelu", input, weight)
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    channels = input.shape[1] if input.ndim >= 2 else 1
    n = weight.numel()
    if input.ndim > 0 and n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = {n} "
                           f"and channel size = {channels}.")
    if weight._data.dtype != input._data.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {type_word(input)} and {type_word(weight)}")
    shape = tuple(n if d == 1 else 1 for d in range(input.ndim))
    if tuple(weight.shape) != shape:  # torch's weight.reshape (a view)
        weight = weight.reshape(shape)
    return apply(_prelu, (input, weight), ())


def _rrelu_grad(grad, self_or_result, noise, lower, upper, training):
    if training and upper - lower > 1e-6:
        return grad * noise
    return jnp.where(self_or_result > 0, grad, grad * ((lower + upper) / 2))


def _rrelu_forward(self, noise, *, lower, upper, training):
    if training:
        return self * noise
    return jnp.where(self > 0, self, self * jnp.asarray((lower + upper) / 2, self.dtype))


_RRELU = dict(nondiff=("noise",), attrs=("lower", "training", "upper"), refuse={_NOT_REAL: "leaky_relu_cpu"},
              fused_backward=True)
_rrelu = _entry("RreluWithNoiseBackward0", ("noise", "self"), _rrelu_forward,
                lambda grad, self, noise, lower, upper, training: _rrelu_grad(grad, self, noise, lower, upper,
                                                                              training), **_RRELU)
_rrelu_inplace = _entry("RreluWithNoiseBackward1", ("noise", "result"), _rrelu_forward,
                        lambda grad, result, noise, lower, upper, training: _rrelu_grad(grad, result, noise, lower,
                                                                                        upper, training), **_RRELU)


@functools.partial(jax.jit, static_argnames=("lower", "upper"))
def _rrelu_noise(key, x, *, lower, upper):
    r = jax.random.uniform(key, x.shape, x.dtype, lower, upper)
    return jnp.where(x <= 0, r, jnp.ones((), x.dtype))


@_tensor_args("rrelu", "input")
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Leaky relu with a random slope in [lower, upper] per negative element when training, their mean
    otherwise (RreluWithNoiseBackward0; in place: RreluWithNoiseBackward1)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    x = input._data
    if training and x.dtype.kind in "fV":
        noise = wrap(_rrelu_noise(_creation._key(None), x, lower=float(lower), upper=float(upper)))
    else:
        noise = wrap(jnp.zeros(x.shape, x.dtype))  # (torch's noise is an uninitialised empty_like in eval)
    statics = (lower, upper, bool(training))
    if inplace:
        return apply_inplace(_rrelu_inplace, input, (input, noise), statics)
    return apply(_rrelu, (input, noise), statics)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place rrelu (RreluWithNoiseBackward1)."""
    return rrelu(input, lower, upper, training, True)


# ----- Python composites -----------------------------------------------------------------------------------
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-x) along ``dim`` (SoftmaxBackward0 over NegBackward0)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.ndim, _stacklevel)
    return (-input).softmax(dim) if dtype is None else (-input).softmax(dim, dtype=dtype)


def softsign(input):
    """x / (|x| + 1)."""
    return input / (input.abs() + 1)


def tanhshrink(input):
    """x - tanh(x)."""
    return input - input.tanh()


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Softmax of (logits + Gumbel noise) / tau; ``hard``: one-hot forward, soft gradient (straight through)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -logits.new_empty(logits.shape).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = logits.new_zeros(logits.shape).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(||input||_p along dim, eps)."""
    norm = input.norm(p, dim, keepdim=True)
    if out is None:
        return input / norm.clamp_min(eps).expand_as(input)
    return _pw.div(input, norm.clamp_min_(eps).expand_as(input), out=out)
