"""The catalog: views over the Parquet in the data directory, named as users type them.

Views are defined one per file in `recon/models/catalog/NN_name.sql`, run in file-name order.
A view file only selects from names: this module registers the *sources* it reads
(`sources`), the same on every engine (DuckDB here; Spark in recon.engine.spark):

    source_snapshot_files         every committed snapshot part (Parquet), INTENTS_SCHEMA
    source_latest_snapshot_files  the parts of the latest committed *full, consistent* snapshot
    source_snapshot_manifests     one row per committed snapshot, from its `_manifest.json`
    source_statement_files        every statement Parquet file, STATEMENT_LINES_SCHEMA
    source_quarantine_files       every quarantine Parquet file, STATEMENT_QUARANTINE_SCHEMA
    source_coverage_files         every statement-coverage Parquet file, STATEMENT_COVERAGE_SCHEMA
    source_run_matches            the latest run's matches.parquet, MATCHES_SCHEMA
    source_run_exceptions         the latest run's exceptions.parquet, EXCEPTIONS_SCHEMA
    source_run_awaiting           the latest run's awaiting.parquet, AWAITING_SCHEMA
    source_lifecycle              the default lifecycle order (recon.schemas)
    source_history_state          the latest run's history_state.parquet when it fits the
                                  snapshots kept now (see `history_sources`), else empty
    source_history_snapshot_files the parts of the snapshots that state does not cover (all
                                  of them without one): what the history checks read

A source with no file yet is a typed empty relation, so every view exists with its full
column list on a fresh data directory.

Which snapshot is "the latest" (the `intents` view): the greatest run id (run ids sort by
time) among committed snapshots that are *full* (manifest filters intent_type=all and
status=all) and *consistent* (manifest consistent=true). A filtered extract
(`--intent-type`/`--status`) or one published with consistent=false is still in
`intent_snapshots` (its rows are true observations) but never becomes `intents`. A committed
folder without a manifest (written by hand or another tool) counts as full and consistent.

A remote data directory (`s3://…`, recon.lake) gives the same sources from its Delta tables:
each source is a pyarrow dataset over the files of the latest committed version (DuckDB
scans it as an Arrow object; Spark is handed its rows), so no engine needs an object-store
extension or jar. A snapshot is a commit to the `snapshots` table that carries a manifest;
a run is a row of `runs/summaries` (its tables' partitions are read through it).
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb
import pyarrow as pa

from recon import lake
from recon.config import DataDir
from recon.engine.base import rows_table
from recon.engine.duck import duck_type, empty_relation, parquet_relation
from recon.errors import UsageError
from recon.schemas import (
    AWAITING_SCHEMA,
    CANDIDATES_SCHEMA,
    EXCEPTIONS_SCHEMA,
    HISTORY_SCHEMA,
    HISTORY_STATE_FILE,
    HISTORY_STATE_RANKS,
    HISTORY_STATE_SCHEMA,
    HISTORY_STATE_SNAPSHOTS,
    INTENTS_SCHEMA,
    MATCHES_SCHEMA,
    STATEMENT_COVERAGE_SCHEMA,
    STATEMENT_LINES_SCHEMA,
    STATEMENT_QUARANTINE_SCHEMA,
    history_state_ranks,
)

if TYPE_CHECKING:  # pandas loads only where a DataFrame is asked for (it costs ~50 MB)
    import pandas as pd

    from recon.engine.base import Engine

__all__ = [
    "VIEW_NAMES",
    "SnapshotInfo",
    "Source",
    "connect",
    "input_bytes",
    "latest_run",
    "latest_snapshot",
    "list_snapshots",
    "register",
    "sources",
    "sql",
    "write_database",
]

VIEW_NAMES = (
    "intents",
    "intent_snapshots",
    "snapshots",
    "status_history",
    "statement_lines",
    "statement_coverage",
    "recon_matches",
    "recon_exceptions",
    "recon_awaiting",
)

SNAPSHOT_GLOB = "snapshots/snapshot_date=*/run_id=*/part-*.parquet"
SNAPSHOT_DIR_GLOB = "snapshot_date=*/run_id=*"
MANIFEST_NAME = "_manifest.json"
STATEMENT_GLOB = "statements/source=*/*.parquet"
QUARANTINE_GLOB = "statements/quarantine/*.parquet"
COVERAGE_GLOB = "statements/coverage/*.parquet"


@dataclass(frozen=True)
class SnapshotInfo:
    """A committed snapshot folder and what its manifest says."""

    run_id: str
    path: Path | str  # the folder; on a remote data directory, the partition's URI
    files: tuple[Path | str, ...]
    manifest: dict[str, Any] | None

    @property
    def full(self) -> bool:
        """Unfiltered (every intent type and status)."""
        filters = (self.manifest or {}).get("filters") or {}
        return filters.get("intent_type", "all") == "all" and filters.get("status", "all") == "all"

    @property
    def consistent(self) -> bool:
        return bool((self.manifest or {}).get("consistent", True))


def list_snapshots(data: str | os.PathLike[str] | DataDir | None = None) -> list[SnapshotInfo]:
    """Committed snapshots, oldest first (by run id). Temp folders (`.tmp-*`) never match."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    if dd.remote:
        return _remote_snapshots(dd)
    if not dd.snapshots.is_dir():
        return []
    found = []
    for folder in dd.snapshots.glob(SNAPSHOT_DIR_GLOB):
        if not folder.is_dir():
            continue
        files = tuple(sorted(folder.glob("part-*.parquet")))
        if not files:
            continue
        manifest_path = folder / MANIFEST_NAME
        info = None
        if manifest_path.is_file():
            try:
                info = manifest(manifest_path)
            except (OSError, ValueError):
                info = {"consistent": False, "unreadable_manifest": True}
        found.append(SnapshotInfo(folder.name.removeprefix("run_id="), folder, files, info))
    return sorted(found, key=lambda s: s.run_id)


