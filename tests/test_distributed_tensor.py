"""torchlike.distributed.tensor / fsdp on 8 simulated CPU devices, each test in its own process (XLA_FLAGS set
before JAX starts; the rest of the suite keeps one device): DTensor placements, to_local / full_tensor /
redistribute / from_local, autograd placements, torch's errors, a tensor-parallel MLP, a data-parallel and an
FSDP training step against the same model on one device, and FSDP's per-device parameter memory."""
import json
import os
import pathlib
import socket
import subprocess
import sys
import textwrap


ROOT = pathlib.Path(__file__).resolve().parent.parent
ENV = dict(os.environ, XLA_FLAGS=os.environ["XLA_FLAGS"] + " --xla_force_host_platform_device_count=8", PYTHONPATH=str(ROOT))


def run(code, **env):
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=dict(ENV, **env), capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_example_output(stdout, processes):
    lines = stdout.splitlines()
    assert lines[-1] == "OK"
    rows = {line[:18].strip(): line[18:].split() for line in lines[:-1]}
    assert rows["mesh"][:5] == ["8", "devices", "in", str(processes), "process(es),"]
    tp, dp, fs, mem = rows["tensor parallel"], rows["data parallel"], rows["fsdp"], rows["fsdp memory"]
    assert float(tp[2]) < 1e-5 and float(tp[6]) < 1e-4
    assert " ".join(tp[8:]) == "['S(0)', 'S(0)', 'S(1)', 'R']"  # grads placed as torch's (ColwiseParallel, Rowwise)
    assert float(dp[2]) < 1e-6 and float(dp[5]) < 1e-5 and " ".join(dp[7:]) == "P('dp', None)"
    assert float(fs[2]) < 1e-6 and float(fs[5]) < 1e-4 and " ".join(fs[7:]) == "(Shard(dim=0),)"
    before, after = int(mem[4]), int(mem[6])
    assert before == 8 * after  # parameter memory per device falls by the mesh size


def test_example_tensor_data_and_fully_sharded_parallel():
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "sharding.py")], env=ENV, capture_output=True,
                          text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check_example_output(proc.stdout, 1)


def two_processes(args):
    """Run ``python *args --coordinator ... --num-processes 2 --process-id i`` as two processes of 4 CPU devices
    each on localhost (jax.distributed); their outputs."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = dict(ENV, XLA_FLAGS=os.environ["XLA_FLAGS"] + " --xla_force_host_platform_device_count=4")
    cmd = [sys.executable, *args, "--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id"]
    procs = [subprocess.Popen(cmd + [str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=ROOT) for i in range(2)]
    try:
        outs = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:  # (one that failed leaves the other waiting for it)
            if p.poll() is None:
                p.kill()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    return [out for out, _ in outs]


def test_example_on_two_processes_with_jax_distributed():
    """The same example as two processes of 4 CPU devices each, joined by jax.distributed on localhost (XLA:CPU's
    gloo collectives): one 8-device mesh, and each process's results equal its one-device reference."""
    for out in two_processes([str(ROOT / "examples" / "sharding.py")]):
        check_example_output(out, 2)
        assert out.splitlines()[0].endswith("4 here")


FROM_LOCAL = """
import argparse, json, sys
import jax
parser = argparse.ArgumentParser()
for name in ("--coordinator", "--num-processes", "--process-id"):
    parser.add_argument(name)
a = parser.parse_args()
jax.config.update("jax_cpu_collectives_implementation", "gloo")
jax.distributed.initialize(a.coordinator, num_processes=int(a.num_processes), process_id=int(a.process_id))
import torchlike as torch
from torchlike.distributed.tensor import init_device_mesh, DTensor, Shard, Replicate, Partial
mesh = init_device_mesh("cpu", (8,))
res = {}
for pl in (Shard(0), Replicate(), Partial()):
    loc = torch.full((2, 3), float(jax.process_index() + 1), requires_grad=True)
    d = DTensor.from_local(loc, mesh, [pl])
    (d * d).sum().backward()
    res[str(pl)] = [d.full_tensor()[:, 0].tolist(), d.to_local()[0, 0].item(), loc.grad[0, 0].item()]
print(json.dumps(res))
"""


