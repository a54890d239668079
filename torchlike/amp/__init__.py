"""torch.amp: ``autocast`` (mixed precision by torch's per-op lists), ``GradScaler`` (loss scaling) and
``custom_fwd``/``custom_bwd`` (autocast for custom autograd Functions)."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd, is_autocast_available, is_autocast_enabled,  # noqa: F401
                            get_autocast_dtype)
from .grad_scaler import GradScaler  # noqa: F401

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "is_autocast_available"]
