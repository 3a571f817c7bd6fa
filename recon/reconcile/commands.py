"""`recon reconcile`, `resolve`, `report`, `daily` and `demo`: argument handling only.

The work is done by the library (recon.reconcile, recon.report, recon.daily, recon.demo);
these functions parse arguments, call it, print a summary and return the exit code
(README, Contracts: 0 ok, 1 breaks above the threshold, 2 usage/input, 3 upstream API).
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

__all__ = ["parse_date", "parse_timestamp", "register"]


def parse_timestamp(text: str) -> datetime:
    """``--as-of``: ISO 8601 with an offset or ``Z`` (a bare time is ambiguous, so refused)."""
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 timestamp: {text!r} (e.g. 2026-11-20T23:59:59-03:00)"
        ) from None
    if stamp.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f"timestamp {text!r} has no UTC offset (add Z or e.g. -03:00)"
        )
    return stamp.astimezone(UTC)


def parse_date(text: str) -> date:
    """``--date``: a calendar date ``YYYY-MM-DD``."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {value}")
    return value


def _console() -> Any:
    from rich.console import Console

    console = Console(highlight=False)
    # In a job's log (not a terminal) rich assumes 80 columns and truncates category names.
    return console if console.is_terminal else Console(highlight=False, width=120)


def _data(args: argparse.Namespace) -> Any:
    from recon.config import DataDir

    return DataDir.resolve(args.data)


# --------------------------------------------------------------------------- reconcile


def run_reconcile(args: argparse.Namespace) -> int:
    from recon.config import load_config
    from recon.daily import Thresholds, assess_run, settings_kw
    from recon.reconcile import reconcile
    from recon.report.console import run_table

    dd = _data(args)
    thresholds = Thresholds.from_config(load_config(args.config, dd))
    result = reconcile(dd, as_of=args.as_of, **settings_kw(args.config, dd))
    verdict = assess_run(Path(result.path), thresholds)
    console = _console()
    console.print(run_table(Path(result.path), title=f"run {result.run_id}"))
    console.print(run_line(Path(result.path)))
    console.print(f"run written to {result.path}")
    _print_verdict(verdict.exit_code, verdict.reasons)
    return verdict.exit_code


def run_line(run_dir: Path) -> str:
    """One line of the run's headline numbers, from its summary.json."""
    import json

    s = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    rate = s.get("auto_match_rate")
    checks = {True: "checks passed", False: "CHECKS FAILED"}.get(s.get("checks_passed"), "")
    parts = [
        f"as of {s.get('as_of', '?')}",
        f"{s.get('intents', '?')} intents",
        f"{s.get('statement_lines', '?')} statement lines",
        f"{s.get('matched_lines', '?')} matched"
        + (f" ({rate:.1%})" if isinstance(rate, int | float) else ""),
        f"{s.get('breaks', '?')} open breaks ({s.get('new_breaks', '?')} new)",
        checks,
    ]
    return " · ".join(p for p in parts if p)


def _print_verdict(code: int, reasons: tuple[str, ...]) -> None:
    if code:
        print("exit 1: " + "; ".join(reasons), file=sys.stderr)


# --------------------------------------------------------------------------- resolve


