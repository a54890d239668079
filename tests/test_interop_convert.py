"""interop conversions (torch oracle for values/dtypes/shapes; pointers for promised sharing) and GPU logic."""
import os
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
import torch

import torchlike as tl
from interop._convert import from_jax, from_numpy, from_torch, to_jax, to_numpy, to_torch
from interop._gpu import _LATE_WARNING, _configure_jax_memory, _gpu_backend_initialized

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
_rng = np.random.default_rng(0)


def _np_values(name, shape):
    """Random NumPy values of dtype ``name`` (bfloat16 through ml_dtypes), an ndarray even when 0-d."""
    return np.asarray(_values(name, shape))


def _values(name, shape):
    v = _rng.integers(-5, 6, size=shape)
    if name == "bool":
        return v > 0
    if name.startswith("complex"):
        return (v + 1j * _rng.integers(-5, 6, size=shape)).astype(name)
    if name == "uint8":
        return np.abs(v).astype(np.uint8)
    if name == "bfloat16":
        return (v / 4).astype(ml_dtypes.bfloat16)
    return (v / 4 if name.startswith("float") else v).astype(name)


def _torch(a):
    """A torch tensor with NumPy array ``a``'s values (bfloat16 via float32, which holds them exactly)."""
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(a).clone()  # torch's allocator: 64-byte aligned


def _as_np(x):
    """Values of a torch tensor / jax array as comparable NumPy (bfloat16 -> float32)."""
    if isinstance(x, torch.Tensor):
        return x.detach().float().numpy() if x.dtype == torch.bfloat16 else x.detach().resolve_conj().numpy()
    a = np.asarray(x)
    return a.astype(np.float32) if a.dtype == ml_dtypes.bfloat16 else a


def _name(dtype):
    return str(dtype).split(".")[-1]


def _check_same(tl_t, x):
    assert isinstance(tl_t, tl.Tensor)
    assert _name(tl_t.dtype) == _name(x.dtype)
    assert tuple(tl_t.shape) == tuple(x.shape)
    np.testing.assert_array_equal(_as_np(tl_t._data), _as_np(x))


def _strided(x, shape, strides):
    """``x``'s values in a fresh torch tensor with the given (possibly odd, for size-1 dims) strides."""
    y = torch.empty_strided(shape, strides, dtype=x.dtype)
    y.copy_(x.reshape(shape))
    return y


