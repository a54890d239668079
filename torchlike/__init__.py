"""torchlike: PyTorch's autograd on JAX. ``import torchlike as torch`` for the eager autograd it covers.

Importing it turns on JAX's 64-bit mode (``jax_enable_x64``): torch's defaults need int64 and float64
(integer tensors are int64, gradcheck runs in float64). Every torchlike creation function passes its
dtype explicitly, so float32 stays the default float. In your own JAX code, ``jnp.array([1.0])`` is
float64 and ``jnp.arange(3)`` int64 from then on: pass dtypes explicitly if you need 32-bit.
"""
import builtins as _builtins
import numbers as _numbers
import os as _os

import jax as _jax

_jax.config.update("jax_enable_x64", True)


def _enable_compilation_cache():
    """JAX's persistent compilation cache, on by default: each op's programs are compiled once per machine, not
    once per process. In ``$XDG_CACHE_HOME/torchlike/jax`` (``~/.cache/torchlike/jax``), or the directory in
    ``TORCHLIKE_COMPILATION_CACHE``; ``TORCHLIKE_COMPILATION_CACHE=0`` turns it off, and a cache directory you
    set in JAX's config yourself (before importing torchlike) is left as it is."""
    setting = _os.environ.get("TORCHLIKE_COMPILATION_CACHE", "")
    if setting == "0" or _jax.config.jax_compilation_cache_dir:
        return
    root = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    _jax.config.update("jax_compilation_cache_dir", setting or _os.path.join(root, "torchlike", "jax"))
    _jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)  # per-op programs compile in ~10-100 ms


_enable_compilation_cache()

from . import _dtype  # noqa: E402
from ._dtype import (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,  # noqa: E402,F401,A004
                     complex64, complex128, half, float, double, short, int, long, cfloat, cdouble,
                     dtype, get_default_dtype, set_default_dtype, promote_types, finfo, iinfo)
from ._tensor_str import set_printoptions, get_printoptions, printoptions  # noqa: E402
from ._device import device  # noqa: E402
from ._tensor import (Tensor, Size, memory_format, contiguous_format, channels_last,  # noqa: E402,F401
                      channels_last_3d, preserve_format)
from . import autograd  # noqa: E402
from ._grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,  # noqa: E402
                                 is_grad_enabled, is_inference_mode_enabled)
from ._anomaly_mode import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402
from . import ops  # noqa: E402
from .ops import _bind  # noqa: E402
_bind.bind()  # the op declarations' Tensor methods and the op modules' public names (before they are re-exported)
from .ops.creation import *  # noqa: E402,F401,F403
from .ops.creation import tensor, as_tensor, from_numpy, manual_seed  # noqa: E402,F401
from .ops.pointwise import *  # noqa: E402,F401,F403
from .ops.reduction import *  # noqa: E402,F401,F403
from .ops.shape import *  # noqa: E402,F401,F403
from .ops.linalg import *  # noqa: E402,F401,F403
from .ops.linalg_module import *  # noqa: E402,F401,F403
from .ops.indexing import *  # noqa: E402,F401,F403
from .ops.sorting import *  # noqa: E402,F401,F403
from .ops.other import *  # noqa: E402,F401,F403
from .ops.sampling import *  # noqa: E402,F401,F403
from .ops.special import *  # noqa: E402,F401,F403
from .ops.elementwise import *  # noqa: E402,F401,F403
from .ops.statistics import *  # noqa: E402,F401,F403
from .ops.spectral import *  # noqa: E402,F401,F403
from . import nn  # noqa: E402,F401
from .nn._spatial import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d,  # noqa: E402,F401,E501
                          pixel_shuffle, pixel_unshuffle, channel_shuffle, pairwise_distance)
_bind.guarded(globals(), "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d pixel_shuffle "
              "pixel_unshuffle channel_shuffle pairwise_distance", into=(nn.functional,))
