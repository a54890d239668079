"""torchlike.nn.parallel: DataParallel (one device: the wrapped module runs as it is)."""
from .data_parallel import DataParallel  # noqa: F401

__all__ = ["DataParallel"]
