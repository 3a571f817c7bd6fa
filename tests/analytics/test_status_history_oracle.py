"""status_history and analytics_intents against their plain reference forms, on generated
histories.

The views are written for speed (one window sort and aggregates); the references are the
straightforward forms (dedupe windows, a window by intent, a window by status, joins back).
Both run over the same `intent_snapshots` rows: repeated items within one snapshot, two
snapshots taken at the same second, missing updated_at, statuses that come back, exits.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon import catalog
from recon.analytics import AnalyticsConfig
from recon.analytics._connect import install

STATUSES = ("awaiting_fiat_payment", "fiat_received", "completed", "expired", "refunded")
T0 = datetime(2026, 11, 18, 12, tzinfo=UTC)

observation = st.tuples(
    st.integers(0, 3),  # intent
    st.integers(0, 4),  # snapshot (run)
    st.sampled_from(STATUSES),
    st.one_of(st.none(), st.integers(-30, 400)),  # updated_at, minutes after T0
)


@pytest.fixture(scope="module")
def con() -> Iterator[duckdb.DuckDBPyConnection]:
    """The table and every view over it, made once: the views are views (read when queried),
    so each example only replaces the table's rows (`load`)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(
        """CREATE TABLE intent_snapshots (
            id VARCHAR, instance_id VARCHAR, intent_type VARCHAR, status VARCHAR,
            status_reason VARCHAR, amount_cents BIGINT, created_at TIMESTAMPTZ,
            expires_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, snapshot_at TIMESTAMPTZ,
            run_id VARCHAR)"""
    )
    catalog_sql = resources.files("recon.models").joinpath("catalog/12_status_history.sql")
    lifecycle = catalog.Source(  # the statuses come from recon.schemas
        "source_lifecycle", catalog.LIFECYCLE_SCHEMA, rows=catalog.lifecycle_rows()
    )
    con.execute(f"CREATE VIEW source_lifecycle AS {lifecycle.duckdb_relation()}")
    con.execute(catalog_sql.read_text(encoding="utf-8"))
    install(con, AnalyticsConfig())
    here = Path(__file__).parent
    con.execute((here / "status_history_reference.sql").read_text())
    tz = "'America/Sao_Paulo'"
    con.execute((here / "analytics_intents_reference.sql").read_text().format(tz=tz))
    yield con
    con.close()


def load(con: duckdb.DuckDBPyConnection, rows: list[tuple], same_second: bool) -> None:
    """The example's observations, and only them, in intent_snapshots."""
    values = []
    for intent, run, status, updated in rows:
        # runs 1 and 2 share a snapshot time when same_second (the Date header has seconds)
        hour = 1 if same_second and run == 2 else run
        values.append(
            [
                f"i{intent}",
                "offramp" if intent == 3 else "onramp",
                status if intent != 3 else status.replace("fiat_received", "burning"),
                1000 * (run + 1),
                T0 - timedelta(minutes=10 * intent),
                None if updated is None else T0 + timedelta(minutes=updated),
                T0 + timedelta(hours=hour),
                f"run-{run}",
            ]
        )
    con.execute("DELETE FROM intent_snapshots")
    con.executemany(
        "INSERT INTO intent_snapshots VALUES (?, 'inst', ?, ?, NULL, ?, ?, NULL, ?, ?, ?)", values
    )


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(rows=st.lists(observation, min_size=1, max_size=25), same_second=st.booleans())
def test_view_equals_reference(
    con: duckdb.DuckDBPyConnection, rows: list[tuple], same_second: bool
) -> None:
    load(con, rows, same_second)
    for view, key in (("status_history", "intent_id, status"), ("analytics_intents", "intent_id")):
        query = f"SELECT * FROM {{}} ORDER BY {key}"
        fast = con.execute(query.format(view)).fetchall()
        reference = con.execute(query.format(view + "_reference")).fetchall()
        assert fast == reference, view
    last_seen = con.execute("SELECT * FROM analytics_last_seen ORDER BY intent_id").fetchall()
    reference = con.execute(
        "SELECT * EXCLUDE (max_stage_rank) FROM analytics_intents_reference ORDER BY intent_id"
    ).fetchall()
    assert last_seen == reference
