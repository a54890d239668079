"""Creation functions, random numbers and dtype/device casts, checked against torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same, graph


def _outcome(fn, mod):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", fn(mod)
    except Exception as e:  # noqa: BLE001 - the exception itself is what we compare
        return "err", type(e).__name__, str(e)


def _cmp(ours, theirs):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, tl.Tensor), ours
        if theirs.dtype == torch.bfloat16:
            assert ours.dtype is tl.bfloat16
            ours, theirs = ours.detach().float(), theirs.detach().float()
        assert_same(ours, theirs, rtol=0, atol=0)
        assert ours.requires_grad == theirs.requires_grad
        assert (ours.grad_fn is None) == (theirs.grad_fn is None)
    elif isinstance(theirs, torch.Size):
        assert isinstance(ours, tl.Size) and ours == theirs
    elif isinstance(theirs, torch.dtype):
        assert repr(ours) == repr(theirs).replace("torch.", "torchlike.")
    elif isinstance(theirs, (tuple, list)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _cmp(a, b)
    else:
        assert type(ours) is type(theirs) and ours == theirs, (ours, theirs)


def same(fn, prefix=None):
    """fn(torch) and fn(torchlike) agree: equal results, or the same exception type and message (or its first
    ``prefix`` characters)."""
    theirs, ours = _outcome(fn, torch), _outcome(fn, tl)
    if theirs[0] == "err":
        assert ours[0] == "err", f"torch raised {theirs[1:]}, torchlike returned {ours[1]!r}"
        assert ours[1] == theirs[1], (ours, theirs)
        assert ours[2].replace("torchlike.", "torch.")[:prefix] == theirs[2][:prefix], (ours, theirs)
    else:
        assert ours[0] == "ok", f"torchlike raised {ours[1:]}, torch returned {theirs[1]!r}"
        _cmp(ours[1], theirs[1])


# ----- torch.tensor ---------------------------------------------------------------------------------------
TENSOR_DATA = {
    "floats": lambda T: T.tensor([1., 2.]),
    "ints": lambda T: T.tensor([1, 2]),
    "bools": lambda T: T.tensor([True, False]),
    "complex": lambda T: T.tensor([1 + 2j]),
    "nested_mixed": lambda T: T.tensor([[1, 2.], [3, 4]]),
    "int_and_bool": lambda T: T.tensor([1, True]),
    "int_and_complex": lambda T: T.tensor([1, 2j]),
    "scalar_int": lambda T: T.tensor(3),
    "scalar_float": lambda T: T.tensor(3.5),
    "empty": lambda T: T.tensor([]),
    "empty_nested": lambda T: T.tensor([[], []]),
    "ragged_empty": lambda T: T.tensor([[], [1]]),
    "tuple_and_range": lambda T: T.tensor((range(3), (4, 5, 6))),
    "np_int32": lambda T: T.tensor(np.array([1, 2], np.int32)),
    "np_float64": lambda T: T.tensor(np.array([1., 2.])),
    "np_scalar_f64": lambda T: T.tensor(np.float64(2.0)),
    "np_scalar_f32": lambda T: T.tensor(np.float32(2.0)),
    "np_scalar_i16": lambda T: T.tensor(np.int16(2)),
    "np_bool": lambda T: T.tensor(np.bool_(True)),
    "list_of_np_arrays": lambda T: T.tensor([np.array([1, 2], np.int32), np.array([3, 4], np.int32)]),
    "list_np_f64_and_int": lambda T: T.tensor([np.float64(1.5), 2]),
    "list_np_f32_and_float": lambda T: T.tensor([np.float32(1.5), 2.]),
    "list_np_i32_and_int": lambda T: T.tensor([np.int32(1), 2]),
    "list_np_f16_and_int": lambda T: T.tensor([np.float16(1), 2]),
    "list_bool_and_u8": lambda T: T.tensor([True, np.uint8(3)]),
    "list_of_0d_float": lambda T: T.tensor([T.tensor(1.), T.tensor(2.)]),
    "list_of_0d_int": lambda T: T.tensor([T.tensor(1), T.tensor(2)]),
    "list_of_0d_f64": lambda T: T.tensor([T.tensor(1.5, dtype=T.float64), T.tensor(2.)]),
    "list_of_0d_i32_and_int": lambda T: T.tensor([T.tensor(1, dtype=T.int32), 2]),
    "list_of_1elem": lambda T: T.tensor([T.tensor([1.])]),
    "list_of_0d_requires_grad": lambda T: T.tensor([T.tensor(1.5, requires_grad=True), 2.]),
    "from_tensor": lambda T: T.tensor(T.tensor([1.5], requires_grad=True)),
    "dtype_given": lambda T: T.tensor([1, 2], dtype=T.float64),
    "float_to_int_truncates": lambda T: T.tensor([1.7, -2.7], dtype=T.int64),
    "float_to_bool": lambda T: T.tensor([[1.5, 0.]], dtype=T.bool),
    "scalar_to_int32": lambda T: T.tensor(2.5, dtype=T.int32),
    "uint8_wraps": lambda T: T.tensor([-1, -200], dtype=T.uint8),
    "int64_min": lambda T: T.tensor(-2 ** 63),
    "big_int_to_float": lambda T: T.tensor([2 ** 62, 1.0]),
    "float_overflow_inf": lambda T: T.tensor([1e40, 1.]),
    "float16_overflow_inf": lambda T: T.tensor([1e300], dtype=T.float16),
    "requires_grad": lambda T: T.tensor([1., 2.], requires_grad=True),
    "requires_grad_complex": lambda T: T.tensor([1j], requires_grad=True),
    # errors
    "err_ragged": lambda T: T.tensor([[1, 2], [3]]),
    "err_ragged_deep": lambda T: T.tensor([[[1, 2]], [[3]]]),
    "err_not_a_sequence": lambda T: T.tensor([[1, 2], 3]),
    "err_list_as_int": lambda T: T.tensor([1, [2, 3]]),
    "err_str": lambda T: T.tensor("abc"),
    "err_list_of_str": lambda T: T.tensor(["a"]),
    "err_none": lambda T: T.tensor([1, None]),
    "err_object": lambda T: T.tensor(object()),
    "err_dict": lambda T: T.tensor({1: 2}),
    "err_multi_elem_tensor": lambda T: T.tensor([T.tensor([1., 2.]), T.tensor([3., 4.])]),
    "err_int64_overflow": lambda T: T.tensor(2 ** 63),
    "err_int64_overflow_list": lambda T: T.tensor([2 ** 64]),
    "err_uint8_overflow": lambda T: T.tensor([300], dtype=T.uint8),
    "err_uint8_negative_overflow": lambda T: T.tensor([-300], dtype=T.uint8),
    "err_int32_overflow": lambda T: T.tensor([1e10], dtype=T.int32),
    "err_nan_to_int": lambda T: T.tensor([float("nan")], dtype=T.int32),
    "err_complex_to_float": lambda T: T.tensor([2.5 + 1j], dtype=T.float32),
    "err_int_requires_grad": lambda T: T.tensor([1, 2], requires_grad=True),
    "err_np_str": lambda T: T.tensor(np.array(["a"])),
    "err_np_object": lambda T: T.tensor(np.array([1], dtype=object)),
}


@pytest.mark.parametrize("name", list(TENSOR_DATA))
def test_tensor(name):
    # torchlike's list of supported NumPy dtypes differs (no uint16/32/64, plus bfloat16)
    same(TENSOR_DATA[name], prefix=text_len("The only supported types are:") if name.startswith("err_np") else None)


def text_len(marker):
    return None if marker is None else len("can't convert np.ndarray of type numpy.str_. ") + len(marker) - 2


def test_tensor_keeps_numpy_and_jax_dtype():
    import jax.numpy as jnp
    for np_dtype in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.bool_,
                     np.complex64, np.complex128):
        a = np.ones((2, 3), np_dtype)
        assert_same(tl.tensor(a), torch.tensor(a))
        assert tl.tensor(jnp.asarray(a)).dtype is tl.tensor(a).dtype
        assert tl.from_numpy(a).dtype is tl.tensor(a).dtype


def test_tensor_copy_warns_and_detaches():
    x = tl.tensor([1.5], requires_grad=True)
    with pytest.warns(UserWarning, match=r"rather than torch.tensor\(sourceTensor\)"):
        y = tl.tensor(x)
    assert not y.requires_grad and y.is_leaf


def test_default_dtype_and_inference():
    try:
        for T in (torch, tl):
            T.set_default_dtype(T.float64)
        for fn in (lambda T: T.tensor([1.]), lambda T: T.tensor([1j]), lambda T: T.zeros(1), lambda T: T.arange(1.),
                   lambda T: T.full((1,), 1.), lambda T: T.linspace(0, 1, 3), lambda T: T.get_default_dtype()):
            same(fn)
        for T in (torch, tl):
            T.set_default_dtype(T.bfloat16)
        same(lambda T: T.tensor([1.5]))
        same(lambda T: T.tensor([1j]))  # torch: invalid default scalar type for complex
    finally:
        for T in (torch, tl):
            T.set_default_dtype(T.float32)
    same(lambda T: T.set_default_dtype(T.int64))
    same(lambda T: T.set_default_dtype(T.complex64))


def test_as_tensor_and_from_numpy():
    same(lambda T: T.as_tensor([1, 2]))
    same(lambda T: T.as_tensor(np.array([1., 2.])))
    same(lambda T: T.as_tensor(np.array([1., 2.]), dtype=T.float32))
    same(lambda T: T.as_tensor([1, 2], dtype=T.float64))
    same(lambda T: T.as_tensor(3.5))
    same(lambda T: T.from_numpy(np.array([1, 2], np.int16)))
    same(lambda T: T.from_numpy(np.array(3.5)))
    same(lambda T: T.from_numpy([1, 2]))
    x = tl.tensor([1., 2.], requires_grad=True)
    assert tl.as_tensor(x) is x and tl.as_tensor(x, dtype=tl.float32) is x
    y = tl.as_tensor(x, dtype=tl.float64)
    assert y.grad_fn.name() == "ToCopyBackward0" and y.dtype is tl.float64


# ----- filled tensors --------------------------------------------------------------------------------------
FACTORIES = {
    "zeros_varargs": lambda T: T.zeros(2, 3),
    "zeros_tuple": lambda T: T.zeros((2, 3)),
    "zeros_list": lambda T: T.zeros([2, 3]),
    "zeros_size_kw": lambda T: T.zeros(size=(2,)),
    "zeros_size_obj": lambda T: T.zeros(T.Size([2, 3])),
    "zeros_0d": lambda T: T.zeros(()),
    "zeros_int32": lambda T: T.zeros(2, 3, dtype=T.int32),
    "zeros_np_int": lambda T: T.zeros(np.int64(2)),
    "zeros_int_tensor": lambda T: T.zeros(T.tensor(2), 3),
    "zeros_dtype_float_is_double": lambda T: T.zeros(2, dtype=float),
    "zeros_dtype_int": lambda T: T.zeros(2, dtype=int),
    "zeros_dtype_bool": lambda T: T.zeros(2, dtype=bool),
    "ones_bool": lambda T: T.ones(2, dtype=T.bool),
    "ones_complex_rg": lambda T: T.ones(2, dtype=T.complex64, requires_grad=True),
    "empty_shape": lambda T: T.empty(2, 0),
    "zeros_rg_f64": lambda T: T.zeros((2,), dtype=T.float64, device="cpu", requires_grad=True),
    "full_int": lambda T: T.full((2,), 1),
    "full_float": lambda T: T.full((2,), 1.),
    "full_bool": lambda T: T.full((2,), True),
    "full_complex": lambda T: T.full((2,), 1 + 1j),
    "full_dtype": lambda T: T.full((2,), 1, dtype=T.float64),
    "full_list": lambda T: T.full([2, 2], 3.5),
    "full_0d_tensor": lambda T: T.full((2,), T.tensor(3)),
    "full_0d_f64_tensor": lambda T: T.full((2,), T.tensor(1.5, dtype=T.float64)),
    "full_np_scalar": lambda T: T.full((2,), np.float64(1.5)),
    "full_truncates": lambda T: T.full((2,), 1.5, dtype=T.int64),
    "full_uint8_wraps": lambda T: T.full((1,), -1, dtype=T.uint8),
    "full_float16_inf": lambda T: T.full((1,), 1e5, dtype=T.float16),
    "full_bool_from_float": lambda T: T.full((1,), 2.5, dtype=T.bool),
    "eye": lambda T: T.eye(3),
    "eye_rect": lambda T: T.eye(2, 3),
    "eye_int": lambda T: T.eye(3, dtype=T.int64),
    "eye_bool": lambda T: T.eye(2, dtype=T.bool),
    "eye_empty": lambda T: T.eye(0),
    "eye_rg": lambda T: T.eye(2, 3, requires_grad=True),
    # errors
    "err_zeros_no_size": lambda T: T.zeros(),
    "err_zeros_float": lambda T: T.zeros(2.5),
    "err_zeros_float_in_tuple": lambda T: T.zeros((2, 2.5)),
    "err_zeros_float_vararg": lambda T: T.zeros(2, 2.5),
    "err_zeros_none": lambda T: T.zeros(None),
    "err_zeros_bool": lambda T: T.zeros(True),
    "err_zeros_float_tensor": lambda T: T.zeros(T.tensor(2.)),
    "err_zeros_two_tuples": lambda T: T.zeros((2,), (3,)),
    "err_zeros_list_and_int": lambda T: T.zeros([2], 3),
    "err_ones_size_kw_int": lambda T: T.ones(size=2),
    "err_negative": lambda T: T.ones(2, -3),
    "err_int_requires_grad": lambda T: T.zeros(2, dtype=T.int64, requires_grad=True),
    "err_full_int_size": lambda T: T.full(2, 3.5),
    "err_full_none": lambda T: T.full((2,), None),
    "err_full_str": lambda T: T.full((2,), "a"),
    "err_full_1d_tensor": lambda T: T.full((2,), T.tensor([1.5])),
    "err_full_uint8": lambda T: T.full((2,), 300, dtype=T.uint8),
    "err_full_int64": lambda T: T.full((2,), 2 ** 63),
    "err_full_int8": lambda T: T.full((1,), 2 ** 62, dtype=T.int8),
    "err_full_int32": lambda T: T.full((1,), 2 ** 62, dtype=T.int32),
    "err_full_nan_int": lambda T: T.full((1,), float("nan"), dtype=T.int32),
    "err_full_complex_to_float": lambda T: T.full((2,), 1.5j, dtype=T.float32),
    "err_full_complex_to_double": lambda T: T.full((2,), 1.5j, dtype=T.float64),
    "err_eye_neg": lambda T: T.eye(-1),
    "err_eye_neg_m": lambda T: T.eye(2, -1),
    "err_eye_float": lambda T: T.eye(2.5),
}


@pytest.mark.parametrize("name", list(FACTORIES))
def test_factories(name):
    same(FACTORIES[name])


LIKE = {
    "zeros_like_int": lambda T: T.zeros_like(T.tensor([1, 2])),
    "ones_like_dtype": lambda T: T.ones_like(T.tensor([1., 2.]), dtype=T.float64),
    "full_like_int_truncates": lambda T: T.full_like(T.tensor([1, 2]), 2.7),
    "full_like_float": lambda T: T.full_like(T.tensor([1., 2.]), 7),
    "empty_like_shape": lambda T: T.empty_like(T.tensor([[1, 2]])).shape,
    "zeros_like_no_grad": lambda T: T.zeros_like(T.tensor([1., 2.], requires_grad=True)),
    "zeros_like_rg": lambda T: T.zeros_like(T.tensor([1., 2.]), requires_grad=True),
    "ones_like_rg_int": lambda T: T.ones_like(T.tensor([1, 2]), requires_grad=True),
    "new_zeros": lambda T: T.zeros(2, 3).new_zeros(2),
    "new_zeros_tuple": lambda T: T.zeros(2, 3, dtype=T.int32).new_zeros((2, 3)),
    "new_ones_dtype": lambda T: T.tensor([1.5]).new_ones(2, dtype=T.int32),
    "new_full": lambda T: T.zeros(2, 3, dtype=T.int32).new_full((2,), 3.5),
    "new_tensor": lambda T: T.zeros(2, 3, dtype=T.int32).new_tensor([1.5, 2]),
    "new_tensor_from_tensor": lambda T: T.tensor([1.5]).new_tensor(T.tensor([1, 2])),
    "new_tensor_rg": lambda T: T.tensor([1.5], requires_grad=True).new_tensor([1, 2], requires_grad=True),
    "new_empty": lambda T: T.zeros(2, dtype=T.int32).new_empty((2,)).dtype,
    "new_data": lambda T: T.tensor([1.5]).new([1, 2]),
    "new_sizes": lambda T: T.tensor([1.5]).new(2, 3).shape,
    "new_nothing": lambda T: T.tensor([1.5]).new().shape,
    "err_new_full_int_size": lambda T: T.tensor([1.5]).new_full(2, 3),
    "Tensor_data": lambda T: T.Tensor([1, 2]),
    "Tensor_sizes": lambda T: T.Tensor(2, 3).shape,
    "Tensor_empty": lambda T: T.Tensor(),
}


@pytest.mark.parametrize("name", list(LIKE))
def test_like_and_new(name):
    same(LIKE[name])


# ----- ranges ------------------------------------------------------------------------------------------------
RANGE_DTYPES = [None, "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16"]


def _same_range(fn):
    """Bitwise equality (bfloat16 compared through float32), or the same error."""
    theirs, ours = _outcome(fn, torch), _outcome(fn, tl)
    if theirs[0] == "err":
        assert ours[0] == "err" and ours[1:] == theirs[1:], (ours, theirs)
        return
    assert ours[0] == "ok", ours
    a, b = theirs[1], ours[1]
    assert repr(b.dtype) == repr(a.dtype).replace("torch.", "torchlike.")
    if a.dtype == torch.bfloat16:
        a, b = a.float(), b.float()
    np.testing.assert_array_equal(np.asarray(b._data), a.numpy())


@pytest.mark.parametrize("args", [(5,), (5.,), (1, 4), (0, 1, 0.25), (5, 0, -1), (5, 0, -1.5), (0, 1, 0.1),
                                  (1, 2.5, 0.5), (0, 100, 0.1), (-3, 7, 0.37), (5, -5, -0.3), (0.001, 1, 0.001),
                                  (0, 10, 3.3), (-0.5, 3), (0, 2.5, 0.5), (3, 100, 7), (100, -3, -7), (0, 0),
                                  (0, -3), (0, 5, 0), (0, 5, -1), (0, float("inf")), (0, float("nan")), (True,),
                                  (3j,)], ids=str)
@pytest.mark.parametrize("dtype", RANGE_DTYPES)
def test_arange(args, dtype):
    _same_range(lambda T: T.arange(*args, **({} if dtype is None else {"dtype": getattr(T, dtype)})))


def test_arange_misc():
    same(lambda T: T.arange(T.tensor(3)))
    same(lambda T: T.arange(np.float32(3)))
    same(lambda T: T.arange(start=1, end=4))
    same(lambda T: T.arange(0., 3, requires_grad=True))
    same(lambda T: T.arange(0, 3, requires_grad=True))
    same(lambda T: T.arange(10, dtype=T.uint8))
    same(lambda T: T.arange(10 ** 10, 10 ** 10 + 3, dtype=T.float32))


@pytest.mark.parametrize("args", [(0, 1, 5), (-1, 1, 7), (0, 1, 100), (3, -2.5, 33), (0, 10, 5), (1, 1, 4),
                                  (0, 1, 1), (0, 1, 0), (-7, 13, 9), (0, 1e-3, 1000), (0, 1, -1), (0j, 1 + 1j, 5),
                                  (1 + 2j, -3 + 0.5j, 77)], ids=str)
@pytest.mark.parametrize("dtype", RANGE_DTYPES + ["complex64", "complex128"])
def test_linspace(args, dtype):
    _same_range(lambda T: T.linspace(*args, **({} if dtype is None else {"dtype": getattr(T, dtype)})))


def test_linspace_misc():
    same(lambda T: T.linspace(T.tensor(0.), T.tensor(1.), 3))
    same(lambda T: T.linspace(np.float64(0), 1, 3))
    same(lambda T: T.linspace(0, 1, 5, requires_grad=True))
    same(lambda T: T.linspace(0, 1, 5, dtype=T.int64, requires_grad=True))
    with pytest.raises(TypeError):
        tl.linspace(0, 1, 2.5)


# ----- random numbers ----------------------------------------------------------------------------------------
RANDOM = {
    "rand_shape": lambda T: T.rand(2, 3).shape,
    "rand_tuple": lambda T: T.rand((2, 3)).shape,
    "rand_f64": lambda T: T.rand(2, 3, dtype=T.float64).dtype,
    "rand_complex": lambda T: T.rand(2, dtype=T.complex64).dtype,
    "randn_complex": lambda T: T.randn(2, dtype=T.complex64).dtype,
    "rand_rg": lambda T: T.rand(2, 3, requires_grad=True).requires_grad,
    "randint_dtype": lambda T: T.randint(3, (2, 2)).dtype,
    "randint_shape": lambda T: T.randint(0, 3, (5,)).shape,
    "randint_size_kw": lambda T: T.randint(3, size=(2,)).shape,
    "randint_all_kw": lambda T: T.randint(low=1, high=3, size=(2,)).shape,
    "randint_high_kw": lambda T: T.randint(high=3, size=(2,)).shape,
    "randint_float_dtype": lambda T: T.randint(3, 10, (2,), dtype=T.float32).dtype,
    "randint_bool": lambda T: T.randint(0, 2, (3,), dtype=T.bool).dtype,
    "randperm_values": lambda T: sorted(T.randperm(5).tolist()),
    "randperm_dtype": lambda T: T.randperm(5, dtype=T.float32).dtype,
    "randperm_empty": lambda T: T.randperm(0),
    "randperm_rg": lambda T: T.randperm(3, dtype=T.float32, requires_grad=True).requires_grad,
    "rand_like": lambda T: T.rand_like(T.tensor([1., 2.])).shape,
    "randn_like_f64": lambda T: T.randn_like(T.tensor([1., 2.], dtype=T.float64)).dtype,
    "randint_like": lambda T: T.randint_like(T.tensor([1., 2.]), 5).dtype,
    "randint_like_low_high": lambda T: T.randint_like(T.tensor([1, 2]), 3, 5).dtype,
    "normal_size": lambda T: T.normal(2., 3., (2,)).dtype,
    "normal_size_dtype": lambda T: T.normal(2., 3., size=(2,), dtype=T.float64).dtype,
    "normal_tensors": lambda T: T.normal(T.zeros(2), T.ones(2)).shape,
    "normal_std_tensor": lambda T: T.normal(0., T.ones(2)).shape,
    "err_rand_int": lambda T: T.rand(2, dtype=T.int64),
    "err_rand_int32": lambda T: T.rand(2, dtype=T.int32),
    "err_rand_bool": lambda T: T.rand(2, dtype=T.bool),
    "err_randn_int": lambda T: T.randn(2, dtype=T.int64),
    "err_rand_like_int": lambda T: T.rand_like(T.tensor([1, 2])),
    "err_randint_rg": lambda T: T.randint(3, (2,), requires_grad=True),
    "err_randint_from_to": lambda T: T.randint(5, 3, (2,)),
    "err_randint_empty_range": lambda T: T.randint(3, 3, (2,)),
    "err_randint_bool_range": lambda T: T.randint(3, (2,), dtype=T.bool),
    "err_randint_uint8_range": lambda T: T.randint(0, 300, (2,), dtype=T.uint8),
    "err_randint_uint8_low": lambda T: T.randint(-1, 2, (2,), dtype=T.uint8),
    "err_randint_int32_range": lambda T: T.randint(0, 2 ** 40, (2,), dtype=T.int32),
    "err_randint_float_high": lambda T: T.randint(3.5, (2,)),
    "err_randint_int_size": lambda T: T.randint(3, 2),
    "err_randperm_negative": lambda T: T.randperm(-1),
    "err_randperm_rg": lambda T: T.randperm(3, requires_grad=True),
}


@pytest.mark.parametrize("name", list(RANDOM))
def test_random(name):
    same(RANDOM[name])


def test_random_values_and_seeds():
    tl.manual_seed(0)
    a = tl.rand(1000)
    tl.manual_seed(0)
    b = tl.rand(1000)
    tl.manual_seed(1)
    c = tl.rand(1000)
    assert tl.initial_seed() == 1
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    v = a.numpy()
    assert v.dtype == np.float32 and v.min() >= 0 and v.max() < 1 and 0.4 < v.mean() < 0.6
    assert not np.array_equal(tl.rand(5).numpy(), tl.rand(5).numpy())  # the key advances
    n = tl.randn(4000, dtype=tl.float64).numpy()
    assert abs(n.mean()) < 0.1 and 0.9 < n.std() < 1.1
    z = tl.randn(4000, dtype=tl.complex64).numpy()
    assert 0.9 < np.mean(np.abs(z) ** 2) < 1.1  # torch: variance 1 split between the parts
    r = tl.randint(3, 10, (1000,)).numpy()
    assert r.min() == 3 and r.max() == 9
    assert sorted(tl.randperm(50).tolist()) == list(range(50))
    g = tl.Generator().manual_seed(5)
    assert g.initial_seed() == 5
    state = g.get_state()
    u = tl.rand(3, generator=g)
    g.set_state(state)
    np.testing.assert_array_equal(tl.rand(3, generator=g).numpy(), u.numpy())
    tl.manual_seed(2 ** 64 - 1)  # torch's full seed range is accepted
    assert isinstance(tl.manual_seed(0), tl.Generator)


def test_normal_graph():
    """torch.normal is not reparameterised: gradients w.r.t. mean and std are zero."""
    for T in (torch, tl):
        m = T.zeros(2, 3, requires_grad=True)
        s = T.ones(3, requires_grad=True)
        outs = [T.normal(m, 1.), T.normal(0., s), T.normal(m, s)]
        assert [o.grad_fn.name() for o in outs] == ["NormalBackward1", "NormalBackward2", "NormalBackward3"]
        assert outs[2].shape == (2, 3)
        assert tuple(outs[2].grad_fn._saved_std_sym_sizes) == (3,)
        sum(o.sum() for o in outs).backward()
        assert m.grad.abs().sum().item() == 0 and s.grad.abs().sum().item() == 0
        assert s.grad.shape == (3,)
    assert graph(tl.normal(tl.zeros(2, requires_grad=True), 1.)) == graph(
        torch.normal(torch.zeros(2, requires_grad=True), 1.))


# ----- requires_grad on factories vs the Tensor setter/method ---------------------------------------------------
def test_requires_grad_messages():
    same(lambda T: T.zeros(2, dtype=T.int64, requires_grad=True))  # "Only Tensors of floating point and complex"

    def setter(T):
        t = T.zeros(2, dtype=T.int64)
        t.requires_grad = True
    same(setter)  # "only Tensors of floating point and complex dtype can require gradients"
    same(lambda T: T.tensor([1, 2]).requires_grad_())  # "only Tensors of floating point dtype can require ..."
    same(lambda T: T.zeros(2, dtype=T.int64).requires_grad_(False))


# ----- casts -------------------------------------------------------------------------------------------------------
CASTS = {
    "to_f64": lambda T: T.tensor([1., 2.]).to(T.float64),
    "to_f64_rg": lambda T: T.tensor([1., 2.], requires_grad=True).to(T.float64),
    "to_same_rg": lambda T: T.tensor([1., 2.], requires_grad=True).to(T.float32),
    "to_copy": lambda T: T.tensor([1., 2.], requires_grad=True).to(T.float32, copy=True),
    "to_copy_positional": lambda T: T.tensor([1., 2.], requires_grad=True).to(T.float32, False, True),
    "to_int": lambda T: T.tensor([1.5, -2.5], requires_grad=True).to(T.int64),
    "to_device_str": lambda T: T.tensor([1.5, 2.], requires_grad=True).to("cpu"),
    "to_device_dtype": lambda T: T.tensor([1.5, 2.], requires_grad=True).to("cpu", T.float64),
    "to_device_dtype_copy": lambda T: T.tensor([1., 2.], requires_grad=True).to("cpu", T.float64, False, True),
    "to_kwargs": lambda T: T.tensor([1.5, 2.], requires_grad=True).to(device="cpu", dtype=T.float64),
    "to_other": lambda T: T.tensor([1.5, 2.]).to(T.tensor([1], dtype=T.int32)),
    "to_device_obj": lambda T: T.tensor([1.5, 2.]).to(T.device("cpu")),
    "to_cpu0": lambda T: T.tensor([1.5, 2.]).to("cpu:0"),
    "to_none": lambda T: T.tensor([1., 2.]).to(None),
    "to_nothing": lambda T: T.tensor([1., 2.]).to(),
    "err_to_np_type": lambda T: T.tensor([1., 2.]).to(np.float64),
    "to_py_int": lambda T: T.tensor([1.5, 2.]).to(int),
    "to_py_bool": lambda T: T.tensor([1.]).to(bool),
    "to_py_complex": lambda T: T.tensor([1.]).to(complex),
    "to_complex_rg": lambda T: T.tensor([1., 2.], requires_grad=True).to(T.complex64),
    "err_to_cuda": lambda T: T.tensor([1.5, 2.]).to("cuda"),
    "err_cuda": lambda T: T.tensor([1.5, 2.]).cuda(),
    "err_to_bad_device": lambda T: T.tensor([1.5, 2.]).to("foo"),
    "err_to_two_dtypes": lambda T: T.tensor([1., 2.]).to(T.float32, T.float64),
    "to_py_float": lambda T: T.tensor([1., 2.]).to(float),
    "err_to_unknown_kw": lambda T: T.tensor([1., 2.]).to(foo=1),
    "double": lambda T: T.tensor([1.5, 2.]).double(),
    "float": lambda T: T.tensor([1, 2]).float(),
    "half": lambda T: T.tensor([1.5, 2.]).half(),
    "bfloat16": lambda T: T.tensor([1.5, 2.]).bfloat16().float(),
    "long": lambda T: T.tensor([1.5, -2.]).long(),
    "int": lambda T: T.tensor([1.5, 2.]).int(),
    "short": lambda T: T.tensor([1.5, 2.]).short(),
    "char": lambda T: T.tensor([1.5, 2.]).char(),
    "byte": lambda T: T.tensor([1.5, 2.]).byte(),
    "bool": lambda T: T.tensor([1.5, 0.]).bool(),
    "cfloat": lambda T: T.tensor([1, 2]).cfloat(),
    "cdouble": lambda T: T.tensor([1., 2.]).cdouble(),
    "cpu": lambda T: T.tensor([1.5, 2.], requires_grad=True).cpu(),
    "type_string": lambda T: T.tensor([1.5, 2.]).type(),
    "type_strings": lambda T: [T.zeros(1, dtype=d).type() for d in (T.float16, T.bfloat16, T.float64, T.int8,
                                                                     T.int16, T.int32, T.int64, T.uint8, T.bool,
                                                                     T.complex64, T.complex128)],
    "type_dtype": lambda T: T.tensor([1.5, 2.]).type(T.float64),
    "type_legacy_name": lambda T: T.tensor([1.5, 2.]).type("torch.DoubleTensor"),
    "type_rg": lambda T: T.tensor([1.5, 2.], requires_grad=True).type(T.float64),
    "err_type_bad": lambda T: T.tensor([1., 2.]).type("foo"),
    "type_as": lambda T: T.tensor([1.5, 2.], requires_grad=True).type_as(T.tensor([1], dtype=T.float64)),
}


@pytest.mark.parametrize("name", list(CASTS))
def test_casts(name):
    same(CASTS[name])


def test_to_returns_self_when_nothing_changes():
    x = tl.tensor([1., 2.], requires_grad=True)
    for y in (x.to(tl.float32), x.to("cpu"), x.to(x), x.float(), x.type(tl.float32), x.cpu(), x.to(None),
              x.to(tl.device("cpu"), tl.float32)):
        assert y is x
    assert x.to(copy=True) is not x


@pytest.mark.parametrize("src,dst", [("float32", "float64"), ("float64", "float32"), ("float32", "float16"),
                                     ("float32", "complex64"), ("complex64", "float32")])
def test_to_backward(src, dst):
    a = np.array([[1.5, -2.], [0.25, 3.]], dtype=src)
    results = []
    for T in (torch, tl):
        x = T.tensor(a, requires_grad=True)
        y = x.to(getattr(T, dst))
        assert y.grad_fn.name() == "ToCopyBackward0"
        assert [n for n in dir(y.grad_fn) if n.startswith("_saved_")] == []
        (y * y).abs().sum().backward() if y.is_complex() else (y * y).sum().backward()
        assert x.grad.dtype == x.dtype
        results.append((x.grad, graph(y)))
    assert_same(results[1][0], results[0][0], rtol=1e-3)
    assert results[1][1] == results[0][1]
