"""The op table: each op is declared once, and this module makes everything else.

    @op("MulBackward0", save={"self": ("other",), "other": ("self",)})
    def mul(self, other, *, dtype):          # positional params: tensor inputs; keyword-only: statics
        return self.astype(dtype) * other.astype(dtype)

    @mul.derivative                          # optional: without it the backward is jax.vjp of the forward
    def _(grad, self, other, dtype):         # grad, then any saved / static / <input>_shape names it wants
        return grad * other.astype(dtype), grad * self.astype(dtype)

``attrs=("dim", "keepdim", "self_sym_sizes")`` names the non-tensor ``_saved_*`` attributes torch shows for
the node (static arguments, and input sizes as ``<input>_sym_sizes``); ``unsigned=("dim",)`` shows negative
ints as torch does for its int64 fields (-1 reads 18446744073709551615). ``saved={name: fget}`` gives the node
torch's ``_saved_<name>`` where it differs from what the table saves (``fget(node, saved)``, ``saved`` the
table's saved values by name; ``None`` hides a table name torch does not show), e.g. a Python number torch saves
as a Scalar; a pair ``(fget, raw_fget)`` also gives ``_raw_saved_<name>`` (``raw_fget(node, raw)``, ``raw`` the
table's raw slots by name), which torch has only for what it saves as tensors. ``const_grads=True`` (or the positions of some gradients) says torch's formula for those gradients
is a constant: under create_graph they carry no history, so a further derivative stops there, as in torch
(``const_when(node)``: only for some nodes). ``node_apply(node, grads, mask)`` replaces how a node runs (it may
call ``_OpNode._apply``); ``class_name`` names the node class when torch's differs from the node name.
``int_plain=True``: an integer result never takes history (see OpDef.__init__). ``fused_backward=True``: torch's backward is one differentiable function of the saved tensors (threshold_backward,
hardtanh_backward, ...), so under create_graph the gradient requires grad when they do, even where it only masks.
``refuse={kinds: refusal}``: torch refuses the op for dtypes of these NumPy kinds (see ``_refused``), checked when
JAX traces the forward. ``real_grads=False``: torch's formula has no ``handle_r_to_c``, so its engine refuses a
complex gradient for a real input (where(cond, complex, real)); by default the table passes its real part.

The public functions, Tensor methods and in-place variants of ops are declared with ``_bind.public``.

From a declaration the table builds:
- the forward, ``jax.jit``-compiled once per tuple of static arguments (dict lookup on the hot path);
- the backward, jit-compiled once per (statics, input shapes and dtypes, which inputs need a gradient):
  it reduces broadcast gradients back to each input's shape and casts them to the input's dtype,
  and skips (XLA dead-code-eliminates) gradients nobody needs;
- the Node class (``MulBackward0``) with ``_saved_<name>`` properties for the saved tensors and ``attrs``.

With ``create_graph=True`` the backward itself runs as a differentiable op (``_FnOp``) whose own
backward is ``jax.vjp`` of the jitted formula, so derivatives of any order work. The engine sees
only shapes, dtypes and graph structure, so all of this also runs on JAX tracers.
"""
import collections
import inspect
import math
import threading

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np

from .. import _grad_mode as _gm
from .. import _lazy as _lz
from .. import _roll, _xcache
from .._anomaly_mode import _anomaly
from .._dtype import _exact_key
from .._graph import Node, _FREED, _FREED_MSG, _raw_saved_property, _saved_property, _saved_hooks
from .._tensor import Tensor, _wrap, _new, _differentiable_dtype, _type_string
from . import _record as _rec
from ._util import _check_broadcast
from . import _layout

_InputMetadata = collections.namedtuple(
    "_InputMetadata", "shape dtype device is_nested_tensor is_cpp_nested_tensor", defaults=(None, False, False))


class _OpNode(Node):
    """Node of a table op. Instance fields: next_functions, _seq, _mask, _statics, _in_meta, _out_meta,
    _for_backward (the saved tensors)."""

    # the fields every node of a table op has (set where it is made: _record.new_node, _record.record_pending) as
    # slots: a node is made and freed per recorded op, and a slot is quicker to set and free than an entry of the
    # instance dict (which the node still has, for hooks and the rest)
    __slots__ = ("_seq", "next_functions", "_mask", "_in_meta", "_out_meta", "_statics", "_for_backward")
    _op = None

    def _n_grad_outputs(self):
        """A table op's trailing integer outputs (max(dim)'s indices, sort's) and those torch declares not
        differentiable (log_sigmoid's buffer, batch_norm's saved statistics) are never registered by torch's node,
        so its hooks and ``_input_metadata`` see fewer outputs."""
        meta = self._out_meta
        n = self._op._n_diff_outputs
        while n > 1 and meta[n - 1] is not None and meta[n - 1].dtype.kind not in "fcV":
            n -= 1
        return n

    def _apply(self, grads, mask=None):
        saved = self._for_backward
        if _FREED in saved:
            raise RuntimeError(_FREED_MSG)
        op = self._op
        if mask is None:
            mask = self._mask
        key = (self._statics, self._in_meta, mask)
        compiled = op._bwd.get(key) or op._compile_backward(key, self._out_meta)
        if _gm._state.grad_enabled:  # create_graph: the formula becomes a differentiable op
            args = [s.unpack(self) if s is not None else None for s in saved]
            args += grads
            outs = compiled[1](*args)
        else:
            args = [s.unpack_data(self) if s is not None else None for s in saved]
            for g in grads:
                args.append(g._data if g is not None else None)
            outs = []
            for o in (compiled[0](*args) if _hook is not _lazy_hook else _lazy_call(compiled[0], compiled[0], args)):
                if o is not None:
                    t = _new(Tensor)
                    t._data = o
                    o = t
                outs.append(o)
        if len(outs) != len(mask):  # slots only for the edges that need a gradient
            it = iter(outs)
            outs = [next(it) if m else None for m in mask]
        if op.const_grads is not None and _gm._state.grad_enabled and (op.const_when is None or op.const_when(self)):
            # torch's formula for these gradients is a constant (zeros_like(grad)): under create_graph they carry
            # no history, so a further derivative stops as in torch
            outs = [o if o is None or k not in op.const_grads else _wrap(o._data) for k, o in enumerate(outs)]
        return outs


