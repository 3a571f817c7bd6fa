"""Terminal summaries (rich tables) of a run, for `recon reconcile` and `daily`, and of the
demo's score, for `recon demo`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from recon import i18n
from recon.cli.console import print_line
from recon.i18n import _
from recon.report.render import format_brl
from recon.schemas import CATEGORIES, category_label, stake_cents

if TYPE_CHECKING:
    from recon.ops.demo import DemoResult

__all__ = ["breaks_by_category", "print_demo", "run_line", "run_table"]


def breaks_by_category(run_dir: Path) -> list[dict[str, Any]]:
    """Per category of the run's open breaks: priority, count, money at stake in cents."""
    path = Path(run_dir) / "exceptions.parquet"
    if not path.is_file():
        return []
    rows = pq.read_table(
        path, columns=["category", "priority", "expected_cents", "actual_cents", "delta_cents"]
    ).to_pylist()
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = out.setdefault(
            r["category"],
            {
                "category": r["category"],
                "priority": r["priority"],
                "count": 0,
                "stake_cents": 0,
            },
        )
        entry["count"] += 1
        entry["stake_cents"] += stake_cents(r)
    order = {name: i for i, name in enumerate(CATEGORIES)}
    return sorted(out.values(), key=lambda e: (order.get(e["category"], len(order)), e["category"]))


def coverage_caption(run_dir: Path) -> str | None:
    """'statements cover … to …; N intents (R$ X) wait for statements' (+ overdue days)."""
    import json

    path = Path(run_dir) / "summary.json"
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    text = summary.get("coverage_text") if isinstance(summary, dict) else None
    overdue = summary.get("statements_overdue") if isinstance(summary, dict) else None
    if text and overdue:
        text += "; " + _("statements overdue for {days}").format(days=", ".join(map(str, overdue)))
    return str(text) if text else None


def run_table(
    run_dir: Path, *, title: str | None = None, extra: Mapping[str, Mapping[str, str]] | None = None
) -> Any:
    """A rich Table of the run's breaks by category; `extra` adds columns per category."""
    from rich.table import Table

    rows = breaks_by_category(run_dir)
    extra = extra or {}
    extra_cols: list[str] = []
    for cols in extra.values():
        extra_cols += [c for c in cols if c not in extra_cols]
    table = Table(title=title or _("run {run}").format(run=Path(run_dir).name))
    table.add_column(_("category"))
    table.add_column(_("priority"))
    table.add_column(_("breaks"), justify="right")
    table.add_column(_("at stake"), justify="right")
    for col in extra_cols:
        table.add_column(col, justify="right")
    names = [r["category"] for r in rows] + sorted(set(extra) - {r["category"] for r in rows})
    by_name = {r["category"]: r for r in rows}
    for name in names:
        r = by_name.get(
            name,
            {
                "priority": CATEGORIES[name].priority if name in CATEGORIES else "",
                "count": 0,
                "stake_cents": 0,
            },
        )
        table.add_row(
            f"{category_label(name)} ({name})",
            r["priority"] or "",
            i18n.format_number(r["count"]),
            format_brl(r["stake_cents"]),
            *[extra.get(name, {}).get(c, "") for c in extra_cols],
        )
    table.caption = coverage_caption(run_dir)
    total = sum(r["count"] for r in rows)
    table.add_section()
    table.add_row(
        _("total"),
        "",
        i18n.format_number(total),
        format_brl(sum(r["stake_cents"] for r in rows)),
        *["" for _ in extra_cols],
    )
    return table


def run_line(run_dir: Path) -> str:
    """One line of the run's headline numbers, from its summary.json."""
    import json

    s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    rate = s.get("auto_match_rate")
    checks = {True: _("checks passed"), False: _("CHECKS FAILED")}.get(s.get("checks_passed"), "")
    parts = [
        _("as of {when}").format(when=s.get("as_of", "?")),
        _("{n} intents").format(n=s.get("intents", "?")),
        _("{n} statement lines").format(n=s.get("statement_lines", "?")),
        _("{n} matched").format(n=s.get("matched_lines", "?"))
        + (f" ({i18n.format_percent(rate)})" if isinstance(rate, int | float) else ""),
        _("{n} open breaks ({new} new)").format(
            n=s.get("breaks", "?"), new=s.get("new_breaks", "?")
        ),
        checks,
    ]
    return " · ".join(p for p in parts if p)


def print_demo(result: DemoResult, console: Any) -> None:
    """Print the demo's summary table (per category: expected, found, amounts, P/R)."""
    from rich.table import Table

    table = Table(
        title=_("recon demo: {n} intents, run {run}").format(n=result.intents, run=result.run_id)
    )
    for col, justify in (
        (_("category"), "left"),
        (_("expected"), "right"),
        (_("found"), "right"),
        (_("at stake"), "right"),
        # the scores' own names, as data teams say them in Portuguese too
        ("precision", "right"),
        ("recall", "right"),
    ):
        table.add_column(col, justify=justify)  # type: ignore[arg-type]
    for name, s in result.scores.items():
        if name == "all":
            continue
        table.add_row(
            name,
            str(s.expected),
            str(s.found),
            format_brl(result.stake_cents.get(name, 0)),
            f"{s.precision:.3f}",
            f"{s.recall:.3f}",
        )
    total = result.scores["all"]
    table.add_section()
    table.add_row(
        _("all"),
        str(total.expected),
        str(total.found),
        format_brl(sum(result.stake_cents.values())),
        f"{total.precision:.3f}",
        f"{total.recall:.3f}",
    )
    console.print(table)
    steps = ", ".join(f"{k} {v:.1f}s" for k, v in result.timings.items())
    console.print(
        _("time: {seconds}s ({steps})").format(seconds=f"{result.wall_seconds:.1f}", steps=steps)
    )
    for key in result.missed[:10]:
        console.print(_("missed (expected, not found): {key}").format(key=key))
    for key in result.unexpected[:10]:
        console.print(_("unexpected (found, not expected): {key}").format(key=key))
    # `key: value` lines scripts read (where the report and the data are): never translated
    print_line(console, f"report: {result.report}")
    print_line(console, f"data: {result.data_dir}")
    if (result.data_dir / "snapshots").is_dir():
        print_line(
            console,
            'next: recon sql "select category, count(*) from recon_exceptions group by 1" '
            f"--data {result.data_dir}",
        )
