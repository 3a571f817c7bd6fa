"""`recon daily` and `recon demo`: argument handling only; recon.ops does the work."""

from __future__ import annotations

import argparse
import functools
from dataclasses import replace
from typing import Any

from recon.cli.console import (
    add_engine_argument,
    console,
    parse_date,
    positive_int,
    print_line,
    print_verdict,
    with_progress,
)

__all__ = ["register"]


def run_daily_command(args: argparse.Namespace) -> int:
    from recon.cli.tables import run_line, run_table
    from recon.ops.daily import Steps, run_daily

    steps = Steps.default()
    if args.engine:
        steps = replace(steps, reconcile=functools.partial(steps.reconcile, engine=args.engine))
    if not args.quiet:  # a spinner per step on a terminal; extract's counts the intents read
        steps = Steps(
            with_progress("extract", steps.extract, reports=True),
            with_progress("importing the inbox", steps.import_statements),
            with_progress("reconciling", steps.reconcile),
            with_progress("rendering the report", steps.render),
        )
    result = run_daily(
        args.data,
        steps=steps,
        date=args.date,
        base_url=args.base_url,
        config=args.config,
        force=args.force,
        quiet=args.quiet or None,
    )
    out = console()
    what = "re-used" if result.reused else "ran"
    out.print(run_table(result.run_dir, title=f"daily {result.date} ({what} run {result.run_id})"))
    out.print(run_line(result.run_dir))
    if result.imported:
        print_line(out, f"imported from the inbox: {', '.join(result.imported)}")
    print_line(out, f"report: {result.report}")
    print_verdict(result.exit_code, result.reasons)
    return result.exit_code


def run_demo_command(args: argparse.Namespace) -> int:
    from recon.cli.tables import print_demo
    from recon.ops.demo import run_demo

    out = console()
    out.print(
        f"recon demo: seed {args.seed}, {args.days} days × {args.intents_per_day} intents/day"
    )
    result = run_demo(
        args.data,
        seed=args.seed,
        days=args.days,
        intents_per_day=args.intents_per_day,
        keep_data=args.keep_data,
        on_step=lambda name, seconds: out.print(f"  ✓ {name} ({seconds:.1f}s)"),
    )
    print_demo(result, out)
    return 0


def run_erase_command(args: argparse.Namespace) -> int:
    from recon.ops.erase import erase_document

    result = erase_document(args.data, args.document)
    out = console()
    out.print(result.summary())
    for name in result.files_rewritten:
        print_line(out, f"  rewritten: {name}")
    for name in result.files_deleted:
        print_line(out, f"  deleted: {name}")
    for name in result.files_vacuumed:
        print_line(out, f"  vacuumed: {name}")
    return 0


def run_migrate_command(args: argparse.Namespace) -> int:
    from recon.ops.migrate import migrate

    result = migrate(args.data, args.to)
    console().print(result.summary())
    return 0


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add daily, demo, erase and migrate to `recon`."""
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
    add_engine_argument(p)
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
    p.add_argument("--days", type=positive_int, default=14, help="days of history (default 14)")
    p.add_argument(
        "--intents-per-day",
        type=positive_int,
        default=200,
        metavar="K",
        help="intents per day (default 200)",
    )
    p.add_argument(
        "--keep-data",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="keep the demo's snapshots, statements and runs in <data>/demo-<seed>/ for "
        "`recon sql --data data/demo-7` and the notebooks (default; --no-keep-data keeps "
        "only the report and the sandbox's files)",
    )
    p.set_defaults(func=run_demo_command)

    p = sub.add_parser(
        "erase",
        parents=parents,
        help="remove a person's data (by CPF/CNPJ) from snapshots, statements, runs, reports",
        description="Empty the personal fields of every intent and statement line that names "
        "the person, replace their names and masked documents in quarantined lines, runs and "
        "reports, and delete kept inbox files naming them; amounts, times and ids stay (the "
        "financial record). On object storage the rewrites are Delta commits and the replaced "
        "files are then deleted (vacuum), so time travel cannot read them back. Takes the data "
        "directory's writer lock. See docs/security.md.",
    )
    p.add_argument("--document", required=True, metavar="D", help="CPF or CNPJ, bare or formatted")
    p.set_defaults(func=run_erase_command)

    p = sub.add_parser(
        "migrate",
        parents=parents,
        help="copy a local data directory (--data DIR) to object storage (--to s3://bucket/prefix)",
        description="Publish every committed snapshot, statement line and run of the local data "
        "directory as Delta commits under the URI, and copy decisions, the audit trail and "
        "recon.toml to its local side. Idempotent: run it again to finish a cut-short one. "
        "See docs/object-storage.md.",
    )
    p.add_argument(
        "--to", required=True, metavar="URI", help="s3://bucket/prefix (or gs://, abfs://)"
    )
    p.set_defaults(func=run_migrate_command)
