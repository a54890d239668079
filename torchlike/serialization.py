"""torch.save / torch.load in torch's own file format, written and read without torch.

A checkpoint is a zip archive whose records sit in one folder named after the file (``archive`` for a file-like
object): ``data.pkl`` (the object, pickled with every tensor reduced to ``torch._utils._rebuild_tensor_v2(storage,
storage_offset, size, stride, requires_grad, OrderedDict())`` and every storage a persistent id ``('storage',
torch.FloatStorage, key, location, numel)``), ``.format_version``, ``.storage_alignment``, ``byteorder``, one
``data/<key>`` per storage (its raw bytes), ``version`` and ``.data/serialization_id``. The zip is laid out as
torch's writer (miniz) lays it out: no compression, each record's data 64-byte aligned by an ``FB`` extra field,
a data descriptor after each non-empty record, zip64 end records. Tensors sharing a storage are saved once and
load as members of one storage again (a write to one shows in the others); non-contiguous tensors keep their
strides. ``load`` also reads torch's legacy (pre-1.6, non-zip) format.
"""
import collections
import contextlib
import io
import os
import pickle
import pickletools
import struct
import sys
import warnings
import zipfile
import zlib
from _compat_pickle import IMPORT_MAPPING, NAME_MAPPING

import jax
import numpy as np

from . import _dtype
from ._device import _accelerator, device
from ._internal import views, wrap
from ._tensor import Size, Tensor, _contiguous_strides
from .autograd.graph import increment_version
from .nn.parameter import Parameter, is_lazy

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals",
           "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_ALIGNMENT = 64
_U32 = 0xFFFFFFFF
_ZIP64_LIMIT = _U32  # records this large, or starting this far in, get zip64 fields (as miniz writes them)
_MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the legacy format's header
_LEGACY_PROTOCOL_VERSION = 1001
_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will likely succeed, "
    "but it can result in arbitrary code execution. Do it only if you got the file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
                 "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")


class _Global:
    """A torch global named in a pickle (``torch._utils._rebuild_tensor_v2``, ``torch.FloatStorage``)."""
    __slots__ = ("module", "name")

    def __init__(self, module, name):
        self.module, self.name = module, sys.intern(name)

    def __call__(self, *args):  # pickle wants the callable of a reduce tuple to be callable
        raise TypeError(f"{self.module}.{self.name} is torch's, not torchlike's")


_STORAGE_NAMES = {"bool": "BoolStorage", "uint8": "ByteStorage", "int8": "CharStorage", "int16": "ShortStorage",
                  "int32": "IntStorage", "int64": "LongStorage", "float16": "HalfStorage",
                  "bfloat16": "BFloat16Storage", "float32": "FloatStorage", "float64": "DoubleStorage",
                  "complex64": "ComplexFloatStorage", "complex128": "ComplexDoubleStorage"}
_STORAGE_GLOBALS = {d: _Global("torch", n) for d, n in _STORAGE_NAMES.items()}
# torch's pickler finds a dtype's module by searching sys.modules: a "torch" string other than the interned one of
# classes, which protocol 4's memo (one MEMOIZE per distinct string object) shows
_DTYPES_MODULE = "".join(("tor", "ch"))
_DTYPE_GLOBALS = {d: _Global(_DTYPES_MODULE, d.name) for d in _dtype.ALL}
_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_TORCH_DEVICE = _Global("torch", "device")
_TORCH_SIZE = _Global("torch", "Size")
_LAZY_GLOBALS = {True: _Global("torch.nn.parameter", "UninitializedParameter"),  # by isinstance(t, Parameter)
                 False: _Global("torch.nn.parameter", "UninitializedBuffer")}


