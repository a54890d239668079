"""Tensor basics (metadata, conversions, grad/requires_grad setters, detach/data, pickling), dtypes and devices,
checked against torch 2.13."""
import copy
import pickle

import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_same
from test_creation import same

# ----- shape and metadata ----------------------------------------------------------------------------------
META = {
    "shape": lambda T: T.zeros(2, 3).shape,
    "size": lambda T: T.zeros(2, 3).size(),
    "size_dim": lambda T: T.zeros(2, 3).size(1),
    "size_neg": lambda T: T.zeros(2, 3).size(-1),
    "err_size_dim": lambda T: T.zeros(2, 3).size(2),
    "size_0d": lambda T: T.zeros(()).size(),
    "shape_slice": lambda T: T.zeros(2, 3, 4).shape[1:],
    "shape_reverse": lambda T: T.zeros(2, 3).shape[::-1],
    "shape_item": lambda T: T.zeros(2, 3).shape[0],
    "shape_add": lambda T: T.zeros(2, 3).shape + (4,),
    "shape_radd": lambda T: (4,) + T.zeros(2).shape,
    "shape_mul": lambda T: T.zeros(2).shape * 2,
    "shape_rmul": lambda T: 2 * T.zeros(2, 3).shape,
    "err_shape_add_list": lambda T: T.zeros(2).shape + [4],
    "shape_eq_tuple": lambda T: T.zeros(2, 3).shape == (2, 3),
    "shape_eq_list": lambda T: T.zeros(2, 3).shape == [2, 3],
    "shape_index_count": lambda T: (T.Size([2, 3]).index(3), T.Size([2, 3]).count(3)),
    "size_repr": lambda T: repr(T.Size([2, 3])),
    "size_str": lambda T: str(T.Size([])),
    "size_numel": lambda T: (T.Size([2, 3]).numel(), T.Size([]).numel(), T.Size([2, 0]).numel()),
    "size_from_np_and_tensor": lambda T: T.Size([np.int64(2), T.tensor(3), True]),
    "size_negative": lambda T: T.Size([2, -1]),
    "err_size_float": lambda T: T.Size((2.5,)),
    "err_size_int": lambda T: T.Size(3),
    "size_pickle": lambda T: pickle.loads(pickle.dumps(T.Size([2, 3]))),
    "dims": lambda T: (T.zeros(2, 3).dim(), T.zeros(2, 3).ndim, T.zeros(2, 3).ndimension(), T.zeros(()).dim()),
    "numel": lambda T: (T.zeros(2, 3).numel(), T.zeros(()).numel(), T.zeros(2, 0).nelement(), T.numel(T.ones(4))),
    "element_size": lambda T: [T.zeros(1, dtype=d).element_size() for d in (T.float16, T.float64, T.bool, T.int32)],
    "itemsize_nbytes": lambda T: (T.zeros(2, 3).itemsize, T.zeros(2, 3).nbytes, T.zeros(2, dtype=T.int64).nbytes),
    "stride": lambda T: (T.zeros(2, 3).stride(), T.zeros(2, 3).stride(1), T.zeros(2, 3).stride(-2),
                         T.zeros(()).stride(), T.zeros(2, 0, 3).stride(), T.zeros(4, 1, 2).stride()),
    "storage_offset": lambda T: T.zeros(2).storage_offset(),
    "flags": lambda T: (T.zeros(2).is_cpu, T.zeros(2).is_cuda, T.zeros(2).is_sparse, T.zeros(2).is_meta,
                        T.zeros(2).is_quantized, T.zeros(2).is_nested, T.zeros(2).is_contiguous(),
                        T.zeros(2).get_device()),
    "kind": lambda T: (T.tensor([1.]).is_floating_point(), T.tensor([1]).is_floating_point(),
                       T.tensor([1j]).is_complex(), T.tensor([1.]).is_complex(), T.is_tensor(T.zeros(1)),
                       T.is_tensor([1])),
}


@pytest.mark.parametrize("name", list(META))
def test_metadata(name):
    same(META[name])


