"""Run a PyTorch script with torchlike standing in for torch: ``python tools/as_torch.py script.py [args]``.

``import torch`` (and ``torch.nn.functional``, ``torch.func``, ... and ``functorch``, which imports
``torch._functorch``) give torchlike's modules of the same names; nothing of real torch is imported.
"""
import importlib
import importlib.abc
import importlib.util
import runpy
import sys


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch`` and ``torch.<x>`` as ``torchlike`` and ``torchlike.<x>`` (the same module objects)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "torch" or fullname.startswith("torch."):
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return importlib.import_module("torchlike" + spec.name[len("torch"):])

    def exec_module(self, module):
        pass


def install():
    """Make ``import torch`` import torchlike from now on in this process."""
    for name in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _Alias())


if __name__ == "__main__":
    install()
    script, sys.argv = sys.argv[1], sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
