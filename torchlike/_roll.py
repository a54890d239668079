"""Loop rolling: a traced program's repeated runs of equations run as ``lax.scan`` loops.

Tracing Python unrolls its loops: a 1,000-op chain, an RNN over its time steps or a stack of equal layers becomes
1,000 copies of the same few equations (and as many again for their backward). XLA compiles such straight-line
code slowly and, on CPU, runs it at a few microseconds per op; the same work as a loop compiles once and runs as
one kernel per op kind. This pass finds runs of at least ``min_iters`` repetitions of one period of equations
(same primitives, parameters and avals) whose data flow is a loop (each repetition reads values of its own, of the
one before it, or from outside the run), and evaluates them with ``lax.scan``:

- a value the next repetition reads becomes the loop carry;
- a value from outside the run that is the same in every repetition is closed over; one that changes is stacked
  into the scan's ``xs`` (not copied when those values are rows of an earlier loop's stacked output: a backward
  pass reads its forward's intermediates last first, so it runs as a reverse scan over them as they are);
- a value read after the run becomes a stacked output, indexed where it is read.

The results are the program's, equation for equation; only the schedule changes. ``rolled(fn)`` wraps a function
of arrays (to be traced by ``jax.jit``) so that its trace is rolled.
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax
from jax.extend import core as _core

MIN_ITERS = 8  # repetitions below this stay unrolled (XLA handles short runs well)
MAX_PERIOD = 256  # longest period (equations per repetition) searched


def rolled(fn, min_iters=MIN_ITERS):
    """``fn`` (arrays -> pytree of arrays) whose traced equations run with their repeated runs as loops."""
    def run(*args):
        closed, shape = jax.make_jaxpr(fn, return_shape=True)(*args)
        outs = evaluate(closed, jax.tree_util.tree_leaves(args), min_iters)
        return jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(shape), outs)
    return run


def evaluate_flat(closed, *args):
    """``jaxpr_as_fun(closed)`` with its repeated runs as loops."""
    return evaluate(closed, args)


def evaluate(closed, args, min_iters=MIN_ITERS):
    """Evaluate ``closed`` (a ClosedJaxpr) on ``args`` with its repeated runs as ``lax.scan`` loops."""
    jaxpr = closed.jaxpr
    eqns = jaxpr.eqns
    runs = _find_runs(jaxpr, min_iters) if len(eqns) >= min_iters else []
    env = dict(zip(jaxpr.constvars, closed.consts))
    env.update(zip(jaxpr.invars, args))
    stacked = {}  # var -> (stacked array, index): a value a loop gave as one row of a stacked output

    def read(v):
        if isinstance(v, _core.Literal):
            return v.val
        if v not in env:
            s, i = stacked[v]
            env[v] = lax.index_in_dim(s, i, keepdims=False)
        return env[v]

    i = 0
    for start, run in runs:
        for eqn in eqns[i:start]:
            _bind(eqn, [read(v) for v in eqn.invars], env)
        _scan(run, read, env, stacked)
        i = start + run.period * run.iters
    for eqn in eqns[i:]:
        _bind(eqn, [read(v) for v in eqn.invars], env)
    return [read(v) for v in jaxpr.outvars]


def _bind(eqn, vals, env=None):
    with eqn.ctx.manager:
        out = eqn.primitive.bind(*vals, **eqn.primitive.get_bind_params(eqn.params))
    out = out if eqn.primitive.multiple_results else [out]
    if env is not None:
        env.update(zip(eqn.outvars, out))
    return out


# ----- finding runs ---------------------------------------------------------------------------------------------
class _Run:
    """One loop: ``iters`` repetitions of ``period`` equations and how each repetition's inputs are read.

    ``kinds[q][n]`` says where input n of the period's equation q comes from: ("lit",), ("local", q', o) (output
    o of equation q' of the same repetition), ("carry", (q', o, v)) (of the repetition before; var v in the
    first), ("const", var) (the same var in every repetition) or ("xs", [var per repetition])."""

    def __init__(self, eqns, period, iters, kinds, init, outs):
        self.all = eqns  # every repetition's equations
        self.eqns, self.period, self.iters, self.kinds = eqns[:period], period, iters, kinds
        self.init = init  # carry key (q, o, var repetition 0 reads in its place) -> that var
        self.carried = {k[:2]: k for k in init}  # (q, o) -> a carry key of it
        self.outs = outs  # (q, o) whose values are read after the run


def _find_runs(jaxpr, min_iters):
    """Non-overlapping loop runs ``[(start, _Run)]`` in equation order, longest coverage first."""
    eqns = jaxpr.eqns
    ids = {}
    sig = np.array([ids.setdefault(_signature(e), len(ids)) for e in eqns], dtype=np.int64)
    n = len(eqns)
    cands = []
    for p in range(1, min(MAX_PERIOD, n // min_iters) + 1):
        same = np.concatenate([[False], sig[:-p] == sig[p:], [False]])
        edges = np.flatnonzero(np.diff(same.astype(np.int8)))
        for a, b in zip(edges[::2], edges[1::2]):  # sig[i] == sig[i + p] for i in [a, b)
            iters = (b - a + p) // p
            if iters >= min_iters:
                cands.append((iters * p, p, a, b - a + p))
    cands.sort(key=lambda c: (-c[0], c[1], c[2]))
    uses = _uses(jaxpr)
    taken = np.zeros(n, dtype=bool)
    runs = []
    budget = 64 * n  # equations analysed at most (periodic code that is no loop could cost O(n * period^2))
    for _, p, a, length in cands:
        best = None
        if taken[a:a + length].all():  # (inside runs already taken)
            continue
        for off in range(p):  # each alignment of the period in the segment; the one covering most wins
            start = a + off
            iters = (length - off) // p
            overlap = taken[start:start + iters * p]
            if overlap.any():  # (a run already taken there: the repetitions before it can still be one)
                iters = int(overlap.argmax()) // p
            if iters < min_iters or budget <= 0:
                continue
            budget -= iters * p
            run = _analyse(eqns, start, p, iters, uses, min_iters)
            if run is not None and (best is None or run.iters > best[1].iters):
                best = (start, run)
        if best is not None:
            start, run = best
            taken[start:start + run.period * run.iters] = True
            runs.append(best)
    runs.sort(key=lambda r: r[0])
    return runs


def _signature(eqn):
    """What two equations must share to be one loop body's: primitive, parameters, input kinds and avals."""
    if eqn.effects:
        return object()
    try:
        params = tuple(sorted((k, id(v) if isinstance(v, (_core.ClosedJaxpr, _core.Jaxpr)) else v)
                              for k, v in eqn.params.items()))
        ins = tuple((v.aval, _literal_key(v.val)) if isinstance(v, _core.Literal) else v.aval for v in eqn.invars)
        key = (eqn.primitive, params, ins, tuple(v.aval for v in eqn.outvars))
        hash(key)
        return key
    except Exception:  # (an unhashable parameter: this equation is never part of a loop)
        return object()


