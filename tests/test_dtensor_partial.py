"""Pending Partial placements of DTensors (torchlike/distributed/tensor/_partial.py) against torch 2.13 on 8 ranks.

Each program runs under torch with its fake process group (one process as rank 0 of 8: torch's own sharding
propagation and rank 0's local computation; its collectives do nothing) and under torchlike on 8 simulated
devices, in a subprocess (XLA_FLAGS before JAX starts). Compared: placements of results and gradients (all cases);
``to_local()`` where torch's result is still Partial (rank 0's share, computed locally by both); ``full_tensor()``
and full gradients against plain torch on the whole tensors (the fake group cannot reduce, so these are compared
with the true values)."""
import json

import numpy as np

from test_distributed_tensor import run

PROGRAM = """
import json, sys, numpy as np
import torch as T, torch.distributed as dist
from torch.testing._internal.distributed.fake_pg import FakeStore
dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
import torch.distributed.tensor as tdt
from torch.distributed.device_mesh import init_device_mesh as tmesh
import torchlike, torchlike.distributed.tensor as dt

rs = np.random.RandomState(0)
DATA = {"A": rs.randn(8, 16), "B": rs.randn(16, 8), "R": rs.randn(8, 8), "X": rs.randn(3, 16), "Z": rs.randn(3, 8),
        "C": rs.randn(2, 8, 16), "D": rs.randn(2, 16, 8), "W": rs.randn(4, 16), "b": rs.randn(4),
        "xb": rs.randn(32, 16), "V": rs.randn(5, 16), "c": rs.randn(5)}
DATA = {k: v.astype(np.float32) for k, v in DATA.items()}

CASES = {
    "S1@S0": lambda e, lib: e["a"] @ e["b"],
    "mm": lambda e, lib: lib.mm(e["a"], e["b"]),
    "R@S0": lambda e, lib: e["xr"] @ e["b"],
    "S1@R": lambda e, lib: e["a"] @ e["br"],
    "sum over S0": lambda e, lib: e["b"].sum(0),
    "sum": lambda e, lib: e["b"].sum(),
    "mean over S0": lambda e, lib: e["b"].mean(0),
    "mean": lambda e, lib: e["b"].mean(),
    "sum over a replicated dim": lambda e, lib: e["b"].sum(1),
    "P+P": lambda e, lib: e["y"] + e["y"],
    "P*2": lambda e, lib: e["y"] * 2,
    "P/2": lambda e, lib: e["y"] / 2,
    "-P": lambda e, lib: -e["y"],
    "P-P": lambda e, lib: e["y"] - e["y"] * 3,
    "P*R": lambda e, lib: e["y"] * e["r"],
    "R*P": lambda e, lib: e["r"] * e["y"],
    "P+R": lambda e, lib: e["y"] + e["r"],
    "P+1": lambda e, lib: e["y"] + 1,
    "relu(P)": lambda e, lib: e["y"].relu(),
    "P*P": lambda e, lib: e["y"] * e["y"],
    "P*P'": lambda e, lib: e["y"] * (e["y"] + e["r"]),
    "P/P'": lambda e, lib: e["y"] / (e["y"] + e["r"]),
    "P.T": lambda e, lib: e["y"].T,
    "P.view": lambda e, lib: e["y"].view(64),
    "P.sum()": lambda e, lib: e["y"].sum(),
    "P.sum(0)": lambda e, lib: e["y"].sum(0),
    "P.mean()": lambda e, lib: e["y"].mean(),
    "P@R": lambda e, lib: e["y"] @ e["r"],
    "R@P": lambda e, lib: e["zr"] @ e["y"],
    "P.clone()": lambda e, lib: e["y"].clone(),
    "P.detach()": lambda e, lib: e["y"].detach(),
    "redistribute P->R": lambda e, lib: e["y"].redistribute(e["mesh"], [e["R"]()]) if "mesh" in e else e["y"],
    "redistribute P->S(0)": lambda e, lib: e["y"].redistribute(e["mesh"], [e["S"](0)]) if "mesh" in e else e["y"],
    "bmm": lambda e, lib: lib.bmm(e["c"], e["d"]),
    "3-D matmul": lambda e, lib: e["c"] @ e["d"],
    "linear": lambda e, lib: lib.nn.functional.linear(e["a"], e["v"]),
    "linear with bias": lambda e, lib: lib.nn.functional.linear(e["a"], e["v"], e["cr"]),
    "2-D mesh (S0,S1)@(R,S0)": lambda e, lib: e["a2"] @ e["b2"],
    "2-D mesh sum": lambda e, lib: e["a2"].sum(),
}

GRADS = {  # the replicated weight W and bias b of data parallelism (batch xb Shard(0)); a Shard(1) @ b Shard(0)
    "mean of squares": lambda e, lib: (e["xb"] @ e["w"].T).square().mean(),
    "linear": lambda e, lib: lib.nn.functional.linear(e["xb"], e["w"], e["bias"]).square().sum(),
    "matmul + bias": lambda e, lib: (e["xb"] @ e["w"].T + e["bias"]).relu().sum(),
    "broadcast mul": lambda e, lib: (e["xb"] * e["w"].sum(0)).sum(),
    "S1@S0": lambda e, lib: (e["a"] @ e["b"]).square().sum(),
    "replicated batch after a sharded one": lambda e, lib: (e["xb"] @ e["w"].T).sum().backward() or setattr(
        e["w"], "grad", None) or (e["xbr"] @ e["w"].T).sum(),
    "S1@S0 full_tensor": lambda e, lib: (e["a"] @ e["b"]).full_tensor().square().sum() if "mesh" in e
                                        else (e["a"] @ e["b"]).square().sum(),
}


def env(lib, d, grad=False):
    t = {k: lib.tensor(v, requires_grad=grad) for k, v in DATA.items()}
    if d is None:
        e = {"a": t["A"], "b": t["B"], "xr": t["X"], "zr": t["Z"], "br": t["B"], "r": t["R"], "c": t["C"], "d": t["D"],
             "v": t["V"], "cr": t["c"], "xb": t["xb"], "xbr": t["xb"], "w": t["W"], "bias": t["b"], "a2": t["A"],
             "b2": t["B"]}
    else:
        mesh = d.init_device_mesh("cpu", (8,))
        mesh2 = d.init_device_mesh("cpu", (2, 4))
        S, R = d.Shard, d.Replicate
        put = lambda x, pl, m=mesh: d.distribute_tensor(x, m, pl, src_data_rank=None)
        e = {"a": put(t["A"], [S(1)]), "b": put(t["B"], [S(0)]), "xr": put(t["X"], [R()]), "zr": put(t["Z"], [R()]),
             "br": put(t["B"], [R()]),
             "r": put(t["R"], [R()]), "c": put(t["C"], [S(2)]), "d": put(t["D"], [S(1)]), "v": put(t["V"], [S(1)]),
             "cr": put(t["c"], [R()]), "xb": put(t["xb"], [S(0)]), "xbr": put(t["xb"], [R()]),
             "w": put(t["W"], [R()]), "bias": put(t["b"], [R()]),
             "a2": put(t["A"], [S(0), S(1)], mesh2), "b2": put(t["B"], [R(), S(0)], mesh2), "mesh": mesh, "S": S,
             "R": R}
    e["y"] = e["a"] @ e["b"]
    return e


def describe(out):
    if hasattr(out, "placements"):
        return [repr(out.placements), out.to_local().detach().numpy().tolist(),
                out.full_tensor().detach().numpy().tolist()]
    return [None, None, out.detach().numpy().tolist()]


res = {}
for name, fn in CASES.items():
    res[name] = [describe(fn(env(lib, d), lib)) for lib, d in ((T, tdt), (torchlike, dt), (T, None))]
for name, fn in GRADS.items():
    rows = []
    for lib, d in ((T, tdt), (torchlike, dt), (T, None)):
        e = env(lib, d, grad=True)
        loss = fn(e, lib)
        loss.backward()
        leaves = ("w", "bias") if "S1" not in name else ("a", "b")
        rows.append([repr(getattr(loss, "placements", None))] + [describe(e[k].grad) for k in leaves
                                                                 if e[k].grad is not None])
    res["grad: " + name] = rows
print(json.dumps(res))
"""


