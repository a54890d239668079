"""Custom autograd Functions, as torch.autograd.Function.

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)   # y.grad_fn is an ExpBackward node, which is also the ctx forward saw

As in torch, each Function subclass gets a node class ``<Name>Backward`` whose instance is both the ``ctx`` of
``forward``/``setup_context`` and the ``grad_fn`` of the outputs. ``forward`` runs under no_grad; ``backward``
runs under the engine's grad mode (so with ``create_graph=True`` it records, and double backward works when it
is written with torchlike ops). Saved tensors are version-checked, go through saved-tensor hooks and are freed
after backward; outputs never reference their node's saved copies, so there is no Tensor <-> Node cycle.
"""
import functools
import inspect
import warnings

from .._internal import FREED, FREED_MSG, Node, dtype_from_np, grad_enabled, no_grad, record, set_tangent
from .._tensor import Tensor
from ..ops.creation import zeros, zeros_like

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable", "InplaceFunction",
           "NestedIOFunction"]


class FunctionCtx:
    """The ``ctx`` methods of torch's Function (the node class inherits them)."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for backward; read them back with ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors for ``jvp`` (kept as they are, as torch does)."""
        if not all(t is None or isinstance(t, Tensor) for t in tensors):
            raise AssertionError("save_for_forward expects all arguments to be tensors; you should save non-tensors "
                                 "as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Declare inputs that forward modified in place (they must be returned as outputs)."""
        self._dirty = args

    def mark_shared_storage(self, *pairs):
        warnings.warn("mark_shared_storage is deprecated. Tensors with shared storages are automatically tracked. "
                      "Note that calls to `set_()` are not tracked", stacklevel=2)

    def mark_non_differentiable(self, *args):
        """Outputs that get no gradient (they do not require grad; backward still gets a zero for them)."""
        self._non_differentiable = args

    def set_materialize_grads(self, value):
        """With False, backward gets None (not zeros) for outputs that received no gradient."""
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self._for_backward
        if FREED in saved:
            raise RuntimeError(FREED_MSG)
        return tuple(None if s is None else s.unpack(self, True) for s in saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors


class BackwardCFunction(FunctionCtx, Node):
    """Node (and ctx) of one custom Function call; the subclass ``<Name>Backward`` is made per Function."""

    _forward_cls = None
    _to_save = ()
    _dirty = ()
    _non_differentiable = ()
    _materialize = True
    _arg_is_tensor = ()  # per forward argument: whether it was a Tensor (has an edge)
    _runs_without_grads = True
    needs_input_grad = ()

    def __repr__(self):  # torch shows Python-defined nodes with their module
        return f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>"

    def _apply(self, grads, mask=None):
        cls = self._forward_cls
        if FREED in self._for_backward:
            raise RuntimeError(FREED_MSG)
        grads = list(grads)
        if self._materialize:
            for i, (g, meta) in enumerate(zip(grads, self._out_meta)):
                if g is None and meta is not None:
                    grads[i] = zeros(meta.shape, dtype=dtype_from_np(meta.dtype))
        backward = _user_backward(cls)
        result = backward(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._arg_is_tensor)
        name = self.name()
        if len(result) != n:
            if len(result) < n or any(r is not None for r in result[n:]):
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n}, got "
                                   f"{len(result)})")
            result = result[:n]
        out = []
        for i, (g, is_tensor) in enumerate(zip(result, self._arg_is_tensor)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                       f"but the corresponding forward input was not a Variable")
                continue
            if g is not None:
                if not isinstance(g, Tensor):
                    raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
                g = _validate_grad(name, len(out), g, self._in_meta[len(out)])
            out.append(g)
        return out

    def _release(self):
        saved = self._for_backward
        if saved:
            self._for_backward = tuple(None if s is None else FREED for s in saved)


def _validate_grad(name, index, grad, meta):
    """torch's validate_outputs for a Function's gradient: shape (summing broadcast dims) and dtype."""
    shape = tuple(meta.shape)
    gshape = tuple(grad._data.aval.shape)
    if gshape != shape:
        if not _expandable(shape, gshape):
            raise RuntimeError(f"Function {name} returned an invalid gradient at index {index} - got {list(gshape)} "
                               f"but expected shape compatible with {list(shape)}")
        lead = len(gshape) - len(shape)
        if lead:
            grad = grad.sum(dim=tuple(range(lead)))
        dims = tuple(i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1)
        if dims:
            grad = grad.sum(dim=dims, keepdim=True)
    if grad._data.dtype != meta.dtype:
        grad = grad.to(dtype_from_np(meta.dtype))
    return grad


def _expandable(shape, target):
    if len(shape) > len(target):
        return False
    for s, t in zip(reversed(shape), reversed(target)):
        if s != t and s != 1:
            return False
    return True


def _user_backward(cls):
    has_backward = cls.backward is not Function.backward
    has_vjp = cls.vjp is not Function.vjp
    if has_backward and has_vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You should "
                           "only implement one of them.")
    if not (has_backward or has_vjp):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")
    return cls.backward if has_backward else cls.vjp


