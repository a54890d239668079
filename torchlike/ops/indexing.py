"""Indexing ops: ``x[...]`` and ``x[...] = v``, index_select, gather, scatter(_add), index_add, masked_fill,
masked_select, take_along_dim, nonzero.

``Tensor.__getitem__`` follows torch's ``applySlicing``: basic indices are applied one by one, each its own
node (int -> SelectBackward0, slice -> SliceBackward0, None/bool -> UnsqueezeBackward0; a full ``:`` inside a
tuple records nothing; ``x[...]`` and friends -> AliasBackward0), then all tensor indices together make one
IndexBackward0, whose dims are placed by NumPy's rule (together where the indexed dims are adjacent, else
first). ``__setitem__`` records the node torch's grad_fn shows: IndexPutBackward0 (advanced indices only),
CopySlices (into a basic-indexed part), CopyBackwards / FillBackward3 (the whole tensor).

Indexing returns new tensors; torch's views (shared storage) are not modelled here.

Values are read on the host where torch reads them too: boolean masks (the result shape depends on them:
like ``jnp.nonzero`` they cannot be traced under ``jax.jit``), 0-d integer tensors used as indices, nonzero,
and index bounds checks (skipped on JAX tracers, where an out-of-range index follows JAX's rules instead).
"""
import inspect
import math
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._warnings import warn_once
from .._tensor import Tensor, _wrap, _wrap_dim, _type_string, _differentiable_dtype
from .. import _grad_mode as _gm
from ._util import _astype
from . import _layout, _util
from ._registry import op, OpDef, _apply, _apply_inplace, _check_autograd_inplace, _scalar, _bucket
from ._views import _view_apply, _aliased, _overlaps, _laid_out, _check_input_overlap, _OWN_INPUT_CHECK, \
    _compute_stride
from ._bind import public
from .creation import _check_fits
from ._out import _write_out
from .shape import _select, _select_raw, _slice, _slice_raw, _slice_length, _unsqueeze, _alias, _expand_geom

_INT64_MAX = (1 << 63) - 1
_NUMBER = (bool, int, float, complex, np.number, np.bool_)
_BAD_INDEX_DTYPE = "tensors used as indices must be long, int, byte or bool tensors"
_ZERO_DIM_MSG = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                 "convert a 0-dim tensor to a number")
_CPP_TYPE = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int", "int32": "int",
             "int64": "long int", "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
             "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


# ----- helpers ---------------------------------------------------------------------------------------------
def _named(fn, names):
    """``fn(grad, **kw)`` with a signature naming what the op table should pass it (variable-arity ops)."""
    def formula(grad, **kw):
        return fn(grad, **kw)
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("grad",) + tuple(names)]
    formula.__signature__ = inspect.Signature(params)
    return formula


def _concrete(t):
    return not isinstance(t._data, jax.core.Tracer)


def _host(t):
    """The values of a tensor as a NumPy array (a device-to-host read)."""
    return np.asarray(t._data)


def _type_word(np_dtype):
    return _type_string(np_dtype)[6:-6]


def _shape_str(shape):
    return str(list(shape))


def _broadcast_shapes(a, b):
    """torch's infer_size with its message (a, b as torch names them)."""
    n = max(len(a), len(b))
    out = []
    for i in range(n - 1, -1, -1):  # from the last dim, as torch (which reports the last mismatch)
        off = n - 1 - i
        sa = a[len(a) - 1 - off] if len(a) - 1 - off >= 0 else 1
        sb = b[len(b) - 1 - off] if len(b) - 1 - off >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                               f"non-singleton dimension {i}")
        out.append(sb if sa == 1 else sa)
    return tuple(out[::-1])


def _check_bounds(index, size, dim, exc=RuntimeError, negative=False,
                  msg="index {v} is out of bounds for dimension {dim} with size {size}"):
    """torch's out-of-bounds error (``msg`` formatted with the entry v, dim and size) for the first entry of index
    outside [0, size) (or [-size, size) when negative indices count from the end). Reads the index values;
    skipped on tracers."""
    if index.numel() == 0:
        return
    if not _concrete(index):
        a = index._data.reshape(-1)
        bad = (a < (-size if negative else 0)) | (a >= size)
        _util.check_later(bad.any(), exc, msg.format(v="{v}", dim=dim, size=size), a[jnp.argmax(bad)])
        return
    a = _host(index).reshape(-1)
    bad = (a < (-size if negative else 0)) | (a >= size)
    if bad.any():
        v = int(a[np.argmax(bad)])
        raise exc(msg.format(v=v, dim=dim, size=size))


def _grid(index, dim):
    """Index arrays addressing ``a[..., index[i, j, ...], ...]`` at position (i, j, ...) along ``dim``."""
    n = index.ndim
    dim %= max(n, 1)
    return tuple(index if d == dim else jnp.arange(s).reshape((s,) + (1,) * (n - 1 - d))
                 for d, s in enumerate(index.shape))


def _crop(shape):
    return tuple(slice(0, s) for s in shape)


def _ne(shape):
    """torch's ensure_nonempty sizes: a 0-d tensor counts as one of size [1] (scatter/gather/index ops)."""
    return tuple(shape) or (1,)


def _nonempty(*arrays):
    """The arrays with 0-d ones as [1] (torch's scatter/gather kernels see them so)."""
    return [a.reshape(_ne(a.shape)) for a in arrays]


def _no_dims(dim):
    """torch's error for ``size(dim)`` of a 0-d tensor."""
    return IndexError(f"Dimension specified as {dim} but tensor has no dimensions")


# ----- basic indexing: select / slice / unsqueeze / alias (shape.py's view ops) ----------------------------
_STEP_FNS = {"select": _select_raw, "slice": _slice_raw, "unsqueeze": jnp.expand_dims}
_STEP_OPS = {"select": _select, "slice": _slice, "unsqueeze": _unsqueeze}


# ----- advanced indexing: IndexBackward0 -------------------------------------------------------------------
def _adv_key(arrays, spec):
    """The jnp index of torch's at::index: spec per indexed dim is None (``:``), -1 (integer array) or the
    number of True values of a boolean mask (expanded with nonzero)."""
    key, it = [], iter(arrays)
    for s in spec:
        if s is None:
            key.append(slice(None))
        elif s < 0:
            key.append(next(it))
        else:
            key.extend(jnp.nonzero(next(it), size=s))
    return tuple(key)


def _index_fwd(self, *indices, spec):
    return self[_adv_key(indices, spec)]


def _index_bwd(grad, self_shape, spec, **kw):
    key = _adv_key([kw[f"i{k}"] for k in range(len(kw))], spec)
    return jnp.zeros(self_shape, grad.dtype).at[key].add(grad)


def _show_indices(names, statics, listed):
    """``saved=`` of an entry with index tensors ``names``: torch saves them as one list, ``_saved_indices``
    (None for dims indexed by ``:``) where ``listed``, and shows no ``_saved_i<k>`` of the inputs the table saved
    one by one."""
    spec = statics.index("spec")

    def indices(node, saved):
        it = iter(saved[name] for name in names)
        return tuple(None if s is None else next(it) for s in node._statics[spec])

    def raw_indices(node, raw):  # torch's raw slots: the index tensors only
        return tuple(raw[name] for name in names)
    shown = {"indices": (indices, raw_indices)} if listed else {}
    return {**{name: None for name in names}, **shown}


_index_ops = {}


def _index_geometry(src, tensors, spec, shape):
    """The layout torch gives ``src[indices]``: TensorIterator's over src restrided (indexed dims moved to the
    front if not adjacent, replaced by the indices' broadcast shape with stride 0) and the index tensors expanded
    to that shape and viewed with size-1 dims around it (a mask's index tensors are the columns of its nonzero())."""
    sizes, strides = _layout._sizes_strides(src)
    slots, it = [], iter(tensors)
    for s in spec:
        if s is None:
            slots.append(None)
        else:
            t = next(it)
            slots.extend([_layout._sizes_strides(t)] if s < 0 else [((s,), (t.ndim,))] * t.ndim)
    slots += [None] * (len(sizes) - len(slots))
    pos = [d for d, x in enumerate(slots) if x is not None]
    if pos != list(range(pos[0], pos[-1] + 1)):  # transposeToFront
        order = pos + [d for d in range(len(sizes)) if d not in pos]
        sizes, strides, slots = ([seq[d] for d in order] for seq in (sizes, strides, slots))
        pos = list(range(len(pos)))
    before, after = pos[0], len(sizes) - pos[-1] - 1
    rep = tuple(np.broadcast_shapes(*(x[0] for x in slots if x is not None)))
    ops = [(shape, tuple(strides[:before]) + (0,) * len(rep) + tuple(strides[len(strides) - after:]))]
    viewed = (1,) * before + rep + (1,) * after
    for x in slots:
        if x is not None:
            ops.append((viewed, _compute_stride(rep, _expand_geom(*x, 0, rep)[1], viewed)))
    return _layout._geometry(shape, _layout._ti_strides(shape, tuple(ops)))


def _padded_mask(statics):
    """x[..., mask]: the padded program for the mask's count of True values (see OpDef's ``padded``)."""
    spec, = statics
    counts = [s for s in spec if s is not None]
    if counts[0] < 0:  # an integer index tensor: its shape is the result's, no data-dependent size
        return None
    axis, count = spec.index(counts[0]), counts[0]
    size = _bucket(count)
    return (tuple(None if s is None else size for s in spec),), axis, count, size


