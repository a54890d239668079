"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator (generator functions included), as in torch;
``no_grad``, ``enable_grad`` and ``inference_mode`` also decorate without parentheses. The state
lives in one `threading.local` object, read on every op, so a mode set in one thread never leaks
into another (a new thread starts in grad mode, outside inference mode).
"""
import functools
import inspect
import sys
import threading
import warnings

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "set_multithreading_enabled"]


class _State(threading.local):
    grad_enabled = True
    inference = False
    multithreading = True


_state = _State()


def is_grad_enabled():
    """True when ops record autograd history in this thread."""
    return _state.grad_enabled


def is_inference_mode_enabled():
    """True inside ``inference_mode()`` in this thread."""
    return _state.inference


def is_multithreading_enabled():
    """torch's flag for multithreaded backward (the torchlike engine always runs on the calling thread)."""
    return _state.multithreading


def _wrap_generator(ctx_factory, func):
    """Run every step of the generator (send, throw, close) inside a fresh context manager."""
    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with ctx_factory():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with ctx_factory():
                        gen.close()
                    raise
                except BaseException:
                    with ctx_factory():
                        response = gen.throw(*sys.exc_info())
                else:
                    with ctx_factory():
                        response = gen.send(request)
        except StopIteration as e:
            return e.value
    return generator_context


class _DecoratorContextManager:
    """Base: an instance is a context manager; called on a function, it wraps the function."""

    def __call__(self, orig_func):
        if inspect.isclass(orig_func):
            warnings.warn("Decorating classes is deprecated and will be disabled in future versions. You should "
                          "only decorate functions or methods. To preserve the current behavior of class "
                          "decoration, you can directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            func = lambda *args, **kwargs: orig_func(*args, **kwargs)  # noqa: E731
        else:
            func = orig_func
        ctx_factory = self.clone
        if inspect.isgeneratorfunction(func):
            return _wrap_generator(ctx_factory, func)

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with ctx_factory():
                return func(*args, **kwargs)
        return decorate_context

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Ops inside do not record history (factories asked for requires_grad=True still get it)."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Turns history recording back on inside a no_grad region."""

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = True

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)`` takes effect at once; used with ``with`` it restores on exit."""

    def __init__(self, mode):
        self.prev = _state.grad_enabled
        self.mode = mode
        _state.grad_enabled = bool(mode)

    def __call__(self, orig_func):
        _state.grad_enabled = self.prev  # as a decorator, the call in __init__ must not stick
        return super().__call__(orig_func)

    def __enter__(self):
        _state.grad_enabled = bool(self.mode)

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev

    def __str__(self):
        return f"torch.autograd.grad_mode.set_grad_enabled(mode={self.mode})"

    __repr__ = __str__

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """No-grad whose outputs are inference tensors (no version counter, cannot be saved for backward).

    ``inference_mode(False)`` leaves inference mode and turns grad mode on, as torch's does.
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self._prev = (_state.grad_enabled, _state.inference)
        _state.grad_enabled = not self.mode
        _state.inference = bool(self.mode)

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self._prev

    def clone(self):
        return self.__class__(self.mode)


class set_multithreading_enabled(_DecoratorContextManager):
    """Accepted for torch compatibility; takes effect at once, restores on exit (no behavioural effect)."""

    def __init__(self, mode):
        self.prev = _state.multithreading
        self.mode = mode
        _state.multithreading = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)
