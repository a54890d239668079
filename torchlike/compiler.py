"""torch.compiler: the names model code calls around compilation. ``compile`` is torchlike.compile; ``disable``
keeps a function out of compiled programs (called while compiling, it splits the program and runs eagerly);
``is_compiling`` is True while torchlike.compile traces; torchlike never exports, and has no graph to allow a
function into (``allow_in_graph`` and ``assume_constant_result`` give back what they are given: torchlike traces
into every function anyway)."""
from ._dynamo import compile, reset  # noqa: F401,A004
from ._dynamo.eval_frame import disable, is_compiling

__all__ = ["compile", "reset", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "allow_in_graph",
           "assume_constant_result"]

is_dynamo_compiling = is_compiling


def is_exporting():
    """False: torchlike has no torch.export."""
    return False


def allow_in_graph(fn):
    """``fn`` itself (torchlike traces into it anyway)."""
    return fn


def assume_constant_result(fn):
    """``fn`` itself (its result is traced like any other)."""
    return fn
