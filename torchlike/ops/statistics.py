"""torch's NumPy-like statistics: cov and corrcoef (composites of the table's ops, so their graphs and gradients are
torch's), histogram and histogramdd (counts, not differentiable: torch's ``NotImplemented`` node over the inputs that
require grad, whose backward raises).

histogram's and histogramdd's bin ranges, when not given, are the input's minimum and maximum, read on the host as
torch reads them (``aminmax(...).item()``); the binning itself is one jitted program per shape.
"""
import builtins
import math
import warnings

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .. import _grad_mode as _gm
from .._tensor import Tensor, _wrap
from . import creation as _creation, elementwise as _elementwise, linalg as _linalg
from ._bind import public
from ._out import _write_out
from ._registry import OpDef, op, _apply
from ._return_types import structseq


# ----- cov, corrcoef (composites: their graph is the ops') ------------------------------------------------------
def _long(n):
    """A 0-d int64 tensor (torch's scalar_tensor(n, kLong))."""
    return _wrap(jnp.asarray(n, jnp.int64))


def _check_weights(kind, w, n, ok, dtype_word):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {kind} to have one or fewer dimensions but got {kind} with {w.ndim} "
                           f"dimensions")
    if not ok:
        raise RuntimeError(f"cov(): expected {kind} to have {dtype_word} dtype but got {kind} with "
                           f"{_linalg._word(w)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {kind} to have the same numel as there are observations in the input "
                           f"but got {w.numel()} != {n}")
    if n != 0 and not bool(w.min() >= 0):
        raise RuntimeError(f"cov(): {kind} cannot be negative")


@public
def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov: the covariance of the rows (variables) over the columns (observations), as ATen composes it."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    if input.dtype == _dtype.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, fweights.dtype._category == 1, "integral")
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, aweights.dtype.is_floating_point, "floating point")
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else _long(n)
    if w is not None and not bool(w_sum != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is None:
        norm = _long(n - correction)
    elif correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm = _long(0)
    else:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    if bool(norm <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
                      "observations.", stacklevel=2)
        norm = norm.detach() * 0
    if n == 1 and (fweights is None) != (aweights is None):  # (torch zeroes the one observation, as float)
        x = x.detach() * 0 if x.is_floating_point() or x.is_complex() else _creation.zeros(x.shape,
                                                                                           dtype=_dtype.float32)
    else:
        x = x - avg.unsqueeze(1)
    return _linalg.mm(x, (x if w is None else x * w).t().conj()).true_divide(norm).squeeze()


@public
def corrcoef(input):
    """torch.corrcoef: the covariance normalised by the standard deviations, clipped to [-1, 1]."""
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return _elementwise.complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


# ----- histogram, histogramdd (counts; not differentiable) ------------------------------------------------------
_histogram_types = {False: structseq("histogram", ("hist", "bin_edges")),
                    True: structseq("histogram_out", ("hist", "bin_edges"))}
_histogramdd_type = structseq("histogramdd", ("hist", "bin_edges"))


@op("histogramdd", save=(), nondiff=("self", "weight", "edges"), attrs=())
def _histogramdd_counts(self, weight, edges, *, bins, density):
    """The (weighted) counts of the M points of self (M, N) in the bins whose edges are ``edges`` (the N
    dimensions' edges, bins[d] + 1 of them for dimension d, one after another), as torch's CPU kernel bins them:
    points outside the edges (or NaN) left out, each bin holding its left edge, the last one its right edge too;
    ``density``: divided by the total and by each bin's volume."""
    index = jnp.zeros(self.shape[0], jnp.int64)
    keep = jnp.ones(self.shape[0], bool)
    lengths, start = [], 0
    for d, n in enumerate(bins):
        e = edges[start:start + n + 1]
        start += n + 1
        x = self[:, d]
        keep = keep & (x >= e[0]) & (x <= e[-1])
        index = index * n + jnp.clip(jnp.searchsorted(e, x, side="right") - 1, 0, n - 1)
        lengths.append(jnp.diff(e))
    total = math.prod(bins)
    w = jnp.ones(self.shape[0], self.dtype) if weight is None else weight
    hist = jnp.zeros(total, self.dtype)
    if bins:  # (no dimensions: torch counts nothing)
        hist = hist.at[jnp.where(keep, index, total)].add(w, mode="drop")
    hist = hist.reshape(bins)
    if density:
        hist = hist / hist.sum()
        for d, length in enumerate(lengths):
            hist = hist / length.reshape([-1 if i == d else 1 for i in range(len(bins))])
    return hist


_NOT_IMPLEMENTED = {}


def _not_implemented(aten_name, values, inputs):
    """``values`` (results computed without history) behind torch's NotImplemented node when grad mode is on and
    one of ``inputs`` requires grad: one node for all of them, its edges to the inputs that require grad (as torch
    lists them), its backward raising torch's error."""
    inputs = tuple(t for t in inputs if t is not None and t._requires_grad)
    if not inputs or not _gm._state.grad_enabled:
        return values
    key = (aten_name, len(values), len(inputs))
    entry = _NOT_IMPLEMENTED.get(key)
    if entry is None:
        n = len(values)
        names = tuple(f"result{i}" for i in range(n))

        def derivative(grads):
            raise RuntimeError(f"derivative for aten::{aten_name} is not implemented")
        entry = _NOT_IMPLEMENTED[key] = OpDef(
            "torch::autograd::NotImplemented", lambda *arrays: arrays[:n], save=(), nondiff=names, outputs=names,
            inputs=names + tuple(f"input{i}" for i in range(len(inputs))), statics=(), tuple_out=True,
            runs_first=True)
        entry.derivative(derivative)
    return list(_apply(entry, tuple(values) + inputs, ()))


def _meta(t):
    return _dtype._TYPE_META[t._data.dtype.name]


def _not_floating(input, kernel):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype._SCALAR_TYPE[input._data.dtype.name]}'")


