"""torch.autograd.profiler: per-op CPU times of the op table, ``record_function`` ranges, torch's table.

While a ``profile`` is on, every table op is timed from its dispatch until its outputs are ready (JAX dispatches
asynchronously, so the profiler waits for each op, as torch's CPU ops are synchronous), named as torch names
it (``aten::mm``) and nested under the ``record_function`` range or op that ran it. Backward formulas run inside
the engine, not through the table, so only ``create_graph`` backward ops appear. Events come from the op table's
dispatch hook (see ``torchlike/amp/_hook.py``).
"""
import functools
import json
import os
import threading
import time

import jax

from .._tensor import Tensor
from ..amp import _hook

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]

_active = []  # the profiles that are on
_stack = threading.local()  # the open events of this thread
_lock = threading.Lock()


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _share(us, total):
    return "NaN" if total == 0 else f"{us * 100.0 / total:.2f}%"


class FunctionEvent:
    """One timed range: an op (``aten::mm``) or a ``record_function`` block; times in microseconds."""

    def __init__(self, id, name, thread, start_us, is_user_annotation=False):  # noqa: A002 - torch's name
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range_start = start_us
        self.time_range_end = start_us
        self.is_user_annotation = is_user_annotation
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range_end - self.time_range_start

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={_format_time(self.cpu_time_total)} "
                f"start_us={self.time_range_start:.3f} end_us={self.time_range_end:.3f}>")


class FunctionEventAvg:
    """The events of one name together: ``count``, ``cpu_time_total``, ``self_cpu_time_total``, ``cpu_time``."""

    def __init__(self, key):
        self.key = key
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, evt):
        self.count += evt.count
        self.cpu_time_total += evt.cpu_time_total
        self.self_cpu_time_total += evt.self_cpu_time_total
        self.is_user_annotation = evt.is_user_annotation
        return self

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_format_time(self.self_cpu_time_total)} "
                f"cpu_time={_format_time(self.cpu_time)}>")


class EventList(list):
    """A list of events with torch's ``table``, ``key_averages``, ``total_average`` and ``export_chrome_trace``."""

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One ``FunctionEventAvg`` per event name, in order of first appearance."""
        groups = {}
        for evt in self:
            groups.setdefault(evt.key, FunctionEventAvg(evt.key)).add(evt)
        return EventList(groups.values())

    def total_average(self):
        """All events as one ``FunctionEventAvg`` (key 'Total')."""
        total = FunctionEventAvg("Total")
        for evt in self:
            total.add(evt)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(evt.self_cpu_time_total for evt in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """torch's table: Name, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls."""
        return _table(self, sort_by, row_limit, max_name_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (``chrome://tracing``, Perfetto)."""
        pid = os.getpid()
        events = [{"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op", "name": e.name,
                   "pid": pid, "tid": e.thread, "ts": e.time_range_start, "dur": e.cpu_time_total,
                   "args": {"External id": e.id}} for e in self]
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": events,
                       "traceName": str(path)}, f)

    def __str__(self):
        return self.table()


def _in_unit(us, unit):
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit)
    return _format_time(us) if scale is None else f"{us / scale:.3f}{unit}"


def _table(events, sort_by, row_limit, max_name, header, top_level_only, time_unit):
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda e: getattr(e, sort_by.replace("cuda", "device")), reverse=True)
    name_width = max(len(e.key) for e in events) + 4
    if max_name is not None:
        name_width = min(name_width, max_name)
    widths = [name_width] + [12] * 6
    row = "".join("{:>" + str(w) + "}  " for w in widths)
    sep = "".join("-" * w + "  " for w in widths)
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + 2 * len(widths) - 2), header]
    lines += [sep, row.format("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                              "# of Calls"), sep]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and getattr(e, "cpu_parent", None) is not None:
            continue
        shown += 1
        name = e.key
        if max_name is not None and len(name) >= max_name - 3:
            name = name[:max_name - 3] + "..."
        lines.append(row.format(name, _share(e.self_cpu_time_total, total), _in_unit(e.self_cpu_time_total, time_unit),
                                _share(e.cpu_time_total, total), _in_unit(e.cpu_time_total, time_unit),
                                _in_unit(e.cpu_time, time_unit), e.count))
    lines += [sep, f"Self CPU time total: {_in_unit(total, time_unit)}"]
    return "\n".join(lines) + "\n"


def _now_us():
    return time.perf_counter_ns() / 1e3


def _open(name, user):
    """Start an event on this thread (None when no profile is on)."""
    if not _active:
        return None
    stack = getattr(_stack, "events", None)
    if stack is None:
        stack = _stack.events = []
    with _lock:
        profiles = list(_active)
        ids = [len(p._events) for p in profiles]
    evt = FunctionEvent(ids[0], name, threading.get_ident(), _now_us(), user)
    if stack:
        evt.cpu_parent = stack[-1]
        stack[-1].cpu_children.append(evt)
    stack.append(evt)
    for p in profiles:
        p._events.append(evt)
    return evt


def _close(evt):
    evt.time_range_end = _now_us()
    stack = _stack.events
    if stack and stack[-1] is evt:
        stack.pop()


def _record(name, run, args):
    """The op-table hook's profiling: time one op until its outputs are computed."""
    evt = _open("aten::" + name, False)
    if evt is None:
        return run(args)
    try:
        out = run(args)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        jax.block_until_ready([o._data for o in outs if isinstance(o, Tensor)])
        return out
    finally:
        _close(evt)


class profile:
    """``with torchlike.autograd.profiler.profile() as prof: ...``; then ``prof.key_averages().table(...)``."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False,
                 profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True,
                 experimental_config=None, acc_events=False, custom_trace_id_callback=None):
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self._events = []
        self._function_events = EventList()
        self.entered = False

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._events = []
        self._function_events = None
        with _lock:
            _active.append(self)
            _hook._record[0] = _record
            _hook._update()
        return self

    def __exit__(self, *exc):
        if not self.enabled:
            return False
        with _lock:
            _active.remove(self)
            if not _active:
                _hook._record[0] = None
                _hook._update()
        self._function_events = EventList(sorted(self._events, key=lambda e: e.time_range_start))
        self.entered = False
        return False

    def _check_finished(self):
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    @property
    def function_events(self):
        self._check_finished()
        return self._function_events

    def events(self):
        """The recorded events (an ``EventList``)."""
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """Events averaged by name (an ``EventList`` of ``FunctionEventAvg``)."""
        return self.function_events.key_averages()

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        return self.function_events.self_cpu_time_total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55,
              max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None):
        """The events' table (see ``EventList.table``)."""
        return self.function_events.table(sort_by, row_limit, max_src_column_width, max_name_column_width,
                                          max_shapes_column_width, header, top_level_events_only, time_unit)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace JSON file."""
        self.function_events.export_chrome_trace(path)

    def __str__(self):
        return self.table()


class record_function:
    """``with record_function("name"):`` (or as a decorator) marks a range in the profile (a no-op when off)."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._evt = None

    def __enter__(self):
        self._evt = _open(self.name, True)
        return self

    def __exit__(self, *exc):
        if self._evt is not None:
            _close(self._evt)
            self._evt = None
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return func(*args, **kwargs)
        return wrapped
