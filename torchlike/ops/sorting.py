"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, cummax, cummin,
searchsorted, bucketize, unique, unique_consecutive, quantile, nanquantile. Values are differentiable (torch's nodes: the gradient goes to the selected indices);
indices are int64. NaN sorts as the largest value, as in torch."""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, _wrap, _wrap_dim
from ._out import _write_out
from . import _layout
from ._registry import op, _apply
from ._bind import public
from .creation import tensor
from .shape import _squeeze_dim_, _transpose, _unsqueeze, _INPLACE
from .reduction import _return_type, _keepdim, _one_dim, _check_nonempty


_sort_type = _return_type("sort")
_topk_type = _return_type("topk")
_kthvalue_type = _return_type("kthvalue")
_median_type = _return_type("median")
_nanmedian_type = _return_type("nanmedian")
_mode_type = _return_type("mode")
_cummax_type = _return_type("cummax")
_cummin_type = _return_type("cummin")


def _order(x, axis, descending):
    """Stable argsort along ``axis`` with NaN largest (first when descending), as torch's sort."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        nan = jnp.isnan(x)
        # sort by (is NaN, value): NaNs after every number ascending, before them descending
        keys = jnp.where(nan, 0, x)
        idx = jnp.lexsort((keys, nan), axis=axis) if not descending else jnp.lexsort((-keys, ~nan), axis=axis)
        return idx
    if x.dtype == jnp.bool_:
        x = x.astype(jnp.int8)
    return jnp.argsort(x, axis=axis, stable=True, descending=descending)


def _select_back(grad, indices, axis, shape):
    """The gradient of values picked at ``indices`` along ``axis`` (torch's value_selecting_reduction_backward)."""
    if not shape:
        return grad
    idx = [jax.lax.broadcasted_iota(jnp.int64, indices.shape, d) for d in range(len(shape))]
    idx[axis] = indices
    return jnp.zeros(shape, grad.dtype).at[tuple(idx)].add(grad)


def _keep(x, axis, keepdim):
    return x if keepdim else jnp.squeeze(x, axis)


# ----- sort, argsort, msort, topk ------------------------------------------------------------------------------
def _sort_op(node):
    @op(node, save=("indices",), outputs=("values", "indices"), attrs=("dim", "self_sym_sizes"), unsigned=("dim",),
        refuse={"c": (RuntimeError, " Sort does not support complex dtypes on CPU")}, layout=_layout.like)
    def entry(self, *, dim, descending):
        if self.ndim == 0:
            return self, jnp.zeros((), jnp.int64)
        idx = _order(self, dim % self.ndim, descending).astype(jnp.int64)
        return jnp.take_along_axis(self, idx, axis=dim % self.ndim), idx

    @entry.derivative
    def _(grads, indices, dim, self_shape):
        return _select_back(grads[0], indices, dim % len(self_shape) if self_shape else 0, self_shape)
    return entry


_sort, _sort_stable = _sort_op("SortBackward0"), _sort_op("SortBackward1")  # sort(dim, ...) / sort(*, stable, ...)


@public
def sort(input, dim=-1, descending=False, *, stable=None, out=None):
    """(values, indices) sorted along ``dim``: always a stable sort, NaN largest. ``stable=`` given selects
    torch's ``sort.stable`` overload (SortBackward1, else SortBackward0)."""
    if out is not None:
        raise TypeError("sort(): out= is not supported by torchlike yet")
    d = _one_dim(dim, input.ndim, "sort")
    return _sort_type(*_apply(_sort if stable is None else _sort_stable, (input,), (d, bool(descending))))


@public
def argsort(input, dim=-1, descending=False, *, stable=False):
    """The indices that sort ``input`` along ``dim`` (no gradient)."""
    return sort(input, dim, descending).indices


@public
def msort(input, *, out=None):
    """``input`` sorted along its first dim (SortBackward0)."""
    if out is not None:
        raise TypeError("msort(): out= is not supported by torchlike yet")
    return sort(input, 0).values


@op("TopkBackward0", save=("indices",), outputs=("values", "indices"), attrs=("dim", "self_sym_sizes"),
    unsigned=("dim",), refuse={"b": (RuntimeError, "topk does not support bool dtypes on CPU"),
                               "c": (RuntimeError, " topk does not support complex dtypes on CPU")})
def _topk(self, *, k, dim, largest, sorted):  # noqa: A002 - torch's name
    if self.ndim == 0:
        return self, jnp.zeros((), jnp.int64)
    axis = dim % self.ndim
    idx = jax.lax.slice_in_dim(_order(self, axis, largest), 0, k, axis=axis).astype(jnp.int64)
    return jnp.take_along_axis(self, idx, axis=axis), idx


@_topk.derivative
def _(grads, indices, dim, self_shape):
    return _select_back(grads[0], indices, dim % len(self_shape) if self_shape else 0, self_shape)


@public
def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002 - torch's name
    """The ``k`` largest (``largest=False``: smallest) values along ``dim`` and their indices (TopkBackward0)."""
    if out is not None:
        raise TypeError("topk(): out= is not supported by torchlike yet")
    d = _one_dim(dim, input.ndim, "topk")
    size = input.shape[_wrap_dim(d, input.ndim)] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    return _topk_type(*_apply(_topk, (input,), (int(k), d, bool(largest), bool(sorted))))


# ----- kthvalue, median, nanmedian, mode -------------------------------------------------------------------------
def _pick(self, axis, keepdim, position):
    """(values, indices) of the element at ``position(sorted, idx)`` of each sorted row along ``axis``."""
    idx = _order(self, axis, False)
    pos = position(jnp.take_along_axis(self, idx, axis=axis), axis)
    i = jnp.take_along_axis(idx, pos, axis=axis).astype(jnp.int64)
    return _keep(jnp.take_along_axis(self, i, axis=axis), axis, keepdim), _keep(i, axis, keepdim)


def _lower_median(ignore_nan):
    """The position of the lower median in each sorted row (NaN rows: the first NaN, or with ``ignore_nan``
    the lower median of the numbers)."""
    def position(s, axis):
        n = s.shape[axis]
        count = (jnp.sum(~jnp.isnan(s), axis=axis, keepdims=True) if ignore_nan and jnp.issubdtype(s.dtype, jnp.inexact)
                 else jnp.full([1 if a == axis else s.shape[a] for a in range(s.ndim)], n))
        if not ignore_nan and jnp.issubdtype(s.dtype, jnp.inexact):
            count = jnp.where(jnp.any(jnp.isnan(s), axis=axis, keepdims=True),
                              2 * jnp.sum(~jnp.isnan(s), axis=axis, keepdims=True) + 1, count)
        return jnp.maximum((count - 1) // 2, 0)
    return position


def _selector(node, position_of, kernel, kinds="bc"):
    """A (values, indices)-along-dim op whose gradient goes to the selected index (torch's
    value_selecting_reduction_backward); torch has no ``kernel`` for dtypes of NumPy ``kinds``."""
    @op(node, save=("indices",), outputs=("values", "indices"), attrs=("dim", "keepdim", "self_sym_sizes"),
        unsigned=("dim",), refuse={kinds: kernel})
    def entry(self, *, dim, keepdim, k):
        if self.ndim == 0:
            return self, jnp.zeros((), jnp.int64)
        return _pick(self, dim % self.ndim, keepdim, position_of(k))

    @entry.derivative
    def _(grads, indices, dim, keepdim, self_shape):
        if not self_shape:
            return grads[0]
        axis = dim % len(self_shape)
        grad = grads[0] if keepdim else jnp.expand_dims(grads[0], axis)
        return _select_back(grad, indices if keepdim else jnp.expand_dims(indices, axis), axis, self_shape)
    return entry


_kthvalue = _selector("KthvalueBackward0", lambda k: (lambda s, axis: jnp.full(
    [1 if a == axis else s.shape[a] for a in range(s.ndim)], k - 1)), "kthvalue_cpu")
_median_dim = _selector("MedianBackward1", lambda k: _lower_median(False), "median_out")
_nanmedian_dim = _selector("NanmedianBackward1", lambda k: _lower_median(True), "median_out")


@public
def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest value along ``dim`` and its index (KthvalueBackward0)."""
    if out is not None:
        raise TypeError("kthvalue(): out= is not supported by torchlike yet")
    d = _one_dim(dim, input.ndim, "kthvalue")
    size = input.shape[_wrap_dim(d, input.ndim)] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {_wrap_dim(d, input.ndim)}")
    return _kthvalue_type(*_apply(_kthvalue, (input,), (d, _keepdim(keepdim), int(k))))


def _median_all(name, ignore_nan):
    @op(name, save=("self", "result"), attrs=(), refuse={"bc": "median_cpu"})
    def entry(self):
        flat = self.reshape(-1)
        if not flat.size:  # torch: NaN (an integer's lowest value)
            return jnp.array(jnp.nan if jnp.issubdtype(self.dtype, jnp.inexact) else jnp.iinfo(self.dtype).min,
                             self.dtype)
        s = jnp.take(flat, _order(flat, 0, False))
        return s[_lower_median(ignore_nan)(s[None], 1)[0, 0]]

    @entry.derivative
    def _(grad, self, result):  # torch's evenly_distribute_backward
        mask = (self == result) | (jnp.isnan(self) & jnp.isnan(result))
        return jnp.where(mask, grad / jnp.sum(mask).astype(grad.dtype), 0)
    return entry


_median_all_op = _median_all("MedianBackward0", False)
_nanmedian_all_op = _median_all("NanmedianBackward0", True)


def _median_fn(name, all_op, dim_op, rtype):
    def fn(input, dim=None, keepdim=False, *, out=None):
        if out is not None:
            raise TypeError(f"{name}(): out= is not supported by torchlike yet")
        if dim is None:
            return _apply(all_op, (input,), ())
        d = _one_dim(dim, input.ndim, name)
        _check_nonempty(input, name, (_wrap_dim(d, input.ndim),), IndexError)
        return rtype(*_apply(dim_op, (input,), (d, _keepdim(keepdim), 0)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The lower median{' ignoring NaN' if 'nan' in name else ''}: of all elements "
                  f"({all_op.name}), or (values, indices) along ``dim`` ({dim_op.name}).")
    return fn


median = public(_median_fn("median", _median_all_op, _median_dim, _median_type))
nanmedian = public(_median_fn("nanmedian", _nanmedian_all_op, _nanmedian_dim, _nanmedian_type))


def _mode_position(k):
    def position(s, axis):  # the first of the longest run of equal values in each sorted row (smallest on ties)
        n = s.shape[axis]
        new = jnp.concatenate([jnp.ones_like(jax.lax.slice_in_dim(s, 0, 1, axis=axis), bool),
                               jax.lax.slice_in_dim(s, 1, n, axis=axis) != jax.lax.slice_in_dim(s, 0, n - 1, axis=axis)],
                              axis=axis)
        iota = jax.lax.broadcasted_iota(jnp.int64, s.shape, axis)
        start = jax.lax.cummax(jnp.where(new, iota, 0), axis=axis)
        run = iota - start + 1
        best = jnp.max(run, axis=axis, keepdims=True)
        end = jnp.argmax(run == best, axis=axis, keepdims=True)  # where the first longest run ends
        return end
    return position


_mode = _selector("ModeBackward0", _mode_position, "mode_cpu", "c")


@public
def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value along ``dim`` (the smallest on ties) and an index of it (ModeBackward0). NaNs
    count as one value; torch's own answer for rows with NaN depends on its unstable sort."""
    if out is not None:
        raise TypeError("mode(): out= is not supported by torchlike yet")
    d = _one_dim(dim, input.ndim, "mode")
    _check_nonempty(input, "mode", (_wrap_dim(d, input.ndim),), IndexError)
    return _mode_type(*_apply(_mode, (input,), (d, _keepdim(keepdim), 0)))


# ----- cummax, cummin ----------------------------------------------------------------------------------------------
def _cumulative(name, better):
    @op(f"{name.capitalize()}Backward0", save=("self", "indices"), outputs=("values", "indices"), attrs=("dim",),
        unsigned=("dim",), refuse={"c": f"{name}_cpu"})
    def entry(self, *, dim):
        if self.ndim == 0:
            return self, jnp.zeros((), jnp.int64)
        axis = dim % self.ndim
        iota = jax.lax.broadcasted_iota(jnp.int64, self.shape, axis)
        nan = jnp.isnan(self) if jnp.issubdtype(self.dtype, jnp.inexact) else jnp.zeros(self.shape, bool)

        def combine(a, b):  # a prefix's (value, index, NaN) then a segment's: torch's `x >= out || isnan(x)`
            take = better(b[0], a[0]) | b[2]
            return tuple(jnp.where(take, y, x) for x, y in zip(a, b))
        values, indices, _ = jax.lax.associative_scan(combine, (self, iota, nan), axis=axis)
        return values, indices

    @entry.derivative
    def _(grads, self, indices, dim):
        if self.ndim == 0:
            return grads[0]
        return _select_back(grads[0], indices, dim % self.ndim, self.shape)

    rtype = _cummax_type if name == "cummax" else _cummin_type

    def fn(input, dim, *, out=None):
        if out is not None:
            raise TypeError(f"{name}(): out= is not supported by torchlike yet")
        d = _one_dim(dim, input.ndim, name)
        return rtype(*_apply(entry, (input,), (d,)))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The running {name[3:]} along ``dim`` and the index where it was reached ({entry.name})."
    return fn


cummax = public(_cumulative("cummax", lambda new, old: new >= old))
cummin = public(_cumulative("cummin", lambda new, old: new <= old))


# ----- searchsorted, bucketize ---------------------------------------------------------------------------------------
@op("searchsorted", save=(), nondiff=("sorted_sequence", "self"), attrs=(), refuse={"bc": "searchsorted_out_cpu"})
def _searchsorted(sorted_sequence, self, *, right, int32):
    seq = sorted_sequence if sorted_sequence.ndim == 1 else sorted_sequence[..., None, :]
    below = (seq <= self[..., None]) if right else (seq < self[..., None])
    return jnp.sum(below, axis=-1).astype(jnp.int32 if int32 else jnp.int64)


@public(method=False)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """For each value of ``input``, the index at which it would be inserted into ``sorted_sequence`` (along its
    last dim) to keep it sorted: the first such index, or with ``right=True`` (``side="right"``) the last."""
    if out is not None:
        raise TypeError("searchsorted(): out= is not supported by torchlike yet")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    if not isinstance(input, Tensor):
        input = tensor(input, dtype=sorted_sequence.dtype)
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(input.shape[:-1]):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(sorted_sequence.shape)} and "
            f"input value tensor {list(input.shape)}")
    return _apply(_searchsorted, (sorted_sequence, input), (bool(right), bool(out_int32)))


