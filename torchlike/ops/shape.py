"""Shape ops: view/reshape, select/narrow, transposes and permutations, squeeze/expand/repeat, cat/stack,
split/chunk/unbind. The view-like nodes (SelectBackward0, SliceBackward0, UnsqueezeBackward0, AliasBackward0)
are declared here once; indexing.py's ``x[...]`` and pointwise.py's ``real``/``imag`` record them too.

Each torch node kind is one table entry. Dims are passed to the table as the caller wrote them (negative
ones too), because torch saves them that way: ``_saved_dim`` of ``cat(..., dim=-1)`` is -1 read as an
unsigned 64-bit number. Forwards and formulas therefore accept negative dims (JAX does too).

Ops with a variable number of inputs (cat, stack) or outputs (split, chunk, unbind) get one table entry
per count, made on first use by ``_variadic``; all share one node name and formula. A multi-output op
makes ONE node whose outputs have output_nr 0..k-1.

Views: the ops that are views in torch run through ``_views._view_apply``: their outputs share storage
(functionalized, see _views.py), version counter and ``_base`` with the input, and get torch's strides
from the stride rules registered here with ``_rule``.
"""
import itertools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor, _contiguous_strides, _wrap, _wrap_dim, _message_type, _type_string
from .. import _dtype, _grad_mode as _gm
from ._registry import op, _apply, OpDef, _OpNode
from ._views import _view_apply, _view_geometry, _rule, _rules, _compute_stride, _detach_alias, _restride, \
    _flat_index, _aliased, _geom_of, _read, _in_base, _view_dtype
from . import _layout, _views
from ._bind import public
from ._out import _write_out
from ._util import _check_unique, _shape_arg, ignoring


# ----- helpers -----------------------------------------------------------------------------------------
_view_op = _view_apply


def _variadic(cache, count, make):
    """The table entry for ``count`` inputs/outputs, made once by ``make(count)``."""
    entry = cache.get(count)
    if entry is None:
        entry = cache[count] = make(count)
    return entry


def _norm(dim, ndim):
    return dim % ndim if ndim else 0