class _FunctionMeta(type):
    """Gives every Function subclass its node class ``<Name>Backward`` (torch's FunctionMeta)."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,),
                            {"_forward_cls": cls, "_name": name + "Backward",
                             "__module__": "torchlike.autograd.function"})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base class for custom differentiable operations: define static ``forward`` and ``backward`` (and
    optionally ``setup_context``, ``jvp``) and call ``YourFunction.apply(*args)``."""

    generate_vmap_rule = False

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      f"you should invoke them on the class itself. Instantiating an autograd function will raise an "
                      f"error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use "
                           "new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override the vmap staticmethod "
                                  "or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and record one ``<Name>Backward`` node for the tensor outputs."""
        separate = cls.setup_context is not Function.setup_context
        if separate:  # torch binds defaults so setup_context sees every argument
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        return _apply_function(cls, args, kwargs, separate)


def _apply_function(cls, args, kwargs, separate):
    ctx = cls._backward_cls()
    is_tensor = tuple(isinstance(a, Tensor) for a in args)
    ctx._arg_is_tensor = is_tensor
    ctx.needs_input_grad = tuple(t and a._requires_grad for t, a in zip(is_tensor, args))
    recording = grad_enabled() and any(ctx.needs_input_grad)

    with no_grad():
        if separate:
            output = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, output)
        else:
            output = cls.forward(ctx, *args, **kwargs)
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    inputs = [a for a, t in zip(args, is_tensor) if t]
    dirty = ctx._dirty
    for d in dirty:
        if not any(d is a for a in inputs):
            warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
                          "been mutated should be passed to ctx.mark_dirty().", stacklevel=3)
        if recording and d._requires_grad and d._grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    for d in dirty:
        if not any(d is o for o in outputs):
            raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                               "The inputs that are modified inplace must all be outputs of the Function.")

    if recording:
        record.connect(ctx, inputs, tuple(a._data.aval for a in inputs))
    ctx._out_meta = tuple(o._data.aval if isinstance(o, Tensor) else None for o in outputs)

    non_diff = ctx._non_differentiable
    wrapped = []
    for i, o in enumerate(outputs):
        if not isinstance(o, Tensor):
            wrapped.append(o)
            continue
        is_input = any(o is a for a in inputs)
        is_dirty = any(o is d for d in dirty)
        diff = recording and not any(o is n for n in non_diff) and o._data.dtype.kind in "fcV"
        if is_dirty:
            if diff:
                record.rebase_history(o, ctx, i)
                o._version_counter().version += 1  # torch bumps a dirty tensor's version once more when rebasing it
            wrapped.append(o)
            continue
        view_meta = "custom" if len(outputs) == 1 else "multi"  # what torch says when such a view is modified
        if is_input:  # returned as-is: a view of it carries this node (torch's view_as)
            if diff:
                with no_grad():
                    o = o.view_as(o)
                o._view_meta = view_meta
            elif recording:
                o = o.detach()
        elif diff and o._base is not None:
            o._view_meta = view_meta  # a view made inside forward: torch forbids modifying it in place
        if diff:
            record.set_history(o, ctx, i)
        wrapped.append(o)

    if recording:
        _save(ctx, inputs, wrapped)
    else:
        ctx._for_backward = ()
    _forward_ad(cls, ctx, args, wrapped)
    return wrapped[0] if single else tuple(wrapped)


def _save(ctx, inputs, outputs):
    """Pack ``ctx.save_for_backward``'s tensors now that the outputs are known (torch's order)."""
    saved = []
    for t in ctx._to_save:
        if t is None:
            saved.append(None)
            continue
        out_nr = next((k for k, o in enumerate(outputs) if o is t and t._grad_fn is ctx), -1)
        saved.append(record.save(t, out_nr))
    ctx._for_backward = tuple(saved)
    ctx._to_save = ()


def _forward_ad(cls, ctx, args, outputs):
    """Forward-mode AD: call ``jvp`` with the inputs' tangents and attach the outputs' tangents."""
    tangents = [a._fw_tangent if isinstance(a, Tensor) else None for a in args]
    if all(t is None for t in tangents):
        return
    if ctx._materialize:
        tangents = [zeros_like(a) if isinstance(a, Tensor) and t is None and a.is_floating_point() else t
                    for a, t in zip(args, tangents)]
    with no_grad():
        result = cls.jvp(ctx, *tangents)
    if not isinstance(result, tuple):
        result = (result,)
    for o, t in zip(outputs, result):
        if isinstance(o, Tensor) and t is not None and o._data.dtype.kind in "fcV":
            set_tangent(o, t)


def once_differentiable(fn):
    """Decorator for ``backward``: it runs under no_grad; if its incoming gradients require grad, its results
    go through a node that raises when differentiated (lazily, only if that node runs), as torch's."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not grad_enabled() or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = _DelayedError()
        fakes, res = [], []
        for o in outs:
            if not isinstance(o, Tensor):
                fakes.append(None)
                res.append(o)
                continue
            fake = o.detach()  # torch's fake_requires_grad: a leaf that requires grad, so the error node records
            fake._requires_grad = True
            fakes.append(fake)
            res.append(o.detach())
        record.connect(node, fakes, tuple(None if f is None else f._data.aval for f in fakes))
        for i, out in enumerate(res):
            if isinstance(out, Tensor):
                record.set_history(out, node, i)
        node._out_meta = tuple(o._data.aval if isinstance(o, Tensor) else None for o in outs)
        return res[0] if single else tuple(res)
    return wrapper


class _DelayedError(Node):
    """What once_differentiable puts after a backward run without history: differentiating it raises."""

    _name = "torch::autograd::Error"

    def _apply(self, grads, mask=None):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


class InplaceFunction(Function):
    """Legacy base class with an ``inplace`` flag (kept for compatibility, as torch)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """Legacy; not supported (torch deprecates it)."""
