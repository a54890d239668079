"""torch.cpu.amp: torch's deprecated aliases of ``torch.amp``'s autocast and GradScaler for 'cpu', each warning
with torch's FutureWarning."""
from .. import _dtype
from ..amp._deprecated import DeviceAutocast, DeviceGradScaler

__all__ = ["autocast", "GradScaler"]


class autocast(DeviceAutocast):
    """``torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)``: deprecated,
    ``torch.amp.autocast("cpu", ...)``."""

    _device_type, _default_dtype = "cpu", _dtype.bfloat16


class GradScaler(DeviceGradScaler):
    """``torch.cpu.amp.GradScaler(...)``: deprecated, ``torch.amp.GradScaler("cpu", ...)``."""

    _device_type = "cpu"
