"""torch-style repr of tensors, character for character what torch 2.13 prints.

One ``_Formatter`` per tensor (two for complex: real and imaginary parts) picks the mode from the
non-zero finite values: *int mode* (``tensor([1., 2.])``) when all are whole numbers, *scientific*
(``1.0000e+05``) when max/min > 1000, max > 1e8 or min < 1e-4, otherwise *fixed* with ``precision``
decimals. Every element is right-aligned to the widest one; rows wrap at ``linewidth`` columns;
above ``threshold`` elements only ``edgeitems`` items per edge of each dimension are shown, with ``...``.
Suffixes follow in torch's order: device, size (empty tensors), dtype (non-default), grad_fn or
requires_grad. The only intended difference from torch: dtypes print as ``torchlike.float64``.
"""
import contextlib
import math

import numpy as np

from . import _dtype


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()
_PROFILES = {"default": (4, 1000, 3, 80), "short": (2, 1000, 2, 80), "full": (4, math.inf, 3, 80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """torch.set_printoptions: precision, threshold, edgeitems, linewidth, profile, sci_mode (None: automatic)."""
    if profile in _PROFILES:
        (PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems,
         PRINT_OPTS.linewidth) = _PROFILES[profile]
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options as a dict accepted by ``set_printoptions``."""
    return {name: getattr(PRINT_OPTS, name)
            for name in ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")}


@contextlib.contextmanager
def printoptions(**kwargs):
    """Temporarily change the print options."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses int / fixed / scientific mode and the common width from the values it will print."""

    def __init__(self, values):
        # values: a flat NumPy array (float32/float64 for floating tensors, else int/bool)
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        prec = PRINT_OPTS.precision
        if not self.floating:
            for v in values.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = values[np.isfinite(values) & (values != 0)]
        if vals.size == 0:
            return
        absv = np.abs(vals.astype(np.float64))
        lo, hi = absv.min(), absv.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        with np.errstate(over="ignore"):
            auto_sci = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        self.sci_mode = bool(auto_sci) if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
        pylist = vals.tolist()
        if self.sci_mode:
            widths = (len(f"{v:.{prec}e}") for v in pylist)
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in pylist)
        else:
            widths = (len(f"{v:.{prec}f}") for v in pylist)
        self.max_width = max(self.max_width, max(widths))

    def format(self, value):
        if not self.floating:
            s = f"{value}"
        elif self.sci_mode:
            s = f"{value:{self.max_width}.{PRINT_OPTS.precision}e}"
        elif self.int_mode:
            s = f"{value:.0f}"
            if math.isfinite(value):
                s += "."
        else:
            s = f"{value:.{PRINT_OPTS.precision}f}"
        return s.rjust(self.max_width)


def _summarized(a):
    """The values shown when summarising: edgeitems from each end of every long dimension."""
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if not e:  # torch: nothing for matrices; for vectors its self[-0:] keeps every element
        return a if a.ndim == 1 else a[(slice(0, 0),) * a.ndim]
    for axis, n in enumerate(a.shape):
        if n > 2 * e:
            a = np.take(a, list(range(e)) + list(range(n - e, n)), axis=axis)
    return a


def _format_value(v, f1, f2):
    if f2 is None:
        return f1.format(v)
    real = f1.format(v.real)
    imag = (f2.format(v.imag) + "j").lstrip()
    return real + imag if imag[0] in "+-" else real + "+" + imag


def _vector_str(a, indent, summarize, f1, f2):
    e = PRINT_OPTS.edgeitems
    width = f1.max_width + 2 + (f2.max_width + 1 if f2 is not None else 0)
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / width))
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([_format_value(v, f1, f2) for v in a[:e].tolist()] + [" ..."]
                + [_format_value(v, f1, f2) for v in a[-e:].tolist()])
    else:
        data = [_format_value(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _format_value(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    n = a.shape[0]
    if summarize and n > 2 * e:
        rows = ([_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(e)] + ["..."]
                + [_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(n - e, n)])
    else:
        rows = [_nested_str(a[i], indent + 1, summarize, f1, f2) for i in range(n)]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def _printable(a):
    """float16/bfloat16 -> float32 (exact), so NumPy math and Python formatting see the same values."""
    if a.dtype.kind == "V" or a.dtype.name in ("bfloat16", "float16"):
        return a.astype(np.float32)
    return a


def _body(a, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    a = _printable(a)
    if a.dtype.kind == "c":
        f1 = _Formatter((_summarized(a.real) if summarize else a.real).reshape(-1))
        f2 = _Formatter((_summarized(a.imag) if summarize else a.imag).reshape(-1))
    else:
        f1 = _Formatter((_summarized(a) if summarize else a).reshape(-1))
        f2 = None
    return _nested_str(a, indent, summarize, f1, f2)


_EXTRA = len("torchlike.") - len("torch.")


def _add_suffixes(text, suffixes, indent):
    out = [text]
    last = len(text) - text.rfind("\n") + 1
    for s in suffixes:
        n = len(s) - s.count("torchlike.") * _EXTRA  # wrap where torch wraps its "torch.float64"
        if last + n + 2 > PRINT_OPTS.linewidth:
            out.append(",\n" + " " * indent + s)
            last = indent + n
        else:
            out.append(", " + s)
            last += n + 2
    out.append(")")
    return "".join(out)


def _str(t):
    """torch's repr of a tensor (``tensor([1., 2.], grad_fn=<MulBackward0>)``)."""
    cls = type(t)
    plain = cls.__name__ in ("Tensor", "Parameter")
    prefix = "tensor(" if plain else f"{cls.__name__}("
    indent = len(prefix)
    suffixes = []
    data = t._data
    dt = _dtype._from_np(data.dtype)
    try:
        a = np.asarray(data)
    except Exception:  # a tracer inside jax.jit / grad / vmap: no values to show
        a = None
    if a is not None:
        dev = t.device
        if dev.type != "cpu":
            suffixes.append(f"device='{dev}'")
    default = _dtype.get_default_dtype()
    if a is None:
        body = f"<traced {data.aval.str_short()}>"
    elif a.size == 0:
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt is not default:
            suffixes.append(f"dtype={dt!r}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        if dt not in (default, default.to_complex(), _dtype.int64, _dtype.bool):
            suffixes.append(f"dtype={dt!r}")
        body = _body(a, indent)
    node = t._grad_fn
    if node is not None:
        suffixes.append(f"grad_fn=<{node.name().rsplit('::', 1)[-1]}>")
    elif t._view_error is not None:  # a view whose grad_fn torch refuses to rebuild
        suffixes.append("grad_fn=<Invalid>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    out = _add_suffixes(prefix + body, suffixes, indent)
    if not plain and any(c.__name__ == "Parameter" for c in cls.__mro__):
        out = f"Parameter({out})"
    return out
