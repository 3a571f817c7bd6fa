"""The tables of docs/contracts.md hold: each matching and break rule names tests that exist,
and the break categories are the vocabulary of recon.schemas."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}


def test_every_rule_names_a_test_that_exists() -> None:
    text = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    table = text.split("## Matching and break rules", 1)[1].split("\n\n**", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| ") and not r.startswith("| #")]
    assert len(rows) >= 15
    for row in rows:
        cell = row.rstrip(" |").rsplit("|", 1)[1]
        refs = re.findall(r"`([^`]+)`", cell)
        assert refs, f"no test named for: {row}"
        current = None
        for ref in refs:
            file, _, name = ref.partition("::")
            if file:
                # by name, wherever the tests' folders put it
                found_files = sorted((ROOT / "tests").rglob(file))
                assert len(found_files) == 1, f"{ref}: {found_files}"
                current = found_files[0]
            assert current is not None, ref
            if name:
                found = fnmatch.filter(sorted(_functions(current)), name)
                assert found, f"{ref}: no such test in {current.name}"


def test_the_categories_table_is_the_vocabulary() -> None:
    """docs/contracts.md lists every break category with its priority, and no other."""
    from recon.schemas import CATEGORIES

    text = (ROOT / "docs" / "contracts.md").read_text(encoding="utf-8")
    table = text.split("## Break categories", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for row in table.splitlines():
        if row.startswith("| `"):
            name, priority = (cell.strip() for cell in row.strip("|").split(" | ")[:2])
            documented[name.strip("`")] = priority
    assert documented == {name: c.priority for name, c in CATEGORIES.items()}
