"""torch.random: seeding and state of the global generator (``torchlike.manual_seed`` & co. are these
functions) and ``fork_rng``. torchlike has one generator for every device, so forking it forks them all; the
device list is still checked as torch checks it (asking a GPU's state without one raises torch's error)."""
import contextlib

from ._warnings import warn_once
from . import cpu, cuda
from ._device import device as _device_cls
from .accelerator import current_accelerator
from .ops.creation import initial_seed, manual_seed, seed
from .ops.sampling import get_rng_state, set_rng_state
from .utils.data._utils.worker import get_worker_info

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng",
           "thread_safe_generator"]

_DEVICE_MODULES = {"cpu": cpu, "cuda": cuda}  # torch.get_device_module's answers, for the device types torchlike has


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Within the block, draw from the generator freely: on exit its state is put back (``enabled=False``: no
    fork). ``devices``/``device_type`` name the devices whose state torch also forks (default: all of the current
    accelerator's, else cuda's)."""
    if device_type == "meta":
        yield
        return
    acc = current_accelerator()
    device_type = device_type or (acc.type if acc is not None else "cuda")
    device_mod = _DEVICE_MODULES.get(_device_cls(device_type).type)  # (an unknown type raises torch's error)
    if device_mod is None:
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a module by "
                           "`torch._register_device_module`.")
    if not enabled:
        yield
        return
    if devices is None:
        num_devices = device_mod.device_count()
        if num_devices > 1:
            up = device_type.upper()
            warn_once("fork_rng devices",
                f"{up} reports that you have {num_devices} available devices, and you have used {_caller} without "
                f"explicitly specifying which devices are being used. For safety, we initialize *every* {up} device "
                f"by default, which can be quite slow if you have a lot of {up}s. If you know that you are only "
                f"making use of a few {up} devices, set the environment variable {up}_VISIBLE_DEVICES or the "
                f"'{_devices_kw}' keyword argument of {_caller} with the set of devices you are actually using. For "
                "example, if you are using CPU only, set device.upper()_VISIBLE_DEVICES= or devices=[]; if you are "
                f"using device 0 only, set {up}_VISIBLE_DEVICES=0 or devices=[0].  To initialize all devices and "
                f"suppress this warning, set the '{_devices_kw}' keyword argument to "
                f"`range(torch.{device_type}.device_count())`.", stacklevel=3)
        devices = list(range(num_devices))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    device_states = [device_mod.get_rng_state(d) for d in devices]
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, state in zip(devices, device_states):
            device_mod.set_rng_state(state, d)


def thread_safe_generator():
    """The running DataLoader thread worker's own generator, or None (draw from the global one). torchlike's
    workers share the global generator, so this is None."""
    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng.torch_generator
    return None
