"""`recon daily`: inbox handling, as_of, thresholds, idempotency per date, and the lock."""

from __future__ import annotations

import json
import threading
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from recon import testing
from recon.config import DataDir
from recon.errors import ApiConnectionError, ConfigError, LockedError, StatementError, UsageError
from recon.ops.daily import Steps, run_daily
from recon.reconciliation.alerts import Thresholds, assess_run
from recon.testing import break_row
from recon.testing.daily import FakeSteps

NOW = datetime(2026, 11, 20, 20, 0, tzinfo=UTC)  # 17:00 in São Paulo


def steps_of(fake: FakeSteps) -> Steps:
    from functools import partial

    from recon.report import render

    return Steps(
        fake.extract, fake.import_statements, fake.reconcile, partial(render, charts=False)
    )


def test_daily_imports_inbox_reconciles_and_reports(data_dir: DataDir) -> None:
    (data_dir.inbox / "pix.json").write_text("{}")
    (data_dir.inbox / "statement.ofx").write_text("x")
    (data_dir.inbox / ".hidden").write_text("x")
    fake = FakeSteps()
    result = run_daily(data_dir, steps=steps_of(fake), now=NOW)
    assert [c[0] for c in fake.calls] == ["extract", "import", "import", "reconcile"]
    assert result.imported == ("pix.json", "statement.ofx")
    assert sorted(p.name for p in data_dir.inbox.iterdir()) == [".hidden", "processed"]
    assert (data_dir.inbox / "processed" / "2026-11-20" / "pix.json").is_file()
    # today, snapshot (18:00Z) before the business day's end (03:00Z next day): as_of = snapshot
    assert result.as_of == fake.snapshot_at
    assert result.report.is_file() and result.exit_code == 0 and not result.reused
    assert (data_dir.root / "daily" / "2026-11-20.json").is_file()


def test_past_date_reconciles_as_of_business_day_end(data_dir: DataDir) -> None:
    fake = FakeSteps()
    result = run_daily(data_dir, date=date(2026, 11, 19), steps=steps_of(fake), now=NOW)
    # midnight after 2026-11-19 in America/Sao_Paulo (UTC-3) is 03:00 UTC on the 20th
    assert result.as_of == datetime(2026, 11, 20, 3, 0, tzinfo=UTC)
    assert fake.calls[-1] == ("reconcile", result.as_of)


def test_future_date_is_a_usage_error(data_dir: DataDir) -> None:
    with pytest.raises(UsageError, match="in the future"):
        run_daily(data_dir, date=date(2026, 11, 21), steps=steps_of(FakeSteps()), now=NOW)


def test_second_run_for_same_date_reuses_unless_forced(data_dir: DataDir) -> None:
    fake = FakeSteps(breaks=[break_row("onramp_missing_credit", 1)])
    first = run_daily(data_dir, steps=steps_of(fake), now=NOW)
    (data_dir.inbox / "late.csv").write_text("x")
    again = run_daily(data_dir, steps=steps_of(fake), now=NOW)
    assert again.reused and again.run_id == first.run_id and again.exit_code == 1
    assert fake.runs == 1 and (data_dir.inbox / "late.csv").is_file()
    # a lost report is rendered again from the recorded run
    first.report.unlink()
    assert run_daily(data_dir, steps=steps_of(fake), now=NOW).report.is_file()
    forced = run_daily(data_dir, steps=steps_of(fake), now=NOW, force=True)
    assert not forced.reused and forced.run_id != first.run_id and fake.runs == 2
    assert forced.imported == ("late.csv",)
    assert run_daily(data_dir, steps=steps_of(fake), now=NOW).run_id == forced.run_id


def test_bad_inbox_file_stops_the_job_and_stays_in_inbox(data_dir: DataDir) -> None:
    (data_dir.inbox / "bad.csv").write_text("x")
    fake = FakeSteps(import_error=StatementError("bad.csv:3: field 'valor': not a number"))
    with pytest.raises(StatementError):
        run_daily(data_dir, steps=steps_of(fake), now=NOW)
    assert (data_dir.inbox / "bad.csv").is_file()
    record = json.loads((data_dir.root / "daily" / "2026-11-20.json").read_text())
    assert record["status"] == "failed" and record["exit_code"] == 2
    assert "bad.csv:3" in record["why"] and "run_id" not in record
    assert "not a number" in Path(record["report"]).read_text()
    fake.import_error = None  # fixed: the next run does the day
    assert run_daily(data_dir, steps=steps_of(fake), now=NOW).imported == ("bad.csv",)


