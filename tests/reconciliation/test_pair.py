"""Pair by hand: `recon pair` / `recon unpair` / `recon.pair` on a demo data dir."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import recon
from recon import catalog
from recon.cli import main as cli_main
from recon.config import DataDir
from recon.errors import UsageError
from recon.reconciliation import audit, workflow
from recon.reconciliation.manual import load_manual_matches, manual_path


def main(argv: list[str]) -> int:
    try:
        return cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.fixture(scope="module")
def _demo_template(tmp_path_factory: pytest.TempPathFactory) -> DataDir:
    from recon.ops.demo import ensure_demo_data

    return ensure_demo_data(
        tmp_path_factory.mktemp("pair") / "demo", seed=3, days=3, intents_per_day=60
    )


@pytest.fixture
def demo(_demo_template: DataDir, tmp_path: Path) -> DataDir:
    shutil.copytree(_demo_template.root, tmp_path / "demo")
    return DataDir(tmp_path / "demo")


def _rows(data: DataDir, sql: str, params: list[object] | None = None) -> list[tuple]:
    con = catalog.connect(data)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def _first(data: DataDir, category: str, column: str) -> tuple[str, str]:
    """(break_id, intent_id or line_id) of the first open break of `category`."""
    [(bid, value)] = _rows(
        data,
        f"SELECT break_id, {column} FROM recon_exceptions WHERE category = ? "
        "ORDER BY break_id LIMIT 1",
        [category],
    )
    return bid, value


def test_recon_pair_of_a_missing_credit_and_an_unmatched_credit_is_matched_as_manual(
    demo: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    missing, intent_id = _first(demo, "onramp_missing_credit", "intent_id")
    stranger, line_id = _first(demo, "unmatched_credit", "line_id")
    root = str(demo.root)
    assert main(["pair", "--intent", intent_id, "--line", line_id, "--note", "payer confirmed",
                 "--by", "ana", "--data", root]) == 0  # fmt: skip
    assert "the next run matches each line (rule manual)" in capsys.readouterr().out
    assert main(["reconcile", "--data", root]) in (0, 1)
    open_ids = {r[0] for r in _rows(demo, "SELECT break_id FROM recon_exceptions")}
    assert missing not in open_ids and stranger not in open_ids
    assert _rows(
        demo,
        "SELECT rule FROM recon_matches WHERE intent_id = ? AND line_id = ?",
        [intent_id, line_id],
    ) == [("manual",)]
    [entry] = audit.read_entries(demo)
    assert (entry["action"], entry["by"], entry["break_id"]) == ("pair", "ana", missing)
    # undo: the next run has both breaks again
    assert main(["unpair", "--line", line_id, "--note", "wrong payer", "--data", root]) == 0
    assert load_manual_matches(demo) == []
    assert main(["reconcile", "--data", root]) in (0, 1)
    open_ids = {r[0] for r in _rows(demo, "SELECT break_id FROM recon_exceptions")}
    assert {missing, stranger} <= open_ids
    assert audit.verify(demo).ok


def test_a_pair_that_cannot_be_is_a_clear_message_and_changes_nothing(
    demo: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    _, onramp = _first(demo, "onramp_missing_credit", "intent_id")
    _, offramp = _first(demo, "offramp_missing_payout", "intent_id")
    _, credit = _first(demo, "unmatched_credit", "line_id")
    _, debit = _first(demo, "offramp_duplicate_payout", "line_id")
    [(matched_line, matched_intent)] = _rows(
        demo, "SELECT line_id, intent_id FROM recon_matches WHERE rule = 'txid' ORDER BY 1 LIMIT 1"
    )
    cases = [
        ((offramp, [credit]), "the wrong way"),
        ((onramp, [debit]), "the wrong way"),
        ((onramp, [matched_line]), "already matched"),
        ((matched_intent, [credit]), "already has its money"),
        (("no-such-intent", [credit]), "no intent"),
        ((onramp, ["no-such-line"]), "no statement line"),
        ((onramp, [credit, credit + "x"]), "no statement line"),
    ]
    for (intent_id, lines), message in cases:
        with pytest.raises(UsageError, match=message):
            recon.pair(intent_id, lines, "a note", data=demo)
    with pytest.raises(UsageError, match="write a note"):
        recon.pair(onramp, [credit], "  ", data=demo)
    # a line of an account that is not the service's
    demo.config_path.write_text('[reconcile]\naccounts = ["some-other-account"]\n')
    with pytest.raises(UsageError, match="not one of the service's accounts"):
        recon.pair(onramp, [credit], "a note", data=demo)
    demo.config_path.unlink()
    # the CLI says it in one line, exit 2
    assert main(["pair", "--intent", offramp, "--line", credit, "--note", "x",
                 "--data", str(demo.root)]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recon: error:") and "wrong way" in err[0]
    assert not manual_path(demo).exists() and audit.read_entries(demo) == []
    # once paired, the line and the intent are taken
    recon.pair(onramp, [credit], "payer confirmed", data=demo)
    with pytest.raises(UsageError, match="already paired"):
        recon.pair(onramp, [credit], "again", data=demo)
    with pytest.raises(UsageError, match="nothing to undo"):
        workflow.unpair(debit, "x", data=demo)


def test_a_pair_from_a_break_takes_the_side_the_break_lacks(demo: DataDir) -> None:
    missing, intent_id = _first(demo, "onramp_missing_credit", "intent_id")
    stranger, line_id = _first(demo, "unmatched_credit", "line_id")
    with pytest.raises(UsageError, match="one side"):
        workflow.pair_break(missing, line_ids=[line_id], intent_id=intent_id, note="x", data=demo)
    with pytest.raises(UsageError, match="no unexplained line"):
        workflow.pair_break(missing, intent_id=intent_id, note="x", data=demo)
    with pytest.raises(UsageError, match="no intent waiting for money"):
        workflow.pair_break(stranger, line_ids=[line_id], note="x", data=demo)
    done = workflow.pair_break(stranger, intent_id=intent_id, note="by phone", data=demo)
    assert done.line_ids == (line_id,) and done.matches[0].break_id == stranger
    [(expected,)] = _rows(demo, "SELECT amount_cents FROM intents WHERE id = ?", [intent_id])
    [(paid,)] = _rows(demo, "SELECT amount_cents FROM statement_lines WHERE line_id = ?", [line_id])
    assert done.difference_cents == abs(paid) - expected
