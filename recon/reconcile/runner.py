"""A tiny runner for the SQL models: staging -> intermediate -> marts, then the checks.

Each model is one `.sql` file holding one SELECT; the runner materializes it as a table named
after the file (a leading ``NN_`` sets the order and is dropped from the name), in the work
database `recon_work` (see `use_work_database`: in memory, or a scratch file on disk). Files
starting with ``_`` (macros) run as they are. Parameters never go into SQL text: they are
bound into the one-row temp table `params`, which the models read.

A model may declare a surrogate key with a header line ``-- surrogate_key: NAME``: its rows
are then stored in ``<model>__rows`` and ``<model>`` is a view adding ``NAME``, the row's
position (DuckDB's rowid): a dense BIGINT unique within the run, free to compute (numbering
with ``row_number() OVER ()`` costs a second pass over every row and column), and several
times cheaper to join on than a text id. Keys are never written to a run file.

A model whose header says ``-- materialized: view`` is a temp view instead of a table: for a
model read once, late (the run's matches, which only the run file reads), storing its rows
first would only cost memory and time.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Collection
from dataclasses import dataclass
from datetime import date, datetime
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from recon.reconcile.settings import ReconcileSettings
from recon.schemas import CATEGORIES, status_vocabulary

__all__ = [
    "LAYERS",
    "WORK_DATABASE",
    "CheckResult",
    "Model",
    "configure",
    "drop_tables",
    "load_models",
    "run_checks",
    "run_models",
    "set_params",
    "use_work_database",
]

WORK_DATABASE = "recon_work"

LAYERS = ("staging", "intermediate", "marts")
log = logging.getLogger(__name__)
_NAME = re.compile(r"^(?:\d+_)?([a-z][a-z0-9_]*)$")
_KEY = re.compile(r"^--\s*surrogate_key:\s*([a-z][a-z0-9_]*)\s*$", re.MULTILINE)
_VIEW = re.compile(r"^--\s*materialized:\s*view\s*$", re.MULTILINE)


@dataclass(frozen=True)
class Model:
    """One SQL file: the table it builds (or '' for a raw script), its layer and text."""

    name: str
    layer: str
    file: str
    sql: str
    key: str = ""
    view: bool = False

    @property
    def is_script(self) -> bool:
        return self.name == ""


@dataclass(frozen=True)
class CheckResult:
    """An assertion query's outcome: the offending rows (first few) and how many there were."""

    name: str
    failures: int
    sample: tuple[dict[str, Any], ...]

    @property
    def passed(self) -> bool:
        return self.failures == 0


def _files(folder: str) -> list[tuple[str, str]]:
    root = resources.files("recon.sql") / folder
    return sorted(
        (f.name, f.read_text(encoding="utf-8")) for f in root.iterdir() if f.name.endswith(".sql")
    )


