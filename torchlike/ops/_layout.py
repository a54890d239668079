"""Memory layout of new results, by torch's rules: TensorIterator's (a pointwise result takes the layout of its
inputs: ``x.t().sin().stride()`` is ``(1, 3)``) and preserve_format's (``clone``, ``to``, ``*_like``).

A result laid out other than row-major keeps its values logically row-major in ``_data`` and gets only the geometry
``_sgeom = (sizes, strides, 0)``, always dense; the storage array in that memory order is made when first needed
(``_views._Storage``: a view of the result, ``detach``, ``torch.save``). An op declares its rule (``OpDef.layout``);
the rule runs only when an input has a geometry (a view or a laid-out result), so row-major inputs cost nothing.
"""
import functools

import jax.numpy as jnp

from .._tensor import _contiguous_strides, _format_strides, _in_format, channels_last, channels_last_3d


def _contiguous(sizes, strides):
    """torch's is_contiguous (size-1 dims ignored; empty tensors are contiguous)."""
    return _in_format(None, sizes, strides)


def _channels_last(sizes, strides):
    """torch's is_contiguous(memory_format=torch.channels_last) (4-d tensors only)."""
    return _in_format(channels_last, sizes, strides)


def _dense(sizes, strides):
    """torch's is_non_overlapping_and_dense."""
    expected = 1
    for d in sorted((d for d in range(len(sizes)) if sizes[d] > 1), key=lambda d: strides[d]):
        if strides[d] != expected:
            return False
        expected *= sizes[d]
    return True


def _sort_dims(shape, op_strides):
    """TensorIterator's reorder_dimensions: dims from fastest to slowest, an insertion sort that asks each operand
    in turn (a broadcast dim, stride 0, is no evidence; equal strides put the smaller dim first)."""
    def should_swap(d0, d1):
        for st in op_strides:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0
    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(shape)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def _strides_in_order(shape, perm, skip_ones=False):
    """Dense strides with dims laid out in ``perm`` order (fastest first). TensorIterator multiplies by every size
    (a size-0 dim gives the later ones stride 0); infer_dense_strides (``skip_ones``) skips sizes 0 and 1."""
    strides, acc = [0] * len(shape), 1
    for d in perm:
        strides[d] = acc
        if not skip_ones or shape[d] > 1:
            acc *= shape[d]
    return tuple(strides)


@functools.lru_cache(maxsize=4096)
def _ti_strides(shape, operands):
    """The strides TensorIterator gives a new output of ``shape`` from its inputs' ``(sizes, strides)``."""
    if all(sizes == shape for sizes, _ in operands):  # fast_set_up
        if all(_contiguous(*op) for op in operands):
            return _contiguous_strides(shape)
        if all(_channels_last(*op) for op in operands):
            c, h, w = shape[1:]
            return (c * h * w, 1, c * w, c)
        if all(_dense(*op) for op in operands) and len({st for _, st in operands}) == 1:
            return operands[-1][1]
    ndim = len(shape)
    op_strides = []
    for sizes, strides in operands:  # compute_strides: broadcast dims get stride 0
        lead = ndim - len(sizes)
        op_strides.append((0,) * lead + tuple(0 if n == 1 and shape[lead + i] != 1 else s
                                              for i, (n, s) in enumerate(zip(sizes, strides))))
    perm = _sort_dims(shape, op_strides) if ndim > 1 else [0] * ndim
    if perm == list(range(ndim - 1, -1, -1)):
        return _contiguous_strides(shape)
    return _strides_in_order(shape, perm)


@functools.lru_cache(maxsize=4096)
def _like_strides(sizes, strides):
    """preserve_format (empty_like, clone, to): the input's strides if it is dense, else dense strides in its
    dims' order (torch's infer_dense_strides). An empty tensor counts as dense (torch: it is contiguous)."""
    if 0 in sizes or _dense(sizes, strides):
        return strides
    perm = list(range(len(sizes) - 1, -1, -1))
    for i in range(1, len(sizes)):  # a stable insertion sort by stride; stride-0 dims do not move
        d1 = i
        for d0 in range(i - 1, -1, -1):
            s0, s1 = strides[perm[d0]], strides[perm[d1]]
            if s0 == 0 or s1 == 0:
                continue
            if s0 > s1 or (s0 == s1 and sizes[perm[d0]] > sizes[perm[d1]]):
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif s0 < s1:
                break
    return _strides_in_order(sizes, perm, skip_ones=True)


def _geometry(shape, strides):
    """A result's ``_sgeom``: None for row-major strides."""
    return None if strides == _contiguous_strides(shape) else (shape, strides, 0)


