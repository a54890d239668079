"""assert_close as torch.testing's: the same pairing of inputs, default tolerances and AssertionError messages.

Values are compared on the host (NumPy) in the tensors' own dtype, as torch computes them."""
import cmath
import collections.abc

import numpy as np

from .. import _dtype
from ..ops import creation as _creation
from .._tensor import Tensor

# (rtol, atol) per dtype; other dtypes compare exactly
_PRECISIONS = {_dtype.float16: (0.001, 1e-5), _dtype.bfloat16: (0.016, 1e-5), _dtype.float32: (1.3e-6, 1e-5),
               _dtype.float64: (1e-7, 1e-7), _dtype.complex64: (1.3e-6, 1e-5), _dtype.complex128: (1e-7, 1e-7)}
_NUMBER_DTYPES = {int: _dtype.int64, float: _dtype.float64, complex: _dtype.complex128}


class _Failure(Exception):
    """An error to raise, with the item ids that locate it in nested inputs."""

    def __init__(self, type, msg, id=()):  # noqa: A002
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            text = self.msg
            if self.id:
                text += f"\n\nThe failure occurred for item {''.join(str([i]) for i in self.id)}"
            msg = msg(text) if callable(msg) else text
        return self.type(msg)


class _Unsupported(Exception):
    pass


def _tolerances(dtypes, rtol, atol, id):  # noqa: A002
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _mismatch_msg(default, identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = (f"{kind.title()} difference: {diff}" if idx is None
               else f"Greatest {kind} difference: {diff} at index {idx}")
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    identifier = default if identifier is None else identifier(default) if callable(identifier) else identifier
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol) + diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", None, f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff,
                         None, rtol)


def _abs(x):
    """|x| as torch computes it: a complex modulus rounded once (in extended precision, then to the real dtype)."""
    if x.dtype.kind != "c":
        return np.abs(x)
    re, im = x.real.astype(np.longdouble), x.imag.astype(np.longdouble)
    return np.sqrt(re * re + im * im).astype(x.real.dtype)


def _tensor_msg(a, e, matches, rtol, atol, floating):
    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    a, e, m = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if not floating:  # integers and bools: differences in int64, ratios in the default float
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = _abs(a - e)
        abs_diff[m] = 0
        if floating:
            rel_diff = abs_diff / _abs(e)
        else:
            rel_diff = abs_diff.astype(np.float32) / np.abs(e).astype(np.float32)
    rel_diff[m] = 0

    def greatest(d):
        i = int(np.argmax(d)) if not np.isnan(d).any() else int(np.argmax(np.isnan(d)))
        return d[i].item(), tuple(int(k) for k in np.unravel_index(i, matches.shape))
    (ad, ai), (rd, ri) = greatest(abs_diff), greatest(rel_diff)
    return _mismatch_msg("Tensor-likes", None, extra, ad, ai, atol, rd, ri, rtol)


def _isclose(a, e, rtol, atol, equal_nan):
    if a.dtype == bool:
        return a == e
    with np.errstate(all="ignore"):
        close = (a == e) | (np.isfinite(a) & np.isfinite(e) & (np.abs(a - e) <= atol + rtol * np.abs(e)))
    if equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    return close


def _compare_numbers(actual, expected, id, rtol, atol, equal_nan, check_dtype, **_):  # noqa: A002
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES[type(x)] for x in (actual, expected)], rtol, atol, id)
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
    if actual == expected or (equal_nan and cmath.isnan(actual) and cmath.isnan(expected)):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_msg(actual, expected, rtol, atol), id)


def _to_tensor(x):
    if isinstance(x, Tensor):
        return x
    try:
        return _creation.as_tensor(x)
    except Exception:  # noqa: BLE001 - not tensor-like
        raise _Unsupported from None


def _tensor_like(actual, expected, allow_subclasses):
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        return False
    if not allow_subclasses and type(actual) is not type(expected):
        return False
    try:
        _to_tensor(actual), _to_tensor(expected)
    except _Unsupported:
        return False
    return True


