"""Tensor parallelism, as torch.distributed.tensor.parallel: ``parallelize_module`` with ``ColwiseParallel`` and
``RowwiseParallel`` for ``nn.Linear`` layers.

A plain Tensor input is read as the whole tensor (one process holds it) and laid out as ``input_layouts`` says.
``use_local_output=True`` gives a plain Tensor when the output is replicated (the whole value, as torch's); a
sharded output stays a DTensor, since here a local tensor would be only the first device's piece (torch's next
layer rebuilds the global tensor from every rank's piece; one process has them all in the DTensor).
"""
import fnmatch
import warnings

from ....nn.parameter import Parameter
from ....nn.modules.linear import Linear
from .. import DTensor, Replicate, Shard, distribute_tensor
from .._api import _default_mesh, _layout

__all__ = ["parallelize_module", "ParallelStyle", "ColwiseParallel", "RowwiseParallel"]


class ParallelStyle:
    """How ``parallelize_module`` lays out one module."""

    src_data_rank = 0

    def _apply(self, module, device_mesh):
        raise NotImplementedError


class _LinearStyle(ParallelStyle):
    _weight = _bias = _inputs = _outputs = _desired = None

    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (input_layouts or self._inputs,)
        self.output_layouts = (output_layouts or self._outputs,)
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        if not isinstance(module, Linear):
            raise NotImplementedError(f"{type(self).__name__} currently only support nn.Linear, got {module}")
        for name, placement in (("weight", self._weight), ("bias", self._bias)):
            p = module._parameters.get(name)
            if p is not None and not isinstance(p, DTensor):
                module.register_parameter(name, Parameter(distribute_tensor(p.detach(), device_mesh, [placement]),
                                                          p.requires_grad))
        module.register_forward_pre_hook(lambda mod, inputs: self._prepare_input(inputs, device_mesh))
        module.register_forward_hook(lambda mod, inputs, out: self._prepare_output(out, device_mesh))
        return module

    def _prepare_input(self, inputs, mesh):
        x = inputs[0]
        if not isinstance(x, DTensor):  # a plain input is laid out as input_layouts says
            x = _layout(x, mesh, self.input_layouts)
        return (_layout(x, mesh, self._desired),) + tuple(inputs[1:])

    def _prepare_output(self, out, mesh):
        out = _layout(out, mesh, self.output_layouts)
        if self.use_local_output and all(p == Replicate() for p in out.placements):
            return out.to_local()
        return out

    def __repr__(self):
        return (f"{type(self).__name__}(input_layouts={self.input_layouts}, output_layouts={self.output_layouts}, "
                f"use_local_output={self.use_local_output})")


class ColwiseParallel(_LinearStyle):
    """The output features split over the mesh: weight ``Shard(0)``, bias ``Shard(0)``; input ``Replicate()``,
    output ``Shard(-1)`` by default."""

    _weight, _bias, _inputs, _outputs, _desired = Shard(0), Shard(0), Replicate(), Shard(-1), (Replicate(),)


class RowwiseParallel(_LinearStyle):
    """The input features split over the mesh: weight ``Shard(1)``, bias ``Replicate()``; input ``Shard(-1)``,
    output ``Replicate()`` by default (XLA all-reduces the partial sums)."""

    _weight, _bias, _inputs, _outputs, _desired = Shard(1), Replicate(), Shard(-1), Replicate(), (Shard(-1),)


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Apply ``parallelize_plan`` (a ParallelStyle, or a dict from submodule paths, ``fnmatch`` patterns per
    level, to styles) to ``module``; returns ``module``."""
    if parallelize_plan is None:
        warnings.warn("No parallelize_plan is provided and auto-parallel is not supported at the moment, so this "
                      "parallelize_module call will do nothing.", stacklevel=2)
        return module
    if device_mesh is None:
        device_mesh = _default_mesh()
    if isinstance(parallelize_plan, ParallelStyle):
        parallelize_plan.src_data_rank = src_data_rank
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"Expect Union[ParallelStyle, Dict[str, ParallelStyle]] for parallelize_plan, "
                        f"{type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        if path == "":
            parallelize_module(module, device_mesh, style)
            continue
        token, _, rest = path.partition(".")
        matched = [m for name, m in module.named_children() if fnmatch.fnmatch(name, token)]
        if not matched:
            warnings.warn(f"Parallelize plan key '{path}' could not be resolved: no submodule matching token "
                          f"'{token}' in module {module}, skipping this plan entry.", stacklevel=2)
        for sub in matched:
            parallelize_module(sub, device_mesh, {rest: style} if rest else style, src_data_rank=src_data_rank)
    return module
