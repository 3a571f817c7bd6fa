"""One writer per data directory: imports, extracts, runs and daily share a lock that sweeps."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from recon.config import DataDir
from recon.errors import LockedError
from recon.storage import WRITER_LOCK_NAME, sweep_leftovers, writer_lock

FIXTURE = Path(__file__).parents[1] / "statements" / "fixtures" / "pix.json"
ROOT = Path(__file__).parents[2]


def _env(data: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "RECON_DATA": str(data), **extra}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _hold_lock(data: Path, seconds: float) -> subprocess.Popen[bytes]:
    """Another process holding the writer lock for `seconds` (it prints once it holds it)."""
    code = (
        "import sys, time; from pathlib import Path; from recon.storage import writer_lock\n"
        f"with writer_lock(Path({str(data)!r}), 'test'):\n"
        "    print('held', flush=True); time.sleep(float(sys.argv[1]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(seconds)], stdout=subprocess.PIPE, env=_env(data)
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"held"
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.kill()
    proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


def test_the_lock_is_reentrant_in_the_process_that_holds_it(tmp_path: Path) -> None:
    with writer_lock(tmp_path, "daily"), writer_lock(tmp_path, "import"):
        pass
    with writer_lock(tmp_path, "again", wait=0):  # released by both
        pass


def test_a_second_process_is_refused_after_a_short_wait(tmp_path: Path) -> None:
    holder = _hold_lock(tmp_path, 30)
    try:
        started = time.monotonic()
        with (
            pytest.raises(LockedError, match="another recon process is writing"),
            writer_lock(tmp_path, "statements import", wait=0.5),
        ):
            pass
        assert time.monotonic() - started < 10
    finally:
        _stop(holder)
    with writer_lock(tmp_path, "after", wait=5):  # a killed holder frees the lock
        pass


def test_cli_import_while_another_writer_runs_is_one_line_exit_2(tmp_path: Path) -> None:
    holder = _hold_lock(tmp_path, 30)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "recon", "statements", "import", str(FIXTURE)],
            capture_output=True,
            text=True,
            env=_env(tmp_path, RECON_LOCK_WAIT="0.5"),
            timeout=120,
        )
    finally:
        _stop(holder)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recon: error: another recon process")
    assert "Traceback" not in done.stderr


def test_two_imports_at_once_store_every_line_once(tmp_path: Path) -> None:
    """Two real processes import the same file at the same moment: no line stored twice."""
    cmd = [sys.executable, "-m", "recon", "statements", "import", str(FIXTURE)]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(tmp_path))
        for _ in range(2)
    ]
    outputs = [proc.communicate(timeout=300) for proc in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    files = str(DataDir(tmp_path).root / "statements" / "**" / "*.parquet")
    ((total, distinct),) = duckdb.sql(
        f"SELECT count(*), count(DISTINCT line_id) FROM read_parquet('{files}', "
        "hive_partitioning=false, union_by_name=true) WHERE line_id IS NOT NULL"
    ).fetchall()
    assert total == distinct > 0


def test_the_first_holder_sweeps_every_kind_of_leftover(tmp_path: Path) -> None:
    leftovers = [
        tmp_path / "snapshots" / "snapshot_date=2026-11-20" / ".tmp-run_id=x" / "part-0.parquet",
        tmp_path / "snapshots" / ".tmp-work-abc" / "page.arrow",
        tmp_path / "runs" / ".tmp-20261120T000000Z-ab12" / "summary.json",
        tmp_path / "statements" / "source_format=ofx" / ".tmp-batch-0001.partial",
        tmp_path / ".tmp-duckdb" / "20261120T000000Z-ab12" / "work.duckdb",
    ]
    kept = [
        tmp_path / "runs" / "20261120T000000Z-cd34" / "summary.json",
        tmp_path / "statements" / "source_format=ofx" / "batch-0001.parquet",
        tmp_path / "inbox" / ".tmp-not-ours.csv",  # the inbox belongs to the user
    ]
    for path in leftovers + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
    with writer_lock(tmp_path, "test"):
        pass
    assert [p for p in leftovers if p.exists()] == []
    assert not (tmp_path / ".tmp-duckdb" / "20261120T000000Z-ab12").exists()
    assert all(p.exists() for p in kept)
    assert (tmp_path / WRITER_LOCK_NAME).exists()
    assert sweep_leftovers(tmp_path) == []  # nothing left the second time