# (name, make(torch base of shape (2, 3, 4)), zero-copy promised)
LAYOUTS = [
    ("contiguous", lambda b: b, True),
    ("transposed", lambda b: b[0].t(), True),
    ("permuted", lambda b: b.permute(2, 0, 1), True),
    ("size1_strided", lambda b: _strided(b[:, :1, 0], (2, 1), (1, 7)), True),
    ("size1_strided_lead", lambda b: _strided(b[0, 0], (1, 4), (99, 1)), True),
    ("step_slice", lambda b: b[:, :, ::2], False),
    ("narrow_rows", lambda b: b[:, :, 1:3], False),
    ("expanded", lambda b: b[0, :1].expand(3, 4), False),
    ("misaligned_offset", lambda b: b.reshape(-1)[1:], False),
    ("zero_d", lambda b: b[1, 2, 3].clone(), True),
    ("empty", lambda b: b[:, :0], None),
    ("empty_transposed", lambda b: b[0, :0].t(), None),
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_from_torch_matrix(dtype):
    base = _torch(_np_values(dtype, (2, 3, 4)))
    for name, make, shares in LAYOUTS:
        x = make(base)
        for conv in (lambda x: from_torch(x), lambda x: from_jax(to_jax(x))):
            t = conv(x)
            _check_same(t, x)
            assert not t.requires_grad and t.grad_fn is None
            if shares is not None:
                assert (t._data.unsafe_buffer_pointer() == x.data_ptr()) == shares, (dtype, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_to_torch_matrix(dtype):
    a = _np_values(dtype, (2, 3))
    base = from_numpy(a)
    cases = [base, base.t(), base[:, 1], base[0, 2], from_numpy(a[:0]), from_numpy(_np_values(dtype, ()))]
    for t in cases:  # views convert their own values
        x = to_torch(t)
        _check_same(t, x)
        assert x.is_leaf and not x.requires_grad
        if x.numel():
            assert x.data_ptr() == t._data.unsafe_buffer_pointer()  # zero-copy, every dtype
        back = from_torch(x)  # round trip through DLPack shares the buffer too
        _check_same(back, x)
        if x.numel():
            assert back._data.unsafe_buffer_pointer() == t._data.unsafe_buffer_pointer()
    arr = to_jax(base)  # to_torch also takes a jax.Array
    assert to_torch(arr).data_ptr() == arr.unsafe_buffer_pointer()


@pytest.mark.parametrize("dtype", DTYPES)
def test_numpy_matrix(dtype):
    for a in (_np_values(dtype, (2, 3)), _np_values(dtype, ()), _np_values(dtype, (0, 3)),
              _np_values(dtype, (3, 4))[:, ::2]):
        t = from_numpy(a)
        assert _name(t.dtype) == dtype and tuple(t.shape) == a.shape
        np.testing.assert_array_equal(_as_np(t._data), _as_np(a))
        b = to_numpy(t)
        assert b.dtype == a.dtype and b.shape == a.shape
        np.testing.assert_array_equal(_as_np(b), _as_np(a))
        assert not b.flags.writeable  # a read-only view of JAX's buffer ...
        if a.size:
            assert b.ctypes.data == t._data.unsafe_buffer_pointer()  # ... zero-copy on CPU
    a = np.arange(6.0)
    t = from_numpy(a)
    assert t._data.unsafe_buffer_pointer() != a.ctypes.data  # from_numpy copies: later writes do not leak
    a[0] = 100.0
    assert float(to_numpy(t)[0]) == 0.0


def test_jax_torchlike_free_and_views():
    a = jnp.arange(6.0).reshape(2, 3)
    t = from_jax(a)
    assert t._data is a and to_jax(t) is a and t.is_leaf and t.grad_fn is None
    v = tl.arange(6.0).reshape(2, 3).t()[1:]
    np.testing.assert_array_equal(np.asarray(to_jax(v)), torch.arange(6.0).reshape(2, 3).t()[1:].numpy())
    # a view after an in-place change of its base holds the new values
    base = tl.zeros(2, 3)
    col = base[:, 1]
    base.add_(tl.ones(2, 3))
    np.testing.assert_array_equal(np.asarray(to_jax(col)), np.ones(2))


def test_requires_grad_keyword():
    t = from_jax(jnp.ones(3), requires_grad=True)
    assert t.requires_grad and t.is_leaf
    (t * 2).sum().backward()
    np.testing.assert_array_equal(np.asarray(t.grad._data), np.full(3, 2.0))
    t2 = from_numpy(np.ones(2), requires_grad=True)
    assert t2.requires_grad
    # torch input that requires grad: its values are taken (as t.detach())
    x = torch.ones(2, requires_grad=True) * 3
    y = from_torch(x)
    assert not y.requires_grad and from_torch(x, requires_grad=True).requires_grad
    np.testing.assert_array_equal(np.asarray(to_jax(y)), np.full(2, 3.0))
    # to_torch(requires_grad=True): a torch leaf whose gradients flow in torch
    z = to_torch(tl.ones(3), requires_grad=True)
    assert z.is_leaf and z.requires_grad
    (z * 5).sum().backward()
    np.testing.assert_array_equal(z.grad.numpy(), np.full(3, 5.0))
    # misuse: integer tensors cannot require grad (torch's error text)
    with pytest.raises(RuntimeError) as ref:
        torch.ones(2, dtype=torch.int64).requires_grad_()
    for make in (lambda: from_jax(jnp.ones(2, jnp.int32), requires_grad=True),
                 lambda: from_numpy(np.ones(2, np.int64), requires_grad=True),
                 lambda: from_torch(torch.ones(2, dtype=torch.int8), requires_grad=True)):
        with pytest.raises(RuntimeError) as got:
            make()
        assert str(got.value) == str(ref.value)


def test_lazy_conj_neg_bits_copied():
    x = torch.tensor([1 + 2j, 3 - 1j])
    for y in (x.conj(), torch._neg_view(x)):
        t = from_torch(y)
        np.testing.assert_array_equal(np.asarray(to_jax(t)), y.resolve_conj().resolve_neg().numpy())


def test_zero_copy_mutation_visible():
    # Sharing documented for from_torch: an in-place torch write shows in the JAX array (JAX assumes
    # immutability, so real code must not do this). Read the JAX side only after the write (JAX caches reads).
    x = torch.arange(6.0).reshape(2, 3)
    a = to_jax(x)
    x.mul_(10)
    np.testing.assert_array_equal(np.asarray(a), x.numpy())
    # and the other way: a torch tensor from to_torch aliases JAX's buffer
    t = from_numpy(np.arange(4.0))
    y = to_torch(t)
    y.add_(1)
    np.testing.assert_array_equal(np.asarray(t._data), np.arange(4.0) + 1)


def test_misuse_type_errors():
    for fn, bad in [(to_jax, np.ones(2)), (from_jax, np.ones(2)), (to_numpy, jnp.ones(2)),
                    (from_numpy, [1, 2]), (to_torch, np.ones(2)), (from_torch, tl.ones(2))]:
        with pytest.raises(TypeError, match=rf"{fn.__name__}\(\): expected"):
            fn(bad)
    # dtypes torchlike lacks: torch's from_numpy message
    with pytest.raises(TypeError) as ref:
        torch.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError) as got:
        from_numpy(np.array(["a"]))
    assert str(got.value).split(". The only")[0] == str(ref.value).split(". The only")[0]
    with pytest.raises(TypeError, match="numpy.uint32"):
        from_jax(jnp.ones(2, jnp.uint32))
    with pytest.raises(TypeError):
        from_jax(jnp.ones(2), True)  # requires_grad is keyword-only


# ----- GPU memory sharing (logic only: no GPU here) --------------------------------------------------------
def test_gpu_sets_preallocate_false_before_backend():
    env = {"PATH": "/bin"}
    assert _configure_jax_memory(env, backend_initialized=lambda: False) == "set"
    assert env["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"


@pytest.mark.parametrize("var,value", [("XLA_PYTHON_CLIENT_PREALLOCATE", "true"),
                                       ("XLA_PYTHON_CLIENT_MEM_FRACTION", ".5"),
                                       ("XLA_PYTHON_CLIENT_ALLOCATOR", "platform")])
def test_gpu_respects_user_settings(var, value):
    for initialised in (False, True):
        env = {var: value}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert _configure_jax_memory(env, backend_initialized=lambda: initialised) == "user"
        assert env == {var: value}


def test_gpu_warns_when_backend_already_preallocated():
    env = {}
    with pytest.warns(UserWarning) as rec:
        assert _configure_jax_memory(env, backend_initialized=lambda: True) == "warned"
    assert env == {}  # too late to change: left alone
    msg = str(rec[0].message)
    assert msg == _LATE_WARNING
    assert "XLA_PYTHON_CLIENT_PREALLOCATE=false" in msg and "before JAX first uses the GPU" in msg


def test_gpu_default_environ_and_real_probe(monkeypatch):
    jnp.ones(1).block_until_ready()  # CPU backend initialised here: the real probe must still say no GPU
    assert jax.default_backend() == "cpu" and _gpu_backend_initialized() is False
    for v in ("XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR"):
        monkeypatch.setenv(v, "x")  # records the original state, so teardown restores it ...
        monkeypatch.delenv(v)  # ... then the variable is absent, as for a user who set none
    assert _configure_jax_memory() == "set"  # os.environ by default
    assert os.environ["XLA_PYTHON_CLIENT_PREALLOCATE"] == "false"
    # the probe reads JAX's backend cache: a cached "cuda" backend counts as initialised
    from jax._src import xla_bridge
    monkeypatch.setitem(xla_bridge._backends, "cuda", object())
    assert _gpu_backend_initialized() is True


def test_to_numpy_of_transposed_torch_import_copies():
    x = torch.arange(6.0).reshape(3, 2).t()
    t = from_torch(x)
    assert t._data.unsafe_buffer_pointer() == x.data_ptr()  # imported zero-copy with a transposed layout
    b = to_numpy(t)
    np.testing.assert_array_equal(b, x.numpy())
    assert b.ctypes.data != x.data_ptr()  # documented: NumPy gets a copy for JAX's non-default layouts
