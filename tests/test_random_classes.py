"""Classes of differences the random programs (tests/random_programs.py) found, each checked against torch on the
same inputs: values, dtypes, strides, gradients, node names, ``_version``, ``requires_grad``, errors (type and
leading message)."""
import numpy as np
import pytest
import torch

import torchlike as tl


def _observe(m, fn):
    """What a user sees of ``fn(m)``: each returned tensor's value, dtype, strides, requires_grad, node name and
    version, or the error (type and first line of the message)."""
    try:
        out = fn(m)
    except Exception as e:  # noqa: BLE001
        return ("error", type(e).__name__, str(e).splitlines()[0] if str(e) else "")
    outs = out if isinstance(out, (tuple, list)) else (out,)
    seen = []
    for t in outs:
        if isinstance(t, (m.Tensor,)):
            seen.append((np.asarray(t.detach().tolist()).tolist(), str(t.dtype).split(".")[-1], tuple(t.stride()),
                         t.requires_grad, None if t.grad_fn is None else t.grad_fn.name(), t._version))
        else:
            seen.append(t if not isinstance(t, np.ndarray) else t.tolist())
    return seen


def _same(fn):
    a, b = _observe(tl, fn), _observe(torch, fn)
    assert a == b, (a, b)


def _leaf(m, dtype="float64"):
    return m.tensor(np.arange(6.0).reshape(2, 3) / 4, dtype=getattr(m, dtype), requires_grad=True)


# ----- an in-place op on a leaf that requires grad: torch's autograd check comes before the op's own checks
LEAF_FIRST = {
    "index_add_range": lambda m: _leaf(m).index_add_(0, m.tensor([5]), m.ones(1, 3, dtype=m.float64)),
    "index_add_dtype": lambda m: _leaf(m).index_add_(0, m.tensor([0]), m.ones(1, 3)),
    "index_add_index_2d": lambda m: _leaf(m).index_add_(0, m.tensor([[0]]), m.ones(1, 3, dtype=m.float64)),
    "scatter_dtype": lambda m: _leaf(m).scatter_(0, m.zeros(2, 3, dtype=m.long), m.ones(2, 3)),
    "scatter_range": lambda m: _leaf(m).scatter_(0, m.full((2, 3), 7), m.ones(2, 3, dtype=m.float64)),
    "scatter_add_range": lambda m: _leaf(m).scatter_add_(0, m.full((2, 3), 7), m.ones(2, 3, dtype=m.float64)),
    "masked_fill_mask": lambda m: _leaf(m).masked_fill_(m.ones(2, 3), 1.),
    "masked_fill_shape": lambda m: _leaf(m).masked_fill_(m.ones(2, 2, 3, dtype=m.bool), 1.),
    "masked_fill_value": lambda m: _leaf(m).masked_fill_(m.ones(2, 3, dtype=m.bool), m.ones(2)),
    "fill_value": lambda m: _leaf(m).fill_(m.ones(2)),
    "copy_shape": lambda m: _leaf(m).copy_(m.ones(4)),
    "div_mode": lambda m: _leaf(m).div_(2, rounding_mode="bad"),
    "view_of_leaf": lambda m: _leaf(m)[0].index_add_(0, m.tensor([5]), m.ones(1, dtype=m.float64)),
}


@pytest.mark.parametrize("case", sorted(LEAF_FIRST))
def test_leaf_check_before_argument_checks(case):
    _same(LEAF_FIRST[case])


def _detach_in_inference(m, view):
    x = _leaf(m)
    t = x[0] if view else (x * 1 if view is None else x)
    with m.inference_mode():
        r = t.detach_()
    return r is t, t, x


@pytest.mark.parametrize("view", [False, True, None])
def test_detach_in_inference_mode_changes_nothing(view):
    _same(lambda m: _detach_in_inference(m, view))
