"""torch's top-level functions that are thin wrappers: tensordot, integration and differentiation of samples, window
functions, the functional aliases torch has beside ``torch.nn.functional`` (with their own signatures), predicates and
the top-level in-place functions.

Each is composed from torchlike's ops as ATen composes it, so values, dtypes, gradients and errors are torch's. Its
torch signature goes into ``_bind``'s table before it is bound inside the guard, so an argument of a wrong type
raises torch's TypeError.
"""
import inspect
import itertools
import math
import numbers
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from . import _dtype
from ._tensor import Tensor, _typename, _wrap_dim
from .backends import cuda as _cuda
from .nn import functional as _F
from .nn import _losses
from .ops import _bind, creation as _creation, linalg as _linalg
from .ops import linalg_module as _linalg_module
from .ops._out import _write_out
from .ops.shape import _aten_slice, cat as _cat
from .ops._util import _check_unique

_OPTIONS = "*, TensorOptions"
_SIGNATURES = {  # torch 2.13's Python signatures (torchgen's, in _bind's notation)
    "scalar_tensor": "Scalar s, " + _OPTIONS,
    "trapezoid": "Tensor y, Tensor x, *, int64_t dim=-1 | Tensor y, *, Scalar dx=1, int64_t dim=-1",
    "trapz": "Tensor y, *, double dx=1, int64_t dim=-1 | Tensor y, Tensor x, *, int64_t dim=-1",
    "cumulative_trapezoid": "Tensor y, Tensor x, *, int64_t dim=-1 | Tensor y, *, Scalar dx=1, int64_t dim=-1",
    "vander": "Tensor x, int64_t? N=None, bool increasing=False",
    "gradient": " | ".join("Tensor input, *, " + s + "int64_t edge_order=1" for s in (
        "IntArrayRef dim, ", "Scalar spacing, IntArrayRef dim, ", "Scalar? spacing=None, int64_t? dim=None, ",
        "ArrayRef<Scalar> spacing, int64_t? dim=None, ", "ArrayRef<Scalar> spacing, IntArrayRef dim, ",
        "TensorList spacing, int64_t? dim=None, ", "TensorList spacing, IntArrayRef dim, ")),
    **{n: f"int64_t window_length, {_OPTIONS} | int64_t window_length, bool periodic, {_OPTIONS}"
       for n in ("hann_window", "blackman_window", "bartlett_window")},
    "hamming_window": " | ".join(f"int64_t window_length{extra}, {_OPTIONS}" for extra in (
        "", ", bool periodic", ", bool periodic, double alpha", ", bool periodic, double alpha, double beta")),
    "kaiser_window": " | ".join(f"int64_t window_length{extra}, {_OPTIONS}" for extra in (
        "", ", bool periodic", ", bool periodic, double beta")),
    "dropout": "Tensor input, double p, bool train", "dropout_": "Tensor input, double p, bool train",
    "layer_norm": "Tensor input, SymIntArrayRef normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                  "double eps=1e-05, bool cudnn_enable=True",
    "group_norm": "Tensor input, int64_t num_groups, Tensor? weight=None, Tensor? bias=None, double eps=1e-05, "
                  "bool cudnn_enabled=True",
    "rms_norm": "Tensor input, SymIntArrayRef normalized_shape, Tensor? weight=None, double? eps=None",
    "embedding": "Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
                 "bool sparse=False",
    "threshold": "Tensor input, Scalar threshold, Scalar value, *, Tensor out=None",
    "threshold_": "Tensor input, Scalar threshold, Scalar value",
    "prelu": "Tensor input, Tensor weight",
    "bilinear": "Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None",
    "hardshrink": "Tensor input, Scalar lambd=0.5, *, Tensor out=None",
    "kl_div": "Tensor input, Tensor target, int64_t reduction=at::Reduction::Mean, *, bool log_target=False",
    "pdist": "Tensor input, double p=2",
    "clamp_": "Tensor input, Tensor? min=None, Tensor? max=None | Tensor input, Scalar? min=None, Scalar? max=None",
    "clip_": "Tensor input, Tensor? min=None, Tensor? max=None | Tensor input, Scalar? min=None, Scalar? max=None",
    "clamp_min_": "Tensor input, Tensor min | Tensor input, Scalar min",
    "clamp_max_": "Tensor input, Tensor max | Tensor input, Scalar max",
    "fill_": "Tensor input, Tensor value | Tensor input, Scalar value",
    "round_": "Tensor input | Tensor input, *, int64_t decimals",
    "nan_to_num_": "Tensor input, double? nan=None, double? posinf=None, double? neginf=None",
}
# torch's top-level in-place functions: each is the Tensor method of its name
_INPLACE = ("relu_ sigmoid_ tanh_ exp_ log_ sqrt_ rsqrt_ abs_ neg_ sin_ cos_ clamp_ clamp_min_ clamp_max_ clip_ "
            "fill_ zero_ round_ floor_ ceil_ trunc_ frac_ square_ erf_ reciprocal_ nan_to_num_ detach_").split()
