"""torch.nn.utils.stateless.functional_call: call a module with some parameters and buffers replaced (by name,
e.g. ``"layer.weight"``), restoring them afterwards."""
import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _untie_named_tensors_map(module, parameters_and_buffers):
    """Extend the given names to every name tied to the same tensor (tie_weights=True)."""
    named = dict(module.named_parameters(remove_duplicate=False))
    named.update(module.named_buffers(remove_duplicate=False))
    by_tensor = {}
    for name, tensor in named.items():
        by_tensor.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in by_tensor.values() if len(names) > 1 for name in names}
    given = [name for name in parameters_and_buffers if name in tied]
    for name in given:
        names = tied[name]
        if len(names.intersection(given)) > 1 and len({id(parameters_and_buffers[n]) for n in names
                                                       if n in parameters_and_buffers}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


def _swap(module, name, value):
    """Put ``value`` (or, for _MISSING, nothing) at the dotted ``name``; returns what was there."""
    *path, leaf = name.split(".")
    for part in path:
        module = getattr(module, part)
    for members in (module._parameters, module._buffers):
        if leaf in members:
            old = members[leaf]
            if value is _MISSING:
                del members[leaf]
            else:
                members[leaf] = value
            return old
    old = module.__dict__.get(leaf, _MISSING)
    if value is _MISSING:
        module.__dict__.pop(leaf, None)
    else:
        module.__dict__[leaf] = value
    return old


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False):
    values = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        names = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        names |= {n for n, _ in module.named_buffers(remove_duplicate=False)}
        missing = sorted(names - set(values))
        unexpected = sorted(set(values) - names)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(module._get_name(),
                                                                                 "\n\t".join(errors)))
    originals = {}
    try:
        for name, value in values.items():
            if not isinstance(value, Tensor):
                raise TypeError(f"{value} is not an instance of torch.Tensor")
            originals[name] = _swap(module, name, value)
        yield
    finally:
        for name, value in reversed(list(originals.items())):
            _swap(module, name, value)


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by ``parameters_and_buffers``
    for this call (deprecated in torch in favour of torch.func.functional_call)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    if type(module).__name__ == "DataParallel":
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    kwargs = {} if kwargs is None else kwargs
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
