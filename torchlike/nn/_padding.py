"""F.pad: torch's at::pad, whose ops are the table's (torchlike/ops/padding.py)."""
from ..ops.padding import pad, _constant_pad, _pad  # noqa: F401

__all__ = ["pad"]
