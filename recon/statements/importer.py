"""Import statement files into `statement_lines`, losing nothing and counting everything.

For each file: sniff (or take) its format, parse it into lines, give every line its stable
`line_id`, drop what statement_lines already holds, and write the rest as one Parquet file.
Every line read ends up in exactly one count: imported (a line_id new to statement_lines),
duplicate (a line_id already there, from an earlier import, an earlier file of this import,
or an earlier line of the same file) or quarantined (malformed, `quarantine=True` only).
A duplicate whose content differs (a devolução whose status changed, a PIX first read from
OFX and now from API Pix) is stored as a new version of its line; the view merges versions.

line_id: a PIX movement with an end-to-end id is md5("e2e", account, end_to_end_id,
direction) whatever the format, so the same PIX read from OFX and from API Pix is one line.
Other lines (fees, TEDs): md5("line", account, booking day in America/Sao_Paulo, direction,
amount, bank_reference, occurrence) where occurrence numbers otherwise identical lines
within the file. The format is deliberately not part of it (nor the time of day, which
date-only formats lack): a fee exported in OFX, CNAB 240 and CSV with the bank's same
document number is one line, not three.

Nothing is written until every file has been read: by default a malformed line stops the
whole import with a StatementParseError naming file, line and field.
"""

from __future__ import annotations

import csv
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from recon import lake, pii
from recon.config import DataDir, load_config, new_run_id
from recon.errors import StatementError, StatementParseError, UsageError
from recon.schemas import (
    STATEMENT_COVERAGE_SCHEMA,
    STATEMENT_LINES_SCHEMA,
    STATEMENT_QUARANTINE_SCHEMA,
    TS,
)
from recon.statements import stored
from recon.statements.formats import open_finance
from recon.statements.lines import (
    BLANKS_RE2,
    BUSINESS_TZ,
    EPOCH,
    FORMAT_RANK,
    FORMATS,
    PARSED_SCHEMA,
    Bad,
    Balance,
    Coverage,
    ParseResult,
    check_bounds,
    days_coverage,
    local_text,
)
from recon.storage import writer_lock

__all__ = ["FileReport", "ImportReport", "ParseResult", "import_parsed", "import_statements"]

DEFAULT_ACCOUNT = "default"
FORMAT_CHOICES = ("auto", *FORMATS)


@dataclass(frozen=True)
class FileReport:
    """Counts for one file: read == imported + duplicate + quarantined."""

    path: str
    format: str
    read: int
    imported: int
    duplicate: int
    quarantined: int
    new_versions: int  # duplicates stored as a newer/richer version of their line
    written: str | None  # the Parquet file written, if any
    checks: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    coverage: tuple[str, ...] = ()  # the periods the file covers, as text a person reads


@dataclass(frozen=True)
class ImportReport:
    """Counts over all files of one import: read == imported + duplicate + quarantined."""

    read: int
    imported: int
    duplicate: int
    quarantined: int
    per_file: tuple[FileReport, ...]
    batch_id: str
    skipped_files: tuple[str, ...] = ()  # files in a folder that are no statement format

    @property
    def new_versions(self) -> int:
        return sum(f.new_versions for f in self.per_file)

    def summary(self) -> str:
        """One line a person reads after an import."""
        return (
            f"read {self.read}, imported {self.imported}, duplicate {self.duplicate} "
            f"({self.new_versions} stored as new versions), quarantined {self.quarantined}"
        )


# --------------------------------------------------------------------------- parsing


def _expand(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[Path, bool]]:
    """(file, named explicitly) for every path; a folder gives its files, not explicitly."""
    out: list[tuple[Path, bool]] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(
                (c, False)
                for c in sorted(path.iterdir())
                if c.is_file() and not c.name.startswith((".", "_"))
            )
        elif path.is_file():
            out.append((path, True))
        else:
            raise UsageError(f"no such statement file: {path}")
    return out


def parse_path(path: Path, fmt: str, *, csv_profile: Any = None) -> tuple[str, ParseResult]:
    """Parse one file with the given (or sniffed) format; returns (format, result)."""
    from recon.statements import sniff
    from recon.statements.formats import (
        asaas,
        camt,
        cnab240,
        ofx,
        open_finance,
        pix_json,
        spreadsheet,
    )
    from recon.statements.formats import csv as csv_format

    if fmt == "auto":
        fmt = sniff.sniff_format(path, csv_profile=csv_profile)
    if fmt == "pix-json":
        return fmt, pix_json.parse_file(path)
    if fmt == "camt":
        return fmt, camt.parse_file(path)
    if fmt == "open-finance":
        return fmt, open_finance.parse_file(path)
    if fmt == "asaas":
        return fmt, asaas.parse_file(path)
    if fmt == "ofx":
        return fmt, ofx.parse_file(path)
    if fmt == "cnab240":
        return fmt, cnab240.parse_file(path)
    if fmt == "csv":
        return fmt, csv_format.parse_file(path, csv_format.resolve_profile(csv_profile, path))
    if fmt == "spreadsheet":
        return fmt, spreadsheet.parse_file(path, csv_profile)
    raise UsageError(f"unknown statement format {fmt!r}; choose one of {', '.join(FORMAT_CHOICES)}")


