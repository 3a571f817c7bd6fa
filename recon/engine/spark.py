"""The Spark engine: recon's catalog views, models, checks and run files on Spark SQL.

The same `.sql` files as on DuckDB, translated by recon.engine.dialect; the same sources
(recon.catalog.sources) registered as temp views over the same Parquet files. A model is
materialized as a locally checkpointed DataFrame behind a temp view (so its rows, and the
surrogate keys of a keyed model, are computed once: `monotonically_increasing_id()` is a
different number on every evaluation otherwise).

A session comes from the caller (a notebook's or a Databricks job's `spark`), or is started
here in local mode with a small-machine profile (`local_session`): one shuffle partition per
core, no UI, times in UTC.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from functools import cached_property
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from recon.engine import dialect
from recon.engine.base import Model, sql_type
from recon.errors import UsageError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["SparkEngine", "local_session"]

log = logging.getLogger(__name__)
# pyspark warns that it "does not yet fully support pandas >= 3.0.0": recon hands Spark
# Arrow tables, never pandas frames
warnings.filterwarnings(
    "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
)
_PARAM = re.compile(r"\$([a-z_][a-z0-9_]*)")


def _pyspark() -> Any:
    try:
        import pyspark.sql
    except ImportError as exc:
        raise UsageError(
            "the Spark engine needs pyspark: pip install 'pixrecon[spark]' (and Java 17+)"
        ) from exc
    return pyspark.sql


SMALL_INPUT_BYTES = 32 * 1024 * 1024


def local_session(
    threads: int = 2, memory: str | None = None, *, small: bool = False
) -> SparkSession:
    """A local-mode SparkSession for one machine (tests, CI, a laptop).

    With `small` (inputs of a few hundred MB at most), a profile for latency: the JVM's
    quick compiler only and no whole-stage code generation (compiling the plans costs more
    than running them on small data). JVM options apply when this process starts its JVM:
    the first session's profile holds for the process.
    """
    sql = _pyspark()
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        raise UsageError(
            "the Spark engine needs Java 17+ (`java` not found): apt-get install "
            "openjdk-17-jre-headless, or set JAVA_HOME"
        )
    # a local session talks to itself over loopback, never over the machine's network
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    logging_config = resources.files("recon.engine") / "log4j2.properties"
    java = f"-Xss16m -Dlog4j2.configurationFile={logging_config}"
    if small:
        java += " -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=512m"
    cores = max(1, int(threads))
    # local mode runs every task in the driver: its heap is the engine's memory
    memory = memory or os.environ.get("RECON_SPARK_MEMORY") or "4g"
    builder = (
        sql.SparkSession.builder.master(f"local[{cores}]")
        .appName("recon")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", str(cores if small else 4 * cores))
        .config("spark.sql.codegen.wholeStage", "false" if small else "true")
        .config("spark.driver.memory", memory)
        .config("spark.driver.extraJavaOptions", java)
        # recon keeps no Spark tables: without this, Spark leaves an empty `spark-warehouse`
        # folder in whatever directory the user ran recon from
        .config(
            "spark.sql.warehouse.dir", str(Path(tempfile.gettempdir()) / "recon-spark-warehouse")
        )
    )
    return builder.getOrCreate()


class SparkEngine:
    """recon's engine seam on a SparkSession (see recon.engine.base.Engine)."""

    kind = "spark"

    def __init__(
        self,
        session: SparkSession | None = None,
        *,
        threads: int = 2,
        scratch: str | os.PathLike[str] | None = None,
        small: bool = False,
    ) -> None:
        self.spark = session or local_session(threads, small=small)
        _exclude_rule(self.spark, _BROKEN_RULE)
        # the model and result files are read back by pyarrow: UTC-adjusted micros, not INT96
        self.spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
        self._tables: set[str] = set()
        self._own_scratch = scratch is None
        self.scratch = str(scratch) if scratch is not None else tempfile.mkdtemp(prefix="recon-")
        self._serial = 0

    # ------------------------------------------------------------------ translation
    @cached_property
    def macros(self) -> dict[str, dialect.Macro]:
        found: dict[str, dialect.Macro] = {}
        for folder in ("staging", "intermediate", "marts", "checks"):
            root = resources.files("recon.models") / folder
            for f in sorted(root.iterdir(), key=lambda f: f.name):
                if f.name.startswith("_") and f.name.endswith(".sql"):
                    found.update(dialect.parse_macros(f.read_text(encoding="utf-8")))
        return found

    def translate(self, sql: str) -> str:
        return dialect.to_spark(sql, self.macros, columns_of=self.columns_of)

    def columns_of(self, query: str) -> list[tuple[str, str]]:
        """A Spark query's columns and their types (analysis only: nothing runs)."""
        return [(f.name, f.dataType.simpleString()) for f in self.spark.sql(query).schema]

    def _df(self, sql: str, params: dict[str, Any] | None = None) -> DataFrame:
        text = self.translate(sql)
        args = {k: _spark_value(v) for k, v in (params or {}).items()} if params else None
        return self.spark.sql(text, args=args) if args else self.spark.sql(text)

    # ------------------------------------------------------------------ sources
    def register_arrow(self, name: str, table: pa.Table) -> None:
        """A small in-memory table as a temp view (decisions, audit entries, params)."""
        frame = self.spark.createDataFrame(table) if table.num_rows else self._empty(table.schema)
        frame.createOrReplaceTempView(name)

    def _empty(self, schema: pa.Schema) -> DataFrame:
        ddl = ", ".join(f"`{f.name}` {_spark_type(f.type)}" for f in schema)
        return self.spark.createDataFrame([], ddl)

    def register_parquet(self, name: str, files: Sequence[str], schema: pa.Schema) -> None:
        """Parquet files as a temp view projected onto `schema` (a column no file has yet is
        NULL, like the DuckDB catalog)."""
        if not files:
            self._empty(schema).createOrReplaceTempView(name)
            return
        frame = self.spark.read.option("mergeSchema", "true").parquet(*files)
        present = set(frame.columns)
        functions = _pyspark().functions
        frame = frame.select(
            *[
                (functions.col(f"`{f.name}`") if f.name in present else functions.lit(None))
                .cast(_spark_type(f.type))
                .alias(f.name)
                for f in schema
            ]
        )
        frame.createOrReplaceTempView(name)

    def create_view(self, name: str, sql: str) -> None:
        """A view kept as SQL text, bound when read (like DuckDB's): replacing a view it
        reads (the configured lifecycle_order) changes what it returns."""
        self.spark.sql(f"CREATE OR REPLACE TEMP VIEW {name} AS {self.translate(sql)}")

    def run_view_file(self, file: str, text: str) -> None:
        """A catalog view file: `CREATE OR REPLACE VIEW name AS query;` statements."""
        for statement in _split(text):
            match = re.match(
                r"CREATE\s+OR\s+REPLACE\s+VIEW\s+([a-z_][a-z0-9_]*)\s+AS\s+(.*)$",
                statement,
                re.IGNORECASE | re.DOTALL,
            )
            if not match:
                raise RuntimeError(f"catalog view {file}: not a CREATE VIEW statement")
            try:
                self.create_view(match.group(1), match.group(2))
            except Exception as exc:  # the JVM's errors have no common Python base
                raise RuntimeError(f"catalog view {file}: {_first_line(exc)}") from exc

    # ------------------------------------------------------------------ models
    def materialize(self, model: Model) -> None:
        frame = self._df(model.sql)
        if model.view:
            frame.createOrReplaceTempView(model.name)
            return
        if model.key:
            functions = _pyspark().functions
            frame = frame.select(functions.monotonically_increasing_id().alias(model.key), "*")
        self._store(model.name, frame)

    def _store(self, name: str, frame: DataFrame) -> None:
        """Write a model's rows once (Parquet in the scratch folder) and read them back as
        the table `name`: computed once, keys included, and a plain file scan to every
        later model (a checkpointed RDD trips Spark's correlated subqueries)."""
        self._serial += 1
        path = f"{self.scratch.rstrip('/')}/{self._serial:03d}_{name}"
        frame.write.mode("overwrite").parquet(path)
        self.spark.read.parquet(path).createOrReplaceTempView(name)
        self._tables.add(name)

    def create_table(self, name: str, sql: str, params: dict[str, Any] | None = None) -> None:
        self._store(name, self._df(sql, params))

    def drop(self, names: Iterable[str]) -> None:
        for name in names:
            self.spark.catalog.dropTempView(name)
            self._tables.discard(name)

    # ------------------------------------------------------------------ results
    def rows(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self.query(sql, params)[1]

    def query(
        self, sql: str, params: dict[str, Any] | None = None
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        frame = self._df(sql, params)
        return list(frame.columns), [tuple(_aware(v) for v in r) for r in frame.collect()]

    def run_script(self, model: Model) -> None:
        """A macro script: nothing to run (its macros are expanded where they are called)."""
        dialect.parse_macros(model.sql)  # a malformed macro file fails here, by name

    def keyed_columns(self, name: str, columns: Sequence[str]) -> pa.Table | None:
        """None: monotonically_increasing_id() keys are not positions (they jump between
        partitions), so the run files join the ids in a query."""
        return None

    def reader(
        self, sql: str, params: dict[str, Any] | None = None, batch_rows: int = 262_144
    ) -> pa.RecordBatchReader:
        """A query's rows, in order, as Arrow batches, without gathering them on the driver:
        Spark writes them as Parquet in the scratch folder (an ORDER BY's ranges, one file
        per task, in file-name order) and they are read back batch by batch. Collecting a
        10M-row run file instead exceeds the driver's result limit."""
        self._serial += 1
        path = Path(self.scratch) / f"{self._serial:03d}_result"
        self._df(sql, params).write.mode("overwrite").parquet(str(path))
        files = sorted(path.glob("part-*.parquet"))
        if not files:
            raise RuntimeError(f"Spark wrote no result file in {path}")
        schema = pq.read_schema(files[0])

        def batches() -> Iterator[pa.RecordBatch]:
            for file in files:
                yield from pq.ParquetFile(file).iter_batches(batch_size=batch_rows)

        return pa.RecordBatchReader.from_batches(schema, batches())

    # ------------------------------------------------------------------ parameters
    def set_params(self, values: dict[str, Any], types: dict[str, str]) -> None:
        ddl = ", ".join(f"{name} {types[name]}" for name in values)
        row = tuple(_spark_value(v) for v in values.values())
        self.spark.createDataFrame([row], ddl).createOrReplaceTempView("params")

    def close(self) -> None:
        for name in list(self._tables):
            self.spark.catalog.dropTempView(name)
        self._tables.clear()
        if self._own_scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)


# Spark 4.3 loses a correlated EXISTS's attributes when it pushes a projection holding one
# into a UNION's branches (`key not found: side#…` in breaks_all's covered(...)): excluded
_BROKEN_RULE = "org.apache.spark.sql.catalyst.optimizer.PushProjectionThroughUnion"


def _exclude_rule(spark: SparkSession, rule: str) -> None:
    key = "spark.sql.optimizer.excludedRules"
    current = [r for r in (spark.conf.get(key, "") or "").split(",") if r.strip()]
    if rule not in current:
        spark.conf.set(key, ",".join([*current, rule]))


def _split(text: str) -> list[str]:
    body = re.sub(r"--[^\n]*", "", text)
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", body) if s.strip()]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _spark_type(t: pa.DataType) -> str:
    return sql_type(t, "spark")


def _aware(value: Any) -> Any:
    """Spark's TIMESTAMP is an instant; collected in a UTC session it comes back naive."""
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


def _spark_value(value: Any) -> Any:
    """A Python value as Spark takes it: aware datetimes as naive UTC (the session is UTC)."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return value.astimezone(UTC).replace(tzinfo=None)
    return value
