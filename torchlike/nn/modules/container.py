"""Containers: Container (deprecated), Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict (torch.nn's)."""
import operator
from collections import OrderedDict, abc as container_abcs
from itertools import chain, islice

from ..._tensor import Tensor
from ..parameter import Parameter
from .module import Module
from .utils import _deprecated

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _renumber(module):
    module._modules = OrderedDict((str(i), m) for i, m in enumerate(module._modules.values()))


def _abs_index(idx, n):
    idx = operator.index(idx)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return idx % n if n else idx


class Sequential(Module):
    """Modules called in order, each on the previous output: ``Sequential(*modules)`` or
    ``Sequential(OrderedDict(name=module, ...))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        return next(islice(iterator, _abs_index(idx, len(self)), None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx, module):
        setattr(self, self._get_item_by_idx(self._modules.keys(), idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {str(type(other))} is "
                             "given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {str(type(other))} is "
                             "given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other):
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")

    def __mul__(self, other):
        self._check_factor(other)
        combined = Sequential()
        for i, module in enumerate(list(self) * other):
            combined.add_module(str(i), module)
        return combined

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        self._check_factor(other)
        modules = list(self)
        for i, module in enumerate(modules * (other - 1), len(modules)):
            self.add_module(str(i), module)
        return self

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Insert ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        """Append every module of ``sequential``; returns self."""
        for layer in sequential:
            self.append(layer)
        return self


def _old_addindent(s, n):
    # container.py's own copy of the helper (it also indents blank lines)
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class ModuleList(Module):
    """A list of submodules (registered, so their parameters are the list's)."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx):
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self):
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, repr] of runs of equal reprs
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            text = f"({start}): {r}" if start == end else f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_old_addindent(text, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index, module):
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Append every module of the iterable; returns self."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """An ordered dict of submodules."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove and return the module at ``key``."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add the modules of a mapping or of an iterable of (key, module) pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, container_abcs.Iterable):
                raise TypeError("ModuleDict update sequence element #" + str(j) + " should be Iterable; is"
                                + type(m).__name__)
            if len(m) != 2:
                raise ValueError("ModuleDict update sequence element #" + str(j) + " has length " + str(len(m))
                                 + "; 2 is required")
            self[m[0]] = m[1]


def _param_line(key, p, legacy_type=False):
    # ParameterList shows the dtype ('torch.float32'), ParameterDict the legacy type ('torch.FloatTensor')
    if isinstance(p, Tensor):
        size = "x".join(str(s) for s in p.size())
        device = f" ({p.device})" if p.device.type == "cuda" else ""
        kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
        return f"  ({key}): {kind} containing: [{p.type() if legacy_type else p.dtype} of size {size}{device}]"
    return f"  ({key}): Object of type: {type(p).__name__}"


class ParameterList(Module):
    """A list of Parameters (plain tensors are wrapped in Parameter)."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx):
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx, param):
        idx = self._get_abs_string_index(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, idx, param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Add ``value`` at the end; returns self."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values):
        """Append every value of the iterable; returns self."""
        if not isinstance(values, container_abcs.Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for v in values:
            self.append(v)
        return self

    def extra_repr(self):
        return "\n".join(_param_line(k, p) for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of Parameters (plain tensors are wrapped in Parameter)."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key):
        if not isinstance(key, str):
            raise TypeError(f"Index given to ParameterDict cannot be used as a key as it is not a string (type is "
                            f"'{type(key).__name__}'). Open an issue on github if you need non-string keys.")
        return key

    def __getitem__(self, key):
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key, value):
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        k, _ = self._keys.popitem()
        self._keys[k] = None
        val = self[k]
        del self[k]
        return k, val

    def get(self, key, default=None):
        return self[key] if key in self else default

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Add the entries of a mapping (a plain dict in sorted key order) or of (key, value) pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, p in parameters.items():
                self[key] = p
        elif isinstance(parameters, container_abcs.Mapping):
            for key, p in sorted(parameters.items()):
                self[key] = p
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError("ParameterDict update sequence element #" + str(j) + " should be Iterable; is"
                                    + type(p).__name__)
                if len(p) != 2:
                    raise ValueError("ParameterDict update sequence element #" + str(j) + " has length "
                                     + str(len(p)) + "; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self):
        return "\n".join(_param_line(k, p, legacy_type=True) for k, p in self.items())

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")


@_deprecated("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. Subclass "
             "that instead.")
class Container(Module):
    """A Module holding the modules given as keywords (deprecated: a FutureWarning when made)."""

    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
