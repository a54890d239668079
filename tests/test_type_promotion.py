"""torch's type promotion, checked against torch 2.13: the dtype lattice (promote_types) and the
result dtypes (and values) of arithmetic that mixes dimensioned tensors, 0-d tensors and Python scalars.
Only dtypes and values, no gradients; shapes are tiny, and the case table stays small because every
dtype combination compiles once.
"""
import numpy as np
import pytest
import torch

import torchlike as tl

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64"]


def test_promote_types_lattice():
    for a in DTYPES:
        for b in DTYPES:
            expected = torch.promote_types(getattr(torch, a), getattr(torch, b))
            actual = tl.promote_types(getattr(tl, a), getattr(tl, b))
            assert actual.name == str(expected).split(".")[-1], (a, b, actual, expected)


def _values(dtype, n):
    if dtype == "bool":
        return np.array([True, False, True][:n])
    if dtype.startswith("complex"):
        return np.array([1 + 1j, 2 - 1j, 0.5j][:n])
    if dtype.startswith(("float", "bfloat")):
        return np.array([0.5, 1.5, 2.5][:n])
    return np.array([1, 2, 3][:n])


def _make(lib, spec):
    """("int64", (3,)) -> a tensor of that dtype and shape; anything else is a Python scalar."""
    if not isinstance(spec, tuple):
        return spec
    dtype, shape = spec
    data = _values(dtype, 3 if shape else 1).reshape(shape)
    return lib.tensor(data).to(getattr(lib, dtype))


def _numpy(t):
    if isinstance(t, torch.Tensor):
        return t.to(torch.complex128 if t.is_complex() else torch.float64).numpy()
    a = np.asarray(t._data)
    return a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)


OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
       "**": lambda a, b: a ** b}

V = (3,)  # a dimensioned tensor; () is a 0-d tensor
CASES = [  # (left operand, right operand, ops)
    (("int64", V), 2.5, "*/"), (("int64", V), 2, "+*/"), (("int32", V), 2, "+*"), (("int32", V), 2.5, "+"),
    (("float32", V), ("float64", V), "+"), (("float32", V), ("float64", ()), "+*"),
    (("float64", ()), ("float32", V), "+"),
    (("int64", V), ("int64", V), "/"), (("int32", V), ("int32", ()), "/"), (("bool", V), ("bool", V), "+*/"),
    (("bool", V), 1, "+"), (("bool", V), 1.5, "*"), (("bool", V), True, "+"), (("uint8", V), ("int8", V), "+*"),
    (("uint8", V), 3, "+"), (("uint8", V), ("int64", ()), "+"), (("int8", V), ("int64", ()), "*"),
    (("int32", ()), ("int64", ()), "+"), (("float16", V), ("float32", ()), "+"), (("float16", V), 1.5, "*"),
    (("bfloat16", V), ("float16", V), "+"), (("bfloat16", V), 2, "*"), (("int64", V), ("float16", ()), "+"),
    (("int64", V), ("float64", ()), "+"), (("complex64", V), ("float64", ()), "+*"),
    (("float64", V), ("complex64", ()), "+"), (("float32", V), 1j, "+*"), (("int64", V), 1j, "+"),
    (("complex64", V), ("complex128", ()), "*"), (("float32", ()), 2.5, "+"), (("int64", ()), 2.5, "+"),
    (("int16", V), 2, "**"), (("int64", V), 2.0, "**"), (("float32", V), ("int64", V), "**+"),
    (2, ("int64", V), "**-"), (2.5, ("int32", V), "**"), (3, ("uint8", V), "-"), (2, ("int64", V), "/"),
    (("int8", V), ("uint8", V), "*"), (("int32", V), ("float16", V), "+"), (True, ("float32", V), "*"),
]


def _case_id(case):
    def name(x):
        return f"{x[0]}{list(x[1])}" if isinstance(x, tuple) else repr(x)
    return f"{name(case[0])}_{name(case[1])}_{case[2]}"


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_result_dtypes(case):
    left, right, ops = case
    a_tl, b_tl, a_th, b_th = _make(tl, left), _make(tl, right), _make(torch, left), _make(torch, right)
    if isinstance(a_th, torch.Tensor) or isinstance(b_th, torch.Tensor):
        t, o = (a_th, b_th) if isinstance(a_th, torch.Tensor) else (b_th, a_th)
        tt, ot = (a_tl, b_tl) if isinstance(a_th, torch.Tensor) else (b_tl, a_tl)
        assert tl.result_type(tt, ot).name == str(torch.result_type(t, o)).split(".")[-1]
    for op in ops.replace("**", "^"):
        f = OPS["**" if op == "^" else op]
        expected, actual = f(a_th, b_th), f(a_tl, b_tl)
        assert actual.dtype.name == str(expected.dtype).split(".")[-1], (op, actual.dtype, expected.dtype)
        assert actual.shape == tuple(expected.shape)
        low = expected.dtype in (torch.float16, torch.bfloat16)
        np.testing.assert_allclose(_numpy(actual), _numpy(expected), rtol=1e-2 if low else 1e-6)


def test_default_dtype_decides_scalar_and_true_division_results():
    old = tl.get_default_dtype()
    tl.set_default_dtype(tl.float64)
    torch_old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for f in (lambda m: m.tensor([1, 2, 3]) * 2.5, lambda m: m.tensor([1, 2, 3]) / m.tensor([2, 2, 2]),
                  lambda m: m.tensor([1, 2]) + 1j, lambda m: m.tensor([1.0], dtype=m.float32) * 2.5,
                  lambda m: m.exp(m.tensor([1, 2]))):
            assert f(tl).dtype.name == str(f(torch).dtype).split(".")[-1]
    finally:
        tl.set_default_dtype(old)
        torch.set_default_dtype(torch_old)


def test_inplace_keeps_dtype():
    """In-place ops keep the target's dtype when the promoted result can be cast to it."""
    for left, right in [("float32", "float64"), ("float16", "float32"), ("int32", "int64"), ("float32", "int64"),
                        ("complex64", "float64"), ("uint8", "bool")]:
        results = []
        for lib in (tl, torch):
            t = _make(lib, (left, V))
            t.add_(_make(lib, (right, V)))
            t.mul_(2)
            results.append(t)
        assert results[0].dtype.name == left
        np.testing.assert_allclose(_numpy(results[0]), _numpy(results[1]), rtol=1e-3)
