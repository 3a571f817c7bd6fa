"""Data flows one way: the import-linter contracts in pyproject.toml hold, and no module hides
an import from them (a name looked up at run time is invisible to the import graph)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from importlinter import cli

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "recon"

# import_module() may only load a package's own modules lazily (the public surface of `recon`
# and `recon.sandbox`, the CLI's command registry)
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


def _dynamic_imports(path: Path, base: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__"):
                found.append(f"{path.relative_to(base)}:{node.lineno}")
    return found


def test_no_hidden_imports_outside_the_lazy_loaders() -> None:
    hidden = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(ROOT)) not in LAZY_LOADERS
        for hit in _dynamic_imports(path)
    ]
    assert hidden == []


def test_the_hidden_import_finder_finds_one(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import importlib\nx = importlib.import_module('recon.analytics')\n")
    assert _dynamic_imports(module, tmp_path) == ["m.py:2"]
