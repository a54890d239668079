"""Pipeline parallelism over 4 simulated CPU devices: an MLP cut into stages, trained one step with GPipe, 1F1B
and the zero-bubble schedules; the loss and every parameter's gradient are checked against the whole model run
on one device, and each schedule's bubble fraction is printed.

    python examples/pipeline_schedule.py            # prints a table
    python examples/pipeline_schedule.py --check    # also exits with 1 when a result is off
"""
import os
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")  # before JAX starts

import torchlike as torch  # noqa: E402
from torchlike import nn  # noqa: E402
from torchlike.distributed.pipelining import (PipelineStage, Schedule1F1B, ScheduleGPipe,  # noqa: E402
                                              ScheduleInterleavedZeroBubble, ScheduleZBVZeroBubble)
from interop import to_jax  # noqa: E402

N_DEVICES, N_MICROBATCHES, BATCH, WIDTH = 4, 8, 32, 16


def make_model(n_blocks):
    torch.manual_seed(0)
    blocks = [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh()) for _ in range(n_blocks)]
    return nn.Sequential(*blocks, nn.Linear(WIDTH, 1))


def cut(model, n_stages):
    """The model's blocks as ``n_stages`` submodules (the head joins the last one)."""
    parts = [nn.Sequential(model[i]) for i in range(n_stages)]
    parts[-1].append(model[n_stages])
    return parts


def reference(model, x, y):
    """Loss and gradients of the whole model on one device: the mean of the microbatch losses."""
    model.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    return loss.item(), {name: p.grad.numpy() for name, p in model.named_parameters()}


def run(schedule_cls, n_stages, device_of, x, y, **kwargs):
    """One pipelined step: (mean microbatch loss, max |grad - reference grad|, schedule)."""
    model = make_model(n_stages)
    ref_loss, ref_grads = reference(model, x, y)
    model.zero_grad()
    stages = [PipelineStage(part, i, n_stages, f"cpu:{device_of(i)}") for i, part in enumerate(cut(model, n_stages))]
    schedule = schedule_cls(stages, N_MICROBATCHES, loss_fn=nn.functional.mse_loss, **kwargs)
    losses = []
    schedule.step(x, target=y, losses=losses)
    loss = sum(loss.item() for loss in losses) / len(losses)
    grads = {name: p.grad.numpy() for name, p in model.named_parameters()}  # the stages hold the model's modules
    for stage in stages:  # parameters and their gradients stayed on the stage's JAX device
        for p in stage.submod.parameters():
            assert {str(d.id) for d in (to_jax(p).devices() | to_jax(p.grad).devices())} == {str(stage.device.index)}
            assert p.device == p.grad.device == (torch.device("cpu") if stage.device.index == 0 else stage.device)
    diff = max(abs(grads[name] - g).max() for name, g in ref_grads.items())
    measured = schedule.bubble_fraction(costs=schedule.measure_step(x, target=y))  # action times of a 2nd step
    return loss, abs(loss - ref_loss), diff, schedule, measured


def main():
    torch.manual_seed(1)
    x, y = torch.randn(BATCH, WIDTH), torch.randn(BATCH, 1)
    rows = [
        ("GPipe", ScheduleGPipe, 4, lambda i: i, {}),
        ("1F1B", Schedule1F1B, 4, lambda i: i, {}),
        ("InterleavedZeroBubble (ZB1P)", ScheduleInterleavedZeroBubble, 4, lambda i: i, {}),
        ("ZBVZeroBubble, 8 stages in a V", ScheduleZBVZeroBubble, 8, lambda i: min(i, 7 - i), {}),
    ]
    print(f"{N_DEVICES} devices, {N_MICROBATCHES} microbatches of {BATCH // N_MICROBATCHES}; unit times F = I = W = 1, "
          f"B = 2")
    print(f"{'schedule':32} {'loss':>9} {'|loss - ref|':>12} {'max |grad - ref|':>16} {'bubble fraction':>15} "
          f"{'measured':>9}")
    results, ok = {}, True
    for name, cls, n_stages, device_of, kwargs in rows:
        loss, loss_diff, grad_diff, schedule, measured = run(cls, n_stages, device_of, x, y, **kwargs)
        bubble = schedule.bubble_fraction()
        results[name] = bubble
        print(f"{name:32} {loss:9.6f} {loss_diff:12.2e} {grad_diff:16.2e} {bubble:15.3f} {measured:9.3f}")
        ok &= loss_diff < 1e-5 and grad_diff < 1e-5
    textbook = (N_DEVICES - 1) / (N_MICROBATCHES + N_DEVICES - 1)
    print(f"textbook GPipe/1F1B bubble (p - 1) / (m + p - 1) = {textbook:.3f}; 'measured': the same timeline with "
          f"each kind of action's median wall time on this machine")
    ok &= abs(results["GPipe"] - textbook) < 1e-9 and abs(results["1F1B"] - textbook) < 1e-9
    ok &= results["InterleavedZeroBubble (ZB1P)"] < textbook and results["ZBVZeroBubble, 8 stages in a V"] < textbook
    print("1F1B timeline (rank x time unit):")
    print(Schedule1F1B([PipelineStage(nn.Linear(1, 1), i, 4, "cpu:0") for i in range(4)], 8).format_timeline())
    print("ZB1P timeline:")
    print(ScheduleInterleavedZeroBubble([PipelineStage(nn.Linear(1, 1), i, 4, f"cpu:{i}") for i in range(4)],
                                        8).format_timeline())
    print("OK" if ok else "MISMATCH")
    return ok


if __name__ == "__main__":
    sys.exit(0 if main() or "--check" not in sys.argv else 1)
