"""Custom operators, as ``torch.library``: ``custom_op`` and ``register_autograd``.

    @torchlike.library.custom_op("mylib::scaled_sin", mutates_args=())
    def scaled_sin(x: Tensor, k: float) -> Tensor:
        return jnp.sin(x) * k          # JAX on arrays, or torchlike ops (``x.sin() * k``): both work

    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.cos() * ctx.k, None

    scaled_sin.register_autograd(backward, setup_context=setup_context)
    y = scaled_sin(x, 2.0)             # also torchlike.ops.mylib.scaled_sin(x, 2.0) and its ``.default``

The op's body runs as ONE ``jax.jit``-compiled function per input signature (tensor shapes and dtypes plus
the values of the non-Tensor arguments, which are static; count them with ``op._trace_count``). Inside it the
tensor arguments are torchlike Tensors wrapping JAX tracers, so methods that exist in both APIs have torch's
meaning; if the body turns out to be JAX code (``jnp`` functions do not accept torchlike Tensors), it is
traced again on the raw tracers, and that choice is remembered per kernel. A torchlike body can still use JAX
through ``jnp.asarray(t)`` and ``torchlike.as_tensor(array)``. Output shapes come from that abstract trace (``jax.make_jaxpr``, what ``jax.eval_shape``
does), so no fake kernel is needed (``register_fake`` is validated and stored, as torch's API does). The body
must be traceable: no ``.item()``/NumPy on tensor values, no value-dependent shapes. Mutated arguments are
written back in place with torch's version bumps (one for each argument in ``mutates_args``, plus one per
in-place op the body did on it); a JAX body cannot mutate.

Autograd follows torch's ``make_autograd_impl``: an ``autograd.Function`` named
``GeneratedBackwardFor_{ns}_{op}_default`` whose forward takes the arguments (trailing ones equal to their
defaults dropped, as torch's dispatcher does) plus one metadata slot, is applied only if grad mode is on and
some argument requires grad, and whose backward calls the registered formula (or raises torch's
"no autograd formula" error). ``List[Tensor]`` arguments and returns are flattened as torch's
``supports_tensorlist`` does, with its structure check.

``_legacy_custom_op`` is the small surviving piece of torch's older ``torch._custom_op`` API: a backward that
returns a dict of gradients keyed by argument name, checked by ``_validate_grad_inputs_dict``.
"""
import collections
import collections.abc
import inspect
import re
import sys
import types
import typing
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype
from ._device import device as _device
from ._tensor import Tensor, _wrap
from . import _grad_mode as _gm
from .autograd.function import Function

__all__ = ["custom_op", "CustomOpDef", "register_autograd", "register_fake", "register_kernel", "infer_schema"]

_OPDEFS = {}  # qualname -> CustomOpDef (a redefinition replaces the old one, as torch's custom_op does)


# ===== schema inference (torch.library.infer_schema) ==========================================================
def _scalar_param_types():
    number = typing.Union[int, float, bool]
    # (python type, schema type, list variant, optional-element list variant, optional-list variant)
    rows = [(Tensor, "Tensor", True, True, False), (jax.Array, "Tensor", True, True, False),
            (int, "SymInt", True, False, True), (float, "float", True, False, True),
            (bool, "bool", True, False, True), (str, "str", False, False, False),
            (number, "Scalar", True, False, False), (_dtype.dtype, "ScalarType", False, False, False),
            (_device, "Device", False, False, False)]
    result = {}
    for typ, name, lst, opt_elem, opt_list in rows:
        seqs = lambda t: (typing.Sequence[t], typing.List[t], collections.abc.Sequence[t], list[t])  # noqa: E731
        result[typ] = name
        result[typing.Optional[typ]] = name + "?"
        if lst:
            result.update((s, name + "[]") for s in seqs(typ))
        if opt_elem:
            result.update((s, name + "?[]") for s in seqs(typing.Optional[typ]))
        if opt_list:
            result.update((typing.Optional[s], name + "[]?") for s in seqs(typ))
    return result


