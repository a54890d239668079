"""The README's demo runs, prints torch's node names for its graph, and its loss falls."""
import contextlib
import io

import torchlike.demo as demo


def test_demo_trains_and_prints_graph():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        final = demo.main(steps=100)
    text = out.getvalue()
    for name in ("NllLossBackward0", "LogSoftmaxBackward0", "AddmmBackward0", "ReluBackward0", "TBackward0",
                 "AccumulateGrad  (0.weight: [32, 2])", "(4.bias: [3])", "(0): Linear(in_features=2, out_features=32"):
        assert name in text
    losses = [float(line.split("loss")[1].split()[0]) for line in text.splitlines() if line.strip().startswith("step")]
    assert losses[0] > 1.0 and final < losses[0] * 0.8
    assert all(b < a for a, b in zip(losses, losses[1:]))
