"""torch's deprecated ``functorch`` package on torchlike: its make_functional API against torch's, and
``import functorch`` working in a script run with torchlike standing in for torch (tools/as_torch.py)."""
import os
import subprocess
import sys
import warnings

import functorch
import numpy as np
import pytest
import torch

import torchlike as tl
from torchlike._functorch import deprecated as tl_ft

RNG = np.random.default_rng(3)
X = RNG.standard_normal((4, 3))


def _models():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4), torch.nn.Linear(4, 2)).double()
    ours = tl.nn.Sequential(tl.nn.Linear(3, 4), tl.nn.BatchNorm1d(4), tl.nn.Linear(4, 2)).double()
    ours.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return ref, ours


def test_make_functional_with_buffers_and_jvp():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = []
        for ft, m, model in zip((functorch, tl_ft), (torch, tl), [model.eval() for model in _models()]):
            fmodel, params, buffers = ft.make_functional_with_buffers(model)
            tangents = tuple(m.ones_like(p) for p in params)
            out, jvp_out = ft.jvp(lambda p: fmodel(p, buffers, m.tensor(X)), (params,), (tangents,))
            grads = m.autograd.grad(fmodel(params, buffers, m.tensor(X)).sum(), params)
            results.append([out, jvp_out] + list(grads) + [len(params), len(buffers)])
    for a, b in zip(*results):
        if isinstance(a, int):
            assert a == b
        else:
            np.testing.assert_allclose(np.asarray(b.detach()), a.detach().numpy(), rtol=1e-7, atol=1e-9)


def test_batch_norm_training_under_jvp_refused_as_torch():
    """BatchNorm's running stats are captured tensors: updating them under a grad transform is torch's error;
    torchlike leaves them as they were."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        errors, buffers_after = [], None
        for ft, m, model in zip((functorch, tl_ft), (torch, tl), _models()):
            fmodel, params, buffers = ft.make_functional_with_buffers(model)
            tangents = tuple(m.ones_like(p) for p in params)
            with pytest.raises(RuntimeError) as e:
                ft.jvp(lambda p: fmodel(p, buffers, m.tensor(X)), (params,), (tangents,))
            errors.append(str(e.value)[:str(e.value).index("(aten::")])
            buffers_after = buffers
    assert errors[0] == errors[1]
    assert [np.asarray(b).tolist() for b in buffers_after] == [[0.0] * 4, [1.0] * 4, 0]


def test_make_functional_refuses_buffers_and_ensembles():
    ref, ours = _models()
    errors = []
    for ft, model in ((functorch, ref), (tl_ft, ours)):
        try:
            ft.make_functional(model)
        except RuntimeError as e:
            errors.append(str(e))
    assert len(errors) == 2 and errors[0] == errors[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = []
        for ft, m, model in ((functorch, torch, ref.eval()), (tl_ft, tl, ours.eval())):
            fmodel, params, buffers = ft.combine_state_for_ensemble([model, model])
            outs.append(ft.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, m.tensor(X)))
    np.testing.assert_allclose(np.asarray(outs[1].detach()), outs[0].detach().numpy(), rtol=1e-7)


SCRIPT = """
import functorch, torch
x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64)
model = torch.nn.Linear(2, 2).double()
with torch.no_grad():
    model.weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 4.0]])); model.bias.fill_(0.5)
func, params, buffers = functorch.make_functional_with_buffers(model)
_, jvp_out = functorch.jvp(lambda p: func(p, buffers, x).tanh(), (params,), (tuple(torch.ones_like(p) for p in params),))
print(type(torch.ones(1)).__module__, repr(jvp_out.sum().item()))
"""


def test_import_functorch_with_torchlike_standing_in(tmp_path):
    script = tmp_path / "uses_functorch.py"
    script.write_text(SCRIPT)
    tool = os.path.join(os.path.dirname(__file__), "..", "tools", "as_torch.py")
    out = subprocess.run([sys.executable, "-W", "ignore", tool, str(script)], capture_output=True, text=True,
                         check=True).stdout.split()
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]], dtype=torch.float64)
    w, b = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64), torch.tensor([0.5, 0.5], dtype=torch.float64)
    _, expected = torch.func.jvp(lambda w, b: torch.nn.functional.linear(x, w, b).tanh(), (w, b),
                                 (torch.ones_like(w), torch.ones_like(b)))
    assert out[0].startswith("torchlike") and float(out[1]) == pytest.approx(expected.sum().item(), rel=1e-12)
