"""Render a run folder into one self-contained HTML report, plus the breaks as CSV/Parquet.

Compute apart from presentation: the reconciliation engine writes a run
(``summary.json``, ``exceptions.parquet``, ``matches.parquet``); this module only reads it,
groups rows for display, formats cents as BRL and draws the charts of ``recon.charts`` into
PNG images embedded as base64. Nothing here changes a result.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import logging
import os
import uuid
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa
import pyarrow.parquet as pq

from recon import i18n, money
from recon.config import DEFAULT_BUSINESS_TZ, DataDir, load_config, ui_language
from recon.errors import UsageError
from recon.i18n import N_, _
from recon.reconciliation.flows import read_flows
from recon.reconciliation.reasons import Renderer, row_reason
from recon.reconciliation.settings import ReconcileSettings
from recon.report import exports
from recon.schemas import (
    CATEGORIES,
    EXCEPTIONS_SCHEMA,
    MATCHES_SCHEMA,
    category_label,
    conform,
    stake_cents,
)

__all__ = [
    "AGE_BUCKETS",
    "ReportData",
    "format_brl",
    "load_report_data",
    "render",
    "report_dir_for",
    "summary_tz",
]

log = logging.getLogger(__name__)

REPORT_NAME = "report.html"
BREAKS_CSV = "breaks.csv"
BREAKS_PARQUET = "breaks.parquet"
BREAKS_XLSX = "breaks.xlsx"
BREAKS_BR_CSV = "breaks_br.csv"
TOP_BREAKS = 25
# the most breaks of one category the report lists (the rest: breaks.csv, the review app)
GROUP_CAP = 1000

# (label, lowest age in days, highest age in days or None for open-ended)
AGE_BUCKETS: tuple[tuple[str, int, int | None], ...] = (
    ("0 d", 0, 0),
    ("1 d", 1, 1),
    ("2–3 d", 2, 3),
    ("4–7 d", 4, 7),
    ("8–30 d", 8, 30),
    ("> 30 d", 31, None),
)
PRIORITY_ORDER = {"P1": 0, "P2": 1, "P3": 2}
# Sections of summary.json shown in their own tables (key, title, values are cents).
SECTIONS: tuple[tuple[str, str, bool], ...] = (
    ("totals", N_("Totals"), False),
    ("control_totals", N_("Control totals (per day and direction)"), False),
    ("explained_by", N_("Control totals explained by"), True),
    ("matches_by_rule", N_("Matches by rule"), False),
    ("checks", N_("Checks (offending rows)"), False),
    ("check_samples", N_("Failed check samples"), False),
    ("settings", N_("Settings"), False),
)
# Shown elsewhere (headline cards, the by-category table, the closed work) or not at all.
STRUCTURED_KEYS = {key for key, _, _ in SECTIONS} | {
    "counts", "counts_by_priority", "resolved_breaks", "decided_breaks",
}  # fmt: skip


@dataclass(frozen=True)
class ReportData:
    """Everything a report shows, read from one run folder (no computation of results)."""

    run_id: str
    run_dir: Path
    summary: dict[str, Any]
    breaks: pa.Table
    matches: pa.Table
    flows: dict[
        str, Any
    ]  # frame name -> DataFrame, from flows.parquet (recon.reconciliation.flows)


def format_brl(cents: int | None) -> str:
    """Integer cents as reais in the report's language: ``-123456 -> '-R$ 1.234,56'``
    (pt-BR) or ``'-R$1,234.56'`` (en); None -> '—'."""
    if cents is None:
        return "—"
    return i18n.format_money(int(cents))


def report_dir_for(run_dir: Path) -> Path:
    """Default folder of a run's report: ``<data>/reports/<run_id>/`` (runs stay immutable)."""
    run_dir = Path(run_dir)
    return run_dir.parent.parent / "reports" / run_dir.name


