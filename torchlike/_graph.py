"""The autograd graph's data model: Node, AccumulateGrad, edges, saved tensors and saved-tensor hooks.

A Node is one recorded backward step. It holds `next_functions` (one ``(node, output_nr)`` edge
per differentiable forward input, ``(None, 0)`` where that input needs no gradient), what it saved
for its formula, and its hooks. Nodes never hold their output tensors, so there is no
Tensor <-> Node reference cycle: a graph is freed the moment its last output tensor goes.
"""
import collections
import threading
import weakref

import jax

from . import _grad_mode as _gm
from ._anomaly_mode import is_anomaly_enabled
from ._device import _device_of_jax
from ._dtype import _from_np
from ._tensor import Size, Tensor, _made, _message_type, _wrap
from .utils.hooks import _Hooks, _add_hook

_FREED = type("_Freed", (), {"__repr__": lambda self: "<freed>"})()  # a released saved-tensor slot


class _AllFreed:
    """``_for_backward`` of a node whose saved slots were all filled and then released: every slot is _FREED."""

    def __getitem__(self, index):
        return _FREED

    def __contains__(self, item):
        return item is _FREED

    def __bool__(self):
        return False  # nothing left to release


_ALL_FREED = _AllFreed()

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they "
    "have already been freed). Saved intermediate values of the graph are freed when you call .backward() "
    "or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
    "or if you need to access saved tensors after calling backward."
)


_InputMetadata = collections.namedtuple(
    "_InputMetadata", "shape dtype device is_nested_tensor is_cpp_nested_tensor", defaults=(None, False, False))


class Node:
    """Base class of every autograd node (built-in ops, AccumulateGrad, custom Functions)."""

    _name = "Node"
    _seq = 0
    next_functions = ()
    _for_backward = ()  # saved tensors (None: a slot not needed); _FREED once a backward released them
    _edge_outputs = None  # a create_graph formula's node: per next edge, the outputs that depend on it (engine)
    _kept_slots = ()  # slots of _for_backward a release keeps (torch's Scalar arguments: not saved variables)
    _release_always = False  # released by a backward without retain_graph even with nothing saved (CopySlices)
    _out_meta = ()  # per forward output: its jax aval (ShapedArray: .shape, .dtype)
    _pre_hooks = None  # dict id -> fn(grad_outputs)
    _post_hooks = None  # dict id -> fn(grad_inputs, grad_outputs)
    _tensor_pre_hooks = None  # dict output_nr -> dict id -> fn(grad), from Tensor.register_hook
    _retains_grad = None  # dict output_nr -> weakref of the tensor that called retain_grad()
    _metadata = None
    _mask = None  # op nodes: which next edges need a gradient (lets grad(inputs=...) prune formulas)
    _anomaly_trace = None  # the forward-pass stack that made the node, recorded in anomaly mode
    _runs_without_grads = False  # custom Function nodes run even when every incoming gradient is None

    def name(self):
        return self._name

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def _sequence_nr(self):
        return self._seq

    @property
    def metadata(self):
        """A per-node dict for user data (a property, as on torch's built-in nodes)."""
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def _input_metadata(self):
        """Per forward output: shape (Size), dtype and device, as torch's ``_InputMetadata``."""
        dev = _device_of_jax(jax.devices()[0])
        return tuple(_InputMetadata(Size(aval.shape), _from_np(aval.dtype), dev)
                     for aval in self._out_meta[:self._n_grad_outputs()])

    def _n_grad_outputs(self):
        """How many outputs torch's node has (what its hooks see as grad_outputs); None: all."""
        return None

    def register_prehook(self, fn):
        """``fn(grad_outputs) -> tuple | None`` runs before the node; a tuple replaces grad_outputs."""
        if self._pre_hooks is None:
            self._pre_hooks = _Hooks()
        return _add_hook(self._pre_hooks, fn)

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs) -> tuple | None`` runs after the node."""
        if self._post_hooks is None:
            self._post_hooks = _Hooks()
        return _add_hook(self._post_hooks, fn)

    def _register_tensor_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.get(output_nr)
        if hooks is None:
            hooks = self._tensor_pre_hooks[output_nr] = _Hooks()
        return _add_hook(hooks, fn)

    def _apply(self, grads):
        """grads: list (one per forward output) of Tensor or None -> list per next edge."""
        raise NotImplementedError

    def _release(self):
        """Free the saved tensors once a backward without retain_graph is done with them; a slot that was
        never filled stays None (torch reads it as None even then), the others raise torch's error."""
        saved = self._for_backward
        if saved:
            kept = self._kept_slots
            if kept:
                self._for_backward = tuple([s if s is None or i in kept else _FREED for i, s in enumerate(saved)])
            else:
                self._for_backward = _ALL_FREED if None not in saved else tuple([None if s is None else _FREED
                                                                                    for s in saved])
        elif self._release_always:  # torch's CopySlices drops its fn: it cannot run again, even with nothing saved
            self._for_backward = _ALL_FREED