def load_models(layers: tuple[str, ...] = LAYERS) -> list[Model]:
    """Every model in run order: layer by layer, scripts first, then by file name."""
    models: list[Model] = []
    for layer in layers:
        for file, sql in _files(layer):
            stem = file.removesuffix(".sql")
            if stem.startswith("_"):
                models.append(Model("", layer, file, sql))
                continue
            match = _NAME.match(stem)
            if not match:
                raise ValueError(f"recon/sql/{layer}/{file}: not a valid model file name")
            key = _KEY.search(sql)
            view = bool(_VIEW.search(sql))
            if key and view:
                raise ValueError(f"recon/sql/{layer}/{file}: a view cannot have a surrogate key")
            models.append(
                Model(match.group(1), layer, file, sql, key.group(1) if key else "", view)
            )
    return models


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


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def set_params(
    con: duckdb.DuckDBPyConnection,
    settings: ReconcileSettings,
    as_of: datetime,
    manual: Collection[tuple[str, str]] = (),
) -> None:
    """(Re)create the one-row `params` table, the `categories` and `status_vocabulary`
    (recon.schemas: the models never spell statuses out in lists) and the `manual_matches`
    a person confirmed ((intent_id, line_id) pairs), values bound."""

    def seconds(value: Any) -> int:
        return int(value.total_seconds())

    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE params AS
        SELECT
            CAST($as_of AS TIMESTAMPTZ) AS as_of,
            CAST($tolerance AS BIGINT) AS amount_tolerance_cents,
            to_seconds(CAST($onramp AS BIGINT)) AS onramp_payment_grace,
            CAST($onramp AS BIGINT) AS onramp_payment_grace_s,
            to_seconds(CAST($offramp AS BIGINT)) AS offramp_payout_grace,
            CAST($offramp AS BIGINT) AS offramp_payout_grace_s,
            to_seconds(CAST($refund AS BIGINT)) AS refund_grace,
            CAST($refund AS BIGINT) AS refund_grace_s,
            to_seconds(CAST($skew AS BIGINT)) AS clock_skew,
            CAST($accounts AS VARCHAR[]) AS accounts,
            CAST($tz AS VARCHAR) AS business_tz,
            CAST($date_from AS DATE) AS date_from,
            CAST($date_to AS DATE) AS date_to,
            -- the window as UTC instants (local midnight of date_from .. of date_to + 1), so
            -- the staging models compare timestamps instead of converting every row's zone
            timezone(CAST($tz AS VARCHAR), CAST(CAST($date_from AS DATE) AS TIMESTAMP))
                AS window_start,
            timezone(CAST($tz AS VARCHAR), CAST(CAST($date_to AS DATE) + 1 AS TIMESTAMP))
                AS window_end
        """,
        {
            "as_of": as_of,
            "tolerance": settings.amount_tolerance_cents,
            "onramp": seconds(settings.onramp_payment_grace),
            "offramp": seconds(settings.offramp_payout_grace),
            "refund": seconds(settings.refund_grace),
            "skew": seconds(settings.clock_skew),
            "accounts": list(settings.accounts),
            "tz": settings.business_tz,
            "date_from": _iso(settings.date_from),
            "date_to": _iso(settings.date_to),
        },
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE categories (name VARCHAR, priority VARCHAR, meaning VARCHAR)"
    )
    con.executemany(
        "INSERT INTO categories VALUES (?, ?, ?)",
        [(c.name, c.priority, c.meaning) for c in CATEGORIES.values()],
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE status_vocabulary (intent_type VARCHAR, status VARCHAR,"
        " stage_rank INTEGER, kind VARCHAR, terminal BOOLEAN, fiat_moved BOOLEAN)"
    )
    con.executemany("INSERT INTO status_vocabulary VALUES (?, ?, ?, ?, ?, ?)", status_vocabulary())
    con.execute("CREATE OR REPLACE TEMP TABLE manual_matches (intent_id VARCHAR, line_id VARCHAR)")
    if manual:
        con.executemany("INSERT INTO manual_matches VALUES (?, ?)", [list(p) for p in manual])


def _iso(value: date | None) -> str | None:
    return value.isoformat() if value else None


def run_models(
    con: duckdb.DuckDBPyConnection,
    models: list[Model] | None = None,
    *,
    keep: Collection[str] | None = None,
) -> list[str]:
    """Materialize every model as a temp table, in order; return the table names built.

    With `keep` (the tables the caller reads afterwards), a table is dropped as soon as the
    last later model that reads it is built, unless a check or the caller reads it: on a
    10M-row run the passes' tables would otherwise hold memory (or spill) until the end.
    Without `keep` every table stays (notebooks, tests).

    A model that runs out of DuckDB memory (some operators cannot spill everything) is
    retried once on a single thread, which holds about half as much in flight; a second
    failure is raised naming the model.
    """
    models = models if models is not None else load_models()
    use_work_database(con)
    last_use = _last_use(models, keep) if keep is not None else {}
    built: list[str] = []
    for index, model in enumerate(models):
        started = time.perf_counter()
        try:
            try:
                _build(con, model)
            except duckdb.OutOfMemoryException as exc:
                if _threads(con) <= 1:
                    raise
                log.warning("%s: %s; retrying on one thread", model.file, str(exc).splitlines()[0])
                threads = _threads(con)
                con.execute("SET threads = 1")
                try:
                    _build(con, model)
                finally:
                    con.execute(f"SET threads = {threads}")
        except duckdb.Error as exc:
            raise RuntimeError(f"recon/sql/{model.layer}/{model.file}: {exc}") from exc
        if model.name:
            built.append(model.name)
        log.debug("%s/%s: %.2f s", model.layer, model.file, time.perf_counter() - started)
        _drop(con, [n for n, last in last_use.items() if last == index])
    return built


def _build(con: duckdb.DuckDBPyConnection, model: Model) -> None:
    """Run a script, or (re)create a model's view / keyed table / table."""
    if model.is_script:
        con.execute(model.sql)
    elif model.view:
        con.execute(f"CREATE OR REPLACE TEMP VIEW {model.name} AS\n{model.sql}")
    elif model.key:
        rows = f"{WORK_DATABASE}.main.{model.name}__rows"
        con.execute(f"CREATE OR REPLACE TABLE {rows} AS\n{model.sql}")
        con.execute(
            f"CREATE OR REPLACE TEMP VIEW {model.name} AS "
            f"SELECT rowid AS {model.key}, * FROM {rows}"
        )
    else:
        con.execute(f"CREATE OR REPLACE TABLE {WORK_DATABASE}.main.{model.name} AS\n{model.sql}")


