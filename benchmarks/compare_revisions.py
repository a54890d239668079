"""The core benchmark of two revisions, in one run: is a change faster or slower?

    python benchmarks/compare_revisions.py BASE [--rounds 3]

Checks BASE (any git revision) out into a temporary worktree, then runs ``bench_core.py`` alternately with the
base's torchlike and with this checkout's, ``rounds`` times each, in fresh processes (so both pay the same machine
noise), and prints per workload the median time and the median ratio to torch eager of each side.
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent.parent
ROW = re.compile(r"^(.*?)\s+([\d.]+)ms\s+([\d.]+)ms\s+([\d.]+)ms\s+([\d.]+)x\s+([\d.]+)x$")


def _run(root):
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, str(HERE / "benchmarks" / "bench_core.py")], env=env, check=True,
                         capture_output=True, text=True).stdout
    return {m.group(1): (float(m.group(2)), float(m.group(5))) for m in map(ROW.match, out.splitlines()) if m}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = pathlib.Path(tmp) / "base"
        subprocess.run(["git", "-C", str(HERE), "worktree", "add", "--detach", str(base), args.base], check=True,
                       capture_output=True)
        try:
            runs = {"base": [], "this": []}
            for _ in range(args.rounds):
                runs["base"].append(_run(base))
                runs["this"].append(_run(HERE))
        finally:
            subprocess.run(["git", "-C", str(HERE), "worktree", "remove", "--force", str(base)], check=True)
    print(f"{'workload':38s} {'base':>9s} {'this':>9s} {'base/torch':>11s} {'this/torch':>11s}")
    for name in runs["base"][0]:
        med = {k: (statistics.median(r[name][0] for r in v), statistics.median(r[name][1] for r in v))
               for k, v in runs.items()}
        print(f"{name:38s} {med['base'][0]:7.3f}ms {med['this'][0]:7.3f}ms {med['base'][1]:10.2f}x "
              f"{med['this'][1]:10.2f}x")


if __name__ == "__main__":
    main()
