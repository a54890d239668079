"""torch.accelerator: the one accelerator JAX has (a GPU, reported as 'cuda', or a TPU), or none."""
import jax

from ._device import _accelerator, device as _device_cls

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index", "set_device_index",
           "synchronize"]

_NONE = "Cannot access accelerator device when none is available."
_index = [0]


def is_available():
    """True when JAX's default backend is an accelerator."""
    return _accelerator() is not None


def current_accelerator(check_available=False):
    """The accelerator's device type as a ``device`` (``device(type='cuda')``), or None."""
    acc = _accelerator()
    return None if acc is None else _device_cls(acc)


def device_count():
    """Number of accelerator devices (0 without one)."""
    return 0 if _accelerator() is None else len(jax.devices())


def _require():
    if _accelerator() is None:
        raise RuntimeError(_NONE)


def current_device_index():
    """Index of the current accelerator device."""
    _require()
    return _index[0]


def set_device_index(device):
    """Set the current accelerator device."""
    _require()
    _index[0] = (device.index or 0) if isinstance(device, _device_cls) else int(device)


def synchronize(device=None):
    """Wait for every computation on the accelerator."""
    _require()
    jax.block_until_ready(jax.live_arrays())
