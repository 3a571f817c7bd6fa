"""Committed snapshots of a data directory and what their manifests say.

Which snapshot is "the latest" (the `intents` view): the greatest run id (run ids sort by
time) among committed snapshots that are *full* (manifest filters intent_type=all and
status=all) and *consistent* (manifest consistent=true). A filtered extract
(`--intent-type`/`--status`) or one published with consistent=false is still in
`intent_snapshots` (its rows are true observations) but never becomes `intents`. A committed
folder without a manifest (written by hand or another tool) counts as full and consistent.

On a remote data directory (`s3://…`, recon.lake) a snapshot is a commit to the
`snapshots` table that carries a manifest.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon import lake
from recon.config import DataDir

SNAPSHOT_DIR_GLOB = "snapshot_date=*/run_id=*"
MANIFEST_NAME = "_manifest.json"


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


def holds_nothing(data: DataDir) -> bool:
    """Whether a data directory that exists has no snapshot and no statement line yet.

    A remote one is judged by its tables alone (a store it cannot read raises LakeError):
    its local side never holds either. A local folder that does not exist is not "empty"
    (`sql` says it is missing)."""
    if data.remote:
        return not list_snapshots(data) and data.table(lake.STATEMENT_LINES).version() is None
    if not data.root.is_dir():
        return False
    folders = (data.snapshots, data.statements)
    return not any(any(folder.iterdir()) for folder in folders if folder.is_dir())


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


def instant(value: Any) -> datetime | None:
    """A manifest's ISO 8601 time as an aware datetime (None if missing or unreadable)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def manifest(path: Path) -> dict[str, Any]:
    """Read a `_manifest.json` / `summary.json`."""
    return json.loads(path.read_text(encoding="utf-8"))
