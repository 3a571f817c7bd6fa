"""The DuckDB engine (the default): recon's SQL as the files spell it, on one connection.

Model tables live in the work database `recon_work` (in memory, or a scratch file on disk
for data larger than memory: recon.reconciliation.runner.configure), first on the connection's
search path, so a model table shadows a catalog view of the same name (recon_exceptions).
A keyed model's rows are stored in ``<model>__rows`` and ``<model>`` is a view adding the
key, the row's position (DuckDB's rowid): dense, free to compute, and several times
cheaper to join on than a text id.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from recon.engine.base import Model, sql_type

__all__ = [
    "WORK_DATABASE",
    "DuckDBEngine",
    "duck_type",
    "empty_relation",
    "parquet_relation",
    "use_work_database",
]

WORK_DATABASE = "recon_work"
log = logging.getLogger(__name__)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def use_work_database(con: duckdb.DuckDBPyConnection, path: Path | None = None) -> None:
    """Attach the database the model tables live in, `recon_work`, unless it is attached.

    In memory by default. With `path`, a scratch database file, for data larger than the
    memory budget: DuckDB writes a table's blocks there once and can then drop them from
    memory for free and read them back, where the blocks of an in-memory table it must
    evict are written to a temp file each time. The file is scratch (deleted with the run's
    temp folder), so it is not synced to stable storage: this sets `fsync_mode` (and the
    string compression methods) for the connection's whole DuckDB instance, which is the
    run's own.

    Lookups go to `recon_work` first, then to the connection's own database (the catalog
    views): a model table shadows a catalog view of the same name (recon_exceptions).
    """
    attached = {
        r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()
    }
    if WORK_DATABASE in attached:
        return
    home = con.execute("SELECT current_database()").fetchall()[0][0]
    if path is None:
        con.execute(f"ATTACH ':memory:' AS {WORK_DATABASE}")
    else:
        con.execute("SET fsync_mode = 'NONE'")
        # FSST string compression costs more to write than its smaller blocks save on reads
        # (10M rows: staging 10.3 + 12.4 s with it, 5.4 + 7.7 s without; whole run 84 vs 79 s)
        con.execute("SET disabled_compression_methods = 'fsst,dict_fsst'")
        con.execute(f"ATTACH {_quote(str(path))} AS {WORK_DATABASE}")
    con.execute(f"SET search_path = {_quote(f'{WORK_DATABASE}.main,{home}.main')}")


def duck_type(t: pa.DataType) -> str:
    return sql_type(t, "duckdb")


def empty_relation(schema: pa.Schema) -> str:
    """A typed, empty SELECT with the schema's columns."""
    cols = ", ".join(f"CAST(NULL AS {duck_type(f.type)}) AS {f.name}" for f in schema)
    return f"(SELECT {cols} WHERE false)"


def _projection(files: Iterable[str | Path], schema: pa.Schema) -> str:
    """The schema's columns cast to their types; a column no file has yet (one added to the
    schema after the files were written, say) is NULL, so an older data dir still reads."""
    present: set[str] = set()
    for f in files:
        present.update(pq.read_schema(f).names)
    return ", ".join(
        f"CAST({f.name if f.name in present else 'NULL'} AS {duck_type(f.type)}) AS {f.name}"
        for f in schema
    )


def parquet_relation(
    files: Sequence[str | Path], schema: pa.Schema, *, pattern: str | None = None
) -> str:
    """`read_parquet` over the files (or the glob they were found by: a view re-reads it),
    projected onto the schema's columns; a typed empty relation when there is no file."""
    if not files:
        return empty_relation(schema)
    cols = _projection(files, schema)
    where = _quote(pattern) if pattern else "[" + ", ".join(_quote(str(f)) for f in files) + "]"
    return (
        f"(SELECT {cols} FROM read_parquet({where}, union_by_name = true, "
        "hive_partitioning = false))"
    )