_PARAM_TYPES = _scalar_param_types()
_RETURN_TYPES = {Tensor: "Tensor", jax.Array: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",
                 list[jax.Array]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
                 typing.Union[int, float, bool]: "Scalar"}


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema string torch infers from a function's type annotations, e.g. ``(Tensor x, SymInt k) -> Tensor``.

    ``mutates_args`` is ``"unknown"`` or the names of the mutated (Tensor) arguments."""
    sig = inspect.signature(prototype_function)
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    def resolve(annotation):
        if isinstance(annotation, str):
            try:
                return eval(annotation, getattr(prototype_function, "__globals__", {}))  # noqa: S307 - torch's way
            except Exception as e:  # noqa: BLE001
                error(f"Unsupported type annotation {annotation}. It is not a type. ({type(e).__name__}: {e})")
        return annotation

    params, seen, kwonly_started = [], set(), False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            error("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not kwonly_started:
            params.append("*")
            kwonly_started = True
        if p.annotation is p.empty:
            error(f"Parameter {name} must have a type annotation.")
        ann = resolve(p.annotation)
        stype = _PARAM_TYPES.get(ann)
        if stype is None:
            if typing.get_origin(ann) is tuple:
                error(f"Parameter {name} has unsupported type {p.annotation}. We do not support Tuple inputs in "
                      f"schema. As a workaround, please try to use List instead. \n\n"
                      f"The valid types are: {_PARAM_TYPES.keys()}.")
            error(f"Parameter {name} has unsupported type {p.annotation}. The valid types are: "
                  f"{_PARAM_TYPES.keys()}.")
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            if stype.startswith("Tensor"):
                stype = f"Tensor(a{idx}!){stype[len('Tensor'):]}"
        elif name in mutates_args:
            if not stype.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be "
                      f"mutated")
            stype = f"Tensor(a{idx}!){stype[len('Tensor'):]}"
        seen.add(name)
        if p.default is p.empty:
            params.append(f"{stype} {name}")
            continue
        d = p.default
        if d is None or isinstance(d, (int, float, bool)):
            text = str(d)
        elif isinstance(d, (str, _device)):
            text = f'"{d}"'
        elif isinstance(d, _dtype.dtype):
            text = d.name
        else:
            error(f"Parameter {name} has an unsupported default value type {type(d)}. Please file an issue on "
                  f"GitHub so we can prioritize this.")
        params.append(f"{stype} {name}={text}")
    if mutates_args != "unknown":
        unseen = set(mutates_args) - seen
        if unseen:
            error(f"{unseen} in mutates_args were not found in the custom op's signature. mutates_args should "
                  f"contain the names of all args that the custom op mutates, or just the string 'unknown' if you "
                  f"don't know.")
    ret = _infer_return(resolve(sig.return_annotation), error)
    head = op_name if op_name is not None else ""
    return f"{head}({', '.join(params)}) -> {ret}"


def _infer_return(annotation, error):
    if annotation is None:
        return "()"
    if annotation is inspect.Parameter.empty:
        error("No return type annotation was provided. Please add one.")
    if typing.get_origin(annotation) is not tuple:
        if annotation not in _RETURN_TYPES:
            error(f"Return has unsupported type {annotation}. The valid types are: {_RETURN_TYPES}.")
        return _RETURN_TYPES[annotation]
    args = typing.get_args(annotation)
    for a in args:
        if a not in _RETURN_TYPES:
            error(f"Return has unsupported type {annotation}. The valid types are: {_RETURN_TYPES}.")
    inner = ", ".join(_RETURN_TYPES[a] for a in args)
    return f"(({inner}))" if len(args) == 1 else f"({inner})"


# ===== schema parsing and printing ===========================================================================
_NO_DEFAULT = object()
_TYPE_RE = re.compile(r"^([A-Za-z]+)(?:\(([^)]*)\))?(\?\[\]|\[\]\?|\?|\[\])?$")
_SCALAR_TYPE_NUMBERS = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5, "float32": 6,
                        "float64": 7, "complex64": 9, "complex128": 10, "bool": 11, "bfloat16": 15}


class _Arg:
    """One schema argument: ``base`` type (``Tensor``, ``SymInt``, ...), ``suffix`` (``?``, ``[]``, ...), alias."""

    def __init__(self, text, kwarg_only):
        m = re.fullmatch(r"\s*(\S+)\s+(\w+)\s*(?:=\s*(.+?))?\s*", text, re.S)
        if m is None:
            raise RuntimeError(f"could not parse the schema argument '{text.strip()}'")
        tm = _TYPE_RE.fullmatch(m.group(1))
        if tm is None:
            raise RuntimeError(f"unknown type '{m.group(1)}' in the schema argument '{text.strip()}'")
        self.base, self.alias, self.suffix = tm.group(1), tm.group(2), tm.group(3) or ""
        self.name = m.group(2)
        self.kwarg_only = kwarg_only
        self.default = _NO_DEFAULT if m.group(3) is None else _parse_literal(m.group(3), self)

    @property
    def type(self):
        return self.base + self.suffix

    @property
    def mutable(self):
        return self.alias is not None and self.alias.endswith("!")

    @property
    def is_tensor_like(self):
        return self.base == "Tensor"

    @property
    def is_tensor_list(self):
        return self.base == "Tensor" and "[]" in self.suffix

    def __str__(self):
        alias = f"({self.alias})" if self.alias is not None else ""
        text = f"{self.base}{alias}{self.suffix} {self.name}"
        if self.default is not _NO_DEFAULT:
            text += "=" + _cpp_literal(self.default, self)
        return text


def _parse_literal(text, arg):
    text = text.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.startswith("[") and text.endswith("]"):
        inner = text[1:-1].strip()
        return [_parse_literal(t, arg) for t in inner.split(",")] if inner else []
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1]
        return _device(text) if arg.base == "Device" else text
    if arg.base == "ScalarType" and hasattr(_dtype, text):
        return getattr(_dtype, text)
    if arg.base == "Device":
        return _device(text)
    try:
        value = int(text)
    except ValueError:
        return float(text)
    return float(value) if arg.base == "float" else value


def _cpp_literal(value, arg):
    """A default value as torch's parsed FunctionSchema prints it (C++ formatting)."""
    if isinstance(value, list):
        return "[" + ", ".join(_cpp_literal(v, arg) for v in value) + "]"
    if value is None or isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        text = "%.17g" % value
        return text if any(c in text for c in ".en") else text + "."
    if isinstance(value, _dtype.dtype):
        return str(_SCALAR_TYPE_NUMBERS.get(value.name, value.name))
    if isinstance(value, _device):
        return str(value)
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _split_top(text):
    """Split on commas that are not inside brackets or parentheses."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


class _Schema:
    """A parsed schema; ``str()`` prints it as torch's ``op._schema`` does (``ns::name(Tensor x, ...) -> ...``)."""

    def __init__(self, qualname, text):
        self.qualname = qualname
        text = text.strip()
        if not text.startswith("("):
            raise RuntimeError(f"expected '(' at the start of the schema: {text}")
        depth = 0
        for end, c in enumerate(text):
            depth += c == "("
            depth -= c == ")"
            if depth == 0:
                break
        arrow = text[end + 1:].strip()
        if not arrow.startswith("->"):
            raise RuntimeError(f"expected '->' after the arguments of the schema: {text}")
        self.args, kwarg_only = [], False
        for part in _split_top(text[1:end]):
            if part.strip() == "*":
                kwarg_only = True
                continue
            self.args.append(_Arg(part, kwarg_only))
        self.ret_text = arrow[2:].strip()
        self.returns, self.ret_tuple = _parse_returns(self.ret_text)

    @property
    def positional(self):
        return [a for a in self.args if not a.kwarg_only]

    @property
    def kwarg_only(self):
        return [a for a in self.args if a.kwarg_only]

    @property
    def is_mutable(self):
        return any(a.mutable for a in self.args)

    def __str__(self):
        parts, star = [], False
        for a in self.args:
            if a.kwarg_only and not star:
                parts.append("*")
                star = True
            parts.append(str(a))
        return f"{self.qualname}({', '.join(parts)}) -> {self.ret_text}"


