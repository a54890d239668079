"""Pipeline schedules (torchlike.distributed.pipelining): each rank's action order against torch 2.13's schedules,
the bubble fractions, torch's errors, gradients against an unpipelined reference on one device, and the example
on 4 simulated CPU devices in its own process (the rest of the suite keeps one JAX device)."""
import os
import pathlib
import re
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest
import torch
from torch.distributed.pipelining import schedules as torch_schedules
from torch.distributed.pipelining.stage import PipelineStage as TorchStage

import torchlike
from torchlike import nn
from torchlike.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,
                                              ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble)

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAIRS = {ScheduleGPipe: torch_schedules.ScheduleGPipe, Schedule1F1B: torch_schedules.Schedule1F1B,
         ScheduleInterleavedZeroBubble: torch_schedules.ScheduleInterleavedZeroBubble,
         ScheduleZBVZeroBubble: torch_schedules.ScheduleZBVZeroBubble}
SINGLE = (ScheduleGPipe, Schedule1F1B)


def torch_order(cls, pp, per_rank, n_microbatches):
    """torch's pipeline_order for ``pp`` ranks (mocked stages, no process group), compute actions only."""
    stage = mock.create_autospec(TorchStage, instance=True)
    stage.group_rank, stage.group_size, stage.submod, stage.num_stages = 0, pp, None, pp * per_rank
    schedule = PAIRS[cls](stage if cls in SINGLE else [stage] * per_rank, n_microbatches)
    return {r: [repr(a) for a in actions if a is not None and a.computation_type.value in "FIWB"]
            for r, actions in schedule.pipeline_order.items()}


def stages(n, device="cpu"):
    return [PipelineStage(nn.Linear(2, 2), i, n, device) for i in range(n)]


def make(cls, n_stages, n_microbatches, pp=None, **kwargs):
    if cls not in SINGLE:
        kwargs["pp_group_size"] = pp
    return cls(stages(n_stages), n_microbatches, **kwargs)


CASES = [(cls, pp, m) for cls in (ScheduleGPipe, Schedule1F1B, ScheduleInterleavedZeroBubble) for pp in (2, 3, 4)
         for m in (pp, 8, 12)]


@pytest.mark.parametrize("cls,pp,m", CASES)
def test_order_is_torchs(cls, pp, m):
    mine = make(cls, pp, m, pp)
    theirs = torch_order(cls, pp, 1, m)
    for rank in range(pp):
        got = [repr(a) for a in mine.pipeline_order[rank]]
        if cls is Schedule1F1B and rank == pp - 1:
            # torch's IR names the last rank's forwards F1..Fm (its _step_microbatches runs F0, B0, F1, B1, ...)
            assert got == [f"{rank}{k}{i}" for i in range(m) for k in "FB"]
            assert theirs[rank] == [f"{rank}{k}{i + (k == 'F')}" for i in range(m) for k in "FB"]
        else:
            assert got == theirs[rank]


@pytest.mark.parametrize("cls", [ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble])
@pytest.mark.parametrize("pp,m", [(2, 2), (2, 8), (4, 4), (4, 8), (3, 12)])
def test_multi_stage_order_is_torchs(cls, pp, m):
    mine = make(cls, 2 * pp, m, pp)
    theirs = torch_order(cls, pp, 2, m)
    assert {r: [repr(a) for a in acts] for r, acts in mine.pipeline_order.items()} == theirs


@pytest.mark.parametrize("pp,m", [(2, 4), (4, 4), (4, 8), (4, 16), (3, 6)])
def test_bubble_fractions(pp, m):
    textbook = (pp - 1) / (m + pp - 1)
    assert make(ScheduleGPipe, pp, m).bubble_fraction() == pytest.approx(textbook)
    assert make(Schedule1F1B, pp, m).bubble_fraction() == pytest.approx(textbook)
    zb1p = make(ScheduleInterleavedZeroBubble, pp, m, pp).bubble_fraction()
    zbv = make(ScheduleZBVZeroBubble, 2 * pp, m, pp).bubble_fraction()
    assert 0 < zbv <= zb1p < textbook
    # with a full backward twice as long as a forward, GPipe's bubble is still (p - 1) / (m + p - 1)
    assert make(ScheduleGPipe, pp, m).bubble_fraction({"F": 1, "B": 3, "I": 1, "W": 1}) == pytest.approx(textbook)


def test_timeline_respects_dependencies():
    schedule = make(ScheduleInterleavedZeroBubble, 4, 8, 4)
    done = {}
    for start, end, _, a in schedule.timeline():
        key = (a.stage_index, a.computation_type.value, a.microbatch_index)
        if key[1] == "F" and key[0] > 0:
            assert done[(key[0] - 1, "F", key[2])] <= start
        if key[1] == "I":
            assert done[(key[0], "F", key[2])] <= start
            if key[0] < 3:
                assert done[(key[0] + 1, "I", key[2])] <= start
        if key[1] == "W":
            assert done[(key[0], "I", key[2])] <= start
        done[key] = end
    assert len(done) == 4 * 8 * 3


