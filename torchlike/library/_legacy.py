"""torch's older custom-op API, ``torch._custom_op.impl.custom_op`` (also reachable here as
``torchlike._custom_op.impl.custom_op``): the decorated function is the implementation; its backward comes
from ``impl_save_for_backward`` plus ``impl_backward``, which returns a dict of gradients keyed by argument
name, checked by ``_validate_grad_inputs_dict``.

Why it stays: torch 2.13 still ships this API (``torch._custom_op.impl`` and ``torch._custom_ops``), deprecated
but importable, so code written against it still runs on torch; here it is a thin layer over ``custom_op``.
"""
import collections
import inspect
import sys
import warnings

import jax

from .._tensor import Tensor
from .._internal import grad_enabled
from ..autograd.function import Function
from ._custom_op import _any_requires_grad, custom_op
from ._pytree import _tree_flatten, _tree_leaves, _tree_map

_RESERVED_NS = {"prim", "prims", "aten", "at", "torch", "pytorch"}


def _legacy_custom_op(qualname, manual_schema=None):
    """torch's deprecated ``torch._custom_op.impl.custom_op``: the decorated function is the implementation;
    give it a backward with ``impl_save_for_backward`` and ``impl_backward`` (which returns a dict of gradients
    keyed by argument name)."""
    warnings.warn("torch._custom_op is deprecated and will be removed in PyTorch 2.6, please use the equivalent "
                  "torch.library API instead.", DeprecationWarning, stacklevel=2)

    def inner(func):
        if not inspect.isfunction(func):
            raise ValueError(f"custom_op(...)(func): Expected `func` to be a Python function, got: {type(func)}")
        names = qualname.split("::", 1)
        if len(names) != 2:
            raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The operator name should look "
                             f"something like ns::foo")
        ns, name = names
        if "." in name:
            raise ValueError(f"The torch.custom_ops APIs do not handle overloads, i.e. operator names with '.' in "
                             f"them. Please name your operator something like ns::foo. Got: {qualname}")
        if "." in ns:
            raise ValueError(f'custom_op(..., ns="{ns}"): expected ns to not contain any . (and be a valid variable '
                             f'name)')
        if ns in _RESERVED_NS:
            raise ValueError(f"custom_op(..., ns='{ns}'): '{ns}' is a reserved namespace, please choose something "
                             f"else. ")
        if func.__name__ != name:
            raise ValueError(f"custom_op(qualname='{qualname}', ...)(func): expected `func` to have name '{name}' but "
                             f"got '{func.__name__}'. Please either change the name of `func` or the qualname that is "
                             f"passed to `custom_op`")
        return _CustomOp(custom_op(qualname, func, mutates_args=(), schema=manual_schema))
    return inner


class _ImplAndLocation:
    def __init__(self, func, location):
        self.func, self.location = func, location