def test_upstream_failure_propagates_and_records_a_failed_day(data_dir: DataDir) -> None:
    fake = FakeSteps(extract_error=ApiConnectionError("connection refused"))
    with pytest.raises(ApiConnectionError):
        run_daily(data_dir, steps=steps_of(fake), now=NOW)
    record = json.loads((data_dir.root / "daily" / "2026-11-20.json").read_text())
    assert (record["status"], record["exit_code"], record["why"]) == (
        "failed",
        3,
        "connection refused",
    )
    fake.extract_error = None  # the next run does the day, not re-using the failure
    assert not run_daily(data_dir, steps=steps_of(fake), now=NOW).reused


def test_a_file_that_crashes_the_import_is_moved_aside(data_dir: DataDir) -> None:
    """A crash (not bad input) must not stop every later day: the file goes to failed/."""
    (data_dir.inbox / "crash.csv").write_text("x")
    fake = FakeSteps(import_error=OverflowError("int too big to convert"))
    with pytest.raises(OverflowError):
        run_daily(data_dir, steps=steps_of(fake), now=NOW)
    assert not (data_dir.inbox / "crash.csv").exists()
    assert (data_dir.inbox / "failed" / "2026-11-20" / "crash.csv").is_file()
    record = json.loads((data_dir.root / "daily" / "2026-11-20.json").read_text())
    assert record["status"] == "failed" and record["exit_code"] == 70
    assert record["failed_inbox_files"] == ["crash.csv"]
    fake.import_error = None
    assert run_daily(data_dir, steps=steps_of(fake), now=NOW).imported == ()


def test_a_crash_after_the_imports_keeps_them_in_the_recovered_record(
    data_dir: DataDir,
) -> None:
    """Crash between reconcile and the day record: the rerun's record lists what was imported."""
    (data_dir.inbox / "pix.json").write_text("{}")
    fake = FakeSteps()
    failing = Steps(fake.extract, fake.import_statements, fake.reconcile, _boom)
    with pytest.raises(MemoryError):
        run_daily(data_dir, steps=failing, now=NOW)
    result = run_daily(data_dir, steps=steps_of(fake), now=NOW)
    assert result.imported == ("pix.json",)
    record = json.loads((data_dir.root / "daily" / "2026-11-20.json").read_text())
    assert record["imported"] == ["pix.json"] and "status" not in record


def _boom(run_dir: Path) -> Path:
    raise MemoryError


def test_second_concurrent_run_fails_fast_with_locked_error(data_dir: DataDir) -> None:
    release = threading.Event()
    slow = FakeSteps(release=release)
    errors: list[BaseException] = []

    def first() -> None:
        try:
            run_daily(data_dir, steps=steps_of(slow), now=NOW)
        except BaseException as exc:  # pragma: no cover - surfaced below
            errors.append(exc)

    t = threading.Thread(target=first)
    t.start()
    try:
        assert slow.started.wait(10)
        other = FakeSteps()
        with pytest.raises(LockedError, match=r"another `recon daily` .* is writing to"):
            run_daily(data_dir, steps=steps_of(other), now=NOW)
        assert other.calls == []
    finally:
        release.set()
        t.join(10)
    assert not errors
    # the lock is free again once the first run ends
    assert run_daily(data_dir, steps=steps_of(FakeSteps()), now=NOW).reused


def test_thresholds_from_config(data_dir: DataDir, tmp_path: Path) -> None:
    fake = FakeSteps(breaks=[break_row("onramp_overpaid", i) for i in range(3)])  # P2 only
    assert run_daily(data_dir, steps=steps_of(fake), now=NOW).exit_code == 0
    cfg = tmp_path / "recon.toml"
    cfg.write_text("[alerts]\nmax_breaks = 2\n")
    result = run_daily(data_dir, steps=steps_of(fake), now=NOW, config=cfg, force=True)
    assert result.exit_code == 1 and "3 open breaks > max_breaks 2" in result.reasons


@pytest.mark.parametrize(
    "text",
    [
        "[alerts]\nmax_breaks = -1\n",
        "[alerts]\nmax_breaks = 'x'\n",
        "[alerts]\nfail_on_priorities = ['P9']\n",
        "[alerts]\nfail_on = ['P1']\n",
        "alerts = 3\n",
    ],
)
def test_bad_alerts_config_is_a_config_error(text: str) -> None:
    import tomllib

    with pytest.raises(ConfigError, match="alerts"):
        Thresholds.from_config(tomllib.loads(text))


def test_assess_run_p1_and_empty(data_dir: DataDir) -> None:
    run = testing.run(data_dir, [break_row("unmatched_debit", 1)], run_id="r1")
    verdict = assess_run(run)
    assert verdict.exit_code == 1 and verdict.reasons == ("1 open P1 break(s)",)
    assert assess_run(run, Thresholds(fail_on_priorities=())).exit_code == 0
    empty = testing.run(data_dir, [], run_id="r2")
    assert assess_run(empty).exit_code == 0