def read_source(path: Path, fmt: str, *, csv_profile: Any = None) -> tuple[str, ParseResult]:
    """`parse_path`, with a file that cannot be decoded turned into a StatementError."""
    try:
        return parse_path(path, fmt, csv_profile=csv_profile)
    except csv.Error as exc:  # e.g. a field over the csv module's limit
        raise StatementError(f"{path}: unreadable CSV: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise StatementError(
            f"{path}: cannot decode the file: {exc.reason} at byte {exc.start}"
        ) from exc


# --------------------------------------------------------------------------- arrow


def _cast_times(texts: pa.Array) -> tuple[pa.Array, list[tuple[int, str]]]:
    """Cast ISO texts to TIMESTAMPTZ; returns (array, [(index, reason)] of unreadable ones).

    The vectorized cast is the fast path; only when it fails are rows looked at one by one,
    so a bad time is reported with its line (and Python reads >6 fractional digits).
    """
    try:
        return pc.cast(texts, TS), []
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    fixed: list[str | None] = []
    bad: list[tuple[int, str]] = []
    values = texts.to_pylist()
    chunk = 4096  # cast in chunks so only the chunks holding a bad time go value by value
    for start in range(0, len(values), chunk):
        part = values[start : start + chunk]
        try:
            pc.cast(pa.array(part, pa.string()), TS)
            fixed.extend(part)
            continue
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
        for offset, text in enumerate(part):
            fixed.append(_one_time(text, start + offset, bad))
    return pc.cast(pa.array(fixed, pa.string()), TS), bad


def _one_time(text: str | None, index: int, bad: list[tuple[int, str]]) -> str | None:
    """One time text that Arrow can cast (Python reads some Arrow does not), or None + bad."""
    try:
        pc.cast(pa.array([text], pa.string()), TS)
        return text
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass
    try:
        dt = datetime.fromisoformat(text) if text is not None else None
    except ValueError:
        dt = None
    if dt is None or dt.tzinfo is None:
        bad.append((index, f"not a time with a UTC offset: {text!r}"))
        return None
    return dt.astimezone(UTC).isoformat()


def personal_columns(arrays: Mapping[str, Any]) -> dict[str, pa.Array]:
    """The parsed documents and PIX keys as recon stores them (recon.pii): masked, with the
    HMAC of each full value beside it; descriptions and counterparty names with any document
    or phone masked (a bank may write the payer's CPF into the name field)."""
    docs, keys = arrays["counterparty_document"], arrays["counterparty_key"]
    return {
        "counterparty_name": pii.map_unique(arrays["counterparty_name"], pii.redact_text),
        "counterparty_document": pii.map_unique(docs, pii.mask_document),
        "counterparty_document_hash": pii.map_unique(docs, pii.document_digest),
        "counterparty_key": pii.map_unique(keys, pii.mask_key),
        "counterparty_key_hash": pii.map_unique(keys, pii.key_digest),
        "description": pii.map_unique(arrays["description"], pii.redact_text),
    }


def rows_to_table(
    parsed: ParseResult,
    *,
    source_format: str,
    source_file: str,
    account: str,
    imported_at: datetime,
) -> tuple[pa.Table, list[Bad]]:
    """The parser's lines as an Arrow table with the schema columns (line_id still empty)."""
    lines, out_of_bounds = check_bounds(parsed.to_table())
    n = lines.num_rows
    texts = lines.column("booked_at").combine_chunks()
    booked, more_bad = _cast_times(texts)
    numbers = lines.column("source_line")
    bad = [
        Bad(numbers[i].as_py(), "booked_at", reason, str(texts[i].as_py()))
        for i, reason in more_bad
    ]
    if out_of_bounds:
        whole = parsed.to_table()
        bad += [
            Bad(
                whole.column("source_line")[i].as_py(),
                field,
                reason,
                str(whole.column(field)[i].as_py())[:200],
            )
            for i, field, reason in out_of_bounds
        ]
    arrays: dict[str, Any] = {name: lines.column(name) for name in PARSED_SCHEMA.names}
    arrays.update(
        {
            "line_id": pa.nulls(n, pa.string()),
            "source_format": pa.repeat(pa.scalar(source_format), n),
            "source_file": pa.repeat(pa.scalar(source_file), n),
            "account": pa.repeat(pa.scalar(account), n),
            "booked_at": booked,
            "imported_at": pa.repeat(pa.scalar(imported_at, TS), n),
        }
    )
    arrays.update(personal_columns(arrays))
    table = pa.table(
        [arrays[f.name].cast(f.type) for f in STATEMENT_LINES_SCHEMA],
        schema=STATEMENT_LINES_SCHEMA,
    )
    if more_bad:
        keep = [True] * n
        for i, _ in more_bad:
            keep[i] = False
        table = table.filter(pa.array(keep))
    return table, bad


