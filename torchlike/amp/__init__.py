"""torch.amp: ``autocast`` (mixed precision by torch's per-op lists) and ``GradScaler`` (loss scaling)."""
from .autocast_mode import autocast, is_autocast_available, is_autocast_enabled, get_autocast_dtype  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "is_autocast_available"]
