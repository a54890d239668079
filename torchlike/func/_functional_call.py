"""functional_call, stack_module_state, replace_all_batch_norm_modules_ (torch.func's module utilities)."""
import contextlib

from .. import _grad_mode as _gm
from ..nn.modules.batchnorm import _BatchNorm
from ..ops.shape import stack


def _named_slots(module):
    """name -> (owning module, attribute, kind) of every parameter and buffer, tied names included."""
    slots = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        for kind, table in (("parameter", m._parameters), ("buffer", m._buffers)):
            for name, value in table.items():
                if value is not None:
                    slots[f"{prefix}.{name}" if prefix else name] = (m, name, kind, value)
    return slots


@contextlib.contextmanager
def _swapped(module, values, tie_weights, strict):
    slots = _named_slots(module)
    if strict:
        unexpected = [k for k in values if k not in slots]
        missing = [k for k in slots if k not in values]
        if unexpected or missing:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t" + "\n\t".join(lines))
    if tie_weights:  # a value given for one name of a tied tensor stands for all its names
        by_tensor = {}
        for name, (_, _, _, value) in slots.items():
            by_tensor.setdefault(id(value), []).append(name)
        values = dict(values)
        for names in by_tensor.values():
            given = [n for n in names if n in values]
            if len(given) > 1 and any(values[g] is not values[given[0]] for g in given):
                raise ValueError(f"functional_call got multiple values for keys {given}, which are tied. Consider "
                                 "using tie_weights=False")
            if given:
                for n in names:
                    values.setdefault(n, values[given[0]])
    old = []
    try:
        for name, value in values.items():
            if name not in slots:
                continue
            m, attr, kind, original = slots[name]
            table = m._parameters if kind == "parameter" else m._buffers
            old.append((table, attr, table[attr]))
            table[attr] = value
        yield
    finally:
        for table, attr, value in reversed(old):
            table[attr] = value


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call ``module`` with its parameters and buffers replaced, for this call only, by the tensors of
    ``parameter_and_buffer_dicts`` (one dict or a sequence of dicts, by dotted name)."""
    if isinstance(parameter_and_buffer_dicts, dict):
        values = parameter_and_buffer_dicts
    else:
        values = {}
        seen = set()
        for d in parameter_and_buffer_dicts:
            repeated = sorted(seen & set(d))
            if repeated:
                raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is "
                                 "ambiguous")
            seen |= set(d)
            values.update(d)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _swapped(module, values, tie_weights, strict):
        return module(*args, **(kwargs or {}))


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
