"""`recon statements import|pull` on the command line."""

from __future__ import annotations

import pytest
from statements.conftest import FIXTURES

from recon.cli import main
from recon.config import DataDir


def test_import_prints_counts(data_dir: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["statements", "import", str(FIXTURES / "pix.json"), "--data", str(data_dir.root)])
    out = capsys.readouterr().out
    assert code == 0
    assert "read 4, imported 4, duplicate 0" in out
    assert "quarantined 0" in out
    main(["statements", "import", str(FIXTURES / "pix.json"), "--data", str(data_dir.root)])
    assert "read 4, imported 0, duplicate 4" in capsys.readouterr().out


def test_import_error_exit_code(
    data_dir: DataDir, tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "statements",
            "import",
            str(FIXTURES / "pix.json"),
            "--format",
            "ofx",
            "--data",
            str(data_dir.root),
        ]
    )
    assert code == 2
    assert "not an OFX file" in capsys.readouterr().err


def test_import_options(data_dir: DataDir, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        [
            "statements",
            "import",
            str(FIXTURES / "extrato_banco.csv"),
            "--format",
            "csv",
            "--csv-profile",
            "bank",
            "--quarantine",
            "--account",
            "x",
            "--data",
            str(data_dir.root),
        ]
    )
    assert code == 0
    assert "imported 5" in capsys.readouterr().out


def test_pull_needs_the_secret_in_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("RECON_PIX_CLIENT_SECRET", raising=False)
    code = main(
        [
            "statements",
            "pull",
            "--base-url",
            "http://127.0.0.1:9",
            "--client-id",
            "c",
            "--inicio",
            "2026-11-01T00:00:00Z",
            "--fim",
            "2026-11-02T00:00:00Z",
        ]
    )
    assert code == 2
    assert "RECON_PIX_CLIENT_SECRET" in capsys.readouterr().err