def _threads(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])


def _last_use(models: list[Model], keep: Collection[str]) -> dict[str, int]:
    """Table name -> index of the last model reading it, for the tables safe to drop then.

    A view reads its tables when a later model reads the view, so a model reading a view
    counts as reading what the view reads. Tables a check or the caller (`keep`) reads,
    and tables no later model reads, are left.
    """
    checks = " ".join(sql for _, sql in _files("checks"))
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


def drop_tables(con: duckdb.DuckDBPyConnection, names: Collection[str]) -> None:
    """Drop these model tables (if present), freeing their memory for what comes next."""
    for name in names:
        if not _NAME.match(name):
            raise ValueError(f"not a model table name: {name!r}")
    _drop(con, names)


def _drop(con: duckdb.DuckDBPyConnection, names: Collection[str]) -> None:
    """Drop model tables and views; a keyed model is a view over `<name>__rows`: drop both."""
    if not names:
        return
    views = {
        r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall()
    }
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [WORK_DATABASE]
        ).fetchall()
    }
    for name in names:
        if name in views:
            con.execute(f"DROP VIEW {name}")
        if name in tables:
            con.execute(f"DROP TABLE {WORK_DATABASE}.main.{name}")
        if f"{name}__rows" in tables:
            con.execute(f"DROP TABLE {WORK_DATABASE}.main.{name}__rows")


def run_checks(con: duckdb.DuckDBPyConnection, *, sample: int = 5) -> list[CheckResult]:
    """Run every `checks/*.sql` assertion; each returns the rows that break its invariant.

    Files starting with ``_`` (macros the checks share) run first, as they are.
    """
    results: list[CheckResult] = []
    files = _files("checks")
    for file, sql in [f for f in files if f[0].startswith("_")]:
        try:
            con.execute(sql)
        except duckdb.Error as exc:
            raise RuntimeError(f"recon/sql/checks/{file}: {exc}") from exc
    for file, sql in [f for f in files if not f[0].startswith("_")]:
        name = file.removesuffix(".sql")
        started = time.perf_counter()
        try:
            cur = con.execute(f"SELECT * FROM ({sql}) AS offending")
            columns = [d[0] for d in cur.description or ()]
            rows = cur.fetchall()
        except duckdb.Error as exc:
            raise RuntimeError(f"recon/sql/checks/{file}: {exc}") from exc
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
