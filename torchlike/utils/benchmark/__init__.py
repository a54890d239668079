"""torch.utils.benchmark: ``Timer(stmt, setup, globals=...)`` with ``timeit`` and ``blocked_autorange``, and
``Measurement`` printed as torch prints it. The default timer waits for JAX's pending computations before it reads
the clock (JAX dispatches asynchronously; torch's CPU ops are synchronous), so a block times the work, not its
dispatch."""
import dataclasses
import statistics
import textwrap
import timeit as _timeit

import jax

import torchlike

__all__ = ["Timer", "Measurement", "TaskSpec"]


def timer():
    """Wait for every pending JAX computation, then read ``time.perf_counter``."""
    jax.block_until_ready(jax.live_arrays())
    return _timeit.default_timer()


@dataclasses.dataclass(frozen=True, repr=False)
class TaskSpec:
    """What was timed: statement, setup and labels."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def summarize(self):
        setup = ("" if self.setup in ("pass", "") else f"setup:\n{textwrap.indent(self.setup, '  ')}"
                 if "\n" in self.setup else f"setup: {self.setup}")
        return "\n".join(f"{s}\n" if "\n" in s else s for s in (self.title, self.description or "", setup) if s)


def _quantile(xs, q):
    """Linear-interpolated quantile of sorted ``xs`` (torch.quantile's default)."""
    pos = (len(xs) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def _unit(t):
    """('ns'|'us'|'ms'|'s', scale) for a time in seconds."""
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
        if t < scale * 1e3:
            return unit, scale
    return "s", 1.0


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of ``number_per_run`` runs each (``raw_times``); ``mean``, ``median``, ``iqr`` per run, in seconds."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def _sorted(self):
        return sorted(self.times)

    @property
    def median(self):
        return _quantile(self._sorted, 0.5)

    @property
    def mean(self):
        return statistics.fmean(self.times)

    @property
    def iqr(self):
        s = self._sorted
        return _quantile(s, 0.75) - _quantile(s, 0.25)

    def __getattr__(self, name):
        if name in ("stmt", "setup", "label", "sub_label", "description", "env", "num_threads", "title"):
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    def __repr__(self):
        s = self._sorted
        n = len(s)
        unit, scale = _unit(self.median)
        lines = [object.__repr__(self),
                 self.task_spec.summarize(), f"  {'Median: ' if n > 1 else ''}{self.median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({_quantile(s, .25) / scale:.2f} to "
                         f"{_quantile(s, .75) / scale:.2f})")
        threads = self.task_spec.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} thread{'s' if threads > 1 else ''}")
        rel = self.iqr / self.median if self.median else 0.0
        if n >= 4 and rel >= 0.1:
            cause = ("This suggests significant environmental influence." if rel >= 0.25 else
                     "This could indicate system fluctuation.")
            lines.append(f"  WARNING: Interquartile range is {rel * 100:.1f}% of the median measurement.\n"
                         f"           {cause}")
        return "\n".join(lines)


class Timer:
    """``Timer(stmt="pass", setup="pass", globals=None, label=None, sub_label=None, description=None, ...)``."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None,
                 sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in ("python", "py"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply be "
                             "moved to `setup`.")
        stmt = textwrap.dedent(stmt).lstrip("\n").rstrip()
        setup = textwrap.dedent(setup).lstrip("\n").rstrip()
        globals = dict(globals or {})
        globals.setdefault("torch", torchlike)  # as torch's Timer provides ``torch``
        self._timer = _timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=globals)
        self._task_spec = TaskSpec(stmt, setup, global_setup, label, sub_label, description, env, num_threads)

    def _time(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Run ``stmt`` ``number`` times (after a warm-up of ``number // 100``): one measurement."""
        self._time(max(number // 100, 2))
        return Measurement(number, [self._time(number)], self._task_spec)

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs, sized so the timer's own cost is negligible, until ``min_run_time`` seconds passed."""
        overhead = statistics.median(self._time(0) for _ in range(5))
        number = 1
        while True:
            took = self._time(number)
            enough = overhead / took <= 1e-4 and took >= min_run_time / 1000
            if enough or took > min_run_time or number * 10 > 2 ** 31:
                break
            number *= 10
        times, total = [], 0.0
        while total < min_run_time:
            t = self._time(number)
            times.append(t)
            total += t
            if callback is not None:
                callback(number, t)
        return Measurement(number, times, self._task_spec)
