"""`recon migrate --to s3://bucket/prefix`: copy a local data directory to object storage.

Local data directories stay plain Parquet (docs/object-storage.md); this is
how one moves to a remote data directory. Every committed snapshot becomes one commit of the
remote `snapshots` table (its manifest with it), the stored statement lines, quarantine, Open
Finance pages read and coverage are MERGEd on their keys, and every committed run is published as `reconcile`
publishes one (its tables, then its summaries row). The files only the running machine uses
(decisions.csv, manual_matches.csv, the audit trail, recon.toml, review/) are copied to the
remote data directory's local side when it has none of its own.

Idempotent at every commit: a snapshot (one commit) or run (its summaries row, committed
last) already there by its id is skipped; a run's tables cut short before its summaries row
are replaced whole, partition by partition (`lake.Table.replace_partition`), never appended
twice; a MERGE stores no key twice. So a migration cut short anywhere is finished by running
it again, and leaves what one uncut migration leaves. The source is held under its writer
lock, the target's local side under its own.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from recon import catalog
from recon.config import DataDir, new_run_id
from recon.errors import UsageError
from recon.extraction.snapshot import publish_remote as publish_snapshot
from recon.reconciliation.runs import load_run
from recon.reconciliation.runs import publish_remote as publish_run
from recon.schemas import STATEMENT_COVERAGE_SCHEMA, conform
from recon.statements import stored
from recon.statements.importer import FINGERPRINT_SQL
from recon.storage import atomic_dir, writer_lock

__all__ = ["MigrationResult", "migrate"]

# the local side's files a remote data directory uses as they are
_SIDE_FILES = ("decisions.csv", "manual_matches.csv", "audit.jsonl", "audit.head", "recon.toml")


@dataclass
class MigrationResult:
    """What one migration copied (and skipped as already there)."""

    target: str
    snapshots: int = 0
    snapshots_skipped: int = 0
    line_versions: int = 0
    runs: int = 0
    runs_skipped: int = 0
    side_files: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"migrated to {self.target}: {self.snapshots} snapshots "
            f"({self.snapshots_skipped} already there), {self.line_versions} statement line "
            f"versions stored, {self.runs} runs ({self.runs_skipped} already there)"
            + (f"; copied {', '.join(self.side_files)}" if self.side_files else "")
        )


def migrate(source: str | os.PathLike[str] | DataDir | None, to: str | DataDir) -> MigrationResult:
    """Copy the local data directory `source` to the remote data directory `to`."""
    src = source if isinstance(source, DataDir) else DataDir.resolve(source)
    dst = to if isinstance(to, DataDir) else DataDir.resolve(to)
    if src.remote:
        raise UsageError(f"{src.uri}: migrate copies a local data directory (--data DIR)")
    if not dst.remote:
        raise UsageError(f"--to {dst.root}: migrate copies to object storage (s3://bucket/prefix)")
    if not src.root.is_dir():
        raise UsageError(f"no data directory at {src.root}")
    dst.ensure()
    result = MigrationResult(str(dst))
    with writer_lock(src.root, "migrate"), writer_lock(dst.root, "migrate"):
        _snapshots(src, dst, result)
        _statements(src, dst, result)
        _runs(src, dst, result)
        _side_files(src, dst, result)
    return result


def _snapshots(src: DataDir, dst: DataDir, result: MigrationResult) -> None:
    there = {s.run_id for s in catalog.list_snapshots(dst)}
    for snap in catalog.list_snapshots(src):
        if snap.run_id in there:
            result.snapshots_skipped += 1
            continue
        manifest = dict(snap.manifest or {})
        manifest.setdefault("run_id", snap.run_id)
        if "snapshot_at" not in manifest:  # a folder without a manifest: its date only
            day = Path(snap.path).parent.name.removeprefix("snapshot_date=")
            manifest["snapshot_at"] = f"{day}T00:00:00Z"
        publish_snapshot(dst, [Path(f) for f in snap.files], manifest)
        result.snapshots += 1


def _statements(src: DataDir, dst: DataDir, result: MigrationResult) -> None:
    lines = [_stored_lines(pq.read_table(f)) for f in stored.line_files(src)]
    quarantine = [
        pq.read_table(f).select(stored.QUARANTINE_STORED_SCHEMA.names)
        for f in stored.quarantine_files(src)
    ]
    coverage = [
        pq.read_table(f).select(STATEMENT_COVERAGE_SCHEMA.names) for f in stored.coverage_files(src)
    ]
    pages = [pq.read_table(f).cast(stored.PAGES_STORED_SCHEMA) for f in stored.pages_files(src)]
    balances = [
        pq.read_table(f).cast(stored.BALANCES_STORED_SCHEMA) for f in stored.balances_files(src)
    ]
    batch = "migrate-" + new_run_id(datetime.now(UTC))
    result.line_versions = stored.merge_remote(
        dst, lines, quarantine, coverage, batch, pages=pages, balances=balances
    )


def _stored_lines(table: pa.Table) -> pa.Table:
    """A stored lines file as the remote table holds it: every STORED_SCHEMA column (one an
    older file lacks is null; a missing fingerprint computed as the importer does)."""
    schema = stored.STORED_SCHEMA
    rows = conform(table, schema)
    if "fingerprint" in table.column_names or rows.num_rows == 0:
        return rows
    con = duckdb.connect()
    try:
        con.execute("SET TimeZone = 'UTC'")
        con.register("batch", rows.drop_columns(["fingerprint"]))
        filled = con.sql(f"SELECT *, {FINGERPRINT_SQL} AS fingerprint FROM batch").to_arrow_table()
    finally:
        con.close()
    return filled.cast(schema)


def _runs(src: DataDir, dst: DataDir, result: MigrationResult) -> None:
    there = set(catalog.remote_runs(dst))
    folders = sorted(
        p
        for p in (src.runs.iterdir() if src.runs.is_dir() else ())
        if p.is_dir() and not p.name.startswith(".") and (p / "summary.json").is_file()
    )
    for folder in folders:
        if folder.name in there:
            result.runs_skipped += 1
            continue
        run = load_run(folder)
        publish_run(dst, folder.name, run.summary, folder)
        if not (dst.runs / folder.name).exists():  # the local side's copy, as reconcile leaves
            with atomic_dir(dst.runs / folder.name) as tmp:
                shutil.copytree(folder, tmp, dirs_exist_ok=True)
        result.runs += 1


def _side_files(src: DataDir, dst: DataDir, result: MigrationResult) -> None:
    for name in _SIDE_FILES:
        origin, target = src.root / name, dst.root / name
        if origin.is_file() and not target.exists():
            shutil.copy2(origin, target)
            result.side_files.append(name)
    review, target_review = src.root / "review", dst.root / "review"
    if review.is_dir() and not target_review.exists():
        shutil.copytree(review, target_review)
        result.side_files.append("review/")
