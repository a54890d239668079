"""torchlike's executable cache (torchlike/_xcache.py): a later process loads each op's compiled program instead of
tracing and lowering it, with the same results; a changed formula, version or corrupt entry is never loaded; the
opt-outs work; a cached call stays on jax.jit's C++ fast path. Each run is a fresh process with a temporary cache."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike as tl
from torchlike import _xcache

ROOT = pathlib.Path(__file__).resolve().parent.parent

# a small training step (table ops forward and backward, Adam's update), a sampler and randperm; prints the
# results (exact float bits) and how many programs were traced and loaded
SCRIPT = r"""
import json, logging
import jax, numpy as np
counts = {"traced": 0, "loaded": 0}
def listen(event, secs, **kw):
    if event == "/jax/core/compile/jaxpr_trace_duration":
        counts["traced"] += 1
    if event == "/torchlike/executable_cache/load":
        counts["loaded"] += 1
jax.monitoring.register_event_duration_secs_listener(listen)
import torchlike as torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
opt = torch.optim.Adam(model.parameters(), lr=0.1)
x = torch.tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
y = torch.tensor([0, 1, 1, 0, 1])
logs = []
handler = logging.Handler()
handler.emit = lambda record: logs.append(record.getMessage())
logging.getLogger("jax._src.dispatch").addHandler(handler)
with jax.log_compiles():
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    relu = torch.tensor([-1.0, 2.0]).relu()
values = [loss.item(), relu.tolist(), torch.randperm(7).tolist(), torch.rand(2, 3).tolist(), torch.rand(3, 2).tolist()]
values += [p.detach().numpy().tolist() for p in model.parameters()]
bits = [np.asarray(p.detach().numpy()).tobytes().hex() for p in model.parameters()]
print(json.dumps({"values": values, "bits": bits,
                  "loaded_logged": any("torchlike's executable cache" in m for m in logs), "file": torch.__file__,
                  **counts}))
