"""Bridges between real PyTorch autograd and torchlike / JAX.

``torch_op(fn)``: a torchlike function (Tensors in and out) or a JAX function (arrays in and out) becomes a
function of torch tensors whose gradients flow in torch's autograd (a ``torch.autograd.Function``).

``from_torch_op(fn)``: a torch function becomes a differentiable torchlike function (a
``torchlike.autograd.Function``) whose backward asks torch for the vector-Jacobian product.

Both directions support higher-order gradients: each backward is itself a call of the same bridge over the
vector-Jacobian product (computed by the inner framework with ``create_graph`` when the outer framework records,
so ``grad(grad(...), create_graph=True)`` through the bridge twice equals the reference).

Values cross the boundary without copies, through DLPack (``interop._convert``), so every dtype goes through,
bfloat16 included. A torch tensor is imported zero-copy when it is dense in some dim order and 64-byte aligned,
copied otherwise (gapped or broadcast strides, misaligned ``torch.from_numpy`` memory, lazy conjugate/negative
bits); tensors that require grad are detached first. As with ``interop._convert``, the two sides then share
memory that JAX assumes immutable: do not modify a bridged function's inputs or outputs in place (``clone()``
first); if you do before backward, backward raises the version-counter error (the bridge saves both). Only floating-point tensors that require grad are differentiated; non-tensor arguments are passed to
``fn`` unchanged.
"""
import functools

import jax
import torch

import torchlike as tl

from ._convert import from_torch, to_jax, to_torch

__all__ = ["torch_op", "from_torch_op"]


# ---- conversions: zero-copy through DLPack (interop._convert); torch tensors are detached first ----

def _torch_to_tl(x, requires_grad=False):
    return from_torch(x, requires_grad=requires_grad)


def _tl_to_torch(t, requires_grad=False):
    return to_torch(t, requires_grad=requires_grad)


def _floating(x):
    return x.is_floating_point() or x.is_complex()


def _diff_positions(xs):
    return tuple(i for i, x in enumerate(xs) if x.requires_grad and _floating(x))


def _as_tuple(out):
    return (tuple(out), False) if isinstance(out, (tuple, list)) else ((out,), True)


# ---- "levels": one differentiable function of the outer framework's tensors ----
# A level has ``forward(xs) -> outer tensors`` (setting ``out_diff``: the outputs that carry gradients) and
# ``vjp(create_graph) -> level`` computing, from ``xs + grads of the out_diff outputs``, the gradients of the
# inputs at ``diff`` (the differentiable inputs, set by the caller before ``forward``).

class _GraphLevel:
    """The inner framework records a graph (torchlike or torch); gradients come from its ``autograd.grad``."""

    def __init__(self, inner, fn, template):
        self.inner, self.fn, self.template = inner, fn, template  # template: args with None at tensor places

    def forward(self, xs):
        inner = self.inner
        self.leaves = [inner.convert_in(x, i in self.diff) for i, x in enumerate(xs)]
        it = iter(self.leaves)
        args = [next(it) if a is None else a.value for a in self.template]
        with inner.enable_grad():
            outs, self.single = _as_tuple(self.fn(*args))
        _check_outputs(outs, inner, self.fn)
        self.outs = outs
        self.out_diff = tuple(j for j, o in enumerate(outs) if o.requires_grad)
        return tuple(inner.convert_out(o) for o in outs)

    def vjp(self, create_graph):
        return _GraphVjp(self, create_graph)


