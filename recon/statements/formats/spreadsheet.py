"""Statements saved as spreadsheets: a sheet is a table of cells, read as the CSV reader reads.

Banks' internet banking saves statements "em Excel": a workbook (.xlsx, .xlsm, .ods, or the
binary .xls; recon.workbook opens them), or an ".xls" that is really an HTML table (read here)
or tab-separated text (read by the CSV reader as it is: it never reaches this module). Each
sheet's cells become rows of text, one text line per sheet row, and the CSV machinery reads
them: the header vocabulary and named bank layouts (recon.statements.banks), the preamble
(account, "Período: 01/11/2026 a 30/11/2026" → the statement's coverage), balance rows,
running balances and footers ("Total", "Lançamentos futuros") exactly as for a CSV. What a
sheet gives that a CSV does not is turned into the text a bank's CSV would hold:

- **numbers** → their decimal text at Excel's own precision (15 significant digits: a float
  that a formula left at 0.30000000000000004 is the 0.3 Excel shows), written with the
  decimal mark the sheet's text amounts use ("," when none do), never grouped; recon.money
  then parses that text into integer cents, so no float is ever multiplied into money;
- **dates and times** (date cells) → dd/mm/yyyy and dd/mm/yyyy HH:MM:SS; a number in the
  date column (a date cell that lost its format) is an Excel serial day (1900 date system);
- **merged cells**: a header written over two rows (a merged "Data" beside "Valor" over
  "Crédito | Débito") is composed into one header row; a value merged down over data rows
  (a day's date over its lines) is every one of those rows' value; a horizontal merge keeps
  its value in its first column, where the header's is too;
- blank rows and columns are skipped; text cells have their line breaks turned into spaces,
  and text stored as UTF-8 bytes read as Latin-1 ("DISPONÃ\x8dVEL", Itaú's .xls) is repaired;
- **several sheets**: each visible worksheet with a statement header is read (a warning
  names them and the lines each holds; their lines are numbered on, sheet after sheet); a
  sheet without one (a summary) and a chart sheet are skipped, and so is a hidden sheet
  (a person reading the workbook does not see it; it is often the raw data behind a visible
  one), with a warning when it has a statement header.

`source_line` is the sheet's row number (the first sheet read; later sheets continue after
the rows of those before them); errors name the file, the sheet and that row.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from recon.errors import StatementError
from recon.statements.formats import csv as csv_format
from recon.statements.formats import csv_sniff
from recon.statements.lines import Bad, ParseResult
from recon.workbook import OLE2, ZIP, Sheet, kind_of, read_workbook

__all__ = ["is_spreadsheet", "parse_file", "render_sheet", "sheets_read"]

DELIMITER = ";"  # the rendered text's; quoted by the csv module where a cell holds one
_EXCEL_EPOCH = datetime(1899, 12, 30)  # serial 1 = 1900-01-01 (Lotus's 1900-02-29 included)
_SERIAL_RANGE = (1.0, 2958466.0)  # 1900-01-01 .. 9999-12-31
_HTML = re.compile(rb"<(?:table|html)[\s>]", re.IGNORECASE)


def is_spreadsheet(head: bytes, path: Path | None = None) -> bool:
    """Whether a file starting with `head` is read here: a workbook by its magic bytes, or
    HTML holding a table (an ".xls" that is a web page)."""
    if head.startswith((OLE2, ZIP)):
        return kind_of(head, path) is not None
    text = head.lstrip(b"\xef\xbb\xbf").lstrip()
    return text[:1] == b"<" and _HTML.search(text[:4096]) is not None


# --------------------------------------------------------------------------- cells → text

_MOJIBAKE = re.compile("[\u00c2-\u00c3][\u0080-\u00bf\u2018-\u203a\u0152-\u0178\u02c6-\u02dc]")
# an amount typed as text, with its sign or D/C letter ("150,00 C", "D 1.234,56": formats/csv.py)
_AMOUNT_TEXT = re.compile(
    r"^\s*(?:[DdCc]\s*)?[\s(+-]*(?:R\$)?\s*\d[\d.,\s]*[.,]\d{2}\s*\)?-?\s*(?:[DdCc]\s*)?$"
)
_DATE_TEXT = re.compile(r"^\s*\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}")


def _repair(text: str) -> str:
    """Text whose UTF-8 bytes were read as Latin-1/cp1252, back as the UTF-8 it was."""
    if not _MOJIBAKE.search(text):
        return text
    for codec in ("latin-1", "cp1252"):
        try:
            return text.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
    return text


def number_text(value: float | int, mark: str = ",") -> str:
    """A number cell as decimal text at Excel's precision (15 significant digits), with
    `mark` as the decimal mark, never grouped, never in exponent form."""
    if isinstance(value, bool):
        return "VERDADEIRO" if value else "FALSO"
    if isinstance(value, int):
        return str(value)
    if value != value or value in (float("inf"), float("-inf")):
        return ""
    try:
        d = Decimal(format(value, ".15g"))
    except InvalidOperation:
        return ""
    if d == 0:
        return "0"
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text.replace(".", mark) if mark != "." else text


def _cell(value: Any, mark: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        if not value:
            return ""
        return " ".join(_repair(value).replace("\u00a0", " ").splitlines()).replace("\t", " ")
    if isinstance(value, (int, float)):
        return number_text(value, mark)
    if isinstance(value, datetime):
        return value.strftime("%d/%m/%Y %H:%M:%S")
    if isinstance(value, date):
        return value.strftime("%d/%m/%Y")
    if isinstance(value, time):
        return value.strftime("%H:%M:%S")
    return " ".join(str(value).split())


def _is_value(value: Any) -> bool:
    """A number, date or text that reads as an amount or a date: what data rows hold."""
    if isinstance(value, str):
        return bool(_AMOUNT_TEXT.match(value) or _DATE_TEXT.match(value))
    return value is not None and not isinstance(value, bool)


def _decimal_mark(rows: Sequence[Sequence[Any]]) -> str:
    """The decimal mark the sheet's text amounts use: "." when most say so, else ","."""
    votes = {",": 0, ".": 0}
    for row in rows:
        for v in row:
            if isinstance(v, str) and _AMOUNT_TEXT.match(v):
                s = v.strip().rstrip(")-DdCc ").strip()
                votes[s[-3]] = votes.get(s[-3], 0) + 1
    return "." if votes["."] > votes[","] else ","