# The same expressions define line_id and fingerprint for every format (module doc).
# fee_cents comes last and bare: concat_ws skips a NULL, so a line that states no fee keeps
# the fingerprint of a line stored without the column, and importing its file again adds nothing.
_FINGERPRINT = """md5(concat_ws(chr(31), source_format, account,
        CAST(epoch_us(booked_at) AS VARCHAR), CAST(amount_cents AS VARCHAR), direction, kind,
        coalesce(end_to_end_id, chr(0)), coalesce(txid, chr(0)), coalesce(refund_of, chr(0)),
        coalesce(counterparty_name, chr(0)), coalesce(counterparty_document, chr(0)),
        coalesce(counterparty_key, chr(0)), coalesce(description, chr(0)),
        coalesce(bank_reference, chr(0)), CAST(fee_cents AS VARCHAR)))"""

# the fingerprint expression over a table named `batch` (recon.ops.migrate fills it in for
# line files stored before it existed)
FINGERPRINT_SQL = _FINGERPRINT

# The bank_reference a line_id is keyed on. OFX FITIDs are stored exactly as written, but the
# key collapses their inner runs of blanks (Bradesco writes "…: Des: Amazon.com.br 02/12" with
# nine spaces), the form older data directories were keyed on: such a line keeps its line_id,
# and importing its file again stores a new version of it, never a second line.
_REF_KEY = (
    "CASE WHEN source_format = 'ofx' "
    f"THEN regexp_replace(bank_reference, '{BLANKS_RE2}', ' ', 'g') ELSE bank_reference END"
)

_IDS_SQL = f"""
SELECT _row, source_line,
    md5(concat_ws(chr(31), 'e2e', account, end_to_end_id, direction)) AS line_id,
    {_FINGERPRINT} AS fingerprint
FROM batch
WHERE end_to_end_id IS NOT NULL
UNION ALL
SELECT _row, source_line,
    md5(concat_ws(chr(31), 'line', account, local_day, direction,
        CAST(amount_cents AS VARCHAR), coalesce(ref_key, chr(0)),
        CAST(row_number() OVER (
            PARTITION BY local_day, direction, amount_cents, ref_key
            ORDER BY source_line, _row) - 1 AS VARCHAR))) AS line_id,
    {_FINGERPRINT} AS fingerprint
FROM (
    SELECT *, strftime(timezone('America/Sao_Paulo', booked_at), '%Y-%m-%d') AS local_day,
        {_REF_KEY} AS ref_key
    FROM batch
    WHERE end_to_end_id IS NULL
)
ORDER BY _row
"""

# Only needed when a file repeats a line_id: the first occurrence is the line, later ones
# are duplicates; a repeated (line_id, fingerprint) is stored once.
_REPEATS_SQL = """
SELECT
    known_line OR row_number() OVER (PARTITION BY line_id ORDER BY source_line, _row) > 1
        AS is_dup,
    NOT known_version
        AND row_number() OVER (PARTITION BY line_id, fingerprint ORDER BY source_line, _row) = 1
        AS is_new_version
FROM ids
ORDER BY _row
"""


