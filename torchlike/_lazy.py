"""Lazy mode: ops are recorded into a pending program instead of dispatched, and each pending run of ops runs as
one cached, fused ``jax.jit`` program when a value is needed (torch_xla's LazyTensor, tinygrad's lazy buffers).

Turned on by ``torchlike.lazy()`` (a context manager) or ``TORCHLIKE_LAZY=1`` for the whole process; with it off
the op table pays nothing (its dispatch hook slot is the switch, see ``ops/_registry.py``).

**Pending values.** A pending tensor's ``_data`` is a ``_LazyArray``: its aval (shape, dtype, weak type: everything
the op table, the engine and the Tensor's metadata read) and its slot in the pending program; ``_value`` is set
once the program ran. Code that knows about lazy mode passes it to ``call`` (which records); any other use is a read
of the value and materializes it by itself: ``np.asarray`` (``__array__``: ``.item()``, ``.tolist()``,
``.numpy()``, printing, ``bool()``), JAX (the class is a pytree whose one leaf is the value: jitted and ``jnp``
functions, ``jax.device_put``, interop conversions), attributes it does not have (``__getattr__``: DLPack,
``block_until_ready``) and Python operators. So correctness never depends on a caller knowing about lazy mode:
what is not recorded runs eagerly on materialized inputs.

**Recording** (``call(fn, key, arrays)``): ``fn`` is the jitted function the eager path would have called (an
op's forward, a node's backward formula, an optimizer's update) and ``key`` names it (two calls with equal keys
compute the same function). Output avals come from ``jax.eval_shape``, cached per (key, input avals), so every
error the forward raises (shapes, dtypes, torch's refusals raised while tracing) is raised at the same call, and
torch's checks on shapes and dtypes in the Python layers run unchanged (``call_pending`` records the commonest
call, one or two inputs and one floating output of a known aval, in one step: the op table's short path). Inputs
that are concrete arrays (params, Python scalars as the op table's cached 0-d arrays, learning rates) become
arguments of the program, never constants, so one program serves every value. Tracers (``torchlike.compile``),
arrays on another device and ``key=None`` (data-dependent sizes) run eagerly.

**Keys and the cache.** Each recorded call appends ``(key, input refs)`` (refs: the slot of a pending input, or
the position of an external argument, whose aval is folded in when it first appears) to the program's structure
and folds it into a running hash, so a step costs no more than recording it. ``sync()`` keeps the outputs still
referenced (the pending list holds each output; one nobody else holds, by its reference count, is dead code XLA
removes: no weak reference per output, as each tracked object makes Python's collector run more often), looks up
``(hash, size, live outputs, donated arguments)`` (checked against the full structure), compiles on a miss and
runs the program with the external arrays. A training loop records the same structure every step: it compiles
once, then replays. An external array that only the program holds (a parameter's value before its recorded
in-place update) is donated to it when a result has its shape and dtype (``_donatable``). Keys are the jitted
functions themselves (one per op and statics, hashed by identity) or, for ``call_tree``, a tuple.

**Boundaries** (``sync()``): any materialization above, leaving the outermost ``lazy()`` context,
``optimizer.step()``, ``torchlike.sync()`` (torch_xla's ``mark_step``), a program reaching ``_MAX_CALLS``, and the
end of a backward when few of the pending values are still held (``start_early``).
``stats`` counts records, syncs, compiles and cache hits.

**Thrash guard.** Code whose graph changes every step through Python control flow (PyTorch's dynamic_net
tutorial with a wide random depth) would compile at nearly every sync, far slower than eager dispatch. When
``_THRASH`` of the last ``_WINDOW`` syncs compiled, recording pauses: the next ``_backoff`` calls run eagerly (as
with ``key`` None), and recording resumes at the first boundary (``sync()``) after them, so a retry starts a step's
program from its beginning. The window is kept: a retry that still compiles pauses again at once, for four times
as long (up to ``_MAX_BACKOFF``: a retry costs a compile, so retries grow rare); a window of hits restores the first
length. ``stats["pauses"]`` counts pauses.
"""
import collections
import os
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _roll
from ._dtype import _exact_key

