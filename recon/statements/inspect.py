"""`recon statements inspect FILE…`: how each file would be read, importing nothing.

For every format it runs the same parse path as `statements import` (sniffing, the parser,
the importer's time cast) and reports: format, CSV layout and how it was sniffed (encoding,
delimiter, decimal mark, date format), the account label the lines would get (and the one
the file names, if any), the period covered (what the import would record in
statement_coverage: the file's stated period, else its first to last booking day), the first lines parsed, counts per kind, and credit and
debit totals in cents and in the statement's currency (R$ unless the file states another,
as a camt file may). Nothing is written.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from recon.config import DataDir
from recon.errors import StatementError
from recon.money import MINUS, format_brl, format_cents
from recon.statements.importer import (
    FORMAT_CHOICES,
    _expand,
    file_coverage,
    parse_path,
    resolve_account,
    rows_to_table,
)
from recon.statements.importer import describe as describe_period
from recon.statements.lines import BUSINESS_TZ, EPOCH

__all__ = ["inspect_statements", "render_text"]

SHOWN_COLUMNS = (
    "source_line",
    "booked_at",
    "amount_cents",
    "direction",
    "kind",
    "end_to_end_id",
    "counterparty_name",
    "counterparty_document",
    "description",
    "bank_reference",
)


def _periods(parsed: Any, table: Any) -> list[dict[str, Any]]:
    """The periods the import would record for this file (importer.file_coverage)."""
    out = []
    for c in file_coverage(parsed, table, None):
        first, end = (
            (EPOCH + timedelta(microseconds=us)).astimezone(BUSINESS_TZ)
            for us in (c.start_us, c.end_us)
        )
        last = (end - timedelta(microseconds=1)).date()
        out.append(
            {
                "first": first.date().isoformat(),
                "last": last.isoformat(),
                "basis": c.basis,
                "scope": c.scope,
                "text": describe_period(c),
            }
        )
    return out


def _money(cents: int, currency: str | None) -> str:
    """Amount text in pt-BR style: R$ for BRL, else the ISO code ("EUR 1.234,56"); no symbol
    when a file mixes currencies (None)."""
    if currency == "BRL":
        return format_brl(cents)
    text = format_cents(abs(cents), decimal_mark=",", thousands=".")
    text = f"{currency} {text}" if currency else text
    return MINUS + text if cents < 0 else text


def _one(path: Path, fmt: str, csv_profile: Any, account: str, lines: int) -> dict[str, Any]:
    fmt, parsed = parse_path(path, fmt, csv_profile=csv_profile)
    table, time_bad = rows_to_table(
        parsed,
        source_format=fmt,
        source_file=str(path.resolve()),
        account=account,
        imported_at=datetime.now(UTC),
    )
    amounts = table.column("amount_cents").to_pylist()
    credits = [a for a in amounts if a > 0]
    debits = [a for a in amounts if a < 0]
    shown = []
    for row in table.slice(0, lines).select(list(SHOWN_COLUMNS)).to_pylist():
        row["booked_at"] = row["booked_at"].astimezone(BUSINESS_TZ).isoformat()
        shown.append(row)
    bad = parsed.bad + time_bad
    info = {k: v for k, v in parsed.info.items() if k not in ("period", "currencies")}
    found = parsed.info.get("currencies") or ["BRL"]  # only camt states a currency
    currency = found[0] if len(found) == 1 else None
    return {
        "file": str(path),
        "format": fmt,
        "csv": (info or None) if fmt in ("csv", "spreadsheet") else None,  # read as a CSV
        "account": account,
        "declared_account": parsed.info.get("declared_account"),  # CSV preamble, OFX ACCTID
        "currency": currency,
        "currencies": found,
        "periods": _periods(parsed, table),
        "lines": table.num_rows,
        "malformed": len(bad),
        "first_malformed": (
            {"line": bad[0].source_line, "field": bad[0].field, "reason": bad[0].reason}
            if bad
            else None
        ),
        "kinds": dict(sorted(Counter(table.column("kind").to_pylist()).items())),
        "credits": _totals(credits, currency),
        "debits": _totals(debits, currency),
        "checks": list(parsed.checks),
        "warnings": list(parsed.warnings),
        "first_lines": shown,
    }


def _totals(amounts: list[int], currency: str | None) -> dict[str, Any]:
    """Count and sum; `text` in the statement's currency, `brl` (R$) only for a BRL one."""
    total = sum(amounts)
    brl = format_brl(total) if currency == "BRL" else None
    return {"count": len(amounts), "cents": total, "brl": brl, "text": _money(total, currency)}


