"""torchlike.save / torchlike.load against torch.save / torch.load: the same bytes on disk, checkpoints read both
ways with bit-identical values, storage sharing, strides, module and optimizer state dicts, map_location, and
torch's errors for the common misuses."""
import collections
import io
import pathlib
import pickle
import subprocess
import sys
import warnings
import zipfile

import numpy as np
import pytest
import torch

import torchlike as tl

ROOT = pathlib.Path(__file__).resolve().parent.parent
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _torch_bytes(t):
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()


def _tl_bytes(t):
    return np.ascontiguousarray(t.detach().numpy()).tobytes()


def _random(dtype, shape, seed=0):
    """A torch tensor of ``dtype`` with random bits (NaNs, infinities and subnormals included for floats)."""
    rng = np.random.default_rng(seed)
    d = getattr(torch, dtype)
    if d == torch.bool:
        return torch.from_numpy(rng.integers(0, 2, shape).astype(bool))
    size = torch.empty((), dtype=d).element_size()
    raw = rng.integers(0, 256, (*shape, size), dtype=np.uint8)
    return torch.from_numpy(raw).view(d).reshape(shape)


def _save_bytes(m, obj, **kwargs):
    buf = io.BytesIO()
    m.save(obj, buf, **kwargs)
    return buf.getvalue()


def _without_serialization_id(raw):
    """The file up to its last record (.data/serialization_id, whose name hash is std::hash's in torch)."""
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo("archive/.data/serialization_id")
    return raw[:info.header_offset]


# ----- the same bytes as torch ------------------------------------------------------------------------------
def _linear_state(m):
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7))
        lin.bias.copy_(m.tensor([0.5, -1.5]))
    return lin.state_dict()


def _views(m):
    x = m.arange(12.).reshape(3, 4)
    return {"x": x, "t": x.t(), "row": x[1], "col": x[:, 2], "step": x[::2, 1::2]}


OBJECTS = {
    "tensor": lambda m: m.arange(6.).reshape(2, 3),
    "views": _views,
    "kinds": lambda m: {"int8_0d": m.tensor(3, dtype=m.int8), "empty": m.zeros(0, 3), "param": m.nn.Parameter(
        m.ones(2)), "bf16": m.ones(2, dtype=m.bfloat16, requires_grad=True), "expanded": m.ones(3).expand(2, 3),
        "bool": m.tensor([True, False]), "c64": m.tensor([1 + 2j, 3 - 4j], dtype=m.complex64)},
    "nested": lambda m: {"list": [1, 2.5, "s", None, True, (m.ones(2), {"b": -7})], "od": collections.OrderedDict(
        [("z", 1), ("a", m.zeros(1))]), "big": 2 ** 70, "bytes": b"\x00\xff", "set": {1, 2}, "complex": 1 + 2j},
    "dtype_device_size": lambda m: [m.float16, m.bfloat16, m.int64, m.device("cpu"), m.device("cuda", 1),
                                    m.Size([2, 3]), m.ones(2, 3).shape],
    "state_dict": _linear_state,
}


@pytest.mark.parametrize("protocol", [2, 4])
@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_the_file_is_byte_for_byte_torchs(name, protocol):
    mine = _save_bytes(tl, OBJECTS[name](tl), pickle_protocol=protocol)
    theirs = _save_bytes(torch, OBJECTS[name](torch), pickle_protocol=protocol)
    assert zipfile.ZipFile(io.BytesIO(mine)).namelist() == zipfile.ZipFile(io.BytesIO(theirs)).namelist()
    assert _without_serialization_id(mine) == _without_serialization_id(theirs)
    assert len(mine) == len(theirs)


