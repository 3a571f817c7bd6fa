"""Statements the sandbox generates (engineer C's exporters and API Pix), read back exactly."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from recon.config import DataDir
from recon.statements import import_statements
from recon.statements.pull import pull_pix

from .conftest import view_rows

FILES = (
    "pix.json",
    "camt053.xml",
    "open_finance.json",
    "statement.ofx",
    "extrato.cnab240",
    "extrato_psp.csv",
    "extrato_banco.csv",
)
WHOLE_ACCOUNT = FILES[1:]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    from recon.sandbox.emulator import Emulator
    from recon.sandbox.exports import export_statements
    from recon.sandbox.world import World, WorldConfig

    emulator = Emulator(seed=11)
    world = World(WorldConfig(seed=11, days=2, intents_per_day=40))
    result = world.build(emulator)
    world.apply_late_events(emulator)
    out = tmp_path_factory.mktemp("exports")
    export_statements(result.bank, out)
    return result.bank, out


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row["line_id"],
        row["amount_cents"],
        row["direction"],
        row["kind"],
        row["end_to_end_id"],
    )


@pytest.mark.parametrize("name", FILES)
def test_each_file_reads_without_error(world: tuple[Any, Path], tmp_path: Path, name: str) -> None:
    _, out = world
    data = DataDir(tmp_path / "d").ensure()
    report = import_statements([out / name], data)
    assert report.quarantined == 0
    assert report.read == report.imported > 0
    again = import_statements([out / name], data)
    assert (again.imported, again.duplicate) == (0, report.read)


def test_whole_account_formats_agree(world: tuple[Any, Path], tmp_path: Path) -> None:
    """camt, Open Finance, OFX, CNAB 240 and both CSVs give the same lines, ids, amounts and
    kinds."""
    _, out = world
    seen = {}
    for name in WHOLE_ACCOUNT:
        data = DataDir(tmp_path / name).ensure()
        import_statements([out / name], data)
        seen[name] = sorted(_key(r) for r in view_rows(data))
    first = seen[WHOLE_ACCOUNT[0]]
    for name in WHOLE_ACCOUNT[1:]:
        assert seen[name] == first, name


def test_all_formats_together_are_one_account(world: tuple[Any, Path], tmp_path: Path) -> None:
    bank, out = world
    data = DataDir(tmp_path / "all").ensure()
    report = import_statements([out], data)  # the folder; README and truth files skipped
    assert report.read == report.imported + report.duplicate
    lines = view_rows(data)
    ofx_only = DataDir(tmp_path / "ofx").ensure()
    import_statements([out / "statement.ofx"], ofx_only)
    assert len(lines) == len(view_rows(ofx_only))  # nothing counted twice across formats
    kinds = Counter(r["kind"] for r in lines)
    assert kinds["pix_in"] > 0 and kinds["pix_out"] > 0
    # every PIX line has its e2e id, and the received ones carry API Pix detail
    for r in lines:
        if r["kind"] != "fee":
            assert r["end_to_end_id"], r
        if r["kind"] == "pix_in":
            assert r["source_format"] == "pix-json"
            assert r["counterparty_key"]
        if r["kind"] == "pix_refund_out":
            assert r["refund_of"], r
    # the money adds up to the bank's own movements
    moves = bank.sorted_movements()
    assert sum(r["amount_cents"] for r in lines) == sum(m.amount_cents for m in moves)
    assert len(lines) == len(moves)


def test_pull_from_the_sandbox_api_pix(world: tuple[Any, Path], tmp_path: Path) -> None:
    from starlette.applications import Starlette

    from recon.sandbox.pix_api import PixCredentials, pix_routes
    from recon.sandbox.serving import run_in_thread

    bank, out = world
    creds = PixCredentials.for_seed(11)
    app = Starlette(routes=pix_routes(bank, creds))
    pulled = DataDir(tmp_path / "pulled").ensure()
    with run_in_thread(app) as base_url:  # loopback only
        report = pull_pix(
            base_url,
            creds.client_id,
            creds.client_secret,
            "2000-01-01T00:00:00Z",
            "2100-01-01T00:00:00Z",
            pulled,
            page_size=7,
        )
    assert report.quarantined == 0
    from_file = DataDir(tmp_path / "file").ensure()
    import_statements([out / "pix.json"], from_file)
    keep = ("line_id", "amount_cents", "booked_at", "end_to_end_id", "refund_of", "txid")
    assert sorted(tuple(r[k] for k in keep) for r in view_rows(pulled)) == sorted(
        tuple(r[k] for k in keep) for r in view_rows(from_file)
    )


def test_pull_command_against_the_sandbox(
    world: tuple[Any, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from starlette.applications import Starlette

    from recon.cli import main
    from recon.sandbox.pix_api import PixCredentials, pix_routes
    from recon.sandbox.serving import run_in_thread

    bank, _ = world
    creds = PixCredentials.for_seed(11)
    monkeypatch.setenv("RECON_PIX_CLIENT_SECRET", creds.client_secret)
    with run_in_thread(Starlette(routes=pix_routes(bank, creds))) as base_url:
        args = [
            "statements",
            "pull",
            "--base-url",
            base_url,
            "--client-id",
            creds.client_id,
            "--inicio",
            "2000-01-01T00:00:00Z",
            "--fim",
            "2100-01-01T00:00:00Z",
            "--data",
            str(tmp_path / "d"),
        ]
        assert main(args) == 0
        first = capsys.readouterr().out
        assert main(args) == 0
        second = capsys.readouterr().out
    assert "imported 0" not in first and "quarantined 0" in first
    assert "imported 0," in second
    assert creds.client_secret not in first + second
