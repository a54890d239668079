"""torch.jit's names that model code calls, so that code runs: TorchScript itself is not built.

``script`` and ``trace`` give back what they are given (it runs eagerly, with every torch behaviour; compile a step
with ``torchlike.compile``); ``ignore``, ``unused`` and ``export`` mark nothing; ``is_scripting()`` and
``is_tracing()`` are False, so the Python branches that model code guards with them run, as in eager torch;
``annotate`` gives back its value and ``Final`` is ``typing.Final``.
"""
import typing

__all__ = ["script", "trace", "ignore", "unused", "export", "is_scripting", "is_tracing", "annotate", "Final"]

Final = typing.Final


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """torch.jit.script: ``obj`` itself (a function or module run eagerly; see the module docstring)."""
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    """torch.jit.trace: ``func`` itself (run eagerly; see the module docstring)."""
    return func


def ignore(drop=False, **kwargs):
    """torch.jit.ignore, as ``@ignore`` or ``@ignore(drop=True)``: the function unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """torch.jit.unused: ``fn`` unchanged."""
    return fn


def export(fn):
    """torch.jit.export: ``fn`` unchanged."""
    return fn


def is_scripting():
    """False: nothing runs under TorchScript here."""
    return False


def is_tracing():
    """False: nothing runs under torch.jit.trace here."""
    return False


def annotate(the_type, the_value):
    """torch.jit.annotate: ``the_value``."""
    return the_value