CHAIN_MIN, CHAIN_MAX = 16, 512  # a run of this many single-path table-op nodes runs its formulas as one program
_chains = collections.OrderedDict()  # the formulas of a run -> their composition, jitted (the newest 64)


def _chain_link(node):
    """The edge a backward run can continue along from ``node``, or None: a table op's node with no hooks, one
    output and one gradient to compute (what its ``_apply`` does in Python is then only its saved tensors' checks)."""
    if type(node)._apply is not _OP_APPLY or node._pre_hooks or node._post_hooks \
            or node._tensor_pre_hooks is not None or node._retains_grad is not None or len(node._out_meta) != 1 \
            or _FREED in node._for_backward or "_apply" in vars(node):
        return None
    mask = node._mask
    if mask is _ONE_TRUE or mask is _TRUE_FALSE:
        return node.next_functions[0]
    if mask is None or mask.count(True) != 1:
        return None
    return node.next_functions[mask.index(True)]


def _run_chain(nodes, grad, release):
    """The gradient at the end of a run of nodes (each ``_chain_link``-ed to the next) from ``grad`` at its start,
    as one cached program (each node's formula and saved-tensor checks as ``_OpNode._apply``'s, in order);
    ``release``: each node but the last releases its saved tensors once they are read, as it would after running."""
    fns, args, counts = [], [], []
    last = nodes[-1]
    for node in nodes:
        op = node._op
        key = (node._statics, node._in_meta, node._mask)
        compiled = op._bwd.get(key) or op._compile_backward(key, node._out_meta)
        saved = node._for_backward
        fns.append(compiled[0])
        counts.append(len(saved))
        for s in saved:
            args.append(s.unpack_data(node) if s is not None else None)
        if release and saved and node is not last:
            node._release()
    tracing = isinstance(grad._data, jax.core.Tracer) or any(isinstance(a, jax.core.Tracer) for a in args[:1])
    lazy = _hook is _lazy_hook
    key = (tuple(fns), tuple(counts))
    run = None if tracing else _chains.get(key)
    if run is None or lazy:
        def composed(*flat):  # (the saved arrays, then the gradient)
            at, g = 0, flat[-1]
            for fn, n in zip(fns, counts):
                g = fn(*flat[at:at + n], g)[0]
                at += n
            return g
        if tracing:  # each formula stays an equation of its own (loop rolling finds the run); the saved tensors
            run = composed  # are unpacked once, as here (their unpack hooks run once)
        elif run is None:
            run = _chains[key] = jax.jit(_roll.rolled(composed))
            if len(_chains) > 64:
                _chains.popitem(last=False)
    args.append(grad._data)
    t = _new(Tensor)
    if not lazy:
        t._data = run(*args)
    else:  # one record, of the formulas themselves: the pending program's loop rolling then runs the forward's loop
        # and this one with the saved values passed between them (the jitted run is one opaque call: its saved values
        # were sliced out of the forward's loop and stacked again, a 20 s compile for the 1,000-op chain)
        t._data = _lz.call(composed, key, args, eager=run)
    return t


_OP_APPLY = _OpNode._apply
_ONE_TRUE, _TRUE_FALSE = _rec._ONE_TRUE, _rec._TRUE_FALSE


_MAX_PROGRAMS = 1024  # an op's forward (backward) programs kept, one per statics (and input metadata)


