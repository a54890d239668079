"""torchlike's executable cache: an op's compiled XLA program, stored next to JAX's persistent compilation cache
and loaded in later processes without tracing or lowering anything.

JAX's own persistent cache skips XLA's compile but still traces and lowers each program (~10 ms per (op, shape)
on a 2-core CPU). ``jit(fn, name)`` is a ``jax.jit`` whose cache miss first looks for the serialized executable
under a key made of everything the program depends on: the function (its code's identity, its closure, defaults
and static arguments, by value), the arguments' pytree and abstract values (shape, dtype, weak type), JAX's trace
context, the versions of JAX, jaxlib, Python and torchlike's source files, XLA_FLAGS and the backend. A hit costs
~2 ms (deserialize and load); the call then runs on jax.jit's C++ fast path as any cached jit call. Anything it
cannot key by value (a function from outside torchlike, JAX or NumPy, an object it does not know, a tracer, an
array on another device) takes the ordinary jax.jit path. A corrupt entry (checked by its digest) is ignored.

Each run also writes a manifest of the executables its script used first (per script path, or per ``python -c``
code); importing torchlike starts a background thread that loads the previous run's (``prefetch``), so the loads
overlap the script's own start-up.

Entries live in ``<jax_compilation_cache_dir>/torchlike-xla/<source fingerprint>/``: off when JAX's cache is
off; ``TORCHLIKE_EXECUTABLE_CACHE=0`` turns off only this one. Each load records the JAX monitoring event
``LOAD_EVENT`` (with its duration and the program's ``name=``, for
``jax.monitoring.register_event_duration_secs_listener``) and, under ``jax.log_compiles()``, logs the op's name.
"""
import atexit
import functools
import hashlib
import io
import logging
import os
import pickle
import shutil
import sys
import threading
import time
import types
import weakref

import jax
import numpy as np
from jax._src import compilation_cache as _compilation_cache
from jax._src import config as _config
from jax._src import core as _core
from jax._src import tree_util as _tree_util
from jax._src.interpreters import pxla as _pxla
from jax._src.lib import _jax, version_str as _jaxlib_version, xla_client as _xc
from jax.experimental import serialize_executable as _se

LOAD_EVENT = "/torchlike/executable_cache/load"
_MAGIC = b"torchlike-xla-1\n"
_KEEP = 8  # source fingerprints (torchlike versions or edits) kept on disk; older ones are removed
_ENABLED = os.environ.get("TORCHLIKE_EXECUTABLE_CACHE", "") != "0"
_log = logging.getLogger("jax._src.dispatch")  # where JAX logs its compiles (jax.log_compiles)
_ROOT = os.path.dirname(os.path.abspath(__file__))
_env = None  # the process's part of every key (computed at the first cache miss)


class _Unkeyable(Exception):
    """A value the cache cannot key by value: the call takes the ordinary jax.jit path."""


def jit(fn, name, static_argnums=(), static_argnames=()):
    """``jax.jit(fn, ...)`` named ``name`` (JAX's compile logs show it), with the executable cache."""
    fn.__name__ = fn.__qualname__ = name
    plain = jax.jit(fn, static_argnums=static_argnums, static_argnames=static_argnames)
    if not _ENABLED:
        return plain
    static, static_names = tuple(static_argnums), tuple(static_argnames)
    loaded = _Loaded()  # key -> the executable's own cache-miss function (None: not serializable, JAX's path)
    _all_loaded[id(loaded)] = loaded
    own = []  # the function's part of the key, made once

    def cache_miss(*args, **kwargs):
        for a in args:
            if isinstance(a, _core.Tracer):  # inside a trace (nothing to compile): no key to make
                return plain._cache_miss(*args, **kwargs)
        miss = None
        try:
            key = _key(fn, own, static, static_names, args, kwargs)
        except _Unkeyable:
            key = None
        if key is not None:
            miss = loaded.get(key)
            if miss is None and key not in loaded:
                if len(loaded) > 256:  # (the C++ dispatcher keeps its own entries)
                    loaded.clear()
                miss = loaded[key] = _load_or_compile(plain, name, key, args, kwargs)
        if miss is None:  # JAX's own path (it gives the C++ dispatcher its fast path too)
            return plain._cache_miss(*args, **kwargs)
        if static:
            args = tuple(a for i, a in enumerate(args) if i not in static)
        if static_names:
            kwargs = {k: v for k, v in kwargs.items() if k not in static_names}
        return miss(*args, **kwargs)

    return _jax.pjit(name, fn, cache_miss, static, static_names, _pxla.JitGlobalCppCacheKeys(),
                     _tree_util.dispatch_registry, _pxla.cc_shard_arg)