class _CustomOp:
    """The legacy ``CustomOp``: ``impl_save_for_backward`` + ``impl_backward`` make its autograd kernel."""

    def __init__(self, opdef):
        self._opdef = opdef
        self._qualname = opdef._qualname
        self._opname = opdef._name
        self._schema = opdef._schema_obj
        self._impls = {}
        self._output_differentiability = None
        self.__name__ = opdef._name

    def __repr__(self):
        return f'<CustomOp(op="{self._qualname}")>'

    def _register_impl(self, kind, func, stacklevel=2):
        if kind in self._impls:
            raise RuntimeError(f"Attempting to register a {kind} impl for operator {self._qualname} that already has "
                               f"a {kind} impl registered from Python at {self._impls[kind].location}. This is not "
                               f"supported.")
        frame = sys._getframe(stacklevel)
        self._impls[kind] = _ImplAndLocation(func, f"{frame.f_code.co_filename}:{frame.f_lineno}")

    def _get_impl(self, kind):
        return self._impls[kind]

    def _has_impl(self, kind):
        return kind in self._impls

    def _check_can_register_backward(self):
        schema = self._schema
        shown = f"{self._opname}({str(schema).split('(', 1)[1]}"

        def error(detail):
            raise RuntimeError(f"Cannot use torch._custom_ops APIs to register backward formula for {detail}. Got "
                               f"operator {self._qualname} with schema: {shown}")
        if not schema.returns:
            error("operator with no returns")
        allowed = {"SymInt", "int", "bool", "float", "Tensor", "Tensor[]"}
        for r in schema.returns:
            if r not in allowed:
                error(f"operator with return not in ['int', 'SymInt', 'bool', 'float', 'Tensor', 'List[Tensor]'] "
                      f"(got {r})")

    def impl_save_for_backward(self, _stacklevel=2):
        """Register ``f(inputs, output) -> saved`` (``inputs`` is a namedtuple of the op's arguments)."""
        def inner(f):
            self._check_can_register_backward()
            self._register_impl("save_for_backward", f, stacklevel=_stacklevel)
            if self._has_impl("backward"):
                self._register_autograd_kernel()
        return inner

    def impl_backward(self, output_differentiability=None, _stacklevel=2):
        """Register ``f(ctx, saved, *grads) -> dict`` of gradients keyed by argument name."""
        if output_differentiability is not None:
            def yell():
                raise RuntimeError(f"impl_backward(output_differentiability): expected output_differentiability to "
                                   f"be a list of bools with length equal to the number of outputs of this CustomOp "
                                   f"got: {output_differentiability}")
            if not isinstance(output_differentiability, list):
                yell()
            if any(not isinstance(d, bool) for d in output_differentiability):
                yell()
            if len(self._schema.returns) != len(output_differentiability):
                yell()

        def inner(f):
            self._check_can_register_backward()
            self._register_impl("backward", f, stacklevel=_stacklevel)
            self._output_differentiability = output_differentiability
            if self._has_impl("save_for_backward"):
                self._register_autograd_kernel()
        return inner

    def _register_autograd_kernel(self):
        kernel = _construct_autograd_kernel(self, self._output_differentiability,
                                            self._get_impl("save_for_backward").func, self._get_impl("backward").func)
        self._impls["autograd"] = _ImplAndLocation(kernel, None)

    def __call__(self, *args, **kwargs):
        if self._has_impl("autograd"):
            return self._impls["autograd"].func(*args, **kwargs)
        if self._has_impl("save_for_backward") or self._has_impl("backward"):
            missing = "save_for_backward" if self._has_impl("backward") else "backward"
            found = "save_for_backward" if missing == "backward" else "backward"
            raise RuntimeError(f"We found a '{found}' registration for {self} at {self._get_impl(found).location} but "
                               f"were unable to find a '{missing}' registration. To use the CustomOp API to register a "
                               f"backward formula, please provide us both a backward function and a 'save for "
                               f"backward' function via `impl_backward` and `impl_save_for_backward` respectively.")
        if grad_enabled() and _any_requires_grad(list(args) + list(kwargs.values())):
            raise RuntimeError("Autograd has not been implemented for operator")
        return self._below_autograd(*args, **kwargs)

    def _below_autograd(self, *args, **kwargs):
        positional, kwonly = self._opdef._bind(args, kwargs)
        return self._opdef._run(positional, kwonly)


def _construct_autograd_kernel(custom_op, output_differentiability, save_for_backward_fn, backward_fn):
    """torch's construct_autograd_kernel: a Function ``{op}_customop`` around the op, whose backward calls the
    dict-returning ``backward_fn`` and validates and flattens its result."""
    schema = custom_op._schema

    def apply(*args):
        flat_args, spec = _tree_flatten(args)
        out_spec = None

        def forward(ctx, *flat):
            nonlocal out_spec
            ctx.set_materialize_grads(True)
            args = jax.tree_util.tree_unflatten(spec, list(flat))
            output = custom_op._below_autograd(*args)
            args_info = _namedtuple_args(schema, _tree_map(type, args))
            to_save = save_for_backward_fn(_namedtuple_args(schema, args), output)
            _save_pytree_for_backward(ctx, (to_save, args_info))
            _mark_non_differentiable(ctx, output, output_differentiability)
            flat_output, out_spec = _tree_flatten(output)
            return tuple(flat_output)

        def backward(ctx, *flat_grads):
            grads = jax.tree_util.tree_unflatten(out_spec, list(flat_grads))
            saved, args_info = _unpack_saved(ctx)
            if not isinstance(grads, tuple):
                grads = (grads,)
            grad_inputs_dict = backward_fn(object(), saved, *grads)
            _validate_grad_inputs_dict(grad_inputs_dict, custom_op, args_info)
            return _grad_inputs_dict_to_flat_tuple(grad_inputs_dict, args_info)

        cls = type(custom_op._opname + "_customop", (Function,),
                   {"forward": staticmethod(forward), "backward": staticmethod(backward),
                    "__module__": "torchlike.autograd.function"})
        flat_output = cls.apply(*flat_args)
        return jax.tree_util.tree_unflatten(out_spec, list(flat_output))

    return apply


_NAMEDTUPLES = {}


def _namedtuple_args(schema, args):
    """The op's arguments as a namedtuple ``{name}_args`` with one field per schema argument."""
    key = (schema.qualname, tuple(a.name for a in schema.args))
    cls = _NAMEDTUPLES.get(key)
    if cls is None:
        cls = _NAMEDTUPLES[key] = collections.namedtuple(schema.qualname.split("::")[1] + "_args", key[1])
    return cls(*args)


