"""`recon sandbox export|serve` from the command line and the Python API."""

from __future__ import annotations

import csv
import threading
from pathlib import Path

import httpx
import pytest

from recon.cli import main
from recon.sandbox.compose import build_world
from recon.sandbox.exports import STATEMENT_FILES
from recon.sandbox.serving import serve

ARGS = ["--seed", "4", "--days", "2", "--intents-per-day", "40"]


def test_export_writes_every_format_and_the_truth(tmp_path: Path, capsys):
    out = tmp_path / "out"
    assert main(["sandbox", "export", *ARGS, "--out", str(out)]) == 0
    names = {p.name for p in out.iterdir()}
    assert (
        set(STATEMENT_FILES) | {"expected_breaks.csv", "expected_matches.csv", "README.md"} <= names
    )
    header = out.joinpath("expected_breaks.csv").read_text().splitlines()[0].split(",")
    assert header == ["category", "intent_id", "end_to_end_id", "expected_cents", "actual_cents"]
    printed = capsys.readouterr().out
    assert "World seed 4" in printed and "pix.json" in printed
    # the same seed again: byte-identical
    again = tmp_path / "again"
    assert main(["sandbox", "export", *ARGS, "--out", str(again)]) == 0
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for name in files:  # the daily account's folder (conta_tarifas/) included
        assert out.joinpath(name).read_bytes() == again.joinpath(name).read_bytes(), name


def test_export_of_a_date_range(tmp_path: Path):
    out = tmp_path / "range"
    code = main(
        [
            "sandbox",
            "export",
            *ARGS,
            "--out",
            str(out),
            "--start",
            "2026-10-31",
            "--until",
            "2026-11-01",
        ]
    )
    assert code == 0
    text = out.joinpath("extrato_banco.csv").read_bytes().decode("cp1252")
    assert "Período: 31/10/2026 a 31/10/2026" in text
    days = {row[0] for row in csv.reader(text.splitlines()[5:], delimiter=";") if row}
    assert days == {"31/10/2026"}


@pytest.mark.parametrize(
    "extra",
    [
        ["--end", "not-a-date"],
        ["--end", "2026-11-01T12:00:00"],
        ["--days", "0"],
        ["--start", "31/10/2026"],
    ],
)
def test_export_usage_errors_exit_2(tmp_path: Path, extra, capsys):
    assert main(["sandbox", "export", *ARGS, "--out", str(tmp_path), *extra]) == 2
    assert "recon: error:" in capsys.readouterr().err


def test_serve_rejects_bad_fault_rates(capsys):
    assert main(["sandbox", "serve", *ARGS, "--port", "0", "--rate-429", "2"]) == 2


def test_serve_prints_the_banner_once_listening():
    sandbox = build_world(seed=4, days=2, intents_per_day=40)
    lines: list[str] = []
    stop = threading.Event()
    ready = threading.Event()

    def out(line: str) -> None:
        lines.append(line)
        if line.startswith("API Pix client"):
            ready.set()

    thread = threading.Thread(
        target=serve, kwargs={"sandbox": sandbox, "port": 0, "out": out, "stop": stop}
    )
    thread.start()
    try:
        assert ready.wait(20)
        assert lines[0].startswith("Serving v2 API at http://127.0.0.1:")
        base_url = lines[0].split()[-1]
        keys = [line.split()[-1] for line in lines if line.startswith("API key ")]
        assert sandbox.api_key in keys and len(keys) >= 2
        resp = httpx.get(f"{base_url}/v2/intents", headers={"X-API-Key": sandbox.api_key})
        assert resp.status_code == 200 and resp.json()["total"] == sandbox.result.intents
        client_id, secret = lines[-1].split()[-2:]
        token = httpx.post(
            f"{base_url}/oauth/token",
            auth=(client_id, secret),
            data={"grant_type": "client_credentials"},
        )
        assert token.status_code == 200
    finally:
        stop.set()
        thread.join(20)
    assert not thread.is_alive()


def test_package_exports_lazily():
    import recon.sandbox as sandbox_pkg

    assert sandbox_pkg.build_world is build_world
    assert set(sandbox_pkg.__all__) <= set(dir(sandbox_pkg))
    for name in sandbox_pkg.__all__:
        assert getattr(sandbox_pkg, name) is not None
    with pytest.raises(AttributeError):
        _ = sandbox_pkg.no_such_name
