"""Funnel, expiry, durations, volumes and reasons on a history with known numbers."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon import analytics
from recon.config import DataDir
from recon.errors import UsageError

ONRAMP_FUNNEL = [
    "created",
    "awaiting_fiat_payment",
    "fiat_received",
    "minting",
    "awaiting_onchain_transfer",
    "completed",
]


def _by_cohort(df: pd.DataFrame, day: str) -> pd.DataFrame:
    return df[df.cohort == pd.Timestamp(day)].reset_index(drop=True)


def test_funnel_counts_later_stages_as_passing_earlier_ones(history_dir: DataDir) -> None:
    df = analytics.funnel(history_dir)
    one = _by_cohort(df, "2026-11-18")
    assert list(one.stage) == ONRAMP_FUNNEL  # requires_compliance is optional: left out
    assert list(one.step) == [1, 2, 3, 4, 5, 6]
    assert list(one.cohort_size) == [10] * 6
    # c5 was only ever seen completed, e3 only expired (implies awaiting payment),
    # r1 refunded after fiat_received
    assert list(one.reached) == [10, 10, 6, 5, 5, 5]
    assert list(one.dropped) == [0, 0, 4, 1, 0, 0]
    assert one.share.tolist() == [1.0, 1.0, 0.6, 0.5, 0.5, 0.5]
    assert one.step_conversion.tolist() == pytest.approx([1, 1, 0.6, 5 / 6, 1, 1])
    two = _by_cohort(df, "2026-11-19")  # created 23:00 in São Paulo = next day in UTC
    assert list(two.reached) == [4, 4, 1, 0, 0, 0]


def test_funnel_by_week_and_all(history_dir: DataDir) -> None:
    week = analytics.funnel(history_dir, cohort="week")
    assert set(week.cohort) == {pd.Timestamp("2026-11-16")}
    assert list(week.reached) == [14, 14, 7, 5, 5, 5]
    total = analytics.funnel(history_dir, cohort="all")
    assert list(total.cohort.unique()) == ["all"]
    assert list(total.reached) == list(week.reached)
    off = analytics.funnel(history_dir, intent_type="offramp", cohort="all")
    assert list(off.reached) == [1, 0, 0, 0, 0, 0, 0]


def test_funnel_stage_choice_and_dates(history_dir: DataDir) -> None:
    df = analytics.funnel(
        history_dir, stages=["requires_compliance", "completed"], start="2026-11-19"
    )
    assert list(df.stage) == ["requires_compliance", "completed"]
    # an explicitly chosen optional stage follows the monotone rule too (why it is left out
    # by default); nobody in the 2026-11-19 cohort completed
    assert list(df.reached) == [4, 0]
    with pytest.raises(UsageError):
        analytics.funnel(history_dir, stages=["burning"])
    with pytest.raises(UsageError):
        analytics.funnel(history_dir, cohort="year")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        analytics.funnel(history_dir, intent_type="swap")
    with pytest.raises(UsageError):
        analytics.funnel(history_dir, start="2026-11-20", end="2026-11-19")
    with pytest.raises(UsageError):
        analytics.funnel(history_dir, start="yesterday")


def test_expiry_rates_by_cohort_show_the_censored_share(history_dir: DataDir) -> None:
    df = analytics.expiry_rates(history_dir)
    one = _by_cohort(df, "2026-11-18").iloc[0]
    assert (one.intents, one.expired, one.completed, one.other_exit, one.still_open) == (
        10,
        3,
        5,
        1,
        1,
    )
    assert one.expiry_rate == 0.3 and one.open_share == 0.1 and one.expiry_rate_max == 0.4
    assert one.expiry_rate_closed == pytest.approx(3 / 9)
    # Wilson 95% for 3/10 (Newcombe 1998 table: 0.1078, 0.6032)
    assert (one.ci_low, one.ci_high) == pytest.approx((0.1078, 0.6032), abs=1e-4)
    two = _by_cohort(df, "2026-11-19").iloc[0]
    assert (two.intents, two.expired, two.still_open) == (4, 3, 1)
    assert (two.ci_low, two.ci_high) == pytest.approx((0.3006, 0.9544), abs=1e-4)


def test_expiry_rates_by_hour_weekday_amount(history_dir: DataDir) -> None:
    hours = analytics.expiry_rates(history_dir, by="hour")
    assert list(hours.hour) == list(range(24))  # every hour shown, empty ones too
    assert hours.set_index("hour").loc[12, "intents"] == 10
    assert hours.set_index("hour").loc[23, "expired"] == 3
    assert hours.intents.sum() == 14 and math.isnan(hours.set_index("hour").loc[0, "expiry_rate"])
    days = analytics.expiry_rates(history_dir, by="weekday").set_index("weekday_name")
    assert days.loc["Wed", "intents"] == 10 and days.loc["Thu", "intents"] == 4
    assert days.loc["Mon", "intents"] == 0
    amounts = analytics.expiry_rates(history_dir, by="amount").set_index("amount_range")
    assert list(amounts.index) == [
        "< R$ 50,00",
        "R$ 50,00 – R$ 200,00",
        "R$ 200,00 – R$ 1.000,00",
        "R$ 1.000,00 – R$ 5.000,00",
        "≥ R$ 5.000,00",
    ]
    assert list(amounts.intents) == [6, 2, 5, 0, 1]
    assert list(amounts.expired) == [6, 0, 0, 0, 0]
    assert amounts.loc["< R$ 50,00", "expiry_rate"] == 1.0
    custom = analytics.expiry_rates(history_dir, by="amount", amount_edges_cents=[10_000])
    assert list(custom.intents) == [7, 7]
    with pytest.raises(UsageError):
        analytics.expiry_rates(history_dir, by="amount", amount_edges_cents=[500, 100])
    with pytest.raises(UsageError):
        analytics.expiry_rates(history_dir, by="color")  # type: ignore[arg-type]


def test_time_to_pay_exact_and_bracketed(history_dir: DataDir) -> None:
    df = analytics.time_to_pay(history_dir).set_index("intent_id")
    assert set(df.index) == {"c1", "c2", "c3", "c4", "c5", "r1", "d1"}
    assert df.loc["c1", "seconds"] == 70 * 60 and bool(df.loc["c1", "exact"])
    assert df.loc["r1", "seconds"] == 20 * 60
    # c5: first seen completed 15 minutes after creation; paid somewhere in between
    assert not df.loc["c5", "exact"] and df.loc["c5", "reached_via"] == "completed"
    assert (df.loc["c5", "seconds_low"], df.loc["c5", "seconds_high"]) == (0, 900)
    assert df.loc["c5", "seconds"] == 450
    # d1: updated_at not moved; bracket between the two snapshots (4 h .. 14 h after creation)
    assert (df.loc["d1", "seconds_low"], df.loc["d1", "seconds_high"]) == (4 * 3600, 14 * 3600)
    summary = analytics.duration_summary(analytics.time_to_pay(history_dir, cohort="all"))
    row = summary.iloc[0]
    # 450, 1200, 4200, 4800, 5400, 6000, 32400 s
    assert row.intents == 7
    assert row.median_seconds == 4800 and row.median_minutes == 80
    assert row.p90_seconds == pytest.approx(6000 + 0.4 * (32400 - 6000))
    assert row.exact_share == pytest.approx(5 / 7)
    per_day = analytics.duration_summary(analytics.time_to_pay(history_dir))
    assert list(per_day.intents) == [6, 1]
    assert per_day.median_seconds.iloc[0] == 4500
    overall = analytics.duration_summary(analytics.time_to_pay(history_dir), by=None)
    assert overall.intents.iloc[0] == 7


def test_time_to_complete(history_dir: DataDir) -> None:
    df = analytics.time_to_complete(history_dir).set_index("intent_id")
    assert set(df.index) == {"c1", "c2", "c3", "c4", "c5"}
    assert df.loc["c1", "seconds"] == 25 * 3600 + 5 * 60 and df.loc["c5", "seconds"] == 900
    assert df.stage.unique().tolist() == ["completed"]


def test_volumes_in_cents(history_dir: DataDir) -> None:
    df = analytics.volumes(history_dir).set_index(["cohort", "intent_type"])
    one = df.loc[(pd.Timestamp("2026-11-18"), "onramp")]
    assert one.intents == 10 and one.amount_cents == 641_500
    assert (one.completed_cents, one.expired_cents, one.other_exit_cents, one.open_cents) == (
        600_000,
        9_000,
        25_000,
        7_500,
    )
    off = df.loc[(pd.Timestamp("2026-11-19"), "offramp")]
    assert off.other_exit_cents == 40_000
    assert df.amount_cents.dtype == np.int64
    only_off = analytics.volumes(history_dir, intent_type="offramp", cohort="all")
    assert list(only_off.intents) == [1]


def test_status_reasons_and_failures(history_dir: DataDir) -> None:
    df = analytics.status_reasons(history_dir)
    expired = df[(df.intent_type == "onramp") & (df.status == "expired")]
    assert list(expired.status_reason) == ["(none)", "payment window elapsed"]
    assert list(expired.intents) == [4, 2]
    assert expired.share.tolist() == pytest.approx([4 / 6, 2 / 6])
    assert set(df.status) == {"expired", "refunded", "failed"}
    completed = analytics.status_reasons(history_dir, statuses=["completed"])
    assert completed.intents.sum() == 5
    f = analytics.failures(history_dir).set_index(["intent_type", "exit_status"])
    assert f.loc[("onramp", "expired"), "last_stage"] == "awaiting_fiat_payment"
    assert f.loc[("onramp", "expired"), "intents"] == 6
    assert f.loc[("onramp", "refunded"), "last_stage"] == "fiat_received"
    assert f.loc[("onramp", "refunded"), "share_of_exits"] == pytest.approx(1 / 7)
    assert f.loc[("offramp", "failed"), "last_stage"] == "created"


def test_intent_outcomes(history_dir: DataDir) -> None:
    df = analytics.intent_outcomes(history_dir).set_index("intent_id")
    assert df.loc["o1", "outcome"] == "open" and df.loc["d1", "outcome"] == "open"
    assert df.loc["e3", "max_stage_rank"] == 3  # implied by the expiry
    assert df.loc["d2", "created_date"] == pd.Timestamp("2026-11-19")


def test_a_connection_can_be_reused(history_dir: DataDir) -> None:
    con = analytics.connect(history_dir)
    try:
        a = analytics.funnel(con)
        b = analytics.expiry_rates(con)
    finally:
        con.close()
    assert len(a) == 12 and len(b) == 2


def test_empty_data_dir(data_dir: DataDir) -> None:
    assert analytics.funnel(data_dir).empty
    hours = analytics.expiry_rates(data_dir, by="hour")
    assert len(hours) == 24 and hours.intents.sum() == 0
    assert analytics.duration_summary(analytics.time_to_pay(data_dir)).empty


@given(
    st.lists(st.tuples(st.integers(0, 500), st.integers(0, 500)), min_size=1, max_size=20),
    st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_wilson_interval_contains_the_rate_and_stays_in_0_1(
    pairs: list[tuple[int, int]], confidence: float
) -> None:
    k = np.array([min(a, b) for a, b in pairs])
    n = np.array([max(a, b) for a, b in pairs])
    low, high = analytics.wilson_interval(k, n, confidence)
    ok = n > 0
    p = np.divide(k, n, where=ok, out=np.zeros(len(k)))
    assert np.all(low[ok] <= p[ok] + 1e-12) and np.all(p[ok] <= high[ok] + 1e-12)
    assert np.all((low[ok] >= 0) & (high[ok] <= 1))
    assert np.all(np.isnan(low[~ok]))


def test_wilson_interval_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        analytics.wilson_interval(5, 3)
    with pytest.raises(ValueError):
        analytics.wilson_interval(1, 3, confidence=1.5)


def test_public_surface_is_exactly_the_intended_one() -> None:
    assert analytics.__all__ == sorted(
        [
            "AnalyticsConfig",
            "break_aging",
            "breaks",
            "breaks_by_category",
            "connect",
            "control_totals",
            "duration_summary",
            "expiry_rates",
            "failures",
            "funnel",
            "intent_outcomes",
            "load_analytics_config",
            "matches_by_rule",
            "run_overview",
            "run_summary",
            "status_history",
            "status_reasons",
            "time_to_complete",
            "time_to_pay",
            "volumes",
            "wilson_interval",
        ],
        key=str.lower,
    )
    for name in analytics.__all__:
        assert getattr(analytics, name).__doc__, name


def test_ensure_demo_data_keeps_a_data_dir_that_has_snapshots(
    history_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recon.ops.demo

    def no_build(*_a: object, **_k: object) -> None:
        raise AssertionError("must not build a sandbox over existing data")

    monkeypatch.setattr(recon.ops.demo, "_build", no_build)
    assert recon.ops.demo.ensure_demo_data(history_dir.root).root == history_dir.root
    monkeypatch.setenv("RECON_DATA", str(history_dir.root))
    assert recon.ops.demo.default_data_dir() == history_dir.root
    assert recon.ops.demo.ensure_demo_data(None).root == history_dir.root
    monkeypatch.delenv("RECON_DATA")
    assert recon.ops.demo.default_data_dir().name == "recon-sandbox-data"


@pytest.mark.parametrize(
    ("sql_name", "fmt"),
    [("durations", {"cohort_expr": "a.created_date"}), ("outcomes", {"key_expr": "created_date"})],
)
def test_per_intent_queries_build_status_history_at_most_once(
    history_dir: DataDir, sql_name: str, fmt: dict[str, str]
) -> None:
    # status_history is one window sort over every snapshot row (its lag() calls); a query
    # that only needs per-intent columns must not pay for it a second time through
    # analytics_intents.max_stage_rank
    from recon.analytics._connect import read_sql

    con = analytics.connect(history_dir)
    sql = read_sql(sql_name).format(**fmt)
    params = {"intent_type": "onramp", "stage": "fiat_received", "start": None, "end": None}
    if sql_name == "outcomes":
        del params["stage"]
    plan = "\n".join(row[1] for row in con.execute("EXPLAIN " + sql, params).fetchall())
    windows = plan.count("lag(run_id")
    assert windows == (1 if sql_name == "durations" else 0), plan
    con.close()