@public(method=False)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The index of the bucket of ``boundaries`` (1-D, sorted) each value falls in: ``boundaries[i-1] < x <=
    boundaries[i]``, or with ``right=True`` ``boundaries[i-1] <= x < boundaries[i]``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


# ----- unique, unique_consecutive ----------------------------------------------------------------------------
def _underivable(node, aten):
    """A node for values computed on the host (their shape depends on the data): torch has no derivative."""
    @op(node, save=(), nondiff=("values",), attrs=())
    def entry(self, values):
        return values

    @entry.derivative
    def _(grad):
        raise NotImplementedError(f"the derivative for '{aten}' is not implemented.")
    return entry


_unique_nodes = {(False, False): _underivable("Unique2Backward0", "_unique2"),
                 (False, True): _underivable("UniqueDimBackward0", "unique_dim"),
                 (True, False): _underivable("UniqueConsecutiveBackward0", "unique_consecutive")}
_unique_nodes[(True, True)] = _unique_nodes[(True, False)]


def _unique(input, consecutive, return_inverse, return_counts, dim):
    """torch's unique values (sorted, or of runs), inverse indices and counts, read and computed on the host."""
    a = np.asarray(input._data)
    if dim is None:
        shape, rows = a.shape, a.reshape(-1, 1)
    else:
        dim = _wrap_dim(dim, input.ndim)
        moved = np.moveaxis(a, dim, 0)
        shape, rows = a.shape[dim:dim + 1], moved.reshape(moved.shape[0], -1)
    n = rows.shape[0]
    if consecutive:
        start = np.ones(n, bool)
        start[1:] = (rows[1:] != rows[:-1]).any(axis=1)
        first = np.nonzero(start)[0]
        inverse, counts, keep = np.cumsum(start) - 1, np.diff(np.append(first, n)), first
    elif n:
        order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(n)
        srt = rows[order]
        start = np.ones(n, bool)
        start[1:] = (srt[1:] != srt[:-1]).any(axis=1)
        first = np.nonzero(start)[0]
        inverse = np.empty(n, np.int64)
        inverse[order] = np.cumsum(start) - 1
        counts, keep = np.diff(np.append(first, n)), order[first]
    else:
        inverse, counts, keep = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if dim is None:
        values = a.reshape(-1)[keep]
    else:
        values = np.moveaxis(np.moveaxis(a, dim, 0)[keep], 0, dim)
    values = _apply(_unique_nodes[(consecutive, dim is not None)], (input, _wrap(jnp.asarray(values))), ())
    out = (values,)
    if return_inverse:
        out += (_wrap(jnp.asarray(inverse.reshape(shape), jnp.int64)),)
    if return_counts:
        out += (_wrap(jnp.asarray(counts, jnp.int64)),)
    return out[0] if len(out) == 1 else out


