"""torch.nn.utils.stateless.functional_call: call a module with some parameters and buffers replaced (by dotted
name), restoring them afterwards; deprecated in torch in favour of torch.func.functional_call, which it calls."""
import contextlib
import warnings

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by ``parameters_and_buffers``
    for this call."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    if type(module).__name__ == "DataParallel":
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


# ----- torch.func.functional_call (torchlike.func re-exports it) ----------------------------------------------
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
        unexpected = sorted(k for k in values if k not in slots)  # (sorted, as torch's sets print)
        missing = sorted(k for k in slots if k not in values)
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


def _functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
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