def _merged(sheet: Sheet) -> list[list[Any]]:
    """The sheet's rows with its merged cells resolved (module doc): a copy."""
    rows = [list(row) for row in sheet.rows]
    width = max((len(row) for row in rows), default=0)
    for row in rows:
        row.extend([""] * (width - len(row)))
    spans = sorted(sheet.merges)
    for (r0, c0), (r1, _c1) in spans:
        if r1 <= r0 or r0 >= len(rows) or c0 >= width:
            continue
        r1 = min(r1, len(rows) - 1)
        below = rows[r0 + 1 : r1 + 1]
        if any(_is_value(v) for row in below for v in row):
            for r in range(r0 + 1, r1 + 1):  # a value merged down over data rows
                if rows[r][c0] in ("", None):
                    rows[r][c0] = rows[r0][c0]
            continue
        # Text only below: a header written over rows r0..r1, when composing them makes a
        # header (a preamble block merged down, the bank's logo beside its name and
        # account, composes into no header and is left as it is).
        composed = _compose(rows, r0, r1, spans)
        if csv_sniff.is_header(composed):
            rows[r0] = list(composed)
            for r in range(r0 + 1, r1 + 1):
                rows[r] = [""] * width
    return rows


def _compose(
    rows: list[list[Any]], r0: int, r1: int, spans: Sequence[tuple[tuple[int, int], ...]]
) -> list[str]:
    """Rows r0..r1 as one header row: each column's lowest label, a parent label spread
    over the columns its merge covers when they have none of their own."""
    top = [_cell(v, ",") for v in rows[r0]]
    for (a, b), (_c, d) in spans:
        if a == r0 and d > b:
            for c in range(b + 1, min(d + 1, len(top))):
                top[c] = top[c] or top[b]
    for r in range(r0 + 1, r1 + 1):
        for c, v in enumerate(rows[r][: len(top)]):
            text = _cell(v, ",")
            if text:
                top[c] = text
    return top


def _render(rows: Sequence[Sequence[Any]], mark: str) -> str:
    """The rows as text lines; a date in a column that also holds times is written with
    00:00:00 (calamine gives a midnight date-time cell as a date), so one format reads it."""
    timed = {c for row in rows for c, v in enumerate(row) if isinstance(v, datetime)}
    out = io.StringIO()
    writer = csv.writer(out, delimiter=DELIMITER, lineterminator="\n")
    for row in rows:
        cells = [
            _cell(datetime(v.year, v.month, v.day), mark)
            if c in timed and isinstance(v, date) and not isinstance(v, datetime)
            else _cell(v, mark)
            for c, v in enumerate(row)
        ]
        writer.writerow(cells if any(cells) else [])
    return out.getvalue()


