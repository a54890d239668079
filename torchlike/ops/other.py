"""torch's "other operations": tril/triu, diag/diag_embed/diagflat, trace, roll, rot90, tile, broadcast_to /
broadcast_tensors / broadcast_shapes, atleast_1d/2d/3d, hstack/vstack/dstack/column_stack/row_stack, meshgrid,
cartesian_prod, kron, cross, diff, cumprod, logcumsumexp, nan_to_num, count_nonzero, dist. Ops with a node of their
own in torch are table entries; torch's composites are built from the table's ops, so they record torch's nodes."""
import collections.abc
import math
import operator
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .. import _grad_mode
from .._device import device as _device
from .._tensor import Size, Tensor, _wrap, _wrap_dim, _type_string
from . import _layout
from ._out import _check_dtype, _write_out
from ._registry import op, OpDef, _apply, _apply_inplace, _check_inplace, _check_autograd_inplace
from ._bind import public
from .pointwise import sub, logical_xor, mul
from .shape import cat, stack, expand, reshape, unsqueeze, _unsafe_view, _diagonal, _norm, _tensor_list
from ._views import _view_apply, _rule
from .indexing import _named, _broadcast_shapes
from .reduction import _accumulated, _linalg_vector_norm
from .linalg import _bad_inplace


def _type_word(np_dtype):
    return _type_string(np.dtype(np_dtype))[6:-6]


def _tensors(args, name):
    """The tensors of ``f(t1, t2, ...)`` or ``f([t1, t2, ...])`` (wrong types: the binding's guard names them)."""
    return _tensor_list(args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args, name)


# ----- tril, triu ---------------------------------------------------------------------------------------------
def _triangle(name, jfn):
    @op(f"{name.capitalize()}Backward0", save=(), attrs=("diagonal",), unsigned=("diagonal",))
    def entry(self, *, diagonal):
        return jfn(self, diagonal)

    @entry.derivative
    def _(grad, diagonal):
        return jfn(grad, diagonal)

    def check(input):
        if input.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")

    def inplace(self, diagonal=0):
        check(self)
        return _apply_inplace(entry, self, (self,), (int(diagonal),))

    def fn(input, diagonal=0, *, out=None):
        check(input)
        if out is not None:
            return _write_out(name, lambda: fn(input, diagonal), out, (input,), "mm")
        return _apply(entry, (input,), (int(diagonal),))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"The {'lower' if name == 'tril' else 'upper'} triangle of the last two dims (diagonal ``diagonal``"
                  f" and {'below' if name == 'tril' else 'above'}), the rest zero ({entry.name}).")
    inplace.__name__ = inplace.__qualname__ = name + "_"
    return public(fn, inplace=inplace)


tril = _triangle("tril", jnp.tril)
triu = _triangle("triu", jnp.triu)


# ----- diag_embed, diag, diagflat, trace ------------------------------------------------------------------------
@op("DiagEmbedBackward0", save=(), attrs=("dim1", "dim2", "offset"), unsigned=("dim1", "dim2", "offset"))
def _diag_embed(self, *, offset, dim1, dim2):
    n = self.shape[-1] + abs(offset)
    out_ndim = self.ndim + 1
    d1, d2 = _norm(dim1, out_ndim), _norm(dim2, out_ndim)
    base = jnp.zeros(self.shape[:-1] + (n, n), self.dtype)
    i = jnp.arange(self.shape[-1])
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    base = base.at[..., rows, cols].set(self)
    rest = [a for a in range(out_ndim) if a not in (d1, d2)]
    order = [0] * out_ndim
    for src, dst in enumerate(rest + [d1, d2]):
        order[dst] = src
    return jnp.transpose(base, order)


