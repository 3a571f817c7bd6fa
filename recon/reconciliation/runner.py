"""A tiny runner for the SQL models: staging -> intermediate -> marts, then the checks.

The models (recon.engine.base: one SELECT per `.sql` file, materialized as a table named
after it) run on an engine (recon.engine): DuckDB by default, or Spark. Parameters never go
into SQL text: they are bound into the one-row table `params`, which the models read, with
the tables `categories`, `status_vocabulary` and `manual_matches`.

Every function here takes an engine, or a DuckDB connection (wrapped in the DuckDB engine),
so notebooks and tests can pass the connection they hold.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import pyarrow as pa

from recon.engine.base import (
    LAYERS,
    Engine,
    Model,
    is_model_name,
    load_models,
    rows_table,
    sql_files,
)
from recon.engine.duck import WORK_DATABASE, DuckDBEngine, use_work_database
from recon.reconciliation.fees import fee_schedule_rows
from recon.reconciliation.settings import ReconcileSettings
from recon.schemas import CATEGORIES, status_vocabulary

__all__ = [
    "LAYERS",
    "WORK_DATABASE",
    "CheckResult",
    "Model",
    "as_engine",
    "configure",
    "drop_tables",
    "load_models",
    "run_checks",
    "run_models",
    "set_params",
    "use_work_database",
]

log = logging.getLogger(__name__)


def as_engine(target: Engine | duckdb.DuckDBPyConnection) -> Engine:
    """An engine as it is; a DuckDB connection wrapped in the DuckDB engine."""
    if isinstance(target, duckdb.DuckDBPyConnection):
        return DuckDBEngine(target)
    return target


@dataclass(frozen=True)
class CheckResult:
    """An assertion query's outcome: the offending rows (first few) and how many there were."""

    name: str
    failures: int
    sample: tuple[dict[str, Any], ...]

    @property
    def passed(self) -> bool:
        return self.failures == 0


def configure(
    con: duckdb.DuckDBPyConnection,
    settings: ReconcileSettings,
    temp_dir: Path,
    *,
    on_disk: bool = False,
) -> None:
    """Bound DuckDB's memory (spilling beyond it to `temp_dir`) and its threads; with `on_disk`,
    keep the work tables in a scratch database file in `temp_dir`.

    On disk, the data is larger than memory: DuckDB evicts and reloads buffer blocks all the
    time, so its block allocator keeps up to memory_limit of them for reuse instead of
    handing the pages back to the OS and faulting them in again (10M rows: 80 s -> 74 s; the
    peak RSS is the same). In memory it would only raise the peak (1M: +90 MiB).
    """
    temp_dir.mkdir(parents=True, exist_ok=True)
    con.execute(f"SET memory_limit = '{settings.memory_limit}'")  # validated by the settings
    con.execute(f"SET threads = {int(settings.threads)}")
    con.execute(f"SET temp_directory = {_quote(str(temp_dir))}")
    con.execute("SET preserve_insertion_order = false")
    if on_disk:
        con.execute(f"SET block_allocator_memory = '{settings.memory_limit}'")
    use_work_database(con, temp_dir / "work.duckdb" if on_disk else None)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# the columns of `params`, in order, with their DuckDB types
PARAMS = {
    "as_of": "TIMESTAMPTZ",
    "amount_tolerance_cents": "BIGINT",
    "onramp_payment_grace": "INTERVAL",
    "onramp_payment_grace_s": "BIGINT",
    "offramp_payout_grace": "INTERVAL",
    "offramp_payout_grace_s": "BIGINT",
    "refund_grace": "INTERVAL",
    "refund_grace_s": "BIGINT",
    "clock_skew": "INTERVAL",
    "accounts": "VARCHAR[]",
    "business_tz": "VARCHAR",
    "date_from": "DATE",
    "date_to": "DATE",
    # the window as UTC instants (local midnight of date_from .. of date_to + 1), so the
    # staging models compare timestamps instead of converting every row's zone
    "window_start": "TIMESTAMPTZ",
    "window_end": "TIMESTAMPTZ",
}
# Spark's name for those DuckDB types it spells otherwise
SPARK_TYPES = {
    "TIMESTAMPTZ": "TIMESTAMP",
    "INTERVAL": "INTERVAL DAY TO SECOND",
    "VARCHAR[]": "ARRAY<STRING>",
    "VARCHAR": "STRING",
}


