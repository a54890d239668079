"""torchlike.autograd: backward, grad, grad modes, and the graph API (torch.autograd's names).

``backward`` and ``grad`` follow torch's order of checks: the Python-level gradient checks
(``_make_grads``) first, then the engine's checks on roots and inputs, so each misuse raises the
same error torch raises first, before anything is changed.
"""
import collections.abc
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._internal import grad_accumulator, gradient_edge, wrap
from .._tensor import Tensor as _Tensor, Size as _Size
from ..ops._bind import public
from ..ops.creation import zeros_like as _zeros_like
from ._batched import _batched_grad
from . import graph
from . import forward_ad
from .function import Function, once_differentiable
from . import functional
from . import profiler
from .variable import Variable
from .gradcheck import gradcheck, gradgradcheck  # shadows the submodule, as torch
from .._anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled
from .engine import _run_backward
from .._grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled,
                        is_multithreading_enabled, no_grad, set_grad_enabled, set_multithreading_enabled)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "set_multithreading_enabled",
           "is_multithreading_enabled", "detect_anomaly", "set_detect_anomaly", "graph", "Function", "once_differentiable",
           "Variable"]

_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid "
    "this. If you have to use this function, make sure to reset the .grad fields of your parameters to None after "
    "use to break the cycle and avoid the leak.")
_warned_create_graph = []  # torch warns once per process


def _is_tensor(x):
    return isinstance(x, _Tensor)


def _as_tuple(x):
    """A single Tensor or GradientEdge becomes a 1-tuple; any other iterable a tuple."""
    if _is_tensor(x) or isinstance(x, graph.GradientEdge):
        return (x,)
    return tuple(x)


def _inputs_tuple(inputs, fn_name):
    if _is_tensor(inputs) or isinstance(inputs, graph.GradientEdge):
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, collections.abc.Mapping):
        raise TypeError(f"`inputs` argument to `{fn_name}()` must be a dict, not {type(inputs).__name__}. "
                        "Other Mapping types are not supported.")
    return tuple(inputs)


def _grads_tuple(grads, n):
    if grads is None:
        return (None,) * n
    if _is_tensor(grads):
        return (grads,)
    return tuple(grads)


def _dtype_str(np_dtype):
    """How torch prints a dtype inside its messages: 'torch.float32'."""
    return "torch." + _dtype._from_np(np_dtype).name


_ones_cache = {}
_Tracer = jax.core.Tracer


def _ones(data):
    """A ones array like ``data`` (the implicit gradient of a scalar output), cached: arrays are immutable."""
    if isinstance(data, _Tracer):
        return jnp.ones(data.shape, data.dtype)
    key = (data.aval, data.sharding, data.committed)
    a = _ones_cache.get(key)
    if a is None:
        if len(_ones_cache) > 256:
            _ones_cache.clear()
        # committed only where data is: a committed seed commits the gradients, and a jitted program called with
        # committed and then uncommitted arrays compiles twice (the optimizer's step after its first)
        a = jax.device_put(np.ones(data.shape, data.dtype), data.sharding if data.committed else None)
        _ones_cache[key] = a
    return a