# ----- conversions to Python ------------------------------------------------------------------------------
CONVERSIONS = {
    "item_float": lambda T: T.tensor([2.5]).item(),
    "item_int": lambda T: T.tensor([[7]]).item(),
    "item_bool": lambda T: T.tensor(True).item(),
    "item_complex": lambda T: T.tensor(1 + 2j).item(),
    "item_f16": lambda T: T.tensor(1.5, dtype=T.float16).item(),
    "item_requires_grad": lambda T: T.tensor(2., requires_grad=True).item(),
    "err_item_two": lambda T: T.tensor([1., 2.]).item(),
    "err_item_empty": lambda T: T.tensor([]).item(),
    "err_item_two_rg": lambda T: T.tensor([1., 2.], requires_grad=True).item(),
    "tolist_f16": lambda T: T.tensor([1.5, 2.], dtype=T.float16).tolist(),
    "tolist_int32": lambda T: T.tensor([[1, 2]], dtype=T.int32).tolist(),
    "tolist_0d": lambda T: T.tensor(3.5).tolist(),
    "tolist_bool": lambda T: T.tensor([True]).tolist(),
    "tolist_complex": lambda T: T.tensor([1 + 2j]).tolist(),
    "tolist_rg": lambda T: T.tensor([1., 2.], requires_grad=True).tolist(),
    "tolist_empty": lambda T: T.zeros(2, 0).tolist(),
    "numpy_int32": lambda T: T.tensor([1, 2], dtype=T.int32).numpy().dtype.name,
    "numpy_force": lambda T: T.tensor([1., 2.], requires_grad=True).numpy(force=True).tolist(),
    "err_numpy_rg": lambda T: T.tensor([1., 2.], requires_grad=True).numpy(),
    "np_asarray": lambda T: np.asarray(T.tensor([1., 2.])).tolist(),
    "len": lambda T: len(T.zeros(4, 2)),
    "err_len_0d": lambda T: len(T.tensor(1.)),
    "iter": lambda T: list(T.tensor([[1, 2], [3, 4]])),
    "iter_1d": lambda T: [x for x in T.tensor([1., 2.])],
    "err_iter_0d": lambda T: list(T.tensor(1.)),
    "err_bool_many": lambda T: bool(T.tensor([1., 2.])),
    "err_bool_empty": lambda T: bool(T.tensor([])),
    "bool": lambda T: (bool(T.tensor([0.])), bool(T.tensor(2)), bool(T.tensor([[3]])), bool(T.tensor(0j))),
    "float": lambda T: (float(T.tensor([2.5])), float(T.tensor(3)), float(T.tensor(1 + 0j)),
                        float(T.tensor(2.5, requires_grad=True))),
    "err_float_many": lambda T: float(T.tensor([2.5, 1.])),
    "err_float_empty": lambda T: float(T.tensor([])),
    "err_float_complex": lambda T: float(T.tensor(1 + 2j)),
    "int": lambda T: (int(T.tensor(2.7)), int(T.tensor([-2.7])), int(T.tensor(1 + 0j)), int(T.tensor(True))),
    "err_int_many": lambda T: int(T.tensor([1, 2])),
    "err_int_complex": lambda T: int(T.tensor(1 + 2j)),
    "complex": lambda T: (complex(T.tensor(1 + 2j)), complex(T.tensor(2.))),
    "index": lambda T: ([10, 20, 30][T.tensor(1)], [10, 20, 30][T.tensor([2])], [10, 20, 30][T.tensor(True)],
                        range(5)[T.tensor(3, dtype=T.int32)]),
    "err_index_float": lambda T: [10, 20, 30][T.tensor(1.)],
    "err_index_many": lambda T: [10, 20, 30][T.tensor([1, 2])],
    "err_index_empty": lambda T: T.tensor([], dtype=T.int64).__index__(),
    "err_index_float_rg": lambda T: [1, 2, 3][T.tensor(1., requires_grad=True)],
}


@pytest.mark.parametrize("name", list(CONVERSIONS))
def test_conversions(name):
    same(CONVERSIONS[name])


def test_iteration_is_differentiable():
    for T in (torch, tl):
        x = T.tensor([[1., 2.], [3., 4.]], requires_grad=True)
        rows = list(x)
        assert [r.grad_fn.name() for r in rows] == ["UnbindBackward0", "UnbindBackward0"]
        assert [r.output_nr for r in rows] == [0, 1]
        (rows[1] * 2).sum().backward()
        assert x.grad.tolist() == [[0., 0.], [2., 2.]]