def _index_op(n):
    """The IndexBackward0 table entry for n index tensors."""
    entry = _index_ops.get(n)
    if entry is None:
        names = tuple(f"i{k}" for k in range(n))
        entry = OpDef("IndexBackward0", _index_fwd, save=names, nondiff=names, inputs=("self",) + names,
                      statics=("spec",), attrs=("self_sym_sizes",), saved=_show_indices(names, ("spec",), True),
                      padded=_padded_mask if n == 1 else None)
        entry.derivative(_named(_index_bwd, ("self_shape", "spec") + names))
        _index_ops[n] = entry
    return entry


# ----- parsing an index the way torch's applySlicing does --------------------------------------------------
def _treat_as_tuple(index):
    """NumPy's legacy rule torch keeps: a short list holding sequences/slices/None/... is a tuple of indices."""
    if len(index) >= 32:
        return False
    for obj in index:
        if isinstance(obj, (Tensor, np.ndarray, list, tuple, slice)) or obj is None or obj is Ellipsis:
            warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
                          "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
                          "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
                          "error or a different result", UserWarning, stacklevel=5)
            return True
    return False


def _index_tensor(obj):
    """A list / NumPy array index as a tensor (ints -> int64, bools -> bool)."""
    a = np.asarray(obj)
    if a.size == 0 and a.dtype.kind == "f":
        a = a.astype(np.int64)
    if a.dtype.kind not in "biu":
        raise IndexError(_BAD_INDEX_DTYPE)
    if isinstance(obj, (list, tuple)) and a.dtype.kind in "iu":
        a = a.astype(np.int64)
    return _wrap(jnp.asarray(a))


def _items(index):
    """The index as a tuple of ints, slices, None, Ellipsis, bools and index tensors."""
    if isinstance(index, tuple):
        items = index
    elif isinstance(index, list) and _treat_as_tuple(index):
        items = tuple(index)
    else:
        items = (index,)
    out = []
    for obj in items:
        if obj is None or obj is Ellipsis or isinstance(obj, (bool, np.bool_, slice)):
            out.append(bool(obj) if isinstance(obj, np.bool_) else obj)
        elif isinstance(obj, (int, np.integer)):
            out.append(int(obj))
        elif isinstance(obj, (Tensor, np.ndarray, list, tuple)):
            t = obj if isinstance(obj, Tensor) else _index_tensor(obj)
            kind = t._data.dtype.kind
            if t.ndim == 0 and kind in "biu" and (_concrete(t) or kind == "b" or t._data.dtype == np.uint8):
                # 0-d integer tensors select; 0-d bool/uint8 act as bools (a traced 0-d integer index, as vmap
                # gives each example's, indexes as a 0-d index tensor: the same result, no host read)
                v = _host(t).item()
                out.append(bool(v) if kind == "b" or t._data.dtype == np.uint8 else int(v))
            else:
                if kind not in "biu":
                    raise IndexError(_BAD_INDEX_DTYPE)
                if t._data.dtype == np.uint8:
                    warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                                  "torch.bool instead.", UserWarning, stacklevel=5)
                out.append(t)
        elif hasattr(obj, "__index__"):
            out.append(operator.index(obj))
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                             f"valid indices (got {type(obj).__name__})")
    return out


def _is_mask(t):
    return t._data.dtype == np.bool_ or t._data.dtype == np.uint8


def _slice_args(s):
    step = 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step < 0:
        raise ValueError("step must be greater than zero")
    start = 0 if s.start is None else operator.index(s.start)
    end = _INT64_MAX if s.stop is None else operator.index(s.stop)
    return start, end, step


def _parse(shape, index, record_full_slice=False):
    """torch's applySlicing on shapes: (basic steps in order, tensor indices per dim (torch's outIndices),
    the shape after the basic steps)."""
    items = _items(index)
    ndim = len(shape)
    if not ndim and not isinstance(index, tuple) and len(items) == 1:  # torch's single-index fast paths
        obj = items[0]
        if isinstance(obj, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if isinstance(obj, int) and not isinstance(obj, bool):
            if obj == 0:
                raise IndexError(_ZERO_DIM_MSG)
            raise IndexError(f"index {obj} is out of bounds for dimension 0 with size 0")
    specified = sum((it.ndim if _is_mask(it) else 1) if isinstance(it, Tensor) else 1 for it in items
                    if it is not None and it is not Ellipsis and not isinstance(it, bool))
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    cur = list(shape)
    steps, slots = [], []
    dim = 0

    def record(t):
        nonlocal dim
        if not slots:
            slots.extend([None] * dim)
        slots.append(t)
        dim += t.ndim if _is_mask(t) else 1

    for real_dim, obj in enumerate(items):
        if obj is None or isinstance(obj, bool):
            steps.append(("unsqueeze", dim))
            cur.insert(dim, 1)
            if obj is None:
                dim += 1
                if slots:
                    slots.append(None)
            else:  # True indexes the new dim as [0], False as []
                record(_wrap(jnp.zeros((1 if obj else 0,), jnp.int64)))
        elif obj is Ellipsis:
            n = ndim - specified
            dim += n
            if slots:
                slots.extend([None] * n)
        elif isinstance(obj, int):
            size = cur[dim]
            if not -size <= obj < size:
                raise IndexError(f"index {obj} is out of bounds for dimension {real_dim} with size {size}")
            steps.append(("select", dim, obj))
            cur.pop(dim)
        elif isinstance(obj, slice):
            start, end, step = _slice_args(obj)
            if record_full_slice or not (start == 0 and end >= cur[dim] and step == 1):
                cur[dim] = _slice_length(cur[dim], start, end, step)
                steps.append(("slice", dim, start, end, step, cur[dim]))
            dim += 1
            if slots:
                slots.append(None)
        else:
            record(obj)
    while slots and slots[-1] is None:
        slots.pop()
    return steps, slots, tuple(cur)


def _advanced(cur, slots, check=None):
    """Check torch's at::index arguments on the sliced shape ``cur``: (spec, index tensors, result shape).
    ``check(result shape)`` runs before the bounds of the indices are checked (torch's kernel checks them)."""
    spec, tensors, shapes, dims = [], [], [], []
    p = 0
    for t in slots:
        if t is None:
            spec.append(None)
            p += 1
            continue
        if _is_mask(t):
            mshape = t.shape
            for j, s in enumerate(mshape):
                if p + j >= len(cur):
                    raise IndexError(f"too many indices for tensor of dimension {len(cur)}")
                if s != cur[p + j]:
                    raise IndexError(f"The shape of the mask {_shape_str(mshape)} at index {j} does not match the "
                                     f"shape of the indexed tensor {_shape_str(cur)} at index {p + j}")
            count = int(np.count_nonzero(_host(t)))
            spec.append(count)
            shapes += [(count,)] * len(mshape)
            dims += range(p, p + len(mshape))
            p += len(mshape)
        else:
            if p >= len(cur):
                raise IndexError(f"too many indices for tensor of dimension {len(cur)}")
            spec.append(-1)
            shapes.append(tuple(t.shape))
            dims.append(p)
            p += 1
        tensors.append(t)
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                         + ", ".join(_shape_str(s) for s in shapes)) from None
    if dims == list(range(dims[0], dims[-1] + 1)):
        shape = cur[:dims[0]] + tuple(bshape) + cur[dims[-1] + 1:]
    else:
        shape = tuple(bshape) + tuple(s for d, s in enumerate(cur) if d not in dims)
    if check is not None:
        check(shape)
    k = 0
    for s, t in zip([s for s in spec if s is not None], tensors):
        if s < 0:
            _check_bounds(t, cur[dims[k]], k, IndexError, negative=True)
            k += 1
        else:
            k += t.ndim
    return tuple(spec), tensors, shape


@public(name="__getitem__", function=False)
def _getitem(self, index):
    """``self[index]`` with torch's indexing rules and node structure."""
    if type(index) is int and self._data.ndim:  # fast path of x[i]
        size = self._data.shape[0]
        if not -size <= index < size:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {size}")
        return _view_apply(_select, self, (0, index))
    single_slice = isinstance(index, slice)
    steps, slots, cur = _parse(self.shape, index, record_full_slice=single_slice)
    if slots:
        spec, tensors, _ = _advanced(cur, slots)
    t = self
    for kind, *args in steps:
        t = _view_apply(_STEP_OPS[kind], t, tuple(args))
    if slots:
        out = _apply(_index_op(len(tensors)), (t, *tensors), (spec,))
        if t._sgeom is not None or any(i._sgeom is not None for i in tensors):
            out._sgeom = _index_geometry(t, tensors, spec, out._data.aval.shape)
        return out
    if t is self:  # x[...], x[:, :]: a new tensor anyway
        return _view_apply(_alias, self, ())
    return t


# ----- __setitem__ -----------------------------------------------------------------------------------------
# The basic steps of x[index] = v are split in two statics: their structure (kind, dim, slice step and length)
# and their ints (select's index, slice's start and end), which are traced: one compile for every x[i] = v.
_STEP_INTS = {"select": (2, 3), "slice": (2, 4), "unsqueeze": (2, 2)}  # where each kind's traced ints lie


