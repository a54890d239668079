"""Smoke test of the benchmark command (issue 16): ``python -m benchmarks --quick --only small_mlp`` writes the
tables and the plot, and every implementation's first losses agree with jax.jit's."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
IMPLS = ["torchlike eager", "torchlike lazy", "torchlike compiled", "torch eager", "torch.compile", "jax", "jax.jit"]


def _table(text, heading):
    """The rows (lists of cells) of the Markdown table under the heading that starts with `heading`."""
    block = text.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines() if line.startswith("|")]


def test_quick_small_mlp(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "small_mlp", "--out",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = (tmp_path / "results.md").read_text()
    assert (tmp_path / "results.png").read_bytes()[:4] == b"\x89PNG"
    for heading, extra in (("Step time, ratio to torch eager", ["losses agree"]),
                           ("Step time, ratio to jax.jit", ["losses agree"]), ("Step time, ms", []),
                           ("First three calls", [])):
        header, rule, *rows = _table(text, heading)
        assert header == ["workload", *IMPLS, *extra]
        assert [r[0].split(" (")[0] for r in rows] == ["small MLP step"]
        assert len(rows[0]) == len(header)
    row = dict(zip(IMPLS + ["losses agree"], _table(text, "Step time, ratio to torch eager")[2][1:]))
    assert row["losses agree"].startswith("yes"), row
    assert row["torch eager"] == "1.00x" and row["torch.compile"] == "skipped"
    for k in ("torchlike eager", "torchlike lazy", "jax", "jax.jit"):
        assert re.fullmatch(r"\d+\.\d\dx", row[k]), row
    assert re.fullmatch(r"\d+\.\d\dx|n/a", row["torchlike compiled"]), row
    assert "Per-op overhead" not in text and "Peak memory" not in text