def test_from_local_and_to_local_on_two_processes():
    """On two processes each process's local tensor fills its own 4 devices' pieces (Shard: process 0's rows, then
    process 1's; Partial("sum"): the sum over every device's copy), to_local gives each process its own piece, and
    the gradient of each local tensor is that of its own pieces: 2 * 4 * local for Shard, 2 * 4 * (4 + 8) = 96
    for Partial."""
    outs = [json.loads(out.splitlines()[-1]) for out in two_processes(["-c", FROM_LOCAL])]
    for pid, out in enumerate(outs):
        v = pid + 1.0
        assert out["S(0)"] == [[1.0] * 8 + [2.0] * 8, v, 8 * v]
        assert out["R"] == [[v, v], v, 2 * v]  # (each process's own value: torch's ranks would have to agree)
        assert out["P(sum)"] == [[12.0, 12.0], 1.5, 96.0]


def test_dtensor_api_values_and_grads():
    """Layouts on the devices, to_local / from_local / redistribute / Partial values and their gradients (a
    Shard(0) leaf's against real torch's), and errors."""
    out = run("""
        import json, numpy as np, torch as T
        import torchlike as torch, interop
        from torchlike.distributed.tensor import (init_device_mesh, distribute_tensor, DTensor, Shard, Replicate,
                                                  Partial)
        res = {}
        mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
        mesh2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
        res["repr"] = [repr(mesh), repr(mesh2), repr(mesh2["tp"]), mesh2["tp"].mesh.tolist(), mesh2.shape]
        a = np.random.RandomState(0).randn(16, 8).astype(np.float32)
        w = torch.tensor(a, requires_grad=True)
        d = distribute_tensor(w, mesh, [Shard(0)])
        sh = interop.to_jax(d).sharding
        res["d"] = [str(sh.spec), [s.data.shape for s in interop.to_jax(d).addressable_shards][:2], d.is_leaf,
                    d.requires_grad, repr(d.placements), type(d).__name__, list(d.to_local().shape),
                    bool(np.array_equal(d.full_tensor().detach().numpy(), a))]
        d2 = distribute_tensor(w, mesh2, [Shard(0), Shard(1)])
        res["2d"] = [str(interop.to_jax(d2).sharding.spec), repr(d2.placements), list(d2.to_local().shape)]
        dt = distribute_tensor(w, mesh2["tp"], [Shard(1)])
        res["sub"] = [str(interop.to_jax(dt).sharding.spec), repr(dt.placements)]
        # ops keep DTensors; placements read from XLA's sharding
        y = (d * 2).sin()
        r = d.redistribute(mesh, [Replicate()])
        res["ops"] = [type(y).__name__, repr(y.placements), repr(r.placements), r.grad_fn.name()]
        # autograd: the grad of a Shard(0) leaf is Shard(0), equal to torch's (one process, unsharded)
        x = torch.tensor(np.ones((3, 16), np.float32))
        ((x @ d).tanh().sum() + y.sum() + r.square().sum()).backward()
        tw = T.tensor(a, requires_grad=True)
        ((T.ones(3, 16) @ tw).tanh().sum() + (tw * 2).sin().sum() + tw.square().sum()).backward()
        res["grad"] = [type(d.grad).__name__, repr(d.grad.placements),
                       float(np.abs(d.grad.full_tensor().numpy() - tw.grad.numpy()).max())]
        # to_local: the piece on the mesh's first device, its gradient only there
        v = distribute_tensor(torch.tensor(a, requires_grad=True), mesh, [Shard(0)])
        v.to_local().sum().backward()
        g = v.grad.full_tensor().numpy()
        res["to_local"] = [float(g[:2].min()), float(np.abs(g[2:]).max()), v.to_local().grad_fn is not None]
        # from_local: every rank's local tensor (the same here): Shard joins copies, Partial sums them
        loc = torch.tensor(a[:2], requires_grad=True)
        f = DTensor.from_local(loc, mesh, [Shard(0)])
        p = DTensor.from_local(loc, mesh, [Partial()])
        (f.full_tensor().sum() + p.full_tensor().sum()).backward()
        res["from_local"] = [list(f.shape), repr(p.placements), float(np.abs(p.full_tensor().detach().numpy() -
                             8 * a[:2]).max()), float(loc.grad.numpy().min()), float(loc.grad.numpy().max())]
        pd = distribute_tensor(w, mesh, [Partial()])
        res["partial"] = [repr(pd.placements), float(np.abs(pd.to_local().detach().numpy() - a / 8).max()),
                          float(np.abs(pd.full_tensor().detach().numpy() - a).max())]
        errs = []
        for fn in (lambda: distribute_tensor(w, mesh, [Shard(0), Shard(1)]),
                   lambda: distribute_tensor(torch.ones(10), mesh, [Shard(0)]),
                   lambda: init_device_mesh("cpu", (8,), mesh_dim_names=("a", "b")),
                   lambda: init_device_mesh("cpu", (16,))):
            try:
                fn()
            except Exception as e:
                errs.append([type(e).__name__, str(e)[:60]])
        res["errors"] = errs
        print(json.dumps(res))
    """)
    assert out["repr"] == ["DeviceMesh((dp=8), 'cpu', stride=(1,))",
                           "DeviceMesh((dp=2, tp=4), 'cpu', stride=(4, 1))", "DeviceMesh((tp=4), 'cpu', stride=(1,))",
                           [0, 1, 2, 3], [2, 4]]
    assert out["d"] == ["P('dp', None)", [[2, 8], [2, 8]], True, True, "(Shard(dim=0),)", "DTensor", [2, 8], True]
    assert out["2d"] == ["P('dp', 'tp')", "(Shard(dim=0), Shard(dim=1))", [8, 2]]
    assert out["sub"] == ["P(None, 'tp')", "(Shard(dim=1),)"]
    assert out["ops"] == ["DTensor", "(Shard(dim=0),)", "(Replicate(),)", "RedistributeBackward"]
    assert out["grad"][:2] == ["DTensor", "(Shard(dim=0),)"] and out["grad"][2] < 1e-5
    assert out["to_local"] == [1.0, 0.0, True]
    assert out["from_local"][:3] == [[16, 8], "(Partial(sum),)", 0.0] or out["from_local"][2] < 1e-5
    assert out["from_local"][3:] == [16.0, 16.0]  # 8 copies joined + 8 copies summed
    assert out["partial"][0] == "(Partial(sum),)" and max(out["partial"][1:]) < 1e-6
    expected = [("ValueError", "`placements` must have the same length as `device_mesh.ndim`"),  # torch's text
                ("ValueError", "torchlike's DTensor shards evenly only"),
                ("RuntimeError", "mesh_shape and mesh_dim_names should have same length!"),  # torch's text
                ("RuntimeError", "init_device_mesh: the mesh needs 16 cpu devices, JAX has 8")]
    assert [kind for kind, _ in out["errors"]] == [kind for kind, _ in expected]
    assert all(msg.startswith(text) for (_, msg), (_, text) in zip(out["errors"], expected))


