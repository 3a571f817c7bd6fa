"""Where statement lines live: `data/statements/source=<format>/<batch>.parquet`.

Files are append-only and written atomically (a temp name that does not end in .parquet,
fsync, rename, fsync the folder), so a reader never sees half a file and a crash leaves
only `.tmp-*` leftovers that `recon.storage.clean_leftovers` removes.

Each stored row carries, besides STATEMENT_LINES_SCHEMA, a `fingerprint`: a hash of the
line's content (everything but where and when it was read). An import stores a row only
if its (line_id, fingerprint) is new, so importing the same file twice adds nothing, while
a devolução whose status changed, or the same PIX read from a richer format, is stored as
a new version of the same line_id that the catalog view merges.

The balances each file states (OFX LEDGERBAL, CNAB 240 and camt opening and closing, a
CSV's Saldo: recon.statements.lines.Balance) are kept in
`data/statements/balances/<batch>.parquet` (STATEMENT_BALANCES_SCHEMA + row_key, a hash of
everything but where and when it was read), each once however often its file is imported:
the balance walk (catalog view statement_balances) reads them.

The Open Finance transaction pages an import read are kept too
(`data/statements/pages/<batch>.parquet`, STATEMENT_PAGES_SCHEMA + row_key): a request's
period is recorded as covered once every page of it has been read, and its pages may come in
several imports (recon.statements.formats.open_finance).

On a remote data directory (`s3://…`, recon.lake) the five kinds are Delta tables
(statements/lines, statements/quarantine, statements/pages, statements/balances,
statements/coverage) and an
import is one MERGE per table that inserts only the rows whose key is new: (line_id,
fingerprint) for lines, exactly the rule above (so a line's versions from several formats, or
a devolução whose status changed, are still kept side by side for the view to merge); row_key
for quarantine, pages and balances; the period for coverage. A MERGE that loses the commit to another
import is re-run against what that import stored, so two imports at once never store a row
twice.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from recon import lake
from recon.config import DataDir
from recon.schemas import (
    STATEMENT_BALANCES_SCHEMA,
    STATEMENT_COVERAGE_SCHEMA,
    STATEMENT_LINES_SCHEMA,
    STATEMENT_PAGES_SCHEMA,
    STATEMENT_QUARANTINE_SCHEMA,
)
from recon.storage import TMP_PREFIX, fsync_dir

STORED_SCHEMA = STATEMENT_LINES_SCHEMA.append(pa.field("fingerprint", pa.string()))
QUARANTINE_STORED_SCHEMA = STATEMENT_QUARANTINE_SCHEMA.append(pa.field("row_key", pa.string()))
PAGES_STORED_SCHEMA = STATEMENT_PAGES_SCHEMA.append(pa.field("row_key", pa.string()))
BALANCES_STORED_SCHEMA = STATEMENT_BALANCES_SCHEMA.append(pa.field("row_key", pa.string()))

LINE_GLOB = "source=*/*.parquet"
QUARANTINE_DIR = "quarantine"
COVERAGE_DIR = "coverage"
PAGES_DIR = "pages"
BALANCES_DIR = "balances"


def line_files(data: DataDir) -> list[Path]:
    """Every committed statement Parquet file."""
    return sorted(data.statements.glob(LINE_GLOB))


def quarantine_files(data: DataDir) -> list[Path]:
    """Every committed quarantine Parquet file."""
    return sorted((data.statements / QUARANTINE_DIR).glob("*.parquet"))


# the key a stored row is new by, per remote table (see the module doc)
COVERAGE_KEY = ("account", "source_format", "covered_from", "covered_to", "basis", "scope")


def _remote_dataset(data: DataDir, name: str, schema: pa.Schema) -> ds.Dataset | None:
    table = data.table(name)
    uris = [uri for uri, _p, _s in table.files()]
    return table.dataset(uris, schema) if uris else None


def lines_dataset(data: DataDir) -> ds.Dataset | None:
    """Every stored statement line version (None when there is none)."""
    if data.remote:
        return _remote_dataset(data, lake.STATEMENT_LINES, STORED_SCHEMA)
    files = line_files(data)
    return ds.dataset([str(f) for f in files], format="parquet") if files else None


def quarantine_dataset(data: DataDir) -> ds.Dataset | None:
    """Every stored quarantine row (None when there is none)."""
    if data.remote:
        return _remote_dataset(data, lake.STATEMENT_QUARANTINE, QUARANTINE_STORED_SCHEMA)
    files = quarantine_files(data)
    return ds.dataset([str(f) for f in files], format="parquet") if files else None


def coverage_table(data: DataDir) -> pa.Table:
    """Every stored coverage row."""
    return _stored(data, lake.STATEMENT_COVERAGE, STATEMENT_COVERAGE_SCHEMA, coverage_files)


def balances_table(data: DataDir) -> pa.Table:
    """Every stored statement balance row (BALANCES_STORED_SCHEMA)."""
    return _stored(data, lake.STATEMENT_BALANCES, BALANCES_STORED_SCHEMA, balances_files)


def pages_table(data: DataDir) -> pa.Table:
    """Every stored Open Finance page row (PAGES_STORED_SCHEMA)."""
    return _stored(data, lake.STATEMENT_PAGES, PAGES_STORED_SCHEMA, pages_files)


def _stored(
    data: DataDir, remote: str, schema: pa.Schema, files: Callable[[DataDir], list[Path]]
) -> pa.Table:
    """Every row of one small store (coverage, pages), in `schema`: the remote table, or
    the local batch files (none: an empty table)."""
    if data.remote:
        found = _remote_dataset(data, remote, schema)
        return found.to_table() if found is not None else schema.empty_table()
    local = files(data)
    if not local:
        return schema.empty_table()
    tables = [pq.read_table(f) for f in local]
    return pa.concat_tables(t if t.schema.equals(schema) else t.cast(schema) for t in tables)


def merge_remote(
    data: DataDir,
    lines: list[pa.Table],
    quarantine: list[pa.Table],
    coverage: list[pa.Table],
    batch_id: str,
    pages: list[pa.Table] | None = None,
    balances: list[pa.Table] | None = None,
) -> int:
    """Store an import's rows in a remote data directory: one MERGE per table, lines first
    and coverage last (a period is never recorded for lines that are not stored). Returns
    the line versions inserted (fewer than given when another import stored some first)."""
    meta = {"import": batch_id}
    inserted = 0
    rows = [t for t in lines if t.num_rows]
    if rows:
        inserted = data.table(lake.STATEMENT_LINES).merge_new(
            pa.concat_tables(rows).cast(STORED_SCHEMA), ["line_id", "fingerprint"], metadata=meta
        )
    rows = [t for t in quarantine if t.num_rows]
    if rows:
        data.table(lake.STATEMENT_QUARANTINE).merge_new(
            pa.concat_tables(rows).cast(QUARANTINE_STORED_SCHEMA), ["row_key"], metadata=meta
        )
    for name, schema, tables in (
        (lake.STATEMENT_PAGES, PAGES_STORED_SCHEMA, pages),
        (lake.STATEMENT_BALANCES, BALANCES_STORED_SCHEMA, balances),
    ):
        rows = [t for t in tables or [] if t.num_rows]
        if rows:
            data.table(name).merge_new(
                pa.concat_tables(rows).cast(schema), ["row_key"], metadata=meta
            )
    rows = [t for t in coverage if t.num_rows]
    if rows:
        data.table(lake.STATEMENT_COVERAGE).merge_new(
            pa.concat_tables(rows).cast(STATEMENT_COVERAGE_SCHEMA), COVERAGE_KEY, metadata=meta
        )
    return inserted


def _read_columns(dataset: ds.Dataset | None, columns: list[str], schema: pa.Schema) -> pa.Table:
    if dataset is None:
        return schema.empty_table()
    return dataset.to_table(columns=columns).cast(schema)


def pair(line_id: Any, fingerprint: Any) -> pa.Array:
    """line_id and fingerprint as one string key (both are fixed-length hex)."""
    joined = pc.binary_join_element_wise(line_id, fingerprint, ":")
    return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


class Seen:
    """What statement_lines and statement_quarantine already hold, as DuckDB-visible Arrow.

    `seen_versions(line_id, fingerprint)` and `seen_quarantine(row_key)` are registered on
    the connection (no copy into DuckDB tables) and grow as an import goes through its files.
    """

    VERSIONS = pa.schema([("line_id", pa.string()), ("fingerprint", pa.string())])
    QUARANTINE = pa.schema([("row_key", pa.string())])

    def __init__(self, con: duckdb.DuckDBPyConnection, data: DataDir):
        self.con = con
        self.data = data
        self._known: pa.Table | None = None
        self._known_new: list[pa.Table] = []
        self.versions = _read_columns(lines_dataset(data), self.VERSIONS.names, self.VERSIONS)
        self.quarantine = _read_columns(
            quarantine_dataset(data), self.QUARANTINE.names, self.QUARANTINE
        )
        con.register("seen_versions", self.versions)
        con.register("seen_quarantine", self.quarantine)

    KNOWN = pa.schema(
        [
            (name, STATEMENT_LINES_SCHEMA.field(name).type)
            for name in (
                "line_id",
                "account",
                "booked_at",
                "direction",
                "amount_cents",
                "kind",
                "bank_reference",
                "end_to_end_id",
            )
        ]
    )

    def known_lines(self) -> pa.Table:
        """Stored and newly kept lines that carry a PIX id or a bank reference (read lazily:
        only a file with lines lacking a PIX id needs them, to find the same movement)."""
        if self._known is None:
            dataset = lines_dataset(self.data)
            if dataset is not None:
                identified = (
                    pc.field("end_to_end_id").is_valid() | pc.field("bank_reference").is_valid()
                )
                table = dataset.to_table(columns=self.KNOWN.names, filter=identified)
                self._known = table.cast(self.KNOWN)
            else:
                self._known = self.KNOWN.empty_table()
        return pa.concat_tables([self._known, *self._known_new])

    def line_ids(self) -> pa.Array:
        """Every line_id stored (for membership tests)."""
        return self.versions.column("line_id").combine_chunks()

    def pairs(self) -> pa.Array:
        """Every stored (line_id, fingerprint) as one string (for membership tests)."""
        return pair(self.versions.column("line_id"), self.versions.column("fingerprint"))

    def add_versions(self, table: pa.Table) -> None:
        """Remember newly stored (line_id, fingerprint) pairs."""
        self.versions = pa.concat_tables(
            [self.versions, table.select(self.VERSIONS.names).cast(self.VERSIONS)]
        )
        self.con.register("seen_versions", self.versions)
        identified = pc.or_(
            pc.is_valid(table.column("end_to_end_id")), pc.is_valid(table.column("bank_reference"))
        )
        self._known_new.append(table.filter(identified).select(self.KNOWN.names).cast(self.KNOWN))

    def add_quarantine(self, table: pa.Table) -> None:
        """Remember newly stored quarantine row keys."""
        self.quarantine = pa.concat_tables(
            [self.quarantine, table.select(self.QUARANTINE.names).cast(self.QUARANTINE)]
        )
        self.con.register("seen_quarantine", self.quarantine)


def write_parquet_atomic(table: pa.Table, final: Path) -> Path:
    """Write `table` to `final` so that it appears whole or not at all."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f"{TMP_PREFIX}{final.stem}.partial"
    try:
        pq.write_table(table, tmp, compression="zstd")
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, final)
        fsync_dir(final.parent)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return final


