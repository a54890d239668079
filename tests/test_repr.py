"""repr of tensors: character for character torch 2.13's, except dtypes print as ``torchlike.<name>``."""
import numpy as np
import pytest
import torch

import torchlike as tl
import torchlike._tensor_str as tl_str

_BF16 = "bf16"  # marker: build the tensor in float32, then cast both to bfloat16


def _expected(t):
    return repr(t).replace("torch.", "torchlike.")


def _pair(a):
    if isinstance(a, tuple) and a[0] == _BF16:
        a = np.asarray(a[1], np.float32)
        return tl.tensor(a).to(tl.bfloat16), torch.tensor(a).to(torch.bfloat16)
    a = np.asarray(a)
    return tl.tensor(a), torch.tensor(a)


def _check(a):
    ours, theirs = _pair(a)
    assert repr(ours) == _expected(theirs)
    assert str(ours) == repr(ours)


_rng = np.random.default_rng(0)
_f32 = np.float32
CASES = {
    "int_mode": np.array([1., 2.], _f32),
    "fixed": np.array([1.5, 2.25], _f32),
    "0d": np.array(3., _f32),
    "0d_zero": np.array(0., _f32),
    "0d_nan": np.array(np.nan, _f32),
    "neg_zero": np.array([-0., 0.], _f32),
    "0d_neg_zero": np.array(-0., _f32),
    "tiny": np.array([1e-5, 1.], _f32),
    "ratio_sci": np.array([1., 1e5], _f32),
    "ratio_edge": np.array([1., 1000.], _f32),
    "ratio_over": np.array([1., 1001.], _f32),
    "big_sci": np.array([1., 2e8], _f32),
    "huge": np.array([3e38, -3e38], _f32),
    "nonfinite": np.array([np.nan, np.inf, -np.inf], _f32),
    "int_and_nan": np.array([1., np.nan], _f32),
    "fixed_and_inf": np.array([1.5, np.inf, -2.], _f32),
    "sci_and_nan": np.array([1e-5, np.nan, 3.], _f32),
    "negative_2d": np.array([[1., -2.], [3., 4.]], _f32),
    "randn_3x4": _rng.standard_normal((3, 4)).astype(_f32),
    "randn_2x3x4_f64": _rng.standard_normal((2, 3, 4)),
    "4d": _rng.standard_normal((2, 2, 2, 3)).astype(_f32),
    "wrap_30": _rng.standard_normal(30).astype(_f32),
    "wrap_fixed_big": _rng.standard_normal(200).astype(_f32) * 100,
    "summarised_1d": _rng.standard_normal(1001).astype(_f32),
    "summarised_2d": _rng.standard_normal((40, 40)).astype(_f32),
    "summarised_3d": _rng.standard_normal((10, 11, 12)),
    "summarised_int": np.arange(2000),
    "summarised_rows": np.full((3, 1001), 2., _f32),
    "summarised_sci_f64": _rng.standard_normal((50, 30)) * 1e6,
    "summarised_7x7x30": _rng.standard_normal((7, 7, 30)).astype(_f32),
    "mixed_magnitude": np.array([123456.789, 0.5]),
    "just_below_sci": np.array([99999.9, 1.]),
    "min_1e-4": np.array([1e-4, 1.]),
    "double_extremes": np.array([1e300, 1e-300]),
    "int32": np.array([1, 2, 3], np.int32),
    "int64_2d": np.array([[1, -20], [300, 4]]),
    "int64_big": _rng.integers(-10 ** 12, 10 ** 12, 20),
    "uint8": np.array([1, 255], np.uint8),
    "bool": np.array([True, False]),
    "bool_0d": np.array(True),
    "int_0d": np.array(5),
    "int32_0d": np.array(5, np.int32),
    "empty_2x0": np.zeros((2, 0), _f32),
    "empty_1d": np.zeros((0,), _f32),
    "empty_int": np.zeros((0,), np.int64),
    "empty_3d_f64": np.zeros((2, 0, 3)),
    "empty_bool": np.zeros(0, bool),
    "empty_int32_2d": np.zeros((3, 0), np.int32),
    "complex_int_mode": np.array([1 + 2j, 3 - 1j], np.complex64),
    "complex_fixed": np.array([1.5 + 2j, -3 - 0.25j], np.complex64),
    "complex_0d": np.array(1 + 1j, np.complex64),
    "complex128_2d": (_rng.standard_normal((3, 3)) + 1j * _rng.standard_normal((3, 3))),
    "complex_zero_imag": np.array([0j, -0j, 1e-6 + 1e6j], np.complex64),
    "complex_summarised": (np.arange(1100) * (1 + 0.5j)).astype(np.complex64),
    "float16": np.array([1, 2.5], np.float16),
    "float16_2d": _rng.standard_normal((3, 4)).astype(np.float16),
    "float16_max": np.array([65504, 1], np.float16),
    "bf16": (_BF16, [1., 2.5, -3.]),
    "bf16_2d": (_BF16, _rng.standard_normal((3, 4))),
    "bf16_sci": (_BF16, [1e-6, 1., 1e10]),
    "linspace": np.linspace(-1, 1, 100),
    "one_row_of_12": np.arange(12).reshape(1, 12, 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_repr_matches_torch(name):
    _check(CASES[name])


def test_repr_random_fuzz():
    """Random shapes, dtypes and magnitudes, with specials sprinkled in."""
    rng = np.random.default_rng(1)
    kinds = ["f4", "f8", "f2", "i8", "i4", "u1", "b", "c8", "c16"]
    for _ in range(250):
        nd = rng.integers(0, 4)
        shape = tuple(rng.integers(0, 6 if nd > 1 else 15, nd))
        kind = kinds[rng.integers(len(kinds))]
        x = rng.standard_normal(shape) * 10.0 ** rng.integers(-9, 12)
        if rng.random() < 0.3:
            x = np.round(x)
        if rng.random() < 0.2 and x.size:
            x.flat[rng.integers(0, x.size)] = rng.choice([np.nan, np.inf, -np.inf, 0., -0.])
        with np.errstate(all="ignore"):
            if kind == "b":
                a = x > 0
            elif kind in ("i8", "i4", "u1"):
                lo, hi = (0, 255) if kind == "u1" else (-2 ** 31, 2 ** 31)
                a = np.nan_to_num(np.clip(np.round(x), lo, hi))
            elif kind[0] == "c":
                a = x + 1j * rng.standard_normal(shape) * 10.0 ** rng.integers(-6, 6)
            else:
                a = x
            _check(np.asarray(a).astype(kind))


def test_autograd_suffixes():
    a = np.array([1., 2.], np.float32)
    x, xt = tl.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    assert repr(x) == _expected(xt) == "tensor([1., 2.], requires_grad=True)"
    assert repr(x * 2) == _expected(xt * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(x.double() * 3) == _expected(xt.double() * 3)  # dtype before grad_fn
    assert repr(x.sum()) == _expected(xt.sum()) == "tensor(3., grad_fn=<SumBackward0>)"
    # suffixes wrap onto a new line at 80 columns, where torch wraps "dtype=torch.float64"
    w = np.linspace(0, 1, 24).reshape(2, 12)
    y, yt = tl.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
    assert repr(y) == _expected(yt)
    assert repr(y * 2) == _expected(yt * 2)
    big = np.linspace(-1e6, 1e6, 50).reshape(50, 1) @ np.ones((1, 30))
    z, zt = tl.tensor(big, requires_grad=True), torch.tensor(big, requires_grad=True)
    assert repr(z) == _expected(zt)
    e, et = tl.zeros(2, 0, dtype=tl.float64, requires_grad=True), torch.zeros(2, 0, dtype=torch.float64,
                                                                             requires_grad=True)
    assert repr(e) == _expected(et)


def test_format_and_size_repr():
    assert repr(tl.zeros(2, 3).shape) == repr(torch.zeros(2, 3).shape) == "torch.Size([2, 3])"
    assert f"{tl.tensor(2.5)}" == f"{torch.tensor(2.5)}" == "2.5"
    assert format(tl.tensor(2.5), ".2f") == "2.50"
    with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
        format(tl.tensor([2.5]), ".2f")
    assert f"{tl.tensor([1.5])}" == f"{torch.tensor([1.5])}"


PRINT_OPTIONS = [dict(precision=2), dict(linewidth=40), dict(edgeitems=1, threshold=10), dict(sci_mode=True),
                 dict(sci_mode=False), dict(profile="short"), dict(edgeitems=0, threshold=5),
                 dict(precision=8, linewidth=120), dict(threshold=20), dict(profile="full")]


@pytest.mark.parametrize("opts", PRINT_OPTIONS, ids=str)
def test_printoptions(opts):
    arrays = [np.arange(30.).reshape(5, 6) / 7, np.arange(40), _rng.standard_normal((3, 4, 5)),
              np.array([1e-6, 1.], _f32), np.array([1 + 2j, 3.5 - 1j] * 15, np.complex64), np.array(2.5),
              np.array([1., 2.], _f32), np.zeros((2, 0)), np.arange(1200.).reshape(30, 40)]
    try:
        torch.set_printoptions(**opts)
        tl_str.set_printoptions(**opts)
        for a in arrays:
            _check(a)
    finally:
        torch.set_printoptions(profile="default")
        tl_str.set_printoptions(profile="default")
    assert tl_str.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80,
                                         "sci_mode": None}


def test_printoptions_context_manager():
    with tl_str.printoptions(precision=1):
        assert repr(tl.tensor([1.25, 2.5])) == "tensor([1.2, 2.5])"
    assert repr(tl.tensor([1.25, 2.5])) == "tensor([1.2500, 2.5000])"


def test_default_dtype_float64():
    try:
        torch.set_default_dtype(torch.float64)
        tl.set_default_dtype(tl.float64)
        for a in [np.array([1., 2.], _f32), np.array([1., 2.]), np.array([1j], np.complex64), np.array([1j]),
                  np.zeros(0), np.zeros(0, _f32)]:
            _check(a)
    finally:
        torch.set_default_dtype(torch.float32)
        tl.set_default_dtype(tl.float32)


def test_repr_inside_jit():
    import jax

    def f(a):
        t = object.__new__(tl.Tensor)
        t._data = a
        assert repr(t) == "tensor(<traced float32[2]>)"
        return a
    jax.jit(f)(np.ones(2, _f32))