def _check_inputs(x, bins, weight):
    """torch's histogramdd_check_inputs: x (M, N), one 1-D non-empty edges tensor of x's dtype per dimension, a
    weight of x's dtype and shape (M,)."""
    n = x.shape[-1]
    if len(bins) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-dimensional histogram "
                           f"but got {len(bins)}")
    for d, b in enumerate(bins):
        if b._data.dtype != x._data.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but got "
                               f"input with dtype {_meta(x)} and bins for dimension {d} with dtype {_meta(b)}")
        if b.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if not b.numel():
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
                               f"in the bins tensor for dimension {d}")
    if weight is not None:
        if weight._data.dtype != x._data.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({_meta(x)}), and weight({_meta(weight)})")
        if list(weight.shape or (1,)) != list(x.shape[:-1]):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have the same shape as the "
                               f"input tensor excluding its innermost dimension, but got input with shape "
                               f"{list(x.shape)} and weight with shape {list(weight.shape)}")


def _check_counts(counts):
    for d, c in enumerate(counts):
        if c <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {c} for dimension {d}")


def _outer_edges(x, range):  # noqa: A002 - torch's name
    """torch's select_outer_bin_edges for x (M, N): ``range`` or the data's extremes per dimension (0 and 1 for
    no data), an empty range widened by 0.5 each side."""
    n = x.shape[-1]
    if range is not None:
        if len(range) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have {2 * n} "
                               f"elements, but got {len(range)}")
        lo, hi = [float(v) for v in range[0::2]], [float(v) for v in range[1::2]]
    elif x.numel():
        if x._data.dtype.kind != "f" or x._data.dtype.itemsize < 4:  # (torch's aminmax here: float and double)
            raise _not_floating(x, "histogramdd")
        a = np.asarray(x._data)
        lo, hi = [float(v) for v in a.min(0)], [float(v) for v in a.max(0)]
    else:
        lo, hi = [0.0] * n, [1.0] * n
    for d in builtins.range(n):
        if not (math.isfinite(lo[d]) and math.isfinite(hi[d])):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{lo[d]:g}, {hi[d]:g}] is not finite")
        if lo[d] > hi[d]:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo[d]:g} max {hi[d]:g} "
                               f"for dimension {d}")
        if lo[d] == hi[d]:
            lo[d], hi[d] = lo[d] - 0.5, hi[d] + 0.5
    return lo, hi



def _linear_edges(x, counts, range):  # noqa: A002 - torch's name
    """The edges of ``counts`` equal bins per dimension over ``range`` or the data's extremes (torch.linspace's)."""
    lo, hi = _outer_edges(x, range)
    return [_creation.linspace(a, b, c + 1, dtype=x.dtype) for a, b, c in zip(lo, hi, counts)]


