"""The package's layers import one way: data model -> ops -> engine -> public API (DESIGN.md).

Read from the source with ``ast`` (nothing is imported): every import of a torchlike module points to the same
layer or a lower one, and none is made inside a function to dodge an import cycle.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "torchlike"

DATA, OPS, ENGINE, API = 0, 1, 2, 3
_DATA_MODULES = {"torchlike._dtype", "torchlike._device", "torchlike._grad_mode", "torchlike._anomaly_mode",
                 "torchlike._tensor", "torchlike._tensor_str", "torchlike._graph", "torchlike.utils",
                 "torchlike.utils.hooks", "torchlike._xcache",  # (_xcache: JAX's executables, no torchlike import)
                 "torchlike._lazy",  # (lazy mode's pending arrays and programs: no torchlike import)
                 "torchlike._roll",  # (loop rolling of jaxprs: JAX only)
                 "torchlike._warnings"}  # (once-a-process warnings: no torchlike import)


def _layer(module):
    if module in _DATA_MODULES:
        return DATA
    if module == "torchlike.ops" or module.startswith("torchlike.ops.") or module == "torchlike._internal":
        return OPS  # _internal gathers the data model's and the ops' shared internals for the layers above
    if module == "torchlike.autograd.engine":
        return ENGINE
    return API


def _module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _targets(node, module, is_package):
    """Absolute names of the torchlike modules an import statement imports."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "torchlike"]
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    target = (base + "." + node.module if node.module else base) if node.level else node.module
    if target is None or target.split(".")[0] != "torchlike":
        return []
    out = []
    for a in node.names:  # `from . import x` imports the submodule x when there is one, else a name of target
        sub = target + "." + a.name
        rel = pathlib.Path(*sub.split("."))
        is_module = (ROOT.parent / rel).with_suffix(".py").exists() or (ROOT.parent / rel / "__init__.py").exists()
        out.append(sub if is_module else target)
    return sorted(set(out))


def _imports():
    """(importer, imported, inside_a_function) for every import of a torchlike module in the package."""
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        tree = ast.parse(path.read_text())
        deferred = set()
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                deferred.update(id(n) for n in ast.walk(fn) if isinstance(n, (ast.Import, ast.ImportFrom)))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(node, module, path.name == "__init__.py"):
                    found.append((module, target, id(node) in deferred))
    return found


def test_imports_point_down():
    wrong = [(m, t) for m, t, _ in _imports() if _layer(t) > _layer(m)]
    assert wrong == []


def test_no_import_inside_a_function():
    assert [(m, t) for m, t, inside in _imports() if inside] == []


def test_the_data_model_and_the_ops_never_import_the_autograd_package():
    # torchlike.autograd's __init__ imports the engine: a lower layer importing any module of it would cycle
    low = [(m, t) for m, t, _ in _imports() if _layer(m) <= OPS and t.startswith("torchlike.autograd")]
    assert low == []


def test_layers_are_known():
    assert {_layer(m) for m, _, _ in _imports()} == {DATA, OPS, ENGINE, API}


def test_no_module_patches_tensor_or_a_generated_node_class():
    """Tensor methods come only from the binding pass (ops/_bind.py); node classes only from their OpDef."""
    patches = []
    for path in sorted(ROOT.rglob("*.py")):
        if path.relative_to(ROOT).as_posix() == "ops/_bind.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for t in targets:
                text = ast.unparse(t)
                if text.startswith("Tensor.") or ".node_cls." in text:
                    patches.append(f"{path.name}:{node.lineno} {text}")
            if isinstance(node, ast.Call) and ast.unparse(node.func) == "setattr" and node.args and \
                    ast.unparse(node.args[0]) == "Tensor":
                patches.append(f"{path.name}:{node.lineno} setattr(Tensor, ...)")
    assert patches == []