def _mark_non_differentiable(ctx, output, output_differentiability):
    if output_differentiability is None:
        return
    outs = output if isinstance(output, tuple) else (output,)
    if len(output_differentiability) != len(outs):
        raise AssertionError(f"output_differentiability length {len(output_differentiability)} != output length "
                             f"{len(outs)}")
    non_diff = []
    for idx, (differentiable, out) in enumerate(zip(output_differentiability, outs)):
        if isinstance(out, Tensor):
            if not differentiable:
                non_diff.append(out)
            continue
        if isinstance(out, list):
            if not differentiable:
                non_diff.extend(out)
            continue
        if differentiable:
            raise RuntimeError(f"With output_differentiability={output_differentiability}. At idx {idx}, we received "
                               f"an object of type {type(out)} that is not a Tensor, so it cannot have be marked as "
                               f"differentiable in output_differentiability.")
    if non_diff:
        ctx.mark_non_differentiable(*non_diff)


def _save_pytree_for_backward(ctx, stuff):
    """Tensors of a pytree go to ``save_for_backward``; everything else to ctx attributes."""
    flat, spec = _tree_flatten(stuff)
    ctx.spec = spec
    ctx.num_elts = len(flat)
    ctx.save_for_backward(*[x for x in flat if isinstance(x, Tensor)])
    ctx.tensor_idxs = [i for i, x in enumerate(flat) if isinstance(x, Tensor)]
    ctx.saved_non_tensors = [x for x in flat if not isinstance(x, Tensor)]
    ctx.non_tensor_idxs = [i for i, x in enumerate(flat) if not isinstance(x, Tensor)]


def _unpack_saved(ctx):
    flat = [None] * ctx.num_elts
    for t, i in zip(ctx.saved_tensors, ctx.tensor_idxs):
        flat[i] = t
    for x, i in zip(ctx.saved_non_tensors, ctx.non_tensor_idxs):
        flat[i] = x
    return jax.tree_util.tree_unflatten(ctx.spec, flat)


def _validate_grad_inputs_dict(grad_inputs_dict, forward_op, args_info):
    """torch's checks of a legacy backward's result: a dict with one entry per Tensor-like argument, each None,
    a Tensor, or (for list arguments) a list of the right length of None/Tensor."""
    def error(what):
        raise RuntimeError(f"In the backward function defined for {forward_op} at "
                           f"{forward_op._get_impl('backward').location} using the CustomOp API, {what}")

    if not isinstance(grad_inputs_dict, dict):
        error(f"expected the output of the backward function to be a dict but got {type(grad_inputs_dict)}")
    expected_keys = {a.name for a in forward_op._schema.args if a.is_tensor_like}
    actual_keys = grad_inputs_dict.keys()
    if expected_keys != actual_keys:
        error(f"expected the returned grad_input dict to have keys {expected_keys} but got {actual_keys}. The backward "
              f"function must return a gradient (can be None) for each arg to the CustomOp that may be a Tensor or "
              f"Sequence[Tensor]. Args declared to be non-Tensor-like types should not appear in the grad_input dict")
    for name, grad in grad_inputs_dict.items():
        info = getattr(args_info, name)
        if isinstance(info, list):
            if not isinstance(grad, (tuple, list)):
                error(f"for input '{name}' expected the grad_input dict to hold a list of gradients but got object of "
                      f"type {type(grad)}.")
            if len(grad) != len(info):
                error(f"for input '{name}' expected the grad_input dict to hold a list of {len(info)} gradients but "
                      f"got {len(grad)}")
            for idx, (g, elem_info) in enumerate(zip(grad, info)):
                _check_grad(error, g, elem_info,
                            f"for input '{name}' expected the grad_input dict to hold a list of None or Tensor "
                            f"gradients but got object of {type(g)} at index {idx}",
                            f"for input '{name}', got a Tensor as the gradient for the {idx}-th value but expected "
                            f"None because the {idx}-th value was not a Tensor (it was type {info}")
            continue
        _check_grad(error, grad, info,
                    f"got object of type {type(grad)} as the gradient for input '{name}', but expected the gradient "
                    f"to be either None or a Tensor",
                    f"got a Tensor as the gradient for input '{name}' but expected None as the gradient because input "
                    f"'{name}' was not a Tensor (it was type {info}).")


def _check_grad(error, grad, info, not_a_tensor, not_expected):
    """One gradient: None, or a Tensor for an argument (``info``: its type) that was a Tensor."""
    if grad is None:
        return
    if not isinstance(grad, Tensor):
        error(not_a_tensor)
    if not issubclass(info, Tensor):
        error(not_expected)


def _grad_inputs_dict_to_flat_tuple(grad_inputs_dict, args_info):
    """One gradient per flattened argument: a missing key gives None for every leaf of that argument."""
    result = []
    for name, info in args_info._asdict().items():
        if name not in grad_inputs_dict:
            result.append(_tree_map(lambda x: None, info))
            continue
        result.append(grad_inputs_dict[name])
    return tuple(_tree_leaves(result))
