"""The bases of torch's deprecated per-device aliases (``torch.cuda.amp``, ``torch.cpu.amp``): the same autocast
and GradScaler on a fixed device type, each warning with torch's FutureWarning when made."""
import warnings

from .autocast_mode import autocast
from .grad_scaler import GradScaler

_UNSET = object()  # (torch.<device>.amp.autocast(dtype=None) asks for the device's current autocast dtype)


def warn(device_type, name, new_args):
    """torch's FutureWarning for ``torch.<device_type>.amp.<name>``, at the user's call."""
    warnings.warn(f"`torch.{device_type}.amp.{name}(args...)` is deprecated. Please use `torch.amp.{name}"
                  f"({new_args})` instead.", FutureWarning, stacklevel=3)


class DeviceAutocast(autocast):
    """``autocast(enabled=True, dtype=<the device's>, cache_enabled=True)`` on ``_device_type``."""

    _device_type = _default_dtype = None

    def __new__(cls, *args, **kwargs):
        warn(cls._device_type, "autocast", f"'{cls._device_type}', args...")
        return super().__new__(cls)

    def __init__(self, enabled=True, dtype=_UNSET, cache_enabled=True):
        super().__init__(self._device_type, enabled=enabled, dtype=self._default_dtype if dtype is _UNSET else dtype,
                         cache_enabled=cache_enabled)


class DeviceGradScaler(GradScaler):
    """``GradScaler(init_scale, growth_factor, backoff_factor, growth_interval, enabled)`` on ``_device_type``."""

    _device_type = None

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warn(self._device_type, "GradScaler", f"'{self._device_type}', args...")
        super().__init__(self._device_type, init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
