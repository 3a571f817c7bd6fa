"""`recon erase` on `--data s3://…` (moto on loopback): the person is gone from every table,
from every older version time travel could read and from every object of the bucket (data
files, the Delta log's column statistics, checkpoints), everyone else's rows are untouched,
and the data directory still reconciles and reports."""

from __future__ import annotations

import json
import shutil
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon import catalog, lake, pii, testing
from recon.config import DataDir
from recon.ops.erase import ERASED, erase_document
from recon.ops.migrate import migrate
from recon.schemas import HISTORY_STATE_SCHEMA, STATEMENT_COVERAGE_SCHEMA
from recon.statements import stored
from tests.lake import erase_world as world
from tests.lake.conftest import JOB, S3, Done, copy_of, run_threads
from tests.lake.erase_world import Finder, Person
from tests.lake.test_remote import VIEWS as REMOTE_VIEWS
from tests.lake.test_remote import view as remote_view
from tests.lake.test_remote import views as remote_views
from tests.shared import payee_with_a_cpf_key, run_recon

# the Delta tables an erase may rewrite (and every other one recon keeps)
TABLES = (
    lake.SNAPSHOTS,
    lake.STATEMENT_LINES,
    lake.STATEMENT_QUARANTINE,
    lake.STATEMENT_COVERAGE,
    *(f"runs/{name}" for name in lake.RUN_TABLES),
    lake.RUN_SUMMARIES,
)
VIEWS = (*REMOTE_VIEWS, "snapshots")
# columns that name where or when a copy was made, not what it holds
_LINEAGE = {"first_seen_run", "imported_at", "path", "snapshot_at", "run_id"}


def view(data: DataDir, name: str) -> pd.DataFrame:
    return remote_view(data, name)


def views(data: DataDir) -> dict[str, pd.DataFrame]:
    """Every view of VIEWS through one catalog connection (test_remote.views)."""
    return remote_views(data, VIEWS)


def versions(data: DataDir) -> dict[str, int | None]:
    return {name: data.table(name).version() for name in TABLES}


def remote_world(s3: S3, tmp_path: Path, everyone: list[Person], prefix: str = "data") -> DataDir:
    """The erase world (tests/lake/erase_world.py) migrated to `s3://bucket/prefix`, its
    report and kept bank files on the local side; the local original stays in tmp_path."""
    local = world.build(tmp_path / f"local-{prefix}", everyone)
    world.side_files(local, everyone)
    migrate(local, s3.uri(prefix))
    remote = DataDir.resolve(s3.uri(prefix))
    world.side_files(remote, everyone)
    return remote


def rows_by_key(data: DataDir, name: str, key: str) -> dict[str, list[dict[str, Any]]]:
    frame = catalog.sql(f"SELECT * FROM {name}", data).drop(
        columns=["snapshot_at"], errors="ignore"
    )
    out: dict[str, list[dict[str, Any]]] = {}
    for row in frame.astype(object).where(frame.notna(), None).to_dict("records"):
        out.setdefault(str(row[key]), []).append(row)
    return {k: sorted(v, key=repr) for k, v in out.items()}


def time_travel(data: DataDir, finder: Finder) -> tuple[dict[str, list[str]], int]:
    """Every version of every table read as time travel reads it: (table@version -> forms
    found, the number of versions whose files are gone)."""
    from deltalake import DeltaTable

    found: dict[str, list[str]] = {}
    gone = 0
    for name in TABLES:
        table = data.table(name)
        latest = table.version()
        for version in range(0, (latest if latest is not None else -1) + 1):
            old = DeltaTable(table.uri, version=version, storage_options=table.options)
            try:
                rows = pa.table(old.to_pyarrow_table())
            except Exception as exc:  # a file that version names was deleted (vacuumed)
                assert "not found" in str(exc).lower() or "no such" in str(exc).lower(), exc
                gone += 1
                continue
            hits = finder.in_table(rows)
            if hits:
                found[f"{name}@{version}"] = hits
    return found, gone