_ArrayImpl = type(jnp.zeros(()))
_MAX_CALLS = 4096
_MAX_PROGRAMS = 1024  # cached programs kept (then the cache starts again: code with ever new graphs stays bounded)
stats = {"records": 0, "eager": 0, "syncs": 0, "compiles": 0, "hits": 0, "pauses": 0, "donated": 0}
_WINDOW, _THRASH = 16, 6  # the thrash guard (see the module docstring): recent syncs looked at, compiles among them
# (a step of a graph that changes every step syncs twice: its forward and backward, which compile, then the
# optimizer's step, which does not; a steady loop's first steps compile a few programs, then none)
_FIRST_BACKOFF, _MAX_BACKOFF = 2048, 1 << 20  # calls run eagerly by a pause
_recent = collections.deque(maxlen=_WINDOW)  # 1: that sync compiled
_paused = 0  # > 0: calls still to run eagerly in a pause; -1: they ran, the pause ends at the next sync()
_backoff = _FIRST_BACKOFF


class _State:
    on = os.environ.get("TORCHLIKE_LAZY", "") not in ("", "0")  # lazy mode's switch (set by torchlike.lazy())
    owner = threading.main_thread().ident  # the thread that records (the one that turned lazy mode on)
    device = None  # the default device (pending values live there)


_lock = threading.RLock()  # recording and sync(): another thread may read a pending value (and so sync) meanwhile


class _LazyArray:
    """A pending array: known aval, value computed by the pending program (see the module docstring)."""

    __slots__ = ("aval", "shape", "dtype", "weak_type", "_value", "_slot", "_gen", "__weakref__")

    def __init__(self, aval, slot, gen):
        self.aval, self.shape, self.dtype, self.weak_type = aval, aval.shape, aval.dtype, aval.weak_type
        self._value, self._slot, self._gen = None, slot, gen

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    sharding = property(lambda self: jax.sharding.SingleDeviceSharding(_device()))
    committed = False  # (pending values live on the default device)
    _lazy_array = True  # (how torchlike/_xcache.py knows one without importing this module)

    def devices(self):
        return {_device()}

    def value(self):
        """The concrete array (runs the pending program if needed)."""
        if self._value is None:
            if self._gen != _graph.gen:
                raise RuntimeError("torchlike lazy mode: a pending value was lost (its program failed)")
            sync()
        return self._value

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.value(), dtype)

    def __jax_array__(self):
        return self.value()

    def __getattr__(self, name):
        return getattr(self.value(), name)

    def __repr__(self):
        return f"_LazyArray({self.aval.str_short()}, {'pending' if self._value is None else self._value})"

    def __bool__(self):
        return bool(self.value())

    def __len__(self):
        return len(self.value())

    def __iter__(self):
        return iter(self.value())

    def __float__(self):
        return float(self.value())

    def __int__(self):
        return int(self.value())

    def __index__(self):
        return self.value().__index__()

    def __complex__(self):
        return complex(self.value())

    def __getitem__(self, index):
        return self.value()[index]


def _delegate(name):
    return lambda self, *args: getattr(self.value(), name)(*args)


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor", "lshift",
              "rshift", "radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rmatmul", "rand", "ror",
              "rxor", "lt", "le", "gt", "ge", "eq", "ne", "neg", "pos", "abs", "invert"):
    setattr(_LazyArray, f"__{_name}__", _delegate(f"__{_name}__"))
_LazyArray.__hash__ = object.__hash__  # (identity, as the program's bookkeeping uses it)
jax.tree_util.register_pytree_node(_LazyArray, lambda a: ((a.value(),), None), lambda aux, leaves: leaves[0])


def _device():
    if _State.device is None:
        _State.device = jax.devices()[0]
    return _State.device