class AccumulateGrad(Node):
    """Sink node of a leaf tensor: adds the incoming gradient into ``variable.grad``."""

    _name = "torch::autograd::AccumulateGrad"
    _seq = (1 << 64) - 1  # torch gives it UINT64_MAX: ready accumulators run first

    def __init__(self, variable):
        self.variable = variable
        self._out_meta = (variable._data.aval,)

    def name(self):
        return self._name
    # what it does with a gradient (ops/_accumulate.py) is leaf accumulation, which needs ops: the engine calls it


def grad_accumulator(t):
    """The AccumulateGrad of leaf ``t`` (one per leaf while any graph holds it, as in torch); None for a view that
    requires grad only because its base does."""
    ref = t._acc_ref
    acc = ref() if ref is not None else None
    if acc is None:
        if t._view_error is not None:  # a view torch will not rebuild: reading its grad_fn raises
            raise RuntimeError(t._view_error[0])
        if t._base is not None and not t._rg_own and t._base._requires_grad:
            return None  # a view made without history requires grad through its base, but has no edge (torch)
        acc = AccumulateGrad(t)
        t._acc_ref = weakref.ref(acc)
    return acc


def gradient_edge(t):
    """The edge autograd uses for ``t``: (grad_fn, output_nr), (AccumulateGrad, 0) for a leaf that requires grad,
    else (None, 0)."""
    if t._grad_fn is not None:
        return t._grad_fn, t._output_nr
    if t._requires_grad:
        return grad_accumulator(t), 0
    return None, 0


class _SavedHooksState(threading.local):
    stack = ()  # (pack, unpack) pairs, innermost last
    disabled = None  # error message while disable_saved_tensors_hooks is active
    mutation_ctx = None  # the active allow_mutation_on_saved_tensors context


_saved_hooks = _SavedHooksState()


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it are ``pack``-ed at save time (once, under no_grad)
    and ``unpack``-ed on every use. Thread-local; the innermost pair wins; no version check is done."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        if _saved_hooks.disabled is not None:
            raise RuntimeError(_saved_hooks.disabled)
        _saved_hooks.stack = _saved_hooks.stack + ((self.pack_hook, self.unpack_hook),)
        return self

    def __exit__(self, *exc):
        _saved_hooks.stack = _saved_hooks.stack[:-1]
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors go to host memory at save time and come back to their device when used."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device, non_blocking=pin_memory)
        super().__init__(pack, unpack)


class disable_saved_tensors_hooks:
    """Inside it, entering ``saved_tensors_hooks`` raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = _saved_hooks.disabled
        _saved_hooks.disabled = self.error_message
        return self

    def __exit__(self, *exc):
        _saved_hooks.disabled = self._prev
        return False


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors`` yields (torch's name)."""


