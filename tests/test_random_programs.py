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


def test_the_comparison_sees_a_difference(monkeypatch):
    """The harness is not blind: a program whose step differs between the libraries is reported."""
    real = R._apply

    def skewed(m, op, a, b, r):  # torchlike's sin made wrong by 1e-3
        out = real(m, op, a, b, r)
        return out + 1e-3 if m is R.tl and op == "sin" else out
    monkeypatch.setattr(R, "_apply", skewed)
    leaves = [((3,), "float64", 1, True), ((3, 2), "float64", 2, True)]
    assert R.compare((leaves, [("sin", 0, 1, 0)])) is not None
    assert R.compare((leaves, [("cos", 0, 1, 0)])) is None
