"""Exit codes and messages of reconcile / resolve / report / daily / demo."""

from __future__ import annotations

from pathlib import Path

import filelock
import pytest

from recon import testing
from recon.cli import main as cli_main
from recon.config import DataDir
from recon.errors import ApiConnectionError
from recon.ops.daily import Steps
from recon.testing import break_row
from recon.testing.daily import FakeSteps


def main(argv: list[str]) -> int:
    """Run `recon` as the console script would: argparse errors exit via SystemExit."""
    try:
        return cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


def use_fake_steps(monkeypatch: pytest.MonkeyPatch, fake: FakeSteps) -> None:
    from functools import partial

    from recon.report import render

    steps = Steps(
        fake.extract, fake.import_statements, fake.reconcile, partial(render, charts=False)
    )
    monkeypatch.setattr(Steps, "default", classmethod(lambda cls: steps))


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("recon: error:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["reconcile", "--as-of", "yesterday"], "not an ISO 8601 timestamp"),
        (["reconcile", "--as-of", "2026-11-20T10:00:00"], "has no UTC offset"),
        (["daily", "--date", "2026-13-01"], "not a date YYYY-MM-DD"),
        (["demo", "--days", "0"], "must be > 0"),
        (["demo", "--intents-per-day", "many"], "not an integer"),
        (["report", "--run", "nope"], "no committed run 'nope'"),
        (["report"], "no committed run in"),
        (["resolve"], "give a BREAK_ID"),
        (["resolve", "b1"], "--note TEXT is required"),
        (["resolve", "b1", "--note", "x", "--decisions", "d.csv"], "not both"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main([*argv, "--data", str(data_dir.root)]) == 2
    assert message in error_line(capsys.readouterr().err)


def test_report_latest_run(data_dir: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    testing.run(data_dir, [], run_id="20261120T000000000000Z-aaaa")
    testing.run(data_dir, [break_row("unmatched_debit", 1)], run_id="20261121T000000000000Z-bbbb")
    assert main(["report", "--data", str(data_dir.root)]) == 0
    out = capsys.readouterr().out
    assert "reports/20261121T000000000000Z-bbbb/report.html" in out
    target = data_dir.root / "elsewhere.html"
    assert (
        main(
            [
                "report",
                "--data",
                str(data_dir.root),
                "--run",
                "20261120T000000000000Z-aaaa",
                "--out",
                str(target),
            ]
        )
        == 0
    )
    assert target.is_file() and (data_dir.root / "breaks.csv").is_file()


def test_daily_exit_codes(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["daily", "--data", str(data_dir.root), "--date", "2026-11-19", "--quiet"]
    use_fake_steps(monkeypatch, FakeSteps())
    assert main(args) == 0
    use_fake_steps(monkeypatch, FakeSteps(breaks=[break_row("unmatched_debit", 1)]))
    assert main([*args, "--force"]) == 1
    assert "exit 1: 1 open P1 break(s)" in capsys.readouterr().err
    # re-running the day re-uses it, with the same verdict
    assert main(args) == 1
    assert "re-used run" in capsys.readouterr().out


def test_daily_api_down_exits_3(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    use_fake_steps(
        monkeypatch,
        FakeSteps(extract_error=ApiConnectionError("connection refused after 6 attempts")),
    )
    assert main(["daily", "--data", str(data_dir.root)]) == 3
    assert "connection refused" in error_line(capsys.readouterr().err)


def test_daily_against_closed_port_exits_3(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real extractor against a port nobody listens on: exit 3, the key never printed."""
    from recon.extraction import extract
    from recon.report import render

    fake = FakeSteps()
    steps = Steps(extract, fake.import_statements, fake.reconcile, render)
    monkeypatch.setattr(Steps, "default", classmethod(lambda cls: steps))
    monkeypatch.setenv("RECON_API_KEY", "test-key-secret")
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    argv = [
        "daily",
        "--data",
        str(data_dir.root),
        "--quiet",
        "--base-url",
        f"http://127.0.0.1:{port}",
    ]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert "test-key-secret" not in err
    assert fake.calls == []


def test_daily_locked_exits_2(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = FakeSteps()
    use_fake_steps(monkeypatch, fake)
    with filelock.FileLock(str(data_dir.root / ".recon.lock"), timeout=0):
        assert main(["daily", "--data", str(data_dir.root)]) == 2
    assert "is writing to" in error_line(capsys.readouterr().err)
    assert fake.calls == []


def test_bad_config_exits_2(
    data_dir: DataDir, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "recon.toml"
    cfg.write_text("[alerts\n")
    assert main(["daily", "--data", str(data_dir.root), "--config", str(cfg)]) == 2
    assert "not valid TOML" in error_line(capsys.readouterr().err)


def test_resolve_one_and_from_csv(
    data_dir: DataDir, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = ["0123456789abcdef", "fedcba9876543210", "00000000aaaaaaaa"]
    testing.run(
        data_dir,
        [break_row("unmatched_debit", i, break_id=b) for i, b in enumerate(ids)],
        run_id="20261121T000000000000Z-cccc",
    )
    root = str(data_dir.root)
    assert main(["resolve", ids[0], "--note", "paid back by hand, FIN-1", "--data", root]) == 0
    csv_file = tmp_path / "d.csv"
    csv_file.write_text(f"break_id,note,decided_by\n{ids[1]},dup payout recalled,ana\n\n")
    assert main(["resolve", "--decisions", str(csv_file), "--data", root]) == 0
    text = (data_dir.root / "decisions.csv").read_text()
    assert ids[0] in text and ids[1] in text and "ana" in text and ids[2] not in text
    capsys.readouterr()
    # an id that is not in the latest run, a bad header, a missing file: exit 2, one line
    assert main(["resolve", "ffffffffffffffff", "--note", "x", "--data", root]) == 2
    assert "not in the latest run" in error_line(capsys.readouterr().err)
    csv_file.write_text("id,comment\nx,y\n")
    assert main(["resolve", "--decisions", str(csv_file), "--data", root]) == 2
    assert "header must have columns break_id,note" in error_line(capsys.readouterr().err)
    assert main(["resolve", "--decisions", str(tmp_path / "none.csv"), "--data", root]) == 2
    assert "not found" in error_line(capsys.readouterr().err)


def test_lock_held_by_another_process_then_released_when_it_dies(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second `recon daily` fails fast while another process runs; a killed run frees it."""
    import subprocess
    import sys

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, filelock\n"
            "lock = filelock.FileLock(sys.argv[1], timeout=0)\n"
            "lock.acquire()\n"
            "print('locked', flush=True)\n"
            "time.sleep(60)\n",
            str(data_dir.root / ".recon.lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        fake = FakeSteps()
        use_fake_steps(monkeypatch, fake)
        assert main(["daily", "--data", str(data_dir.root), "--date", "2026-11-19"]) == 2
        assert "is writing to" in error_line(capsys.readouterr().err)
        assert fake.calls == []
    finally:
        holder.kill()  # like a crash: no clean release
        holder.wait(10)
        if holder.stdout is not None:
            holder.stdout.close()
    assert main(["daily", "--data", str(data_dir.root), "--date", "2026-11-19"]) == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[reconcile]\nbogus = 1\n", "unknown setting(s): bogus"),
        ("[alerts]\nmax_breaks = -3\n", "max_breaks must be a non-negative integer"),
        ("[reconcile]\nbusiness_tz = 'Mars/Olympus'\n", "unknown time zone"),
    ],
)
def test_reconcile_bad_config_exits_2(
    data_dir: DataDir,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    text: str,
    message: str,
) -> None:
    cfg = tmp_path / "recon.toml"
    cfg.write_text(text)
    assert main(["reconcile", "--data", str(data_dir.root), "--config", str(cfg)]) == 2
    assert message in error_line(capsys.readouterr().err)


def test_paths_in_a_log_are_whole_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Out of a terminal (a job's log, a pipe) the console is 120 columns wide, but a path
    is printed whole on its line: a script reads `run written to …` and `report: …`, and a
    long data dir's path must not be split over two lines."""
    root = tmp_path.joinpath(*["a-folder-deep-in-a-shared-drive"] * 5, "data")
    data = DataDir(root).ensure()
    assert len(str(root)) > 130
    use_fake_steps(monkeypatch, FakeSteps())
    assert main(["daily", "--data", str(root), "--date", "2026-11-19", "--quiet"]) == 0
    report = [line for line in capsys.readouterr().out.splitlines() if line.startswith("report:")]
    assert len(report) == 1, report
    assert report[0].startswith(f"report: {data.reports}/") and report[0].endswith(".html")