class allow_mutation_on_saved_tensors(saved_tensors_hooks):
    """Inside it, tensors saved for backward may be modified in place: backward still sees the values they had
    when saved. torch clones them lazily before a write; JAX arrays are immutable, so the saved array simply
    stays as it was and only the version check is dropped. Backward must run inside the same context."""

    def __init__(self):
        ctx = self._ctx = _AllowMutationOnSavedContext()

        def unpack(array):
            if _saved_hooks.mutation_ctx is not ctx:
                raise AssertionError("Trying to backward outside of the 'allow_mutation_on_saved_tensors' context"
                                     "in which the graph was originally recorded.")
            return _wrap(array)
        super().__init__(lambda t: t._data, unpack)

    def __enter__(self):
        if _saved_hooks.mutation_ctx is not None:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        super().__enter__()
        _saved_hooks.mutation_ctx = self._ctx
        return self._ctx

    def __exit__(self, *exc):
        _saved_hooks.mutation_ctx = None
        return super().__exit__(*exc)


_PACK_MUTATES = ("A saved tensor pack hook is modifying its input in place. Tensors provided as input to pack hook "
                 "cannot be modified by in-place operations as this can lead to unexpected side-effects. Please open "
                 "an issue if you need to perform in-place operations on the input to a pack hook.")


