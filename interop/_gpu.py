"""Keep JAX from taking most of a GPU that torch shares.

By default JAX preallocates 75% of each GPU's memory when its GPU backend starts, which leaves torch little.
JAX reads ``XLA_PYTHON_CLIENT_PREALLOCATE`` / ``XLA_PYTHON_CLIENT_MEM_FRACTION`` /
``XLA_PYTHON_CLIENT_ALLOCATOR`` when the backend is created, so interop sets the first to ``false`` at import
unless the user configured JAX's allocator already; if the GPU backend already exists, it is too late to change
and interop warns instead.
"""
import os
import warnings

_VARS = ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR")
_GPU_PLATFORMS = ("cuda", "rocm", "gpu")

_LATE_WARNING = (
    "interop: JAX's GPU backend was initialised before interop was imported, with memory preallocation on: "
    "JAX holds most (75%) of the GPU's memory and torch sharing the GPU may run out of memory. Set the "
    "environment variable XLA_PYTHON_CLIENT_PREALLOCATE=false (or XLA_PYTHON_CLIENT_MEM_FRACTION=<fraction>) "
    "before JAX first uses the GPU, e.g. import interop before creating any JAX array.")


def _gpu_backend_initialized():
    """True when JAX has already created a GPU backend (without creating one: only looks at JAX's backend cache)."""
    try:
        from jax._src import xla_bridge
        backends = dict(xla_bridge._backends)  # private, read only; absent/renamed -> assume not initialised
    except Exception:
        return False
    return any(name in _GPU_PLATFORMS for name in backends)


def _configure_jax_memory(environ=None, backend_initialized=None):
    """Turn off JAX's GPU memory preallocation unless the user chose JAX's allocator settings.

    Returns what it did: ``"user"`` (one of the XLA_PYTHON_CLIENT_* variables is set: left alone),
    ``"set"`` (set XLA_PYTHON_CLIENT_PREALLOCATE=false) or ``"warned"`` (a GPU backend already preallocated:
    a UserWarning says what to set). ``environ`` and ``backend_initialized`` (a no-argument probe) exist for tests.
    """
    environ = os.environ if environ is None else environ
    probe = _gpu_backend_initialized if backend_initialized is None else backend_initialized
    if any(v in environ for v in _VARS):
        return "user"
    if probe():
        warnings.warn(_LATE_WARNING, UserWarning, stacklevel=2)
        return "warned"
    environ["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false"
    return "set"
