"""Devices and the top-level names scripts touch first (version, cuda, backends, accelerator, default device,
Variable, determinism, threads), each against torch 2.13's CPU-only build."""
import warnings

import pytest
import torch

import torchlike as tl


def _outcome(fn, mod):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(mod)
    except Exception as e:  # noqa: BLE001 - the exception itself is what we compare
        return type(e).__name__, str(e)
    return "ok", r if isinstance(r, (bool, int, float, str, type(None))) else str(r)


def _same(fn):
    assert _outcome(fn, tl) == _outcome(fn, torch)


CUDA = {
    "is_available": lambda m: m.cuda.is_available(),
    "device_count": lambda m: m.cuda.device_count(),
    "current_device": lambda m: m.cuda.current_device(),
    "set_device_0": lambda m: m.cuda.set_device(0),
    "set_device_neg": lambda m: m.cuda.set_device(-1),
    "set_device_cpu": lambda m: m.cuda.set_device("cpu"),
    "set_device_noindex": lambda m: m.cuda.set_device("cuda"),
    "set_device_none": lambda m: m.cuda.set_device(None),
    "get_device_name": lambda m: m.cuda.get_device_name(),
    "get_device_name_0": lambda m: m.cuda.get_device_name(0),
    "get_device_properties": lambda m: m.cuda.get_device_properties(0),
    "get_device_capability": lambda m: m.cuda.get_device_capability(),
    "synchronize": lambda m: m.cuda.synchronize(),
    "manual_seed": lambda m: m.cuda.manual_seed(0),
    "manual_seed_all": lambda m: m.cuda.manual_seed_all(0),
    "empty_cache": lambda m: m.cuda.empty_cache(),
    "memory_allocated": lambda m: m.cuda.memory_allocated(),
    "memory_allocated_cpu": lambda m: m.cuda.memory_allocated("cpu"),
    "max_memory_allocated": lambda m: m.cuda.max_memory_allocated(),
    "memory_reserved": lambda m: m.cuda.memory_reserved(),
    "max_memory_reserved": lambda m: m.cuda.max_memory_reserved(),
    "reset_peak_memory_stats": lambda m: m.cuda.reset_peak_memory_stats(),
    "is_bf16_supported": lambda m: m.cuda.is_bf16_supported(),
    "is_initialized": lambda m: m.cuda.is_initialized(),
    "init": lambda m: m.cuda.init(),
    "tensor_on_cuda": lambda m: m.tensor(1.0, device="cuda"),
    "zeros_on_cuda1": lambda m: m.zeros(2, device="cuda:1"),
    "dot_cuda": lambda m: m.zeros(2).cuda(),
    "to_cuda": lambda m: m.zeros(2).to("cuda"),
    "to_cuda_device": lambda m: m.zeros(2).to(m.device("cuda")),
    "cuda_index": lambda m: m.zeros(2).cuda(0),
    "device_int": lambda m: m.zeros(2, device=0),
    "is_cuda": lambda m: m.zeros(2).is_cuda,
    "get_device": lambda m: m.zeros(2).get_device(),
}


@pytest.mark.parametrize("name", list(CUDA))
def test_cuda_as_torch_cpu_build(name):
    _same(CUDA[name])


OTHERS = {
    "cudnn_enabled": lambda m: m.backends.cudnn.enabled,
    "cudnn_benchmark": lambda m: m.backends.cudnn.benchmark,
    "cudnn_deterministic": lambda m: m.backends.cudnn.deterministic,
    "cudnn_allow_tf32": lambda m: m.backends.cudnn.allow_tf32,
    "cudnn_is_available": lambda m: m.backends.cudnn.is_available(),
    "cudnn_version": lambda m: m.backends.cudnn.version(),
    "matmul_allow_tf32": lambda m: m.backends.cuda.matmul.allow_tf32,
    "matmul_fp16_reduction": lambda m: m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    "matmul_unknown": lambda m: m.backends.cuda.matmul.foo,
    "cuda_is_built": lambda m: m.backends.cuda.is_built(),
    "mps_is_available": lambda m: m.backends.mps.is_available(),
    "mps_is_built": lambda m: m.backends.mps.is_built(),
    "opt_einsum_enabled": lambda m: m.backends.opt_einsum.enabled,
    "opt_einsum_strategy": lambda m: m.backends.opt_einsum.strategy,
    "opt_einsum_is_available": lambda m: m.backends.opt_einsum.is_available(),
    "acc_is_available": lambda m: m.accelerator.is_available(),
    "acc_current": lambda m: m.accelerator.current_accelerator(),
    "acc_count": lambda m: m.accelerator.device_count(),
    "acc_index": lambda m: m.accelerator.current_device_index(),
    "acc_set_index": lambda m: m.accelerator.set_device_index(0),
    "acc_sync": lambda m: m.accelerator.synchronize(),
    "default_device": lambda m: m.get_default_device(),
    "deterministic": lambda m: m.are_deterministic_algorithms_enabled(),
    "deterministic_warn_only": lambda m: m.is_deterministic_algorithms_warn_only_enabled(),
    "deterministic_bad": lambda m: m.use_deterministic_algorithms("x"),
    "threads_zero": lambda m: m.set_num_threads(0),
    "threads_float": lambda m: m.set_num_threads(1.5),
    "version_ge_2": lambda m: m.__version__ >= "2.0",
    "version_ge_2_2": lambda m: m.__version__ >= "2.2",
    "version_tuple": lambda m: m.__version__ >= (2, 13),
    "version_lt_3": lambda m: m.__version__ < "3",
    "version_eq_release": lambda m: m.__version__ == "2.13.0",
    "version_cuda": lambda m: m.version.cuda,
    "version_hip": lambda m: m.version.hip,
}