def inspect_statements(
    paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    format: str = "auto",
    csv_profile: Any = None,
    account: str | None = None,
    lines: int = 5,
) -> tuple[list[dict[str, Any]], list[StatementError]]:
    """(one report per file, errors of the files that could not be read); writes nothing."""
    from recon.errors import UsageError

    if format not in FORMAT_CHOICES:
        raise UsageError(
            f"unknown statement format {format!r}; choose one of {', '.join(FORMAT_CHOICES)}"
        )
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    label = resolve_account(account, dd)
    reports: list[dict[str, Any]] = []
    errors: list[StatementError] = []
    for path, explicit in _expand(paths):
        if not explicit and format == "auto" and not _is_statement(path, csv_profile):
            reports.append({"file": str(path), "skipped": "not a statement format"})
            continue  # a folder's README or ground-truth file, as import skips it
        try:
            reports.append(_one(path, format, csv_profile, label, lines))
        except StatementError as exc:
            errors.append(exc)
            reports.append({"file": str(path), "error": str(exc)})
    return reports, errors


def _is_statement(path: Path, csv_profile: Any) -> bool:
    from recon.statements import sniff
    from recon.statements.formats import csv as csv_format

    try:
        fmt = sniff.sniff_format(path, csv_profile=csv_profile)
        if fmt == "csv" and csv_profile is None:
            csv_format.resolve_profile(None, path)
        if fmt == "spreadsheet" and csv_profile is None:
            from recon.statements.formats.spreadsheet import sheets_read

            sheets_read(path)
    except StatementError:
        return False
    return True


def _cut(text: Any, width: int) -> str:
    s = "" if text is None else str(text)
    return s if len(s) <= width else s[: width - 1] + "…"


def render_text(reports: list[dict[str, Any]]) -> str:
    """The reports as lines a person reads."""
    out: list[str] = []
    for r in reports:
        if "error" in r:
            out.append(f"{r['file']}: cannot be read: {r['error']}")
            continue
        if "skipped" in r:
            out.append(f"{r['file']}: skipped ({r['skipped']})")
            continue
        head = f"{r['file']}: {r['format']}"
        csv_info = r.get("csv")
        if csv_info:
            head += _table_shape(csv_info, r["format"] == "spreadsheet")
        out.append(head)
        if csv_info and csv_info.get("sign"):
            out.append(f"  sign: {csv_info['sign']}")
        named = r["declared_account"]
        said = f" (the file names account{'s' if ', ' in (named or '') else ''} {named})"
        said = said if named else ""
        out.append(f"  account: {r['account']}{said}")
        if r["warnings"]:  # a request not read whole, a period not trusted, several accounts
            none = "none (the warnings say why)"
        else:
            none = (
                "none recorded for its lines" if r["lines"] else "none (no lines, no stated period)"
            )
        periods = [p["text"] for p in r["periods"]] or [none]
        out.extend(f"  covers: {text}" for text in periods)
        c, d = r["credits"], r["debits"]
        mixed = "" if r["currency"] else f" (mixed currencies: {', '.join(r['currencies'])})"
        out.append(
            f"  lines: {r['lines']} ({c['count']} credits {c['text']}, {d['count']} debits "
            f"{d['text']}){mixed}, malformed {r['malformed']}"
        )
        if r["first_malformed"]:
            m = r["first_malformed"]
            out.append(f"  first malformed: line {m['line']} field {m['field']}: {m['reason']}")
        out.append("  kinds: " + ", ".join(f"{k} {n}" for k, n in r["kinds"].items()))
        out.extend(f"  check: {c}" for c in r["checks"])
        out.extend(f"  warning: {w}" for w in r["warnings"])
        if r["first_lines"]:
            out.append("  first lines:")
        for line in r["first_lines"]:
            out.append(
                f"    {line['source_line']:>6}  {line['booked_at'][:19]}  "
                f"{_money(line['amount_cents'], r['currency']):>16}  {line['kind']:<14} "
                f"{_cut(line['counterparty_name'], 24):<24}  {_cut(line['description'], 60)}"
            )
    return "\n".join(out)


def _table_shape(info: Mapping[str, Any], workbook: bool) -> str:
    """How a CSV or a spreadsheet's sheet was read, for the head line of `inspect`."""
    if workbook:
        sheet = info.get("sheet")
        sheets = (
            f"sheet {sheet!r}"
            if isinstance(sheet, str)
            else "sheets " + ", ".join(repr(s) for s in sheet or [])
        )
        where, unit = f" ({info.get('workbook')}), {sheets}", "row"
    else:
        where = ""
        unit = "line"
    text = f"{where}, layout {info.get('layout')} [{info.get('profile')}], "
    if not workbook:
        text += f"encoding {info.get('encoding')}, delimiter {info.get('delimiter')!r}, "
    text += f"decimal {info.get('decimal_mark')!r}, dates {info.get('date_format')}, "
    line = info.get("header_line")
    text += f"header on {unit} {line}" if line else f"no header {unit}"
    return text + (", card statement" if info.get("card") else "")
