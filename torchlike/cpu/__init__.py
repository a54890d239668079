"""torch.cpu: the device-agnostic twins of torch.cuda's queries for the CPU (one device, always there), and
``torch.cpu.amp``. ``synchronize`` waits for JAX's asynchronous dispatch: the CPU arrays being computed."""
from contextlib import AbstractContextManager

import jax

__all__ = ["is_available", "is_initialized", "synchronize", "current_device", "current_stream", "stream",
           "set_device", "device_count", "Stream", "StreamContext", "Event"]


def is_available():
    """Always True."""
    return True


def is_initialized():
    """Always True."""
    return True


def synchronize(device=None):
    """Wait until every computation on the CPU has finished (JAX dispatches asynchronously)."""
    jax.block_until_ready([a for a in jax.live_arrays() if any(d.platform == "cpu" for d in a.devices())])


def device_count():
    """Always 1: the CPU is one device."""
    return 1


def set_device(device):
    """Nothing to set: there is one CPU device."""


def current_device():
    """Always 'cpu'."""
    return "cpu"


class Stream:
    """Accepted for device-agnostic code: the CPU has one stream."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """Accepted for device-agnostic code: every CPU event has completed."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_current_stream = [Stream()]  # [the stream current_stream() returns]; the default one first


def current_stream(device=None):
    """The stream selected by ``stream(...)`` (the default one otherwise)."""
    return _current_stream[0]


class StreamContext(AbstractContextManager):
    """Select ``stream`` while inside (None selects nothing)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _current_stream[0]

    def __enter__(self):
        if self.stream is not None:
            self.prev_stream = _current_stream[0]
            _current_stream[0] = self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            _current_stream[0] = self.prev_stream


def stream(stream):
    """``StreamContext(stream)``."""
    return StreamContext(stream)


from . import amp  # noqa: E402,F401  (torch.cpu.amp)
