"""The tutorial notebooks (tutorials/*.ipynb): each runs in this process, code cell by code cell in one fresh
namespace (no Jupyter kernel: the worker's compiled programs are reused), and all are committed with outputs
cleared and linked from the README."""
import json
import pathlib
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


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path):
    namespace = {"__name__": "__main__"}
    failure = None
    try:
        for index, cell in enumerate(_cells(path)):
            if cell["cell_type"] != "code":
                continue
            code = compile(_source(cell), f"{path.name} [cell {index}]", "exec")
            try:
                exec(code, namespace)  # noqa: S102 - running the notebook is the test
            except Exception as e:  # noqa: BLE001 - any failure fails the notebook, named by its cell
                failure = f"{path.name}: cell {index} raised {type(e).__name__}: {e}\n{traceback.format_exc()}"
                break
    finally:
        plt.close("all")
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