@public
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002 - torch's name
    """The distinct values of input (sorted; with ``dim``: distinct slices along dim), and optionally the index of
    each entry's value among them and each value's count. Reads the values (Unique2Backward0, not differentiable)."""
    return _unique(input, False, return_inverse, return_counts, dim)


@public
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first value of each run of equal consecutive values (slices with ``dim``), optionally with each entry's
    run index and each run's length (UniqueConsecutiveBackward0, not differentiable)."""
    return _unique(input, True, return_inverse, return_counts, dim)


# ----- quantile, nanquantile (torch's quantile_impl: sort, gather, lerp_, then in-place view ops) ----------------
_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")
_ROUND = {"lower": jnp.floor, "higher": jnp.ceil, "nearest": jnp.round}
# torch's in-place unsqueeze_ / transpose_ / squeeze_ on its fresh result: new tensors recorded as those nodes
_unsqueeze_, _transpose_ = _INPLACE[_unsqueeze], _INPLACE[_transpose]


def _in_place(entry, t, statics):
    """``entry`` applied as torch's in-place view op on a fresh tensor: its node, the version bumped."""
    out = _apply(entry, (t,), statics)
    out._version_counter().version = t._version + 1
    return out


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, out):
    if not isinstance(q, Tensor):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
        q = tensor(q, dtype=input.dtype)
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if not input.numel():
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (_dtype.float32, _dtype.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q.dtype != input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if out is not None:
        if out.dtype != input.dtype:
            raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
        return _write_out("quantile", lambda: _quantile(input, q, dim, keepdim, interpolation, ignore_nan, None),
                          out, (input, q))
    qa = q._data
    if not isinstance(qa, jax.core.Tracer) and not bool(jnp.all((qa >= 0) & (qa <= 1))):  # (a host read, as torch)
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    shape = list(input.shape)
    if dim is None:
        out_shape = [1] * input.ndim if keepdim else []
        srt = input.flatten().sort().values
    else:
        d = _wrap_dim(dim, input.ndim)
        out_shape = shape[:d] + ([1] if keepdim else []) + shape[d + 1:] if shape else []
        srt = (input.sort().values if d == input.ndim - 1 else
               input.unsqueeze(-1).transpose(d, -1).sort().values)
    out_shape = list(q.shape) + out_shape if q.ndim else [1] + out_shape
    in_shape = out_shape[1:] + [0]
    in_shape[-1] = srt.shape[-1]
    srt = srt.view(in_shape)
    s = srt._data
    if ignore_nan:
        ranks = qa * (jnp.sum(~jnp.isnan(s), -1, keepdims=True) - 1)
        ranks = jnp.where(ranks < 0, 0, ranks)
    else:
        last = s.shape[-1] - 1
        r, nan = jnp.broadcast_arrays(qa * last, jnp.isnan(s).any(-1, keepdims=True))
        ranks = jnp.where(nan, jnp.asarray(last, r.dtype), r)
    if interpolation in _ROUND:
        ranks = _ROUND[interpolation](ranks)
    below = ranks.astype(jnp.int64)
    result = srt.gather(-1, _wrap(below))
    if interpolation in ("linear", "midpoint"):
        weights = jnp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        result.lerp_(srt.gather(-1, _wrap(jnp.ceil(ranks).astype(jnp.int64))), _wrap(weights))
    if not q.ndim:
        return _in_place(_squeeze_dim_, result, (-1,))
    result = _in_place(_transpose_, _in_place(_unsqueeze_, result, (0,)), (0, -1))
    return _in_place(_squeeze_dim_, result, (-1,))


@public
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """The ``q``-th quantiles (a number or a 1-D tensor, in [0, 1]) of input's values (along dim), interpolated
    between the two nearest sorted values as ``interpolation`` says; NaN where a NaN is among them."""
    return _quantile(input, q, dim, keepdim, interpolation, False, out)


@public
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    """quantile, ignoring NaN values (NaN only where all are)."""
    return _quantile(input, q, dim, keepdim, interpolation, True, out)