class _Graph:
    """The pending program: recorded calls (their functions; their keys, ``(key, *input refs)``, shared with the
    structure), the structure and its running hash, external arguments, and the output per slot."""

    gen = 0

    def __init__(self, gen=0):
        self.gen = gen
        self.fns = []  # per call: its function
        self.calls = []  # per call: (key, *refs), the same tuple as in keys
        self.keys = []  # the structure: calls and ("arg", aval) per external argument
        self.hash = 0
        self.ext = []  # the program's arguments (concrete arrays)
        self.ext_ids = {}  # id(array) -> position (ext keeps the array alive, so ids are stable)
        self.outs = []  # slot -> its _LazyArray (live when something else holds it)


_graph = _Graph()
_shapes = {}  # (key, input avals) -> (output avals, treedef)
_programs = {}  # (hash, size, live slots) -> (structure, jitted program)


class _Eager(Exception):
    """This call cannot be recorded: run it eagerly."""


def _ref(g, a):
    """How a recorded call refers to input ``a``: a pending slot (>= 0) or an external argument (< 0)."""
    if type(a) is _LazyArray:
        if a._value is None:
            if a._gen != g.gen:
                raise RuntimeError("torchlike lazy mode: a pending value was lost (its program failed)")
            return a._slot, a.aval
        a = a._value
    elif type(a) is not _ArrayImpl:
        raise _Eager
    i = g.ext_ids.get(id(a))
    if i is None:
        aval = a.aval
        devices = a.sharding.device_set
        if len(devices) != 1 or _device() not in devices:
            raise _Eager
        i = g.ext_ids[id(a)] = len(g.ext)
        g.ext.append(a)
        k = ("arg", aval)
        g.keys.append(k)
        g.hash = hash((g.hash, k))
        return -1 - i, aval
    return -1 - i, g.ext[i].aval


def concrete(a):
    """``a`` as JAX takes it everywhere: a pending array's value (its program run if need be); else ``a`` itself (a
    pending array goes into jitted functions as a pytree, but JAX's un-jitted primitives refuse it)."""
    return a.value() if type(a) is _LazyArray else a


def call(fn, key, arrays, eager=None):
    """Record ``fn(*arrays)`` (arrays: jax.Arrays, _LazyArrays or None) and return its output structure with a
    _LazyArray per array; run it eagerly when it cannot be recorded (``key`` None, tracers, other devices), as
    ``eager`` if given (the same function, faster run on its own)."""
    global _paused
    if threading.get_ident() != _State.owner:  # another thread (DataLoader workers): its ops run eagerly
        return (eager or fn)(*arrays)
    if key is None or _paused:
        if _paused > 0:
            _paused = _paused - 1 or -1
        stats["eager"] += 1
        return (eager or fn)(*arrays)
    with _lock:
        return _record(fn, key, arrays, eager)


def _record(fn, key, arrays, eager=None):
    """``call``'s recording (under the lock)."""
    g = _graph
    refs, avals = [], []
    gen = g.gen
    try:
        for a in arrays:
            if type(a) is _LazyArray and a._value is None and a._gen == gen:  # (the common case, inlined)
                refs.append(a._slot)
                avals.append(a.aval)
            elif a is None:
                refs.append(None)
                avals.append(None)
            elif type(a) is _ArrayImpl and id(a) in g.ext_ids:  # (an argument seen before: a Python scalar's)
                refs.append(-1 - g.ext_ids[id(a)])
                avals.append(a.aval)
            else:
                r, aval = _ref(g, a)
                refs.append(r)
                avals.append(aval)
    except _Eager:
        stats["eager"] += 1
        return (eager or fn)(*arrays)
    skey = (key, *avals)
    shaped = _shapes.get(skey)
    if shaped is None:
        specs = [None if v is None else jax.ShapeDtypeStruct(v.shape, v.dtype, weak_type=v.weak_type)
                 for v in avals]
        leaves, treedef = jax.tree_util.tree_flatten(jax.eval_shape(lambda *a: fn(*a), *specs))
        shaped = _shapes[skey] = (tuple(jax.core.ShapedArray(s.shape, s.dtype, weak_type=s.weak_type)
                                        for s in leaves), None if treedef == _LEAF else treedef)
    out_avals, treedef = shaped
    k = (key, *refs)
    g.keys.append(k)
    g.hash = hash((g.hash, k))
    g.fns.append(fn)
    g.calls.append(k)
    slot = len(g.outs)
    stats["records"] += 1
    outs = []
    for aval in out_avals:
        la = _LazyArray(aval, slot, gen)
        g.outs.append(la)
        outs.append(la)
        slot += 1
    result = outs[0] if treedef is None else treedef.unflatten(outs)  # (None: one array)
    if len(g.calls) >= _MAX_CALLS:
        sync()
    return result