def run_resolve(args: argparse.Namespace) -> int:
    from recon.errors import UsageError

    # Check the arguments before importing the engine, so a typo fails fast.
    if args.decisions is not None and (args.break_id or args.note):
        raise UsageError("give either BREAK_ID --note TEXT or --decisions FILE.csv, not both")
    if args.decisions is None and not args.break_id:
        raise UsageError("give a BREAK_ID (with --note TEXT) or --decisions FILE.csv")
    if args.decisions is None and not (args.note or "").strip():
        raise UsageError("--note TEXT is required: say why the break is resolved")
    if args.reopen and args.decisions is not None:
        raise UsageError("--reopen takes one BREAK_ID, not --decisions")

    from recon.reconcile import decisions

    dd = _data(args)
    if args.decisions is not None:
        rows = read_decisions_csv(Path(args.decisions))
        for n, (break_id, note, decided_by) in enumerate(rows, start=1):
            try:
                decisions.resolve(break_id, note, data=dd, decided_by=decided_by or args.by or None)
            except UsageError as exc:
                raise UsageError(
                    f"{args.decisions}: row {n + 1}: {exc} ({n - 1} decision(s) recorded before it)"
                ) from exc
        print(f"recorded {len(rows)} decision(s) from {args.decisions}")
        return 0
    if args.reopen:
        decision = decisions.reopen(args.break_id, args.note, data=dd, decided_by=args.by)
        print(f"break {decision.break_id} reopened by {decision.decided_by}; the next run lists it")
        return 0
    decision = decisions.resolve(args.break_id, args.note, data=dd, decided_by=args.by)
    print(
        f"break {decision.break_id} resolved by {decision.decided_by}; "
        "later runs list it as decided, not open"
    )
    return 0


def read_decisions_csv(path: Path) -> list[tuple[str, str, str]]:
    """(break_id, note, decided_by) rows of a decisions CSV (header: break_id,note[,decided_by])."""
    import csv

    from recon.errors import UsageError

    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"decisions file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read as UTF-8 text: {exc}") from exc
    reader = csv.DictReader(text.splitlines())
    header = [(h or "").strip() for h in reader.fieldnames or []]
    if "break_id" not in header or "note" not in header:
        raise UsageError(f"{path}: header must have columns break_id,note (got {header})")
    rows = []
    for lineno, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        if not row.get("break_id") or not row.get("note"):
            raise UsageError(f"{path}:{lineno}: break_id and note are both required")
        rows.append((row["break_id"], row["note"], row.get("decided_by", "")))
    if not rows:
        raise UsageError(f"{path}: no decisions in the file")
    return rows


# --------------------------------------------------------------------------- report


def run_report(args: argparse.Namespace) -> int:
    from recon.catalog import latest_run
    from recon.errors import UsageError
    from recon.report import render

    dd = _data(args)
    if args.run:
        run_dir = dd.runs / args.run
        if not (run_dir / "summary.json").is_file():
            raise UsageError(f"no committed run {args.run!r} in {dd.runs}")
    else:
        found = latest_run(dd)
        if found is None:
            raise UsageError(f"no committed run in {dd.runs}; run `recon reconcile` first")
        run_dir = found
    out = render(run_dir, args.out)
    print(f"report: {out}")
    print(f"breaks: {out.parent / 'breaks.csv'} and breaks.parquet")
    return 0


# --------------------------------------------------------------------------- daily


def run_daily_command(args: argparse.Namespace) -> int:
    from recon.daily import run_daily
    from recon.report.console import run_table

    result = run_daily(
        args.data,
        date=args.date,
        base_url=args.base_url,
        config=args.config,
        force=args.force,
        quiet=args.quiet or None,
    )
    console = _console()
    what = "re-used" if result.reused else "ran"
    console.print(
        run_table(result.run_dir, title=f"daily {result.date} ({what} run {result.run_id})")
    )
    console.print(run_line(result.run_dir))
    if result.imported:
        console.print(f"imported from the inbox: {', '.join(result.imported)}")
    console.print(f"report: {result.report}")
    _print_verdict(result.exit_code, result.reasons)
    return result.exit_code


# --------------------------------------------------------------------------- demo


def run_demo_command(args: argparse.Namespace) -> int:
    from recon.demo import print_demo, run_demo

    console = _console()
    console.print(
        f"recon demo: seed {args.seed}, {args.days} days × {args.intents_per_day} intents/day"
    )
    result = run_demo(
        args.data,
        seed=args.seed,
        days=args.days,
        intents_per_day=args.intents_per_day,
        keep_data=args.keep_data,
        on_step=lambda name, seconds: console.print(f"  ✓ {name} ({seconds:.1f}s)"),
    )
    print_demo(result, console)
    return 0


