"""`recon daily` with the real parts against a tiny sandbox world served on loopback."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from recon.config import DataDir
from tests.shared import served_sandbox


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    yield from served_sandbox(tmp_path_factory)


def test_daily_end_to_end_then_reused_then_forced(
    sandbox: dict[str, Any], data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace
    from functools import partial

    from recon.ops.daily import Steps, run_daily
    from recon.report import render

    # the real parts; the report without charts (they are tested in test_report/test_demo)
    steps = replace(Steps.default(), render=partial(render, charts=False))
    monkeypatch.setenv("RECON_API_KEY", sandbox["key"])
    for path in sandbox["files"]:
        shutil.copy2(path, data_dir.inbox / Path(path).name)
    day: date = sandbox["end"].date()
    first = run_daily(data_dir, date=day, base_url=sandbox["url"], quiet=True, steps=steps)
    assert not first.reused
    assert sorted(first.imported) == sorted(Path(p).name for p in sandbox["files"])
    assert not [p for p in data_dir.inbox.iterdir() if p.is_file()]
    assert first.report.is_file() and (first.report.parent / "breaks.csv").is_file()
    assert first.as_of <= sandbox["end"]  # the snapshot's server time bounds as_of
    assert first.exit_code in (0, 1)
    breaks = pq.read_table(first.run_dir / "exceptions.parquet")
    assert first.breaks == breaks.num_rows
    assert first.exit_code == (1 if "P1" in breaks.column("priority").to_pylist() else 0)

    # nothing the job wrote holds a person's full document or phone (docs/security.md)
    from tests.ops.test_personal_data import leaks, people_numbers

    assert leaks(data_dir.root, people_numbers(sandbox["world"])) == []

    again = run_daily(data_dir, date=day, base_url=sandbox["url"], quiet=True, steps=steps)
    assert again.reused and again.run_id == first.run_id

    forced = run_daily(
        data_dir, date=day, base_url=sandbox["url"], quiet=True, force=True, steps=steps
    )
    assert not forced.reused and forced.run_id != first.run_id and forced.imported == ()
    states = set(pq.read_table(forced.run_dir / "exceptions.parquet").column("state").to_pylist())
    assert states <= {"persisting"}  # same world, same breaks: all seen before


def test_cli_reconcile_resolve_report_on_the_real_engine(
    sandbox: dict[str, Any],
    data_dir: DataDir,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from recon.cli import main
    from recon.extraction import extract
    from recon.statements import import_statements

    extract(data_dir, base_url=sandbox["url"], api_key=sandbox["key"], quiet=True)
    import_statements(sandbox["files"], data_dir)
    root = str(data_dir.root)

    code = main(["reconcile", "--data", root, "--lang", "en"])
    out = capsys.readouterr()
    run = sorted(p for p in data_dir.runs.iterdir() if (p / "summary.json").is_file())[-1]
    rows = pq.read_table(run / "exceptions.parquet").to_pylist()
    p1 = [r for r in rows if r["priority"] == "P1"]
    assert p1, "the world of seed 3 plants P1 breaks"
    assert code == 1
    assert "category" in out.out and f"run written to {run}\n" in out.out
    assert "open breaks" in out.out and "checks passed" in out.out
    assert "open P1 break(s)" in out.err

    target = p1[0]["break_id"]
    assert main(["resolve", target, "--note", "checked with the bank", "--data", root]) == 0
    main(["reconcile", "--data", root])
    rerun = sorted(p for p in data_dir.runs.iterdir() if (p / "summary.json").is_file())[-1]
    assert rerun != run
    ids = pq.read_table(rerun / "exceptions.parquet").column("break_id").to_pylist()
    assert target not in ids
    summary = json.loads((rerun / "summary.json").read_text())
    assert target in [d["break_id"] for d in summary["decided_breaks"]]

    capsys.readouterr()
    assert main(["report", "--data", root]) == 0
    report = data_dir.root / "reports" / rerun.name / "report.html"
    html = report.read_text(encoding="utf-8")
    assert "checked with the bank" in html  # the decision is shown, not lost
    assert html.count("data:image/png;base64,") >= 4
