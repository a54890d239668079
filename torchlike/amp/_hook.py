"""The one function the op table calls for every op while autocast or a profiler is on.

``torchlike/ops/_registry.py`` needs the hook slot and its setter:

    _hook = None  # while autocast or a profiler is on: fn(op, args, run, inplace) (torchlike/amp/_hook.py)

    def set_dispatch_hook(fn):
        global _hook
        _hook = fn

and a ``_hooked=False`` last parameter on ``_apply`` / ``_apply_inplace``, with first in their bodies:

    if _hook is not None and not _hooked:
        return _hook(op, args, lambda a: _apply(op, a, statics, True), False)

    if _hook is not None and not _hooked:
        return _hook(op, args, lambda a: _apply_inplace(op, target, a, statics, overlap, True), True)

With the hook off that is one global load and compare per op. Until the registry has ``set_dispatch_hook``,
ops run straight through (autocast casts nothing, the profiler records only ``record_function`` ranges).
"""
import re

from ..ops import _registry

_cast = [None]  # amp: fn(op_name, args) -> args, while any autocast region is on
_record = [None]  # profiler: fn(op_name, run, args) -> result, while a profiler is on
_names = {}
_ATEN = {"to_copy": "_to_copy", "scaled_dot_product_flash_attention_for_cpu":
         "_scaled_dot_product_flash_attention_for_cpu", "safe_softmax": "_safe_softmax"}


def _aten_name(op):
    """torch's operator name of a table op: MmBackward0 -> 'mm', MaxPool2DWithIndicesBackward0 ->
    'max_pool2d_with_indices', 'argmax' -> 'argmax'."""
    name = _names.get(op.name)
    if name is None:
        base = re.sub(r"Backward\d*$", "", op.name.rpartition("::")[2])
        base = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", base).lower()
        name = _names[op.name] = _ATEN.get(base, base)
    return name


def _dispatch(op, args, run, inplace):
    """Run one table op: autocast casts its inputs, the profiler times it (casts included, as torch's)."""
    name = _aten_name(op)
    cast, record = _cast[0], _record[0]
    if cast is not None and not inplace:
        if record is None:
            return run(cast(name, args))
        return record(name, lambda a: run(cast(name, a)), args)
    if record is None:
        return run(args)
    return record(name + "_" if inplace else name, run, args)


def _update():
    """Install the hook in the op table while autocast or a profiler is on; remove it when both are off."""
    install = getattr(_registry, "set_dispatch_hook", None)
    if install is not None:
        install(_dispatch if _cast[0] is not None or _record[0] is not None else None)
