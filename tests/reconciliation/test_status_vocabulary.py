"""The status vocabulary has one source (recon.schemas): the SQL models name a status only
one at a time, and take every set of statuses from the `status_vocabulary` relation."""

from __future__ import annotations

import re
from datetime import datetime
from importlib import resources

import duckdb
import pytest

from recon.catalog import lifecycle_rows
from recon.reconciliation import runner
from recon.reconciliation.settings import ReconcileSettings
from recon.schemas import (
    FIAT_MOVED_FROM,
    INTENT_STATUSES,
    OFFRAMP_LIFECYCLE,
    ONRAMP_LIFECYCLE,
    TERMINAL_EXITS,
    status_vocabulary,
)

_LIST = re.compile(r"[(\[]([^()\[\]]*)[)\]]")
_LITERAL = re.compile(r"'([a-z_]+)'")


def status_lists(sql: str) -> list[str]:
    """Every parenthesized or bracketed list in `sql` that names two statuses or more."""
    code = "\n".join(line.split("--", 1)[0] for line in sql.splitlines())
    return [
        m.group(0)
        for m in _LIST.finditer(code)
        if sum(lit in INTENT_STATUSES for lit in _LITERAL.findall(m.group(1))) >= 2
    ]


def _sql_files() -> list[tuple[str, str]]:
    root = resources.files("recon.models")
    return [
        (f"{folder.name}/{f.name}", f.read_text(encoding="utf-8"))
        for folder in root.iterdir()
        if folder.is_dir()
        for f in folder.iterdir()
        if f.name.endswith(".sql")
    ]


def test_the_detector_finds_a_hand_written_status_list() -> None:
    assert status_lists("where s in ('completed', 'failed') and k in ('a', 'b')") == [
        "('completed', 'failed')"
    ]
    assert status_lists("case t when 'onramp' then ['created',\n 'minting'] end")
    assert status_lists("where s = 'completed' -- ('expired', 'failed')") == []


@pytest.mark.parametrize(("name", "sql"), _sql_files(), ids=lambda v: v if "/" in v else "")
def test_no_model_spells_a_set_of_statuses(name: str, sql: str) -> None:
    assert status_lists(sql) == [], f"{name}: take the set from status_vocabulary"


def test_the_vocabulary_follows_the_lifecycles() -> None:
    rows = status_vocabulary()
    for intent_type, stages in (("onramp", ONRAMP_LIFECYCLE), ("offramp", OFFRAMP_LIFECYCLE)):
        mine = [r for r in rows if r[0] == intent_type]
        assert [r[1] for r in mine] == [*stages, *TERMINAL_EXITS]
        assert [r[2] for r in mine if r[3] == "stage"] == list(range(1, len(stages) + 1))
        assert {r[1] for r in mine if r[4]} == {stages[-1], *TERMINAL_EXITS}
        moved = stages[stages.index(FIAT_MOVED_FROM[intent_type]) :]
        assert [r[1] for r in mine if r[5]] == list(moved)
    assert {r[1] for r in rows} <= set(INTENT_STATUSES)
    assert [r[1] for r in rows if r[0] == "onramp" and r[5]] == [
        "fiat_received",
        "minting",
        "awaiting_onchain_transfer",
        "completed",
    ]


def test_the_runner_and_the_catalog_read_the_same_vocabulary() -> None:
    con = duckdb.connect()
    runner.set_params(con, ReconcileSettings(), datetime(2026, 1, 1))
    got = con.execute(
        "select intent_type, status, stage_rank, kind, terminal, fiat_moved from status_vocabulary"
    ).fetchall()
    assert got == status_vocabulary()
    assert list(lifecycle_rows()) == [r[:4] for r in status_vocabulary()]
