"""torchlike.func: torch.func's function transforms, done by JAX's own (jax.grad, vjp, jvp, linearize, jacrev,
jacfwd, vmap).

Every torchlike op is a JAX function and the engine runs on tracers, so a transform here calls the JAX transform
on a function of arrays that wraps them as Tensors and runs the user's torchlike code: transforms compose in any
order (``vmap(grad(f))``, ``jacfwd(jacrev(f))``), and ``.backward()`` or ``autograd.grad`` inside ``f`` works.

Tensors that require grad outside a transform keep their history through it, as in torch: the transform's results
are recorded on the tape as one node (``FuncTransformBackward``; torch records the nodes of the ops inside)
whose backward is ``jax.vjp`` of the same transformed function, itself recorded again under ``create_graph``, so
derivatives of any order flow through. Tensors ``f`` reads from its closure that require grad are found while
``f`` runs (the op table's dispatch hook) and become inputs of that node too.

``vmap`` runs ``f`` once under ``jax.vmap``: each op runs batched (one program per op and shape, cached as every
op's); ``randomness="different"`` gives each batch element its own key.
"""
import functools
import threading
import weakref

import jax
import jax.numpy as jnp

from .. import _grad_mode as _gm, _lazy
from .._tensor import Tensor, _wrap
from ..autograd.function import Function
from ..ops import _registry, _views, creation as _creation
from ._functional_call import functional_call, stack_module_state, replace_all_batch_norm_modules_  # noqa: F401

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian", "vmap",
           "functional_call", "stack_module_state", "replace_all_batch_norm_modules_", "functionalize"]

_tree = jax.tree_util


def _is_tensor(x):
    return isinstance(x, Tensor)


def _arrays(tree):
    _note_orders(tree)
    return _tree.tree_map(lambda t: t._data if isinstance(t, Tensor) else t, tree, is_leaf=_is_tensor)


_orders = {}  # frozenset of a dict's keys -> their order in the user's dicts (JAX's pytrees sort dict keys)


def _note_orders(tree):
    if isinstance(tree, dict):
        if list(tree) != sorted(tree, key=str):
            _orders[frozenset(tree)] = tuple(tree)
        tree = list(tree.values())
    if isinstance(tree, (list, tuple)):
        for x in tree:
            _note_orders(x)


def _reordered(tree):
    """``tree`` with its dicts' keys in the order of the user's dicts with the same keys."""
    if isinstance(tree, dict):
        order = _orders.get(frozenset(tree), tree)
        return {k: _reordered(tree[k]) for k in order}
    if isinstance(tree, list):
        return [_reordered(x) for x in tree]
    if isinstance(tree, tuple):
        items = [_reordered(x) for x in tree]
        return type(tree)(*items) if hasattr(tree, "_fields") else tuple(items)
    return tree


def _tensors(tree):
    return _tree.tree_map(lambda a: _wrap(a) if isinstance(a, jax.Array) else a, tree)


# ----- running a pure function of arrays with the outer tape's history ---------------------------------------
_GRAD_WRITE = ("During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call in-place "
               "operation (aten::{}_) that would mutate a captured Tensor. This is not supported; please rewrite the "
               "function being transformed to explicitly accept the mutated Tensor(s) as inputs.")
_VMAP_WRITE = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a Tensor `other` in "
               "extra_args that has more elements than `self`. This happened due to `other` being vmapped over but "
               "`self` not being vmapped over in a vmap. Please try to use out-of-place operators instead of inplace "
               "arithmetic. If said operator is being called inside the PyTorch framework, please file a bug report "
               "instead.")


def _is_traced(t):
    return isinstance(t._data, jax.core.Tracer)


