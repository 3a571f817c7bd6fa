"""`recon erase --document D`: remove a person's data from a data directory (LGPD art. 18).

What identifies the person: the keyed hash of the document's digits (recon.pii), which is
how snapshots and statement lines store a full CPF/CNPJ or a PIX key made of it, and the
document masked as BACEN shows it, which is all the API and most banks give of a payer.

What is removed, and what is kept:
- snapshots: in the intents that name the person (their payee key, or their masked payer
  document), the personal fields are emptied: names, masked document, PIX keys and their
  hashes, `metadata` and `raw`. The intent itself (id, type, status, amounts, times) stays:
  it is the service's own financial record, which it must keep;
- statement lines: on the lines that name the person, the counterparty's name, document,
  key (and their hashes) and the description are emptied; amount, time and PIX ids stay,
  as the bank's own record of money that moved;
- quarantined lines, runs and reports: every occurrence of the person's names, masked
  document and masked keys in any text (reasons, raw lines, exports, summary.json, the HTML
  report; as written and as JSON and HTML escape it) becomes ``[erased]``;
- kept inbox files (inbox/processed, inbox/failed) that name the person are deleted (a
  workbook is searched cell by cell, recon.workbook: its bytes are compressed).

The order makes a run cut short safe to run again: first every text that names the person
is read from the snapshots and statement lines (nothing written), then the places that
only copy those texts (quarantine, runs, reports, inbox) are cleaned, and the snapshots and
statement lines last. A second erase finds the texts again as long as those still hold
them, so it finishes what the first left.

The review app's audit trail (`audit.jsonl`) is hash-chained and never rewritten; it holds
who decided what and their notes, never statement or intent data, so nothing is erased
there. A later run rebuilds nothing of the person: the stored inputs no longer hold them.
"""

from __future__ import annotations

import html
import io
import json
import os
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recon import pii
from recon.config import DataDir
from recon.errors import StatementError, UsageError
from recon.extract.snapshot import PART_OPTIONS, ROW_GROUP_ROWS
from recon.statements.store import QUARANTINE_DIR
from recon.storage import writer_lock

__all__ = ["ERASED", "EraseResult", "erase_document"]

ERASED = "[erased]"

_INTENT_FIELDS = (
    "party_display_name",
    "party_document_masked",
    "pix_recipient_name",
    "pix_key_value",
    "destination_address",
    "destination_address_hash",
    "metadata",
    "raw",
)
_LINE_FIELDS = (
    "counterparty_name",
    "counterparty_document",
    "counterparty_document_hash",
    "counterparty_key",
    "counterparty_key_hash",
    "description",
)
# the texts of the person to erase elsewhere: their name on every intent that names them;
# the payee's key and name only where they are the payee (their key's hash): on an onramp
# they pay, pixInfo is the service's own key and name, which stay
_PARTY_TEXTS = ("party_display_name",)
_PAYEE_TEXTS = ("pix_recipient_name", "destination_address", "pix_key_value")
_LINE_TEXTS = ("counterparty_name", "counterparty_key")


@dataclass
class EraseResult:
    """What `erase_document` changed."""

    intents: int = 0
    lines: int = 0
    files_rewritten: list[str] = field(default_factory=list)
    files_deleted: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"erased: {self.intents} intent row(s), {self.lines} statement line(s); "
            f"{len(self.files_rewritten)} file(s) rewritten, "
            f"{len(self.files_deleted)} kept inbox file(s) deleted"
        )


def _digits(document: str) -> str:
    digits = re.sub(r"[^0-9]", "", document)
    if len(digits) not in (11, 14) or re.search(r"[^0-9.\-/\s]", document.strip()):
        raise UsageError(f"--document {document!r} is not a CPF (11 digits) or a CNPJ (14 digits)")
    return digits


def _masks(digits: str) -> set[str]:
    """The ways the person's document shows, masked, in stored text."""
    formatted = (
        f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"
        if len(digits) == 11
        else f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}/{digits[8:12]}-{digits[12:]}"
    )
    return {pii.mask_document(formatted), pii.mask_document(digits)}


@dataclass(frozen=True)
class _Person:
    """What identifies the person in stored rows: their document's hash and masks."""

    digest: str
    masks: frozenset[str]

    def intents(self) -> dict[str, set[str]]:
        return {"destination_address_hash": {self.digest}, "party_document_masked": set(self.masks)}

    def payee(self) -> dict[str, set[str]]:
        return {"destination_address_hash": {self.digest}}

    def texts(self, rows: pa.Table, intents: bool) -> set[str]:
        """Their texts in `rows` (intents or statement lines): see _PARTY_TEXTS."""
        if not intents:
            return _collect(rows, _any_equal(rows, self.lines()), _LINE_TEXTS)
        texts = _collect(rows, _any_equal(rows, self.intents()), _PARTY_TEXTS)
        return texts | _collect(rows, _any_equal(rows, self.payee()), _PAYEE_TEXTS)

    def lines(self) -> dict[str, set[str]]:
        return {
            "counterparty_document_hash": {self.digest},
            "counterparty_key_hash": {self.digest},
            "counterparty_document": set(self.masks),
        }