def test_erase_on_s3_removes_the_person_from_every_table_version_and_object(
    s3: S3, tmp_path: Path
) -> None:
    everyone = world.people(4)
    person, others = everyone[0], everyone[1:]
    data = remote_world(s3, tmp_path, everyone)
    finder = Finder([person])
    # the search sees the person everywhere before: data files, the Delta log's column
    # statistics (min/max), the local side
    before_objects = finder.in_bucket(s3.client(), s3.bucket)
    assert any("/_delta_log/" in k for k in before_objects), before_objects
    assert any(k.startswith("data/runs/summaries/") for k in before_objects)
    assert finder.in_folder(data.root)
    intents_before = rows_by_key(data, "intent_snapshots", "id")
    lines_before = rows_by_key(data, "statement_lines", "line_id")
    breaks_before = view(data, "recon_exceptions")

    started = time.monotonic()
    result = erase_document(data.uri or "", world.formatted(person.cpf))
    elapsed = time.monotonic() - started
    print(f"erase on S3: {elapsed:.2f} s ({result.summary()})")

    assert result.intents == 2 * 2 and result.lines == 2  # 2 intents x 2 snapshots; 2 lines
    assert result.files_vacuumed and result.log_entries_scrubbed
    # (a) recon's own readers: every view, the stores, the run copied to a new machine
    for name, frame in views(data).items():
        assert finder.in_table(pa.Table.from_pandas(frame)) == [], name
    for dataset in (stored.lines_dataset(data), stored.quarantine_dataset(data)):
        assert dataset is not None and finder.in_table(dataset.to_table()) == []
    fresh = DataDir((tmp_path / "another-machine").resolve(), data.uri)
    run = catalog.latest_run(fresh)
    assert run is not None and finder.in_folder(run) == {}
    assert ERASED in (run / "summary.json").read_text() + str(
        pa.Table.from_pandas(pd.read_parquet(run / "exceptions.parquet")).to_pylist()
    )
    # ... and the local side: the run copy, the report, the kept bank file naming them
    assert finder.in_folder(data.root) == {}
    assert not (data.inbox / "processed" / "2026-11-02" / f"extrato-{person.n}.csv").exists()
    assert (data.inbox / "processed" / "2026-11-02" / "tarifas.csv").exists()
    # (b) no version time travel reads holds them, and no object of the bucket does
    found, gone = time_travel(data, finder)
    assert found == {} and gone > 0
    assert finder.in_bucket(s3.client(), s3.bucket) == {}
    assert not [k for k in world.keys(s3.client(), s3.bucket) if k.endswith("/")]  # no markers
    # everyone else is still in every place they were
    assert all(Finder([p]).in_bucket(s3.client(), s3.bucket) for p in others)
    # (c) the others' rows are unchanged; the person's rows keep their money trail
    intents_after = rows_by_key(data, "intent_snapshots", "id")
    assert intents_after.keys() == intents_before.keys()
    theirs = {world.intents_of(person)[i]["id"] for i in (0, 1)}
    for key, rows in intents_before.items():
        if key not in theirs:
            assert intents_after[key] == rows, key
            continue
        for old, new in zip(rows, intents_after[key], strict=True):
            assert new["party_display_name"] is None and new["destination_address_hash"] is None
            assert new["raw"] is None and new["metadata"] is None
            same = ("id", "status", "amount_cents", "created_at", "intent_type", "run_id")
            assert {k: new[k] for k in same} == {k: old[k] for k in same}
    lines_after = rows_by_key(data, "statement_lines", "line_id")
    assert lines_after.keys() == lines_before.keys()
    changed = {k for k in lines_before if lines_after[k] != lines_before[k]}
    assert len(changed) == 2
    for key in changed:
        (old,), (new,) = lines_before[key], lines_after[key]
        assert new["counterparty_name"] is None and new["counterparty_document_hash"] is None
        assert (new["amount_cents"], new["booked_at"]) == (old["amount_cents"], old["booked_at"])
    breaks_after = view(data, "recon_exceptions")
    assert len(breaks_after) == len(breaks_before)
    differs = breaks_after["reason"] != breaks_before["reason"]
    assert differs.sum() == 1 and ERASED in breaks_after["reason"][differs].iloc[0]
    # no erase commit is a snapshot or a run to any reader
    assert len(catalog.list_snapshots(data)) == 2 and len(catalog.remote_runs(data)) == 1