class OpDef:
    """One entry of the op table (see the module docstring)."""

    def __init__(self, node_name, forward, save=None, nondiff=(), outputs=("result",), inputs=None, statics=None,
                 tuple_out=None, attrs=(), unsigned=(), const_grads=None, const_when=None, saved=None,
                 node_apply=None, class_name=None, fused_backward=False, dynamic=(), padded=None, refuse=None,
                 real_grads=True, layout=None, runs_first=False, int_plain=False, grad_outputs=None):
        self.name = node_name
        # an integer or bool result: written in place it takes the node, as torch's (fill_, masked_fill_, lt_ with
        # an operand that requires grad); out of place from an integer input that requires grad it is torch's
        # "Autograd not support dtype" error. ``int_plain``: neither, the result is plain (to(), copy_)
        self.int_plain = int_plain
        self.layout = layout  # the rule laying out results when an input is not row-major (ops/_layout.py)
        self.forward = forward
        # torch's refusals by the dtype the op computes in: NumPy kind -> refusal (see _refused)
        self.refuse = {k: v for kinds, v in refuse.items() for k in kinds} if refuse else None
        self.real_grads = real_grads
        if inputs is None:
            params = inspect.signature(forward).parameters.values()
            inputs = tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
            statics = tuple(p.name for p in params if p.kind == p.KEYWORD_ONLY)
        self.inputs = tuple(inputs)
        self.statics = tuple(statics or ())
        # statics whose value varies at run time (an index, a start): traced, so one compile serves every value
        self._dyn = tuple(self.statics.index(n) for n in dynamic)
        self._shared = {}
        # data-dependent sizes (a mask's count of True values): ``padded(statics)`` -> None or (statics with the
        # size rounded up, axis, size, padded size): the padded program runs and the host cuts its output to size
        # (and pads the gradient back), so one compile serves every size up to the padded one
        self._padded = padded
        self.diff = tuple(i for i, n in enumerate(self.inputs) if n not in nondiff)
        self.outputs = tuple(outputs)
        # torch's count of the node's outputs: up to the trailing ones it does not differentiate (``nondiff``),
        # or ``grad_outputs`` (its formula takes ``grad`` alone: native_batch_norm's saved statistics)
        self._n_diff_outputs = grad_outputs or len(self.outputs)
        while self._n_diff_outputs > 1 and self.outputs[self._n_diff_outputs - 1] in nondiff:
            self._n_diff_outputs -= 1
        self._tuple_out = len(self.outputs) > 1 if tuple_out is None else tuple_out
        if save is None:  # default: every input (what a jax.vjp-derived backward needs)
            save = self.inputs
        if not isinstance(save, dict):
            save = {name: () for name in save}
        # each saved tensor: (name, "in"|"out", index, diff positions whose gradient needs it)
        self.saves = []
        diff_names = [self.inputs[i] for i in self.diff]
        for name, needed_by in save.items():
            # torch guards a save by one input's need only: a tensor two formulas use is always saved
            needed = tuple(diff_names.index(n) for n in needed_by) if len(needed_by) == 1 else ()
            if name in self.inputs:
                self.saves.append((name, "in", self.inputs.index(name), needed))
            else:  # ("nout": an output torch does not differentiate, saved without history)
                self.saves.append((name, "nout" if name in nondiff else "out", self.outputs.index(name), needed))
        # torch's generated nodes save their inputs in alphabetical order of their names, then their outputs:
        # the order in which saved-tensor pack hooks see them
        self.saves.sort(key=lambda s: (s[1] != "in", s[0] if s[1] == "in" else ""))
        # lazy mode records a call of this op through _rec.record_pending when its operands allow (see _apply)
        self._pending = (not self._tuple_out and padded is None and 0 < len(self.inputs) <= 2
                         and len(self.diff) == len(self.inputs) and all(s[1] != "nout" for s in self.saves))
        self.backward = None
        self._fwd = {}
        self._bwd = {}
        n_grads = len(self.diff)
        self.const_grads = (tuple(range(n_grads)) if const_grads is True else const_grads)
        self.const_when = const_when
        self.fused_backward = fused_backward
        props = {"_name": node_name, "_op": self, "__module__": "torchlike.autograd.graph"}
        if node_apply is not None:  # a node that runs differently from its formula (calls _OpNode._apply)
            props["_apply"] = node_apply
        if runs_first:  # torch's error nodes have sequence number UINT64_MAX: its engine runs them (and raises) first
            props["_seq"] = property(lambda node: (1 << 64) - 1, lambda node, value: setattr(node, "_made", value))
        getters, raw_getters = {}, {}
        for i, (name, *_) in enumerate(self.saves):
            getters[name] = _saved_property(i).fget
            raw_getters[name] = _raw_saved_property(i).fget
            props["_saved_" + name] = _saved_property(i)
            props["_raw_saved_" + name] = _raw_saved_property(i)
        for name in attrs:
            props["_saved_" + name] = self._attr_property(name, name in unsigned)
        for name, spec in (saved or {}).items():  # torch's own _saved_<name> where the table's differs
            props.pop("_raw_saved_" + name, None)  # (a raw slot only for what torch saves as tensors: see below)
            if spec is None:
                del props["_saved_" + name]
                continue
            fget, raw = spec if isinstance(spec, tuple) else (spec, None)
            props["_saved_" + name] = property(lambda node, f=fget: f(node, _SavedValues(node, getters)))
            if raw is not None:
                props["_raw_saved_" + name] = property(lambda node, f=raw: f(node, _SavedValues(node, raw_getters)))
        # torch's Scalar arguments are not saved variables: a backward does not free them
        props["_kept_slots"] = tuple(i for i, (name, *_) in enumerate(self.saves)
                                     if getattr((saved or {}).get(name), "scalar", False))
        # torch's C++ nodes named "torch::autograd::CopySlices" are instances of class CopySlices
        props["_release_always"] = node_name == "torch::autograd::CopySlices"  # (its fn goes: see Node._release)
        self.node_cls = type(class_name or node_name.rpartition("::")[2], (_OpNode,), props)

    def _xcache_key(self):
        """What the executable cache keys this op by (its programs' functions close over it): the declaration's
        parts its programs read."""
        return (self.name, self.forward, self.backward, self._backward_params if self.backward else None,
                self.inputs, self.statics, self.outputs, self.saves, self.diff, self._dyn, self._tuple_out,
                self.real_grads, self._padded)

    def _attr_property(self, name, unsigned):
        """``_saved_<name>`` for a static argument or an input's ``<input>_sym_sizes``."""
        if name in self.statics:
            i = self.statics.index(name)
            get = (lambda node: node._statics[i])
        elif name.endswith("_sym_sizes"):
            pos = [self.inputs[i] for i in self.diff].index(name[:-len("_sym_sizes")])
            get = (lambda node: tuple(node._in_meta[pos].shape))
        else:
            raise TypeError(f"{self.name}: attrs names a static argument or <input>_sym_sizes, not {name!r}")
        if unsigned:  # torch shows negative saved int64 dims as unsigned 64-bit numbers
            return property(lambda node: _as_unsigned(get(node)))
        return property(get)

    def derivative(self, fn):
        """Register the backward formula ``fn(grad, **names) -> gradient or tuple (one per diff input)``."""
        self.backward = fn
        self._backward_params = tuple(inspect.signature(fn).parameters)[1:]
        return fn

    def __call__(self, *args, **statics):
        return _apply(self, args, tuple(statics[n] for n in self.statics))

    def _compile_forward(self, statics):
        # statics that == confuses with others (a float zero or NaN: -0.0 == 0.0) are kept under an exact key,
        # which _apply's _fwd.get(statics) never matches: their calls come here
        key = _exact_key(statics)
        if key is not statics and key in self._fwd:
            return self._fwd[key]
        fwd = self.forward if self.refuse is None else self._checked_forward
        pad = self._padded and self._padded(statics)
        if pad and pad[0] != statics:
            inner = self._fwd.get(pad[0]) or self._compile_forward(pad[0])
            fn = (lambda *a: _host_cut(inner(*a), pad[1], pad[2]))
        elif self._dyn:
            shared, dyn = self._shared_jit(("fwd", statics), statics, lambda args, kw: fwd(*args, **kw))
            fn = (lambda *a: shared(*a, *dyn))
            fn.shared, fn.dyn = shared, dyn  # (for _lazy_call)
        else:
            kw = dict(zip(self.statics, statics))
            fn = _jit(lambda *a: fwd(*a, **kw), self.name + ".forward")
        if len(self._fwd) >= _MAX_PROGRAMS:  # (a static that takes ever new values: the cache starts again)
            self._fwd.clear()
        self._fwd[key] = fn
        return fn

    def _lazy_key(self, fwd):
        """What lazy mode records the jitted forward ``fwd`` under: the function itself (one per statics: it hashes
        by identity), or None when it cannot be recorded (its sizes depend on values)."""
        return None if self._padded is not None else fwd

    def _checked_forward(self, *args, **statics):
        """The forward, after torch's dtype refusals: checked while JAX traces it, so once per dtype signature."""
        dt = statics.get("dtype")
        if dt is None:
            dt = next(a.dtype for a in args if a is not None)
        if np.dtype(dt).kind in self.refuse:
            error = _refused(self.refuse, dt, statics, args)
            if error is not None:
                _check_broadcast(args)  # torch checks the shapes first
                raise error
        return self.forward(*args, **statics)

    def _shared_jit(self, key, statics, body, names=None):
        """One jitted ``body(args, names)`` for every value of the dynamic statics, which it gets traced (as
        trailing arguments); returns it with this call's dynamic values. ``key``: what else the program depends on."""
        names = dict(zip(self.statics, statics)) if names is None else names
        dyn_names = [self.statics[i] for i in self._dyn]
        key = (key[0], _exact_key(tuple(None if i in self._dyn else v for i, v in enumerate(statics)))) + key[2:]
        shared = self._shared.get(key)
        if shared is None:
            fixed = {n: v for n, v in names.items() if n not in dyn_names}
            k = len(dyn_names)

            def traced(*args):
                return body(args[:-k], {**fixed, **dict(zip(dyn_names, args[-k:]))})
            if len(self._shared) >= _MAX_PROGRAMS:
                self._shared.clear()
            shared = self._shared[key] = _jit(traced, f"{self.name}.{'forward' if key[0] == 'fwd' else 'backward'}")
        return shared, tuple(jax.tree.map(_device_int, statics[i]) for i in self._dyn)

    def _compile_backward(self, key, out_meta):
        """Build (jitted, raw) backward for one (statics, input metadata, mask) key (kept as _compile_forward keeps
        its programs)."""
        statics, in_meta, mask = key
        exact = _exact_key(statics)
        if exact is not statics:
            key = (exact, in_meta, mask)
            if key in self._bwd:
                return self._bwd[key]
        n_saved = len(self.saves)
        names = {"grad_input_mask": mask}  # (as torch's formulas: which inputs need a gradient)
        names.update(zip(self.statics, statics))
        for pos, i in enumerate(self.diff):
            if in_meta[pos] is not None:
                names[self.inputs[i] + "_shape"] = in_meta[pos].shape
                names[self.inputs[i] + "_dtype"] = in_meta[pos].dtype
        saved_names = [s[0] for s in self.saves]
        formula = self.backward
        single = not self._tuple_out

        if formula is None:  # jax.vjp of the forward, w.r.t. the inputs that need a gradient
            if self._dyn:
                raise TypeError(f"{self.name}: an op with dynamic statics needs a derivative")
            fwd = self.forward
            static_kw = dict(zip(self.statics, statics))
            formula_node = isinstance(self, _FnOp) and self._formula
            if not set(self.inputs) <= set(saved_names):
                raise TypeError(f"{self.name}: an op without a derivative must save all its inputs")

            def formula(grads, **kw):
                full = [kw[n] for n in self.inputs]
                wanted = [self.diff[j] for j, m in enumerate(mask) if m]
                grads = (grads,) if single else tuple(grads)
                given = [k for k, g in enumerate(grads) if g is not None]  # outputs without a gradient take no
                # part (a zero cotangent would still turn an infinite partial derivative into NaN)

                def f(*diff_args):
                    args = list(full)
                    for j, a in zip(wanted, diff_args):
                        args[j] = a
                    outs = fwd(*args, **static_kw)
                    return tuple((outs,) if single else outs)

                def selected(*a):
                    outs = f(*a)  # (once: each call is traced into the program again)
                    return tuple(outs[k] for k in given)
                primals = [full[j] for j in wanted]
                outs, vjp = jax.vjp(selected, *primals)
                res = _conj_tree(vjp(tuple(_cotangent(grads[k], o) for k, o in zip(given, outs))))
                if formula_node:  # a create_graph formula: an input none of those outputs depends on gets no
                    # gradient (None, as torch's separate formulas give): backward does not reach its node
                    used = set().union(set(), *_dependencies(selected, primals, self.fused_backward))
                    res = [r if p in used else None for p, r in enumerate(res)]
                it = iter(res)
                return tuple(next(it) if m else None for m in mask)
            wanted_names = self.inputs
        else:
            wanted_names = self._backward_params

        def body(args, names):
            saved = dict(zip(saved_names, args[:n_saved]))
            grads = list(args[n_saved:])
            for k, g in enumerate(grads):
                if g is None and self.backward is not None:  # (the jax.vjp formula leaves such outputs out)
                    aval = out_meta[k]
                    dt = aval.dtype if _differentiable_dtype(aval.dtype) else jnp.float32
                    grads[k] = jnp.zeros(aval.shape, dt)
            kw = {n: (saved[n] if n in saved else names[n]) for n in wanted_names if n in saved or n in names}
            outs = formula(grads[0] if single else tuple(grads), **kw)
            if not isinstance(outs, (tuple, list)):
                outs = (outs,)
            res = []
            for pos, m in enumerate(mask):
                if m:
                    g = outs[pos]  # None: the formula says "no gradient" (torch's undefined gradient)
                    if not self.real_grads and g is not None and jnp.iscomplexobj(g) and \
                            in_meta[pos].dtype.kind != "c":
                        raise RuntimeError(_COMPLEX_GRAD_MSG)
                    if g is not None and in_meta[pos].dtype.kind not in "fcV":  # an integer tensor that requires
                        raise RuntimeError(_rec.INT_GRAD_MSG)  # grad (written in place from a value that does)
                    res.append(None if g is None else _reduce_to(g, in_meta[pos].shape, in_meta[pos].dtype))
            return tuple(res)

        def run(*args):
            return body(args, names)

        if self._dyn:  # one program for every value of the dynamic statics
            shared, dyn = self._shared_jit(("bwd", statics, in_meta, mask), statics, body, names)
            jitted = (lambda *a: shared(*a, *dyn))
            jitted.shared, jitted.dyn = shared, dyn
        else:
            jitted = _jit(run, self.name + ".backward")
        diff_op = _FnOp(self.name + "Backward", run, jitted, n_saved + len(self.outputs), sum(mask),
                        self.fused_backward, formula=True)
        pad = self._padded and self._padded(statics)
        if pad and pad[0] != statics:  # run the padded program on the gradient padded with zeros
            pstatics, axis, _, size = pad
            shape = list(out_meta[0].shape)
            shape[axis] = size
            pkey = (pstatics, in_meta, mask)
            inner = (self._bwd.get(pkey) or self._compile_backward(pkey, (out_meta[0].update(shape=tuple(shape)),)))[0]
            jitted = (lambda *a: inner(*a[:-1], None if a[-1] is None else _host_pad(a[-1], axis, size)))
        compiled = (jitted, diff_op)
        if len(self._bwd) >= _MAX_PROGRAMS:
            self._bwd.clear()
        self._bwd[key] = compiled
        return compiled


