"""Reductions: sum, mean, prod, amax/amin, max/min, var/std, logsumexp, softmax family, cumsum, norm,
argmax/argmin, all/any, histc, bincount.

Dims reach the table as torch's caller wrote them (``(0, -1)``), so each node's ``_saved_dim`` reads as
torch's does (a negative dim shows as ``2**64 + d``, as torch 2.13 prints it); forwards and formulas
normalise them with the input's rank at trace time. ``dim=()`` reduces every dim, as in torch (all/any: none).
"""
import builtins
import math
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap, _wrap_dim, _type_string
from ._return_types import structseq
from ._registry import op, _apply, _apply_inplace, _check_autograd_inplace
from ._bind import public
from . import _out
from ._out import _write_out
from ._util import _HALF, _check_unique
from .linalg import _bad_inplace
from .pointwise import maximum, minimum, _apply_float, _abs_torch, _pow_torch, _real_sign

_NOT_GIVEN = object()
_pymax = builtins.max  # this module defines torch's max/min/sum/all/any


# ----- dims ------------------------------------------------------------------------------------------------
def _index(d, fn):
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
        raise TypeError(f"{fn}(): argument 'dim' (position 1) must be int, not {type(d).__name__}")
    return operator.index(d)


def _dim_list(dim, ndim, fn):
    """torch's dims as written (a tuple of ints), checked: IndexError out of range, no repeats."""
    dims = (_index(dim, fn),) if not isinstance(dim, (tuple, list)) else tuple(_index(d, fn) for d in dim)
    _check_unique(dims, ndim)
    return dims


def _keepdim(keepdim):
    """``keepdim`` as torch's parser takes it: a bool (anything else fails, and the binding's guard says how)."""
    if keepdim is True or keepdim is False:
        return keepdim
    raise TypeError(f"keepdim must be bool, not {type(keepdim).__name__}")


def _one_dim(dim, ndim, fn):
    d = _index(dim, fn)
    _wrap_dim(d, ndim)
    return d


def _axes(dim, ndim):
    """Normalised jax axes of a dim tuple (None or (): every dim)."""
    if not dim:
        return tuple(range(ndim))
    return tuple(d % ndim for d in dim) if ndim else ()


def _axis(dim, ndim):
    return dim % ndim if ndim else None


def _restore(g, axes, keepdim):
    """Put reduced dims back (size 1) so g broadcasts against the input."""
    return g if keepdim or not axes else jnp.expand_dims(g, axes)


def _type_word(np_dtype):
    return _type_string(np.dtype(np_dtype))[6:-6]


def _is_float(t):
    return t._data.dtype.kind in "fcV"


def _np_dtype(dtype):
    return _dtype.to_dtype(dtype)._np


# ----- sum, mean ---------------------------------------------------------------------------------------------
def _sum_dtype(t, dtype):
    if dtype is not None:
        return _np_dtype(dtype)
    d = t._data.dtype
    return np.dtype(np.int64) if d.kind in "biu" else d


def _accumulated(reduce, x, dtype, **kw):
    """``reduce(x, dtype=dtype, **kw)`` in torch's CPU accumulate type: float16 and bfloat16 sums accumulate in
    float32 and round once (JAX, given the narrow dtype, accumulates in it: a 2,048-element bfloat16 row summed 1%
    off)."""
    if dtype in _HALF:
        return reduce(x.astype(dtype).astype(jnp.float32), **kw).astype(dtype)
    return reduce(x, dtype=dtype, **kw)


@op("SumBackward0", save=(), attrs=("self_sym_sizes",))
def _sum_all(self, *, dtype):
    return _accumulated(jnp.sum, self, dtype)


@_sum_all.derivative
def _(grad, self_shape):
    return jnp.broadcast_to(grad, self_shape)


@op("SumBackward1", save=(), attrs=("dim", "keepdim", "self_sym_sizes"), unsigned=("dim",))
def _sum_dim(self, *, dim, keepdim, dtype):
    return _accumulated(jnp.sum, self, dtype, axis=_axes(dim, self.ndim), keepdims=keepdim)


@_sum_dim.derivative
def _(grad, dim, keepdim, self_shape):
    return jnp.broadcast_to(_restore(grad, _axes(dim, len(self_shape)), keepdim), self_shape)


@public
def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A001 - torch's name
    """Sum of all elements (SumBackward0) or over ``dim`` (SumBackward1); integers sum to int64; into ``out``: summed
    in out's dtype."""
    if out is not None:
        if dim is None:  # torch's sum without dim has no out= (the guard raises torch's TypeError)
            raise TypeError("sum(): out= needs dim")
        return _write_out("sum", lambda: sum(input, dim, keepdim, dtype=dtype or out.dtype), out, (input,), "sum")
    dt = _sum_dtype(input, dtype)
    if dim is None and not keepdim:
        return _apply(_sum_all, (input,), (dt,))
    dims = None if dim is None else _dim_list(dim, input.ndim, "sum")
    return _apply(_sum_dim, (input,), (dims, _keepdim(keepdim), dt))


