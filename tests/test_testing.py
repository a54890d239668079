"""torchlike.testing against torch.testing: the same inputs pass or fail with the same error type and message."""
import numpy as np
import pytest
import torch

import torchlike
from torchlike.testing import assert_close, make_tensor

F32 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
F64 = np.array([[1.0, 2.0], [3.0, 0.0]])
I64 = np.array([1, 2, 3, 0])


def _convert(m, x):
    """Tensors of module ``m`` from NumPy arrays inside (nested) inputs; everything else unchanged."""
    if isinstance(x, np.ndarray):
        return m.tensor(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_convert(m, v) for v in x)
    if isinstance(x, dict):
        return {k: _convert(m, v) for k, v in x.items()}
    return x


def _outcome(m, actual, expected, kw):
    try:
        m.testing.assert_close(_convert(m, actual), _convert(m, expected), **kw)
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return type(e), str(e).replace("torchlike.", "torch.")
    return None


CASES = {
    "equal": (F32, F32.copy(), {}),
    "close_within_default": (F32, F32 * (1 + 1e-7), {}),
    "f32_mismatch": (F32 + np.array([0, 0.5, 0, 1e-3], np.float32), F32, {}),
    "f64_mismatch_2d": (F64 + np.array([[0, 1e-6], [0, 2.0]]), F64, {}),
    "zero_expected_rel_inf": (F64 + 1.0, F64, {}),
    "int_mismatch": (I64 + np.array([0, 1, 0, 2]), I64, {}),
    "int_exact": (I64, I64.copy(), {}),
    "bool_mismatch": (np.array([True, False]), np.array([True, True]), {}),
    "custom_tol_pass": (F64 + 0.01, F64, {"rtol": 0, "atol": 0.02}),
    "custom_tol_fail": (F64 + 0.01, F64, {"rtol": 1e-3, "atol": 1e-3}),
    "exact_equality": (F64 + 1e-9, F64, {"rtol": 0, "atol": 0}),
    "only_rtol": (F64, F64, {"rtol": 1e-3}),
    "only_atol": (F64, F64, {"atol": 1e-3}),
    "nan_unequal": (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), {}),
    "nan_equal": (np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), {"equal_nan": True}),
    "inf": (np.array([np.inf, 1.0]), np.array([np.inf, 1.0]), {}),
    "inf_sign": (np.array([np.inf, 1.0]), np.array([-np.inf, 1.0]), {}),
    "shape": (F32, F32[:3], {}),
    "dtype": (F32, F32.astype(np.float64), {}),
    "dtype_unchecked": (F32, F32.astype(np.float64), {"check_dtype": False}),
    "dtype_unchecked_fail": (F32 + 1, F32.astype(np.float64), {"check_dtype": False}),
    "zero_dim": (np.array(1.5), np.array(1.0), {}),
    "numbers_close": (1.0, 1.0 + 1e-9, {}),
    "numbers_far": (1.0, 1.5, {}),
    "numbers_zero": (1.0, 0.0, {}),
    "int_vs_float": (1, 1.0, {}),
    "int_vs_float_unchecked": (1, 1.0, {"check_dtype": False}),
    "ints": (3, 4, {}),
    "bools": (True, False, {}),
    "none": (None, 1.0, {}),
    "nones": (None, None, {}),
    "list": ([F32, 1.0], [F32, 2.0], {}),
    "list_length": ([F32], [F32, F32], {}),
    "nested_item": ([F32, [F32, F32 + 1]], [F32, [F32, F32]], {}),
    "dict": ({"a": F32, "b": F64}, {"a": F32, "b": F64 * 2}, {}),
    "dict_keys": ({"a": F32, "c": F32}, {"a": F32, "b": F32}, {}),
    "msg_str": (F32 + 1, F32, {"msg": "custom"}),
    "msg_callable": (F32 + 1, F32, {"msg": lambda m: f"Header\n\n{m}\n\nFooter"}),
    "msg_callable_item": ([F32 + 1], [F32], {"msg": lambda m: m.upper()}),
    "tol_error_in_list": ([1.0, 2.0], [1.0, 3.0], {"rtol": 0.1}),
    "stride_same": (F64, F64.copy(), {"check_stride": True}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_same_outcome_as_torch(name):
    actual, expected, kw = CASES[name]
    want = _outcome(torch, actual, expected, kw)
    got = _outcome(torchlike, actual, expected, kw)
    assert got == want


def test_unsupported_types():
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type <class 'torchlike"):
        assert_close(torchlike.tensor([1.0]), [1.0])
    with pytest.raises(TypeError, match="No comparison pair was able to handle inputs of type <class 'str'>"):
        assert_close("a", "a")


def test_stride_mismatch():
    x = torchlike.tensor(F64)
    with pytest.raises(AssertionError, match=r"The values for attribute 'stride\(\)' do not match: \(1, 2\) != \(2, 1\)."):
        assert_close(x.t().contiguous().t(), x.contiguous(), check_stride=True)


def test_numpy_arrays_compare_as_tensors():
    want = _outcome(torch, F64, F64 + np.array([[0, 0], [0, 1.0]]), {})
    try:
        assert_close(F64, F64 + np.array([[0, 0], [0, 1.0]]))
    except AssertionError as e:
        assert str(e) == want[1]
    else:
        pytest.fail("no error")


@pytest.mark.parametrize("dtype,lo,hi", [("float32", -9, 9), ("float64", -9, 9), ("int64", -9, 10), ("bool", 0, 2)])
def test_make_tensor_defaults(dtype, lo, hi):
    t = make_tensor(50, 4, dtype=getattr(torchlike, dtype), device="cpu")
    v = t.numpy()
    assert t.shape == (50, 4) and t.dtype == getattr(torchlike, dtype)
    assert v.min() >= lo and v.max() < hi and len(np.unique(v)) > 1


def test_make_tensor_options():
    t = make_tensor((3, 2), dtype=torchlike.float64, device="cpu", low=0, high=1, requires_grad=True)
    assert t.requires_grad and t.is_leaf and 0 <= t.detach().numpy().min() and t.detach().numpy().max() < 1
    z = make_tensor(200, dtype=torchlike.int64, device="cpu", low=-1, high=2, exclude_zero=True)
    assert 0 not in z.numpy() and set(np.unique(z.numpy())) <= {-1, 1}
    c = make_tensor(3, dtype=torchlike.complex128, device="cpu")
    assert c.dtype == torchlike.complex128


@pytest.mark.parametrize("kw", [dict(dtype="int64", requires_grad=True), dict(dtype="float32", low=2, high=1),
                                dict(dtype="float32", low=float("nan")), dict(dtype="uint8", low=-5, high=-1)])
def test_make_tensor_errors_as_torch(kw):
    kw = dict(kw)
    name = kw.pop("dtype")
    with pytest.raises(ValueError) as want:
        torch.testing.make_tensor(3, dtype=getattr(torch, name), device="cpu", **kw)
    with pytest.raises(ValueError) as got:
        make_tensor(3, dtype=getattr(torchlike, name), device="cpu", **kw)
    assert str(got.value).replace("torchlike.", "torch.") == str(want.value)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "complex64", "complex128", "int8", "uint8",
                                   "int64", "bool"])
def test_messages_per_dtype_as_torch(dtype):
    rng = np.random.RandomState(1)
    for _ in range(3):
        a, e = rng.randn(5) * 3, rng.randn(5) * 3
        if dtype.startswith("complex"):
            a, e = a + 1j * rng.randn(5), e + 1j * rng.randn(5)
        if dtype == "uint8":
            a, e = np.abs(a), np.abs(e)
        if dtype == "bool":
            a, e = (a > 0).astype(float), (e > 0).astype(float)
        want, got = (_outcome(m, m.tensor(a).to(getattr(m, dtype)), m.tensor(e).to(getattr(m, dtype)), {})
                     for m in (torch, torchlike))
        assert want is not None and got == want