@_diag_embed.derivative
def _(grad, offset, dim1, dim2):
    return jnp.diagonal(grad, offset, _norm(dim1, grad.ndim), _norm(dim2, grad.ndim))


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """A tensor whose (dim1, dim2) planes have ``input``'s last dim on their diagonal ``offset`` (DiagEmbedBackward0)."""
    out_ndim = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, out_ndim), _wrap_dim(dim2, out_ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _apply(_diag_embed, (input,), (int(offset), int(dim1), int(dim2)))


_diagonal_copy = op("DiagonalBackward0_copy", save=(), attrs=("dim1", "dim2", "offset", "self_sym_sizes"),
                    unsigned=("offset", "dim1", "dim2"))(_diagonal.forward)
_diagonal_copy.derivative(_diagonal.backward)


@public
def diag(input, diagonal=0, *, out=None):
    """1-D input: a square matrix with it on diagonal ``diagonal``; 2-D input: that diagonal, as a copy."""
    if input.ndim not in (1, 2):
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.ndim}D")
    if out is not None:  # (torch checks the dtype first, and only out for autograd)
        if input.ndim == 1:
            _check_dtype("diag", "diag", input._data.dtype, out._data.dtype)
        _check_dtype("diag", "mm", input._data.dtype, out._data.dtype)
        return _write_out("aten::diag_embed" if input.ndim == 1 else "aten::diagonal_copy",
                          lambda: diag(input, diagonal), out, (), "mm")
    if input.ndim == 1:
        return _apply(_diag_embed, (input,), (int(diagonal), -2, -1))
    return _apply(_diagonal_copy, (input,), (int(diagonal), 0, 1))


@public
def diagflat(input, offset=0):
    """``input`` flattened onto diagonal ``offset`` of a square matrix."""
    return _apply(_diag_embed, (input.contiguous().view(-1),), (int(offset), -2, -1))


@op("TraceBackward0", save=(), attrs=("self_sym_sizes",))
def _trace(self):
    return jnp.trace(self)


@_trace.derivative
def _(grad, self_shape):
    return jnp.eye(*self_shape, dtype=grad.dtype) * grad


