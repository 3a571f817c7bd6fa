"""The Spark engine gives the same run as DuckDB, row for row.

Each world is reconciled twice over the same data dir, once per engine, and everything a
run publishes is compared: exceptions (reason codes, parameters and sentences included), matches, awaiting intents,
ambiguous candidates, suggestions, and the summary's counts, totals, control totals, explained
amounts, checks and coverage. Spark runs in local mode on the machine's Java (Debian's
openjdk-17-jre-headless, installed by `make test` when missing): without Java or pyspark
these tests fail, they never skip.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from recon.reconciliation import RunResult, reconcile
from recon.testing.jobs import sandbox_job

pytestmark = pytest.mark.slow

DAY, HOUR = timedelta(days=1), timedelta(hours=1)
RUN_FILES = (
    "exceptions.parquet",
    "matches.parquet",
    "awaiting.parquet",
    "candidates.parquet",
    "suggestions.parquet",
)
# what differs between two runs of the same inputs by construction: the run's own id, and
# what a break's first sighting and state say about the runs before it
PER_RUN = ("run_id", "first_seen_run", "state")
SUMMARY = (
    "intents",
    "statement_lines",
    "matched_lines",
    "matches_by_rule",
    "breaks",
    "counts",
    "counts_by_priority",
    "totals",
    "control_totals",
    "explained_by",
    "checks",
    "checks_passed",
    "coverage",
    "awaiting",
    "uncovered_days",
    "statements_overdue",
    "coverage_text",
    "balance_walk",
)


def assert_same_run(duck: RunResult, spark: RunResult) -> None:
    for name in RUN_FILES:
        a = pq.read_table(Path(duck.path) / name)
        b = pq.read_table(Path(spark.path) / name)
        assert a.schema == b.schema, name
        drop = [c for c in PER_RUN if c in a.column_names]
        rows_a, rows_b = a.drop(drop).to_pylist(), b.drop(drop).to_pylist()
        assert len(rows_a) == len(rows_b), f"{name}: {len(rows_a)} rows vs {len(rows_b)}"
        for i, (x, y) in enumerate(zip(rows_a, rows_b, strict=True)):
            assert x == y, f"{name} row {i}: duckdb {x} != spark {y}"
    a_summary, b_summary = duck.summary.to_json(), spark.summary.to_json()
    for key in SUMMARY:
        assert a_summary[key] == b_summary[key], f"summary {key}"
    assert b_summary["settings"]["engine"] == "spark"


def analytics_frames(data: Any) -> dict[str, pd.DataFrame]:
    """Every analytics function's frame over `data` (a data dir, or an engine)."""
    from recon import analytics as a

    frames = {
        "status_history": a.status_history(data),
        "intent_outcomes": a.intent_outcomes(data),
        "volumes": a.volumes(data),
        "status_reasons": a.status_reasons(data),
    }
    for it in ("onramp", "offramp"):
        for cohort in ("day", "week", "all"):
            frames[f"funnel {it} {cohort}"] = a.funnel(data, intent_type=it, cohort=cohort)
        frames[f"failures {it}"] = a.failures(data, intent_type=it)
        frames[f"time_to_pay {it}"] = a.time_to_pay(data, intent_type=it)
        frames[f"time_to_complete {it}"] = a.time_to_complete(data, intent_type=it)
        for by in ("cohort", "amount", "hour", "weekday"):
            frames[f"expiry {it} {by}"] = a.expiry_rates(data, intent_type=it, by=by)
    return frames


def assert_same_analytics(data: Path) -> None:
    from recon import catalog
    from recon.engine.spark import SparkEngine

    duck = analytics_frames(data)
    engine = SparkEngine()
    try:
        catalog.register(engine, data)
        spark = analytics_frames(engine)
    finally:
        engine.close()
    for name, frame in duck.items():
        assert len(frame) > 0 or name.startswith("failures"), name
        (
            pd.testing.assert_frame_equal(
                frame.reset_index(drop=True), spark[name].reset_index(drop=True), check_dtype=False
            ),
            name,
        )


def _both(data: Any) -> tuple[RunResult, RunResult]:
    duck = reconcile(data, run_id="parity-duckdb", engine="duckdb", strict=False)
    spark = reconcile(
        data, run_id="parity-spark", engine="spark", strict=False, as_of=duck.summary.as_of
    )
    return duck, spark