def _split_steps(steps):
    """(structure, ints) of the basic steps of an index."""
    struct, ints = [], []
    for step in steps:
        a, b = _STEP_INTS[step[0]]
        struct.append(step[:a] + step[b:])
        ints.extend(step[a:b])
    return tuple(struct), tuple(ints)


def _positions(shape, steps, step_ints, spec, indices):
    """Flat positions (in ``shape``) of the elements ``x[index]`` refers to, in torch's order."""
    pos = jnp.arange(int(np.prod(shape, dtype=np.int64))).reshape(shape)
    ints = iter(step_ints)
    for kind, dim, *rest in steps:
        a, b = _STEP_INTS[kind]
        pos = _STEP_FNS[kind](pos, dim, *[next(ints) for _ in range(b - a)], *rest)
    return pos[_adv_key(indices, spec)] if spec else pos


# x[mask] = v with a one-element v is torch's masked_fill_: a where over the mask, whatever its count of True
# values (the spec marks the mask _MASKED, not with its count), so it compiles once per shape
_MASKED = -2


def _masked_region(shape, steps, step_ints, spec, mask):
    """Where ``x[..., mask] = v`` writes, as a bool array of x's shape."""
    sel = _positions(shape, steps, step_ints, (), ())
    p = spec.index(_MASKED)
    m = mask.reshape((1,) * p + mask.shape + (1,) * (sel.ndim - p - mask.ndim))
    hit = jnp.broadcast_to(m, sel.shape).reshape(-1)
    return jnp.zeros(math.prod(shape), bool).at[sel.reshape(-1)].set(hit).reshape(shape)


def _setitem_fwd(self, values, *indices, steps, spec, accumulate, step_ints):  # accumulate: index_put's
    if _MASKED in spec:
        return jnp.where(_masked_region(self.shape, steps, step_ints, spec, indices[0]),
                         _astype(values, self.dtype).reshape(()), self)
    sel = _positions(self.shape, steps, step_ints, spec, indices)
    v = jnp.broadcast_to(_astype(values, self.dtype), sel.shape).reshape(-1)
    ref = self.reshape(-1).at[sel.reshape(-1)]
    return (_add_at(ref, v) if accumulate else ref.set(v)).reshape(self.shape)


def _setitem_bwd(grad, self_shape, steps, step_ints, spec, accumulate, **kw):
    indices = [kw[f"i{k}"] for k in range(len(kw))]
    if _MASKED in spec:  # the table sums the value's gradient to its shape
        region = _masked_region(self_shape, steps, step_ints, spec, indices[0])
        zero = jnp.zeros((), grad.dtype)
        return jnp.where(region, zero, grad), jnp.where(region, grad, zero)
    sel = _positions(self_shape, steps, step_ints, spec, indices)
    flat = grad.reshape(-1)
    return grad if accumulate else flat.at[sel.reshape(-1)].set(0).reshape(self_shape), flat[sel]


_setitem_ops = {}


def _setitem_op(name, n, copy=False):
    """The in-place table entry ``name`` (IndexPutBackward0, CopySlices, ...) for n index tensors (``copy``: torch
    writes with copy_, which leaves an integer target without history)."""
    entry = _setitem_ops.get((name, n, copy))
    if entry is None:
        names = tuple(f"i{k}" for k in range(n))
        index_put = name == "IndexPutBackward0"
        statics = ("steps", "spec", "accumulate", "step_ints")
        overwrites = name in ("torch::autograd::CopyBackwards", "FillBackward3")  # self's gradient: torch's zeros
        entry = OpDef(name, _setitem_fwd, save=names, nondiff=names, inputs=("self", "values") + names,
                      statics=statics, attrs=("accumulate",) if index_put else (),
                      saved=_show_indices(names, statics, index_put), const_grads=(0,) if overwrites else None,
                      dynamic=("step_ints",), int_plain=copy,
                      real_grads=copy)  # (only copy_'s formula has handle_r_to_c; index_put_'s and fill_'s,
        # under a CopySlices too, refuse a complex gradient for real values)
        entry.derivative(_named(_setitem_bwd, ("self_shape", "steps", "step_ints", "spec", "accumulate") + names))
        _setitem_ops[(name, n, copy)] = entry
        _OWN_INPUT_CHECK.add(entry)  # _setitem checks as torch's copy_ / fill_ / index_put_ / masked_fill_
    return entry


def _strip_leading_ones(shape):
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def _put_args(self, cur, slots, value, accumulate=False, parts=None):
    """torch's index_put_ checks of the index tensors ``slots`` (on the shape ``cur``) and the value: (spec, index
    tensors, the value, the op names torch warns with about overlap). ``parts``: in place into ``self[parts]``,
    where torch refuses any overlap with the value or an index first (unless it runs as masked_fill_)."""
    given = [t for t in slots if t is not None]
    if parts is not None and not (value._data.size == 1 and not accumulate and len(given) == 1 and
                                  _is_mask(given[0])):
        _check_input_overlap(self, (value, *given), True, parts)
    stripped = _strip_leading_ones(value.shape)

    def check(target):
        try:
            if np.broadcast_shapes(stripped, target) != tuple(target):  # the value broadcasts *to* the result
                raise ValueError
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(stripped)} cannot be "
                               f"broadcast to indexing result of shape {_shape_str(target)}") from None
    spec, tensors, _ = _advanced(cur, slots, check)
    masks = [t for t, s in zip(tensors, [s for s in spec if s is not None]) if s >= 0]
    overlap = ("index_put_",)
    if value._data.size == 1 and len(masks) == len(tensors) == 1 and not accumulate:
        # torch's index_put_ runs as masked_fill_ here (one mask, a one-element value): the value is cast
        if masks[0]._data.dtype != np.bool_:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        if value._data.dtype != self._data.dtype and self._data.dtype.kind in "iufV" and \
                not getattr(value, "_wrapped_number", False):  # it reads value.item()
            _check_fits(value.item(), self._data.dtype)
        overlap = ("index_put_", "masked_fill_")
        spec = tuple(_MASKED if s is not None else None for s in spec)
    elif not getattr(value, "_wrapped_number", False) and value._data.dtype != self._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_type_word(self._data.dtype)} for the destination and "
                           f"{_type_word(value._data.dtype)} for the source.")
    if stripped != tuple(value.shape):
        value = value.view(stripped)
    return spec, tensors, value, overlap


def _check_assigned(value, dt):
    """torch's conversion of a number assigned with ``x[i] = value`` to x's dtype ``dt`` (its scalar_to_tensor):
    a 16-bit float goes through double (a value too large becomes inf)."""
    if type(value) is int and not -1 << 63 <= value < 1 << 63:
        raise ValueError("Overflow when unpacking long long")
    _check_fits(value, np.dtype(np.float64) if dt.kind in "fV" and dt.itemsize == 2 else dt)


def _check_setitem_autograd(self, steps, value):
    """torch's autograd check of the write's target ``self[basic index]`` (before index_put_'s own checks): only
    where it can fail, a leaf that requires grad, or a view of one or a view torch forbids to modify."""
    base = self._base
    if not (self._requires_grad and self._grad_fn is None) and (base is None or (
            self._view_error is None and self._view_meta is None and not (base._requires_grad and
                                                                           base._grad_fn is None))):
        return
    for kind, *args in steps:
        self = _view_apply(_STEP_OPS[kind], self, tuple(args))
    _check_autograd_inplace(self, (value,))


def _has_mask0(index):
    """Whether a setitem index holds a 0-d bool tensor (torch's index_put_ with a one-element mask)."""
    return any(isinstance(i, Tensor) and i.ndim == 0 and i._data.dtype == np.bool_
               for i in (index if isinstance(index, tuple) else (index,)))