def _make_grads(outputs, grads, is_grads_batched=False):
    """torch's _make_grads: check the given gradients, create ones for scalar outputs (zip truncates)."""
    Tensor, Size = _Tensor, _Size
    new = []
    for out, g in zip(outputs, grads):
        if isinstance(out, Tensor):
            data = out._data
            if g is None:  # the common case: loss.backward()
                if not out._requires_grad:
                    new.append(None)
                    continue
                if data.size != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if data.dtype.kind != "f" and data.dtype.name != "bfloat16":
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                       f"{_dtype_str(data.dtype)}")
                new.append(wrap(_ones(data)))
                continue
            out_shape, out_dtype = data.shape, data.dtype
        elif isinstance(out, graph.GradientEdge):
            aval = out.node._out_meta[out.output_nr]
            out_shape, out_dtype = tuple(aval.shape), aval.dtype
            if g is None:
                if any(s != 1 for s in out_shape):
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if out_dtype.kind != "f" and out_dtype.name != "bfloat16":
                    raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                       f"{_dtype_str(out_dtype)}")
                new.append(wrap(jnp.ones(out_shape, out_dtype)))
                continue
        else:
            raise AssertionError("Expected output to be a torch.Tensor")
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        g_shape = g._data.shape[1:] if is_grads_batched else g._data.shape
        if g_shape != out_shape:
            gi, oi = _index_of(grads, g), _index_of(outputs, out)
            if isinstance(out, graph.GradientEdge) and is_grads_batched:
                raise RuntimeError("Batched grads are not supported with GradientEdge")
            if is_grads_batched:  # torch strips the batch dim twice when it reports the shape
                raise RuntimeError(
                    "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
                    "batch dimension. The sizes of the remaining dimensions are expected to match the shape "
                    f"of corresponding output, but a mismatch was detected: grad_output[{gi}] has a shape of "
                    f"{Size(g._data.shape[2:])} and output[{oi}] has a shape of {Size(out_shape)}. If you only "
                    "want some tensors in `grad_output` to be considered batched, consider using vmap.")
            raise RuntimeError(f"Mismatch in shape: grad_output[{gi}] has a shape of {Size(g_shape)} and "
                               f"output[{oi}] has a shape of {Size(out_shape)}.")
        if (out_dtype.kind == "c") != (g._data.dtype.kind == "c"):
            raise RuntimeError(
                "For complex Tensors, both grad_output and output are required to have the same dtype. "
                f"Mismatch in dtype: grad_output[{_index_of(grads, g)}] has a dtype of "
                f"{_dtype_str(g._data.dtype)} and output[{_index_of(outputs, out)}] has a dtype of "
                f"{_dtype_str(out_dtype)}.")
        new.append(g)
    return new


def _index_of(seq, item):
    """torch reports ``seq.index(item)`` (identity first): the first position holding this object."""
    for i, x in enumerate(seq):
        if x is item:
            return i
    return 0


def _roots(tensors, grads):
    """The engine's checks on the roots: (node, output_nr) per tensor or GradientEdge."""
    if len(tensors) != len(grads):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    roots = []
    for i, t in enumerate(tensors):
        if _is_tensor(t):
            node = t._grad_fn
            if node is not None:
                roots.append((node, t._output_nr))
                continue
            if not t._requires_grad:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
            roots.append((grad_accumulator(t), 0))
        elif isinstance(t, graph.GradientEdge):
            roots.append((t.node, t.output_nr))
        else:
            raise RuntimeError(f"element {i} of tensors tuple is neither a Tensor nor a GradientEdge")
    return roots


def _input_edges(inputs, accumulate_grad):
    """The engine's checks on ``inputs``; backward(inputs=) makes non-leaf inputs retain their grad."""
    edges = []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not _is_tensor(t):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if accumulate_grad:
            t.retain_grad()
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(gradient_edge(t))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves (or of ``inputs``)."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    inputs_tuple = () if inputs is None else _inputs_tuple(inputs, "backward")
    if inputs is not None and len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _as_tuple(tensors)
    grads = _make_grads(tensors, _grads_tuple(grad_tensors, len(tensors)))
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(tensors, grads)
    edges = _input_edges(inputs_tuple, True) if inputs_tuple else None
    if create_graph and not _warned_create_graph:
        _warned_create_graph.append(True)
        warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
    _run_backward(roots, grads, retain_graph, create_graph, inputs=edges, accumulate_grad=True)


@public(name="backward", function=False)
def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward: accumulate d(self)/d(leaf) into the leaves' ``.grad`` (see ``backward``)."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) (a tuple, or a dict for dict ``inputs``), without touching any ``.grad``."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs_tuple = _inputs_tuple(inputs, "grad")
    if len(inputs_tuple) == 0:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.",
                      FutureWarning, stacklevel=2)
    grads = _make_grads(outputs, _grads_tuple(grad_outputs, len(outputs)), is_grads_batched)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs, grads)
    edges = _input_edges(inputs_tuple, False)
    if is_grads_batched:
        result = _batched_grad(roots, grads, edges, retain_graph, create_graph, allow_unused)
    else:
        result = _run_backward(roots, grads, retain_graph, create_graph, inputs=edges, accumulate_grad=False,
                               allow_unused=allow_unused)
    if materialize_grads:
        if any(r is None and not _is_tensor(i) for r, i in zip(result, inputs_tuple)):
            raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
        result = [_zeros_like(i, requires_grad=create_graph) if r is None else r
                  for r, i in zip(result, inputs_tuple)]
    if type(inputs) is dict:
        return dict(zip(inputs.keys(), result))
    return tuple(result)