def test_the_archive_is_named_after_the_file(tmp_path):
    tl.save(tl.ones(2), tmp_path / "model.v2.pt")
    tl.save(tl.ones(2), str(tmp_path / "weights"))
    assert zipfile.ZipFile(tmp_path / "model.v2.pt").namelist()[0] == "model.v2/data.pkl"
    assert zipfile.ZipFile(tmp_path / "weights").namelist()[0] == "weights/data.pkl"
    (tmp_path / "torch").mkdir()
    torch.save(torch.ones(2), tmp_path / "torch" / "model.v2.pt")
    assert _without_serialization_id_named(tmp_path / "model.v2.pt") == \
        _without_serialization_id_named(tmp_path / "torch" / "model.v2.pt")


def _without_serialization_id_named(path):
    raw = path.read_bytes()
    z = zipfile.ZipFile(io.BytesIO(raw))
    return raw[:z.getinfo(z.namelist()[0].split("/")[0] + "/.data/serialization_id").header_offset]


def test_torch_mmaps_the_file_at_the_offsets_it_computes(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")  # torch then checks its offsets against the zip's
    monkeypatch.setattr(torch.utils.serialization.config.load, "calculate_storage_offsets", True)
    x = tl.arange(12.).reshape(3, 4)
    tl.save({"x": x, "t": x.t(), "i8": tl.ones(5, dtype=tl.int8), "empty": tl.zeros(0), "y": tl.ones(3)},
            tmp_path / "m.pt")
    loaded = torch.load(tmp_path / "m.pt", mmap=True)
    assert loaded["t"].tolist() == x.t().tolist() and loaded["y"].tolist() == [1., 1., 1.]
    assert tl.load(tmp_path / "m.pt", mmap=True)["t"].tolist() == x.t().tolist()


def test_zip64_fields_read_by_torch_and_torchlike(monkeypatch):
    """Records past 4 GiB, or larger, get zip64 fields: lower the limit to write them for a small file."""
    monkeypatch.setattr(tl.serialization, "_ZIP64_LIMIT", 100)
    obj = {"small": tl.arange(3.), "large": tl.arange(64, dtype=tl.float64)}
    raw = _save_bytes(tl, obj)
    z = zipfile.ZipFile(io.BytesIO(raw))
    assert z.getinfo("archive/data/1").file_size == 512 and z.testzip() is None
    for loaded in (torch.load(io.BytesIO(raw)), tl.load(io.BytesIO(raw))):
        assert loaded["small"].tolist() == [0., 1., 2.] and loaded["large"].tolist() == list(range(64))


# ----- values, both ways ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_loads_bit_identical_both_ways(dtype):
    base = _random(dtype, (3, 4))
    obj = {"t": base, "0d": base[1, 2].clone(), "empty": base[:0], "noncontig": base.t()[1:, ::2]}
    loaded = tl.load(io.BytesIO(_save_bytes(torch, obj)))
    for k, v in obj.items():
        assert loaded[k].dtype == getattr(tl, dtype) and tuple(loaded[k].shape) == tuple(v.shape)
        assert loaded[k].stride() == v.stride() and loaded[k].storage_offset() == v.storage_offset()
        assert _tl_bytes(loaded[k]) == _torch_bytes(v), k
    back = torch.load(io.BytesIO(_save_bytes(tl, loaded)))
    for k, v in obj.items():
        assert back[k].dtype == v.dtype and back[k].stride() == v.stride()
        assert back[k].storage_offset() == v.storage_offset()
        assert _torch_bytes(back[k]) == _torch_bytes(v), k


def test_requires_grad_and_parameters_both_ways():
    obj = {"leaf": torch.ones(2, requires_grad=True), "plain": torch.ones(2),
           "nonleaf": torch.ones(2, requires_grad=True) * 2, "param": torch.nn.Parameter(torch.ones(2)),
           "frozen": torch.nn.Parameter(torch.ones(2), requires_grad=False)}
    loaded = tl.load(io.BytesIO(_save_bytes(torch, obj)))
    back = torch.load(io.BytesIO(_save_bytes(tl, loaded)))
    for k, v in obj.items():
        for w, cls in ((loaded[k], tl.nn.Parameter), (back[k], torch.nn.Parameter)):
            assert w.requires_grad == v.requires_grad and w.is_leaf and w._base is None
            assert isinstance(w, cls) == isinstance(v, torch.nn.Parameter)
            assert w._version == 1  # torch's rebuild writes the storage in (set_)


def test_views_are_saved_once_and_share_storage_after_load():
    theirs = _views(torch)
    loaded = tl.load(io.BytesIO(_save_bytes(torch, theirs)))
    assert len([n for n in zipfile.ZipFile(io.BytesIO(_save_bytes(tl, loaded))).namelist() if "/data/" in n]) == 1
    for k, v in theirs.items():
        assert loaded[k].stride() == v.stride() and loaded[k].storage_offset() == v.storage_offset()
    loaded["row"].mul_(-1)  # a write to one shows in all, as in torch
    loaded["t"][0, 0] = 100.
    theirs["row"].mul_(-1)
    theirs["t"][0, 0] = 100.
    for k, v in theirs.items():
        np.testing.assert_array_equal(loaded[k].numpy(), v.numpy())
    back = torch.load(io.BytesIO(_save_bytes(tl, loaded)))
    assert len({v.untyped_storage().data_ptr() for v in back.values()}) == 1
    back["col"].add_(1)
    assert back["x"][2, 2] == theirs["x"][2, 2] + 1


# ----- state dicts ------------------------------------------------------------------------------------------
def _model(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 2))