class _Watch:
    """The dispatch hook while a transformed function runs: notes tensors from outside (concrete data) that
    require grad and reach an op (``found``), and in-place writes of a transform's values into concrete tensors
    (``written``: what to put back)."""

    def __init__(self, inputs, previous):
        self.known = {id(t) for t in inputs}
        self.found = {}
        self.written = []
        self.grads = []
        self.previous = previous

    def __call__(self, op, args, run, inplace, statics=()):
        for a in args:
            if (a is not None and a._requires_grad and id(a) not in self.known and id(a) not in self.found
                    and not _is_traced(a)):
                self.found[id(a)] = a
        target = args[0] if inplace else None
        before = None if target is None or _is_traced(target) else _snapshot(target)
        out = run(args) if self.previous is None else self.previous(op, args, run, inplace, statics)
        if before is not None:  # (every write, so that all can be undone when one of them is refused)
            self.written.append((op.name, before))
        return out

    def write(self, t, data, what):
        """The write hook of ops/_views (and of grad accumulation): a traced value into a concrete tensor."""
        if isinstance(data, jax.core.Tracer) and not _is_traced(t):
            if what == "grad":
                self.grads.append((weakref.ref(t), t._grad))
            else:
                self.written.append(("CopyBackwards", _snapshot(t)))

    def check_writes(self, message):
        """torch's error for a transform's value written into a tensor from outside (one still alive once the
        transformed function returned: those made inside it are gone), after every such write is undone."""
        error = None
        for name, (refs, data, version, storage, storage_data) in self.written:
            if any(r() is not None and _is_traced(r()) for r in refs):
                error = error or RuntimeError(message.format("copy" if "::" in name else
                                                             name.split("Backward")[0].lower()))
        if error is not None:  # undo every write into tensors from outside, the last first
            for name, (refs, data, version, storage, storage_data) in reversed(self.written):
                live = [(r(), d) for r, d in zip(refs, data) if r() is not None]
                for t, d in live:
                    t._data = d
                if storage is not None:
                    storage.data = storage_data
                if live:
                    live[0][0]._version_counter().version = version
        for ref, old in reversed(self.grads):
            t = ref()
            if t is not None and t._grad is not None and _is_traced(t._grad):
                t._grad = old
                error = error or RuntimeError(
                    "backward() inside a torchlike.func transform accumulated a traced gradient into the .grad of a "
                    "tensor from outside it (torch refuses requires_grad_() there); use torchlike.func.grad or "
                    "autograd.grad inside transforms")
        if error is not None:
            raise error


def _snapshot(t):
    """(weak refs, data) of ``t`` and the tensors sharing its memory, its version, storage and storage data."""
    storage = t._storage
    members = [t] if storage is None else [m for m in (r() for r in storage.members) if m is not None]
    return ([weakref.ref(m) for m in members], [m._data for m in members], t._version_counter().version, storage,
            None if storage is None else storage.data)


class FuncTransform(Function):
    """One torchlike.func transform's results as a node of the tape (see the module docstring)."""

    @staticmethod
    def forward(ctx, pure, *tensors):
        ctx.pure = pure
        ctx.save_for_backward(*tensors)
        outs = pure(*[_lazy.concrete(t._data) for t in tensors])
        ctx.mark_non_differentiable(*[o for o in outs if not jnp.issubdtype(o.dtype, jnp.inexact)])
        return tuple(_wrap(o) for o in outs)

    @staticmethod
    def backward(ctx, *grads):
        tensors = ctx.saved_tensors
        pure, n = ctx.pure, len(tensors)

        def pullback(*arrays):
            outs, pull = jax.vjp(pure, *arrays[:n])
            cts = [c.astype(o.dtype) if jnp.issubdtype(o.dtype, jnp.inexact) else
                   jnp.zeros(o.shape, jax.dtypes.float0) for o, c in zip(outs, arrays[n:])]
            return tuple(pull(tuple(cts)))
        gs = _lift(pullback, list(tensors) + list(grads))
        return (None,) + tuple(g if t.requires_grad else None for g, t in zip(gs, tensors))


def _lift(pure, tensors, captured=()):
    """``pure(*arrays) -> tuple of arrays`` run on ``tensors``' data (and the ``captured`` tensors', set as the
    tensors' data while it runs); recorded as one node when grad mode is on and one of them requires grad."""
    if captured:
        inner = pure

        def pure(*arrays):
            k = len(arrays) - len(captured)
            saved = [c._data for c in captured]
            try:
                for c, a in zip(captured, arrays[k:]):
                    c._data = a
                return inner(*arrays[:k])
            finally:
                for c, d in zip(captured, saved):
                    c._data = d
        tensors = list(tensors) + list(captured)
    if _gm._state.grad_enabled and any(t.requires_grad for t in tensors):
        return FuncTransform.apply(pure, *tensors)
    return tuple(_wrap(o) for o in pure(*[_lazy.concrete(t._data) for t in tensors]))


