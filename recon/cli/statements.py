"""`recon statements import`, `recon statements inspect` and `recon statements pull`."""

from __future__ import annotations

import argparse
import os
from datetime import date
from typing import Any

from recon.cli.console import progress

FORMATS = (
    "auto",
    "pix-json",
    "camt",
    "open-finance",
    "ofx",
    "cnab240",
    "csv",
    "spreadsheet",
    "asaas",
)


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add `recon statements import|inspect|pull` to `recon`."""
    parser = sub.add_parser(
        "statements",
        help="import bank / PSP statements into statement_lines",
        description="Normalize bank and PSP statements (API Pix JSON, OFX, CNAB 240, CSV).",
        parents=parents,
    )
    actions = parser.add_subparsers(dest="statements_command", metavar="ACTION")
    actions.required = True

    imp = actions.add_parser(
        "import",
        help="import statement files (or folders of them)",
        description="Read statement files into statement_lines; prints lines read, imported, "
        "duplicate and quarantined (read = imported + duplicate + quarantined).",
        parents=parents,
    )
    imp.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    imp.add_argument("--format", default="auto", choices=FORMATS, help="default: sniff content")
    imp.add_argument(
        "--quarantine",
        action="store_true",
        help="keep malformed lines in statement_quarantine instead of stopping",
    )
    imp.add_argument(
        "--csv-profile",
        default=None,
        metavar="psp|bank|FILE.toml",
        help="CSV shape (default: recognized from the header)",
    )
    imp.add_argument(
        "--account", default=None, help="account label (default: recon.toml or 'default')"
    )
    imp.add_argument(
        "--period",
        default=None,
        metavar="FIRST..LAST",
        help="business days the files cover, e.g. 2026-11-01..2026-11-03 (default: each "
        "file's own period, else the first to last day of its lines)",
    )
    imp.set_defaults(func=run_import)

    ins = actions.add_parser(
        "inspect",
        help="show how statement files would be read, importing nothing",
        description="For each file: format, CSV layout and how it was sniffed, account, "
        "period covered, first lines parsed, counts and credit/debit totals. Reads with the "
        "same code as import; writes nothing.",
        parents=parents,
    )
    ins.add_argument("paths", nargs="+", metavar="PATH", help="files or folders")
    ins.add_argument("--format", default="auto", choices=FORMATS, help="default: sniff content")
    ins.add_argument("--csv-profile", default=None, metavar="psp|bank|FILE.toml", help="CSV shape")
    ins.add_argument("--account", default=None, help="account label the lines would get")
    ins.add_argument("--lines", type=int, default=5, help="first lines to show (default 5)")
    ins.add_argument("--json", action="store_true", help="one JSON document for scripts")
    ins.set_defaults(func=run_inspect)

    pull = actions.add_parser(
        "pull",
        help="fetch received PIX from a BACEN-style API Pix and import them",
        description="OAuth2 client credentials, then GET /pix for [--inicio, --fim], all pages. "
        "The client secret is read from $RECON_PIX_CLIENT_SECRET (never a flag, so it stays "
        "out of shell history).",
        parents=parents,
    )
    pull.add_argument(
        "--base-url", default=os.environ.get("RECON_PIX_BASE_URL"), help="API Pix base URL"
    )
    pull.add_argument(
        "--client-id", default=os.environ.get("RECON_PIX_CLIENT_ID"), help="OAuth2 client id"
    )
    pull.add_argument("--token-url", default=None, help="default: <base-url>/oauth/token")
    pull.add_argument(
        "--inicio", required=True, help="RFC 3339 start, e.g. 2026-11-01T00:00:00-03:00"
    )
    pull.add_argument("--fim", required=True, help="RFC 3339 end")
    pull.add_argument("--page-size", type=int, default=100, help="itensPorPagina (1..1000)")
    pull.add_argument("--save", default=None, metavar="DIR", help="also keep the raw pages here")
    pull.add_argument("--quarantine", action="store_true", help="quarantine malformed items")
    pull.add_argument("--account", default=None, help="account label")
    pull.set_defaults(func=run_pull)


def _print(report: Any) -> None:
    for f in report.per_file:
        print(
            f"{f.path} [{f.format}]: read {f.read}, imported {f.imported}, "
            f"duplicate {f.duplicate}, quarantined {f.quarantined}"
        )
        for period in f.coverage:
            print(f"  covers {period}")
        for warning in f.warnings:
            print(f"  warning: {warning}")
    for skipped in report.skipped_files:
        print(f"{skipped}: skipped (not a statement format)")
    print(report.summary())


def run_import(args: argparse.Namespace) -> int:
    """`recon statements import`."""
    from recon.statements import import_statements

    with progress("importing statements"):
        report = import_statements(
            args.paths,
            args.data,
            format=args.format,
            quarantine=args.quarantine,
            account=args.account,
            csv_profile=args.csv_profile,
            period=parse_period(args.period),
        )
    _print(report)
    return 0


def run_inspect(args: argparse.Namespace) -> int:
    """`recon statements inspect`: exit 2 (after the report) when a file cannot be read."""
    import json

    from recon.errors import UsageError
    from recon.statements.inspect import inspect_statements, render_text

    if args.lines < 0:
        raise UsageError("--lines must be 0 or more")
    reports, errors = inspect_statements(
        args.paths,
        args.data,
        format=args.format,
        csv_profile=args.csv_profile,
        account=args.account,
        lines=args.lines,
    )
    if args.json:
        print(json.dumps({"files": reports}, ensure_ascii=False, indent=2, default=str))
    else:
        print(render_text(reports))
    if errors:
        raise errors[0]
    return 0


def parse_period(text: str | None) -> tuple[date, date] | None:
    """`FIRST..LAST` (ISO dates, inclusive) -> (first, last); UsageError if malformed."""
    from recon.errors import UsageError

    if text is None:
        return None
    first, sep, last = text.partition("..")
    try:
        if not sep:
            raise ValueError(text)
        period = (date.fromisoformat(first.strip()), date.fromisoformat(last.strip()))
    except ValueError:
        raise UsageError(
            f"--period {text!r}: expected FIRST..LAST, e.g. 2026-11-01..2026-11-03"
        ) from None
    if period[1] < period[0]:
        raise UsageError(f"--period {text!r}: the last day is before the first")
    return period


def run_pull(args: argparse.Namespace) -> int:
    """`recon statements pull`."""
    from recon.errors import UsageError
    from recon.statements.pull import SECRET_ENV, pull_pix

    if not args.base_url:
        raise UsageError("--base-url is required (or $RECON_PIX_BASE_URL)")
    if not args.client_id:
        raise UsageError("--client-id is required (or $RECON_PIX_CLIENT_ID)")
    secret = os.environ.get(SECRET_ENV)
    if not secret:
        raise UsageError(f"set ${SECRET_ENV} to the API Pix client secret")
    report = pull_pix(
        args.base_url,
        args.client_id,
        secret,
        args.inicio,
        args.fim,
        args.data,
        account=args.account,
        quarantine=args.quarantine,
        page_size=args.page_size,
        token_url=args.token_url,
        save_dir=args.save,
    )
    _print(report)
    return 0