@public
def trace(input):
    """The sum of the main diagonal of a 2-D tensor (TraceBackward0)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype == _dtype.bool:
        return _apply(_trace, (input.long(),), ())
    return _apply(_trace, (input,), ())


# ----- roll, rot90, tile ----------------------------------------------------------------------------------------
@op("RollBackward0", save=(), attrs=("dims", "shifts"), unsigned=("dims", "shifts"), layout=_layout.suggested)
def _roll(self, *, shifts, dims):
    if not dims:
        return jnp.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    return jnp.roll(self, shifts, tuple(_norm(d, self.ndim) for d in dims))


@_roll.derivative
def _(grad, shifts, dims):
    return _roll.forward(grad, shifts=tuple(-s for s in shifts), dims=dims)


def _ints(value):
    """An int or a sequence of ints as a tuple (anything else: a TypeError the binding's guard words as torch)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if not isinstance(value, (tuple, list)) or not all(isinstance(v, (int, np.integer)) for v in value):
        raise TypeError(f"expected a tuple of ints, not {type(value).__name__}")
    return tuple(int(v) for v in value)


@public
def roll(input, shifts, dims=None):
    """Elements shifted by ``shifts`` along ``dims`` (wrapping around); no dims: over the flattened tensor."""
    shifts, dims = _ints(shifts), () if dims is None else _ints(dims)
    if not (not dims and len(shifts) == 1) and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    for d in dims:
        _wrap_dim(d, input.ndim)
    out = _apply(_roll, (input,), (shifts, dims))
    if not dims:  # (torch rolls the flattened tensor: row-major whatever the input's layout)
        out._sgeom = None
    return out


@op("Rot90Backward0", save=(), attrs=("dims", "k"), unsigned=("dims", "k"))
def _rot90(self, *, k, dims):
    return jnp.rot90(self, k, tuple(_norm(d, self.ndim) for d in dims))


@_rot90.derivative
def _(grad, k, dims):
    return _rot90.forward(grad, k=-k, dims=dims)


@public
def rot90(input, k=1, dims=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``dims`` (from the first towards the second)."""
    dims = _ints(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = _wrap_dim(dims[0], input.ndim), _wrap_dim(dims[1], input.ndim)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    return _apply(_rot90, (input,), (int(k), dims))


@public
def tile(input, dims):
    """``input`` repeated ``dims`` times along each dim (leading ones added as needed), as ``repeat``."""
    dims = _ints(dims)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return input.repeat(dims)


# ----- broadcasting --------------------------------------------------------------------------------------------
@public(method=False)
def broadcast_shapes(*shapes):
    """The shape tensors of ``shapes`` (ints or sequences of ints; None skipped) broadcast to."""
    shapes = tuple((x,) if isinstance(x, (int, np.integer)) else x for x in shapes if x is not None)
    for shape in shapes:
        if not isinstance(shape, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}")
    common = [1] * max((len(s) for s in shapes), default=0)
    for arg, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            if shape[i] == common[i]:
                continue
            if common[i] == 1:
                if shape[i] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = shape[i]
            if shape[i] != 1 and common[i] != shape[i]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {shape[i]} at {i}! Mismatching "
                                   f"argument at index {arg} had {shape}; but expected shape should be broadcastable "
                                   f"to {common}")
    return Size(common)


@public
def broadcast_to(input, size):
    """``input`` expanded to ``size`` (a view, ExpandBackward0)."""
    return expand(input, size)


@public(method=False)
def broadcast_tensors(*tensors):
    """The tensors expanded to their broadcast shape (views)."""
    tensors = _tensors(tensors, "broadcast_tensors")
    shape = tuple(broadcast_shapes(*(t.shape for t in tensors)))
    return tuple(t if tuple(t.shape) == shape else expand(t, shape) for t in tensors)


# ----- atleast_nd, stacks ---------------------------------------------------------------------------------------
def _atleast(n):
    def one(t):
        if t.ndim >= n:
            return t
        if t.ndim == 0:
            return reshape(t, (1,) * n)
        if n == 2:
            return unsqueeze(t, 0)
        return unsqueeze(unsqueeze(t, 0), -1) if t.ndim == 1 else unsqueeze(t, -1)

    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], Tensor):
            return one(tensors[0])
        return tuple(one(t) for t in _tensors(tensors, f"atleast_{n}d"))
    fn.__name__ = fn.__qualname__ = f"atleast_{n}d"
    fn.__doc__ = f"Each input viewed with at least {n} dims (one tensor: a tensor; several: a tuple)."
    return public(fn, method=False)


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)


@public(method=False)
def hstack(tensors, *, out=None):
    """Concatenate along the first dim of 1-D inputs, else the second (after ``atleast_1d``)."""
    ts = atleast_1d(*_tensor_list(tensors, "hstack"))
    ts = (ts,) if isinstance(ts, Tensor) else ts
    return cat(ts, 0 if ts[0].ndim == 1 else 1, out=out)


@public(method=False, aliases=("row_stack",))
def vstack(tensors, *, out=None):
    """Concatenate along the first dim (after ``atleast_2d``)."""
    ts = atleast_2d(*_tensor_list(tensors, "vstack"))
    return cat((ts,) if isinstance(ts, Tensor) else ts, 0, out=out)


@public(method=False)
def dstack(tensors, *, out=None):
    """Concatenate along the third dim (after ``atleast_3d``)."""
    ts = atleast_3d(*_tensor_list(tensors, "dstack"))
    return cat((ts,) if isinstance(ts, Tensor) else ts, 2, out=out)


@public(method=False)
def column_stack(tensors, *, out=None):
    """0-d and 1-D inputs as columns, then concatenated along the second dim."""
    ts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in _tensor_list(tensors, "column_stack")]
    return cat(ts, 1, out=out)


# ----- meshgrid, cartesian_prod, kron ---------------------------------------------------------------------------
@public(method=False)
def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d or 1-D tensors (views): ``indexing="ij"`` (matrix, torch's default) or ``"xy"``."""
    ts = _tensors(tensors, "meshgrid")
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in ts:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}D")
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts = (ts[1], ts[0]) + ts[2:]
    shape = tuple(t.numel() for t in ts)
    grids = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        grids.append(expand(t.view(view), shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


@public(method=False)
def cartesian_prod(*tensors):
    """All combinations of the elements of 1-D tensors, one per row (a 1-D input: itself)."""
    ts = _tensors(tensors, "cartesian_prod")
    if len(ts) == 1:
        return ts[0]
    return stack([g.flatten() for g in meshgrid(*ts, indexing="ij")], 1)


@public
def kron(input, other, *, out=None):
    """The Kronecker product."""
    if out is not None:
        _write_out("mul", lambda: kron(input, other), out, (input, other))
        out._version_counter().version -= 1  # (torch's kron writes through an alias of out: no version bump)
        return out
    nd = max(input.ndim, other.ndim)
    a = (1,) * (nd - input.ndim) + tuple(input.shape)
    b = (1,) * (nd - other.ndim) + tuple(other.shape)
    a_shape, b_shape = [], []
    for sa, sb in zip(a, b):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    return _apply(_unsafe_view, (mul(_apply(_unsafe_view, (input,), (tuple(a_shape),)),
                                     _apply(_unsafe_view, (other,), (tuple(b_shape),))),),
                  (tuple(sa * sb for sa, sb in zip(a, b)),))


# ----- cross, diff ---------------------------------------------------------------------------------------------
@op("LinalgCrossBackward0", save=("self", "other"), attrs=("dim",), unsigned=("dim",))
def _cross(self, other, *, dim):
    return jnp.cross(self, other, axis=_norm(dim, self.ndim))


@_cross.derivative
def _(grad, self, other, dim):
    axis = _norm(dim, self.ndim)
    return jnp.cross(other.conj(), grad, axis=axis), jnp.cross(grad, self.conj(), axis=axis)


@public
def cross(input, other, dim=None, *, out=None):
    """The 3-vector cross product along ``dim`` (default: the first dim of size 3, with torch's warning)."""
    shape = tuple(broadcast_shapes(input.shape, other.shape)) if input.shape != other.shape else tuple(input.shape)
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                      "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                      "with that of linalg.cross in a future release.", UserWarning, stacklevel=2)
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, len(shape))
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    if input.shape != shape:
        input = expand(input, shape)
    if other.shape != shape:
        other = expand(other, shape)
    if out is not None:
        return _write_out("linalg_cross", lambda: _apply(_cross, (input, other), (int(dim),)), out, (input, other),
                          "mm")
    return _apply(_cross, (input, other), (int(dim),))


@public
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim`` (``prepend``/``append`` concatenated first)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    parts = [t if t.ndim else expand(t, input.shape[:d] + (1,) + input.shape[d + 1:])
             for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        size = x.shape[d]
        if size == 0:
            break
        hi, lo = x.narrow(d, 1, size - 1), x.narrow(d, 0, size - 1)
        x = logical_xor(hi, lo) if x.dtype == _dtype.bool else sub(hi, lo)
    return x


@public
def is_signed(input):
    """Whether input's dtype is signed (floating and complex dtypes are)."""
    return input.dtype.is_signed


@public
def is_nonzero(input):
    """bool(input) of a one-element tensor (torch's errors for any other)."""
    return bool(input)


@public
def is_same_size(input, other):
    """Whether the two tensors have the same shape."""
    return input.shape == other.shape


# ----- cumprod, logcumsumexp, nan_to_num, count_nonzero, dist ---------------------------------------------------
@op("CumprodBackward0", save=("self", "result"), attrs=("dim",), unsigned=("dim",))
def _cumprod(self, *, dim, dtype):
    if not self.ndim:
        return self.astype(dtype)
    return _accumulated(jnp.cumprod, self, dtype, axis=_norm(dim, self.ndim))  # (half types: in float32, as torch)


def _cumprod_(self, dim, *, dtype=None):
    _check_autograd_inplace(self)
    _wrap_dim(dim, self.ndim)
    if dtype is not None:
        _bad_inplace(self, self.shape, _dtype.to_dtype(dtype)._np)
    if self._data.dtype == np.bool_:
        _check_inplace(self)
        raise NotImplementedError("\"cumprod_out_cpu\" not implemented for 'Bool'")
    return _apply_inplace(_cumprod, self, (self,), (int(dim), self._data.dtype))


@public(inplace=_cumprod_)
def cumprod(input, dim, *, dtype=None, out=None):
    """Running products along ``dim`` (integers and bools accumulate in int64, as torch's)."""
    _wrap_dim(dim, input.ndim)
    if out is not None:  # (computed in out's dtype unless ``dtype`` is given)
        return _write_out("cumprod", lambda: cumprod(input, dim, dtype=dtype or out.dtype), out, (input,), "mm")
    np_dtype = (_dtype.to_dtype(dtype)._np if dtype is not None
                else np.int64 if input._data.dtype.kind in "biu" else input._data.dtype)
    return _apply(_cumprod, (input,), (int(dim), np.dtype(np_dtype)))


@op("LogcumsumexpBackward0", save=("self", "result"), attrs=("dim",), unsigned=("dim",))
def _logcumsumexp(self, *, dim):
    return jax.lax.cumlogsumexp(self, axis=_norm(dim, self.ndim)) if self.ndim else self


@public
def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along ``dim``, computed stably."""
    _wrap_dim(dim, input.ndim)
    if out is not None:
        return _write_out("logcumsumexp", lambda: logcumsumexp(input, dim), out, (input,), "scalar_type")
    return _apply(_logcumsumexp, (input,), (int(dim),))


@op("NanToNumBackward0", save=("self",), attrs=(), layout=_layout.ti)
def _nan_to_num(self, *, nan, posinf, neginf):
    return jnp.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)


@_nan_to_num.derivative
def _(grad, self):  # torch's grad * isfinite(self): an infinite grad gives NaN where self is not finite
    return jnp.where(jnp.isfinite(self), grad, grad * 0)


def _nan_to_num_values(input, nan, posinf, neginf):
    return (0.0 if nan is None else float(nan), None if posinf is None else float(posinf),
            None if neginf is None else float(neginf))


def _nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    if self._data.dtype.kind in "biu":  # torch copies an integer self into itself: no overlap check, a version bump
        _nan_to_num_values(self, nan, posinf, neginf)
        _check_inplace(self, ())
        self._version_counter().version += 1
        return self
    return _apply_inplace(_nan_to_num, self, (self,), _nan_to_num_values(self, nan, posinf, neginf))


@public(inplace=_nan_to_num_)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: 0, the dtype's largest and
    lowest finite values)."""
    if out is not None:
        return _write_out("nan_to_num", lambda: nan_to_num(input, nan, posinf, neginf), out, (input,), "nan_to_num")
    if input._data.dtype.kind in "biu":
        return input.clone()
    return _apply(_nan_to_num, (input,), _nan_to_num_values(input, nan, posinf, neginf))


@op("count_nonzero", save=(), nondiff=("self",), attrs=())
def _count_nonzero(self, *, dims):
    return jnp.count_nonzero(self, axis=dims if dims else None).astype(jnp.int64)


@public
def count_nonzero(input, dim=None):
    """How many elements are not zero, in all (``dim=None``) or along ``dim`` (an int or a tuple)."""
    dims = () if dim is None else tuple(_wrap_dim(d, input.ndim) for d in _ints(dim))
    if len(set(dims)) != len(dims):
        raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
    return _apply(_count_nonzero, (input,), (dims,))


@op("DistBackward0", save=("self", "other", "result"), attrs=("p",))
def _dist(self, other, *, p):
    d = jnp.abs(self - other)
    if p == 0:
        return jnp.sum(d != 0).astype(d.dtype)
    if math.isinf(p):
        return jnp.max(d) if p > 0 else jnp.min(d)
    return jnp.sum(d ** p) ** (1.0 / p)


@public
def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast)."""
    return _apply(_dist, (input, other), (float(p) if not isinstance(p, int) else p,))


# ----- repeat_interleave, triu/tril_indices, block_diag, combinations --------------------------------------------
def _repeat_indices(repeats, output_size=None):
    """torch.repeat_interleave(repeats): each index i repeated repeats[i] times. Reads repeats."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats._data.dtype not in (np.int32, np.int64):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{_type_word(repeats._data.dtype)}'")
    r = np.asarray(repeats._data)
    if (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and output_size != int(r.sum()):
        raise RuntimeError("allocated size does not match required size")
    return _wrap(jnp.asarray(np.repeat(np.arange(len(r), dtype=np.int64), r)))


@public
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element (or slice along dim) repeated ``repeats`` times (an int, or a tensor of counts per element);
    without dim over the flattened input. ``repeat_interleave(counts)``: the indices each repeated its count."""
    if repeats is None:
        return _repeat_indices(input, output_size)
    if isinstance(repeats, Tensor):
        if dim is None:
            input, dim = input.flatten(), 0
        d = _wrap_dim(dim, input.ndim)
        size = input.shape[d] if input.ndim else 1
        if repeats.ndim == 0 or (repeats.ndim == 1 and repeats.shape[0] == 1):
            repeats = repeats.reshape(1).expand(size)
        elif repeats.ndim == 1:
            if repeats.shape[0] != size:
                raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                                   f"{repeats.shape[0]} and input.size({dim}) = {size}")
        else:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        return input.index_select(dim, _repeat_indices(repeats, output_size))
    d = _wrap_dim(0 if dim is None else dim, input.ndim)
    if dim is None:
        input = input.flatten()
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    t = input.unsqueeze(d + 1)
    shape = list(t.shape)
    shape[d + 1] = repeats
    if output_size is not None and output_size != repeats * shape[d]:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {repeats * shape[d]} but got "
                           f"{output_size}")
    return t.expand(shape).clone().flatten(d, d + 1)


def _tri_indices(np_fn, row, col, offset, dtype):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = _dtype.int64 if dtype is None else _dtype.to_dtype(dtype)
    if dt._np.kind not in "iu":
        raise RuntimeError(f"\"{np_fn.__name__}_indices\" not implemented for '{_type_word(dt._np)}'")
    return _wrap(jnp.asarray(np.stack(np_fn(row, offset, col)).astype(dt._np).reshape(2, -1)))


@public(method=False)
def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False,
                 requires_grad=False):
    """The (2, N) coordinates of the lower triangle (diagonal ``offset`` and below) of a row x col matrix."""
    return _tri_indices(np.tril_indices, row, col, offset, dtype)


@public(method=False)
def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=False,
                 requires_grad=False):
    """The (2, N) coordinates of the upper triangle (diagonal ``offset`` and above) of a row x col matrix."""
    return _tri_indices(np.triu_indices, row, col, offset, dtype)


def _as_2d(shape):
    return (1, 1) if not shape else (1, shape[0]) if len(shape) == 1 else tuple(shape)


def _block_diag_fwd(*tensors, dtype):
    mats = [t.astype(dtype).reshape(_as_2d(t.shape)) for t in tensors]
    out = jnp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), dtype)
    r = c = 0
    for m in mats:
        out = out.at[r:r + m.shape[0], c:c + m.shape[1]].set(m)
        r, c = r + m.shape[0], c + m.shape[1]
    return out


def _block_diag_bwd(grad, **shapes):
    out, r, c = [], 0, 0
    for k in range(len(shapes)):
        shape = shapes[f"t{k}_shape"]
        h, w = _as_2d(shape)
        out.append(grad[r:r + h, c:c + w].reshape(shape))
        r, c = r + h, c + w
    return tuple(out)


_block_diag_ops = {}


def _block_diag_op(n):
    entry = _block_diag_ops.get(n)
    if entry is None:
        names = tuple(f"t{k}" for k in range(n))
        entry = _block_diag_ops[n] = OpDef("BlockDiagBackward0", _block_diag_fwd, save=(), inputs=names,
                                           statics=("dtype",), attrs=(), tuple_out=False)
        entry.derivative(_named(_block_diag_bwd, tuple(f"{k}_shape" for k in names)))
    return entry


@public(method=False)
def block_diag(*tensors):
    """A block-diagonal matrix of the tensors (0-d: 1x1, 1-D: one row) (BlockDiagBackward0)."""
    tensors = _tensors(tensors, "block_diag")
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return _wrap(jnp.zeros((0, 0), jnp.float32))
    dt = _dtype._result_type(*tensors)._np
    return _apply(_block_diag_op(len(tensors)), tensors, (np.dtype(dt),))


@public(method=False)
def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D tensor's elements, as rows (torch's meshgrid, masked_select, stack)."""
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _wrap(jnp.zeros((0,), input._data.dtype))
    n = input.shape[0]
    idx = np.indices((n,) * r)
    mask = np.ones((n,) * r, bool)
    for a, b in zip(idx[:-1], idx[1:]):
        mask &= (a <= b) if with_replacement else (a < b)
    mask = _wrap(jnp.asarray(mask))
    return stack([g.masked_select(mask) for g in meshgrid(*[input] * r, indexing="ij")], 1)


# ----- renorm, cosine_similarity ------------------------------------------------------------------------------
@op("RenormBackward0", save=("self",), attrs=("dim", "maxnorm", "p"), unsigned=("dim",))
def _renorm(self, *, p, dim, maxnorm):
    axes = tuple(a for a in range(self.ndim) if a != dim % max(self.ndim, 1))
    a = jnp.abs(self)
    norm = (jnp.max(a, axes, keepdims=True) if math.isinf(p) else
            jnp.sum(a ** p, axes, keepdims=True) ** (1.0 / p))
    return jnp.where(norm > maxnorm, self * (maxnorm / (norm + 1e-7)), self)


def _renorm_args(input, p, dim, maxnorm):
    d = _wrap_dim(dim, input.ndim)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got "
                           f"{_type_word(input._data.dtype)}")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    return p, d if dim >= 0 else dim, maxnorm


def _renorm_(self, p, dim, maxnorm):
    return _apply_inplace(_renorm, self, (self,), _renorm_args(self, p, dim, maxnorm))


@public(inplace=_renorm_)
def renorm(input, p, dim, maxnorm, *, out=None):
    """input with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled to norm ``maxnorm``
    (RenormBackward0)."""
    if out is not None:
        return _write_out("renorm", lambda: renorm(input, p, dim, maxnorm), out, (input,))
    return _apply(_renorm, (input,), _renorm_args(input, p, dim, maxnorm))


@public(method=False)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between x1 and x2 (broadcast) along dim, each divided by its norm (at least eps)
    first, as torch's composite: norms, clones clamped without grad, divisions, product, sum."""
    common = _dtype._result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{_type_word(common._np)}")
    if x1._data.dtype.kind in "biu":
        x1 = x1.to(common)
    if x2._data.dtype.kind in "biu":
        x2 = x2.to(common)
    if tuple(x1.shape) != tuple(x2.shape):
        shape = _broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
        x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = _linalg_vector_norm(x1, 2, dim, True).clone()
    n2 = _linalg_vector_norm(x2, 2, dim, True).clone()
    with _grad_mode.no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


# ----- unfold (a view), apply_ / map_ (Python callables on the host), memory no-ops ------------------------------
@op("UnfoldBackward0", save=(), attrs=("dimension", "self_sym_sizes", "size", "step"), unsigned=("dimension",))
def _unfold(self, *, dimension, size, step):
    if not self.ndim:
        return self.reshape(1)
    d = dimension % self.ndim
    starts = jnp.arange((self.shape[d] - size) // step + 1) * step
    windows = jnp.take(self, starts[:, None] + jnp.arange(size), axis=d)  # d -> (windows, size)
    return jnp.moveaxis(windows, d + 1, -1)


@_unfold.derivative
def _(grad, self_shape, dimension, size, step):
    if not self_shape:
        return grad.reshape(())
    d = dimension % len(self_shape)
    starts = jnp.arange((self_shape[d] - size) // step + 1) * step
    pos = (starts[:, None] + jnp.arange(size)).reshape(-1)
    g = jnp.moveaxis(grad, -1, d + 1)
    g = g.reshape(g.shape[:d] + (-1,) + g.shape[d + 2:])
    return jnp.zeros(self_shape, grad.dtype).at[(slice(None),) * d + (pos,)].add(g)


@_rule(_unfold)
def _(sizes, strides, offset, dimension, size, step):
    if not sizes:
        return (size,), (1,), offset
    d = dimension % len(sizes)
    n = (sizes[d] - size) // step + 1
    return (sizes[:d] + (n,) + sizes[d + 1:] + (size,), strides[:d] + (strides[d] * step,) + strides[d + 1:] +
            (strides[d],), offset)


@public(function=False)
def unfold(self, dimension, size, step):
    """A view of all windows of ``size`` elements, ``step`` apart, along ``dimension``, as a new last dim
    (UnfoldBackward0)."""
    d = _wrap_dim(dimension, self.ndim)
    length = self.shape[d] if self.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view_apply(_unfold, self, (int(dimension), int(size), int(step)))


_PY_TYPE = {"b": bool, "i": int, "u": int, "f": float, "V": float, "c": complex}  # ("V": bfloat16)


def _to_number(kind, value):
    """A callable's result as torch unpacks it into an element of the given kind (TypeError as torch's)."""
    if kind in "biu":
        return int(value) if isinstance(value, float) else operator.index(value)
    if kind in "fV" and not isinstance(value, (int, float, np.number)):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    return value


def _host_map(self, fn, arrays, name):
    """``fn`` run on each element (Python numbers) of the arrays; the results written into self (no version bump,
    no autograd: torch refuses tensors that require grad)."""
    kind = self._data.dtype.kind
    values = [[_PY_TYPE[kind](v) for v in np.asarray(a).reshape(-1).tolist()] for a in arrays]
    out = np.array([_to_number(kind, fn(*vs)) for vs in zip(*values)], dtype=self._data.dtype)
    version = self._version
    with _grad_mode.no_grad():
        self.copy_(_wrap(jnp.asarray(out.reshape(self.shape))))
    self._version_counter().version = version
    return self


@public(function=False)
def apply_(self, callable):  # noqa: A002 - torch's name
    """Replace each element by ``callable(element)``, on the host (CPU tensors in torch); no autograd."""
    if self._requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use var.detach().apply_() instead.")
    return _host_map(self, callable, [self._data], "apply_")


@public(function=False)
def map_(self, other, callable):  # noqa: A002 - torch's name
    """Replace each element by ``callable(element, other's element)`` (other broadcast to self), on the host."""
    tensor = other
    if self._requires_grad or tensor._requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use var.detach().map_() instead.")
    if tensor._data.dtype != self._data.dtype:
        raise TypeError(f"map_: expected {_legacy_name(self)} for 'other' (got {_legacy_name(tensor)})")
    return _host_map(self, callable, [self._data, tensor.expand(self.shape)._data], "map_")


def _legacy_name(t):
    return "torch." + _type_string(t._data.dtype)[6:]


@public(function=False)
def pin_memory(self, device=None):
    """torch without an accelerator cannot pin memory."""
    if device is not None:
        _device(device)
    raise RuntimeError("Cannot access accelerator device when none is available.")


@public(function=False)
def is_pinned(self, device=None):
    """False: no pinned memory without an accelerator."""
    if device is not None:
        _device(device)
        warnings.warn("The argument 'device' of Tensor.is_pinned() is deprecated. Please do not pass this argument.",
                      DeprecationWarning, stacklevel=2)
    return False


@public(function=False)
def share_memory_(self):
    """Marks the storage shared (torch moves it to shared memory); returns self."""
    (self._base if self._base is not None else self)._shared = True
    return self


@public(function=False)
def is_shared(self):
    """Whether share_memory_ was called on this tensor's storage."""
    return getattr(self._base if self._base is not None else self, "_shared", False)