def _refused(refuse, dt, statics, args=()):
    """torch's error for an op refused for dtype ``dt`` (``refuse``: NumPy kind -> refusal): a refusal is a kernel
    name (NotImplementedError '"<kernel>" not implemented for '<Type>''), an (exception type, message) pair ('{}'
    in the message: the dtype's name), or a function of the op's statics and input arrays giving one of these
    (or None: not refused)."""
    refusal = refuse[np.dtype(dt).kind]
    if callable(refusal):
        refusal = refusal(statics, args)
        if refusal is None:
            return None
    word = _type_string(np.dtype(dt))[6:-6]
    if isinstance(refusal, str):
        return NotImplementedError(f"\"{refusal}\" not implemented for '{word}'")
    return refusal[0](refusal[1].format(word))


_COMPLEX_GRAD_MSG = ("Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be "
                     "true, but got false.  (Could this error message be improved?  If so, please report an "
                     "enhancement request to PyTorch.)")


def _jit(fn, name):
    """jax.jit of ``fn`` under the op's name, which JAX's compile logs show (``with jax.log_compiles():``), with
    torchlike's executable cache (a later process loads the program without tracing it)."""
    return _xcache.jit(fn, name)


def _host_cut(array, axis, size):
    """The first ``size`` entries of ``array`` along ``axis``, cut on the host (no program per size)."""
    return jax.device_put(np.asarray(array)[(slice(None),) * axis + (slice(0, size),)])


