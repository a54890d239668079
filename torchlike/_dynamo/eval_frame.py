"""``torchlike.compile``: a function of torchlike code run as one ``jax.jit`` program per guard signature.

How a call runs. ``fn``'s *state* is found by walking what it can reach: its arguments, its closure cells, the
globals its code names (recursively through user functions), ``self`` of a bound method, and from there modules,
optimizers, schedulers, generators, user objects, dicts, lists and tuples. Every Tensor found (parameters, ``.grad``,
buffers, optimizer state, ...) and every generator's key is an input of the program; the walk also gives the *guard*:
the structure of what was found (object identities of modules/optimizers/containers, each tensor's shape, dtype,
``requires_grad``, whether it has a ``.grad``, hook counts, the Python scalars it reaches, module ``training``
flags), the arguments' tree, shapes and dtypes, and the grad mode. One program is traced per guard (the first call
with it): the inputs' arrays are replaced by tracers, ``fn`` runs with its torchlike semantics (the tape, hooks,
custom Functions, ``backward()``, optimizer steps) and the state it leaves holding tracers (written in place, new
``.grad`` tensors, new optimizer state) becomes the program's outputs. Each call then reads the current state,
runs the program, and writes the results back (versions bumped as the trace bumped them).

What does not carry over from eager:
- Python side effects (a hook appending to a list, a print) run while tracing, once per compilation, not per call;
  a list that grows while tracing is reported with a warning.
- A host read (``.item()``, ``bool(t)``, data-dependent control flow, NumPy conversion) cannot be traced:
  ``fullgraph=True`` raises an error naming the user's line; otherwise that guard signature has a graph break: its
  calls run ``fn`` in lazy mode (``torchlike.lazy()``), so the ops before each host read run as one fused program
  and the rest as another, each cached by its structure and replayed by later calls (torch.compile's split into
  subgraphs). Semantics are eager's: the host read sees the value, and Python runs on every call.
- Outputs whose graph ``fn`` already backpropagated through carry a ``CompiledFunctionBackward`` node that raises
  torch's "backward through the graph a second time" error; outputs with a live graph carry a
  ``CompiledFunctionBackward`` node whose backward is a second compiled program (``fn`` again, then the torchlike
  engine's ``autograd.grad``: custom Functions' and hooks' backward semantics hold; double backward is refused as
  torch's aot_autograd does).
- Tensors reachable only through objects the walk does not enter (library objects, lists or dicts longer than
  ``config.walk_container_limit``) are read as constants of the program.
"""
import dis
import functools
import sys
import traceback
import types
import warnings
import weakref

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax.core import Tracer

from .. import _grad_mode as _gm, _lazy_mode, _roll
from .._dtype import _exact_key
from .._graph import Node, _ALL_FREED, _FREED, _FREED_MSG
from .._tensor import _NO_VC, Tensor, _wrap
from ..autograd import grad as _autograd_grad
from ..autograd.function import Function
from ..nn.modules.module import Module
from ..ops import _util, creation as _creation
from ..ops._views import _write
from . import config

__all__ = ["OptimizedModule"]

_SCALARS = (bool, int, float, complex, str, bytes, type(None))
_LIBRARIES = frozenset({"torchlike", "interop", "jax", "jaxlib", "numpy", "torch", "optax", "scipy"})
_ALL = weakref.WeakSet()  # every compiled function (for torchlike._dynamo.reset)
class _Disabled(Exception):
    """A torch.compiler.disable()d function called while tracing: the program splits there (a graph break)."""


_HOST_READS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError, _Disabled)
_compiling = [0]  # traces under way (torch.compiler.is_compiling)