def test_demo_world_runs_the_same_on_spark(tmp_path: Path) -> None:
    from recon.ops.demo import run_demo

    demo = run_demo(tmp_path / "demo", keep_data=True)
    assert demo.scores["all"].recall == 1.0
    duck, spark = _both(demo.data_dir)
    assert duck.summary.breaks >= 50  # the demo world plants every category
    assert_same_run(duck, spark)
    assert_same_analytics(demo.data_dir)


# seed 2's default world runs on Spark through the command line (test_spark_cli.py), file
# for file as here; with the demo world (every category) these are four worlds. A Spark run
# of a small world costs about a minute of two cores, so each world runs once
@pytest.mark.parametrize(("seed", "profile"), [(1, "default"), (1, "collisions")])
def test_accuracy_worlds_run_the_same_on_spark(seed: int, profile: str, tmp_path: Path) -> None:
    world = {} if profile == "default" else {"profile": profile}
    _sandbox, first = sandbox_job(seed, tmp_path, **world)
    duck, spark = _both(first.path.parent.parent)
    assert_same_run(duck, spark)


def test_spark_folds_the_history_state_as_duckdb_does(tmp_path: Path) -> None:
    """Spark reads the history state a DuckDB run left (it writes none itself): its history
    breaks equal those of DuckDB reading every snapshot."""
    import shutil

    from recon import catalog
    from recon.config import DataDir
    from recon.testing.handbuilt import T0, World, intent

    def offramp(n: int, status: str) -> dict[str, Any]:
        return intent(n, amount=1_000 + n, type="offramp", status=status, destination="x@y.z")

    world = World(DataDir(tmp_path / "data").ensure())
    days = [("created", "created"), ("paying_out", "created"), ("burning", None)]
    for k, (one, two) in enumerate([*days, ("completed", None)]):
        world.snapshot([offramp(1, one), *([offramp(2, two)] if two else [])], T0 + k * DAY)
        if k < len(days):
            reconcile(world.data, as_of=T0 + k * DAY + HOUR, strict=False, flows=False)
    snaps = catalog.list_snapshots(world.data)
    assert catalog.history_sources(catalog.latest_run(world.data), snaps)[0]  # folded
    spark = reconcile(world.data, as_of=T0 + 3 * DAY + HOUR, engine="spark", strict=False)
    fresh = DataDir(tmp_path / "fresh").ensure()
    shutil.copytree(world.data.snapshots, fresh.snapshots, dirs_exist_ok=True)
    duck = reconcile(fresh, as_of=T0 + 3 * DAY + HOUR, strict=False)

    def history(result: RunResult) -> list[tuple[str, str, str, str, str]]:
        rows = pq.read_table(Path(result.path) / "exceptions.parquet").to_pylist()
        return sorted(
            (r["category"], r["intent_id"], r["reason_code"], r["reason_params"], r["reason"])
            for r in rows
            if r["category"] in ("status_regression", "intent_vanished")
        )

    assert history(spark) == history(duck)
    assert {row[0] for row in history(duck)} == {"status_regression", "intent_vanished"}
    assert not (Path(spark.path) / "history_state.parquet").exists()


def test_spark_reads_the_pix_time_a_text_says_as_duckdb_does(tmp_path: Path) -> None:
    """Lines booked on a date whose text says when the PIX was made (Banco do Brasil's
    instant, Itaú's closing day): the attributes pass uses it on both engines, and ignores
    one that cannot be it."""
    from recon.config import DataDir
    from recon.statements.lines import BUSINESS_TZ
    from recon.testing.handbuilt import T0, World, intent, line

    def said(at: Any, name: str) -> str:
        return f"Pix - Recebido - {at.astimezone(BUSINESS_TZ):%d/%m %H:%M} {name}"

    def day(at: Any) -> str:
        return f"{at.astimezone(BUSINESS_TZ):%d/%m}"

    saturday, monday = T0 - 2 * DAY, T0 - 10 * HOUR  # Saturday 10:00; Monday 00:00 local
    world = World(DataDir(tmp_path / "data").ensure())
    world.snapshot(
        [
            intent(1, created=saturday, expires=saturday + HOUR / 2),
            intent(2, created=saturday, expires=saturday + HOUR / 2, amount=20_000),
            intent(3, created=saturday, expires=saturday + HOUR / 2, amount=30_000),
            *(
                intent(n, created=saturday, expires=saturday + HOUR / 2, amount=n * 10_000)
                for n in (4, 5, 6)
            ),
        ],
        T0 + 6 * HOUR,
    )
    world.statement(
        [
            line(1, at=monday, description=said(saturday + HOUR / 6, "MARIA SILVA")),
            line(2, amount=20_000, at=monday, description="Pix - Recebido - 31/02 11:10 MARIA"),
            line(3, amount=30_000, at=monday, description="Pix - Recebido - 20/10 11:10 MARIA"),
            # Itaú: the PIX's day ends the text; one that cannot be it; one ending a longer date
            line(4, amount=40_000, at=monday, description=f"PIX TRANSF  MARIA S{day(saturday)}"),
            line(5, amount=50_000, at=monday, description="PIX TRANSF  MARIA S31/02"),
            line(6, amount=60_000, at=monday, description=f"PIX MARIA 15/{day(saturday)}"),
        ]
    )
    duck, spark = _both(world.data)
    assert_same_run(duck, spark)
    assert {k: v for k, v in duck.summary.matches_by_rule.items() if v} == {"attributes": 2}