class _GraphVjp(_GraphLevel):
    def __init__(self, parent, create_graph):
        self.inner, self.parent, self.create_graph = parent.inner, parent, create_graph
        self.single = False

    def forward(self, xs):
        p, inner = self.parent, self.inner
        n = len(p.leaves)
        g_leaves = [inner.convert_in(g, n + k in self.diff) for k, g in enumerate(xs[n:])]
        self.leaves = p.leaves + g_leaves
        outs = [p.outs[j] for j in p.out_diff]
        ins = [p.leaves[i] for i in p.diff]
        closed_over = _closed_over_leaves(outs, p.leaves)
        with inner.enable_grad():
            res = inner.grad(outs, ins + closed_over, g_leaves, retain_graph=True, create_graph=self.create_graph,
                             allow_unused=True, materialize_grads=True)
        res = list(res)
        for leaf, g in zip(closed_over, res[len(ins):]):  # parameters fn closes over (an nn.Module's): their
            leaf.grad = g if leaf.grad is None else leaf.grad + g  # .grad accumulates as a backward() would
        res = res[:len(ins)]
        self.outs = tuple(res)
        self.out_diff = tuple(j for j, o in enumerate(res) if o.requires_grad)
        return tuple(inner.convert_out(o) for o in res)


def _closed_over_leaves(outs, inputs):
    """The leaves requiring grad that ``outs`` depend on, other than ``inputs`` (the inner function's parameters)."""
    seen, stack, found = set(), [o.grad_fn for o in outs if o.grad_fn is not None], []
    own = {id(x) for x in inputs}
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        leaf = getattr(node, "variable", None)
        if leaf is not None and id(leaf) not in own:
            found.append(leaf)
        stack.extend(n for n, _ in node.next_functions)
    return found


class _ReturnedJaxArrays(Exception):
    """A function taken for a torchlike one returned JAX arrays: it is a JAX function (torch_op's detection)."""


def _check_outputs(outs, inner, fn):
    """The outputs of a function run on the inner framework's tensors must be its tensors."""
    expected = tl.Tensor if inner is _Torchlike else torch.Tensor
    if all(isinstance(o, expected) for o in outs):
        return
    if inner is _Torchlike and all(isinstance(o, jax.Array) for o in outs):
        raise _ReturnedJaxArrays()
    kinds = sorted({f"{type(o).__module__}.{type(o).__name__}" for o in outs if not isinstance(o, expected)})
    name = getattr(fn, "__name__", "fn")
    raise TypeError(f"{name} must return {expected.__module__.split('.')[0]} Tensors (or a tuple of them), got "
                    f"{', '.join(kinds)}; for a JAX function pass kind='jax' to torch_op")


class _Torchlike:
    convert_in = staticmethod(_torch_to_tl)
    convert_out = staticmethod(_tl_to_torch)
    enable_grad = tl.enable_grad
    grad = staticmethod(tl.autograd.grad)


class _Torch:
    convert_in = staticmethod(_tl_to_torch)
    convert_out = staticmethod(_torch_to_tl)
    enable_grad = torch.enable_grad
    grad = staticmethod(torch.autograd.grad)


class _JaxLevel:
    """The inner function is a pure JAX function of flat arrays; gradients come from ``jax.vjp``."""

    def __init__(self, f):
        self.f = f  # arrays -> an array or a tuple of arrays

    def forward(self, xs):
        self.n_in = len(xs)
        outs, self.single = _as_tuple(_jitted(self.f)(*[to_jax(x) for x in xs]))
        self.out_diff = tuple(j for j, o in enumerate(outs) if jax.numpy.issubdtype(o.dtype, jax.numpy.inexact))
        return tuple(to_torch(o) for o in outs)

    def vjp(self, create_graph):
        return _JaxLevel(_vjp_of(self.f, self.n_in, self.diff, self.out_diff))


@functools.lru_cache(maxsize=256)
def _jitted(f):
    return jax.jit(f)


@functools.lru_cache(maxsize=256)
def _vjp_of(f, n_in, diff, out_diff):
    """(xs..., grads of the out_diff outputs...) -> grads of the inputs at diff, as a JAX function."""
    def vjp_fn(*args):
        xs, gs = list(args[:n_in]), args[n_in:]

        def restricted(*d):
            full = list(xs)
            for i, v in zip(diff, d):
                full[i] = v
            outs = _as_tuple(f(*full))[0]
            return tuple(outs[j] for j in out_diff)

        _, pull = jax.vjp(restricted, *[xs[i] for i in diff])
        return tuple(pull(tuple(gs)))
    return vjp_fn


