"""A reconciliation run: models + checks over the catalog, published as data/runs/<run_id>/.

    data/runs/<run_id>/matches.parquet      MATCHES_SCHEMA, one row per confirmed pair
    data/runs/<run_id>/exceptions.parquet   EXCEPTIONS_SCHEMA, one row per open break
    data/runs/<run_id>/awaiting.parquet     AWAITING_SCHEMA, one row per intent waiting for
                                            statements that cover its money (not a break)
    data/runs/<run_id>/candidates.parquet   CANDIDATES_SCHEMA, the candidates of ambiguous lines
    data/runs/<run_id>/suggestions.parquet  SUGGESTIONS_SCHEMA, the nearest candidates of each
                                            open break without its money or unexplained line
    data/runs/<run_id>/history.parquet      HISTORY_SCHEMA, the audit entries about its breaks
    data/runs/<run_id>/summary.json         RunSummary (counts, totals, control totals, checks)
    data/runs/<run_id>/flows.parquet        what the report draws besides the breaks, as of
                                            the run (recon.reconciliation.flows)

The folder appears atomically (recon.storage.atomic_dir). Same inputs and settings give the
same rows in the same order; only run_id and first_seen_run depend on the run.

On a remote data directory (recon.lake) the folder is written on the local side as above
and, before it is renamed into place, committed to the Delta tables runs/<name> (partition
run=<run id>) and last to runs/summaries (summary.json and flows.parquet in one row): that
last commit is what makes the run visible; a failure before it leaves the run nowhere.
Each runs/<name> commit replaces the run's partition whole (`lake.Table.replace_partition`),
so publishing a run again after a cut (`recon migrate` finishing a copy) stores it once.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recon import catalog, lake
from recon.config import DataDir, load_config, new_run_id, ui_language
from recon.engine.base import Engine
from recon.engine.duck import DuckDBEngine
from recon.errors import RunChecksFailed, SnapshotError, UsageError
from recon.reconciliation import audit, runner
from recon.reconciliation import flows as run_flows
from recon.reconciliation.decisions import load_decisions, load_history
from recon.reconciliation.manual import load_manual_matches
from recon.reconciliation.reasons import Renderer
from recon.reconciliation.settings import ReconcileSettings
from recon.schemas import (
    AWAITING_SCHEMA,
    CANDIDATES_SCHEMA,
    CATEGORIES,
    EXCEPTIONS_SCHEMA,
    HISTORY_SCHEMA,
    HISTORY_STATE_FILE,
    HISTORY_STATE_RANKS,
    HISTORY_STATE_SCHEMA,
    HISTORY_STATE_SNAPSHOTS,
    MATCHES_SCHEMA,
    SUGGESTIONS_SCHEMA,
    conform,
    history_state_ranks,
)
from recon.statements.banks import OWN_KINDS
from recon.storage import atomic_dir, write_json, writer_lock

# an engine by name ("duckdb", "spark"), or a SparkSession to run on
EngineChoice = Any
log = logging.getLogger(__name__)

# the rules of recon_matches, in the order matching tries them (summary.json's matches_by_rule)
MATCH_RULES = ("manual", "txid", "reference", "attributes", "elimination", "refund")

__all__ = [
    "RunChecksFailed",
    "RunResult",
    "RunSummary",
    "load_run",
    "reconcile",
]


@dataclass(frozen=True)
class RunSummary:
    """What a run found, as saved in summary.json (amounts in cents)."""

    run_id: str
    previous_run_id: str | None
    as_of: str  # ISO 8601 UTC
    settings: dict[str, Any]
    intents: int
    statement_lines: int  # non-fee lines in scope
    matched_lines: int
    auto_match_rate: float  # matched_lines / statement_lines (1.0 when there are none)
    matches_by_rule: dict[str, int]
    breaks: int  # open breaks (decided ones excluded)
    counts: dict[str, int]  # open breaks per category, every category listed
    counts_by_priority: dict[str, int]
    new_breaks: int
    persisting_breaks: int
    totals: dict[str, int]
    control_totals: tuple[dict[str, Any], ...]
    explained_by: dict[str, int]  # control items' cents per label (category or state)
    checks: dict[str, int]  # offending rows per check
    checks_passed: bool
    check_samples: dict[str, tuple[dict[str, Any], ...]] = field(default_factory=dict)
    resolved_breaks: tuple[str, ...] = ()  # open in the previous run, gone now
    decided_breaks: tuple[dict[str, Any], ...] = ()  # present but closed by a decision
    # statement coverage: the stretches the statements cover per side (credit: any
    # statement; debit: account statements), ISO UTC, end exclusive
    coverage: tuple[dict[str, str], ...] = ()
    # intents waiting for statements (not breaks): {"intents", "cents", "by_category"}
    awaiting: dict[str, Any] = field(default_factory=dict)
    # business days (first intent's day .. as_of's day) no account statement fully covers,
    # and those of them that ended more than [alerts] statements_overdue before as_of
    uncovered_days: tuple[str, ...] = ()
    statements_overdue: tuple[str, ...] = ()
    coverage_text: str = ""  # "statements cover … to …; N intents (R$ X) wait for statements"
    # the balance walk of the service's accounts (statement_balances) over the last
    # WALK_DAYS days that ended by as_of: account, day, opening/movements/closing/gap cents,
    # state; the report shows it
    balance_walk: tuple[dict[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, payload: dict[str, Any]) -> RunSummary:
        """The inverse of `to_json` (tuples restored)."""
        kw = dict(payload)
        kw["control_totals"] = tuple(kw.get("control_totals", ()))
        kw["balance_walk"] = tuple(kw.get("balance_walk", ()))
        kw["resolved_breaks"] = tuple(kw.get("resolved_breaks", ()))
        kw["decided_breaks"] = tuple(kw.get("decided_breaks", ()))
        kw["check_samples"] = {k: tuple(v) for k, v in kw.get("check_samples", {}).items()}
        for name in ("coverage", "uncovered_days", "statements_overdue"):
            kw[name] = tuple(kw.get(name, ()))
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in kw.items() if k in known})


@dataclass(frozen=True)
class RunResult:
    """A published run: its id, folder and summary."""

    run_id: str
    path: Path
    summary: RunSummary

    @property
    def matches_path(self) -> Path:
        return self.path / "matches.parquet"

    @property
    def exceptions_path(self) -> Path:
        return self.path / "exceptions.parquet"

    @property
    def awaiting_path(self) -> Path:
        return self.path / "awaiting.parquet"


def load_run(path: str | os.PathLike[str]) -> RunResult:
    """Read a published run folder back (summary only; the Parquet files stay on disk)."""
    folder = Path(path)
    payload = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    summary = RunSummary.from_json(payload)
    return RunResult(summary.run_id, folder, summary)


def reconcile(
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    as_of: datetime | str | None = None,
    settings: ReconcileSettings | None = None,
    run_id: str | None = None,
    strict: bool = True,
    flows: bool = True,
    engine: EngineChoice | None = None,
) -> RunResult:
    """Match every intent of the latest snapshot to the statement lines; publish a run.

    `as_of` defaults to the latest snapshot's snapshot_at (server time); `settings` to
    recon.toml's `[reconcile]`. The run is published even when a check fails; then, with
    `strict` (default), RunChecksFailed is raised carrying the result.

    `flows` (default) also writes ``flows.parquet``: the funnel, expiry and time-to-pay frames
    of the snapshots as they are now, and the trend of the last runs, so the run's report
    never recomputes them later. `flows=False` leaves the intent-flow frames out (the
    matching benchmark, which measures the passes alone); the trend is always written.

    `engine` runs the models on "duckdb" (the default) or "spark" (a local session), or on
    a SparkSession passed in (a notebook's or a Databricks job's `spark`); by default,
    recon.toml's `[engine] kind`.
    """
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    # one writer at a time per data directory; the first holder sweeps crash leftovers
    with writer_lock(dd.root, "reconcile"):
        return _reconcile_locked(
            dd,
            as_of=as_of,
            settings=settings,
            run_id=run_id,
            strict=strict,
            flows=flows,
            engine=engine,
        )


def _reconcile_locked(
    dd: DataDir,
    *,
    as_of: datetime | str | None,
    settings: ReconcileSettings | None,
    run_id: str | None,
    strict: bool,
    flows: bool,
    engine: EngineChoice | None,
) -> RunResult:
    settings = settings or ReconcileSettings.load(dd)
    engine_choice: EngineChoice = engine if engine is not None else settings.engine
    # the summary records the engine that ran
    settings = replace(
        settings, engine=engine_choice if isinstance(engine_choice, str) else "spark"
    )
    run_id = run_id or new_run_id()
    if not run_id or "/" in run_id or run_id.startswith("."):
        raise UsageError(f"bad run id {run_id!r}")
    if (dd.runs / run_id).exists() or (dd.remote and run_id in catalog.remote_runs(dd)):
        raise UsageError(f"run {run_id} already exists")
    previous = catalog.latest_run(dd)
    # before the engine's own connection opens, so the two never hold memory at once
    with _phase("flows"):
        flow_frames = run_flows.flow_frames(dd) if flows else {}

    # DuckDB spills here beyond memory_limit; one folder per run, so runs never share files
    temp_dir = Path(settings.temp_directory or (dd.root / ".tmp-duckdb")) / run_id
    with _phase("catalog"):
        engine = _open_engine(dd, settings, temp_dir, engine_choice)
    # matches.parquet is encoded on this thread while the engine runs the checks and the
    # breaks, when its rows can leave the engine as soon as the models are built (_matches)
    background = ThreadPoolExecutor(1, thread_name_prefix="recon-matches")
    early: Future[None] | None = None
    early_file = temp_dir / "matches.parquet"
    try:
        as_of_ts = _resolve_as_of(engine, as_of)
        manual = [(m.intent_id, m.line_id) for m in load_manual_matches(dd)]
        runner.set_params(engine, settings, as_of_ts, manual)
        with _phase("models"):
            built = runner.run_models(engine, keep=_READ_AFTER_MODELS)
        with _phase("matches by key"):
            rows = _matches(engine, run_id)
        if rows is not None:
            early = background.submit(_write, rows, early_file, MATCHES_SCHEMA)
        with _phase("checks"):
            checks = runner.run_checks(engine)
        # the passes are done with: free their memory before the run files are written
        runner.drop_tables(engine, [t for t in built if t not in _READ_AFTER_MODELS])
        with _phase("exceptions with history and decisions"):
            _load_previous(engine, previous)
            decisions = load_decisions(dd)
            history = load_history(dd)
            _final_exceptions(engine, run_id, list(decisions))
            runner.drop_tables(engine, ["recon_exceptions"])  # final_exceptions holds its rows
        with _phase("summary"):
            summary = _summary(
                engine, run_id, previous, as_of_ts, settings, checks, decisions, history
            )
        # only the run files' sources are left to read: free the rest (the sort of a
        # 10M-row matches file needs the room)
        runner.drop_tables(engine, [t for t in built if t not in _WRITTEN])
        dd.runs.mkdir(parents=True, exist_ok=True)
        # the reasons in the language people are spoken to (--lang, $RECON_LANG, [ui] language)
        reasons = Renderer(ui_language(load_config(data=dd)), settings.business_tz)
        # Arrow batches stream from the engine to the Parquet writer: memory stays bounded.
        with _phase("run files"), atomic_dir(dd.runs / run_id) as tmp:
            with _phase("exceptions.parquet"):
                _copy(
                    engine,
                    _EXCEPTIONS_SQL,
                    {},
                    tmp / "exceptions.parquet",
                    EXCEPTIONS_SCHEMA,
                    reasons,
                )
            with _phase("suggestions.parquet"):
                _copy(engine, _SUGGESTIONS_SQL, {}, tmp / "suggestions.parquet", SUGGESTIONS_SCHEMA)
            with _phase("awaiting.parquet"):
                _copy(
                    engine,
                    _AWAITING_SQL,
                    {"run_id": run_id},
                    tmp / "awaiting.parquet",
                    AWAITING_SCHEMA,
                    reasons,
                )
            with _phase("history.parquet"):
                _write_history(engine, dd, tmp / "history.parquet")
            # the breaks are written: their rows (0.8 GB at 10M) make room for the matches' sort
            engine.drop(["final_exceptions"])
            with _phase("matches.parquet"):
                if early is not None:
                    early.result()
                    shutil.move(early_file, tmp / "matches.parquet")
                else:
                    _copy(
                        engine,
                        _MATCHES_SQL,
                        {"run_id": run_id},
                        tmp / "matches.parquet",
                        MATCHES_SCHEMA,
                    )
            with _phase("candidates.parquet"):
                _copy(engine, _CANDIDATES_SQL, {}, tmp / "candidates.parquet", CANDIDATES_SCHEMA)
            # last: the work tables are gone, the aggregation over the snapshots has the room
            with _phase("history state"):
                _write_history_state(engine, dd, previous, tmp / HISTORY_STATE_FILE)
            write_json(tmp / "summary.json", summary.to_json())
            trend = run_flows.run_history(
                dd.runs, run_id, summary.as_of, tmp / "exceptions.parquet"
            )
            run_flows.write_flows({**flow_frames, "run_history": trend}, tmp / run_flows.FLOWS_FILE)
            if dd.remote:
                with _phase("commit to object storage"):
                    publish_remote(dd, run_id, summary, tmp)
    finally:
        background.shutdown(wait=True)  # its file is in temp_dir
        engine.close()
        shutil.rmtree(temp_dir, ignore_errors=True)
    result = RunResult(run_id, dd.runs / run_id, summary)
    if strict and not summary.checks_passed:
        failed = ", ".join(f"{k} ({v} rows)" for k, v in summary.checks.items() if v)
        raise RunChecksFailed(f"run {run_id} failed its checks: {failed}", result)
    return result


def publish_remote(dd: DataDir, run_id: str, summary: RunSummary, folder: Path) -> None:
    """Commit a run folder's files to a remote data directory (see the module doc)."""
    meta = {"run": run_id}
    for name in lake.RUN_TABLES:
        contract = catalog.RUN_TABLE_SCHEMAS[name]
        schema = contract.append(pa.field(lake.RUN_PARTITION, pa.string()))
        path = folder / f"{name}.parquet"  # a run made before the file existed has none

        def batches(
            path: Path = path, contract: pa.Schema = contract, schema: pa.Schema = schema
        ) -> Iterator[pa.RecordBatch]:
            if not path.is_file():
                return
            for batch in pq.ParquetFile(path).iter_batches(batch_size=_BATCH_ROWS):
                rows = pa.Table.from_batches([batch])
                rows = conform(rows, contract)
                run = pa.array([run_id] * rows.num_rows, pa.string())
                yield from rows.append_column(lake.RUN_PARTITION, run).to_batches()

        # the run's partition replaced whole: a publication cut short and run again (a
        # migration finishing its copy) leaves one copy of the run, never two
        dd.table(f"runs/{name}").replace_partition(
            pa.RecordBatchReader.from_batches(schema, batches()),
            lake.RUN_PARTITION,
            run_id,
            metadata=meta,
        )
    flows = folder / run_flows.FLOWS_FILE
    row = {
        "run_id": run_id,
        "as_of": summary.as_of,
        "summary": (folder / "summary.json").read_text(encoding="utf-8"),
        "flows": flows.read_bytes() if flows.is_file() else None,
    }
    table = pa.Table.from_pylist([row], schema=catalog.SUMMARIES_SCHEMA)
    dd.table(lake.RUN_SUMMARIES).append(table, metadata=meta)