# A line without a PIX id that is a movement already known from another format takes that
# line's line_id (module doc): by the bank's transaction id when a known line with a PIX id
# has it (Nubank's Identificador is the OFX FITID), else the k-th such line of an (account,
# business day, direction, amount, kind) pairs with the k-th known line of that key that
# carries an id, in booking order (Inter: no id at all); a line whose reference no known
# line has pairs that way only with known lines that have no reference. Known lines are grouped by line_id
# and only their identified versions count, so pairing gives the same answer when the file
# comes again.
_SAME_MOVEMENT_SQL = f"""
WITH b AS (
    SELECT _row, source_line, account, direction, amount_cents, kind, bank_reference,
        strftime(timezone('America/Sao_Paulo', booked_at), '%Y-%m-%d') AS local_day
    FROM batch WHERE end_to_end_id IS NULL
),
k AS (
    SELECT line_id, any_value(account) AS account, any_value(direction) AS direction,
        any_value(amount_cents) AS amount_cents, any_value(kind) AS kind,
        min(booked_at) AS booked_at, bool_or(end_to_end_id IS NOT NULL) AS has_e2e,
        list_distinct(list(bank_reference) FILTER (WHERE bank_reference IS NOT NULL)) AS refs
    FROM known_lines GROUP BY line_id
),
by_ref AS (  -- references compared with their runs of blanks collapsed (_REF_KEY)
    SELECT b._row, min(k.line_id) AS line_id
    FROM b JOIN (
        SELECT *, regexp_replace(ref, '{BLANKS_RE2}', ' ', 'g') AS ref_key
        FROM (SELECT * EXCLUDE (refs), unnest(refs) AS ref FROM k WHERE has_e2e)
    ) AS k
        ON regexp_replace(b.bank_reference, '{BLANKS_RE2}', ' ', 'g') = k.ref_key
        AND b.account = k.account
        AND b.direction = k.direction AND b.amount_cents = k.amount_cents
    GROUP BY b._row
),
free AS (
    SELECT *, strftime(timezone('America/Sao_Paulo', booked_at), '%Y-%m-%d') AS local_day
    FROM k WHERE line_id NOT IN (SELECT line_id FROM by_ref)
),
nb AS (  -- no reference at all: pairs with any known line that has an id
    SELECT *, row_number() OVER (
        PARTITION BY account, local_day, direction, amount_cents, kind
        ORDER BY source_line, _row) AS n
    FROM b WHERE bank_reference IS NULL
),
kk AS (
    SELECT *, row_number() OVER (
        PARTITION BY account, local_day, direction, amount_cents, kind
        ORDER BY booked_at, line_id) AS n
    FROM free
),
by_key AS (
    SELECT nb._row, kk.line_id
    FROM nb JOIN kk USING (account, local_day, direction, amount_cents, kind, n)
),
rb AS (  -- a reference no known line has: pairs only with known lines that have none
    SELECT *, row_number() OVER (
        PARTITION BY account, local_day, direction, amount_cents, kind
        ORDER BY source_line, _row) AS n
    FROM b WHERE bank_reference IS NOT NULL AND _row NOT IN (SELECT _row FROM by_ref)
),
rk AS (
    SELECT *, row_number() OVER (
        PARTITION BY account, local_day, direction, amount_cents, kind
        ORDER BY booked_at, line_id) AS n
    FROM free WHERE coalesce(len(refs), 0) = 0 AND line_id NOT IN (SELECT line_id FROM by_key)
)
SELECT _row, line_id FROM by_ref
UNION ALL
SELECT _row, line_id FROM by_key
UNION ALL
SELECT rb._row, rk.line_id
FROM rb JOIN rk USING (account, local_day, direction, amount_cents, kind, n)
ORDER BY _row
"""


def _same_movements(
    con: duckdb.DuckDBPyConnection, seen: stored.Seen, table: pa.Table, line_id: pa.Array
) -> pa.Array:
    """`line_id` with the ids of known movements for lines without a PIX id (see above)."""
    if not pc.any(pc.is_null(table.column("end_to_end_id"))).as_py():
        return line_id
    known = seen.known_lines()
    if known.num_rows == 0:
        return line_id
    con.register("known_lines", known)
    try:
        found = con.sql(_SAME_MOVEMENT_SQL).to_arrow_table()
    finally:
        con.unregister("known_lines")
    if found.num_rows == 0:
        return line_id
    values = line_id.to_pylist()
    for row, known_id in zip(
        found.column("_row").to_pylist(), found.column("line_id").to_pylist(), strict=True
    ):
        values[row] = known_id
    return pa.array(values, pa.string())


def _dedupe(
    con: duckdb.DuckDBPyConnection, seen: stored.Seen, table: pa.Table
) -> tuple[pa.Table, int, int, int]:
    """(rows to store, imported, duplicate, new_versions) for one file; updates `seen`."""
    n = table.num_rows
    numbered = table.append_column("_row", pa.array(np.arange(n, dtype=np.int64)))
    con.register("batch", numbered)
    try:
        ids = con.sql(_IDS_SQL).to_arrow_table()
        adopted = _same_movements(con, seen, numbered, ids.column("line_id").combine_chunks())
    finally:
        con.unregister("batch")
    ids = ids.set_column(ids.schema.get_field_index("line_id"), "line_id", adopted)
    line_id, fingerprint = ids.column("line_id"), ids.column("fingerprint")
    known_line = pc.is_in(line_id, value_set=seen.line_ids())
    known_version = pc.is_in(stored.pair(line_id, fingerprint), value_set=seen.pairs())
    con.register("ids", ids)
    try:
        # DuckDB's hash aggregate counts distinct strings several times faster than Arrow.
        repeats = con.execute("SELECT count(*) - count(DISTINCT line_id) FROM ids").fetchall()[0][0]
        if repeats == 0:  # the usual case: no line_id twice in the file
            is_dup = known_line
            is_new = pc.invert(known_version)
        else:
            con.register(
                "ids",
                ids.append_column("known_line", known_line).append_column(
                    "known_version", known_version
                ),
            )
            flags = con.sql(_REPEATS_SQL).to_arrow_table()
            is_dup, is_new = flags.column("is_dup"), flags.column("is_new_version")
    finally:
        con.unregister("ids")
    duplicate = int(pc.sum(is_dup).as_py() or 0)
    new_versions = int(pc.sum(pc.and_(is_dup, is_new)).as_py() or 0)
    full = table.set_column(
        table.schema.get_field_index("line_id"), "line_id", line_id
    ).append_column("fingerprint", fingerprint)
    keep = full.filter(is_new).select(stored.STORED_SCHEMA.names).cast(stored.STORED_SCHEMA)
    seen.add_versions(keep)
    return keep, n - duplicate, duplicate, new_versions