# self_sym_numel: the input's element count, passed as a static because torch shows it (_saved_self_sym_numel)
@op("MeanBackward0", save=(), attrs=("self_sym_numel", "self_sym_sizes"))
def _mean_all(self, *, dtype, self_sym_numel):
    return _accumulated(jnp.mean, self, dtype)


@_mean_all.derivative
def _(grad, self_shape, self_sym_numel):
    return jnp.broadcast_to(grad / _pymax(self_sym_numel, 1), self_shape)


@op("MeanBackward1", save=(), attrs=("dim", "keepdim", "self_sym_numel", "self_sym_sizes"), unsigned=("dim",))
def _mean_dim(self, *, dim, keepdim, dtype, self_sym_numel):
    return _accumulated(jnp.mean, self, dtype, axis=_axes(dim, self.ndim), keepdims=keepdim)


@_mean_dim.derivative
def _(grad, dim, keepdim, self_shape):
    axes = _axes(dim, len(self_shape))
    n = int(np.prod([self_shape[d] for d in axes]))
    return jnp.broadcast_to(_restore(grad, axes, keepdim) / _pymax(n, 1), self_shape)


@public
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements (MeanBackward0) or over ``dim`` (MeanBackward1); floating inputs only."""
    dt = _np_dtype(dtype) if dtype is not None else input._data.dtype
    if np.dtype(dt).kind not in "fcV":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_type_word(dt)}")
    numel = input.numel()
    if dim is None and not keepdim:
        return _apply(_mean_all, (input,), (dt, numel))
    dims = None if dim is None else _dim_list(dim, input.ndim, "mean")
    return _apply(_mean_dim, (input,), (dims, _keepdim(keepdim), dt, numel))


# ----- prod --------------------------------------------------------------------------------------------------
def _prod_of_others(x, axis):
    """Product of all other elements along axis, without dividing (exact with zeros in the input)."""
    n = x.shape[axis]
    ones = jnp.ones_like(jax.lax.slice_in_dim(x, 0, 1, axis=axis))
    left = jnp.concatenate([ones, jnp.cumprod(jax.lax.slice_in_dim(x, 0, n - 1, axis=axis), axis=axis)], axis)
    rev = jnp.flip(x, axis)
    right = jnp.concatenate([ones, jnp.cumprod(jax.lax.slice_in_dim(rev, 0, n - 1, axis=axis), axis=axis)], axis)
    return left * jnp.flip(right, axis)


@op("ProdBackward0", save=("self", "result"), attrs=())
def _prod_all(self, *, dtype):
    return jnp.prod(self, dtype=dtype)


def _prod_grad(grad, x, result, others):
    """torch's prod_backward: grad * result / x when the input has no zero (so a second order flows through the
    result as in torch), else the product of the others (exact with zeros)."""
    has_zero = jnp.any(x == 0)
    ratio = result / jnp.where(has_zero, 1, x)  # (finite in the branch not taken)
    return grad * jnp.conj(jnp.where(has_zero, others, ratio))


@_prod_all.derivative
def _(grad, self, result):
    x = self.astype(result.dtype)
    if x.ndim == 0:  # torch: the gradient itself (no dependence on the input)
        return grad
    if x.size == 0:
        return jnp.zeros(x.shape, x.dtype)
    return _prod_grad(grad, x, result, _prod_of_others(x.reshape(-1), 0).reshape(x.shape))


@op("ProdBackward1", save=("self", "result"), attrs=("dim", "keepdim"), unsigned=("dim",))
def _prod_dim(self, *, dim, keepdim, dtype):
    return jnp.prod(self, axis=_axis(dim, self.ndim), keepdims=keepdim, dtype=dtype)


@_prod_dim.derivative
def _(grad, self, result, dim, keepdim):
    x = self.astype(result.dtype)
    if x.ndim == 0:
        return grad
    axis = _axis(dim, x.ndim)
    if x.shape[axis] == 0:
        return jnp.zeros(x.shape, x.dtype)
    return _prod_grad(_restore(grad, (axis,), keepdim), x, _restore(result, (axis,), keepdim),
                      _prod_of_others(x, axis))


@public
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements (ProdBackward0) or along one ``dim`` (ProdBackward1); exact gradient with zeros."""
    dt = _sum_dtype(input, dtype)
    if dim is None:
        if keepdim:
            raise TypeError("prod() received an invalid combination of arguments - got (keepdim=bool)")
        return _apply(_prod_all, (input,), (dt,))
    return _apply(_prod_dim, (input,), (_one_dim(dim, input.ndim, "prod"), _keepdim(keepdim), dt))