_captured = weakref.WeakKeyDictionary()  # transformed function -> weak refs to the closure tensors found last call


def _run(pure, tensors, owner=None, write_error=_GRAD_WRITE):
    """``_lift(pure, tensors)``, with the tensors requiring grad that ``pure``'s function reads from its closure
    made inputs too: those found on ``owner``'s last call are lifted at once; new ones found while it runs mean
    one more run. A transform's value written into a tensor from outside raises torch's error."""
    grad_on = _gm._state.grad_enabled
    refs = _captured.get(owner, ()) if owner is not None and grad_on else ()
    captured = [c for c in (r() for r in refs) if c is not None and c.requires_grad]
    watch = _Watch(list(tensors) + captured, _registry._hook)
    _registry.set_dispatch_hook(watch)
    outer_write, _views._write_watch = _views._write_watch, watch.write
    try:
        outs = _lift(pure, tensors, tuple(captured))
        if watch.found and grad_on:
            captured += watch.found.values()
            outs = _lift(pure, tensors, tuple(captured))
    finally:
        _registry.set_dispatch_hook(watch.previous)
        _views._write_watch = outer_write
        watch.check_writes(write_error)
    if owner is not None and grad_on:
        _captured[owner] = [weakref.ref(c) for c in captured]
    return outs


def _flat_call(transformed, args, owner=None):
    """Run ``transformed(*arrays) -> pytree`` on the Tensors among ``args``' leaves; the result as Tensors."""
    leaves, treedef = _tree.tree_flatten(args, is_leaf=_is_tensor)
    positions = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    out_tree = []

    def pure(*arrays):
        full = list(leaves)
        for i, a in zip(positions, arrays):
            full[i] = a
        flat, out_def = _tree.tree_flatten(transformed(*_tree.tree_unflatten(treedef, full)))
        out_tree[:] = [out_def]
        return tuple(flat)
    _note_orders(args)
    outs = _run(pure, [leaves[i] for i in positions], owner)
    result = _tree.tree_unflatten(out_tree[0], list(outs))
    return _reordered(result) if _orders else result


# ----- grad, grad_and_value, vjp, jvp, linearize --------------------------------------------------------------
def _differentiated(argnums, args):
    """(argnums normalised, their positions, the arguments at them), with torch's errors."""
    nums = _argnums(argnums, len(args))
    positions = (nums,) if isinstance(nums, int) else nums
    diff = tuple(args[i] for i in positions)
    _check_inputs(diff)
    return nums, positions, diff


def _argnums(argnums, n):
    for a in (argnums,) if isinstance(argnums, int) else argnums:
        if not isinstance(a, int):
            raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
    return argnums % n if isinstance(argnums, int) else tuple(a % n for a in argnums)


def _check_inputs(tree):
    for leaf in _tree.tree_leaves(tree, is_leaf=_is_tensor):
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")