def test_spark_matches_psp_fees_as_duckdb_does(tmp_path: Path) -> None:
    """The every-category world, its PSP account with a fee schedule in recon.toml: credits
    net of the fee (stated, or the schedule's, by txid and by attributes), a fee off the
    schedule, the PSP's daily fee debit; and the recon_fees view, on both engines."""
    from recon import catalog
    from recon.config import DataDir
    from recon.engine.spark import SparkEngine
    from recon.testing.handbuilt import World
    from tests.reconciliation.test_categories import PSP, build

    data = DataDir(tmp_path / "data").ensure()
    data.config_path.write_text(
        f'[accounts.{PSP}]\nfee = {{ percent = "0.99", min_cents = 1 }}\n', encoding="utf-8"
    )
    build(World(data))
    duck, spark = _both(data)
    assert duck.summary.counts["onramp_fee_mismatch"] == 1
    assert duck.summary.explained_by["psp_fee"] < 0
    assert_same_run(duck, spark)
    query = "SELECT * FROM recon_fees ORDER BY account, day"
    con = catalog.connect(data)
    try:
        expected = con.execute(query).fetchall()
    finally:
        con.close()
    engine = SparkEngine()
    try:
        catalog.register(engine, data)
        got = engine.rows(query)
    finally:
        engine.close()
    # one row per account and day with fees: the bank's two accounts' TARIFA PIX, the PSP's
    assert [r[0] for r in expected] == ["0001/1234567-8", "0002/7654321-0", PSP]
    assert got == expected


def test_spark_leaves_the_banks_own_lines_out_as_duckdb_does(tmp_path: Path) -> None:
    """Interest and yields beside a payment: no break, each kind totalled, on both engines."""
    from recon.config import DataDir
    from recon.testing.handbuilt import World
    from tests.reconciliation.test_bank_own_lines import build

    data = DataDir(tmp_path / "data").ensure()
    build(World(data))
    duck, spark = _both(data)
    assert duck.summary.totals["interest_cents"] > 0 and duck.summary.totals["yield_cents"] > 0
    assert_same_run(duck, spark)
    assert duck.summary.control_totals == spark.summary.control_totals


def test_spark_walks_the_balance_as_duckdb_does(tmp_path: Path) -> None:
    """Daily OFX files, one lacking a line, one day never sent, a weekend without files: the
    same balance walk, the same statement_balance_gap breaks, on both engines."""
    from datetime import UTC, datetime

    from recon.config import DataDir
    from recon.statements.importer import import_statements
    from recon.testing.handbuilt import World, intent
    from tests.shared import daily_ofx

    world = World(DataDir(tmp_path / "data").ensure())
    world.snapshot([intent(1, status="expired")], datetime(2026, 11, 10, 12, tzinfo=UTC))
    files = tmp_path / "files"
    files.mkdir()
    daily_ofx(files)
    import_statements([files], world.data, account="itau-0001")
    duck, spark = _both(world.data)
    assert_same_run(duck, spark)
    assert duck.summary.counts["statement_balance_gap"] == 2
    assert [d["state"] for d in duck.summary.balance_walk].count("no_file") == 3


