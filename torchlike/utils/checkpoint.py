"""torch.utils.checkpoint: trade compute for memory by recomputing a function's forward in backward.

Non-reentrant (``use_reentrant=False``, what torch recommends): the function runs normally under saved-tensor
hooks that keep a placeholder instead of each tensor its graph saves; the first time backward unpacks one, the
function runs again (same inputs, the RNG state of the first run so dropout draws the same mask) under hooks that
collect what the recomputed graph saves, in the same order, and each placeholder gets its tensor. The graph is the
one the function records (torch's nodes), so ``autograd.grad``, hooks and higher order work through it.

Reentrant (``use_reentrant=True``, torch's default still, with its warning): one ``CheckpointFunctionBackward``
node; the forward runs without grad and backward re-runs it with grad and calls ``backward`` inside, so
``autograd.grad`` (and ``inputs=``) are refused as in torch.
"""
import contextlib
import warnings
import weakref

from .. import _grad_mode as _gm
from .._graph import saved_tensors_hooks
from .._tensor import Tensor
from .. import autograd as _autograd
from ..autograd import engine as _engine
from ..amp import autocast_mode as _autocast
from ..autograd.function import Function
from ..ops import sampling as _sampling

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction", "noop_context_fn",
           "set_checkpoint_early_stop"]

_USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


class CheckpointError(RuntimeError):
    """The recomputation saved different tensors than the first run (torch's class)."""


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


_early_stop = [True]


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Whether recomputation stops once every saved tensor it must give back has been recomputed."""
    old, _early_stop[0] = _early_stop[0], enable
    try:
        yield
    finally:
        _early_stop[0] = old


def _rng_state(preserve):
    return _sampling.get_rng_state() if preserve else None


def _autocast_state():
    """The autocast state now (per device type: on, dtype; the cast cache), which a recomputation re-enters, as
    torch's checkpoint does: the recomputed graph saves what the first run's saved."""
    return ([(dev, _autocast.is_autocast_enabled(dev), _autocast.get_autocast_dtype(dev)) for dev in ("cpu", "cuda")],
            _autocast._state.cache_enabled)


@contextlib.contextmanager
def _autocast_as(state):
    regions, cache = state
    with contextlib.ExitStack() as stack:
        for dev, on, dtype in regions:
            stack.enter_context(_autocast.autocast(dev, dtype=dtype, enabled=on, cache_enabled=cache))
        yield


@contextlib.contextmanager
def _replayed_rng(state):
    """Run with the generator at ``state`` (None: as it is); the generator's state afterwards is put back."""
    if state is None:
        yield
        return
    now = _sampling.get_rng_state()
    _sampling.set_rng_state(state)
    try:
        yield
    finally:
        _sampling.set_rng_state(now)


# ----- reentrant -----------------------------------------------------------------------------------------------
class CheckpointFunction(Function):
    """The reentrant checkpoint as one node: forward without grad, backward recomputes with grad."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng_state = _rng_state(preserve_rng_state)
        ctx.autocast = _autocast_state()
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with _gm.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _engine._is_checkpoint_valid():
            raise RuntimeError("When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                               "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
                               "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t.detach().requires_grad_(t.requires_grad)
        with _replayed_rng(ctx.rng_state), _gm.enable_grad(), _autocast_as(ctx.autocast):
            outputs = ctx.run_function(*inputs)
        outputs = (outputs,) if isinstance(outputs, Tensor) else outputs
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        _autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(inp.grad if isinstance(inp, Tensor) else None for inp in inputs)


# ----- non-reentrant -----------------------------------------------------------------------------------------
class _Holder:
    __slots__ = ("index", "__weakref__")


class _Frame:
    """One checkpointed call: how to recompute it, what its first run saved (metadata, for the determinism check),
    the placeholders the graph still holds (weak), and each backward's recomputed tensors by placeholder index."""

    def __init__(self, check):
        self.check = check
        self.meta = []
        self.holders = []
        self.recomputed = {}  # backward's task id -> {index: tensor}
        self.done = set()  # task ids that recomputed


def _meta(t):
    return tuple(t.shape), t.dtype, t.device


def _non_reentrant(function, args, kwargs, context_fn, determinism_check, preserve_rng_state):
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got {determinism_check}")
    state, autocast_state = _rng_state(preserve_rng_state), _autocast_state()
    forward_context, recompute_context = context_fn()
    frame = _Frame(determinism_check == "default")

    def recompute(task):
        """Run the function again, collecting what its graph saves (in order) for backward ``task``."""
        got = frame.recomputed[task] = {}
        index = [0]

        def pack(t):
            i = index[0]
            index[0] += 1
            if i >= len(frame.meta):
                raise CheckpointError("torch.utils.checkpoint: trying to save more tensors during recomputation "
                                      "than during the original forward pass.")
            if frame.check and _meta(t) != frame.meta[i]:
                raise CheckpointError(
                    "torch.utils.checkpoint: Recomputed values for the following tensors have different metadata "
                    f"than during the forward pass.\ntensor at position {i}:\nsaved metadata: {frame.meta[i]}\n"
                    f"recomputed metadata: {_meta(t)}\n")
            got[i] = t.detach()
            if _early_stop[0] and all(h() is None or h().index in got for h in frame.holders):
                raise _StopRecomputation
            return got[i]
        try:
            with _replayed_rng(state), _gm.enable_grad(), _autocast_as(autocast_state), recompute_context, \
                    saved_tensors_hooks(pack, _same):
                function(*args, **kwargs)
        except _StopRecomputation:
            pass
        frame.done.add(task)

    def pack(t):
        holder = _Holder()
        holder.index = len(frame.meta)
        frame.meta.append(_meta(t))
        frame.holders.append(weakref.ref(holder))
        return holder

    def unpack(holder):
        task = _engine._current_graph_task_id()
        got = frame.recomputed.get(task)
        if got is None or holder.index not in got:
            if task in frame.done:
                raise CheckpointError("torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                                      "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                                      "make sure to do so only once. Otherwise please open an issue with details "
                                      "on your use case.")
            recompute(task)
            got = frame.recomputed[task]
            if holder.index not in got:
                raise CheckpointError("torch.utils.checkpoint: A different number of tensors was saved during the "
                                      "original forward and recomputation.\nNumber of tensors saved during forward: "
                                      f"{len(frame.meta)}\nNumber of tensors saved during recomputation: "
                                      f"{len(got)}.\n")
        return got.pop(holder.index)  # (released once given back, as torch's)

    with forward_context, saved_tensors_hooks(pack, unpack):
        return function(*args, **kwargs)


def _same(x):
    return x


class _StopRecomputation(Exception):
    pass


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, preserve_rng_state=True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its saved tensors: backward recomputes them (see the module
    docstring for the two variants)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if _gm._state.grad_enabled and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=2)
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    return _non_reentrant(function, args, kwargs, context_fn, determinism_check, preserve_rng_state)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of modules (or an ``nn.Sequential``) in ``segments`` checkpointed chunks (the last chunk
    runs normally)."""
    if use_reentrant is None:
        warnings.warn(_USE_REENTRANT_WARNING, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from_module = hasattr(functions, "children") and not isinstance(functions, (list, tuple))
    functions = list(functions.children()) if from_module else list(functions)

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
