"""statement_balance_gap: daily OFX files of one account, walked by their LEDGERBAL, as a
finance team's bank reconciliation walks them (docs/contracts.md, the balance walk)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from recon import catalog
from recon.config import DataDir
from recon.statements.importer import import_statements
from recon.testing.handbuilt import World
from tests.shared import daily_ofx

from .helpers import exception_rows, run

ACCOUNT = "itau-0001"
AS_OF = datetime(2026, 11, 10, 12, tzinfo=UTC)


@pytest.fixture(scope="module")
def walked(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("walk")
    world = World(DataDir(root / "data").ensure())
    world.snapshot([], AS_OF)
    files = root / "files"
    files.mkdir()
    daily_ofx(files)
    import_statements([files], world.data, account=ACCOUNT)
    return world, run(world, as_of=AS_OF)


def gap_breaks(result) -> list[dict]:
    rows = [r for r in exception_rows(result) if r["category"] == "statement_balance_gap"]
    return sorted(rows, key=lambda r: r["reason"])


def test_a_day_missing_a_line_is_a_p1_break_naming_account_day_and_balances(walked) -> None:
    _world, result = walked
    rows = gap_breaks(result)
    day = next(r for r in rows if "2026-11-03:" in r["reason"])  # pt-BR, the default
    assert day["priority"] == "P1"
    assert day["actual_cents"] == 5_000 and day["intent_id"] is None and day["line_id"] is None
    reason = day["reason"]
    for said in (ACCOUNT, "R$ 10.650,00", "R$ 10.400,00", "R$ 300,00", "R$ 10.700,00",
                 "-R$ 50,00", "peça ao banco o extrato completo do dia"):  # fmt: skip
        assert said in reason, said
    assert day["reason_code"] == "statement_balance_gap"


def test_a_missing_day_whose_balance_jumps_is_a_break(walked) -> None:
    _world, result = walked
    rows = gap_breaks(result)
    assert len(rows) == 2
    missing = next(r for r in rows if r["reason_code"] == "statement_balance_unfiled")
    assert missing["actual_cents"] == 20_000
    assert "nenhum arquivo de extrato de 2026-11-04 a 2026-11-04" in missing["reason"]
    assert "Peça ao banco o extrato do dia que falta" in missing["reason"]
    assert len({r["break_id"] for r in rows}) == 2


def test_a_weekend_without_files_is_a_visible_note_not_a_break(walked) -> None:
    world, result = walked
    assert not any("2026-11-07" in r["reason"] for r in gap_breaks(result))
    frame = catalog.sql(
        "SELECT CAST(day AS VARCHAR) AS day, state, gap_cents FROM statement_balances ORDER BY day",
        world.data,
    )
    states = dict(zip(frame["day"], frame["state"], strict=True))
    assert states["2026-11-07"] == states["2026-11-08"] == states["2026-11-04"] == "no_file"
    assert states["2026-11-02"] == "no_opening"  # the first file: no opening known
    assert states["2026-11-09"] == "no_opening"  # after a day with no file, LEDGERBAL only
    assert states["2026-11-06"] == "walked"


def test_the_break_keeps_its_id_on_the_next_run(walked) -> None:
    world, result = walked
    again = run(world, as_of=AS_OF + timedelta(hours=1))
    assert {r["break_id"] for r in gap_breaks(again)} == {r["break_id"] for r in gap_breaks(result)}