def _split_aux(out, has_aux, api):
    """(output, aux) of what f returned (aux None without ``has_aux``), torch's error when it is no pair."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


_VJP, _JVP = "vjp(f, *primals)", "jvp(f, primals, tangents)"  # (jacrev reports as vjp, jacfwd as jvp: torch's)


def _output_arrays(out, has_aux, api):
    """f's output (and aux) as arrays; torch's error for a leaf of the output that is not a Tensor."""
    out, aux = _split_aux(out, has_aux, api)
    for leaf in _tree.tree_leaves(out, is_leaf=_is_tensor):
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(leaf)}")
    return _arrays(out), _arrays(aux)


def _replaced(args, positions, arrays):
    """``args`` with the ones at ``positions`` replaced by Tensors around ``arrays``."""
    full = list(args)
    for i, a in zip(positions, arrays):
        full[i] = _tensors(a)
    return full


def _scalar_output(out, has_aux, api):
    out, aux = _split_aux(out, has_aux, f"{api}(f)(*args)")
    if not isinstance(out, Tensor):
        raise RuntimeError(f"{api}(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
    if out.ndim != 0:
        raise RuntimeError(f"{api}(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                           f"{out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
    return out, aux


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a scalar function: ``((grads, (value, aux)))`` with ``has_aux``; the gradient
    has the structure of the ``argnums`` inputs."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, positions, diff = _differentiated(argnums, args)

        def scalar(*diff_arrays):
            out, aux = _scalar_output(func(*_replaced(args, positions, diff_arrays), **kwargs), has_aux,
                                      "grad_and_value")
            return out._data, (out._data, _arrays(aux))

        def transformed(*diff_arrays):
            g, (value, aux) = jax.grad(scalar, argnums=tuple(range(len(diff_arrays))), has_aux=True)(*diff_arrays)
            g = g[0] if isinstance(nums, int) else g
            return (g, (value, aux)) if has_aux else (g, value)
        return _flat_call(transformed, diff, wrapper)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar function with respect to its ``argnums`` inputs (``(grads, aux)`` with
    ``has_aux``)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _check_cotangents(outs, cts):
    flat_o, flat_c = _tree.tree_leaves(outs, is_leaf=_is_tensor), _tree.tree_leaves(cts, is_leaf=_is_tensor)
    if len(flat_o) != len(flat_c):
        raise RuntimeError(f"Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                           f"to the function. cotangents: {_tree.tree_structure(cts)}, primal output: "
                           f"{_tree.tree_structure(outs)}")
    for i, (o, c) in enumerate(zip(flat_o, flat_c)):
        if tuple(o.shape) != tuple(c.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {c.shape} and output[{i}] has "
                               f"a shape of {o.shape}.")


def vjp(func, *primals, has_aux=False):
    """``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``): ``vjp_fn(cotangents)`` returns the
    gradients of the primals as a tuple, and may be called many times."""
    _check_inputs(primals)

    def forward(*arrays):
        return _output_arrays(func(*_tensors(arrays)), has_aux, _VJP)
    output, aux = _flat_call(forward, primals)

    def vjp_fn(cotangents):
        single = isinstance(cotangents, Tensor) and isinstance(output, Tensor)
        _check_cotangents(output, cotangents)

        def pull(*arrays):
            n = len(primals)
            _, f_vjp = jax.vjp(lambda *p: forward(*p)[0], *arrays[:n])
            cts = _tree.tree_map(lambda o, c: c.astype(o.dtype), _arrays(output), arrays[n] if single else
                                 _tree.tree_unflatten(_tree.tree_structure(_arrays(cotangents)), arrays[n:]))
            return f_vjp(cts)
        flat_ct = [cotangents] if single else _tree.tree_leaves(cotangents, is_leaf=_is_tensor)
        return _flat_call(pull, tuple(primals) + tuple(flat_ct))
    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(output, jvp_out)`` (and ``aux``): the function's value and its derivative along ``tangents``."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    structures = [_tree.tree_structure(x, is_leaf=_is_tensor) for x in (primals, tangents)]
    if structures[0] != structures[1]:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           f"if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{structures[0]} and tangents with structure {structures[1]}")
    _check_inputs((primals, tangents))
    for p, t in zip(_tree.tree_leaves(primals, is_leaf=_is_tensor), _tree.tree_leaves(tangents, is_leaf=_is_tensor)):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the "
                               f"original Tensor, this is not supported. Tensor is of size {list(p.shape)} while "
                               f"the given forward gradient is of size {list(t.shape)}.")
    n = len(primals)

    def transformed(*arrays):
        def f(*p):
            out, aux = _output_arrays(func(*_tensors(p)), has_aux, _JVP)
            return (out, aux) if has_aux else out
        ts = _tree.tree_map(lambda p, t: t.astype(p.dtype), arrays[:n], arrays[n:])
        return jax.jvp(f, arrays[:n], ts, has_aux=has_aux)
    return _flat_call(transformed, tuple(primals) + tuple(tangents))


def linearize(func, *primals):
    """``(output, jvp_fn)``: ``jvp_fn(*tangents)`` gives the derivative along the tangents (many calls)."""
    _check_inputs(primals)
    output = _flat_call(lambda *a: _output_arrays(func(*_tensors(a)), False, _JVP)[0], primals)

    def jvp_fn(*tangents):
        return jvp(func, tuple(primals), tuple(tangents))[1]
    return output, jvp_fn


# ----- jacrev, jacfwd, hessian --------------------------------------------------------------------------------
def _jacobian(jax_jac, api, func, argnums, has_aux):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums, positions, diff = _differentiated(argnums, args)

        def f(*diff_arrays):
            out, aux = _output_arrays(func(*_replaced(args, positions, diff_arrays), **kwargs), has_aux, api)
            return (out, aux) if has_aux else out

        def transformed(*diff_arrays):
            return jax_jac(f, argnums=0 if isinstance(nums, int) else tuple(range(len(diff_arrays))),
                           has_aux=has_aux)(*diff_arrays)
        return _flat_call(transformed, diff, wrapper)
    return wrapper


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian by reverse mode (``jax.jacrev``): outputs' structure outside, the inputs' inside.
    ``chunk_size`` is accepted (JAX computes all rows in one batched pullback)."""
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")
    return _jacobian(jax.jacrev, _VJP, func, argnums, has_aux)


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian by forward mode (``jax.jacfwd``)."""
    _check_randomness(randomness)
    return _jacobian(jax.jacfwd, _JVP, func, argnums, has_aux)


def hessian(func, argnums=0):
    """The Hessian: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


