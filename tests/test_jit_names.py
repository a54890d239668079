"""torchlike.jit: the torch.jit names model code calls run it eagerly, as eager torch runs it (torchlike/jit.py)."""
import numpy as np
import torch

import torchlike as tl


def _model(m):
    class Block(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = m.nn.Linear(3, 2)

        @m.jit.ignore
        def extra(self, x):
            return x * 2

        @m.jit.unused
        def unused(self, x):
            return x

        @m.jit.export
        def exported(self, x):
            return x + 1

        def forward(self, x):
            y = self.lin(x)
            if not m.jit.is_scripting() and not m.jit.is_tracing():
                y = y + self.extra(y)
            return m.jit.annotate(m.Tensor, y)
    return Block()


def test_jit_names_run_model_code_as_eager_torch():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3) / 5
    outs = []
    for m in (tl, torch):
        torch.manual_seed(0)
        block = _model(m)
        if m is tl:  # (torch's initial values, as the torch branch's: seed 0)
            torch.manual_seed(0)
            block.load_state_dict({k: tl.tensor(v.detach().numpy()) for k, v in _model(torch).state_dict().items()})
        outs.append(block(m.tensor(x)).detach().numpy())
        assert m.jit.is_scripting() is False and m.jit.is_tracing() is False
        assert block.exported(m.tensor(x)).shape == (2, 3)
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-6)
    block = _model(tl)
    assert tl.jit.script(block) is block and tl.jit.trace(block, (tl.ones(2, 3),)) is block
    f = tl.jit.ignore(drop=True)(lambda t: t * 3)
    assert f(tl.ones(1)).tolist() == [3.0]
    assert tl.jit.Final is torch.jit.Final