# ---- the two outer sides ----

def _bridge_forward(ctx, level, xs):
    """The forward both outer sides share: run the level, keep what its vjp needs."""
    outs = level.forward(xs)
    ctx.level = level
    # the outputs too: they share memory with arrays the inner graph may have saved, so an in-place change of
    # one raises the outer framework's version-counter error at backward instead of giving a wrong gradient
    ctx.save_for_backward(*xs, *outs)
    ctx.n_inputs = len(xs)
    ctx.mark_non_differentiable(*[o for j, o in enumerate(outs) if j not in level.out_diff])
    return outs


def _bridge_backward(ctx, grads, grad_enabled, bridge):
    """The backward both outer sides share: the vjp is itself a level, run through the same bridge (higher order)."""
    level, xs = ctx.level, ctx.saved_tensors[:ctx.n_inputs]
    gs = [grads[j] for j in level.out_diff]  # both autograds materialize missing grads as zeros
    res = _call_level(level.vjp(grad_enabled()), tuple(xs) + tuple(gs), bridge, grad_enabled)
    out = [None] * len(xs)
    for i, r in zip(level.diff, res):
        out[i] = r
    return (None, *out)


def _call_level(level, xs, bridge, grad_enabled):
    level.diff = _diff_positions(xs) if grad_enabled() else ()
    if not level.diff:
        outs = level.forward(xs)
        if grad_enabled() and isinstance(level, _GraphLevel) and level.out_diff:
            raise RuntimeError(
                f"{bridge.__name__}: the function's outputs require grad through tensors it closes over (an "
                "nn.Module's parameters?) while none of its tensor arguments requires grad, so no gradient could "
                "reach them: pass an argument that requires grad, or the parameters themselves as arguments")
        return outs
    return bridge.apply(level, *xs)


def _make_bridge(name, function_base, grad_enabled):
    """One outer side's ``autograd.Function`` (torch's or torchlike's): the shared forward and backward."""
    def forward(ctx, level, *xs):
        return _bridge_forward(ctx, level, xs)

    def backward(ctx, *grads):
        return _bridge_backward(ctx, grads, grad_enabled, bridge)

    bridge = type(name, (function_base,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                           "__module__": __name__})
    return bridge


_TorchBridge = _make_bridge("_TorchBridge", torch.autograd.Function, torch.is_grad_enabled)
_TlBridge = _make_bridge("_TlBridge", tl.autograd.Function, tl.is_grad_enabled)


def _named(bridge, fn, default):
    """A subclass of bridge named after fn, so that the node shows as ``<name>Backward``."""
    name = getattr(fn, "__name__", "")
    return type(name if name.isidentifier() else default, (bridge,), {"__module__": __name__})


class _Static:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


def _split(args, tensor_type):
    """Tensors of args, and a template holding None at their places and _Static(value) elsewhere."""
    tensors = [a for a in args if isinstance(a, tensor_type)]
    template = [None if isinstance(a, tensor_type) else _Static(a) for a in args]
    return tensors, template


def _finish(outs, single):
    return outs[0] if single else tuple(outs)


# ---- public API ----

def _is_jax_fn(fn):
    if hasattr(fn, "lower") and hasattr(fn, "trace"):  # jax.jit-wrapped
        return True
    module = getattr(fn, "__module__", None) or ""
    return module == "jax" or module.startswith(("jax.", "jaxlib"))