@public(name="__setitem__", function=False)
def _setitem(self, index, value):
    """``self[index] = value``: an in-place op on self (torch's CopySlices / IndexPutBackward0 / ...)."""
    if isinstance(value, Tensor):
        pass
    elif isinstance(value, _NUMBER):
        value = value.item() if isinstance(value, np.generic) else value
        _check_assigned(value, self._data.dtype)
        value = _scalar(value)
    else:
        cls = type(value)
        name = cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"
        raise TypeError(f"can't assign a {name} to a {_type_string(self._data.dtype)}")
    if index is False:
        return
    if index is True:
        index = None  # torch: copy into self.unsqueeze(0)
    steps, slots, cur = _parse(self.shape, index)
    view = bool(steps)
    if not slots and tuple(value.shape) != cur and value.ndim:  # copy_: torch expands the value first
        value = value.view(_strip_leading_ones(value.shape))
        if tuple(value.shape) != cur:
            value = value.expand(cur)
    # torch writes with copy_ (same sizes or a value that is not 0-d), which leaves an integer target outside
    # autograd altogether: no check, no node (one with history refuses the view it writes through)
    plain = not slots and not (value.ndim == 0 and cur) and not _differentiable_dtype(self._data.dtype) and \
        not self._requires_grad
    if _gm._state.grad_enabled and not plain:
        if steps and self._requires_grad and not _differentiable_dtype(self._data.dtype):
            raise RuntimeError(f"Autograd not support dtype: {_type_string(self._data.dtype)[6:-6]}")  # (the view)
        _check_setitem_autograd(self, steps, value)
    if view and _aliased(self._sgeom):  # torch writes into the selected view, which may not overlap itself
        for kind, *args in steps:
            self = _view_apply(_STEP_OPS[kind], self, tuple(args))
        steps, view = [], False
    spec, tensors, overlap = (), [], None
    parts = [(_STEP_OPS[kind], tuple(args)) for kind, *args in steps]  # torch writes into self[basic index]
    if slots:  # index_put_ (into the view if there is one)
        spec, tensors, value, overlap = _put_args(self, cur, slots, value, parts=parts)
        name = "torch::autograd::CopySlices" if view else "IndexPutBackward0"
    else:  # copy_ / fill_ (into the view if there is one)
        copy = not (value.ndim == 0 and cur)
        if view:
            name = "torch::autograd::CopySlices"
        elif value.ndim == 0 and cur:
            name = "FillBackward3"
        else:
            name = "torch::autograd::CopyBackwards"
    if _has_mask0(index):  # torch's index_put_ with a one-element mask: the value may not share self's memory
        _check_input_overlap(self, (value,), True)
    if overlap != ("index_put_",) and (tensors or value.ndim):  # masked_fill_ (the mask; it reads the value
        # with item()) or copy_ (not fill_); index_put_ checked all its inputs first
        _check_input_overlap(self, tensors or (value,), False, parts)
    struct, ints = _split_steps(steps)
    with _gm.set_grad_enabled(_gm._state.grad_enabled and not plain):
        _apply_inplace(_setitem_op(name, len(tensors), not slots and copy), self, (self, value, *tensors),
                       (struct, spec, False, ints), overlap)


# ----- index_select / gather / take_along_dim ------------------------------------------------------------
@op("IndexSelectBackward0", save=("index",), nondiff=("index",), attrs=("dim", "self_sym_sizes"), unsigned=("dim",))
def _index_select(self, index, *, dim):
    if self.ndim == 0:  # the index is one 0 (checked)
        return self
    return jnp.take(self, index.reshape(-1), axis=dim)


@_index_select.derivative
def _(grad, index, self_shape, dim):
    if not self_shape:
        return grad
    key = (slice(None),) * (dim % len(self_shape)) + (index.reshape(-1),)
    return jnp.zeros(self_shape, grad.dtype).at[key].add(grad)


@public
def index_select(input, dim, index):
    """Entries of input at ``index`` (a vector) along dim (IndexSelectBackward0)."""
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._data.dtype not in (np.int32, np.int64):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if not input.ndim and index.numel() != 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {index.numel()} value(s)")
    size = input.shape[d] if input.ndim else 1
    if not size and index.numel():
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if input.ndim > 1 and (d == 1 or not input.numel()):  # torch's CPU kernel for these has its own message
        _check_bounds(index, size, d, msg="INDICES element is out of DATA bounds, id={v} axis_dim={size}")
    _check_bounds(index, size, d, IndexError, msg="index out of range in self")
    return _apply(_index_select, (input, index), (dim,))


@op("GatherBackward0", save=("self", "index"), nondiff=("index",), attrs=("dim", "sparse_grad"), unsigned=("dim",))
def _gather(self, index, *, dim, sparse_grad):
    s, i = _nonempty(self, index)
    return s[_grid(i, dim)].reshape(index.shape)


@_gather.derivative
def _(grad, index, self_shape, dim):
    g, i = _nonempty(grad, index)
    return jnp.zeros(_ne(self_shape), grad.dtype).at[_grid(i, dim)].add(g).reshape(self_shape)


def _check_scatter_gather(fname, self, index, dim, src=None, what="input"):
    """torch's shape/dtype/bounds checks shared by gather, scatter and scatter_add."""
    if index._data.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{fname}(): Expected dtype int32/int64 for index")
    if max(index.ndim, 1) != max(self.ndim, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as {what} tensor")
    if src is not None and max(index.ndim, 1) != max(src.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    ishape, sshape = tuple(index.shape), tuple(self.shape)
    ni, ns, nsrc = _ne(ishape), _ne(sshape), _ne(src.shape) if src is not None else None
    for d in range(len(ni)):
        too_big = (d != dim and ni[d] > ns[d]) or (src is not None and ni[d] > nsrc[d])
        if too_big:
            if fname == "gather":
                raise RuntimeError(f"Size does not match at dimension {d} expected index {_shape_str(ishape)} to be "
                                   f"no larger than self {_shape_str(sshape)} apart from dimension {dim}")
            msg = (f"Expected index {_shape_str(ishape)} to be no larger than self {_shape_str(sshape)} apart from "
                   f"dimension {dim}")
            if src is not None:
                msg += f" and to be no larger size than src {_shape_str(src.shape)}"
            raise RuntimeError(msg)
    _check_bounds(index, sshape[dim] if sshape else 1, dim)


@public
def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j] = input[index[i][j]][j]`` (for dim 0) (GatherBackward0)."""
    _check_scatter_gather("gather", input, index, _wrap_dim(dim, input.ndim))
    return _apply(_gather, (input, index), (dim, bool(sparse_grad)))


@public
def take_along_dim(input, indices, dim=None):
    """Values of input at ``indices`` along dim (broadcasting the other dims), or of the flattened input."""
    if dim is None:
        return gather(input.view(-1), 0, indices.view(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {input.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_type_word(indices._data.dtype)}")
    dim = _wrap_dim(dim, input.ndim)
    if not input.ndim:
        raise _no_dims(dim)
    self_sizes = list(input.shape)
    self_sizes[dim] = indices.shape[dim]
    ishape = _broadcast_shapes(tuple(self_sizes), tuple(indices.shape))
    index_sizes = list(indices.shape)
    index_sizes[dim] = input.shape[dim]
    sshape = _broadcast_shapes(tuple(index_sizes), tuple(input.shape))
    size = input.shape[dim]
    indices = _wrap(_wrap_negative(indices._data, size, ishape))
    return gather(input.expand(sshape), dim, indices)


@jax.jit
def _wrap_negative_jit(index, size):
    return jnp.where(index < 0, index + size, index)


def _wrap_negative(index, size, shape):
    return jnp.broadcast_to(_wrap_negative_jit(index, jnp.asarray(size, index.dtype)), shape)


# ----- scatter / scatter_add / index_add -------------------------------------------------------------------
def _add_at(ref, value):
    """``ref.add(value)`` of an ``x.at[...]`` reference; for bools a logical or, as torch adds them."""
    return ref.max(value) if value.dtype == bool else ref.add(value)


def _src_grad(name, src_shape, index):
    """The gradient of scatter's src: torch's ``grad.gather(dim, index)`` has index's shape, which its engine
    refuses unless it expands to src's (zeros where index is smaller)."""
    try:
        if np.broadcast_shapes(src_shape, index.shape) == index.shape:
            return
    except ValueError:
        pass
    raise RuntimeError(f"Function {name} returned an invalid gradient at index 1 - got {list(index.shape)} but "
                       f"expected shape compatible with {list(src_shape)}")


@op("ScatterAddBackward0", save={"index": ("src",)}, nondiff=("index",), attrs=("dim",), unsigned=("dim",))
def _scatter_add(self, index, src, *, dim):
    s, i, src = _nonempty(self, index, src)
    return _add_at(s.at[_grid(i, dim)], src[_crop(i.shape)]).reshape(self.shape)


@_scatter_add.derivative
def _(grad, index, src_shape, dim):
    if index is None:
        return grad, None
    _src_grad("ScatterAddBackward0", src_shape, index)
    g, i = _nonempty(grad, index)
    return grad, jnp.zeros(_ne(src_shape), grad.dtype).at[_crop(i.shape)].set(g[_grid(i, dim)]).reshape(src_shape)


@op("ScatterBackward0", save=("index",), nondiff=("index",), attrs=("dim",), unsigned=("dim",))
def _scatter_src(self, index, src, *, dim):
    s, i, src = _nonempty(self, index, src)
    return s.at[_grid(i, dim)].set(src[_crop(i.shape)]).reshape(self.shape)


@_scatter_src.derivative
def _(grad, index, src_shape, dim, grad_input_mask):
    g, i = _nonempty(grad, index)
    key = _grid(i, dim)
    if grad_input_mask[1]:
        _src_grad("ScatterBackward0", src_shape, index)
    src_grad = jnp.zeros(_ne(src_shape), grad.dtype).at[_crop(i.shape)].set(g[key]).reshape(src_shape)
    return g.at[key].set(0).reshape(grad.shape), src_grad


@op("ScatterBackward1", save=("index",), nondiff=("index", "value"), attrs=("dim",), unsigned=("dim",))
def _scatter_value(self, index, value, *, dim):
    s, i = _nonempty(self, index)
    return s.at[_grid(i, dim)].set(value.astype(self.dtype)).reshape(self.shape)


@_scatter_value.derivative
def _(grad, index, dim):
    g, i = _nonempty(grad, index)
    return g.at[_grid(i, dim)].set(0).reshape(grad.shape)


def _scatter_args(input, dim, index, src):
    """torch's checks of scatter / scatter_add; returns dim as given (torch saves it so)."""
    d = _wrap_dim(dim, input.ndim)
    if isinstance(src, Tensor):
        if src._data.dtype != input._data.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _check_scatter_gather("scatter", input, index, d, src, what="self")
    else:
        _check_scatter_gather("scatter", input, index, d, what="self")
    return dim


def _scatter_reduced_forward(self, index, src, *, dim, reduce):
    s, i = _nonempty(self, index)
    src = src.astype(self.dtype) if src.ndim == 0 else src.reshape(_ne(src.shape))[_crop(i.shape)]
    at = s.at[_grid(i, dim)]
    return (at.add(src) if reduce == "add" else at.multiply(src)).reshape(self.shape)


def _no_scatter_derivative(grad, dim, reduce):
    raise RuntimeError("derivative for aten::scatter is not implemented")


# scatter's reduce= ("add" / "multiply", repeated indices each applied): torch has no derivative (its NotImplemented
# node, with edges to the inputs that require grad); one entry per (self, src) requiring grad
_SCATTER_REDUCED = {}
for _diff in ((True, True), (True, False), (False, True)):
    _SCATTER_REDUCED[_diff] = OpDef("torch::autograd::NotImplemented", _scatter_reduced_forward, save=(),
                                    nondiff=("index",) + tuple(n for n, d in zip(("self", "src"), _diff) if not d),
                                    attrs=(), runs_first=True)
    _SCATTER_REDUCED[_diff].derivative(_no_scatter_derivative)


def _scatter_reduced(input, index, src, dim, reduce, inplace):
    if reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, Tensor):
        warn_once("scatter reduce", "The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                  "removed in a future PyTorch release. Use torch.scatter_reduce instead for more reduction options.",
                  stacklevel=4)
    else:
        src = _scalar(src)
    diff = (input._requires_grad, src._requires_grad)
    entry = _SCATTER_REDUCED.get(diff, _SCATTER_REDUCED[True, False])
    if inplace:
        return _apply_inplace(entry, input, (input, index, src), (dim, reduce))
    return _apply(entry, (input, index, src), (dim, reduce))


