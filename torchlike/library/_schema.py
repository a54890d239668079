"""Operator schemas, as torch's: ``infer_schema`` from type annotations, parsing and printing
(``ns::name(Tensor x, SymInt k=2) -> Tensor``), the name checks of torch's parser and ``Library``, and the
check of a call's argument values against a schema (torch's errors and conversions)."""
import collections.abc
import inspect
import re
import typing

import jax
import numpy as np

from .. import _dtype
from .._device import device as _device
from .._tensor import Tensor


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


# ===== argument values against a schema (torch's checks and conversions) ====================================
def _is_default(arg, value):
    d = arg.default
    if d is _NO_DEFAULT:
        return False
    if d is None or value is None:
        return d is None and value is None
    if isinstance(value, Tensor) or type(value) is not type(d):
        return False
    return value == d


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