def _remote_snapshots(dd: DataDir) -> list[SnapshotInfo]:
    """The snapshots of a remote data directory: one per commit of the `snapshots` table
    that carries a manifest (its files are the partition snapshot_run=<run id>); rows
    another tool committed without one count as full and consistent, as a folder without a
    manifest does."""
    table = dd.table(lake.SNAPSHOTS)
    delta = table.load()
    if delta is None:
        return []
    files: dict[str, list[str]] = defaultdict(list)
    dates: dict[str, str] = {}
    for uri, parts, _size in table.files(delta):
        run = str(parts.get("snapshot_run") or "")
        files[run].append(uri)
        dates[run] = str(parts.get("snapshot_date") or "")
    manifests = _snapshot_manifests(dd, table, delta)
    out = []
    for run in sorted(set(files) | set(manifests)):
        manifest = manifests.get(run)
        day = dates.get(run) or str((manifest or {}).get("snapshot_at", ""))[:10]
        path = f"{table.uri}/snapshot_date={day}/snapshot_run={run}"
        out.append(SnapshotInfo(run, path, tuple(sorted(files.get(run, ()))), manifest))
    return out


MANIFEST_CACHE = ".lake-cache/snapshot-manifests.json"


def _snapshot_manifests(dd: DataDir, table: lake.Table, delta: Any) -> dict[str, dict[str, Any]]:
    """run id -> manifest of every snapshot committed up to `delta`'s version.

    Commit entries never change, so what was read is kept on the local side
    (`.lake-cache/`, keyed by the table's id) and only newer commits are read from the store:
    opening the catalog costs one request however many snapshots there are."""
    version = int(delta.version())
    table_id = str(delta.metadata().id)
    cache = dd.root / MANIFEST_CACHE
    known: dict[str, Any] = {}
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    usable = (
        isinstance(known, dict)
        and known.get("table_id") == table_id
        and isinstance(known.get("version"), int)
        and known["version"] <= version
        and isinstance(known.get("manifests"), dict)
    )
    after = int(known["version"]) if usable else -1
    manifests: dict[str, dict[str, Any]] = dict(known["manifests"]) if usable else {}
    for commit in table.commits(after=after, table=delta):
        found = commit["recon"].get("snapshot")
        if commit["version"] <= version and isinstance(found, dict) and found.get("run_id"):
            manifests[str(found["run_id"])] = found
    if after != version:
        payload = {"table_id": table_id, "version": version, "manifests": manifests}
        try:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_name(f".tmp-{cache.name}-{os.getpid()}")
            tmp.write_text(json.dumps(payload, sort_keys=True, default=str), encoding="utf-8")
            os.replace(tmp, cache)
        except OSError:  # a read-only local side: read the history every time
            pass
    return manifests


def latest_snapshot(
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    full: bool = True,
    consistent: bool = True,
) -> SnapshotInfo | None:
    """The latest committed snapshot (by default: full and consistent), or None."""
    for snap in reversed(list_snapshots(data)):
        if (not full or snap.full) and (not consistent or snap.consistent):
            return snap
    return None


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
            "snapshot_at": _instant(m.get("snapshot_at")),
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