# ----- save --------------------------------------------------------------------------------------------------
class _StorageRef:
    """A tensor's storage while pickling (becomes the persistent id)."""
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class _Plain:
    """A Parameter's data as the plain tensor torch pickles inside ``_rebuild_parameter``."""
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """pickle's Python pickler, writing torch's globals by name (torch need not be importable)."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # storage identity -> (key, array); keys "0", "1", ... in the order torch gives

    def _save_torch_global(self, obj):
        g = _DTYPE_GLOBALS[obj] if isinstance(obj, _dtype.dtype) else obj
        if self.proto >= 4:
            self.save(g.module)
            self.save(g.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{g.module}\n{g.name}\n".encode())
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_Global] = _save_torch_global
    dispatch[_dtype.dtype] = _save_torch_global

    def reducer_override(self, obj):
        if is_lazy(obj):  # (torch pickles an uninitialized tensor as its class called with requires_grad)
            return _LAZY_GLOBALS[isinstance(obj, Parameter)], (obj.requires_grad,)
        if isinstance(obj, Parameter):
            return _REBUILD_PARAMETER, (_Plain(obj), obj.requires_grad, collections.OrderedDict())
        if isinstance(obj, (Tensor, _Plain)):
            t = obj.tensor if isinstance(obj, _Plain) else obj
            sizes, strides, offset = views._geom_of(t)
            return _REBUILD_TENSOR, (_StorageRef(t), int(offset), tuple(int(s) for s in sizes),
                                     tuple(int(s) for s in strides), not isinstance(obj, _Plain) and
                                     t.requires_grad, collections.OrderedDict())
        if isinstance(obj, device):
            return _TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index)
        if isinstance(obj, Size):
            return _TORCH_SIZE, (tuple(obj),)
        return NotImplemented

    def persistent_id(self, obj):
        if not isinstance(obj, _StorageRef):
            return None
        t = obj.tensor
        storage = views._storage_of(t) if t._sgeom is not None else t._storage  # (a laid-out result's, made now)
        owner = storage if storage is not None else t
        array = storage.data if storage is not None else t._data
        if array.dtype != t._data.dtype:
            raise RuntimeError("Cannot save multiple tensors or storages that view the same data as different types")
        key = self.storages.setdefault(id(owner), (str(len(self.storages)), array, owner))[0]
        dev = t.device
        location = sys.intern("cpu" if dev.type == "cpu" else str(dev))
        return "storage", _STORAGE_GLOBALS[_dtype._from_np(array.dtype).name], key, location, int(array.size)


class _ZipWriter:
    """Writes records as torch's PyTorchStreamWriter (miniz) does: stored, 64-byte aligned data, data
    descriptors, zip64 end of central directory."""

    def __init__(self, f, name):
        self.f, self.prefix, self.pos, self.central = f, name + "/", 0, []

    def _out(self, b):
        self.f.write(b)
        self.pos += len(b)

    def record(self, name, data):
        data = memoryview(data).cast("B")
        full, size, offset = (self.prefix + name).encode(), data.nbytes, self.pos
        big_size, big_offset = size >= _ZIP64_LIMIT, offset >= _ZIP64_LIMIT
        z64 = struct.pack("<QQ", size, size) * big_size + struct.pack("<Q", offset) * big_offset
        z64 = struct.pack("<HH", 1, len(z64)) + z64 if z64 else b""  # the zip64 extra field, when needed
        pad = -(offset + 30 + len(full) + len(z64) + 4) % _ALIGNMENT
        extra = z64 + b"FB" + struct.pack("<H", pad) + b"Z" * pad  # torch's padding field aligns the data
        crc = zlib.crc32(data) if size else 0
        flags = 0x0808 if size else 0x0800  # UTF-8 names; crc and sizes in a data descriptor after the data
        s32 = _U32 if big_size else size
        self._out(struct.pack("<IHHHHHIIIHH", 0x04034B50, 0, flags, 0, 0, 0, 0, s32 * big_size, s32 * big_size,
                              len(full), len(extra)) + full + extra)
        self._out(data)
        if size:
            self._out(struct.pack("<IIQQ" if z64 else "<IIII", 0x08074B50, crc, size, size))
        self.central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0, 0, flags, 0, 0, 0, crc, s32, s32,
                                        len(full), len(z64), 0, 0, 0, 0, _U32 if big_offset else offset) + full + z64)

    def finish(self):
        start = self.pos
        for entry in self.central:
            self._out(entry)
        n, size, end = len(self.central), self.pos - start, self.pos
        self._out(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 0x031E, 0x2D, 0, 0, n, n, size, start))
        self._out(struct.pack("<IIQI", 0x07064B50, 0, end, 1))
        self._out(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF), min(size, _U32),
                              _U32 if start >= _ZIP64_LIMIT else start, 0))


def _archive_name(path):
    """torch's basename(): the file name without directories and its last extension."""
    base = path.replace("\\", "/").rpartition("/")[2]
    return base.rpartition(".")[0] if "." in base else base


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True,
         _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a path or a writable file-like object) in torch's zip format: ``torch.load``
    reads it, and torchlike.load reads torch's checkpoints."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a 'write' attribute")
    if pickle_module is not pickle:
        raise NotImplementedError("torchlike.save pickles with the standard pickle module only")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torchlike.save writes torch's zip format only (_use_new_zipfile_serialization="
                                  "False, the legacy format, can be loaded but not saved)")
    is_path = isinstance(f, (str, os.PathLike))
    if is_path:
        path = os.fspath(f)
        name = _archive_name(path)
        if not name:
            raise RuntimeError(f"[enforce fail at inline_container.cc:720] . invalid file name: {path}")
        parent = path.replace("\\", "/").rpartition("/")[0]
        if parent and not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    with open(path, "wb") if is_path else contextlib.nullcontext(f) as out:
        z = _ZipWriter(out, name if is_path else "archive")
        z.record("data.pkl", buf.getbuffer())
        z.record(".format_version", b"1")
        z.record(".storage_alignment", str(_ALIGNMENT).encode())
        if not _disable_byteorder_record:
            z.record("byteorder", sys.byteorder.encode())
        for key, array, _ in pickler.storages.values():
            z.record("data/" + key, np.ascontiguousarray(np.asarray(array)).reshape(-1).view(np.uint8))
        z.record("version", b"3\n")
        z.record(".data/serialization_id", _serialization_id(z.central).encode())
        z.finish()
        if hasattr(out, "flush"):
            out.flush()