# ----- vmap -----------------------------------------------------------------------------------------------------
_RANDOMNESS = ("error", "different", "same")
_vmap_state = threading.local()  # .levels: (randomness, [key]) of each running vmap, innermost last
_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We "
                 "don't support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .")
_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
         "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
         "inside PyTorch internals, please file a bug report.")
_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                 "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def _check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got "
                           f"{randomness}")


def _levels():
    levels = getattr(_vmap_state, "levels", None)
    if levels is None:
        levels = _vmap_state.levels = []
    return levels


def _vmap_key(generator, depth=None):
    """creation's random key while vmaps run: torch's error in "error" mode, the element's own key in
    "different", the enclosing level's key in "same"."""
    levels = _levels()
    depth = len(levels) if depth is None else depth
    if depth == 0:
        return _creation._generator_key(generator)
    mode, keys = levels[depth - 1]
    if mode == "error":
        raise RuntimeError(_RANDOM_ERROR)
    if mode == "different":
        keys[0], key = jax.random.split(keys[0])
        return key
    return _vmap_key(generator, depth - 1)


def _name(func):
    return getattr(func, "__name__", repr(func))


def _dims_per_leaf(dims, tree, describe):
    """One dim per Tensor-or-other leaf of ``tree`` (``dims``: an int/None, or a pytree prefix of ``tree``);
    ``describe(dims_structure, tree_structure)`` is the error when the structures do not fit."""
    try:
        per = _tree.tree_map(lambda d, a: [d] * len(_tree.tree_leaves(a, is_leaf=_is_tensor)), dims, tree,
                             is_leaf=lambda x: x is None)
    except ValueError:
        raise ValueError(describe(_tree.tree_structure(dims, is_leaf=lambda x: x is None),
                                  _tree.tree_structure(tree, is_leaf=_is_tensor))) from None
    return [d for ds in _tree.tree_leaves(per, is_leaf=lambda x: isinstance(x, list)) for d in ds]


def _in_dims_leaves(in_dims, args, fname):
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
                         f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}.")
    return _dims_per_leaf(in_dims, args, lambda d, a: (
        f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the structure of "
        f"`inputs`. in_dims has structure {d} but inputs has structure {a}."))


