"""functional_call (nn.utils.stateless's), stack_module_state, replace_all_batch_norm_modules_ (torch.func's module
utilities)."""

from .. import _grad_mode as _gm
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.utils import stateless as _stateless
from ..ops.shape import stack


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call ``module`` with its parameters and buffers replaced, for this call only, by the tensors of
    ``parameter_and_buffer_dicts`` (one dict or a sequence of dicts, by dotted name)."""
    return _stateless._functional_call(module, parameter_and_buffer_dicts, args, kwargs, tie_weights=tie_weights,
                                       strict=strict)


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of the same-structured ``models`` stacked along a new
    first dim (parameters as new leaves that require grad where the models' do)."""
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    params, buffers = {}, {}
    names = [n for n, _ in models[0].named_parameters()]
    for name in names:
        ts = [dict(m.named_parameters())[name] for m in models]
        if len({t.requires_grad for t in ts}) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        with _gm.no_grad():
            stacked = stack(ts)
        params[name] = stacked.requires_grad_() if ts[0].requires_grad else stacked
    for name, _ in models[0].named_buffers():
        with _gm.no_grad():
            buffers[name] = stack([dict(m.named_buffers())[name] for m in models])
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Make every batch norm in ``root`` use batch statistics only (no running stats), in place; returns root."""
    for m in root.modules():
        if isinstance(m, _BatchNorm):
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
