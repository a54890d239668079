"""torchlike.autograd.profiler / torchlike.profiler and utils.benchmark.Timer, against torch 2.13."""
import json
import re

import numpy as np
import pytest
import torch
import torch.utils.benchmark

import torchlike as tl
import torchlike.utils.benchmark
from torchlike.ops import _registry



def _profile(m, prof_cls):
    x = m.tensor(np.ones((8, 8), np.float32), requires_grad=True)
    with prof_cls() as prof:
        with m.autograd.profiler.record_function("my_block"):
            y = m.mm(x, x).sin().sum()
    return prof, y


def _layout(table):
    """The table with numbers blanked: header, separators, column widths, names and call counts."""
    return [re.sub(r"\d+\.\d+(%|us|ms|s)", "#", line) for line in table.splitlines()]


def test_key_averages_table_as_torch():
    tp, _ = _profile(torch, torch.autograd.profiler.profile)
    lp, _ = _profile(tl, tl.autograd.profiler.profile)
    names = {e.key: e.count for e in lp.key_averages()}
    assert names == {"my_block": 1, "aten::mm": 1, "aten::sin": 1, "aten::sum": 1}
    assert all(names[k] == e.count for e in tp.key_averages() for k in [e.key] if k in names)
    table = lp.key_averages().table(sort_by="cpu_time_total")
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%", "CPU", "total", "CPU",
                                "time", "avg", "#", "of", "Calls"]
    assert lines[3].split()[0] == "my_block" and lines[3].split()[3] == "100.00%"  # outermost, sorted first
    assert lines[-1].startswith("Self CPU time total: ")
    # same layout as torch's table for the same rows
    t_rows = tp.key_averages()
    t_table = torch.autograd.profiler_util.EventList([e for e in t_rows if e.key in names]).table(
        sort_by="count", max_name_column_width=55)
    l_table = lp.key_averages().table(sort_by="count")
    assert [len(x) for x in _layout(l_table)][:3] == [len(x) for x in _layout(t_table)][:3]
    assert _layout(l_table)[:3] == _layout(t_table)[:3]


def test_self_and_total_times_nest():
    lp, _ = _profile(tl, tl.autograd.profiler.profile)
    evts = {e.name: e for e in lp.function_events}
    block = evts["my_block"]
    assert [c.name for c in block.cpu_children] == ["aten::mm", "aten::sin", "aten::sum"]
    assert block.self_cpu_time_total == pytest.approx(block.cpu_time_total - sum(c.cpu_time_total
                                                                                 for c in block.cpu_children))
    assert lp.key_averages().self_cpu_time_total == pytest.approx(block.cpu_time_total)


def test_torch_profiler_api_and_chrome_trace(tmp_path):
    ready = []
    with tl.profiler.profile(activities=[tl.profiler.ProfilerActivity.CPU], on_trace_ready=ready.append) as prof:
        with tl.profiler.record_function("blk"):
            (tl.ones(4) * 2).sum()
    assert ready == [prof]
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    names = [(e["name"], e["cat"]) for e in trace["traceEvents"]]
    assert ("blk", "user_annotation") in names and ("aten::mul", "cpu_op") in names
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in trace["traceEvents"])


def test_record_function_without_profiler_and_errors():
    for m in (torch, tl):
        with m.autograd.profiler.record_function("nothing"):
            m.ones(2).sum()
        assert list(m.autograd.profiler.profile().key_averages()) == []  # never run: no events


def test_profile_of_nothing_has_an_empty_table():
    for m in (torch, tl):
        with m.autograd.profiler.profile() as prof:
            pass
        assert prof.key_averages().table() == ""


@pytest.mark.eager_only("lazy mode's recording is itself the op table's hook")
def test_ops_run_unhooked_after_profiling():
    with tl.autograd.profiler.profile():
        pass
    assert _registry._hook is None


# ----- utils.benchmark ---------------------------------------------------------------------------------------
def _shape(text):
    return [re.sub(r"0x[0-9a-f]+", "ADDR", re.sub(r"\d+\.\d+ (ns|us|ms|s)", "T", line))
            for line in text.splitlines()]


def test_timer_timeit_prints_as_torch():
    t = torch.utils.benchmark.Timer("x + 1", setup="x = torch.ones(8)").timeit(50)
    m = tl.utils.benchmark.Timer("x + 1", setup="x = torch.ones(8)").timeit(50)
    assert _shape(repr(m))[1:] == _shape(repr(t))[1:]
    assert m.number_per_run == 50 and len(m.raw_times) == 1 and m.median == m.mean == m.times[0] > 0
    assert m.title == "x + 1" and m.stmt == "x + 1"


def test_timer_blocked_autorange():
    m = tl.utils.benchmark.Timer("x + 1", globals={"x": tl.ones(8)}, label="add", sub_label="small",
                                 description="d").blocked_autorange(min_run_time=0.05)
    lines = repr(m).splitlines()
    assert lines[1:3] == ["add: small", "d"] and re.fullmatch(r"  (Median: )?\d+\.\d\d (ns|us|ms|s)", lines[3])
    n = len(m.raw_times)
    assert lines[-1 if n < 4 else 5].endswith(f"{n} measurement{'s' if n > 1 else ''}, {m.number_per_run} runs "
                                              f"{'per measurement,' if n > 1 else ','} 1 thread")
    assert sum(m.raw_times) >= 0.05 and m.number_per_run >= 1
    assert min(m.times) <= m.median <= max(m.times)


def test_timer_errors_as_torch():
    for m in (torch, tl):
        with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
            m.utils.benchmark.Timer(stmt=lambda: 1)
