"""Every error a user can cause is one line `recon: error: …` and exit 2, never a traceback."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from recon import testing
from recon.config import DataDir
from tests.shared import run_recon


def _recon(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("RECON_DATA", None)
    return run_recon(*argv, cwd=cwd, env=env)


def _one_error_line(proc: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert proc.returncode == code, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("recon: error:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


@pytest.fixture
def run_dir(data_dir: DataDir) -> DataDir:
    testing.run(data_dir, [testing.break_row("unmatched_credit", 0)])
    return data_dir


@pytest.mark.parametrize("out", ["/proc/x.html", "/etc/passwd/x.html"])
def test_report_to_a_path_that_cannot_be_written(
    run_dir: DataDir, tmp_path: Path, out: str
) -> None:
    proc = _recon("report", "--out", out, "--data", str(run_dir.root), cwd=tmp_path)
    assert "cannot write the report" in _one_error_line(proc)


def test_sandbox_serve_on_a_busy_port(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = _recon("sandbox", "serve", "--port", str(port), "--days", "1", cwd=tmp_path)
    assert "cannot listen on" in _one_error_line(proc)


@pytest.mark.parametrize(
    "argv",
    [
        ["reconcile", "--as-of", "yesterday"],
        ["daily", "--date", "2026-13-01"],
        ["sql", "select * from nowhere_at_all"],
        ["statements", "import", "/nonexistent/file.ofx"],
        ["resolve", "0123456789abcdef"],
        ["report", "--run", "no-such-run"],
        ["nonsense-command"],
    ],
)
def test_bad_arguments_are_one_line(argv: list[str], data_dir: DataDir, tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    proc = _recon(*argv, "--data", str(data_dir.root), cwd=cwd)
    if argv == ["nonsense-command"]:
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        return
    _one_error_line(proc)
    assert list(cwd.iterdir()) == []  # nothing made where the user did not ask


def test_only_the_console_module_writes_the_error_line() -> None:
    """One mechanism: every command raises a ReconError (or argparse refuses) and
    `recon.cli.console.print_error` writes the line; no command prints it by hand."""
    cli = Path(__file__).resolve().parents[2] / "recon" / "cli"
    writers = [
        path.name
        for path in sorted(cli.glob("*.py"))
        if "recon: error" in path.read_text(encoding="utf-8")
    ]
    assert writers == ["console.py"]


def test_a_bad_fee_schedule_is_one_line(data_dir: DataDir, tmp_path: Path) -> None:
    data_dir.config_path.write_text(
        '[accounts.efi]\nfee = { percent = "0,99" }\n', encoding="utf-8"
    )
    proc = _recon("reconcile", "--data", str(data_dir.root), cwd=tmp_path)
    line = _one_error_line(proc)
    assert "[accounts.efi] fee: percent '0,99' is not a number like" in line
