"""torch.device over JAX devices: 'cpu', and 'cuda'/'gpu' or 'tpu' when JAX has them."""
import functools

import jax

_JAX_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu"}
_TORCH_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "tpu"}


class device:
    """``device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``; compares equal by type and index."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's parameter name
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, idx = type.split(":")
            index = int(idx)
        if type not in _JAX_PLATFORM:
            raise RuntimeError(f"Expected one of cpu, cuda, tpu device type at start of device string: {type}")
        self.type = "cuda" if type == "gpu" else type
        self.index = index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and (self.index or 0) == (other.index or 0)

    def __hash__(self):
        return hash((self.type, self.index or 0))

    def _jax_device(self):
        """The jax.Device this names; torch's error when the platform is absent."""
        platform = _JAX_PLATFORM[self.type]
        try:
            devices = jax.devices(platform)
        except RuntimeError:
            if self.type == "cuda":
                raise AssertionError("Torch not compiled with CUDA enabled") from None
            raise RuntimeError(f"no {self.type} device is available to JAX") from None
        return devices[self.index or 0]


@functools.lru_cache(maxsize=None)
def _device_of_jax(jdev):
    return device(_TORCH_TYPE.get(jdev.platform, jdev.platform), None if jdev.platform == "cpu" else jdev.id)


def _device_of(array):
    """torchlike device of a jax.Array (tracers report the default device)."""
    try:
        devs = array.devices()
    except Exception:  # a tracer inside jit/vmap/grad
        return _device_of_jax(jax.devices()[0])
    return _device_of_jax(next(iter(devs)))
