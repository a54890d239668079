"""Autograd of a custom op, as torch's ``make_autograd_impl``: the generated ``autograd.Function``
``GeneratedBackwardFor_{ns}_{op}_default``, with ``List[Tensor]`` arguments and returns flattened as torch's
``supports_tensorlist`` does (and its structure check of what the backward returns)."""
import jax

from .._tensor import Tensor
from ..autograd.function import Function
from ._pytree import _spec_repr, _tree_flatten


def _not_list_of_tensor(tree):
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(not isinstance(x, Tensor) for x in tree)
    return True


def _not_list_of_optional_tensor(tree):
    if isinstance(tree, tuple):
        return False
    if isinstance(tree, list):
        return any(x is not None and not isinstance(x, Tensor) for x in tree)
    return True


class _TensorListSlot:
    """The second trailing argument torch's ``supports_tensorlist`` adds (its ``TensorListMetadata``)."""

    def __init__(self, meta):
        self.meta = meta


def _make_autograd_function(opdef):
    """The ``autograd.Function`` ``GeneratedBackwardFor_{ns}_{op}_default`` (its node: ``...Backward``)."""
    op = opdef._opoverload
    name = f"GeneratedBackwardFor_{opdef._namespace}_{opdef._name}_default"
    tensorlist = opdef._tensorlist

    def run_forward(ctx, args, meta):
        kwonly = meta.kwargs
        result = opdef._run(list(args), kwonly)
        setup = opdef._setup_context_fn
        if setup is not None:
            full = opdef._fill_defaults(args)
            if opdef._schema_obj.kwarg_only:
                setup(ctx=ctx, inputs=full, keyword_only_inputs=kwonly, output=result)
            else:
                setup(ctx=ctx, inputs=full, output=result)
        return result

    def run_backward(ctx, grads):
        if opdef._backward_fn is None:
            raise RuntimeError(f"Trying to backward through {op} but no autograd formula was registered. Please use "
                               f"register_autograd to add one.")
        result = opdef._backward_fn(ctx, *grads)
        return (*result, None) if isinstance(result, tuple) else (result, None)

    def forward(ctx, *args):
        if not tensorlist:
            return run_forward(ctx, args[:-1], args[-1])
        meta = args[-1].meta
        unflat = jax.tree_util.tree_unflatten(meta.input_spec, list(args[:-1]))
        result = run_forward(ctx, unflat[:-1], meta)
        meta.result_is_tuple = isinstance(result, tuple)
        if not meta.result_is_tuple:
            result = (result,)
        flat, meta.output_spec = _tree_flatten(result, is_leaf=_not_list_of_tensor)
        if hasattr(ctx, "_pt_metadata"):
            raise RuntimeError("Please don't set ctx._pt_metadata; PyTorch uses it to store info")
        ctx._pt_metadata = meta
        return tuple(flat)

    def backward(ctx, *grads):
        prev = ctx.needs_input_grad
        try:
            if not tensorlist:
                ctx.needs_input_grad = prev[:-1]
                return run_backward(ctx, grads)
            meta = ctx._pt_metadata
            grads = jax.tree_util.tree_unflatten(meta.output_spec, list(grads))
            ctx.needs_input_grad = jax.tree_util.tree_unflatten(meta.input_spec, list(prev[:-1]))[:-1]
            result = run_backward(ctx, grads)
        finally:
            ctx.needs_input_grad = prev
        flat, spec = _tree_flatten(result, is_leaf=_not_list_of_optional_tensor)
        if spec != meta.input_spec:
            raise RuntimeError(f"Expected the return from backward to be of the same structure as the inputs. Got: "
                               f"{_spec_repr(spec)} (return from backward), {_spec_repr(meta.input_spec)} (inputs)")
        return tuple(flat) + (None,)

    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "__module__": "torchlike.autograd.function"})
