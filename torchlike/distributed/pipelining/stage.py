"""``PipelineStage`` over JAX devices, after ``torch.distributed.pipelining.stage`` (torch 2.13).

One process drives every stage (JAX dispatches asynchronously, so stages on different devices overlap when their
actions are issued in schedule order). What torch sends between ranks with P2P ops moves here between devices
with ``Tensor.to(device)`` (``jax.device_put``): a stage receives an activation detached and marked
``requires_grad`` (its own graph starts there, as torch's receive buffers do) and the gradient of its input goes
back to the previous stage's device. torch's names for passing tensors between stages of one rank are used
(``set_local_fwd_input``, ``get_local_bwd_output``, ``set_local_bwd_input``).
"""
from ..._internal import Tensor
from ..._device import device as _device
from ._backward import stage_backward, stage_backward_input, stage_backward_weight

__all__ = ["PipelineStage"]


def _as_tuple(output):
    """A stage's output as a tuple (torch's ``_normalize_model_output_as_tuple``)."""
    if isinstance(output, (tuple, list)):
        return tuple(output)
    return (output,)


def _move(values, device, leaf):
    """Tensors of ``values`` on ``device``; with ``leaf``, detached and requiring grad (a received activation)."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            v = v.detach().to(device)
            if leaf and (v.is_floating_point() or v.is_complex()):
                v.requires_grad_(True)
        out.append(v)
    return tuple(out)


class PipelineStage:
    """One stage of a pipeline: ``submodule`` moved to ``device``, run one microbatch at a time.

    torch's signature; ``input_args``/``output_args``/``output_grads``/``input_grads`` (static metadata),
    ``group`` (there is no process group: one process drives every stage) and ``get_mesh`` are accepted and
    ignored. ``dw_builder`` is used as in torch: with it, an input-only backward runs the full backward and the
    weight pass calls the runner the builder made."""

    def __init__(self, submodule, stage_index, num_stages, device, input_args=None, output_args=None,
                 output_grads=None, input_grads=None, group=None, dw_builder=None, get_mesh=None):
        if stage_index >= num_stages:
            raise ValueError(f"Stage index {stage_index} is out of range of {num_stages}")
        self.device = _device(device)
        self.submod = submodule.to(self.device)
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group = group
        self.dw_builder = dw_builder
        self.has_backward = False
        self.fwd_cache = {}        # mb -> (outputs as a tuple, flat input values)
        self.bwd_cache = {}        # mb -> gradients of the stage's inputs (sent to the previous stage)
        self.backward_state = {}   # mb -> what the weight pass needs after an input-only backward
        self.dw_runner = {}
        self.output_chunks = []
        self._recv_args = {}       # mb -> activations received from the previous stage
        self._recv_grads = {}      # mb -> output gradients received from the next stage

    @property
    def is_first(self):
        """Whether this is the pipeline's first stage."""
        return self.stage_index == 0

    @property
    def is_last(self):
        """Whether this is the pipeline's last stage."""
        return self.stage_index == self.num_stages - 1

    def __repr__(self):
        return f"PipelineStage(stage_index={self.stage_index}, num_stages={self.num_stages}, device={self.device})"

    def clear_runtime_states(self):
        """Forget the previous step's microbatches (caches, received tensors, outputs)."""
        for d in (self.fwd_cache, self.bwd_cache, self.backward_state, self.dw_runner, self._recv_args,
                  self._recv_grads):
            d.clear()
        self.output_chunks.clear()

    def set_local_fwd_input(self, prev_stage_outputs, mb_index):
        """Receive the previous stage's outputs for microbatch ``mb_index``: moved to this stage's device,
        detached and requiring grad."""
        self._recv_args[mb_index] = _move(_as_tuple(prev_stage_outputs), self.device, leaf=True)

    def get_local_bwd_output(self, mb_index):
        """The gradients of this stage's inputs for ``mb_index`` (what is sent to the previous stage)."""
        if not self.has_backward:
            raise AssertionError("can't steal_bwd_input if this stage doesn't have backward")
        if self.is_first:
            raise AssertionError("can't get bwd output if this stage is first")
        return self.bwd_cache.pop(mb_index)

    def set_local_bwd_input(self, next_stage_bwd_outputs, mb_index):
        """Receive the gradients of this stage's outputs for ``mb_index``, moved to this stage's device."""
        if not isinstance(next_stage_bwd_outputs, tuple):
            raise AssertionError(f"Expected tuple, got {type(next_stage_bwd_outputs)}")
        if self.is_last:
            raise AssertionError("can't set bwd input if this stage is last")
        self._recv_grads[mb_index] = _move(next_stage_bwd_outputs, self.device, leaf=False)

    def forward_one_chunk(self, fwd_chunk_id, args, kwargs=None, save_forward_output=True):
        """Run the stage on microbatch ``fwd_chunk_id``: the first stage on ``args`` (moved to its device), the
        others on what they received. Returns the module's output."""
        if self.is_first:
            composite_args = _move(args, self.device, leaf=False)
        else:
            composite_args = self._recv_args.pop(fwd_chunk_id)
        composite_kwargs = kwargs or {}
        try:
            output = self.submod(*composite_args, **composite_kwargs)
        except Exception as e:
            raise RuntimeError(f"""
            [Stage {self.stage_index}] failed to run forward:
            args: {composite_args}
            kwargs: {composite_kwargs}
            """) from e
        if self.is_last and save_forward_output:
            self.output_chunks.append(output)
        inputs = [a for a in composite_args if isinstance(a, Tensor)]
        inputs += [v for v in composite_kwargs.values() if isinstance(v, Tensor)]
        self.fwd_cache[fwd_chunk_id] = (_as_tuple(output), inputs)
        return output

    def backward_one_chunk(self, bwd_chunk_id, loss=None, full_backward=True, last_backward=False):
        """Backward of microbatch ``bwd_chunk_id`` from ``loss`` (last stage) or the received output gradients:
        the full backward, or (``full_backward=False``) the input gradients only, keeping what
        ``backward_weight_one_chunk`` needs. Parameter gradients accumulate over microbatches."""
        if not self.has_backward:
            return
        stage_output, input_values = self.fwd_cache.pop(bwd_chunk_id)
        if self.is_last:
            output, output_grads = loss, None
        else:
            output, output_grads = stage_output, self._recv_grads.pop(bwd_chunk_id)
        grads_input = ()
        if self.dw_builder is not None:
            grads_input = stage_backward(output, output_grads, input_values)
            if full_backward:
                self.dw_builder()()
            else:
                self.dw_runner[bwd_chunk_id] = self.dw_builder()
        elif full_backward:
            grads_input = stage_backward(output, output_grads, input_values)
        else:
            param_groups = None
            if isinstance(output, Tensor):
                output = (output,)
            if not self.is_first:  # the first stage's weight pass is a full backward (no input gradients)
                grads_input, param_groups = stage_backward_input(output, output_grads, input_values,
                                                                 list(self.submod.parameters()))
            self.backward_state[bwd_chunk_id] = (input_values, param_groups, output, output_grads)
            self.dw_runner[bwd_chunk_id] = lambda: None
        self.bwd_cache[bwd_chunk_id] = tuple(grads_input)
        if self.is_last and not self.is_first:  # the outputs are only returned now: drop their graph
            for t in stage_output:
                if isinstance(t, Tensor) and not t._is_view():
                    t.detach_()

    def backward_weight_one_chunk(self, bwd_chunk_id, last_backward=False):
        """The weight gradients of microbatch ``bwd_chunk_id`` after ``backward_one_chunk(full_backward=False)``."""
        if not self.has_backward:
            return
        if bwd_chunk_id not in self.dw_runner:
            raise AssertionError(f"[Stage {self.stage_index}] Attempted to run backward_weight_one_chunk for chunk "
                                 f"{bwd_chunk_id} without first calling `backward_one_chunk(full_backward=False)`")
        runner = self.dw_runner.pop(bwd_chunk_id)
        if self.dw_builder is not None:
            runner()
            return
        input_values, param_groups, output, output_grads = self.backward_state.pop(bwd_chunk_id)
        if self.stage_index != 0:
            stage_backward_weight(list(self.submod.parameters()), param_groups)
        else:
            stage_backward(output, output_grads, input_values)

    def scale_grads(self, grad_scale_factor):
        """Divide the parameters' gradients by ``grad_scale_factor`` (the number of microbatches for a mean
        loss, 1 for a summed one)."""
        if grad_scale_factor != 1:
            for p in self.submod.parameters():
                if p.grad is not None:
                    p.grad.div_(grad_scale_factor)

    def perform_reduce_grad(self, grad_scale_factor):
        """torch's REDUCE_GRAD action: here only the gradient scaling (there is no data parallelism)."""
        self.scale_grads(grad_scale_factor)
