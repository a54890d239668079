"""Tensor.view(dtype): the same bytes read as another dtype, against torch 2.13 (shapes, strides, offsets, the
bytes of both tensors after writes through either, version counters, autograd and errors)."""
import itertools

import numpy as np
import pytest
import torch

import torchlike as tl

_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
           "complex64", "complex128"]
# (shape of the base, index into it): contiguous, offset, sliced rows, a transposed (last stride not 1), 0-d
_GEOMS = [((2, 8), ()), ((16,), (slice(4, 12),)), ((4, 8), (slice(None), slice(0, 4))), ((4, 8), (slice(1, 3),)),
          ((8, 4), ("t",)), ((), ())]


def _pair(shape, idx, dtype, seed):
    """The same random bytes as a torch and a torchlike tensor of ``dtype`` and ``shape``, indexed by ``idx``."""
    n = int(np.prod(shape))
    itemsize = getattr(torch, dtype).itemsize
    raw = np.random.RandomState(seed).randint(0, 256, size=n * itemsize).astype(np.uint8)
    if dtype == "bool":
        raw = raw % 2
    elif dtype in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128"):
        part = {"float16": np.float16, "bfloat16": np.float32, "float32": np.float32, "float64": np.float64,
                "complex64": np.float32, "complex128": np.float64}[dtype]
        vals = np.random.RandomState(seed).randn(n * (2 if "complex" in dtype else 1)).astype(part)
        raw = ((vals.view(np.uint32) >> 16).astype(np.uint16) if dtype == "bfloat16" else vals).view(np.uint8)
    t = torch.frombuffer(bytearray(raw.tobytes()), dtype=getattr(torch, dtype)).reshape(shape).clone()
    ours = tl.tensor(t.float().numpy() if dtype == "bfloat16" else t.numpy(), dtype=getattr(tl, dtype))

    def index(x):
        for step in idx:
            x = x.t() if step == "t" else x[step]
        return x
    return index(t), index(ours)


def _bytes(t):
    """The bytes a tensor's elements hold, in row-major order of its shape."""
    if isinstance(t, torch.Tensor):
        flat = t.detach().contiguous().reshape(-1)
        return flat.numpy().astype(np.uint8).tobytes() if t.dtype == torch.bool else \
            flat.view(torch.uint8).numpy().tobytes()
    return t.detach().contiguous().numpy().tobytes()


def _outcome(fn):
    try:
        return fn()
    except RuntimeError as e:
        return RuntimeError, str(e)


@pytest.mark.parametrize("src", _DTYPES)
def test_view_dtype_matches_torch(src):
    """Every dtype pair on every geometry: result geometry and bytes, or torch's error; then a write through the
    new tensor shows in the base's bytes and version, as torch's shared memory does."""
    for (shape, idx), dst in itertools.product(_GEOMS, _DTYPES):
        t, ours = _pair(shape, idx, src, 0)
        expected = _outcome(lambda: t.view(getattr(torch, dst)))
        got = _outcome(lambda: ours.view(getattr(tl, dst)))
        if isinstance(expected, tuple):
            assert got == expected, (shape, idx, src, dst)
            continue
        assert not isinstance(got, tuple), (shape, idx, src, dst, got)
        assert (tuple(got.shape), got.stride(), got.storage_offset(), got.dtype.__repr__().split(".")[-1]) == \
            (tuple(expected.shape), expected.stride(), expected.storage_offset(), dst), (shape, idx, src, dst)
        assert _bytes(got) == _bytes(expected), (shape, idx, src, dst)
        assert not got.requires_grad and got._base is None and got._version == ours._version
        if got.numel():
            expected.view(-1)[:1].zero_() if expected.is_contiguous() else expected.zero_()
            got.view(-1)[:1].zero_() if got.is_contiguous() else got.zero_()
            assert _bytes(ours) == _bytes(t), (shape, idx, src, dst)
            assert ours._version == got._version == t._version


def test_view_dtype_writes_through_base_and_autograd():
    x = tl.tensor([1.5, -2.25, 3.0, 4.75], dtype=tl.float32, requires_grad=True)
    tx = torch.tensor([1.5, -2.25, 3.0, 4.75], dtype=torch.float32, requires_grad=True)
    y, ty = x.view(tl.int32), tx.view(torch.int32)
    assert not y.requires_grad and y.grad_fn is None and not y._is_view()
    y.add_(1)  # a leaf requiring grad changes through it, with no error (torch: not an autograd view)
    ty.add_(1)
    assert _bytes(x) == _bytes(tx) and x._version == tx._version == 1
    with tl.no_grad():
        x.mul_(2)
    with torch.no_grad():
        tx.mul_(2)
    assert y.tolist() == ty.tolist()
    w, tw = x * 1, tx * 1
    assert not w.view(tl.float32).requires_grad and not tw.view(torch.float32).requires_grad
    # the base's gradient is unaffected by the alias
    (x * x).sum().backward()
    (tx * tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("fn", [lambda t: t.view(dtype=getattr(t, "_lib").int16), lambda t: t.view(getattr(t, "_lib").int16)])
def test_view_dtype_keyword_and_conj(fn):
    for lib in (tl, torch):
        t = lib.tensor([1.0, 2.0])
        t._lib = lib
        assert fn(t).shape == (4,)
    for lib in (tl, torch):
        c = lib.tensor([1 + 2j]).conj()
        with pytest.raises(RuntimeError, match="not supported for conjugate view tensors"):
            c.view(lib.complex64)


def test_view_dtype_inference_and_lazy():
    with tl.inference_mode():
        z = tl.zeros(3)
        assert z.view(tl.int32).is_inference()
    with tl.lazy():
        a = tl.arange(4, dtype=tl.float32)
        b = a.view(tl.int32)
        b.bitwise_or_(1)
        got = a.tolist()
    t = torch.arange(4, dtype=torch.float32)
    t.view(torch.int32).bitwise_or_(1)
    assert got == t.tolist()