def _scatter_(self, dim, index, src=None, *, value=None, reduce=None):
    _check_autograd_inplace(self, (src, value))
    if src is None:
        src = value
    dim = _scatter_args(self, dim, index, src)
    _check_input_overlap(self, (index, src), strict=True)
    if reduce is not None:
        return _scatter_reduced(self, index, src, dim, reduce, True)
    if isinstance(src, Tensor):
        return _apply_inplace(_scatter_src, self, (self, index, src), (dim,))
    return _apply_inplace(_scatter_value, self, (self, index, _scalar(src)), (dim,))


@public(inplace=_scatter_)
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """A copy of input with ``src`` (a tensor, or a number ``value``) written at ``index`` along dim
    (ScatterBackward0 for a tensor, ScatterBackward1 for a number); ``reduce`` ("add" or "multiply"): combined
    into input's values instead (no derivative, as torch's)."""
    if src is None:
        src = value
    dim = _scatter_args(input, dim, index, src)
    if reduce is not None:
        return _scatter_reduced(input, index, src, dim, reduce, False)
    if isinstance(src, Tensor):
        return _apply(_scatter_src, (input, index, src), (dim,))
    return _apply(_scatter_value, (input, index, _scalar(src)), (dim,))


def _scatter_add_(self, dim, index, src):
    _check_autograd_inplace(self, (src,))
    dim = _scatter_args(self, dim, index, src)
    _check_input_overlap(self, (index, src), strict=True)
    return _apply_inplace(_scatter_add, self, (self, index, src), (dim,))


@public(inplace=_scatter_add_)
def scatter_add(input, dim, index, src):
    """A copy of input with src added at ``index`` along dim; repeated indices accumulate (ScatterAddBackward0)."""
    dim = _scatter_args(input, dim, index, src)
    return _apply(_scatter_add, (input, index, src), (dim,))


@op("IndexAddBackward0", save={"index": ("source",), "source": ("source",)}, nondiff=("index",),
    attrs=("alpha", "dim", "source_dim"), unsigned=("dim",))
def _index_add(self, index, source, *, dim, alpha, source_dim):
    if self.ndim == 0:  # then source is 0-d and the index one 0 (checked)
        return self + (source * alpha if alpha != 1 else source).astype(self.dtype)
    dim %= self.ndim
    src = source if source.ndim == self.ndim else source.reshape(source.shape[:dim] + (1,) + source.shape[dim:])
    if alpha != 1:
        src = src * alpha
    return _add_at(self.at[(slice(None),) * dim + (index.reshape(-1),)], src.astype(self.dtype))


@_index_add.derivative
def _(grad, index, source_shape, dim, alpha):
    if index is None:
        return grad, None
    if grad.ndim and not grad.shape[dim] and index.size:  # torch's grad.index_select(dim, index)
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    g = jnp.take(grad, index.reshape(-1), axis=dim) if grad.ndim else grad
    return grad, (g * alpha if alpha != 1 else g).reshape(source_shape)


def _check_index_func(name, self, index, source):
    """index_add's and index_reduce's checks of the index and the source's dtype."""
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {index.ndim} with type: "
                         f"{_type_word(index._data.dtype)} and size: {_shape_str(index.shape)}")
    if index._data.dtype not in (np.int32, np.int64):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: {_type_word(index._data.dtype)}")
    if source._data.dtype != self._data.dtype:
        raise RuntimeError(f"{name}(): self ({_type_word(self._data.dtype)}) and source "
                           f"({_type_word(source._data.dtype)}) must have the same scalar type")


def _index_add_args(self, dim, index, source, alpha=1, overlap=False):
    """torch's checks of index_add; returns dim as given (torch saves it so). ``overlap``: in place, the refusal of
    a source or index sharing self's memory comes before the bounds check."""
    raw, dim = dim, _wrap_dim(dim, self.ndim)
    _check_index_func("index_add_", self, index, source)
    if dim != 0 and dim >= source.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {dim} is out of bounds of the source tensor with dim "
                           f"{source.ndim}")
    n = index.numel()
    if n != (source.shape[dim] if source.ndim else 1):
        if not source.ndim:  # torch's message reads source.size(dim)
            raise _no_dims(dim)
        raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to source.size(dim): "
                           f"({source.shape[dim]}), for dim: {dim}")
    keep = source.ndim and self.ndim  # torch compares the sizes without dim only when neither is 0-d
    if [s for d, s in enumerate(self.shape) if d != dim or not keep] != \
            [s for d, s in enumerate(source.shape) if d != dim or not keep]:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_shape_str(self.shape)} source.shape = {_shape_str(source.shape)}")
    if overlap:
        _check_input_overlap(self, (index, source), strict=True)
    if self.ndim > 1 and not self.numel():
        pass  # torch's CPU kernel has nothing to do
    elif self.ndim > 1 and dim in (0, self.ndim - 1) and index._data.dtype == np.int64 and alpha == 1:
        _check_bounds(index, self.shape[dim], dim)  # torch's CPU kernel scatters (scatter's bounds message)
    else:
        _check_bounds(index, self.shape[dim] if self.ndim else 1, dim, IndexError, msg="index out of range in self")
    return raw


def _index_add_(self, dim, index, source, *, alpha=1):
    _check_autograd_inplace(self, (source,))
    dim = _index_add_args(self, dim, index, source, alpha, overlap=True)
    return _apply_inplace(_index_add, self, (self, index, source), (dim, alpha, source.ndim))


@public(inplace=_index_add_)
def index_add(input, dim, index, source, *, alpha=1):
    """A copy of input with ``alpha * source`` added at ``index`` along dim (IndexAddBackward0)."""
    dim = _index_add_args(input, dim, index, source, alpha)
    return _apply(_index_add, (input, index, source), (dim, alpha, source.ndim))


# ----- masked_fill / masked_select -------------------------------------------------------------------------
@op("MaskedFillBackward0", save=("mask",), nondiff=("mask", "value"), attrs=())
def _masked_fill(self, mask, value):
    return jnp.where(mask, value.astype(self.dtype), self)


@_masked_fill.derivative
def _(grad, mask):
    return jnp.where(mask, jnp.zeros((), grad.dtype), grad)


@op("MaskedFillBackward1", save=("mask",), nondiff=("mask",), attrs=(), real_grads=False)
def _masked_fill_t(self, mask, value):
    return jnp.where(mask, value.astype(self.dtype), self)


@_masked_fill_t.derivative
def _(grad, mask):
    zero = jnp.zeros((), grad.dtype)
    return jnp.where(mask, zero, grad), jnp.sum(jnp.where(mask, grad, zero))


def _masked_fill_args(input, mask, value):
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP_TYPE[mask._data.dtype.name]}")
    dt = input._data.dtype
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        if value._data.dtype != dt and dt.kind in "iuf":  # (a value read, only where it may not fit)
            _check_fits(value.item(), dt)
        return _masked_fill_t, value
    _check_fits(value, dt)
    return _masked_fill, _scalar(value)


def _masked_fill_(self, mask, value):
    _check_autograd_inplace(self, (value,))
    entry, value = _masked_fill_args(self, mask, value)
    _check_input_overlap(self, (mask,))  # (torch reads a tensor value with item()); then self's shape, mask's
    shape = _broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    if shape != tuple(self.shape):
        raise RuntimeError(f"output with shape {_shape_str(self.shape)} doesn't match the broadcast shape "
                           f"{_shape_str(shape)}")
    return _apply_inplace(entry, self, (self, mask, value), (), ("masked_fill_",))


