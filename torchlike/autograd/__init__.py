"""torchlike.autograd: backward, grad, grad modes, and the graph API (torch.autograd's names)."""
import warnings

from . import graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly, is_anomaly_enabled, is_anomaly_check_nan_enabled
from .engine import _run_backward
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "detect_anomaly", "set_detect_anomaly", "graph"]

_CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
    "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid "
    "this. If you have to use this function, make sure to reset the .grad fields of your parameters to None after "
    "use to break the cycle and avoid the leak.")
_warned_create_graph = []


def _tensor_or_tensors(x):
    from .._tensor import Tensor
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return (x,)
    return tuple(x)


def _roots(outputs):
    """(node, output_nr) for each output, with torch's checks."""
    from .._tensor import Tensor
    roots = []
    for i, t in enumerate(outputs):
        if isinstance(t, graph.GradientEdge):
            roots.append((t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"element {i} of tensors tuple is neither a Tensor nor a GradientEdge")
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(t._gradient_edge())
    return roots


def _make_grads(outputs, grads):
    """torch's _make_grads: check given gradients, create ones for scalar outputs."""
    from .._tensor import Tensor, Size
    from ..ops.creation import ones_like
    new = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, graph.GradientEdge):
            if g is None:
                aval = out.node._out_meta[out.output_nr]
                shape, dt = aval.shape, aval.dtype
                if any(s != 1 for s in shape):
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                from ..ops.creation import ones
                g = ones(shape, dtype=dt)
            new.append(g)
            continue
        if isinstance(g, Tensor):
            if g._data.shape != out._data.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g._data.shape)} and "
                                   f"output[{i}] has a shape of {Size(out._data.shape)}.")
            if out.dtype.is_complex != g.dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the same dtype. "
                    f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and output[{i}] has a dtype "
                    f"of {out.dtype}.")
            new.append(g)
        elif g is None:
            if out._requires_grad:
                if out.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not out.dtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                       f"{out.dtype}")
                new.append(ones_like(out))
            else:
                new.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
    return new


def _input_edges(inputs, for_grad):
    from .._tensor import Tensor
    edges = []
    for t in inputs:
        if isinstance(t, graph.GradientEdge):
            edges.append((t.node, t.output_nr))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"all inputs have to be Tensors or GradientEdges, but got {type(t).__name__}")
        if not t._requires_grad:
            if for_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        edges.append(t._gradient_edge())
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the graph's leaves (or of ``inputs``)."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _tensor_or_tensors(inputs)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _tensor_or_tensors(tensors)
    grads = [None] * len(tensors) if grad_tensors is None else list(_tensor_or_tensors(grad_tensors))
    if len(grads) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grads)} gradients")
    roots = _roots(tensors)
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    edges = None
    if inputs is not None:
        edges = _input_edges(inputs, for_grad=False)
        if create_graph and not _warned_create_graph:
            _warned_create_graph.append(True)
            warnings.warn(_CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
        for t in inputs:  # torch: backward(inputs=) retains the gradient of non-leaf inputs
            if not isinstance(t, graph.GradientEdge) and t._grad_fn is not None:
                t.retain_grad()
    _run_backward(roots, grads, retain_graph, create_graph, inputs=edges, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Return d(outputs)/d(inputs) as a tuple, without touching any ``.grad``."""
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.",
                      FutureWarning, stacklevel=2)
    outputs = _tensor_or_tensors(outputs)
    single_input = not isinstance(inputs, (list, tuple))
    inputs = _tensor_or_tensors(inputs)
    grads = [None] * len(outputs) if grad_outputs is None else list(_tensor_or_tensors(grad_outputs))
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
    if materialize_grads and any(isinstance(i, graph.GradientEdge) for i in inputs):
        raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
    roots = _roots(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _input_edges(inputs, for_grad=True)
    if is_grads_batched:
        from ._batched import _batched_grad
        result = _batched_grad(outputs, roots, grads, edges, retain_graph, create_graph, allow_unused)
    else:
        grads = _make_grads(outputs, grads)
        result = _run_backward(roots, grads, retain_graph, create_graph, inputs=edges, accumulate_grad=False,
                               allow_unused=allow_unused)
    if materialize_grads:
        from ..ops.creation import zeros_like
        result = [zeros_like(i, requires_grad=True) if g is None else g for g, i in zip(result, inputs)]
    del single_input
    return tuple(result)