def _compare_tensors(actual, expected, id, rtol, atol, equal_nan, check_dtype, check_device, check_stride,  # noqa: A002
                     **_):
    a, e = _to_tensor(actual), _to_tensor(expected)
    rtol, atol = _tolerances([a.dtype, e.dtype], rtol, atol, id)

    def mismatch(name, x, y):
        raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: {x} != {y}.", id)
    if a.shape != e.shape:
        mismatch("shape", a.shape, e.shape)
    if check_stride and a.stride() != e.stride():
        mismatch("stride()", a.stride(), e.stride())
    if check_device and a.device != e.device:
        mismatch("device", a.device, e.device)
    if check_dtype and a.dtype != e.dtype:
        mismatch("dtype", a.dtype, e.dtype)
    an, en = np.asarray(a.detach().numpy()), np.asarray(e.detach().numpy())
    if a.dtype != e.dtype:
        common = _dtype.promote_types(a.dtype, e.dtype)._np
        an, en = an.astype(common), en.astype(common)
    matches = _isclose(an, en, rtol, atol, equal_nan)
    if matches.all():
        return
    if an.shape == ():
        raise _Failure(AssertionError, _scalar_msg(an.item(), en.item(), rtol, atol), id)
    floating = a.dtype.is_floating_point or a.dtype.is_complex or e.dtype.is_floating_point or e.dtype.is_complex
    raise _Failure(AssertionError, _tensor_msg(an, en, matches, rtol, atol, floating), id)


def _compare_none(actual, expected, id, **_):  # noqa: A002
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)


def _compare_bools(actual, expected, id, **_):  # noqa: A002
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)


# (which inputs a comparison handles, the comparison), tried in torch's order
_PAIRS = (
    (lambda a, e, _: a is None or e is None, _compare_none),
    (lambda a, e, _: all(isinstance(x, (bool, np.bool_)) for x in (a, e)), _compare_bools),
    (lambda a, e, _: all(isinstance(x, (int, float, complex, np.number)) for x in (a, e)), _compare_numbers),
    (_tensor_like, _compare_tensors),
)


def _pairs(actual, expected, id=()):  # noqa: A002
    """(actual, expected, id) leaves of the (possibly nested) inputs, checking lengths and keys on the way."""
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(actual, str) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                           id)
        return [p for i in range(len(actual)) for p in _pairs(actual[i], expected[i], (*id, i))]
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        ka, ke = set(actual.keys()), set(expected.keys())
        if ka != ke:
            raise _Failure(AssertionError, f"The keys of the mappings do not match:\n"
                                           f"Missing keys in the actual mapping: {sorted(ke - ka)}\n"
                                           f"Additional keys in the actual mapping: {sorted(ka - ke)}", id)
        try:
            keys = sorted(ka)
        except Exception:  # noqa: BLE001 - unorderable keys keep their order
            keys = ka
        return [p for k in keys for p in _pairs(actual[k], expected[k], (*id, k))]
    return [(actual, expected, id)]


def _comparison(actual, expected, id, options):  # noqa: A002
    """The comparison for one pair of leaves (torch's pair types, checked before any value is compared)."""
    for handles, compare in _PAIRS:
        if handles(actual, expected, options["allow_subclasses"]):
            if compare in (_compare_numbers, _compare_tensors):
                _tolerances([_dtype.float64], options["rtol"], options["atol"], id)
            return compare
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                              f"{type(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` (tensors, numbers, or sequences/mappings of them) are close:
    ``|actual - expected| <= atol + rtol * |expected|``, with torch's default tolerances per dtype."""
    __tracebackhide__ = True
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=check_dtype, check_device=check_device,
                   check_stride=check_stride, allow_subclasses=allow_subclasses)
    try:
        leaves = [(_comparison(a, e, id, options), a, e, id) for a, e, id in _pairs(actual, expected)]
    except _Failure as f:
        raise f.to_error() from None
    for compare, a, e, id in leaves:  # noqa: A001
        try:
            compare(a, e, id, **options)
        except _Failure as f:
            raise f.to_error(msg) from None