def _serialization_id(central):
    """torch's 40 digits: 20 from the records' names, 20 from their data's CRC-32s (c10::hash_combine'd; torch
    hashes the names with std::hash, so this half differs from what torch would write)."""
    names = crcs = 0
    for entry in central:
        crc, n = struct.unpack_from("<I", entry, 16)[0], struct.unpack_from("<H", entry, 28)[0]
        names = _hash_combine(names, zlib.crc32(entry[46:46 + n]))
        crcs = _hash_combine(crcs, crc) if crc else crcs
    return f"{names:020d}{crcs:020d}"


def _hash_combine(seed, value):
    """c10::hash_combine on 64-bit values."""
    return (seed ^ (value + 0x9E3779B9 + (seed << 6) + (seed >> 2))) & 0xFFFFFFFFFFFFFFFF


# ----- load --------------------------------------------------------------------------------------------------
class _StorageType:
    """What ``torch.FloatStorage`` and the other storage classes name in a checkpoint: a dtype."""
    __slots__ = ("dtype",)

    def __init__(self, dtype):
        self.dtype = dtype


class UntypedStorage:
    """The storage a callable ``map_location(storage, location)`` receives, on the CPU as in torch: return it,
    ``storage.cpu()``, ``storage.cuda(i)`` or ``storage.to(device)`` to say where its tensors go (or None)."""

    def __init__(self, nbytes, dev="cpu"):
        self._nbytes = nbytes
        self.device = device(dev)

    def nbytes(self):
        return self._nbytes

    def size(self):
        return self._nbytes

    def to(self, device=None, non_blocking=False):  # noqa: A002 - torch's parameter name
        return UntypedStorage(self._nbytes, device)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):  # noqa: A002
        if _accelerator() != "cuda":
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)


def _restore_device(location):
    """The device of torch's default_restore_location for a location tag."""
    if isinstance(location, device):
        location = str(location)
    if location.startswith("cuda") and _accelerator() != "cuda":
        raise RuntimeError(
            "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
            "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
            "your storages to the CPU.")
    try:
        return device(location)
    except (RuntimeError, TypeError):
        raise RuntimeError("don't know how to restore data location of torch.storage.UntypedStorage (tagged with "
                           f"{location})") from None