def _literal_key(val):
    arr = np.asarray(val)
    return (arr.dtype.str, arr.tobytes())


def _uses(jaxpr):
    """var -> indices of the equations reading it (len(eqns) for the program's outputs)."""
    uses = {}
    for i, eqn in enumerate(jaxpr.eqns):
        for v in eqn.invars:
            if not isinstance(v, _core.Literal):
                uses.setdefault(v, []).append(i)
    for v in jaxpr.outvars:
        if not isinstance(v, _core.Literal):
            uses.setdefault(v, []).append(len(jaxpr.eqns))
    return uses


def _analyse(eqns, start, p, iters, uses, min_iters):
    """The loop ``eqns[start:start + p * iters]`` makes (cut short where its data flow stops being one), or None."""
    where = {}  # var defined in the run -> (repetition, q, o)
    for j in range(iters):
        for q in range(p):
            for o, v in enumerate(eqns[start + j * p + q].outvars):
                where[v] = (j, q, o)

    def kind(j, v):
        if isinstance(v, _core.Literal):
            return ("lit",)
        w = where.get(v)
        if w is None:
            return ("ext", v)
        if w[0] == j:
            return ("local", w[1], w[2])
        if w[0] == j - 1:
            return ("carry", w[1], w[2])
        return ("far",)

    rows = [[[kind(j, v) for v in eqns[start + j * p + q].invars] for q in range(p)] for j in range(iters)]
    if iters < 2:
        return None
    pattern = rows[1]
    if any(k[0] == "far" for ks in pattern for k in ks):
        return None
    n = 2
    while n < iters and all(a == b or (a[0] == b[0] == "ext") for ra, rb in zip(rows[n], pattern)
                            for a, b in zip(ra, rb)):
        n += 1
    iters = n
    if iters < min_iters:
        return None
    init = {}
    kinds = []
    for q in range(p):
        ks = []
        for m, k in enumerate(pattern[q]):
            k0 = rows[0][q][m]
            if k[0] == "carry":
                if k0[0] != "ext":
                    return None
                key = init.setdefault((k[1], k[2], k0[1]), k0[1])
                ks.append(("carry", (k[1], k[2], key)))
            elif k[0] == "ext":
                if k0[0] != "ext":
                    return None
                vs = [rows[j][q][m][1] for j in range(iters)]
                ks.append(("const", vs[0]) if all(v is vs[0] for v in vs) else ("xs", vs))
            else:
                if k0 != k:
                    return None
                ks.append(k)
        kinds.append(ks)
    for (q, o, v) in init:  # a carry keeps its aval from one repetition to the next
        if eqns[start + q].outvars[o].aval != v.aval:
            return None
    end = start + p * iters
    outs = set()  # (values of the cut-off repetitions are read from outside the loop: by its ``uses`` past end)
    for v, (j, q, o) in where.items():
        if j >= iters or (j == iters - 1 and any(k[:2] == (q, o) for k in init)):  # (the last repetition's carry: the loop's result)
            continue
        if any(u >= end for u in uses.get(v, ())):
            outs.add((q, o))
    return _Run(eqns[start:end], p, iters, kinds, init, outs)