"""


def _run(cache, path=ROOT, script=SCRIPT, **env):
    full = {k: v for k, v in os.environ.items() if k not in ("TORCHLIKE_EXECUTABLE_CACHE", "TORCHLIKE_LAZY")}
    # (eager dispatch: the script logs the programs its ops load inside jax.log_compiles(), where lazy mode would
    # run them later, at .item())
    full.update(TORCHLIKE_COMPILATION_CACHE=str(cache), PYTHONPATH=str(path), **env)
    out = subprocess.run([sys.executable, "-c", script], env=full, cwd=path, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _entries(cache):
    return sorted(p for p in pathlib.Path(cache, "torchlike-xla").glob("*/*") if p.is_file())


def test_a_warm_process_loads_the_programs_and_gets_identical_results(tmp_path):
    cold = _run(tmp_path)
    warm = _run(tmp_path)
    assert cold["loaded"] == 0 and cold["traced"] > 0 and len(_entries(tmp_path)) > 0
    assert warm["loaded"] > 0 and warm["loaded_logged"]  # the loads are counted and logged under log_compiles
    assert warm["traced"] <= cold["traced"] - warm["loaded"]  # each load is a program not traced
    assert warm["values"] == cold["values"] and warm["bits"] == cold["bits"]
    off = _run(tmp_path / "off", TORCHLIKE_EXECUTABLE_CACHE="0")
    assert off["values"] == cold["values"] and off["bits"] == cold["bits"]  # and the same as without the cache


def test_opt_outs(tmp_path):
    off = _run(tmp_path, TORCHLIKE_EXECUTABLE_CACHE="0")  # only torchlike's cache off: JAX's stays on
    assert off["loaded"] == 0 and not (tmp_path / "torchlike-xla").exists() and any(tmp_path.iterdir())
    again = _run(tmp_path, TORCHLIKE_EXECUTABLE_CACHE="0")
    assert again["loaded"] == 0 and again["values"] == off["values"]
    home = tmp_path / "home"
    none = _run("0", XDG_CACHE_HOME=str(home))  # every persistent cache off: nothing stored anywhere
    assert none["loaded"] == 0 and not home.exists() and none["values"] == off["values"]


def test_a_program_from_jax_persistent_cache_is_stored_whole(tmp_path):
    """A program JAX loads from its own persistent cache is stored as the bytes JAX read (XLA:CPU serializes such
    an executable again without its code: loading that failed with 'Function ... not found')."""
    jax_only = _run(tmp_path, TORCHLIKE_EXECUTABLE_CACHE="0")
    from_jax = _run(tmp_path)  # JAX's cache hits, stored in torchlike's
    loaded = _run(tmp_path)
    assert from_jax["loaded"] == 0 and loaded["loaded"] > 0
    assert jax_only["values"] == from_jax["values"] == loaded["values"] and jax_only["bits"] == loaded["bits"]


DYNAMIC = r"""
import json, sys
sys.path.insert(0, "tests")
from test_lazy import _dynamic_net
losses, params = _dynamic_net(True, steps=60)  # (lazy: its eager pauses and the eager run share programs)
losses2, params2 = _dynamic_net(False, steps=60)
print(json.dumps([losses, losses2, [p.tolist() for p in params2]]))
"""


def test_a_program_jax_had_in_memory_is_stored_only_once_compiled_or_read(tmp_path):
    """A program JAX's in-memory cache hands back (it may have loaded it from its persistent cache, and XLA:CPU
    serializes such an executable again without its code) is not stored: a warm process once failed at its first
    run with 'Function add_select_fusion.2 not found' (SGD's update in the dynamic-net loop)."""
    outs = [_run(tmp_path, script=DYNAMIC) for _ in range(3)]
    assert outs[0] == outs[1] == outs[2]


def test_corrupt_entries_are_ignored_and_replaced(tmp_path):
    cold = _run(tmp_path)
    entries = _entries(tmp_path)
    for k, p in enumerate(entries):  # flipped bytes, a truncated file, an empty one
        data = bytearray(p.read_bytes())
        p.write_bytes(bytes(data[:len(data) // 2]) if k % 3 == 1 else b"" if k % 3 == 2 else
                      bytes(data[:-10]) + bytes(b ^ 0xFF for b in data[-10:]))
    again = _run(tmp_path)
    assert again["loaded"] == 0 and again["values"] == cold["values"] and again["bits"] == cold["bits"]
    assert _run(tmp_path)["loaded"] > 0  # rewritten whole


def test_a_changed_formula_or_version_is_not_loaded(tmp_path):
    """The key covers torchlike's source files and JAX's version: after an edit (relu's formula here) or an
    upgrade, the stale programs are never loaded."""
    copy = tmp_path / "src"
    shutil.copytree(ROOT / "torchlike", copy / "torchlike", ignore=shutil.ignore_patterns("__pycache__"))
    cache = tmp_path / "cache"
    before = _run(cache, copy)
    assert before["file"].startswith(str(copy))  # these runs import the copy
    assert before["values"][1] == [0.0, 2.0] and _run(cache, copy)["loaded"] > 0
    pointwise = copy / "torchlike" / "ops" / "pointwise.py"
    text = pointwise.read_text()
    old = "    return jnp.maximum(self, jnp.zeros((), self.dtype))\n"
    assert text.count(old) == 1
    pointwise.write_text(text.replace(old, "    return jnp.maximum(self, jnp.ones((), self.dtype))\n"))
    after = _run(cache, copy)
    assert after["loaded"] == 0 and after["values"][1] == [1.0, 2.0]
    assert len(list((cache / "torchlike-xla").iterdir())) == 2  # one directory per source fingerprint
    upgraded = subprocess.run(
        [sys.executable, "-c", "import jax; jax.__version__ = '0.0.0+other'\n" + SCRIPT],
        env={**os.environ, "TORCHLIKE_COMPILATION_CACHE": str(cache), "PYTHONPATH": str(copy)}, cwd=copy,
        capture_output=True, text=True, timeout=600)
    assert upgraded.returncode == 0, upgraded.stderr
    assert json.loads(upgraded.stdout.strip().splitlines()[-1])["loaded"] == 0


def test_a_cached_call_runs_on_the_fast_path(monkeypatch):
    """After its first call, an op's program is called by jax.jit's C++ dispatcher: torchlike's cache miss (which
    computes the key) does not run again, for a function the cache keys and for one it cannot key."""
    x = tl.tensor(np.arange(13, dtype=np.float32)) - 6  # a shape no other test uses
    calls = []
    key = _xcache._key
    monkeypatch.setattr(_xcache, "_key", lambda *a: calls.append(1) or key(*a))
    for _ in range(3):
        x.relu()
    assert len(calls) == 1

    def user_fn(a):  # outside torchlike: not keyable, JAX's own path
        return a * 2
    f = _xcache.jit(user_fn, "user_fn")
    for _ in range(3):
        np.testing.assert_array_equal(f(jnp.ones(13)), 2 * np.ones(13))
    assert len(calls) == 2


def test_static_arguments_are_part_of_the_key():
    """Static arguments (positional or by name) key the program by value: each shape gets its own program."""
    flat = jnp.arange(8.0)
    assert tl.ops.creation._cut(flat, shape=(2, 3)).shape == (2, 3)
    assert tl.ops.creation._cut(flat, shape=(3, 2)).shape == (3, 2)
    assert "_draw_randint" in _xcache._value(tl.ops.creation._draw_randint)  # torchlike's: by code identity
    with pytest.raises(_xcache._Unkeyable):  # a function from outside torchlike, JAX and NumPy
        _xcache._value(lambda a: a)
    with pytest.raises(_xcache._Unkeyable):  # an object the cache does not know
        _xcache._value(object())
    assert _xcache._value((1, 2.0, np.dtype("float32"))) != _xcache._value((1, 2.0, np.dtype("float64")))


LAYOUTS = r"""
import numpy as np, torch, torchlike as tl, interop
t = torch.arange(6, dtype=torch.float64).reshape(3, 2).t()       # a column-major (2, 3) array through DLPack
a, b = interop.from_torch(t), tl.tensor(np.arange(6.0).reshape(2, 3))
print(((b * 2) + (a * 2)).sum().item(), ((a * 2) + (b * 2)).sum().item())
"""


def test_arrays_of_another_layout_key_apart(tmp_path):
    """An array with its own memory layout (from DLPack) gets its own executable: a later process that meets a
    row-major array of that shape first does not load one compiled for the other layout."""
    env = {k: v for k, v in os.environ.items() if k != "TORCHLIKE_EXECUTABLE_CACHE"}
    env.update(TORCHLIKE_COMPILATION_CACHE=str(tmp_path), PYTHONPATH=str(ROOT))
    outs = [subprocess.run([sys.executable, "-c", LAYOUTS], env=env, cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert outs[0] == outs[1] == ["60.0", "60.0"]


def test_the_programs_a_script_used_first_load_ahead_on_the_next_run(tmp_path):
    """Each run lists the executables it used first (a manifest per script); the next run of that script loads them
    on a background thread while it starts up, and its results are the same."""
    wait = SCRIPT.replace("import torchlike as torch\n", "import torchlike as torch, time\ntime.sleep(2)\n"
                          "ahead = len(torch._xcache._prefetched)\n", 1)
    wait = wait.replace('"file": torch.__file__,', '"file": torch.__file__, "ahead": ahead,')
    full = {k: v for k, v in os.environ.items() if k not in ("TORCHLIKE_EXECUTABLE_CACHE", "TORCHLIKE_LAZY")}
    # (eager dispatch: the script logs the programs its ops load inside jax.log_compiles(), where lazy mode would
    # run them later, at .item())
    full.update(TORCHLIKE_COMPILATION_CACHE=str(tmp_path), PYTHONPATH=str(ROOT))
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", wait], env=full, cwd=ROOT, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert list(pathlib.Path(tmp_path, "torchlike-xla").glob("*/manifest-*"))
    assert cold["ahead"] == 0 and warm["ahead"] > 0 and warm["loaded"] > 0  # loaded ahead while it slept
    assert warm["values"] == cold["values"] and warm["bits"] == cold["bits"]


def test_past_the_mapping_limit_the_next_eager_op_drops_every_executable(monkeypatch):
    """The valve against vm.max_map_count: counted at compiles, relieved at the next op outside any trace."""
    from torchlike.ops import _registry
    dropped = []
    monkeypatch.setattr(_xcache, "MAP_LIMIT", 0)  # (every count is past it)
    monkeypatch.setattr(_xcache, "_CHECK_EVERY", 1)
    monkeypatch.setattr(_xcache, "clear_caches", lambda: dropped.append(True))
    monkeypatch.setattr(_registry, "_pressure", False)
    x = tl.tensor(np.linspace(0, 1, 1237 * 3).reshape(3, 1237, 1), dtype=tl.float64)
    y = x.sin()  # (a shape no other test compiles: a compile or a load, so an event)
    assert _registry._pressure and not dropped  # (not inside the compile: at the next op)
    traced = []
    jax.make_jaxpr(lambda a: traced.append(_xcache.relieve()) or a)(1.0)
    assert traced == [False] and not dropped  # (never during a trace)
    z = y.cos()
    assert dropped == [True]  # (and cos's own compile found the count still past the limit: pressure again)
    np.testing.assert_allclose(z.numpy(), np.cos(np.sin(x.numpy())))


def test_relieve_really_drops_and_later_ops_compile_again():
    x = tl.tensor(np.arange(5.0), dtype=tl.float64)
    before = x.exp().numpy()
    assert _xcache.relieve()
    np.testing.assert_allclose(x.exp().numpy(), before)