def line_path(data: DataDir, source_format: str, batch: str) -> Path:
    """`data/statements/source=<format>/<batch>.parquet`."""
    return data.statements / f"source={source_format}" / f"{batch}.parquet"


def coverage_files(data: DataDir) -> list[Path]:
    """Every committed statement-coverage Parquet file."""
    return sorted((data.statements / COVERAGE_DIR).glob("*.parquet"))


def coverage_path(data: DataDir, batch: str) -> Path:
    """`data/statements/coverage/<batch>.parquet`."""
    return data.statements / COVERAGE_DIR / f"{batch}.parquet"


def pages_files(data: DataDir) -> list[Path]:
    """Every committed Open Finance pages Parquet file."""
    return sorted((data.statements / PAGES_DIR).glob("*.parquet"))


def pages_path(data: DataDir, batch: str) -> Path:
    """`data/statements/pages/<batch>.parquet`."""
    return data.statements / PAGES_DIR / f"{batch}.parquet"


def balances_files(data: DataDir) -> list[Path]:
    """Every committed statement-balances Parquet file."""
    return sorted((data.statements / BALANCES_DIR).glob("*.parquet"))


def balances_path(data: DataDir, batch: str) -> Path:
    """`data/statements/balances/<batch>.parquet`."""
    return data.statements / BALANCES_DIR / f"{batch}.parquet"


def quarantine_path(data: DataDir, batch: str) -> Path:
    """`data/statements/quarantine/<batch>.parquet`."""
    return data.statements / QUARANTINE_DIR / f"{batch}.parquet"