for _n in _INPLACE + ["is_conj", "is_neg", "is_inference", "get_device", "selu_"]:
    _SIGNATURES.setdefault(_n, "Tensor input")
_bind._TABLES[False].update(_SIGNATURES)
_bind._INNER["tensordot"] = ("Tensor input, Tensor other, IntArrayRef dims_self, IntArrayRef dims_other, *, "
                             "Tensor out=None")  # (the C function torch's Python tensordot calls)


def _maybe_out(name, out, compute, inputs, expect=None):
    return compute() if out is None else _write_out(name, compute, out, inputs, expect=expect)


# ----- matmul precision ----------------------------------------------------------------------------------------
_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """torch.set_float32_matmul_precision: recorded (and read back), so programs that set it run. It changes no
    numerics here: JAX on CPU computes float32 matmuls in float32."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {_bind._type_name(precision)}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", stacklevel=2)
        return
    _precision[0] = precision
    _cuda.matmul.allow_tf32 = precision != "highest"  # (as torch sets its cuBLAS flags)
    _cuda.matmul.fp32_precision = "ieee" if precision == "highest" else "tf32"


def get_float32_matmul_precision():
    """torch.get_float32_matmul_precision: the precision last set (default "highest")."""
    return _precision[0]


# ----- creation --------------------------------------------------------------------------------------------------
def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """torch.scalar_tensor: a 0-d tensor of ``s``, of the default float dtype unless ``dtype`` says otherwise."""
    if isinstance(s, np.generic) or isinstance(s, Tensor) and s.ndim == 0 and not s.requires_grad:
        s = s.item()  # (torch's parser takes a 0-d tensor for a number)
    if not isinstance(s, numbers.Number):
        raise TypeError("scalar_tensor")  # (the guard raises torch's error)
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    return _creation._full((), s, d, device, requires_grad)


def _window(name, n, periodic, values, dtype, layout, device, pin_memory, requires_grad):
    """torch's window functions: its checks, the window of ``values(k, m)`` over k = 0..m-1 (m = n + 1 when
    periodic, then cut to n), computed in float64 and rounded to the dtype."""
    d = _dtype.to_dtype(dtype) if dtype is not None else _dtype.get_default_dtype()
    if d._category != 2 and not d.is_complex:
        layout = "Strided" if layout is not None else "Strided (default)"
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{_linalg._CPP_NAMES[d.name]}, device=cpu, layout={layout}, requires_grad=false (default), "
                           f"pinned_memory={'true' if pin_memory else 'false'}, memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    if d.is_complex and n > 1:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype._SCALAR_TYPE[d.name]}'")
    m = n + 1 if periodic and n > 1 else n
    window = values(np.arange(m, dtype=np.float64), m)[:n] if n > 1 else np.ones(n, np.float64)
    return _creation._finish(window.astype(d._np), device, requires_grad)


def _hamming(alpha, beta):
    return lambda k, m: alpha - beta * np.cos(k * (2 * math.pi / (m - 1)))


def _blackman(k, m):
    w = k * (math.pi / (m - 1))
    return 0.08 * np.cos(4 * w) - 0.5 * np.cos(2 * w) + 0.42


def _bartlett(k, m):
    w = k * (2.0 / (m - 1))
    half = (m - 1) // 2 + 1
    return np.concatenate([w[:half], 2 - w[half:]])


def _kaiser(beta):
    def values(k, m):
        alpha = (m - 1) / 2.0
        return np.i0(beta * np.sqrt(np.abs(1 - ((k - alpha) / alpha) ** 2))) / np.i0(beta)
    return values


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                requires_grad=False):
    """torch.hann_window: 0.5 - 0.5 cos(2 pi k / (N - 1))."""
    return _window("hann_window", window_length, periodic, _hamming(0.5, 0.5), dtype, layout, device, pin_memory,
                   requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    """torch.hamming_window: alpha - beta cos(2 pi k / (N - 1))."""
    return _window("hamming_window", window_length, periodic, _hamming(alpha, beta), dtype, layout, device,
                   pin_memory, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """torch.blackman_window: 0.42 - 0.5 cos(2 pi k / (N - 1)) + 0.08 cos(4 pi k / (N - 1))."""
    return _window("blackman_window", window_length, periodic, _blackman, dtype, layout, device, pin_memory,
                   requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, pin_memory=False,
                    requires_grad=False):
    """torch.bartlett_window: the triangular window."""
    return _window("bartlett_window", window_length, periodic, _bartlett, dtype, layout, device, pin_memory,
                   requires_grad)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  pin_memory=False, requires_grad=False):
    """torch.kaiser_window: I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    return _window("kaiser_window", window_length, periodic, _kaiser(beta), dtype, layout, device, pin_memory,
                   requires_grad)


