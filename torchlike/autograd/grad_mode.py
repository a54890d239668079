"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator, as in torch. The state lives in one
`threading.local` object, read on every op, so a mode set in one thread never leaks to another.
"""
import functools
import inspect
import threading


class _State(threading.local):
    grad_enabled = True
    inference = False


_state = _State()


def is_grad_enabled():
    """True when ops record autograd history in this thread."""
    return _state.grad_enabled


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Base: an instance is a context manager; called on a function, it wraps the function."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise TypeError("grad mode decorators can only wrap functions")
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                with self.clone():
                    value = next(gen)
                while True:
                    try:
                        with self.clone():
                            sent = yield value
                        with self.clone():
                            value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Ops inside do not record history (factories asked for requires_grad=True still get it)."""

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False


class enable_grad(_DecoratorContextManager):
    """Turns history recording back on inside a no_grad region."""

    def __enter__(self):
        self._prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)`` takes effect at once; used with ``with`` it restores on exit."""

    def __init__(self, mode):
        self._prev = _state.grad_enabled
        self.mode = bool(mode)
        _state.grad_enabled = self.mode

    def __enter__(self):
        _state.grad_enabled = self.mode

    def __exit__(self, *exc):
        _state.grad_enabled = self._prev
        return False

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        _state.grad_enabled = self._prev  # as a decorator, the call above must not stick
        return super().__call__(func)


class inference_mode(_DecoratorContextManager):
    """No-grad that also marks outputs as inference tensors (no version counter, cannot be saved)."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self._prev = (_state.grad_enabled, _state.inference)
        _state.grad_enabled = not self.mode  # torch: InferenceMode(false) turns grad mode on
        _state.inference = self.mode

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self._prev
        return False

    def clone(self):
        return self.__class__(self.mode)
