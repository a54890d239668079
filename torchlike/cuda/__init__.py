"""torch.cuda over JAX's GPU backend (``jax.devices("gpu")``).

With no GPU (this project's machines) every function answers as torch's CPU-only build does: queries return
False / 0, and what needs a device raises torch's ``AssertionError: Torch not compiled with CUDA enabled``.
torchlike has one random generator for every device, so ``manual_seed``/``manual_seed_all`` here change nothing:
``torchlike.manual_seed`` seeds it, and ``get_rng_state``/``set_rng_state`` here are its state. Memory figures
come from the JAX device's ``memory_stats()``.
"""
import collections
import threading

import jax

from .._device import device as _device_cls
from ..ops.creation import default_generator as _default_generator
from ..ops.sampling import set_rng_state as _set_rng_state

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name", "get_device_properties",
           "get_device_capability", "synchronize", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "empty_cache", "memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "reset_peak_memory_stats", "is_bf16_supported", "is_initialized", "init", "get_rng_state",
           "set_rng_state", "get_rng_state_all", "set_rng_state_all"]

_NOT_COMPILED = "Torch not compiled with CUDA enabled"
_state = threading.local()  # the current device index, per thread as torch's

_DeviceProperties = collections.namedtuple("_CudaDeviceProperties",
                                           "name major minor total_memory multi_processor_count")


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:  # JAX has no GPU backend
        return []


def _require():
    gpus = _gpus()
    if not gpus:
        raise AssertionError(_NOT_COMPILED)
    return gpus


def _index(device, optional=True):
    """torch's _get_device_index: a cuda device, 'cuda:1', an int, or (``optional``) None for the current one."""
    index = None
    if isinstance(device, str):
        device = _device_cls(device)
    if isinstance(device, _device_cls):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        index = device.index
    elif isinstance(device, int) and not isinstance(device, bool):
        index = device
    if index is not None:
        return index
    if optional and device is None or optional and isinstance(device, _device_cls):
        return current_device()
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")


def _jax_device(device):
    gpus = _require()
    i = _index(device)
    if not 0 <= i < len(gpus):
        raise AssertionError("Invalid device id")
    return gpus[i]


def is_available():
    """True when JAX has a GPU backend."""
    return bool(_gpus())


def device_count():
    """Number of JAX GPU devices (0 without a GPU)."""
    return len(_gpus())


def is_initialized():
    """Whether CUDA state is initialized: True when JAX has a GPU."""
    return is_available()


def init():
    """Initialize CUDA state (JAX does it on import); raises without a GPU, as torch's CPU build."""
    _require()


def current_device():
    """Index of the current GPU."""
    _require()
    return getattr(_state, "index", 0)


def set_device(device):
    """Set the current GPU (a negative index does nothing, as in torch)."""
    i = _index(device, optional=False)
    if i < 0:
        return
    if not _gpus():  # torch's CPU-only build fails here on its missing CUDA binding
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")
    _jax_device(i)
    _state.index = i


def get_device_name(device=None):
    """The GPU's name (JAX's ``device_kind``)."""
    return _jax_device(device).device_kind


def get_device_capability(device=None):
    """(major, minor) compute capability, from JAX's ``compute_capability`` (``(0, 0)`` when it has none)."""
    p = get_device_properties(device)
    return p.major, p.minor


def get_device_properties(device=None):
    """name, major, minor, total_memory, multi_processor_count of a GPU."""
    d = _jax_device(device)
    major, _, minor = str(getattr(d, "compute_capability", "0.0")).partition(".")
    stats = d.memory_stats() or {}
    return _DeviceProperties(d.device_kind, int(major or 0), int(minor or 0), stats.get("bytes_limit", 0),
                             getattr(d, "core_count", 0))


def synchronize(device=None):
    """Wait until every computation on the GPU has finished."""
    d = _jax_device(device)
    jax.block_until_ready([a for a in jax.live_arrays() if d in a.devices()])


def manual_seed(seed):
    """Accepted for torch scripts; torchlike's one generator is seeded by ``torchlike.manual_seed``."""


def manual_seed_all(seed):
    """Accepted for torch scripts; torchlike's one generator is seeded by ``torchlike.manual_seed``."""


def seed():
    """Accepted for torch scripts (see ``manual_seed``)."""


def seed_all():
    """Accepted for torch scripts (see ``manual_seed``)."""


def get_rng_state(device="cuda"):
    """A GPU's random state: that of torchlike's one generator (raises without a GPU, as torch's CPU build)."""
    _jax_device(device)
    return _default_generator.get_state()


def set_rng_state(new_state, device="cuda"):
    """Set a GPU's random state, which is torchlike's one generator's. Without a GPU nothing happens: torch's CPU
    build defers the call to CUDA's initialisation, which never comes."""
    if _gpus():
        _jax_device(device)
        _set_rng_state(new_state)


def get_rng_state_all():
    """``get_rng_state`` of every GPU (``[]`` without one)."""
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    """``set_rng_state`` of GPU i to ``new_states[i]``."""
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def empty_cache():
    """Nothing to release: JAX frees a GPU buffer as soon as its last array goes."""


def _stat(device, key):
    if not _gpus():
        return 0
    return (_jax_device(device).memory_stats() or {}).get(key, 0)


def memory_allocated(device=None):
    """Bytes held by arrays on the GPU (0 without one)."""
    return _stat(device, "bytes_in_use")


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` (0 without a GPU)."""
    return _stat(device, "peak_bytes_in_use")


def memory_reserved(device=None):
    """Bytes reserved by JAX's allocator (0 without a GPU)."""
    return _stat(device, "bytes_reserved")


def max_memory_reserved(device=None):
    """Peak of ``memory_reserved`` (0 without a GPU)."""
    return _stat(device, "peak_bytes_reserved")


def reset_peak_memory_stats(device=None):
    """torch's CPU-only build fails here on its missing binding; JAX cannot reset its peaks, so this does nothing
    on a GPU."""
    if not _gpus():
        raise AttributeError("module 'torch._C' has no attribute '_cuda_resetPeakMemoryStats'")


def is_bf16_supported(including_emulation=True):
    """Whether the GPU computes in bfloat16 (XLA supports it on every GPU it runs on)."""
    return is_available()
