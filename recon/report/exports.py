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
binary file object (the review app streams the queue's current filter this way).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import IO, Any, TypeAlias

import pyarrow as pa

from recon.money import format_cents
from recon.schemas import stake_cents

__all__ = ["COLUMNS", "XLSX_MONEY_FORMAT", "safe_cell", "write_br_csv", "write_xlsx"]

# (header, key, kind): kind "money" is cents shown in reais, "int" a count, "text" as is
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("priority", "priority", "text"),
    ("category", "category", "text"),
    ("break id", "break_id", "text"),
    ("intent id", "intent_id", "text"),
    ("end-to-end id", "end_to_end_id", "text"),
    ("expected (R$)", "expected_cents", "money"),
    ("actual (R$)", "actual_cents", "money"),
    ("difference (R$)", "delta_cents", "money"),
    ("at stake (R$)", "stake_cents", "money"),
    ("age (days)", "age_days", "int"),
    ("state", "state", "text"),
    ("first seen in run", "first_seen_run", "text"),
    ("reason", "reason", "text"),
)
XLSX_MONEY_FORMAT = "[$R$-416] #,##0.00;[Red]-[$R$-416] #,##0.00"
_WIDTHS = {"reason": 90, "category": 30, "intent_id": 38, "end_to_end_id": 34, "break_id": 22}

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


def write_br_csv(breaks: Rows, target: Target) -> None:
    """`;`-separated CSV, UTF-8 with BOM, CRLF, amounts in reais with a decimal comma."""
    text = io.StringIO(newline="")
    writer = csv.writer(text, delimiter=";", lineterminator="\r\n")
    writer.writerow([header for header, _, _ in COLUMNS])
    for r in _rows(breaks):
        cells = []
        for _, key, kind in COLUMNS:
            value = r.get(key)
            if value is None:
                cells.append("")
            elif kind == "money":
                cells.append(format_cents(int(value), decimal_mark=","))
            elif kind == "int":
                cells.append(str(int(value)))
            else:
                cells.append(safe_cell(str(value)))
        writer.writerow(cells)
    fh, mine = _open(target)
    try:
        fh.write(text.getvalue().encode("utf-8-sig"))
    finally:
        if mine:
            fh.close()


def write_xlsx(breaks: Rows, target: Target, *, sheet: str = "breaks") -> None:
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
        for col, (header, key, kind) in enumerate(COLUMNS):
            ws.write_string(0, col, header, bold)
            width = _WIDTHS.get(key, 16 if kind == "money" else 12)
            ws.set_column(col, col, width, wrap if key == "reason" else top)
        rows = _rows(breaks)
        for i, r in enumerate(rows, start=1):
            for col, (_, key, kind) in enumerate(COLUMNS):
                value = r.get(key)
                if value is None:
                    ws.write_blank(i, col, None)
                elif kind == "money":
                    ws.write_number(i, col, float(_reais(value)), money)
                elif kind == "int":
                    ws.write_number(i, col, int(value))
                else:
                    text = safe_cell(str(value))
                    ws.write_string(i, col, text, wrap if key == "reason" else None)
        ws.freeze_panes(1, 0)
        ws.autofilter(0, 0, max(len(rows), 1), len(COLUMNS) - 1)
        book.close()
    finally:
        if mine:
            fh.close()