def _serial(value: Any) -> Any:
    """An Excel serial day in a date column, as the datetime it stands for."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if not _SERIAL_RANGE[0] <= value < _SERIAL_RANGE[1]:
        return value
    moment = _EXCEL_EPOCH + timedelta(days=float(value))
    moment = moment.replace(microsecond=0)
    if moment.time() == time(0):
        return moment.date()
    return moment


@dataclass
class SheetRead:
    """How one sheet reads: its text (one line per row), the profile that reads it, and what
    was set aside before the CSV reader saw it."""

    sheet: Sheet
    text: str
    profile: csv_format.CsvProfile | None
    notes: list[str] = field(default_factory=list)


def render_sheet(sheet: Sheet, csv_profile: Any = None) -> SheetRead:
    """A sheet as the text the CSV reader reads, with the profile that reads it (sniffed, or
    `csv_profile` given with --csv-profile); profile None when it has no statement header."""
    rows = _merged(sheet)
    given = None
    if csv_profile is not None:
        given = replace(csv_format.resolve_profile(csv_profile, Path()), delimiter=DELIMITER)
    mark = given.decimal_mark if given is not None and given.decimal_mark else None
    mark = mark or _decimal_mark(rows)
    text = _render(rows, mark)
    profile = given if given is not None else _sniff(text)
    if profile is None:
        return SheetRead(sheet, text, None)
    found = _columns(rows, profile, mark)
    if found is None:
        return SheetRead(sheet, text, profile)
    start, where = found
    if "booked_at" in where:  # a date cell that lost its format: an Excel serial day
        index = where["booked_at"]
        changed = False
        for row in rows[start:]:
            if index < len(row):
                value = _serial(row[index])
                changed = changed or value is not row[index]
                row[index] = value
        if changed and given is None:
            profile = _sniff(_render(rows, mark)) or profile
    notes = _tidy(rows, start, where, profile)
    return SheetRead(sheet, _render(rows, mark), profile, notes)


def _sniff(text: str) -> csv_format.CsvProfile | None:
    head = text[: csv_format.HEAD_BYTES]
    if len(text) > csv_format.HEAD_BYTES:
        head = head[: head.rfind("\n") + 1]
    return csv_format.sniff_head(head)


def _columns(
    rows: Sequence[Sequence[Any]], profile: csv_format.CsvProfile, mark: str
) -> tuple[int, dict[str, int]] | None:
    """(first data row, recon field -> column) as the profile reads the sheet."""
    if profile.headerless:
        return (profile.skip_lines or 0), {t: int(c[1:]) for t, c in profile.columns.items()}
    name = profile.columns["booked_at"]
    first = profile.skip_lines or 0
    for r in range(first, min(len(rows), first + csv_sniff.HEAD_LINES + 1)):
        cells = [_cell(v, mark).strip() for v in rows[r]]
        if name in cells:
            where = {t: cells.index(c) for t, c in profile.columns.items() if c in cells}
            return r + 1, where
    return None


def _text(value: Any) -> str:
    return _cell(value, ",").strip()


def _tidy(
    rows: list[list[Any]], start: int, where: dict[str, int], profile: csv_format.CsvProfile
) -> list[str]:
    """Set aside what a sheet holds around its table that a bank's CSV would not: rows of
    text only between the lines (a section title, "lançamentos"), and the block after the
    statement's last line (an account summary, a disclaimer). A footer the CSV reader stops
    at ("Total", "Lançamentos futuros") and balance rows ("Saldo final") are left to it."""
    money = [where[t] for t in ("amount", "credit", "debit") if t in where]
    date_i, balance_i = where.get("booked_at"), where.get("balance")

    def filled(row: list[Any], i: int | None) -> bool:
        return i is not None and i < len(row) and bool(_text(row[i]))

    def footer(row: list[Any]) -> bool:
        texts = [t for t in (_text(v) for v in row) if t]
        return bool(texts) and not texts[0][:1].isdigit() and csv_format.is_footer(texts[0])

    def kept(row: list[Any]) -> bool:
        texts = [t for t in (_text(v) for v in row) if t]
        if not texts:
            return False
        has_money = any(filled(row, i) and _is_value(row[i]) for i in money)
        if filled(row, date_i) and _is_value(row[date_i]) and has_money:  # type: ignore[index]
            return True
        said_balance = any(csv_format.is_balance_label(t) for t in texts)
        return said_balance and (has_money or filled(row, balance_i))

    # the reader stops at a footer: what follows it is its to count, not set aside here
    end = next((r for r in range(start, len(rows)) if footer(rows[r])), len(rows))
    last = max((r for r in range(start, end) if kept(rows[r])), default=start - 1)
    notes = []
    titles = []
    for r in range(start, last + 1):
        row = rows[r]
        if any(_is_value(v) for v in row) or kept(row) or not any(_text(v) for v in row):
            continue
        if profile.continuation:  # Bradesco: a text row continues the line above
            continue
        titles.append(r + 1)
        rows[r] = [""] * len(row)
    if titles:
        shown = ", ".join(map(str, titles[:5])) + (", …" if len(titles) > 5 else "")
        notes.append(f"{len(titles)} rows of text only (section titles) skipped: row {shown}")
    after = [r for r in range(last + 1, end) if any(_text(v) for v in rows[r])]
    if after and last >= start:
        first_text = next(t for t in (_text(v) for v in rows[after[0]]) if t)
        notes.append(
            f"rows {after[0] + 1}–{after[-1] + 1} after the statement's last line (row "
            f"{last + 1}) not read: {len(after)} rows of another block (starting "
            f"{first_text[:40]!r})"
        )
        for r in after:
            rows[r] = [""] * len(rows[r])
    return notes


# --------------------------------------------------------------------------- HTML tables


def _html_sheets(path: Path) -> list[Sheet]:
    """An ".xls" that is a web page: its tables' cells as one sheet (a bank puts the account
    and period in one table and the lines in the next), read with lxml's HTML parser (no
    network, no DTD; HTML has no entity declarations to expand)."""
    from lxml import etree

    raw = path.read_bytes()
    if b"urn:schemas-microsoft-com:office:spreadsheet" in raw[:4096]:
        raise StatementError(
            f"{path}: an XML Spreadsheet 2003 file, which recon does not read yet; open it in "
            "the spreadsheet program and save it as .xlsx"
        )
    text = csv_sniff.decode_auto(raw)[0]
    parser = etree.HTMLParser(
        no_network=True, remove_comments=True, remove_pis=True, huge_tree=False
    )
    try:
        root = etree.fromstring(text, parser)
    except (etree.LxmlError, ValueError) as exc:
        raise StatementError(f"{path}: an HTML page that cannot be read ({exc})") from None
    if root is None:
        raise StatementError(f"{path}: an empty HTML page")
    rows: list[list[Any]] = []
    merges: list[tuple[tuple[int, int], tuple[int, int]]] = []
    tables = [t for t in root.iter("table") if not t.xpath(".//table")]  # innermost ones
    for table in tables:
        _html_table(table, rows, merges)
        rows.append([])
    if not tables:
        raise StatementError(f"{path}: an HTML page with no table")
    width = max((len(r) for r in rows), default=0)
    for r in rows:
        r.extend([""] * (width - len(r)))
    return [Sheet("html", rows, merges)]


def _span(cell: Any, name: str) -> int:
    try:
        return max(1, min(int(cell.get(name, "1")), 1000))
    except ValueError:
        return 1


def _html_table(
    table: Any, rows: list[list[Any]], merges: list[tuple[tuple[int, int], tuple[int, int]]]
) -> None:
    taken: set[tuple[int, int]] = set()
    for tr in table.iter("tr"):
        if next(a for a in tr.iterancestors("table")) is not table:
            continue
        r = len(rows)
        row: list[Any] = []
        c = 0
        for cell in tr:
            if cell.tag not in ("td", "th"):
                continue
            while (r, c) in taken:
                c += 1
            text = " ".join(" ".join(cell.itertext()).split())
            across, down = _span(cell, "colspan"), _span(cell, "rowspan")
            for dr in range(down):
                for dc in range(across):
                    taken.add((r + dr, c + dc))
            while len(row) <= c:
                row.append("")
            row[c] = text
            if across > 1 or down > 1:
                merges.append(((r, c), (r + down - 1, c + across - 1)))
            c += across
        rows.append(row)


# --------------------------------------------------------------------------- files


def _sheets(path: Path) -> tuple[str, list[Sheet]]:
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    kind = kind_of(head, path)
    if kind is not None or head.startswith((OLE2, ZIP)):
        return kind or "workbook", read_workbook(path)
    return "html", _html_sheets(path)


def sheets_read(path: Path, csv_profile: Any = None) -> tuple[str, list[SheetRead], list[str]]:
    """(workbook kind, the sheets read, notes on those skipped); a StatementError when no
    sheet holds a statement."""
    kind, sheets = _sheets(path)
    picked: list[SheetRead] = []
    notes: list[str] = []
    seen: list[SheetRead] = []
    for sheet in sheets:
        if sheet.chart:
            notes.append(f"sheet {sheet.name!r} skipped: a chart")
            continue
        if not any(any(_cell(v, ",") for v in row) for row in sheet.rows):
            notes.append(f"sheet {sheet.name!r} skipped: empty")
            continue
        read = render_sheet(sheet, csv_profile)
        seen.append(read)
        if read.profile is None:
            notes.append(f"sheet {sheet.name!r} skipped: no statement header")
        elif not sheet.visible:
            notes.append(
                f"hidden sheet {sheet.name!r} has a statement header but is not read (a "
                "hidden sheet is not what a person reading the workbook sees)"
            )
        else:
            picked.append(read)
            notes.extend(f"sheet {sheet.name!r}: {n}" for n in read.notes)
    if not picked:
        names = ", ".join(repr(s.name) for s in sheets) or "none"
        detail = ""
        if seen:
            biggest = max(seen, key=lambda s: len(s.sheet.rows))
            said = str(csv_format.unknown_shape(biggest.text, "sheet"))
            detail = "; " + said.removeprefix("sheet: CSV of an unknown shape: ")
        raise StatementError(
            f"{path}: no sheet of this {kind} workbook has a statement header (a date "
            f"and an amount column); sheets: {names}{detail}"
        )
    return kind, picked, notes


def parse_file(path: Path, csv_profile: Any = None) -> ParseResult:
    """Parse a spreadsheet statement (module doc)."""
    kind, picked, notes = sheets_read(path, csv_profile)
    out = ParseResult()
    offset = 0
    spans = []
    for read in picked:
        assert read.profile is not None
        source = f"{path} sheet {read.sheet.name!r}"
        result = csv_format.parse_text(read.text, source, read.profile)
        n = result.to_table().num_rows
        first = offset + 1
        _shift(result, offset, read.sheet.name)
        _merge(out, result)
        spans.append((read.sheet.name, n, first, offset + len(read.sheet.rows)))
        if not out.info:
            out.info = dict(result.info)
        offset += len(read.sheet.rows)
    if len(picked) > 1:
        listed = ", ".join(f"{name!r} ({n} lines, lines {a}–{b})" for name, n, a, b in spans)
        out.warnings.insert(0, f"read {len(picked)} sheets with a statement header: {listed}")
    out.warnings.extend(notes)
    out.info.pop("delimiter", None)
    out.info.update(
        encoding=None,
        workbook=kind,
        sheet=picked[0].sheet.name if len(picked) == 1 else [r.sheet.name for r in picked],
    )
    return out


def _shift(result: ParseResult, offset: int, sheet: str) -> None:
    """A later sheet's lines numbered on after the rows of the sheets before it."""
    if not offset:
        return
    result.rows = [(row[0] + offset, *row[1:]) for row in result.rows]
    if result.table is not None:
        i = result.table.schema.get_field_index("source_line")
        column = pc.add(result.table.column(i), pa.scalar(offset, pa.int64()))
        result.table = result.table.set_column(i, "source_line", column)
    result.bad = [
        Bad(
            b.source_line + offset,
            b.field,
            f"{b.reason} (sheet {sheet!r}, row {b.source_line})",
            b.raw,
        )
        for b in result.bad
    ]


def _merge(out: ParseResult, more: ParseResult) -> None:
    out.rows.extend(more.rows)
    if more.table is not None:
        out.table = more.table if out.table is None else pa.concat_tables([out.table, more.table])
    out.bad.extend(more.bad)
    out.checks.extend(more.checks)
    out.warnings.extend(more.warnings)
    if more.coverage is not None:
        # the CSV reader's label, said of the workbook it came from
        said = [c._replace(basis=c.basis.replace("csv ", "spreadsheet ")) for c in more.coverage]
        out.coverage = (out.coverage or []) + said
