"""One writer at a time per data directory, and the sweep of what crashed writers left."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from recon import catalog
from recon.cli import main
from recon.config import DataDir
from recon.errors import LockedError
from recon.storage import writer_lock

FIXTURES = Path(__file__).parents[1] / "statements" / "fixtures"

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from recon.storage import writer_lock\n"
    "with writer_lock(Path(sys.argv[1]), 'reconcile'):\n"
    "    print('locked', flush=True)\n"
    "    time.sleep(60)\n"
)


def _holder(root: Path) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(root)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()  # like a crash: the kernel drops the lock
    proc.wait(10)
    if proc.stdout is not None:
        proc.stdout.close()


def test_an_import_while_another_writer_runs_is_refused_and_stores_nothing(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    root = str(data_dir.root)
    holder = _holder(data_dir.root)
    try:
        code = main(["statements", "import", str(FIXTURES / "statement.ofx"), "--data", root])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2
        assert len(err) == 1 and err[0].startswith("recon: error: another `recon reconcile`")
        assert f"pid {holder.pid}" in err[0]
        assert catalog.sql("select count(*) n from statement_lines", data_dir).n[0] == 0
    finally:
        _stop(holder)
    # the dead holder's lock is gone: the same import now goes through
    code = main(["statements", "import", str(FIXTURES / "statement.ofx"), "--data", root])
    assert code == 0
    assert catalog.sql("select count(*) n from statement_lines", data_dir).n[0] > 0


def test_reconcile_and_extract_take_the_same_lock(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECON_API_KEY", "rk_test")
    holder = _holder(data_dir.root)
    try:
        assert main(["reconcile", "--data", str(data_dir.root)]) == 2
        assert "is writing to" in capsys.readouterr().err
        code = main(["extract", "--data", str(data_dir.root), "--base-url", "http://127.0.0.1:9"])
        assert code == 2
        assert "is writing to" in capsys.readouterr().err
    finally:
        _stop(holder)


def test_the_holding_thread_may_take_it_again_another_thread_may_not(tmp_path: Path) -> None:
    refused: list[BaseException] = []

    def other() -> None:
        try:
            with writer_lock(tmp_path, "extract"):
                pass
        except LockedError as exc:
            refused.append(exc)

    with writer_lock(tmp_path, "daily"), writer_lock(tmp_path, "statements import"):
        t = threading.Thread(target=other)
        t.start()
        t.join(10)
    assert len(refused) == 1 and "`recon daily`" in str(refused[0])
    with writer_lock(tmp_path, "extract"):  # released by the outer block
        pass


def test_the_first_writer_sweeps_every_kind_of_leftover(data_dir: DataDir) -> None:
    root = data_dir.root
    leftovers = [
        root / "snapshots" / "snapshot_date=2026-11-20" / ".tmp-run1" / "part-00000.parquet",
        root / "runs" / ".tmp-20261120T000000000000Z-aaaa" / "matches.parquet",
        root / "statements" / "source=ofx" / ".tmp-batch.partial",
        root / "reports" / ".tmp-report" / "report.html",
        root / ".tmp-duckdb" / "20261120T000000000000Z-aaaa" / "duckdb_temp_storage-0.tmp",
    ]
    kept = [
        root / "snapshots" / "snapshot_date=2026-11-20" / "run_id=r" / "_manifest.json",
        root / "statements" / "source=ofx" / "batch.parquet",
    ]
    for path in leftovers + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    with writer_lock(root, "statements import"):
        pass
    assert [p for p in leftovers if p.exists()] == []
    assert not (root / "runs" / ".tmp-20261120T000000000000Z-aaaa").exists()
    assert all(p.exists() for p in kept)