_OWN_INPUT_CHECK.update((_scatter_src, _scatter_value, _scatter_add, _index_add, _masked_fill, _masked_fill_t))


@public(inplace=_masked_fill_)
def masked_fill(input, mask, value):
    """input with ``value`` (a number or 0-d tensor) where mask is True; mask broadcasts
    (MaskedFillBackward0 for a number, MaskedFillBackward1 for a tensor)."""
    entry, value = _masked_fill_args(input, mask, value)
    _broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    if entry is _masked_fill_t and value._requires_grad and _gm._state.grad_enabled and input._data.dtype.kind in "biu":
        raise RuntimeError(f"Autograd not support dtype: {_type_string(input._data.dtype)[6:-6]}")
    return _apply(entry, (input, mask, value), ())


@op("MaskedSelectBackward0", save=("mask", "self"), nondiff=("mask",), attrs=(),
    padded=lambda statics: ((_bucket(statics[0]),), 0, statics[0], _bucket(statics[0])))
def _masked_select(self, mask, *, count):
    shape = jnp.broadcast_shapes(self.shape, mask.shape)
    return jnp.broadcast_to(self, shape).reshape(-1)[jnp.nonzero(jnp.broadcast_to(mask, shape).reshape(-1),
                                                                 size=count)]


@_masked_select.derivative
def _(grad, mask, self_shape, count):
    shape = jnp.broadcast_shapes(self_shape, mask.shape)
    key = jnp.nonzero(jnp.broadcast_to(mask, shape).reshape(-1), size=count)
    out = jnp.zeros(math.prod(shape), grad.dtype).at[key].add(grad).reshape(shape)  # the table sums it to self's
    return out + grad.sum() if not count else out  # torch's masked_scatter uses grad even when it is empty


@public
def masked_select(input, mask):
    """The entries of input where mask is True, as a 1-D tensor (MaskedSelectBackward0). Reads the mask."""
    if mask._data.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    count = int(np.count_nonzero(np.broadcast_to(_host(mask), shape)))
    return _apply(_masked_select, (input, mask), (count,))


# ----- nonzero ---------------------------------------------------------------------------------------------
@public
def nonzero(input, *, as_tuple=False):
    """Indices of the non-zero entries: an (n, ndim) int64 tensor, or a tuple of ndim vectors.
    Not differentiable; reads the values (its shape depends on them)."""
    a = _host(input)
    if as_tuple:
        return tuple(_wrap(jnp.asarray(i, jnp.int64)) for i in np.nonzero(np.atleast_1d(a)))
    cols = np.argwhere(a).astype(np.int64)
    return _laid_out(_wrap(jnp.asarray(cols)), jnp.asarray(cols.T), (1, len(cols)))  # torch's column-major result


@public
def argwhere(input):
    """nonzero(input)."""
    return nonzero(input)


# ----- take / index_copy / index_fill / index_put / masked_scatter / scatter_reduce --------------------------
@op("TakeBackward0", save={"index": ("self",), "self": ()}, nondiff=("index",), attrs=())
def _take(self, index):
    flat = self.reshape(-1)
    return flat[jnp.where(index < 0, index + flat.size, index)]


@_take.derivative
def _(grad, index, self_shape):
    n = math.prod(self_shape)
    return jnp.zeros(n, grad.dtype).at[jnp.where(index < 0, index + n, index)].add(grad).reshape(self_shape)


@public
def take(input, index, *, out=None):
    """The entries of the flattened input at ``index`` (negative: from the end), in index's shape (TakeBackward0)."""
    if out is not None:
        return _write_out("take", lambda: take(input, index), out, (input, index), "take")
    if index._data.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {_type_word(index._data.dtype)}")
    _check_flat_index(index, input.numel())
    return _apply(_take, (input, index), ())


def _check_flat_index(index, n):
    """take's and put's bounds check of flat indices into n elements."""
    if _concrete(index) and index.numel():
        a = _host(index).reshape(-1)
        bad = (a < -n) | (a >= n)
        if bad.any():
            raise IndexError(f"out of range: tried to access index {int(a[np.argmax(bad)])} on a tensor of {n} "
                             f"elements.")


@op("PutBackward0", save={"index": (), "source": ()}, nondiff=("index",), attrs=("accumulate",))
def _put(self, index, source, *, accumulate):
    flat = self.reshape(-1)
    at = flat.at[jnp.where(index < 0, index + flat.size, index).reshape(-1)]
    src = source.reshape(-1).astype(self.dtype)
    return (at.add(src) if accumulate else at.set(src)).reshape(self.shape)


@_put.derivative
def _(grad, index, source, accumulate):
    flat = grad.reshape(-1)
    idx = jnp.where(index < 0, index + flat.size, index).reshape(-1)
    return grad if accumulate else flat.at[idx].set(0).reshape(grad.shape), flat[idx].reshape(source.shape)


def _check_put(self, index, source):
    """put_'s checks, in torch's order."""
    if index._data.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {_type_word(index._data.dtype)}")
    if self._data.dtype != source._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{_type_word(self._data.dtype)} and source.dtype = {_type_word(source._data.dtype)}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if index.numel() and not self.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    _check_flat_index(index, self.numel())


def _put_(self, index, source, accumulate=False):
    _check_autograd_inplace(self, (source,))
    _check_put(self, index, source)
    _check_input_overlap(self, (index, source), strict=True)
    return _apply_inplace(_put, self, (self, index, source), (bool(accumulate),))


@public(inplace=_put_)
def put(input, index, source, accumulate=False):
    """A copy of input with ``source``'s values written (``accumulate``: added) at the flat positions ``index``
    (negative: from the end); PutBackward0."""
    _check_put(input, index, source)
    return _apply(_put, (input, index, source), (bool(accumulate),))


def _dim_key(ndim, dim, index):
    return (slice(None),) * (dim % ndim) + (index.reshape(-1),) if ndim else ()


@op("IndexCopyBackward0", save={"index": ("self", "source"), "source": ()}, nondiff=("index",),
    attrs=("dim", "source_dim"), unsigned=("dim",))
def _index_copy(self, index, source, *, dim, source_dim):
    if not self.ndim:
        return source.reshape(())
    src = source.reshape(self.shape[:dim % self.ndim] + (index.size,) + self.shape[dim % self.ndim + 1:])
    return self.at[_dim_key(self.ndim, dim, index)].set(src)


@_index_copy.derivative
def _(grad, index, source_shape, dim):
    if not grad.ndim:
        return jnp.zeros_like(grad), grad.reshape(source_shape)
    key = _dim_key(grad.ndim, dim, index)
    return grad.at[key].set(0), grad[key].reshape(source_shape)


def _index_copy_args(self, dim, index, source):
    raw, dim = dim, _wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})")
    n = index.numel()
    if source.ndim and self.ndim and source.ndim != self.ndim:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({source.ndim}), destination dimensionality ({self.ndim})")
    if index._data.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_type_word(index._data.dtype)}")
    if self._data.dtype != source._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{_type_word(self._data.dtype)} and (source) {_type_word(source._data.dtype)}")
    if n != (source.shape[dim] if source.ndim else 1):
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to source.size(dim) "
                         f"({source.shape[dim] if source.ndim else 1})")
    dest, src = _drop_dim(self.shape, dim), _drop_dim(source.shape, dim)
    for d in range(len(src)):
        if src[d] != dest[d]:
            raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice shapes. Destination "
                               f"slice shape: {dest[d]} at dimension {d} and source slice shape: {src[d]} at "
                               f"dimension {d}.")
    _check_bounds(index, self.shape[dim] if self.ndim else 1, dim, IndexError,
                  msg="index_copy_(): index {v} is out of bounds for dimension {dim} with size {size}")
    return raw


def _drop_dim(shape, dim):
    return tuple(shape[:dim]) + tuple(shape[dim + 1:])


def _index_copy_(self, dim, index, source):
    dim = _index_copy_args(self, dim, index, source)
    _check_input_overlap(self, (index, source), strict=True)
    return _apply_inplace(_index_copy, self, (self, index, source), (dim, source.ndim))


@public(inplace=_index_copy_)
def index_copy(input, dim, index, source, *, out=None):
    """A copy of input with the slices of ``source`` written at ``index`` along dim (IndexCopyBackward0)."""
    if out is not None:
        return _write_out("index_copy", lambda: index_copy(input, dim, index, source), out, (input, index, source),
                          "sum")
    dim = _index_copy_args(input, dim, index, source)
    return _apply(_index_copy, (input, index, source), (dim, source.ndim))


# ----- index_reduce (torch's index_reduce_func_impl and index_reduce_backward) ---------------------------------
_REDUCE_INIT = {"prod": lambda dt: 1, "mean": lambda dt: 0,
                "amax": lambda dt: -jnp.inf if dt.kind in "fV" else jnp.iinfo(dt).min,  # ("V": bfloat16)
                "amin": lambda dt: jnp.inf if dt.kind in "fV" else jnp.iinfo(dt).max}