_LEAF = jax.tree_util.tree_structure(0)


def call_pending(fn, a, b=None):
    """``call``'s commonest case made short: ``fn`` of pending array ``a`` (and of ``b`` if given, pending or a
    concrete array) whose output aval is known, one floating array. Returns its _LazyArray, or None when the call is
    not that case (then ``call`` records it)."""
    g = _graph
    if type(a) is not _LazyArray or a._value is not None or a._gen != g.gen or _paused \
            or threading.get_ident() != _State.owner:
        return None
    if b is None:
        shaped = _shapes.get((fn, a.aval))
        k = (fn, a._slot)
    elif type(b) is _LazyArray:
        if b._value is not None or b._gen != g.gen:
            return None
        shaped = _shapes.get((fn, a.aval, b.aval))
        k = (fn, a._slot, b._slot)
    elif type(b) is _ArrayImpl:
        shaped = _shapes.get((fn, a.aval, b.aval))
        k = None
    else:
        return None
    if shaped is None or shaped[1] is not None or len(shaped[0]) != 1 or shaped[0][0].dtype.kind not in "fcV":
        return None
    with _lock:
        if g is not _graph:  # (another thread synced meanwhile)
            return None
        if k is None:  # b an argument of the program (a Python scalar's array, a parameter)
            i = g.ext_ids.get(id(b))
            if i is None:
                try:
                    i = -1 - _ref(g, b)[0]
                except _Eager:
                    return None
            k = (fn, a._slot, -1 - i)
        g.keys.append(k)
        g.hash = hash((g.hash, k))
        g.fns.append(fn)
        g.calls.append(k)
        stats["records"] += 1
        out = _LazyArray(shaped[0][0], len(g.outs), g.gen)
        g.outs.append(out)
        if len(g.calls) >= _MAX_CALLS:
            sync()
    return out


def call_tree(fn, key, args):
    """``call`` for a function of pytrees (an optimizer's update); Python numbers in them become arguments too."""
    leaves, treedef = jax.tree_util.tree_flatten(args, is_leaf=_is_lazy)
    leaves = [_number(v) if type(v) in (float, int, bool) else v for v in leaves]
    return call(lambda *flat: fn(*treedef.unflatten(flat)), (key, treedef), leaves)


def _is_lazy(x):
    return type(x) is _LazyArray


_numbers = {}


def _number(v):
    """A Python number (bool, int or float) as the (weakly typed) array ``jax.jit`` would make of it, one per value
    (``jax.jit`` converts a number argument on every call, ~4 us each: the optimizers pass theirs made here)."""
    k = (type(v), _exact_key(v))  # (-0.0 == 0.0: see _dtype._exact_key)
    a = _numbers.get(k)
    if a is None:
        if len(_numbers) > 4096:
            _numbers.clear()
        with jax.ensure_compile_time_eval():  # (a concrete array even when first made inside a trace)
            a = _numbers[k] = jnp.asarray(v)
    return a