# of two Partials torch reduces the second first: its fake group cannot (its rank 0 multiplies the two shares)
REDUCED = {"P*P": (np.multiply, "S1@S0"), "P*P'": (np.multiply, "P+R"), "P/P'": (np.divide, "P+R")}


def _close(a, b):
    return np.allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-4)


def test_partial_placements_shares_and_values_are_torchs():
    out = run(PROGRAM)
    grads = [name for name in out if name.startswith("grad: ")]
    for name, rows in out.items():
        if name in grads:
            continue
        (tpl, tlocal, _), (mpl, mlocal, mfull), (_, _, truth) = rows
        assert mpl == tpl, (name, mpl, tpl)
        if name in REDUCED:  # rank 0's share of y times the whole second operand (y or y + r)
            fn, other = REDUCED[name]
            assert _close(mlocal, fn(np.asarray(out["S1@S0"][0][1]), np.asarray(out[other][2][2]))), name
        elif "Partial" in tpl:  # rank 0's share, computed locally by torch too
            assert _close(mlocal, tlocal), name
        assert _close(mfull, truth), name
    pending = [n for n, rows in out.items() if n not in grads and "Partial" in rows[0][0]]
    assert len(pending) == 32, pending  # (the cases where torch leaves the result pending)
    for name in grads:
        theirs, mine, truth = out[name]
        assert mine[0] == theirs[0], name  # the loss's placements: Partial(avg) / Partial(sum) / Replicate
        assert len(mine) == len(theirs) == len(truth)
        for m, t, ref in zip(mine[1:], theirs[1:], truth[1:]):
            assert m[0] == t[0], (name, m[0], t[0])  # the gradient's placements
            assert _close(m[2], ref[2]), name  # its whole value: the true gradient
    assert out["grad: linear"][1][1][0] == out["grad: linear"][1][2][0] == "(Partial(sum),)"  # weight and bias of DP
    assert out["grad: replicated batch after a sharded one"][1][1][0] == "(Replicate(),)"