def _restorer(map_location):
    """``(nbytes, location) -> device`` from a map_location (None, str, device, dict or callable), as torch's."""
    if map_location is None:
        return lambda nbytes, location: _restore_device(location)
    if isinstance(map_location, dict):
        return lambda nbytes, location: _restore_device(map_location.get(location, location))
    if isinstance(map_location, (str, bytes, device)):
        loc = map_location.decode() if isinstance(map_location, bytes) else str(map_location)
        return lambda nbytes, location: _restore_device(loc)

    def restore(nbytes, location):
        result = map_location(UntypedStorage(nbytes), location)
        if result is None:
            return _restore_device(location)
        if not isinstance(result, UntypedStorage):
            raise TypeError(f"map_location must return a storage (the one it received, moved with .cpu(), "
                            f".cuda() or .to()) or None, not {type(result).__name__}")
        return result.device
    return restore


class _LoadedStorage:
    """One storage of a checkpoint: its elements (a flat host array), the device its tensors go to, and the
    torchlike storage they join (so that a write to one shows in the others, as in torch)."""

    def __init__(self, flat, jax_device):
        self.flat, self.device, self.shared = flat, jax_device, None

    def tensor(self, offset, size, stride):
        flat = self.flat
        n = int(np.prod(size, dtype=np.int64))
        whole = offset == 0 and n == flat.size and (stride == _contiguous_strides(size) or n <= 1)
        # sliced on the host: no XLA program per shape
        host = np.lib.stride_tricks.as_strided(flat[offset:], size, [s * flat.itemsize for s in stride]) if n \
            else np.empty(size, flat.dtype)
        t = wrap(jax.device_put(host if host.flags.c_contiguous else host.copy(), self.device))
        if self.shared is None:  # the storage's array takes the first whole tensor's shape (no geometry needed)
            self.shared = views._storage_of(t if whole else wrap(jax.device_put(flat, self.device)))
            if whole:
                return t
        views._join(t, self.shared, None if whole and self.shared.data.shape == size else (size, stride, offset))
        return t


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    t = storage.tensor(storage_offset, tuple(size), tuple(stride))
    t._requires_grad = bool(requires_grad)
    increment_version(t)  # torch's rebuild sets the tensor's storage (set_), a write: loaded tensors are at version 1
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _rebuild_tensor_v2(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = Parameter(data, requires_grad)
    for k, v in state.items():
        setattr(param, k, v)
    return param


def _safe_globals():
    names = {("collections", "OrderedDict"): collections.OrderedDict, ("collections", "Counter"): collections.Counter,
             ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
             ("torch._utils", "_rebuild_tensor"): _rebuild_tensor,
             ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
             ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter_with_state,
             ("torch.nn.parameter", "Parameter"): Parameter, ("torch", "Tensor"): Tensor,
             ("torch", "Size"): Size, ("torch", "device"): device, ("_codecs", "encode"): _codecs_encode,
             ("builtins", "bytearray"): bytearray, ("builtins", "set"): set, ("builtins", "complex"): complex}
    names.update({("torch", d.name): d for d in _dtype.ALL})
    names.update({("torch", s): _StorageType(_dtype._by_name(d)) for d, s in _STORAGE_NAMES.items()})
    return names


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    return obj.encode(encoding, errors)


_SAFE = _safe_globals()
_user_safe = {}


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or ``(obj, "module.name")`` pairs) in ``load(weights_only=True)``."""
    for g in safe_globals:
        obj, name = g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}")
        _user_safe[tuple(name.rsplit(".", 1))] = obj


def get_safe_globals():
    """The globals ``add_safe_globals`` allowed."""
    return list(_user_safe.values())


def clear_safe_globals():
    """Forget what ``add_safe_globals`` allowed."""
    _user_safe.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """``add_safe_globals`` for the duration of a ``with`` block."""
    saved = dict(_user_safe)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _user_safe.clear()
        _user_safe.update(saved)


def _unsafe_global(module, name):
    full = f"{module}.{name}"
    if module == "builtins":
        full = name
    return pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full}])` or the `torch.serialization.safe_globals([{full}])` "
        "context manager to allowlist this global if you trust this class/function.")


def _fix_import(module, name):
    if (module, name) in NAME_MAPPING:
        return NAME_MAPPING[(module, name)]
    return IMPORT_MAPPING.get(module, module), name


# the opcodes torch's weights_only unpickler reads (protocol 2's, no FRAME, no STACK_GLOBAL, no BINBYTES)
_WEIGHTS_ONLY_OPS = {op[0] for op in (
    pickle.GLOBAL, pickle.NEWOBJ, pickle.REDUCE, pickle.BUILD, pickle.APPEND, pickle.APPENDS, pickle.SETITEM,
    pickle.SETITEMS, pickle.MARK, pickle.TUPLE, pickle.TUPLE1, pickle.TUPLE2, pickle.TUPLE3, pickle.NONE,
    pickle.NEWFALSE, pickle.NEWTRUE, pickle.EMPTY_TUPLE, pickle.EMPTY_LIST, pickle.EMPTY_DICT, pickle.EMPTY_SET,
    pickle.BININT, pickle.BININT1, pickle.BININT2, pickle.BINFLOAT, pickle.BINUNICODE, pickle.SHORT_BINSTRING,
    pickle.BINPERSID, pickle.BINGET, pickle.LONG_BINGET, pickle.BINPUT, pickle.LONG_BINPUT, pickle.LONG1,
    pickle.PROTO, pickle.STOP)}


def _check_weights_only(data):
    """torch's weights_only checks, in stream order: only its opcodes, only allowed globals."""
    try:
        for op, arg, _ in pickletools.genops(data):
            code = op.code.encode("latin-1")[0]
            if op.name == "PROTO" and arg != 2:
                warnings.warn(f"Detected pickle protocol {arg} in the checkpoint, which was not the default pickle "
                              "protocol used by `torch.load` (2). The weights_only Unpickler might not support all "
                              "instructions implemented by this protocol, please file an issue for adding support "
                              "if you encounter this.", stacklevel=3)
            if code not in _WEIGHTS_ONLY_OPS:
                raise pickle.UnpicklingError(f"Unsupported operand {code}")
            if op.name == "GLOBAL":
                key = _fix_import(*arg.split(" ", 1))
                if key not in _SAFE and key not in _user_safe:
                    raise _unsafe_global(*key)
    except ValueError as e:  # pickletools' own error for a corrupt stream
        raise pickle.UnpicklingError(str(e)) from None


