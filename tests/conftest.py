"""Test setup: JAX's persistent compilation cache (most test time is XLA compiling) and x64 via torchlike."""
import os
import pathlib

# XLA's CPU compiler with LLVM at -O0 and its older loop emitters: the suite's thousands of tiny programs compile
# about a third faster (tests/test_nn_functional.py cold: 44.6 s -> 29.7 s here) and give the same results within the
# tests' tolerances; programs run slower, which tests do not measure. Added to what the environment sets, before JAX
# starts (subprocess tests add their device count to it).
_FAST_COMPILE = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"
os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {_FAST_COMPILE}".strip()

import jax  # noqa: E402

_cache = pathlib.Path(os.environ.get("TORCHLIKE_JAX_CACHE", pathlib.Path(__file__).resolve().parent.parent / ".jax_cache"))
jax.config.update("jax_compilation_cache_dir", str(_cache))
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

# JAX makes a new MLIR context for every program it lowers (~5.5 ms here, most of it loading dialects; a worker's peak
# memory was twice as high with them): the tests share one context for 256 lowerings, then start a new one (a context
# keeps every attribute and type it made). Cold whole suite here: 50 -> 29 minutes of CPU time (nn_functional -k
# eager: 32-35 s -> 24-27 s). (A private JAX function: a JAX without it runs the tests as they were.)
try:
    from jax._src.interpreters import mlir as _mlir
    _make_ir_context = _mlir.make_ir_context
except (ImportError, AttributeError):
    _mlir = None


def _shared_ir_context(state=[None, 0]):  # noqa: B006
    if state[1] % 256 == 0:
        state[0] = _make_ir_context()
    state[1] += 1
    return state[0]


if _mlir is not None:
    _mlir.make_ir_context = _shared_ir_context

import torchlike  # noqa: E402,F401  (turns on x64 before any test builds arrays)
from torchlike import _xcache  # noqa: E402

import pytest  # noqa: E402

# Lazy mode keeps eager semantics (issue 18): the tests of the engine, hooks, views, in-place ops, custom
# Functions, nn and optim run in both modes, once with ops dispatched ([eager]) and once recorded and run as fused
# programs ([lazy], inside torchlike.lazy()). With TORCHLIKE_LAZY=1 the other test files run lazily too.
_BOTH_MODES = {"test_engine", "test_hooks", "test_saved_hooks", "test_views", "test_view_modes",
               "test_inplace_checks", "test_inplace_methods", "test_function", "test_functional", "test_nn_module",
               "test_nn_layers", "test_nn_functional", "test_nn_activations_losses", "test_nn_init", "test_nn_rnn",
               "test_nn_spatial", "test_nn_utils_more", "test_optim", "test_optim_more", "test_optim_new"}


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than there are cores (up to pyproject's 4): a worker waiting on a subprocess test
    or between tests leaves its core to the extra one (5 test files here on 2 cores: 189 s -> 176 s)."""
    return min(4, (os.cpu_count() or 1) + 1)


def pytest_configure(config):
    config.addinivalue_line("markers", "eager_only(reason): a test of eager dispatch itself, not run in lazy mode "
                                       "(the README lists them)")


def pytest_generate_tests(metafunc):
    if (metafunc.module.__name__.rpartition(".")[2] in _BOTH_MODES
            and metafunc.definition.get_closest_marker("eager_only") is None):
        metafunc.fixturenames.insert(0, "_dispatch_mode")
        metafunc.parametrize("_dispatch_mode", ["eager", "lazy"], indirect=True)


@pytest.fixture
def _dispatch_mode(request, monkeypatch):
    from torchlike import _lazy
    _lazy._reset_guard()
    monkeypatch.setattr(_lazy, "_THRASH", _lazy._WINDOW + 1)  # every op recorded: no thrash-guard pause (a test's
    with torchlike.lazy(request.param == "lazy"):  # syncs are mostly new programs; tests/test_lazy.py tests it)
        yield


@pytest.fixture(autouse=True)
def _eager_only_in_a_lazy_process(request):
    """With TORCHLIKE_LAZY=1 a test marked eager_only runs with lazy mode off (it tests eager dispatch itself)."""
    if os.environ.get("TORCHLIKE_LAZY", "") in ("", "0") or request.node.get_closest_marker("eager_only") is None:
        yield
        return
    with torchlike.lazy(False):
        yield


# Each compiled XLA executable alive in a process holds ~3 memory mappings of JIT code; a test worker builds tens of
# thousands, and at Linux's vm.max_map_count (65,530) XLA crashed in a late compile (a segfault in JAX's cache write,
# or "Failed to materialize symbols"), at the same tests in every run. Past 60% of the limit the worker drops every
# executable it holds (torchlike._xcache.clear_caches); later tests load them again from the persistent cache.
_ran = [0]


def pytest_runtest_teardown(item):
    _ran[0] += 1
    if _ran[0] % 25 == 0 and _xcache.over_map_limit():  # (torchlike's own valve waits for the next eager op)
        _xcache.clear_caches()
