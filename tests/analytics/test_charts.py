"""Charts: return the Axes they drew on, label axes, title themselves, format BRL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib
import pandas as pd
import pytest
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from recon import analytics, charts
from recon.analytics import break_review as breaks_mod
from recon.config import DataDir
from recon.errors import UsageError
from tests.analytics.history import utc, write_exceptions


def _ax() -> Axes:
    return Figure(figsize=(8, 4)).subplots()


def _exceptions() -> pd.DataFrame:
    rows = [
        ("onramp_missing_credit", 0, 10_000, None, None, "new"),
        ("onramp_missing_credit", 5, 20_000, None, None, "persisting"),
        ("onramp_underpaid", 2, 10_000, 9_000, -1_000, "persisting"),
        ("unmatched_credit", 40, None, 123_456, None, "persisting"),
        ("status_regression", 1, None, None, None, "new"),
    ]
    return pd.DataFrame(
        [
            {
                "category": c,
                "age_days": a,
                "expected_cents": e,
                "actual_cents": x,
                "delta_cents": d,
                "state": s,
            }
            for c, a, e, x, d, s in rows
        ]
    )


def _texts(ax: Axes) -> list[str]:
    return [t.get_text() for t in ax.texts]


def test_no_chart_calls_show(monkeypatch: pytest.MonkeyPatch, history_dir: DataDir) -> None:
    import matplotlib.pyplot as plt

    def boom(*_a: Any, **_k: Any) -> None:
        raise AssertionError("plt.show() called")

    monkeypatch.setattr(plt, "show", boom)
    drawn: list[tuple[Callable[..., Axes], pd.DataFrame]] = [
        (charts.funnel_bars, analytics.funnel(history_dir)),
        (charts.cohort_heatmap, analytics.funnel(history_dir)),
        (charts.expiry_rate_lines, analytics.expiry_rates(history_dir)),
        (charts.time_to_pay_hist, analytics.time_to_pay(history_dir)),
        (charts.volume_bars, analytics.volumes(history_dir)),
        (charts.break_aging, _exceptions()),
        (charts.breaks_by_category, _exceptions()),
    ]
    for fn, df in drawn:
        ax = _ax()
        assert fn(df, ax=ax) is ax, fn.__name__
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), fn.__name__
        # without ax= a new figure is made (through pyplot) and its Axes returned
        own = fn(df)
        assert isinstance(own, Axes)
        plt.close(own.figure)
    assert matplotlib.get_backend().lower() == "agg"


def test_funnel_bars_pool_cohorts(history_dir: DataDir) -> None:
    ax = charts.funnel_bars(analytics.funnel(history_dir), ax=_ax())
    assert ax.get_title() == "Onramp funnel: share of intents reaching each stage"
    assert [t.get_text() for t in ax.get_yticklabels()][:3] == [
        "created",
        "awaiting_fiat_payment",
        "fiat_received",
    ]
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx([1, 1, 0.5, 5 / 14, 5 / 14, 5 / 14])
    assert "14 of" not in ax.get_xlabel() and "n = 14" in ax.get_xlabel()
    assert _texts(ax)[2].startswith("7 · 50%")


def test_cohort_heatmap(history_dir: DataDir) -> None:
    ax = charts.cohort_heatmap(analytics.funnel(history_dir), ax=_ax())
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2026-11-18", "2026-11-19"]
    assert "60%" in _texts(ax) and "25%" in _texts(ax)


def test_expiry_lines_by_hour_and_cohort(history_dir: DataDir) -> None:
    ax = charts.expiry_rate_lines(analytics.expiry_rates(history_dir, by="hour"), ax=_ax())
    assert ax.get_xlabel() == "hour of creation (business time zone)"
    assert "still open" in ax.get_title()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "95% Wilson interval" in labels
    ax = charts.expiry_rate_lines(analytics.expiry_rates(history_dir, by="amount"), ax=_ax())
    assert "R$ 50,00 – R$ 200,00" in [t.get_text() for t in ax.get_xticklabels()]
    ax = charts.expiry_rate_lines(analytics.expiry_rates(history_dir), ax=_ax())
    assert ax.get_title().startswith("Onramp expiry rate by cohort (14% still open)")


def test_time_to_pay_hist_marks_median_and_p90(history_dir: DataDir) -> None:
    ax = charts.time_to_pay_hist(analytics.time_to_pay(history_dir), ax=_ax())
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["median 80.0 min", "p90 276.0 min"]
    assert ax.get_xlabel() == "minutes from creation to fiat_received"
    assert ax.get_title() == "Onramp time to pay (n = 7, 71% exact)"


def test_volume_bars_format_brl(history_dir: DataDir) -> None:
    ax = charts.volume_bars(analytics.volumes(history_dir, intent_type="onramp"), ax=_ax())
    assert ax.get_title() == "Onramp volume by outcome (total R$ 6.975,00)"
    tick = ax.yaxis.get_major_formatter()(123456.0, 0)
    assert tick == "R$ 1.234,56"


def test_break_aging_table_and_chart() -> None:
    table = breaks_mod.break_aging(_exceptions())
    assert list(table.columns) == ["0 d", "1 d", "2–3 d", "4–7 d", "8–30 d", "> 30 d"]
    # P1 categories first, in the vocabulary's order
    assert list(table.index) == [
        "onramp_missing_credit",
        "onramp_underpaid",
        "unmatched_credit",
        "status_regression",
    ]
    assert table.loc["onramp_missing_credit"].tolist() == [1, 0, 0, 1, 0, 0]
    money = breaks_mod.break_aging(_exceptions(), value="cents")
    assert money.loc["unmatched_credit", "> 30 d"] == 123_456
    assert money.loc["onramp_underpaid", "2–3 d"] == 1_000
    ax = charts.break_aging(_exceptions(), ax=_ax())
    assert ax.get_title() == "Break aging (5 breaks)"
    ax = charts.break_aging(_exceptions(), ax=_ax(), value="cents")
    assert ax.get_title() == "Break aging: money at stake (R$ 1.544,56)"
    assert ax.get_xlabel() == "money at stake (BRL)"
    with pytest.raises(UsageError):
        breaks_mod.break_aging(_exceptions(), value="euros")
    with pytest.raises(UsageError):
        breaks_mod.break_aging(pd.DataFrame({"x": [1]}))


def test_money_at_stake() -> None:
    df = pd.DataFrame(
        {
            "delta_cents": [-100, 0, None, None, None, -5_000],
            "expected_cents": [10_000, 7_000, 3_000, None, None, 5_000],
            "actual_cents": [9_900, 7_000, None, 4_000, None, 0],
        }
    )
    # mismatch: the difference; duplicate (delta 0): the whole line; missing: expected;
    # unmatched: actual; nothing known: 0; missing payout: |delta|
    assert breaks_mod.break_amount_cents(df).tolist() == [100, 7_000, 3_000, 4_000, 0, 5_000]


def test_breaks_by_category_labels_money() -> None:
    ax = charts.breaks_by_category(_exceptions(), ax=_ax())
    assert "  P1 · R$ 300,00" in _texts(ax)
    assert ax.get_title() == "Breaks by category (5 breaks)"


def test_breaks_from_the_catalog(data_dir: DataDir) -> None:
    write_exceptions(
        data_dir,
        [
            {"break_id": "b1", "category": "refund_missing", "priority": "P1", "age_days": 3},
            {"break_id": "b2", "category": "unmatched_debit", "priority": "P1", "age_days": 0},
        ],
        run_id="20261120T120000000000Z-abcd",
    )
    df = analytics.breaks(data_dir)
    assert list(df.break_id) == ["b1", "b2"] and df.age_days.tolist() == [3, 0]
    assert utc(2026, 11, 20).year == 2026


def test_empty_frames_draw_a_no_data_note(data_dir: DataDir) -> None:
    for fn, df in (
        (charts.funnel_bars, analytics.funnel(data_dir)),
        (charts.time_to_pay_hist, analytics.time_to_pay(data_dir)),
        (charts.break_aging, _exceptions().iloc[0:0]),
    ):
        ax = fn(df, ax=_ax())
        assert "no data" in _texts(ax) and ax.get_title()


def test_missing_columns_are_a_clear_error() -> None:
    with pytest.raises(UsageError, match="needs columns"):
        charts.funnel_bars(pd.DataFrame({"stage": ["x"]}), ax=_ax())


def _run_with_totals(data: DataDir) -> None:
    day = {"fees_cents": 0, "explained_cents": 0, "breaks_cents": 0}
    write_exceptions(
        data,
        [],
        run_id="20261121T120000000000Z-0001",
        summary={
            "as_of": "2026-11-21T12:00:00+00:00",
            "control_totals": [
                day
                | {
                    "business_day": "2026-11-19",
                    "direction": "credit",
                    "intents_cents": 100_000,
                    "statement_cents": 112_345,
                    "difference_cents": 12_345,
                    "unexplained_cents": 12_345,
                },
                day
                | {
                    "business_day": "2026-11-18",
                    "direction": "credit",
                    "intents_cents": 50_000,
                    "statement_cents": 50_000,
                    "difference_cents": 0,
                    "unexplained_cents": 0,
                },
                day
                | {
                    "business_day": "2026-11-18",
                    "direction": "debit",
                    "intents_cents": 7_000,
                    "statement_cents": 7_000,
                    "difference_cents": 0,
                    "unexplained_cents": 0,
                },
            ],
        },
        matches=[
            {"intent_id": "a", "rule": "txid", "intent_type": "onramp", "actual_cents": 1_000},
            {"intent_id": "b", "rule": "txid", "intent_type": "onramp", "actual_cents": 2_000},
            {"intent_id": "c", "rule": "reference", "intent_type": "offramp", "actual_cents": -500},
        ],
    )


def test_run_summary_control_totals_and_matches(data_dir: DataDir) -> None:
    assert analytics.run_summary(data_dir) == {}
    assert analytics.run_overview(data_dir).empty
    assert analytics.control_totals(data_dir).empty
    assert analytics.matches_by_rule(data_dir).empty
    _run_with_totals(data_dir)
    assert analytics.run_summary(data_dir)["as_of"] == "2026-11-21T12:00:00+00:00"
    overview = analytics.run_overview(data_dir)
    assert len(overview) == 1 and overview.run_id.iloc[0] == "20261121T120000000000Z-0001"
    assert overview.as_of.iloc[0] == "2026-11-21T12:00:00+00:00"
    totals = analytics.control_totals(data_dir)
    assert list(totals.business_day.dt.strftime("%Y-%m-%d")) == [
        "2026-11-18",
        "2026-11-18",
        "2026-11-19",
    ]
    assert list(totals.direction) == ["credit", "debit", "credit"]
    assert totals.unexplained_cents.sum() == 12_345
    rules = analytics.matches_by_rule(data_dir)
    assert rules.to_dict("records") == [
        {"rule": "txid", "intent_type": "onramp", "matches": 2, "actual_cents": 3_000},
        {"rule": "reference", "intent_type": "offramp", "matches": 1, "actual_cents": 500},
    ]


def test_control_totals_bars(data_dir: DataDir) -> None:
    _run_with_totals(data_dir)
    totals = analytics.control_totals(data_dir)
    ax = charts.control_totals_bars(totals, ax=_ax())
    assert ax.get_title() == (
        "Control totals (credits): intents vs statement (unexplained R$ 123,45)"
    )
    assert [t.get_text() for t in ax.get_xticklabels()] == ["2026-11-18", "2026-11-19"]
    assert "unexplained R$ 123,45" in _texts(ax)
    assert ax.get_ylabel() == "amount (BRL)" and ax.get_xlabel() == "business day"
    assert [p.get_height() for p in ax.patches] == [50_000, 100_000, 50_000, 112_345]
    debit = charts.control_totals_bars(totals, ax=_ax(), direction="debit")
    assert debit.get_title().endswith("(unexplained R$ 0,00)")
    assert "no data" in _texts(charts.control_totals_bars(totals.iloc[0:0], ax=_ax()))


def test_break_table_shows_every_reason_whole_and_money_in_brl() -> None:
    from recon import testing

    long_reason = "Onramp " + "x" * 200 + " check the bank statement."
    rows = [
        testing.break_row("onramp_overpaid", 1, delta_cents=500, reason="small"),
        testing.break_row("unmatched_debit", 2, delta_cents=-215_610, reason=long_reason),
    ]
    styler = charts.break_table(pd.DataFrame(rows))
    html = styler.to_html()
    assert long_reason in html  # not cut at 50 characters like a DataFrame's repr
    assert "\u2212R$ 2.156,10" in html and "white-space: normal" in html
    assert list(styler.data["priority"]) == ["P1", "P2"]  # most urgent first
    assert styler.data["delta_cents"].dtype == "int64"
    assert len(charts.break_table(pd.DataFrame(rows), top=1).data) == 1
