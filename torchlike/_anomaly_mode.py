"""Anomaly detection: switches, the forward stack recorded on each node, and the warning showing it."""
import os
import threading
import traceback
import warnings


class _Anomaly(threading.local):
    enabled = False
    check_nan = True


_anomaly = _Anomaly()


def is_anomaly_enabled():
    return _anomaly.enabled


def is_anomaly_check_nan_enabled():
    return _anomaly.check_nan


class set_detect_anomaly:
    """``set_detect_anomaly(mode, check_nan=True)``: takes effect at once; as a context manager, restores."""

    def __init__(self, mode, check_nan=True):
        self._prev = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self._prev
        return False


class detect_anomaly:
    """Context manager turning anomaly detection on (warns, as torch does)."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = (_anomaly.enabled, _anomaly.check_nan)
        _anomaly.enabled, _anomaly.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self._prev
        return False


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep  # torchlike/


def _forward_trace():
    """The Python stack where a node is being made (kept on the node while anomaly mode is on), without
    the frames inside torchlike, so the user's line comes last."""
    frames = traceback.extract_stack()
    end = len(frames)
    while end > 0 and frames[end - 1].filename.startswith(_PACKAGE_DIR):
        end -= 1
    return traceback.format_list(frames[:end])


def _warn_forward_trace(node):
    """torch's warning when a node fails in backward under anomaly mode: the forward stack that made it."""
    trace = getattr(node, "_anomaly_trace", None)
    if trace:
        msg = f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n" + "".join(trace)
    else:
        msg = (f"Error detected in {node.name()}. No forward pass information available. Enable detect anomaly "
               "during forward pass for more information.")
    warnings.warn(msg, UserWarning, stacklevel=3)