def _sizes_strides(t):
    g = t._sgeom
    if g is None:
        shape = t._data.aval.shape
        return shape, _contiguous_strides(shape)
    return g[0], g[1]


def ti(args, shape):
    """The geometry of a new TensorIterator output of ``shape`` from the tensors ``args`` (None entries skipped)."""
    return _geometry(shape, _ti_strides(shape, tuple(_sizes_strides(a) for a in args if a is not None)))


def like(args, shape):
    """The geometry of a preserve_format copy of ``args[0]``."""
    return _geometry(shape, _like_strides(*_sizes_strides(args[0])))


def like_for(kinds):
    """The rule of an op whose result for an input of these dtype kinds is allocated by empty_like / ones_like /
    zeros_like (preserve_format: abs of a complex input, isinf of an integer one), else TensorIterator's."""
    return lambda args, shape: (like if args[0]._data.dtype.kind in kinds else ti)(args, shape)


@functools.lru_cache(maxsize=4096)
def _suggested(sizes, strides):
    """torch's suggest_memory_format: channels_last (channels_last_3d) when a 4-d (5-d) tensor's strides are
    channels-last-like (is_channels_last_strides_2d/3d: ambiguous cases, as a size-1 channel dim, are row-major);
    else None (row-major)."""
    if len(sizes) not in (4, 5) or strides[1] == 0:
        return None
    low = 0
    for d in (1, 3, 2, 0) if len(sizes) == 4 else (1, 4, 3, 2, 0):
        if sizes[d] == 0 or strides[d] < low or (d == 0 and low == strides[1]):
            return None
        low = strides[d] * max(sizes[d], 1)
    return channels_last if len(sizes) == 4 else channels_last_3d


def suggested_format(t):
    """``t.suggest_memory_format()``: channels_last or channels_last_3d, None for contiguous_format."""
    return _suggested(*_sizes_strides(t))


def _in_suggested(fmt, shape):
    return None if fmt is None or len(shape) != len(_CL_RANK[fmt]) else _geometry(shape, _format_strides(fmt, shape))


_CL_RANK = {channels_last: "NCHW", channels_last_3d: "NCDHW"}


def suggested(args, shape):
    """The geometry of a result allocated in its first input's suggested memory format (pooling, batch and group
    norm, upsampling, padding): channels-last for channels-last inputs (results of another rank: row-major)."""
    return _in_suggested(suggested_format(args[0]), shape)


def normalized(args, shape):
    """batch_norm's result: row-major for a contiguous input (even one channels-last-contiguous too, as a
    size-1 channel dim makes it), else the input's suggested memory format."""
    sizes, strides = _sizes_strides(args[0])
    return None if _contiguous(sizes, strides) else suggested(args, shape)


def convolution(args, shape):
    """A convolution's result: channels-last when the input or the weight is (torch's CPU backends)."""
    return _in_suggested(suggested_format(args[0]) or suggested_format(args[1]), shape)


def concatenated(args, shape):
    """cat's result: the inputs' suggested memory format when they all have the same one, else row-major."""
    formats = {suggested_format(a) for a in args if a is not None}
    return _in_suggested(formats.pop(), shape) if len(formats) == 1 else None


def angle_rule(args, shape):
    """angle: the real result of a complex input is allocated row-major, else TensorIterator's."""
    return None if args[0]._data.dtype.kind == "c" else ti(args, shape)


def formatted(t, memory_format):
    """``t`` (a new dense result) laid out in ``memory_format`` (torch's error for the wrong rank)."""
    shape = t._data.aval.shape
    t._sgeom = _geometry(shape, _format_strides(memory_format, shape))
    return t


def grad_geometry(variable):
    """The geometry of a leaf's first ``.grad`` (AccumulateGrad's layout contract): the leaf's strides if it is
    dense, else row-major."""
    sizes, strides = _sizes_strides(variable)
    return _geometry(sizes, strides) if _dense(sizes, strides) else None


def laid_out(layout, args, results):
    """Give the results of an op with rule ``layout`` their geometry when an input has one; returns them."""
    for a in args:
        if a is not None and a._sgeom is not None:
            return place(layout, args, results)
    return results


def place(layout, args, results):
    """Give the results (None entries skipped) their geometry by ``layout`` from ``args``; returns them."""
    shape = None
    for r in results:
        if r is not None:
            if shape != r._data.aval.shape:
                shape = r._data.aval.shape
                geom = layout(args, shape)
            r._sgeom = geom
    return results


def physical(data, strides):
    """The storage array of a dense laid-out tensor: its values in memory order (dims by decreasing stride)."""
    order = tuple(sorted(range(len(strides)), key=lambda d: -strides[d]))
    return data if order == tuple(range(len(strides))) else jnp.transpose(data, order)  # (jnp: pending arrays too)