# the model tables reconcile() reads after the models and checks (the summary, the run files)
_READ_AFTER_MODELS = frozenset(
    {
        "stg_intents",
        "stg_statement_lines",
        "int_intent_book",
        "recon_matches",
        "int_matches",
        "recon_exceptions",
        "recon_control_items",
        "recon_control_totals",
        "recon_awaiting",
        "recon_suggestions",
        "stg_coverage",
        "int_ambiguous",
        "int_history_regressions",
        "int_balance_walk",
        # views: what the next run's history state is built from
        "stg_history_state",
        "stg_intent_history",
        "int_history_observations",
    }
)


@contextmanager
def _phase(name: str) -> Iterator[None]:
    """Log how long a phase of the run took (DEBUG; `recon -v` shows it)."""
    started = time.perf_counter()
    yield
    log.debug("%s: %.2f s", name, time.perf_counter() - started)


# the model tables the run files read (recon_matches is a view over these)
_WRITTEN = frozenset(
    {
        "stg_intents",
        "stg_statement_lines",
        "int_matches",
        "recon_matches",
        "recon_awaiting",
        "recon_suggestions",
        "int_ambiguous",
        # with the observations (views over the snapshots), the next run's history state
        "int_history_regressions",
        "stg_history_state",
        "stg_intent_history",
        "int_history_observations",
    }
)