def _rewrite(path: Path, table: pa.Table, **options: Any) -> None:
    """Write `table` over `path` atomically (zstd, or the file kind's own `options`)."""
    tmp = path.with_name(f".tmp-{path.name}.erase")
    pq.write_table(table, tmp, **(options or {"compression": "zstd"}))
    os.replace(tmp, path)


def _blank(table: pa.Table, rows: pa.Array, fields: tuple[str, ...]) -> pa.Table:
    for name in fields:
        i = table.schema.get_field_index(name)
        if i < 0:
            continue
        column = table.column(i)
        nulls = pa.nulls(len(column), column.type)
        table = table.set_column(i, table.field(i), pc.if_else(rows, nulls, column))
    return table


def _any_equal(table: pa.Table, values: dict[str, set[str]]) -> pa.Array:
    hit = pa.array([False] * table.num_rows, pa.bool_())
    for name, wanted in values.items():
        if name in table.schema.names and wanted:
            column = table.column(name).cast(pa.string())
            found = pc.fill_null(pc.is_in(column, value_set=pa.array(sorted(wanted))), False)
            hit = pc.or_(hit, found)
    return hit


def _count(rows: pa.Array) -> int:
    return int(pc.sum(rows.cast(pa.int64())).as_py() or 0)


def _collect(table: pa.Table, rows: pa.Array, fields: tuple[str, ...]) -> set[str]:
    """The texts (names, masked keys) of the person in the matched rows, to erase elsewhere."""
    out: set[str] = set()
    chosen = table.filter(rows)
    for name in fields:
        if name in chosen.schema.names:
            out |= {v for v in chosen.column(name).to_pylist() if isinstance(v, str) and v}
    return out


def _spellings(texts: Iterable[str]) -> list[str]:
    """The texts as files hold them: as written, JSON-escaped (summary.json writes ASCII:
    ``Jos\\u00e9``) and HTML-escaped (the report: ``D&#39;Ávila``); longest first, so a
    name is replaced before a shorter text inside it."""
    out: set[str] = set()
    for text in texts:
        escaped = html.escape(text, quote=False)
        out |= {
            text,
            json.dumps(text)[1:-1],
            json.dumps(text, ensure_ascii=False)[1:-1],
            html.escape(text),
            escaped.replace("'", "&#39;").replace('"', "&#34;"),
        }
    return sorted((t for t in out if t), key=lambda t: (-len(t), t))


def erase_document(data: DataDir | str | os.PathLike[str], document: str) -> EraseResult:
    """Remove the person with `document` (CPF/CNPJ, bare or formatted) from `data`."""
    digits = _digits(document)
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    person = _Person(pii.digest(digits), frozenset(_masks(digits)))
    result = EraseResult()
    if dd.remote:  # never report "nothing found" for data this code cannot see
        raise UsageError(
            f"{dd.uri}: recon erase does not rewrite Delta tables on object storage yet (the "
            "old files would stay readable by time travel until a VACUUM); erase there by hand"
        )
    with writer_lock(dd.root, "erase"):
        _erase_local(dd, person, result)
    return result


# ------------------------------------------------------------------------ a local data dir


def _erase_local(dd: DataDir, person: _Person, result: EraseResult) -> None:
    snapshots = sorted(dd.snapshots.rglob("*.parquet"))
    lines = sorted(p for p in dd.statements.rglob("*.parquet") if QUARANTINE_DIR not in p.parts)
    # 1. what names the person (nothing written yet; only the columns that say it)
    texts = set(person.masks)
    for paths, intents in ((snapshots, True), (lines, False)):
        for path in paths:
            present = set(pq.read_schema(path).names)
            wanted = _TEXT_SOURCES[intents]
            table = pq.read_table(path, columns=[c for c in wanted if c in present])
            texts |= person.texts(table, intents)
    texts = {t for t in texts if len(t) >= 3}
    # 2. what copies those texts
    for path in sorted((dd.statements / QUARANTINE_DIR).glob("*.parquet")):
        if _scrub(path, texts):
            result.files_rewritten.append(str(path.relative_to(dd.root)))
    _erase_side(dd, texts, result)
    # 3. the rows that name the person
    for path in snapshots:
        table = pq.read_table(path)
        rows = _any_equal(table, person.intents())
        n = _count(rows)
        if n:
            # as extract wrote it: its row groups and Parquet options
            _rewrite(
                path,
                _blank(table, rows, _INTENT_FIELDS),
                row_group_size=ROW_GROUP_ROWS,
                **PART_OPTIONS,
            )
            result.intents += n
            result.files_rewritten.append(str(path.relative_to(dd.root)))
    for path in lines:
        table = pq.read_table(path)
        rows = _any_equal(table, person.lines())
        n = _count(rows)
        if n:
            _rewrite(path, _blank(table, rows, _LINE_FIELDS))
            result.lines += n
            result.files_rewritten.append(str(path.relative_to(dd.root)))