class _Unpickler(pickle.Unpickler):
    """Maps torch's globals to torchlike's; with ``weights_only`` refuses every other global."""

    def __init__(self, file, weights_only, load_storage, **kwargs):
        super().__init__(file, **kwargs)
        self.weights_only = weights_only
        self.load_storage = load_storage

    def find_class(self, module, name):
        key = _fix_import(module, name)
        if key in _SAFE:
            return _SAFE[key]
        if key in _user_safe:
            return _user_safe[key]
        if self.weights_only:
            raise _unsafe_global(*key)
        if module == "torch" or module.startswith("torch."):
            module = "torchlike" + module[5:]
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or not pid or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got {pid!r}")
        return self.load_storage(pid[1].dtype, _ascii(pid[2]), _ascii(pid[3]), pid[4], *pid[5:])


def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _host_array(raw, dtype, byteorder):
    """A storage's elements from its raw bytes in ``byteorder``."""
    arr = np.frombuffer(raw, dtype=dtype._np)
    if byteorder != sys.byteorder and dtype.itemsize > 1:
        k = dtype.itemsize // 2 if dtype.is_complex else dtype.itemsize
        arr = arr.view(f"u{k}").byteswap().view(dtype._np)
    return arr


def _wo_message(message):
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two options, "
                "\033[1mdo those steps only if you trust the source of the checkpoint\033[0m. "
                f"\n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with `weights_only=True` please check "
                "the recommended steps in the following error message.\n\tWeightsUnpickler error: " + message
                + _DOCS_MESSAGE)
    return (f"Weights only load failed. {_UNSAFE_MESSAGE}\nPlease file an issue with the following so that we can "
            "make `weights_only=True` compatible with your use case: WeightsUnpickler error: \n\n" + message
            + _DOCS_MESSAGE)


def _load_zip(f, restore, weights_only, pickle_load_args):
    try:
        z = zipfile.ZipFile(f)
    except zipfile.BadZipFile:
        raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central directory") \
            from None
    with z:
        names = z.namelist()
        prefix = names[0].partition("/")[0] + "/" if names else ""  # the folder of the first record, as torch
        records = set(names)
        if prefix + "data.pkl" not in records:
            raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
        byteorder = z.read(prefix + "byteorder").decode() if prefix + "byteorder" in records else "little"
        loaded = {}

        def load_storage(dtype, key, location, numel):
            if key not in loaded:
                raw = z.read(f"{prefix}data/{key}")
                dev = restore(len(raw), location)
                loaded[key] = _LoadedStorage(_host_array(raw, dtype, byteorder), dev._jax_device())
            return loaded[key]

        data = z.read(prefix + "data.pkl")
        if weights_only:
            _check_weights_only(data)
        return _Unpickler(io.BytesIO(data), weights_only, load_storage, **pickle_load_args).load()