class _Loaded(dict):
    """A jit's loaded executables (a dict that ``_all_loaded`` can reference weakly)."""

    __slots__ = ("__weakref__",)


_all_loaded = weakref.WeakValueDictionary()  # every live jit's ``loaded`` (for clear_caches; a dropped jit's goes)


def clear_caches():
    """Drop every executable this process holds (``jax.clear_caches()`` and torchlike's own references): each is a
    few memory mappings of JIT code, and a process that has built ~20,000 of them reaches Linux's default limit of
    65,530 mappings, where XLA crashes. Later calls load or compile them again."""
    for loaded in list(_all_loaded.values()):
        loaded.clear()
    jax.clear_caches()


# ----- the mapping valve: a long-running process that compiles without end (new shapes every step) -------------
# Each executable alive holds ~3 memory mappings of JIT code; at Linux's vm.max_map_count (65,530 by default: about
# 20,000 executables) XLA crashes in its next compile. Every _CHECK_EVERY compiles or loads the process's mappings
# are counted; past 60% of the limit, the next eager op (outside any trace) drops every executable held
# (clear_caches); later calls load or compile what they need again.
_CHECK_EVERY = 128
_COMPILE_EVENTS = ("/jax/core/compile/backend_compile_duration", LOAD_EVENT)


def _map_limit():
    try:
        with open("/proc/sys/vm/max_map_count") as f:
            return int(f.read()) * 6 // 10
    except (OSError, ValueError):  # (not Linux: no such limit to watch)
        return None


MAP_LIMIT = _map_limit()
on_pressure = []  # called (no arguments) when the mappings pass MAP_LIMIT: they arrange for relieve() to run
_events = [0]


def over_map_limit():
    """Whether this process's memory mappings are past MAP_LIMIT."""
    if MAP_LIMIT is None:
        return False
    with open("/proc/self/maps", "rb") as f:
        return f.read().count(b"\n") > MAP_LIMIT


def _on_event(event, duration, **kwargs):
    if event in _COMPILE_EVENTS:
        _events[0] += 1
        if _events[0] % _CHECK_EVERY == 0 and over_map_limit():
            for fn in on_pressure:
                fn()


def relieve():
    """Drop every executable (clear_caches) if no trace is under way; whether it did."""
    if not _core.trace_state_clean():
        return False
    clear_caches()
    return True


if MAP_LIMIT is not None:
    jax.monitoring.register_event_duration_secs_listener(_on_event)


def _directory():
    root = _config.compilation_cache_dir.value
    if not root:
        return None
    return os.path.join(root, "torchlike-xla", _source())


def _load_or_compile(plain, name, key, args, kwargs):
    """The cache-miss function of the executable for ``key``: loaded from disk, or compiled and stored."""
    directory = _directory()
    if directory is None:
        return None
    path = os.path.join(directory, key)
    start = time.perf_counter()
    compiled = _prefetched.pop(path, None) or _read(path)
    if len(_used) < _MANIFEST:
        _used.append(key)
    if compiled is not None:
        jax.monitoring.record_event_duration_secs(LOAD_EVENT, time.perf_counter() - start, name=name)
        if _config.log_compiles.value:
            _log.warning("Loaded jit(%s) from torchlike's executable cache", name)
    else:
        lowered = plain.lower(*args, **kwargs)
        if "custom_call" in lowered.as_text():  # (LAPACK and other custom calls: a loaded one can crash)
            return None
        _captured.on, _captured.raw, _captured.compiled = True, None, False
        try:
            compiled = lowered.compile()
        finally:
            _captured.on = False
        # neither compiled nor read from JAX's cache: JAX's in-memory cache gave an executable this process may have
        # loaded from its persistent cache earlier, which XLA:CPU serializes again without its code (stored, it
        # would fail at its first run: "Function ... not found"); the entry is written when it is compiled or read
        if _captured.compiled or _captured.raw is not None:
            _write(directory, path, compiled, _captured.raw)
        _captured.raw = None
    call = compiled._executable.create_cpp_call(compiled._params)
    return None if call is None else call._cache_miss