def _quarantine_table(
    con: duckdb.DuckDBPyConnection,
    seen: stored.Seen,
    bad: list[Bad],
    *,
    source_format: str,
    source_file: str,
    imported_at: datetime,
) -> pa.Table:
    """Quarantine rows not already in statement_quarantine (keyed by where + what)."""
    n = len(bad)
    table = pa.table(
        {
            "source_format": pa.array([source_format] * n, pa.string()),
            "source_file": pa.array([source_file] * n, pa.string()),
            "source_line": pa.array([b.source_line for b in bad], pa.int64()),
            "field": pa.array([b.field for b in bad], pa.string()),
            "reason": pa.array([pii.redact_text(b.reason) for b in bad], pa.string()),
            "raw": pa.array([b.raw and pii.redact_text(b.raw) for b in bad], pa.string()),
            "imported_at": pa.array([imported_at] * n, TS),
        },
        schema=STATEMENT_QUARANTINE_SCHEMA,
    )
    con.register("qbatch", table)
    try:
        out = con.sql(
            """
            WITH q AS (
                SELECT *, md5(concat_ws(chr(31), source_format, source_file,
                    CAST(source_line AS VARCHAR), coalesce(field, chr(0)), reason, raw)) AS row_key
                FROM qbatch
            )
            SELECT q.* FROM q ANTI JOIN seen_quarantine USING (row_key)
            QUALIFY row_number() OVER (PARTITION BY row_key ORDER BY source_line) = 1
            ORDER BY source_line
            """
        ).to_arrow_table()
    finally:
        con.unregister("qbatch")
    out = out.cast(stored.QUARANTINE_STORED_SCHEMA)
    seen.add_quarantine(out)
    return out


def _raise_first(bad: list[Bad], source_file: str) -> None:
    first = min(bad, key=lambda b: b.source_line)
    more = (
        f" (and {len(bad) - 1} more malformed lines; --quarantine keeps the good ones)"
        if len(bad) > 1
        else ""
    )
    raise StatementParseError(
        first.reason + more, file=source_file, line=first.source_line, field=first.field
    )


# --------------------------------------------------------------------------- coverage


def file_coverage(
    parsed: ParseResult, table: pa.Table, period: tuple[date, date] | None
) -> list[Coverage]:
    """The periods one file covers: a declared `period` (whole business days) wins; else
    what the file states (parsed.coverage); else, when it states nothing (None), the first
    to the last business day of its lines (a CSV), for what the lines list
    (parsed.lines_scope); a file with no lines and no period of its own covers nothing."""
    if period is not None:
        return [days_coverage(period[0], period[1], "declared")]
    if parsed.coverage is not None:
        return list(parsed.coverage)
    booked = table.column("booked_at")
    if table.num_rows == 0 or booked.null_count == table.num_rows:
        return []
    low, high = (v.as_py().astimezone(BUSINESS_TZ).date() for v in (pc.min(booked), pc.max(booked)))
    return [days_coverage(low, high, "lines first/last day")._replace(scope=parsed.lines_scope)]


def _coverage_table(
    seen: set[tuple[Any, ...]],
    periods: list[Coverage],
    *,
    account: str,
    source_format: str,
    source_file: str,
    lines: int,
    imported_at: datetime,
) -> pa.Table:
    """Coverage rows not already stored (same account, format, period and basis)."""
    rows = []
    for c in periods:
        key = (account, source_format, c.start_us, c.end_us, c.basis, c.scope)
        if key in seen:
            continue
        seen.add(key)
        rows.append(
            {
                "account": account,
                "source_format": source_format,
                "source_file": source_file,
                "covered_from": EPOCH + timedelta(microseconds=c.start_us),
                "covered_to": EPOCH + timedelta(microseconds=c.end_us),
                "basis": c.basis,
                "scope": c.scope,
                "lines": lines,
                "imported_at": imported_at,
            }
        )
    return pa.Table.from_pylist(rows, schema=STATEMENT_COVERAGE_SCHEMA)


