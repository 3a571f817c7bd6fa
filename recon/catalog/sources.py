"""The sources the catalog views select from, for a data directory as it is now.

Views are defined one per file in `recon/models/catalog/NN_name.sql`, run in file-name order.
A view file only selects from names: this module registers the *sources* it reads
(`sources`), the same on every engine (DuckDB here; Spark in recon.engine.spark):

    source_snapshot_files         every committed snapshot part (Parquet), INTENTS_SCHEMA
    source_latest_snapshot_files  the parts of the latest committed *full, consistent* snapshot
    source_snapshot_manifests     one row per committed snapshot, from its `_manifest.json`
    source_statement_files        every statement Parquet file, STATEMENT_LINES_SCHEMA
    source_quarantine_files       every quarantine Parquet file, STATEMENT_QUARANTINE_SCHEMA
    source_coverage_files         every statement-coverage Parquet file, STATEMENT_COVERAGE_SCHEMA
    source_balance_files          every statement-balances Parquet file, STATEMENT_BALANCES_SCHEMA
    source_run_matches            the latest run's matches.parquet, MATCHES_SCHEMA
    source_run_exceptions         the latest run's exceptions.parquet, EXCEPTIONS_SCHEMA
    source_run_awaiting           the latest run's awaiting.parquet, AWAITING_SCHEMA
    source_run_suggestions        the latest run's suggestions.parquet, SUGGESTIONS_SCHEMA
    source_lifecycle              the default lifecycle order (recon.schemas)
    source_history_state          the latest run's history_state.parquet when it fits the
                                  snapshots kept now (see `history_sources`), else empty
    source_history_snapshot_files the parts of the snapshots that state does not cover (all
                                  of them without one): what the history checks read

A source with no file yet is a typed empty relation, so every view exists with its full
column list on a fresh data directory.

A remote data directory (`s3://…`, recon.lake) gives the same sources from its Delta tables:
each source is a pyarrow dataset over the files of the latest committed version (DuckDB
scans it as an Arrow object; Spark is handed its rows), so no engine needs an object-store
extension or jar.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from recon import lake
from recon.catalog.run_folders import latest_run, remote_runs, run_table_files
from recon.catalog.snapshots import SnapshotInfo, instant, latest_snapshot, list_snapshots
from recon.config import DataDir
from recon.engine.base import rows_table
from recon.engine.duck import duck_type, empty_relation, parquet_relation
from recon.schemas import (
    AWAITING_SCHEMA,
    EXCEPTIONS_SCHEMA,
    HISTORY_STATE_FILE,
    HISTORY_STATE_RANKS,
    HISTORY_STATE_SCHEMA,
    HISTORY_STATE_SNAPSHOTS,
    INTENTS_SCHEMA,
    MATCHES_SCHEMA,
    STATEMENT_BALANCES_SCHEMA,
    STATEMENT_COVERAGE_SCHEMA,
    STATEMENT_LINES_SCHEMA,
    STATEMENT_QUARANTINE_SCHEMA,
    SUGGESTIONS_SCHEMA,
    history_state_ranks,
)

STATEMENT_GLOB = "statements/source=*/*.parquet"
QUARANTINE_GLOB = "statements/quarantine/*.parquet"
COVERAGE_GLOB = "statements/coverage/*.parquet"
BALANCES_GLOB = "statements/balances/*.parquet"


def _quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return _quote(value.isoformat())
    return _quote(str(value))


_MANIFEST_COLUMNS = (
    ("run_id", "VARCHAR"),
    ("snapshot_at", "TIMESTAMPTZ"),
    ("kind", "VARCHAR"),
    ("intent_type_filter", "VARCHAR"),
    ("status_filter", "VARCHAR"),
    ("consistent", "BOOLEAN"),
    ("rows", "BIGINT"),
    ("unique_ids", "BIGINT"),
    ("total_first", "BIGINT"),
    ("total_last", "BIGINT"),
    ("duplicates_dropped", "BIGINT"),
    ("passes", "BIGINT"),
    ("pages", "BIGINT"),
    ("retries", "BIGINT"),
    ("base_url", "VARCHAR"),
    ("path", "VARCHAR"),
)


def _manifest_rows(snaps: list[SnapshotInfo]) -> tuple[tuple[Any, ...], ...]:
    rows = []
    for snap in snaps:
        m = snap.manifest or {}
        filters = m.get("filters") or {}
        values = {
            "run_id": snap.run_id,
            "snapshot_at": instant(m.get("snapshot_at")),
            "kind": "full" if snap.full else "filtered",
            "intent_type_filter": filters.get("intent_type", "all"),
            "status_filter": filters.get("status", "all"),
            "consistent": snap.consistent,
            "path": str(snap.path),
        }
        for name, typ in _MANIFEST_COLUMNS:
            if name not in values:
                v = m.get(name)
                values[name] = v if typ != "BIGINT" or isinstance(v, int) else None
        rows.append(tuple(values[n] for n, _ in _MANIFEST_COLUMNS))
    return tuple(rows)


_ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "BOOLEAN": pa.bool_(),
    "BIGINT": pa.int64(),
    "INTEGER": pa.int32(),
}
MANIFESTS_SCHEMA = pa.schema([(n, _ARROW_TYPES[t]) for n, t in _MANIFEST_COLUMNS])
LIFECYCLE_SCHEMA = pa.schema(
    [("intent_type", pa.string()), ("status", pa.string()), ("stage_rank", pa.int32()),
     ("kind", pa.string())]
)  # fmt: skip


@dataclass(frozen=True)
class Source:
    """A named input the catalog views select from (`source_<name>`): Parquet files (found
    by `pattern`, a glob, when there is one: DuckDB re-reads it), or a few rows in memory.

    Every engine registers the same sources under the same names; the view files only
    select from names (recon/models/catalog), so one text serves every engine.
    """

    name: str
    schema: pa.Schema
    files: tuple[str, ...] = ()
    pattern: str | None = None
    rows: tuple[tuple[Any, ...], ...] | None = None
    dataset: Any = None  # a pyarrow dataset (a remote data directory's committed files)

    def table(self) -> pa.Table:
        """The in-memory rows as an Arrow table of the source's schema."""
        return rows_table(self.rows or (), self.schema)

    def duckdb_relation(self) -> str:
        """The source as a DuckDB SELECT (typed, empty when there is nothing to read)."""
        if self.rows is not None:
            return _values_relation(self.rows, self.schema)
        if not self.files:
            return empty_relation(self.schema)
        if self.pattern:
            return parquet_relation(self.files, self.schema, pattern=self.pattern)
        return parquet_relation(self.files, self.schema)