_bind.guarded(vars(nn.functional), "native_channel_shuffle")
from ._top_level import *  # noqa: E402,F401,F403  (torch's thin top-level wrappers)
from .ops.tensor_types import *  # noqa: E402,F401,F403  (torch.FloatTensor, ...: the legacy types)
from .ops.legacy import *  # noqa: E402,F401,F403  (torch.range, svd, qr, cholesky: deprecated in torch)
from .ops.lowrank import *  # noqa: E402,F401,F403  (torch.svd_lowrank, pca_lowrank)
from .ops.storage import UntypedStorage, TypedStorage, is_storage  # noqa: E402,F401
from . import optim  # noqa: E402,F401
from . import library  # noqa: E402,F401
from . import serialization  # noqa: E402,F401
from .serialization import save, load  # noqa: E402,F401
from .utils import data as _data  # noqa: E402,F401  (torchlike.utils.data, as torch.utils.data)
from .utils import checkpoint as _checkpoint  # noqa: E402,F401  (torchlike.utils.checkpoint)
from . import version  # noqa: E402,F401
from .version import __version__  # noqa: E402,F401
from ._device import set_default_device, get_default_device  # noqa: E402,F401
from . import accelerator, amp, backends, cuda, fft, jit, profiler, special  # noqa: E402,F401
from . import return_types  # noqa: E402,F401
from math import e, inf, nan, pi  # noqa: E402,F401  (torch's constants)
newaxis = None
from . import linalg, _C  # noqa: E402,F401
from . import testing  # noqa: E402,F401
from . import distributions  # noqa: E402,F401
from . import func  # noqa: E402,F401
from .func import vmap  # noqa: E402,F401  (torch.vmap is torch.func.vmap)
from ._lobpcg import lobpcg  # noqa: E402,F401  (torch.lobpcg: torch's Python over torchlike's ops)
from . import _dynamo  # noqa: E402,F401
from ._dynamo import compile  # noqa: E402,F401,A004
from . import compiler  # noqa: E402,F401
from ._lazy_mode import lazy, sync  # noqa: E402,F401
from .amp import autocast  # noqa: E402,F401
from .amp.autocast_mode import is_autocast_enabled, get_autocast_dtype  # noqa: E402,F401
from .amp import autocast_mode as _autocast_mode  # noqa: E402
globals().update({n: getattr(_autocast_mode, n) for n in _autocast_mode._STATE_FUNCTIONS})
globals().update(_autocast_mode._DEPRECATED)
from .cuda import amp as _cuda_amp  # noqa: E402,F401  (torch.cuda.amp: after torchlike.amp, which imports cuda)
from . import cpu, distributed, hub, random, storage, types  # noqa: E402,F401  (torch's modules of these names)
from .utils import _pytree  # noqa: E402,F401  (torchlike.utils._pytree, as torch.utils._pytree)


def result_type(tensor, other):
    if not _builtins.all(isinstance(v, (Tensor, _numbers.Number)) for v in (tensor, other)):
        raise TypeError("result_type")  # (the guard raises torch's error)
    return _dtype._result_type(tensor, other)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_floating_point(input):
    return input.is_floating_point()


def is_complex(input):
    return input.is_complex()


_bind.guarded(globals(), "result_type is_floating_point is_complex")


_deterministic = {"mode": False, "warn_only": False}
_threads = [None]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record torch's determinism setting (XLA's CPU kernels are deterministic already)."""
    if not isinstance(mode, _builtins.bool):
        raise TypeError(f"_set_deterministic_algorithms(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    _deterministic.update(mode=mode, warn_only=_builtins.bool(warn_only))


def are_deterministic_algorithms_enabled():
    """Whether ``use_deterministic_algorithms(True)`` is in force."""
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether determinism was asked with ``warn_only=True``."""
    return _deterministic["mode"] and _deterministic["warn_only"]


def set_num_threads(int):  # noqa: A002 - torch's parameter name
    """Record the intra-op thread count (XLA sizes its CPU thread pool once, at start-up)."""
    if not isinstance(int, _builtins.int) or isinstance(int, _builtins.bool):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(int).__name__}")
    if int <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads[0] = int


def get_num_threads():
    """The thread count set by ``set_num_threads``, else the CPUs this process may use."""
    return _threads[0] or len(_os.sched_getaffinity(0))


from . import _xcache  # noqa: E402
_xcache.prefetch()  # (the executables this script used first last time load while it goes on starting up)

# The tape is Python objects (a Tensor and a Node per recorded op, a few more in lazy mode), so a training step
# leaves thousands of objects alive long enough to reach the collector's oldest generation, and every few steps
# that triggers a full collection, which rescans every object alive since start-up (~160,000 here, mostly JAX's
# and NumPy's): a 1,000-op chain spent a quarter of its step in the collector. Those objects live as long as the
# process, so they are moved out of the collector's sight (``gc.freeze()``, as long-running Python servers do).
# And the youngest generation is collected every 20,000 new objects, not 700 (Python's default, unless the program
# set its own): fewer, larger collections of the same objects, so the older generations are scanned 30x less often
# (the 1,000-op chain, paired: lazily 1.43x -> 1.21x torch, eagerly 2.74x -> 2.2-2.3x). Cyclic garbage lives a few
# thousand allocations longer. TORCHLIKE_GC_FREEZE=0 turns both off.
_GC_YOUNG = 20000
if _os.environ.get("TORCHLIKE_GC_FREEZE", "1") != "0":
    import gc as _gc
    _gc.freeze()
    if _gc.get_threshold()[0] == 700:
        _gc.set_threshold(_GC_YOUNG, *_gc.get_threshold()[1:])