def param_values(settings: ReconcileSettings, as_of: datetime) -> dict[str, Any]:
    """The values of `params` (PARAMS' columns), from the settings and the run's as_of."""
    zone = ZoneInfo(settings.business_tz)

    def midnight(day: date | None) -> datetime | None:
        if day is None:
            return None
        return datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC)

    def whole_seconds(value: timedelta) -> timedelta:
        return timedelta(seconds=int(value.total_seconds()))

    return {
        "as_of": as_of,
        "amount_tolerance_cents": int(settings.amount_tolerance_cents),
        "onramp_payment_grace": whole_seconds(settings.onramp_payment_grace),
        "onramp_payment_grace_s": int(settings.onramp_payment_grace.total_seconds()),
        "offramp_payout_grace": whole_seconds(settings.offramp_payout_grace),
        "offramp_payout_grace_s": int(settings.offramp_payout_grace.total_seconds()),
        "refund_grace": whole_seconds(settings.refund_grace),
        "refund_grace_s": int(settings.refund_grace.total_seconds()),
        "clock_skew": whole_seconds(settings.clock_skew),
        "accounts": list(settings.accounts),
        "business_tz": settings.business_tz,
        "date_from": settings.date_from,
        "date_to": settings.date_to,
        "window_start": midnight(settings.date_from),
        "window_end": midnight(settings.date_to + timedelta(days=1) if settings.date_to else None),
    }


_VOCABULARY = pa.schema(
    [("intent_type", pa.string()), ("status", pa.string()), ("stage_rank", pa.int32()),
     ("kind", pa.string()), ("terminal", pa.bool_()), ("fiat_moved", pa.bool_())]
)  # fmt: skip


def set_params(
    target: Engine | duckdb.DuckDBPyConnection,
    settings: ReconcileSettings,
    as_of: datetime,
    manual: Collection[tuple[str, str]] = (),
) -> None:
    """(Re)create the one-row `params` table, the `categories` (their priorities as
    configured) and `status_vocabulary` (recon.schemas: the models never spell statuses out
    in lists) and the `manual_matches` a person confirmed ((intent_id, line_id) pairs),
    values bound."""
    engine = as_engine(target)
    values = param_values(settings, as_of)
    spark = engine.kind == "spark"
    types = {name: SPARK_TYPES.get(kind, kind) if spark else kind for name, kind in PARAMS.items()}
    select = ", ".join(f"CAST(${name} AS {kind}) AS {name}" for name, kind in types.items())
    if spark:
        engine.set_params(values, types)  # type: ignore[attr-defined]
    else:
        engine.create_table("params", f"SELECT {select}", values)
    engine.register_arrow(
        "categories",
        pa.table(
            {
                "name": [c.name for c in CATEGORIES.values()],
                "priority": [settings.priority(c.name) for c in CATEGORIES.values()],
                "meaning": [c.meaning for c in CATEGORIES.values()],
            }
        ),
    )
    engine.register_arrow("status_vocabulary", rows_table(status_vocabulary(), _VOCABULARY))
    engine.register_arrow("fee_schedules", fee_schedule_rows(settings.fee_schedules))
    pairs = list(manual)
    engine.register_arrow(
        "manual_matches",
        pa.table(
            {
                "intent_id": pa.array([p[0] for p in pairs], pa.string()),
                "line_id": pa.array([p[1] for p in pairs], pa.string()),
            }
        ),
    )


