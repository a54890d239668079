"""torch's pending ``Partial`` placements, as labels: XLA reduces inside each program, so a DTensor's data is always
the reduced value; where torch's sharding propagation would leave a result pending (``Shard(1) @ Shard(0)``, a sum
over a sharded dim, the gradient of a replicated parameter in data parallelism), the result is labelled with
torch's placements, and ``to_local()`` gives rank 0's share: the op run on rank 0's local inputs, lazily.

Rules (per mesh dimension, torch's for the common ops; any other op on a Partial input reports what XLA's sharding
says, as torch redistributes it to ``Replicate()`` first):
- mm / bmm / addmm / linear: a contracting dim sharded (the other operand sharded alike or replicated) gives
  ``Partial("sum")``, as does ``Partial("sum")`` times ``Replicate()``; an addmm's replicated bias is partitioned;
- sum / mean over a sharded dim give ``Partial("sum")`` / ``Partial("avg")``; sum keeps ``Partial("sum")``;
- neg, add / sub of two Partials or a Partial and a Replicate DTensor, mul / div by a Replicate DTensor or a
  Python number keep ``Partial("sum")`` (mul / div of two Partials reduce the second first); views (t,
  transpose, permute, view, ...) keep any Partial;
- gradients: a replicated leaf used by one of these ops whose result is sharded or Partial on a mesh dim (through
  views and reductions) gets its ``.grad`` labelled ``Partial("sum")`` there, as torch's (a data-parallel weight or
  bias), for the backward that follows (the marks are the forward's since the last gradient); its ``to_local()``
  is then ``value / n`` (torch's rank 0 holds its own batch's share: not modelled).
"""
import jax

from ..._tensor import _wrap
from ...nn.functional import _linear_addmm
from .placement_types import Partial, Replicate, Shard

_R, _SUM, _AVG = Replicate(), Partial("sum"), Partial("avg")
# node name -> (index of A, its contracting dim, index of B, its contracting dim, index of the bias or None)
_MM = {"MmBackward0": (0, 1, 1, 0, None), "BmmBackward0": (0, 2, 1, 1, None), "AddmmBackward0": (1, 1, 2, 0, 0)}
_REDUCE = {"SumBackward0": _SUM, "SumBackward1": _SUM, "MeanBackward0": _AVG, "MeanBackward1": _AVG}
_POINTWISE = {"AddBackward0", "SubBackward0", "MulBackward0", "DivBackward0", "NegBackward0"}
_VIEWS = {"TBackward0", "TransposeBackward0", "PermuteBackward0", "ViewBackward0", "UnsafeViewBackward0",
          "ReshapeAliasBackward0", "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "SqueezeBackward2",
          "AliasBackward0", "ExpandBackward0"}
RULES = set(_MM) | set(_REDUCE) | _POINTWISE | _VIEWS
_LINEAR = (1, 1, 2, 1, 0)  # nn.functional's fused linear (bias, x, W): an addmm whose W is mat2 transposed


def pending(t):
    """``t``'s label when it holds a Partial placement for its current data, else None."""
    labels = getattr(t, "_labels", None)
    return labels if labels is not None and labels[0] is t._data else None


def _mm(op, pls, args, k):
    """(output placement, target placements of the inputs) of a matmul-like op on mesh dim ``k``, or None."""
    ia, ca, ib, cb, ibias = _MM[op.name] if op is not _linear_addmm else _LINEAR
    pa, pb = pls[ia][k], pls[ib][k]
    sa, sb = Shard(ca), Shard(cb)
    targets = [p[k] if p is not None else None for p in pls]
    if (pa == sa and pb in (sb, _R)) or (pb == sb and pa == _R):
        targets[ia], targets[ib] = sa, sb
    elif not ((pa == _SUM and pb == _R) or (pa == _R and pb == _SUM)):
        return None
    if ibias is not None:
        if pls[ibias] is None or pls[ibias][k] not in (_R, _SUM):
            return None
        targets[ibias] = _SUM
    return _SUM, targets


def _reduce(op, pls, args, statics, k):
    p, x = pls[0][k], args[0]
    if p == _SUM and _REDUCE[op.name] is _SUM:
        return _SUM, [_SUM]
    dims = statics[0] if op.name.endswith("1") else None
    dims = range(x.ndim) if dims is None or dims == () else [d % x.ndim for d in
                                                               (dims if isinstance(dims, (tuple, list)) else [dims])]
    if isinstance(p, Shard) and p.dim in dims:
        return _REDUCE[op.name], [p]
    return None


def _pointwise(op, pls, args, k):
    ps = [p[k] if p is not None else None for p in pls]
    scalar = [getattr(a, "_wrapped_number", False) for a in args]
    if op.name == "NegBackward0":
        return (_SUM, [_SUM]) if ps[0] == _SUM else None
    if len(args) < 2:
        return None
    a, b = ps[0], ps[1]
    if op.name in ("AddBackward0", "SubBackward0"):
        if _SUM in (a, b) and all(p in (_SUM, _R) for p in (a, b)):
            return _SUM, [_SUM, _SUM]
    elif a == _SUM and (b in (_R, _SUM) or scalar[1]):
        return _SUM, [_SUM, _R if b == _SUM else b]  # (of two Partials, torch reduces the second)
    elif op.name == "MulBackward0" and b == _SUM and (a == _R or scalar[0]):
        return _SUM, ps
    return None