def _dims_arg(dims):
    """Accept f(0, 1), f((0, 1)) and f([0, 1]) for dim lists."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = dims[0]
    return tuple(int(d) for d in dims)


def _promote(tensors):
    dt = tensors[0]._data.dtype
    for t in tensors[1:]:
        if t._data.dtype != dt:
            dt = jnp.promote_types(dt, t._data.dtype)
    return np.dtype(dt)


def _tensor_list(tensors, fname):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{fname}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
    tensors = tuple(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return tensors


# ----- view / reshape / flatten ---------------------------------------------------------------------------
@op("ViewBackward0", save=(), attrs=("self_sym_sizes",))
def _view(self, *, shape):
    return jnp.reshape(self, shape)


@_view.derivative
def _(grad, self_shape):
    return jnp.reshape(grad, self_shape)



def _infer_shape(shape, numel):
    """Resolve one -1 in a target shape, with torch's errors."""
    infer, known = None, 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if infer is None:
        if known == numel:
            return shape
    elif known == 0 and numel == 0:
        raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the unspecified "
                           f"dimension size -1 can be any value and is ambiguous")
    elif known and numel % known == 0:
        return shape[:infer] + (numel // known,) + shape[infer + 1:]
    raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")


@op("UnsafeViewBackward0", save=(), attrs=("self_sym_sizes",))
def _unsafe_view(self, *, shape):
    return jnp.reshape(self, shape)


_unsafe_view.derivative(_view.backward)


@op("ReshapeAliasBackward0", save=(), attrs=("self_sym_sizes",))
def _reshape_alias(self, *, shape):  # torch's reshape of a non-contiguous tensor that strides let it view
    return jnp.reshape(self, shape)


_reshape_alias.derivative(_view.backward)


@_rule(_view, _reshape_alias)
def _(sizes, strides, offset, shape):
    new = _compute_stride(sizes, strides, shape)
    return None if new is None else (shape, new, offset)


@public
def reshape(input, *args, shape=None):
    """Same data in a new shape (one -1 is inferred): a view when the strides allow (ViewBackward0 of a
    contiguous tensor, else ReshapeAliasBackward0), else a copy (UnsafeViewBackward0 of CloneBackward0), as torch."""
    shape = _infer_shape(_shape_arg(args) if shape is None else tuple(shape), input.numel())
    geom = _view_geometry(_view, input, (shape,))
    if geom is None:
        return _apply(_unsafe_view, (input.contiguous(),), (shape,))
    return _view_apply(_view if input.is_contiguous() else _reshape_alias, input, (shape,), geom)


@public(function=False)
def view(self, *args, size=None, dtype=None):
    """The same storage in a new shape (one -1 is inferred); ViewBackward0. Errors when strides forbid it.
    ``view(dtype)``: the same bytes read as another dtype (no history, not an autograd view: torch's)."""
    if dtype is not None or len(args) == 1 and isinstance(args[0], _dtype.dtype):
        return _view_dtype(self, np.dtype((args[0] if dtype is None else dtype)._np))
    shape = _infer_shape(_shape_arg(args) if size is None else tuple(size), self.numel())
    geom = _view_geometry(_view, self, (shape,))
    if geom is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _view_apply(_view, self, (shape,), geom)


@public(function=False)
def view_as(self, other):
    """view(other.shape)."""
    return view(self, other.shape)


@public(function=False)
def reshape_as(self, other):
    """reshape(other.shape)."""
    return reshape(self, other.shape)


@public
def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims start_dim..end_dim into one; returns input itself when there is nothing to merge."""
    shape = input.shape
    if not shape:
        return reshape(input, (1,))
    start, end = _wrap_dim(start_dim, len(shape)), _wrap_dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return input
    return reshape(input, shape[:start] + (math.prod(shape[start:end + 1]),) + shape[end + 1:])


@public
def ravel(input):
    """Flatten to 1-D: a view of ``contiguous()`` (ViewBackward0, over CloneBackward0 when it copies), as torch."""
    return view(input.contiguous(), -1)


@public
def unflatten(input, dim, sizes):
    """Split dim into sizes (one -1 is inferred); ViewBackward0."""
    shape = input.shape
    d = _wrap_dim(dim, len(shape))
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:  # torch's infer_size of the dim's size; its errors but the size mismatch are "unexpected"
        if not shape:
            raise RuntimeError(f"Dimension specified as {d} but tensor has no dimensions")
        inferred = _infer_shape(sizes, shape[d])
    except RuntimeError as e:
        if "is invalid for input of size" not in str(e):
            raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({shape[d]}) in the input tensor") from None
    return view(input, shape[:d] + inferred + shape[d + 1:])  # (splitting a dim is always a view: torch views)


# ----- select / slice / unsqueeze / alias (also the basic steps of indexing.py's x[...]) ----------------------
# dim, index, start and end are kept as the caller wrote them (torch saves them so); the forwards clip them.
# index, start and end are traced (``dynamic``): one compile serves every value, as x[i] in a loop needs.
def _select_raw(a, dim, index):
    dim = _norm(dim, a.ndim)
    return jax.lax.dynamic_index_in_dim(a, index % a.shape[dim], dim, keepdims=False)


@op("SelectBackward0", save=(), attrs=("dim", "index", "self_sym_sizes"), unsigned=("dim", "index"),
    dynamic=("index",))
def _select(self, *, dim, index):
    return _select_raw(self, dim, index)


@_select.derivative
def _(grad, self_shape, dim, index):
    dim = _norm(dim, len(self_shape))
    return jnp.zeros(self_shape, grad.dtype).at[(slice(None),) * dim + (index % self_shape[dim],)].set(grad)


def _slice_bounds(size, start, end, step):
    """Python's clipping of start:end (any ints, end may be INT64_MAX) to [0, size]."""
    s, e, _ = slice(start, end, step).indices(size)
    return s, max(e, s)


def _traced_start(start, size):
    """Python's clipping of a slice start (step > 0) to [0, size], on a traced start."""
    return jnp.clip(jnp.where(start < 0, start + size, start), 0, size)


def _slice_raw(a, dim, start, end, step, length):
    """a[start:end:step] along dim; ``length`` (static) is the result's size there."""
    dim = _norm(dim, a.ndim)
    span = (length - 1) * step + 1 if length else 0
    out = jax.lax.dynamic_slice_in_dim(a, _traced_start(start, a.shape[dim]), span, axis=dim)
    return jax.lax.slice_in_dim(out, 0, span, step, axis=dim) if step > 1 else out


# statics: torch's (dim, start, end, step), and the result's length along dim (not a saved attribute)
@op("SliceBackward0", save=(), attrs=("dim", "start", "end", "step", "self_sym_sizes"),
    unsigned=("dim", "start", "end"), dynamic=("start", "end"))
def _slice(self, *, dim, start, end, step, length):
    return _slice_raw(self, dim, start, end, step, length)


@_slice.derivative
def _(grad, dim, start, step, self_shape):
    axis = _norm(dim, grad.ndim)
    if step > 1 and grad.shape[axis]:
        cfg = [(0, 0, 0)] * grad.ndim
        cfg[axis] = (0, 0, step - 1)
        grad = jax.lax.pad(grad, jnp.zeros((), grad.dtype), cfg)
    zeros = jnp.zeros(self_shape, grad.dtype)
    return jax.lax.dynamic_update_slice_in_dim(zeros, grad, _traced_start(start, self_shape[axis]), axis)


def _slice_length(size, start, end, step):
    return len(range(*slice(start, end, step).indices(size)))


def _aten_slice(input, dim, start=0, end=None, step=1):
    """ATen's ``at::slice(input, dim, start, end)`` as torch's C++ composites call it (SliceBackward0 saving its
    arguments as given: a negative one as torch shows it, no end as None)."""
    size = input.shape[_norm(dim, input.ndim)]
    return _view_op(_slice, input, (dim, start, end, step, _slice_length(size, start, end, step)))


@op("UnsqueezeBackward0", save=(), attrs=("dim",), unsigned=("dim",))
def _unsqueeze(self, *, dim):
    return jnp.expand_dims(self, dim)


@_unsqueeze.derivative
def _(grad, dim):
    return jnp.squeeze(grad, dim)


@op("AliasBackward0", save=(), attrs=())
def _alias(self):
    return self


@_alias.derivative
def _(grad):
    return grad


@public
def select(input, dim, index):
    """The slice at ``index`` along dim, with dim removed; SelectBackward0."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    size = input.shape[_wrap_dim(dim, input.ndim)]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {_wrap_dim(dim, input.ndim)}")
    return _view_op(_select, input, (int(dim), int(index)))


# ----- transpose / t / permute / movedim -------------------------------------------------------------------
@op("TransposeBackward0", save=(), attrs=("dim0", "dim1"), unsigned=("dim0", "dim1"))
def _transpose(self, *, dim0, dim1):
    return jnp.swapaxes(self, dim0, dim1) if self.ndim else self


@_transpose.derivative
def _(grad, dim0, dim1):
    return jnp.swapaxes(grad, dim0, dim1) if grad.ndim else grad



def _transpose_(self, dim0, dim1):
    _wrap_dim(dim0, self.ndim)
    _wrap_dim(dim1, self.ndim)
    return _restride(self, _INPLACE[_transpose], (int(dim0), int(dim1)))


@public(inplace=_transpose_)
def transpose(input, dim0, dim1):
    """Swap two dims; TransposeBackward0 (transpose_: TransposeBackward1)."""
    _wrap_dim(dim0, input.ndim)
    _wrap_dim(dim1, input.ndim)
    return _view_op(_transpose, input, (int(dim0), int(dim1)))


@public(inplace=_transpose_)
def swapaxes(input, axis0, axis1):
    """Alias of transpose."""
    return transpose(input, axis0, axis1)


@public(inplace=_transpose_)
def swapdims(input, dim0, dim1):
    """Alias of transpose."""
    return transpose(input, dim0, dim1)


@public
def detach(input):
    """A tensor sharing storage and version counter with input, with no history (not a view)."""
    out = _detach_alias(input, _wrap(input._data))
    if input._dist_place is not None:  # a DTensor's detach() is a DTensor
        input._dist_place(out)
    return out




class _TransposedGrad(Tensor):
    """A gradient held as the transpose of the array it stands for; the transpose is made only when read.

    nn.functional.linear's fused backward hands its TBackward0 node the weight gradient this way, already
    in the weight's layout: TBackward0 then unwraps it for free, so the copy an XLA transpose costs is made
    only if something (a hook) reads the gradient in between.
    """

    @property
    def _data(self):
        d = self.__dict__.get("_made")
        if d is None:
            d = self.__dict__["_made"] = _transpose_2d(self._of)
        return d

    @_data.setter
    def _data(self, value):
        self.__dict__["_made"] = value


_transpose_2d = jax.jit(jnp.transpose)


def _transposed_grad(array):
    g = object.__new__(_TransposedGrad)
    g._of = array
    return g


def _t_apply(node, grads, mask=None):
    g = grads[0]
    if type(g) is _TransposedGrad and not _gm._state.grad_enabled:
        return [_wrap(g._of) if mask is None or mask[0] else None]
    return _OpNode._apply(node, grads, mask)


@op("TBackward0", save=(), attrs=(), node_apply=_t_apply)
def _t(self):
    return self.T


@_t.derivative
def _(grad):
    return grad.T



def _t_(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return _restride(self, _INPLACE[_t], ())


@public(inplace=_t_)
def t(input):
    """Transpose a tensor of at most 2 dims; TBackward0 (t_: TBackward1)."""
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return _view_op(_t, input, ())


@op("PermuteBackward0", save=(), attrs=("dims",), unsigned=("dims",))
def _permute(self, *, dims):
    return jnp.transpose(self, [_norm(d, self.ndim) for d in dims])


@_permute.derivative
def _(grad, dims):
    return jnp.transpose(grad, np.argsort([_norm(d, grad.ndim) for d in dims]))



@public
def permute(input, *args, dims=None):
    """Reorder the dims; PermuteBackward0."""
    dims = _dims_arg(args) if dims is None else tuple(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the length "
                           f"of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not equal to "
                           f"len(dims) = {len(dims)}")
    if len({_wrap_dim(d, input.ndim) for d in dims}) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view_op(_permute, input, (dims,))


_T_WARNING = ("The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it will "
              "throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
              "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.")


@public(name="T", function=False, method=property)
def _T(self):
    if self.ndim != 2:
        warnings.warn(_T_WARNING, UserWarning, stacklevel=2)
    return _view_op(_permute, self, (tuple(range(self.ndim))[::-1],))


@public(aliases=("moveaxis",))
def movedim(input, source, destination):
    """Move dims source to positions destination; PermuteBackward0 (AliasBackward0 for 0-d)."""
    n = input.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain the "
                           f"same number of dims as destination ({list(dst)} dims)")
    nsrc = [_wrap_dim(d, n) for d in src]
    ndst = [_wrap_dim(d, n) for d in dst]
    for name, raw, wrapped in (("source", src, nsrc), ("destination", dst, ndst)):
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(raw)})")
    if n == 0:
        return _view_op(_alias, input, ())
    order = [-1] * n
    for s, d in zip(nsrc, ndst):
        order[d] = s
    rest = iter(d for d in range(n) if d not in nsrc)
    return _view_op(_permute, input, (tuple(o if o >= 0 else next(rest) for o in order),))




# ----- squeeze / unsqueeze ------------------------------------------------------------------------------
def _squeezed(x, dims):
    return jnp.squeeze(x, tuple(d for d in dims if x.shape[d] == 1)) if x.ndim else x


@op("SqueezeBackward0", save=(), attrs=("self_sym_sizes",))
def _squeeze_all(self):
    return jnp.squeeze(self)


@op("SqueezeBackward1", save=(), attrs=("dim", "self_sym_sizes"), unsigned=("dim",))
def _squeeze_dim(self, *, dim):
    return _squeezed(self, (_norm(dim, self.ndim),))


@op("SqueezeBackward2", save=(), attrs=("dim", "self_sym_sizes"), unsigned=("dim",))
def _squeeze_dims(self, *, dim):
    return _squeezed(self, tuple(_norm(d, self.ndim) for d in dim))


def _reshape_back(grad, self_shape):
    return jnp.reshape(grad, self_shape)


for _e in (_squeeze_all, _squeeze_dim, _squeeze_dims):
    _e.derivative(_reshape_back)


def _inplace_entry(name, entry, attrs=(), unsigned=None):
    """The node torch's in-place variant of view op ``entry`` records (``XBackward1``...): entry's forward, formula
    and stride rule; ``attrs``: its ``_saved_*`` (``unsigned``: those shown unsigned, default all but sizes)."""
    e = OpDef(name, entry.forward, save=(), statics=entry.statics, attrs=attrs,
              unsigned=tuple(a for a in attrs if a != "self_sym_sizes") if unsigned is None else unsigned)
    e.derivative(entry.backward)
    _rule(e)(_rules[entry])
    return e


_ALL = object()


def _squeeze_args(input, dim):
    """squeeze's entry and statics for dim (None, an int or a sequence of ints)."""
    if dim is None:
        return _squeeze_all, ()
    if isinstance(dim, int):
        _wrap_dim(dim, input.ndim)
        return _squeeze_dim, (dim,)
    dim = tuple(int(d) for d in dim)
    _check_unique(dim, input.ndim)
    return _squeeze_dims, (dim,)


def _squeeze_(self, dim=_ALL):
    if dim is None:  # (torch's squeeze_ has no dim=None form)
        raise TypeError("squeeze_() received an invalid combination of arguments - got (NoneType), but expected one "
                        "of:\n * ()\n * (int dim)\n * (tuple of ints dim)\n * (name dim)\n")
    entry, statics = _squeeze_args(self, None if dim is _ALL else dim)
    return _restride(self, _INPLACE[entry], statics)


@public(inplace=_squeeze_)
def squeeze(input, dim=None):
    """Drop size-1 dims (all, one dim, or a tuple of dims); SqueezeBackward0/1/2 (squeeze_: 3/4/5)."""
    entry, statics = _squeeze_args(input, dim)
    return _view_op(entry, input, statics)


def _unsqueeze_(self, dim):
    _wrap_dim(dim, self.ndim + 1)
    return _restride(self, _INPLACE[_unsqueeze], (int(dim),))


@public(inplace=_unsqueeze_)
def unsqueeze(input, dim):
    """Insert a size-1 dim at dim; UnsqueezeBackward0 (unsqueeze_: UnsqueezeBackward1)."""
    _wrap_dim(dim, input.ndim + 1)
    return _view_op(_unsqueeze, input, (int(dim),))


# ----- as_strided -----------------------------------------------------------------------------------------
# statics: torch's (size, stride, storage_offset as given), then the input's geometry in its storage (``source``),
# the result's storage offset and the storage's size. The forward sees only the input's elements; the result reads
# its storage (as_strided may reach elements outside the input).
@op("AsStridedBackward0", save=(), attrs=("size", "stride", "storage_offset"))
def _as_strided(self, *, size, stride, storage_offset, source, offset, numel):
    flat = jnp.zeros(numel, self.dtype).at[_flat_index(*source).reshape(-1)].set(self.reshape(-1))
    return jnp.take(flat, _flat_index(size, stride, offset))


@_as_strided.derivative
def _(grad, size, stride, source, offset, numel):
    """torch's as_strided_backward: the gradient scattered into the storage, read at the input's geometry (divided
    among the input's elements that share a storage element)."""
    if not grad.size:  # (torch's zeros for an empty result)
        return ignoring(grad, jnp.zeros(math.prod(source[0]), grad.dtype).reshape(source[0]))
    flat = jnp.zeros(numel, grad.dtype).at[_flat_index(size, stride, offset).reshape(-1)].add(grad.reshape(-1))
    idx = _flat_index(*source)
    if _aliased(source):
        flat = flat / jnp.maximum(jnp.zeros(numel, grad.real.dtype).at[idx.reshape(-1)].add(1), 1)
    return jnp.take(flat, idx)


_rule(_as_strided)(lambda sizes, strides, offset, *statics: None)  # (its callers set the geometry)


def _strided_args(input, size, stride, storage_offset):
    """as_strided's geometry in input's storage and statics, with torch's errors."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    source = _geom_of(input)
    offset = source[2] if storage_offset is None else int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    numel = input._data.size if input._storage is None else input._storage.data.size
    need = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if need > numel:
        item = input._data.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {item} requiring a storage size of {need * item} are out of bounds for storage "
                           f"of size {numel * item}")
    return (size, stride, offset), (size, stride, None if storage_offset is None else offset, source, offset, numel)


@public
def as_strided(input, size, stride, storage_offset=None):
    """A view of input's storage at sizes, strides and storage offset (default input's); AsStridedBackward0."""
    geom, statics = _strided_args(input, size, stride, storage_offset)
    out = _view_apply(_as_strided, input, statics, geom)
    out._data = _read(out, input._storage.data)
    if out._base is not None:  # its geometry in its base's elements (none through a conj or retyping chain)
        out._vfn, out._ageom = None, _in_base(out._base, geom) if input._vfn is None and (
            input._base is None or input._ageom is not None) else None
    return out


@public
def as_strided_(input, size, stride, storage_offset=None):
    """as_strided in place: input itself takes the geometry; AsStridedBackward1."""
    geom, statics = _strided_args(input, size, stride, storage_offset)
    return _restride(input, _INPLACE[_as_strided], statics, geom)


@public(function=False)
def fill_diagonal_(self, fill_value, wrap=False):
    """Fill the main diagonal (of a 2-D tensor, or of one whose dims are all equal) through as_strided views, as
    torch does: CopySlices on self; ``wrap``: a tall matrix's diagonal restarts every ncols + 1 rows."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.shape[:2]
    if self.ndim > 2 and any(n != height for n in self.shape[1:]):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride, offset = (sum(self.stride()),), self.storage_offset()
    as_strided(self, (min(height, width),), stride, offset).fill_(fill_value)
    if wrap and self.ndim == 2 and height > width + 1:
        step = width + 1
        size = (self.numel() + step - 1) // step - min(height, width)
        as_strided(self, (size,), stride, offset + self.stride(0) * step).fill_(fill_value)
    return self


