"""torch.backends.cuda: ``matmul.allow_tf32`` and the other cuBLAS flags (kept, read back as torch's), and the
flags of scaled_dot_product_attention's backends."""
import contextlib
import enum
import warnings

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


# ----- scaled_dot_product_attention's backends (torch.nn.attention.sdpa_kernel sets them): global, as torch's -------
# On the CPU torch chooses its flash kernel when enabled and its constraints hold, else its math path when enabled;
# torchlike's scaled_dot_product_attention does the same. The other backends are CUDA kernels: their flags are kept.
_SDP = {"cudnn": True, "flash": True, "mem_efficient": True, "math": True, "overrideable": True}
_SDP_PRIORITY = [1, 2, 0, 3, 4]  # (SDPBackend values: flash, efficient, math, cudnn, overrideable)
_fp16_bf16_reduction_math_sdp = [False]


def _sdp_flag(name):
    def enabled():
        return _SDP[name]

    def enable(enabled):
        _SDP[name] = bool(enabled)
    enabled.__name__, enable.__name__ = f"{name}_sdp_enabled", f"enable_{name}_sdp"
    enabled.__doc__ = f"Whether scaled_dot_product_attention may use the {name} backend."
    enable.__doc__ = f"Let scaled_dot_product_attention use the {name} backend, or not."
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _sdp_flag("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _sdp_flag("mem_efficient")
math_sdp_enabled, enable_math_sdp = _sdp_flag("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _sdp_flag("cudnn")


def is_flash_attention_available():
    """Whether torch's CUDA flash attention is built in: never here (the CPU has its own flash kernel)."""
    return False


def fp16_bf16_reduction_math_sdp_allowed():
    """Whether the math path may reduce in half precision (the flag is kept; torchlike computes in float32)."""
    return _fp16_bf16_reduction_math_sdp[0]


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Set the flag ``fp16_bf16_reduction_math_sdp_allowed`` reads."""
    _fp16_bf16_reduction_math_sdp[0] = bool(enabled)


class SDPBackend(enum.IntEnum):
    """The backends of scaled_dot_product_attention (torch's values)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


_backend_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "mem_efficient": "EFFICIENT_ATTENTION",
                  "math": "MATH", "overrideable": "OVERRIDEABLE"}


def _cur_sdpa_kernel_backends(with_priority=False):
    backends = [SDPBackend[v] for k, v in _backend_names.items() if _SDP[k]]
    return sorted(backends, key=lambda b: _SDP_PRIORITY.index(int(b))) if with_priority else backends


def _sdpa_kernel(backends, set_priority=False):
    for name, value in _backend_names.items():
        _SDP[name] = SDPBackend[value] in backends
    if set_priority:
        order = [int(b) for b in backends]
        _SDP_PRIORITY[:] = order + [b for b in _SDP_PRIORITY if b not in order]


@contextlib.contextmanager
def _backends_enabled(backends, set_priority=False):
    """Only ``backends`` enabled (in that priority with ``set_priority``) within the block, the flags restored after."""
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """Deprecated: ``torch.nn.attention.sdpa_kernel`` with the enabled backends."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
                  "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
                  "signature.", FutureWarning, stacklevel=3)
    chosen = [b for b, on in ((SDPBackend.FLASH_ATTENTION, enable_flash), (SDPBackend.EFFICIENT_ATTENTION,
                                                                           enable_mem_efficient),
                              (SDPBackend.MATH, enable_math), (SDPBackend.CUDNN_ATTENTION, enable_cudnn)) if on]
    with _backends_enabled(chosen) as context:
        yield context