def disable(fn=None, recursive=True, *, reason=None):
    """torch.compiler.disable: ``fn`` never becomes part of a compiled program; called while compiling, it splits
    the program there (fullgraph=True: an error) and runs as eager code."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def run_eagerly(*args, **kwargs):
        if _compiling[0]:
            raise _Disabled(f"Skip calling `torch.compiler.disable()`d function {getattr(fn, '__qualname__', fn)}"
                            + (f" (reason: {reason})" if reason else ""))
        return fn(*args, **kwargs)
    return run_eagerly


def is_compiling():
    """Whether torchlike.compile is tracing the code that asks (torch.compiler.is_compiling)."""
    return _compiling[0] > 0


def _is_library(obj):
    name = getattr(obj, "__module__", None) or type(obj).__module__ or ""
    root = name.partition(".")[0]
    return root in _LIBRARIES or root in sys.stdlib_module_names


# ----- the walk: state and guard ----------------------------------------------------------------------------------
_MISSING = object()
_NONE = {True: "None", False: "not None"}


class _Walk:
    """What ``fn`` can reach: its state (tensors, generators), where each object sits, and the guard: Python
    expressions over the objects found that are all true while nothing the trace depends on changed."""

    def __init__(self):
        self.tensors = []  # state tensors in visit order
        self.index = {}  # id(tensor) -> its position in self.tensors
        self.cells = []  # the other inputs: generators' keys, optimizers' learning rates (_Key, _Item)
        self.places = {}  # id(object) -> (container, key) where the walk found it
        self.lists = []  # (list, its length): to report lists that grew while tracing
        self.seen = {}
        self.roots = []
        self.env = {"_Tensor": Tensor}  # the guard's globals: the objects it reads, by name (a place gone raises)
        self.names = {}
        self.checks = []  # (expression, what it reads, for messages)
        self.exprs = []  # per state tensor: the expression that reads it

    def bind(self, obj):
        name = self.names.get(id(obj))
        if name is None:
            name = self.names[id(obj)] = f"_{len(self.env)}"
            self.env[name] = obj
        return name

    def visit(self, obj, expr, what, depth=0, container=None, key=None):
        """Walk ``obj``, which ``expr`` (a Python expression) reads now; ``what`` names it for messages."""
        check = self.checks.append
        if isinstance(obj, _SCALARS):
            if obj is None or isinstance(obj, bool):
                check((f"{expr} is {obj!r}", what))
            elif _exact_key(obj) is not obj:  # a float zero or NaN (-0.0 == 0.0, nan != nan: see _dtype._exact_key)
                self.env["_exact_key"] = _exact_key
                check((f"type(_v := {expr}) is {type(obj).__name__} and _exact_key(_v) == "
                       f"{self.bind(_exact_key(obj))}", what))
            else:
                check((f"type(_v := {expr}) is {type(obj).__name__} and _v == {self.bind(obj)}", what))
            return
        if isinstance(obj, Tensor) and container is not None and key == "_grad":
            # a .grad: read through its tensor each call (backward and zero_grad replace it); checked by shape
            if id(obj) not in self.seen:
                self.seen[id(obj)] = obj
                self.places[id(obj)] = (container, key)
                self._tensor(obj, expr, what, depth)
            return
        name = self.bind(obj)
        if expr != name:  # (a dict's tensor key is read by its own name)
            check((f"{expr} is {name}", what))
        if id(obj) in self.seen:
            return
        self.seen[id(obj)] = obj
        if container is not None:
            self.places[id(obj)] = (container, key)
        if isinstance(obj, Tensor):
            self._tensor(obj, name, what, depth)
        elif isinstance(obj, _creation.Generator):
            self.cells.append(_Key(obj))
        elif isinstance(obj, (list, tuple)):
            self._sequence(obj, name, what, depth)
        elif isinstance(obj, dict):
            self._dict(obj, name, what, depth)
        elif isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
            self._function(obj, name, what, depth)
        elif isinstance(obj, _Compiled):  # another compiled function fn calls: its state, not its programs
            self.visit(obj.fn, f"{name}.fn", what, depth)
        elif depth < config.walk_depth and hasattr(obj, "__dict__") and not isinstance(obj, (type, types.ModuleType)) \
                and (isinstance(obj, Module) or not _is_library(obj) or _is_state_owner(obj)):
            attrs = vars(obj)
            d = self.bind(attrs)
            check((f"len({d}) == {len(attrs)}", f"{what}'s attributes"))
            empty = []  # attributes holding empty dicts or sets (hooks, mostly): checked together, by object
            for k, value in list(attrs.items()):
                if isinstance(value, (dict, set)) and not value and k.startswith("_"):
                    empty.append(self.bind(value))
                else:
                    self.visit(value, f"{d}[{k!r}]", f"{what}.{k}", depth + 1, obj, k)
            if empty:
                check((f"not ({' or '.join(empty)})", f"{what}'s hooks"))

    def _tensor(self, t, n, what, depth):
        self.index[id(t)] = len(self.tensors)
        self.tensors.append(t)
        self.exprs.append(n)
        d = t._data
        self.checks.append((
            f"{n}._data.aval is {self.bind(d.aval)} and {n}._requires_grad is {t._requires_grad} and {n}._grad_fn is {_NONE[t._grad_fn is None]}",
            f"{what}'s shape, dtype, requires_grad or history"))
        if n.endswith("._grad"):
            return  # (a .grad's own hooks and .grad are not the trace's business)
        if t._hooks or t._post_acc_hooks:
            self.checks.append((f"len({n}._hooks or ()) == {len(t._hooks or ())} and len({n}._post_acc_hooks or ())"
                                f" == {len(t._post_acc_hooks or ())}", f"{what}'s hooks"))
            for hooks in (t._hooks, t._post_acc_hooks):
                for hook in list((hooks or {}).values()):
                    self.visit(hook, self.bind(hook), f"{what}'s hook", depth + 1)
        else:
            self.checks.append((f"not ({n}._hooks or {n}._post_acc_hooks)", f"{what}'s hooks"))
        self.visit(t._grad, f"{n}._grad", f"{what}.grad", depth + 1, t, "_grad")

    def _sequence(self, seq, n, what, depth):
        if len(seq) > config.walk_container_limit or depth >= config.walk_depth:
            return
        self.checks.append((f"len({n}) == {len(seq)}", f"len({what})"))
        if isinstance(seq, list):
            self.lists.append((seq, len(seq)))
        for k, v in enumerate(seq):
            self.visit(v, f"{n}[{k}]", f"{what}[{k}]", depth + 1, seq, k)

    def _dict(self, d, n, what, depth):
        if len(d) > config.walk_container_limit and depth or depth >= config.walk_depth:
            return
        self.checks.append((f"len({n}) == {len(d)}", f"len({what})"))
        lifted = "params" in d and type(d.get("lr")) is float  # an optimizer's param group: lr is an input
        for k, v in list(d.items()):
            if lifted and k == "lr":
                self.cells.append(_Item(d, k))
                self.checks.append((f"type({n}['lr']) is float", f"{what}['lr']"))
                continue
            if isinstance(k, Tensor):
                self.visit(k, self.bind(k), f"{what}'s key", depth + 1)
            label = k if isinstance(k, str) else "<key>"
            self.visit(v, f"{n}[{self.bind(k)}]", f"{what}[{label!r}]", depth + 1, d, k)

    def _function(self, fn, n, what, depth):
        if isinstance(fn, functools.partial):
            self.visit(fn.func, f"{n}.func", what, depth)
            self.visit(fn.args, f"{n}.args", what, depth + 1)
            self.visit(fn.keywords, f"{n}.keywords", what, depth + 1)
            return
        if isinstance(fn, types.MethodType):
            self.visit(fn.__self__, f"{n}.__self__", what.rpartition(".")[0] or what, depth)
            fn = fn.__func__
        if _is_library(fn) or depth >= config.walk_depth:
            return
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later)
                continue
            self.visit(value, f"{self.bind(cell)}.cell_contents", var, depth + 1, cell, None)
        globs = fn.__globals__
        for name in _global_names(fn.__code__):
            if name in globs:
                self.visit(globs[name], f"{self.bind(globs)}[{name!r}]", name, depth + 1, globs, name)
        self.visit(fn.__defaults__, f"{n}.__defaults__", f"{what}'s defaults", depth + 1)
        self.visit(fn.__kwdefaults__, f"{n}.__kwdefaults__", f"{what}'s defaults", depth + 1)

    def guard(self):
        """The checks as one compiled function ``guard(A) -> bool`` (A: the call's flattened arguments)."""
        body = " and ".join(f"({e})" for e, _ in self.checks) or "True"
        env = dict(self.env)
        gather = ", ".join(self.exprs)
        exec(f"def guard(A):\n    return {body}\n\ndef gather():\n    return [{gather}]\n", env)  # noqa: S102
        return env["guard"], env["gather"]  # (generated from the walk, as torch.compile's guards are)

    def release(self):
        """Drop what only tracing needed (the objects found and where they sit): the guard and gather keep what
        they read. A kept walk would hold the first call's arguments and replaced .grads for the program's life
        (a program that runs fn eagerly or in lazy mode, or that has no backward program, needs no more)."""
        self.tensors, self.index, self.places, self.lists, self.seen, self.roots = [], {}, {}, [], {}, []

    def failing(self, leaves):
        """What the first failing check reads (why a call did not match this guard)."""
        env = dict(self.env, A=leaves)
        for expr, what in self.checks:
            try:
                if not eval(expr, env):  # noqa: S307
                    return what
            except Exception:
                return what
        return None


def _is_state_owner(obj):
    """Library objects whose attributes are state: optimizers and schedulers (found by their attributes)."""
    return hasattr(obj, "param_groups") or hasattr(obj, "optimizer") and hasattr(obj, "last_epoch")


@functools.lru_cache(maxsize=4096)
def _global_names(code):
    """The global names ``code`` (and the functions it defines) reads or writes: not its attribute names, so
    ``opt.step()`` inside a function does not make the walk enter a global named ``step``."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.update(_global_names(const))
    return tuple(sorted(names))


_GLOBAL_OPS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "STORE_GLOBAL", "DELETE_GLOBAL", "STORE_NAME", "DELETE_NAME"})


class _Key:
    """A generator's key as a program input (and output: drawing advances it)."""

    def __init__(self, generator):
        self.owner = generator

    def get(self):
        return self.owner._key

    def set(self, value):
        self.owner._key = value

    install = restore = set
    arg = get


class _Item:
    """A Python float in a dict (an optimizer's ``lr``) as a program input: a scheduler's new value never
    recompiles. While tracing it is a 0-d tensor (torch's optimizers take a tensor ``lr``)."""

    def __init__(self, d, key):
        self.owner, self.key = d, key

    _arg = (None, None)

    def get(self):
        return self.owner[self.key]

    def arg(self):
        """The value as the program's input: while the float is the same object, the array made from it last time
        (jit converts a float argument on every call)."""
        v = self.owner[self.key]
        if v is not self._arg[0]:
            self._arg = (v, jnp.asarray(v) if type(v) is float else v)
        return self._arg[1]

    def install(self, value):
        self.owner[self.key] = self.installed = _wrap(value)

    def set(self, value):
        self.owner[self.key] = float(value)

    def restore(self, value):
        self.owner[self.key] = value


# ----- reading and writing the state --------------------------------------------------------------------------
def _version(t):
    """t's version (its counter made if it has none yet); None for an inference tensor (no counter)."""
    vc = t._version_counter()
    return None if vc is _NO_VC else vc.version


def _set_value(t, value):
    """New values for a state tensor; the views and aliases sharing its memory see them too."""
    if t._storage is None:
        t._data = value
    else:
        _write(t, value)


class _Snapshot:
    """The walked state's values and Python structure before a trace, to put back after it."""

    def __init__(self, walk, tensors):
        self.tensors = [(t, t._data, t._storage, t._grad, _version(t),
                         t._requires_grad, t._grad_fn, t._output_nr) for t in tensors]
        self.cells = [(c, c.get()) for c in walk.cells]
        storages = {id(t._storage): t._storage for t in tensors if t._storage is not None}
        self.storages = [(st, st.data, [(m, m._data) for m in (r() for r in st.members) if m is not None])
                         for st in storages.values()]  # (a view's base and the other views see what is installed)
        self.containers = [(c, dict(c)) for c in walk.seen.values() if isinstance(c, dict)]
        self.lists = [(c, list(c)) for c, _ in walk.lists]
        self.hooks = [(owner, name, getattr(owner, name))
                      for t in tensors for owner, names in ((t, _TENSOR_HOOKS), (t._grad_fn, _NODE_HOOKS))
                      if owner is not None for name in names]
        dicts = [h for _, _, h in self.hooks if isinstance(h, dict)]
        dicts += [d for h in dicts for d in h.values() if isinstance(d, dict)]  # (a node's per-output hooks)
        self.hook_dicts = [(d, dict(d)) for d in dicts]

    def all(self):
        """Put everything back as it was (the values as they were, not written through the views again)."""
        for t, value, storage, grad, version, requires_grad, grad_fn, nr in self.tensors:
            t._storage, t._data, t._grad = storage, value, grad
            if version is not None:
                t._vc.version = version
            t._requires_grad, t._grad_fn, t._output_nr = requires_grad, grad_fn, nr
        for st, data, members in self.storages:
            st.data = data
            for m, d in members:
                m._data = d
        for c, value in self.cells:
            c.restore(value)
        for c, items in self.containers:
            c.clear()
            c.update(items)
        for c, items in self.lists:
            c[:] = items

    def hooks_back(self):
        """Remove the hooks the trace registered on the state (a graph break runs fn again, which registers them)."""
        for owner, name, hooks in self.hooks:
            setattr(owner, name, hooks)
        for d, items in self.hook_dicts:
            d.clear()
            d.update(items)


_TENSOR_HOOKS = ("_hooks", "_post_acc_hooks", "_retains_grad")
_NODE_HOOKS = ("_pre_hooks", "_post_hooks", "_tensor_pre_hooks", "_retains_grad")

# ----- one compiled program -----------------------------------------------------------------------------------
class _Program:
    """One guard's program: the guard, the state it reads and writes, and how its results go back."""

    eager = False  # past config.recompile_limit: this guard's calls run fn eagerly
    split = False  # a graph break: this guard's calls run fn in lazy mode (fused programs between host reads)

    def __init__(self, walk, tree, modes, arg_pos):
        self.guard, self.gather = walk.guard()
        self.walk = walk  # (for the recompile message)
        self.tree, self.modes, self.arg_pos = tree, modes, arg_pos
        self.cells = walk.cells  # (after gather(): the state tensors, in the program's input order)
        self.jitted = None
        self.checks = []  # (exception class, message) of each value check the program returns (check_later)
        self.out_tree = None  # fn's output structure
        self.out_kinds = []  # per output leaf: ("array", None) or ("const", value)
        self.writes = []  # per written array: ("state"|"arg"|"arggrad", position) | ("new", tensor) | ("cell", cell)
        self.attach = []  # (container, key, object, container's state position or None): structure fn built
        self.fresh = set()  # ids of the .grads fn made: each call attaches new ones (see _write_back)
        self.deltas = []  # (state position, version bump), then the arguments'
        self.arg_deltas = []
        self.freed = []  # per output leaf: fn already backpropagated through its graph
        self.live = []  # per output leaf: it requires grad and its graph is live (a differentiable output)
        self.kept = set()  # with value checks: the state positions a failed check gives back unchanged (donatable)
        self.backward_tensors = None  # while the backward program runs: the forward call's arguments and state
        self.recycle = []  # (state position of an old .grad that fn replaces, write index of the new one)


class _Compiled:
    """``torchlike.compile(fn)``'s callable."""

    def __init__(self, fn, fullgraph, dynamic):
        self.fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.programs = []  # newest first
        self.compiles = 0
        self.warned = False
        functools.update_wrapper(self, fn)
        _ALL.add(self)

    def __get__(self, obj, objtype=None):
        """A compiled function in a class body is a method (``@torch.compile def forward(self, x)``)."""
        return self if obj is None else types.MethodType(self, obj)

    def __call__(self, *args, **kwargs):
        if not config.enabled:
            return self.fn(*args, **kwargs)
        if kwargs or not all(isinstance(x, _PLAIN) or x is None for x in args):
            leaves = []
            tree = _flatten((args, kwargs), leaves)
        else:  # (the common call: tensors and numbers only)
            leaves, tree = list(args), _flat_tree(len(args))
        for x in leaves:
            if isinstance(x, Tensor) and isinstance(x._data, Tracer):
                return self.fn(*args, **kwargs)  # inside another transform: fn is traced as part of it
        st = _gm._state
        modes = (st.grad_enabled, st.inference)
        for program in self.programs:
            if program.tree == tree and program.modes == modes:
                try:
                    ok = program.guard(leaves)
                except Exception:  # a place the guard reads is gone (an attribute deleted, an empty cell)
                    ok = False
                if ok:
                    break
        else:
            program = self._compile(leaves, tree, modes)
        if program.eager:
            return self.fn(*args, **kwargs)
        if program.split:
            with _lazy_mode.lazy():
                return self.fn(*args, **kwargs)
        return self._run(program, leaves)

    # ----- tracing ---------------------------------------------------------------------------------------------
    def _walk(self, leaves):
        walk = _Walk()
        arg_pos = []
        for i, x in enumerate(leaves):
            e = f"A[{i}]"
            if isinstance(x, Tensor):
                arg_pos.append(i)
                walk.seen[id(x)] = x
                d, g = x._data, x._grad
                walk.checks.append((
                    f"isinstance({e}, _Tensor) and {e}._data.aval is {walk.bind(d.aval)} and {e}._requires_grad is {x._requires_grad} and {e}._grad_fn is "
                    f"{_NONE[x._grad_fn is None]} and {e}._grad is {_NONE[g is None]}", f"argument {i}"))
                if g is not None:
                    walk.checks.append((f"{e}._grad._data.aval is {walk.bind(g._data.aval)}", f"argument {i}.grad"))
            else:
                walk.visit(x, e, f"argument {i}", 1)
                if not isinstance(x, _SCALARS):
                    walk.roots.append(x)
        walk.visit(self.fn, walk.bind(self.fn), getattr(self.fn, "__qualname__", "fn"))
        if not any(isinstance(c, _Key) and c.owner is _creation.default_generator for c in walk.cells):
            walk.cells.insert(0, _Key(_creation.default_generator))
        return walk, arg_pos

    def _compile(self, leaves, tree, modes):
        walk, arg_pos = self._walk(leaves)
        program = _Program(walk, tree, modes, arg_pos)
        self.compiles += 1
        if self.compiles > config.recompile_limit:
            if not self.warned:
                self.warned = True
                warnings.warn(f"torchlike.compile: {self._name()} hit config.recompile_limit "
                              f"({config.recompile_limit}); last cause: {self._cause(leaves, tree, modes)}; running "
                              f"it eagerly for new signatures from now on", stacklevel=3)
            program.eager = True
            walk.release()
            self.programs.insert(0, program)
            return program
        if self.programs and config.verbose:
            warnings.warn(f"torchlike.compile: recompiling {self._name()}: {self._cause(leaves, tree, modes)}",
                          stacklevel=3)
        arg_tensors = [leaves[i] for i in arg_pos]
        state_tensors, cells = walk.tensors, walk.cells
        n_args, n_state = len(arg_tensors), len(state_tensors)
        snapshot = _Snapshot(walk, state_tensors + arg_tensors)
        found = {}

        def traced(*arrays):
            for t, a in zip(arg_tensors + state_tensors, arrays):
                _set_value(t, a)
            for c, a in zip(cells, arrays[n_args + n_state:]):
                c.install(a)
            inputs = {id(a) for a in arrays}
            old_grads = [(k, walk.index[id(t._grad)]) for k, t in enumerate(state_tensors)
                         if t._grad is not None and id(t._grad) in walk.index]
            args, kwargs = _unflatten(tree, iter(leaves))
            outer, _util._deferred = _util._deferred, []
            _compiling[0] += 1
            try:
                with _gm.set_grad_enabled(modes[0]):
                    out = self.fn(*args, **kwargs)
            finally:
                _compiling[0] -= 1
                checks, _util._deferred = _util._deferred, outer
            out_leaves = []
            found["out_tree"] = _flatten(out, out_leaves)
            after = found["after"] = _Walk()
            for t in arg_tensors + [c.installed for c in cells if isinstance(c, _Item)]:
                after.seen[id(t)] = t
            for x in walk.roots + [self.fn]:
                after.visit(x, "", "")
            written = []
            for k, t in enumerate(arg_tensors):
                if isinstance(t._data, Tracer) and id(t._data) not in inputs:
                    written.append(t._data)
                    program.writes.append(("arg", k))
                g = t._grad
                if g is not None and isinstance(g._data, Tracer) and id(g._data) not in inputs:
                    written.append(g._data)
                    program.writes.append(("arggrad", k))
            for t in after.tensors:
                v = t._data
                if isinstance(v, Tracer) and id(v) not in inputs:
                    written.append(v)
                    pos = walk.index.get(id(t))
                    program.writes.append(("state", pos) if pos is not None else ("new", t))
            known = {(id(c.owner), getattr(c, "key", None)) for c in cells}
            for c in cells + [c for c in after.cells if (id(c.owner), getattr(c, "key", None)) not in known]:
                v = c.get()
                v = v._data if isinstance(v, Tensor) else v
                if isinstance(v, Tracer) and id(v) not in inputs:
                    written.append(v)
                    program.writes.append(("cell", c))
            found["out_leaves"] = out_leaves
            outs = [x._data for x in out_leaves if isinstance(x, Tensor)]
            found["n_outs"] = len(outs)
            # a .grad that fn replaces by a new one (zero_grad, then backward): the old one's buffer can hold the
            # new values when nothing else holds the old tensor (checked each call: _run)
            new = {id(where): i for i, (kind, where) in enumerate(program.writes) if kind == "new"}
            recycle = found["recycle"] = []
            for k, q in old_grads:
                i, old = new.get(id(state_tensors[k]._grad)), state_tensors[q]
                if (i is not None and id(old) not in after.seen and written[i].aval == arrays[n_args + q].aval
                        and ("state", q) not in program.writes and all(q != r for r, _ in recycle)):
                    recycle.append((q, i))
            program.checks = [(exc, message) for _, _, exc, message in checks]
            if not checks:
                return outs + written
            # one status array (each check's flag, then its value): one transfer to the host per call; a failed
            # check gives the overwritten state back unchanged, so its old buffers can still be donated
            bad = jnp.stack([b for b, _, _, _ in checks])
            status = jnp.concatenate([bad.astype(jnp.int64), jnp.stack([v for _, v, _, _ in checks]).astype(jnp.int64)])
            failed = jnp.any(bad)
            for i, (kind, pos) in enumerate(program.writes):
                old = arrays[n_args + pos] if kind == "state" else None
                if old is not None and old.aval == written[i].aval:
                    written[i] = jnp.where(failed, old, written[i])
                    found.setdefault("kept", set()).add(pos)
            for q, i in recycle:  # (after a failed check the old .grad is put back, holding the new buffer)
                written[i] = jnp.where(failed, arrays[n_args + q], written[i])
            return outs + written + [status]

        arrays = [t._data for t in arg_tensors + state_tensors] + [c.get() for c in cells]
        try:
            closed = jax.make_jaxpr(traced)(*arrays)
        except _HOST_READS as e:
            snapshot.all()
            snapshot.hooks_back()
            return self._graph_break(program, e)
        except BaseException:
            snapshot.all()
            raise
        after = found["after"]
        versions = [_version(t) for t in state_tensors + arg_tensors]
        self._report_lists(walk)
        snapshot.all()  # the call's state as it was; the program's writes and attachments then make it new
        bumps = [(v or 0) - (_version(t) or 0) for t, v in zip(state_tensors + arg_tensors, versions)]
        program.deltas = [(k, d) for k, d in enumerate(bumps[:n_state]) if d]
        program.arg_deltas = [(k, d) for k, d in enumerate(bumps[n_state:]) if d]
        for i, obj in after.seen.items():
            if i not in walk.seen and i in after.places and not isinstance(after.places[i][0], list):
                container, k = after.places[i]  # (what fn appended to a list is not replayed: reported above)
                pos = walk.index.get(id(container)) if isinstance(container, Tensor) else None
                program.attach.append((container, k, obj, pos))
        program.fresh = {id(obj) for _, k, obj, _ in program.attach if k == "_grad" and isinstance(obj, Tensor)}
        for t in state_tensors:  # a .grad set to None inside fn
            if t._grad is not None and id(t) in after.seen and not any(
                    c is t for c, *_ in after.places.values()):
                program.attach.append((t, "_grad", None, walk.index[id(t)]))
        for x in found["out_leaves"]:
            if isinstance(x, Tensor):
                gone = x._grad_fn is not None and _graph_freed(x._grad_fn)
                program.out_kinds.append(("array", None))
                program.freed.append(gone)
                program.live.append(x._requires_grad and not gone)
            else:
                program.out_kinds.append(("const", x))
                program.freed.append(False)
                program.live.append(False)
        program.out_tree = found["out_tree"]
        program.jaxpr = closed  # (what the program computes, for users who want to look: print(program.jaxpr))
        fun = (functools.partial(_roll.evaluate_flat, closed) if config.roll_loops
               else jax.extend.core.jaxpr_as_fun(closed))
        program.jitted = _split(jax.jit(fun), found["n_outs"], program.checks)
        kept = program.kept = found.get("kept", set())
        program.donate = tuple(n_args + k for kind, k in program.writes
                               if kind == "state" and (not program.checks or k in kept))
        if program.donate:  # the state the program overwrites: its old buffers are given to XLA when nothing else
            program.donating = _split(jax.jit(fun, donate_argnums=program.donate), found["n_outs"],  # holds them
                                      program.checks)
        program.recycle = found["recycle"]
        if program.recycle:  # and the replaced .grads' buffers (keep_unused: fn may not read them)
            program.recycling = _split(jax.jit(fun, donate_argnums=program.donate + tuple(
                n_args + q for q, _ in program.recycle), keep_unused=True), found["n_outs"], program.checks)
        if any(program.live):
            self._backward_program(program, leaves, arg_tensors)
        else:  # (the backward program's trace reads the walk again)
            walk.release()
        self.programs.insert(0, program)
        return program

    def _name(self):
        return getattr(self.fn, "__qualname__", repr(self.fn))

    def _graph_break(self, program, error):
        frame = _user_frame(error)
        where = f" (at {frame.filename}:{frame.lineno}: {frame.line})" if frame is not None else ""
        if self.fullgraph and isinstance(error, _Disabled):
            raise RuntimeError(f"torchlike.compile(fullgraph=True): {error}{where}") from None
        if self.fullgraph:
            raise RuntimeError(f"torchlike.compile(fullgraph=True): {self._name()} reads a tensor's value on the "
                               f"host{where}, which cannot be part of one program ({type(error).__name__}). Move the "
                               f"read out of the compiled function, or compile with fullgraph=False to split the "
                               f"program there (a graph break).") from None
        if config.verbose:
            warnings.warn(f"torchlike.compile: graph break{where}: {self._name()} runs as fused programs split at "
                          f"its host reads (lazy mode) for this signature", stacklevel=4)
        program.split = True
        program.walk.release()
        self.programs.insert(0, program)
        return program

    def _cause(self, leaves, tree, modes):
        """Why the newest call matched no program (what the latest program's guard found changed)."""
        last = next((p for p in self.programs if not (p.eager or p.split)), None)
        if last is None:
            return "a new signature"
        if last.tree != tree:
            return "the arguments' structure changed"
        if last.modes != modes:
            return "the grad mode changed"
        what = last.walk.failing(leaves)
        return f"{what} changed" if what else "a new signature"

    def _report_lists(self, walk):
        grown = [(c, n) for c, n in walk.lists if len(c) != n]
        if grown:
            warnings.warn(f"torchlike.compile: {self._name()} changed {len(grown)} list(s) while tracing (e.g. a hook "
                          f"appending to a list): Python side effects run once per compilation, not once per call",
                          stacklevel=4)

    def _backward_program(self, program, leaves, arg_tensors):
        """The program for the gradients of fn's live outputs: fn again on the same inputs, then the engine."""
        walk = program.walk
        cells = walk.cells
        n_args, n_state = len(arg_tensors), len(walk.tensors)
        program.diff = [k for k, t in enumerate(arg_tensors + walk.tensors) if t._requires_grad]
        arrays_at = [i for i, (kind, _) in enumerate(program.out_kinds) if kind == "array"]
        program.live_outputs = live = [k for k, i in enumerate(arrays_at) if program.live[i]]
        tree = program.tree

        def pullback(arrays, cts):
            tensors = program.backward_tensors  # (the forward call's: the state now may differ, e.g. .grad set to
            snapshot = _Snapshot(walk, tensors)  # None between the forward and this backward; see CompiledFunction)
            try:
                for t, a in zip(tensors, arrays):
                    _set_value(t, a)
                for c, a in zip(cells, arrays[n_args + n_state:]):
                    c.install(a)
                args, kwargs = _unflatten(tree, iter(leaves))
                with _gm.set_grad_enabled(True):
                    out = self.fn(*args, **kwargs)
                flat = []
                _flatten(out, flat)
                outs = [x for x in flat if isinstance(x, Tensor)]
                grads = _autograd_grad([outs[k] for k in live], [tensors[k] for k in program.diff],
                                       [_wrap(c) for c in cts], allow_unused=True)
                return [None if g is None else g._data for g in grads]
            finally:
                snapshot.all()
        program.backward = jax.jit(pullback)

    # ----- running ---------------------------------------------------------------------------------------------
    def _run(self, program, leaves):
        arg_tensors = [leaves[i] for i in program.arg_pos]
        state_tensors = program.gather()
        arrays = [t._data for t in arg_tensors] + [t._data for t in state_tensors] + \
            [c.arg() for c in program.cells]
        if any(program.live) and _gm._state.grad_enabled:
            diff = [(arg_tensors + state_tensors)[k] for k in program.diff]
            outs = CompiledFunction.apply(self, program, arrays, arg_tensors, state_tensors, *diff)
        else:
            run, recycled = program.jitted, False
            n = len(arg_tensors)
            if all(_donatable(state_tensors[i - n], arrays[i]) for i in program.donate):
                if program.recycle and all(_dropped(state_tensors[q]) for q, _ in program.recycle):
                    run, recycled = program.recycling, True
                elif program.donate:
                    run = program.donating
            outs, written, status = run(arrays)
            arrays.clear()  # (a failure's traceback keeps this frame: its arrays would stop the next donation)
            # written back while the program runs; its value checks (if any) are read after: a failed one puts the
            # state back as it was (the donated state's new arrays hold its old values then: see _compile)
            undo = [] if status is not None else None
            self._write_back(program, arg_tensors, state_tensors, written, undo)
            if recycled and undo is not None:
                undo.extend((_set_value, (state_tensors[q], written[i])) for q, i in program.recycle)
            result = self._outputs(program, [_wrap(o) for o in outs])
            failure = status is not None and _failure(program.checks, status)
            if failure:
                for fn, args in reversed(undo):
                    fn(*args)
                written = outs = result = undo = None
                raise failure
            return result
        return self._outputs(program, outs)

    def _write_back(self, program, arg_tensors, state_tensors, written, undo=None):
        """Put the call's results in place. ``undo`` (a list, or None) receives ``(function, args)`` pairs that,
        called in reverse order, put back what was written (after a failed value check: see _run)."""
        keep = undo.append if undo is not None else _ignore
        # a .grad that fn makes (after zero_grad) is a new tensor on every call, as in eager: one the user kept from
        # an earlier call keeps its values. (A tensor fn assigns to a module attribute is updated in place: the
        # guard checks that attribute by identity, so a new one each call would recompile.)
        fresh = {id(where): _fresh(where, value) for (kind, where), value in zip(program.writes, written)
                 if kind == "new" and id(where) in program.fresh}
        for container, k, obj, pos in program.attach:
            if pos is not None:
                container = state_tensors[pos]
            if undo is not None:
                undo.append((_set_place, (container, k, _get_place(container, k))))
            _set_place(container, k, fresh.get(id(obj), obj))
        for (kind, where), value in zip(program.writes, written):
            if kind == "state" or kind == "arg":
                t = (state_tensors if kind == "state" else arg_tensors)[where]
                if kind == "arg" or where not in program.kept:  # (the kept state's new arrays hold its old values
                    keep((_set_value, (t, t._data)))  # after a failed check; its old ones may be donated)
                _set_value(t, value)
            elif kind == "arggrad":
                t = arg_tensors[where]
                if t._grad is None:
                    keep((_set_place, (t, "_grad", None)))
                    t._grad = _wrap(value)
                else:
                    keep((_set_value, (t._grad, t._grad._data)))
                    _set_value(t._grad, value)
            elif kind == "new":
                if id(where) not in fresh:  # (inside another new object: updated in place)
                    keep((_set_value, (where, where._data)))
                    _set_value(where, value)
            else:
                keep((where.restore, (where.get(),)))
                where.set(value)
        for tensors, deltas in ((state_tensors, program.deltas), (arg_tensors, program.arg_deltas)):
            for k, d in deltas:
                vc = tensors[k]._version_counter()
                vc.version += d
                keep((_bump, (vc, -d)))

    def _outputs(self, program, arrays):
        it = iter(arrays)
        leaves = []
        for (kind, value), freed in zip(program.out_kinds, program.freed):
            if kind == "const":
                leaves.append(value)
                continue
            t = next(it)
            if freed and not t._requires_grad:
                t._requires_grad = True
                t._grad_fn = _FreedGraph()
            leaves.append(t)
        return _unflatten(program.out_tree, iter(leaves))


def _fresh(traced, value):
    """A new tensor with ``value`` for one that ``fn`` made while tracing (a leaf: its history was the trace's)."""
    t = _wrap(value)
    t._requires_grad = traced._requires_grad and traced._grad_fn is None
    return t


def _is_tensor(x):
    return isinstance(x, Tensor)


_OWNED = 3  # sys.getrefcount of an array held by its tensor and _run's list only (tests/test_compile.py checks it)


def _donatable(t, array):
    """Whether nothing but ``t`` (and _run's list) holds ``array``: no view, alias, saved tensor or user reference."""
    s = t._storage
    if s is None:
        return sys.getrefcount(array) <= _OWNED + 1  # (+1: this function's argument)
    return (s.data is array and t._sgeom is None and sys.getrefcount(array) <= _OWNED + 2
            and all(r() is t or r() is None for r in s.members))


_DROPPED = 4  # sys.getrefcount of an old .grad held by its parameter and _run's list only (tests/test_compile.py)


def _dropped(t):
    """Whether the write-back drops the old .grad ``t`` and nothing else holds it or its array."""
    return sys.getrefcount(t) <= _DROPPED and _donatable(t, t._data)


def _flatten(obj, leaves):
    """fn's argument or output structure (dicts keep their key order, unlike JAX's pytrees); its leaves go to ``leaves``."""
    if isinstance(obj, dict):
        return dict, type(obj), tuple((k, _flatten(v, leaves)) for k, v in obj.items())
    if isinstance(obj, (list, tuple)) and type(obj) in (list, tuple) or hasattr(obj, "_fields"):
        return list, type(obj), tuple(_flatten(v, leaves) for v in obj)
    leaves.append(obj)
    return None


_PLAIN = (Tensor, int, float)


@functools.lru_cache(maxsize=64)
def _flat_tree(n):
    """``_flatten``'s structure of ``(args, {})`` for ``n`` positional leaves."""
    return _flatten((tuple(range(n)), {}), [])


def _unflatten(spec, leaves):
    if spec is None:
        return next(leaves)
    kind, cls, items = spec
    if kind is dict:
        out = {k: _unflatten(v, leaves) for k, v in items}
        return out if cls is dict else cls(out)
    values = [_unflatten(v, leaves) for v in items]
    return cls(*values) if hasattr(cls, "_fields") else cls(values)


def _split(jitted, n_outs, checks):
    """``jitted(arrays) -> (fn's output arrays, the written state's arrays, the value checks' status array or None)``
    (ops/_util.check_later; ``_failure`` reads the status)."""
    def run(arrays):
        flat = jitted(*arrays)
        if checks:
            return flat[:n_outs], flat[n_outs:-1], flat[-1]
        return flat[:n_outs], flat[n_outs:], None
    return run


def _failure(checks, status):
    """The error of the first value check that failed, or None (reading the status waits for the program)."""
    status = np.asarray(status)
    n = len(checks)
    if not status[:n].any():
        return None
    k = int(status[:n].argmax())
    exc, message = checks[k]
    return exc(message.format(v=int(status[n + k])))


def _ignore(_):
    pass


def _get_place(container, k):
    """What ``_set_place(container, k, ...)`` overwrites (``_MISSING``: nothing there)."""
    if isinstance(container, Tensor):
        return getattr(container, k)
    if isinstance(container, types.CellType):
        try:
            return container.cell_contents
        except ValueError:  # (an empty cell)
            return _MISSING
    return (container if isinstance(container, dict) else vars(container)).get(k, _MISSING)


def _set_place(container, k, value):
    """Put ``value`` where the walk found an object: a tensor's ``.grad``, a dict's item, a closure cell or an
    object's attribute (its ``__dict__``: no ``__setattr__`` runs); ``_MISSING`` removes what is there."""
    if isinstance(container, Tensor):
        setattr(container, k, value)
    elif isinstance(container, types.CellType):
        if value is _MISSING:
            del container.cell_contents
        else:
            container.cell_contents = value
    else:
        d = container if isinstance(container, dict) else vars(container)
        if value is _MISSING:
            d.pop(k, None)
        else:
            d[k] = value


def _bump(vc, d):
    vc.version += d


def _graph_freed(node):
    """Whether a backward without retain_graph already ran through ``node``'s graph."""
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        saved = n._for_backward
        if saved is _ALL_FREED or saved and _FREED in saved:
            return True
        stack.extend(f for f, _ in n.next_functions)
    return False


class _FreedGraph(Node):
    """The node of a compiled function's output whose graph the function already backpropagated through."""

    _name = "CompiledFunctionBackward"

    def _apply(self, grads, mask=None):
        raise RuntimeError(_FREED_MSG)


class CompiledFunction(Function):
    """A compiled function's outputs that require grad, as one node (torch's ``CompiledFunctionBackward``)."""

    @staticmethod
    def forward(ctx, compiled, program, arrays, arg_tensors, state_tensors, *diff):
        outs, written, status = program.jitted(arrays)
        failure = status is not None and _failure(program.checks, status)
        if failure:
            raise failure
        ctx.tensors = arg_tensors + state_tensors  # (the tensors the backward program's trace installs them in)
        compiled._write_back(program, arg_tensors, state_tensors, written)
        ctx.program = program
        # the inputs as they were, saved (released after backward, as torch's saved activations); numbers kept aside
        ctx.numbers = [(i, a) for i, a in enumerate(arrays) if not isinstance(a, jax.Array)]
        ctx.save_for_backward(*[_wrap(a) for a in arrays if isinstance(a, jax.Array)])
        tensors = tuple(_wrap(o) for o in outs)
        live = set(program.live_outputs)
        ctx.mark_non_differentiable(*[t for k, t in enumerate(tensors) if k not in live])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        if _gm._state.grad_enabled:
            raise RuntimeError("torch.compile with aot_autograd does not currently support double backward")
        program = ctx.program
        cts = [grads[k]._data for k in program.live_outputs]
        arrays = [t._data for t in ctx.saved_tensors]
        for i, a in ctx.numbers:
            arrays.insert(i, a)
        program.backward_tensors = ctx.tensors
        try:
            gs = program.backward(arrays, cts)
        finally:
            program.backward_tensors = ctx.tensors = None
        return (None,) * 5 + tuple(None if g is None else _wrap(g) for g in gs)


def _user_frame(error):
    """The innermost frame of the traceback that is the user's code (not torchlike's, JAX's or the stdlib's)."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = frame.filename
        if not any(f"{sep}{lib}{sep}" in path for lib in ("torchlike", "jax", "jaxlib", "interop")
                   for sep in ("/",)) and "<frozen" not in path and "/lib/python" not in path:
            return frame
    return None


# ----- modules --------------------------------------------------------------------------------------------------
class OptimizedModule(Module):
    """A compiled module (torch's ``OptimizedModule``): calls run ``_orig_mod`` compiled; attributes, parameters
    and ``state_dict`` (keys prefixed ``_orig_mod.``) are the original module's."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        vars(self)["_compiled"] = compiled

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def train(self, mode=True):
        self._orig_mod.train(mode)
        self.training = mode
        return self


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False):
    """torch.compile: ``model`` (a function or a Module) run as one ``jax.jit`` program per guard signature.

    ``backend``, ``mode`` and ``options`` are accepted and ignored (XLA compiles every program); ``dynamic`` is
    accepted (shapes are always specialised: a new shape is a new program); ``disable=True`` returns ``model``.
    Used without ``model``, returns a decorator.
    """
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, _Compiled(model.__call__, fullgraph, dynamic))
    if not callable(model):
        raise RuntimeError("torch.compile: model must be a Module or a callable")
    return _Compiled(model, fullgraph, dynamic)
