"""torch.backends.cuda: ``matmul.allow_tf32`` and the other cuBLAS flags (kept, read back as torch's)."""
import jax


def _has_gpu():
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


class _Matmul:
    """torch.backends.cuda.matmul: a fixed set of flags; any other name raises, as torch's cuBLASModule."""

    _FLAGS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
              "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False,
              "fp32_precision": "none"}

    def __init__(self):
        self.__dict__.update(self._FLAGS)

    def __getattr__(self, name):
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in self._FLAGS:
            raise AttributeError(f"Unknown attribute {name}")
        self.__dict__[name] = value


matmul = _Matmul()


def is_built():
    """Whether CUDA is available to torchlike: JAX's GPU backend."""
    return _has_gpu()