def test_the_local_erase_cleans_quarantine_and_escaped_names_and_keeps_the_services_key(
    tmp_path: Path,
) -> None:
    """What the remote erase shares with the local one, on a local data directory: the
    quarantined lines and `summary.json` (names written `Jos\\u00e9`) are cleaned, a
    statement file with no lines is read, and the service's own PIX key (pixInfo of an
    onramp the person paid) is not taken for theirs."""
    everyone = world.people(2)
    person = everyone[0]
    data = world.build(tmp_path / "data", everyone)
    world.side_files(data, everyone)
    testing.statement_lines(data, [], batch="empty-file", covers=None)
    service_key = pii.mask_key(str(testing.intent(1)["pix_key_value"]))
    report = data.reports / "2026-11-02" / "report.html"
    report.write_text(report.read_text() + f"<p>recebedor {service_key}</p>", encoding="utf-8")
    run = catalog.latest_run(data)
    assert run is not None and "Jos\\u00e9" in (run / "summary.json").read_text()
    result = erase_document(data, person.cpf)
    assert (result.intents, result.lines) == (4, 2)
    assert Finder([person]).in_folder(data.root) == {}
    assert service_key in report.read_text(encoding="utf-8")
    quarantined = catalog.sql("SELECT reason, raw FROM statement_quarantine", data)
    assert quarantined["reason"].str.contains(ERASED, regex=False).sum() == 1
    assert Finder(everyone[1:]).in_text(quarantined.to_string())


