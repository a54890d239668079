"""Optimizer: torch's base class (param groups, per-parameter state, state_dict, zero_grad, step hooks).

Subclasses compute their whole update as ONE jitted JAX function over every parameter with a gradient
(all groups at once): per-group hyper-parameters go in as traced scalars (changing ``lr`` never
recompiles), only the option *structure* (e.g. ``weight_decay != 0``, ``nesterov``) is static. The new
arrays are then written into the parameters and state tensors in place (``_views._commit``: version bump,
views kept in step), so ``optimizer.state[p]`` holds torchlike Tensors under torch's keys.
"""
import collections
import functools
import itertools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy

import jax
import jax.numpy as jnp

from .._internal import commit, enable_grad, no_grad, typename
from .. import _dtype, _lazy, _xcache
from .._tensor import Tensor
from ..utils.hooks import _add_hook

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

# How many times each optimizer kind's update program ("_<kind>_update") was built: traced (each trace is one XLA
# compile), or loaded from torchlike's executable cache.
_traces = collections.Counter()


def _count_loads(event, _secs, name="", **_):
    if event == _xcache.LOAD_EVENT and name.startswith("_") and name.endswith("_update"):
        _traces[name[1:-len("_update")]] += 1


jax.monitoring.register_event_duration_secs_listener(_count_loads)


class _RequiredParameter:
    """Marks a default that every parameter group must specify."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks = OrderedDict()
_global_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` before every optimizer's step."""
    return _add_hook(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs)`` after every optimizer's step."""
    return _add_hook(_global_post_hooks, hook)


def _hooked_step(step):
    """Wrap a subclass's ``step``: global and instance pre/post hooks around it, the body under no_grad."""
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        if self.__dict__.get("_in_step"):  # a subclass's step calling super().step(): hooks already ran
            return step(*args, **kwargs)
        for hook in itertools.chain(list(_global_pre_hooks.values()), list(self._optimizer_step_pre_hooks.values())):
            result = hook(self, args, kwargs)  # as torch: args include the optimizer itself
            if result is not None:
                if isinstance(result, tuple) and len(result) == 2:
                    args, kwargs = result
                else:
                    raise RuntimeError(f"{wrapper} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{result}.")
        self._in_step = True
        try:
            with no_grad():
                out = step(*args, **kwargs)
        finally:
            self._in_step = False
        if _lazy._State.on:  # a step boundary (torch_xla's mark_step): the pending program runs
            _lazy.sync()
        for hook in itertools.chain(list(self._optimizer_step_post_hooks.values()), list(_global_post_hooks.values())):
            hook(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


# ----- helpers for the jitted updates ---------------------------------------------------------------------
def _scalar_arg(v):
    """A hyper-parameter as a jit argument: traced, so a new value never recompiles (a number as one array per
    value: see _lazy._number)."""
    if isinstance(v, Tensor):
        return v._data.reshape(())
    return _lazy._number(float(v))


def _f64(x):
    return jnp.asarray(x, jnp.float64)


def _real_dtype(dtype):
    return jnp.finfo(dtype).dtype


def _run_update(update, name, specs, args):
    """An optimizer's jitted ``update(specs, *args)``: recorded into the pending program in lazy mode (``name`` and
    the static ``specs`` key it), else called."""
    if _lazy._State.on:
        return _lazy.call_tree(functools.partial(update, specs), (name, specs), args)
    return update(specs, *args)


def _write(t, data, bumps=1):
    """Write ``data`` into ``t`` in place; ``bumps``: how many in-place ops torch runs on it (its version)."""
    commit(t, data)
    if bumps > 1:
        t._version_counter().version += bumps - 1


def _to_scalar(x):
    """A 1-element hyper-parameter tensor as a 0-d tensor (torch's ``_to_scalar``); other values unchanged."""
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _scalar_dtype():
    return _dtype.float64 if _dtype.get_default_dtype() == _dtype.float64 else _dtype.float32


class Optimizer:
    """Base class for all optimizers.

    Args:
        params: an iterable of Tensors, of ``(name, Tensor)`` pairs, or of dicts (parameter groups).
        defaults: the default value of each option, used when a group does not specify it.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = _hooked_step(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def _init_checked(self, params, defaults, name=None):
        """A subclass's ``__init__`` after its own checks: ``differentiable=True`` is refused (``name``: the class
        in the message), then ``Optimizer.__init__``, then torch's fused/foreach check."""
        if defaults["differentiable"]:
            raise NotImplementedError(f"torchlike.optim.{name or type(self).__name__}: differentiable=True is not "
                                      "supported")
        Optimizer.__init__(self, params, defaults)
        if defaults["fused"] and defaults["foreach"]:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def _group_defaults(self, **defaults):
        """Options missing from loaded param groups (older checkpoints) get these values."""
        for group in self.param_groups:
            for key, value in defaults.items():
                group.setdefault(key, value)

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                     "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # ----- parameter groups ----------------------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a parameter group (a dict with ``"params"`` and optional per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + typename(param))
            if not self.defaults.get("differentiable", None) and not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len(set(tensors)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will cause "
                          "an error; see github.com/pytorch/pytorch/issues/40967 for more information", stacklevel=3)
        seen = set()
        for group in self.param_groups:
            seen.update(group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if not seen.isdisjoint(tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ----- gradients ---------------------------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset every parameter's ``.grad``: to None (default), or to zeros in place (``set_to_none=False``)."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if g.grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        """Perform one optimization step (subclasses implement it)."""
        raise NotImplementedError

    def _eval_closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _params_with_grad(self, group):
        return [p for p in group["params"] if p._grad is not None]

    # ----- hooks -------------------------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None | (args, kwargs)`` runs before ``step``."""
        return _add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs)`` runs after ``step``."""
        return _add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return _add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ----- state dict ---------------------------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {param_id: {...}}, "param_groups": [{..., "params": [param_id, ...]}]}`` as torch.

        Parameters are referred to by integer ids in group order; the state tensors are the optimizer's own."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            mapping.update({id(p): i for i, p in enumerate(group["params"], start) if id(p) not in mapping})
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        state_dict = {"state": state, "param_groups": param_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups, key=None):
        """State tensors take the parameter's float dtype; ``step`` is kept as is (float32 if fused/capturable)."""
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused, capturable = pg.get("fused", False), pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_dtype.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()`` (this optimizer's or another with the same group sizes)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            result = hook(self, state_dict)
            if result is not None:
                state_dict = result
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                             "group")
        id_map = dict(zip(itertools.chain.from_iterable(g["params"] for g in saved_groups),
                          itertools.chain.from_iterable(g["params"] for g in groups)))

        def cast(param, value, param_id=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, state_dict["param_groups"], key)
            if isinstance(value, dict):
                return {k: cast(param, v, param_id, key=k) for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(cast(param, v, param_id) for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v, param_id=k)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        self.__setstate__({"state": state,
                           "param_groups": [update_group(g, ng) for g, ng in zip(groups, saved_groups)]})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)