def run_models(
    target: Engine | duckdb.DuckDBPyConnection,
    models: list[Model] | None = None,
    *,
    keep: Collection[str] | None = None,
) -> list[str]:
    """Materialize every model, in order; return the table names built.

    With `keep` (the tables the caller reads afterwards), a table is dropped as soon as the
    last later model that reads it is built, unless a check or the caller reads it: on a
    10M-row run the passes' tables would otherwise hold memory (or spill) until the end.
    Without `keep` every table stays (notebooks, tests).
    """
    engine = as_engine(target)
    models = models if models is not None else load_models()
    last_use = _last_use(models, keep) if keep is not None else {}
    built: list[str] = []
    for index, model in enumerate(models):
        started = time.perf_counter()
        if model.only_with and not engine.rows(f"SELECT 1 FROM {model.only_with} LIMIT 1"):
            model = model.empty()
        try:
            if model.is_script:
                engine.run_script(model)
            else:
                engine.materialize(model)
        except Exception as exc:  # DuckDB's and the JVM's errors share no Python base
            if isinstance(exc, (KeyboardInterrupt, MemoryError)):
                raise
            raise RuntimeError(f"recon/models/{model.layer}/{model.file}: {_first(exc)}") from exc
        if model.name:
            built.append(model.name)
        log.debug("%s/%s: %.2f s", model.layer, model.file, time.perf_counter() - started)
        engine.drop([n for n, last in last_use.items() if last == index])
    return built


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text if len(text) < 2000 else text[:2000] + " ..."


def _last_use(models: list[Model], keep: Collection[str]) -> dict[str, int]:
    """Table name -> index of the last model reading it, for the tables safe to drop then.

    A view reads its tables when a later model reads the view, so a model reading a view
    counts as reading what the view reads. Tables a check or the caller (`keep`) reads,
    and tables no later model reads, are left.
    """
    checks = " ".join(sql for _, sql in sql_files("checks"))
    words = {m.name: re.compile(rf"\b{m.name}\b") for m in models if m.name}
    reads: list[set[str]] = []
    for index, model in enumerate(models):
        direct = {n for n, w in words.items() if n != model.name and w.search(model.sql)}
        for j in range(index):  # through the views it reads, what they read
            if models[j].view and models[j].name in direct:
                direct |= reads[j]
        reads.append(direct)
    last: dict[str, int] = {}
    for index, model in enumerate(models):
        if model.is_script or model.name in keep or model.view:
            continue
        if words[model.name].search(checks):
            continue
        readers = [j for j in range(index + 1, len(models)) if model.name in reads[j]]
        if readers:
            last[model.name] = readers[-1]
    return last


def drop_tables(target: Engine | duckdb.DuckDBPyConnection, names: Collection[str]) -> None:
    """Drop these model tables (if present), freeing their memory for what comes next."""
    for name in names:
        if not is_model_name(name):
            raise ValueError(f"not a model table name: {name!r}")
    as_engine(target).drop(names)


def run_checks(target: Engine | duckdb.DuckDBPyConnection, *, sample: int = 5) -> list[CheckResult]:
    """Run every `checks/*.sql` assertion; each returns the rows that break its invariant.

    Files starting with ``_`` (macros the checks share) run first, as they are.
    """
    engine = as_engine(target)
    results: list[CheckResult] = []
    files = sql_files("checks")
    for file, sql in [f for f in files if f[0].startswith("_")]:
        try:
            engine.run_script(Model("", "checks", file, sql))
        except Exception as exc:
            raise RuntimeError(f"recon/models/checks/{file}: {_first(exc)}") from exc
    for file, sql in [f for f in files if not f[0].startswith("_")]:
        name = file.removesuffix(".sql")
        started = time.perf_counter()
        try:
            columns, rows = engine.query(f"SELECT * FROM ({sql}) AS offending")
        except Exception as exc:
            raise RuntimeError(f"recon/models/checks/{file}: {_first(exc)}") from exc
        log.debug("checks/%s: %.2f s", file, time.perf_counter() - started)
        shown = tuple(
            {c: _plain(v) for c, v in zip(columns, row, strict=True)} for row in rows[:sample]
        )
        results.append(CheckResult(name, len(rows), shown))
    return results


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value