def _parse_returns(text):
    """(list of return types, whether the op returns a tuple)."""
    def rtype(t):
        m = _TYPE_RE.fullmatch(t.strip().split()[0])
        if m is None:
            raise RuntimeError(f"unknown return type '{t.strip()}' in the schema")
        return m.group(1) + (m.group(3) or "")
    if not text.startswith("("):
        return [rtype(text)], False
    inner = text[1:-1].strip()
    if not inner:
        return [], True
    if inner.startswith("(") and inner.endswith(")"):  # ((Tensor)): a one-element tuple
        inner = inner[1:-1]
    return [rtype(t) for t in _split_top(inner)], True


# ===== name checks (what torch's schema parser and Library refuse) =========================================
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_names(qualname, namespace, name, schema_str):
    m = _IDENT.match(namespace)
    if m is None or m.end() != len(namespace):
        i = 0 if m is None else m.end()
        if m is not None and namespace[i] == ".":  # torch reads "a.b" as a name with an overload
            o = _IDENT.match(namespace, i + 1)
            i = len(namespace) if o is not None and o.end() == len(namespace) else i
        ch = qualname[i]
        kind = "ident" if i == 0 else "eof"
        raise RuntimeError(f"expected {kind} but found '{ch}' here:\n{qualname}\n{' ' * i}~ <--- HERE\n")
    if namespace == "prim":
        raise ValueError(f"{namespace} is a reserved namespace. Please try creating a library with another name.")
    text = name + schema_str
    m = _IDENT.match(name)
    if m is None:
        raise RuntimeError(f"expected ident but found '{text[0]}' here:\n{text}\n~ <--- HERE\n")
    if m.end() != len(name):
        i = m.end()
        if name[i] == ".":
            raise ValueError(f"torchlike.library.custom_op: overload names are not supported (got {qualname})")
        raise RuntimeError(f"expected eof but found '{text[i]}' here:\n{text}\n{' ' * i}~ <--- HERE\n")


