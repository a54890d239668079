"""``python -m benchmarks``: every workload of issues 16 and 18 in seven implementations, paired in one process; writes
benchmarks/results.md (tables of ratios, times, first-call times, per-op overhead, the chain's peak memory) and
benchmarks/results.png.

    python -m benchmarks                      # the full run (several minutes; torch.compile compiles for a while)
    python -m benchmarks --quick --only small_mlp,chain   # a smoke test: few short rounds, small sizes
"""
import argparse
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the benchmark scripts import each other as top-level modules


def main():
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3 short rounds, small sizes, no torch.compile (its compile takes ~15 s a workload)")
    parser.add_argument("--only", help="comma-separated: small_mlp, large_mlp, chain, cnn, transformer, lstm, "
                                       "op_overhead, chain_memory")
    parser.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    parser.add_argument("--out", default=str(HERE), help="directory for results.md and results.png")
    parser.add_argument("--warm-caches", action="store_true",
                        help="keep torchlike's/JAX's and inductor's on-disk compile caches (default: off, so the "
                             "first-call times are cold compiles)")
    parser.add_argument("--peak-probe", help=argparse.SUPPRESS)
    parser.add_argument("--chain-ops", type=int, default=1000, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.warm_caches:  # before torch and torchlike are imported
        os.environ.setdefault("TORCHLIKE_COMPILATION_CACHE", "0")
        os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
    import bench_suite
    return bench_suite.main(args)


if __name__ == "__main__":
    sys.exit(main())
