"""`recon erase --document D`: remove a person's data from a data directory (LGPD art. 18).

What identifies the person: the keyed hash of the document's digits (recon.pii), which is
how snapshots and statement lines store a full CPF/CNPJ or a PIX key made of it, and the
document masked as BACEN shows it (digits 4-9), which is all PSPs and most banks give of a
payer. The v2 API masks a party's document showing its last four digits instead, which one
CPF in 10,000 shares: that is not matched, so an intent that names the person only that way
(an onramp they paid, a payout to their phone key) keeps their name (docs/security.md).

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

On object storage (`--data s3://…`) the same rows are rewritten, as Delta commits, and the
files they were in are then deleted for good:
- each table's files that hold a matching row are read whole and replaced by one commit
  (`lake.Table.replace_files`: the new files uploaded beside the old ones, then one log
  entry removing the old and adding the new). Not `DeltaTable.update`: an UPDATE's commit
  keeps its predicate in the log forever (`operationParameters.predicate`, the person's
  hash and masked document), its SQL cannot replace texts inside a run's flows (Parquet
  bytes in a column), and this way the rows are changed by the very functions the local
  erase uses. Files that hold nobody of theirs are not touched: same path, same bytes;
- a concurrent writer loses nothing: a commit that lost the race to an append or a MERGE
  moves to the next version; one that lost it to a commit removing the same file (another
  erase) commits nothing and the table is read again. Files another machine commits while
  the erase runs are looked at before it ends. The writer lock is the local side's, as
  for every remote writer: one recon writer per machine;
- the erase commits carry ``{"erase": …}`` in their recon metadata, never a snapshot
  manifest, and keep every file's partition (snapshot run, run id): to every reader the
  snapshots and runs are the ones there were. Rows are never added or dropped;
- then the vacuum (`lake.Table.purge_removed`): the files every erase commit removed are
  deleted, with those other commits removed (an OPTIMIZE's) that hold the person, and
  their column statistics (min/max values, which can be the person's) are dropped from the
  older log entries and checkpoints that name them. Only those files: a VACUUM with no
  retention (deltalake cannot be given a list of files) would also delete another writer's
  uploaded, not yet committed files, whose commit would then name a missing file, and
  every file any commit removed, everyone's time travel. Files no version lists (a failed
  commit's uploads) are not touched: time travel never reads them. Time travel to a
  version before the erase fails on the deleted file rather than reading the person back;
- the local side (reports, kept inbox files, this machine's copies of runs) is cleaned as
  locally, and every copy of a committed run is then made the same as the bucket's run
  again. Another machine's local side is out of reach: `recon erase` run there finds
  nothing left on the bucket, but brings its copies of runs in line with the bucket's the
  same way; its reports, made from the old copies, name the person until rendered again.

A reader sees each table before or after its erase commit, never half of it; a query that
listed a table's files before the commit and reads them after the vacuum fails (the file is
gone) and is run again. An S3 error part-way is one line (exit 2): every commit is whole or
absent, and running the erase again finishes it (the vacuum works from every erase commit
in the log, so one cut short is redone).

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from recon import lake, pii
from recon.catalog import RUN_TABLE_SCHEMAS, SUMMARIES_SCHEMA
from recon.config import DataDir
from recon.errors import LakeError, StatementError, UsageError
from recon.extraction.snapshot import PART_OPTIONS, ROW_GROUP_ROWS
from recon.reconciliation.flows import FLOWS_FILE
from recon.schemas import INTENTS_SCHEMA, conform
from recon.statements.stored import (
    QUARANTINE_DIR,
    QUARANTINE_STORED_SCHEMA,
    STORED_SCHEMA,
)
from recon.storage import writer_lock

__all__ = ["ERASED", "EraseResult", "erase_document"]

ERASED = "[erased]"
# the recon metadata key of an erase's commits (what the vacuum deletes the files of)
ERASE_MARKER = "erase"

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
    # on object storage: the files the erase's commits removed, deleted for good (vacuum),
    # and the log objects whose column statistics of those files were dropped
    remote: bool = False
    files_vacuumed: list[str] = field(default_factory=list)
    log_entries_scrubbed: int = 0

    def summary(self) -> str:
        text = (
            f"erased: {self.intents} intent row(s), {self.lines} statement line(s); "
            f"{len(self.files_rewritten)} file(s) rewritten, "
            f"{len(self.files_deleted)} kept inbox file(s) deleted"
        )
        if self.remote:
            text += (
                f"; {len(self.files_vacuumed)} replaced file(s) vacuumed, "
                f"{self.log_entries_scrubbed} log entr{'y' if self.log_entries_scrubbed == 1 else 'ies'} "
                "scrubbed"
            )
        return text


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


def _write_over(path: Path, body: bytes) -> None:
    """Write `body` over `path` atomically (a temporary sibling renamed over it)."""
    tmp = path.with_name(f".tmp-{path.name}.erase")
    tmp.write_bytes(body)
    os.replace(tmp, path)


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


def _any_equal_where(schema: pa.Schema, values: dict[str, set[str]]) -> ds.Expression | None:
    """`_any_equal` as a dataset filter (pushed down to the Parquet statistics)."""
    where: ds.Expression | None = None
    for name, wanted in values.items():
        if name in schema.names and wanted:
            term = ds.field(name).isin(sorted(wanted))
            where = term if where is None else where | term
    return where


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
    result = EraseResult(remote=dd.remote)
    with writer_lock(dd.root, "erase"):
        if dd.remote:
            try:
                _erase_remote(dd, person, result)
            except LakeError as exc:
                raise LakeError(f"{exc}; run recon erase again to finish") from None
        else:
            _erase_local(dd, person, result)
    result.files_rewritten = list(dict.fromkeys(result.files_rewritten))  # a file is named once
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
    directory's, or the local side of a remote one."""
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