def _out_dims_leaves(out_dims, outs, fname):
    return _dims_per_leaf(out_dims, outs, lambda d, o: (
        f"vmap({fname}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with the structure of "
        f"`outputs`. out_dims has structure {d} but outputs has structure {o}."))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """``func`` mapped over a dim of its inputs (``jax.vmap``): ``in_dims``/``out_dims`` an int, None or a pytree
    prefix of the inputs/outputs; ``randomness`` "error" (random ops raise), "different" (each element its own
    draw) or "same"; ``chunk_size`` maps that many elements at a time."""
    _check_randomness(randomness)
    fname = _name(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        dims = _in_dims_leaves(in_dims, args, fname)
        _note_orders(args)  # (inside, func sees the dicts rebuilt in JAX's sorted order)
        leaves, treedef = _tree.tree_flatten(args, is_leaf=_is_tensor)
        sizes, axes = [], []
        for leaf, d in zip(leaves, dims):
            if d is not None and not isinstance(leaf, Tensor):
                raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input but "
                                 f"the input is of type {type(leaf)}. We cannot vmap over non-Tensor arguments, "
                                 "please use None as the respective in_dim")
            if d is not None and not -leaf.ndim <= d < leaf.ndim:
                raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                                 f"but that input is a Tensor of dimensionality {leaf.ndim} so expected in_dim to "
                                 f"satisfy -{leaf.ndim} <= in_dim < {leaf.ndim}.")
            axes.append(None if d is None else d % leaf.ndim)
            if d is not None:
                sizes.append(leaf.shape[d])
        if not sizes:
            raise ValueError(f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): at least one input must be a Tensor "
                             "mapped over (in_dim not None)")
        if len(set(sizes)) > 1:
            raise ValueError("vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                             f"{sizes} for the mapped dimension")
        batch = sizes[0]
        positions = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
        in_axes = (0,) + tuple(axes[i] for i in positions)
        out_tree = []

        def mapped(key, *arrays):
            full = list(leaves)
            for i, a in zip(positions, arrays):
                full[i] = _wrap(a)
            _levels().append((randomness, [key]))
            try:
                out = func(*_tree.tree_unflatten(treedef, full), **kwargs)
            except jax.errors.TracerBoolConversionError:
                raise RuntimeError(_CONTROL_FLOW) from None
            except (jax.errors.ConcretizationTypeError, jax.errors.TracerIntegerConversionError,
                    jax.errors.TracerArrayConversionError):
                raise RuntimeError(_ITEM) from None
            finally:
                _levels().pop()
            flat, tdef = _tree.tree_flatten(out, is_leaf=_is_tensor)
            for leaf in flat:
                if not isinstance(leaf, Tensor):
                    raise ValueError(f"vmap({fname}, ...): `{fname}` must only return Tensors, got type "
                                     f"{type(leaf)}. Did you mean to set out_dims= to None for output?")
            out_tree[:] = [out]
            _note_orders(out)
            return tuple(t._data for t in flat)

        def transformed(*arrays):
            keys = (jax.random.split(_creation._key(None), batch) if randomness == "different" else
                    jnp.zeros((batch, 2), jnp.uint32))
            step = chunk_size or batch
            chunks = [jax.vmap(mapped, in_axes=in_axes)(*[a if ax is None else
                                                          jax.lax.slice_in_dim(a, lo, min(batch, lo + step), axis=ax)
                                                          for a, ax in zip((keys,) + arrays, in_axes)])
                      for lo in range(0, batch, step)]
            outs = chunks[0] if len(chunks) == 1 else [jnp.concatenate(parts) for parts in zip(*chunks)]
            result = []
            for o, d in zip(outs, _out_dims_leaves(out_dims, out_tree[0], fname)):
                if d is None:
                    result.append(o[0])
                else:
                    if not -o.ndim <= d < o.ndim:
                        raise IndexError(f"Dimension out of range (expected to be in range of [{-o.ndim}, "
                                         f"{o.ndim - 1}], but got {d})")
                    result.append(jnp.moveaxis(o, 0, d))
            return tuple(result)

        hooked = _creation._key_hook is None
        if hooked:
            _creation._key_hook = _vmap_key
        try:
            outs = _run(transformed, [leaves[i] for i in positions], wrapper, _VMAP_WRITE)
        finally:
            if hooked:
                _creation._key_hook = None
        return _reordered(_tree.tree_unflatten(_tree.tree_structure(out_tree[0], is_leaf=_is_tensor), list(outs)))
    return wrapper


def functionalize(func, *, remove="mutations"):
    """``func`` itself: torchlike's in-place ops already write new arrays (JAX has no mutation to remove)."""
    return func