# ----- loading ahead: a script's executables load on a background thread while it starts up ---------------------
_MANIFEST = 256  # executables listed per script (its first ones: a training loop's first steps)
_used = []  # this process's executable keys in first-use order: the manifest the next run of the script loads ahead
_prefetched = {}  # path -> an executable the background thread loaded
_stop = threading.Event()


def _manifest_path(directory):
    """The manifest of this script: its path, or for ``python -c`` its code."""
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else "<interactive>"
    if sys.argv and sys.argv[0] == "-c" and "-c" in sys.orig_argv:
        script = "-c " + sys.orig_argv[sys.orig_argv.index("-c") + 1]
    return os.path.join(directory, "manifest-" + hashlib.blake2b(script.encode(), digest_size=8).hexdigest())


def prefetch():
    """Load, on a background thread, the executables the previous run of this script used first (its manifest),
    so that their ~3 ms loads overlap the script's imports and data loading instead of its first steps."""
    if _ENABLED and _config.compilation_cache_dir.value:
        thread = threading.Thread(target=_prefetch, name="torchlike-executable-prefetch", daemon=True)
        thread.start()
        atexit.register(_finish, thread)


def _prefetch():
    try:
        directory = _directory()
        with open(_manifest_path(directory)) as f:
            keys = f.read().split()
    except Exception:  # noqa: BLE001 (no manifest yet, no cache directory: nothing to load ahead)
        return
    for key in keys[:_MANIFEST]:
        path = os.path.join(directory, key)
        if _stop.is_set():
            return
        if path not in _prefetched:
            compiled = _read(path)
            if compiled is not None:
                _prefetched[path] = compiled


def _finish(thread):
    """At exit: stop loading ahead (the thread must not run while the interpreter shuts down), write the manifest."""
    _stop.set()
    thread.join()
    if not _used:
        return
    try:
        path = _manifest_path(_directory())
        with open(f"{path}.{os.getpid()}.tmp", "w") as f:
            f.write("\n".join(_used))
        os.replace(f"{path}.{os.getpid()}.tmp", path)
    except OSError:
        pass


