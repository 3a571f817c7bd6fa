"""extract, statements import, reconcile and daily on `--data s3://…` (moto on loopback),
compared with the same job on a local data directory."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from recon import catalog, lake
from recon.config import DataDir
from tests.lake.conftest import S3, Done, committed, copy_of, job, run_threads
from tests.shared import open_finance_fee_pages


def versions(data: DataDir) -> dict[str, int | None]:
    """Every table's version: what a reader of the shared job must leave as it found it."""
    tables = (
        lake.SNAPSHOTS,
        lake.STATEMENT_LINES,
        lake.STATEMENT_QUARANTINE,
        lake.STATEMENT_COVERAGE,
        lake.STATEMENT_PAGES,
        lake.STATEMENT_BALANCES,
        *(f"runs/{name}" for name in lake.RUN_TABLES),
        lake.RUN_SUMMARIES,
    )
    return {name: data.table(name).version() for name in tables}


# columns that name where or when a copy was made, not what it holds
_LINEAGE = {"run_id", "first_seen_run", "imported_at", "path", "snapshot_at"}


def _tidy(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.drop(columns=[c for c in frame.columns if c in _LINEAGE])
    return frame.sort_values(list(frame.columns)).reset_index(drop=True).astype(str)


def view(data: DataDir, name: str) -> pd.DataFrame:
    return _tidy(catalog.sql(f"SELECT * FROM {name}", data))


VIEWS = (
    "intents",
    "intent_snapshots",
    "status_history",
    "statement_lines",
    "statement_quarantine",
    "statement_coverage",
    "recon_matches",
    "recon_exceptions",
    "recon_awaiting",
    "recon_suggestions",
)


def views(data: DataDir, names: Iterable[str] = VIEWS) -> dict[str, pd.DataFrame]:
    """Each view of `names`, as `view` reads it, through one catalog connection: opening one
    on object storage reads every table's Delta log, so a connection per view would read
    them all once per view."""
    con = catalog.connect(data)
    try:
        return {
            name: _tidy(catalog.to_frame(con.sql(f"SELECT * FROM {name}").to_arrow_table()))
            for name in names
        }
    finally:
        con.close()


@pytest.mark.slow
def test_the_job_on_s3_gives_the_views_of_the_same_job_on_a_local_dir(
    s3: S3, done: Done, sandbox: dict[str, Any], tmp_path: Path
) -> None:
    s3 = committed(s3, done)
    local = DataDir(tmp_path / "local-data").ensure()
    remote = done.data
    assert remote.remote and remote.uri == f"s3://{s3.bucket}/recon/prod"
    local_report, local_run = job(local, sandbox)
    remote_report, remote_run = done.report, done.run

    assert remote_report.imported == local_report.imported > 0
    here, there = views(local), views(remote)
    for name in VIEWS:
        left, right = here[name], there[name]
        assert len(left) > 0 or name in (
            "statement_quarantine",
            "recon_awaiting",
            "recon_suggestions",
        ), name
        pd.testing.assert_frame_equal(left, right, obj=name)
    ours, theirs = local_run.summary.to_json(), remote_run.summary.to_json()
    for key in ("run_id", "settings"):
        ours.pop(key), theirs.pop(key)
    assert ours == theirs
    # every table is a Delta table on the bucket; nothing of them was written locally
    keys = s3.keys("recon/prod/")
    for table in ("snapshots", "statements/lines", "statements/coverage", "runs/matches",
                  "runs/exceptions", "runs/summaries"):  # fmt: skip
        assert f"recon/prod/{table}/_delta_log/00000000000000000000.json" in keys, table
    assert not list((remote.root / "snapshots").glob("snapshot_date=*"))
    assert not list((remote.root / "statements").glob("source=*"))
    # the run is also a folder on the local side (what the report and the review app read)
    assert json.loads((remote_run.path / "summary.json").read_text())["run_id"] == (
        remote_run.run_id
    )


def test_a_second_machine_reads_the_committed_run_and_reimports_nothing(
    s3: S3, done: Done, sandbox: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recon

    s3 = committed(s3, done)
    first_report, run = done.report, done.run
    # another machine: the same bucket, an empty local side
    monkeypatch.setenv("RECON_LOCAL_DIR", str(tmp_path / "other-machine"))
    other = DataDir.resolve(s3.uri("recon/prod"))
    before = versions(other)
    assert not other.runs.exists()
    latest = catalog.latest_run(other)
    assert latest is not None and latest.name == run.run_id
    for name in lake.RUN_TABLES:
        copied = pd.read_parquet(latest / f"{name}.parquet")
        original = pd.read_parquet(run.path / f"{name}.parquet")
        pd.testing.assert_frame_equal(copied, original, obj=name)
    assert (latest / "flows.parquet").read_bytes() == (run.path / "flows.parquet").read_bytes()
    again = recon.import_statements(sandbox["files"], other)
    assert again.imported == 0 and again.duplicate == first_report.read
    assert versions(other) == before  # nothing to import: nothing committed
    assert len(catalog.list_snapshots(other)) == 1
    assert catalog.sql("SELECT count(*) AS n FROM intents", other)["n"][0] > 0


def test_report_of_a_run_committed_by_another_machine(
    s3: S3, done: Done, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.cli import main

    uri, run = committed(s3, done).uri("recon/prod"), done.run
    monkeypatch.setenv("RECON_LOCAL_DIR", str(tmp_path / "other-machine"))
    monkeypatch.setenv("RECON_DATA", uri)
    out = tmp_path / "report.html"
    assert main(["report", "--run", run.run_id, "--data", uri, "--out", str(out)]) == 0
    assert run.run_id in out.read_text(encoding="utf-8")
    other = DataDir.resolve(uri)
    assert (other.runs / run.run_id / "exceptions.parquet").is_file()
    assert main(["report", "--run", "20200101T000000000000Z-0000", "--data", uri]) == 2


def machine(s3: S3, tmp_path: Path, name: str) -> DataDir:
    """The bucket's data directory as another machine sees it (its own local side)."""
    return DataDir((tmp_path / name).resolve(), s3.uri())


def test_two_machines_importing_the_same_files_at_once_store_each_line_once(
    s3: S3, sandbox: dict[str, Any], tmp_path: Path
) -> None:
    import recon

    a, b = machine(s3, tmp_path, "a"), machine(s3, tmp_path, "b")
    local = DataDir(tmp_path / "local").ensure()
    reference = recon.import_statements(sandbox["files"], local)
    errors = run_threads(
        lambda: recon.import_statements(sandbox["files"], a),
        lambda: recon.import_statements(sandbox["files"], b),
    )
    assert errors == []
    stored = catalog.sql("SELECT count(*) AS n FROM source_statement_files", a)["n"][0]
    assert stored == catalog.sql("SELECT count(*) AS n FROM source_statement_files", local)["n"][0]
    assert stored >= reference.imported > 0
    names = ("statement_lines", "statement_coverage")
    here, there = views(local, names), views(a, names)
    for name in names:
        pd.testing.assert_frame_equal(here[name], there[name], obj=name)


def test_two_machines_extracting_at_once_both_commit(
    s3: S3, sandbox: dict[str, Any], tmp_path: Path
) -> None:
    import recon

    a, b = machine(s3, tmp_path, "a"), machine(s3, tmp_path, "b")
    results: list[Any] = []
    errors = run_threads(
        *[
            (
                lambda d=d: results.append(
                    recon.extract(d, base_url=sandbox["url"], api_key=sandbox["key"], quiet=True)
                )
            )
            for d in (a, b, a, b)
        ]
    )
    # a and b each hold their own machine's lock: a second extract on one machine is refused
    # at once, as on a local data directory; what got through is all committed
    from recon.errors import LockedError

    assert all(isinstance(e, LockedError) for e in errors), errors
    assert len(results) + len(errors) == 4 and len(results) >= 2
    snaps = catalog.list_snapshots(b)
    assert sorted(s.run_id for s in snaps) == sorted(r.run_id for r in results)
    assert all(s.manifest and s.manifest["rows"] > 0 and s.files for s in snaps)
    counts = catalog.sql(
        "SELECT run_id, count(*) AS n FROM intent_snapshots GROUP BY 1 ORDER BY 1", a
    )
    assert counts["n"].tolist() == [s.manifest["rows"] for s in snaps if s.manifest]


@pytest.mark.slow
def test_a_run_whose_summary_commit_fails_is_not_visible(
    s3: S3, done: Done, sandbox: dict[str, Any]
) -> None:
    """The run's tables are committed, its summaries row is refused by the storage: no
    reader sees the run, the local side holds no folder of it, the next run is normal."""
    import recon
    from recon import lake

    data, first = copy_of(done, s3), done.run
    s3.fail_commits(only="runs/summaries")
    with pytest.raises(lake.LakeError, match="commit failed"):
        recon.reconcile(data, as_of=sandbox["end"])
    s3.fail_commits(False)
    assert catalog.remote_runs(data) == [first.run_id]
    assert [p.name for p in data.runs.iterdir() if not p.name.startswith(".")] == [first.run_id]
    # its matches did reach the matches table, under a run id no summary names
    partitions = {p["run"] for _u, p, _s in data.table("runs/matches").files()}
    assert len(partitions) == 2 and first.run_id in partitions
    before = view(data, "recon_exceptions")
    assert catalog.sql("SELECT DISTINCT run_id FROM recon_matches", data)["run_id"].tolist() == [
        first.run_id
    ]
    second = recon.reconcile(data, as_of=sandbox["end"])
    assert catalog.remote_runs(data) == sorted([first.run_id, second.run_id])
    after = view(data, "recon_exceptions")
    # the same breaks, now seen before (by the first run: the refused one never existed)
    assert set(after.pop("state")) == {"persisting"} and set(before.pop("state")) == {"new"}
    pd.testing.assert_frame_equal(before, after)
    assert second.summary.previous_run_id == first.run_id


def test_an_extract_whose_commit_fails_leaves_nothing_visible(
    s3: S3, sandbox: dict[str, Any]
) -> None:
    import recon
    from recon import lake

    data = DataDir.resolve(s3.uri())
    first = recon.extract(data, base_url=sandbox["url"], api_key=sandbox["key"], quiet=True)
    s3.fail_commits()
    with pytest.raises(lake.LakeError, match="commit failed"):
        recon.extract(data, base_url=sandbox["url"], api_key=sandbox["key"], quiet=True)
    s3.fail_commits(False)
    assert [s.run_id for s in catalog.list_snapshots(data)] == [first.run_id]
    on_store = [k for k in s3.keys("data/snapshots/") if k.endswith(".parquet")]
    assert len(on_store) == 2  # the refused commit's file is there, named by no commit
    rows = catalog.sql("SELECT DISTINCT run_id FROM intent_snapshots", data)["run_id"].tolist()
    assert rows == [first.run_id]
    assert not [p for p in data.snapshots.iterdir()]  # no work folder left on the local side


@pytest.mark.slow
def test_daily_on_s3_extracts_imports_reconciles_and_reports(
    s3: S3, sandbox: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil
    from dataclasses import replace
    from functools import partial

    import pyarrow.parquet as pq

    from recon.ops.daily import Steps, run_daily
    from recon.report import render

    steps = replace(Steps.default(), render=partial(render, charts=False))
    monkeypatch.setenv("RECON_API_KEY", sandbox["key"])
    data = DataDir.resolve(s3.uri("daily")).ensure()
    for path in sandbox["files"]:
        shutil.copy2(path, data.inbox / Path(path).name)
    day = sandbox["end"].date()
    first = run_daily(s3.uri("daily"), date=day, base_url=sandbox["url"], quiet=True, steps=steps)
    assert not first.reused
    assert sorted(first.imported) == sorted(Path(p).name for p in sandbox["files"])
    assert first.report.is_file() and (first.report.parent / "breaks.csv").is_file()
    assert catalog.remote_runs(data) == [first.run_id]
    assert first.breaks == pq.read_table(first.run_dir / "exceptions.parquet").num_rows
    assert first.breaks == len(catalog.sql("SELECT * FROM recon_exceptions", data))
    assert first.exit_code == (
        1 if "P1" in pq.read_table(first.run_dir / "exceptions.parquet")["priority"].to_pylist()
        else 0
    )  # fmt: skip

    again = run_daily(s3.uri("daily"), date=day, base_url=sandbox["url"], quiet=True, steps=steps)
    assert again.reused and again.run_id == first.run_id

    forced = run_daily(
        s3.uri("daily"), date=day, base_url=sandbox["url"], quiet=True, force=True, steps=steps
    )
    assert not forced.reused and forced.run_id != first.run_id and forced.imported == ()
    assert catalog.remote_runs(data) == sorted([first.run_id, forced.run_id])
    assert len(catalog.list_snapshots(data)) == 2
    states = set(catalog.sql("SELECT state FROM recon_exceptions", data)["state"])
    assert states <= {"persisting"}


@pytest.mark.slow
def test_migrate_copies_a_local_data_dir_and_runs_again_copy_nothing(
    s3: S3, sandbox: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.cli import main

    local = DataDir(tmp_path / "old-data").ensure()
    _report, run = job(local, sandbox)
    (local.root / "decisions.csv").write_text("break_id,note,decided_by,decided_at,action\n")
    monkeypatch.setenv("RECON_DATA", str(local.root))  # main() sets it from --data
    assert main(["migrate", "--data", str(local.root), "--to", s3.uri("moved")]) == 0
    remote = DataDir.resolve(s3.uri("moved"))
    here, there = views(local, (*VIEWS, "snapshots")), views(remote, (*VIEWS, "snapshots"))
    for name, left in here.items():
        pd.testing.assert_frame_equal(left, there[name], obj=name)
    assert catalog.remote_runs(remote) == [run.run_id]
    assert (remote.root / "decisions.csv").is_file()
    assert (remote.runs / run.run_id / "summary.json").is_file()
    versions = {t: remote.table(t).version() for t in ("snapshots", "statements/lines")}

    from recon.ops.migrate import migrate

    again = migrate(local, s3.uri("moved"))
    assert (again.snapshots, again.line_versions, again.runs) == (0, 0, 0)
    assert (again.snapshots_skipped, again.runs_skipped) == (1, 1)
    assert {t: remote.table(t).version() for t in versions} == versions  # nothing committed
    # and the remote data directory carries on: the next run sees the migrated one as previous
    import recon

    nxt = recon.reconcile(remote, as_of=sandbox["end"])
    assert nxt.summary.previous_run_id == run.run_id and nxt.summary.new_breaks == 0


def test_migrate_reads_files_written_before_a_column_existed(s3: S3, tmp_path: Path) -> None:
    """An old snapshot part without destination_address_hash and a statement file without
    fingerprint (both written before those columns existed) migrate with NULLs and a
    fingerprint computed as the importer computes it."""
    import pyarrow.parquet as pq

    from recon import testing
    from recon.ops.migrate import migrate

    local = testing.data_dir(tmp_path)
    folder = Path(testing.snapshot(local, [testing.intent(1), testing.intent(2)]))
    part = folder / "part-00000.parquet"
    pq.write_table(pq.read_table(part).drop_columns(["destination_address_hash"]), part)
    testing.statement_lines(local, [testing.statement_line(1), testing.statement_line(2)])
    assert "fingerprint" not in pq.read_schema(next(local.statements.glob("source=*/*")))
    result = migrate(local, s3.uri("old"))
    assert (result.snapshots, result.line_versions) == (1, 2)
    remote = DataDir.resolve(s3.uri("old"))
    names = ("intents", "statement_lines", "statement_coverage")
    here, there = views(local, names), views(remote, names)
    for name in names:
        pd.testing.assert_frame_equal(here[name], there[name], obj=name)
    from recon.statements import stored

    dataset = stored.lines_dataset(remote)
    assert dataset is not None
    fingerprints = dataset.to_table(columns=["fingerprint"]).column("fingerprint").to_pylist()
    assert len(set(fingerprints)) == 2 and None not in fingerprints
    assert migrate(local, s3.uri("old")).line_versions == 0


@pytest.mark.slow  # a local Spark session: ~15 s to start
def test_spark_reads_the_committed_tables_as_duckdb_does(
    s3: S3, done: Done, tmp_path: Path
) -> None:
    """The catalog on Spark over s3:// (no Hadoop S3 jar: the engine is handed the committed
    files' rows through Arrow) gives the counts and money DuckDB gives."""
    from recon.engine.spark import SparkEngine

    data = done.data
    queries = {
        "intents": "SELECT count(*), sum(amount_cents) FROM intents",
        "snapshots": "SELECT count(*), sum(rows) FROM snapshots",
        "lines": "SELECT count(*), sum(amount_cents) FROM statement_lines",
        "coverage": "SELECT count(*) FROM statement_coverage",
        "breaks": "SELECT count(*), sum(delta_cents) FROM recon_exceptions",
        "matches": "SELECT count(*), sum(actual_cents) FROM recon_matches",
    }
    con = catalog.connect(data)
    try:
        duck = {
            k: tuple(int(v or 0) for v in con.execute(q).fetchone()) for k, q in queries.items()
        }
    finally:
        con.close()
    engine = SparkEngine(None, threads=1, scratch=tmp_path / "spark")
    try:
        catalog.register(engine, data)
        spark = {k: tuple(int(v or 0) for v in engine.rows(q)[0]) for k, q in queries.items()}
    finally:
        engine.close()
    assert spark == duck
    assert duck["intents"][0] > 0 and duck["lines"][0] > 0 and duck["matches"][0] > 0


def test_the_catalog_reads_only_the_commits_it_has_not_seen(
    s3: S3, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from recon import lake, testing

    data = DataDir.resolve(s3.uri())
    for day in range(2):
        testing.snapshot(data, [testing.intent(day)], at=testing.T0 + timedelta(days=day))
    assert len(catalog.list_snapshots(data)) == 2  # reads every commit, keeps them
    asked: list[int] = []
    real = lake.Table.commits

    def spy(self: lake.Table, after: int = -1, table: Any = None) -> list[dict[str, Any]]:
        found = real(self, after, table)
        asked.append(after)
        assert all(c["version"] > after for c in found)
        return found

    monkeypatch.setattr(lake.Table, "commits", spy)
    assert len(catalog.list_snapshots(data)) == 2 and asked == [1]
    third = testing.snapshot(data, [testing.intent(9)], at=testing.T0 + timedelta(days=5))
    snaps = catalog.list_snapshots(data)
    assert asked == [1, 1] and [s.path for s in snaps][-1] == third
    assert [s.manifest["rows"] for s in snaps if s.manifest] == [1, 1, 1]
    # a cache from another table (same prefix, recreated) is not trusted
    (data.root / catalog.MANIFEST_CACHE).write_text(
        json.dumps({"table_id": "other", "version": 2, "manifests": {}})
    )
    assert len(catalog.list_snapshots(data)) == 3 and asked[-1] == -1


def test_open_finance_pages_complete_each_other_across_imports_and_a_migration(
    s3: S3, tmp_path: Path
) -> None:
    """Page 1 of a request imported alone covers nothing; the pages read are kept (a Delta
    table on the bucket, migrated from a local data directory), so page 2 imported later
    records the request's period."""
    from recon.ops.migrate import migrate
    from recon.statements import import_statements

    paths = open_finance_fee_pages(tmp_path)

    def covered(data: DataDir) -> int:
        return int(catalog.sql("SELECT count(*) AS n FROM statement_coverage", data)["n"][0])

    local = DataDir(tmp_path / "old-data").ensure()
    import_statements(paths[:1], local)
    assert covered(local) == 0
    migrate(local, s3.uri("moved"))
    remote = DataDir.resolve(s3.uri("moved"))
    assert f"{s3.bucket}/moved" in remote.uri and covered(remote) == 0
    import_statements(paths[1:], remote)
    assert covered(remote) == 1
    assert any(k.startswith("moved/statements/pages/") for k in s3.keys("moved/"))


def test_a_table_stored_before_a_column_existed_takes_rows_with_it(s3: S3, tmp_path: Path) -> None:
    """statements/lines created without fee_cents (an older remote data directory): an import
    of lines that state a fee adds the column, the older rows read it as NULL."""
    from recon import testing
    from recon.statements import import_statements, stored

    remote = DataDir.resolve(s3.uri("evolve"))
    remote.ensure()
    older = stored.STORED_SCHEMA.remove(stored.STORED_SCHEMA.get_field_index("fee_cents"))
    table = remote.table(lake.STATEMENT_LINES)
    table.create(older)
    row = {k: v for k, v in testing.statement_line(1).items() if k != "fee_cents"}
    table.merge_new(pa.Table.from_pylist([{**row, "fingerprint": "f1"}], schema=older), ["line_id"])
    body = {
        "pix": [
            {
                "endToEndId": "E18236120202611011000s0123456789",
                "valor": "100.00",
                "horario": "2026-11-01T10:00:00-03:00",
                "gnExtras": {"tarifa": "0.99"},
            }
        ]
    }
    path = tmp_path / "pix.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    import_statements([path], remote, account="0001/1234567-8")
    rows = view(remote, "statement_lines")
    got = sorted(
        (int(a), None if pd.isna(f) else int(f))
        for a, f in zip(rows["amount_cents"], rows["fee_cents"], strict=True)
    )
    assert got == [(9_901, 99), (10_000, None)]
