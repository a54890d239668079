"""The tutorial notebooks (tutorials/*.ipynb): each runs code cell by code cell in one fresh namespace (no Jupyter
kernel), in this process (the worker's compiled programs are reused) or, when its first code cell sets XLA_FLAGS
(JAX's devices are fixed when it starts, and it has started here), in a fresh Python process; all are committed
with outputs cleared and linked from the README."""
import json
import os
import pathlib
import subprocess
import sys
import traceback

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "tutorials").glob("*.ipynb"))


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _source(cell):
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def test_there_are_notebooks():
    assert len(NOTEBOOKS) >= 7, [p.name for p in NOTEBOOKS]


def _run(path):
    """Run the notebook's code cells in one fresh namespace; the failure message (naming the cell), or None."""
    namespace = {"__name__": "__main__"}
    try:
        for index, cell in enumerate(_cells(path)):
            if cell["cell_type"] != "code":
                continue
            code = compile(_source(cell), f"{path.name} [cell {index}]", "exec")
            try:
                exec(code, namespace)  # noqa: S102 - running the notebook is the test
            except Exception as e:  # noqa: BLE001 - any failure fails the notebook, named by its cell
                return f"{path.name}: cell {index} raised {type(e).__name__}: {e}\n{traceback.format_exc()}"
    finally:
        plt.close("all")
    return None


def _needs_own_process(path):
    """Whether the first code cell sets XLA_FLAGS (e.g. a device count), which only a fresh JAX honours."""
    first = next(_source(c) for c in _cells(path) if c["cell_type"] == "code")
    return "XLA_FLAGS" in first


_CHILD = """import sys, matplotlib
matplotlib.use("Agg")
sys.path[:0] = [{root!r}, {tests!r}]
import pathlib, test_tutorials
failure = test_tutorials._run(pathlib.Path({path!r}))
if failure:
    sys.stderr.write(failure)
    sys.exit(1)
"""


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path):
    if not _needs_own_process(path):
        failure = _run(path)
    else:
        env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
        code = _CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"), path=str(path))
        done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        failure = done.returncode and f"{path.name} (own process, exit {done.returncode}):\n{done.stderr[-6000:]}"
    if failure:
        pytest.fail(failure, pytrace=False)


def test_notebooks_are_clean_and_linked():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for path in NOTEBOOKS:
        for index, cell in enumerate(_cells(path)):
            if cell["cell_type"] == "code":
                assert cell.get("outputs") == [] and cell.get("execution_count") is None, \
                    f"{path.name}: cell {index} has outputs or an execution count (clear them before committing)"
                assert not any(line.lstrip().startswith(("%", "!")) for line in _source(cell).splitlines()), \
                    f"{path.name}: cell {index} uses an IPython magic or shell escape (plain Python only)"
        assert f"(tutorials/{path.name})" in readme, f"README.md does not link tutorials/{path.name}"