class _Probe:
    """Stands in for every global while the legacy format's storage types are read (nothing real is called)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Probe()

    def __setstate__(self, state):
        pass

    def append(self, item):
        pass

    def extend(self, items):
        pass

    def __setitem__(self, key, value):
        pass


class _ProbeUnpickler(pickle.Unpickler):
    """A first pass over a legacy pickle: each storage key's dtype and location, calling nothing."""

    def __init__(self, file, **kwargs):
        super().__init__(file, **kwargs)
        self.found = {}

    def find_class(self, module, name):
        key = _fix_import(module, name)
        return _SAFE[key] if isinstance(_SAFE.get(key), _StorageType) else _Probe

    def persistent_load(self, pid):
        self.found[_ascii(pid[2])] = (pid[1].dtype, _ascii(pid[3]))
        return _Probe()


def _load_legacy(f, restore, weights_only, pickle_load_args):
    """torch's format before 1.6: magic number, protocol, system info, the object, its storage keys, then each
    storage as an int64 element count and its bytes."""
    def header():
        return _Unpickler(f, weights_only, None, **pickle_load_args).load()
    if header() != _MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol_version = header()
    if protocol_version != _LEGACY_PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol_version}")
    little = header().get("little_endian", True)
    start = f.tell()
    if weights_only:
        _check_weights_only(f)
        f.seek(start)
    probe = _ProbeUnpickler(f, **pickle_load_args)
    probe.load()
    found = probe.found
    storages = {}
    for key in pickle.Unpickler(f, **pickle_load_args).load():
        dtype, location = found[key]
        n = struct.unpack("<q" if little else ">q", f.read(8))[0]
        raw = f.read(n * dtype.itemsize)
        storages[key] = _LoadedStorage(_host_array(raw, dtype, "little" if little else "big"),
                                       restore(len(raw), location)._jax_device())
    end = f.tell()

    def load_storage(dtype, key, location, numel, view_metadata=None):
        if view_metadata is None:
            return storages[key]
        view_key, offset, size = view_metadata  # a view of a storage: offset and size in elements
        if view_key not in storages:
            storages[view_key] = _LoadedStorage(storages[key].flat[offset:offset + size], storages[key].device)
        return storages[view_key]
    f.seek(start)
    result = _Unpickler(f, weights_only, load_storage, **pickle_load_args).load()
    f.seek(end)
    return result


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load an object saved by ``torch.save`` or ``torchlike.save`` from ``f`` (a path or a readable, seekable
    file-like object). ``map_location`` (None, a device or its name, a dict of location names, or a callable
    ``(storage, location)``) chooses where tensors go. ``weights_only`` (the default, as in torch 2.6+) allows
    only tensors, dtypes, devices, containers and the globals ``add_safe_globals`` allowed."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_module not in (None, pickle):
        raise NotImplementedError("torchlike.load unpickles with the standard pickle module only")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap and not isinstance(f, (str, os.PathLike)):
        raise ValueError("f must be a file path in order to use the mmap argument")
    restore = _restorer(map_location)
    with open(f, "rb") if isinstance(f, (str, os.PathLike)) else contextlib.nullcontext(f) as opened:
        start = opened.tell()
        is_zip = opened.read(4) == b"PK\x03\x04"
        opened.seek(start)
        try:
            if is_zip:
                return _load_zip(opened, restore, weights_only, pickle_load_args)
            if mmap:
                name = f"{f}, " if isinstance(f, str) else ""
                raise RuntimeError("mmap can only be used with files saved with "
                                   f"`torch.save({name}_use_new_zipfile_serialization=True), please torch.save "
                                   "your checkpoint with this option in order to use mmap.")
            return _load_legacy(opened, restore, weights_only, pickle_load_args)
        except pickle.UnpicklingError as e:
            if weights_only:
                raise pickle.UnpicklingError(_wo_message(str(e))) from None
            raise