class _HookedSavedTensor:
    """A tensor saved while saved_tensors_hooks were active: what ``pack`` returned, and the ``unpack`` hook."""

    __slots__ = ("packed", "unpack_hook", "output_nr", "edge")

    def __init__(self, tensor, hooks, output_nr):
        pack, self.unpack_hook = hooks
        version = tensor._version
        with _gm.no_grad():
            self.packed = pack(tensor)
        if tensor._version != version:
            raise RuntimeError(_PACK_MUTATES)
        self.output_nr = output_nr  # >= 0 for a saved output of the owning node
        self.edge = gradient_edge(tensor) if output_nr < 0 and tensor._requires_grad else None

    def unpack(self, node, user=False):
        """A new tensor with unpack's data and the saved tensor's autograd metadata (as torch overwrites it)."""
        t = self.unpack_hook(self.packed)
        if not isinstance(t, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        out = _wrap(t._data)
        fn, nr = (node, self.output_nr) if self.output_nr >= 0 else (self.edge or (None, 0))
        if fn is not None and out._data.dtype.kind in "fcV":
            out._requires_grad = True
            if isinstance(fn, AccumulateGrad):  # a leaf: same accumulator as the saved leaf
                out._acc_ref = weakref.ref(fn)
            else:
                out._grad_fn, out._output_nr = fn, nr
        return out

    def unpack_data(self, node, user=False):
        return self.unpack(node)._data


_LATE = object()  # (see _SavedTensor.vc)


class _SavedTensor:
    """One tensor saved for backward: its data at save time plus what the version check needs."""

    __slots__ = ("data", "tensor", "vc", "version", "output_nr")

    def __init__(self, data, tensor, vc, output_nr):
        self.data = data
        self.tensor = tensor  # the input Tensor itself (so _saved_self is x), None for outputs/scalars
        # shared version counter, None when there is nothing to check (wrapped scalars); _LATE: the input had none
        # yet (version 0): its counter, once made, is checked (no counter object per saved input)
        self.vc = vc
        self.version = vc.version if vc is not None and vc is not _LATE else 0
        self.output_nr = output_nr  # >= 0 for a saved output of the owning node

    def _counter(self):
        return self.vc if self.vc is not _LATE else self.tensor._version_counter()

    def unpack_data(self, node, user=False):
        t = self.tensor
        if t is not None and t._detached is not None and not user and self._detached_since(node):  # torch: a saved
            # non-leaf detach_()-ed since (not for _saved_*)
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                               "This is not supported, please use out-of-place `.detach()` instead")
        vc = self.vc
        if vc is not None:
            if vc is _LATE:
                vc = t._vc
            if vc is not None and vc.version != self.version:
                raise RuntimeError(self._modified_message(node))
        if t is not None and t._data is not self.data and t._data.aval == self.data.aval:
            # a write the version counter does not see (through .data): torch's saved tensor shares the tensor's
            # memory, so its backward reads the new values
            return t._data
        return self.data

    def unpack(self, node, user=False):
        """The Tensor for ``_saved_*`` (``user``) and for create_graph: the input itself, or the output re-wrapped."""
        data = self.unpack_data(node, user)
        if self.tensor is not None:
            return self.tensor
        t = _wrap(data)
        if self.output_nr >= 0 and data.dtype.kind in "fcV":  # an integer output (indices) has no history
            t._grad_fn = node
            t._output_nr = self.output_nr
            t._requires_grad = True
            t._vc = self.vc
        return t

    def _detached_since(self, node):
        """Whether the saved input was a non-leaf when ``node`` saved it and was detach_()-ed since."""
        t = self.tensor
        return t._detached is not None and t._grad_fn is None and t._detached[0] < _made(node) < t._detached[1]

    def _modified_message(self, node):
        data = self.data if self.tensor is None else self.tensor._data  # its size now (an out= may resize it)
        shape = list(data.shape)
        msg = ("one of the variables needed for gradient computation has been modified by an inplace "
               f"operation: [{_message_type(data.dtype)} {shape}]")
        grad_fn, nr = (node, self.output_nr) if self.output_nr >= 0 else (None, 0)
        if self.tensor is not None:  # torch names the input's grad_fn; the saving node's after a detach_()
            grad_fn, nr = ((node, self.tensor._detached[2]) if self._detached_since(node) else
                           (self.tensor._grad_fn, self.tensor._output_nr))
        if grad_fn is not None:
            msg += f", which is output {nr} of {_short_name(grad_fn.name())},"
        msg += f" is at version {self._counter().version}; expected version {self.version} instead."
        if is_anomaly_enabled():
            msg += (" Hint: the backtrace further above shows the operation that failed to compute its "
                    "gradient. The variable in question was changed in there or anywhere later. Good luck!")
        else:
            msg += (" Hint: enable anomaly detection to find the operation that failed to compute its gradient, "
                    "with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        return msg


def _short_name(name):
    """torch 2.13 names the node without its 'Backward' in the version-counter error, and without the overload
    number 0: MulBackward0 -> Mul, PowBackward1 -> Pow1, a custom Function's MyFnBackward -> MyFn."""
    i = name.rfind("Backward")
    if i > 0 and (name[i + 8:].isdigit() or not name[i + 8:]):
        number = name[i + 8:]
        return name[:i] + ("" if number == "0" else number)
    return name


class SavedTensor:
    """What ``node._raw_saved_<name>`` returns: one saved slot, on which per-tensor hooks can be set."""

    def __init__(self, node, index):
        self._node, self._index = node, index

    def _slot(self):
        return self._node._for_backward[self._index]

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack the saved tensor now with ``pack_hook``; ``unpack_hook`` then runs on every use."""
        slot = self._slot()
        if slot is _FREED:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need "
                "to backward through the graph a second time or if you need to access saved variables after "
                "calling backward.")
        if slot is None:
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is forbidden")
        if isinstance(slot, _HookedSavedTensor):
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        node = self._node
        hooked = _HookedSavedTensor(slot.unpack(node), (pack_hook, unpack_hook), slot.output_nr)
        slots = list(node._for_backward)
        slots[self._index] = hooked
        node._for_backward = tuple(slots)

    def unpack(self):
        slot = self._slot()
        if slot is _FREED:
            raise RuntimeError(_FREED_MSG)
        return None if slot is None else slot.unpack(self._node)


def _raw_saved_property(index):
    """Property ``_raw_saved_<name>`` of an op node: the slot itself (a SavedTensor)."""
    return property(lambda node: SavedTensor(node, index))


def _saved_property(index):
    """Property ``_saved_<name>`` of an op node: the saved value as a Tensor, or a saved static."""
    def get(node):
        s = node._for_backward[index]
        if s is _FREED:
            raise RuntimeError(_FREED_MSG)
        return s.unpack(node, True) if s is not None else None
    return property(get)


class GradientEdge(tuple):
    """``GradientEdge(node, output_nr)``: an edge of the graph, usable as a root or input of backward/grad."""

    __slots__ = ()

    def __new__(cls, node, output_nr, ownership_token=None):
        return tuple.__new__(cls, (node, output_nr))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])

    def __repr__(self):
        return f"GradientEdge(node={self[0]!r}, output_nr={self[1]})"
