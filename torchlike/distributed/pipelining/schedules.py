"""Pipeline schedules over JAX devices, after ``torch.distributed.pipelining.schedules`` (torch 2.13).

One process drives every stage. A schedule computes each rank's list of actions in torch's order (``_Action``:
stage, F / B / I / W, microbatch; "rank" is torch's pipeline rank, i.e. a place where one action runs at a
time), lays them on a timeline (each action starts when its rank is free and its inputs are ready: F of a
microbatch after F on the previous stage, B or I after F on the same stage and B/I on the next one, W after I)
and issues them in timeline order. JAX dispatches asynchronously, so actions of stages on different devices
overlap; activations and gradients move between the stages' devices with ``jax.device_put``.

``bubble_fraction()`` reads the timeline: idle slots / (ranks x makespan), with unit times F = I = W = 1 and
B = 2 (a full backward is the input pass and the weight pass), or the times you give.
"""
import enum
import statistics
import time
from typing import NamedTuple

import jax

from ..._internal import Tensor, grad_enabled
from ...ops.shape import cat, split

__all__ = ["ScheduleGPipe", "Schedule1F1B", "ScheduleInterleavedZeroBubble", "ScheduleZBVZeroBubble"]


class _ComputationType(str, enum.Enum):
    """The compute actions of torch's schedule IR."""
    FORWARD = "F"
    BACKWARD_INPUT = "I"
    BACKWARD_WEIGHT = "W"
    FULL_BACKWARD = "B"


F = _ComputationType.FORWARD
I = _ComputationType.BACKWARD_INPUT  # noqa: E741 - torch's name
W = _ComputationType.BACKWARD_WEIGHT
B = _ComputationType.FULL_BACKWARD

_UNIT_COSTS = {F: 1, I: 1, W: 1, B: 2}


class _Action(NamedTuple):
    """One action: ``stage_index``, F/I/W/B, ``microbatch_index``; printed as torch prints it (``2F0``)."""
    stage_index: int
    computation_type: _ComputationType
    microbatch_index: int = None

    def __repr__(self):
        mb = "" if self.microbatch_index is None else str(self.microbatch_index)
        return f"{self.stage_index}{self.computation_type.value}{mb}"

    __str__ = __repr__