def _open_engine(
    dd: DataDir, settings: ReconcileSettings, temp_dir: Path, choice: EngineChoice
) -> Engine:
    """The engine a run uses, with the catalog's sources and views registered on it:
    DuckDB (the default) bounded by the settings, or Spark (a session passed in, or one
    started in local mode)."""
    kind = choice if isinstance(choice, str) else "spark"
    if kind == "duckdb":
        con = catalog.connect(dd)
        try:
            on_disk = settings.work_on_disk(catalog.input_bytes(dd))
            log.debug("work tables %s", "on disk" if on_disk else "in memory")
            runner.configure(con, settings, temp_dir, on_disk=on_disk)
        except BaseException:
            con.close()
            raise
        return DuckDBEngine(con)
    if kind != "spark":
        raise UsageError(f"unknown engine {kind!r}: duckdb or spark")
    from recon.engine.spark import SMALL_INPUT_BYTES, SparkEngine

    session = None if isinstance(choice, str) else choice
    engine = SparkEngine(
        session,
        threads=settings.threads,
        scratch=temp_dir / "spark",
        small=catalog.input_bytes(dd) < SMALL_INPUT_BYTES,
    )
    catalog.register(engine, dd)
    return engine


def _resolve_as_of(engine: Engine, as_of: datetime | str | None) -> datetime:
    if as_of is None:
        rows = engine.rows("SELECT max(snapshot_at) FROM intents")
        row = rows[0] if rows else None
        if row is None or row[0] is None:
            raise SnapshotError("no snapshot to reconcile: run `recon extract` first")
        value: datetime = row[0]
    elif isinstance(as_of, str):
        try:
            value = datetime.fromisoformat(as_of.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise UsageError(f"--as-of {as_of!r} is not an ISO 8601 timestamp") from exc
    else:
        value = as_of
    if value.tzinfo is None:
        raise UsageError(f"as_of {value.isoformat()} needs a time zone (e.g. Z or -03:00)")
    return value.astimezone(UTC)


_PREVIOUS_SCHEMA = pa.schema([("break_id", pa.string()), ("first_seen_run", pa.string())])


def _load_previous(engine: Engine, previous: Path | None) -> None:
    file = previous / "exceptions.parquet" if previous is not None else None
    found = [str(file)] if file is not None and file.is_file() else []
    engine.register_parquet("previous_exceptions", found, _PREVIOUS_SCHEMA)


def _final_exceptions(engine: Engine, run_id: str, decided: list[str]) -> None:
    engine.register_arrow("decided_ids", pa.table({"break_id": pa.array(decided, pa.string())}))
    engine.create_table(
        "final_exceptions",
        """
        SELECT
            e.break_id,
            CAST($run_id AS VARCHAR) AS run_id,
            e.category,
            e.priority,
            e.intent_id,
            e.line_id,
            e.end_to_end_id,
            e.expected_cents,
            e.actual_cents,
            e.delta_cents,
            e.reason_code,
            e.reason_params,
            coalesce(p.first_seen_run, $run_id) AS first_seen_run,
            e.age_days,
            CASE WHEN p.break_id IS NULL THEN 'new' ELSE 'persisting' END AS state,
            d.break_id IS NOT NULL AS decided
        FROM recon_exceptions AS e
        LEFT JOIN previous_exceptions AS p ON p.break_id = e.break_id
        LEFT JOIN decided_ids AS d ON d.break_id = e.break_id
        """,
        {"run_id": run_id},
    )


# matches.parquet in booking order (a line is matched once, so booked_at, line_id is a total
# order): a time-range query skips row groups by their booked_at statistics, and a sort on a
# timestamp is much cheaper than on a 36-character id (1M rows written: 1.5 s vs 2.2 s).
# The query joining the ids, for an engine whose keys are not positions (see _matches).
_MATCHES_SQL = """
SELECT CAST($run_id AS VARCHAR) AS run_id, intent_id, line_id, end_to_end_id, rule, intent_type,
       intent_status, line_kind, expected_cents, actual_cents, fee_cents, booked_at
FROM recon_matches
ORDER BY booked_at, line_id
"""

# recon_matches' rows without their ids, which _matches looks up by key: its model's rows of
# int_matches, read without the view's joins (a join carrying even the short texts costs
# several times the scan)
_MATCH_KEYS_SQL = """
SELECT intent_key, line_key, rule, intent_type, intent_status, line_kind, expected_cents,
       actual_cents, fee_cents, booked_at
FROM int_matches
WHERE role IN ('payment', 'part', 'refund')
"""


def _matches(engine: Engine, run_id: str) -> pa.RecordBatchReader | None:
    """matches.parquet's rows, in booking order, as Arrow data that no longer needs the
    engine; None when the engine's keys are not positions (then _MATCHES_SQL joins the ids).

    When the engine holds the stage tables by position (DuckDB in memory), the ids are taken
    from Arrow copies of their columns by key, and only the keys and the short columns go
    through the engine: a join carrying the 36-character ids, or even the short texts, costs
    three times as much (1M matches: ~0.3 s vs ~1.0 s before writing).
    """
    intents = engine.keyed_columns("stg_intents", ["intent_id"])
    lines = engine.keyed_columns("stg_statement_lines", ["line_id", "end_to_end_id"])
    if intents is None or lines is None:
        return None
    intent_ids = _one_chunk(intents["intent_id"])
    line_ids_by_key = _one_chunk(lines["line_id"])
    e2e_ids = _one_chunk(lines["end_to_end_id"])
    pairs = engine.reader(_MATCH_KEYS_SQL).read_all()
    line_ids = line_ids_by_key.take(pairs["line_key"])
    order = pc.sort_indices(
        pa.table({"booked_at": pairs["booked_at"], "line_id": line_ids}),
        sort_keys=[("booked_at", "ascending"), ("line_id", "ascending")],
    )

    def batches() -> Iterator[pa.RecordBatch]:
        for start in range(0, len(order), _BATCH_ROWS):
            at = order.slice(start, _BATCH_ROWS)
            rows = pairs.take(at)
            ids = {
                "run_id": pa.repeat(pa.scalar(run_id, pa.string()), len(at)),
                "intent_id": intent_ids.take(rows["intent_key"]),
                "line_id": line_ids.take(at),
                "end_to_end_id": e2e_ids.take(rows["line_key"]),
            }
            columns = [ids[f.name] if f.name in ids else rows[f.name] for f in MATCHES_SCHEMA]
            yield from (
                pa.table(columns, names=MATCHES_SCHEMA.names).cast(MATCHES_SCHEMA).to_batches()
            )

    return pa.RecordBatchReader.from_batches(MATCHES_SCHEMA, batches())


def _one_chunk(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array, without a copy when it is one chunk already (a lookup in a
    chunked array concatenates its chunks first, every time)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


_AWAITING_SQL = """
SELECT CAST($run_id AS VARCHAR) AS run_id, intent_id, intent_type, intent_status, direction,
       expected_cents, window_from, window_to, would_be, reason_code, reason_params
FROM recon_awaiting
ORDER BY window_from, intent_id, would_be
"""

# the candidates of every ambiguous line: what a person chooses from (`recon review`)
_CANDIDATES_SQL = """
SELECT l.line_id, i.intent_id, a.rule
FROM int_ambiguous AS a
JOIN stg_statement_lines AS l ON l.line_key = a.line_key
JOIN stg_intents AS i ON i.intent_key = a.intent_key
ORDER BY l.line_id, i.intent_id
"""

# the suggestions of the open breaks (those exceptions.parquet lists)
_SUGGESTIONS_SQL = """
SELECT s.break_id, s.intent_id, s.line_id, s.rank, s.score, s.differences
FROM recon_suggestions AS s
SEMI JOIN (SELECT break_id FROM final_exceptions WHERE NOT decided) AS e
  ON e.break_id = s.break_id
ORDER BY s.break_id, s.rank
"""

_EXCEPTIONS_SQL = """
SELECT break_id, run_id, category, priority, intent_id, line_id, end_to_end_id, expected_cents,
       actual_cents, delta_cents, reason_code, reason_params, first_seen_run, age_days, state
FROM final_exceptions WHERE NOT decided
ORDER BY category, intent_id NULLS LAST, end_to_end_id NULLS LAST, line_id NULLS LAST, break_id
"""


# The history state the next run's history checks start from (recon.catalog.history_sources):
# per intent, its last observation and its latest step backwards (int_history_regressions).
# The last observation is found by time, then joined back: a max_by carrying the row through
# the grouping of every snapshot's rows took 10x longer (1M x 31 snapshots: 24 s vs 2.2 s).
# Rows tied at that time (one snapshot listing an intent twice) are all kept, so the next
# run orders them as a run reading every snapshot would.
_HISTORY_STATE_SQL = """
WITH last AS (
    SELECT intent_id, max(snapshot_at) AS last_at
    FROM int_history_observations
    GROUP BY intent_id
)
SELECT
    o.intent_id,
    o.snapshot_run_id,
    o.intent_type,
    o.status,
    o.amount_cents,
    o.snapshot_at,
    r.regressed_from,
    r.regressed_from_at,
    r.regressed_to,
    r.regressed_at
FROM int_history_observations AS o
JOIN last ON last.intent_id = o.intent_id AND last.last_at = o.snapshot_at
LEFT JOIN int_history_regressions AS r ON r.intent_id = o.intent_id
"""

# A state is written once the history checks read this many snapshots, or started from one:
# with one or two, reading them costs about what writing the state would
_STATE_FROM_SNAPSHOTS = 3


def _write_history_state(engine: Engine, dd: DataDir, previous: Path | None, path: Path) -> None:
    """Leave the next run a history state (runs/<run_id>/history_state.parquet) covering every
    snapshot kept now, when it saves that run work: this run started from one, or read at
    least `_STATE_FROM_SNAPSHOTS` snapshots. DuckDB on a local data directory only (the
    catalog reads no state on object storage)."""
    if engine.kind != "duckdb" or dd.remote:
        return
    snaps = catalog.list_snapshots(dd)
    state, unfolded = catalog.history_sources(previous, snaps)
    if not state and len(unfolded) < _STATE_FROM_SNAPSHOTS:
        return
    kept = sorted(s.run_id for s in snaps)
    before = previous / HISTORY_STATE_FILE if previous is not None else None
    if before is not None and catalog.state_snapshots(before) == set(kept):
        shutil.copyfile(before, path)  # a run again over the same snapshots: the same state
        return
    schema = HISTORY_STATE_SCHEMA.with_metadata(
        {HISTORY_STATE_SNAPSHOTS: json.dumps(kept), HISTORY_STATE_RANKS: history_state_ranks()}
    )
    _copy(engine, _HISTORY_STATE_SQL, {}, path, schema)


def _write_history(engine: Engine, dd: DataDir, path: Path) -> None:
    """The audit entries about this run's breaks (open or decided), oldest first."""
    entries = [
        {
            "break_id": e.get("break_id"),
            "seq": e.get("seq"),
            "at": datetime.fromisoformat(str(e.get("at"))),
            "by": e.get("by"),
            "action": e.get("action"),
            "note": e.get("note"),
            "before": json.dumps(e.get("before") or {}, sort_keys=True, ensure_ascii=False),
            "after": json.dumps(e.get("after") or {}, sort_keys=True, ensure_ascii=False),
        }
        for e in audit.read_verified(dd)
    ]
    table = pa.Table.from_pylist(entries, schema=HISTORY_SCHEMA)
    engine.register_arrow("audit_entries", table)
    try:
        rows = engine.reader(
            "SELECT a.* FROM audit_entries AS a "
            "SEMI JOIN final_exceptions AS f ON f.break_id = a.break_id ORDER BY a.seq"
        ).read_all()
    finally:
        engine.drop(["audit_entries"])
    out = rows.cast(HISTORY_SCHEMA) if rows is not None else HISTORY_SCHEMA.empty_table()
    pq.write_table(out, path, compression="zstd")


def _copy(
    engine: Engine,
    sql: str,
    params: dict[str, Any],
    path: Path,
    schema: pa.Schema,
    reasons: Renderer | None = None,
) -> None:
    """Stream a query's rows, in order, into a Parquet file with exactly the contract schema;
    with `reasons`, the `reason` column is rendered from the rows' reason_code and
    reason_params."""
    reader = engine.reader(sql, params, _BATCH_ROWS)
    if reasons is not None:
        reader = _with_reasons(reader, schema, reasons)
    _write(reader, path, schema)


def _with_reasons(
    reader: pa.RecordBatchReader, schema: pa.Schema, reasons: Renderer
) -> pa.RecordBatchReader:
    """The rows with their `reason` sentence, in `schema`'s column order."""
    names = [n for n in schema.names if n == "reason" or n in reader.schema.names]
    out = pa.schema([schema.field(n) if n == "reason" else reader.schema.field(n) for n in names])

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in reader:
            sentences = reasons.column(
                batch.column("reason_code").to_pylist(), batch.column("reason_params").to_pylist()
            )
            reason = pa.array(sentences, pa.string())
            yield pa.RecordBatch.from_arrays(
                [reason if n == "reason" else batch.column(n) for n in names], schema=out
            )

    return pa.RecordBatchReader.from_batches(out, batches())


def _write(reader: pa.RecordBatchReader, path: Path, schema: pa.Schema) -> None:
    """Write batches, in order, into a Parquet file with exactly the contract schema.

    Batches flow from the engine to the writer, so memory stays bounded however many rows a
    run has (two batches in flight); fixed writer options make the same rows give the same
    file. The writer encodes a batch on a worker thread while the engine hands over the next
    one (both release the GIL): Parquet encoding is single-threaded, so this keeps the
    second core busy.
    """
    if reader.schema.names != schema.names:
        raise RuntimeError(f"{path.name}: columns {reader.schema.names} != {schema.names}")
    # dictionary-encode only the columns with few distinct values (rule, status, category...):
    # on ids, every page's dictionary attempt is wasted work before the writer falls back
    dictionary = [f.name for f in schema if f.name in _FEW_VALUES]
    with (
        pq.ParquetWriter(
            path,
            schema,
            compression="zstd",
            compression_level=1,
            use_dictionary=dictionary,
            write_statistics=True,
        ) as writer,
        ThreadPoolExecutor(1, thread_name_prefix="recon-parquet") as encoder,
    ):
        pending: Future[None] | None = None
        for batch in reader:
            ready = batch.cast(schema)
            if pending is not None:
                pending.result()
            pending = encoder.submit(writer.write_batch, ready, row_group_size=_BATCH_ROWS)
        if pending is not None:
            pending.result()


_BATCH_ROWS = 262_144
_FEW_VALUES = frozenset(
    {"run_id", "rule", "intent_type", "intent_status", "line_kind", "category", "priority",
     "first_seen_run", "state", "direction", "would_be", "reason_code"}
)  # fmt: skip


def _summary(
    engine: Engine,
    run_id: str,
    previous: Path | None,
    as_of: datetime,
    settings: ReconcileSettings,
    checks: list[runner.CheckResult],
    decisions: dict[str, Any],
    history: dict[str, Any],
) -> RunSummary:
    def scalar(sql: str) -> int:
        rows = engine.rows(sql)
        return int(rows[0][0] or 0) if rows else 0

    # Each table the figures come from is read once, grouped by what tells them apart (one
    # scan per figure made this phase 0.16-0.17 s at 1M intents; 0.13-0.14 s so)
    counts = dict.fromkeys(CATEGORIES, 0)
    by_priority = {"P1": 0, "P2": 0, "P3": 0}
    states: dict[str, int] = {}
    for category, priority, state, n in engine.rows(
        "SELECT category, priority, state, count(*) FROM final_exceptions WHERE NOT decided "
        "GROUP BY category, priority, state"
    ):
        counts[category] = counts.get(category, 0) + int(n)
        by_priority[priority] = by_priority.get(priority, 0) + int(n)
        states[state] = states.get(state, 0) + int(n)
    open_breaks = sum(states.values())
    lines = credit_cents = debit_cents = 0
    own = dict.fromkeys(OWN_KINDS, 0)  # the bank's own lines, by kind (bank_own)
    for direction, kind, bank_own, n, cents in engine.rows(
        "SELECT direction, kind, bank_own, count(*), sum(amount_abs_cents) "
        "FROM stg_statement_lines GROUP BY direction, kind, bank_own"
    ):
        if bank_own is None:  # a line of no kind is neither the bank's nor a counted line
            continue
        if bank_own:
            own[kind] += int(cents or 0)
            continue
        lines += int(n)
        if direction == "credit":
            credit_cents += int(cents or 0)
        elif direction == "debit":
            debit_cents += int(cents or 0)
    # recon_matches is a view (ids joined for the run file): its rows are int_matches'
    rules = dict.fromkeys(MATCH_RULES, 0)
    matched = matched_cents = 0
    for rule, n, cents in engine.rows(
        "SELECT rule, count(*), sum(actual_cents) FROM int_matches "
        "WHERE role IN ('payment', 'part', 'refund') GROUP BY rule"
    ):
        rules[rule] = int(n)
        matched += int(n)
        matched_cents += int(cents or 0)
    book = {
        direction: int(cents or 0)
        for direction, cents in engine.rows(
            "SELECT direction, sum(book_cents) FROM int_intent_book GROUP BY direction"
        )
    }
    totals = {
        "statement_credit_cents": credit_cents,
        "statement_debit_cents": debit_cents,
        "fees_cents": own["fee"],
        "interest_cents": own["interest"],
        "yield_cents": own["yield"],
        "intents_credit_cents": book.get("credit", 0),
        "intents_debit_cents": book.get("debit", 0),
        "matched_cents": matched_cents,
        "unexplained_cents": scalar("SELECT sum(abs(unexplained_cents)) FROM recon_control_totals"),
    }
    control = tuple(
        {k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()}
        for row in _records(engine, "SELECT * FROM recon_control_totals")
    )
    explained = {
        str(label): int(cents)
        for label, cents in engine.rows(
            "SELECT coalesce(label, 'UNEXPLAINED'), sum(cents) FROM recon_control_items "
            "GROUP BY 1 ORDER BY 1"
        )
    }
    resolved = tuple(
        r[0]
        for r in engine.rows(
            "SELECT break_id FROM previous_exceptions AS p WHERE NOT EXISTS "
            "(SELECT 1 FROM final_exceptions AS f WHERE f.break_id = p.break_id) ORDER BY 1"
        )
    )
    decided = tuple(
        {
            "break_id": bid,
            "category": category,
            "note": decisions[bid].note,
            "decided_by": decisions[bid].decided_by,
            "decided_at": decisions[bid].decided_at,
            # every resolve and reopen of the break, oldest first (a later note never hides
            # an earlier one)
            "history": [d.to_json() for d in history.get(bid, ())],
        }
        for bid, category in engine.rows(
            "SELECT break_id, category FROM final_exceptions WHERE decided ORDER BY break_id"
        )
    )
    coverage, awaiting, uncovered, overdue, text = _coverage_facts(engine, as_of, settings)
    return RunSummary(
        run_id=run_id,
        previous_run_id=previous.name if previous else None,
        as_of=as_of.isoformat(),
        settings=settings.as_dict(),
        intents=scalar("SELECT count(*) FROM stg_intents"),
        statement_lines=lines,
        matched_lines=matched,
        auto_match_rate=round(matched / lines, 6) if lines else 1.0,
        matches_by_rule=rules,
        breaks=open_breaks,
        counts=counts,
        counts_by_priority=by_priority,
        new_breaks=int(states.get("new", 0)),
        persisting_breaks=int(states.get("persisting", 0)),
        totals=totals,
        control_totals=control,
        explained_by=explained,
        checks={c.name: c.failures for c in checks},
        checks_passed=all(c.passed for c in checks),
        check_samples={c.name: c.sample for c in checks if not c.passed},
        resolved_breaks=resolved,
        decided_breaks=decided,
        coverage=coverage,
        awaiting=awaiting,
        uncovered_days=uncovered,
        statements_overdue=overdue,
        coverage_text=text,
        balance_walk=_balance_walk(engine, as_of),
    )


WALK_DAYS = 31  # the days of each account's balance walk a run's summary keeps


def _balance_walk(engine: Engine, as_of: datetime) -> tuple[dict[str, Any], ...]:
    """The last WALK_DAYS days of each account's balance walk (int_balance_walk)."""
    rows = _records(
        engine,
        "SELECT account, day, opening_cents, movements_cents, closing_cents, gap_cents, state "
        "FROM int_balance_walk ORDER BY account, day",
    )
    since = as_of.date() - timedelta(days=WALK_DAYS)
    return tuple(
        {k: (v.isoformat() if isinstance(v, date) else v) for k, v in row.items()}
        for row in rows
        if row["day"] > since
    )


def _coverage_facts(
    engine: Engine, as_of: datetime, settings: ReconcileSettings
) -> tuple[tuple[dict[str, str], ...], dict[str, Any], tuple[str, ...], tuple[str, ...], str]:
    """What the statements cover, who waits for them, and which business days are missing.

    A business day from the first intent's day to as_of's day is uncovered when account
    statements (the debit side, which lists every movement) do not cover all of it up to
    as_of; it is overdue when it ended more than `statements_overdue` before as_of.
    """
    from zoneinfo import ZoneInfo

    stretches = engine.rows(
        "SELECT side, covered_from, covered_to FROM stg_coverage ORDER BY side, covered_from"
    )
    coverage = tuple(
        {"side": side, "from": start.isoformat(), "to": end.isoformat()}
        for side, start, end in stretches
    )
    by_category = {
        str(k): int(v)
        for k, v in engine.rows(
            "SELECT would_be, count(DISTINCT intent_key) FROM recon_awaiting GROUP BY 1 ORDER BY 1"
        )
    }
    row = engine.rows(
        "SELECT count(*), coalesce(sum(expected_cents), 0) FROM "
        "(SELECT intent_key, max(expected_cents) AS expected_cents FROM recon_awaiting "
        "GROUP BY intent_key)"
    )[0]
    awaiting = {"intents": int(row[0]), "cents": int(row[1]), "by_category": by_category}
    tz = ZoneInfo(settings.business_tz)
    first = engine.rows("SELECT min(created_at) FROM stg_intents")[0][0]
    uncovered: list[str] = []
    overdue: list[str] = []
    if first is not None:
        debit = [(s, e) for side, s, e in stretches if side == "debit"]
        day = first.astimezone(tz).date()
        last = as_of.astimezone(tz).date()
        while day <= last:
            start = datetime.combine(day, datetime.min.time(), tzinfo=tz)
            end = datetime.combine(day + timedelta(days=1), datetime.min.time(), tzinfo=tz)
            if not any(s <= start and min(end, as_of) <= e for s, e in debit):
                uncovered.append(day.isoformat())
                if end + settings.statements_overdue <= as_of:
                    overdue.append(day.isoformat())
            day += timedelta(days=1)
    return (
        coverage,
        awaiting,
        tuple(uncovered),
        tuple(overdue),
        coverage_sentence(coverage, awaiting, settings.business_tz),
    )


def coverage_sentence(
    coverage: tuple[dict[str, str], ...] | list[dict[str, str]],
    awaiting: dict[str, Any],
    business_tz: str,
) -> str:
    """'statements cover 2026-11-01 00:00 to 2026-11-04 00:00 America/Sao_Paulo; 3 intents
    (R$ 1.234,56) wait for statements' (credit side: what any statement covers)."""
    from zoneinfo import ZoneInfo

    from recon.money import format_brl

    tz = ZoneInfo(business_tz)

    def local(text: str) -> str:
        return datetime.fromisoformat(text).astimezone(tz).strftime("%Y-%m-%d %H:%M")

    spans = [c for c in coverage if c["side"] == "credit"]
    if spans:
        covers = (
            "statements cover "
            + ", ".join(f"{local(c['from'])} to {local(c['to'])}" for c in spans)
            + f" {business_tz}"
        )
        payouts = [c for c in coverage if c["side"] == "debit"]
        if payouts != [dict(c, side="debit") for c in spans]:
            covers += (
                " (payouts: "
                + (
                    ", ".join(f"{local(c['from'])} to {local(c['to'])}" for c in payouts)
                    or "no account statement"
                )
                + ")"
            )
    else:
        covers = "no statement covers any time yet"
    n = int(awaiting.get("intents", 0))
    cents = int(awaiting.get("cents", 0))
    return f"{covers}; {n} intent{'s' if n != 1 else ''} ({format_brl(cents)}) wait for statements"


def _records(engine: Engine, sql: str) -> list[dict[str, Any]]:
    columns, rows = engine.query(sql)
    return [dict(zip(columns, row, strict=True)) for row in rows]