def torch_op(fn=None, *, kind=None):
    """Make ``fn`` a function of torch tensors whose gradients flow in torch's autograd.

    ``kind="torchlike"``: ``fn`` takes and returns torchlike Tensors; backward uses ``torchlike.autograd.grad``
    (with ``create_graph`` when torch records, so double backward works).
    ``kind="jax"``: ``fn`` takes and returns JAX arrays (a tuple for several outputs); backward uses ``jax.vjp``
    (forward and each backward order are jitted once per signature).
    ``kind=None`` (default) detects: ``jax.jit``-wrapped functions and functions defined in ``jax`` modules are
    JAX functions; any other function is first run as a torchlike one, and if it returns JAX arrays it is taken
    for a JAX function from then on (that first call runs it twice).
    torch tensor arguments are converted (zero-copy where ``interop.from_torch`` is); other arguments are passed
    unchanged (for JAX they must be hashable to be cached). The torch node is named ``<fn.__name__>Backward``
    (``TorchOpBackward`` for lambdas). Usable as a decorator: ``@torch_op`` or ``@torch_op(kind="jax")``.
    """
    if fn is None:
        return functools.partial(torch_op, kind=kind)
    detect = kind is None
    if kind is None:
        kind = "jax" if _is_jax_fn(fn) else "torchlike"
    if kind not in ("torchlike", "jax"):
        raise ValueError(f"torch_op: kind must be 'torchlike' or 'jax', got {kind!r}")

    bridge = _named(_TorchBridge, fn, "TorchOp")

    def call(xs, template):
        if wrapper.kind == "torchlike":
            level = _GraphLevel(_Torchlike, fn, template)
        else:
            level = _JaxLevel(_jax_flat(fn, template))
        return _finish(_call_level(level, tuple(xs), bridge, torch.is_grad_enabled), level.single)

    @functools.wraps(fn)
    def wrapper(*args):
        xs, template = _split(args, torch.Tensor)
        try:
            return call(xs, template)
        except _ReturnedJaxArrays:
            if not detect:
                raise TypeError(f"{getattr(fn, '__name__', 'fn')} returned JAX arrays: pass kind='jax' to "
                                "torch_op for a JAX function") from None
            wrapper.kind = "jax"  # a plain JAX function (it ran on Tensors, which JAX accepts as arrays)
            return call(xs, template)

    wrapper.kind = kind
    return wrapper


def _jax_flat(fn, template):
    """fn as a function of the tensor arguments only; cached per static arguments (when hashable)."""
    key = tuple(None if a is None else (a.value,) for a in template)
    try:
        return _jax_flat_cached(fn, key)
    except TypeError:  # unhashable static arguments: no cache (retraces per call)
        return _make_flat(fn, key)


def _make_flat(fn, key):
    def flat(*arrays):
        it = iter(arrays)
        return fn(*[next(it) if k is None else k[0] for k in key])
    return flat


_jax_flat_cached = functools.lru_cache(maxsize=256)(_make_flat)


def from_torch_op(fn):
    """Make a torch function ``fn`` a differentiable torchlike function.

    torchlike Tensor arguments are converted to torch tensors (zero-copy, through DLPack), ``fn`` runs under
    torch's grad mode, and its outputs (a tensor or a tuple of tensors) come back as torchlike Tensors on a node of a
    ``torchlike.autograd.Function``; its backward asks torch for the vector-Jacobian product
    (``torch.autograd.grad``, with ``create_graph`` when torchlike records, so higher orders work). Non-tensor
    arguments are passed unchanged. The node is named ``<fn.__name__>Backward`` (``FromTorchOpBackward`` for
    lambdas); nodes of its backward are ``_TlBridgeBackward``.
    """
    bridge = _named(_TlBridge, fn, "FromTorchOp")

    @functools.wraps(fn)
    def wrapper(*args):
        xs, template = _split(args, tl.Tensor)
        level = _GraphLevel(_Torch, fn, template)
        outs = _call_level(level, tuple(xs), bridge, tl.is_grad_enabled)
        return _finish(outs, level.single)

    return wrapper
