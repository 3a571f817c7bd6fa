"""A walk over the CLI with what a user gets wrong: every failure is one line, never exit 1.

Bad arguments, unwritable output paths, a busy port, a missing or empty data directory:
each ends in exit 2 with one `recon: error: …` line (argparse adds its usage line first) and
no traceback.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from recon import testing
from recon.cli import main


@pytest.fixture
def with_run(tmp_path: Path) -> Path:
    dd = testing.data_dir(tmp_path)
    testing.run(dd)
    return dd.root


def _error_line(err: str) -> str:
    skip = ("usage:", " ", "recon: warning:")
    lines = [line for line in err.strip().splitlines() if not line.startswith(skip)]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("recon: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "out", ["/proc/x.html", "/etc/passwd/x.html", "/proc/sys/new-folder", "/dev/null/x.html"]
)
def test_report_to_an_unwritable_path_is_exit_2(
    with_run: Path, out: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "--data", str(with_run), "--out", out]) == 2
    assert "cannot write the report" in _error_line(capsys.readouterr().err)


@pytest.fixture
def busy_port() -> Iterator[int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


def test_sandbox_serve_on_a_busy_port_is_exit_2(
    busy_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["sandbox", "serve", "--data", str(tmp_path), "--port", str(busy_port)]
    code = main([*argv, "--days", "1", "--intents-per-day", "5"])
    assert code == 2
    line = _error_line(capsys.readouterr().err)
    assert f"cannot listen on 127.0.0.1:{busy_port}" in line and "--port" in line


@pytest.mark.parametrize(
    "argv",
    [
        ["reconcile", "--as-of", "yesterday"],
        ["reconcile", "--as-of", "2026-11-20T10:00:00"],  # no offset
        ["daily", "--date", "20/11/2026"],
        ["demo", "--days", "0"],
        ["report", "--run", "no-such-run"],
        ["resolve"],
        ["resolve", "abc", "--note", "x"],
        ["statements", "import", "/no/such/file.ofx"],
        ["statements", "import"],
        ["sql", "select * from no_such_view"],
        ["sandbox", "serve", "--host", "8.8.8.8"],
        ["no-such-command"],
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    testing.data_dir(tmp_path)
    assert _run([*argv, "--data", str(tmp_path)]) == 2
    _error_line(capsys.readouterr().err)


@pytest.mark.parametrize("command", [["reconcile"], ["report"], ["sql", "select 1"]])
def test_a_missing_data_dir_is_one_line_never_exit_1(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*command, "--data", str(tmp_path / "nowhere")])
    assert code == 2
    _error_line(capsys.readouterr().err)


def test_extract_without_a_base_url_says_what_to_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RECON_BASE_URL", raising=False)
    monkeypatch.delenv("RECON_API_KEY", raising=False)
    assert main(["extract", "--data", str(tmp_path)]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "RECON_BASE_URL" in line and "base_url=" not in line
    assert main(["extract", "--data", str(tmp_path), "--base-url", "http://127.0.0.1:9"]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "set RECON_API_KEY" in line and "api_key=" not in line


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:abc", "http://127.0.0.1:99999", "ftp://127.0.0.1", "http://"]
)
def test_extract_with_an_unusable_base_url_is_one_line_and_exit_2(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a port that is no number once crashed the GET lane (exit 70, "unexpected ValueError")
    monkeypatch.setenv("RECON_API_KEY", "test-key-secret")
    assert main(["extract", "--data", str(tmp_path), "--base-url", url, "--quiet"]) == 2
    line = _error_line(capsys.readouterr().err)
    assert "base URL" in line and "test-key-secret" not in line


def _run(argv: list[str]) -> int:
    """main(argv)'s exit code, also when argparse exits by itself (SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