# ----- amax / amin, max / min ---------------------------------------------------------------------------------
def _check_nonempty(input, fn, axes, exc=RuntimeError, shown=None):
    """torch's errors for a max-like reduction over no elements (``shown``: the dims as the message names them,
    amax/amin's as given)."""
    shape = input.shape
    if axes is None:
        if input.numel() == 0:
            extra = "" if exc is IndexError else " Specify the reduction dim with the 'dim' argument."
            raise exc(f"{fn}(): Expected reduction dim to be specified for input.numel() == 0.{extra}")
        return
    for a, d in zip(axes, shown or axes):
        if input.ndim and shape[a] == 0:
            raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")


def _extreme(name, jfn):
    """amax/amin: AmaxBackward0 / AminBackward0; ties share the gradient evenly."""
    @op(f"{name.capitalize()}Backward0", save=("self", "result"), attrs=("dim", "keepdim"), unsigned=("dim",),
        refuse={"c": f"{name[1:]}_values_cpu"})
    def entry(self, *, dim, keepdim):
        return jfn(self, axis=_axes(dim, self.ndim), keepdims=keepdim)

    @entry.derivative
    def _(grad, self, result, dim, keepdim):
        axes = _axes(dim, self.ndim)
        mask = self == _restore(result, axes, keepdim)
        g = _restore(grad, axes, keepdim) / jnp.sum(mask, axis=axes, keepdims=True, dtype=grad.dtype)
        # torch's grad * mask is NaN off the extremes too where grad is NaN or inf (XLA turns a product with a
        # converted mask into a select, which drops them: written out)
        return jnp.where(mask, g, jnp.where(jnp.isfinite(g), 0, jnp.nan).astype(g.dtype))

    def fn(input, dim=(), keepdim=False):
        dims = _dim_list(() if dim is None else dim, input.ndim, name)
        _check_nonempty(input, name, None if not dims else tuple(_wrap_dim(d, input.ndim) for d in dims),
                        shown=dims)
        return _apply(entry, (input,), (dims, _keepdim(keepdim)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"{name} over ``dim`` (all dims by default); ties share the gradient evenly ({entry.name})."
    return fn


amax = public(_extreme("amax", jnp.max))
amin = public(_extreme("amin", jnp.min))


def _return_type(name):
    return structseq(name, ("values", "indices"))


_max_type = _return_type("max")
_min_type = _return_type("min")


def _max_min(name, jfn, argfn, rtype, binary):
    big = name.capitalize()

    @op(f"{big}Backward1", save=("self", "result"), attrs=(), refuse={"c": f"{name}_all"})
    def entry_all(self):
        return jfn(self)

    @entry_all.derivative
    def _(grad, self, result):  # torch's evenly_distribute_backward (NaN-aware)
        mask = (self == result) | (jnp.isnan(self) & jnp.isnan(result))
        return jnp.where(mask, grad / jnp.sum(mask).astype(grad.dtype), 0)

    @op(f"{big}Backward0", save=("indices",), outputs=("values", "indices"), attrs=("dim", "keepdim", "self_sym_sizes"),
        unsigned=("dim",), refuse={"c": (RuntimeError, f"{name}(): does not support complex input")})
    def entry_dim(self, *, dim, keepdim):
        if self.ndim == 0:
            return self, jnp.zeros((), jnp.int64)
        axis = _axis(dim, self.ndim)
        idx = jnp.expand_dims(argfn(self, axis=axis).astype(jnp.int64), axis)
        values = jnp.take_along_axis(self, idx, axis=axis)
        if not keepdim:
            values, idx = jnp.squeeze(values, axis), jnp.squeeze(idx, axis)
        return values, idx

    @entry_dim.derivative
    def _(grads, indices, dim, keepdim, self_shape):
        grad = grads[0]
        if not self_shape:
            return grad
        axis = _axis(dim, len(self_shape))
        grad, indices = _restore(grad, (axis,), keepdim), _restore(indices, (axis,), keepdim)
        hit = jax.lax.broadcasted_iota(jnp.int64, self_shape, axis) == indices
        return jnp.where(hit, grad, 0)

    def fn(input, dim=None, keepdim=False, *, other=None, out=None):
        if isinstance(dim, Tensor) or other is not None:
            return binary(input, dim if other is None else other, out=out)
        if dim is None:
            if keepdim:
                raise TypeError(f"{name}() received an invalid combination of arguments - got (keepdim=bool, )")
            _check_nonempty(input, name, None)
            return _apply(entry_all, (input,), ())
        if not isinstance(dim, (int, np.integer)) or isinstance(dim, bool):
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({type(dim).__name__})")
        d = _one_dim(dim, input.ndim, name)
        _check_nonempty(input, name, (_wrap_dim(d, input.ndim),))
        return rtype(*_apply(entry_dim, (input,), (d, _keepdim(keepdim))))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"{name}(): all elements ({big}Backward1); {name}(dim, keepdim): (values, indices) "
                  f"({big}Backward0); {name}(other): elementwise {binary.__name__}.")
    return fn


max = public(_max_min("max", jnp.max, jnp.argmax, _max_type, maximum))  # noqa: A001 - torch's name
min = public(_max_min("min", jnp.min, jnp.argmin, _min_type, minimum))  # noqa: A001


# ----- var, std ------------------------------------------------------------------------------------------------
def _dof(shape, axes, correction):
    n = int(np.prod([shape[a] for a in axes]))
    return n - (1 if correction is None else correction)


def _var_grad(grad, self, dim, correction, keepdim):
    axes = _axes(dim, self.ndim)
    dof = _dof(self.shape, axes, correction)
    mean = jnp.mean(self, axis=axes, keepdims=True)
    grad = _restore(grad, axes, keepdim)
    if dof <= 0 and (dim is None or self.ndim == 0):  # torch's var_backward: 2 / 0 is inf, and inf * 0 is NaN
        return grad * jnp.where(self == mean, jnp.nan, jnp.inf).astype(grad.dtype)
    return (2.0 / dof if dof else math.inf) * grad * (self - mean)


@op("VarBackward0", save=("self",), attrs=("correction", "dim", "keepdim"), unsigned=("dim",))
def _var(self, *, dim, correction, keepdim):
    axes = _axes(dim, self.ndim)
    dev = self - jnp.mean(self, axis=axes, keepdims=True)
    sq = jnp.real(dev * jnp.conj(dev)) if jnp.iscomplexobj(dev) else dev * dev
    var = jnp.sum(sq, axis=axes, keepdims=keepdim) / _pymax(_dof(self.shape, axes, correction), 0)
    if not axes or _dof(self.shape, axes, correction) <= 0:
        return var
    # torch's Welford gives exactly 0 for equal finite values (the mean here can be an ulp off them)
    first = self[tuple(slice(0, 1) if a in axes else slice(None) for a in range(self.ndim))]
    same = jnp.all((self == first) & jnp.isfinite(first), axis=axes, keepdims=keepdim)
    return jnp.where(same, jnp.zeros((), var.dtype), var)


@_var.derivative
def _(grad, self, dim, correction, keepdim):
    return _var_grad(grad, self, dim, correction, keepdim)


@op("StdBackward0", save=("self", "result"), attrs=("correction", "dim", "keepdim"), unsigned=("dim",))
def _std(self, *, dim, correction, keepdim):
    return jnp.sqrt(_var.forward(self, dim=dim, correction=correction, keepdim=keepdim))


@_std.derivative
def _(grad, self, result, dim, correction, keepdim):
    grad_var = jnp.where(result == 0, 0, grad / (2 * result))
    return _var_grad(grad_var, self, dim, correction, keepdim)



def _var_args(input, fn, dim, unbiased, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    if correction is not _NOT_GIVEN and unbiased is not None:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got (correction=, unbiased=)")
    if correction is not _NOT_GIVEN:
        corr = correction
    elif unbiased is not None:
        corr = int(bool(unbiased))
    else:  # torch records None only when neither dim nor a correction was spelled out
        corr = None if dim is _NOT_GIVEN else 1
    if dim is _NOT_GIVEN or dim is None:
        dims = None
    else:
        dims = _dim_list(dim, input.ndim, fn)
    if not _is_float(input):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if _dof(input.shape, _axes(dims, input.ndim), corr) <= 0:
        warnings.warn(f"{fn}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
                      f"factor (input numel divided by output numel).", UserWarning, stacklevel=3)
    return dims, corr


@public
def var(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
    """Variance over ``dim`` with ``correction`` (or ``unbiased``) (VarBackward0)."""
    dims, corr = _var_args(input, "var", dim, unbiased, correction)
    return _apply(_var, (input,), (dims, corr, _keepdim(keepdim)))


@public
def std(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
    """Standard deviation over ``dim`` with ``correction`` (or ``unbiased``) (StdBackward0)."""
    dims, corr = _var_args(input, "std", dim, unbiased, correction)
    return _apply(_std, (input,), (dims, corr, _keepdim(keepdim)))


# ----- logsumexp, softmax, log_softmax ----------------------------------------------------------------------
@op("LogsumexpBackward0", save=("self", "result"), attrs=("dim", "keepdim"), unsigned=("dim",))
def _logsumexp(self, *, dim, keepdim):
    return jax.nn.logsumexp(self, axis=_axes(dim, self.ndim), keepdims=keepdim)


@_logsumexp.derivative
def _(grad, self, result, dim, keepdim):
    axes = _axes(dim, self.ndim)
    return _restore(grad, axes, keepdim) * jnp.conj(jnp.exp(self - _restore(result, axes, keepdim)))



@public
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed stably (LogsumexpBackward0); integers become float."""
    dims = _dim_list(dim, input.ndim, "logsumexp")
    return _apply_float(_logsumexp, input, (dims, _keepdim(keepdim)))


def _softmax_axis(x, dim):
    return _axis(dim, x.ndim) if x.ndim else None


@op("SoftmaxBackward0", save=("result",), attrs=("dim",), unsigned=("dim",))
def _softmax(self, *, dim):
    axis = _softmax_axis(self, dim)
    e = jnp.exp(self - jax.lax.stop_gradient(jnp.max(self, axis=axis, keepdims=True, initial=-jnp.inf)))
    return e / jnp.sum(e, axis=axis, keepdims=True)


@_softmax.derivative
def _(grad, result, dim):
    axis = _softmax_axis(result, dim)
    return result * (grad - jnp.sum(grad * result, axis=axis, keepdims=True))


@op("LogSoftmaxBackward0", save=("result",), attrs=("dim",), unsigned=("dim",))
def _log_softmax(self, *, dim):
    axis = _softmax_axis(self, dim)
    shifted = self - jax.lax.stop_gradient(jnp.max(self, axis=axis, keepdims=True, initial=-jnp.inf))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True))


@_log_softmax.derivative
def _(grad, result, dim):
    axis = _softmax_axis(result, dim)
    return grad - jnp.exp(result) * jnp.sum(grad, axis=axis, keepdims=True)



def _softmax_like(entry, kernel, input, dim, dtype):
    d = _one_dim(dim, input.ndim, kernel)
    if dtype is not None and _np_dtype(dtype) != input._data.dtype:
        input = input.to(dtype)  # ToCopyBackward0 below the softmax node, as in torch
    if input._data.dtype.kind not in "fV":
        if not input._data.size:  # torch runs no kernel on an empty tensor: its result is a new row-major one
            out = input.clone()
            out._sgeom = None
            return out
        last = "lastdim_" if input.ndim <= 1 or _wrap_dim(d, input.ndim) == input.ndim - 1 else ""
        raise NotImplementedError(f'"{kernel}_{last}kernel_impl" not implemented for '
                                  f"'{_type_word(input._data.dtype)}'")
    return _apply(entry, (input,), (d,))


@public
def softmax(input, dim, dtype=None, *, _stacklevel=3):
    """exp(x) / sum(exp(x)) along ``dim``, stable for large inputs (SoftmaxBackward0, saves result)."""
    return _softmax_like(_softmax, "softmax", input, dim, dtype)


@public
def log_softmax(input, dim, dtype=None, *, _stacklevel=3):
    """x - logsumexp(x) along ``dim``, stable for large inputs (LogSoftmaxBackward0, saves result)."""
    return _softmax_like(_log_softmax, "log_softmax", input, dim, dtype)


# ----- cumsum --------------------------------------------------------------------------------------------------
@op("CumsumBackward0", save=(), attrs=("dim",), unsigned=("dim",), refuse={"b": "cumsum_out_cpu"})
def _cumsum(self, *, dim, dtype):
    if self.ndim == 0:
        return self.astype(dtype)
    return _accumulated(jnp.cumsum, self, dtype, axis=_axis(dim, self.ndim))


@_cumsum.derivative
def _(grad, dim):
    if grad.ndim == 0:
        return grad
    axis = _axis(dim, grad.ndim)
    return jnp.flip(jnp.cumsum(jnp.flip(grad, axis), axis=axis), axis)



def _cumsum_(self, dim, *, dtype=None):
    _check_autograd_inplace(self)
    d = _one_dim(dim, self.ndim, "cumsum")
    if dtype is not None:
        _bad_inplace(self, self.shape, _dtype.to_dtype(dtype)._np)
    return _apply_inplace(_cumsum, self, (self,), (d, self._data.dtype))


@public(inplace=_cumsum_)
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim`` (CumsumBackward0); integers accumulate in int64."""
    return _apply(_cumsum, (input,), (_one_dim(dim, input.ndim, "cumsum"), _sum_dtype(input, dtype)))


# ----- norm ------------------------------------------------------------------------------------------------------
@op("LinalgVectorNormBackward0", save=("self", "result"), attrs=("dim", "keepdim", "ord"), unsigned=("dim",))
def _vector_norm(self, *, ord, dim, keepdim, dtype):  # noqa: A002 - torch's name
    axes = _axes(dim, self.ndim)
    a = jnp.abs(self.astype(dtype))
    if ord == float("inf"):
        return jnp.max(a, axis=axes, keepdims=keepdim)
    if ord == -float("inf"):
        return jnp.min(a, axis=axes, keepdims=keepdim)
    if ord == 0:
        return jnp.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
    if ord == 1:
        return jnp.sum(a, axis=axes, keepdims=keepdim)
    if ord == 2:
        return jnp.sqrt(jnp.sum(a * a, axis=axes, keepdims=keepdim))
    return jnp.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)


@_vector_norm.derivative
def _(grad, self, result, ord, dim, keepdim, dtype):  # noqa: A002 - torch's norm_backward
    axes = _axes(dim, self.ndim)
    x = self.astype(dtype)
    g, r = _restore(grad, axes, keepdim), _restore(result, axes, keepdim)
    sgn = _real_sign(x) if not jnp.iscomplexobj(x) else x / jnp.where(x == 0, 1, jnp.abs(x))
    if ord == 0:  # torch: no gradient at all (an undefined one), not zeros
        return None
    if ord == 1:
        return sgn * g
    if ord == 2:  # torch: (self / norm).masked_fill_(norm == 0, 0), NaN in its derivative at 0 included
        return g * jnp.where(r == 0, 0, x / r)
    if ord in (float("inf"), -float("inf")):
        mask = (jnp.abs(x) == r).astype(grad.dtype)
        return sgn * (g / jnp.sum(mask, axis=axes, keepdims=True)) * mask
    a = _abs_torch(x)
    if ord < 1:
        return jnp.where(x == 0, 0, sgn * _pow_torch(a, ord - 1)) * g * r ** (1 - ord)
    scale = jnp.where(r == 0, 0, g / r ** (ord - 1))
    return (sgn * _pow_torch(a, ord - 1) if ord < 2 else x * _pow_torch(a, ord - 2)) * scale



@op("NormBackward1", save=("self", "result"), attrs=("dim", "keepdim", "p"), unsigned=("dim",))
def _norm(self, *, p, dim, keepdim, dtype):  # at::norm (pairwise_distance's, frobenius_norm's): its own node
    return _vector_norm.forward(self, ord=p, dim=dim, keepdim=keepdim, dtype=dtype)


_norm.derivative(lambda grad, self, result, p, dim, keepdim, dtype: _vector_norm.backward(
    grad, self, result, p, dim, keepdim, dtype))


def _norm_dtype(input, dtype):
    src = input._data.dtype
    if src.kind not in "fcV":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(src)}")
    if dtype is None:
        return src
    dt = np.dtype(_np_dtype(dtype))
    if dt.kind not in "fcV":
        raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, but got {_type_word(dt)}")
    if jnp.promote_types(src, dt) != dt:
        raise RuntimeError(f"linalg.vector_norm: the dtype of the input ({_type_word(src)}) should be convertible "
                           f"without narrowing to the specified dtype ({_type_word(dt)})")
    return dt


def _linalg_vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm (LinalgVectorNormBackward0); for linalg.py to re-export."""
    dt = _norm_dtype(input, dtype)
    dims = None if dim is None else _dim_list(dim, input.ndim, "linalg_vector_norm")
    ord = ord.item() if isinstance(ord, np.generic) else ord  # noqa: A001
    return _apply(_vector_norm, (input,), (ord, dims, _keepdim(keepdim), dt))


# ----- argmax / argmin, all / any (no gradient) -------------------------------------------------------------
def _arg(name, jfn):
    @op(name, save=(), nondiff=("self",), attrs=())
    def entry(self, *, dim, keepdim):
        if dim is None:
            idx = jfn(self.reshape(-1)).astype(jnp.int64)
            return idx.reshape((1,) * self.ndim) if keepdim else idx
        if self.ndim == 0:
            return jnp.zeros((), jnp.int64)
        return jfn(self, axis=_axis(dim, self.ndim), keepdims=keepdim).astype(jnp.int64)

    def fn(input, dim=None, keepdim=False):
        kind = input._data.dtype.kind  # (torch checks the dtype before the sizes)
        if kind in "bc":
            raise RuntimeError(f"{name}(): does not support {'bool' if kind == 'b' else 'complex'} input")
        if dim is None:
            _check_nonempty(input, name, None, IndexError)
        else:
            dim = _one_dim(dim, input.ndim, name)
            _check_nonempty(input, name, (_wrap_dim(dim, input.ndim),))
        return _apply(entry, (input,), (dim, _keepdim(keepdim)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Indices (int64) of the {name[3:]}imum over ``dim`` (of the flattened input by default)."
    return fn


argmax = public(_arg("argmax", jnp.argmax))
argmin = public(_arg("argmin", jnp.argmin))


def _logical(name, jfn):
    @op(name, save=(), nondiff=("self",), attrs=())
    def entry(self, *, dim, keepdim):
        axes = tuple(range(self.ndim)) if dim is None else _axes(dim, self.ndim) if dim else ()
        res = jfn(self != 0, axis=axes, keepdims=keepdim)
        return res.astype(np.uint8) if self.dtype == np.uint8 else res

    def fn(input, dim=None, keepdim=False):
        dims = None if dim is None else _dim_list(dim, input.ndim, name)
        return _apply(entry, (input,), (dims, _keepdim(keepdim)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Whether {name} elements are nonzero, over ``dim`` (all dims by default); bool result."
    return fn


all = public(_logical("all", jnp.all))  # noqa: A001 - torch's name
any = public(_logical("any", jnp.any))  # noqa: A001


# ----- nansum, nanmean, aminmax, std_mean, var_mean ---------------------------------------------------------------
@op("NansumBackward0", save=("self",), attrs=("dim", "keepdim"), unsigned=("dim",))
def _nansum(self, *, dim, keepdim, dtype):
    return _accumulated(jnp.nansum, self, dtype, axis=_axes(dim, self.ndim), keepdims=keepdim)


@_nansum.derivative
def _(grad, self, dim, keepdim):
    g = jnp.broadcast_to(_restore(grad, _axes(dim, self.ndim), keepdim), self.shape)
    return jnp.where(jnp.isnan(self), 0, g)


@public
def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Sum treating NaN as zero, of all elements or over ``dim`` (NansumBackward0)."""
    if input._data.dtype.kind == "c":
        raise RuntimeError("nansum does not support complex inputs")
    if out is not None:  # (computed in out's dtype unless ``dtype`` is given; torch's kernel is float-only)
        if _is_float(input) and out._data.dtype.kind not in "fV":
            raise NotImplementedError(f"\"nansum_cpu\" not implemented for '{_out._word(out._data.dtype)}'")
        return _write_out("nansum", lambda: nansum(input, dim, keepdim, dtype=dtype or out.dtype), out, (input,),
                          "sum")
    dims = None if dim is None else _dim_list(dim, input.ndim, "nansum")
    return _apply(_nansum, (input,), (dims, _keepdim(keepdim), _sum_dtype(input, dtype)))


@public
def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    """Mean of the elements that are not NaN (torch's nansum / count: NansumBackward0 then DivBackward0)."""
    if not _is_float(input):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_type_word(input._data.dtype)}")
    count = input.isnan().logical_not().sum(dim, keepdim)
    if out is not None:  # (torch: nansum into out, then divided in place)
        return nansum(input, dim, keepdim, dtype=dtype, out=out).div_(count)
    return nansum(input, dim, keepdim, dtype=dtype).div(count)


_aminmax_type = structseq("aminmax", ("min", "max"))


@op("AminmaxBackward0", save=("self", "min", "max"), outputs=("min", "max"), attrs=("dim", "keepdim"),
    unsigned=("dim",))
def _aminmax(self, *, dim, keepdim):
    axes = None if dim is None else _axis(dim, self.ndim)
    return jnp.min(self, axis=axes, keepdims=keepdim), jnp.max(self, axis=axes, keepdims=keepdim)


@_aminmax.derivative
def _(grads, self, min, max, dim, keepdim):  # noqa: A002 - torch's names; each grad spread over its ties
    axes = _axes(None if dim is None else (dim,), self.ndim)
    total = 0
    for g, value in zip(grads, (min, max)):
        if g is not None:
            mask = (_restore(value, axes, keepdim if dim is not None else False) == self).astype(g.dtype)
            total = total + _restore(g, axes, keepdim if dim is not None else False) * mask / jnp.sum(
                mask, axis=axes, keepdims=True)
    return total


@public
def aminmax(input, *, dim=None, keepdim=False, out=None):
    """(min, max) of all elements, or over ``dim`` (AminmaxBackward0)."""
    if dim is not None:
        d = _one_dim(dim, input.ndim, "aminmax")
        w = _wrap_dim(d, input.ndim)
        if input.ndim and input.shape[w] == 0:  # (torch's text has no "()" here)
            raise IndexError(f"aminmax: Expected reduction dim {w} to have non-zero size.")
    else:
        d = None
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
    result = _aminmax_type(*_apply(_aminmax, (input,), (d, _keepdim(keepdim))))
    if out is not None:
        out[0].copy_(result.min)
        out[1].copy_(result.max)
        return _aminmax_type(*out)
    return result


@op("VarMeanBackward0", save=("self",), outputs=("result0", "result1"), attrs=("correction", "dim", "keepdim"),
    unsigned=("dim",))
def _var_mean(self, *, dim, correction, keepdim):
    return (_var.forward(self, dim=dim, correction=correction, keepdim=keepdim),
            jnp.mean(self, axis=_axes(dim, self.ndim), keepdims=keepdim))


@_var_mean.derivative
def _(grads, self, dim, correction, keepdim):
    return _moments_grad(grads[0], grads[1], self, dim, correction, keepdim)


@op("StdMeanBackward0", save=("self", "result0"), outputs=("result0", "result1"),
    attrs=("correction", "dim", "keepdim"), unsigned=("dim",))
def _std_mean(self, *, dim, correction, keepdim):
    return (_std.forward(self, dim=dim, correction=correction, keepdim=keepdim),
            jnp.mean(self, axis=_axes(dim, self.ndim), keepdims=keepdim))


@_std_mean.derivative
def _(grads, self, result0, dim, correction, keepdim):
    grad_var = None if grads[0] is None else jnp.where(result0 == 0, 0, grads[0] / (2 * result0))
    return _moments_grad(grad_var, grads[1], self, dim, correction, keepdim)


def _moments_grad(grad_var, grad_mean, self, dim, correction, keepdim):
    """The gradient of (var, mean) over ``dim`` from theirs (either may be None)."""
    axes = _axes(dim, self.ndim)
    total = jnp.zeros(self.shape, self.dtype)
    if grad_var is not None:
        total = total + _var_grad(grad_var, self, dim, correction, keepdim)
    if grad_mean is not None:
        n = math.prod(self.shape[a] for a in axes)
        total = total + jnp.broadcast_to(_restore(grad_mean, axes, keepdim), self.shape) / _pymax(n, 1)
    return total


def _moments(name, entry):
    def fn(input, dim=_NOT_GIVEN, unbiased=None, keepdim=False, *, correction=_NOT_GIVEN):
        dims, corr = _var_args(input, name, dim, unbiased, correction)
        return tuple(_apply(entry, (input,), (dims, corr, _keepdim(keepdim))))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"({name.split('_')[0]}, mean) over ``dim`` in one pass ({entry.name})."
    return public(fn, method=False)


var_mean = _moments("var_mean", _var_mean)
std_mean = _moments("std_mean", _std_mean)


# ----- histc, bincount (counts; not differentiable) ------------------------------------------------------------
@op("histc", save=(), nondiff=("self",), attrs=(), dynamic=("lo", "hi"))
def _histc(self, *, bins, lo, hi):
    x = self.reshape(-1)
    pos = jnp.floor((x - lo) * bins / (hi - lo)).astype(jnp.int64)
    keep = (x >= lo) & (x <= hi)
    pos = jnp.where(keep, jnp.clip(pos, 0, bins - 1), bins)
    return jnp.zeros(bins, self.dtype).at[pos].add(jnp.ones((), self.dtype), mode="drop")


@public
def histc(input, bins=100, min=0, max=0, *, out=None):  # noqa: A002 - torch's names
    """Counts of input's values in ``bins`` equal bins over [min, max] (both 0: the values' own range); values
    outside are left out. Not differentiable."""
    if input._data.dtype.kind not in "fV":  # (bfloat16's kind is "V")
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{_type_word(input._data.dtype)}'")
    if out is not None:
        if out._data.dtype != input._data.dtype:
            raise RuntimeError(f"torch.histogram: input tensor and hist tensor should have the same dtype, but got "
                               f"input {_cpp_word(input)} and hist {_cpp_word(out)}")
        return _write_out("histc", lambda: histc(input, bins, min, max), out, (input,))
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        a = np.asarray(input._data)
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo:g}, {hi:g}] is not finite")
    return _apply(_histc, (input,), (int(bins), lo, hi))


