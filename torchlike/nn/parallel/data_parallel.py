"""DataParallel as torch runs it without CUDA devices: a pass-through to ``module`` (its state dict keys carry
the ``module.`` prefix, as torch's). Several JAX devices are used through torchlike.distributed instead."""
from ..modules.module import Module

__all__ = ["DataParallel"]


class DataParallel(Module):
    """Wraps ``module``; ``forward`` calls it (``device_ids`` is empty: no CUDA device)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