def _read(path):
    """The compiled executable stored at ``path``, or None (absent, corrupt, or not loadable here)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if data[:len(_MAGIC)] != _MAGIC or hashlib.blake2b(data[head:], digest_size=32).digest() != data[len(_MAGIC):head]:
        return None
    try:  # (every stored program runs on the default device: loaded for it alone, not for all the process's
        return _se.deserialize_and_load(*pickle.loads(data[head:]), execution_devices=jax.devices()[:1])  # devices)
    except Exception:  # noqa: BLE001 (an entry this JAX cannot load: compile again)
        return None


def _write(directory, path, compiled, raw):
    """Store ``compiled`` (``raw``: its executable's bytes as JAX's cache holds them, when it came from there)."""
    try:
        payload = pickle.dumps(_serialize(compiled, raw), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 (host callbacks, constants: not serializable; stays per process)
        return
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, exist_ok=True)
            _prune(os.path.dirname(directory))
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(_MAGIC + hashlib.blake2b(payload, digest_size=32).digest() + payload)
        os.replace(tmp, path)
    except OSError:
        pass


class _Pickler(_se._JaxPjrtPickler):
    raw = None

    def persistent_id(self, obj):
        if self.raw is not None and isinstance(obj, _xc.LoadedExecutable):
            return ("exec", self.raw)
        return super().persistent_id(obj)


def _serialize(compiled, raw):
    """``serialize_executable.serialize``, except that an executable JAX loaded from its persistent cache is
    stored as the bytes JAX read (XLA:CPU serializes such an executable again without its code)."""
    if raw is None:
        return _se.serialize(compiled)
    unloaded = compiled._executable._unloaded_executable
    if unloaded is None or compiled._params.const_args:
        raise ValueError("not serializable")
    args_info_flat, in_tree = jax.tree_util.tree_flatten(compiled.args_info)
    with io.BytesIO() as f:
        pickler = _Pickler(f)
        pickler.raw = raw
        pickler.dump((unloaded, args_info_flat, compiled._no_kwargs))
        return f.getvalue(), in_tree, compiled.out_tree


_captured = threading.local()  # while torchlike compiles a program for its cache: JAX's cache entry's bytes
_jax_cache_get = _compilation_cache.get_executable_and_time


def _get_executable_and_time(cache_key, compile_options, backend, executable_devices):
    """JAX's persistent-cache read (compilation_cache.get_executable_and_time), keeping the bytes it read while
    torchlike compiles a program for its own cache."""
    if not getattr(_captured, "on", False):
        return _jax_cache_get(cache_key, compile_options, backend, executable_devices)
    cache = _compilation_cache._get_cache(backend)
    data = None if cache is None else cache.get(cache_key)
    if data is None:
        return None, None
    raw, compile_time = _compilation_cache.extract_executable_and_time(
        _compilation_cache.decompress_executable(data))
    _captured.raw = raw
    return backend.deserialize_executable(raw, executable_devices, compile_options), compile_time


def _on_backend_compile(event, duration, **kwargs):
    """JAX compiled a program, or read it from its persistent cache (not its in-memory cache): noted while torchlike
    compiles one for its own cache."""
    if event == _COMPILE_EVENTS[0] and getattr(_captured, "on", False):
        _captured.compiled = True


if _ENABLED:
    _compilation_cache.get_executable_and_time = _get_executable_and_time
    jax.monitoring.register_event_duration_secs_listener(_on_backend_compile)


def _prune(root):
    """Keep the ``_KEEP`` most recently made source-fingerprint directories."""
    try:
        dirs = sorted((e for e in os.scandir(root) if e.is_dir()), key=lambda e: e.stat().st_mtime, reverse=True)
        for e in dirs[_KEEP:]:
            shutil.rmtree(e.path, ignore_errors=True)
    except OSError:
        pass


@functools.lru_cache(maxsize=1)
def _source():
    """The fingerprint of torchlike's source files (path, size, mtime): the directory of its executables."""
    files = []
    for d, subdirs, names in os.walk(_ROOT):
        subdirs.sort()
        for n in sorted(names):
            if n.endswith(".py"):
                st = os.stat(os.path.join(d, n))
                files.append((os.path.relpath(os.path.join(d, n), _ROOT), st.st_size, st.st_mtime_ns))
    return hashlib.blake2b(repr(files).encode(), digest_size=12).hexdigest()


def _environment():
    """(source fingerprint, the rest of the process's key part): torchlike's files (path, size, mtime), JAX's,
    jaxlib's and Python's versions, XLA_FLAGS, the backend and the CPU."""
    global _env
    if _env is None:
        source = _source()
        device = jax.devices()[0]
        cpu = ""
        try:
            with open("/proc/cpuinfo") as f:
                cpu = next((line for line in f if line.startswith(("flags", "Features"))), "")
        except OSError:
            pass
        rest = (jax.__version__, _jaxlib_version, sys.version,
                os.environ.get("XLA_FLAGS", ""), device.platform, device.client.platform_version,
                device.device_kind, len(jax.devices()), cpu, _config.default_prng_impl.value)
        _env = (source, repr(rest))
    return _env


def _key(fn, own, static, static_names, args, kwargs):
    """The file name of the executable for this call (raises _Unkeyable)."""
    if not own:
        own.append(_value(fn))
    statics = tuple(_value(args[i]) for i in static) + tuple(
        (k, _value(v)) for k, v in sorted(kwargs.items()) if k in static_names)
    dynamic = tuple(a for i, a in enumerate(args) if i not in static)
    leaves, tree = jax.tree.flatten((dynamic, {k: v for k, v in kwargs.items() if k not in static_names}),
                                    is_leaf=_pending)
    avals = tuple(_aval(x) for x in leaves)
    context = tuple(_context(v) for v in _config.trace_context())
    text = repr((_environment()[1], own[0], statics, str(tree), avals, context))
    return hashlib.blake2b(text.encode(), digest_size=20).hexdigest()