def test_executable_cache_loads_for_the_default_device_of_a_many_device_process(tmp_path):
    """A program torchlike's executable cache stored in an 8-device process loads in the next one for the default
    device alone (it once loaded for all 8 devices and then refused its single-device arguments)."""
    code = """
        import json, numpy as np
        import torchlike as torch
        from torchlike import nn
        torch.manual_seed(0)
        print(json.dumps(float(nn.Linear(64, 256).weight.sum().item())))
    """
    first = run(code, JAX_COMPILATION_CACHE_DIR=str(tmp_path))
    assert list(tmp_path.rglob("manifest-*"))
    assert run(code, JAX_COMPILATION_CACHE_DIR=str(tmp_path)) == first


def test_compiled_sharded_steps_equal_jax_jit():
    """torchlike.compile of a data-parallel and of an FSDP step (one SPMD program over 8 devices) ends with the
    parameters jax.jit of the same sharded JAX step gives, laid out the same (benchmarks/bench_sharded.py)."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_sharded.py"), "--steps", "3"], env=ENV,
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if "torchlike.compile" in line]
    assert len(rows) == 2
    for row in rows:
        diff = float(row[row.index("diff") + 1])
        assert diff < 1e-6
        # two programs (the first call has no .grad yet), none run eagerly: each step is one SPMD program
        assert row[row.index("programs") + 1:row.index("programs") + 4] == ["2", "(eager", "0)"]


PLACEMENT_CASES = """
    def cases(torch, nn, dt, par, mesh, mesh2, seed):
        Shard, Replicate, Partial, distribute_tensor, DTensor = (dt.Shard, dt.Replicate, dt.Partial,
                                                                   dt.distribute_tensor, dt.DTensor)
        out = {}
        a = torch.tensor(np.random.RandomState(0).randn(16, 8).astype(np.float32))
        d = distribute_tensor(a.clone().requires_grad_(), mesh, [Shard(0)])
        out["leaf"] = [d.placements, list(d.to_local().shape), d.is_leaf, d.requires_grad, str(d.dtype).split(".")[-1],
                       list(d.shape), d.stride()]
        z = (d * 2).sin()
        r = d.redistribute(mesh, [Replicate()])
        x = distribute_tensor(torch.ones(3, 16), mesh, [Replicate()])
        y = x @ d
        out["ops"] = [z.placements, r.placements, d.T.placements, d.sum(1).placements, (d + z).placements,
                      d.relu().placements, d.reshape(16, 2, 4).placements, d[0:4].placements, d[:, 1].placements,
                      d.view(32, 4).placements, d.detach().placements, d.data.placements, d.clone().placements]
        out["partial ops"] = [y.placements, d.sum(0).placements]
        out["names"] = [r.grad_fn.name(), d.to_local().grad_fn.name(),
                        DTensor.from_local(torch.ones(2, 8, requires_grad=True), mesh, [Shard(0)]).grad_fn.name()]
        (y.sum() + z.sum() + r.square().sum()).backward()
        out["grad"] = [type(d.grad).__name__, d.grad.placements]
        w = distribute_tensor(torch.ones(4, 16, requires_grad=True), mesh, [Replicate()])
        xb = distribute_tensor(torch.ones(32, 16), mesh, [Shard(0)])
        h = xb @ w.T
        loss = h.square().mean()
        loss.backward()
        out["data parallel"] = [h.placements]
        out["data parallel partial"] = [loss.placements, w.grad.placements]
        torch.manual_seed(seed)
        m = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 16))
        par.parallelize_module(m, mesh, {"0": par.ColwiseParallel(), "2": par.RowwiseParallel()})
        o = m(torch.ones(4, 16))
        o.sum().backward()
        out["tp"] = [isinstance(o, DTensor), list(o.shape)] + [
            (p.placements, p.grad.placements, type(p).__name__, list(p.to_local().shape)) for p in m.parameters()]
        q = distribute_tensor(a, mesh2, [Shard(0), Shard(1)])
        s = distribute_tensor(a, mesh2["tp"], [Shard(1)])
        out["2d"] = [q.placements, list(q.to_local().shape), (q * 3).placements, s.placements,
                     list(s.to_local().shape), (s + 1).placements]
        p = nn.Parameter(distribute_tensor(a, mesh, [Shard(0)]))
        out["param"] = [type(p).__name__, isinstance(p, DTensor), isinstance(p, nn.Parameter), repr(p)[:30]]
        out["mesh"] = [repr(mesh), repr(mesh2), repr(mesh2["tp"]), mesh2["tp"].mesh.tolist(), mesh2.mesh.tolist(),
                       mesh2.get_coordinate(), mesh2.get_rank(), mesh2.size(), mesh2.size(1), mesh2.ndim,
                       mesh2.shape, mesh2.mesh_dim_names]
        out["repr"] = repr(distribute_tensor(torch.ones(2, 8), mesh, [Partial()]))
        errors = []
        for fn in (lambda: distribute_tensor(torch.ones(16), mesh2, [Shard(0)]), lambda: mesh2["xx"],
                   lambda: dt.init_device_mesh("cpu", (8,), mesh_dim_names=("a", "b")),
                   lambda: dt.init_device_mesh("cpu", (2, 4), mesh_dim_names=("a", "a")),
                   lambda: d.redistribute(mesh, [Partial()]), lambda: d.redistribute(mesh)):
            try:
                fn()
            except Exception as e:
                errors.append([type(e).__name__, str(e)])
        out["errors"] = errors
        return {k: repr(v) for k, v in out.items()}
