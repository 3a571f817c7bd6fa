"""extract, statements import, reconcile and daily on `--data s3://…` (moto on loopback),
compared with the same job on a local data directory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from recon import catalog
from recon.config import DataDir
from tests.lake.conftest import S3


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    from recon.sandbox.compose import build_world
    from recon.sandbox.exports import STATEMENT_FILES, export_statements

    sandbox = build_world(seed=3, days=2, intents_per_day=30)
    exports = tmp_path_factory.mktemp("exports")
    export_statements(sandbox.bank, exports)
    with sandbox.running() as url:
        yield {
            "url": url,
            "key": sandbox.api_key,
            "files": [exports / name for name in STATEMENT_FILES],
            "end": sandbox.emulator.clock.now(),
        }


def job(data: str | DataDir, sandbox: dict[str, Any]) -> Any:
    """The whole job through the public API: extract, import every format, reconcile."""
    import recon

    recon.extract(data, base_url=sandbox["url"], api_key=sandbox["key"], quiet=True)
    report = recon.import_statements(sandbox["files"], data)
    run = recon.reconcile(data, as_of=sandbox["end"], flows=True)
    return report, run


# columns that name where or when a copy was made, not what it holds
_LINEAGE = {"run_id", "first_seen_run", "imported_at", "path", "snapshot_at"}


def view(data: DataDir, name: str) -> pd.DataFrame:
    frame = catalog.sql(f"SELECT * FROM {name}", data)
    frame = frame.drop(columns=[c for c in frame.columns if c in _LINEAGE])
    return frame.sort_values(list(frame.columns)).reset_index(drop=True).astype(str)


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
)


def test_the_job_on_s3_gives_the_views_of_the_same_job_on_a_local_dir(
    s3: S3, sandbox: dict[str, Any], tmp_path: Path
) -> None:
    local = DataDir(tmp_path / "local-data").ensure()
    remote = DataDir.resolve(s3.uri("recon/prod"))
    assert remote.remote and remote.uri == f"s3://{s3.bucket}/recon/prod"
    local_report, local_run = job(local, sandbox)
    remote_report, remote_run = job(s3.uri("recon/prod"), sandbox)

    assert remote_report.imported == local_report.imported > 0
    for name in VIEWS:
        left, right = view(local, name), view(remote, name)
        assert len(left) > 0 or name in ("statement_quarantine", "recon_awaiting"), name
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
    s3: S3, sandbox: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import recon

    first_report, run = job(s3.uri(), sandbox)
    # another machine: the same bucket, an empty local side
    monkeypatch.setenv("RECON_LOCAL_DIR", str(tmp_path / "other-machine"))
    other = DataDir.resolve(s3.uri())
    assert not other.runs.exists()
    latest = catalog.latest_run(other)
    assert latest is not None and latest.name == run.run_id
    for name in ("matches", "exceptions", "awaiting", "candidates", "history"):
        copied = pd.read_parquet(latest / f"{name}.parquet")
        original = pd.read_parquet(run.path / f"{name}.parquet")
        pd.testing.assert_frame_equal(copied, original, obj=name)
    assert (latest / "flows.parquet").read_bytes() == (run.path / "flows.parquet").read_bytes()
    again = recon.import_statements(sandbox["files"], other)
    assert again.imported == 0 and again.duplicate == first_report.read
    assert len(catalog.list_snapshots(other)) == 1
    at: datetime = sandbox["end"]
    assert catalog.sql("SELECT count(*) AS n FROM intents", other)["n"][0] > 0
    assert at.tzinfo is not None
