"""The one function the op table calls for every op while autocast or a profiler is on, or DTensors exist.

``ops._registry._apply`` / ``_apply_inplace`` call the hook installed with ``set_dispatch_hook`` (with it off
that is one global load and compare per op); ``run`` then runs the op itself, unhooked.
"""
import re

from ..ops import _registry

_cast = [None]  # amp: fn(op_name, args) -> args, while any autocast region is on
_record = [None]  # profiler: fn(op_name, run, args) -> result, while a profiler is on
_sharded = [None]  # DTensors: fn(op, run, args, inplace, statics) -> the op's results (DTensors for ops on DTensors)
_names = {}
_ATEN = {"to_copy": "_to_copy", "scaled_dot_product_flash_attention_for_cpu":
         "_scaled_dot_product_flash_attention_for_cpu", "safe_softmax": "_safe_softmax",
         "smooth_l1loss": "smooth_l1_loss", "ctc_loss": "_ctc_loss"}


def _aten_name(op):
    """torch's operator name of a table op: MmBackward0 -> 'mm', MaxPool2DWithIndicesBackward0 ->
    'max_pool2d_with_indices', 'argmax' -> 'argmax'."""
    name = _names.get(op.name)
    if name is None:
        base = re.sub(r"Backward\d*$", "", op.name.rpartition("::")[2])
        base = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", base).lower()
        name = _names[op.name] = _ATEN.get(base, base)
    return name


def _dispatch(op, args, run, inplace, statics=()):
    """Run one table op: autocast casts its inputs, the profiler times it (casts included, as torch's); with
    DTensors about, results of ops on them are DTensors."""
    cast, record, sharded = _cast[0], _record[0], _sharded[0]
    if sharded is not None:
        if cast is None and record is None:
            return sharded(op, run, args, inplace, statics)
        run = (lambda a, run=run: sharded(op, run, a, inplace, statics))
    name = _aten_name(op)
    if cast is not None and not inplace:
        if record is None:
            return run(cast(name, args))
        return record(name, lambda a: run(cast(name, a)), args)
    if record is None:
        return run(args)
    return record(name + "_" if inplace else name, run, args)


def _update():
    """Install the hook in the op table while autocast, a profiler or DTensors are on; remove it when all are off."""
    on = _cast[0] is not None or _record[0] is not None or _sharded[0] is not None
    _registry.set_dispatch_hook(_dispatch if on else None)
    _registry._composite_cast = _cast[0]
