"""The catalog views: created on a DuckDB connection or an engine, queried as pandas."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from recon.catalog.sources import sources
from recon.config import DataDir
from recon.errors import UsageError
from recon.lake import with_views

if TYPE_CHECKING:  # pandas loads only where a DataFrame is asked for (it costs ~50 MB)
    import pandas as pd

    from recon.engine.base import Engine

VIEW_NAMES = (
    "intents",
    "intent_snapshots",
    "snapshots",
    "status_history",
    "statement_lines",
    "statement_coverage",
    "statement_stated_balances",
    "statement_balances",
    "recon_matches",
    "recon_exceptions",
    "recon_awaiting",
    "recon_suggestions",
    "recon_fees",
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
            # deltalake writes texts as Arrow string views; pyarrow compares a pushed-down
            # filter in the dataset's type, so texts are declared as views (DuckDB reads
            # both a view and a plain string as VARCHAR)
            con.register(source.name, with_views(source.dataset))
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
