"""The namespace of custom ops, as torch's: ``torchlike.ops.<ns>.<name>`` (an ``OpOverloadPacket``) and its
``.default`` (an ``OpOverload``), made by ``_publish`` for each ``CustomOpDef``."""
import types

from .. import ops


class _OpOverload:
    """``torchlike.ops.ns.name.default``: calls the op; ``str()`` is ``ns.name.default`` as torch's."""

    _overloadname = "default"

    def __init__(self, opdef):
        self._opdef = opdef
        self._namespace, self._opname = opdef._namespace, opdef._name
        self._name = opdef._qualname
        self.__name__ = f"{opdef._name}.default"

    @property
    def _schema(self):
        return self._opdef._schema_obj

    def name(self):
        return self._name

    def __call__(self, *args, **kwargs):
        return self._opdef(*args, **kwargs)

    def __str__(self):
        return f"{self._namespace}.{self._opname}.default"

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', overload='default')>"


class _OpOverloadPacket:
    """``torchlike.ops.ns.name``: calls the op; its one overload is ``.default``."""

    def __init__(self, opdef):
        self.default = opdef._opoverload
        self._qualified_op_name = opdef._qualname
        self._dotted = f"{opdef._namespace}.{opdef._name}"
        self.__name__ = opdef._name

    def overloads(self):
        return ["default"]

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"The underlying op of '{self._dotted}' has no overload name '{name}'")

    def __call__(self, *args, **kwargs):
        return self.default(*args, **kwargs)

    def __str__(self):
        return self._dotted

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._dotted}')>"


class _OpNamespace(types.ModuleType):
    """``torchlike.ops.<ns>``: holds the custom ops of one namespace."""

    def __init__(self, name):
        super().__init__("torchlike.ops." + name)
        self.name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")

    def __repr__(self):
        return f"<module 'torchlike.ops.{self.name}' from 'torchlike.ops'>"


def _publish(opdef):
    """Make the op reachable as ``torchlike.ops.<ns>.<name>`` (skipped if ``<ns>`` names an op-family module)."""
    ns = getattr(ops, opdef._namespace, None)
    if ns is None:
        ns = _OpNamespace(opdef._namespace)
        setattr(ops, opdef._namespace, ns)
    if isinstance(ns, _OpNamespace):
        setattr(ns, opdef._name, _OpOverloadPacket(opdef))