# ===== a small pytree with torch's rules (None is a leaf; specs print as torch's TreeSpec) =================
class _TreeSpec:
    def __init__(self, typ, context, children):
        self.type, self.context, self.children = typ, context, children
        self.num_leaves = sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return (isinstance(other, _TreeSpec) and self.type is other.type and self.context == other.context
                and self.children == other.children)

    def __repr__(self, indent=0):
        text = f"TreeSpec({self.type.__name__}, {self.context}, ["
        if self.children:
            indent += 2
            text += self.children[0].__repr__(indent)
            text += "," if len(self.children) > 1 else ""
            text += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children[1:])
        return text + "])"


class _LeafSpec(_TreeSpec):
    def __init__(self):
        super().__init__(object, None, [])
        self.num_leaves = 1

    def __eq__(self, other):
        return isinstance(other, _LeafSpec)

    def __repr__(self, indent=0):
        return "*"


_LEAF = _LeafSpec()


def _tree_flatten(tree, is_leaf=None):
    leaves = []

    def walk(t):
        if is_leaf is not None and is_leaf(t):
            leaves.append(t)
            return _LEAF
        if isinstance(t, tuple) and hasattr(t, "_fields"):
            return _TreeSpec(type(t), None, [walk(c) for c in t])
        if isinstance(t, (tuple, list)):
            return _TreeSpec(type(t), None, [walk(c) for c in t])
        if isinstance(t, dict):
            return _TreeSpec(dict, list(t), [walk(v) for v in t.values()])
        leaves.append(t)
        return _LEAF
    spec = walk(tree)
    return leaves, spec


def _tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s is _LEAF or isinstance(s, _LeafSpec):
            return next(it)
        children = [build(c) for c in s.children]
        if s.type is dict:
            return dict(zip(s.context, children))
        if s.type is list:
            return children
        if s.type is tuple:
            return tuple(children)
        return s.type(*children)  # a namedtuple
    return build(spec)


def _tree_leaves(tree):
    return _tree_flatten(tree)[0]


def _tree_map(fn, tree):
    leaves, spec = _tree_flatten(tree)
    return _tree_unflatten([fn(x) for x in leaves], spec)


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


