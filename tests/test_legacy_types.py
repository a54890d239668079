"""torch's legacy tensor types and constructor (torch.FloatTensor(...), torch.Tensor(...), isinstance checks,
x.type(torch.DoubleTensor)) and a tensor's storage (untyped_storage(), storage(), data_ptr()), against torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same

TYPES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
         "CharTensor", "ByteTensor", "BoolTensor"]


def _both(fn):
    return fn(tl), fn(torch)


@pytest.mark.parametrize("name", TYPES)
def test_a_legacy_type_builds_tensors_of_its_dtype(name):
    data = np.array([[1.0, 0.0, 2.5], [4.0, 3.0, 0.5]])  # (torch refuses -1.0 for ByteTensor)
    for make in (lambda m: getattr(m, name)(data.tolist()), lambda m: getattr(m, name)(data),
                 lambda m: getattr(m, name)(), lambda m: getattr(m, name)([]), lambda m: getattr(m, name)((2, 3)),
                 lambda m: getattr(m, name)(device="cpu")):
        ours, theirs = _both(make)
        assert type(ours) is tl.Tensor and ours.is_leaf and not ours.requires_grad
        assert ours.type() == theirs.type() == f"torch.{name}"
        assert_same(ours.double(), theirs.double(), 0, 0)  # (NumPy has no bfloat16 for torch's values)
    for make in (lambda m: getattr(m, name)(2, 3), lambda m: getattr(m, name)(m.Size([4])),
                 lambda m: getattr(m, name)(np.int64(3)), lambda m: getattr(m, name)(0)):  # (torch's are uninitialised)
        ours, theirs = _both(make)
        assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype).replace("torch", "torchlike")
    T, U = _both(lambda m: getattr(m, name))
    assert str(T.dtype)[len("torchlike."):] == str(U.dtype)[len("torch."):] and T.__name__ == U.__name__ == name
    assert (T.is_cuda, T.is_sparse, T.is_sparse_csr) == (U.is_cuda, U.is_sparse, U.is_sparse_csr)
    assert not issubclass(T, tl.Tensor) and type(T).__name__ == type(U).__name__ == "tensortype"


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "BoolTensor", "HalfTensor"])
def test_isinstance_of_a_legacy_type_asks_for_its_dtype(name):
    for dtype in ("float32", "float64", "int64", "bool", "float16"):
        for make in (lambda m: m.zeros(2, dtype=getattr(m, dtype)),
                     lambda m: m.nn.Parameter(m.zeros(2, dtype=getattr(m, dtype)), requires_grad=False)):
            ours, theirs = _both(make)
            assert isinstance(ours, getattr(tl, name)) == isinstance(theirs, getattr(torch, name)), (name, dtype)
    assert not isinstance(np.zeros(2, np.float32), tl.FloatTensor)


def test_a_legacy_type_of_a_tensor_aliases_it():
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        for make in (lib.FloatTensor, lib.Tensor):
            y = make(x)
            assert y is not x and y.grad_fn.name() == "AliasBackward0" and y._version == x._version
            with lib.no_grad():
                x.add_(1)
            assert y.tolist() == x.tolist()
            y.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
        z = lib.Tensor(lib.tensor([1, 2]))  # (torch.Tensor takes a tensor of any dtype)
        assert str(z.dtype).endswith("int64") and z.tolist() == [1, 2]


def test_torch_Tensor_uses_the_default_dtype():
    for lib in (tl, torch):
        lib.set_default_dtype(lib.float64)
        try:
            a, b, c = lib.Tensor([1, 2]), lib.Tensor(2, 3), lib.Tensor(np.array([1, 2]))
            assert a.dtype == b.dtype == c.dtype == lib.float64 and a.tolist() == [1.0, 2.0] and b.shape == (2, 3)
            assert isinstance(a, lib.DoubleTensor) and not isinstance(a, lib.FloatTensor)
        finally:
            lib.set_default_dtype(lib.float32)
    ours, theirs = _both(lambda m: m.Tensor())
    assert_same(ours, theirs)


def test_type_casts_to_a_legacy_type():
    data = np.array([1.5, 2.5, 0.0])
    for name in TYPES:
        ours, theirs = _both(lambda m: m.tensor(data).type(getattr(m, name)))
        assert_same(ours.double(), theirs.double(), 0, 0)
        assert ours.type() == theirs.type() == f"torch.{name}"


@pytest.mark.parametrize("case", [
    lambda m: m.FloatTensor(m.tensor([1, 2])),  # a tensor of another dtype
    lambda m: m.LongTensor(m.ones(2)),
    lambda m: m.FloatTensor(2.5),
    lambda m: m.Tensor(True),
    lambda m: m.FloatTensor(2, 3.0),
    lambda m: m.FloatTensor(2, "a"),
    lambda m: m.FloatTensor(2.0, 3),
    lambda m: m.FloatTensor([1.0], 2),
    lambda m: m.FloatTensor([1.0], requires_grad=True),
    lambda m: m.FloatTensor(x=1),
    lambda m: m.FloatTensor(-1),
    lambda m: m.Tensor(2, 3, device="meta"),
    lambda m: m.FloatTensor(m.ones(2), device="cpu"),
    lambda m: m.IntTensor("a"),
])
def test_legacy_constructor_errors(case):
    """torch's exception type and its whole message."""
    got, expected = _both(lambda m: _full_error(lambda: case(m)))
    assert expected is not None and got == expected