def _host_pad(array, axis, size):
    """``array`` padded with zeros to ``size`` along ``axis``, on the host (traced when lazy mode records it)."""
    widths = [(0, 0)] * array.ndim
    widths[axis] = (0, size - array.shape[axis])
    if isinstance(array, jax.core.Tracer):
        return jnp.pad(array, widths)
    return jax.device_put(np.pad(np.asarray(array), widths))


def _bucket(n):
    """A size rounded up to a power of two (at least 8): the padded sizes of data-dependent results."""
    return n if n == 0 else max(8, 1 << (n - 1).bit_length())


def _device_int(value):
    """A dynamic static as a device scalar: int64 for an int, float64/complex128 for a float/complex (a Python
    number would be copied to the device on every call)."""
    with jax.ensure_compile_time_eval():
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return jnp.asarray(value, jnp.int64)
        return jnp.asarray(value)


def op(node_name, **options):
    """Decorator declaring a table op from its JAX forward (see the module docstring; options as OpDef's)."""
    def deco(forward):
        return OpDef(node_name, forward, **options)
    return deco


class _SavedValues:
    """The table's saved values of one node by name, unpacked when read (for ``saved=`` getters)."""

    __slots__ = ("node", "getters")

    def __init__(self, node, getters):
        self.node, self.getters = node, getters

    def __getitem__(self, name):
        return self.getters[name](self.node)


def _as_unsigned(value):
    if isinstance(value, tuple):
        return tuple(_as_unsigned(v) for v in value)
    if isinstance(value, int) and not isinstance(value, bool) and value < 0:
        return value + (1 << 64)
    return value