# ===== the ops namespace: torchlike.ops.<ns>.<name>.default ==================================================
class _OpOverload:
    """``torchlike.ops.ns.name.default``: calls the op; ``str()`` is ``ns.name.default`` as torch's."""

    _overloadname = "default"

    def __init__(self, opdef):
        self._opdef = opdef
        self._namespace, self._opname = opdef._namespace, opdef._name
        self._name = opdef._qualname
        self.__name__ = f"{opdef._name}.default"

    @property
    def _schema(self):
        return self._opdef._schema_obj

    def name(self):
        return self._name

    def __call__(self, *args, **kwargs):
        return self._opdef(*args, **kwargs)

    def __str__(self):
        return f"{self._namespace}.{self._opname}.default"

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', overload='default')>"


class _OpOverloadPacket:
    """``torchlike.ops.ns.name``: calls the op; its one overload is ``.default``."""

    def __init__(self, opdef):
        self.default = opdef._opoverload
        self._qualified_op_name = opdef._qualname
        self._dotted = f"{opdef._namespace}.{opdef._name}"
        self.__name__ = opdef._name

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"The underlying op of '{self._dotted}' has no overload name '{name}'")

    def __call__(self, *args, **kwargs):
        return self.default(*args, **kwargs)

    def __str__(self):
        return self._dotted

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._dotted}')>"


class _OpNamespace(types.ModuleType):
    """``torchlike.ops.<ns>``: holds the custom ops of one namespace."""

    def __init__(self, name):
        super().__init__("torchlike.ops." + name)
        self.name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")

    def __repr__(self):
        return f"<module 'torchlike.ops.{self.name}' from 'torchlike.ops'>"


def _publish(opdef):
    """Make the op reachable as ``torchlike.ops.<ns>.<name>`` (skipped if ``<ns>`` names an op-family module)."""
    from . import ops
    ns = getattr(ops, opdef._namespace, None)
    if ns is None:
        ns = _OpNamespace(opdef._namespace)
        setattr(ops, opdef._namespace, ns)
    if isinstance(ns, _OpNamespace):
        setattr(ns, opdef._name, _OpOverloadPacket(opdef))


