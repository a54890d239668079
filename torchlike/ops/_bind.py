"""The binding pass: every public op is declared once, where it is defined, and ``bind()`` exposes it.

    def _abs_(self): ...                                  # the in-place variant

    @public(aliases=("absolute",), inplace=_abs_, dunders=("__abs__",))
    def abs(input): ...                                   # torch.abs, torch.absolute, Tensor.abs, Tensor.abs_, ...

A declaration names the function's public names (``name``, default the function's own, and ``aliases``), its
Tensor method (``method``: True for the function itself, ``property`` for it as a property, another function,
or False for none), its in-place variant (``inplace``: bound as ``Tensor.<n>_`` for the name and each alias),
Tensor dunders (``dunders``: names bound to the function itself, or ``(name, function)`` pairs), and whether it
is a torch-level function (``function=False``: a Tensor method only). It belongs to the module it is made in.
The op modules' factories (``_unary`` in pointwise, ``_cmp``, ...) declare the functions they generate this way.
Methods of other layers are declared the same way where they are implemented (``Tensor.backward`` in
``torchlike.autograd``), so ``Tensor`` itself holds only the data model.

``bind()`` runs once, from ``torchlike/__init__.py`` after every layer is imported: it sets the Tensor methods,
gives each op module its public names (aliases included) and its ``__all__`` (what ``torchlike`` re-exports), in
declaration order. No other code attaches Tensor methods.
"""
import sys

from .._tensor import Tensor

_declared = []


class _Public:
    __slots__ = ("module", "name", "fn", "aliases", "method", "inplace", "dunders", "function")


def public(fn=None, *, name=None, aliases=(), method=True, inplace=None, dunders=(), function=True, module=None):
    """Declare ``fn`` a public op of the calling module (see the module docstring); returns ``fn`` (a decorator
    without ``fn``)."""
    module = module or sys._getframe(1).f_globals["__name__"]

    def declare(fn):
        d = _Public()
        d.module = module
        d.name = name or fn.__name__
        d.fn = fn
        d.aliases = tuple(aliases)
        d.method = method
        d.inplace = inplace
        d.dunders = dict((n, fn) if isinstance(n, str) else n for n in dunders)
        d.function = function
        _declared.append(d)
        return fn
    return declare if fn is None else declare(fn)


def bind():
    """Expose every declaration: Tensor methods, in-place variants, dunders, module names and ``__all__``."""
    exported = {}
    for d in _declared:
        names = (d.name,) + d.aliases
        if d.function:
            mod = sys.modules[d.module]
            for n in names:
                setattr(mod, n, d.fn)
            exported.setdefault(d.module, []).extend(names)
        if d.method is not False:
            for n in names:
                setattr(Tensor, n, d.fn if d.method is True else property(d.fn) if d.method is property else d.method)
        if d.inplace is not None:
            for n in names:
                setattr(Tensor, n + "_", d.inplace)
        for n, fn in d.dunders.items():
            setattr(Tensor, n, fn)
    for module, names in exported.items():
        sys.modules[module].__all__ = list(dict.fromkeys(names))
