"""torch.backends: the flags scripts set (``cudnn.benchmark = True``) and the availability queries they ask.

torchlike computes with XLA, which picks its own kernels: the flags are kept and read back as torch's are, and
change nothing here. Importing ``torchlike.backends`` brings its submodules, as torch's does.
"""
from . import cuda, cudnn, mha, mps, opt_einsum  # noqa: F401

__all__ = ["cuda", "cudnn", "mha", "mps", "opt_einsum"]