# ----- splitting and merging a batch -----------------------------------------------------------------------
def _split_value(value, n):
    """A tensor's chunks along dim 0 (``tensor_split``'s sizes, at most as many as rows); None for a value that
    is replicated."""
    if not isinstance(value, Tensor):
        return None
    rows = value.shape[0]
    k = max(min(rows, n), 1)
    return list(split(value, [rows // k + (1 if i < rows % k else 0) for i in range(k)], 0))


def _split_into_chunks(values, n):
    """Per microbatch, the list ``values`` with each tensor replaced by its chunk."""
    chunks = [_split_value(v, n) for v in values]
    k = min([len(c) for c in chunks if c is not None] + [n])
    return [[v if c is None else c[i] for v, c in zip(values, chunks)] for i in range(k)]


def _merge_chunks(chunks):
    """The last stage's outputs put back together along dim 0 (tensors; tuples and lists element-wise)."""
    first = chunks[0]
    if isinstance(first, Tensor):
        return cat(chunks, 0)
    if isinstance(first, (tuple, list)):
        return type(first)(_merge_chunks([c[i] for c in chunks]) for i in range(len(first)))
    return chunks


# ----- the timeline ----------------------------------------------------------------------------------------
def _dependencies(action, num_stages):
    """The actions (as (stage, kind, mb), kind "F" or "B" for B-or-I, "W") this action waits for."""
    s, kind, mb = action.stage_index, action.computation_type, action.microbatch_index
    if kind == F:
        return [(s - 1, "F", mb)] if s > 0 else []
    if kind == W:
        return [(s, "B", mb)]
    deps = [(s, "F", mb)]
    if s < num_stages - 1:
        deps.append((s + 1, "B", mb))
    return deps


def _key(action):
    kind = action.computation_type
    return action.stage_index, ("F" if kind == F else "W" if kind == W else "B"), action.microbatch_index


def _simulate(pipeline_order, num_stages, costs):
    """Lay every rank's actions on a timeline: ``[(start, end, rank, action)]`` sorted by start, then rank."""
    ends, events = {}, []
    pos = {r: 0 for r in pipeline_order}
    free = {r: 0 for r in pipeline_order}
    while any(pos[r] < len(actions) for r, actions in pipeline_order.items()):
        progressed = False
        for r, actions in pipeline_order.items():
            while pos[r] < len(actions):
                action = actions[pos[r]]
                deps = _dependencies(action, num_stages)
                if any(d not in ends for d in deps):
                    break
                start = max([free[r]] + [ends[d] for d in deps])
                end = start + costs[action.computation_type]
                ends[_key(action)] = free[r] = end
                events.append((start, end, r, action))
                pos[r] += 1
                progressed = True
        if not progressed:
            raise ValueError("Schedule is not progressing")
    events.sort(key=lambda e: (e[0], e[2]))
    return events


class _PipelineSchedule:
    """What every schedule shares: the timeline, ``step``/``eval`` and the bubble fraction."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None, kwargs_chunk_spec=None,
                 output_merge_spec=None, scale_grads=True):
        if args_chunk_spec is not None or kwargs_chunk_spec is not None or output_merge_spec is not None:
            raise NotImplementedError("only the default split and merge along dim 0 are implemented")
        stages = list(stages) if isinstance(stages, (list, tuple)) else [stages]
        stages.sort(key=lambda st: st.stage_index)
        num_stages = stages[0].num_stages
        if [st.stage_index for st in stages] != list(range(num_stages)) or \
                any(st.num_stages != num_stages for st in stages):
            raise ValueError(f"one process drives every stage: expected stages 0..{num_stages - 1}, got "
                             f"{[st.stage_index for st in stages]}")
        self._stages = stages
        self._num_stages = num_stages
        self._n_microbatches = n_microbatches
        self._loss_fn = loss_fn
        self._has_backward = loss_fn is not None
        self.scale_grads = scale_grads
        self._internal_losses = {}
        self._action_times = None  # kind -> wall times of the actions, while measure_step() runs
        self.pipeline_order = {}  # rank -> its compute actions, in order (torch's IR without idle slots)

    def _finish_init(self):
        self._timeline = _simulate(self.pipeline_order, self._num_stages, _UNIT_COSTS)

    # ----- the timeline ----------------------------------------------------------------------------------
    def timeline(self, costs=None):
        """``[(start, end, rank, action)]`` in issue order, for unit times (F = I = W = 1, B = 2) or ``costs``
        (a dict from "F"/"I"/"W"/"B" to a positive time)."""
        if costs is None:
            return list(self._timeline)
        return _simulate(self.pipeline_order, self._num_stages, {k: costs[k.value] for k in _ComputationType})

    def bubble_fraction(self, costs=None):
        """Idle time / (ranks x makespan) of the timeline (see ``timeline``)."""
        events = self.timeline(costs)
        makespan = max(e[1] for e in events)
        busy = sum(e[1] - e[0] for e in events)
        ranks = len(self.pipeline_order)
        return (ranks * makespan - busy) / (ranks * makespan)

    def format_timeline(self):
        """The unit-time timeline as text: one row per rank, one column per time unit, ``.`` when idle."""
        makespan = max(e[1] for e in self._timeline)
        rows = {r: ["."] * makespan for r in self.pipeline_order}
        for start, end, r, action in self._timeline:
            for t in range(start, end):
                rows[r][t] = repr(action)
        width = max(len(c) for row in rows.values() for c in row)
        return "\n".join(f"rank {r}: " + " ".join(c.rjust(width) for c in row) for r, row in rows.items())

    # ----- running ---------------------------------------------------------------------------------------
    def step(self, *args, target=None, losses=None, return_outputs=True, loss_kwargs=None, **kwargs):
        """One iteration on a whole batch: ``args``/``kwargs`` (the first stage's inputs) and ``target`` are
        split into microbatches along dim 0; each microbatch's loss is appended to ``losses``; parameter
        gradients accumulate (divided by the number of microbatches when ``scale_grads``). Returns the last
        stage's outputs merged along dim 0."""
        if self._has_backward and not grad_enabled():
            raise RuntimeError("step() requires gradients to be enabled for backward computation; it should not be "
                               "used under torch.no_grad() context. Please call eval() instead.")
        for stage in self._stages:
            stage.has_backward = self._has_backward
            stage.clear_runtime_states()
        names = list(kwargs)
        split_values = _split_into_chunks(list(args) + [kwargs[k] for k in names], self._n_microbatches)
        self._check_len(split_values, "arg_mbs")
        arg_mbs = [tuple(v[:len(args)]) for v in split_values]
        kwarg_mbs = [dict(zip(names, v[len(args):])) for v in split_values]
        target_mbs = None
        if target is not None:
            target_mbs = [c[0] for c in _split_into_chunks([target], self._n_microbatches)]
            self._check_len(target_mbs, "target_mbs")
        if losses is not None and not isinstance(losses, list):
            raise TypeError(f"losses must be a list but got a {type(losses)}")
        self._internal_losses.clear()
        self._run(arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs)
        if losses is not None and self._loss_fn is not None:
            losses.clear()
            losses.extend(self._internal_losses[i] for i in range(self._n_microbatches))
        self._internal_losses.clear()
        last = self._stages[-1]
        return _merge_chunks(last.output_chunks) if return_outputs else None

    def measure_step(self, *args, **kwargs):
        """``step``, waiting for each action's results, and the median wall time of each kind of action
        (``{"F": s, "I": s, "W": s, "B": s}``, for ``bubble_fraction(costs=...)``). An extension of torch's API:
        the bubble fraction of measured action times rather than unit ones."""
        self._action_times = {kind: [] for kind in _ComputationType}
        try:
            self.step(*args, **kwargs)
            times = self._action_times
        finally:
            self._action_times = None
        measured = {k.value: statistics.median(v) for k, v in times.items() if v}
        if "B" not in measured and "I" in measured:
            measured["B"] = measured["I"] + measured["W"]
        if "I" not in measured and "B" in measured:
            measured["I"] = measured["W"] = measured["B"] / 2
        return measured

    def eval(self, *args, target=None, losses=None, **kwargs):
        """``step`` with forward actions only."""
        has_backward = self._has_backward
        try:
            self._has_backward = False
            return self.step(*args, target=target, losses=losses, **kwargs)
        finally:
            self._has_backward = has_backward

    def _check_len(self, mbs, name):
        if len(mbs) != self._n_microbatches:
            raise ValueError(f"Expecting {self._n_microbatches} {name} but got {len(mbs)}")

    def _run(self, arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs):
        """Issue the actions in timeline order; outputs go to the next stage, input gradients to the previous."""
        stages = self._stages
        for _, _, _, action in self._timeline:
            started = time.perf_counter()
            produced = self._issue(action, arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs)
            if self._action_times is not None and produced is not None:
                jax.block_until_ready([t._data for t in produced if isinstance(t, Tensor)])
                self._action_times[action.computation_type].append(time.perf_counter() - started)
        if self._has_backward:
            for stage in stages:
                stage.perform_reduce_grad(self._n_microbatches if self.scale_grads else 1)

    def _issue(self, action, arg_mbs, kwarg_mbs, target_mbs, return_outputs, loss_kwargs):
        """Run one action; returns the tensors it produced (None for a skipped one)."""
        stages = self._stages
        stage = stages[action.stage_index]
        mb, kind = action.microbatch_index, action.computation_type
        if kind == F:
            output = stage.forward_one_chunk(mb, arg_mbs[mb] if stage.is_first else (),
                                             kwarg_mbs[mb] if stage.is_first else None,
                                             save_forward_output=return_outputs)
            if not stage.is_last:
                stages[action.stage_index + 1].set_local_fwd_input(output, mb)
            elif self._loss_fn is not None and target_mbs is not None:
                self._internal_losses[mb] = self._loss_fn(output, target_mbs[mb].to(stage.device),
                                                          **(loss_kwargs or {}))
            return output if isinstance(output, (tuple, list)) else (output,)
        if not self._has_backward:
            return None
        if kind == W:
            stage.backward_weight_one_chunk(mb)
            return [p.grad for p in stage.submod.parameters()]
        stage.backward_one_chunk(mb, loss=self._internal_losses.get(mb), full_backward=kind == B)
        if stage.is_first:
            return [p.grad for p in stage.submod.parameters()]
        grads = stage.get_local_bwd_output(mb)
        stages[action.stage_index - 1].set_local_bwd_input(grads, mb)
        return grads if isinstance(grads, (tuple, list)) else (grads,)


class ScheduleGPipe(_PipelineSchedule):
    """GPipe: every forward, then every backward (fill-drain). Takes the list of all stages (torch's takes
    one stage per rank): one process drives every stage, stage ``i`` being rank ``i``."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None, kwargs_chunk_spec=None,
                 output_merge_spec=None, scale_grads=True):
        super().__init__(stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
                         scale_grads)
        for rank in range(self._num_stages):
            self.pipeline_order[rank] = [_Action(rank, F, mb) for mb in range(n_microbatches)] + \
                [_Action(rank, B, mb) for mb in range(n_microbatches)]
        self._finish_init()


class Schedule1F1B(_PipelineSchedule):
    """1F1B: after a warm-up of ``num_stages - rank`` forwards, one backward then one forward. Takes the list
    of all stages (torch's takes one stage per rank): one process drives every stage, stage ``i`` being rank
    ``i``."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None, kwargs_chunk_spec=None,
                 output_merge_spec=None, scale_grads=True):
        super().__init__(stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
                         scale_grads)
        if n_microbatches < self._num_stages:
            raise ValueError(f"Number of microbatches ({n_microbatches}) must be greater than or equal to the "
                             f"number of stages ({self._num_stages}).")
        for rank in range(self._num_stages):
            warmup = min(n_microbatches, self._num_stages - rank)
            actions = [_Action(rank, F, mb) for mb in range(warmup)]
            for mb in range(n_microbatches):
                actions.append(_Action(rank, B, mb))
                if warmup + mb < n_microbatches:
                    actions.append(_Action(rank, F, warmup + mb))
            self.pipeline_order[rank] = actions
        self._finish_init()


class _ScheduleMultiRank(_PipelineSchedule):
    """A schedule whose ranks may hold several stages; ``pp_group_size`` (torch reads it from the process
    group) defaults to the number of distinct devices of the stages."""

    def __init__(self, stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
                 scale_grads, pp_group_size):
        super().__init__(stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
                         scale_grads)
        if pp_group_size is None:
            pp_group_size = len({st.device for st in self._stages})
        if self._num_stages % pp_group_size:
            raise ValueError(f"{self._num_stages} stages cannot be spread evenly over {pp_group_size} ranks")
        self.pp_group_size = pp_group_size
        self.n_local_stages = self._num_stages // pp_group_size


class ScheduleInterleavedZeroBubble(_ScheduleMultiRank):
    """Zero bubble (ZB1P, https://arxiv.org/pdf/2401.10241): 1F1B where the backward is split into I (input
    gradients, sent at once) and W (weight gradients), the Ws deferred to fill the bubbles. Rank ``r`` holds
    stages ``r, r + pp_group_size, ...`` (torch's loop placement); one process drives every stage."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None, kwargs_chunk_spec=None,
                 output_merge_spec=None, scale_grads=True, pp_group_size=None):
        super().__init__(stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
                         scale_grads, pp_group_size)
        self.number_of_rounds = max(1, n_microbatches // self.pp_group_size)
        self.microbatches_per_round = n_microbatches // self.number_of_rounds
        if n_microbatches % self.number_of_rounds != 0:
            raise ValueError("Zero bubble requires the number of microbatches to be a multiple of the number of "
                             f"rounds ({self.number_of_rounds}), but got {n_microbatches}.")
        for rank in range(self.pp_group_size):
            self.pipeline_order[rank] = self._rank_actions(rank)
        self._finish_init()

    def _rank_actions(self, rank):
        """torch's ZB1P order for one rank: warm-up forwards, then F + I (+ W once ``rank`` backwards are
        pending), then the remaining I (+ W), then the remaining Ws."""
        pp, local, per_round = self.pp_group_size, self.n_local_stages, self.microbatches_per_round
        total = local * self._n_microbatches
        warmup = min((local - 1) * per_round + (pp - 1 - rank), total)

        def fwd_stage(step):
            return (step // per_round) % local * pp + rank

        def bwd_stage(step):
            return (local - 1 - ((step - warmup) // per_round) % local) * pp + rank

        counts = {F: {}, I: {}, W: {}}

        def action(stage, kind):
            mb = counts[kind].get(stage, 0)
            counts[kind][stage] = mb + 1
            return _Action(stage, kind, mb)

        actions, backward_steps, weights = [], [], 0
        for step in range(total + warmup):
            if step < total:
                actions.append(action(fwd_stage(step), F))
            if step >= warmup:
                actions.append(action(bwd_stage(step), I))
                backward_steps.append(step)
                if step - warmup >= rank:  # the Ws start once `rank` input backwards are ahead
                    actions.append(action(bwd_stage(backward_steps[weights]), W))
                    weights += 1
        actions.extend(action(bwd_stage(step), W) for step in backward_steps[weights:])
        return actions


class ScheduleZBVZeroBubble(_ScheduleMultiRank):
    """Zero bubble, V variant (ZB-V, https://arxiv.org/pdf/2401.10241 section 6): two stages per rank placed
    in a V (rank ``r`` holds stages ``r`` and ``num_stages - 1 - r``), backward split into I and W. One process
    drives every stage."""

    def __init__(self, stages, n_microbatches, loss_fn=None, args_chunk_spec=None, kwargs_chunk_spec=None,
                 output_merge_spec=None, scale_grads=True, pp_group_size=None):
        super().__init__(stages, n_microbatches, loss_fn, args_chunk_spec, kwargs_chunk_spec, output_merge_spec,
                         scale_grads, pp_group_size)
        if self.n_local_stages != 2:
            raise ValueError(f"ZBV requires exactly 2 stages per rank, but got {self.n_local_stages}.")
        for rank in range(self.pp_group_size):
            self.pipeline_order[rank] = self._rank_actions(rank)
        self._finish_init()

    def _rank_actions(self, rank):
        """torch's ZB-V order for one rank (computed for at least ``2 * pp - 1`` microbatches, then the ones
        beyond ``n_microbatches`` dropped)."""
        pp, n = self.pp_group_size, max(2 * self.pp_group_size - 1, self._n_microbatches)
        s0, s1 = rank, self._num_stages - 1 - rank
        count = {(s, k): 0 for s in (s0, s1) for k in (F, I, W)}
        out = []

        def do(stage, *kinds):
            for kind in kinds:
                out.append(_Action(stage, kind, count[stage, kind]))
                count[stage, kind] += 1

        for _ in range(2 * (pp - rank) - 1):
            do(s0, F)
        for _ in range(rank):
            do(s1, F)
            do(s0, F)
        for _ in range(pp - rank):
            do(s1, F, I, W)
        while count[s1, F] < count[s0, F] or count[s0, F] < n:
            if count[s0, F] < n:
                do(s0, F)
            do(s0, I, W)
            do(s1, F, I, W)
        for _ in range(rank):
            do(s0, I)
            do(s1, I)
        for _ in range(pp - rank):
            do(s0, I, W)
        while count[s1, W] < count[s1, I]:
            do(s1, W)
        while count[s0, W] < count[s0, I]:
            do(s0, W)
        return [a for a in out if a.microbatch_index < self._n_microbatches]