class _FnOp(OpDef):
    """An op over n arrays from a ready function; backward = jax.vjp of it (used for create_graph)."""

    def __init__(self, node_name, raw, jitted, n_inputs, n_outputs, fused_backward=False, formula=False):
        self._formula = formula  # a backward formula (create_graph): its unused inputs get no edge
        names = tuple(f"arg{i}" for i in range(n_inputs))
        outputs = tuple(f"r{i}" for i in range(n_outputs))
        super().__init__(node_name, raw, inputs=names, statics=(), outputs=outputs, tuple_out=True,
                         fused_backward=fused_backward)
        self._fwd[()] = jitted
        self._deps = {}

    def __call__(self, *args):
        if not _gm._state.grad_enabled:
            return _apply(self, args, ())
        key = tuple(None if a is None else a._data.size == 0 for a in args)  # (_dependencies: empty arrays)
        deps = self._deps.get(key)
        if deps is None:
            deps = self._deps[key] = _dependencies(self.forward, [None if a is None else a._data for a in args],
                                                   self.fused_backward)
        # an input no output depends on (a saved result read through a comparison) gets no edge, as in torch's
        # graph of the formula: a further derivative does not reach its node (which may have been freed)
        if self._formula:
            used = set().union(*deps)
            args = tuple(a if a is None or i in used or not a._requires_grad else _wrap(a._data)
                         for i, a in enumerate(args))
        outs = _apply(self, args, ())
        self._detach_independent(args, outs, deps)
        node = next((o._grad_fn for o in outs if o is not None and o._grad_fn is not None), None)
        if node is not None and self._formula and len(outs) > 1:  # torch's formula is one graph per output
            node._edge_outputs = tuple(frozenset(k for k, d in enumerate(deps) if i in d) for i in self.diff)
        return outs

    @staticmethod
    def _detach_independent(args, outs, deps):
        """As in torch, a gradient that does not depend on any input requiring grad has no history (so, e.g., a
        constant second derivative does not require grad): cut the outputs whose formula ignores those inputs."""
        for out, used in zip(outs, deps):
            if out is not None and out._grad_fn is not None and \
                    not any(args[i] is not None and args[i]._requires_grad for i in used):
                out._grad_fn, out._output_nr, out._requires_grad = None, 0, False


_Literal = jax.extend.core.Literal


def _dependencies(fn, arrays, through_masks=False):
    """Per output of ``fn(*arrays)``: the positions of the arrays it depends on (from its jaxpr). As in torch's
    autograd, a value reached only through integer or bool values (a comparison, an index) or ``stop_gradient``
    does not count, unless ``through_masks`` (torch's fused backward functions, which are differentiable ops of
    what they mask with)."""
    closed = jax.make_jaxpr(fn)(*arrays)
    flat_pos = []  # jaxpr input variable -> argument position (None arguments have no variable)
    for i, a in enumerate(arrays):
        if a is not None:
            flat_pos.append(i)
    dep = {v: {i} for v, i in zip(closed.jaxpr.invars, flat_pos)}
    live = dict(dep)  # what each value is computed from, through any path
    for eqn in closed.jaxpr.eqns:
        used, reached = set(), set()
        for v in eqn.invars:
            if not isinstance(v, _Literal):
                reached |= live.get(v, set())
                if through_masks or eqn.primitive.name != "stop_gradient":
                    used |= dep.get(v, set())
        for v in eqn.outvars:
            dep[v] = used if through_masks or jnp.issubdtype(v.aval.dtype, jnp.inexact) else set()
            live[v] = reached
    outs = jax.tree_util.tree_leaves(jax.eval_shape(fn, *arrays), is_leaf=lambda x: x is None)
    result, it = [], iter(closed.jaxpr.outvars)
    for o in outs:
        if o is None:
            result.append(set())
        else:
            v = next(it)
            result.append(set() if isinstance(v, _Literal) else dep.get(v, set()))
    # JAX drops an operand with no elements (a scatter of no values returns its target; a gather of none makes
    # zeros), where torch's formula still passes it through an op: the floating results depend on it (a formula
    # where torch returns zeros without reading it reads it through stop_gradient: ``_util.ignoring``)
    reached = set().union(*(live.get(v, ()) for v in closed.jaxpr.outvars if not isinstance(v, _Literal)))
    dropped = {i for i, a in enumerate(arrays) if a is not None and a.size == 0 and i not in reached and
               jnp.issubdtype(a.dtype, jnp.inexact)}
    if dropped:
        result = [r | dropped if o is not None and jnp.issubdtype(o.dtype, jnp.inexact) else r
                  for r, o in zip(result, outs)]
    # likewise an empty floating result (scatter's src gradient for an empty src: torch's gather of the gradient)
    # is computed from what the formula's other results are
    every = set().union(*result)
    return [every if o is not None and o.size == 0 and not r and jnp.issubdtype(o.dtype, jnp.inexact) else r
            for r, o in zip(result, outs)]


def _cotangent(g, out):
    if jnp.issubdtype(out.dtype, jnp.inexact):
        return jnp.conj(g).astype(out.dtype)
    return np.zeros(out.shape, jax.dtypes.float0)


def _conj_tree(xs):
    return tuple(jnp.conj(x) if x is not None and jnp.iscomplexobj(x) else x for x in xs)


def _reduce_to(g, shape, dt):
    """Sum a broadcast gradient back to an input's shape and cast it to the input's dtype."""
    if g.shape != shape:
        lead = g.ndim - len(shape)
        axes = tuple(range(lead)) + tuple(
            lead + i for i, s in enumerate(shape) if s == 1 and g.shape[lead + i] != 1)
        g = jnp.sum(g, axis=axes, keepdims=False) if axes else g
        g = g.reshape(shape)
    if g.dtype != dt:
        if not jnp.issubdtype(dt, jnp.complexfloating) and jnp.iscomplexobj(g):
            g = jnp.real(g)
        g = g.astype(dt)
    return g


_hook = None  # while autocast or a profiler is on: fn(op, args, run, inplace, statics) (torchlike/amp/_hook.py)


_composite_cast = None  # while autocast is on: fn(name, args) -> args, for composites torch's autocast lists


def autocast_args(name, *tensors):
    """The inputs of the composite ``name`` as autocast casts them where torch's autocast wraps the whole op
    (unchanged while autocast is off)."""
    return tensors if _composite_cast is None else _composite_cast(name, tensors)