# ----- .grad setter -----------------------------------------------------------------------------------------------
def _set_grad(value_fn, shape=(2,), dtype="float32", requires_grad=True):
    def fn(T):
        p = T.zeros(*shape, dtype=getattr(T, dtype), requires_grad=requires_grad)
        p.grad = value_fn(T, p)
        return p.grad
    return fn


GRAD_SET = {
    "none": _set_grad(lambda T, p: None),
    "ok": _set_grad(lambda T, p: T.ones(2)),
    "ok_no_requires_grad": _set_grad(lambda T, p: T.ones(2), requires_grad=False),
    "ok_int_tensor": _set_grad(lambda T, p: T.ones(2, dtype=T.int64), dtype="int64", requires_grad=False),
    "ok_grad_requires_grad": _set_grad(lambda T, p: T.ones(2, requires_grad=True)),
    "err_own": _set_grad(lambda T, p: p),
    "err_list": _set_grad(lambda T, p: [1., 2.]),
    "err_int": _set_grad(lambda T, p: 3),
    "err_ndarray": _set_grad(lambda T, p: np.ones(2, np.float32)),
    "err_size": _set_grad(lambda T, p: T.ones(3)),
    "err_size_1": _set_grad(lambda T, p: T.ones(1)),
    "err_size_2d": _set_grad(lambda T, p: T.ones(2, 1)),
    "err_size_0d": _set_grad(lambda T, p: T.ones(()), shape=(2, 3)),
    "err_size_of_0d": _set_grad(lambda T, p: T.ones(1), shape=()),
    "err_dtype_and_size": _set_grad(lambda T, p: T.ones(3, dtype=T.float32), dtype="float64"),
}
for _name in ("float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8", "bool", "complex64",
              "complex128"):
    GRAD_SET[f"err_dtype_{_name}"] = _set_grad(lambda T, p, n=_name: T.ones(2, dtype=getattr(T, n)))


@pytest.mark.parametrize("name", list(GRAD_SET))
def test_grad_setter(name):
    same(GRAD_SET[name])


def test_grad_delete():
    p = tl.zeros(2, requires_grad=True)
    p.grad = tl.ones(2)
    del p.grad
    assert p.grad is None


# ----- requires_grad, leaves, detach, data --------------------------------------------------------------------------
def _nonleaf(T):
    return T.zeros(2, requires_grad=True) * 2


REQUIRES_GRAD = {
    "err_nonleaf_false": lambda T: setattr(_nonleaf(T), "requires_grad", False),
    "err_nonleaf_true": lambda T: setattr(_nonleaf(T), "requires_grad", True),
    "err_nonleaf_method_false": lambda T: _nonleaf(T).requires_grad_(False),
    "nonleaf_method_true": lambda T: _nonleaf(T).requires_grad_(True),
    "err_int_setter": lambda T: setattr(T.zeros(2, dtype=T.int64), "requires_grad", True),
    "err_int_method": lambda T: T.zeros(2, dtype=T.int64).requires_grad_(),
    "int_method_false": lambda T: T.zeros(2, dtype=T.int64).requires_grad_(False),
    "complex_method": lambda T: T.zeros(2, dtype=T.complex64).requires_grad_(),
    "bfloat16_method": lambda T: T.zeros(2, dtype=T.bfloat16).requires_grad_().requires_grad,
    "err_not_bool_setter": lambda T: setattr(T.zeros(2), "requires_grad", 1),
    "err_str_setter": lambda T: setattr(T.zeros(2), "requires_grad", "yes"),
    "err_not_bool_method": lambda T: T.zeros(2).requires_grad_("yes"),
    "is_leaf": lambda T: (T.zeros(2, requires_grad=True).is_leaf, _nonleaf(T).is_leaf, T.zeros(2).is_leaf,
                          (T.zeros(2) * 2).is_leaf),
}


@pytest.mark.parametrize("name", list(REQUIRES_GRAD))
def test_requires_grad(name):
    same(REQUIRES_GRAD[name])


