"""The optional business-day window (date_from/date_to) at its edges: local midnight in the
business time zone, whatever the UTC date."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import duckdb

from recon import catalog
from recon.reconciliation import ReconcileSettings
from recon.reconciliation.build import build
from recon.testing.handbuilt import intent, line, uid

# São Paulo is UTC-3: its 2026-11-02 runs from 03:00 UTC on the 2nd to 03:00 UTC on the 3rd
DAY_START = datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
DAY_END = DAY_START + timedelta(days=1)
S = timedelta(seconds=1)
AS_OF = DAY_END + timedelta(days=1)


def _keys(con: duckdb.DuckDBPyConnection, sql: str) -> set[str]:
    return {r[0] for r in con.execute(sql).fetchall()}


def test_window_keeps_exactly_the_local_business_days(world):
    created = {1: DAY_START - S, 2: DAY_START, 3: DAY_END - S, 4: DAY_END}
    world.snapshot(
        [intent(n, created=at, updated=at, status="awaiting_fiat_payment") for n, at in created.items()],
        AS_OF,
    )  # fmt: skip
    world.statement([line(n, at=at, amount=100 * n) for n, at in created.items()])
    con = catalog.connect(world.data)
    settings = ReconcileSettings(date_from=date(2026, 11, 2), date_to=date(2026, 11, 2))
    assert all(r.passed for r in build(con, AS_OF, settings))
    assert _keys(con, "SELECT intent_id FROM stg_intents") == {uid(2), uid(3)}
    amounts = {
        r[0] for r in con.execute("SELECT amount_abs_cents FROM stg_statement_lines").fetchall()
    }
    assert amounts == {200, 300}
    # no window: everything up to as_of
    con = catalog.connect(world.data)
    build(con, AS_OF, ReconcileSettings())
    assert _keys(con, "SELECT intent_id FROM stg_intents") == {uid(n) for n in created}


def test_window_open_on_one_side(world):
    created = {1: DAY_START - S, 2: DAY_END}
    world.snapshot([intent(n, created=at, updated=at) for n, at in created.items()], AS_OF)
    world.statement([line(n, at=at) for n, at in created.items()])
    con = catalog.connect(world.data)
    build(con, AS_OF, ReconcileSettings(date_from=date(2026, 11, 3)))
    assert _keys(con, "SELECT intent_id FROM stg_intents") == {uid(2)}
    con = catalog.connect(world.data)
    build(con, AS_OF, ReconcileSettings(date_to=date(2026, 11, 1)))
    assert _keys(con, "SELECT intent_id FROM stg_intents") == {uid(1)}
