"""torchlike.compile against eager torchlike on random programs (tests/random_programs.py's generator).

Each program's steps and a backward through the sum of its results run as one function, once eagerly and once
compiled (called twice: the trace and then the cached program, on fresh leaves of the same values); the results'
values, dtypes and the leaves' gradients must agree, and so must the errors. A program that reads a value on the
host runs in lazy mode under compile (a graph break), which must agree too; a value check inside the program (index
bounds) raises after the call, and must be one of the errors the eager run met.

    python tests/random_compiled.py --n 200 --start 0      # prints the programs that differ
"""
import argparse
import sys
import warnings

import jax
import numpy as np

import torchlike
from random_programs import _error, _is, _leaf, _run_step, _total, generate


_HOST_READS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError)


def _differentiable(t):
    """Whether ``t`` is a floating result with history (the backward's roots)."""
    try:
        return not t.is_leaf and t.requires_grad and _is(t, "float", "complex")
    except RuntimeError:  # (a view made under no_grad whose base was then written: torch refuses its grad_fn too)
        return False


def _body(program):
    leaves_spec, steps, options = program
    exclude = options.get("exclude", ())

    def fn(*leaves):
        pool, log, errors = list(leaves), [], []
        for index, step in enumerate(steps, len(pool)):
            a = pool[step[1] % len(pool)]
            try:
                result = _run_step(torchlike, pool, log, index, step, exclude)
            except _HOST_READS:
                raise  # (a value read on the host: compile runs the function lazily, which must agree)
            except Exception as e:  # noqa: BLE001 - errors are compared too
                errors.append(_error(e))
                result = a
            pool.append(result if isinstance(result, torchlike.Tensor) else a)
        outs = [t for t in pool if _differentiable(t)]
        if outs:
            try:
                _total(torchlike, outs).backward()
            except _HOST_READS:
                raise
            except Exception as e:  # noqa: BLE001
                errors.append(_error(e))
        return [t.detach() for t in pool[len(leaves):]], errors
    return fn


def _observe(program, fn):
    leaves = [_leaf(torchlike, *spec) for spec in program[0]]
    results, errors = fn(*leaves)
    return {"values": [np.asarray(t.tolist()) for t in results], "dtypes": [str(t.dtype) for t in results],
            "grads": [None if t.grad is None else np.asarray(t.grad.tolist()) for t in leaves], "errors": errors}


def differs(seed):
    """None if the program's compiled run agrees with its eager run, else how they differ."""
    program = generate(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = _observe(program, _body(program))
        compiled_fn = torchlike.compile(_body(program))
        observed = []
        for _ in range(2):
            try:
                observed.append(_observe(program, compiled_fn))
            except Exception as e:  # noqa: BLE001 - a value check of the program (raised after the call)
                if _error(e) not in eager["errors"]:
                    return f"compiled raised {_error(e)}; eager's errors: {eager['errors']}"
                return None
    for k, obs in enumerate(observed):
        if obs["errors"] != eager["errors"]:
            return f"call {k}: errors {obs['errors']} vs eager {eager['errors']}"
        if obs["dtypes"] != eager["dtypes"]:
            return f"call {k}: dtypes {obs['dtypes']} vs eager {eager['dtypes']}"
        for name in ("values", "grads"):
            for i, (a, b) in enumerate(zip(obs[name], eager[name])):
                if (a is None) != (b is None) or a is not None and (
                        a.shape != b.shape or not np.allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)):
                    return f"call {k}: {name}[{i}] {a} vs eager {b}"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=100)
    p.add_argument("--start", type=int, default=0)
    args = p.parse_args()
    bad = 0
    for seed in range(args.start, args.start + args.n):
        d = differs(seed)
        if d:
            bad += 1
            print(f"seed {seed}: {d}", flush=True)
    print(f"{bad} of {args.n} programs differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