def _instant(value: Any) -> datetime | None:
    """A manifest's ISO 8601 time as an aware datetime (None if missing or unreadable)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


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


# a remote data directory's run tables (runs/<name>, partitioned by run) and their schemas
RUN_TABLE_SCHEMAS = {
    "matches": MATCHES_SCHEMA,
    "exceptions": EXCEPTIONS_SCHEMA,
    "awaiting": AWAITING_SCHEMA,
    "candidates": CANDIDATES_SCHEMA,
    "history": HISTORY_SCHEMA,
}
# runs/summaries: one row per committed run (written after its tables: the run's commit)
SUMMARIES_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("as_of", pa.string()),
        ("summary", pa.string()),  # summary.json
        ("flows", pa.binary()),  # flows.parquet's bytes (frames of varying columns)
    ]
)


def remote_runs(data: DataDir) -> list[str]:
    """The committed run ids of a remote data directory, oldest first."""
    table = data.table(lake.RUN_SUMMARIES)
    uris = [uri for uri, _p, _s in table.files()]
    if not uris:
        return []
    ids = table.dataset(uris, SUMMARIES_SCHEMA).to_table(columns=["run_id"]).column("run_id")
    return sorted(set(ids.to_pylist()))


def _field(name: str) -> Any:
    import pyarrow.dataset as ds

    return ds.field(name)


def run_table_files(data: DataDir, name: str, run_id: str) -> tuple[str, ...]:
    """The committed files of one run in the remote table runs/<name>."""
    table = data.table(f"runs/{name}")
    return tuple(uri for uri, parts, _s in table.files() if parts.get(lake.RUN_PARTITION) == run_id)


def materialize_run(data: DataDir, run_id: str) -> Path:
    """A remote run as a local folder (`<local side>/runs/<run_id>/`, the layout of a local
    run), written once from the committed tables: the report, the review app and the
    alerts read run folders. Returns the folder."""
    from recon.storage import atomic_dir

    final = data.runs / run_id
    if (final / "summary.json").is_file():
        return final
    table = data.table(lake.RUN_SUMMARIES)
    uris = [uri for uri, _p, _s in table.files()]
    rows = (
        table.dataset(uris, SUMMARIES_SCHEMA)
        .to_table(filter=_field("run_id") == run_id)
        .to_pylist()
    )
    if not rows:
        raise UsageError(f"run {run_id} is not committed in {data.uri}")
    import pyarrow.parquet as pq

    data.runs.mkdir(parents=True, exist_ok=True)
    with atomic_dir(final, replace=True) as tmp:
        for name, schema in RUN_TABLE_SCHEMAS.items():
            files = run_table_files(data, name, run_id)
            rows_of = data.table(f"runs/{name}").dataset(files, schema).to_table()
            pq.write_table(rows_of, tmp / f"{name}.parquet", compression="zstd")
        if rows[0]["flows"]:
            (tmp / "flows.parquet").write_bytes(rows[0]["flows"])
        (tmp / "summary.json").write_text(rows[0]["summary"], encoding="utf-8")
    return final


def latest_run(data: DataDir) -> Path | None:
    """The latest committed run folder (one with summary.json), by run id order (on a
    remote data directory: the latest run committed there, copied to the local side)."""
    if data.remote:
        ids = remote_runs(data)
        return materialize_run(data, ids[-1]) if ids else None
    if not data.runs.is_dir():
        return None
    runs = sorted(
        p
        for p in data.runs.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / "summary.json").is_file()
    )
    return runs[-1] if runs else None


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
        run_file("source_run_matches", "matches.parquet", MATCHES_SCHEMA),
        run_file("source_run_exceptions", "exceptions.parquet", EXCEPTIONS_SCHEMA),
        run_file("source_run_awaiting", "awaiting.parquet", AWAITING_SCHEMA),
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
        at = _instant((snap.manifest or {}).get("snapshot_at"))
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
        run_source("source_run_matches", "matches", MATCHES_SCHEMA),
        run_source("source_run_exceptions", "exceptions", EXCEPTIONS_SCHEMA),
        run_source("source_run_awaiting", "awaiting", AWAITING_SCHEMA),
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


def view_files() -> list[tuple[str, str]]:
    """(file name, SQL text) of every catalog view, in run order."""
    folder = resources.files("recon.models") / "catalog"
    files = sorted(
        (f.name, f.read_text(encoding="utf-8")) for f in folder.iterdir() if f.name.endswith(".sql")
    )
    return files


def create_views(con: duckdb.DuckDBPyConnection, data: DataDir) -> None:
    """(Re)create every source and catalog view on `con` for the data directory."""
    for source in sources(data):
        if source.dataset is not None:  # committed files on object storage, read by pyarrow
            con.register(source.name, source.dataset)
            continue
        con.execute(f"CREATE OR REPLACE VIEW {source.name} AS {source.duckdb_relation()}")
    for name, text in view_files():
        try:
            con.execute(text)
        except duckdb.Error as exc:
            raise RuntimeError(f"catalog view {name}: {exc}") from exc


def register(engine: Engine, data: str | os.PathLike[str] | DataDir | None = None) -> None:
    """Register the sources and create every catalog view on an engine (recon.engine)."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    for source in sources(dd):
        if source.rows is not None:
            engine.register_arrow(source.name, source.table())
        elif source.dataset is not None:  # object storage: the engine is handed the rows
            engine.register_arrow(source.name, source.dataset.to_table())
        else:
            engine.register_parquet(source.name, source.files, source.schema)
    for name, text in view_files():
        engine.run_view_file(name, text)