def test_detach_and_data():
    def detach(T):
        p = T.zeros(2, requires_grad=True)
        d = p.detach()
        before = (d.requires_grad, d.is_leaf, d.grad_fn, d._version)
        d.add_(1)  # shares the version counter (the values too, in torch: see the report)
        return before, p._version, d._version

    def detach_(T):
        y = T.zeros(2, requires_grad=True) * 2
        z = y.detach_()
        return z is y, y.requires_grad, y.is_leaf, y.grad_fn

    def data(T):
        p = T.zeros(2, requires_grad=True)
        d = p.data
        d.add_(1)  # its own version counter: p's version does not move
        return d.requires_grad, d.is_leaf, p._version

    def data_setter(T):
        p = T.zeros(2, requires_grad=True)
        p.data = T.ones(3, dtype=T.float64)
        return p, p._version, p.requires_grad

    for fn in (detach, detach_, data, data_setter):
        same(fn)
    same(lambda T: setattr(T.zeros(2), "data", [1., 2.]))


def test_pickle_and_deepcopy():
    def roundtrip(T):
        p = T.tensor([1., 2.], requires_grad=True)
        q = pickle.loads(pickle.dumps(p))
        return q, q.is_leaf, q.grad, q.requires_grad

    def ints(T):
        return pickle.loads(pickle.dumps(T.tensor([1, 2], dtype=T.int32)))

    def deep(T):
        p = T.tensor([1., 2.], requires_grad=True)
        p.grad = T.ones(2)
        q = copy.deepcopy(p)
        return q, q.grad, q is p, q.requires_grad

    def deep_shared(T):
        p = T.tensor([1., 2.], requires_grad=True)
        a, b = copy.deepcopy([p, p])
        return a is b

    for fn in (roundtrip, ints, deep, deep_shared):
        same(fn)
    same(lambda T: copy.deepcopy(_nonleaf(T)))
    x = tl.tensor([1., 2.])
    assert_same(copy.copy(x), torch.tensor([1., 2.]))


# ----- devices ----------------------------------------------------------------------------------------------------
DEVICES = {
    "repr": lambda T: repr(T.device("cpu")),
    "repr_index": lambda T: (repr(T.device("cuda", 1)), repr(T.device("cuda:1")), repr(T.device("cpu:0"))),
    "str": lambda T: (str(T.device("cpu")), str(T.device("cuda", 1))),
    "attrs": lambda T: (T.device("cuda:1").type, T.device("cuda:1").index, T.device("cpu").index),
    "copy_ctor": lambda T: repr(T.device(T.device("cpu"))),
    "cpu_index": lambda T: repr(T.device(type="cpu", index=1)),
    "meta": lambda T: repr(T.device("meta")),
    "eq": lambda T: (T.device("cpu") == T.device("cpu"), T.device("cpu") == T.device("cpu", 0),
                     T.device("cuda", 0) == T.device("cuda:0"), T.device("cuda") == T.device("cuda:0")),
    "eq_str": lambda T: (T.device("cpu") == "cpu", T.device("cpu") != "cpu", T.zeros(1).device == "cpu",
                         T.device("cpu") == 3),
    "hash": lambda T: ({T.device("cpu"): 1}[T.device("cpu")], hash(T.device("cuda:1")) == hash(T.device("cuda", 1))),
    "tensor_device": lambda T: repr(T.zeros(2).device),
    "tensor_device_str": lambda T: str(T.zeros(2, device="cpu").device),
    "tensor_device_obj": lambda T: repr(T.zeros(2, device=T.device("cpu")).device),
    "pickle": lambda T: repr(pickle.loads(pickle.dumps(T.device("cuda", 2)))),
    "err_bad_type": lambda T: T.device("foo"),
    "err_case": lambda T: T.device("CPU"),
    "err_tpu_is_not_torch": lambda T: T.device("xpu:x"),
    "err_bad_index": lambda T: T.device("cuda:x"),
    "err_leading_zero": lambda T: T.device("cuda:01"),
    "err_space": lambda T: T.device(" cpu"),
    "err_negative_string": lambda T: T.device("cpu:-1"),
    "err_negative": lambda T: T.device("cuda", -1),
    "err_index_type": lambda T: T.device("cpu", "a"),
    "err_index_twice": lambda T: T.device("cuda:0", 1),
    "err_int_without_accelerator": lambda T: T.device(0),
    "err_cuda_tensor": lambda T: T.zeros(2, device="cuda"),
    "err_cuda_tensor_data": lambda T: T.tensor([1.], device="cuda"),
    "err_cuda_rand": lambda T: T.rand(2, device="cuda:0"),
    "err_cuda_int": lambda T: T.zeros(2).cuda(0),
}


