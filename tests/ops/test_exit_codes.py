"""Exit codes cannot lie: one mapping (recon.errors.exit_code_for), never 1 for a failure."""

from __future__ import annotations

import argparse
import errno
import inspect
import pkgutil
from importlib import import_module
from pathlib import Path

import pytest

import recon
from recon import cli, errors
from recon.errors import EXIT_BREAKS, EXIT_SOFTWARE, ReconError, exit_code_for


def _all_modules() -> list[str]:
    names = ["recon"]
    for info in pkgutil.walk_packages(recon.__path__, "recon."):
        names.append(info.name)
    return names


def test_every_recon_error_lives_in_errors_py() -> None:
    outside = []
    for name in _all_modules():
        if name.endswith("__main__"):
            continue
        module = import_module(name)
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, ReconError)
                and obj.__module__ == name
                and name != "recon.errors"
            ):
                outside.append(f"{name}.{obj.__name__}")
    assert outside == []


def test_no_error_maps_to_the_breaks_code() -> None:
    classes = [c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, Exception)]
    assert len(classes) > 15
    for cls in classes:
        if issubclass(cls, ReconError):
            assert cls.exit_code in (2, 3), cls
    for exc in (RuntimeError("x"), MemoryError(), OSError(errno.ENOSPC, "full"), ValueError()):
        assert exit_code_for(exc) == EXIT_SOFTWARE != EXIT_BREAKS
    assert exit_code_for(KeyboardInterrupt()) == 130


def _run_raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> int:
    def build_parser() -> argparse.ArgumentParser:
        parser = argparse.ArgumentParser(prog="recon")
        parser.set_defaults(func=lambda args: (_ for _ in ()).throw(exc))
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)
    return cli.main([])


@pytest.mark.parametrize(
    "exc",
    [
        RuntimeError("a bug\nover two lines"),
        MemoryError(),
        OSError(errno.ENOSPC, "No space left on device"),
        KeyError("missing"),
    ],
)
def test_unexpected_exception_is_70_with_one_line_and_a_logged_traceback(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    exc: BaseException,
) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("RECON_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("RECON_API_KEY", "sekret-key-123")
    assert _run_raising(monkeypatch, exc) == 70
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"recon: error: unexpected {type(exc).__name__}")
    assert "Traceback" not in err
    logs = list((tmp_path / "data" / "logs").glob("recon-crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in err
    text = logs[0].read_text()
    assert "Traceback" in text and type(exc).__name__ in text


def test_crash_log_redacts_the_api_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "data").mkdir()
    monkeypatch.setenv("RECON_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("RECON_API_KEY", "rk_sandbox_sekret")
    assert _run_raising(monkeypatch, RuntimeError("key rk_sandbox_sekret leaked")) == 70
    err = capsys.readouterr().err
    assert "rk_sandbox_sekret" not in err
    log = next((tmp_path / "data" / "logs").glob("recon-crash-*.log")).read_text()
    assert "rk_sandbox_sekret" not in log and "***" in log


def test_crash_log_falls_back_to_the_temp_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RECON_DATA", str(tmp_path / "no-data-here"))  # never made for a log
    monkeypatch.setattr(cli.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    assert _run_raising(monkeypatch, RuntimeError("boom")) == 70
    assert str(tmp_path / "tmp") in capsys.readouterr().err
    assert not (tmp_path / "no-data-here").exists()


def test_recon_error_is_one_line_with_its_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run_raising(monkeypatch, errors.ApiConnectionError("down\nfor good")) == 3
    assert capsys.readouterr().err == "recon: error: down for good\n"
    assert _run_raising(monkeypatch, errors.NotebookError("cell 3 failed")) == 2


def test_output_closed_by_its_reader_ends_quietly(tmp_path: Path) -> None:
    """`recon … | head`: the reader closes the pipe; recon stops with 141 (as a Unix tool
    ended by SIGPIPE), no error line and no crash log (it was exit 70 with a traceback)."""
    import subprocess
    import sys

    fixture = Path(__file__).parents[1] / "statements" / "fixtures" / "statement.ofx"
    data = tmp_path / "data"
    data.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "recon", "statements", "inspect", str(fixture), "--lines", "5"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**__import__("os").environ, "RECON_DATA": str(data)},
    )
    assert proc.stdout is not None
    proc.stdout.close()  # before recon has printed anything: its first write breaks the pipe
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == errors.EXIT_PIPE == 141, err
    assert err == b""
    assert not list((data / "logs").glob("recon-crash-*.log")) if (data / "logs").exists() else True


def test_a_broken_socket_is_still_unexpected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only our own output going away is quiet: a BrokenPipeError from anything else (a
    connection) is a crash like any other (stdout here is pytest's capture, still open)."""
    monkeypatch.setenv("RECON_DATA", str(tmp_path))
    assert _run_raising(monkeypatch, BrokenPipeError(errno.EPIPE, "Broken pipe")) == 70
    assert capsys.readouterr().err.startswith("recon: error: unexpected BrokenPipeError")