def _balances_table(
    seen: set[str],
    balances: Sequence[Balance],
    *,
    account: str,
    source_format: str,
    source_file: str,
    imported_at: datetime,
) -> pa.Table:
    """The stated balances of one file not already stored (stored.BALANCES_STORED_SCHEMA):
    a balance is the same when everything but where and when it was read is."""
    rows = []
    for b in balances:
        stated_at = EPOCH + timedelta(microseconds=b.at_us) if b.at_us is not None else None
        key = (account, b.day.isoformat(), b.side, b.cents, b.at_us, b.basis, source_format)
        row_key = hashlib.md5(repr(key).encode(), usedforsecurity=False).hexdigest()
        if row_key in seen:
            continue
        seen.add(row_key)
        rows.append(
            {
                "account": account,
                "day": b.day,
                "side": b.side,
                "balance_cents": b.cents,
                "stated_at": stated_at,
                "basis": b.basis,
                "source_format": source_format,
                "source_file": source_file,
                "source_line": b.source_line,
                "imported_at": imported_at,
                "row_key": row_key,
            }
        )
    return pa.Table.from_pylist(rows, schema=stored.BALANCES_STORED_SCHEMA)


def _open_finance(
    sources: Sequence[tuple[str, str, ParseResult]],
    dd: DataDir,
    account: str,
    imported_at: datetime,
) -> tuple[dict[int, list[open_finance.Verdict]], pa.Table]:
    """The verdicts on the Open Finance requests that no single file of the import holds
    whole, by the index of the source they are reported with (their pages over every file of
    the import, else with the pages earlier imports of `account` read), and the rows of the
    pages to remember (stored.PAGES_STORED_SCHEMA, those not stored yet)."""
    found = [
        (index, parsed)
        for index, (_file, _fmt, parsed) in enumerate(sources)
        if isinstance(parsed, open_finance.OpenFinanceResult)
    ]
    if not found:
        return {}, stored.PAGES_STORED_SCHEMA.empty_table()
    kept = stored.pages_table(dd)
    kept = kept.filter(pc.equal(kept.column("account"), account))

    def load(requests: list[str]) -> list[open_finance.Page]:
        wanted = pc.is_in(kept.column("request"), value_set=pa.array(requests, pa.string()))
        return [
            open_finance.Page(
                r["source_file"],
                r["request"],
                r["page"],
                r["last_page"],
                r["total_records"],
                r["items"],
                r["first_day"],
                r["last_day"],
                stored=True,
            )
            for r in kept.filter(wanted).to_pylist()
        ]

    verdicts: dict[int, list[open_finance.Verdict]] = {}
    for k, verdict in open_finance.judge_import([parsed for _i, parsed in found], load):
        verdicts.setdefault(found[k][0], []).append(verdict)
    known = set(kept.column("row_key").to_pylist())
    rows = []
    for index, parsed in found:
        for page in filter(open_finance.remembered, parsed.pages):
            row = {
                "account": account,
                "request": page.request,
                "page": page.number,
                "last_page": page.last,
                "total_records": page.records,
                "items": page.items,
                "first_day": page.first_day,
                "last_day": page.last_day,
            }
            key = hashlib.md5(repr(sorted(row.items())).encode(), usedforsecurity=False)
            row_key = key.hexdigest()
            if row_key in known:
                continue
            known.add(row_key)
            rows.append(
                row
                | {"source_file": sources[index][0], "imported_at": imported_at, "row_key": row_key}
            )
    return verdicts, pa.Table.from_pylist(rows, schema=stored.PAGES_STORED_SCHEMA)


def describe(period: Coverage) -> str:
    """'2026-11-01 00:00 .. 2026-11-04 00:00 America/Sao_Paulo (ofx DTSTART/DTEND)'."""
    start, end = local_text(period.start_us), local_text(period.end_us)
    scope = "" if period.scope == "all" else ", credits only"  # scope "received"
    return f"{start} .. {end} {BUSINESS_TZ} ({period.basis}{scope})"


def _stored_coverage(data: DataDir) -> set[tuple[Any, ...]]:
    table = stored.coverage_table(data)
    return {
        (
            r["account"],
            r["source_format"],
            _us(r["covered_from"]),
            _us(r["covered_to"]),
            r["basis"],
            r["scope"],
        )
        for r in table.to_pylist()
    }


def _us(value: datetime) -> int:
    return (value - EPOCH) // timedelta(microseconds=1)


def resolve_account(account: str | None, data: DataDir) -> str:
    """The account label: the argument, else recon.toml [statements] account, else 'default'."""
    if account:
        return account
    section = load_config(data=data).get("statements", {})
    label = section.get("account") if isinstance(section, dict) else None
    return str(label) if label else DEFAULT_ACCOUNT


def import_parsed(
    sources: Sequence[tuple[str, str, ParseResult]],
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    quarantine: bool = False,
    account: str | None = None,
    period: tuple[date, date] | None = None,
) -> ImportReport:
    """Import already-parsed sources [(source_file, format, ParseResult)] (see module doc).

    Each file's statement period is recorded in `statement_coverage` (`file_coverage`);
    `period` declares it instead (first and last business day, inclusive)."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    dd.ensure()
    # one writer at a time: two imports at once would both pass the dedupe check below
    with writer_lock(dd.root, "statements import"):
        return _import_locked(sources, dd, quarantine=quarantine, account=account, period=period)


def _import_locked(
    sources: Sequence[tuple[str, str, ParseResult]],
    dd: DataDir,
    *,
    quarantine: bool,
    account: str | None,
    period: tuple[date, date] | None,
) -> ImportReport:
    label = resolve_account(account, dd)
    imported_at = datetime.now(UTC)
    batch_id = new_run_id(imported_at)
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        run = _Import(con, dd, label, imported_at, batch_id, quarantine=quarantine, period=period)
        # Open Finance pages of one request complete each other over the import's files and
        # earlier imports; read (and any total that does not add up refused) before anything
        paging, pages_read = _open_finance(sources, dd, label, imported_at)
        # Formats that carry PIX ids and bank references first, so a CSV without them finds
        # the movements they name (whatever order the files were given in); reports and
        # written files keep the given order.
        order = sorted(range(len(sources)), key=lambda i: (FORMAT_RANK[sources[i][1]], i))
        reports = {i: run.file(i, *sources[i], paging.get(i, [])) for i in order}
    finally:
        con.close()
    run.store(pages_read)
    per_file = [reports[i] for i in range(len(sources))]
    return ImportReport(
        read=sum(r.read for r in per_file),
        imported=sum(r.imported for r in per_file),
        duplicate=sum(r.duplicate for r in per_file),
        quarantined=sum(r.quarantined for r in per_file),
        per_file=tuple(per_file),
        batch_id=batch_id,
    )


class _Import:
    """One import under the writer lock: each file read against what is stored and what the
    files before it added, then everything written at once (`store`)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        dd: DataDir,
        label: str,
        imported_at: datetime,
        batch_id: str,
        *,
        quarantine: bool,
        period: tuple[date, date] | None,
    ) -> None:
        self.con, self.dd, self.label = con, dd, label
        self.imported_at, self.batch_id = imported_at, batch_id
        self.quarantine, self.period = quarantine, period
        self.seen = stored.Seen(con, dd)
        self.covered = _stored_coverage(dd)
        self.balances = set(stored.balances_table(dd).column("row_key").to_pylist())
        self.bpending: list[pa.Table] = []
        self.cpending: list[pa.Table] = []
        self.pending: list[tuple[Path, pa.Table]] = []
        self.qpending: list[pa.Table] = []

    def file(
        self,
        index: int,
        source_file: str,
        fmt: str,
        parsed: ParseResult,
        verdicts: list[open_finance.Verdict],
    ) -> FileReport:
        """One file's lines deduplicated, its quarantine and coverage kept for `store`."""
        table, time_bad = rows_to_table(
            parsed,
            source_format=fmt,
            source_file=source_file,
            account=self.label,
            imported_at=self.imported_at,
        )
        bad = parsed.bad + time_bad
        if bad and not self.quarantine:
            _raise_first(bad, source_file)
        keep, imported, duplicate, versions = _dedupe(self.con, self.seen, table)
        periods = file_coverage(parsed, table, self.period)
        checks, warnings = self._verdicts(parsed, verdicts, periods)
        self.cpending.append(
            _coverage_table(
                self.covered,
                periods,
                account=self.label,
                source_format=fmt,
                source_file=source_file,
                lines=table.num_rows,
                imported_at=self.imported_at,
            )
        )
        self.bpending.append(
            _balances_table(
                self.balances,
                parsed.balances,
                account=self.label,
                source_format=fmt,
                source_file=source_file,
                imported_at=self.imported_at,
            )
        )
        written = None
        if keep.num_rows:
            target = stored.line_path(self.dd, fmt, f"{self.batch_id}-{index:04d}")
            self.pending.append((target, keep))
            written = self.dd.table(lake.STATEMENT_LINES).uri if self.dd.remote else str(target)
        if bad:
            self.qpending.append(
                _quarantine_table(
                    self.con,
                    self.seen,
                    bad,
                    source_format=fmt,
                    source_file=source_file,
                    imported_at=self.imported_at,
                )
            )
        return FileReport(
            path=source_file,
            format=fmt,
            read=imported + duplicate + len(bad),
            imported=imported,
            duplicate=duplicate,
            quarantined=len(bad),
            new_versions=versions,
            written=written,
            checks=tuple(checks),
            warnings=tuple(warnings),
            coverage=tuple(describe(c) for c in periods),
        )

    def _verdicts(
        self,
        parsed: ParseResult,
        verdicts: list[open_finance.Verdict],
        periods: list[Coverage],
    ) -> tuple[list[str], list[str]]:
        """The file's checks and warnings; for Open Finance, what the file alone says of
        requests it holds only part of gives way to the verdict over the import (reported with
        the last file of each request), whose coverage joins `periods` unless a period is set."""
        checks, warnings = list(parsed.checks), list(parsed.warnings)
        if isinstance(parsed, open_finance.OpenFinanceResult):
            warnings = [w for w in warnings if w not in parsed.partial]
            for verdict in verdicts:
                checks += verdict.checks
                warnings += verdict.warnings
                if self.period is None:
                    periods += verdict.coverage
        return checks, warnings

    def store(self, pages_read: pa.Table) -> None:
        """Write what the files added: lines, quarantine, pages, balances, and coverage last."""
        dd, batch_id = self.dd, self.batch_id
        pending, qpending, cpending = self.pending, self.qpending, self.cpending
        if dd.remote:  # one MERGE per table (recon.statements.stored)
            stored.merge_remote(
                dd,
                [k for _t, k in pending],
                qpending,
                cpending,
                batch_id,
                pages=[pages_read],
                balances=self.bpending,
            )
            return
        for target, keep in pending:
            stored.write_parquet_atomic(keep, target)
        qrows = [t for t in qpending if t.num_rows]
        if qrows:
            path = stored.quarantine_path(dd, batch_id)
            stored.write_parquet_atomic(pa.concat_tables(qrows), path)
        if pages_read.num_rows:
            stored.write_parquet_atomic(pages_read, stored.pages_path(dd, batch_id))
        brows = [t for t in self.bpending if t.num_rows]
        if brows:
            path = stored.balances_path(dd, batch_id)
            stored.write_parquet_atomic(pa.concat_tables(brows), path)
        # coverage last: a period must never be recorded for lines that are not stored
        crows = [t for t in cpending if t.num_rows]
        if crows:
            path = stored.coverage_path(dd, batch_id)
            stored.write_parquet_atomic(pa.concat_tables(crows), path)


def import_statements(
    paths: Iterable[str | os.PathLike[str]] | str | os.PathLike[str],
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    format: str = "auto",
    quarantine: bool = False,
    account: str | None = None,
    csv_profile: Any = None,
    period: tuple[date, date] | None = None,
) -> ImportReport:
    """Read statement files (or folders of them) into `statement_lines`.

    `format`: auto (sniffed from content) | pix-json | camt | open-finance | ofx | cnab240 |
    csv | spreadsheet | asaas.
    `quarantine`: malformed lines go to `statement_quarantine` instead of stopping the import.
    `account`: the account label (default: recon.toml [statements] account, else "default");
    import every format of one account under the same label.
    `csv_profile`: "psp", "bank", a TOML file path or a CsvProfile (default: from the header).
    `period`: (first, last) business day the files cover, declared; default: each file's
    own period, else the first to last day of its lines (see `file_coverage`).
    Returns counts where read == imported + duplicate + quarantined, overall and per file.
    """
    if format not in FORMAT_CHOICES:
        raise UsageError(
            f"unknown statement format {format!r}; choose one of {', '.join(FORMAT_CHOICES)}"
        )
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = _expand(paths)
    if not files:
        raise UsageError("no statement files to import")
    from recon.statements import sniff

    sources: list[tuple[str, str, ParseResult]] = []
    skipped: list[str] = []
    for path, explicit in files:
        fmt = format
        if fmt == "auto":
            try:
                fmt = sniff.sniff_format(path, csv_profile=csv_profile)
            except StatementError:
                if explicit:
                    raise
                skipped.append(str(path))  # a folder's README or ground-truth file
                continue
        if not explicit and fmt in ("csv", "spreadsheet") and csv_profile is None:
            from recon.statements.formats.csv import resolve_profile
            from recon.statements.formats.spreadsheet import sheets_read

            try:
                if fmt == "csv":
                    resolve_profile(None, path)
                else:
                    sheets_read(path)
            except StatementError:
                skipped.append(str(path))
                continue
        fmt, parsed = read_source(path, fmt, csv_profile=csv_profile)
        sources.append((str(path.resolve()), fmt, parsed))
    if not sources:
        raise UsageError(
            "no statement files to import" + (f" (skipped {skipped})" if skipped else "")
        )
    if period is not None and period[1] < period[0]:
        raise UsageError(f"period {period[0]}..{period[1]}: the last day is before the first")
    report = import_parsed(sources, data, quarantine=quarantine, account=account, period=period)
    return replace(report, skipped_files=tuple(skipped))