def _is_dtensor(t):
    return t is not None and t._dist_place is not None


def relabel(op, run, args, statics, out, mesh, read, sharding):
    """Label ``out`` (the DTensor result of ``op`` on ``args``) with torch's placements where they are Partial, and
    mark replicated leaves whose gradient torch leaves Partial. ``read(array, mesh)``: the placements of an array's
    sharding; ``sharding(mesh, placements, ndim)``: the NamedSharding of placements."""
    plain = (_R,) * mesh.ndim  # (a plain tensor is read as the whole tensor, as one process holds it)
    pls = [a.placements if _is_dtensor(a) else None if a is None or getattr(a, "_wrapped_number", False)
           else plain for a in args]
    out_pl = list(read(out._data, mesh))
    name = op.name
    view = name in _VIEWS
    targets = [list(p) if p is not None else None for p in pls]
    for k in range(mesh.ndim):
        if view:
            rule = (pls[0][k], [pls[0][k]]) if isinstance(pls[0][k], Partial) else None
        elif name in _MM:
            rule = _mm(op, pls, args, k)
        elif name in _REDUCE:
            rule = _reduce(op, pls, args, statics, k)
        elif name in _POINTWISE:
            rule = _pointwise(op, pls, args, k)
        else:
            rule = None
        if rule is not None:
            out_pl[k] = rule[0]
            for t, p in zip(targets, rule[1]):
                if t is not None and p is not None:
                    t[k] = p
    out_pl = tuple(out_pl)
    if any(isinstance(p, Partial) for p in out_pl):
        out._labels = (out._data, out_pl, _Share(run, args, targets, mesh, sharding))
    if name in _VIEWS or name in _REDUCE:
        if _is_dtensor(args[0]) and args[0]._requires_grad:
            out._gfrom = args[0]
    elif name in _MM or name in _POINTWISE:
        _mark(op, [a if _is_dtensor(a) else None for a in args], pls, targets, out_pl, out)


def _mark(op, args, pls, targets, out_pl, out):
    """Mark the replicated leaves whose gradient torch's backward of this op leaves Partial("sum") (``args``: the
    op's DTensor inputs, None for the others)."""
    mm = _MM.get(op.name, _LINEAR if op is _linear_addmm else None)
    for i, a in enumerate(args):
        if a is None or not a._requires_grad:
            continue
        for k, p in enumerate(out_pl):
            if targets[i][k] != _R or p == _R:
                continue
            if isinstance(p, Shard) and (mm is None or i == mm[4]):  # broadcast operand: has it the sharded dim?
                d = p.dim - (out.ndim - a.ndim)
                if d >= 0 and a.shape[d] == out.shape[p.dim]:
                    continue  # (torch shards it too: its gradient comes back replicated)
            t = a
            while t is not None and t.placements[k] == _R:
                if t._grad_fn is None:
                    t._gmarks = t._gmarks | {k}
                    break
                t = getattr(t, "_gfrom", None)


class _Share:
    """Rank 0's local value of a Partial result: the op run on rank 0's local inputs under torch's placements."""

    def __init__(self, run, args, targets, mesh, sharding):
        self.run, self.mesh, self.sharding = run, mesh, sharding
        self.inputs = [(a, None, None, t) if t is None else (None, a._data, pending(a), t)  # (DTensors: data only)
                       for a, t in zip(args, targets)]
        self.value = None

    def __call__(self):
        if self.value is None:
            locals_ = [a if t is None else _wrap(_local(data, labels, t, self.mesh, self.sharding))
                       for a, data, labels, t in self.inputs]
            self.value = self.run(locals_)._data
            self.run = self.inputs = None
        return self.value


def first_device(mesh):
    return mesh.jax_mesh.local_devices[0] if jax.process_index() else mesh.jax_mesh.devices.flat[0]


def _local(data, labels, targets, mesh, sharding):
    """Rank 0's local value of ``data`` (an input's, its ``labels``) laid out by ``targets``: a Partial op
    result's share while it stays Partial, else its piece, divided by the mesh size where a target is
    Partial("sum") (torch partitions a replicated value so)."""
    if labels is not None and labels[2] is not None and all(
            t == p for t, p in zip(targets, labels[1]) if isinstance(p, Partial)):
        return labels[2]()
    index = sharding(mesh, targets, data.ndim).devices_indices_map(data.shape)[first_device(mesh)]
    out = data[index]
    n = 1
    for size, p in zip(mesh.shape, targets):
        if p == _SUM:
            n *= size
    return out / n if n > 1 else out
