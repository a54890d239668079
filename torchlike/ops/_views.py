"""Views by functionalization: torch's shared-storage semantics on immutable JAX arrays.

torch's views share memory with their base; JAX arrays cannot. Here a *storage* holds one array (the data
of the tensor first viewed or detached); every tensor sharing it (the base, its views, ``detach()``-ed
aliases) is a *member* with a geometry ``(sizes, strides, storage_offset)`` into that array, computed by
torch's stride rules (so ``stride()``, ``is_contiguous()`` and ``view``'s "not compatible" error are
torch's). Each member keeps its own materialised ``_data`` (so reading a tensor stays one attribute
load); an in-place write to any member writes through its geometry into the storage array and
re-reads every other live member from it. Members share one version counter. A view_as_real (view_as_complex)
member reads a complex (real) storage array as real pairs (complex numbers): its geometry counts its own elements.
A result laid out other than row-major (ops/_layout.py) has a geometry before it has a storage: its storage array
is made from it when first needed.

Autograd follows torch: an in-place op on a view records the op's node ``fn`` and wraps it in a
``CopySlices`` node that becomes the base's ``grad_fn`` (its backward hands ``fn`` the gradient's slice
and writes ``fn``'s result back into it); after any write, every view of the storage whose base
requires grad gets a fresh ``AsStridedBackward0`` node on top of the base's current ``grad_fn``, as torch
regenerates it (hooks stay on the old node; ``retain_grad`` follows the tensor). Views whose chain from the base has
a conj() or a change of element type have no geometry in the base's elements: their chain of steps (``_vfn``) is
replayed instead, for their regenerated node and for CopySlices.
"""
import functools
import itertools
import math
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _grad_mode as _gm
from .._graph import Node, _ALL_FREED, _FREED_MSG
from .._tensor import Tensor, _NO_VC, _contiguous_strides, _new, _seq_counter, _type_string, _wrap
from ._registry import op, _apply, _check_inplace, _check_autograd_inplace
from ._bind import public
from . import _layout
from ._record import new_node, record, refuse_grads, set_history


# ----- storage ---------------------------------------------------------------------------------------------
class _Storage:
    __slots__ = ("data", "members", "address")

    def __init__(self, owner):
        g = owner._sgeom  # a laid-out result (ops/_layout.py): its values in memory order
        self.data = owner._data if g is None else _layout.physical(owner._data, g[1])
        self.members = [weakref.ref(owner)]
        self.address = None  # what data_ptr() shows (ops/storage.py), given on first ask


def _storage_of(t):
    s = t._storage
    if s is None:
        s = t._storage = _Storage(t)
    return s


def _join(t, storage, geom):
    """Make ``t`` a member of ``storage`` at ``geom`` (None: the whole storage array)."""
    t._storage = storage
    t._sgeom = geom
    members = storage.members
    if len(members) > 64 and len(members) & (len(members) - 1) == 0:  # prune dead members now and then
        members[:] = [r for r in members if r() is not None]
    members.append(weakref.ref(t))


def _geom_of(t):
    """``t``'s (sizes, strides, offset) in its storage (contiguous at 0 when it has none)."""
    g = t._sgeom
    if g is None:
        shape = t._data.aval.shape
        return shape, _contiguous_strides(shape), 0
    return g


def _detach_alias(t, out):
    """``out`` shares ``t``'s storage and version counter (``detach()``)."""
    _join(out, _storage_of(t), t._sgeom)
    if t._conj:
        out._conj = True
    if out._is_inference or t._is_inference:
        return _inference_alias(t, out)
    out._vc = t._version_counter()
    return out


