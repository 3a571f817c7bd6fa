"""The catalog: views on an empty data dir, which snapshot is "latest", and `recon sql`."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from recon import catalog
from recon.cli import main
from recon.config import DataDir
from recon.extraction import InconsistentSnapshotError, extract
from recon.schemas import EXCEPTIONS_SCHEMA, INTENTS_SCHEMA, STATEMENT_LINES_SCHEMA
from recon.testing.fake_api import FakeAsyncClient, FakeList


def test_views_exist_on_empty_data_dir(data_dir: DataDir) -> None:
    con = catalog.connect(data_dir)
    names = {
        r[0]
        for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()
    }
    assert set(catalog.VIEW_NAMES) <= names
    cols = [r[0] for r in con.execute("describe intents").fetchall()]
    assert cols == INTENTS_SCHEMA.names
    cols = [r[0] for r in con.execute("describe intent_snapshots").fetchall()]
    assert cols == INTENTS_SCHEMA.names
    cols = [r[0] for r in con.execute("describe statement_lines").fetchall()]
    assert cols == STATEMENT_LINES_SCHEMA.names
    cols = [r[0] for r in con.execute("describe recon_exceptions").fetchall()]
    assert cols == EXCEPTIONS_SCHEMA.names
    assert con.execute("select count(*) from intents").fetchone() == (0,)
    assert con.execute("select count(*) from snapshots").fetchone() == (0,)


def test_write_database(data_dir: DataDir) -> None:
    path = catalog.write_database(data_dir)
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("select count(*) from intents").fetchone() == (0,)


def snap(data: DataDir, fake: FakeList, **kw: object) -> str:
    return extract(data, client=FakeAsyncClient(fake), quiet=True, **kw).run_id  # type: ignore[arg-type]


def test_intents_is_the_latest_full_consistent_snapshot(data_dir: DataDir) -> None:
    fake = FakeList.of(40)
    first = snap(data_dir, fake)
    for i in range(10):
        fake.set_status(i, "completed")
    fake.insert()
    second = snap(data_dir, fake)
    # a filtered extract, later, must not become "the latest"
    filtered = snap(data_dir, fake, status="completed")
    # nor an inconsistent one
    fake.churn_everywhere()
    with pytest.raises(InconsistentSnapshotError):
        snap(data_dir, fake, max_passes=2, page_size=10)

    con = catalog.connect(data_dir)
    assert con.execute("select distinct run_id from intents").fetchall() == [(second,)]
    assert con.execute("select count(*) from intents").fetchone() == (41,)
    assert con.execute("select count(*) from intents where status = 'completed'").fetchone() == (
        10,
    )
    per_run = dict(
        con.execute("select run_id, count(*) from intent_snapshots group by 1").fetchall()
    )
    assert per_run[first] == 40 and per_run[second] == 41 and per_run[filtered] == 10
    assert len(per_run) == 4
    rows = con.execute(
        "select run_id, kind, status_filter, consistent from snapshots order by run_id"
    ).fetchall()
    assert [r[1:] for r in rows] == [
        ("full", "all", True),
        ("full", "all", True),
        ("filtered", "completed", True),
        ("full", "all", False),
    ]
    assert catalog.latest_snapshot(data_dir).run_id == second  # type: ignore[union-attr]
    assert catalog.latest_snapshot(data_dir, consistent=False).run_id == rows[-1][0]  # type: ignore[union-attr]


def test_input_bytes_counts_the_latest_snapshot_and_the_statements(data_dir: DataDir) -> None:
    assert catalog.input_bytes(data_dir) == 0
    fake = FakeList.of(30)
    snap(data_dir, fake)
    second = snap(data_dir, fake)  # only the latest full snapshot is read by a run
    latest = catalog.latest_snapshot(data_dir)
    assert latest is not None and latest.run_id == second
    parts = sum(f.stat().st_size for f in latest.files)
    assert parts > 0 and catalog.input_bytes(data_dir) == parts
    statements = data_dir.root / "statements" / "source=bank" / "batch.parquet"
    statements.parent.mkdir(parents=True)
    statements.write_bytes(b"x" * 1234)  # sized, not read
    assert catalog.input_bytes(data_dir) == parts + 1234


def test_uncommitted_folders_are_invisible(data_dir: DataDir) -> None:
    fake = FakeList.of(5)
    result = extract(data_dir, client=FakeAsyncClient(fake), quiet=True)
    # a crash leftover with a part file but a temp name
    tmp = result.path.parent / ".tmp-run_id=crashed-1234"
    tmp.mkdir()
    pq.write_table(pq.read_table(result.path / "part-00000.parquet"), tmp / "part-00000.parquet")
    con = catalog.connect(data_dir)
    assert con.execute("select count(*) from intent_snapshots").fetchone() == (5,)


def test_folder_without_manifest_counts_as_full(data_dir: DataDir) -> None:
    fake = FakeList.of(3)
    result = extract(data_dir, client=FakeAsyncClient(fake), quiet=True)
    (result.path / "_manifest.json").unlink()
    assert catalog.sql("select count(*) as n from intents", data_dir)["n"].item() == 3


def test_sql_returns_a_dataframe(data_dir: DataDir) -> None:
    snap(data_dir, FakeList.of(7))
    df = catalog.sql("select id, amount_cents from intents order by id", data_dir)
    assert list(df.columns) == ["id", "amount_cents"]
    assert len(df) == 7
    import recon

    assert recon.sql("select count(*) as n from intents", data_dir)["n"].item() == 7


def test_recon_sql_command(data_dir: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    snap(data_dir, FakeList.of(4))
    base = ["sql", "--data", str(data_dir.root)]
    assert main([*base, "select count(*) as n from intents", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"n": 4}]
    assert main([*base, "select 1 as a, 'x' as b", "--format", "csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["a,b", "1,x"]
    assert main([*base, "select 42 as answer"]) == 0
    out = capsys.readouterr().out
    assert "answer" in out and "42" in out and "(1 rows)" in out
    assert main([*base, "select * from no_such_view"]) == 2
    assert "SQL error" in capsys.readouterr().err
    assert main(base) == 0
    assert "recon.duckdb" in capsys.readouterr().out
    con = duckdb.connect(str(Path(data_dir.root) / "recon.duckdb"), read_only=True)
    assert con.execute("select count(*) from intents").fetchone() == (4,)


def test_recon_extract_and_sql_work_after_their_modules_are_imported(
    data_dir: DataDir,
) -> None:
    import importlib

    import recon

    importlib.import_module("recon.cli.extract")
    importlib.import_module("recon.catalog")
    result = recon.extract(data_dir, client=FakeAsyncClient(FakeList.of(2)), quiet=True)
    assert result.manifest["rows"] == 2
    assert recon.sql("select count(*) as n from intents", data_dir)["n"].item() == 2


def test_lifecycle_order_comes_from_the_one_status_vocabulary(data_dir: DataDir) -> None:
    """The catalog's lifecycle view is generated from recon.schemas; its SQL names no status."""
    from importlib import resources

    from recon.schemas import OFFRAMP_LIFECYCLE, ONRAMP_LIFECYCLE, TERMINAL_EXITS

    df = catalog.sql("SELECT * FROM lifecycle_order", data_dir)
    for kind, stages in (("onramp", ONRAMP_LIFECYCLE), ("offramp", OFFRAMP_LIFECYCLE)):
        rows = df[(df.intent_type == kind) & (df.kind == "stage")].sort_values("stage_rank")
        assert tuple(rows.status) == stages
        assert rows.stage_rank.tolist() == list(range(1, len(stages) + 1))
        exits = df[(df.intent_type == kind) & (df.kind == "exit")]
        assert set(exits.status) == set(TERMINAL_EXITS)
    text = (resources.files("recon.models") / "catalog" / "12_status_history.sql").read_text()
    assert all(f"'{s}'" not in text for s in ONRAMP_LIFECYCLE + OFFRAMP_LIFECYCLE)