def _full_error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - any error is an outcome to compare
        return type(e).__name__, str(e).replace("torchlike", "torch")
    return None


def test_untyped_storage_is_shared_by_views_and_aliases():
    for lib in (tl, torch):
        x = lib.arange(12, dtype=lib.float32).reshape(3, 4)
        s = x.untyped_storage()
        assert s.nbytes() == s.size() == len(s) == 48 and s.element_size() == 1 and s.device == lib.device("cpu")
        for view in (x.t(), x[1:], x[:, 2], x.detach(), x.view(12)):
            assert view.untyped_storage().data_ptr() == s.data_ptr()
        assert x.clone().untyped_storage().data_ptr() != s.data_ptr()
        assert lib.ones(2).untyped_storage().data_ptr() != lib.ones(2).untyped_storage().data_ptr() or lib is torch
        assert lib.empty(0).untyped_storage().data_ptr() == 0 and lib.empty(0).data_ptr() == 0
        assert x[1:].untyped_storage().tolist() == np.arange(12, dtype=np.float32).view(np.uint8).tolist()
        assert lib.ones(3, dtype=lib.complex64).untyped_storage().nbytes() == 24


def test_data_ptr_is_the_storage_address_plus_the_offset_and_stays_across_in_place_ops():
    for lib in (tl, torch):
        x = lib.zeros(3, 4, dtype=lib.float64)
        p = x.data_ptr()
        assert p == x.untyped_storage().data_ptr() and p != 0
        assert (x[1:].data_ptr() - p, x[:, 2].data_ptr() - p, x.t().data_ptr() - p) == (32, 16, 0)
        x.add_(1)
        x[0].mul_(2)
        assert x.data_ptr() == p
        assert x[4:].data_ptr() == 0 and x.clone().data_ptr() != p


def test_storage_is_typed_and_warns_once():
    for lib in (tl, torch):
        x = lib.tensor([1.0, 2.0, 3.0])
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("ignore")
            st = x[1:].storage()
        assert (st.size(), len(st), st.nbytes(), st.element_size()) == (3, 3, 12, 4)
        assert st.tolist() == [1.0, 2.0, 3.0] and st.dtype == lib.float32 and st.data_ptr() == x.data_ptr()
    ours, theirs = _both(lambda m: repr(m.tensor([1.0, 2.0]).storage()))
    assert ours.replace("torchlike", "torch") == theirs
    ours, theirs = _both(lambda m: repr(m.tensor([1], dtype=m.int16).untyped_storage()))
    assert ours == theirs
    assert isinstance(tl.ones(1).untyped_storage(), tl.UntypedStorage)
    assert isinstance(tl.ones(1).storage(), tl.TypedStorage)


def test_set_default_tensor_type():
    for lib in (tl, torch):
        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            try:
                lib.set_default_tensor_type(lib.DoubleTensor)
                assert lib.ones(1).dtype == lib.tensor([1.5]).dtype == lib.get_default_dtype() == lib.float64
                lib.set_default_tensor_type("torch.FloatTensor")
                assert lib.get_default_dtype() == lib.float32
            finally:
                lib.set_default_dtype(lib.float32)
    for bad in ("LongTensor", "float64"):
        ours, theirs = _both(lambda m: _full_error(lambda: m.set_default_tensor_type(getattr(m, bad))))
        assert ours == theirs
    assert tl.get_default_dtype() == tl.float32


