"""Breaks for a spreadsheet: XLSX with R$ as numbers, and a Brazilian CSV.

``breaks.csv`` (comma, UTF-8, cents) stays the file for scripts; these two are for people:

- ``breaks.xlsx``: one sheet, a header row frozen and filtered, amounts as numbers in reais
  with the pt-BR currency format ``[$R$-416] #,##0.00`` (Excel and LibreOffice show
  "R$ 1.234,56" and sum them), ids as text, the reason wrapping in a wide column.
- ``breaks_br.csv``: what a Brazilian Excel opens right with a double click: ``;``-separated,
  UTF-8 with a BOM (so "Devolução" stays "Devolução"), CRLF line ends, amounts in reais with a
  decimal comma and no thousands separator ("-2156,10", exact: formatted from the cents).

Both take the breaks as rows (mappings with the EXCEPTIONS_SCHEMA columns; other columns
are ignored) or an Arrow table, most urgent first as given, and write to a path or to a
binary file object (the review app streams the queue's current filter this way, with the
team's work in `REVIEW_COLUMNS`). Headers and category labels are in the chosen language
(pt-BR by default, English with `--lang en` or `[ui] language`); the CSV's format stays the
one a Brazilian Excel reads in either language (`;`, decimal comma, a plain `-` for a
negative), so a file pastes and sums the same whoever exported it. Times are local
(`dd/mm/aaaa HH:MM` in pt-BR) in the business time zone.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, TypeAlias

import pyarrow as pa

from recon import i18n
from recon.i18n import N_
from recon.money import format_cents
from recon.schemas import category_label, stake_cents

__all__ = [
    "COLUMNS",
    "REVIEW_COLUMNS",
    "XLSX_MONEY_FORMAT",
    "headers",
    "safe_cell",
    "write_br_csv",
    "write_xlsx",
]

Columns: TypeAlias = tuple[tuple[str, str, str], ...]
# (header, key, kind): kind "money" is cents shown in reais, "int" a count, "category" the
# category's label, "time" an instant in local time, "text" as is
COLUMNS: Columns = (
    (N_("priority"), "priority", "text"),
    (N_("category"), "category", "category"),
    (N_("break id"), "break_id", "text"),
    (N_("intent id"), "intent_id", "text"),
    (N_("end-to-end id"), "end_to_end_id", "text"),
    (N_("expected (R$)"), "expected_cents", "money"),
    (N_("actual (R$)"), "actual_cents", "money"),
    (N_("difference (R$)"), "delta_cents", "money"),
    (N_("at stake (R$)"), "stake_cents", "money"),
    (N_("age (days)"), "age_days", "int"),
    (N_("state"), "state", "text"),
    (N_("first seen in run"), "first_seen_run", "text"),
    (N_("reason"), "reason", "text"),
)
# what the review app's export adds: the evidence's names and times, and the team's work
REVIEW_COLUMNS: Columns = (
    *COLUMNS,
    (N_("counterparty"), "counterparty", "text"),
    (N_("created"), "created_at", "time"),
    (N_("booked"), "booked_at", "time"),
    (N_("assignee"), "assignee", "text"),
    (N_("decision"), "decision", "text"),
    (N_("approval"), "approval", "text"),
    (N_("decided at"), "decided_at", "time"),
    (N_("last comment"), "last_comment", "text"),
)
DEFAULT_TZ = "America/Sao_Paulo"


def headers(columns: Columns = COLUMNS, lang: str | None = None) -> list[str]:
    """The header row in `lang`."""
    return [i18n.gettext(header, lang) for header, _, _ in columns]


def _text(value: Any, kind: str, lang: str | None, tz: str) -> str:
    """A cell that is not a number, as a person reads it (formula-guarded)."""
    if kind == "category":
        return safe_cell(category_label(str(value), lang))
    if kind == "time":
        stamp = datetime.fromisoformat(value) if isinstance(value, str) else value
        if isinstance(stamp, datetime):
            stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
            return i18n.format_datetime(stamp, tz, lang)
    return str(safe_cell(str(value)))


XLSX_MONEY_FORMAT = "[$R$-416] #,##0.00;[Red]-[$R$-416] #,##0.00"
_WIDTHS = {"reason": 90, "category": 30, "intent_id": 38, "end_to_end_id": 34, "break_id": 22,
           "counterparty": 30, "last_comment": 60, "created_at": 17, "booked_at": 17,
           "decided_at": 17}  # fmt: skip

# a spreadsheet reads a cell starting with one of these as a formula (or strips the tab / CR
# and reads what follows): OWASP's list for CSV injection
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: Any) -> Any:
    """A text cell a spreadsheet shows as text: one starting with `=`, `+`, `-`, `@`, a tab
    or a CR gets a leading `'`, so `=HYPERLINK(...)` from a hostile source is never a
    formula. Every export of breaks (CSV, XLSX, the review app's) writes text through this;
    numbers (negative amounts too) are not text and pass unchanged."""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


Rows: TypeAlias = pa.Table | Iterable[Mapping[str, Any]]
Target: TypeAlias = str | os.PathLike[str] | IO[bytes]


def _rows(breaks: Rows) -> list[dict[str, Any]]:
    rows = breaks.to_pylist() if isinstance(breaks, pa.Table) else [dict(r) for r in breaks]
    for r in rows:
        r["stake_cents"] = stake_cents(r)
    return rows


def _reais(cents: int) -> Decimal:
    """Exact reais of integer cents (a spreadsheet cell then holds 1234.56)."""
    return Decimal(int(cents)) / 100


def _open(target: Target) -> tuple[IO[bytes], bool]:
    if isinstance(target, str | os.PathLike):
        Path(target).parent.mkdir(parents=True, exist_ok=True)
        return open(target, "wb"), True
    return target, False


def write_br_csv(
    breaks: Rows,
    target: Target,
    *,
    columns: Columns = COLUMNS,
    lang: str | None = None,
    tz: str = DEFAULT_TZ,
) -> None:
    """`;`-separated CSV, UTF-8 with BOM, CRLF, amounts in reais with a decimal comma."""
    text = io.StringIO(newline="")
    writer = csv.writer(text, delimiter=";", lineterminator="\r\n")
    writer.writerow(headers(columns, lang))
    for r in _rows(breaks):
        cells = []
        for _, key, kind in columns:
            value = r.get(key)
            if value is None or value == "":
                cells.append("")
            elif kind == "money":
                cells.append(format_cents(int(value), decimal_mark=","))
            elif kind == "int":
                cells.append(str(int(value)))
            else:
                cells.append(_text(value, kind, lang, tz))
        writer.writerow(cells)
    fh, mine = _open(target)
    try:
        fh.write(text.getvalue().encode("utf-8-sig"))
    finally:
        if mine:
            fh.close()


def write_xlsx(
    breaks: Rows,
    target: Target,
    *,
    sheet: str = "breaks",
    columns: Columns = COLUMNS,
    lang: str | None = None,
    tz: str = DEFAULT_TZ,
) -> None:
    """One sheet: frozen, filtered header; R$ as numbers in the pt-BR currency format."""
    import xlsxwriter

    fh, mine = _open(target)
    try:
        book = xlsxwriter.Workbook(fh, {"in_memory": True, "strings_to_numbers": False})
        ws = book.add_worksheet(sheet)
        bold = book.add_format({"bold": True, "bg_color": "#F3F6F9", "bottom": 1})
        money = book.add_format({"num_format": XLSX_MONEY_FORMAT})
        wrap = book.add_format({"text_wrap": True, "valign": "top"})
        top = book.add_format({"valign": "top"})
        for col, ((_, key, kind), header) in enumerate(
            zip(columns, headers(columns, lang), strict=True)
        ):
            ws.write_string(0, col, header, bold)
            width = _WIDTHS.get(key, 16 if kind == "money" else 12)
            ws.set_column(col, col, width, wrap if key == "reason" else top)
        rows = _rows(breaks)
        for i, r in enumerate(rows, start=1):
            for col, (_, key, kind) in enumerate(columns):
                value = r.get(key)
                if value is None or value == "":
                    ws.write_blank(i, col, None)
                elif kind == "money":
                    ws.write_number(i, col, float(_reais(value)), money)
                elif kind == "int":
                    ws.write_number(i, col, int(value))
                else:
                    text = _text(value, kind, lang, tz)
                    ws.write_string(i, col, text, wrap if key == "reason" else None)
        ws.freeze_panes(1, 0)
        ws.autofilter(0, 0, max(len(rows), 1), len(columns) - 1)
        book.close()
    finally:
        if mine:
            fh.close()