def set_dispatch_hook(fn):
    """Install (or, with None, remove) the function every table op dispatches through (autocast, profiler); with
    None in lazy mode, the lazy recorder is back."""
    global _hook
    _hook = fn if fn is not None or not _lz._State.on else _lazy_hook


def _lazy_hook(op, args, run, inplace, statics=()):
    """Lazy mode's hook: ``_apply`` records when it finds it installed (a hook that chains to it runs eagerly)."""
    return run(args)


_pressure = False  # past _xcache.MAP_LIMIT memory mappings: the next op outside a trace drops every executable


def _under_pressure():
    global _pressure
    _pressure = True


def _relieve():
    global _pressure
    if _xcache.relieve():
        _pressure = False


_xcache.on_pressure.append(_under_pressure)
_LAZY = object()  # ``_apply``'s ``_hooked`` in lazy mode: record the forward (torchlike/_lazy.py)
if _lz._State.on:  # TORCHLIKE_LAZY=1
    _hook = _lazy_hook


def _lazy_call(fn, key, arrays):
    """Lazy mode's record of ``fn(*arrays)`` (``key``: see OpDef._lazy_key). A program of an op with dynamic statics
    is recorded as the op's shared program with their values as arguments: a new value is then the same pending
    program (as a new value is the same program in eager mode), not a new one to compile."""
    shared = getattr(fn, "shared", None)
    if shared is not None:
        return _lz.call(shared, shared, [*arrays, *fn.dyn])
    return _lz.call(fn, key, arrays)


def _plain_dispatch():
    """Whether ops run as themselves or are recorded by lazy mode: no autocast or profiler hook (the engine then
    fuses runs of backward formulas: see _run_chain)."""
    return _hook is None or _hook is _lazy_hook


def set_lazy(on):
    """Turn lazy mode on or off (pending values are computed first when it goes off)."""
    global _hook
    if not on:
        _lz.sync()
    else:
        _lz._State.owner = threading.get_ident()
    _lz._State.on = on
    if _hook is None or _hook is _lazy_hook:
        _hook = _lazy_hook if on else None


def _apply(op, args, statics, _hooked=False):
    """Run one op: jitted forward; if grad mode is on and an input requires grad, record a node."""
    if _pressure:
        _relieve()
    if _hook is not None and not _hooked:
        if _hook is not _lazy_hook:
            return _hook(op, args, lambda a: _apply(op, a, statics, True), False, statics)
        _hooked = _LAZY
        if op._pending and _gm._state.grad_enabled and _fw_state.level is None and not _anomaly.enabled \
                and not _saved_hooks.stack:  # the commonest case, recorded in one step
            a = args[0]
            if a is not None and a._grad_fn is not None and a._sgeom is None:
                if len(args) == 1:
                    out = _lz.call_pending(op._fwd.get(statics), a._data)
                    if out is not None:
                        return _rec.record_pending(op, args, out, statics)
                else:
                    b = args[1]
                    if b is not None and (b._wrapped_number or b._sgeom is None and (
                            b._grad_fn is not None or not b._requires_grad and not b._is_inference)):
                        out = _lz.call_pending(op._fwd.get(statics), a._data, b._data)
                        if out is not None:
                            return _rec.record_pending(op, args, out, statics)
    arrays = [a._data if a is not None else None for a in args]
    fwd = op._fwd.get(statics) or op._compile_forward(statics)
    try:
        out = fwd(*arrays) if _hooked is not _LAZY else _lazy_call(fwd, op._lazy_key(fwd), arrays)
    except (TypeError, ValueError):  # JAX's shape errors: torch's error when the operands do not broadcast
        _check_broadcast(arrays)
        raise
    single = not op._tuple_out
    outs = (out,) if single else tuple(out)
    if op.layout is not None:
        for a in args:
            if a is not None and a._sgeom is not None:  # an input not row-major: the result takes its layout
                results = _layout.place(op.layout, args, _results(op, args, arrays, statics, outs))
                if _fw_state.level is not None:
                    _fw._propagate(op, args, arrays, statics, results)
                return results[0] if single else tuple(results)
    if _fw_state.level is not None:  # forward AD: a dual level is active
        results = _results(op, args, arrays, statics, outs)
        _fw._propagate(op, args, arrays, statics, results)
        return results[0] if single else tuple(results)
    if _gm._state.grad_enabled:
        for i in op.diff:
            a = args[i]
            if a is not None and a._requires_grad:
                results = _rec.record(op, args, arrays, statics, outs)
                return results[0] if single else tuple(results)
    if single:
        return _wrap(out)
    return tuple(None if o is None else _wrap(o) for o in outs)


def _results(op, args, arrays, statics, outs):
    """The output tensors of one op call (recorded when grad mode is on and an input requires grad)."""
    if _gm._state.grad_enabled:
        for i in op.diff:
            a = args[i]
            if a is not None and a._requires_grad:
                return _rec.record(op, args, arrays, statics, outs)
    return [None if o is None else _wrap(o) for o in outs]


# ----- Python scalars as wrapped 0-d tensors (torch's "wrapped numbers") -----------------------------
_scalar_cache = {}


def _scalar(value):
    """A cached 0-d tensor for a Python scalar: float64/int64/bool/complex128, as torch wraps them."""
    key = (type(value), value)
    if not value and type(value) is float:  # (-0.0 == 0.0: the sign is part of the key)
        key = (float, value, math.copysign(1.0, value))
    elif type(value) is complex:
        key = (complex, _exact_key(value))
    t = _scalar_cache.get(key)
    if t is None:
        if len(_scalar_cache) > 4096:
            _scalar_cache.clear()
        dt = (jnp.bool_ if isinstance(value, bool) else jnp.int64 if isinstance(value, int)
              else jnp.complex128 if isinstance(value, complex) else jnp.float64)
        with jax.ensure_compile_time_eval():  # a concrete array even when first made inside a JAX trace
            a = jnp.asarray(value, dt)
        t = _new(Tensor)  # never an inference tensor: the cache outlives inference_mode
        t._data = a
        t._wrapped_number = True
        if value == value:  # NaN keys never match; do not fill the cache with them
            _scalar_cache[key] = t
    return t