def test_pairs_made_by_hand_run_the_same_on_spark(tmp_path: Path) -> None:
    """A payment in parts left short (two lines for one onramp) and a devolução paired with
    its refunded onramp: the manual pass, the parts' sum and the refund on both engines."""
    from recon.config import DataDir
    from recon.reconciliation import workflow
    from recon.testing.handbuilt import World, uid
    from tests.reconciliation.test_pair_parts import build

    world = World(DataDir(tmp_path / "data").ensure())
    first = build(world)
    lines = {
        r["actual_cents"]: r["line_id"]
        for r in pq.read_table(first.exceptions_path).to_pylist()
        if r["intent_id"] is None
    }
    workflow.pair(uid(1), [lines[6_000], lines[3_000]], "two PIX, R$ 10,00 owed", data=world.data)
    workflow.pair(uid(2), [lines[5_000]], "devolução sent by hand", data=world.data)
    duck, spark = _both(world.data)
    matches = pq.read_table(duck.matches_path).to_pylist()
    assert sum(m["rule"] == "manual" for m in matches) == 3
    assert_same_run(duck, spark)


def test_spark_flags_third_party_payers_as_duckdb_does(tmp_path: Path) -> None:
    """Onramps paid by txid or reference by someone else (a spouse, a company, the party's
    MEI) and one without a document: the same matches and flags on both engines."""
    from recon.config import DataDir
    from recon.testing.handbuilt import T0, World, intent, line, uid

    world = World(DataDir(tmp_path / "data").ensure())
    world.snapshot(
        [intent(n, amount=10_000 * n, client_reference=f"PEDIDO-{n}") for n in range(1, 6)],
        T0 + 6 * HOUR,
    )
    world.statement(
        [
            line(1, amount=10_000, txid=uid(1).replace("-", ""), name="JOAO PEREIRA",
                 doc="***.111.222-**"),
            line(2, amount=20_000, description="PIX RECEBIDO PEDIDO-2",
                 name="PADARIA BOM PAO LTDA", doc="12.345.678/0001-**"),
            line(3, amount=30_000, txid=uid(3).replace("-", ""),
                 name="52.062.865 MARIA SILVA", doc="52.062.865/0001-**"),
            line(4, amount=40_000, txid=uid(4).replace("-", ""), doc=None),
            line(5, amount=50_000, txid=uid(5).replace("-", "")),
        ]
    )  # fmt: skip
    duck, spark = _both(world.data)
    assert_same_run(duck, spark)
    rows = pq.read_table(duck.exceptions_path).to_pylist()
    assert sorted(r["reason_code"] for r in rows) == [
        "onramp_third_party_payer",
        "onramp_third_party_payer_company",
        "onramp_third_party_payer_mei",
    ]


def test_spark_pairs_twins_by_elimination_as_duckdb_does(tmp_path: Path) -> None:
    """Twins with one way, with two ways, a 3-line staircase with one way, and two credits
    that fit one intent: the groups stored apart, their ways counted, on both engines."""
    from recon.config import DataDir
    from recon.testing.handbuilt import T0, World, intent, line

    minute = timedelta(minutes=1)

    def doc(shown: dict[int, str]) -> str:
        return "".join(shown.get(k, "*") for k in range(11))

    def group(first: int, amount: int, edges: set[tuple[int, int]], size: int) -> tuple:
        lines = {i for i, _ in edges} | set(range(size))
        intents = [intent(first + j, amount=amount, doc=doc({j: "1"})) for j in range(size)]
        rows = [
            line(first + i, amount=amount, at=T0 + (10 + i) * minute,
                 doc=doc({j: "1" if (i, j) in edges else "2" for j in range(size)}))
            for i in sorted(lines)
        ]  # fmt: skip
        return intents, rows

    one_way = group(1, 11_111, {(0, 0), (0, 1), (1, 1)}, 2)
    two_ways = group(11, 22_222, {(0, 0), (0, 1), (1, 0), (1, 1)}, 2)
    staircase = group(21, 33_333, {(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)}, 3)
    shared = group(31, 44_444, {(0, 0), (1, 0)}, 1)
    world = World(DataDir(tmp_path / "data").ensure())
    world.snapshot([*one_way[0], *two_ways[0], *staircase[0], *shared[0]], T0 + 6 * HOUR)
    world.statement([*one_way[1], *two_ways[1], *staircase[1], *shared[1]])
    duck, spark = _both(world.data)
    assert_same_run(duck, spark)
    assert duck.summary.matches_by_rule["elimination"] == 5
    codes = [r["reason_code"] for r in pq.read_table(duck.exceptions_path).to_pylist()]
    assert sorted(codes) == ["ambiguous_credit"] * 2 + ["ambiguous_credit_shared"] * 2
