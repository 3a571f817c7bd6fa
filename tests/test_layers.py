"""Data flows one way: the import-linter contracts in pyproject.toml hold, and no module hides
an import from them (a name looked up at run time is invisible to the import graph)."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from pathlib import Path

from importlinter import cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "recon"

# import_module() with a name computed at run time only in these lazy loaders (the public
# surface of `recon` and `recon.sandbox`, the CLI's command registry); a constant name
# anywhere must be of the caller's layer or below (test_no_hidden_upward_import)
LAZY_LOADERS = {
    "recon/__init__.py",
    "recon/cli/__init__.py",
    "recon/sandbox/__init__.py",
}


def test_import_contracts_hold() -> None:
    assert cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True) == 0


def test_every_top_level_module_has_a_layer() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c for c in config["contracts"] if c["type"] == "layers"]
    assert layers["exhaustive"] is True and layers["containers"] == ["recon"]
    # lowest to highest: the README's data flow, in this order
    order = [layer.split()[0].strip("()") for layer in reversed(layers["layers"])]
    for low, high in [
        ("errors", "api"),
        ("api", "extraction"),
        ("extraction", "catalog"),
        ("catalog", "reconciliation"),
        ("reconciliation", "report"),
        ("report", "cli"),
    ]:
        assert order.index(low) < order.index(high), (low, high)


def _layers() -> dict[str, int]:
    """Each top-level module of `recon` -> its layer's height (0 the lowest), per the layers
    contract; `recon` itself (its `__init__` exports the public functions) sits on top."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "layers"]
    height = {
        name.strip(): index
        for index, layer in enumerate(reversed(contract["layers"]))
        for name in layer.strip("()").replace("|", ":").split(":")
    }
    return {**height, "recon": len(contract["layers"])}


def _layer_of(module: str, layers: dict[str, int]) -> int:
    parts = module.split(".")
    return layers["recon"] if len(parts) == 1 else layers[parts[1]]


def _imports(source: str) -> list[tuple[int, str, str | None]]:
    """Every import in `source`: (line, "static" or "dynamic", the module named, or None for a
    name computed at run time). `import_module(".x", package)` resolves against `package`
    when that is a constant too."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, "static", alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, "static", node.module))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                found.append((node.lineno, "dynamic", _constant_module(node)))
    return found


def _constant_module(call: ast.Call) -> str | None:
    args = [a.value if isinstance(a, ast.Constant) else None for a in call.args[:2]]
    target = args[0] if args else None
    if not isinstance(target, str):
        return None
    if target.startswith("."):
        package = args[1] if len(args) > 1 else None
        return importlib.util.resolve_name(target, package) if isinstance(package, str) else None
    return target


def _module_of(path: str) -> str:
    """ "recon/catalog/views.py" -> "recon.catalog.views"."""
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def hidden_upward_imports(path: str, source: str, layers: dict[str, int]) -> list[str]:
    """The run-time imports in `path` (relative to the repository) that the import graph
    cannot see and that break the layers: a module of a higher layer named as a constant, or
    a name computed at run time outside the lazy loaders."""
    caller = _layer_of(_module_of(path), layers)
    problems = []
    for line, kind, target in _imports(source):
        if kind != "dynamic":
            continue
        if target is None:
            if path not in LAZY_LOADERS:
                problems.append(f"{path}:{line}: a module named at run time")
        elif target.split(".")[0] == "recon" and _layer_of(target, layers) > caller:
            problems.append(f"{path}:{line}: {target} is in a higher layer")
    return problems


def rich_imports(path: str, source: str) -> list[str]:
    """Imports of rich in `path`, unless it is part of the command line (recon/cli)."""
    if path.startswith("recon/cli/"):
        return []
    return [
        f"{path}:{line}: {target}"
        for line, _, target in _imports(source)
        if target is not None and target.split(".")[0] == "rich"
    ]


def _sources() -> list[tuple[str, str]]:
    return [
        (str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_no_hidden_upward_import() -> None:
    layers = _layers()
    assert [p for path, src in _sources() for p in hidden_upward_imports(path, src, layers)] == []


def test_only_the_command_line_imports_rich() -> None:
    assert [p for path, src in _sources() for p in rich_imports(path, src)] == []


def test_the_hidden_import_check_finds_each_kind() -> None:
    layers = _layers()
    source = """import importlib
importlib.import_module("recon.engine")
importlib.import_module("recon.report.render")
__import__("recon.cli")
importlib.import_module("..analytics", "recon.catalog")
importlib.import_module(".views", "recon.catalog")
importlib.import_module(name)
importlib.import_module("pyspark")
"""
    assert hidden_upward_imports("recon/catalog/x.py", source, layers) == [
        "recon/catalog/x.py:3: recon.report.render is in a higher layer",
        "recon/catalog/x.py:4: recon.cli is in a higher layer",
        "recon/catalog/x.py:5: recon.analytics is in a higher layer",
        "recon/catalog/x.py:7: a module named at run time",
    ]
    # the lazy loaders may compute names; the top of the tree may name anything
    assert hidden_upward_imports("recon/__init__.py", source, layers) == []


def test_the_rich_check_finds_each_kind() -> None:
    source = """import rich
from rich.table import Table
import importlib
importlib.import_module("rich.progress")
from recon.cli.console import progress
"""
    assert rich_imports("recon/report/x.py", source) == [
        "recon/report/x.py:1: rich",
        "recon/report/x.py:2: rich.table",
        "recon/report/x.py:4: rich.progress",
    ]
    assert rich_imports("recon/cli/x.py", source) == []