def _counts(x, edges, weight, density):
    """The histogram of x (M, N) over the edges tensors (torch's kernel: floating dtypes only)."""
    if x._data.dtype.kind not in "fV":
        raise _not_floating(x, "histogram_cpu")
    counts = tuple(e.shape[0] - 1 for e in edges)
    flat = _wrap(jnp.concatenate([e._data for e in edges])) if edges else _wrap(jnp.zeros(0, x._data.dtype))
    return _apply(_histogramdd_counts, (x, weight, flat), (counts, bool(density)))


@public
def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):  # noqa: A002 - torch's names
    """torch.histogram: the (weighted) counts of input's values in ``bins`` equal bins over ``range`` (default: the
    values' extremes), or in the bins whose edges are the tensor ``bins``; ``density``: a probability density.
    Returns (hist, bin_edges). Not differentiable (torch's NotImplemented node)."""
    x = input.reshape(input.numel(), 1)
    w = None if weight is None else weight.reshape(weight.numel())
    if out is not None:
        for kind, o in zip(("hist", "bin_edges"), out):
            if o._data.dtype != input._data.dtype:
                raise RuntimeError(f"torch.histogram: input tensor and {kind} tensor should have the same dtype, but "
                                   f"got input {_meta(input)} and {kind} {_meta(o)}" + (
                                       " for dimension 0" if kind == "bin_edges" else ""))
    if isinstance(bins, Tensor):
        _check_inputs(x, [bins], w)
        _check_counts([bins.numel() - 1])
        edges = bins.detach().clone()
        differentiable = (input, bins, weight)
    else:
        _check_counts([bins])
        edges = _linear_edges(x, [bins], range)[0]
        _check_inputs(x, [edges], w)
        differentiable = (input, weight)
    with _gm.no_grad():
        hist = _counts(x.detach(), [edges], None if w is None else w.detach(), density)
    hist, edges = _not_implemented("histogram", (hist, edges), differentiable)
    if out is not None:
        for o, r in zip(out, (hist, edges)):
            _write_out("histogram", lambda r=r: r, o, (input, weight))
        return _histogram_types[True](*out)
    return _histogram_types[False](hist, edges)


@public(method=False)
def histogramdd(input, bins, range=None, weight=None, density=False):  # noqa: A002 - torch's names
    """torch.histogramdd: the N-dimensional histogram of the points input (..., N): ``bins`` an int or N ints (equal
    bins over ``range``, default the data's extremes) or N tensors of edges. Returns (hist, bin_edges), bin_edges a
    tuple of N tensors. Not differentiable (torch's NotImplemented nodes)."""
    if isinstance(bins, (list, tuple)) and bins and all(isinstance(b, Tensor) for b in bins):
        if input.ndim < 2:
            raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
        x = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
        _check_inputs(input, list(bins), weight)
        _check_counts([b.numel() - 1 for b in bins])
        w = None if weight is None else weight.reshape(x.shape[0])
        with _gm.no_grad():
            hist = _counts(x.detach(), [b.detach() for b in bins], None if w is None else w.detach(), density)
        hist, = _not_implemented("_histogramdd_from_bin_tensors", (hist,), (input, *bins, weight))
        return _histogramdd_type(hist, tuple(bins))
    counts = [bins] * input.shape[-1] if not isinstance(bins, (list, tuple)) else list(bins)
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    x = input.reshape(math.prod(input.shape[:-1]), input.shape[-1])
    lo, hi = _outer_edges(x, range)
    if len(counts) != x.shape[1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
    edges = [_creation.linspace(a, b, c + 1, dtype=x.dtype) for a, b, c in zip(lo, hi, counts)]
    _check_inputs(input, edges, weight)
    _check_counts(counts)
    w = None if weight is None else weight.reshape(x.shape[0])
    with _gm.no_grad():
        hist = _counts(x.detach(), edges, None if w is None else w.detach(), density)
    edges = _not_implemented("_histogramdd_bin_edges", edges, (input, weight))
    hist, = _not_implemented("_histogramdd_from_bin_cts", (hist,), (input, weight))
    return _histogramdd_type(hist, tuple(edges))
