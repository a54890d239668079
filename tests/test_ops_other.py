"""torch's "other operations" and the newer reductions (nansum, nanmean, aminmax, var_mean, std_mean) against
torch 2.13: values, the recorded graph (node names down to the leaves), saved attributes, first- and second-order
gradients, in-place variants and errors."""
import numpy as np
import pytest
import torch

import torchlike as tl
from oracle import assert_case_matches, assert_same, assert_same_error

RNG = np.random.default_rng(3)
M = RNG.standard_normal((3, 3))
B = RNG.standard_normal((2, 3, 4))
V = RNG.standard_normal(3)
S = np.array(1.5)
BAD = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
NANS = np.array([[1.0, np.nan, 3.0, 2.0], [0.5, 4.0, np.nan, -1.0], [np.nan, np.nan, np.nan, 2.0]])
TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])

CASES = {  # name: (function of lib and tensors, arrays)
    "tril": (lambda m, x: m.tril(x), [M]),
    "tril_k": (lambda m, x: x.tril(-1), [B]),
    "triu_k": (lambda m, x: m.triu(x, 1), [B]),
    "diag_vector": (lambda m, x: m.diag(x, 1), [V]),
    "diag_matrix": (lambda m, x: m.diag(x, -1), [M]),
    "diag_embed": (lambda m, x: m.diag_embed(x, 1, 0, 2), [M]),
    "diagflat": (lambda m, x: m.diagflat(x, -1), [M]),
    "trace": (lambda m, x: m.trace(x * x), [M]),
    "roll": (lambda m, x: m.roll(x, (1, -2), (0, 2)), [B]),
    "roll_flat": (lambda m, x: x.roll(4), [B]),
    "rot90": (lambda m, x: m.rot90(x, 3, (2, 0)), [B]),
    "rot90_neg": (lambda m, x: x.rot90(-1), [M]),
    "tile": (lambda m, x: m.tile(x, (2,)), [M]),
    "tile_more": (lambda m, x: x.tile((2, 1, 2)), [M]),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (2, 3)), [V]),
    "broadcast_tensors": (lambda m, x, y: m.broadcast_tensors(x, y), [V, M]),
    "atleast_1d": (lambda m, x: m.atleast_1d(x), [S]),
    "atleast_2d": (lambda m, x, y: m.atleast_2d(x, y), [V, S]),
    "atleast_3d": (lambda m, x, y, z: m.atleast_3d([x, y, z]), [V, M, S]),
    "hstack": (lambda m, x, y: m.hstack([x, y]), [V, V]),
    "hstack_2d": (lambda m, x, y: m.hstack((x, y)), [M, M]),
    "vstack": (lambda m, x, y: m.vstack([x, y]), [V, M]),
    "row_stack": (lambda m, x, y: m.row_stack([x, y]), [V, V]),
    "dstack": (lambda m, x, y: m.dstack([x, y]), [V, V]),
    "column_stack": (lambda m, x, y, z: m.column_stack([x, y, z]), [V, M, V]),
    "meshgrid_ij": (lambda m, x, y: m.meshgrid(x, y, indexing="ij"), [V, V[:2]]),
    "meshgrid_xy": (lambda m, x, y: m.meshgrid([x, y], indexing="xy"), [V, V[:2]]),
    "cartesian_prod": (lambda m, x, y: m.cartesian_prod(x, y), [V, V[:2]]),
    "kron": (lambda m, x, y: m.kron(x, y), [M, V]),
    "kron_3d": (lambda m, x, y: m.kron(x, y), [B, M]),
    "cross": (lambda m, x, y: m.cross(x, y, dim=1), [M, M[::-1].copy()]),
    "cross_negative_dim": (lambda m, x, y: m.cross(x, y, dim=-2), [M, M[::-1].copy()]),
    "cross_default_dim": (lambda m, x, y: m.cross(x, y), [B[:, :, :3].copy(), B[:, :, 1:].copy()]),
    "diff": (lambda m, x: m.diff(x), [B]),
    "diff_n2_prepend": (lambda m, x, y: m.diff(x, 2, 0, prepend=y), [M, M[:1].copy()]),
    "cumprod": (lambda m, x: m.cumprod(x, 1), [B]),
    "cumprod_method": (lambda m, x: x.cumprod(0), [V]),
    "logcumsumexp": (lambda m, x: m.logcumsumexp(x, -1), [B]),
    "nan_to_num": (lambda m, x: m.nan_to_num(x * 2), [BAD]),
    "nan_to_num_values": (lambda m, x: x.nan_to_num(1.0, 5.0, -5.0), [BAD]),
    "count_nonzero": (lambda m, x: m.count_nonzero(m.relu(x), 1), [B]),
    "count_nonzero_all": (lambda m, x: x.count_nonzero(), [M]),
    "dist": (lambda m, x, y: m.dist(x, y), [M, V]),
    "dist_p3": (lambda m, x, y: m.dist(x, y, 3), [M, M.T.copy()]),
    "dist_inf": (lambda m, x, y: x.dist(y, float("inf")), [M, M.T.copy()]),
    # reductions torch added beside sum/var (in ops/reduction.py)
    "nansum": (lambda m, x: m.nansum(x), [NANS]),
    "nansum_dim": (lambda m, x: x.nansum(1, keepdim=True), [NANS]),
    "nanmean": (lambda m, x: m.nanmean(x, 0), [NANS]),
    "aminmax": (lambda m, x: m.aminmax(x), [TIES]),
    "aminmax_dim": (lambda m, x: m.aminmax(x, dim=-1, keepdim=True), [TIES]),
    "var_mean": (lambda m, x: m.var_mean(x, 1), [B]),
    "var_mean_correction": (lambda m, x: m.var_mean(x, (0, 2), correction=0, keepdim=True), [B]),
    "std_mean": (lambda m, x: m.std_mean(x), [M]),
    "std_mean_unbiased": (lambda m, x: m.std_mean(x, 0, False), [M]),
}


