"""torch.cuda.amp: torch's deprecated aliases of ``torch.amp``'s autocast, GradScaler and custom_fwd/custom_bwd
for 'cuda', each warning with torch's FutureWarning. Without a GPU, autocast and GradScaler then disable
themselves with torch's warnings, as torch's CPU build does."""
import importlib.util

from .. import _dtype
from .. import amp as _amp
from ..amp._deprecated import DeviceAutocast, DeviceGradScaler, warn as _warn
from . import is_available

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]


class autocast(DeviceAutocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``: deprecated,
    ``torch.amp.autocast("cuda", ...)``."""

    _device_type, _default_dtype = "cuda", _dtype.float16


class GradScaler(DeviceGradScaler):
    """``torch.cuda.amp.GradScaler(...)``: deprecated, ``torch.amp.GradScaler("cuda", ...)``."""

    _device_type = "cuda"


def custom_fwd(fwd=None, *, cast_inputs=None):
    """Deprecated: ``torch.amp.custom_fwd(fwd, device_type="cuda", cast_inputs=...)``."""
    _warn("cuda", "custom_fwd", "args..., device_type='cuda'")
    return _amp.custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    """Deprecated: ``torch.amp.custom_bwd(bwd, device_type="cuda")``."""
    _warn("cuda", "custom_bwd", "args..., device_type='cuda'")
    return _amp.custom_bwd(bwd, device_type="cuda")


def amp_definitely_not_available():
    """True when there is no GPU (and no torch_xla), as torch's."""
    return not (is_available() or importlib.util.find_spec("torch_xla"))