def _segment_prod(src, index, size):
    """The product of the rows of ``src`` sent to each of ``size`` rows (one where none is): a scan over the rows
    sorted by index, so JAX can differentiate it (its scatter_mul has no gradient for repeated indices)."""
    order = jnp.argsort(index, stable=True)
    at, rows = index[order], src[order]
    new = jnp.concatenate([jnp.ones(1, bool), at[1:] != at[:-1]])
    flags = new.reshape((-1,) + (1,) * (rows.ndim - 1))
    running, _ = jax.lax.associative_scan(lambda a, b: (jnp.where(b[1], b[0], a[0] * b[0]), a[1] | b[1]),
                                          (rows, jnp.broadcast_to(flags, rows.shape)))
    last = jnp.concatenate([at[1:] != at[:-1], jnp.ones(1, bool)])
    return jnp.ones((size,) + rows.shape[1:], src.dtype).at[jnp.where(last, at, size)].set(running, mode="drop")


def _index_reduce_raw(self, index, source, dim, reduce, include_self):
    shape = self.shape
    self, source = self.reshape(shape or (1,)), source.reshape(source.shape or (1,))
    key = _dim_key(self.ndim, dim, index)
    if not include_self:
        self = self.at[key].set(_REDUCE_INIT[reduce](self.dtype))
    moved = jnp.moveaxis(self, dim % self.ndim, 0)
    src, at = jnp.moveaxis(source, dim % self.ndim, 0), moved.at[index]
    out = (moved * _segment_prod(src, index, moved.shape[0]) if reduce == "prod" else
           at.add(src) if reduce == "mean" else at.max(src) if reduce == "amax" else at.min(src))
    if reduce == "mean":
        count = jnp.zeros(out.shape[0], out.dtype).at[index].add(1) + include_self
        count = jnp.maximum(count, 1).reshape((-1,) + (1,) * (out.ndim - 1))
        out = out // count if out.dtype.kind in "iu" else out / count
    return jnp.moveaxis(out, 0, dim % self.ndim).reshape(shape)


@op("IndexReduceBackward0", save=("self", "index", "source", "result"), nondiff=("index",),
    attrs=("dim", "reduce", "include_self"), unsigned=("dim",))
def _index_reduce(self, index, source, *, dim, reduce, include_self):
    return _index_reduce_raw(self, index, source, dim, reduce, include_self)


@_index_reduce.derivative
def _(grad, self, index, source, result, dim, reduce, include_self):
    d = dim % max(grad.ndim, 1)
    take = (lambda t: jnp.take(t.reshape(t.shape or (1,)), index, axis=d).reshape(source.shape))
    add = (lambda t, src: t.reshape(t.shape or (1,)).at[_dim_key(max(t.ndim, 1), d, index)].add(
        src.reshape(src.shape or (1,))).reshape(t.shape))
    if reduce == "prod":
        masked_self = jnp.where(self == 0, 1, self)
        grad_self = grad * _index_reduce_raw(masked_self, index, source, dim, reduce, include_self) / masked_self
        src_zero = source == 0
        single_zero = src_zero & (take(add(jnp.zeros_like(self), src_zero.astype(self.dtype))) == 1)
        masked = _index_reduce_raw(self, index, jnp.where(single_zero, 1, source), dim, reduce, include_self)
        grad_source = jnp.where(single_zero, take(grad * masked), take(grad * result) / jnp.where(src_zero, 1, source))
    elif reduce == "mean":
        n = add(jnp.full_like(grad, float(include_self)), jnp.ones_like(source))
        n = jnp.where(n == 0, 1, n)
        grad_self, grad_source = grad / n, take(grad) / take(n)
    else:
        self_is = (self == result).astype(grad.dtype)
        source_is = (source == take(result)).astype(grad.dtype)
        spread = grad / add(self_is, source_is)
        grad_self, grad_source = self_is * spread, source_is * take(spread)
    if not include_self:
        grad_self = grad_self.reshape(grad.shape or (1,)).at[_dim_key(max(grad.ndim, 1), d, index)].set(0).reshape(
            grad.shape)
    return grad_self, grad_source


def _index_reduce_args(self, dim, index, source, reduce):
    """index_reduce's checks, in torch's order; returns dim."""
    if reduce not in _REDUCE_INIT:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _wrap_dim(dim, self.ndim)
    _check_index_func("index_reduce_", self, index, source)
    along = source.shape[d] if source.ndim else 1
    if index.numel() != along:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal to source.size(dim):"
                           f" ({along}), for dim: {d}")
    if source.ndim and (source.ndim != self.ndim or _drop_dim(source.shape, d) != _drop_dim(self.shape, d)):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the specified dimension. Got "
                           f"self.shape = {list(self.shape)} source.shape = {list(source.shape)}")
    _check_bounds(index, self.shape[d] if self.ndim else 1, d, IndexError, msg="index out of range in self")
    if self._data.dtype.kind in "bc":
        raise NotImplementedError(f"\"index_func_\" not implemented for '{_type_word(self._data.dtype)}'")
    warnings.warn("index_reduce() is in beta and the API may change at any time.", UserWarning, stacklevel=3)
    return d


def _index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    _check_autograd_inplace(self, (source,))
    _index_reduce_args(self, dim, index, source, reduce)
    _check_input_overlap(self, (index, source), strict=True)
    return _apply_inplace(_index_reduce, self, (self, index, source), (int(dim), reduce, bool(include_self)))


@public(inplace=_index_reduce_)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with the slices of ``source`` along dim reduced (prod, mean, amax, amin) into the slices ``index``
    names, input's own values included unless ``include_self`` is False (IndexReduceBackward0)."""
    _index_reduce_args(input, dim, index, source, reduce)
    return _apply(_index_reduce, (input, index, source), (int(dim), reduce, bool(include_self)))


def _index_fill_fwd(self, index, value, *, dim):
    if not self.ndim:
        return value.astype(self.dtype).reshape(())
    n = self.shape[dim % self.ndim]
    return self.at[_dim_key(self.ndim, dim, jnp.where(index < 0, index + n, index))].set(value.astype(self.dtype))


def _index_fill_self(grad, index, dim):
    if not grad.ndim:
        return jnp.zeros_like(grad)
    n = grad.shape[dim % grad.ndim]
    return grad.at[_dim_key(grad.ndim, dim, jnp.where(index < 0, index + n, index))].set(0)


_index_fill = op("IndexFillBackward0", save=("index",), nondiff=("index", "value"), attrs=("dim",),
                 unsigned=("dim",))(_index_fill_fwd)
_index_fill.derivative(lambda grad, index, dim: _index_fill_self(grad, index, dim))
_index_fill_t = op("IndexFillBackward1", save=("index",), nondiff=("index",), attrs=("dim",), unsigned=("dim",),
                   real_grads=False)(_index_fill_fwd)


@_index_fill_t.derivative
def _(grad, index, dim):
    kept = _index_fill_self(grad, index, dim)
    return kept, jnp.sum(grad - kept)


def _index_fill_args(self, dim, index, value):
    raw, dim = dim, _wrap_dim(dim, self.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index._data.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.ndim} dimension(s).")
    if self._data.dtype.kind != "c" and (isinstance(value, complex) or (isinstance(value, Tensor) and
                                                                      value._data.dtype.kind == "c")):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    size = self.shape[dim] if self.ndim else 1
    _check_bounds(index, size, dim, IndexError, negative=True)
    if isinstance(value, Tensor):
        return raw, _index_fill_t, value
    _check_fits(value, self._data.dtype)
    return raw, _index_fill, _scalar(value)


def _index_fill_(self, dim, index, value):
    dim, entry, value = _index_fill_args(self, dim, index, value)
    _check_input_overlap(self, (index,), strict=True)
    return _apply_inplace(entry, self, (self, index, value), (dim,))


@public(inplace=_index_fill_)
def index_fill(input, dim, index, value):
    """A copy of input with ``value`` (a number or 0-d tensor) at ``index`` along dim (IndexFillBackward0 for a
    number, IndexFillBackward1 for a tensor)."""
    dim, entry, value = _index_fill_args(input, dim, index, value)
    return _apply(entry, (input, index, value), (dim,))


def _index_put_args(self, indices, values, accumulate, parts=None):
    if not isinstance(indices, (tuple, list)) or not all(isinstance(t, Tensor) for t in indices):
        raise TypeError("index_put(): indices must be a tuple of Tensors")  # (the guard words torch's error)
    slots = list(indices)
    for t in slots:
        if t._data.dtype.kind not in "biu":
            raise IndexError(_BAD_INDEX_DTYPE)
    if len(slots) > self.ndim:
        raise IndexError(f"too many indices for tensor of dimension {self.ndim} (got {len(slots)})")
    if not slots:
        return None
    return _put_args(self, tuple(self.shape), slots, values, bool(accumulate), parts)


def _index_put_(self, indices, values, accumulate=False):
    args = _index_put_args(self, indices, values, accumulate, ())
    if args is None:
        return self.copy_(values) if not accumulate else self.add_(values)
    spec, tensors, values, overlap = args
    return _apply_inplace(_setitem_op("IndexPutBackward0", len(tensors)), self, (self, values, *tensors),
                          ((), spec, bool(accumulate), ()), overlap)


public(_index_put_, name="index_put_", method=False)