# ===== custom_op ===========================================================================================
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
    """One input signature's jitted body and what its trace learned."""

    __slots__ = ("fn", "n_outs", "mutated", "bumps")


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
        if _gm._state.grad_enabled and _any_requires_grad(positional):
            return self._apply_autograd(self._drop_defaults(positional), kwonly)
        return self._run(positional, kwonly)

    def _bind(self, args, kwargs):
        """torch's argument parsing against the schema: (all positional values, keyword-only dict)."""
        schema = self._schema_obj
        pos, kw = schema.positional, schema.kwarg_only
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
        result = _tree_unflatten(list(result), meta.output_spec)
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
            self._cache[key] = compiled
        outs, new_data = compiled.fn(*arrays)
        self._write_back(tensors, compiled, new_data, self._declared_mutated(values))
        return self._outputs(outs, compiled.n_outs)

    def _write_back(self, tensors, compiled, new_data, declared):
        """Mutated arguments get their new data; versions move as torch's (one bump for a declared mutable
        argument, plus one per in-place op the body did on it)."""
        from .ops import _views
        written = dict(zip(compiled.mutated, new_data))
        for i, t in enumerate(tensors):
            n = compiled.bumps[i] + (i in declared)
            if i in written:
                _views._commit(t, written[i])
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
                res.append([_wrap(next(it)) for _ in range(n)])
            elif rtype.startswith("Tensor"):
                res.append(_wrap(next(it)))
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

        def body(*traced):
            leaves = [_wrap(a) for a in traced] if mode == "tensor" else list(traced)
            it = iter(leaves)
            values = [_fill(v, it) for v in template]
            pos, kw = values[:len(values) - n_kw], dict(zip(kw_names, values[len(values) - n_kw:]))
            with _gm.no_grad():
                result = kernel(*pos, **kw)
            outs, counts = self._flat_result(result, leaves, traced)
            info.n_outs = counts
            info.mutated, new_data, info.bumps = [], [], [0] * len(leaves)
            if mode == "tensor":
                for i, (leaf, a) in enumerate(zip(leaves, traced)):
                    info.bumps[i] = leaf._version
                    if leaf._data is not a:
                        info.mutated.append(i)
                        new_data.append(leaf._data)
            self._trace_count += 1
            return outs + new_data

        # The one trace of the body (abstract evaluation: output shapes and structure, no fake kernel needed).
        # Its closed-over constants become explicit arguments of the jitted replay: jax 0.10.2 mis-dispatches
        # jitted functions with closed-over array constants once they come from the persistent compilation cache.
        closed = jax.make_jaxpr(body)(*arrays)
        jaxpr, consts = closed.jaxpr, list(closed.consts)
        replay = jax.jit(lambda consts, *args: jax.core.eval_jaxpr(jaxpr, consts, *args))
        n = sum(info.n_outs)

        def run(*args):
            flat = replay(consts, *args)
            return flat[:n], flat[n:]
        info.fn = run
        return info

    def _flat_result(self, result, leaves, traced):
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
                    if self._aliases(o, leaves, traced, seen):
                        raise _NoRetry(self._alias_error())
                    seen.append(o)
                arr = o._data if isinstance(o, Tensor) else jnp.asarray(o)
                if getattr(arr, "weak_type", False):
                    arr = jnp.asarray(arr, dtype=arr.dtype)
                outs.append(arr)
        return outs, counts

    @staticmethod
    def _aliases(o, leaves, traced, seen):
        data = o._data if isinstance(o, Tensor) else o
        for x in list(leaves) + list(seen):
            if o is x or (isinstance(x, Tensor) and (data is x._data or getattr(o, "_base", None) is x)):
                return True
        return any(data is a for a in traced)

    def _alias_error(self):
        return RuntimeError(
            f"{self._name} (with implementation in {sys.modules[__name__]}): The output of this custom operator (1) "
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
    return (type(v), v)  # every other schema type (numbers, str, dtype, None) is hashable


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


def _is_default(arg, value):
    d = arg.default
    if d is _NO_DEFAULT:
        return False
    if d is None or value is None:
        return d is None and value is None
    if isinstance(value, Tensor) or type(value) is not type(d):
        return False
    return value == d


def _to_python(array, rtype):
    value = np.asarray(array).item()
    return {"SymInt": int, "int": int, "float": float, "bool": bool}.get(rtype, lambda v: v)(value)


_PY_TYPE_NAMES = {"Tensor": "Tensor", "SymInt": "int", "int": "int", "float": "float", "bool": "bool", "str": "str",
                  "Scalar": "number", "ScalarType": "ScalarType", "Device": "Device"}


def _check_arg(q, schema, arg, position, v):
    """torch's type check of one argument (and its conversions: bool -> int, int -> float)."""
    if v is None and "?" in arg.suffix:
        return v
    base = arg.base
    if "[]" in arg.suffix:
        if isinstance(v, (list, tuple)):
            return [_check_elem(q, schema, arg, position, x) for x in v]
    else:
        ok, v2 = _convert(base, v)
        if ok:
            return v2
    expected = _PY_TYPE_NAMES.get(base, base)
    if "[]" in arg.suffix:
        expected = f"List[{expected}]"
    elif "?" in arg.suffix:
        expected = f"Optional[{expected}]"
    detail = (f"Unable to cast {v} to Tensor" if base == "Tensor" else
              f"Unable to cast Python instance of type {type(v)} to C++ type '?' (#define "
              f"PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")
    raise RuntimeError(f"{q}() Expected a value of type '{expected}' for argument '{arg.name}' but instead found type "
                       f"'{type(v).__name__}'.\nPosition: {position}\nValue: {v}\nDeclaration: {schema}\n"
                       f"Cast error details: {detail}")


def _check_elem(q, schema, arg, position, x):
    if x is None and arg.suffix == "?[]":
        return x
    ok, x2 = _convert(arg.base, x)
    if not ok:
        expected = f"List[{_PY_TYPE_NAMES.get(arg.base, arg.base)}]"
        raise RuntimeError(f"{q}() Expected a value of type '{expected}' for argument '{arg.name}' but instead found "
                           f"type 'list'.\nPosition: {position}\nDeclaration: {schema}")
    return x2


def _convert(base, v):
    if base == "Tensor":
        return isinstance(v, Tensor), v
    if base in ("SymInt", "int"):
        if isinstance(v, (int, np.integer)):
            return True, int(v)
        return False, v
    if base == "float":
        if isinstance(v, (int, float, np.integer, np.floating)):
            return True, float(v)
        return False, v
    if base == "bool":
        return isinstance(v, (bool, np.bool_)), v
    if base == "str":
        return isinstance(v, str), v
    if base == "Scalar":
        return isinstance(v, (int, float, complex, bool, np.number)), v
    if base == "ScalarType":
        return isinstance(v, _dtype.dtype), v
    if base == "Device":
        if isinstance(v, str):
            return True, _device(v)
        return isinstance(v, _device), v
    return True, v


# ===== autograd: torch's make_autograd_impl ===================================================================
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
        unflat = _tree_unflatten(list(args[:-1]), meta.input_spec)
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
            grads = _tree_unflatten(list(grads), meta.output_spec)
            ctx.needs_input_grad = _tree_unflatten(list(prev[:-1]), meta.input_spec)[:-1]
            result = run_backward(ctx, grads)
        finally:
            ctx.needs_input_grad = prev
        flat, spec = _tree_flatten(result, is_leaf=_not_list_of_optional_tensor)
        if spec != meta.input_spec:
            raise RuntimeError(f"Expected the return from backward to be of the same structure as the inputs. Got: "
                               f"{spec} (return from backward), {meta.input_spec} (inputs)")
        return tuple(flat) + (None,)

    return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                     "__module__": "torchlike.autograd.function"})


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