def _read_table(path: Path, schema: pa.Schema) -> pa.Table:
    """Read a run's Parquet projected onto its contract schema (empty table if absent)."""
    if not path.is_file():
        return schema.empty_table()
    return conform(pq.read_table(path), schema)


def load_report_data(run_dir: str | os.PathLike[str]) -> ReportData:
    """Read a committed run folder (it must hold ``summary.json``)."""
    run = Path(run_dir)
    summary_path = run / "summary.json"
    if not summary_path.is_file():
        raise UsageError(f"{run}: not a committed run (no summary.json)")
    try:
        summary = json.loads(summary_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise UsageError(f"{summary_path}: not valid JSON: {exc}") from exc
    if not isinstance(summary, dict):
        raise UsageError(f"{summary_path}: expected a JSON object")
    return ReportData(
        run_id=str(summary.get("run_id") or run.name),
        run_dir=run,
        summary=summary,
        breaks=_read_table(run / "exceptions.parquet", EXCEPTIONS_SCHEMA),
        matches=_read_table(run / "matches.parquet", MATCHES_SCHEMA),
        flows=read_flows(run),
    )


# --------------------------------------------------------------------------- view model


def _sort_key(row: Mapping[str, Any]) -> tuple[Any, ...]:
    """Most urgent first: priority, then size of the money at stake, then age, then id."""
    return (
        PRIORITY_ORDER.get(row.get("priority") or "", 9),
        -stake_cents(row),
        -(row.get("age_days") or 0),
        row.get("break_id") or "",
    )


def _bucket(age: int | None) -> str:
    age = max(int(age or 0), 0)
    for label, low, high in AGE_BUCKETS:
        if age >= low and (high is None or age <= high):
            return label
    return AGE_BUCKETS[-1][0]  # pragma: no cover - buckets cover every age


def _category_order(names: Sequence[str]) -> list[str]:
    known = [c for c in CATEGORIES if c in names]
    return known + sorted(set(names) - set(CATEGORIES))


# Identifying columns first, then the money in the order a reader checks it.
COLUMN_ORDER = (
    "business_day",
    "day",
    "date",
    "direction",
    "break_id",
    "category",
    "statement_cents",
    "intents_cents",
    "difference_cents",
    "explained_cents",
    "breaks_cents",
    "fees_cents",
    "interest_cents",
    "yield_cents",
    "unexplained_cents",
)

# What a person reads instead of a field name (money columns say "(R$)" through `label`).
LABELS = {
    "as_of": N_("as of"),
    "auto_match_rate": N_("auto-match rate (matched lines / statement lines)"),
    "breaks": N_("open breaks"),
    "business_day": N_("business day"),
    "checks_passed": N_("checks passed"),
    "intents": N_("intents in the latest snapshot"),
    "matched_lines": N_("statement lines matched"),
    "new_breaks": N_("new breaks"),
    "persisting_breaks": N_("persisting breaks"),
    "previous_run_id": N_("previous run"),
    "run_id": N_("run"),
    "statement_lines": N_("statement lines (bank fees, interest and yields excluded)"),
    "statement_cents": N_("statement"),
    "intents_cents": N_("intents"),
    "difference_cents": N_("difference"),
    "explained_cents": N_("explained"),
    "breaks_cents": N_("by breaks"),
    "fees_cents": N_("bank fees"),
    "interest_cents": N_("bank interest"),
    "yield_cents": N_("yields"),
    "unexplained_cents": N_("unexplained"),
    "statement_credit_cents": N_("statement credits"),
    "statement_debit_cents": N_("statement debits"),
    "intents_credit_cents": N_("credits the intents expect"),
    "intents_debit_cents": N_("debits the intents expect"),
    "matched_cents": N_("matched"),
    "amount_tolerance_cents": N_("amount tolerance"),
    "business_tz": N_("business time zone"),
    "memory_limit": N_("DuckDB memory limit"),
    "work_storage": N_("work tables"),
    "temp_directory": N_("temp directory"),
    "date_from": N_("from business day"),
    "date_to": N_("to business day"),
}
# summary.json settings that are durations in seconds (ReconcileSettings' timedelta fields)
DURATIONS = {f.name for f in fields(ReconcileSettings) if isinstance(f.default, timedelta)}
# scalars shown in the header and banners rather than in the summary table
NOT_IN_SUMMARY = {"coverage_text", "run_id", "as_of"}


def label(key: str) -> str:
    """A field's human label; money fields (``*_cents``) say they are in R$."""
    known = LABELS.get(key)
    text = _(known) if known else key.removesuffix("_cents").replace("_", " ")
    if key.endswith("_cents"):
        text += " (R$)"
    elif key in DURATIONS:
        text += " (" + _("time") + ")"
    return text


def _ordered(columns: list[str]) -> list[str]:
    rank = {c: i for i, c in enumerate(COLUMN_ORDER)}
    return sorted(columns, key=lambda c: (rank.get(c, len(rank)), columns.index(c)))


Cell = dict[str, Any]  # {"text": shown, "num": right-aligned?}


def _table_rows(value: Any, money: bool = False) -> tuple[list[Cell], list[list[Cell]]]:
    """Turn a summary section (list of dicts, dict of dicts, or dict) into a table: the
    header cells and the rows (each cell its text and whether it is a number)."""

    def head(keys: list[str], first: str | None = None) -> list[Cell]:
        cells = [{"text": first, "num": False}] if first is not None else []
        return cells + [{"text": label(k), "num": _is_num_key(k)} for k in keys]

    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        columns: list[str] = []
        for item in value:
            columns += [k for k in item if k not in columns]
        columns = _ordered(columns)
        return head(columns), [[_cell(k, item.get(k)) for k in columns] for item in value]
    if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
        columns = []
        for item in value.values():
            columns += [k for k in item if k not in columns]
        return head(columns, _("name")), [
            [_text(str(name)), *[_cell(k, item.get(k)) for k in columns]]
            for name, item in value.items()
        ]
    if isinstance(value, dict):
        header = [_text(_("name")), {"text": "R$" if money else _("value"), "num": money}]
        return header, [
            [_text(label(str(k))), _cell("cents" if money else str(k), v)] for k, v in value.items()
        ]
    if isinstance(value, list):
        return [_text(_("value"))], [[_cell("", v)] for v in value]
    return [_text(_("value"))], [[_cell("", value)]]


def _text(text: str) -> Cell:
    return {"text": text, "num": False}


def _is_num_key(key: str) -> bool:
    return key.endswith("cents") or key in DURATIONS


def _cell(key: str, value: Any) -> Cell:
    """Format one summary value for a person: money in R$, durations with a unit, shares in
    %, counts pt-BR; keys ending in ``cents`` are money."""
    if value is None:
        return _text("—")
    if isinstance(value, bool):
        return _text(_("yes") if value else _("no"))
    if isinstance(value, int) and key.endswith("cents"):
        return {"text": format_brl(value), "num": True}
    if isinstance(value, int) and key in DURATIONS:
        return {"text": money.format_duration(value), "num": True}
    if isinstance(value, int):
        return {"text": i18n.format_number(value), "num": True}
    if isinstance(value, float):
        if key.endswith("rate") or key.endswith("share"):
            return {"text": i18n.format_percent(value), "num": True}
        return {"text": i18n.format_number(float(f"{value:.4g}")), "num": True}
    if isinstance(value, dict | list):
        return _text(json.dumps(value, sort_keys=True, default=str))
    return _text(str(value))


def _rate(value: Any) -> str:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return i18n.format_percent(value if value <= 1 else value / 100)
    return "—"


def local_time(value: Any, tz: str = DEFAULT_BUSINESS_TZ) -> str:
    """An ISO 8601 instant on the business day's clock, as the report's language writes it
    ('01/11/2026 12:01'); the page names the time zone once."""
    if not value:
        return "—"
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return str(value)
    if when.tzinfo is None:
        return str(value)
    return i18n.format_datetime(when, ZoneInfo(tz))


# Banners: (summary field, when it shows, level, message(value, summary)). Generic over the
# summary: a new field that needs a person's attention is one more row here.
def _failed_checks(value: Any, summary: Mapping[str, Any]) -> str:
    failed = [
        _("{check} ({rows} rows)").format(check=k, rows=i18n.format_number(v))
        for k, v in (summary.get("checks") or {}).items()
        if v
    ]
    return _(
        "Checks failed: {checks}. The run's numbers cannot be trusted until they pass: "
        "see the failed check samples below."
    ).format(checks=", ".join(failed) or _("see the checks table"))


BANNERS: tuple[tuple[str, Callable[[Any], bool], str, Callable[[Any, Any], str]], ...] = (
    ("checks_passed", lambda v: v is False, "error", _failed_checks),
    (
        "statements_overdue",
        lambda v: isinstance(v, list) and bool(v),
        "warning",
        lambda v, _s: _(
            "Statements overdue: no account statement covers {days}. Import them: until "
            "then recon cannot tell missing money from a missing file."
        ).format(days=", ".join(map(str, v))),
    ),
    (
        "uncovered_days",
        lambda v: isinstance(v, list) and bool(v),
        "warning",
        lambda v, _s: _(
            "Statement coverage is short: no statement covers {days}; intents of those days "
            "wait for statements instead of becoming breaks."
        ).format(days=", ".join(map(str, v))),
    ),
    (
        "awaiting",
        lambda v: isinstance(v, dict) and bool(v.get("intents")),
        "info",
        lambda v, _s: _(
            "{intents} intents ({amount}) wait for statements that do not cover their time yet."
        ).format(
            intents=i18n.format_number(int(v["intents"])),
            amount=format_brl(int(v.get("cents") or 0)),
        ),
    ),
)


def banners(summary: Mapping[str, Any]) -> list[dict[str, str]]:
    """The banners a run's summary calls for, most serious first."""
    out = []
    for key, show, level, message in BANNERS:
        if key in summary and show(summary[key]):
            out.append({"level": level, "text": message(summary[key], summary)})
    return out


def summary_tz(summary: Mapping[str, Any]) -> str:
    """The business time zone a run was made in (its summary's settings)."""
    settings = summary.get("settings")
    tz = settings.get("business_tz") if isinstance(settings, dict) else None
    return str(tz or DEFAULT_BUSINESS_TZ)


def _history(data: ReportData) -> list[dict[str, Any]]:
    """Breaks and money at stake over the last runs (flows.parquet's run_history)."""
    frame = data.flows.get("run_history")
    if frame is None or frame.empty:
        return []
    return [
        {
            "run_id": str(r["run_id"]),
            "as_of": local_time(
                r["as_of"].isoformat() if r["as_of"] is not None else None, summary_tz(data.summary)
            ),
            "breaks": i18n.format_number(int(r["breaks"])),
            "p1": i18n.format_number(int(r["p1"])),
            "p2": i18n.format_number(int(r["p2"])),
            "p3": i18n.format_number(int(r["p3"])),
            "at_stake": format_brl(int(r["at_stake_cents"])),
            "this": str(r["run_id"]) == data.run_id,
        }
        for r in frame.to_dict("records")
    ]


# What a day of the balance walk that cannot be walked says (statement_balances.state)
WALK_NOTES = {
    "walked": "",
    "no_file": N_("no statement file for this day"),
    "no_opening": N_("no balance known at the day's start"),
    "no_closing": N_("no closing stated: walked through"),
}


def _walks(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each account's balance walk (summary.balance_walk), as the report shows it."""
    accounts: dict[str, list[dict[str, Any]]] = {}
    for row in summary.get("balance_walk") or []:
        state = str(row.get("state") or "")
        note = WALK_NOTES.get(state, state)
        gap = row.get("gap_cents")
        accounts.setdefault(str(row.get("account")), []).append(
            {
                "day": i18n.format_date(date.fromisoformat(str(row["day"]))),
                "opening": format_brl(row.get("opening_cents")),
                "movements": format_brl(row.get("movements_cents")),
                "closing": format_brl(row.get("closing_cents")),
                "gap": format_brl(gap),
                "off": bool(gap),
                "note": _(note) if note else "",
            }
        )
    return [{"account": name, "days": days} for name, days in accounts.items()]


def _closed_work(data: ReportData) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The breaks the previous run listed and this one does not (resolved), and those a
    person decided: each with its category, the money it had at stake as the previous run
    listed it, and (decided) who, when and the note."""
    summary, tz = data.summary, summary_tz(data.summary)
    resolved_ids = [str(b) for b in summary.get("resolved_breaks") or []]
    decided = [d for d in summary.get("decided_breaks") or [] if isinstance(d, dict)]
    wanted = resolved_ids + [str(d.get("break_id")) for d in decided]
    previous = data.run_dir.parent / str(summary.get("previous_run_id")) / "exceptions.parquet"
    before: dict[str, dict[str, Any]] = {}
    if wanted and summary.get("previous_run_id") and previous.is_file():
        table = pq.read_table(previous, filters=[("break_id", "in", wanted)])
        before = {r["break_id"]: r for r in table.to_pylist()}

    def row(break_id: str, category: Any = None) -> dict[str, Any]:
        was = before.get(break_id, {})
        name = str(was.get("category") or category or "")
        return {
            "break_id": break_id, "label": category_label(name) if name else "—",
            "at_stake": format_brl(stake_cents(was)) if was else "—",
            "reason": was.get("reason") or "",
        }  # fmt: skip

    return [row(b) for b in resolved_ids], [
        row(str(d.get("break_id")), d.get("category"))
        | {
            "by": d.get("decided_by") or "—",
            "at": local_time(d.get("decided_at"), tz),
            "note": d.get("note") or "",
        }
        for d in decided
    ]


def build_context(
    data: ReportData, *, top: int = TOP_BREAKS, review_url: str = ""
) -> dict[str, Any]:
    """The template's variables, from the run's rows and summary (display grouping only);
    `review_url` (`[review] base_url`) links each break to its page in the review app."""
    rows = data.breaks.to_pylist()
    rows.sort(key=_sort_key)
    summary = data.summary
    count = i18n.format_number

    by_category: list[dict[str, Any]] = []
    names = _category_order([r["category"] for r in rows if r["category"]])
    for name in names:
        mine = [r for r in rows if r["category"] == name]
        cat = CATEGORIES.get(name)
        by_category.append(
            {
                "category": name,
                "label": category_label(name),
                # the run's priority (recon.toml may set one), else the category's
                "priority": mine[0]["priority"] or (cat.priority if cat else "—"),
                "meaning": _(cat.meaning) if cat else "",
                "count": count(len(mine)),
                "new": count(sum(r["state"] == "new" for r in mine)),
                "persisting": count(sum(r["state"] == "persisting" for r in mine)),
                "expected": format_brl(sum(r["expected_cents"] or 0 for r in mine)),
                "actual": format_brl(sum(r["actual_cents"] or 0 for r in mine)),
                "at_stake": format_brl(sum(stake_cents(r) for r in mine)),
                "oldest": count(max((r["age_days"] or 0) for r in mine)),
            }
        )

    buckets = [bucket for bucket, _low, _high in AGE_BUCKETS]
    ages = Counter((r["category"], _bucket(r["age_days"])) for r in rows)
    by_age = [
        {
            "category": name,
            "label": category_label(name),
            "cells": [count(ages.get((name, b), 0)) for b in buckets],
        }
        for name in names
    ]
    age_totals = [count(sum(ages.get((n, b), 0) for n in names)) for b in buckets]

    priorities = Counter(r["priority"] for r in rows)
    scalars = {
        label(k): _cell(k, v)
        for k, v in summary.items()
        if not isinstance(v, dict | list)
        and k not in STRUCTURED_KEYS
        and k not in NOT_IN_SUMMARY
        and k not in {b[0] for b in BANNERS}
    }
    sections = []
    for key, title, in_cents in SECTIONS:
        if summary.get(key) not in (None, [], {}, ()):
            columns, table = _table_rows(summary[key], in_cents)
            sections.append({"key": key, "title": _(title), "columns": columns, "rows": table})
    resolved, decided = _closed_work(data)
    # the reasons in the report's language, ids short with the full value in their title (the
    # report runs no script: the row's own columns give the full ids to copy)
    reasons = Renderer(i18n.language(), summary_tz(summary), "link")

    def shown(r: dict[str, Any]) -> dict[str, Any]:
        return {
            **r,
            "reason": row_reason(r, reasons),
            "label": category_label(r["category"]),
            "expected": format_brl(r["expected_cents"]),
            "actual": format_brl(r["actual_cents"]),
            "delta": format_brl(r["delta_cents"]),
        }

    top_rows = [shown(r) for r in rows[:top]]
    # beyond the top: every break, one collapsible group per category (most urgent first)
    every = []
    if len(rows) > top:
        for group in by_category:
            mine = [r for r in rows if r["category"] == group["category"]]
            every.append(
                {
                    **group,
                    "rows": [shown(r) for r in mine[:GROUP_CAP]],
                    "cut": len(mine) > GROUP_CAP,
                }
            )
    return {
        "run_id": data.run_id,
        "tz": summary_tz(summary),
        "banners": banners(summary),
        "coverage": summary.get("coverage_text"),
        "as_of": local_time(summary.get("as_of"), summary_tz(summary)),
        "headline": {
            "breaks": count(len(rows)),
            "p1": count(priorities.get("P1", 0)),
            "p2": count(priorities.get("P2", 0)),
            "p3": count(priorities.get("P3", 0)),
            "new": count(sum(r["state"] == "new" for r in rows)),
            "matches": count(data.matches.num_rows),
            "auto_match_rate": _rate(summary.get("auto_match_rate")),
            "at_stake": format_brl(sum(stake_cents(r) for r in rows)),
            "resolved": count(len(resolved)),
            "decided": count(len(decided)),
        },
        "resolved": resolved,
        "decided": decided,
        "review_url": review_url.rstrip("/"),
        "scalars": scalars,
        "sections": sections,
        "history": _history(data),
        "by_category": by_category,
        "age_buckets": buckets,
        "by_age": by_age,
        "age_totals": age_totals,
        "top_breaks": top_rows,
        "every_break": every,
        "group_cap": count(GROUP_CAP),
        "walks": _walks(summary),
        "top": top,
        "total_breaks": count(len(rows)),
        "more": len(rows) > top,
    }


# --------------------------------------------------------------------------- charts

Draw = Callable[[Any], Any]


def _bind(chart: Callable[..., Any], frame: Any, **kw: Any) -> Draw:
    """draw(ax) for `chart(frame, ax=ax, **kw)`."""
    return lambda ax: chart(frame, ax=ax, **kw)


def _run_charts(charts: Any, data: ReportData) -> list[tuple[str, float, Draw]]:
    """(title, figure height in inches, draw(ax)) of the charts drawn from the run's own files."""
    import pandas as pd

    breaks = data.breaks.to_pandas()
    control = pd.DataFrame(list(data.summary.get("control_totals") or []))
    if "business_day" in control:
        control["business_day"] = pd.to_datetime(control["business_day"])
    rows = max(int(breaks["category"].nunique()) if len(breaks) else 1, 1)
    tall = 1.6 + 0.32 * rows
    out: list[tuple[str, float, Draw]] = []
    if len(breaks):
        out += [
            (N_("Breaks by category"), tall, _bind(charts.breaks_by_category, breaks)),
            (N_("Break aging"), tall, _bind(charts.break_aging, breaks)),
        ]
    if len(control):
        for direction, title in (
            ("credit", N_("Control totals (credits)")),
            ("debit", N_("Control totals (debits)")),
        ):
            out.append(
                (title, 3.6, _bind(charts.control_totals_bars, control, direction=direction))
            )
    return out


# the intent-flow charts: (frame in flows.parquet, title, chart function name)
FLOW_CHARTS = (
    ("funnel_onramp", N_("Onramp funnel"), "funnel_bars"),
    ("funnel_offramp", N_("Offramp funnel"), "funnel_bars"),
    ("expiry_by_cohort", N_("Onramp expiry rate by cohort"), "expiry_rate_lines"),
    ("time_to_pay", N_("Onramp time to pay"), "time_to_pay_hist"),
)


def _flow_charts(charts: Any, data: ReportData) -> list[tuple[str, float, Draw]]:
    """Charts of how intents flowed, from the frames the run wrote (flows.parquet)."""
    return [
        (title, 3.6, _bind(getattr(charts, chart), data.flows[frame]))
        for frame, title, chart in FLOW_CHARTS
        if frame in data.flows
    ]


def _figure_png(draw: Draw, height: float = 3.6) -> str:
    """Draw on a fresh Agg figure (no pyplot, no global state) and return base64 PNG."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, height), dpi=90, layout="constrained")
    FigureCanvasAgg(fig)
    draw(fig.subplots())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def render_charts(data: ReportData, *, flows: bool = True) -> list[dict[str, str]]:
    """The charts of ``recon.charts`` the report embeds, as base64 PNG (or a note why not).

    Every chart reads only the run's files: the breaks and control totals, and with `flows`
    the intent-flow frames the run wrote in ``flows.parquet`` (funnel, expiry, time to pay).
    """
    from recon import charts  # matplotlib: imported only when a report draws

    specs = _run_charts(charts, data)
    if flows:
        specs += _flow_charts(charts, data)
    out: list[dict[str, str]] = []
    for title, height, draw in specs:
        try:
            png = _figure_png(draw, height)
        except Exception as exc:  # a chart must never sink the report; say so in it
            log.warning("chart %r failed: %s", title, exc)
            out.append({"title": _(title), "note": _("chart failed: {error}").format(error=exc)})
            continue
        caption = CAPTIONS.get(title)
        out.append({"title": _(title), "png": png, "caption": _(caption) if caption else ""})
    return out


# What each chart is drawn from and how to read it (its title is inside the image).
CAPTIONS = {
    "Breaks by category": N_(
        "Open breaks of this run, new and persisting; labels give the priority "
        "and the money at stake."
    ),
    "Break aging": N_(
        "How long the open breaks have been open, in days since the first run that saw them."
    ),
    "Control totals (credits)": N_(
        "Per business day: what the intents say came in against what the "
        "statements show; any unexplained difference is marked."
    ),
    "Control totals (debits)": N_(
        "Per business day: what the intents say went out against what the "
        "statements show; any unexplained difference is marked."
    ),
    "Onramp funnel": N_(
        "Share of the onramps created in the snapshots of this run that reached "
        "each stage (flows.parquet)."
    ),
    "Offramp funnel": N_(
        "Share of the offramps created in the snapshots of this run that reached "
        "each stage (flows.parquet)."
    ),
    "Onramp expiry rate by cohort": N_(
        "Per creation day; the band is the 95 % Wilson interval, the "
        "dashed line the rate if every still-open onramp expired."
    ),
    "Onramp time to pay": N_(
        "Minutes from creation to the credit, for the onramps paid as of this run."
    ),
}


# --------------------------------------------------------------------------- output


def _environment(lang: str) -> Any:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("recon.report", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    i18n.install_jinja(env, lang)
    return env


def render_html(
    data: ReportData,
    *,
    charts: bool = True,
    flows: bool = True,
    now: datetime | None = None,
    lang: str | None = None,
    review_url: str = "",
) -> str:
    """The report as one HTML string (CSS inline, charts as data: URIs), in `lang` (default:
    the chosen language, see recon.i18n.language); with `review_url` each break links to
    its page in the review app."""
    with i18n.override(lang):
        language = i18n.language()
        context = build_context(data, review_url=review_url)
        context["charts"] = render_charts(data, flows=flows) if charts else []
        context["generated_at"] = local_time(
            (now or datetime.now(UTC)).isoformat(timespec="seconds"), context["tz"]
        )
        return str(_environment(language).get_template("report.html.j2").render(**context))


def _write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    """Write via a temp name in the same folder, then rename (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}-{uuid.uuid4().hex[:8]}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_breaks(breaks: pa.Table, folder: Path, *, lang: str | None = None) -> tuple[Path, Path]:
    """Write the breaks, most urgent first, as ``breaks.csv`` (UTF-8, cents: for scripts) and
    Parquet, and for people ``breaks.xlsx`` and ``breaks_br.csv`` (reais, headers and category
    labels in `lang`; recon.report.exports). Returns the paths of breaks.csv and
    breaks.parquet."""
    rows = sorted(breaks.to_pylist(), key=_sort_key)
    ordered = pa.Table.from_pylist(rows, schema=EXCEPTIONS_SCHEMA)

    def csv_out(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            writer = csv.writer(fh)
            names = EXCEPTIONS_SCHEMA.names
            writer.writerow(names)
            for r in rows:
                cells = ["" if r[n] is None else exports.safe_cell(r[n]) for n in names]
                writer.writerow(cells)

    csv_path, parquet_path = folder / BREAKS_CSV, folder / BREAKS_PARQUET
    _write_atomic(csv_path, csv_out)
    _write_atomic(parquet_path, lambda tmp: pq.write_table(ordered, tmp))
    # for people: a spreadsheet with R$ as numbers, and the CSV a Brazilian Excel reads
    _write_atomic(folder / BREAKS_XLSX, lambda tmp: exports.write_xlsx(rows, tmp, lang=lang))
    _write_atomic(folder / BREAKS_BR_CSV, lambda tmp: exports.write_br_csv(rows, tmp, lang=lang))
    return csv_path, parquet_path


def render(
    run_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    charts: bool = True,
    flows: bool = True,
    now: datetime | None = None,
    lang: str | None = None,
) -> Path:
    """Render the run in `run_dir` to a self-contained HTML file and return its path.

    `out` is the HTML file (if it ends in ``.html``) or a folder to put ``report.html`` in;
    by default ``<data>/reports/<run_id>/report.html``. ``breaks.csv`` and ``breaks.parquet``
    are written beside it. Re-rendering a run overwrites its report (same inputs → same
    output, apart from the generation time and the images' bytes). `charts=False` leaves the
    charts out; `flows=False` only the intent-flow charts (the run's flows.parquet).
    `lang` is the report's language; by default the chosen one (--lang, $RECON_LANG), else
    recon.toml `[ui] language` of the run's data directory, else Portuguese (Brazil).
    """
    data = load_report_data(run_dir)
    config = load_config(data=DataDir(data.run_dir.parent.parent))
    lang = ui_language(config, lang)
    review = config.get("review", {})
    review_url = str(review.get("base_url") or "") if isinstance(review, dict) else ""
    if out is None:
        html_path = report_dir_for(data.run_dir) / REPORT_NAME
    else:
        target = Path(out)
        html_path = target if target.suffix.lower() in (".html", ".htm") else target / REPORT_NAME
    html = render_html(data, charts=charts, flows=flows, now=now, lang=lang, review_url=review_url)
    _write_atomic(html_path, lambda tmp: tmp.write_text(html, encoding="utf-8"))
    write_breaks(data.breaks, html_path.parent, lang=lang)
    return html_path
