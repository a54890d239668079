"""Test setup: JAX's persistent compilation cache (most test time is XLA compiling) and x64 via torchlike."""
import os
import pathlib

import jax

_cache = pathlib.Path(os.environ.get("TORCHLIKE_JAX_CACHE", pathlib.Path(__file__).resolve().parent.parent / ".jax_cache"))
jax.config.update("jax_compilation_cache_dir", str(_cache))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

import torchlike  # noqa: E402,F401  (turns on x64 before any test builds arrays)