"""


def test_placements_and_names_are_torchs():
    """The same DTensor program under torch 2.13 (one process with its fake process group of 8 ranks: torch's own
    sharding propagation, placements and shapes, not values) and under torchlike on 8 devices: placements of
    leaves, op results and gradients (pending Partial ones included), tensor-parallel layouts, node names, meshes,
    reprs and errors agree."""
    out = run(textwrap.dedent(PLACEMENT_CASES) + textwrap.dedent("""
        import json, numpy as np
        import torch as T, torch.distributed as dist
        from torch.testing._internal.distributed.fake_pg import FakeStore
        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
        import torch.distributed.tensor as tdt, torch.distributed.tensor.parallel as tpar
        from torch.distributed.device_mesh import init_device_mesh as tmesh
        tdt.init_device_mesh = tmesh
        import torchlike, torchlike.distributed.tensor as dt, torchlike.distributed.tensor.parallel as par
        theirs = cases(T, T.nn, tdt, tpar, tmesh("cpu", (8,), mesh_dim_names=("dp",)),
                       tmesh("cpu", (2, 4), mesh_dim_names=("dp", "tp")), 0)
        mine = cases(torchlike, torchlike.nn, dt, par, dt.init_device_mesh("cpu", (8,), mesh_dim_names=("dp",)),
                     dt.init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp")), 0)
        print(json.dumps([mine, theirs]))
    """))
    mine, theirs = out
    assert mine == theirs
    assert theirs["partial ops"] == "[(Partial(sum),), (Partial(sum),)]"
    assert theirs["data parallel partial"] == "[(Partial(avg),), (Partial(sum),)]"
    assert mine["tp"].startswith("[False, [4, 16], ((Shard(dim=0),), (Shard(dim=0),), 'DTensor', [4, 16])")
    assert "0.1250" in mine["repr"]  # a Partial DTensor shows its local share (1/8 of the sum), as torch's


def test_training_steps_equal_torchs():
    """Tensor-parallel (eager and torchlike.compile-d), data-parallel and FSDP training (3 Adam steps) of an MLP on
    8 devices end with the parameters real torch (one process, no sharding) reaches from the same NumPy weights and
    batches."""
    out = run("""
        import json, numpy as np, torch as T
        import torchlike as torch
        from torchlike import nn
        from torchlike.distributed.tensor import init_device_mesh, distribute_tensor, Shard, Replicate
        from torchlike.distributed.tensor.parallel import parallelize_module, ColwiseParallel, RowwiseParallel
        from torchlike.distributed.fsdp import fully_shard
        rs = np.random.RandomState(0)
        weights = [rs.randn(32, 16).astype(np.float32) * 0.3, rs.randn(32).astype(np.float32) * 0.1,
                   rs.randn(16, 32).astype(np.float32) * 0.3, rs.randn(16).astype(np.float32) * 0.1]
        batches = [(rs.randn(24, 16).astype(np.float32), rs.randn(24, 16).astype(np.float32)) for _ in range(3)]
        mesh = init_device_mesh("cpu", (8,))

        def train(nn_, model, shard_batch=lambda t: t, compile=False):
            lib = T if nn_ is T.nn else torch
            for p, w in zip(model.parameters(), weights):
                p.data.copy_(lib.tensor(w))
            opt = lib.optim.Adam(model.parameters(), lr=1e-2)

            def step(x, y):
                opt.zero_grad()
                loss = nn_.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
            step = torch.compile(step) if compile else step
            for x, y in batches:
                step(shard_batch(lib.tensor(x)), shard_batch(lib.tensor(y)))
            return [(p.full_tensor() if hasattr(p, "full_tensor") else p).detach().numpy() for p in
                    model.parameters()]

        def mlp(nn_):
            return nn_.Sequential(nn_.Linear(16, 32), nn_.ReLU(), nn_.Linear(32, 16))

        ref = train(T.nn, mlp(T.nn))
        tp = parallelize_module(mlp(nn), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
        dp = mlp(nn)
        for m in dp.modules():
            for k, p in list(m._parameters.items()):
                m.register_parameter(k, nn.Parameter(distribute_tensor(p.detach(), mesh, [Replicate()])))
        tp2 = parallelize_module(mlp(nn), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
        got = {"tp": train(nn, tp), "dp": train(nn, dp, lambda t: distribute_tensor(t, mesh, [Shard(0)])),
               "fsdp": train(nn, fully_shard(mlp(nn), mesh=mesh)), "tp compiled": train(nn, tp2, compile=True)}
        print(json.dumps({k: max(float(np.abs(a - b).max()) for a, b in zip(v, ref)) for k, v in got.items()}))
    """)
    assert set(out) == {"tp", "dp", "fsdp", "tp compiled"}
    assert all(d < 2e-5 for d in out.values()), out