def _steps(m, model, opt, n):
    x = m.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    for _ in range(n):
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()


@pytest.mark.parametrize("make_opt", [lambda m, p: m.optim.SGD(p, lr=0.1, momentum=0.9),
                                      lambda m, p: m.optim.Adam(p, lr=0.01)], ids=["sgd_momentum", "adam"])
def test_module_and_optimizer_state_dicts_round_trip_both_ways(make_opt):
    for src, dst in ((torch, tl), (tl, torch)):
        model = _model(src)
        opt = make_opt(src, model.parameters())
        _steps(src, model, opt, 3)
        raw = _save_bytes(src, {"model": model.state_dict(), "opt": opt.state_dict()})
        ckpt = dst.load(io.BytesIO(raw))
        assert ckpt["model"]._metadata == model.state_dict()._metadata
        model2 = _model(dst)
        model2.load_state_dict(ckpt["model"])
        opt2 = make_opt(dst, model2.parameters())
        opt2.load_state_dict(ckpt["opt"])
        assert opt2.state_dict()["param_groups"] == opt.state_dict()["param_groups"]
        _steps(src, model, opt, 2)
        _steps(dst, model2, opt2, 2)
        for a, b in zip(model.parameters(), model2.parameters()):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_nested_containers_and_plain_values():
    obj = OBJECTS["nested"](torch)
    loaded = tl.load(io.BytesIO(_save_bytes(torch, obj)))
    assert type(loaded["od"]) is collections.OrderedDict and list(loaded["od"]) == ["z", "a"]
    assert loaded["list"][:5] == [1, 2.5, "s", None, True] and loaded["list"][5][1] == {"b": -7}
    assert isinstance(loaded["list"][5], tuple)
    assert (loaded["big"], loaded["bytes"], loaded["set"], loaded["complex"]) == (2 ** 70, b"\x00\xff", {1, 2}, 1 + 2j)
    back = torch.load(io.BytesIO(_save_bytes(tl, loaded)))
    assert back["list"][:5] == obj["list"][:5] and back["od"].keys() == obj["od"].keys()
    dts = tl.load(io.BytesIO(_save_bytes(torch, OBJECTS["dtype_device_size"](torch))))
    assert dts == [tl.float16, tl.bfloat16, tl.int64, tl.device("cpu"), tl.device("cuda", 1), tl.Size([2, 3]),
                   tl.Size([2, 3])]
    assert type(dts[-1]) is tl.Size