# ----- running a run as a scan ----------------------------------------------------------------------------------
def _scan(run, read, env, stacked):
    """Evaluate ``run`` with ``lax.scan`` into ``env`` / ``stacked`` (see the module docstring)."""
    ckeys = list(run.init)
    xs_pos = [(q, m) for q, ks in enumerate(run.kinds) for m, k in enumerate(ks) if k[0] == "xs"]
    xs = [_stack(run.kinds[q][m][1], read, stacked) for q, m in xs_pos]
    # a loop that reads an earlier loop's rows backwards (a backward pass over its forward) runs in reverse over
    # them as they are, as JAX's own scan transpose does, instead of over a reversed copy
    reverse = any(descending for _, descending in xs)
    xs = [x if descending or not reverse else lax.rev(x, (0,)) for x, descending in xs]
    consts = {(q, m): read(k[1]) for q, ks in enumerate(run.kinds) for m, k in enumerate(ks) if k[0] == "const"}
    outs = sorted(run.outs)
    cin = [run.carried[k] for k in outs if k in run.carried]  # carried values read after the run: stacked as
    ys_keys = [k for k in outs if k not in run.carried]  # the carry going in

    def body(carry, x):
        carried = dict(zip(ckeys, carry))
        xv = dict(zip(xs_pos, x))
        vals = []
        for q, eqn in enumerate(run.eqns):
            args = []
            for m, k in enumerate(run.kinds[q]):
                if k[0] == "lit":
                    args.append(eqn.invars[m].val)
                elif k[0] == "local":
                    args.append(vals[k[1]][k[2]])
                elif k[0] == "carry":
                    args.append(carried[k[1]])
                elif k[0] == "const":
                    args.append(consts[(q, m)])
                else:
                    args.append(xv[(q, m)])
            vals.append(_bind(eqn, args))
        new = tuple(vals[q][o] for q, o, _ in ckeys)
        ys = tuple(carried[k] for k in cin) + tuple(vals[q][o] for q, o in ys_keys)
        return new, ys

    init = tuple(read(run.init[k]) for k in ckeys)
    final, ys = lax.scan(body, init, tuple(xs), length=run.iters, reverse=reverse)
    p, last = run.period, run.iters - 1

    def var(j, k):
        return run.all[j * p + k[0]].outvars[k[1]]

    def row(j):  # (a reverse scan stores repetition j's outputs at row iters - 1 - j)
        return last - j if reverse else j
    for k, v in zip(ckeys, final):
        env[var(last, k)] = v
    for k, s in zip(cin, ys[:len(cin)]):
        stacked.setdefault(run.init[k], (s, row(0)))
        for j in range(last):
            stacked[var(j, k)] = (s, row(j + 1))
    for k, s in zip(ys_keys, ys[len(cin):]):
        for j in range(last + 1):
            stacked[var(j, k)] = (s, row(j))


def _stack(vs, read, stacked):
    """``(array, descending)``: the values of vars ``vs`` stacked; a slice of an earlier loop's stacked output when
    they are its consecutive rows (descending: its rows in reverse order, the slice not reversed), else a stack."""
    rows = [stacked.get(v) for v in vs]
    if all(r is not None and r[0] is rows[0][0] for r in rows):
        s, i0 = rows[0]
        step = rows[1][1] - i0 if len(rows) > 1 else 1
        if step in (1, -1) and all(r[1] == i0 + step * j for j, r in enumerate(rows)):
            lo = min(i0, rows[-1][1])
            whole = lo == 0 and len(rows) == s.shape[0]
            return (s if whole else lax.slice_in_dim(s, lo, lo + len(rows))), step == -1
    return jnp.stack([read(v) for v in vs]), False