# ----------------------------------------------------------------- a remote data directory


_Change = Callable[[pa.Table], tuple[pa.Table, int]]


@dataclass(frozen=True)
class _Rewrite:
    """How one remote table is erased: the files `where` selects (None: every file) get
    `change(rows)` when it changes something, written with `options`."""

    table: lake.Table
    schema: pa.Schema
    where: ds.Expression | None
    change: _Change
    options: dict[str, Any] | None = None

    def holding(self, files: list[lake.DataFile]) -> set[str]:
        """Which of `files` (removed by other commits, still stored) hold the person."""
        if not files:
            return set()
        if self.where is not None:
            return self.table.files_where(files, self.schema, self.where)
        return {f.path for f in files if self.change(self.table.read_file(f))[1]}


def _erase_remote(dd: DataDir, person: _Person, result: EraseResult) -> None:
    snapshots, lines = dd.table(lake.SNAPSHOTS), dd.table(lake.STATEMENT_LINES)
    intents_where = _any_equal_where(INTENTS_SCHEMA, person.intents())
    lines_where = _any_equal_where(STORED_SCHEMA, person.lines())
    # 1. what names the person (nothing written yet)
    texts = set(person.masks)
    for table, schema, where, intents in (
        (snapshots, INTENTS_SCHEMA, intents_where, True),
        (lines, STORED_SCHEMA, lines_where, False),
    ):
        texts |= person.texts(_matching_rows(table, schema, where, _TEXT_SOURCES[intents]), intents)
    texts = {t for t in texts if len(t) >= 3}
    # 2. what copies those texts: quarantine and runs (their text columns), the local side
    copies = [
        _Rewrite(dd.table(name), schema, _texts_where(schema, texts), _scrubber(texts))
        for name, schema in (
            (lake.STATEMENT_QUARANTINE, QUARANTINE_STORED_SCHEMA),
            *((f"runs/{name}", schema) for name, schema in RUN_TABLE_SCHEMAS.items()),
            (lake.RUN_SUMMARIES, SUMMARIES_SCHEMA),
        )
    ]
    for rewrite in copies:
        _rewrite_remote(rewrite, result)
    _erase_side(dd, texts, result)
    _refresh_run_copies(dd, result)
    # 3. the rows that name the person
    sources = [
        _Rewrite(lines, STORED_SCHEMA, lines_where, _blanker(person.lines(), _LINE_FIELDS)),
        _Rewrite(
            snapshots,
            INTENTS_SCHEMA,
            intents_where,
            _blanker(person.intents(), _INTENT_FIELDS),
            {"row_group_size": ROW_GROUP_ROWS, **PART_OPTIONS},  # as extract writes a part
        ),
    ]
    result.lines += _rewrite_remote(sources[0], result)
    result.intents += _rewrite_remote(sources[1], result)
    # 4. the vacuum: the files every erase commit removed, and those other commits removed
    # that hold the person (an OPTIMIZE's), deleted for good (lake.Table.purge_removed)
    for rewrite in (*sources, *copies):
        purged = rewrite.table.purge_removed(ERASE_MARKER, rewrite.holding)
        result.files_vacuumed += purged.deleted
        result.log_entries_scrubbed += purged.log_entries