_default_device = []


def _pending(x):
    """A lazy-mode pending array (torchlike/_lazy.py): unkeyable, so its call takes jax.jit's path."""
    return getattr(type(x), "_lazy_array", False)


def _aval(x):
    if isinstance(x, _core.Tracer) or _pending(x):
        raise _Unkeyable("tracer")
    if isinstance(x, jax.Array):
        if not _default_device:
            _default_device.append(jax.devices()[0])
        if x.sharding.device_set != {_default_device[0]}:
            raise _Unkeyable("device")
        a = x.aval
        layout = getattr(getattr(x, "format", None), "layout", None)  # (an array from DLPack may have its own)
        return ("a", a.shape, a.dtype.str, a.weak_type, getattr(layout, "major_to_minor", None))
    if isinstance(x, (np.ndarray, np.generic)):
        return ("n", x.shape, x.dtype.str)
    if type(x) in (bool, int, float, complex):
        return type(x).__name__
    raise _Unkeyable(type(x))


def _context(v):
    if isinstance(v, _core.AxisEnv):
        if v.axis_sizes or v.spmd_axis_names or v.explicit_mesh_axis_names:
            raise _Unkeyable
        return "AxisEnv()"
    text = repr(v)
    if " at 0x" in text:
        raise _Unkeyable
    return text


_PLAIN = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
_OWN_MODULES = ("torchlike", "jax", "numpy", "math", "operator", "builtins", "functools")


def _trusted(module):
    """Code whose module is torchlike's (covered by the source fingerprint) or a library's (by its version)."""
    return module is not None and (module.split(".")[0] in _OWN_MODULES)


def _value(v, depth=0):
    """A deterministic text of ``v`` for the key: by value, recursively through closures (raises _Unkeyable)."""
    if depth > 40:
        raise _Unkeyable
    t = type(v)
    if t in _PLAIN:
        return repr(v)
    if t in (tuple, list) or isinstance(v, tuple):
        return f"{t.__qualname__}({', '.join(_value(x, depth + 1) for x in v)})"
    if t is dict:
        return "{" + ", ".join(f"{_value(k, depth + 1)}: {_value(x, depth + 1)}" for k, x in v.items()) + "}"
    if t in (set, frozenset):
        return f"{t.__name__}({sorted(_value(x, depth + 1) for x in v)})"
    if t is slice:
        return f"slice({_value(v.start)}, {_value(v.stop)}, {_value(v.step)})"
    if isinstance(v, np.dtype):
        return f"dtype({v.str})"
    if t is types.FunctionType:
        code = v.__code__
        if not _trusted(v.__module__):
            raise _Unkeyable
        closure = tuple(c.cell_contents for c in v.__closure__ or ())
        return (f"fn({v.__module__}, {code.co_qualname}, {code.co_firstlineno}, "
                f"{_value(closure, depth + 1)}, {_value(v.__defaults__, depth + 1)}, "
                f"{_value(v.__kwdefaults__, depth + 1)})")
    if t is types.MethodType:
        return f"method({_value(v.__self__, depth + 1)}, {_value(v.__func__, depth + 1)})"
    if t.__name__ == "partial" and hasattr(v, "func"):
        return f"partial({_value(v.func, depth + 1)}, {_value(v.args, depth + 1)}, {_value(v.keywords, depth + 1)})"
    if isinstance(v, type) or t in (types.BuiltinFunctionType, np.ufunc) or t.__name__ == "PjitFunction":
        module = getattr(v, "__module__", None) or ("numpy" if t is np.ufunc else None)
        if not _trusted(module):
            raise _Unkeyable
        return f"{module}.{getattr(v, '__qualname__', v.__name__)}"
    if isinstance(v, _core.ShapedArray):
        return f"aval({v.shape}, {v.dtype.str}, {v.weak_type})"
    key = getattr(t, "_xcache_key", None)  # torchlike objects that know their own key (e.g. the op table's OpDef)
    if key is not None and _trusted(t.__module__):
        return f"{t.__qualname__}({_value(key(v), depth + 1)})"
    raise _Unkeyable(t)
