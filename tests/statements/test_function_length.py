"""No function in recon/statements runs over 80 lines: a longer one is split into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

import recon.statements

PACKAGE = Path(recon.statements.__file__).parent
MAX_LINES = 80


def long_functions(root: Path, limit: int = MAX_LINES) -> list[str]:
    """`path:line name (n lines)` for every function or method under `root` longer than
    `limit` lines, from its `def` to its last line (decorators not counted)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > limit:
                    found.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length})")
    return found


def test_no_function_over_80_lines() -> None:
    assert long_functions(PACKAGE) == []


def test_the_check_sees_long_functions_and_methods(tmp_path: Path) -> None:
    def body(indent: str, lines: int) -> str:
        return "".join(f"{indent}x{i} = {i}\n" for i in range(lines))

    (tmp_path / "m.py").write_text(
        "def short():\n    pass\n\n"
        f"def at_the_limit():\n{body('    ', MAX_LINES - 1)}\n"
        f"def long():\n{body('    ', MAX_LINES)}\n"
        f"class C:\n    def method(self):\n{body('        ', MAX_LINES)}",
        encoding="utf-8",
    )
    assert long_functions(tmp_path) == ["m.py:85 long (81)", "m.py:168 method (81)"]