# ===== the older CustomOp API (torch/_custom_op): dict-returning backward ===================================
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
        if _gm._state.grad_enabled and _any_requires_grad(list(args) + list(kwargs.values())):
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
            args = _tree_unflatten(list(flat), spec)
            output = custom_op._below_autograd(*args)
            args_info = _namedtuple_args(schema, _tree_map(type, args))
            to_save = save_for_backward_fn(_namedtuple_args(schema, args), output)
            _save_pytree_for_backward(ctx, (to_save, args_info))
            _mark_non_differentiable(ctx, output, output_differentiability)
            flat_output, out_spec = _tree_flatten(output)
            return tuple(flat_output)

        def backward(ctx, *flat_grads):
            grads = _tree_unflatten(list(flat_grads), out_spec)
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
        return _tree_unflatten(list(flat_output), out_spec)

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
    return _tree_unflatten(flat, ctx.spec)


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
                if g is None:
                    continue
                if not isinstance(g, Tensor):
                    error(f"for input '{name}' expected the grad_input dict to hold a list of None or Tensor "
                          f"gradients but got object of {type(g)} at index {idx}")
                if not issubclass(elem_info, Tensor):
                    error(f"for input '{name}', got a Tensor as the gradient for the {idx}-th value but expected None "
                          f"because the {idx}-th value was not a Tensor (it was type {info}")
            continue
        if grad is None:
            continue
        if not isinstance(grad, Tensor):
            error(f"got object of type {type(grad)} as the gradient for input '{name}', but expected the gradient to "
                  f"be either None or a Tensor")
        if not issubclass(info, Tensor):
            error(f"got a Tensor as the gradient for input '{name}' but expected None as the gradient because input "
                  f"'{name}' was not a Tensor (it was type {info}).")


def _grad_inputs_dict_to_flat_tuple(grad_inputs_dict, args_info):
    """One gradient per flattened argument: a missing key gives None for every leaf of that argument."""
    result = []
    for name, info in args_info._asdict().items():
        if name not in grad_inputs_dict:
            result.append(_tree_map(lambda x: None, info))
            continue
        result.append(grad_inputs_dict[name])
    return tuple(_tree_leaves(result))