@public(inplace=_index_put_)
def index_put(input, indices, values, accumulate=False):
    """A copy of input with ``values`` written (``accumulate``: added) at ``input[indices]`` (IndexPutBackward0)."""
    args = _index_put_args(input, indices, values, accumulate)
    if args is None:
        return input.clone().index_put_(indices, values, accumulate)
    spec, tensors, values, _ = args
    return _apply(_setitem_op("IndexPutBackward0", len(tensors)), (input, values, *tensors),
                  ((), spec, bool(accumulate), ()))


@op("MaskedScatterBackward0", save=("mask",), nondiff=("mask",), attrs=("source_sym_sizes",))
def _masked_scatter(self, mask, source):
    shape = jnp.broadcast_shapes(self.shape, mask.shape)
    m = jnp.broadcast_to(mask, shape).reshape(-1)
    pos = jnp.clip(jnp.cumsum(m) - 1, 0, max(source.size - 1, 0))
    picked = source.reshape(-1)[pos] if source.size else jnp.zeros(pos.shape, source.dtype)
    return jnp.where(m, picked, jnp.broadcast_to(self, shape).reshape(-1)).reshape(shape)


@_masked_scatter.derivative
def _(grad, mask, source_shape):
    m = jnp.broadcast_to(mask, grad.shape).reshape(-1)
    n = math.prod(source_shape)
    pos = jnp.where(m, jnp.cumsum(m) - 1, n)
    flat = grad.reshape(-1)
    source = jnp.zeros(n, grad.dtype).at[pos].add(flat, mode="drop").reshape(source_shape)
    return jnp.where(m, jnp.zeros((), grad.dtype), flat).reshape(grad.shape), source


def _masked_scatter_args(input, mask, source, shape, name):
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype "
                           f"{_type_word(mask._data.dtype)}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_word(input._data.dtype)} and {_type_word(source._data.dtype)}")
    if _concrete(mask) and int(np.count_nonzero(np.broadcast_to(_host(mask), shape))) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")


def _masked_scatter_(self, mask, source):
    shape = tuple(self.shape)
    if mask.ndim > self.ndim:
        raise RuntimeError(f"expand(CPU{_type_word(mask._data.dtype)}Type{{{_shape_str(mask.shape)}}}, size="
                           f"{_shape_str(shape)}): the number of sizes provided ({self.ndim}) must be greater or "
                           f"equal to the number of dimensions in the tensor ({mask.ndim})")
    if _broadcast_shapes(tuple(mask.shape), shape) != shape:
        raise RuntimeError(f"The expanded size of the tensor must match the existing size at non-singleton "
                           f"dimension. Target sizes: {_shape_str(shape)}.  Tensor sizes: {_shape_str(mask.shape)}")
    _masked_scatter_args(self, mask, source, shape, "masked_scatter_")
    _check_input_overlap(self, (mask, source), strict=True)
    return _apply_inplace(_masked_scatter, self, (self, mask, source), ())


@public(inplace=_masked_scatter_)
def masked_scatter(input, mask, source):
    """input with the leading entries of ``source`` written, in order, where mask is True (MaskedScatterBackward0).
    Reads the mask (to check that source is long enough)."""
    shape = _broadcast_shapes(tuple(mask.shape), tuple(input.shape))
    _masked_scatter_args(input, mask, source, shape, "masked_scatter_")
    return _apply(_masked_scatter, (input, mask, source), ())


_REDUCE_AT = {"sum": "add", "prod": "multiply", "mean": "add", "amax": "max", "amin": "min", "max": "max",
              "min": "min"}  # (torch takes max and min too)


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return jnp.zeros((), dtype)
    if reduce == "prod":
        return jnp.ones((), dtype)
    if dtype == jnp.bool_:
        return jnp.asarray(reduce in ("amin", "min"))
    info = jnp.finfo(dtype) if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype)
    big = jnp.inf if jnp.issubdtype(dtype, jnp.floating) else info.max
    return jnp.asarray(-big if reduce in ("amax", "max") else big, dtype)


def _scatter_counts(shape, key, include_self, dtype):
    count = jnp.full(shape, 1 if include_self else 0, dtype).at[key].add(jnp.ones((), dtype))
    return jnp.where(count == 0, jnp.ones((), dtype), count)


def _scatter_reduce_raw(self, index, src, dim, reduce, include_self):
    s, i, src = _nonempty(self, index, src)
    key, v = _grid(i, dim), src[_crop(i.shape)]
    base = s if include_self else s.at[key].set(_identity(reduce, s.dtype))
    if s.dtype == jnp.bool_ and reduce in ("sum", "mean"):
        out = base.at[key].max(v)
    elif s.dtype == jnp.bool_ and reduce == "prod":
        out = base.at[key].min(v)
    elif reduce == "prod":  # (JAX cannot differentiate a multiplying scatter with repeated indices)
        out = base * _scatter_prod(i, v, dim, s.shape)
    else:
        out = getattr(base.at[key], _REDUCE_AT[reduce])(v)
    if reduce == "mean" and s.dtype != jnp.bool_:
        count = _scatter_counts(s.shape, key, include_self, s.dtype)
        out = out // count if jnp.issubdtype(s.dtype, jnp.integer) else out / count
    return out.reshape(self.shape)


def _scatter_prod(index, v, dim, shape):
    """The product of the values ``v`` scattered to each place of ``shape`` at ``index`` along dim (1 elsewhere)."""
    d = dim % len(shape)
    hit = jnp.moveaxis(index, d, -1)[..., None] == jnp.arange(shape[d])
    prod = jnp.prod(jnp.where(hit, jnp.moveaxis(v, d, -1)[..., None], jnp.ones((), v.dtype)), axis=-2)
    prod = jnp.moveaxis(prod, -1, d)
    return jnp.ones(shape, v.dtype).at[_crop(prod.shape)].set(prod)


@op("ScatterReduceBackward0", save=("index", "self", "src", "result"), nondiff=("index",),
    attrs=("dim", "include_self", "reduce"), unsigned=("dim",))
def _scatter_reduce(self, index, src, *, dim, reduce, include_self):
    return _scatter_reduce_raw(self, index, src, dim, reduce, include_self)


@_scatter_reduce.derivative
def _(grad, index, self, src, result, dim, reduce, include_self, grad_input_mask):
    """torch's scatter_reduce_backward."""
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got {reduce}.")
    if reduce in ("sum", "mean"):
        if grad_input_mask[1]:
            _src_grad("ScatterReduceBackward0", src.shape, index)
    else:  # torch's formula compares src with values gathered at index
        _broadcast_shapes(tuple(src.shape), tuple(index.shape))
    g, i, s, sr, res = _nonempty(grad, index, self, src, result)
    key = _grid(i, dim)
    sr = sr[_crop(i.shape)]

    def gather(t):
        return t[key]
    if reduce == "sum":
        gs, gsrc = g, gather(g)
    elif reduce == "prod":
        masked_self = jnp.where(s == 0, jnp.ones((), s.dtype), s)
        gs = g * _scatter_reduce_raw(masked_self, i, sr, dim, "prod", include_self) / masked_self
        src_zero = sr == 0
        zeros = jnp.zeros_like(s).at[key].add(src_zero.astype(s.dtype))
        single = src_zero & (gather(zeros) == 1)
        masked_src = jnp.where(single, jnp.ones((), sr.dtype), sr)
        masked_result = _scatter_reduce_raw(s, i, masked_src, dim, "prod", include_self)
        gsrc = jnp.where(single, gather(g * masked_result),
                         gather(g * res) / jnp.where(src_zero, jnp.ones((), sr.dtype), sr))
    elif reduce == "mean":
        n = _scatter_counts(s.shape, key, include_self, g.dtype)
        gs, gsrc = g / n, gather(g) / gather(n)
    else:
        value = gather(res)
        self_is = (s == res).astype(g.dtype)
        src_is = (sr == value).astype(g.dtype)
        dist = g / self_is.at[key].add(src_is)
        gs, gsrc = self_is * dist, src_is * gather(dist)
    if not include_self:
        gs = gs.at[key].set(0)
    src_shape = src.shape
    full = jnp.zeros(_ne(src_shape), g.dtype).at[_crop(i.shape)].set(gsrc).reshape(src_shape)
    return gs.reshape(grad.shape), full


def _scatter_reduce_args(input, dim, index, src, reduce):
    if reduce not in _REDUCE_AT:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    return _scatter_args(input, dim, index, src)


def _scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    dim = _scatter_reduce_args(self, dim, index, src, reduce)
    _check_input_overlap(self, (index, src), strict=True)
    return _apply_inplace(_scatter_reduce, self, (self, index, src), (dim, reduce, bool(include_self)))


@public(inplace=_scatter_reduce_)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    """A copy of input with src reduced (sum, prod, mean, amax, amin) into it at ``index`` along dim; without
    ``include_self`` input's own values at the written places do not take part (ScatterReduceBackward0)."""
    if out is not None:
        return _write_out("scatter_reduce", lambda: scatter_reduce(input, dim, index, src, reduce,
                                                                   include_self=include_self),
                          out, (input, index, src), "sum")
    dim = _scatter_reduce_args(input, dim, index, src, reduce)
    return _apply(_scatter_reduce, (input, index, src), (dim, reduce, bool(include_self)))


_OWN_INPUT_CHECK.update((_index_copy, _index_fill, _index_fill_t, _masked_scatter, _scatter_reduce, _put,
                         _index_reduce))
