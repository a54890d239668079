"""out= of the newer ops (ops/other.py, the nan-reductions, the samplers) goes through ops/_out.py as torch's: the
autograd refusal, torch's dtype rule of each op (and its order), resize, and the values written into ``out``."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, error_of

M = np.arange(9.0).reshape(3, 3) / 4 + 0.5
CASES = {
    "tril": lambda m, x, o: m.tril(x, out=o), "triu": lambda m, x, o: m.triu(x, 1, out=o),
    "diag_2d": lambda m, x, o: m.diag(x, out=o), "diag_1d": lambda m, x, o: m.diag(x[0], 1, out=o),
    "hstack": lambda m, x, o: m.hstack([x, x], out=o), "vstack": lambda m, x, o: m.vstack([x, x], out=o),
    "dstack": lambda m, x, o: m.dstack([x, x], out=o), "column_stack": lambda m, x, o: m.column_stack([x, x], out=o),
    "kron": lambda m, x, o: m.kron(x, x, out=o), "cross": lambda m, x, o: m.cross(x, x.flip(0), dim=1, out=o),
    "cumprod": lambda m, x, o: m.cumprod(x, 1, out=o), "logcumsumexp": lambda m, x, o: m.logcumsumexp(x, 1, out=o),
    "nan_to_num": lambda m, x, o: m.nan_to_num(x, out=o), "nansum": lambda m, x, o: m.nansum(x, 1, out=o),
    "nanmean": lambda m, x, o: m.nanmean(x, 1, out=o),
}
RANDOM = {"bernoulli": lambda m, x, o: m.bernoulli(x / 5, out=o),
          "multinomial": lambda m, x, o: m.multinomial(x, 2, out=o)}
OUTS = {  # label -> (input requires grad, out's dtype, out's size, out requires grad)
    "plain": (False, "float64", 0, False),
    "input_requires_grad": (True, "float64", 0, False), "int_out": (False, "int64", 0, False),
    "float32_out": (False, "float32", 0, False), "complex_out": (False, "complex128", 0, False),
    "resized": (False, "float64", 2, False), "out_requires_grad": (False, "float64", 0, True),
    "grad_and_float32": (True, "float32", 0, False),
}


def _run(m, fn, label):
    grad, dtype, size, out_grad = OUTS[label]
    x = m.tensor(M, requires_grad=grad)
    out = m.empty(size, dtype=getattr(m, dtype), requires_grad=out_grad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = error_of(lambda: fn(m, x, out))
    return error, out, [str(w.message)[:60] for w in caught if "resized" in str(w.message)]


@pytest.mark.parametrize("label", list(OUTS))
@pytest.mark.parametrize("name", list(CASES) + list(RANDOM))
def test_out(name, label):
    fn = CASES.get(name) or RANDOM[name]
    (e1, o1, w1), (e2, o2, w2) = _run(torch, fn, label), _run(tl, fn, label)
    assert e2 == e1 and w2 == w1
    if e1 is None:
        assert o2.dtype.__repr__().split(".")[-1] == str(o1.dtype).split(".")[-1]
        assert tuple(o2.shape) == tuple(o1.shape) and o2._version == o1._version
        if name in CASES:
            assert_same(o2, o1)
