"""Anomaly mode against torch: the NaN check, the forward traceback warning, the version-counter hint."""
import sys
import warnings

import numpy as np
import torch

import torchlike as tl
from torchlike.autograd.anomaly_mode import is_anomaly_check_nan_enabled, is_anomaly_enabled

V = np.array([-1.0, 0.5, 2.0], np.float32)


def _backward_recording(lib, make, anomaly=True, check_nan=True):
    """Run ``make(x).sum().backward()`` under anomaly mode: (error repr or None, warning messages)."""
    x = lib.tensor(V, requires_grad=True)
    err = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.autograd.set_detect_anomaly(anomaly, check_nan=check_nan):
            y = make(x)
            try:
                y.sum().backward()
            except Exception as e:  # noqa: BLE001 - compared with torch's
                err = (type(e).__name__, str(e))
    return err, [str(w.message) for w in caught]


def _forward_sqrt(x):
    return x.sqrt()  # the user's line the traceback must end with


def test_nan_check_message_and_traceback():
    a = _backward_recording(tl, _forward_sqrt)
    b = _backward_recording(torch, _forward_sqrt)
    assert a[0] == b[0] == ("RuntimeError", "Function 'SqrtBackward0' returned nan values in its 0th output.")
    (wa,), (wb,) = a[1], b[1]
    head = "Error detected in SqrtBackward0. Traceback of forward call that caused the error:\n"
    assert wa.startswith(head) and wb.startswith(head)
    # the same user frames, the forward call last (torch appends its C++ location after the stack)
    frames_a = wa[len(head):].rstrip("\n")
    assert frames_a.endswith("return x.sqrt()  # the user's line the traceback must end with")
    # the frames below the test's own call line (which differs between the two calls) are identical
    tail_a = frames_a.split('  File "')[-2:]
    tail_b = wb[len(head):].split(" (Triggered internally")[0].rstrip("\n").split('  File "')[-2:]
    assert tail_a == tail_b
    assert __file__ in frames_a and "torchlike" + "/" not in frames_a.replace(__file__, "")


def test_nan_check_off():
    for check_nan, anomaly in [(False, True), (True, False)]:
        a = _backward_recording(tl, _forward_sqrt, anomaly, check_nan)
        b = _backward_recording(torch, _forward_sqrt, anomaly, check_nan)
        assert a == b == (None, [])


def test_nan_in_later_output():
    def make(x):
        return x * x.log()  # log(-1) is NaN: MulBackward0's gradients are NaN
    a = _backward_recording(tl, make)
    b = _backward_recording(torch, make)
    assert a[0] == b[0]
    assert [m.split("\n")[0] for m in a[1]] == [m.split("\n")[0] for m in b[1]]


def test_error_in_hook_shows_forward_trace():
    def run(lib):
        def make(x):
            y = x.exp()

            def bad(grad_outputs):
                raise ValueError("boom")
            y.grad_fn.register_prehook(bad)
            return y
        err, msgs = _backward_recording(lib, make, check_nan=False)
        return err, [m.split("\n")[0] for m in msgs]
    a, b = run(tl), run(torch)
    assert a == b == (("ValueError", "boom"), ["Error detected in ExpBackward0. Traceback of forward call that caused "
                                               "the error:"])


def test_version_counter_hint_and_no_forward_info():
    def run(lib, anomaly):
        x = lib.tensor(V, requires_grad=True)
        y = x.sigmoid()  # made outside anomaly mode: no forward trace
        y.mul_(2)
        err = None
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.set_detect_anomaly(anomaly):
                try:
                    y.sum().backward()
                except RuntimeError as e:
                    err = str(e)
        return err, [str(w.message).split(" (Triggered internally")[0] for w in caught]  # torch's C++ location
    for anomaly in (False, True):
        a, b = run(tl, anomaly), run(torch, anomaly)
        assert a == b
        assert ("Good luck!" in a[0]) == anomaly
    assert a[1] == ["Error detected in SigmoidBackward0. No forward pass information available. Enable detect "
                    "anomaly during forward pass for more information."]


def test_switches():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with tl.autograd.detect_anomaly(check_nan=False):
            assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
    assert [str(w.message) for w in caught] == [
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only be enabled for "
        "debugging."]
    assert not is_anomaly_enabled() and is_anomaly_check_nan_enabled()
    tl.autograd.set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled()
        x = tl.tensor(V, requires_grad=True)
        y = x * 2
        assert y.grad_fn._anomaly_trace[-1].strip().endswith("y = x * 2")
    finally:
        tl.autograd.set_detect_anomaly(False)
    assert not is_anomaly_enabled()
    assert (x * 2).grad_fn._anomaly_trace is None
    assert sys.modules["torchlike._anomaly_mode"]._anomaly.enabled is False
