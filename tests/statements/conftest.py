"""Helpers for the statements tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recon.catalog import connect
from recon.config import DataDir

FIXTURES = Path(__file__).parent / "fixtures"


def view_rows(data: DataDir, view: str = "statement_lines") -> list[dict[str, Any]]:
    """Every row of a catalog view, as dicts ordered by line_id."""
    con = connect(data)
    try:
        cur = con.execute(f"SELECT * FROM {view} ORDER BY ALL")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        con.close()


def by_e2e(data: DataDir) -> dict[str, dict[str, Any]]:
    """statement_lines rows keyed by (end_to_end_id) for the lines that have one."""
    return {r["end_to_end_id"]: r for r in view_rows(data) if r["end_to_end_id"]}


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES
