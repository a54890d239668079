"""``custom_op`` and ``CustomOpDef`` (see the package docstring), and the module-level ``register_*``.

Per input signature the op's body is traced once into a traced op (``torchlike.ops._traced``, which
``interop.jax_op`` uses too) whose jitted forward is the op's kernel; the op's autograd is torch's generated
Function around it (``_autograd``), calling the registered formula, not the traced op's ``jax.vjp``.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

from .._device import device as _device
from .._dtype import _exact_key
from .._internal import grad_enabled, no_grad, traced, views, wrap
from .._tensor import Tensor
from ._autograd import _TensorListSlot, _make_autograd_function, _not_list_of_tensor
from ._namespace import _OpOverload, _publish
from ._pytree import _tree_flatten
from ._schema import _NO_DEFAULT, _Schema, _check_arg, _check_names, _is_default, infer_schema

_OPDEFS = {}  # qualname -> CustomOpDef (a redefinition replaces the old one, as torch's custom_op does)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Wrap ``fn`` (written with torchlike ops or with JAX on arrays) into a custom operator ``"ns::name"``;
    returns a ``CustomOpDef``. Works as a decorator or called directly, as ``torch.library.custom_op``."""
    def inner(fn):
        if schema is None:
            schema_str = infer_schema(fn, mutates_args=mutates_args)
        else:
            schema_str = schema
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn)
        if schema is not None:
            expected = {a.name for a in result._schema_obj.args if a.mutable}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and `schema={schema}. The "
                    f"schema suggests that the op mutates {expected}which is different from what was provided to us "
                    f"in `mutates_args`. Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


class _Metadata:
    """The trailing argument of the generated Function (torch's ``Metadata``): keyword-only args and, for ops
    with ``List[Tensor]`` arguments or returns, the flattening specs."""

    def __init__(self, kwargs, input_spec=None):
        self.kwargs = kwargs
        self.input_spec = input_spec
        self.output_spec = None
        self.result_is_tuple = None


class _Compiled:
    """One input signature's traced body (a ``traced.Traced``) and what its trace learned."""

    __slots__ = ("traced", "n_outs", "mutated", "bumps")


class _NoRetry(Exception):
    """Raised inside a trace for the op's own errors: they are not a reason to retrace the body on raw arrays."""

    def __init__(self, exc):
        super().__init__(str(exc))
        self.exc = exc


class CustomOpDef:
    """A custom operator made by ``custom_op``: call it like the function; register its autograd formula with
    ``register_autograd``, other kernels with ``register_kernel`` and a fake impl with ``register_fake``."""

    def __init__(self, namespace, name, schema, fn):
        _check_names(f"{namespace}::{name}", namespace, name, schema)
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._schema_obj = parsed = _Schema(f"{namespace}::{name}", schema)
        if any(a.is_tensor_like for a in parsed.kwarg_only):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name}{schema}")
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._cache = {}  # (kernel, statics, avals) -> _Compiled
        self._modes = {}  # kernel -> "tensor" | "jax": what the body's arguments are during its trace
        self._trace_count = 0  # how many input signatures were traced (= compiled)
        self._tensorlist = any(a.is_tensor_list for a in parsed.args) or any("[]" in r for r in parsed.returns)
        self._opoverload = _OpOverload(self)
        self._autograd_fn = _make_autograd_function(self)
        _OPDEFS[self._qualname] = self
        _publish(self)

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    # ----- registrations ---------------------------------------------------------------------------------
    def register_kernel(self, device_types, fn=None, /):
        """Use ``fn`` as the implementation for ``device_types`` (None: every device). Works as a decorator."""
        def inner(fn):
            if device_types is None or isinstance(device_types, str):
                kinds = [device_types]
            else:
                kinds = list(device_types)
            for kind in kinds:
                self._backend_fns[kind] = fn
            return fn
        if fn is None:
            return inner
        return inner(fn)

    def register_fake(self, fn, /):
        """Store a fake (meta) implementation. torchlike gets output shapes from ``jax.eval_shape`` instead."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register ``backward(ctx, *grads)`` and optionally ``setup_context(ctx, inputs, output)`` (with
        ``keyword_only_inputs`` too when the op has keyword-only arguments), as torch's."""
        if self._schema_obj.is_mutable:
            raise RuntimeError(f"Cannot register autograd formula for non-functional operator {self} with schema "
                               f"{self._schema_obj}. Please create a functional operator and register an autograd "
                               f"formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    # ----- calling -----------------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        positional, kwonly = self._bind(args, kwargs)
        if grad_enabled() and _any_requires_grad(positional):
            return self._apply_autograd(self._drop_defaults(positional), kwonly)
        return self._run(positional, kwonly)

    def _bind(self, args, kwargs):
        """torch's argument parsing against the schema: (all positional values, keyword-only dict)."""
        schema = self._schema_obj
        pos = schema.positional
        q = self._qualname
        if len(args) > len(pos):
            raise RuntimeError(f"{q}() takes {len(pos)} positional argument(s) but {len(args)} was/were given.  "
                               f"Declaration: {schema}")
        names = {a.name for a in schema.args}
        for k in kwargs:
            if k not in names:
                raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{q}'. Schema: {schema}")
        values, kwonly = [], {}
        for i, a in enumerate(schema.args):
            if i < len(args) and not a.kwarg_only:
                v = args[i]
            elif a.name in kwargs:
                v = kwargs[a.name]
            elif a.default is not _NO_DEFAULT:
                v = a.default
            else:
                raise RuntimeError(f"{q}() is missing value for argument '{a.name}'. Declaration: {schema}")
            v = _check_arg(q, schema, a, i, v)
            if a.kwarg_only:
                kwonly[a.name] = v
            else:
                values.append(v)
        return values, kwonly

    def _drop_defaults(self, values):
        """Trailing positional arguments equal to their defaults are left out, as torch's dispatcher does."""
        pos = self._schema_obj.positional
        n = len(values)
        while n and _is_default(pos[n - 1], values[n - 1]):
            n -= 1
        return list(values[:n])

    def _fill_defaults(self, values):
        pos = self._schema_obj.positional
        return tuple(values) + tuple(a.default for a in pos[len(values):])

    def _apply_autograd(self, args, kwonly):
        fn = self._autograd_fn
        if not self._tensorlist:
            return fn.apply(*args, _Metadata(kwonly))
        flat, spec = _tree_flatten((*args, None), is_leaf=_not_list_of_tensor)
        meta = _Metadata(kwonly, spec)
        flat[-1] = meta  # the Metadata slot is a leaf of the input structure, as in torch
        result = fn.apply(*flat, _TensorListSlot(meta))
        result = jax.tree_util.tree_unflatten(meta.output_spec, list(result))
        return result if meta.result_is_tuple else result[0]

    # ----- the kernel: one jitted call per input signature ------------------------------------------------
    def _kernel(self, values):
        kind = next((t.device.type for t in _tensors_in(values)), None)
        fn = self._backend_fns.get(kind) or self._backend_fns.get(None)
        if fn is None:
            raise NotImplementedError(f"Could not run '{self._qualname}' with arguments from the "
                                      f"'{(kind or 'cpu').upper()}' backend.")
        return fn

    def _run(self, positional, kwonly):
        """Run the op without autograd: jitted body, outputs wrapped, mutated arguments written back."""
        values = list(self._fill_defaults(positional)) + list(kwonly.values())
        kernel = self._kernel(values)
        tensors = []
        template = [_template(v, tensors) for v in values]
        arrays = [t._data for t in tensors]
        key = (kernel, _freeze(template), tuple(a.aval for a in arrays))
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._compile(kernel, template, list(kwonly), arrays)
            if compiled.traced.cacheable:
                self._cache[key] = compiled
        flat = compiled.traced.forward(*arrays)
        n = sum(compiled.n_outs)
        outs, new_data = flat[:n], flat[n:]
        self._write_back(tensors, compiled, new_data, self._declared_mutated(values))
        return self._outputs(outs, compiled.n_outs)

    def _write_back(self, tensors, compiled, new_data, declared):
        """Mutated arguments get their new data; versions move as torch's (one bump for a declared mutable
        argument, plus one per in-place op the body did on it)."""
        written = dict(zip(compiled.mutated, new_data))
        for i, t in enumerate(tensors):
            n = compiled.bumps[i] + (i in declared)
            if i in written:
                views._commit(t, written[i])
                n -= 1
            if n > 0:
                t._version_counter().version += n

    def _declared_mutated(self, values):
        """Positions (among the Tensors of ``values``) of those in mutable schema arguments."""
        schema = self._schema_obj
        if not schema.is_mutable:
            return ()
        positions, i = set(), 0
        for a, v in zip(schema.positional + schema.kwarg_only, values):
            n = len(_tensors_in([v]))
            if a.mutable:
                positions.update(range(i, i + n))
            i += n
        return positions

    def _outputs(self, outs, n_outs):
        schema = self._schema_obj
        it = iter(outs)
        res = []
        for rtype, n in zip(schema.returns, n_outs):
            if rtype.startswith("Tensor["):
                res.append([wrap(next(it)) for _ in range(n)])
            elif rtype.startswith("Tensor"):
                res.append(wrap(next(it)))
            else:
                res.append(_to_python(next(it), rtype))
        if not schema.returns:
            return None
        return tuple(res) if schema.ret_tuple else res[0]

    def _compile(self, kernel, template, kw_names, arrays):
        """Trace ``kernel`` once (as torchlike code, or as JAX code if that fails) and jit it."""
        try:
            return self._compile_in_mode(kernel, template, kw_names, arrays)
        except _NoRetry as e:  # the op's own errors (aliasing, return structure)
            raise e.exc from None

    def _compile_in_mode(self, kernel, template, kw_names, arrays):
        mode = self._modes.get(kernel)
        if mode is not None:
            return self._trace(kernel, template, kw_names, arrays, mode)
        try:
            compiled = self._trace(kernel, template, kw_names, arrays, "tensor")
            mode = "tensor"
        except _NoRetry:
            raise
        except Exception as first:  # noqa: BLE001 - maybe JAX code: it cannot take torchlike Tensors
            try:
                compiled = self._trace(kernel, template, kw_names, arrays, "jax")
            except _NoRetry:
                raise
            except Exception as second:
                if _is_jax_on_tensor_error(first):
                    raise second from None
                raise first from None
            mode = "jax"
        self._modes[kernel] = mode
        return compiled

    def _trace(self, kernel, template, kw_names, arrays, mode):
        info = _Compiled()
        n_kw = len(kw_names)

        def body(*tracers):
            leaves = [wrap(a) for a in tracers] if mode == "tensor" else list(tracers)
            it = iter(leaves)
            values = [_fill(v, it) for v in template]
            pos, kw = values[:len(values) - n_kw], dict(zip(kw_names, values[len(values) - n_kw:]))
            with no_grad():
                result = kernel(*pos, **kw)
            outs, counts = self._flat_result(result, leaves, tracers)
            info.n_outs = counts
            info.mutated, new_data, info.bumps = [], [], [0] * len(leaves)
            if mode == "tensor":
                for i, (leaf, a) in enumerate(zip(leaves, tracers)):
                    info.bumps[i] = leaf._version
                    if leaf._data is not a:
                        info.mutated.append(i)
                        new_data.append(leaf._data)
            self._trace_count += 1
            return outs + new_data

        # The one trace of the body (abstract evaluation: output shapes and structure, no fake kernel needed).
        info.traced = traced.trace(f"{self._name}Backward", body, arrays)
        return info

    def _flat_result(self, result, leaves, tracers):
        """Check the body's result against the schema's returns; flat arrays plus per-return leaf counts."""
        schema = self._schema_obj
        returns = schema.returns
        if not returns:
            return [], []
        if schema.ret_tuple:
            if not isinstance(result, (tuple, list)):
                raise _NoRetry(TypeError(f"Object of type '{type(result).__name__}' is not an instance of "
                                         f"'sequence'"))
            if len(result) != len(returns):
                raise _NoRetry(RuntimeError(f"{self._name}(): expected the function to return {len(returns)} "
                                            f"values but it returned {len(result)}"))
            items = list(result)
        else:
            items = [result]
        outs, counts, seen = [], [], []
        for rtype, item in zip(returns, items):
            group = list(item) if rtype.startswith("Tensor[") else [item]
            counts.append(len(group))
            for o in group:
                if rtype.startswith("Tensor"):
                    if self._aliases(o, leaves, tracers, seen):
                        raise _NoRetry(self._alias_error())
                    seen.append(o)
                arr = o._data if isinstance(o, Tensor) else jnp.asarray(o)
                if getattr(arr, "weak_type", False):
                    arr = jnp.asarray(arr, dtype=arr.dtype)
                outs.append(arr)
        return outs, counts

    @staticmethod
    def _aliases(o, leaves, tracers, seen):
        data = o._data if isinstance(o, Tensor) else o
        for x in list(leaves) + list(seen):
            if o is x or (isinstance(x, Tensor) and (data is x._data or getattr(o, "_base", None) is x)):
                return True
        return any(data is a for a in tracers)

    def _alias_error(self):
        return RuntimeError(
            f"{self._name} (with implementation in {sys.modules[__package__]}): The output of this custom operator (1) "
            f"must not also be an input to this custom operator and (2) may not alias any inputs to this custom "
            f"operator or other returns. The most common way to trigger this error is if we have y = custom_op(x) "
            f"and y and x are the same Tensor. Please instead return a clone of the offending output tensor(s) (e.g. "
            f"return x.clone()) or refactor the custom operator to not return y.")


def _is_jax_on_tensor_error(e):
    text = str(e)
    return "__jax_array__" in text or "is not a valid JAX type" in text


def _template(v, tensors):
    """``v`` with its Tensors (also inside lists) replaced by slots; the Tensors go to ``tensors``."""
    if isinstance(v, Tensor):
        tensors.append(v)
        return _SLOT
    if isinstance(v, (list, tuple)):
        return type(v)(_template(x, tensors) for x in v)
    return v


_SLOT = type("_Slot", (), {"__repr__": lambda self: "<tensor>"})()


def _fill(v, it):
    if v is _SLOT:
        return next(it)
    if isinstance(v, (list, tuple)):
        return type(v)(_fill(x, it) for x in v)
    return v


def _freeze(v):
    """A hashable key for the static parts of the arguments (1, 1.0 and True stay distinct)."""
    if isinstance(v, (list, tuple)):
        return (type(v).__name__,) + tuple(_freeze(x) for x in v)
    if isinstance(v, _device):
        return ("device", str(v))
    return (type(v), _exact_key(v))  # every other schema type (numbers, str, dtype, None) is hashable (-0.0 and
    # 0.0 stay distinct too: _exact_key)


def _tensors_in(values):
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(_tensors_in(v))
    return out


def _any_requires_grad(values):
    return any(t._requires_grad for t in _tensors_in(values))


def _to_python(array, rtype):
    value = np.asarray(array).item()
    return {"SymInt": int, "int": int, "float": float, "bool": bool}.get(rtype, lambda v: v)(value)


# ===== module-level registration functions ====================================================================
def _resolve(op, registration, missing):
    if not isinstance(op, (str, _OpOverload, CustomOpDef)):
        raise ValueError(f"{registration}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, _OpOverload):
        return op._opdef
    opdef = _OPDEFS.get(op)
    if opdef is not None:
        return opdef
    if "::" not in op:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {op}. The qualname passed '
                         f'to the torch.library APIs must consist of a namespace and a name, e.g. aten::sin')
    ns, name = op.split("::", 1)
    if missing == "attr":
        raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")
    raise RuntimeError(f"operator {op} does not exist")


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register the backward formula of a custom op (a ``CustomOpDef``, its ``.default`` or ``"ns::name"``).
    ``lib`` is accepted for torch compatibility (torchlike keeps registrations for the process)."""
    _resolve(op, "register_autograd", "attr").register_autograd(backward, setup_context=setup_context)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Store a fake implementation for a custom op (decorator or direct call), as torch's."""
    opdef = _resolve(op, "register_fake", "runtime")
    if func is None:
        return opdef.register_fake
    return opdef.register_fake(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register the implementation of a custom op for ``device_types`` (decorator or direct call)."""
    opdef = _resolve(op, "register_kernel", "runtime")
    return opdef.register_kernel(device_types, func)