def vander(x, N=None, increasing=False):
    """torch.vander: the powers of a 1-D x as columns, decreasing unless ``increasing`` (integers as int64)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    n = x.shape[0] if N is None else N
    dt = _dtype.promote_types(x.dtype, _dtype.int64)
    if n < 2:
        result = _creation.ones((x.shape[0], n), dtype=dt)
    else:
        result = _linalg_module._vander(x, n)
    return result if increasing else result.flip(1)


# ----- contractions ----------------------------------------------------------------------------------------------
def _int_list(v):
    return isinstance(v, (tuple, list)) and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool)
                                                for i in v)


def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: contract a's dims with b's (an int n: a's last n with b's first n; or two lists)."""
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or list[list[int]] "
                           f"containing two lists, but got dims={dims}")
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    elif isinstance(dims, Tensor) and dims.numel() > 1:
        if dims.size()[0] != 2:
            raise AssertionError(f"dims tensor must have size 2 in first dimension, got {dims.size()[0]}")
        dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
    else:
        n = int(dims.item()) if isinstance(dims, Tensor) else dims
        if n < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if not isinstance(dims, Tensor) and n > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-n, 0)), list(range(n))
    if not (isinstance(a, Tensor) and isinstance(b, Tensor) and _int_list(dims_a) and _int_list(dims_b)) or (
            out is not None and not isinstance(out, Tensor)):  # torch's C function parses what its Python one passes
        raise _bind._argument_error("tensordot", None, (a, b, dims_a, dims_b), {} if out is None else {"out": out})
    return _linalg._copy_out(lambda: _linalg._tensordot(a, b, dims_a, dims_b), out)