def _values_relation(rows: tuple[tuple[Any, ...], ...], schema: pa.Schema) -> str:
    if not rows:
        return empty_relation(schema)
    casts = ", ".join(f"CAST({f.name} AS {duck_type(f.type)}) AS {f.name}" for f in schema)
    names = ", ".join(f.name for f in schema)
    values = ", ".join("(" + ", ".join(_literal(v) for v in row) + ")" for row in rows)
    return f"(SELECT {casts} FROM (VALUES {values}) AS t({names}))"


def input_bytes(data: str | os.PathLike[str] | DataDir | None = None) -> int:
    """Bytes on disk of what a reconciliation reads: the latest full, consistent snapshot and
    every statement file (the engine sizes its work storage by it)."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    latest = latest_snapshot(dd)
    if dd.remote:
        wanted = set(latest.files if latest else ())
        snapshot_bytes = sum(
            size for uri, _p, size in dd.table(lake.SNAPSHOTS).files() if uri in wanted
        )
        lines = dd.table(lake.STATEMENT_LINES).files()
        return snapshot_bytes + sum(size for _u, _p, size in lines)
    files = [*(latest.files if latest else ()), *dd.root.glob(STATEMENT_GLOB)]
    return sum(Path(f).stat().st_size for f in files)


def sources(data: DataDir) -> list[Source]:
    """Every source the catalog views read, for the data directory as it is now."""
    if data.remote:
        return _remote_sources(data)
    root = data.root
    run = latest_run(data)
    snaps = list_snapshots(data)
    latest = next((s for s in reversed(snaps) if s.full and s.consistent), None)

    def globbed(name: str, pattern: str, schema: pa.Schema) -> Source:
        files = tuple(sorted(str(p) for p in root.glob(pattern)))
        return Source(name, schema, files, str(root / pattern) if files else None)

    def run_file(name: str, file: str, schema: pa.Schema) -> Source:
        found = run is not None and (run / file).is_file()
        return Source(name, schema, (str(run / file),) if found and run else ())

    state, unfolded = history_sources(run, snaps)

    return [
        Source(
            "source_snapshot_files", INTENTS_SCHEMA, tuple(str(f) for s in snaps for f in s.files)
        ),
        Source(
            "source_latest_snapshot_files",
            INTENTS_SCHEMA,
            tuple(str(f) for f in latest.files) if latest else (),
        ),
        Source("source_snapshot_manifests", MANIFESTS_SCHEMA, rows=_manifest_rows(snaps)),
        globbed("source_statement_files", STATEMENT_GLOB, STATEMENT_LINES_SCHEMA),
        globbed("source_quarantine_files", QUARANTINE_GLOB, STATEMENT_QUARANTINE_SCHEMA),
        globbed("source_coverage_files", COVERAGE_GLOB, STATEMENT_COVERAGE_SCHEMA),
        globbed("source_balance_files", BALANCES_GLOB, STATEMENT_BALANCES_SCHEMA),
        run_file("source_run_matches", "matches.parquet", MATCHES_SCHEMA),
        run_file("source_run_exceptions", "exceptions.parquet", EXCEPTIONS_SCHEMA),
        run_file("source_run_awaiting", "awaiting.parquet", AWAITING_SCHEMA),
        run_file("source_run_suggestions", "suggestions.parquet", SUGGESTIONS_SCHEMA),
        Source("source_lifecycle", LIFECYCLE_SCHEMA, rows=lifecycle_rows()),
        Source("source_history_state", HISTORY_STATE_SCHEMA, state),
        Source(
            "source_history_snapshot_files",
            INTENTS_SCHEMA,
            tuple(str(f) for s in unfolded for f in s.files),
        ),
    ]


def history_sources(
    run: Path | None, snaps: list[SnapshotInfo]
) -> tuple[tuple[str, ...], list[SnapshotInfo]]:
    """The history state file the history checks start from (none, or the latest run's
    `history_state.parquet`) and the snapshots they still read.

    A state covers a set of snapshots (listed in its metadata) and holds, per intent, its
    last observation there and its latest step backwards. Folding later snapshots onto it
    gives what reading every snapshot gives, when: every snapshot it covers is still kept;
    every snapshot it does not cover was taken after all of those (by snapshot time, then
    run id); and the latest full, consistent snapshot is one of the new ones. Otherwise (a
    snapshot deleted or added in between, no new full snapshot, an unreadable or older
    file) there is no state and every snapshot is read, as without one."""
    file = run / HISTORY_STATE_FILE if run is not None else None
    covered = state_snapshots(file) if file is not None else None
    if file is None or not covered:
        return (), snaps
    kept = {s.run_id: s for s in snaps}
    latest = next((s for s in reversed(snaps) if s.full and s.consistent), None)
    if not covered <= kept.keys() or latest is None or latest.run_id in covered:
        return (), snaps

    def when(snap: SnapshotInfo) -> tuple[datetime, str] | None:
        at = instant((snap.manifest or {}).get("snapshot_at"))
        return (at, snap.run_id) if at is not None else None

    unfolded = [s for s in snaps if s.run_id not in covered]  # the latest among them
    folded = [w for r in covered if (w := when(kept[r])) is not None]
    after = [w for s in unfolded if (w := when(s)) is not None]
    if len(folded) < len(covered) or len(after) < len(unfolded) or max(folded) >= min(after):
        return (), snaps  # a snapshot without its time, or one older than the state
    return (str(file),), unfolded


def state_snapshots(file: Path) -> set[str] | None:
    """The run ids of the snapshots a history state file covers; None when there is no such
    file, or it is unreadable, of another schema, or made under other status ranks."""
    import pyarrow.parquet as pq

    if not file.is_file():
        return None
    try:
        schema = pq.read_schema(file)
        metadata = schema.metadata or {}
        covered = json.loads(metadata[HISTORY_STATE_SNAPSHOTS])
        if metadata[HISTORY_STATE_RANKS].decode() != history_state_ranks():
            return None
    except (OSError, ValueError, KeyError, pa.ArrowException):
        return None
    if not schema.equals(HISTORY_STATE_SCHEMA.with_metadata(schema.metadata)):
        return None
    if not isinstance(covered, list) or not all(isinstance(r, str) for r in covered):
        return None
    return set(covered)


def _remote_sources(data: DataDir) -> list[Source]:
    """`sources` of a remote data directory: datasets over its committed files."""
    snaps = list_snapshots(data)
    latest = next((s for s in reversed(snaps) if s.full and s.consistent), None)
    runs = remote_runs(data)
    run = runs[-1] if runs else None

    def files_source(name: str, table: str, files: Any, schema: pa.Schema) -> Source:
        uris = tuple(str(f) for f in files)
        dataset = data.table(table).dataset(uris, schema) if uris else None
        return Source(name, schema, uris, dataset=dataset)

    def whole(name: str, table: str, schema: pa.Schema) -> Source:
        return files_source(name, table, (u for u, _p, _s in data.table(table).files()), schema)

    def run_source(name: str, table: str, schema: pa.Schema) -> Source:
        files = run_table_files(data, table, run) if run else ()
        return files_source(name, f"runs/{table}", files, schema)

    return [
        files_source(
            "source_snapshot_files", lake.SNAPSHOTS, (f for s in snaps for f in s.files),
            INTENTS_SCHEMA,
        ),
        files_source(
            "source_latest_snapshot_files", lake.SNAPSHOTS, latest.files if latest else (),
            INTENTS_SCHEMA,
        ),
        Source("source_snapshot_manifests", MANIFESTS_SCHEMA, rows=_manifest_rows(snaps)),
        whole("source_statement_files", lake.STATEMENT_LINES, STATEMENT_LINES_SCHEMA),
        whole("source_quarantine_files", lake.STATEMENT_QUARANTINE, STATEMENT_QUARANTINE_SCHEMA),
        whole("source_coverage_files", lake.STATEMENT_COVERAGE, STATEMENT_COVERAGE_SCHEMA),
        whole("source_balance_files", lake.STATEMENT_BALANCES, STATEMENT_BALANCES_SCHEMA),
        run_source("source_run_matches", "matches", MATCHES_SCHEMA),
        run_source("source_run_exceptions", "exceptions", EXCEPTIONS_SCHEMA),
        run_source("source_run_awaiting", "awaiting", AWAITING_SCHEMA),
        run_source("source_run_suggestions", "suggestions", SUGGESTIONS_SCHEMA),
        Source("source_lifecycle", LIFECYCLE_SCHEMA, rows=lifecycle_rows()),
        # no history state on object storage: the history checks read every snapshot
        Source("source_history_state", HISTORY_STATE_SCHEMA),
        files_source(
            "source_history_snapshot_files", lake.SNAPSHOTS, (f for s in snaps for f in s.files),
            INTENTS_SCHEMA,
        ),
    ]  # fmt: skip


def lifecycle_rows() -> tuple[tuple[str, str, int | None, str], ...]:
    """The default `lifecycle_order` rows, from the one status vocabulary
    (recon.schemas.status_vocabulary): SQL never spells the statuses out itself."""
    from recon.schemas import status_vocabulary

    return tuple(
        (kind, status, rank, role) for kind, status, rank, role, _t, _m in status_vocabulary()
    )