@pytest.mark.parametrize("name", list(DEVICES))
def test_device(name):
    same(DEVICES[name])


def test_device_extensions():
    """torchlike also names JAX's platforms: 'gpu' is 'cuda', and 'tpu'."""
    assert tl.device("gpu:1") == tl.device("cuda", 1)
    assert repr(tl.device("tpu")) == "device(type='tpu')"
    assert repr(tl.device) == "<class 'torchlike.device'>"


# ----- dtypes ---------------------------------------------------------------------------------------------------
ALL_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool",
              "complex64", "complex128")
ALIASES = ("half", "float", "double", "short", "int", "long", "cfloat", "cdouble")

def _torch_name(text):
    return text.replace("torchlike.", "torch.")


DTYPES = {
    "flags": lambda T: [(getattr(T, d).is_floating_point, getattr(T, d).is_complex, getattr(T, d).is_signed,
                         getattr(T, d).itemsize) for d in ALL_DTYPES],
    "repr": lambda T: [_torch_name(repr(getattr(T, d))) for d in ALL_DTYPES + ALIASES],
    "str": lambda T: [_torch_name(str(getattr(T, d))) for d in ALL_DTYPES + ALIASES],
    "aliases": lambda T: [getattr(T, a) is getattr(T, d) for a, d in zip(ALIASES, (
        "float16", "float32", "float64", "int16", "int32", "int64", "complex64", "complex128"))],
    "class_repr": lambda T: _torch_name(repr(T.dtype)),
    "pickle_identity": lambda T: [pickle.loads(pickle.dumps(getattr(T, d))) is getattr(T, d) for d in ALL_DTYPES],
    "copy_identity": lambda T: (copy.deepcopy(T.float32) is T.float32, copy.copy(T.int8) is T.int8),
    "default": lambda T: T.get_default_dtype(),
    "tensor_dtype": lambda T: [T.zeros(1, dtype=getattr(T, d)).dtype for d in ALL_DTYPES],
    "to_real_complex": lambda T: (T.complex64.to_real(), T.complex128.to_real(), T.float32.to_complex(),
                                  T.float64.to_complex(), T.float32.to_real()),  # float16: torch has complex32
    "err_set_default_int": lambda T: T.set_default_dtype(T.int64),
    "err_set_default_complex": lambda T: T.set_default_dtype(T.complex64),
}


@pytest.mark.parametrize("name", list(DTYPES))
def test_dtypes(name):
    same(DTYPES[name])


def test_promote_types_table():
    for a in ALL_DTYPES:
        for b in ALL_DTYPES:
            ours = tl.promote_types(getattr(tl, a), getattr(tl, b))
            assert repr(ours) == repr(torch.promote_types(getattr(torch, a), getattr(torch, b))).replace(
                "torch.", "torchlike."), (a, b)


def test_finfo_iinfo():
    """torchlike._dtype.finfo / iinfo (torch.finfo / torch.iinfo)."""
    from torchlike._dtype import finfo, iinfo
    for d in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128"):
        ours, theirs = finfo(getattr(tl, d)), torch.finfo(getattr(torch, d))
        assert repr(ours) == repr(theirs)
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"):
            assert getattr(ours, attr) == getattr(theirs, attr), (d, attr)
    assert repr(finfo()) == repr(torch.finfo())
    for d in ("uint8", "int8", "int16", "int32", "int64"):
        ours, theirs = iinfo(getattr(tl, d)), torch.iinfo(getattr(torch, d))
        assert (repr(ours), ours.bits, ours.min, ours.max, ours.dtype) == (
            repr(theirs), theirs.bits, theirs.min, theirs.max, theirs.dtype)
    with pytest.raises(TypeError, match=r"torch.finfo\(\) requires a floating point input type"):
        finfo(tl.int32)
    with pytest.raises(TypeError, match=r"torch.iinfo\(\) requires an integer input type"):
        iinfo(tl.float32)