# --------------------------------------------------------------------------- registration


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add reconcile, resolve, report, daily and demo to `recon`."""
    p = sub.add_parser(
        "reconcile",
        parents=parents,
        help="run the matching passes over the catalog; write a run",
        description="Match every intent to the statement lines, classify the breaks and "
        "write data/runs/<run_id>/. Exit 1 when P1 breaks exist or breaks exceed "
        "[alerts] max_breaks.",
    )
    p.add_argument(
        "--as-of",
        type=parse_timestamp,
        metavar="TS",
        default=None,
        help="reconcile as of this instant (ISO 8601 with offset; default: latest snapshot time)",
    )
    p.add_argument("--config", metavar="FILE", default=None, help="recon.toml to use")
    p.set_defaults(func=run_reconcile)

    p = sub.add_parser(
        "resolve",
        parents=parents,
        help="record a manual decision on a break (kept across runs)",
        description="Mark a break as resolved with a note, or record many from a CSV "
        "(columns: break_id,note[,decided_by]); --reopen opens a resolved one again. Every "
        "decision is appended to data/decisions.csv and to the audit log (data/audit.jsonl).",
    )
    p.add_argument("break_id", nargs="?", metavar="BREAK_ID", help="the break to resolve")
    p.add_argument("--note", metavar="TEXT", default=None, help="why it is resolved")
    p.add_argument("--decisions", metavar="FILE.csv", default=None, help="CSV of decisions")
    p.add_argument(
        "--by",
        metavar="NAME",
        default=None,
        help="who decided (default: the OS user; a CSV's decided_by column wins)",
    )
    p.add_argument(
        "--reopen",
        action="store_true",
        help="reopen a resolved break (the note says why); the next run lists it as open",
    )
    p.set_defaults(func=run_resolve)

    p = sub.add_parser(
        "report",
        parents=parents,
        help="HTML report with charts for a run (+ breaks.csv / breaks.parquet)",
        description="Render a run (default: the latest) as one self-contained HTML file, "
        "with breaks.csv and breaks.parquet beside it.",
    )
    p.add_argument("--run", metavar="ID", default=None, help="run id (default: the latest)")
    p.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help="HTML file or folder (default: <data>/reports/<run_id>/report.html)",
    )
    p.set_defaults(func=run_report)

    p = sub.add_parser(
        "daily",
        parents=parents,
        help="extract + import the inbox + reconcile + report, under a lock; idempotent per date",
        description="The scheduled job. Exit codes: 0 ok, 1 P1 breaks or above threshold, "
        "2 usage/input (incl. another run holding the lock), 3 upstream API failure.",
    )
    p.add_argument(
        "--date",
        type=parse_date,
        metavar="YYYY-MM-DD",
        default=None,
        help="business date (default: today in the business time zone)",
    )
    p.add_argument(
        "--base-url", metavar="URL", default=None, help="v2 API base URL (default: $RECON_BASE_URL)"
    )
    p.add_argument("--config", metavar="FILE", default=None, help="recon.toml to use")
    p.add_argument(
        "--force", action="store_true", help="run the whole job again for a date already done"
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=run_daily_command)

    p = sub.add_parser(
        "demo",
        parents=parents,
        help="the whole job end to end against the embedded sandbox",
        description="Serve a sandbox world on loopback, extract it over HTTP, apply its late "
        "events and extract again, import its statements, reconcile, report, and compare "
        "with the sandbox's ground truth. Works in <data>/demo-<seed>/.",
    )
    p.add_argument("--seed", type=int, default=7, help="world seed (default 7)")
    p.add_argument("--days", type=_positive, default=14, help="days of history (default 14)")
    p.add_argument(
        "--intents-per-day",
        type=_positive,
        default=200,
        metavar="K",
        help="intents per day (default 200)",
    )
    p.add_argument(
        "--keep-data",
        action="store_true",
        help="keep the demo's snapshots, statements and runs (default: keep only the report)",
    )
    p.set_defaults(func=run_demo_command)