def connect(
    data: str | os.PathLike[str] | DataDir | None = None, *, database: str = ":memory:"
) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with the catalog views over `data` (default: ./data or $RECON_DATA)."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    con = duckdb.connect(database)
    con.execute("SET TimeZone = 'UTC'")
    create_views(con, dd)
    return con


def sql(
    query: str, data: str | os.PathLike[str] | DataDir | None = None, params: Any = None
) -> pd.DataFrame:
    """Run `query` over the catalog views of `data` and return a pandas DataFrame.

    `data` is the data directory (default: $RECON_DATA, else ./data); one that does not
    exist is a UsageError, not an empty answer. `params` binds `?` / `$name` parameters.
    Cents come back as int64, or nullable Int64 where a value is missing: never float.
    """
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    if not dd.remote and not dd.root.is_dir():
        raise UsageError(
            f"no data directory at {dd.root}: pass --data DIR / data=, or set RECON_DATA "
            "(`make demo` writes ./data)"
        )
    con = connect(dd)
    try:
        rel = con.sql(query, params=params) if params is not None else con.sql(query)
        if rel is None:  # a statement without a result (SET, CREATE ...)
            import pandas

            return pandas.DataFrame()
        return to_frame(rel.to_arrow_table())
    finally:
        con.close()


def to_frame(table: Any) -> pd.DataFrame:
    """An Arrow table as pandas, integers kept exact: a `*_cents` column, or any integer
    column with a missing value, becomes nullable Int64 (pandas would make it float). A
    whole-number DECIMAL (DuckDB's ``sum`` of BIGINT cents is a HUGEINT) that fits in int64
    is an integer too, not a column of Python Decimals."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type) and field.type.scale == 0:
            try:
                table = table.set_column(i, field.name, pc.cast(table.column(i), pa.int64()))
            except pa.ArrowInvalid:  # beyond int64: keep the exact decimals
                continue
    df = table.to_pandas(date_as_object=False)
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_integer(column.type) and (name.endswith("_cents") or column.null_count):
            df[name] = column.to_pandas(types_mapper=lambda _t: pd.Int64Dtype())
    return df


def write_database(data: str | os.PathLike[str] | DataDir | None = None) -> Path:
    """Write `data/recon.duckdb` holding the catalog views, for any DuckDB client."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    if dd.remote:
        raise UsageError(
            f"{dd.uri}: recon.duckdb holds views over local files; on object storage run "
            '`recon sql "QUERY"` (the views read the committed Delta files through pyarrow)'
        )
    dd.root.mkdir(parents=True, exist_ok=True)
    target = dd.duckdb_path
    tmp = target.with_name(".tmp-" + target.name)
    tmp.unlink(missing_ok=True)
    con = duckdb.connect(str(tmp))
    try:
        con.execute("SET TimeZone = 'UTC'")
        create_views(con, dd)
        con.execute(
            "CREATE OR REPLACE TABLE recon_catalog_info AS SELECT ? AS data_dir, now() AS written_at",
            [str(dd.root)],
        )
    finally:
        con.close()
    os.replace(tmp, target)
    return target


def manifest(path: Path) -> dict[str, Any]:
    """Read a `_manifest.json` / `summary.json`."""
    return json.loads(path.read_text(encoding="utf-8"))