def _erase_side(dd: DataDir, texts: set[str], result: EraseResult) -> None:
    """Runs and reports scrubbed, kept inbox files naming the person deleted: a local data
    directory's."""
    for folder in (dd.runs, dd.reports):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if _scrub(path, texts):
                result.files_rewritten.append(str(path.relative_to(dd.root)))
    spellings = _spellings(texts)
    for folder in (dd.inbox / "processed", dd.inbox / "failed"):
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            body = path.read_bytes()
            seen = body.decode("latin-1") + body.decode("utf-8", "replace")
            seen += _workbook_cells(path, body)
            if any(t in seen for t in spellings):
                path.unlink()
                result.files_deleted.append(str(path.relative_to(dd.root)))


# the columns the texts of the person are read from: intents (True) or statement lines
_TEXT_SOURCES = {
    True: (
        "destination_address_hash",
        "party_document_masked",
        *_PARTY_TEXTS,
        *_PAYEE_TEXTS,
    ),
    False: (
        "counterparty_document_hash",
        "counterparty_key_hash",
        "counterparty_document",
        *_LINE_TEXTS,
    ),
}


def _is_text(kind: pa.DataType) -> bool:
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or (pa.types.is_string_view(kind))
    )


def _scrubbed(table: pa.Table, texts: set[str]) -> tuple[pa.Table, int]:
    """`table` with the texts replaced by ERASED in every text column, and in Parquet files
    kept in binary columns (a run's flows); the count of columns changed."""
    if not texts:
        return table, 0
    spellings = _spellings(texts)
    changed = 0
    for i, f in enumerate(table.schema):
        column = table.column(i)
        if _is_text(f.type):
            new = column
            for t in spellings:
                new = pc.replace_substring(new, pattern=t, replacement=ERASED)
        elif pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type):
            new = pa.chunked_array(
                [pa.array([_scrub_bytes(v, texts) for v in column.to_pylist()], f.type)]
            )
        else:
            continue
        if not new.equals(column):
            table, changed = table.set_column(i, f, new), changed + 1
    return table, changed


def _scrub_bytes(value: bytes | None, texts: set[str]) -> bytes | None:
    if value is None or value[:4] != b"PAR1":
        return value
    inner = pq.read_table(io.BytesIO(value))
    new, changed = _scrubbed(inner, texts)
    if not changed:
        return value
    sink = io.BytesIO()
    pq.write_table(new, sink, compression="zstd")
    return sink.getvalue()


def _workbook_cells(path: Path, body: bytes) -> str:
    """A kept workbook's cells as text (its bytes are compressed or binary: a name or a
    masked document in a cell is not in them as written); "" for any other file, or a
    workbook that cannot be read (its bytes were searched as they are)."""
    from recon import workbook

    if not body.startswith((workbook.OLE2, workbook.ZIP)) or not workbook.kind_of(body, path):
        return ""
    try:
        return workbook.workbook_text(path)
    except StatementError:
        return ""


def _replace_all(text: str, texts: set[str]) -> str:
    for t in _spellings(texts):
        text = text.replace(t, ERASED)
    return text


def _scrub(path: Path, texts: set[str]) -> bool:
    """Replace the person's texts in one run or report file; True when it changed."""
    if not texts:
        return False
    if path.suffix == ".parquet":
        table, changed = _scrubbed(pq.read_table(path), texts)
        if changed:
            _rewrite(path, table)
        return bool(changed)
    if path.suffix == ".xlsx":
        with zipfile.ZipFile(path) as z:
            entries = [(info, z.read(info)) for info in z.infolist()]
        new = [
            (info, _replace_all(body.decode("utf-8"), texts).encode("utf-8"))
            if info.filename.endswith(".xml")
            else (info, body)
            for info, body in entries
        ]
        if new == entries:
            return False
        tmp = path.with_name(f".tmp-{path.name}.erase")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
            for info, body in new:
                z.writestr(info, body)
        os.replace(tmp, path)
        return True
    try:
        text = path.read_bytes().decode("utf-8")  # a BOM stays in the text, so it is kept
    except UnicodeDecodeError:
        return False
    scrubbed = _replace_all(text, texts)
    if scrubbed == text:
        return False
    tmp = path.with_name(f".tmp-{path.name}.erase")
    tmp.write_bytes(scrubbed.encode("utf-8"))
    os.replace(tmp, path)
    return True