# ----- files, map_location, options ---------------------------------------------------------------------------
def test_paths_file_objects_and_options(tmp_path):
    x = tl.arange(4.)
    for f in (tmp_path / "a.pt", str(tmp_path / "b.pt")):
        tl.save(x, f, _use_new_zipfile_serialization=True)
        np.testing.assert_array_equal(tl.load(f).numpy(), x.numpy())
        np.testing.assert_array_equal(torch.load(f).numpy(), x.numpy())
    with open(tmp_path / "c.pt", "wb") as fh:
        tl.save({"x": x}, fh, pickle_protocol=3)
    with open(tmp_path / "c.pt", "rb") as fh:
        assert tl.load(fh, weights_only=False)["x"].tolist() == [0., 1., 2., 3.]
    for m in (torch, tl):  # protocol 3 loads with weights_only, with torch's warning
        with pytest.warns(UserWarning, match="^Detected pickle protocol 3 in the checkpoint"):
            assert m.load(tmp_path / "c.pt")["x"].tolist() == [0., 1., 2., 3.]


@pytest.mark.parametrize("map_location", [None, "cpu", b"cpu", tl.device("cpu"), {"cpu": "cpu"},
                                          lambda storage, loc: storage, lambda storage, loc: None,
                                          lambda storage, loc: storage.cpu()],
                         ids=["none", "str", "bytes", "device", "dict", "identity", "callable_none", "callable_cpu"])
def test_map_location(map_location):
    t = tl.load(io.BytesIO(_save_bytes(torch, torch.arange(3))), map_location=map_location)
    assert t.device == tl.device("cpu") and t.tolist() == [0, 1, 2]


