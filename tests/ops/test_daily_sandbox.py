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


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    world_mod = pytest.importorskip("recon.sandbox.world")
    from recon.sandbox.app import create_app
    from recon.sandbox.emulator import Emulator
    from recon.sandbox.exports import STATEMENT_FILES, export_statements
    from recon.sandbox.server import run_in_thread

    emulator = Emulator(seed=3)
    built = world_mod.World(world_mod.WorldConfig(seed=3, days=2, intents_per_day=30)).build(
        emulator
    )
    exports = tmp_path_factory.mktemp("exports")
    export_statements(built.bank, exports)
    with run_in_thread(create_app(emulator)) as url:
        yield {
            "url": url,
            "key": emulator.instances[0].api_key,
            "files": [exports / name for name in STATEMENT_FILES],
            "end": emulator.clock.now(),
        }


def test_daily_end_to_end_then_reused_then_forced(
    sandbox: dict[str, Any], data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace
    from functools import partial

    from recon.daily import Steps, run_daily
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

    again = run_daily(data_dir, date=day, base_url=sandbox["url"], quiet=True, steps=steps)
    assert again.reused and again.run_id == first.run_id

    forced = run_daily(
        data_dir, date=day, base_url=sandbox["url"], quiet=True, force=True, steps=steps
    )
    assert not forced.reused and forced.run_id != first.run_id and forced.imported == ()
    states = set(pq.read_table(forced.run_dir / "exceptions.parquet").column("state").to_pylist())
    assert states <= {"persisting"}  # same world, same breaks: all seen before