@pytest.mark.parametrize("name", list(OTHERS))
def test_backends_accelerator_and_globals_as_torch(name):
    _same(OTHERS[name])


def test_backend_flags_are_settable():
    for m in (torch, tl):
        old = m.backends.cudnn.benchmark, m.backends.cuda.matmul.allow_tf32
        m.backends.cudnn.benchmark = True
        m.backends.cuda.matmul.allow_tf32 = True
        assert (m.backends.cudnn.benchmark, m.backends.cuda.matmul.allow_tf32) == (True, True)
        m.backends.cudnn.benchmark, m.backends.cuda.matmul.allow_tf32 = old
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        tl.backends.cuda.matmul.foo = 1


def test_version():
    assert tl.__version__.startswith(tl.version.torch_compat + ".")
    assert isinstance(tl.__version__, str) and tl.version.torchlike in tl.__version__
    assert tl.__version__.split("+")[0] == torch.__version__.split("+")[0]


@pytest.mark.parametrize("dev", ["cpu", "cpu:0", "cuda", None, "foo", 3])
def test_set_default_device(dev):
    def fn(m):
        try:
            m.set_default_device(dev)
            return m.get_default_device()
        finally:
            m.set_default_device(None)
    _same(fn)


def test_default_device_torchlike_cannot_hold():
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):  # torch: at the next tensor
        tl.set_default_device("cuda:1")
    with pytest.raises(RuntimeError, match="torchlike cannot hold tensors on device type 'meta'"):
        tl.set_default_device("meta")
    assert tl.get_default_device() == tl.device("cpu")


def test_deterministic_and_threads_round_trip():
    for m in (torch, tl):
        n = m.get_num_threads()
        m.set_num_threads(1)
        assert m.get_num_threads() == 1
        m.set_num_threads(n)
        m.use_deterministic_algorithms(True, warn_only=True)
        assert m.are_deterministic_algorithms_enabled() and m.is_deterministic_algorithms_warn_only_enabled()
        m.use_deterministic_algorithms(False)
        assert not m.are_deterministic_algorithms_enabled()
    assert tl.get_num_threads() == torch.get_num_threads()


VARIABLE = {
    "plain": lambda m: m.autograd.Variable(m.ones(2)),
    "requires_grad": lambda m: m.autograd.Variable(m.ones(2), requires_grad=True),
    "truthy": lambda m: m.autograd.Variable(m.ones(2), 1),
    "empty": lambda m: m.autograd.Variable(),
    "list": lambda m: m.autograd.Variable([1.0]),
    "volatile_rg": lambda m: m.autograd.Variable(m.ones(2), True, True),
    "nonleaf": lambda m: m.autograd.Variable(m.ones(2, requires_grad=True) * 2),
    "isinstance": lambda m: isinstance(m.ones(1), m.autograd.Variable),
    "isinstance_param": lambda m: isinstance(m.nn.Parameter(m.ones(1)), m.autograd.Variable),
    "isinstance_int": lambda m: isinstance(1, m.autograd.Variable),
}


@pytest.mark.parametrize("name", list(VARIABLE))
def test_variable(name):
    _same(VARIABLE[name])


def test_variable_is_a_detached_alias():
    for m in (torch, tl):
        t = m.ones(2)
        v = m.autograd.Variable(t, requires_grad=True)
        assert v is not t and v.is_leaf and v.requires_grad and not t.requires_grad
        t.add_(1)
        assert v.tolist() == [2.0, 2.0] and v._version == t._version


@pytest.mark.parametrize("dev", ["mps", "xpu", "hip", "xla", "vulkan"])
def test_moving_to_a_device_torch_cpu_lacks(dev):
    _same(lambda m: m.zeros(2).to(dev))