def _refresh_run_copies(dd: DataDir, result: EraseResult) -> None:
    """This machine's copies of committed runs made the same as the bucket's runs again.

    A copy another erase has not reached (made here before an erase on another machine)
    still names the person, and this erase cannot learn the names from the bucket any more;
    the bucket's run, scrubbed, is the truth the copy was made from. Only the files that
    differ from it are written (the run tables, summary.json, flows.parquet); what only this
    machine keeps (history_state.parquet) stays."""
    folders = sorted(
        p
        for p in (dd.runs.iterdir() if dd.runs.is_dir() else ())
        if p.is_dir() and not p.name.startswith(".") and (p / "summary.json").is_file()
    )
    summaries = dd.table(lake.RUN_SUMMARIES)
    uris = [u for u, _p, _s in summaries.files()] if folders else []
    if not uris:
        return
    try:
        committed = {
            str(r["run_id"]): r
            for r in summaries.dataset(uris, SUMMARIES_SCHEMA).to_table().to_pylist()
        }
        tables = {name: dd.table(f"runs/{name}") for name in RUN_TABLE_SCHEMAS}
        files = {name: table.files() for name, table in tables.items()}
        for folder in (f for f in folders if f.name in committed):
            row = committed[folder.name]
            for name, schema in RUN_TABLE_SCHEMAS.items():
                mine = [
                    u
                    for u, parts, _s in files[name]
                    if parts.get(lake.RUN_PARTITION) == folder.name
                ]
                rows = (
                    tables[name].dataset(mine, schema).to_table() if mine else schema.empty_table()
                )
                path = folder / f"{name}.parquet"
                if path.is_file() and _same_rows(pq.read_table(path), rows, schema):
                    continue
                if not path.is_file() and rows.num_rows == 0:
                    continue
                _rewrite(path, rows)
                result.files_rewritten.append(str(path.relative_to(dd.root)))
            for file, body in (
                ("summary.json", str(row["summary"]).encode("utf-8")),
                (FLOWS_FILE, row["flows"]),
            ):
                path = folder / file
                if body is None or (path.is_file() and path.read_bytes() == body):
                    continue
                _write_over(path, body)
                result.files_rewritten.append(str(path.relative_to(dd.root)))
    except OSError as exc:
        raise LakeError(f"{dd.uri}: cannot read the committed runs: {exc}") from None


def _same_rows(local: pa.Table, remote: pa.Table, schema: pa.Schema) -> bool:
    """Whether a run file holds the rows the bucket holds, in any order."""
    mine = conform(local, schema)
    if mine.num_rows != remote.num_rows:
        return False
    order = [(f.name, "ascending") for f in schema]
    return mine.sort_by(order).equals(remote.cast(schema).sort_by(order))