def test_reconcile_report_and_sql_work_after_an_erase(
    s3: S3, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recon.cli import main

    everyone = world.people(3)
    data = remote_world(s3, tmp_path, everyone)
    uri = data.uri or ""
    monkeypatch.setenv("RECON_DATA", uri)  # main() sets it from --data
    erase_document(uri, everyone[1].cpf)
    assert main(["reconcile", "--data", uri, "--as-of", "2026-11-05T00:00:00Z"]) in (0, 1)
    runs = catalog.remote_runs(data)
    assert len(runs) == 2
    out = tmp_path / "report.html"
    assert main(["report", "--run", runs[-1], "--data", uri, "--out", str(out)]) == 0
    assert Finder([everyone[1]]).in_text(out.read_text(encoding="utf-8")) == []
    digest = pii.digest(everyone[1].cpf)
    query = (
        "SELECT count(*) AS n FROM intents WHERE destination_address_hash = "
        f"'{digest}' OR party_display_name = '{everyone[1].name.replace(chr(39), chr(39) * 2)}'"
    )
    proc = run_recon("sql", query, "--data", uri, "--format", "csv", cwd=tmp_path, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["n", "0"]


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    env.pop("RECON_DATA", None)
    return env


def test_an_unknown_document_changes_and_commits_nothing(s3: S3, tmp_path: Path) -> None:
    data = remote_world(s3, tmp_path, world.people(2))
    before, tables, side = (
        world.etags(s3.client(), s3.bucket),
        versions(data),
        _tree(data.root),
    )
    result = erase_document(data.uri or "", world.cpf(987_654_321))
    assert (result.intents, result.lines, result.files_rewritten, result.files_deleted) == (
        0,
        0,
        [],
        [],
    )
    assert (result.files_vacuumed, result.log_entries_scrubbed) == ([], 0)
    assert world.etags(s3.client(), s3.bucket) == before
    assert versions(data) == tables and _tree(data.root) == side


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".lake-cache" not in p.parts and not p.name.startswith(".recon.lock")
    }


def test_a_second_erase_finds_nothing_and_changes_nothing(s3: S3, tmp_path: Path) -> None:
    everyone = world.people(3)
    data = remote_world(s3, tmp_path, everyone)
    first = erase_document(data.uri or "", everyone[2].cpf)
    assert first.intents and first.lines and first.files_vacuumed
    objects, tables, side = world.etags(s3.client(), s3.bucket), versions(data), _tree(data.root)
    again = erase_document(data.uri or "", world.formatted(everyone[2].cpf))
    assert (again.intents, again.lines, again.files_rewritten, again.files_deleted) == (
        0,
        0,
        [],
        [],
    )
    assert (again.files_vacuumed, again.log_entries_scrubbed) == ([], 0)
    assert world.etags(s3.client(), s3.bucket) == objects
    assert versions(data) == tables and _tree(data.root) == side


def test_another_machine_s_run_copies_are_brought_in_line_by_its_own_erase(
    s3: S3, tmp_path: Path
) -> None:
    """Machine B copied the run before machine A erased the person. A's erase cannot reach
    B's disk, and B's own erase finds nothing left on the bucket to learn the names from;
    it replaces B's copies by the bucket's (scrubbed) run, and commits nothing."""
    everyone = world.people(3)
    person = everyone[0]
    data = remote_world(s3, tmp_path, everyone)
    b = DataDir((tmp_path / "machine-b").resolve(), data.uri)
    run = catalog.latest_run(b)
    assert run is not None and Finder([person]).in_folder(run)
    kept = run / "history_state.parquet"  # only this machine's: never on the bucket
    pa.parquet.write_table(HISTORY_STATE_SCHEMA.empty_table(), kept)
    kept_bytes = kept.read_bytes()
    erase_document(data, person.cpf)
    tables, objects = versions(data), world.etags(s3.client(), s3.bucket)
    result = erase_document(b, person.cpf)
    assert (result.intents, result.lines) == (0, 0)
    assert versions(data) == tables and world.etags(s3.client(), s3.bucket) == objects
    assert Finder([person]).in_folder(b.root) == {}
    assert kept.read_bytes() == kept_bytes
    assert sorted(result.files_rewritten) == sorted(
        str((run / name).relative_to(b.root)) for name in ("exceptions.parquet", "summary.json")
    )
    assert Finder(everyone[1:]).in_folder(run)
    again = erase_document(b, person.cpf)
    assert again.files_rewritten == [] and again.files_deleted == []


def test_the_cli_erases_on_s3_and_prints_what_it_did(s3: S3, tmp_path: Path) -> None:
    everyone = world.people(2)
    data = remote_world(s3, tmp_path, everyone)
    proc = run_recon(
        "erase", "--document", everyone[0].cpf, "--data", data.uri or "", cwd=tmp_path, env=_env()
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("erased: 4 intent row(s), 2 statement line(s);")
    assert "vacuumed" in proc.stdout and f"{data.uri}/snapshots/" in proc.stdout
    assert Finder([everyone[0]]).in_bucket(s3.client(), s3.bucket) == {}


# each fault stops the erase at another step; the run again finishes it
FAULTS = {
    "a run table's commit": ("commits", "runs/exceptions"),
    "the snapshots' commit": ("commits", "/snapshots/"),
    "an upload of a rewritten file": ("requests", r"PUT /[^_]*/statements/lines/part-"),
    "the vacuum's delete": ("requests", r"DELETE /.*/snapshots/snapshot_date="),
    "a rewrite of the log": ("requests", r"PUT /.*/_delta_log/00000000000000000000\.json"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_an_s3_failure_part_way_is_one_line_leaves_tables_readable_and_a_rerun_finishes(
    s3: S3, tmp_path: Path, fault: str
) -> None:
    everyone = world.people(3)
    person = everyone[0]
    data = remote_world(s3, tmp_path, everyone)
    kind, rule = FAULTS[fault]
    if kind == "commits":
        s3.fail_commits(only=rule)
    else:
        s3.fail_requests(rule)
    refused = len(s3.refused())
    uri = data.uri or ""
    proc = run_recon("erase", "--document", person.cpf, "--data", uri, cwd=tmp_path, env=_env())
    assert len(s3.refused()) > refused, "the fault never fired"
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("recon: error: "), proc.stderr
    assert "run recon erase again" in lines[0] or "again" in lines[0]
    assert Finder([person]).in_text(proc.stderr) == []
    s3.fail_commits(False)
    s3.fail_requests()
    # every table is whole: readable, every row still there
    assert views(data).keys() == set(VIEWS)
    assert len(catalog.sql("SELECT * FROM intent_snapshots", data)) == 2 * (2 * 3 + 3)
    again = run_recon("erase", "--document", person.cpf, "--data", uri, cwd=tmp_path, env=_env())
    assert again.returncode == 0, again.stderr
    finder = Finder([person])
    assert finder.in_bucket(s3.client(), s3.bucket) == {}
    assert finder.in_folder(data.root) == {}
    found, _gone = time_travel(data, finder)
    assert found == {}
    assert all(Finder([p]).in_bucket(s3.client(), s3.bucket) for p in everyone[1:])


def stored_lines(rows: list[dict[str, Any]]) -> pa.Table:
    """Statement lines as an import stores them remotely (masked, hashed, fingerprinted)."""
    from recon.ops.migrate import _stored_lines
    from recon.statements.importer import personal_columns

    table = pa.Table.from_pylist(rows, schema=stored.STATEMENT_LINES_SCHEMA)
    for column, values in personal_columns(
        {n: table.column(n) for n in table.column_names}
    ).items():
        table = table.set_column(table.schema.get_field_index(column), column, values)
    return _stored_lines(table)


def test_the_vacuum_deletes_only_what_the_erase_removed_or_what_holds_the_person(
    s3: S3, tmp_path: Path
) -> None:
    """Not a VACUUM with no retention: a data file another writer has uploaded but not yet
    committed stays (even one holding the person: no version lists it, and deleting it
    would break that writer's commit), and so do the files a compaction removed that hold
    nobody erased (time travel's to keep); files a compaction removed that hold the person
    go, as do those the erase replaced."""
    from deltalake import DeltaTable

    everyone = world.people(2)
    person = everyone[0]
    data = remote_world(s3, tmp_path, everyone)
    client = s3.client()
    snapshot_file = data.table(lake.SNAPSHOTS).data_files()[0]
    in_flight = (
        "data/snapshots/snapshot_date=2026-11-09/snapshot_run=x/part-00000-in-flight.parquet"
    )
    source = snapshot_file.uri.removeprefix(f"s3://{s3.bucket}/")
    client.copy_object(Bucket=s3.bucket, Key=in_flight, CopySource=f"{s3.bucket}/{source}")
    # commits that are not erases remove files: compactions of the statement lines (the
    # person in them) and of the coverage (nobody's)
    more = [
        world.lines_of(person)[0] | {"end_to_end_id": testing.e2e(3000 + i), "source_line": i}
        for i in range(2)
    ]
    for row in more:
        row["line_id"] = f"{row['end_to_end_id'][-12:]:0>32}"
    period = {
        "account": "0002/7654321-0",
        "source_format": "ofx",
        "source_file": "extrato.ofx",
        "covered_from": testing.T0,
        "covered_to": testing.T0 + timedelta(days=1),
        "basis": "declared",
        "scope": "all",
        "lines": 0,
        "imported_at": testing.T0,
    }
    coverage_rows = pa.Table.from_pylist([period], schema=STATEMENT_COVERAGE_SCHEMA)
    stored.merge_remote(data, [stored_lines(more)], [], [coverage_rows], "more")
    compacted: dict[str, set[str]] = {}
    for name in (lake.STATEMENT_LINES, lake.STATEMENT_COVERAGE):
        table = data.table(name)
        compacted[name] = {f.uri for f in table.data_files()}
        assert len(compacted[name]) == 2, name
        DeltaTable(table.uri, storage_options=table.options).optimize.compact()
        assert not {f.uri for f in table.data_files()} & compacted[name]

    result = erase_document(data, person.cpf)
    assert result.lines == 2 + 2

    keys = {f"s3://{s3.bucket}/{k}" for k in world.keys(client, s3.bucket)}
    assert f"s3://{s3.bucket}/{in_flight}" in keys  # never committed: left alone
    assert compacted[lake.STATEMENT_COVERAGE] <= keys  # nobody erased in them: kept
    assert not compacted[lake.STATEMENT_LINES] & keys  # they held the person: gone
    assert compacted[lake.STATEMENT_LINES] <= set(result.files_vacuumed)
    assert Finder([person]).in_bucket(client, s3.bucket, "data/statements/") == {}
    found, _gone = time_travel(data, Finder([person]))
    assert found == {}


def test_a_checkpoint_taken_before_the_erase_no_longer_holds_the_person(
    s3: S3, tmp_path: Path
) -> None:
    from deltalake import DeltaTable

    everyone = world.people(2)
    data = remote_world(s3, tmp_path, everyone)
    for name in (lake.SNAPSHOTS, lake.STATEMENT_LINES):
        table = data.table(name)
        DeltaTable(table.uri, storage_options=table.options).create_checkpoint()
    finder = Finder([everyone[0]])
    checkpoints = [k for k in world.keys(s3.client(), s3.bucket) if ".checkpoint." in k]
    assert len(checkpoints) == 2
    assert any(k in finder.in_bucket(s3.client(), s3.bucket) for k in checkpoints)
    result = erase_document(data.uri or "", everyone[0].cpf)
    assert result.log_entries_scrubbed >= 2
    assert finder.in_bucket(s3.client(), s3.bucket) == {}
    for name in (lake.SNAPSHOTS, lake.STATEMENT_LINES):  # the table still opens at each version
        table = data.table(name)
        latest = table.version() or 0
        for version in range(latest + 1):
            DeltaTable(table.uri, version=version, storage_options=table.options).file_uris()
    assert len(catalog.sql("SELECT * FROM intent_snapshots", data)) == 2 * (2 * 2 + 3)


def test_two_machines_erasing_at_once_lose_no_row_and_no_commit(s3: S3, tmp_path: Path) -> None:
    """Two erases of different people, each on its own machine (its own lock), and an import
    on a third, all at once: every commit lands, no row is stored twice, both are gone."""
    everyone = world.people(4)
    data = remote_world(s3, tmp_path, everyone)
    a, b, c = (DataDir((tmp_path / m).resolve(), data.uri) for m in ("a", "b", "c"))
    rows_before = len(catalog.sql("SELECT * FROM intent_snapshots", data))
    new_lines = stored_lines(
        [testing.statement_line(7000 + i, amount_cents=1_000 + i) for i in range(3)]
    )
    errors = run_threads(
        lambda: erase_document(a, everyone[0].cpf),
        lambda: erase_document(b, everyone[1].cpf),
        lambda: stored.merge_remote(c, [new_lines], [], [], "concurrent-import"),
    )
    assert errors == []
    assert len(catalog.sql("SELECT * FROM intent_snapshots", data)) == rows_before
    lines = catalog.sql("SELECT line_id FROM statement_lines", data)["line_id"]
    assert lines.is_unique and len(lines) == 2 * 4 + 2 + 3
    for person in everyone[:2]:
        assert Finder([person]).in_bucket(s3.client(), s3.bucket) == {}
    assert all(Finder([p]).in_bucket(s3.client(), s3.bucket) for p in everyone[2:])


@pytest.mark.slow
@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    count=st.integers(min_value=2, max_value=5),
    seed=st.integers(min_value=0, max_value=10_000),
    chosen=st.integers(min_value=0, max_value=4),
    formatted=st.booleans(),
)
def test_erasing_one_of_random_people_on_s3_is_the_local_erase_and_spares_the_others(
    s3: S3, tmp_path: Path, count: int, seed: int, chosen: int, formatted: bool
) -> None:
    """A random set of people, one erased both in a local data directory and in the same
    world on object storage: the two give the same views, row for row, and every other
    person's rows are what they were."""
    everyone = world.people(count, seed)
    person = everyone[chosen % count]
    prefix = f"p{uuid.uuid4().hex[:8]}"
    remote = remote_world(s3, tmp_path, everyone, prefix)
    local = DataDir(tmp_path / f"local-{prefix}")
    before = views(remote)
    document = world.formatted(person.cpf) if formatted else person.cpf
    on_s3, here = erase_document(remote, document), erase_document(local, document)
    assert (on_s3.intents, on_s3.lines) == (here.intents, here.lines) == (4, 2)
    here_after, on_s3_after = views(local), views(remote)
    for name in VIEWS:
        after = on_s3_after[name]
        pd.testing.assert_frame_equal(here_after[name], after, obj=name)
        untouched = [
            i
            for i, row in before[name].iterrows()
            if not Finder([person]).in_text(str(row.to_dict()))
        ]
        kept = before[name].loc[untouched]
        merged = kept.merge(after, how="left", indicator=True)
        assert (merged["_merge"] == "both").all(), name
    assert Finder([person]).in_bucket(s3.client(), s3.bucket, prefix) == {}
    shutil.rmtree(tmp_path / f"local-{prefix}", ignore_errors=True)


@pytest.mark.slow
def test_the_whole_job_on_s3_then_erase_then_the_job_again(
    s3: S3, done: Done, sandbox: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox job on S3 (extract, every statement format, reconcile, report), a payee
    erased with the CLI: their document (hash, masks) is in no object of the bucket and no
    version of any table, their name in no run and nothing on the local side; reconcile
    and report run again.

    Their name stays where a row names them without their document: an intent where they
    are the party and are paid to a phone key (the API masks a party's document showing its
    last four digits, `***.***.*34-02`, which erase does not match: one CPF in 10,000
    shares them) and bank lines that give only the payer's name. Erase finds a person by
    their document (docs/security.md)."""
    import recon
    from recon.cli import main

    data, run = copy_of(done, s3), done.run  # the job (extract, import, reconcile) on S3
    uri = data.uri or ""
    monkeypatch.setenv("RECON_DATA", uri)  # main() sets it from --data
    assert main(["report", "--run", run.run_id, "--data", uri]) == 0
    cpf, name = payee_with_a_cpf_key(sandbox["world"])
    person = Person(0, name, cpf)
    documents, names = Finder([], person.documents()), Finder([], person.names())
    assert documents.in_bucket(s3.client(), s3.bucket) and names.in_folder(data.root)
    assert names.in_bucket(s3.client(), s3.bucket, f"{JOB}/runs/")
    counts = {n: len(frame) for n, frame in views(data).items()}

    started = time.monotonic()
    assert main(["erase", "--document", world.formatted(cpf), "--data", uri]) == 0
    print(f"erase of the sandbox job on S3: {time.monotonic() - started:.2f} s")

    assert documents.in_bucket(s3.client(), s3.bucket) == {}
    assert names.in_bucket(s3.client(), s3.bucket, f"{JOB}/runs/") == {}
    assert Finder([person]).in_folder(data.root) == {}
    found, gone = time_travel(data, documents)
    assert found == {} and gone > 0
    assert {n: len(frame) for n, frame in views(data).items()} == counts
    again = recon.reconcile(uri, as_of=sandbox["end"])
    assert again.summary.previous_run_id == run.run_id
    assert main(["report", "--run", again.run_id, "--data", uri]) == 0
    # and the scheduled job: extract, import, reconcile, report
    from dataclasses import replace
    from functools import partial

    from recon.ops.daily import Steps, run_daily
    from recon.report import render

    monkeypatch.setenv("RECON_API_KEY", sandbox["key"])
    steps = replace(Steps.default(), render=partial(render, charts=False))
    daily = run_daily(
        uri, date=sandbox["end"].date(), base_url=sandbox["url"], quiet=True, steps=steps
    )
    assert not daily.reused and daily.report.is_file()
    assert len(catalog.list_snapshots(data)) == 2 and len(catalog.remote_runs(data)) == 3
    assert Finder([], person.documents()).in_folder(data.runs / again.run_id) == {}
    assert json.loads((data.runs / again.run_id / "summary.json").read_text())["intents"] > 0
