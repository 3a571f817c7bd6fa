"""What every engine shares: the SQL model files, and the seam an engine implements.

Each model is one `.sql` file holding one SELECT, materialized as a table named after the
file (a leading ``NN_`` sets the order and is dropped from the name). Files starting with
``_`` are scripts (DuckDB macros; on Spark, expanded into the models that call them).

A model may declare a surrogate key with a header line ``-- surrogate_key: NAME``: a dense
BIGINT unique within the run, for cheap joins (never written to a run file). A model whose
header says ``-- materialized: view`` is a view instead of a table.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Protocol

import pyarrow as pa

__all__ = ["LAYERS", "Engine", "Model", "load_models", "sql_files"]

LAYERS = ("staging", "intermediate", "marts")
_NAME = re.compile(r"^(?:\d+_)?([a-z][a-z0-9_]*)$")
_KEY = re.compile(r"^--\s*surrogate_key:\s*([a-z][a-z0-9_]*)\s*$", re.MULTILINE)
_VIEW = re.compile(r"^--\s*materialized:\s*view\s*$", re.MULTILINE)
_ONLY_WITH = re.compile(r"^--\s*only_with:\s*([a-z][a-z0-9_]*)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Model:
    """One SQL file: the table it builds (or '' for a raw script), its layer and text."""

    name: str
    layer: str
    file: str
    sql: str
    key: str = ""
    view: bool = False
    # `-- only_with: SOURCE`: the model is built empty (its columns, no rows) when SOURCE has
    # no row, so what it would read costs nothing (the balance walk, without stated balances)
    only_with: str = ""

    @property
    def is_script(self) -> bool:
        return self.name == ""

    def empty(self) -> Model:
        """The model with no row: its SELECT under a false filter, which the engines' planners
        reduce to an empty relation without running what it reads."""
        return replace(self, sql=f"SELECT * FROM (\n{self.sql}\n) AS m WHERE false")


def sql_files(folder: str) -> list[tuple[str, str]]:
    """(file name, text) of every `.sql` file of recon/models/<folder>, by name."""
    root = resources.files("recon.models") / folder
    return sorted(
        (f.name, f.read_text(encoding="utf-8")) for f in root.iterdir() if f.name.endswith(".sql")
    )


def load_models(layers: tuple[str, ...] = LAYERS) -> list[Model]:
    """Every model in run order: layer by layer, scripts first, then by file name."""
    models: list[Model] = []
    for layer in layers:
        for file, sql in sql_files(layer):
            stem = file.removesuffix(".sql")
            if stem.startswith("_"):
                models.append(Model("", layer, file, sql))
                continue
            match = _NAME.match(stem)
            if not match:
                raise ValueError(f"recon/models/{layer}/{file}: not a valid model file name")
            key = _KEY.search(sql)
            view = bool(_VIEW.search(sql))
            if key and view:
                raise ValueError(f"recon/models/{layer}/{file}: a view cannot have a surrogate key")
            only = _ONLY_WITH.search(sql)
            models.append(
                Model(
                    match.group(1),
                    layer,
                    file,
                    sql,
                    key.group(1) if key else "",
                    view,
                    only.group(1) if only else "",
                )
            )
    return models


# an Arrow type -> its SQL spelling on each engine (DuckDB, Spark)
_SQL_TYPES: tuple[tuple[Any, str, str], ...] = (
    (lambda t: pa.types.is_string(t) or pa.types.is_large_string(t), "VARCHAR", "STRING"),
    (pa.types.is_int64, "BIGINT", "BIGINT"),
    (pa.types.is_int32, "INTEGER", "INT"),
    (pa.types.is_boolean, "BOOLEAN", "BOOLEAN"),
    (pa.types.is_floating, "DOUBLE", "DOUBLE"),
    (lambda t: pa.types.is_timestamp(t) and t.tz is not None, "TIMESTAMPTZ", "TIMESTAMP"),
    (pa.types.is_timestamp, "TIMESTAMP", "TIMESTAMP_NTZ"),
    (pa.types.is_date, "DATE", "DATE"),
)


def sql_type(t: pa.DataType, engine: str) -> str:
    """The SQL type an engine ("duckdb" or "spark") gives an Arrow type of recon's schemas."""
    for matches, duckdb_type, spark_type in _SQL_TYPES:
        if matches(t):
            return spark_type if engine == "spark" else duckdb_type
    raise TypeError(f"no {engine} type for {t}")


def rows_table(rows: Sequence[Sequence[Any]], schema: pa.Schema) -> pa.Table:
    """A few Python rows as an Arrow table of `schema` (what an engine registers by name)."""
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(schema)
    return pa.table(
        [pa.array(list(c), type=f.type) for c, f in zip(columns, schema, strict=True)],
        schema=schema,
    )


def is_model_name(name: str) -> bool:
    return bool(_NAME.match(name))


class Engine(Protocol):
    """The seam between recon's SQL and the engine running it (DuckDB, Spark).

    Python registers sources and small tables under names; every SQL text only selects
    from names. Parameters are bound ($name), never formatted into SQL text.
    """

    kind: str

    def register_parquet(self, name: str, files: Sequence[str], schema: pa.Schema) -> None:
        """Parquet files as a view projected onto `schema`."""

    def register_arrow(self, name: str, table: pa.Table) -> None:
        """A small in-memory table under a name."""

    def run_view_file(self, file: str, text: str) -> None:
        """A catalog view file (CREATE OR REPLACE VIEW statements)."""

    def run_script(self, model: Model) -> None:
        """A ``_*.sql`` script (macros)."""

    def materialize(self, model: Model) -> None:
        """Build a model's table (or view)."""

    def create_table(self, name: str, sql: str, params: dict[str, Any] | None = None) -> None:
        """A query's rows as a table under a name."""

    def drop(self, names: Iterable[str]) -> None:
        """Drop model tables and views."""

    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        """A query's rows (times as aware UTC datetimes)."""

    def query(
        self, sql: str, params: dict[str, Any] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """A query's column names and rows."""

    def reader(
        self, sql: str, params: dict[str, Any] | None = None, batch_rows: int = 262_144
    ) -> pa.RecordBatchReader:
        """A query's rows as Arrow batches, in order."""

    def keyed_columns(self, name: str, columns: Sequence[str]) -> pa.Table | None:
        """A keyed model's columns with row i holding key i (so `take(keys)` looks rows up
        by key), when the engine's keys are positions and the columns fit in memory; None
        otherwise (then a query joins them)."""

    def close(self) -> None:
        """Release what the engine holds."""
