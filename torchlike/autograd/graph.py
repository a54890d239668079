"""torch.autograd.graph: the graph API. Node, GradientEdge and saved-tensor hooks are the data model
(``torchlike._graph``, below the op table); multi-grad hooks need the engine, so they live here.
"""
import threading

# the public face of torchlike._graph: its public names (and _FREED, which tests read) are re-exported
from .._graph import (Node, AccumulateGrad, GradientEdge, SavedTensor, saved_tensors_hooks,  # noqa: F401
                      save_on_cpu, disable_saved_tensors_hooks, allow_mutation_on_saved_tensors, gradient_edge,
                      _FREED)
from ..utils.hooks import RemovableHandle  # noqa: F401  (torchlike.autograd.graph.RemovableHandle, as before)
from .._tensor import Tensor
from . import engine
from ._dot import to_dot, draw  # noqa: F401  (graph pictures)

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "allow_mutation_on_saved_tensors", "Node", "GradientEdge", "get_gradient_edge", "increment_version",
           "set_warn_on_accumulate_grad_stream_mismatch"]


def get_gradient_edge(tensor):
    """The edge autograd uses for ``tensor``: (grad_fn or AccumulateGrad, output_nr)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    return GradientEdge(*gradient_edge(tensor))


class _MultiHandle:
    """Handle of a multi-grad hook: ``remove()`` removes the hook from every tensor."""

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward: mode "all" with the list of the tensors' gradients (None for those
    not computed in this backward) after the last one is computed; mode "any" with the first gradient."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)
    if mode == "any":
        ran = set()  # graph task ids in which fn already ran

        def any_hook(grad):
            task = engine._current_graph_task_id()
            with lock:
                if task in ran:
                    return
                ran.add(task)
            fn(grad)
        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad))

    nodes = [gradient_edge(t)[0] for t in tensors]  # held, so a leaf keeps its AccumulateGrad
    state = {}  # graph task id -> [calls so far, expected calls, gradient buffer]

    def inner_hook(idx):
        def hook(grad):
            task = engine._current_graph_task_id()
            with lock:
                entry = state.get(task)
                if entry is None:
                    expected = sum(map(engine._will_engine_execute_node, nodes))
                    entry = state[task] = [0, expected, [None] * len(tensors)]
                entry[0] += 1
                entry[2][idx] = grad
                done = entry[0] == entry[1]
                if done:
                    del state[task]
            if done:
                fn(entry[2])
        return hook
    return _MultiHandle(tuple(t.register_hook(inner_hook(i)) for i, t in enumerate(tensors) if t.requires_grad))


def increment_version(tensor):
    """Bump the version counter of a tensor (or of each tensor of an iterable), as an in-place write would."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not t._is_inference:  # inference tensors have no version counter: a no-op, as in torch
            t._version_counter().version += 1


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """Accepted for compatibility: torch's CUDA-stream warning has no counterpart on JAX (a no-op)."""