def _replay(fns, calls, live):
    """The pending program as a function of its external arguments, returning the live slots' values."""
    def program(*ext):
        vals = []
        for fn, k in zip(fns, calls):
            out = fn(*[None if r is None else vals[r] if r >= 0 else ext[-1 - r] for r in k[1:]])
            vals.extend(jax.tree_util.tree_leaves(out))
        return [vals[s] for s in live]
    return program


def sync():
    """Run the pending program (compiled once per structure) and give every live pending array its value."""
    with _lock:
        _sync()


_EARLY_OUTPUTS = 64


def start_early():
    """``sync()`` when the pending program has at most ``_EARLY_OUTPUTS`` values still held. Called at a backward's
    end: XLA runs the forward and backward while Python records the optimizer's step, as eager dispatch overlaps
    them. Not at its start: the forward's saved values would become outputs of one program and arguments of the
    next, where fused with the backward they never leave XLA, and the extra program costs more than the overlap
    gains (paired against a sync at both ends: the small MLP step 15-23% faster, the CNN's 8-10%, the LSTM's 2-12%,
    the transformer block's 5-8% in four runs of five, the large MLP's 1-2% slower)."""
    with _lock:
        _sync(_EARLY_OUTPUTS)


def _sync(most=None):
    """``sync()``'s work (under the lock); ``most``: run only if at most that many values are still held."""
    global _graph, _paused
    g = _graph
    live, targets = [], []
    outs = g.outs
    for slot in range(len(outs)):
        la = outs[slot]
        if sys.getrefcount(la) > 3 and la._value is None:  # (3: the list, la and getrefcount's argument)
            if len(live) == most:
                return
            live.append(slot)
            targets.append(la)
    if _paused < 0:  # a pause is over: record again from this boundary
        _paused = 0
    if not g.calls:
        return
    _graph = _Graph(g.gen + 1)
    if not live:
        return
    stats["syncs"] += 1
    donate = _donatable(g.ext, targets)
    ck = (g.hash, len(g.keys), tuple(live), donate)
    entry = _programs.get(ck)
    if entry is None or entry[0] != g.keys:
        stats["compiles"] += 1
        if len(_programs) >= _MAX_PROGRAMS:
            _programs.clear()
            _shapes.clear()
        entry = _programs[ck] = (g.keys, jax.jit(_roll.rolled(_replay(g.fns, g.calls, live)), donate_argnums=donate))
        _guard(1)
    else:
        stats["hits"] += 1
        _guard(0)
    for la, v in zip(targets, entry[1](*g.ext)):
        la._value = v


def _donatable(ext, targets):
    """The arguments the program may overwrite: arrays nothing but the program holds (a parameter's old value once
    an in-place update was recorded; not one a tensor, a view, a saved tensor, a cache or the user still holds),
    each matched to a result of its shape and dtype, whose buffer XLA then reuses."""
    held = [i for i in range(len(ext)) if sys.getrefcount(ext[i]) <= 2]  # (2: the list and getrefcount's argument)
    if not held:
        return ()
    free = collections.Counter([la.aval for la in targets])
    donate = []
    for i in held:
        if free[ext[i].aval] > 0:
            free[ext[i].aval] -= 1
            donate.append(i)
    stats["donated"] += len(donate)
    return tuple(donate)


def _guard(compiled):
    """The thrash guard's bookkeeping of one sync (see the module docstring)."""
    global _paused, _backoff
    _recent.append(compiled)
    n = sum(_recent)
    if compiled and n >= _THRASH:
        stats["pauses"] += 1
        _paused = _backoff
        _backoff = min(4 * _backoff, _MAX_BACKOFF)
    elif not n and len(_recent) == _WINDOW:
        _backoff = _FIRST_BACKOFF


def _reset_guard():
    """Forget the thrash guard's history and end a pause (tests start from a fresh state)."""
    global _paused, _backoff
    _recent.clear()
    _paused, _backoff = 0, _FIRST_BACKOFF