def _cpp_word(t):
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(
        t._data.dtype.name, t._data.dtype.name)


@op("torch::autograd::NotImplemented", save=(), nondiff=("values",), attrs=(), runs_first=True)
def _bincount_weights(weights, values):
    return values


@_bincount_weights.derivative
def _(grad):
    raise RuntimeError("derivative for aten::bincount is not implemented")


@public
def bincount(input, weights=None, minlength=0):
    """The number of occurrences of each value 0, 1, ... of a 1-D non-negative integer tensor (at least
    ``minlength`` of them), or the sums of ``weights`` at them. Reads the values (the length depends on them)."""
    if input._data.dtype.kind not in "biu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{_type_word(input._data.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim == 1 and not input.numel():
        return _wrap(jnp.zeros(minlength, jnp.int64))  # (torch's long zeros, weights or not)
    a = np.asarray(input._data)
    if input.ndim != 1 or a.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return _wrap(jnp.asarray(np.bincount(a, minlength=minlength).astype(np.int64)))
    w = np.asarray(weights._data)
    dt = w.dtype if w.dtype.kind == "f" else np.dtype(np.float64)
    values = _wrap(jnp.asarray(np.bincount(a, w.astype(np.float64), minlength).astype(dt)))
    return _apply(_bincount_weights, (weights, values), ())