def unravel_index(indices, shape):
    """torch.unravel_index: flat indices into a tuple of int64 coordinate tensors for ``shape``."""
    if indices.is_complex() or indices.is_floating_point() or indices.dtype == _dtype.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{indices.dtype.name}")
    if not isinstance(shape, (int, Sequence)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = (shape,)
    for dim in shape:
        if not isinstance(dim, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
    shape = tuple(shape)
    if not all(dim >= 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    coefs = list(reversed(list(itertools.accumulate(reversed(shape[1:] + (1,)), func=operator.mul))))
    flat = indices.unsqueeze(-1).floor_divide(_creation.tensor(coefs, dtype=_dtype.int64))
    return (flat % _creation.tensor(shape, dtype=_dtype.int64)).unbind(-1)


# ----- integration -----------------------------------------------------------------------------------------------
def _slice(t, dim, start, stop):
    return t[(slice(None),) * (dim % t.ndim) + (slice(start, stop),)]


def _scaled(op, t, value):
    """t op a Python number, as ATen's Scalar overloads record it (MulBackward1 / DivBackward1)."""
    return _losses._scalar_op(op, t, float(value))


def _spacing(name, y, x, dim):
    """dx along ``dim`` from the sample points x (viewed to broadcast against y, as torch)."""
    if y.dtype == _dtype.bool or x.dtype == _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = x.view([x.shape[0] if i == dim else 1 for i in range(y.ndim)])
    elif x.ndim < y.ndim:
        x = x.view((1,) * (y.ndim - x.ndim) + tuple(x.shape))
    return _slice(x, dim, 1, None) - _slice(x, dim, 0, -1)


def _check_dx(name, y, dx):
    if y.dtype == _dtype.bool:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if isinstance(dx, Tensor):
        dx = dx.item()
    if isinstance(dx, (bool, np.bool_, complex, np.complexfloating)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return float(dx)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.trapezoid (and torch.trapz): the trapezoid rule along ``dim``, over sample points x or spacing dx."""
    if x is not None and dx is not None:
        raise TypeError("trapezoid")  # (the guard raises torch's error)
    if x is not None:
        dim = _wrap_dim(dim, y.ndim)
    if y.size(dim) == 0:  # (numpy's 0 for no samples)
        return _creation.zeros([s for i, s in enumerate(y.shape) if i != dim % y.ndim], dtype=y.dtype)
    if x is not None:
        dx = _spacing("trapezoid", y, x, dim)
        return _scaled(_F._div_scalar, ((_slice(y, dim, 0, -1) + _slice(y, dim, 1, None)) * dx).sum(dim), 2.0)
    dx = _check_dx("trapezoid", y, 1 if dx is None else dx)
    ends = _scaled(_F._mul_scalar, y.select(dim, 0) + y.select(dim, -1), 0.5)
    return _scaled(_F._mul_scalar, y.sum(dim) - ends, dx)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """torch.cumulative_trapezoid: the running trapezoid rule along ``dim`` (one fewer element there)."""
    if x is not None and dx is not None:
        raise TypeError("cumulative_trapezoid")  # (the guard raises torch's error)
    if x is not None:
        dim = _wrap_dim(dim, y.ndim)
        dx = _spacing("cumulative_trapezoid", y, x, dim)
        return _scaled(_F._div_scalar, ((_slice(y, dim, 0, -1) + _slice(y, dim, 1, None)) * dx).cumsum(dim), 2.0)
    dx = _check_dx("cumulative_trapezoid", y, 1 if dx is None else dx)
    return _scaled(_F._mul_scalar, _slice(y, dim, 0, -1) + _slice(y, dim, 1, None), dx / 2.0).cumsum(dim)


def _by_scalar(entry, t, value):
    """t times / divided by a C++ Scalar (MulBackward1 / DivBackward1, the Scalar saved as given); an integer tensor
    as torch promotes it (it records nothing)."""
    if not (t.is_floating_point() or t.is_complex()):
        return t.mul(value) if entry is _F._mul_scalar else t.div(value)
    return _losses._scalar_op(entry, t, value)


def _check_gradient(input, n_spacing, dims, edge_order):
    """torch's pre_check_gradient: ``n_spacing`` (None: not given) against ``dims`` (None: not given)."""
    if input.dtype == _dtype.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if n_spacing is not None and dims is None and n_spacing != input.ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to "
                           f"'self.dim() = {input.ndim}', since dim argument was not given, but got a list of length "
                           f"{n_spacing}")
    if n_spacing is not None and dims is not None and n_spacing != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           f"arguments to have the same length, but got a spacing argument of length {n_spacing} and a "
                           f"dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        _check_unique(dims, input.ndim)
    for d in range(input.ndim) if dims is None else dims:
        if input.size(d) < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")


def _gradient_scalar(y, d, dx, edge_order):
    """torch's gradient_helper_float along dim d: central differences inside, one-sided ones (of ``edge_order``)
    at the two ends, for samples ``dx`` apart."""
    def s(start, end=None):
        return _aten_slice(y, d, start, end)
    div, mul = _F._div_scalar, _F._mul_scalar
    center = _by_scalar(div, s(2) - s(0, -2), dx)
    if edge_order == 1:
        prepend = _by_scalar(div, s(1, 2) - s(0, 1), dx)
        append = _by_scalar(div, s(-1) - s(-2, -1), dx)
    else:
        prepend = _by_scalar(div, _by_scalar(mul, s(0, 1), -1.5) + _by_scalar(mul, s(1, 2), 2)
                             - _by_scalar(mul, s(2, 3), 0.5), dx)
        append = _by_scalar(div, _by_scalar(mul, s(-3, -2), 0.5) - _by_scalar(mul, s(-2, -1), 2)
                            + _by_scalar(mul, s(-1), 1.5), dx)
    return _cat([prepend, _by_scalar(div, center, 2), append], d)


def _gradient_coordinates(y, d, x, edge_order):
    """torch's gradient_helper along dim d, for samples at the coordinates x (1-D): second-order central
    differences inside, one-sided ones of ``edge_order`` at the ends."""
    if x.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one dimension, but got an "
                           f"element with {x.ndim} dimensions!")
    d = _wrap_dim(d, y.ndim)
    shape = [-1 if i == d else 1 for i in range(y.ndim)]
    h = x.diff(1, 0)
    h1, h2 = _aten_slice(h, 0, 0, -1), _aten_slice(h, 0, 1)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _aten_slice(y, d, 0, -2) + b * _aten_slice(y, d, 1, -1) + c * _aten_slice(y, d, 2)
    if edge_order == 1:
        prepend = (_aten_slice(y, d, 1, 2) - _aten_slice(y, d, 0, 1)) / h[0]
        append = (_aten_slice(y, d, -1) - _aten_slice(y, d, -2, -1)) / h[-1]
    else:
        h0, h1, hl, hm = h[0], h[1], h[-1], h[-2]
        mul = _F._mul_scalar
        prepend = (-(_by_scalar(mul, h0, 2.0) + h1) / (h0 * (h0 + h1)) * _aten_slice(y, d, 0, 1)
                   + (h0 + h1) / (h0 * h1) * _aten_slice(y, d, 1, 2)
                   + (-h0) / (h1 * (h0 + h1)) * _aten_slice(y, d, 2, 3))
        append = (hl / (hm * (hl + hm)) * _aten_slice(y, d, -3, -2)
                  + -(hl + hm) / (hl * hm) * _aten_slice(y, d, -2, -1)
                  + (_by_scalar(mul, hl, 2) + hm) / (hl * (hl + hm)) * _aten_slice(y, d, -1))
    return _cat([prepend, center, append], d)


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """torch.gradient: the derivative of the samples ``input`` along each of ``dim`` (default all), by central
    differences inside and one-sided ones of ``edge_order`` (1 or 2) at the ends; ``spacing``: the samples' spacing
    (a number, or one per dim) or their coordinates (one 1-D tensor per dim). A tuple of tensors."""
    listed = isinstance(dim, (list, tuple))
    dims = list(dim) if listed else list(range(input.ndim)) if dim is None else [dim]
    given = None if dim is None else dims  # (the dims torch's checks see)
    if spacing is None or isinstance(spacing, numbers.Number) or (
            isinstance(spacing, Tensor) and spacing.ndim == 0 and not spacing.requires_grad):
        unit = 1.0 if spacing is None else spacing.item() if isinstance(spacing, Tensor) else spacing
        _check_gradient(input, None if spacing is None and not listed else len(dims), given, edge_order)
        return tuple(_gradient_scalar(input, _wrap_dim(d, input.ndim), unit, edge_order) for d in dims)
    if not isinstance(spacing, (list, tuple)):
        raise TypeError("gradient")  # (the guard raises torch's error)
    if all(isinstance(s, numbers.Number) for s in spacing):
        _check_gradient(input, len(spacing), given, edge_order)
        return tuple(_gradient_scalar(input, _wrap_dim(d, input.ndim), dx, edge_order) for d, dx in zip(dims, spacing))
    if all(isinstance(s, Tensor) for s in spacing):
        _check_gradient(input, len(spacing), given, edge_order)
        return tuple(_gradient_coordinates(input, d, x, edge_order) for d, x in zip(dims, spacing))
    raise TypeError("gradient")


# ----- torch's functional aliases ----------------------------------------------------------------------------
def _check_dropout(p, train):
    if not isinstance(train, bool):
        raise TypeError("dropout")  # (the guard raises torch's error)
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {format(float(p), 'g')}")


def dropout(input, p, train):
    """torch.dropout: F.dropout with torch's RuntimeError for a p outside [0, 1]."""
    _check_dropout(p, train)
    return _F.dropout(input, p, train)


def dropout_(input, p, train):
    """torch.dropout_: in-place F.dropout."""
    _check_dropout(p, train)
    return _F.dropout(input, p, train, inplace=True)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    """torch.layer_norm: F.layer_norm (NativeLayerNormBackward0)."""
    return _F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    """torch.group_norm: F.group_norm (NativeGroupNormBackward0)."""
    return _F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """torch.rms_norm: F.rms_norm."""
    if not isinstance(normalized_shape, (tuple, list)):
        raise TypeError("rms_norm")  # (the guard raises torch's error)
    return _F.rms_norm(input, normalized_shape, weight, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding: F.embedding with the weight first; a padding_idx outside [0, rows) masks no row."""
    padding = padding_idx if weight.ndim == 2 and 0 <= padding_idx < weight.shape[0] else None
    return _F.embedding(indices, weight, padding, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def threshold(input, threshold, value, *, out=None):
    """torch.threshold: F.threshold."""
    return _maybe_out("threshold", out, lambda: _F.threshold(input, threshold, value), (input,))


def hardshrink(input, lambd=0.5, *, out=None):
    """torch.hardshrink: F.hardshrink."""
    return _maybe_out("hardshrink", out, lambda: _F.hardshrink(input, lambd), (input,))


def kl_div(input, target, reduction=0, *, log_target=False):
    """torch.kl_div: F.kl_div with reduction as torch's enum (1 mean, 2 sum, else none). Called without it, torch
    does not reduce (its binding reads the declared default, at::Reduction::Mean, as 0)."""
    loss = _F.kl_div(input, target, reduction="none", log_target=log_target)
    return _losses._apply_reduction(loss, reduction if reduction in (1, 2) else 0)


threshold_, selu_, prelu, bilinear, pdist = _F.threshold_, _F.selu_, _F.prelu, _F.bilinear, _F.pdist


# ----- predicates --------------------------------------------------------------------------------------------
def is_conj(input):
    """torch.is_conj: whether ``input`` is a conj() view."""
    return input.is_conj()


def is_neg(input):
    """torch.is_neg: always False (torchlike has no negative bit)."""
    return False


def is_inference(input):
    """torch.is_inference: whether ``input`` was made in inference mode."""
    return input.is_inference()


def get_device(input):
    """torch.get_device: -1 on CPU, else the device index."""
    return input.get_device()


def typename(obj, /):
    """torch.typename: Tensor.type() for a tensor ('torch.FloatTensor'), else the qualified class name."""
    return _typename(obj)


def _inplace(name):
    """torch.<name>: the Tensor method ``name`` (its signature, ``self`` named ``input``)."""
    method = getattr(Tensor, name)

    def fn(input, *args, **kwargs):
        return method(input, *args, **kwargs)
    params = list(inspect.signature(method).parameters.values())
    fn.__signature__ = inspect.Signature([params[0].replace(name="input")] + params[1:])
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: ``input.{name}(...)``."
    return fn


for _n in _INPLACE:
    globals()[_n] = _inplace(_n)

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision", "scalar_tensor", "hann_window",
           "hamming_window", "blackman_window", "bartlett_window", "kaiser_window", "vander", "tensordot",
           "unravel_index", "trapezoid", "trapz", "cumulative_trapezoid", "gradient", "dropout",
           "dropout_", "layer_norm", "group_norm", "rms_norm", "embedding", "threshold", "threshold_", "selu_",
           "prelu", "bilinear", "hardshrink", "kl_div", "pdist", "is_conj", "is_neg", "is_inference", "get_device",
           "typename"] + _INPLACE
_bind.guarded(globals(), " ".join(__all__))