def _blanker(values: dict[str, set[str]], fields: tuple[str, ...]) -> _Change:
    """Rows equal to one of `values` get `fields` emptied; the count of those rows."""

    def change(rows: pa.Table) -> tuple[pa.Table, int]:
        hit = _any_equal(rows, values)
        n = _count(hit)
        return (_blank(rows, hit, fields) if n else rows), n

    return change


def _scrubber(texts: set[str]) -> _Change:
    return lambda rows: _scrubbed(rows, texts)


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


def _matching_rows(
    table: lake.Table, schema: pa.Schema, where: ds.Expression | None, columns: tuple[str, ...]
) -> pa.Table:
    """The `columns` of the committed rows `where` selects (filtered with pushdown)."""
    files = table.files()
    names = [c for c in columns if c in schema.names]
    if where is None or not files:
        return pa.schema([schema.field(c) for c in names]).empty_table()
    try:
        return table.dataset([u for u, _p, _s in files], schema).to_table(
            columns=names, filter=where
        )
    except OSError as exc:
        raise LakeError(f"{table.uri}: cannot read the table: {exc}") from None


def _rewrite_remote(rewrite: _Rewrite, result: EraseResult) -> int:
    """Replace, by erase commits, the committed files of a table that hold a row `where`
    selects (every file when `where` is None) with `change(rows)`; returns the rows changed.

    After a commit the table is read again: a file another writer committed meanwhile is
    looked at too, and a commit that lost the race to one removing the same files (another
    erase) is redone from what is there now. Files found clean are not read again."""
    table, where, change = rewrite.table, rewrite.where, rewrite.change
    clean: set[str] = set()
    changed = 0
    for _attempt in range(lake.MERGE_ATTEMPTS):
        delta = table.load()
        if delta is None:
            return changed
        files = [f for f in table.data_files(delta) if f.path not in clean]
        if not files:
            return changed
        chosen = (
            table.files_where(files, rewrite.schema, where)
            if where is not None
            else {f.path for f in files}
        )
        clean |= {f.path for f in files if f.path not in chosen}
        replacements: list[tuple[lake.DataFile, pa.Table]] = []
        rows_changed = 0
        for file in files:
            if file.path in chosen:
                new, n = change(table.read_file(file))
                if n:
                    replacements.append((file, new))
                    rows_changed += n
                else:
                    clean.add(file.path)
        if not replacements:
            return changed
        try:
            written = table.replace_files(
                delta,
                replacements,
                metadata={ERASE_MARKER: {"files": len(replacements)}},
                write_options=rewrite.options,
            )
        except lake.CommitConflict:
            continue  # another erase rewrote some of these files: look at them again
        clean |= {f.path for f in written}
        changed += rows_changed
        result.files_rewritten += [old.uri for old, _rows in replacements]
    raise LakeError(f"{table.uri}: other writers kept rewriting the same files")


def _text_columns(schema: pa.Schema) -> list[str]:
    return [f.name for f in schema if _is_text(f.type)]


def _is_text(kind: pa.DataType) -> bool:
    return (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or (pa.types.is_string_view(kind))
    )


def _texts_where(schema: pa.Schema, texts: set[str]) -> ds.Expression | None:
    """Rows with one of `texts` in a text column; None (every file) when the schema has a
    binary column (a run's flows: Parquet bytes, read to be searched)."""
    if any(pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type) for f in schema):
        return None
    pattern = "|".join(re.escape(t) for t in _spellings(texts))
    where: ds.Expression | None = None
    for column in _text_columns(schema):  # one regular expression (RE2) per column
        term = pc.match_substring_regex(ds.field(column), pattern)
        where = term if where is None else where | term
    return where if where is not None else ds.scalar(False)


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
    _write_over(path, scrubbed.encode("utf-8"))
    return True
