"""Forward-mode rules of the op table: tangents propagated through every table op, view and in-place write.

The public API (``dual_level``, ``make_dual``, ``unpack_dual``) is ``torchlike.autograd.forward_ad``; this is the
state it shares with the op table and the rules the table runs while a level is active (``_state.level is not
None``). A tensor's tangent at the active level is ``Tensor._fw_tangent``: a Tensor with no history (None: no
tangent). Every op of the op table propagates tangents through one jitted function per (op, static arguments,
inputs that carry a tangent); inputs without one count as constants (zero tangents); integer and bool outputs get
none. That function is the linear transpose of the op's backward formula when the op has one (torch's forward
derivatives agree with its backward formulas, also at kinks such as relu(0), abs(0) or a clamp bound, where
JAX's jvp may pick the other side), else ``jax.jvp`` of the op's JAX forward. Tangents never record autograd nodes.

Inference mode turns forward AD off (no tangents are made, read or updated), as in torch.
Views and in-place ops follow torch: the tangent of a view is the same view of its input's tangent (they share
a storage, as torch's do); an in-place op updates the target's tangent in place, so its views' tangents see
the change; an in-place op that gives a view a tangent gives its base a zero tangent first and makes the view's
tangent a view of it, and views of a base that gets a tangent get views of it (torch reads those lazily).
"""
import weakref

import jax
import jax.numpy as jnp

from .. import _grad_mode as _gm
from .._tensor import _wrap
from . import _views
from ._registry import OpDef


class _State:
    """The active level (None: no level; torch's only level is 0) and the tensors given a tangent in it."""

    __slots__ = ("level", "tensors", "prune_at")

    def __init__(self):
        self.level = None
        self.tensors = None  # id -> weakref of each tensor given a tangent in this level (a WeakSet would call
        self.prune_at = 0    # Tensor.__eq__, an op); dead entries are pruned when the dict doubles


_state = _State()

# unpack_dual's primal: an alias view whose node torch calls torch::autograd::Identity (a CppFunction)
_identity = OpDef("torch::autograd::Identity", lambda self: self, save=(), class_name="CppFunction")
_identity.derivative(lambda grad: grad)
_views._rule(_identity)(lambda sizes, strides, offset: (sizes, strides, offset))

# a view of a tangent at a geometry given in its base's contiguous layout (lazy views of a base's tangent)
_strided = OpDef("AsStridedBackward0", _views._as_strided.forward, save=())
_strided.derivative(_views._as_strided.backward)


@_views._rule(_strided)
def _(sizes, strides, offset, size, stride, storage_offset):
    if not _is_contiguous(sizes, strides):
        return None
    return size, stride, offset + storage_offset