def _rewritten(raw, edit):
    """The checkpoint ``raw`` with each record's data replaced by ``edit(name, data)``."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for name in src.namelist():
            dst.writestr(name, edit(name, src.read(name)))
    return out.getvalue()


def _cuda_checkpoint():
    """A torch checkpoint whose storage is tagged 'cuda:0' (written on a machine with a GPU)."""
    return _rewritten(_save_bytes(torch, torch.arange(3.)), lambda name, data: data.replace(
        b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0") if name.endswith("data.pkl") else data)


def test_a_big_endian_checkpoint_loads_as_in_torch():
    obj = {d: _random(d, (5,), seed=1) for d in ("int16", "float32", "bfloat16", "complex128", "bool")}
    keys = {f"archive/data/{i}": v.element_size() // (2 if v.is_complex() else 1) for i, v in enumerate(obj.values())}

    def to_big(name, data):
        if name == "archive/byteorder":
            return b"big"
        k = keys.get(name, 1)
        return np.frombuffer(data, f"u{k}").byteswap().tobytes() if k > 1 else data
    raw = _rewritten(_save_bytes(torch, obj), to_big)
    theirs, mine = torch.load(io.BytesIO(raw)), tl.load(io.BytesIO(raw))
    for d, v in obj.items():
        assert _torch_bytes(theirs[d]) == _torch_bytes(v) == _tl_bytes(mine[d]), d


def test_a_cuda_checkpoint_needs_map_location_on_a_cpu_machine():
    raw = _cuda_checkpoint()
    for m in (torch, tl):
        with pytest.raises(RuntimeError, match="^Attempting to deserialize object on a CUDA device but "
                                               r"torch.cuda.is_available\(\) is False"):
            m.load(io.BytesIO(raw))
        for loc in ("cpu", {"cuda:0": "cpu"}, m.device("cpu")):
            assert m.load(io.BytesIO(raw), map_location=loc).tolist() == [0., 1., 2.]


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


class _Custom:
    def __init__(self, v=1):
        self.v = v


def test_errors_match_torch(tmp_path):
    raw = _save_bytes(torch, torch.ones(2))
    custom = _save_bytes(torch, {"c": _Custom()})
    cases = [
        lambda m: m.load(str(tmp_path / "missing.pt")),
        lambda m: m.load(io.BytesIO(custom)),
        lambda m: m.load(io.BytesIO(raw), map_location="foo"),
        lambda m: m.load(io.BytesIO(raw), pickle_module=pickle, weights_only=True),
        lambda m: m.save(m.ones(1), 5),
        lambda m: m.save(m.ones(1), str(tmp_path / "no_dir" / "x.pt")),
        lambda m: m.save(m.ones(1), str(tmp_path / ".pt")),
        lambda m: m.load(io.BytesIO(_save_bytes(m, m.ones(1), pickle_protocol=4))),
    ]
    for case in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # protocol 4 warns before it fails, in both
            assert _error(lambda: case(tl)) == _error(lambda: case(torch))
    assert "Weights only load failed" in _error(lambda: tl.load(io.BytesIO(custom)))[1]


def test_weights_only_false_and_safe_globals():
    custom = _save_bytes(torch, {"c": _Custom(5), "t": torch.ones(1)})
    assert tl.load(io.BytesIO(custom), weights_only=False)["c"].v == 5
    with tl.serialization.safe_globals([_Custom]):
        assert tl.load(io.BytesIO(custom))["c"].v == 5
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed"):
        tl.load(io.BytesIO(custom))
    mine = _save_bytes(tl, {"c": _Custom(6)})
    assert torch.load(io.BytesIO(mine), weights_only=False)["c"].v == 6


def test_legacy_format_loads():
    x = torch.arange(12, dtype=torch.int16).reshape(3, 4)
    buf = io.BytesIO()
    torch.save({"x": x, "t": x.t(), "b": torch.tensor([True, False]), "n": 3}, buf,
               _use_new_zipfile_serialization=False)
    loaded = tl.load(io.BytesIO(buf.getvalue()))
    assert loaded["n"] == 3 and loaded["b"].tolist() == [True, False]
    assert loaded["t"].stride() == (1, 4) and loaded["t"].tolist() == x.t().tolist()
    with pytest.raises(NotImplementedError):
        tl.save(tl.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)


# ----- across processes ---------------------------------------------------------------------------------------
_TORCH_SIDE = """
import sys, numpy as np, torch
ck = torch.load(sys.argv[1] + '/tl.pt')
ref = np.load(sys.argv[1] + '/ref.npz')
model = torch.nn.Linear(3, 2)
model.load_state_dict(ck['model'])
opt = torch.optim.Adam(model.parameters())
opt.load_state_dict(ck['opt'])
assert np.array_equal(model.weight.detach().numpy(), ref['w']) and ck['step'] == 3
assert np.array_equal(opt.state_dict()['state'][0]['exp_avg'].numpy(), ref['m'])
torch.save({'w': model.weight * 2, 'bf16': torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}, sys.argv[1] + '/t.pt')
print("torch loaded torchlike's checkpoint")
"""
_TORCHLIKE_SIDE = """
import sys, numpy as np, torchlike as torch
ck = torch.load(sys.argv[1] + '/t.pt')
assert 'torch' not in sys.modules
assert np.array_equal(ck['w'].detach().numpy(), np.load(sys.argv[1] + '/ref.npz')['w'] * 2)
assert ck['w'].requires_grad and ck['bf16'].dtype == torch.bfloat16 and ck['bf16'].tolist() == [1.5, -2.25]
print("torchlike loaded torch's checkpoint")
"""


def test_checkpoints_cross_between_fresh_processes(tmp_path):
    """torchlike saves here; a fresh `python -c` with real torch loads it and saves; a fresh torchlike loads that."""
    tl.manual_seed(0)
    model = tl.nn.Linear(3, 2)
    opt = tl.optim.Adam(model.parameters())
    for _ in range(3):
        opt.zero_grad()
        model(tl.ones(4, 3)).sum().backward()
        opt.step()
    tl.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": 3}, tmp_path / "tl.pt")
    np.savez(tmp_path / "ref.npz", w=model.weight.detach().numpy(), m=opt.state[model.weight]["exp_avg"].numpy())
    for code, says in ((_TORCH_SIDE, "torch loaded torchlike's checkpoint"),
                       (_TORCHLIKE_SIDE, "torchlike loaded torch's checkpoint")):
        proc = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                              timeout=600, cwd=str(ROOT))
        assert proc.returncode == 0, proc.stderr
        assert says in proc.stdout
