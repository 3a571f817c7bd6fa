"""Spreadsheet workbooks as cells: what a file is by its magic bytes, and its sheets' values.

Banks' internet banking hands statements over as workbooks ("Salvar em Excel"): OOXML
(.xlsx, .xlsm), OpenDocument (.ods) and the old binary Excel format (.xls, an OLE2 compound
file). python-calamine reads all three in Rust; this module is the one place that opens a
workbook, so the statement reader (recon.statements.formats.spreadsheet), the masking of kept inbox
files (recon.pii) and `recon erase` see the same cells.

A file is a workbook by its content, never by its name:

- a zip whose members are OOXML's (``[Content_Types].xml`` and ``xl/``): "xlsx";
- a zip whose first member ``mimetype`` says ``application/vnd.oasis.opendocument.spreadsheet``:
  "ods";
- an OLE2 compound file (``D0 CF 11 E0 A1 B1 1A E1``): "xls", or "encrypted" when it holds an
  ``EncryptedPackage`` (a password-protected OOXML workbook, which is stored that way).

Refused with one clear error, never read: a password-protected or encrypted workbook, a binary
workbook (.xlsb: its cells cannot be bounded before calamine loads them), a damaged file, and
a sheet of more than MAX_CELLS cells (calamine holds a sheet as a dense grid, so one cell
written at XFD1048576 would ask for 17 billion; the grid's extent is read from the sheet's XML
before it is loaded).
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recon.errors import StatementError

__all__ = ["MAX_CELLS", "Sheet", "kind_of", "read_workbook", "workbook_text"]

OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
ZIP = b"PK\x03\x04"
ODS_MIME = b"application/vnd.oasis.opendocument.spreadsheet"
_ENCRYPTED = "EncryptedPackage".encode("utf-16-le")
_WORKBOOK_STREAMS = ("Workbook".encode("utf-16-le"), "Book".encode("utf-16-le"))
# A statement sheet of a million lines and ten columns fits; a grid past this is refused.
MAX_CELLS = 10_000_000
_SCAN_CHUNK = 1 << 20


@dataclass
class Sheet:
    """One sheet's cells as calamine gives them (str, int, float, bool, date, datetime, time,
    timedelta; "" for an empty cell), every row as wide as the sheet, from cell A1, so
    `rows[r][c]` is row r + 1 and column c + 1 as a person sees them."""

    name: str
    rows: list[list[Any]]
    merges: list[tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    visible: bool = True
    chart: bool = False  # a chart sheet: no cells


def kind_of(head: bytes, path: Path | None = None) -> str | None:
    """ "xlsx" | "ods" | "xls" | "xlsb" | "encrypted" for a workbook starting with `head`
    (with `path`, a zip's members are read from its directory), else None."""
    if head.startswith(OLE2):
        if path is not None:
            with path.open("rb") as fh:
                whole = fh.read(64 << 20)
        else:
            whole = head
        if _ENCRYPTED in whole:
            return "encrypted"
        if path is not None and not any(s in whole for s in _WORKBOOK_STREAMS):
            return None  # a Word document or an Outlook message, not a workbook
        return "xls"
    if not head.startswith(ZIP):
        return None
    if head[30:38] == b"mimetype" and head[38 : 38 + len(ODS_MIME)] == ODS_MIME:
        return "ods"
    names: list[str]
    if path is not None:
        try:
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
        except (zipfile.BadZipFile, OSError, ValueError):
            names = _local_names(head)
    else:
        names = _local_names(head)
    if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
        if any(n.startswith("xl/") and n.endswith(".bin") and "worksheets" in n for n in names):
            return "xlsb"
        return "xlsx"
    if "mimetype" in names and "content.xml" in names and path is not None:
        try:
            with zipfile.ZipFile(path) as z:
                if z.read("mimetype").strip() == ODS_MIME:
                    return "ods"
        except (zipfile.BadZipFile, OSError, KeyError, ValueError, zlib.error):
            return None
    return None


def _local_names(head: bytes) -> list[str]:
    """The member names of the zip local headers in `head` (a zip's start, no directory)."""
    names = []
    for m in re.finditer(re.escape(ZIP), head):
        at = m.start()
        if at + 30 > len(head):
            break
        size = int.from_bytes(head[at + 26 : at + 28], "little")
        names.append(head[at + 30 : at + 30 + size].decode("cp437", "replace"))
    return names


def _refuse(path: Path, why: str) -> StatementError:
    return StatementError(f"{path}: {why}")


def read_workbook(path: Path) -> list[Sheet]:
    """Every sheet of the workbook at `path`, in the workbook's order (see module doc)."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    kind = kind_of(head, path)
    if kind is None:
        raise _refuse(path, "not a workbook (xlsx, xlsm, xls or ods)")
    if kind == "encrypted":
        raise _refuse(
            path,
            "a password-protected workbook: recon cannot read it; open it in the spreadsheet "
            "program, remove the password (or save a copy without one) and import that",
        )
    if kind == "xlsb":
        raise _refuse(path, "a binary workbook (.xlsb): save it as .xlsx and import that")
    for number, (rows, cols) in sorted(_extents(path, kind).items()):
        if rows * cols > MAX_CELLS:  # checked before calamine opens it (ods: it loads all)
            raise _refuse(
                path,
                f"sheet {number + 1} spans {rows:,} rows by {cols:,} columns; recon reads "
                f"sheets of at most {MAX_CELLS:,} cells",
            )
    import python_calamine

    try:
        # from a file object, so calamine tells the format by content (from a path it goes
        # by the extension, and a kept .xls rewritten as xlsx, or a mislabelled bank file,
        # would not open)
        with path.open("rb") as fh:
            book = python_calamine.CalamineWorkbook.from_filelike(fh)
        sheets = []
        for i, meta in enumerate(book.sheets_metadata):
            visible = meta.visible == python_calamine.SheetVisibleEnum.Visible
            if meta.typ != python_calamine.SheetTypeEnum.WorkSheet:
                sheets.append(Sheet(meta.name, [], visible=visible, chart=True))
                continue
            sheet = book.get_sheet_by_index(i)
            if sheet.height * sheet.width > MAX_CELLS:  # xls: bounded by the format itself
                raise _refuse(
                    path,
                    f"sheet {meta.name!r} spans {sheet.height:,} rows by {sheet.width:,} "
                    f"columns; recon reads sheets of at most {MAX_CELLS:,} cells",
                )
            cells = sheet.to_python(skip_empty_area=False) if sheet.height else []
            merges = list(sheet.merged_cell_ranges or [])
            sheets.append(Sheet(meta.name, [list(r) for r in cells], merges, visible))
    except StatementError:
        raise
    except (KeyboardInterrupt, SystemExit, MemoryError):
        raise
    except BaseException as exc:  # calamine's errors, and a Rust panic (a BaseException)
        if isinstance(exc, python_calamine.PasswordError):
            raise _refuse(path, "a password-protected workbook: recon cannot read it") from None
        said = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise _refuse(path, f"damaged or unreadable {kind} workbook ({said})") from None
    return sheets


def _extents(path: Path, kind: str) -> dict[int, tuple[int, int]]:
    """(rows, columns) each sheet's cells span, by sheet index, read from its XML without
    building the grid (xlsx: the cells' references; ods: rows and columns repeated)."""
    if kind not in ("xlsx", "ods"):
        return {}
    try:
        with zipfile.ZipFile(path) as z:
            if kind == "xlsx":
                return _xlsx_extents(z)
            if kind == "ods":
                return _ods_extents(z)
    except zipfile.BadZipFile as exc:
        raise _refuse(path, f"damaged or unreadable {kind} workbook ({exc})") from None
    except (OSError, KeyError, ValueError, EOFError, RuntimeError, zlib.error) as exc:
        said = " ".join(str(exc).split())[:200] or type(exc).__name__
        raise _refuse(path, f"damaged or unreadable {kind} workbook ({said})") from None
    return {}


_REF = re.compile(rb'<(?:\w+:)?c\b[^>]*?\br="([A-Z]{1,3})([0-9]{1,7})"')
_SHEET_ENTRY = re.compile(rb'<(?:\w+:)?sheet\b[^>]*?\br:id="([^"]+)"')
_REL = re.compile(rb"<(?:\w+:)?Relationship\b([^>]*)>")


def _chunks(z: zipfile.ZipFile, name: str) -> Iterator[bytes]:
    """A member's bytes in overlapping chunks (a token never falls between two)."""
    tail = b""
    with z.open(name) as fh:
        while True:
            block = fh.read(_SCAN_CHUNK)
            if not block:
                if tail:
                    yield tail
                return
            data = tail + block
            cut = data.rfind(b"<")
            if cut <= 0:
                yield data
                tail = b""
            else:
                yield data[:cut]
                tail = data[cut:]


def _column(letters: bytes) -> int:
    n = 0
    for ch in letters:
        n = n * 26 + ch - 64
    return n


def _xlsx_extents(z: zipfile.ZipFile) -> dict[int, tuple[int, int]]:
    book = z.read("xl/workbook.xml")
    rels = z.read("xl/_rels/workbook.xml.rels")
    targets: dict[bytes, str] = {}
    for m in _REL.finditer(rels):
        attrs = dict(re.findall(rb'(\w+)="([^"]*)"', m.group(1)))
        if b"Id" in attrs and b"Target" in attrs:
            target = attrs[b"Target"].decode("utf-8", "replace").lstrip("/")
            targets[attrs[b"Id"]] = target if target.startswith("xl/") else f"xl/{target}"
    names = set(z.namelist())
    out: dict[int, tuple[int, int]] = {}
    for i, m in enumerate(_SHEET_ENTRY.finditer(book)):
        member = targets.get(m.group(1))
        if member is None or member not in names:
            continue
        rows = cols = 0
        for chunk in _chunks(z, member):
            for ref in _REF.finditer(chunk):
                rows = max(rows, int(ref.group(2)))
                cols = max(cols, _column(ref.group(1)))
        out[i] = (rows, cols)
    return out


_ODS_TOKEN = re.compile(
    rb"<table:table\b(?=[\s>])|<table:table-row\b([^>]*?)(/?)>|</table:table-row>"
    rb"|<table:(?:covered-)?table-cell\b([^>]*?)(/?)>"
)
_ROWS_REPEATED = re.compile(rb'table:number-rows-repeated="([0-9]+)"')
_COLUMNS_REPEATED = re.compile(rb'table:number-columns-repeated="([0-9]+)"')


def _ods_extents(z: zipfile.ZipFile) -> dict[int, tuple[int, int]]:
    """Rows and columns up to the last cell that holds something: a repeat of empty cells
    (LibreOffice writes one to the sheet's end) counts only when a value follows it."""
    out: dict[int, tuple[int, int]] = {}
    sheet = -1
    rows = cols = row = col = 0
    repeat = 1
    row_filled = False
    for chunk in _chunks(z, "content.xml"):
        for m in _ODS_TOKEN.finditer(chunk):
            token = m.group(0)
            if token.startswith(b"<table:table") and not token.startswith(b"<table:table-"):
                if sheet >= 0:
                    out[sheet] = (rows, cols)
                sheet += 1
                rows = cols = row = 0
            elif token.startswith(b"<table:table-row"):
                found = _ROWS_REPEATED.search(m.group(1) or b"")
                repeat = int(found.group(1)) if found else 1
                col, row_filled = 0, False
                if m.group(2):  # an empty row, self-closed
                    row += repeat
            elif token == b"</table:table-row>":
                row += repeat
                if row_filled:
                    rows = max(rows, row)
            else:
                found = _COLUMNS_REPEATED.search(m.group(3) or b"")
                span = int(found.group(1)) if found else 1
                col += span
                if not m.group(4) or b"office:value-type" in (m.group(3) or b""):
                    row_filled = True
                    cols = max(cols, col)
    if sheet >= 0:
        out[sheet] = (rows, cols)
    return out


def workbook_text(path: Path) -> str:
    """Every cell of every sheet as text, one line per row (cells joined by tabs): what
    `recon erase` searches a kept workbook for."""
    lines = []
    for sheet in read_workbook(path):
        lines.append(sheet.name)
        for row in sheet.rows:
            cells = [_cell_text(v) for v in row]
            if any(cells):
                lines.append("\t".join(cells))
    return "\n".join(lines)


def _cell_text(value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)