_LEGACY_CALLS = ["m.svd(A)", "m.svd(A[:, :2])", "m.svd(A[:, :2], some=False)", "m.svd(A, compute_uv=False)",
                 "A.svd()", "m.qr(A)", "m.qr(A[:, :2], some=False)", "A.qr()", "m.cholesky(A)",
                 "m.cholesky(A, upper=True)", "A.cholesky()", "m.cholesky(m.tensor([[1.0, 2.0], [2.0, 1.0]]))",
                 "m.cholesky(m.stack([m.eye(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])]))", "m.ones(2).svd()",
                 "m.ones(2).qr()", "m.ones(2, 3).cholesky()", "m.range(0, 3)", "m.range(0, 5, 2)",
                 "m.range(5, 0, -1.5)", "m.range(1, 2, 0.3)", "m.range(0, 2, dtype=m.int32)", "m.range(0, 5, 0)",
                 "m.range(5, 0, 1)"]


@pytest.mark.parametrize("expr", _LEGACY_CALLS)
def test_deprecated_functions(expr):
    """torch.svd (V, not Vh), torch.qr, torch.cholesky (CholeskyBackward0), torch.range (inclusive): results (up
    to the factors' signs), node names, gradients and errors as torch's."""
    a0 = np.array([[2.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 4.0]])
    seen = []
    for m in (tl, torch):
        A = m.tensor(a0, requires_grad=True)  # noqa: F841 - used by the expressions
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                r = eval(expr)  # noqa: S307 - fixed test expressions
                outs = r if isinstance(r, tuple) else (r,)
                grads = None
                if outs[0].requires_grad or (len(outs) > 1 and outs[1].requires_grad):
                    loss = sum((o.abs() if i != 1 else o).sum() * (i + 1) for i, o in enumerate(outs))
                    grads = np.round(m.autograd.grad(loss, A)[0].numpy(), 4) + 0.0
            except Exception as e:  # noqa: BLE001 - an error (of the call or of its backward) is an outcome
                seen.append((type(e).__name__, str(e).splitlines()[0]))
                continue
        seen.append((type(r).__name__, [o.grad_fn.name() if o.grad_fn else None for o in outs],
                     [str(o.dtype).split(".")[1] for o in outs],
                     [np.round(np.abs(o.detach().numpy()), 4).tolist() for o in outs],
                     None if grads is None else grads.tolist()))
    assert seen[0] == seen[1]


def test_where_takes_a_uint8_condition_and_float_warns_once(monkeypatch):
    from torchlike import _warnings
    monkeypatch.setattr(_warnings, "_warned", set())
    x = np.array([1, 0, 2], np.uint8)
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        got = [tl.where(tl.tensor(x), 1.0, 0.0).tolist(), tl.where(tl.tensor(x), tl.ones(3), tl.zeros(3)).tolist()]
        floats = [float(tl.ones(1, requires_grad=True)) for _ in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = [torch.where(torch.tensor(x), 1.0, 0.0).tolist(),
                torch.where(torch.tensor(x), torch.ones(3), torch.zeros(3)).tolist()]
    assert got == want and floats == [1.0, 1.0]
    assert [str(w.message).split(".")[0] for w in ws] == [
        "where received a uint8 condition tensor",
        "Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior"]
    with pytest.raises(RuntimeError, match="^where expected condition to be a boolean tensor, but got a tensor with "
                                           "dtype Long$"):
        tl.where(tl.tensor([1, 0]), 1.0, 0.0)


def test_volatile_and_is_storage_as_torch():
    for m in (tl, torch):
        x = m.ones(1)
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            read = x.volatile
            x.volatile = True
        assert read is False and x.volatile is False
        assert [str(w.message) for w in ws] == ["volatile was removed (Variable.volatile is always False)",
                                                "volatile was removed and now has no effect. Use `with "
                                                "torch.no_grad():` instead."]
        assert m.is_storage(x.untyped_storage()) and not m.is_storage(x)
