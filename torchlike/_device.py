"""torch.device over JAX devices: 'cpu', and 'cuda' (JAX's 'gpu') or 'tpu' when JAX has them.

Parsing, repr, equality and errors follow torch: ``device('cuda:1')``, ``device('cuda', 1)``; a device equals
only another device with the same type and index (``device('cpu') == 'cpu'`` is False, as in torch).
torch's other device types (meta, xla, mps, ...) can be named but hold no tensors here. Extensions: 'tpu',
and 'gpu' as another name for 'cuda'.
"""
import functools
import re

import jax

_TORCH_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_NOT_LINKED = ("mps", "hip", "xla", "ipu", "vulkan", "ve", "fpga", "maia", "mkldnn", "opengl", "opencl", "ideep")
_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
_TORCH_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?")


def _accelerator():
    """torch type of JAX's accelerator ('cuda' or 'tpu'), or None on a CPU-only JAX."""
    platform = jax.default_backend()
    return None if platform == "cpu" else _TORCH_TYPE.get(platform, platform)


class device:
    """``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``, ``device(0)`` (the accelerator)."""

    __module__ = "torchlike"
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's parameter name
        if index is not None and (isinstance(index, bool) or not isinstance(index, int)):
            raise TypeError(f"device(): argument 'index' (position 2) must be int, not {_type_name(index)}")
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):
            acc = _accelerator()
            if acc is None:
                raise RuntimeError("Cannot access accelerator device when none is available.")
            type, index = acc, type
        elif isinstance(type, str):
            m = _DEVICE_RE.fullmatch(type)
            if m is None:
                raise RuntimeError(f"Invalid device string: '{type}'")
            name, idx = m.groups()
            if name not in _TORCH_TYPES and name not in ("tpu", "gpu"):
                raise RuntimeError(f"Expected one of {', '.join(_TORCH_TYPES)} device type at start of device "
                                   f"string: {name}")
            if idx is not None:
                if index is not None:
                    raise RuntimeError(f"type (string) must not include an index because index was passed "
                                       f"explicitly: {type}")
                index = int(idx)
            type = "cuda" if name == "gpu" else name
        else:
            raise TypeError(f"device() received an invalid combination of arguments - got ({_type_name(type)})")
        if index is not None and index < 0:
            raise RuntimeError("Device index must not be negative")
        self.type = type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    def _jax_device(self):
        """The jax.Device this names; torch's error when the platform is absent."""
        platform = _JAX_PLATFORM.get(self.type)
        if platform is None:
            if self.type == "xpu":
                raise AssertionError("Torch not compiled with XPU enabled")
            if self.type in _NOT_LINKED:  # torch's CPU build's error for moving a tensor there
                raise RuntimeError(f"PyTorch is not linked with support for {self.type} devices")
            raise RuntimeError(f"torchlike cannot hold tensors on device type '{self.type}'")
        try:
            devices = jax.devices(platform)
        except RuntimeError:
            if self.type == "cuda":
                raise AssertionError("Torch not compiled with CUDA enabled") from None
            raise RuntimeError(f"no {self.type} device is available to JAX") from None
        index = self.index or 0
        if platform == "cpu" and index >= len(devices):
            index = 0  # torch accepts any cpu index; all name the one host
        if index >= len(devices):
            raise RuntimeError(f"{self.type}:{index} is not available: JAX has {len(devices)} {self.type} device(s)")
        return devices[index]


def _type_name(obj):
    return "NoneType" if obj is None else type(obj).__name__


def _as_device(d):
    """A device from a device, string or int argument (None stays None)."""
    return d if d is None or isinstance(d, device) else device(d)


@functools.lru_cache(maxsize=None)
def _device_of_jax(jdev):
    """torch's CPU device has no index; a JAX host with several CPU devices (XLA's simulated devices) names the
    others 'cpu:<id>', so ``t.to(t.device)`` leaves a tensor where it is."""
    index = jdev.id if jdev.platform != "cpu" or jdev.id != jax.devices("cpu")[0].id else None
    return device(_TORCH_TYPE.get(jdev.platform, jdev.platform), index)


def _device_of(array):
    """torchlike device of a jax.Array (tracers report the default device)."""
    try:
        devs = array.devices()
    except Exception:  # a tracer inside jit/vmap/grad
        return _device_of_jax(jax.devices()[0])
    return _device_of_jax(next(iter(devs)))


_default = [None]  # the device set by set_default_device (None: cpu)


def set_default_device(device):
    """Set the device ``get_default_device`` reports (``None``: cpu). Creation functions make tensors on JAX's
    default device, so only cpu (and an accelerator JAX defaults to) can be set: another device raises torch's
    error for it here (torch raises it at the next tensor creation)."""
    d = None if device is None else _as_device(device)
    if d is not None and d.type != "cpu":
        jd = d._jax_device()
        if jd != jax.devices()[0]:
            raise RuntimeError(f"torchlike creates tensors on JAX's default device: {device} cannot be the default")
    _default[0] = d


def get_default_device():
    """The device set by ``set_default_device`` (cpu unless set), as torch's."""
    d = _default[0]
    return device("cpu") if d is None else d
