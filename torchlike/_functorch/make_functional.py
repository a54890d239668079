"""functorch's make_functional / make_functional_with_buffers (deprecated in torch for torch.func.functional_call):
a stateless copy of the module called with its parameters (and buffers) as arguments."""
import copy

from ..func._functional_call import functional_call, stack_module_state


class FunctionalModuleWithBuffers:
    """``fmodel(params, buffers, *args, **kwargs)``: the module run with these parameters and buffers."""

    def __init__(self, stateless_model, param_names, buffer_names):
        self.stateless_model = stateless_model
        self.param_names = param_names
        self.buffer_names = buffer_names

    def __call__(self, params, buffers, *args, **kwargs):
        values = dict(zip(self.param_names, params))
        values.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, values, args, kwargs)


class FunctionalModule:
    """``fmodel(params, *args, **kwargs)``: the module run with these parameters."""

    def __init__(self, stateless_model, param_names):
        self.stateless_model = stateless_model
        self.param_names = param_names

    def __call__(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)), args, kwargs)


def _state(model, disable_autograd_tracking):
    copied = copy.deepcopy(model)
    names = [n for n, _ in copied.named_parameters()]
    params = tuple(p.detach() if disable_autograd_tracking else p for _, p in copied.named_parameters())
    return copied, names, params


def make_functional(model, disable_autograd_tracking=False):
    """``(fmodel, params)`` for ``model`` (a copy of it; params are the copy's parameters)."""
    if len(list(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    copied, names, params = _state(model, disable_autograd_tracking)
    return FunctionalModule(copied, names), params


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """``(fmodel, params, buffers)`` for ``model`` (a copy of it)."""
    copied, names, params = _state(model, disable_autograd_tracking)
    buffer_names = [n for n, _ in copied.named_buffers()]
    return FunctionalModuleWithBuffers(copied, names, buffer_names), params, tuple(b for _, b in copied.named_buffers())


def combine_state_for_ensemble(models):
    """``(fmodel, params, buffers)`` with each parameter and buffer stacked over ``models``."""
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    params, buffers = stack_module_state(models)
    fmodel, _, _ = make_functional_with_buffers(models[0])
    return fmodel, tuple(params.values()), tuple(buffers.values())