class DuckDBEngine:
    """recon's engine seam on a DuckDB connection (see recon.engine.base.Engine)."""

    kind = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    def register_parquet(self, name: str, files: Sequence[str], schema: pa.Schema) -> None:
        relation = parquet_relation(files, schema)
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS {relation}")

    def register_arrow(self, name: str, table: pa.Table) -> None:
        self.con.register(name, table)

    def run_view_file(self, file: str, text: str) -> None:
        try:
            self.con.execute(text)
        except duckdb.Error as exc:
            raise RuntimeError(f"catalog view {file}: {exc}") from exc

    def run_script(self, model: Model) -> None:
        self.con.execute(model.sql)

    def materialize(self, model: Model) -> None:
        """(Re)create a model's view / keyed table / table. A model that runs out of DuckDB
        memory (some operators cannot spill everything) is retried once on a single thread,
        which holds about half as much in flight."""
        use_work_database(self.con)
        try:
            self._build(model)
        except duckdb.OutOfMemoryException as exc:
            threads = self.threads()
            if threads <= 1:
                raise
            log.warning("%s: %s; retrying on one thread", model.file, str(exc).splitlines()[0])
            self.con.execute("SET threads = 1")
            try:
                self._build(model)
            finally:
                self.con.execute(f"SET threads = {threads}")

    def _build(self, model: Model) -> None:
        con = self.con
        if model.view:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {model.name} AS\n{model.sql}")
        elif model.key:
            rows = f"{WORK_DATABASE}.main.{model.name}__rows"
            con.execute(f"CREATE OR REPLACE TABLE {rows} AS\n{model.sql}")
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW {model.name} AS "
                f"SELECT rowid AS {model.key}, * FROM {rows}"
            )
        else:
            con.execute(
                f"CREATE OR REPLACE TABLE {WORK_DATABASE}.main.{model.name} AS\n{model.sql}"
            )

    def threads(self) -> int:
        return int(self.con.execute("SELECT current_setting('threads')").fetchall()[0][0])

    def create_table(self, name: str, sql: str, params: dict[str, Any] | None = None) -> None:
        self.con.execute(f"CREATE OR REPLACE TEMP TABLE {name} AS\n{sql}", params or None)

    def drop(self, names: Iterable[str]) -> None:
        """Drop model tables and views; a keyed model is a view over `<name>__rows`: both."""
        names = list(names)
        if not names:
            return
        con = self.con
        views = {
            r[0]
            for r in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall()
        }
        tables = {
            (r[0], r[1])
            for r in con.execute(
                "SELECT database_name, table_name FROM duckdb_tables()"
                " WHERE database_name = ? OR temporary",
                [WORK_DATABASE],
            ).fetchall()
        }
        for name in names:
            if name in views:
                con.execute(f"DROP VIEW {name}")
            if (WORK_DATABASE, name) in tables:
                con.execute(f"DROP TABLE {WORK_DATABASE}.main.{name}")
            if (WORK_DATABASE, f"{name}__rows") in tables:
                con.execute(f"DROP TABLE {WORK_DATABASE}.main.{name}__rows")
            if ("temp", name) in tables:
                con.execute(f"DROP TABLE temp.main.{name}")

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, params or None).fetchall()

    def query(
        self, sql: str, params: dict[str, Any] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        cur = self.con.execute(sql, params or None)
        columns = [d[0] for d in cur.description or ()]
        return columns, cur.fetchall()

    def reader(
        self, sql: str, params: dict[str, Any] | None = None, batch_rows: int = 262_144
    ) -> pa.RecordBatchReader:
        return self.con.sql(sql, params=params or None).to_arrow_reader(batch_rows)

    def keyed_columns(self, name: str, columns: Sequence[str]) -> pa.Table | None:
        """A keyed model's columns in rowid (= key) order, when the work tables are in
        memory: then they are already held, and a copy as Arrow arrays is cheap. On disk
        (data larger than memory) None: a query joins them within memory_limit."""
        path = self.con.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = ?", [WORK_DATABASE]
        ).fetchall()
        if not path or path[0][0] is not None:
            return None
        # one thread: the rows come in rowid order and as one chunk per column (a parallel
        # scan hands over a chunk per row group, which every lookup would concatenate first)
        threads = self.threads()
        self.con.execute("SET threads = 1")
        try:
            cols = ", ".join(columns)
            return self.con.sql(
                f"SELECT {cols} FROM {WORK_DATABASE}.main.{name}__rows"
            ).to_arrow_table(1 << 62)
        finally:
            self.con.execute(f"SET threads = {threads}")

    def close(self) -> None:
        self.con.close()
