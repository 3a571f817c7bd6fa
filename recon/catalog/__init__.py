"""The catalog: views over the Parquet in the data directory, named as users type them.

Views are defined one per file in `recon/models/catalog/NN_name.sql`, run in file-name order.
A view file only selects from names: `sources` registers the inputs it reads, the same on
every engine (DuckDB here; Spark in recon.engine.spark).

    snapshots     committed snapshots and their manifests; which one is "the latest"
    run_folders   the latest run folder; a remote data directory's committed runs
    sources       the `source_*` inputs of the views, local files or remote datasets
    views         create the views on a connection or engine; `sql` as pandas
"""

from __future__ import annotations

from recon.catalog.run_folders import (
    RUN_TABLE_SCHEMAS,
    SUMMARIES_SCHEMA,
    latest_run,
    materialize_run,
    remote_runs,
    run_table_files,
)
from recon.catalog.snapshots import (
    MANIFEST_CACHE,
    MANIFEST_NAME,
    SNAPSHOT_DIR_GLOB,
    SnapshotInfo,
    holds_nothing,
    latest_snapshot,
    list_snapshots,
    manifest,
)
from recon.catalog.sources import (
    COVERAGE_GLOB,
    LIFECYCLE_SCHEMA,
    MANIFESTS_SCHEMA,
    QUARANTINE_GLOB,
    STATEMENT_GLOB,
    Source,
    history_sources,
    input_bytes,
    lifecycle_rows,
    sources,
    state_snapshots,
)
from recon.catalog.views import (
    VIEW_NAMES,
    connect,
    create_views,
    register,
    sql,
    to_frame,
    view_files,
    write_database,
)

__all__ = [
    "COVERAGE_GLOB",
    "LIFECYCLE_SCHEMA",
    "MANIFESTS_SCHEMA",
    "MANIFEST_CACHE",
    "MANIFEST_NAME",
    "QUARANTINE_GLOB",
    "RUN_TABLE_SCHEMAS",
    "SNAPSHOT_DIR_GLOB",
    "STATEMENT_GLOB",
    "SUMMARIES_SCHEMA",
    "VIEW_NAMES",
    "SnapshotInfo",
    "Source",
    "connect",
    "create_views",
    "history_sources",
    "holds_nothing",
    "input_bytes",
    "latest_run",
    "latest_snapshot",
    "lifecycle_rows",
    "list_snapshots",
    "manifest",
    "materialize_run",
    "register",
    "remote_runs",
    "run_table_files",
    "sources",
    "sql",
    "state_snapshots",
    "to_frame",
    "view_files",
    "write_database",
]