# ----- expand / repeat ------------------------------------------------------------------------------------
@op("ExpandBackward0", save=(), attrs=("self_sym_sizes",))
def _expand(self, *, size):
    return jnp.broadcast_to(self, size)


@_expand.derivative
def _(grad):
    return grad  # the table sums it back to self's shape



def _expand_shape(input, sizes):
    """torch's expand geometry: resolve -1, check singleton dims, with torch's messages."""
    shape, n = input.shape, len(sizes)
    if n < len(shape):
        raise RuntimeError(f"expand({_message_type(input._data.dtype)}{{{list(shape)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({n}) must be greater or equal to the number of dimensions in "
                           f"the tensor ({len(shape)})")
    out = list(sizes)
    for i in range(n - 1, -1, -1):
        d = i - (n - len(shape))
        size = shape[d] if d >= 0 else 1
        if sizes[i] == -1:
            if d < 0:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            out[i] = size
        elif size != sizes[i] and size != 1:
            raise RuntimeError(f"The expanded size of the tensor ({sizes[i]}) must match the existing size ({size}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
        elif sizes[i] < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {sizes[i]}: {list(sizes)}")
    return tuple(out)


@public(function=False)
def expand(self, *sizes, size=None):
    """Broadcast size-1 dims (and new leading dims) to sizes; -1 keeps a dim; ExpandBackward0."""
    sizes = _shape_arg(sizes) if size is None else tuple(size)
    return _view_op(_expand, self, (_expand_shape(self, sizes),))


@public(function=False)
def expand_as(self, other):
    """expand(other.shape)."""
    return expand(self, other.shape)


@op("RepeatBackward0", save=(), attrs=("repeats", "self_sym_sizes"))
def _repeat(self, *, repeats):
    return jnp.tile(self, repeats)


@_repeat.derivative
def _(grad, repeats, self_shape):
    if not grad.size:  # (torch's zeros for a repeat count of 0)
        return ignoring(grad, jnp.zeros(self_shape, grad.dtype))
    shape = (1,) * (len(repeats) - len(self_shape)) + tuple(self_shape)
    pairs = tuple(x for r, s in zip(repeats, shape) for x in (r, s))
    grad = jnp.reshape(grad, pairs).sum(axis=tuple(range(0, len(pairs), 2)))
    return jnp.reshape(grad, self_shape)


@public(function=False)
def repeat(self, *args, repeats=None):
    """Tile the tensor repeats[i] times along each dim; RepeatBackward0."""
    repeats = _shape_arg(args) if repeats is None else tuple(repeats)
    if len(repeats) < self.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
    shape = (1,) * (len(repeats) - self.ndim) + self.shape
    out = [r * s for r, s in zip(repeats, shape)]
    for o in out:
        if o < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {o}: {out}")
    return _apply(_repeat, (self,), (repeats,))


# ----- cat / stack ----------------------------------------------------------------------------------------
def _cat_forward(*tensors, dim, sizes, dtype):
    parts = [t.astype(dtype) for t, s in zip(tensors, sizes) if s >= 0]
    return jnp.concatenate(parts, axis=dim) if parts else jnp.zeros((0,), dtype)


def _cat_backward(grad, dim, sizes):
    axis, start, out = _norm(dim, grad.ndim), 0, []
    for s in sizes:
        if s < 0:  # a skipped legacy empty tensor of shape (0,)
            out.append(jnp.zeros((0,), grad.dtype))
        else:
            out.append(jax.lax.slice_in_dim(grad, start, start + s, axis=axis))
            start += s
    return tuple(out)


def _make_cat(n):
    names = tuple(f"tensors{i}" for i in range(n))
    entry = OpDef("CatBackward0", _cat_forward, save=(), inputs=names, statics=("dim", "sizes", "dtype"),
                  attrs=("dim",), unsigned=("dim",), layout=_layout.concatenated)
    entry.derivative(_cat_backward)
    return entry


_cat_entries = {}


@public(aliases=("concat",), method=False)
def cat(tensors, dim=0, *, out=None):
    """Concatenate along dim with type promotion; 1-D empty tensors are skipped, as torch does; CatBackward0."""
    tensors = _tensor_list(tensors, "cat")
    if out is not None:
        return _write_out("cat", lambda: cat(tensors, dim), out, tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    kept = [t for t in tensors if t.shape != (0,)]
    ref = kept[0].shape if kept else (0,)
    d = _wrap_dim(dim, len(ref))
    for i, t in enumerate(tensors):
        if t.shape == (0,) and kept:
            continue
        if t.ndim != len(ref):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(ref)} and {t.ndim}")
        for k, (a, b) in enumerate(zip(ref, t.shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list.")
    sizes = tuple(-1 if t.shape == (0,) and kept else t.shape[d] for t in tensors)
    entry = _variadic(_cat_entries, len(tensors), _make_cat)
    return _apply(entry, tensors, (int(dim), sizes, _promote(tensors)))


@public(method=False)
def concatenate(tensors, dim=0, *, out=None):
    """Alias of cat (``axis=`` too, as every function torch parses)."""
    return cat(tensors, dim, out=out)




def _stack_forward(*tensors, dim, dtype):
    return jnp.stack([t.astype(dtype) for t in tensors], axis=dim)


def _stack_backward(grad, dim):
    return tuple(jnp.unstack(grad, axis=dim))


def _make_stack(n):
    names = tuple(f"tensors{i}" for i in range(n))
    entry = OpDef("StackBackward0", _stack_forward, save=(), inputs=names, statics=("dim", "dtype"),
                  attrs=("dim",), unsigned=("dim",))
    entry.derivative(_stack_backward)
    return entry


_stack_entries = {}


@public(method=False)
def stack(tensors, dim=0):
    """Stack equal-shaped tensors along a new dim, with type promotion; StackBackward0."""
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    _wrap_dim(dim, tensors[0].ndim + 1)
    for i, t in enumerate(tensors):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at entry "
                               f"0 and {list(t.shape)} at entry {i}")
    entry = _variadic(_stack_entries, len(tensors), _make_stack)
    return _apply(entry, tensors, (int(dim), _promote(tensors)))


# ----- split / chunk / unbind (one node, several outputs) ----------------------------------------------------
def _split_forward(self, *, dim, split_size):
    n = self.shape[dim]
    return tuple(jnp.split(self, list(range(split_size, n, split_size)), axis=dim)) if split_size else (self,)


def _split_sizes_forward(self, *, dim, split_sizes):
    if not split_sizes:
        return ()
    return tuple(jnp.split(self, list(np.cumsum(split_sizes[:-1])), axis=dim))


def _split_backward(grads, dim):
    return jnp.concatenate(grads, axis=dim)


def _unbind_forward(self, *, dim):
    return tuple(jnp.unstack(self, axis=dim))


def _unbind_backward(grads, dim):
    return jnp.stack(grads, axis=dim)


def _multi_out(name, forward, backward, statics, attrs, rule):
    """Factory of per-output-count entries of a multi-output view op (torch shows the dim unsigned)."""
    def make(k):
        entry = OpDef(name, forward, save=(), inputs=("self",), statics=statics,
                      outputs=tuple(f"result{i}" for i in range(k)), tuple_out=True, attrs=attrs, unsigned=("dim",))
        entry.derivative(backward)
        _rule(entry)(rule)
        return entry
    return make


_make_split = _multi_out("SplitBackward0", _split_forward, _split_backward, ("dim", "split_size"),
                         ("dim", "split_size", "self_sym_sizes"), lambda *a: _split_rule(*a))
_make_split_sizes = _multi_out("SplitWithSizesBackward0", _split_sizes_forward, _split_backward,
                               ("dim", "split_sizes"), ("dim", "split_sizes", "self_sym_sizes"),
                               lambda *a: _split_geoms(*a))
_make_unbind = _multi_out("UnbindBackward0", _unbind_forward, _unbind_backward, ("dim",), ("dim",),
                          lambda *a: _unbind_rule(*a))
_split_entries, _split_sizes_entries, _unbind_entries = {}, {}, {}


def _split_dim(input, dim, fname):
    if input.ndim == 0:
        raise RuntimeError(f"{fname} expects at least a 1-dimensional tensor")
    return input.shape[_wrap_dim(dim, input.ndim)]


def _split_with_sizes(input, sizes, dim):
    size = _split_dim(input, dim, "split")  # torch's message names split here too
    sizes = tuple(int(s) for s in sizes)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={list(sizes)}")
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at "
                           f"dimension {_wrap_dim(dim, input.ndim)}), but got split_sizes={list(sizes)}")
    entry = _variadic(_split_sizes_entries, len(sizes), _make_split_sizes)
    return _view_op(entry, input, (int(dim), sizes))


@public
def split(tensor, split_size_or_sections, dim=0):
    """Split into pieces of split_size (last may be smaller) or of the listed sizes; one multi-output node."""
    if not isinstance(split_size_or_sections, (int, np.integer)):
        return _split_with_sizes(tensor, split_size_or_sections, dim)
    split_size = int(split_size_or_sections)
    size = _split_dim(tensor, dim, "split")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    k = max(-(-size // split_size), 1) if split_size else 1
    entry = _variadic(_split_entries, k, _make_split)
    return _view_op(entry, tensor, (int(dim), split_size))


@public
def chunk(input, chunks, dim=0):
    """Split into `chunks` pieces of equal size ceil(n / chunks) (fewer if they run out); SplitBackward0."""
    size = _split_dim(input, dim, "chunk")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    split_size = -(-size // chunks)
    if split_size == 0 and size == 0:
        return _split_with_sizes(input, (0,) * chunks, dim)
    return split(input, split_size, dim)


@public
def unbind(input, dim=0):
    """Remove a dim, returning its slices; one UnbindBackward0 node with one output per slice."""
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    k = input.shape[_wrap_dim(dim, input.ndim)]
    return _view_op(_variadic(_unbind_entries, k, _make_unbind), input, (int(dim),))


@public
def split_with_sizes(input, split_sizes, dim=0):
    """split into pieces of the listed sizes (SplitWithSizesBackward0)."""
    return _split_with_sizes(input, split_sizes, dim)


@public
def tensor_split(input, indices_or_sections, dim=0):
    """Slices (SliceBackward0 each) into ``sections`` nearly equal parts (the first ones one longer), or cut at
    ``indices``; a tensor argument is a number of sections (0-d) or indices (1-d), as torch's."""
    if input.ndim == 0:
        raise RuntimeError(f"tensor_split expected at least a 1-dimensional tensor, but got a tensor with "
                           f"{input.ndim} dims")
    d = _wrap_dim(dim, input.ndim)
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg._data.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{_type_string(arg._data.dtype)[6:-6]}")
        if arg.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {arg.ndim} dims")
        arg = arg.item() if arg.ndim == 0 else arg.tolist()
    size = input.shape[d]
    if isinstance(arg, (int, np.integer)):
        if arg <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {arg}")
        small, extra = divmod(size, int(arg))
        ends = list(itertools.accumulate(small + (k < extra) for k in range(int(arg))))
        bounds = list(zip([0] + ends[:-1], ends))
    else:
        cuts = [int(i) for i in arg]
        bounds = list(zip([0] + cuts, cuts + [size]))
    return tuple(_view_op(_slice, input, (d, a, b, 1, _slice_length(size, a, b, 1))) for a, b in bounds)


def _split_along(name, input, arg, dim, need):
    """hsplit / vsplit / dsplit: tensor_split along ``dim`` of a tensor of at least ``need`` dims."""
    if input.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(arg, (int, np.integer)) and (arg == 0 or input.shape[dim] % arg):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{input.shape[dim]} is not divisible by the split_size {arg}!")
    return tensor_split(input, arg, dim)


@public
def hsplit(input, indices_or_sections):
    """tensor_split along dim 1 (dim 0 of a 1-D tensor); an int must divide the size."""
    return _split_along("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


@public
def vsplit(input, indices_or_sections):
    """tensor_split along dim 0 of a tensor of at least 2 dims; an int must divide the size."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


@public
def dsplit(input, indices_or_sections):
    """tensor_split along dim 2 of a tensor of at least 3 dims; an int must divide the size."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


# ----- narrow / flip --------------------------------------------------------------------------------------
@public
def narrow(input, dim, start, length):
    """input.narrow(dim, start, length): length elements from start along dim; SliceBackward0."""
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start, length = int(start), int(length)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    size = input.shape[_wrap_dim(dim, input.ndim)]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return _view_op(_slice, input, (int(dim), start, start + length, 1, length))


@op("FlipBackward0", save=(), attrs=("dims",), unsigned=("dims",), layout=_layout.like)  # (empty_like)
def _flip(self, *, dims):
    return jnp.flip(self, tuple(_norm(d, self.ndim) for d in dims)) if self.ndim and dims else self


@_flip.derivative
def _(grad, dims):
    return _flip.forward(grad, dims=dims)



@public
def flip(input, *args, dims=None):
    """Reverse the order of elements along dims; FlipBackward0."""
    dims = _dims_arg(args) if dims is None else tuple(dims)
    _check_unique(dims, input.ndim)
    return _apply(_flip, (input,), (dims,))


@public
def fliplr(input):
    """flip along dim 1."""
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@public
def flipud(input):
    """flip along dim 0."""
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@public(function=False)
def sum_to_size(self, *size):
    """The sum of self down to ``size`` (to which self must expand): torch's sum_to (SumBackward1, then a view when
    leading dims go); self itself when nothing is summed."""
    size = _shape_arg(size)
    shape, lead = tuple(self.shape), self.ndim - len(size)
    if lead < 0 or any(s != n and s != 1 for s, n in zip(size, shape[lead:])):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(size) if s == 1 and shape[lead + i] != 1)
    if not dims:
        return self
    if not size:
        return self.sum()
    out = self.sum(dims, keepdim=True)
    return view(out, size) if lead else out


# ----- diagonal ------------------------------------------------------------------------------------------
@op("DiagonalBackward0", save=(), attrs=("offset", "dim1", "dim2", "self_sym_sizes"), unsigned=("offset", "dim1", "dim2"))
def _diagonal(self, *, offset, dim1, dim2):
    return jnp.diagonal(self, offset, _norm(dim1, self.ndim), _norm(dim2, self.ndim))


@_diagonal.derivative
def _(grad, self_shape, offset, dim1, dim2):
    n = len(self_shape)
    pos = jnp.arange(math.prod(self_shape)).reshape(self_shape)
    idx = jnp.diagonal(pos, offset, _norm(dim1, n), _norm(dim2, n)).reshape(-1)
    return jnp.zeros(math.prod(self_shape), grad.dtype).at[idx].set(grad.reshape(-1)).reshape(self_shape)


@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the (dim1, dim2) planes, as a new last dim; a view (DiagonalBackward0)."""
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _view_op(_diagonal, input, (int(offset), int(dim1), int(dim2)))


# ----- select_scatter / slice_scatter / diagonal_scatter / as_strided_scatter: a copy of input with src written
# where the view would read it (torch's functional inverses of the views); fresh storage in input's layout -----------
def _positions(shape, view):
    """The row-major positions of ``shape``'s elements that ``view`` (a function of an array) reads."""
    return view(jnp.arange(math.prod(shape)).reshape(shape))


def _scatter(self, src, view):
    return _views._scatter_at(self, src, _positions(self.shape, view))


def _unscatter(grad, view):
    return _views._scatter_grads(grad, _positions(grad.shape, view))


def _select_view(dim, index):
    return lambda a: _select_raw(a, dim, index)


def _slice_view(dim, start, end, step):
    return lambda a: a[(slice(None),) * _norm(dim, a.ndim) + (slice(start, end, step),)]


def _diagonal_view(offset, dim1, dim2):
    return lambda a: jnp.diagonal(a, offset, _norm(dim1, a.ndim), _norm(dim2, a.ndim))


@op("SelectScatterBackward0", save=(), attrs=("dim", "index"), unsigned=("dim", "index"), layout=_layout.like)
def _select_scatter(self, src, *, dim, index):
    return _scatter(self, src, _select_view(dim, index))


_select_scatter.derivative(lambda grad, dim, index: _unscatter(grad, _select_view(dim, index)))


@op("SliceScatterBackward0", save=(), attrs=("dim", "start", "end", "step"), unsigned=("dim", "start", "end"),
    layout=_layout.like)
def _slice_scatter(self, src, *, dim, start, end, step):
    return _scatter(self, src, _slice_view(dim, start, end, step))


_slice_scatter.derivative(lambda grad, dim, start, end, step: _unscatter(grad, _slice_view(dim, start, end, step)))


@op("DiagonalScatterBackward0", save=(), attrs=("offset", "dim1", "dim2"), unsigned=("offset", "dim1", "dim2"),
    layout=_layout.like)
def _diagonal_scatter(self, src, *, offset, dim1, dim2):
    return _scatter(self, src, _diagonal_view(offset, dim1, dim2))


_diagonal_scatter.derivative(lambda grad, offset, dim1, dim2: _unscatter(grad, _diagonal_view(offset, dim1, dim2)))


def _scatter_checked(entry, input, src, statics, view_shape):
    if tuple(src.shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(view_shape)}")
    return _apply(entry, (input, src), statics)


@public
def select_scatter(input, src, dim, index):
    """A copy of input with src written at ``input.select(dim, index)`` (SelectScatterBackward0)."""
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return _scatter_checked(_select_scatter, input, src, (int(dim), int(index)), _drop(tuple(input.shape), d))


@public
def slice_scatter(input, src, dim=0, start=None, end=None, step=1, *, out=None):
    """A copy of input with src written at ``input[..., start:end:step]`` along dim (SliceScatterBackward0)."""
    if out is not None:
        return _write_out("slice_scatter", lambda: slice_scatter(input, src, dim, start, end, step), out,
                          (input, src))
    d = _wrap_dim(dim, max(input.ndim, 1))
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = _slice_length(input.shape[d], start, end, step)
    statics = (int(dim), None if start is None else int(start), None if end is None else int(end), int(step))
    return _scatter_checked(_slice_scatter, input, src, statics, _put(tuple(input.shape), d, size))


@public
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """A copy of input with src written on ``input.diagonal(offset, dim1, dim2)`` (DiagonalScatterBackward0)."""
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = tuple(input.shape)
    sizes = _rules[_diagonal](shape, _contiguous_strides(shape), 0, int(offset), d1, d2)[0]
    return _scatter_checked(_diagonal_scatter, input, src, (int(offset), int(dim1), int(dim2)), sizes)


@public
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of input with src written where ``as_strided(size, stride, storage_offset)`` of that copy reads
    (AsStridedScatterBackward0): positions count the copy's memory, laid out as input's (torch's clone)."""
    shape = tuple(input.shape)
    sizes, strides = _layout._sizes_strides(input)
    like = _layout._like_strides(sizes, strides)
    order = sorted(range(len(shape)), key=lambda d: -like[d])  # (stable: the copy's memory order of dims)
    if order != sorted(order):  # a permuted layout: the copy's memory is the row-major order of the permuted input
        back = sorted(range(len(order)), key=order.__getitem__)
        return permute(as_strided_scatter(permute(input, order), src, size, stride, storage_offset), back)
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    offset = 0 if storage_offset is None else int(storage_offset)
    _strided_args(_wrap(jnp.zeros(math.prod(shape), input._data.dtype)) if input._sgeom is not None else input,
                  size, stride, offset)  # (torch's checks, on the copy's storage)
    return _scatter_checked(_views._as_strided_scatter, input, src, (size, stride, offset), size)


# ----- stride rules of the view ops (torch's; see _views.py) ------------------------------------------------
def _drop(seq, d):
    return seq[:d] + seq[d + 1:]


def _put(seq, d, value):
    return seq[:d] + (value,) + seq[d + 1:]


@_rule(_alias)
def _(sizes, strides, offset):
    return sizes, strides, offset


@_rule(_select)
def _(sizes, strides, offset, dim, index):
    d = _norm(dim, len(sizes))
    return _drop(sizes, d), _drop(strides, d), offset + (index % sizes[d]) * strides[d]


@_rule(_slice)
def _(sizes, strides, offset, dim, start, end, step, length):
    d = _norm(dim, len(sizes))
    s, e = _slice_bounds(sizes[d], start, end, step)
    return _put(sizes, d, len(range(s, e, step))), _put(strides, d, strides[d] * step), offset + s * strides[d]


def _permuted(sizes, strides, offset, order):
    return tuple(sizes[i] for i in order), tuple(strides[i] for i in order), offset


@_rule(_transpose)
def _(sizes, strides, offset, dim0, dim1):
    order = list(range(len(sizes)))
    if order:
        d0, d1 = _norm(dim0, len(sizes)), _norm(dim1, len(sizes))
        order[d0], order[d1] = d1, d0
    return _permuted(sizes, strides, offset, order)


@_rule(_t)
def _(sizes, strides, offset):
    return _permuted(sizes, strides, offset, range(len(sizes) - 1, -1, -1))


@_rule(_permute)
def _(sizes, strides, offset, dims):
    return _permuted(sizes, strides, offset, [_norm(d, len(sizes)) for d in dims])


def _squeeze_geom(sizes, strides, offset, dims):
    keep = [i for i in range(len(sizes)) if not (i in dims and sizes[i] == 1)]
    return tuple(sizes[i] for i in keep), tuple(strides[i] for i in keep), offset


_rule(_squeeze_all)(lambda sizes, strides, offset: _squeeze_geom(sizes, strides, offset, range(len(sizes))))
_rule(_squeeze_dim)(lambda sizes, strides, offset, dim: _squeeze_geom(
    sizes, strides, offset, (_norm(dim, len(sizes)),)))
_rule(_squeeze_dims)(lambda sizes, strides, offset, dim: _squeeze_geom(
    sizes, strides, offset, {_norm(d, len(sizes)) for d in dim}))


@_rule(_unsqueeze)
def _(sizes, strides, offset, dim):
    d = dim % (len(sizes) + 1)
    stride = sizes[d] * strides[d] if d < len(sizes) else 1
    return sizes[:d] + (1,) + sizes[d:], strides[:d] + (stride,) + strides[d:], offset


@_rule(_expand)
def _expand_geom(sizes, strides, offset, size):
    """torch's inferExpandGeometry: a broadcast dim gets stride 0, a new leading dim of size 1 the stride of the
    dims after it (none for a 0-d tensor)."""
    n, lead = len(size), len(size) - len(sizes)
    new = [0] * n
    for i in range(n - 1, -1, -1) if sizes else ():
        d = i - lead
        stride = strides[d] if d >= 0 else (size[i + 1] * new[i + 1] if i + 1 < n else 1)
        new[i] = 0 if (sizes[d] if d >= 0 else 1) != size[i] else stride
    return tuple(size), tuple(new), offset


@_rule(_diagonal)
def _(sizes, strides, offset, diag_offset, dim1, dim2):
    d1, d2 = _norm(dim1, len(sizes)), _norm(dim2, len(sizes))
    if diag_offset >= 0:
        n = max(min(sizes[d1], sizes[d2] - diag_offset), 0)
        start = diag_offset * strides[d2]
    else:
        n = max(min(sizes[d1] + diag_offset, sizes[d2]), 0)
        start = -diag_offset * strides[d1]
    keep = [i for i in range(len(sizes)) if i not in (d1, d2)]
    return (tuple(sizes[i] for i in keep) + (n,), tuple(strides[i] for i in keep) + (strides[d1] + strides[d2],),
            offset + (start if n else 0))


def _split_geoms(sizes, strides, offset, dim, pieces):
    d, at, out = _norm(dim, len(sizes)), 0, []
    for n in pieces:
        out.append((_put(sizes, d, n), strides, offset + at * strides[d]))
        at += n
    return tuple(out)


def _split_rule(sizes, strides, offset, dim, split_size):
    total = sizes[_norm(dim, len(sizes))]
    if split_size == 0:
        return _split_geoms(sizes, strides, offset, dim, (0,))
    return _split_geoms(sizes, strides, offset, dim,
                        [min(split_size, total - i) for i in range(0, total, split_size)] or [0])


def _unbind_rule(sizes, strides, offset, dim):
    d = _norm(dim, len(sizes))
    return tuple((_drop(sizes, d), _drop(strides, d), offset + i * strides[d]) for i in range(sizes[d]))


# torch's nodes of the in-place view ops, recorded on the tensor itself (x.unsqueeze_(0): UnsqueezeBackward1). torch's
# matmul of a 1-D and a 2-D operand ends with a squeeze_(0) on its fresh mm result (SqueezeBackward4, at version 1).
_INPLACE = {
    _unsqueeze: _inplace_entry("UnsqueezeBackward1", _unsqueeze, ("dim",)),
    _squeeze_all: _inplace_entry("SqueezeBackward3", _squeeze_all, ("self_sym_sizes",)),
    _squeeze_dim: _inplace_entry("SqueezeBackward4", _squeeze_dim, ("dim", "self_sym_sizes")),
    _squeeze_dims: _inplace_entry("SqueezeBackward5", _squeeze_dims, ("dim", "self_sym_sizes")),
    _t: _inplace_entry("TBackward1", _t),
    _transpose: _inplace_entry("TransposeBackward1", _transpose, ("dim0", "dim1")),
    _as_strided: _inplace_entry("AsStridedBackward1", _as_strided, ("size", "stride", "storage_offset"), ()),
}
_squeeze_dim_ = _INPLACE[_squeeze_dim]
