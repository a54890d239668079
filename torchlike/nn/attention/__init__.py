"""torch.nn.attention: ``sdpa_kernel`` and ``SDPBackend``, which choose scaled_dot_product_attention's backend.

On the CPU torch has two: its flash kernel (ScaledDotProductFlashAttentionForCpuBackward0) and its math path (the
op-by-op graph); torchlike's scaled_dot_product_attention follows the same flags (``torchlike.backends.cuda``) to
the same choice, and raises torch's errors when neither is enabled or the one enabled cannot run.
"""
import contextlib

from ...backends.cuda import SDPBackend, _backends_enabled

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only ``backends`` (an SDPBackend or a list of them;
    ``set_priority``: in that order, where the device has a choice); the previous flags come back after it."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError(f"Backend must be an instance of SDPBackend or a list of SDPBackend instances, got "
                             f"{type(backends).__name__}")
    backends = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    with _backends_enabled(backends, set_priority) as context:
        yield context


SDPBackend.__module__ = sdpa_kernel.__module__ = __name__  # (torch.nn.attention's)
