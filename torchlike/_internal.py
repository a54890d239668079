"""torchlike's internal API: what the engine and the public layers (``autograd``, ``nn``, ``optim``, ``library``,
``interop``) use of the data model and the op table, under names without underscores.

Each name is defined in the module its import names; this module only gathers them, so a reader sees in one place
which internals are shared. Nothing here is public API.
"""
from ._anomaly_mode import _anomaly as anomaly, _warn_forward_trace as warn_forward_trace  # noqa: F401
from ._dtype import _from_np as dtype_from_np  # noqa: F401
from ._grad_mode import _state as grad_state, enable_grad, no_grad, set_grad_enabled  # noqa: F401
from ._graph import (_FREED as FREED, _FREED_MSG as FREED_MSG, AccumulateGrad, Node,  # noqa: F401
                     grad_accumulator, gradient_edge)
from ._tensor import (Tensor, _differentiable_dtype as differentiable_dtype,  # noqa: F401
                      _type_string as type_string, _typename as typename, _wrap as wrap)
from .ops import _layout as layout, _record as record, _traced as traced, _views as views  # noqa: F401
from .ops._accumulate import accumulate  # noqa: F401
from .ops._util import _HALF as HALF_TYPES, _opmath as opmath  # noqa: F401
from .ops._forward_ad import _set_tangent as set_tangent  # noqa: F401
from .ops._registry import (CHAIN_MAX, CHAIN_MIN, OpDef, op, _apply as apply,  # noqa: F401
                            _apply_inplace as apply_inplace, _chain_link as chain_link, _FnOp as FnOp,
                            _OpNode as OpNode, _plain_dispatch as plain_dispatch, _run_chain as run_chain)
from .ops._views import _commit as commit, _write as write  # noqa: F401
from .ops.creation import _np_to_dtype as np_to_dtype, _parse_to as parse_to  # noqa: F401
from .ops.linalg import (_CPP_NAMES as CPP_TYPE_NAMES, _broadcast_batch as broadcast_batch,  # noqa: F401
                         _word as type_word)


def grad_enabled():
    """Whether ops record autograd history in this thread (grad mode on)."""
    return grad_state.grad_enabled
