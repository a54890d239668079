"""Module: the base class of every torchlike.nn layer, as torch.nn.Module.

Parameters, buffers and submodules register themselves through ``__setattr__``; ``state_dict`` /
``load_state_dict``, ``train``/``eval``, ``to``, ``named_*`` iteration, ``repr`` and the forward and backward
hooks follow torch 2.13. Full backward hooks are built as torch builds them: the module's tensor inputs and
outputs go through ``BackwardHookFunction`` (an identity ``autograd.Function``) and the user hooks run as
post-hooks of those ``BackwardHookFunctionBackward`` nodes, so they see the same gradients, in the same order,
with the same replacement rules and errors.
"""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ..._internal import grad_enabled, no_grad, parse_to, typename
from ..._tensor import Tensor
from ...ops.creation import empty_like
from ...autograd.function import Function
from ...utils.hooks import RemovableHandle, _add_hook as _add
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "RemovableHandle", "BackwardHookFunction", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class _WrappedHook:
    """A hook called with its module (held weakly) prepended to the arguments."""

    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if self.with_module:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


# ----- global hooks (all modules) ----------------------------------------------------------------------------
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = None
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer) -> None | Tensor`` runs on every ``register_buffer``."""
    return _add(_global_buffer_registration_hooks, hook)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule) -> None | Module`` runs on every submodule registration."""
    return _add(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param) -> None | Parameter`` runs on every ``register_parameter``."""
    return _add(_global_parameter_registration_hooks, hook)


def register_module_forward_pre_hook(hook):
    """A forward pre-hook for every module, run before the modules' own."""
    return _add(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook for every module, run before the modules' own."""
    handle = _add(_global_forward_hooks, hook,
                  extra_dict=[_global_forward_hooks_always_called, _global_forward_hooks_with_kwargs])
    if always_call:
        _global_forward_hooks_always_called[handle.id] = True
    if with_kwargs:
        _global_forward_hooks_with_kwargs[handle.id] = True
    return handle


def _add_global_backward_hook(hook, full):
    """Both kinds of global backward hooks share one dict; torch refuses to mix them."""
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook = full
    return _add(_global_backward_hooks, hook)


def register_module_backward_hook(hook):
    """Legacy (non-full) backward hook for every module."""
    return _add_global_backward_hook(hook, full=False)


def register_module_full_backward_pre_hook(hook):
    """A full backward pre-hook for every module, run before the modules' own."""
    return _add(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """A full backward hook for every module, run before the modules' own."""
    return _add_global_backward_hook(hook, full=True)


# ----- full backward hooks: identity Function nodes around inputs and outputs (torch's BackwardHook) ----------
class BackwardHookFunction(Function):
    """Identity on its tensor arguments; its ``BackwardHookFunctionBackward`` node carries the module hooks."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack_with_none(indices, values, size):
    res = [None] * size
    for i, v in zip(indices, values):
        res[i] = v
    return tuple(res)


class _BackwardHook:
    """One module call's full backward hooks: the output node captures grad_output (running the pre-hooks),
    the input node then calls the hooks with (grad_input, grad_output)."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    def _input_hook(self, grad_input, _):
        if self.grad_outputs is None:  # the gradient reached the inputs without passing through the outputs
            return None
        res = _pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def _output_hook(self, _, grad_output):
        self.grad_outputs = _pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        for pre_hook in self.user_pre_hooks:
            out = pre_hook(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(out)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = out
        local = self.grad_outputs
        if self.input_tensors_index is None:  # no input requires grad: the hooks fire here, with no grad_input
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module outputs "
                          "since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.", stacklevel=5)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        if local is not None:
            return tuple(local[i] for i in self.output_tensors_index)
        return None

    def _apply_on_tensors(self, node_hook, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*tensors)
        if len(new) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        nodes = [t.grad_fn for t in new if t.grad_fn is not None
                 and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not nodes:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with a code sample to "
                               "reproduce this.")
        nodes[0].register_hook(node_hook)
        out = list(args)
        for i, t in zip(idx, new):
            out[i] = t
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def setup_input_hook(self, args):
        res, self.input_tensors_index = self._apply_on_tensors(self._input_hook, args)
        self.n_inputs = len(args)
        return res

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        args = (result,) if single else result
        res, self.output_tensors_index = self._apply_on_tensors(self._output_hook, args)
        self.n_outputs = len(args)
        return res[0] if single else res


# ----- load_state_dict's result ------------------------------------------------------------------------------
class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join((" " * n + line) if line.strip() else "" for line in lines[1:])


def _check_new_name(module, kind, name, registered):
    """torch's checks of a new buffer or parameter name (``kind``); ``registered``: that kind's dict."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in registered:
        raise KeyError(f"attribute '{name}' already exists")


def _forward_unimplemented(self, *input):
    raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')


# ----- Module ------------------------------------------------------------------------------------------------
class Module:
    """Base class for all neural network modules; subclasses define ``forward`` and assign layers, Parameters
    and buffers as attributes in ``__init__`` (after calling ``super().__init__()``)."""

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False
    _compiled_call_impl = None

    def __init__(self, *args, **kwargs):
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were "
                            "given")
        setattr_ = super().__setattr__
        setattr_("training", True)
        setattr_("_parameters", {})
        setattr_("_buffers", {})
        setattr_("_non_persistent_buffers_set", set())
        setattr_("_backward_pre_hooks", OrderedDict())
        setattr_("_backward_hooks", OrderedDict())
        setattr_("_is_full_backward_hook", None)
        setattr_("_forward_hooks", OrderedDict())
        setattr_("_forward_hooks_with_kwargs", OrderedDict())
        setattr_("_forward_hooks_always_called", OrderedDict())
        setattr_("_forward_pre_hooks", OrderedDict())
        setattr_("_forward_pre_hooks_with_kwargs", OrderedDict())
        setattr_("_state_dict_hooks", OrderedDict())
        setattr_("_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_pre_hooks", OrderedDict())
        setattr_("_load_state_dict_post_hooks", OrderedDict())
        setattr_("_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    # ----- registration ----------------------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer (module state that is not a parameter); ``persistent=False`` keeps it out of state_dict."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_new_name(self, "buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' (torch Tensor or None "
                            "required)")
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a Parameter (or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_new_name(self, "parameter", name, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' (torch.nn.Parameter or "
                            "None required)")
        if param.grad_fn:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        for hook in _global_parameter_registration_hooks.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None) under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name, module):
        """Alias of ``add_module``."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at dotted path ``target`` ('' is self), with torch's AttributeErrors."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the submodule at dotted path ``target``."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self if len(atoms) == 1 else self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        """The Parameter at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        buf = getattr(mod, name)
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return buf

    def get_extra_state(self):
        """Override (with ``set_extra_state``) to store extra picklable state in ``state_dict``."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    def set_extra_state(self, state):
        """Override (with ``get_extra_state``) to restore extra state from ``load_state_dict``."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be called. Please file "
                           "an issue at https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml to "
                           "report this bug.")

    # ----- attribute protocol -------------------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for kind in ("_parameters", "_buffers", "_modules"):
            members = d.get(kind)
            if members is not None and name in members:
                return members[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*containers):
            for c in containers:
                if name in c:
                    if isinstance(c, dict):
                        del c[name]
                    else:
                        c.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' (torch.nn.Parameter or "
                                "None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module) or (modules is not None and name in modules):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            if isinstance(value, Module):
                remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            elif value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' (torch.nn.Module or "
                                "None expected)")
            for hook in _global_module_registration_hooks.values():
                out = hook(self, name, value)
                if out is not None:
                    value = out
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' (torch.nn.Buffer, "
                                "torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
                + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        state = self.__dict__.copy()
        state.pop("_compiled_call_impl", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    # ----- iteration -------------------------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse \
            else [(prefix, self)]
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        """Iterator over the parameters (of submodules too when ``recurse``), each once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(dotted name, Parameter)``."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        """Iterator over the buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterator over ``(dotted name, buffer)``."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        """Iterator over the direct submodules."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """Iterator over ``(name, direct submodule)``, each module once."""
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        """Iterator over self and every submodule (depth first)."""
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterator over ``(dotted name, module)`` for self ('' or ``prefix``) and every submodule."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # ----- modes and gradients -----------------------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode on self and every submodule (Dropout/BatchNorm behave differently); returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the parameters' gradients: to None (default) or, with ``set_to_none=False``, to zeros in place."""
        for p in self.parameters():
            if p.grad is not None:
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad.detach_()
                    else:
                        p.grad.requires_grad_(False)
                    p.grad.zero_()

    # ----- conversions ------------------------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            with no_grad():
                applied = fn(param)
            if applied is not param:  # torch's set_data path: the Parameter object stays, its data changes
                param.data = applied
            grad = param._grad
            if grad is not None:
                with no_grad():
                    grad_applied = fn(grad)
                if grad_applied is not grad:
                    grad.data = grad_applied
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers in place: ``to(device)``, ``to(dtype)``, ``to(device, dtype)``,
        ``to(tensor)``; only floating point and complex tensors change dtype. Returns self."""
        device, dtype, _, fmt = parse_to(args, kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose design may change, "
                              "and some modules might not work as expected when using complex tensors as parameters "
                              "or buffers. Please file an issue at "
                              "https://github.com/pytorch/pytorch/issues/new?template=bug-report.yml if a complex "
                              "module does not work as expected.", stacklevel=2)

        def convert(t):
            kw = {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                kw["dtype"] = dtype
            if fmt is not None and t.dim() in (4, 5):  # (torch converts the 4-d and 5-d ones only)
                kw["memory_format"] = fmt
            return t.to(**kw) if kw else t

        return self._apply(convert)

    def _cast_floats(self, method):
        return self._apply(lambda t: getattr(t, method)() if t.is_floating_point() else t)

    def float(self):
        """Cast floating point parameters and buffers to float32; returns self."""
        return self._cast_floats("float")

    def double(self):
        """Cast floating point parameters and buffers to float64; returns self."""
        return self._cast_floats("double")

    def half(self):
        """Cast floating point parameters and buffers to float16; returns self."""
        return self._cast_floats("half")

    def bfloat16(self):
        """Cast floating point parameters and buffers to bfloat16; returns self."""
        return self._cast_floats("bfloat16")

    def type(self, dst_type):
        """Cast every parameter and buffer to ``dst_type``; returns self."""
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        """Move parameters and buffers to the CPU; returns self."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move parameters and buffers to a CUDA device; returns self."""
        return self._apply(lambda t: t.cuda(device))

    def to_empty(self, *, device, recurse=True):
        """Replace parameters and buffers by uninitialised tensors of the same shapes on ``device``; returns self."""
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def share_memory(self):
        """Move parameters and buffers to shared memory (``Tensor.share_memory_``; JAX arrays need no move)."""
        return self._apply(lambda t: t.share_memory_() if hasattr(t, "share_memory_") else t)

    # ----- hooks -----------------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args) -> None | new args`` (``with_kwargs``: ``hook(module, args, kwargs) -> None |
        (args, kwargs)``) runs before ``forward``."""
        handle = _add(self._forward_pre_hooks, hook, prepend, extra_dict=self._forward_pre_hooks_with_kwargs)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[handle.id] = True
        return handle

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """``hook(module, args, output) -> None | new output`` (``with_kwargs``: ``hook(module, args, kwargs,
        output)``) runs after ``forward``; ``always_call`` also runs it when forward raises."""
        handle = _add(self._forward_hooks, hook, prepend,
                      extra_dict=[self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[handle.id] = True
        if always_call:
            self._forward_hooks_always_called[handle.id] = True
        return handle

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output) -> None | new grad_output`` runs when the gradients w.r.t. the module's
        outputs are computed."""
        return _add(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output) -> None | new grad_input`` runs when the gradients w.r.t. the
        module's positional inputs are computed (w.r.t. its outputs if no input requires grad)."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = True
        return _add(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        """Deprecated: a hook on the last autograd node of the output (use ``register_full_backward_hook``)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self._is_full_backward_hook = False
        return _add(self._backward_hooks, hook)

    def _get_backward_hooks(self):
        full, non_full = [], []
        if _global_is_full_backward_hook is True:
            full += _global_backward_hooks.values()
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        if _global_is_full_backward_hook is False:
            non_full += _global_backward_hooks.values()
        if self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return list(_global_backward_pre_hooks.values()) + list(self._backward_pre_hooks.values())

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn):
        def warn(msg):
            warnings.warn(msg, FutureWarning, stacklevel=2)

        if isinstance(result, Tensor):
            result = (result,)
        elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
            return warn("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple "
                        "of Tensors is deprecated and will be removed in future versions. This hook will be missing "
                        "some of the grad_output. Please use register_full_backward_hook to get the documented "
                        "behavior.")
        if isinstance(inputs, Tensor):
            inputs = (inputs,)
        elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
            return warn("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                        "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                        "missing some of the grad_input. Please use register_full_backward_hook to get the "
                        "documented behavior.")
        out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
        if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
            warn("Using a non-full backward hook when outputs are nested in python data structure is deprecated and "
                 "will be removed in future versions. This hook will be missing some grad_output.")
        elif len(out_fns) > 1:
            warn("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                 "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                 "Please use register_full_backward_hook to get the documented behavior.")
        else:
            in_fns = {i.grad_fn for i in inputs if i.grad_fn is not None}
            if in_fns != {n for n, _ in grad_fn.next_functions}:
                warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                     "and will be removed in future versions. This hook will be missing some grad_input. Please use "
                     "register_full_backward_hook to get the documented behavior.")

    # ----- calling ---------------------------------------------------------------------------------------
    def _wrapped_call_impl(self, *args, **kwargs):
        if self._compiled_call_impl is not None:
            return self._compiled_call_impl(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    __call__ = _wrapped_call_impl

    def _call_impl(self, *args, **kwargs):
        forward = self.forward
        if not (self._backward_hooks or self._backward_pre_hooks or self._forward_hooks or self._forward_pre_hooks
                or _global_backward_pre_hooks or _global_backward_hooks or _global_forward_hooks
                or _global_forward_pre_hooks):
            return forward(*args, **kwargs)
        state = {"args": args, "kwargs": kwargs, "result": None, "called": set()}
        try:
            return self._call_with_hooks(forward, state)
        except Exception:
            self._run_always_called_hooks(state)
            raise

    def _call_with_hooks(self, forward, state):
        args, kwargs = state["args"], state["kwargs"]
        full_hooks, non_full_hooks = self._get_backward_hooks() if (self._backward_hooks or _global_backward_hooks) \
            else ([], [])
        pre_bw_hooks = self._get_backward_pre_hooks() if (self._backward_pre_hooks or _global_backward_pre_hooks) \
            else []
        for hook_id, hook in itertools.chain(_global_forward_pre_hooks.items(), self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
            state["args"], state["kwargs"] = args, kwargs
        bw_hook = None
        if full_hooks or pre_bw_hooks:
            bw_hook = _BackwardHook(self, full_hooks, pre_bw_hooks)
            args = bw_hook.setup_input_hook(args)
            state["args"] = args
        result = forward(*args, **kwargs)
        state["result"] = result
        for hook_id, hook in itertools.chain(_global_forward_hooks.items(), self._forward_hooks.items()):
            if hook_id in self._forward_hooks_always_called or hook_id in _global_forward_hooks_always_called:
                state["called"].add(hook_id)
            if hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, result)
            else:
                res = hook(self, args, result)
            if res is not None:
                result = res
            state["result"] = result
        if bw_hook is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(f"For backward hooks to be called, module output should be a Tensor or a tuple of "
                              f"Tensors but received {type(result)}", stacklevel=4)
            result = bw_hook.setup_output_hook(result)
        if non_full_hooks:
            var = result
            while not isinstance(var, Tensor):
                var = next(v for v in var.values() if isinstance(v, Tensor)) if isinstance(var, dict) else var[0]
            grad_fn = var.grad_fn
            if grad_fn is not None:
                for hook in non_full_hooks:
                    grad_fn.register_hook(_WrappedHook(hook, self))
                self._maybe_warn_non_full_backward_hook(args, result, grad_fn)
        return result

    def _run_always_called_hooks(self, state):
        args, kwargs, called = state["args"], state["kwargs"], state["called"]
        for hook_id, hook in _global_forward_hooks.items():
            if hook_id in _global_forward_hooks_always_called and hook_id not in called:
                try:
                    res = hook(self, args, state["result"])
                    if res is not None:
                        state["result"] = res
                except Exception as e:
                    warnings.warn("global module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {str(e)}", stacklevel=3)
        for hook_id, hook in self._forward_hooks.items():
            if hook_id in self._forward_hooks_always_called and hook_id not in called:
                try:
                    if hook_id in self._forward_hooks_with_kwargs:
                        res = hook(self, args, kwargs, state["result"])
                    else:
                        res = hook(self, args, state["result"])
                    if res is not None:
                        state["result"] = res
                except Exception as e:
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {str(e)}", stacklevel=3)

    # ----- state_dict --------------------------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` collects this module."""
        return _add(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata) -> None`` may edit the state_dict in place."""
        hook._from_public_api = True
        return _add(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook that was previously "
                               "registered via register_state_dict_post_hook")
        return _add(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)``
        runs before this module loads its part of a state_dict."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        return _add(self._load_state_dict_pre_hooks, _WrappedHook(hook, self if with_module else None))

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys) -> None`` runs after this module loaded; may edit the key lists."""
        return _add(self._load_state_dict_post_hooks, hook)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name (detached unless
        ``keep_vars``)."""
        if args:
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html#torch.nn.Module.state_dict for "
                          "details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            res = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if res is not None:
                    destination = res
            elif res is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        local_state = {k: v for k, v in itertools.chain(
            self._parameters.items(),
            ((k, v) for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set)) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            lazy = is_lazy(param)  # (an uninitialized param of a lazy module: its _lazy_load_hook checked it)
            if not lazy and param.ndim == 0 and value.ndim == 1 and value.shape[0] == 1:  # 0.3-era checkpoints
                value = value[0]
            if not lazy and value.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                                  f"checkpoint, the shape in current model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(value, Parameter):
                                value = Parameter(value, requires_grad=param.requires_grad)
                            else:
                                value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an "
                                  f"exception occurred : {ex.args}.")
        extra_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    parts = key[len(prefix):].split(".", 1)
                    if len(parts) > 1:
                        if parts[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif parts[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` (in place, under no_grad; ``assign=True`` replaces
        them). Returns ``(missing_keys, unexpected_keys)``; ``strict`` raises torch's RuntimeError on any
        mismatch."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items() if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError("Hooks registered with ``register_load_state_dict_post_hook`` are not "
                                         "expected to return new values, if incompatible_keys need to be modified, it "
                                         "should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"'
                                                                                     for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                    "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # ----- repr ------------------------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """Extra text shown inside ``Name(...)`` by ``repr``; override in subclasses."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + key + "): " + _addindent(repr(m), 2) for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