def _is_contiguous(sizes, strides):
    expected = 1
    for n, s in zip(reversed(sizes), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= max(n, 1)
    return True


def _storage_size(t):
    s = t._storage
    return s.data.size if s is not None else t._data.size


def _same_layout(a, b):
    """torch's has_same_meta: same sizes, strides, storage offset and storage size."""
    return (a.stride() == b.stride() and a.storage_offset() == b.storage_offset()
            and _storage_size(a) == _storage_size(b))


def _track(t):
    """Remember ``t`` so that exiting the level drops its tangent."""
    reg = _state.tensors
    reg[id(t)] = weakref.ref(t)
    if len(reg) > _state.prune_at:
        for k in [k for k, r in reg.items() if r() is None]:
            del reg[k]
        _state.prune_at = max(1024, 2 * len(reg))


def _copy_with_layout(data, like):
    """A new tensor holding ``data`` with ``like``'s strides and offset in a fresh zero storage of its size."""
    _views._check_overlap(like)  # torch's error for a primal with overlapping memory (expanded)
    t = _wrap(data)
    geom = like._sgeom
    if geom is not None:
        storage = _views._storage_of(t)
        zeros = jnp.zeros(_views._storage_of(like).data.shape, data.dtype)
        storage.data = _views._run(_views._as_strided_scatter, geom, zeros, data)
        t._sgeom = geom
    return t


def _set_tangent(t, tangent):
    t._fw_tangent = tangent
    _track(t)


def _inexact(dtype):
    return dtype.kind in "fcV"


def _tangent_args(args):
    """Positions and tangents of the floating-point inputs that carry a tangent."""
    pos, tangents = [], []
    for i, a in enumerate(args):
        if a is not None:
            t = a._fw_tangent
            if t is not None and _inexact(a._data.dtype):
                _track(a)  # a tangent someone assigned directly (custom Function) is dropped with the level
                pos.append(i)
                tangents.append(t._data)
    return tuple(pos), tangents


def _jvp_fn(op, statics, pos):
    """Jitted ``(arrays, tangents) -> output tangents`` (None for integer/bool outputs) of ``op``, cached on it."""
    cache = op.__dict__.get("_jvp")
    if cache is None:
        cache = op._jvp = {}
    key = (statics, pos)
    fn = cache.get(key)
    if fn is None:
        def run(arrays, tangents):
            primals = tuple(arrays[p] for p in pos)
            tangents = tuple(_as_dtype(t, p.dtype) for t, p in zip(tangents, primals))
            out = None
            if op.backward is not None and set(pos) <= set(op.diff):
                out = _transposed_formula(op, statics, pos, arrays, tangents)
            if out is None:
                out = _forward_jvp(op, statics, pos, arrays, tangents)
            return jax.tree_util.tree_map(lambda o: None if o.dtype == jax.dtypes.float0 else o, out)

        fn = cache[key] = jax.jit(run)
    return fn


def _forward_jvp(op, statics, pos, arrays, tangents):
    """jax.jvp of the op's JAX forward (inputs without a tangent are constants)."""
    kw = dict(zip(op.statics, statics))

    def f(*xs):
        a = list(arrays)
        for p, x in zip(pos, xs):
            a[p] = x
        return op.forward(*a, **kw)
    return jax.jvp(f, tuple(arrays[p] for p in pos), tangents)[1]


def _transposed_formula(op, statics, pos, arrays, tangents):
    """The tangents as the transpose of the op's backward formula (traced here): torch's forward derivatives
    agree with its backward formulas, also where the function has a kink (relu, abs or clamp at their corners,
    norm at 0), where jax.jvp of the forward may pick another one-sided derivative. Real dtypes only (a complex
    backward formula is an adjoint up to torch's conjugation conventions; the forward's jvp is exact there).
    None when not used or the formula cannot be transposed (then the forward's jvp is used); a formula that
    raises "not implemented" raises torch's forward AD error."""
    outs = op.forward(*arrays, **dict(zip(op.statics, statics)))
    outs = (outs,) if not op._tuple_out else tuple(outs)
    live = [k for k, o in enumerate(outs) if o is not None and _inexact(o.dtype)]
    if any(jnp.iscomplexobj(arrays[p]) for p in pos) or any(jnp.iscomplexobj(outs[k]) for k in live):
        return None
    in_meta = tuple(None if arrays[i] is None else arrays[i].aval for i in op.diff)
    mask = tuple(i in pos for i in op.diff)
    out_meta = tuple(None if o is None else o.aval for o in outs)
    bkey = (statics, in_meta, mask)
    compiled = op._bwd.get(bkey) or op._compile_backward(bkey, out_meta)
    formula = compiled[1].forward  # the raw (unjitted) backward: (*saved, *grads) -> one gradient per masked input
    saved = [arrays[index] if kind == "in" else outs[index] for _, kind, index, _ in op.saves]
    order = [p for i, p in enumerate(op.diff) if mask[i]]  # the formula's gradient order
    by_pos = dict(zip(pos, tangents))

    def backward(*grads):
        full = [None] * len(outs)
        for k, g in zip(live, grads):
            full[k] = g
        res = formula(*saved, *full)
        return tuple(jnp.zeros(arrays[p].shape, arrays[p].dtype) if g is None else g for p, g in zip(order, res))

    try:
        transposed = jax.linear_transpose(backward, *[jax.ShapeDtypeStruct(outs[k].shape, outs[k].dtype)
                                                      for k in live])
        cts = transposed(tuple(by_pos[p] for p in order))
    except RuntimeError as e:
        if str(e).startswith("derivative for aten::"):
            name = str(e)[len("derivative for "):str(e).index(" is not implemented")]
            raise NotImplementedError(f"Trying to use forward AD with {name} that does not support it.") from None
        return None
    except Exception:  # noqa: BLE001  (not linear as JAX sees it: use the forward's jvp)
        return None
    it = iter(c.astype(outs[k].dtype) for k, c in zip(live, cts))
    res = tuple(next(it) if k in live else None for k in range(len(outs)))
    return res if op._tuple_out else res[0]


def _as_dtype(t, dtype):
    """A tangent in its primal's dtype (torch accepts e.g. a float64 tangent for a float32 primal)."""
    if t.dtype == dtype:
        return t
    if jnp.iscomplexobj(t) and not jnp.issubdtype(dtype, jnp.complexfloating):
        t = jnp.real(t)
    return t.astype(dtype)


def _propagate(op, args, arrays, statics, results):
    """Give ``results`` (the outputs of ``op(*args)``) their tangents, if any input has one."""
    if _gm._state.inference:  # inference mode turns forward AD off, as in torch
        return
    pos, tangents = _tangent_args(args)
    if not pos or op is _identity:
        return
    if len(args) == 1 and op in _views._rules:  # a view op: the same view of the input's tangent
        t = args[0]._fw_tangent
        geom = _views._view_geometry(op, t, statics)
        if geom is not None:
            views = _views._view_apply(op, t, statics, geom)
            for o, v in zip(results, views if op._tuple_out else (views,)):
                if o is not None:
                    _set_tangent(o, v)
            return
    outs = _jvp_fn(op, statics, pos)(arrays, tangents)
    for o, t in zip(results, outs if op._tuple_out else (outs,)):
        if o is not None and t is not None:
            _set_tangent(o, _wrap(t))


def _inplace_tangent(op, target, args, arrays, statics):
    """The new tangent (a jax array) of an in-place op's target, or None when no input has a tangent."""
    if _gm._state.inference:
        return None
    pos, tangents = _tangent_args(args)
    if not pos:
        return None
    tangent = target._fw_tangent  # torch updates it in place: not allowed for a leaf that requires grad
    if tangent is not None and tangent._requires_grad and tangent._grad_fn is None and _gm._state.grad_enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    outs = _jvp_fn(op, statics, pos)(arrays, tangents)
    return outs[0] if op._tuple_out else outs


def _fill_views(base):
    """Views of ``base`` without a tangent get the matching view of base's tangent (torch's lazy view tangents)."""
    tangent = base._fw_tangent
    storage = base._storage
    if storage is None or tangent is None:
        return
    for ref in list(storage.members):
        v = ref()
        if v is not None and v._base is base and v._fw_tangent is None and v._ageom is not None:
            geom = _views._view_geometry(_strided, tangent, v._ageom)
            if geom is not None:
                _set_tangent(v, _views._view_apply(_strided, tangent, v._ageom, geom))


def _set_inplace_tangent(target, new):
    """After an in-place op wrote ``target``: write its new tangent ``new`` (a jax array), as torch does."""
    tangent = target._fw_tangent
    if tangent is None:
        base = target._base
        if base is not None and target._ageom is not None:  # a view: its tangent becomes a view of base's
            if base._fw_tangent is None:
                _set_tangent(base, _wrap(jnp.zeros(base._data.shape, new.dtype)))
            _fill_views(base)
            tangent = target._fw_tangent
        if tangent is None:
            _set_tangent(target, _wrap(new))
            if target._base is None:
                _fill_views(target)
            return
    _views._commit(tangent, _as_dtype(new, tangent._data.dtype))
