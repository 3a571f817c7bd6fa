"""`recon daily` imports its inbox one file at a time; it takes the formats that carry PIX
ids first (API Pix, CNAB 240, OFX, then CSV), so a bank CSV without them (Nubank's
Identificador is the OFX FITID; Inter has no id) finds the movements they name instead of
counting them twice, whatever the files are called."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from recon.catalog import connect
from recon.config import DataDir
from recon.ops.daily import _richest_first
from recon.statements import import_statements


@pytest.fixture(scope="module")
def world_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    from recon.sandbox import build_world
    from recon.sandbox.exports import render_statements

    sandbox = build_world(seed=5, days=2, intents_per_day=30)
    folder = tmp_path_factory.mktemp("exports")
    bank = sandbox.bank
    files = render_statements(bank, bank.period_start, bank.period_end)
    names = list(files)
    random.Random(7).shuffle(names)  # names that sort in no helpful order
    for i, name in enumerate(names):
        (folder / f"{i:02d}-{name}").write_bytes(files[name])
    return folder, len(bank.movements)


def test_inbox_order_puts_pix_ids_first(world_files):
    folder, _ = world_files
    ordered = [p.name.split("-", 1)[1] for p in _richest_first(sorted(folder.iterdir()))]
    assert ordered[:5] == [
        "pix.json",
        "camt053.xml",
        "open_finance.json",
        "extrato.cnab240",
        "statement.ofx",
    ]


def test_one_file_at_a_time_in_daily_order(world_files, tmp_path):
    folder, movements = world_files
    data = DataDir(tmp_path / "data")
    for path in _richest_first(sorted(folder.iterdir())):
        import_statements([path], data)
    con = connect(data)
    try:
        n, distinct = con.execute(
            "SELECT count(*), count(DISTINCT line_id) FROM statement_lines"
        ).fetchall()[0]
    finally:
        con.close()
    assert n == distinct == movements
