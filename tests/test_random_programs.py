"""A fixed sample of random programs (tests/random_programs.py) agrees with torch on everything compared.

Thousands more run on demand: ``python tests/random_programs.py --n 5000`` (README)."""
import pytest

import random_programs as R

SEEDS = range(40)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_agrees_with_torch(seed):
    program = R.generate(seed, exclude=tuple(R.KNOWN_OPEN))
    difference = R.compare(program)
    assert difference is None, f"{difference}\n{R.to_code(R.shrink(program))}"


def test_the_comparison_sees_a_difference():
    """The harness is not blind: a program whose step differs between the libraries is reported."""
    program = R.generate(0, n_steps=0)
    program[1].append(("matmul", 0, 1, 0))
    leaves = [((3,), "float64", 1, True), ((3, 2), "float64", 2, True)]
    assert R.compare((leaves, program[1])) is not None  # KNOWN_OPEN: matmul's decomposition
