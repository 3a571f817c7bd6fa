"""The sandbox's second account (recon.sandbox.exports.daily): daily OFX files, one lacking a line
and one day never sent, with the two statement_balance_gap breaks in the ground truth."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from recon.config import DataDir
from recon.reconciliation import reconcile
from recon.sandbox.compose import build_world
from recon.sandbox.exports import export_statements
from recon.sandbox.exports.daily import ACCOUNT_LABEL, FOLDER
from recon.statements.importer import import_statements
from recon.testing.handbuilt import World, intent


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory):
    sandbox = build_world(seed=5, days=8, intents_per_day=10)
    out = tmp_path_factory.mktemp("exports")
    export_statements(sandbox.world.bank, out)
    return sandbox, out


def test_the_daily_files_lack_one_line_and_one_day(exported) -> None:
    sandbox, out = exported
    daily = sandbox.world.bank.daily
    files = sorted(p.name for p in (out / FOLDER).iterdir())
    assert len(files) == len(daily.days) - 1
    assert f"extrato-{daily.missing_day:%Y%m%d}.ofx" not in files
    lacking = (out / FOLDER / f"extrato-{daily.lacking_day:%Y%m%d}.ofx").read_bytes()
    assert daily.lacking_id.encode() not in lacking and b"<LEDGERBAL>" in lacking
    planted = [f for f in sandbox.world.truth.faults if f.category == "statement_balance_gap"]
    assert sorted(f.fault for f in planted) == ["daily_file_lacks_a_line", "daily_file_missing"]
    assert "--account conta-tarifas" in (out / "README.md").read_text(encoding="utf-8")


def test_reconciling_the_daily_files_finds_exactly_the_planted_gaps(
    exported, tmp_path: Path
) -> None:
    sandbox, out = exported
    world = World(DataDir(tmp_path / "data").ensure())
    end = sandbox.emulator.clock.now()
    world.snapshot([intent(1, status="expired")], end)
    import_statements([out / FOLDER], world.data, account=ACCOUNT_LABEL)
    result = reconcile(world.data, as_of=end)
    rows = pq.read_table(result.exceptions_path).to_pylist()
    found = sorted(r["actual_cents"] for r in rows if r["category"] == "statement_balance_gap")
    expected = sorted(
        b.actual_cents for b in sandbox.world.truth.breaks if b.category == "statement_balance_gap"
    )
    assert found == expected and len(found) == 2
    # the account's interest and yields (OFX TRNTYPE INT, a CREDIT saying REND PAGO APLIC AUT
    # MAIS) are the bank's own lines: no unmatched_debit or unmatched_credit
    assert {r["category"] for r in rows} == {"statement_balance_gap"}
    assert result.summary.totals["interest_cents"] > 0
    assert result.summary.totals["yield_cents"] > 0
