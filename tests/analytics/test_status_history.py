"""status_history: one row per intent × status observed, entry-time estimates, lifecycle order."""

from __future__ import annotations

import pandas as pd
import pytest

from recon import catalog
from recon.analytics import AnalyticsConfig, connect, load_analytics_config, status_history
from recon.config import DataDir
from recon.errors import ConfigError
from recon.schemas import OFFRAMP_LIFECYCLE, ONRAMP_LIFECYCLE, TERMINAL_EXITS
from tests.analytics.conftest import DAY1, DAY2, S1, S2, S3
from tests.analytics.history import History, minutes, utc


def _row(df: pd.DataFrame, intent_id: str, status: str) -> pd.Series:
    rows = df[(df.intent_id == intent_id) & (df.status == status)]
    assert len(rows) == 1, (intent_id, status, rows)
    return rows.iloc[0]


def test_one_row_per_intent_and_status_with_first_and_last_seen(history_dir: DataDir) -> None:
    df = status_history(history_dir)
    assert not df.duplicated(["intent_id", "status"]).any()
    o1 = _row(df, "o1", "awaiting_fiat_payment")
    assert (o1.first_seen_at, o1.last_seen_at, o1.snapshots_seen) == (S1, S3, 3)
    assert list(df[df.intent_id == "c1"].status) == [
        "awaiting_fiat_payment",
        "fiat_received",
        "completed",
    ]
    # c1..c4: 3 each; c5, e3, o1, f1: 1; e1, e2, r1, d1..d4: 2 each
    assert len(df) == 30


def test_entry_time_from_updated_at_when_it_moved_between_snapshots(history_dir: DataDir) -> None:
    df = status_history(history_dir)
    c2 = _row(df, "c2", "fiat_received")
    assert c2.entry_source == "updated_at"
    assert c2.entered_at == S1 + minutes(20)
    assert (c2.entered_after, c2.entered_before) == (S1, S2)
    # first observation of an intent: the bracket starts at its creation
    c5 = _row(df, "c5", "completed")
    assert c5.entered_at == DAY1 + minutes(45)
    assert c5.entered_after == DAY1 + minutes(30)


def test_bracket_when_updated_at_did_not_move(history_dir: DataDir) -> None:
    d1 = _row(status_history(history_dir), "d1", "fiat_received")
    assert d1.entry_source == "bracket"
    assert pd.isna(d1.entered_at)
    assert (d1.entered_after, d1.entered_before) == (S3 - minutes(600), S3)
    assert d1.intent_created_at == DAY2


def test_lifecycle_rank_and_kind(history_dir: DataDir) -> None:
    df = status_history(history_dir)
    assert _row(df, "c1", "completed").stage_rank == ONRAMP_LIFECYCLE.index("completed") + 1
    exp = _row(df, "e1", "expired")
    assert exp.stage_kind == "exit" and pd.isna(exp.stage_rank)
    assert _row(df, "f1", "failed").intent_type == "offramp"
    assert _row(df, "r1", "refunded").status_reason == "compliance rejected"


def test_filters_by_type_and_creation_day(history_dir: DataDir) -> None:
    assert set(status_history(history_dir, intent_type="offramp").intent_id) == {"f1"}
    day2 = status_history(history_dir, start="2026-11-19", end="2026-11-19")
    assert set(day2.intent_id) == {"d1", "d2", "d3", "d4", "f1"}


def test_duplicate_items_in_one_snapshot_count_once(data_dir: DataDir) -> None:
    h = History()
    t0 = utc(2026, 11, 18, 12)
    h.intent("x", created_at=t0)
    h.see("x", t0 + minutes(5), "awaiting_fiat_payment", updated_at=t0)
    h.write(data_dir)
    # the same snapshot written twice into the same run (a list walk that saw x twice)
    part = next(data_dir.snapshots.rglob("part-00000.parquet"))
    part.with_name("part-00001.parquet").write_bytes(part.read_bytes())
    df = status_history(data_dir)
    assert len(df) == 1 and df.snapshots_seen.iloc[0] == 1


def test_default_lifecycle_view_matches_recon_schemas(data_dir: DataDir) -> None:
    """The SQL defaults (used by `recon sql`) are the constants of recon.schemas."""
    con = catalog.connect(data_dir)
    rows = con.execute(
        "select intent_type, status, stage_rank, kind from lifecycle_order"
    ).fetchall()
    expected = {(t, s, r, k) for t, s, r, k, _ in AnalyticsConfig().lifecycle_rows()}
    assert set(rows) == expected
    assert {s for _, s, _, k in rows if k == "exit"} == set(TERMINAL_EXITS)
    for intent_type, lifecycle in (("onramp", ONRAMP_LIFECYCLE), ("offramp", OFFRAMP_LIFECYCLE)):
        stages = sorted((r, s) for t, s, r, k in rows if t == intent_type and k == "stage")
        assert [s for _, s in stages] == list(lifecycle)


def test_lifecycle_order_from_recon_toml(history_dir: DataDir) -> None:
    history_dir.config_path.write_text(
        "[analytics]\n"
        'onramp_lifecycle = ["created", "awaiting_fiat_payment", "fiat_received", "completed"]\n'
    )
    cfg = load_analytics_config(history_dir)
    assert cfg.lifecycle("onramp")[-1] == "completed"
    df = status_history(history_dir)
    assert _row(df, "c1", "completed").stage_rank == 4
    assert _row(df, "c1", "fiat_received").stage_rank == 3
    con = connect(history_dir)
    assert con.execute(
        "select count(*) from lifecycle_order where intent_type='onramp' and kind='stage'"
    ).fetchone() == (4,)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('onramp_lifecycle = ["created", "paid"]', "unknown statuses"),
        ('onramp_lifecycle = "created"', "list of status names"),
        ('onramp_lifecycle = ["created", "created"]', "twice"),
        ('onramp_lifecycle = ["created", "expired"]', "terminal exits"),
        ('business_tz = "Mars/Olympus"', "business_tz"),
        ('onramp_pay_stage = "burning"', "pay_stage"),
        ('onramp_exit_implies = {expired = "burning"}', "exit_implies"),
    ],
)
def test_bad_analytics_config_is_a_clear_error(data_dir: DataDir, toml: str, message: str) -> None:
    data_dir.config_path.write_text("[analytics]\n" + toml + "\n")
    with pytest.raises(ConfigError, match=message):
        load_analytics_config(data_dir)


def test_empty_data_dir_gives_empty_frames(data_dir: DataDir) -> None:
    df = status_history(data_dir)
    assert df.empty and "entered_at" in df.columns
