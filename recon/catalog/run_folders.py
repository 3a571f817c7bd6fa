"""Run folders: the latest committed run of a data directory, and a remote one's runs.

A run on a remote data directory is a row of `runs/summaries` (its tables' partitions are
read through it); the report, the review app and the alerts read run folders, so a remote
run is copied once to the local side as one (`materialize_run`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from recon import lake
from recon.config import DataDir
from recon.errors import UsageError
from recon.schemas import (
    AWAITING_SCHEMA,
    CANDIDATES_SCHEMA,
    EXCEPTIONS_SCHEMA,
    HISTORY_SCHEMA,
    MATCHES_SCHEMA,
    SUGGESTIONS_SCHEMA,
)

# a remote data directory's run tables (runs/<name>, partitioned by run) and their schemas
RUN_TABLE_SCHEMAS = {
    "matches": MATCHES_SCHEMA,
    "exceptions": EXCEPTIONS_SCHEMA,
    "awaiting": AWAITING_SCHEMA,
    "candidates": CANDIDATES_SCHEMA,
    "history": HISTORY_SCHEMA,
    "suggestions": SUGGESTIONS_SCHEMA,
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
