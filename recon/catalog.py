"""The DuckDB catalog: views over the Parquet in the data directory, named as users type them.

Views are defined one per file in `recon/sql/catalog/NN_name.sql`, run in file-name order.
A view file reads its data through placeholders that this module fills in:

    {snapshot_files}     every committed snapshot part (Parquet), INTENTS_SCHEMA
    {statement_files}    every statement Parquet file, STATEMENT_LINES_SCHEMA
    {quarantine_files}   every quarantine Parquet file, STATEMENT_QUARANTINE_SCHEMA
    {run_matches}        the latest run's matches.parquet, MATCHES_SCHEMA
    {run_exceptions}     the latest run's exceptions.parquet, EXCEPTIONS_SCHEMA
    {run_id_latest}      the latest committed run id as a SQL string literal (or NULL)

When a source has no file yet, the placeholder becomes a typed empty relation, so every
view exists with its full column list on a fresh data directory.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from recon.config import DataDir
from recon.schemas import (
    EXCEPTIONS_SCHEMA,
    INTENTS_SCHEMA,
    MATCHES_SCHEMA,
    STATEMENT_LINES_SCHEMA,
    STATEMENT_QUARANTINE_SCHEMA,
)

__all__ = ["VIEW_NAMES", "connect", "latest_run", "sql", "write_database"]

VIEW_NAMES = (
    "intents",
    "intent_snapshots",
    "status_history",
    "statement_lines",
    "recon_matches",
    "recon_exceptions",
)

SNAPSHOT_GLOB = "snapshots/snapshot_date=*/run_id=*/part-*.parquet"
STATEMENT_GLOB = "statements/source=*/*.parquet"
QUARANTINE_GLOB = "statements/quarantine/*.parquet"


def _duck_type(t: pa.DataType) -> str:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_int32(t):
        return "INTEGER"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_floating(t):
        return "DOUBLE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    if pa.types.is_date(t):
        return "DATE"
    raise TypeError(f"no DuckDB type for {t}")


def _quote(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def empty_relation(schema: pa.Schema) -> str:
    """A typed, empty SELECT with the schema's columns."""
    cols = ", ".join(f"CAST(NULL AS {_duck_type(f.type)}) AS {f.name}" for f in schema)
    return f"(SELECT {cols} WHERE false)"


def parquet_relation(pattern: Path, schema: pa.Schema, *, exists: bool) -> str:
    """`read_parquet` over a glob, projected onto the schema's columns; empty if no file."""
    if not exists:
        return empty_relation(schema)
    cols = ", ".join(f"CAST({f.name} AS {_duck_type(f.type)}) AS {f.name}" for f in schema)
    return f"(SELECT {cols} FROM read_parquet({_quote(pattern)}, union_by_name = true, hive_partitioning = false))"


def latest_run(data: DataDir) -> Path | None:
    """The latest committed run folder (one with summary.json), by run id order."""
    if not data.runs.is_dir():
        return None
    runs = sorted(
        p
        for p in data.runs.iterdir()
        if p.is_dir() and not p.name.startswith(".") and (p / "summary.json").is_file()
    )
    return runs[-1] if runs else None


def _sources(data: DataDir) -> dict[str, str]:
    root = data.root
    run = latest_run(data)
    srcs = {
        "snapshot_files": parquet_relation(
            root / SNAPSHOT_GLOB, INTENTS_SCHEMA, exists=any(root.glob(SNAPSHOT_GLOB))
        ),
        "statement_files": parquet_relation(
            root / STATEMENT_GLOB, STATEMENT_LINES_SCHEMA, exists=any(root.glob(STATEMENT_GLOB))
        ),
        "quarantine_files": parquet_relation(
            root / QUARANTINE_GLOB,
            STATEMENT_QUARANTINE_SCHEMA,
            exists=any(root.glob(QUARANTINE_GLOB)),
        ),
        "run_matches": parquet_relation(
            (run or root) / "matches.parquet",
            MATCHES_SCHEMA,
            exists=bool(run and (run / "matches.parquet").is_file()),
        ),
        "run_exceptions": parquet_relation(
            (run or root) / "exceptions.parquet",
            EXCEPTIONS_SCHEMA,
            exists=bool(run and (run / "exceptions.parquet").is_file()),
        ),
        "run_id_latest": _quote(run.name) if run else "NULL",
    }
    return srcs


def view_files() -> list[tuple[str, str]]:
    """(file name, SQL text) of every catalog view, in run order."""
    folder = resources.files("recon.sql") / "catalog"
    files = sorted(
        (f.name, f.read_text(encoding="utf-8")) for f in folder.iterdir() if f.name.endswith(".sql")
    )
    return files


def create_views(con: duckdb.DuckDBPyConnection, data: DataDir) -> None:
    """(Re)create every catalog view on `con` for the data directory."""
    srcs = _sources(data)
    for name, text in view_files():
        try:
            con.execute(text.format(**srcs))
        except (KeyError, IndexError) as exc:
            raise RuntimeError(f"catalog view {name}: unknown placeholder {exc}") from exc


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
    """Run `query` over the catalog and return a pandas DataFrame."""
    con = connect(data)
    try:
        return con.execute(query, params).df() if params is not None else con.execute(query).df()
    finally:
        con.close()


def write_database(data: str | os.PathLike[str] | DataDir | None = None) -> Path:
    """Write `data/recon.duckdb` holding the catalog views, for any DuckDB client."""
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
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