def _view_dtype(t, dtype):
    """torch's view(dtype): the same bytes read as ``dtype`` (a NumPy dtype), sharing t's storage and version
    counter, without history and not a view in autograd's sense (``_base`` None, as torch's). When the element size
    changes, the last dimension stretches or shrinks by the ratio, under torch's conditions."""
    if t._conj:
        raise RuntimeError("torch.Tensor.view is not supported for conjugate view tensors when converting to a "
                           "different dtype.")
    sizes, strides, offset = _geom_of(t)
    old = t._data.dtype
    names = f"{_type_string(old)[6:-6]} as {_type_string(dtype)[6:-6]} (different element sizes)"
    if old.itemsize != dtype.itemsize and not sizes:
        raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
    if old.itemsize > dtype.itemsize:
        ratio = old.itemsize // dtype.itemsize
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
        geom = (sizes[:-1] + (sizes[-1] * ratio,), tuple(s * ratio for s in strides[:-1]) + (1,), offset * ratio)
    elif old.itemsize < dtype.itemsize:
        ratio = dtype.itemsize // old.itemsize
        for what, value in (("size(-1)", sizes[-1]), ("storage_offset()", offset)):
            if value % ratio:
                raise RuntimeError(f"self.{what} must be divisible by {ratio} to view {names}, but got {value}")
        if strides[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got {strides[-1]}")
        for i, s in enumerate(strides[:-1]):
            if s % ratio:
                raise RuntimeError(f"self.stride({i}) must be divisible by {ratio} to view {names}, but got {s}")
        geom = (sizes[:-1] + (sizes[-1] // ratio,), tuple(s // ratio for s in strides[:-1]) + (1,), offset // ratio)
    else:
        geom = t._sgeom if dtype == old else (sizes, strides, offset)
    storage = _storage_of(t)
    data = storage.data if geom is None else _run(_as_strided, geom, _retyped(storage.data, dtype))
    out = _wrap(_same_size_bits(data, dtype))
    _join(out, storage, geom)
    if out._is_inference or t._is_inference:
        return _inference_alias(t, out)
    out._vc = t._version_counter()
    return out


def _inference_alias(t, out):
    """detach() / .data of or in inference mode: an inference tensor only of an inference tensor; outside inference
    mode it has a version counter of its own again (torch)."""
    out._is_inference = t._is_inference
    out._vc = None if not _gm._state.inference else _NO_VC if t._is_inference else t._version_counter()
    return out


def _get_data(self):
    """A tensor sharing self's storage with no history; unlike detach(), with its own version counter
    (so ``p.data.add_(...)`` changes ``p`` without autograd noticing, as in torch)."""
    t = _wrap(self._data)
    _join(t, _storage_of(self), self._sgeom)
    if self._conj:
        t._conj = True
    if self._dist_place is not None:  # a DTensor's .data is a DTensor
        self._dist_place(t)
    if t._is_inference or self._is_inference:
        _inference_alias(self, t)
        if not self._is_inference:
            t._vc = None
    return t


def _set_data(self, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    self._data = value._data
    if self._storage is not None:  # self now has its own storage; its old views keep the old one
        self._storage.members = [r for r in self._storage.members if r() is not self]
        self._storage = None
    self._sgeom = value._sgeom if value._storage is None else None  # (a dense result keeps its strides, as torch's)


public(_get_data, name="data", function=False, method=property(_get_data, _set_data))


def _laid_out(t, memory, strides):
    """Give the fresh tensor ``t`` torch's layout ``strides``: its storage holds ``memory`` (its elements in
    memory order), e.g. nonzero's column-major result."""
    storage = _Storage(t)
    storage.data = memory
    storage.members = []
    _join(t, storage, (t._data.aval.shape, tuple(strides), 0))
    return t


# ----- reading and writing through a geometry ------------------------------------------------------------
def _flat_index(size, stride, offset):
    idx = jnp.full(size, offset, jnp.int64)
    for d, s in enumerate(stride):
        if size[d] > 1 and s:
            idx = idx + jax.lax.broadcasted_iota(jnp.int64, size, d) * s
    return idx


@op("AsStridedBackward0", save=(), attrs=("size", "stride", "storage_offset"), dynamic=("storage_offset",))
def _as_strided(self, *, size, stride, storage_offset):
    return jnp.take(self.reshape(-1), _flat_index(size, stride, storage_offset))


@_as_strided.derivative
def _(grad, self_shape, size, stride, storage_offset):
    flat = jnp.zeros(math.prod(self_shape), grad.dtype)
    return flat.at[_flat_index(size, stride, storage_offset).reshape(-1)].add(grad.reshape(-1)).reshape(self_shape)


def _scatter_at(self, src, positions):
    """``self`` with ``src`` written at the flat ``positions`` (an array shaped as src) of its row-major elements: the
    forward of the *_scatter ops, each giving the positions of its view."""
    idx = positions.reshape(-1)
    return self.reshape(-1).at[idx].set(src.reshape(-1).astype(self.dtype)).reshape(self.shape)


def _scatter_grads(grad, positions):
    """The *_scatter ops' gradients: grad with the written positions zeroed (self's), grad read there (src's)."""
    flat = grad.reshape(-1)
    return flat.at[positions.reshape(-1)].set(0).reshape(grad.shape), jnp.take(flat, positions)


@op("AsStridedScatterBackward0", save=(), attrs=("size", "stride", "storage_offset"),
    dynamic=("storage_offset",))
def _as_strided_scatter(self, src, *, size, stride, storage_offset):
    return _scatter_at(self, src, _flat_index(size, stride, storage_offset))


@_as_strided_scatter.derivative
def _(grad, size, stride, storage_offset):
    return _scatter_grads(grad, _flat_index(size, stride, storage_offset))


@op("ConjBackward0", save=())
def _conj(self):
    """conj() of a complex tensor: a view that reads its storage conjugated (torch's conj bit, ``_conj``)."""
    return jnp.conj(self)


_conj.derivative(lambda grad: jnp.conj(grad))


def _run(entry, statics, *arrays):
    fwd = entry._fwd.get(statics) or entry._compile_forward(statics)
    return fwd(*arrays)


@functools.partial(jax.jit, static_argnums=(3, 4))
def _scatter_changed(flat, old, new, size, stride, storage_offset):
    """Write into the storage only the elements ``new`` changed: where several elements share one storage
    element (an expanded tensor), the one written wins, as in torch's write through memory."""
    idx = jnp.where((new != old).reshape(-1), _flat_index(size, stride, storage_offset).reshape(-1), flat.size)
    return flat.reshape(-1).at[idx].set(new.reshape(-1), mode="drop").reshape(flat.shape)


def _bits_as(flat, dtype):
    """A flat array's bytes read as ``dtype`` (a flat array: little-endian, as torch's memory on its CPUs)."""
    dtype = np.dtype(dtype)
    if flat.dtype == dtype:
        return flat
    if flat.dtype.kind == "c":  # (XLA bitcasts no complex values: their real pairs first)
        flat = jnp.stack([jnp.real(flat), jnp.imag(flat)], -1).reshape(-1)
    if dtype.kind == "c":
        pairs = _bits_as(flat, np.finfo(dtype).dtype)
        return jax.lax.complex(pairs[0::2], pairs[1::2])
    if flat.dtype == np.bool_:  # (nor bool: its bytes are 0 and 1)
        flat = flat.astype(np.uint8)
    if dtype == np.bool_:
        return _bits_as(flat, np.uint8) != 0
    if flat.dtype.itemsize < dtype.itemsize:
        flat = flat.reshape(-1, dtype.itemsize // flat.dtype.itemsize)
    return jax.lax.bitcast_convert_type(flat, dtype).reshape(-1)


def _held(dtype):
    """The type a member of a storage of another type is read and written in: complex as itself, else its bits as an
    unsigned integer of its size (XLA's CPU gathers and scatters of half types go through float32, which would not
    keep a NaN's bytes)."""
    return dtype if dtype.kind == "c" else np.dtype(f"uint{8 * dtype.itemsize}")


def _same_size_bits(x, dtype):
    """``x``'s elements read as ``dtype`` of the same size (bool as its byte)."""
    if x.dtype == dtype:
        return x
    if dtype == np.bool_:
        return x != 0
    return x.astype(dtype) if x.dtype == np.bool_ else jax.lax.bitcast_convert_type(x, dtype)


def _retyped(data, dtype):
    """The storage array as a flat array of a member's element type, where a member of another type (view_as_real,
    view_as_complex, view(dtype)) reads its bytes (in ``_held(dtype)``; its geometry counts elements of its own
    type); else as it is."""
    return data if data.dtype == dtype else _bits_as(data.reshape(-1), _held(dtype))


def _untyped(flat, like):
    """The inverse of ``_retyped``: a member-typed flat array as a storage array like ``like``."""
    return flat if flat.dtype == like.dtype else _bits_as(flat, like.dtype).reshape(like.shape)


def _read(m, data):
    """Member ``m``'s values in storage array ``data``."""
    g = m._sgeom
    out = data if g is None else _run(_as_strided, g, _retyped(data, m._data.dtype))
    out = _same_size_bits(out, m._data.dtype)
    return jnp.conj(out) if m._conj else out


def _write(t, data, old=None):
    """Write ``data`` (t's new values; ``old``: its values before, if t already holds ``data``) into t's storage
    and refresh every other live member."""
    storage = t._storage
    geom = t._sgeom
    raw = jnp.conj(data) if t._conj else data  # what the storage holds
    held = _retyped(storage.data, raw.dtype) if geom is not None else None
    if held is not None and held.dtype != raw.dtype:  # (a member of another storage type: written as its bits)
        raw, old = _same_size_bits(raw, held.dtype), None if old is None else _same_size_bits(old, held.dtype)
    if geom is None:
        storage.data = raw
    elif _aliased(geom):
        old = t._data if old is None else old
        storage.data = _untyped(_scatter_changed(held, jnp.conj(old) if t._conj else old, raw, *geom), storage.data)
        data = _read(t, storage.data)  # what every element sharing the memory now holds
    else:
        storage.data = _untyped(_run(_as_strided_scatter, geom, held, raw), storage.data)
    t._data = data
    live = []
    for ref in storage.members:
        m = ref()
        if m is None:
            continue
        live.append(ref)
        if m is not t:
            m._data = _read(m, storage.data)
    storage.members = live


_write_watch = None  # while a torchlike.func transform runs: fn(tensor, new data or grad, "data" or "grad")


def _commit(t, data):
    """An in-place write without autograd: new data, version bump, views updated."""
    if _write_watch is not None:
        _write_watch(t, data, "data")
    if t._storage is None:
        t._data = data
        t._version_counter().version += 1
        return
    _write(t, data)
    t._version_counter().version += 1
    _regenerate(t._storage)


def _write_quiet(t, data):
    """New values into t without a version bump (as torch's batch_norm kernels update running stats)."""
    if _write_watch is not None:
        _write_watch(t, data, "data")
    if t._storage is None:
        t._data = data
    else:
        _write(t, data)
        _regenerate(t._storage)


def _after_record(t, old):
    """After ``_record`` wrote an in-place result into a non-view member (``old``: its data before): propagate
    it to the views."""
    _write(t, t._data, old)
    _regenerate(t._storage)


def _set_grad_fn(t, node):
    """Rebind t's grad_fn; ``retain_grad`` follows the tensor, hooks stay on the old node (torch)."""
    if t._retains_grad and t._grad_fn is not None and t._grad_fn._retains_grad:
        t._grad_fn._retains_grad.pop(t._output_nr, None)
        node._retains_grad = {0: weakref.ref(t)}
    t._grad_fn = node
    t._output_nr = 0
    t._requires_grad = True


def _regenerate(storage, skip=None):
    """After a write: each view whose base requires grad reads the base again (AsStridedBackward0); ``skip``: a
    view that already has its new node (torch's set_history after an in-place view op)."""
    for ref in storage.members:
        v = ref()
        if v is None or v is skip or v._base is None or (v._ageom is None and v._vfn is None):
            continue
        base = v._base
        if v._grad_fn is None and not base._requires_grad:
            continue
        if v._view_meta is not None:  # torch refuses to rebuild these: reading grad_fn (or using v) raises
            if v._view_error is None:
                v._view_error = (_view_error(v, indirect=True), _view_error(v), v._grad_fn is not None)
                v._grad_fn, v._output_nr, v._requires_grad = None, 0, True
            continue
        if v._vfn is not None:  # torch replays a chain with conj() (it has no strided form)
            node = _replay(v, base)
        else:
            node = new_node(_as_strided, (base,), (base._data,), v._ageom, (v._data.aval,))
        _set_grad_fn(v, node)


# ----- in-place view ops: new geometry for the same storage ----------------------------------------------
def _restride(t, entry, statics, geom=None):
    """torch's in-place view ops (unsqueeze_, t_, as_strided_, ...): ``t`` itself takes the geometry of
    ``entry(t)`` (``geom``: as_strided_'s, in its storage), a version bump, and when it has history ``entry``'s node
    (set on ``t`` itself, a view too: no CopySlices). Its views keep their storage geometry."""
    _check_autograd_inplace(t)
    old = t._data
    strided = geom is not None
    if not strided:
        geom = _view_geometry(entry, t, statics)
        data = _run(entry, statics, old)
        t._sgeom = geom if t._storage is not None else _layout._geometry(geom[0], geom[1])  # (offset 0)
    else:
        storage = _storage_of(t)
        t._sgeom = geom
        data = _read(t, storage.data)
    base = t._base
    if base is not None:  # its geometry in its base's elements
        if strided:
            t._vfn, t._ageom = None, _in_base(base, geom) if t._ageom is not None else None
        elif t._vfn is not None:
            t._vfn = next(iter(_chain(entry, t, statics, False)))
        elif t._ageom is not None:
            t._ageom = _rules[entry](*t._ageom, *statics)
    elif t._storage is not None:
        for ref in t._storage.members:  # its views' geometry in its elements, which moved
            m = ref()
            if m is not None and m._base is t:
                m._vfn, m._ageom = None, _in_base(t, m._sgeom) if m._ageom is not None or m._vfn else None
    if _gm._state.grad_enabled and t._requires_grad:
        record(entry, (t,), (old,), statics, (data,), inplace=t)
    else:
        t._data = data
        t._version_counter().version += 1
    if t._storage is not None:
        _regenerate(t._storage, skip=t)
    tangent = t._fw_tangent
    if tangent is not None:
        _restride(tangent, entry, statics, geom)
    return t


def _in_base(base, geom):
    """Storage geometry ``geom`` in ``base``'s elements (row-major), or None when no strides express it there."""
    if base._sgeom is None:
        return geom
    numel = math.prod(geom[0])
    if not numel:
        return geom[0], _contiguous_strides(geom[0]), 0
    at = np.full(base._storage.data.size, -1)
    at[np.asarray(_flat_index(*_geom_of(base))).reshape(-1)] = np.arange(math.prod(base._sgeom[0]))
    idx = at[np.asarray(_flat_index(*geom))]
    offset = int(idx.reshape(-1)[0])
    strides = tuple(int(idx[(0,) * d + (1,)].reshape(-1)[0]) - offset if n > 1 else 0 for d, n in enumerate(geom[0]))
    if (idx < 0).any() or not (np.asarray(_flat_index(geom[0], strides, offset)) == idx).all():
        return None
    return geom[0], strides, offset


# ----- making views -------------------------------------------------------------------------------------
_rules = {}


def _rule(*entries):
    """Register the stride rule of view ops: ``rule(sizes, strides, offset, *statics) -> geom(s) or None``."""
    def deco(fn):
        for e in entries:
            _rules[e] = fn
        return fn
    return deco


def _view_geometry(entry, input, statics):
    """The geometry (or tuple of them) of ``entry(input)`` in input's storage; None if it cannot view."""
    return _rules[entry](*_geom_of(input), *statics)


def _view_apply(entry, input, statics, geom=None):
    """Run a view op: the output(s) join input's storage, share its version counter, and get ``_base``."""
    if geom is None:
        geom = _view_geometry(entry, input, statics)
    out = _apply(entry, (input,), statics)
    multi = entry._tuple_out
    outs = out if multi else (out,)
    geoms = geom if multi else (geom,)
    storage = _storage_of(input)
    vc = input._version_counter()
    base = input._base if input._base is not None else input
    if entry in _RETYPING or input._vfn is not None and any(s in _RETYPING for s in input._vfn):
        ageoms = (None,) * len(outs)  # (no geometry in the base's elements: no CopySlices, see _check_view_inplace)
    elif base._sgeom is None:  # the base is the whole storage: geometry in base == geometry in storage
        ageoms = geoms
    else:
        parent = input._ageom if input._base is not None else None
        if parent is None and input._base is not None:
            ageoms = (None,) * len(outs)
        else:
            shape = input._data.aval.shape
            parent = parent or (shape, _contiguous_strides(shape), 0)
            ageoms = _rules[entry](*parent, *statics)
            ageoms = ageoms if multi else (ageoms,)
    if entry is _conj or entry in _RETYPING or input._vfn is not None:  # a conj() or retyping in the chain
        for o, chain in zip(outs, _chain(entry, input, statics, multi)):
            o._vfn = chain
            o._conj = input._conj is not (entry is _conj)
    state = _gm._state
    if state.inference or input._is_inference:
        _inference_views(input, outs, storage, geoms, vc, base, ageoms)
        return out
    meta = ("multi" if multi else None) if state.grad_enabled else "no_grad"
    prev = input._view_meta  # torch's propagate_creation_meta
    if meta is None or prev == "inference":
        meta = prev
    rg = base._requires_grad
    for o, g, ag in zip(outs, geoms, ageoms):
        _join(o, storage, g)
        o._vc = vc
        o._base = base
        o._ageom = ag
        o._view_meta = meta
        if rg:  # made without history (no_grad): requires grad as long as its base does
            o._requires_grad = True
    return out


def _chain(entry, input, statics, multi):
    """torch's view_fn of views whose chain from the base has a conj() or a view_as_real / view_as_complex: ("conj",
    one of these entries, or a geometry) steps, each applied to the previous step's result (consecutive strided views
    merged); it is replayed when they are regenerated."""
    steps = input._vfn
    if steps is None:
        if input._base is not None and input._ageom is None:  # no geometry in the base (see _check_view_inplace)
            return itertools.repeat(None)
        steps = () if input._base is None else (input._ageom,)
    if entry is _conj or entry in _RETYPING:
        return [steps + ("conj" if entry is _conj else entry,)]
    if steps and isinstance(steps[-1], tuple):
        geoms = _rules[entry](*steps[-1], *statics)
        steps = steps[:-1]
    else:
        shape = input._data.aval.shape
        geoms = _rules[entry](shape, _contiguous_strides(shape), 0, *statics)
    return [steps + (g,) for g in (geoms if multi else (geoms,))]


def _replay(v, base):
    """The node of view ``v`` regenerated from its base by replaying its chain (ConjBackward0, AsStridedBackward0)."""
    src, aval = base, base._data.aval
    for step in v._vfn:
        if step in _RETYPING:
            out = jax.eval_shape(step.forward, aval)
            node = new_node(step, (src,), (_Aval(aval),), (), (aval.update(shape=out.shape, dtype=out.dtype),))
            src, aval = _new(Tensor), aval.update(shape=out.shape, dtype=out.dtype)
            set_history(src, node, 0)
            continue
        out = aval if step == "conj" else aval.update(shape=step[0])
        node = new_node(_conj if step == "conj" else _as_strided, (src,), (_Aval(aval),), () if step == "conj" else
                        step, (out,))
        src, aval = _new(Tensor), out  # stands for the step's result: only its node is read
        set_history(src, node, 0)
    return node


class _Aval:
    """Stands for an array of which only the aval is read (nodes made without computing anything)."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval


def _inference_views(input, outs, storage, geoms, vc, base, ageoms):
    """Views made in inference mode (of a normal tensor: normal tensors, torch's CreationMeta INFERENCE_MODE) or of an
    inference tensor (inference tensors that torch does not track as views: no base, no version counter)."""
    for o, g, ag in zip(outs, geoms, ageoms):
        _join(o, storage, g)
        if input._is_inference:
            o._is_inference = True
            o._vc = _NO_VC
            o._grad_fn, o._requires_grad, o._output_nr = None, False, 0
        else:
            o._is_inference = False
            o._vc = vc
            o._base = base
            o._ageom = ag
            o._view_meta = "inference"
            o._requires_grad = base._requires_grad


# ----- in-place on a view: CopySlices -------------------------------------------------------------------
_MODE_VIEW_MSG = (
    " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving "
    "both the view and the inplace either both inside the {} block (if you don't want the inplace to be tracked) or "
    "both outside (if you want the inplace to be tracked).")
_VIEW_MSG_TAIL = {  # torch's handle_view_on_rebase, by creation meta
    "no_grad": _MODE_VIEW_MSG.format("no_grad"),
    "inference": _MODE_VIEW_MSG.format("inference_mode"),
    "multi": " This view is the output of a function that returns multiple views. Such functions do not allow the "
             "output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
    "custom": " This view was created inside a custom Function (or because an input was returned as-is) and the "
              "autograd logic to handle view+inplace would override the custom backward associated with the custom "
              "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the "
              "output of the custom Function.",
}
_EXPANDED_WRITE_MSG = (
    "Use of {} on expanded tensors is deprecated. Please clone() the tensor before performing this operation. This "
    "also applies to advanced indexing e.g. tensor[{}] = {}")
_OVERLAP_MSG = (
    "unsupported operation: more than one element of the written-to tensor refers to a single memory location. "
    "Please clone() the tensor before performing the operation.")


def _view_error(view, indirect=False):
    """torch's message (handle_view_on_rebase) for modifying a view made in no_grad or inference mode, by a
    multi-output op or in a custom Function (``indirect``: its base or another view was modified)."""
    meta = view._view_meta
    node = view._grad_fn
    name = node.name()[:node.name().rfind("Backward")] if node is not None else None
    what = "its base or another view of its base has been" if indirect else "is being"
    if meta in ("no_grad", "inference") or node is None:
        prefix = (f"Output {view._output_nr} of {name} is a view of a view which was created in" if node is not None
                  else "A view was created in")
        msg = (f"{prefix} inference mode and {what} modified inplace in normal mode." if meta == "inference" else
               f"{prefix} no_grad mode and {what} modified inplace with grad mode enabled.")
    else:
        msg = f"Output {view._output_nr} of {name} is a view and {what} modified inplace."
    return msg + _VIEW_MSG_TAIL[meta]


def _check_view_inplace(target):
    """torch's checks for an in-place op on a view that autograd records (before anything changes)."""
    if target._view_error is not None:
        raise RuntimeError(target._view_error[1])
    if target._view_meta is not None:
        raise RuntimeError(_view_error(target))
    if target._requires_grad and target._base._grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    if target._ageom is None and target._vfn is None:
        raise NotImplementedError("in-place on a view that torchlike cannot express in its base's layout (a view "
                                  "of a detached non-contiguous tensor); clone() it first")


def _overlaps(geom):
    """Whether a geometry reaches one storage element from several of its elements (an expanded tensor)."""
    return geom is not None and any(s == 0 and n > 1 for n, s in zip(geom[0], geom[1])) and 0 not in geom[0]


def _aliased(geom):
    """Whether some storage element is reached from several elements of a geometry (expanded, or windows that
    overlap such as unfold's): sorted by stride, each dim must step past everything the smaller ones reach."""
    if geom is None or 0 in geom[0]:
        return False
    reach = 0
    for s, n in sorted((s, n) for n, s in zip(geom[0], geom[1]) if n > 1):
        if s <= reach:
            return True
        reach += s * (n - 1)
    return False


def _check_overlap(target, allowed=None):
    """torch's refusal to write into a tensor whose elements share memory. ``allowed``: the names of the ops
    (fill_/zero_: none; masked_fill_, index_put_: each warns) torch still lets write into one; the write then
    reaches every element that shares the memory (backward through it to the base raises: see CopySlices)."""
    if not _overlaps(target._sgeom):
        return
    if allowed is None:
        raise RuntimeError(_OVERLAP_MSG)
    for name in allowed:
        warnings.warn(_EXPANDED_WRITE_MSG.format(name, *(("indices", "tensor") if name == "index_put_" else
                                                         ("mask", "scalar"))), UserWarning, stacklevel=4)


_INPUT_OVERLAP_MSG = (
    "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory "
    "location. Please clone() the tensor before performing the operation.")
# in-place table entries whose callers check their inputs themselves (the index ops refuse any overlap, torch reads
# a fill value with item()); _apply_inplace checks every other entry's inputs as TensorIterator does
_OWN_INPUT_CHECK = set()


def _dense(sizes, strides):
    """torch's is_non_overlapping_and_dense."""
    expected = 1
    for stride, n in sorted((st, n) for n, st in zip(sizes, strides) if n != 1):
        if stride != expected:
            return False
        expected *= n
    return True


def _check_input_overlap(target, inputs, strict=False, steps=()):
    """torch's refusal to write into ``target`` (``steps``: into its part ``target[...]``, basic index steps as
    ``_view_geometry`` takes them) from an input sharing memory with it: where the two overlap partly
    (TensorIterator's assert_no_partial_overlap), or at all (``strict``: the index ops' assert_no_overlap).
    As torch, tensors that are not dense and non-overlapping (expanded, strided) are not checked."""
    storage = target._storage
    for t in inputs:
        if t is target and not steps:
            full = True
        elif storage is None or not isinstance(t, Tensor) or t._storage is not storage or \
                t._data.dtype != target._data.dtype:  # (a view_as_real of the other: its geometry counts reals)
            continue
        else:
            (ta, sa, oa), (tb, sb, ob) = _geom_of(target), _geom_of(t)
            for entry, statics in steps:
                ta, sa, oa = _rules[entry](ta, sa, oa, *statics)
            na, nb = math.prod(ta), math.prod(tb)
            if not na or not nb or not _dense(ta, sa) or not _dense(tb, sb) or not (oa < ob + nb and ob < oa + na):
                continue
            full = oa == ob and na == nb and sa == sb
        if strict or not full:
            _check_inplace(target, ())  # torch's autograd checks (a leaf, ...) come first
            raise RuntimeError(_INPUT_OVERLAP_MSG)


class CopySlices(Node):
    """Base's node after an in-place op ``fn`` on one of its views: the gradient's slice goes through
    ``fn``, whose result replaces that slice; ``fn``'s other inputs get their gradients as usual."""

    _name = "torch::autograd::CopySlices"

    def __init__(self, base, fn, geom, conj=False, chain=None):
        self._seq = next(_seq_counter)
        self._fn = fn
        self._geom = geom
        self._conj = conj  # the view reads its slice conjugated
        self._chain = chain  # a view through view_as_real / view_as_complex: its chain of steps from the base
        edge = (base._grad_fn, base._output_nr) if base._requires_grad else (None, 0)
        self.next_functions = (edge,) + fn.next_functions[1:]
        self._mask = (edge[0] is not None,) + tuple(fn._mask[1:])
        self._out_meta = (base._data.aval,)
        self._anomaly_trace = fn._anomaly_trace

    _released = False  # torch's release_variables drops fn: the node cannot run again (even with nothing saved)
    _release_always = True

    @property
    def _for_backward(self):
        return _ALL_FREED if self._released else self._fn._for_backward

    def _release(self):
        self._fn._release()
        self._released = True

    def _apply(self, grads, mask=None):
        if self._released:
            raise RuntimeError(_FREED_MSG)
        if mask is None:
            mask = self._mask
        grad = grads[0]
        if self._chain is not None:  # torch's view_fn: the gradient's view through the chain, written back through it
            res = list(self._fn._apply([_through(grad, self._chain)], mask))
            if mask[0]:
                src = res[0]
                if src is None:
                    piece = jax.eval_shape(lambda g: _through(_wrap(g), self._chain)._data, grad._data)
                    src = _wrap(jnp.zeros(piece.shape, piece.dtype))
                res[0] = _scatter_through(grad, self._chain, src)
            return res
        if mask[0] and _overlaps(self._geom):  # torch copies the result into the overlapping gradient slice
            raise RuntimeError(_OVERLAP_MSG)
        piece = _apply(_as_strided, (grad,), self._geom)
        res = list(self._fn._apply([_apply(_conj, (piece,), ()) if self._conj else piece], mask))
        if mask[0]:
            src = res[0]
            if src is None:
                src = _wrap(jnp.zeros(self._geom[0], grad._data.dtype))
            elif self._conj:
                src = _apply(_conj, (src,), ())
            res[0] = _apply(_as_strided_scatter, (grad, src), self._geom)
        return res


def _through(t, steps):
    """``t`` seen through a chain of view steps (as differentiable ops)."""
    for step in steps:
        t = _apply(_conj, (t,), ()) if step == "conj" else _apply(step, (t,), ()) if step in _RETYPING else \
            _apply(_as_strided, (t,), step)
    return t


def _scatter_through(t, steps, src):
    """``t`` with its view through ``steps`` replaced by ``src`` (as differentiable ops)."""
    if not steps:
        return src
    step = steps[0]
    new = _scatter_through(_through(t, steps[:1]), steps[1:], src)
    if step == "conj":
        return _apply(_conj, (new,), ())
    if step in _RETYPING:  # (the whole of t, read in the other type)
        return _apply(_RETYPING[step], (new,), ())
    return _apply(_as_strided_scatter, (t, new), step)


def _inplace_on_view(op, target, args, arrays, statics, outs):
    """Record an in-place op on a differentiable view: ``fn`` for the view, CopySlices for the base."""
    _check_view_inplace(target)
    base = target._base
    old = target._data
    record(op, args, arrays, statics, outs, inplace=target)
    if target._grad_fn is not None:  # (copy_ into an integer view: no history)
        node = CopySlices(base, target._grad_fn, target._ageom, target._conj != base._conj,
                          target._vfn if target._ageom is None else None)
        _set_grad_fn(base, node)
        if target._data.dtype.kind not in "fcV":
            refuse_grads(node)
    _write(target, target._data, old)
    _regenerate(target._storage)
    return target


# ----- stride rules of torch's view ops -----------------------------------------------------------------
_rule(_conj)(lambda sizes, strides, offset: (sizes, strides, offset))
_RETYPING = {}  # view_as_real's and view_as_complex's entries (ops/elementwise.py), views of another dtype: each
# to the other (which reads the whole of it back in its input's type)


def _compute_stride(old_shape, old_strides, new_shape):
    """torch's computeStride: strides that view old memory in new_shape, or None when it cannot."""
    numel = math.prod(old_shape)
    if numel == 0:
        return tuple(old_strides) if tuple(old_shape) == tuple(new_shape) else _contiguous_strides(new_shape)
    if not old_shape:
        return (1,) * len(new_shape)
    new_strides = [0] * len(new_shape)
    view_d = len(new_shape) - 1
    chunk_base = old_strides[-1]
    tensor_numel = view_numel = 1
    for tensor_d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[tensor_d]
        if tensor_d == 0 or (old_shape[tensor_d - 1] != 1 and old_strides[tensor_d - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or new_shape[view_d] == 1):
                new_strides[view_d] = view_numel * chunk_base
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base = old_strides[tensor_d - 1]
                tensor_numel = view_numel = 1
    if view_d != -1:
        return None
    return tuple(new_strides)