def error_of(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def test_errors_are_torchs():
    assert error_of(lambda: make(Schedule1F1B, 4, 3)) == error_of(lambda: torch_order(Schedule1F1B, 4, 1, 3))
    assert error_of(lambda: make(ScheduleInterleavedZeroBubble, 4, 9, 4)) == \
        error_of(lambda: torch_order(ScheduleInterleavedZeroBubble, 4, 1, 9))
    assert error_of(lambda: make(ScheduleZBVZeroBubble, 4, 8, 4)) == \
        (ValueError, "ZBV requires exactly 2 stages per rank, but got 1.")
    assert error_of(lambda: PipelineStage(nn.Linear(1, 1), 4, 4, "cpu")) == \
        (ValueError, "Stage index 4 is out of range of 4")
    schedule = make(ScheduleGPipe, 2, 8, loss_fn=nn.functional.mse_loss)
    x, y = torchlike.randn(4, 2), torchlike.randn(4, 2)
    assert error_of(lambda: schedule.step(x, target=y)) == (ValueError, "Expecting 8 arg_mbs but got 4")
    with torchlike.no_grad():
        kind, message = error_of(lambda: schedule.step(x, target=y))
    assert kind is RuntimeError and message.startswith("step() requires gradients to be enabled")


def model_and_parts(n):
    torchlike.manual_seed(0)
    model = nn.Sequential(*[nn.Sequential(nn.Linear(6, 6), nn.Tanh()) for _ in range(n)])
    return model, [model[i] for i in range(n)]


@pytest.mark.parametrize("cls,n_stages,pp", [(ScheduleGPipe, 4, None), (Schedule1F1B, 4, None),
                                             (ScheduleInterleavedZeroBubble, 4, 4),
                                             (ScheduleInterleavedZeroBubble, 4, 2), (ScheduleZBVZeroBubble, 4, 2)])
def test_gradients_equal_the_unpipelined_model(cls, n_stages, pp):
    model, parts = model_and_parts(n_stages)
    x, y = torchlike.randn(12, 6), torchlike.randn(12, 6)
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    ref = {name: p.grad.numpy().copy() for name, p in model.named_parameters()}
    model.zero_grad()
    kwargs = {} if cls in SINGLE else {"pp_group_size": pp}
    schedule = cls([PipelineStage(p, i, n_stages, "cpu") for i, p in enumerate(parts)], 4,
                   loss_fn=nn.functional.mse_loss, **kwargs)
    losses = []
    out = schedule.step(x, target=y, losses=losses)
    assert len(losses) == 4 and out.shape == (12, 6)
    np.testing.assert_allclose(np.mean([l.item() for l in losses]), loss.item(), rtol=1e-6)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), ref[name], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(schedule.eval(x).detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_four_devices_in_a_subprocess():
    """The example on 4 (of 8) simulated CPU devices: loss and gradients equal the one-device reference, and the
    zero-bubble schedules' bubble is below the textbook (p - 1) / (m + p - 1) of GPipe and 1F1B."""
    env = dict(os.environ, XLA_FLAGS=os.environ["XLA_FLAGS"] + " --xla_force_host_platform_device_count=8", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "pipeline_schedule.py"), "--check"], env=env,
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.rstrip().endswith("OK")
    names = ("GPipe", "1F1B", "InterleavedZeroBubble (ZB1P)", "ZBVZeroBubble, 8 stages in a V")
    rows = {line[:32].strip(): line[32:].split() for line in proc.stdout.splitlines() if line[:32].strip() in names}
    assert sorted(rows) == sorted(names)
    for loss, loss_diff, grad_diff, _, measured in rows.values():
        assert float(loss_diff) < 1e-5 and float(grad_diff) < 1e-5
        assert 0 <= float(measured) < 1  # the bubble of measured action times
    bubbles = {name: float(row[-2]) for name, row in rows.items()}
    assert bubbles["GPipe"] == bubbles["1F1B"] == pytest.approx(3 / 11, abs=1e-3)
    assert bubbles["InterleavedZeroBubble (ZB1P)"] < 3 / 11
    assert bubbles["ZBVZeroBubble, 8 stages in a V"] < 3 / 11


def test_torch_is_the_reference():
    assert torch.__version__.startswith("2.13")


def test_measure_step_times_each_kind_of_action():
    """measure_step runs a step waiting for each action and gives the median time of F, I, W and B; the bubble of
    those times lies between 0 and 1 (and a zero-bubble schedule measures I and W separately)."""
    torchlike.manual_seed(0)
    model, parts = model_and_parts(4)
    x, y = torchlike.randn(12, 6), torchlike.randn(12, 6)
    for cls, kwargs in ((Schedule1F1B, {}), (ScheduleInterleavedZeroBubble, {"pp_group_size": 4})):
        schedule = cls([PipelineStage(p, i, 4, "cpu") for i, p in enumerate(parts)], 4,
                       loss_fn=nn.functional.mse_loss, **kwargs)
        costs = schedule.measure_step(x, target=y)
        assert set(costs) == {"F", "I", "W", "B"} and all(t > 0 for t in costs.values())
        assert 0 <= schedule.bubble_fraction(costs=costs) < 1
