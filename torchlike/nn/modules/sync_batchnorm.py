"""SyncBatchNorm (torch.nn's): batch normalisation whose statistics torch averages over a process group in
training. torchlike never has an initialised process group (one controller drives every device; see
torchlike.distributed), which is the case where torch falls back to plain batch norm: so does this, in training
and evaluation alike, with torch's input checks. ``convert_sync_batchnorm`` swaps every BatchNorm*d of a model for
one, keeping its parameters and buffers (the same tensors), as torch's."""
from ..._grad_mode import no_grad
from .batchnorm import _BatchNorm

__all__ = ["SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over all but dim 1 of an input of 2 or more dims; ``process_group`` is kept (unused:
    there is no process group to synchronise over)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        return super().forward(input)  # (torch's fallback when no process group is initialised)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d inside replaced by a SyncBatchNorm holding the same parameters and
        buffers (a new module when ``module`` itself is one)."""
        module_output = module
        if isinstance(module, _BatchNorm):
            module_output = SyncBatchNorm(module.num_features, module.eps, module.momentum, module.affine,
                                          module.track_running_stats, process_group, bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    module_output.weight = module.weight
                    module_output.bias = module.bias
            for name in ("running_mean", "running_var", "num_batches_tracked", "training"):
                setattr(module_output, name, getattr(module, name))
            if hasattr(module, "qconfig"):
                module_output.qconfig = module.qconfig
        for name, child in module.named_children():
            module_output.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return module_output
