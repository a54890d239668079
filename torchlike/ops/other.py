"""torch's "other operations": tril/triu, diag/diag_embed/diagflat, trace, roll, rot90, tile, broadcast_to /
broadcast_tensors / broadcast_shapes, atleast_1d/2d/3d, hstack/vstack/dstack/column_stack/row_stack, meshgrid,
cartesian_prod, kron, cross, diff, cumprod, logcumsumexp, nan_to_num, count_nonzero, dist. Ops with a node of their
own in torch are table entries; torch's composites are built from the table's ops, so they record torch's nodes."""
import collections.abc
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Size, Tensor, _wrap_dim
from . import _layout
from ._registry import op, _apply, _apply_inplace
from ._bind import public
from .pointwise import sub, logical_xor, mul
from .shape import cat, stack, expand, reshape, unsqueeze, _unsafe_view, _diagonal, _norm


def _tensors(args, name):
    """The tensors of ``f(t1, t2, ...)`` or ``f([t1, t2, ...])`` (wrong types: the binding's guard names them)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for i, t in enumerate(args):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                            f"{type(t).__name__}")
    return tuple(args)


def _sequence(tensors, name):
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    return _tensors((tensors,), name)


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
        result = _apply(entry, (input,), (int(diagonal),))
        return result if out is None else out.copy_(result)
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
    if input.ndim == 1:
        result = _apply(_diag_embed, (input,), (int(diagonal), -2, -1))
    elif input.ndim == 2:
        result = _apply(_diagonal_copy, (input,), (int(diagonal), 0, 1))
    else:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.ndim}D")
    return result if out is None else out.copy_(result)


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
@op("RollBackward0", save=(), attrs=("dims", "shifts"), unsigned=("dims", "shifts"))
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
    return _apply(_roll, (input,), (shifts, dims))


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
    ts = atleast_1d(*_sequence(tensors, "hstack"))
    ts = (ts,) if isinstance(ts, Tensor) else ts
    result = cat(ts, 0 if ts[0].ndim == 1 else 1)
    return result if out is None else out.copy_(result)


@public(method=False, aliases=("row_stack",))
def vstack(tensors, *, out=None):
    """Concatenate along the first dim (after ``atleast_2d``)."""
    ts = atleast_2d(*_sequence(tensors, "vstack"))
    result = cat((ts,) if isinstance(ts, Tensor) else ts, 0)
    return result if out is None else out.copy_(result)


@public(method=False)
def dstack(tensors, *, out=None):
    """Concatenate along the third dim (after ``atleast_3d``)."""
    ts = atleast_3d(*_sequence(tensors, "dstack"))
    result = cat((ts,) if isinstance(ts, Tensor) else ts, 2)
    return result if out is None else out.copy_(result)


@public(method=False)
def column_stack(tensors, *, out=None):
    """0-d and 1-D inputs as columns, then concatenated along the second dim."""
    ts = [t.reshape(t.numel(), 1) if t.ndim <= 1 else t for t in _sequence(tensors, "column_stack")]
    result = cat(ts, 1)
    return result if out is None else out.copy_(result)


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
    nd = max(input.ndim, other.ndim)
    a = (1,) * (nd - input.ndim) + tuple(input.shape)
    b = (1,) * (nd - other.ndim) + tuple(other.shape)
    a_shape, b_shape = [], []
    for sa, sb in zip(a, b):
        a_shape += [sa, 1]
        b_shape += [1, sb]
    result = _apply(_unsafe_view, (mul(_apply(_unsafe_view, (input,), (tuple(a_shape),)),
                                       _apply(_unsafe_view, (other,), (tuple(b_shape),))),),
                    (tuple(sa * sb for sa, sb in zip(a, b)),))
    return result if out is None else out.copy_(result)


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
    result = _apply(_cross, (input, other), (int(dim),))
    return result if out is None else out.copy_(result)


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


# ----- cumprod, logcumsumexp, nan_to_num, count_nonzero, dist ---------------------------------------------------
@op("CumprodBackward0", save=("self", "result"), attrs=("dim",), unsigned=("dim",))
def _cumprod(self, *, dim, dtype):
    return jnp.cumprod(self.astype(dtype), axis=_norm(dim, self.ndim)) if self.ndim else self.astype(dtype)


@public
def cumprod(input, dim, *, dtype=None, out=None):
    """Running products along ``dim`` (integers and bools accumulate in int64, as torch's)."""
    _wrap_dim(dim, input.ndim)
    np_dtype = (_dtype.to_dtype(dtype)._np if dtype is not None
                else np.int64 if input._data.dtype.kind in "biu" else input._data.dtype)
    result = _apply(_cumprod, (input,), (int(dim), np.dtype(np_dtype)))
    return result if out is None else out.copy_(result)


@op("LogcumsumexpBackward0", save=("self", "result"), attrs=("dim",), unsigned=("dim",))
def _logcumsumexp(self, *, dim):
    return jax.lax.cumlogsumexp(self, axis=_norm(dim, self.ndim)) if self.ndim else self


@public
def logcumsumexp(input, dim, *, out=None):
    """log(cumsum(exp(input))) along ``dim``, computed stably."""
    _wrap_dim(dim, input.ndim)
    result = _apply(_logcumsumexp, (input,), (int(dim),))
    return result if out is None else out.copy_(result)


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
    return _apply_inplace(_nan_to_num, self, (self,), _nan_to_num_values(self, nan, posinf, neginf))


@public(inplace=_nan_to_num_)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: 0, the dtype's largest and
    lowest finite values)."""
    if input._data.dtype.kind in "biu":
        result = input.clone()
    else:
        result = _apply(_nan_to_num, (input,), _nan_to_num_values(input, nan, posinf, neginf))
    return result if out is None else out.copy_(result)


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