def _check_inplace(target, overlap=None, others=(), early=None):
    """torch's checks before an in-place op; raise before anything is changed (``overlap``: see _apply_inplace;
    ``others``: the op's other operands; ``early``: the op's own checks torch makes before TensorIterator's overlap
    check, a function run only when the target overlaps)."""
    if _gm._state.grad_enabled:
        _check_autograd_inplace(target, others)
    if target._sgeom is not None:
        if early is not None and overlap is None and _views._overlaps(target._sgeom):
            early()
        _views._check_overlap(target, overlap)


def _early_refusal(op, args, statics):
    """Raise ``op``'s refusal of its dtype when it is an explicit check (an exception and message, made in torch's
    meta function, before TensorIterator), not a kernel's "not implemented"."""
    if op.refuse is None:
        return
    named = dict(zip(op.statics, statics))
    dt = named.get("dtype")
    if dt is None:
        dt = next(a._data.dtype for a in args if a is not None)
    if np.dtype(dt).kind in op.refuse:
        error = _refused(op.refuse, dt, named, [a if a is None else a._data for a in args])
        if error is not None and not str(error).startswith('"'):  # (a kernel's '"<name>" not implemented': later)
            raise error


def _check_autograd_inplace(target, others=()):
    """torch's autograd checks of an in-place target (a leaf, a view of a leaf, ...): before the op's own
    argument checks, as torch's autograd kernel runs before the op's. ``others``: the op's other operands (a view
    torch forbids to modify is refused when one of them requires grad too)."""
    if _gm._state.grad_enabled and not target._requires_grad and target._base is not None and (
            target._view_error is not None or target._view_meta is not None) and any(
            isinstance(o, Tensor) and o._requires_grad for o in others):
        _views._check_view_inplace(target)
    if _gm._state.grad_enabled and target._requires_grad:
        if target._base is not None:  # torch's check_inplace: a view torch forbids to modify, a view of a leaf
            _views._check_view_inplace(target)
        elif target._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
        base = target._base
        if base is not None and target._requires_grad and base._requires_grad and base._grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")


def _check_integer_target(op, target, args):
    """torch's autograd kernel of an in-place op clones the target when its formula saves it (before the op's
    own checks): an integer target with history fails there, as its clone cannot take a node."""
    if target._requires_grad and _gm._state.grad_enabled and target._data.dtype.kind in "biu":
        for _, kind, index, needed in op.saves:
            if kind == "in" and index == 0 and (not needed or any(
                    args[op.diff[j]] is not None and args[op.diff[j]]._requires_grad for j in needed)):
                raise RuntimeError(f"Autograd not support dtype: {_type_string(target._data.dtype)[6:-6]}")


def _apply_inplace(op, target, args, statics, overlap=None, _hooked=False):
    """Run op on args (target among them) and write the result into target: rebind, bump version, rebase.
    ``overlap``: for the writes torch lets into an expanded target, the op names it warns with (see
    ``_views._check_overlap``); None: refused, as by most in-place ops."""
    if _hook is not None and not _hooked:
        if _hook is not _lazy_hook:
            return _hook(op, args, lambda a: _apply_inplace(op, target, a, statics, overlap, True), True, statics)
        _hooked = _LAZY
    _check_inplace(target, overlap, args, early=lambda: _early_refusal(op, args, statics))
    _check_integer_target(op, target, args)
    if target._storage is not None and op not in _views._OWN_INPUT_CHECK:  # the others may share its memory
        _views._check_input_overlap(target, args[1:])
    arrays = [a._data if a is not None else None for a in args]
    fwd = op._fwd.get(statics) or op._compile_forward(statics)
    try:
        out = fwd(*arrays) if _hooked is not _LAZY else _lazy_call(fwd, op._lazy_key(fwd), arrays)
    except (TypeError, ValueError):
        _check_broadcast(arrays)
        raise
    outs = (out,) if not op._tuple_out else tuple(out)
    if outs[0].shape != target._data.shape:
        raise RuntimeError(f"output with shape {list(target._data.shape)} doesn't match the broadcast shape "
                           f"{list(outs[0].shape)}")
    if outs[0].dtype != target._data.dtype:
        raise RuntimeError(f"result type {_type_string(outs[0].dtype)[6:-6]} can't be cast to the desired output "
                           f"type {_type_string(target._data.dtype)[6:-6]}")
    if _fw_state.level is None:
        return _write_inplace(op, target, args, arrays, statics, outs)
    # forward AD: the new tangent comes from the inputs' values before the write, then is written in place too
    tangent = _fw._inplace_tangent(op, target, args, arrays, statics)
    _write_inplace(op, target, args, arrays, statics, outs)
    if tangent is not None:
        _fw._set_inplace_tangent(target, tangent)
    return target


def _write_inplace(op, target, args, arrays, statics, outs):
    """Write an in-place op's result into target: recorded (CopySlices for a view) or not; views updated."""
    if _gm._state.grad_enabled:
        for i in op.diff:
            a = args[i]
            if a is not None and a._requires_grad:
                if target._base is not None:
                    return _views._inplace_on_view(op, target, args, arrays, statics, outs)
                old = target._data
                _rec.record(op, args, arrays, statics, outs, inplace=target)
                if target._storage is not None:
                    _views._after_record(target, old)
                return target
    _views._commit(target, outs[0])
    return target


from . import _views  # noqa: E402  (views build on this module)


# ----- forward AD (ops/_forward_ad.py) propagates tangents after _apply / _apply_inplace
from . import _forward_ad as _fw  # noqa: E402

_fw_state = _fw._state
