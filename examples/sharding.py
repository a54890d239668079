"""Several devices with torchlike's DTensor API on JAX sharding: a tensor-parallel MLP, a data-parallel step and an
FSDP step on an 8-device mesh, each checked against the same model on one device.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python examples/sharding.py

(on a GPU/TPU host drop XLA_FLAGS: the mesh takes the real devices). On several hosts every process runs the same
script after ``jax.distributed.initialize`` (see the README); two processes of 4 CPU devices each on this machine:

    XLA_FLAGS=--xla_force_host_platform_device_count=4 python examples/sharding.py --coordinator 127.0.0.1:12355 \
        --num-processes 2 --process-id 0 &
    XLA_FLAGS=--xla_force_host_platform_device_count=4 python examples/sharding.py --coordinator 127.0.0.1:12355 \
        --num-processes 2 --process-id 1

Prints one line per check and, last, OK.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import jax  # noqa: E402
import numpy as np  # noqa: E402

if __name__ == "__main__":  # several processes: jax.distributed starts before torchlike is imported (its import
    parser = argparse.ArgumentParser()  # already makes arrays, which starts JAX's backend)
    parser.add_argument("--coordinator", help="host:port of process 0 (several processes: jax.distributed)")
    parser.add_argument("--num-processes", type=int, default=1)
    parser.add_argument("--process-id", type=int, default=0)
    args = parser.parse_args()
    if args.coordinator:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")  # XLA:CPU's collectives across processes
        jax.distributed.initialize(args.coordinator, num_processes=args.num_processes, process_id=args.process_id)

import interop  # noqa: E402
import torchlike as torch  # noqa: E402
from torchlike import nn  # noqa: E402
from torchlike.distributed.fsdp import fully_shard  # noqa: E402
from torchlike.distributed.tensor import Replicate, Shard, distribute_tensor, init_device_mesh  # noqa: E402
from torchlike.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module  # noqa: E402


def mlp(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))


def diff(a, b):
    a = a.full_tensor() if hasattr(a, "full_tensor") else a
    return float(np.abs(a.detach().numpy() - b.detach().numpy()).max())


def param_bytes_per_device(model):
    """Bytes of parameters on each device (from the arrays' addressable shards)."""
    per = {}
    for p in model.parameters():
        for s in interop.to_jax(p).addressable_shards:
            per[s.device] = per.get(s.device, 0) + s.data.nbytes
    return max(per.values())


def train(model, x, y, steps=3, opt=torch.optim.Adam):
    optim = opt(model.parameters(), lr=1e-2)
    for _ in range(steps):
        optim.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optim.step()
    return loss, optim


def main():
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    print(f"mesh              {mesh.size()} devices in {jax.process_count()} process(es), "
          f"{len(jax.local_devices())} here")
    torch.manual_seed(1)
    x, y = torch.randn(32, 64), torch.randn(32, 64)

    # tensor parallel: the first Linear split by output features, the second by input features
    ref, tp = mlp(), parallelize_module(mlp(), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    out_ref, out_tp = ref(x), tp(x)
    out_ref.square().sum().backward()
    out_tp.square().sum().backward()
    print(f"tensor parallel   output diff {diff(out_tp, out_ref):.2e}  weight grad diff "
          f"{max(diff(b.grad, a.grad) for a, b in zip(ref.parameters(), tp.parameters())):.2e}  "
          f"placements {[str(p.grad.placements[0]) for p in tp.parameters()]}")

    # data parallel: the batch split over the mesh, the parameters replicated
    ref, dp = mlp(), mlp()
    for m in dp.modules():
        for k, p in list(m._parameters.items()):
            m.register_parameter(k, nn.Parameter(distribute_tensor(p.detach(), mesh, [Replicate()])))
    xs, ys = distribute_tensor(x, mesh, [Shard(0)]), distribute_tensor(y, mesh, [Shard(0)])
    loss_ref, _ = train(ref, x, y)
    loss_dp, _ = train(dp, xs, ys)
    print(f"data parallel     loss diff {abs(loss_dp.full_tensor().item() - loss_ref.item()):.2e}  param diff "
          f"{max(diff(b, a) for a, b in zip(ref.parameters(), dp.parameters())):.2e}  "
          f"input {interop.to_jax(xs).sharding.spec}")

    # FSDP: every parameter Shard(0), the optimizer state laid out as its parameter
    ref, fs = mlp(), mlp()
    before = param_bytes_per_device(fs)
    fully_shard(fs, mesh=mesh)
    after = param_bytes_per_device(fs)
    loss_ref, _ = train(ref, x, y)
    loss_fs, optim = train(fs, x, y)
    state = optim.state[fs[0].weight]["exp_avg"]
    print(f"fsdp              loss diff {abs(loss_fs.item() - loss_ref.item()):.2e}  param diff "
          f"{max(diff(b, a) for a, b in zip(ref.parameters(), fs.parameters())):.2e}  "
          f"state {state.placements}")
    print(f"fsdp memory       parameter bytes per device {before} -> {after} ({before / after:.1f}x less)")
    print("OK")


if __name__ == "__main__":
    main()