@pytest.mark.parametrize("name", CASES)
def test_against_torch(name):
    assert_case_matches(*CASES[name])


def test_in_place_variants_as_torch():
    results = []
    for m in (torch, tl):
        x = m.tensor(B)
        y, z, w = x.clone(), x.clone(), m.tensor(BAD)
        y.tril_(1)
        z.triu_()
        w.nan_to_num_(posinf=3.0)
        results.append((y, z, w, y._version, z._version, w._version))
    for a, b in zip(results[1], results[0]):
        if isinstance(b, int):
            assert a == b
        else:
            assert_same(a, b)


def test_broadcast_shapes_and_meshgrid_warning():
    assert tuple(tl.broadcast_shapes((2, 1), (3,), 1)) == tuple(torch.broadcast_shapes((2, 1), (3,), 1))
    with pytest.warns(UserWarning, match="torch.meshgrid: in an upcoming release"):  # (torch warns once per
        tl.meshgrid(tl.ones(2), tl.ones(3))                                          # process, from C++)


ERRORS = [
    lambda m: m.tril(m.ones(3)),
    lambda m: m.diag(m.ones(2, 2, 2)),
    lambda m: m.diag_embed(m.ones(3), 0, 1, -1),
    lambda m: m.trace(m.ones(3)),
    lambda m: m.roll(m.ones(3), (1, 2)),
    lambda m: m.roll(m.ones(3, 3), (1, 2), (0,)),
    lambda m: m.rot90(m.ones(3, 3), 1, (0, 0)),
    lambda m: m.rot90(m.ones(3), 1),
    lambda m: m.broadcast_shapes((2,), (3,)),
    lambda m: m.meshgrid(m.ones(2), indexing="yx"),
    lambda m: m.cross(m.ones(3, 2), m.ones(3, 2), dim=1),
    lambda m: m.cross(m.ones(2, 2), m.ones(2, 2)),
    lambda m: m.diff(m.tensor(1.0)),
    lambda m: m.diff(m.ones(3), -1),
    lambda m: m.count_nonzero(m.ones(3, 3), (0, 0)),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_errors_as_torch(k):
    assert_same_error(ERRORS[k])
