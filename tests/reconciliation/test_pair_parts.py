"""Pair by hand on a hand-built world: a payment in parts (one intent, several lines), the
devolução a refunded onramp is owed, each direction from each door (recon.pair, the CLI),
and the errors that change nothing."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon import testing
from recon.cli import main as cli_main
from recon.config import DataDir
from recon.errors import UsageError
from recon.reconciliation import RunResult, audit, workflow
from recon.reconciliation.manual import load_manual_matches, manual_path
from recon.testing.handbuilt import T0, World, intent, line, uid

from .helpers import exception_rows, match_rows, run

AS_OF = T0 + timedelta(hours=48)
JOSE = {"name": "JOSE ESTRANHO", "doc": "***.999.000-**"}


def build(world: World) -> RunResult:
    """uid(1): an onramp of R$ 100,00 with no credit, and three credits nobody explains
    (R$ 60,00 and R$ 30,00 and R$ 10,00); uid(2): a refunded onramp whose credit came (txid)
    and whose devolução of R$ 50,00 names no original; uid(3): an offramp of R$ 200,00 with
    no payout, and a debit of R$ 200,00 to someone else; a credit on another account."""
    world.snapshot(
        [
            intent(1, amount=10_000, name="CARLA DIAS", doc="***.123.000-**"),
            intent(2, amount=5_000, status="refunded", updated=T0 + timedelta(hours=1)),
            intent(3, type="offramp", amount=20_000, name="PEDRO PAGO", doc="***.321.000-**"),
        ],
        AS_OF,
    )
    world.statement(
        [
            line(1, amount=6_000, **JOSE),
            line(2, amount=3_000, at=T0 + timedelta(minutes=20), **JOSE),
            line(3, amount=1_000, at=T0 + timedelta(minutes=30), **JOSE),
            line(4, amount=5_000, txid=uid(2).replace("-", "")),
            line(5, kind="pix_refund_out", amount=5_000, at=T0 + timedelta(hours=2)),
            line(6, kind="pix_out", amount=20_000, name="OUTRA PESSOA", doc="***.777.000-**"),
        ]
    )
    other = testing.statement_line(
        7, kind="pix_in", amount_cents=4_000, booked_at=T0 + timedelta(minutes=40),
        account="0002/7654321-0", counterparty_name="JOSE ESTRANHO",
    )  # fmt: skip
    world.statement([other], batch="other")
    return run(world, run_id="20261102T190000000000Z-0001")


@pytest.fixture
def built(world: World) -> tuple[World, dict[str, Any]]:
    result = build(world)
    rows = exception_rows(result)
    ids = {
        "lines": {r["actual_cents"]: r["line_id"] for r in rows if r["intent_id"] is None},
        "breaks": {(r["category"], r["intent_id"] or r["line_id"]): r["break_id"] for r in rows},
    }
    return world, ids


def _line(ids: dict[str, Any], cents: int) -> str:
    return str(ids["lines"][cents])


def _breaks(result: RunResult) -> set[tuple[str, Any, Any]]:
    return {
        (r["category"], r["intent_id"], r["actual_cents"], r["expected_cents"])
        for r in exception_rows(result)
    }


def test_two_lines_for_one_onramp_are_one_payment_and_the_rest_stays_a_break(
    built: tuple[World, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    world, ids = built
    sixty, thirty = _line(ids, 6_000), _line(ids, 3_000)
    root = str(world.data.root)
    assert cli_main(["pair", "--intent", uid(1), "--line", sixty, "--line", thirty,
                     "--note", "paid in two PIX, R$ 10,00 still owed", "--by", "ana",
                     "--data", root]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "sum R$ 90,00 for R$ 100,00 expected" in out
    assert "difference R$ 10,00 less, which stays a break (onramp_underpaid)" in out
    second = run(world, run_id="20261102T200000000000Z-0002")
    assert {(m["line_id"], m["rule"], m["actual_cents"]) for m in match_rows(second)
            if m["intent_id"] == uid(1)} == {(sixty, "manual", 6_000), (thirty, "manual", 3_000)}  # fmt: skip
    now = _breaks(second)
    # the missing credit and both lines are gone; the R$ 10,00 short stays, as its kind
    assert ("onramp_underpaid", uid(1), 9_000, 10_000) in now
    assert not {b for b in now if b[0] == "onramp_missing_credit"}
    assert {b[2] for b in now if b[0] == "unmatched_credit"} == {1_000, 4_000}
    [under] = [r for r in exception_rows(second) if r["category"] == "onramp_underpaid"]
    assert under["delta_cents"] == -1_000 and "(+1)" in under["reason"]
    assert "R$ 90,00" in under["reason"]
    # undo one line: the whole pair goes, and the next run has the three breaks again
    assert cli_main(["unpair", "--line", thirty, "--note", "wrong payer", "--data", root]) == 0
    assert f"{thirty}, {sixty} unpaired from intent {uid(1)}" in capsys.readouterr().out
    assert load_manual_matches(world.data) == []
    third = run(world, run_id="20261102T210000000000Z-0003")
    assert {(b[0], b[1] or b[2]) for b in _breaks(third)} >= {
        ("onramp_missing_credit", uid(1)), ("unmatched_credit", 6_000),
        ("unmatched_credit", 3_000),
    }  # fmt: skip
    assert [e["action"] for e in audit.read_entries(world.data)] == ["pair"] * 2 + ["unpair"] * 2
    assert audit.verify(world.data).ok


def test_lines_that_add_up_leave_no_break(built: tuple[World, dict[str, Any]]) -> None:
    world, ids = built
    three = [_line(ids, 6_000), _line(ids, 3_000), _line(ids, 1_000)]
    done = workflow.pair(uid(1), three, "three PIX", data=world.data)
    assert (done.paired_cents, done.expected_cents, done.rest_category) == (10_000, 10_000, "")
    second = run(world, run_id="20261102T200000000000Z-0002")
    assert {b for b in _breaks(second) if b[1] == uid(1)} == set()
    assert {b[0] for b in _breaks(second)} & {"onramp_missing_credit", "onramp_underpaid"} == set()
    assert {m["line_id"] for m in match_rows(second) if m["rule"] == "manual"} == set(three)


def test_a_refunded_onramp_is_paired_with_its_devolucao_from_either_break(
    built: tuple[World, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    world, ids = built
    missing = ids["breaks"][("refund_missing", uid(2))]
    refund_line = _debit(world, "pix_refund_out")
    stranger = ids["breaks"][("unmatched_debit", refund_line)]
    # from the devolução's line: pick the intent
    done = workflow.pair_break(stranger, intent_id=uid(2), note="sent by hand", data=world.data)
    assert (done.refund, done.expected_cents, done.paired_cents) == (True, 5_000, 5_000)
    second = run(world, run_id="20261102T200000000000Z-0002")
    assert not {b for b in _breaks(second) if b[1] == uid(2)}
    assert (uid(2), refund_line, "manual") in {
        (m["intent_id"], m["line_id"], m["rule"]) for m in match_rows(second)
    }
    # undone, and paired again from the refund_missing break (pick the line), then by the CLI
    workflow.unpair(refund_line, "again from the other side", data=world.data)
    run(world, run_id="20261102T210000000000Z-0003")
    assert missing in {r["break_id"] for r in exception_rows(_latest(world))}
    workflow.pair_break(missing, line_ids=[refund_line], note="devolução found", data=world.data)
    fourth = run(world, run_id="20261102T220000000000Z-0004")
    assert not {b for b in _breaks(fourth) if b[1] == uid(2)}
    workflow.unpair(refund_line, "once more, by the command", data=world.data)
    run(world, run_id="20261102T230000000000Z-0005")
    root = str(world.data.root)
    assert cli_main(["pair", "--intent", uid(2), "--line", refund_line, "--note", "sent by hand",
                     "--data", root]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "devolução lines sum R$ 50,00 for R$ 50,00 expected; the amounts agree" in out
    sixth = run(world, run_id="20261103T000000000000Z-0006")
    assert not {b for b in _breaks(sixth) if b[1] == uid(2)}


def test_a_missing_payout_is_paired_with_its_debit_and_a_line_with_its_intent(
    built: tuple[World, dict[str, Any]],
) -> None:
    world, ids = built
    payout = _debit(world, "pix_out")
    missing = ids["breaks"][("offramp_missing_payout", uid(3))]
    done = workflow.pair_break(missing, line_ids=[payout], note="paid by hand", data=world.data)
    assert (done.intent_type, done.difference_cents, done.rest_category) == ("offramp", 0, "")
    # from an unexplained credit: pick the onramp
    stranger = ids["breaks"][("unmatched_credit", _line(ids, 1_000))]
    part = workflow.pair_break(stranger, intent_id=uid(1), note="a first R$ 10,00", data=world.data)
    assert (part.difference_cents, part.rest_category) == (-9_000, "onramp_underpaid")
    second = run(world, run_id="20261102T200000000000Z-0002")
    assert {(m["intent_id"], m["line_id"]) for m in match_rows(second) if m["rule"] == "manual"} == {
        (uid(3), payout), (uid(1), _line(ids, 1_000)),
    }  # fmt: skip
    assert not {b for b in _breaks(second) if b[1] == uid(3)}
    assert ("onramp_underpaid", uid(1), 1_000, 10_000) in _breaks(second)


def _debit(world: World, kind: str) -> str:
    from recon import catalog

    con = catalog.connect(world.data)
    try:
        [(line_id,)] = con.execute(
            "SELECT line_id FROM statement_lines WHERE kind = ?", [kind]
        ).fetchall()
    finally:
        con.close()
    return str(line_id)


def _latest(world: World) -> RunResult:
    from recon.reconciliation import load_run

    runs = sorted(p for p in world.data.runs.iterdir() if not p.name.startswith("."))
    return load_run(runs[-1])


def test_a_pair_that_cannot_be_says_why_and_changes_nothing(
    built: tuple[World, dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    world, ids = built
    sixty, payout = _line(ids, 6_000), _debit(world, "pix_out")
    devolucao, other_account = _debit(world, "pix_refund_out"), _line(ids, 4_000)
    cases = [
        ((uid(3), [sixty]), "the wrong way for offramp"),  # a credit for an offramp
        ((uid(1), [payout]), "the wrong way for onramp"),  # a payout for an onramp
        ((uid(1), [devolucao]), "not refunded: a devolução pairs only"),
        ((uid(2), [payout]), "the wrong way for onramp"),
        ((uid(1), [sixty, devolucao]), "a payment and a devolução"),
        ((uid(1), [sixty, other_account]), "different accounts"),
        ((uid(2), [sixty]), "already has its money"),  # its credit matched by txid
        ((uid(1), [_debit_matched(world)]), "already matched"),
        ((uid(1), [sixty, "no-such-line"]), "no statement line no-such-line"),
    ]
    for (intent_id, lines), message in cases:
        with pytest.raises(UsageError, match=message):
            workflow.pair(intent_id, lines, "a note", data=world.data)
    with pytest.raises(UsageError, match="write a note"):
        workflow.pair(uid(1), [sixty, _line(ids, 3_000)], " ", data=world.data)
    assert cli_main(["pair", "--intent", uid(1), "--line", sixty, "--line", other_account,
                     "--note", "x", "--data", str(world.data.root)]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("recon: error:") and "different accounts" in err[0]
    assert not manual_path(world.data).exists() and audit.read_entries(world.data) == []
    # a line of a pair in force is taken, and so is the intent
    workflow.pair(uid(1), [sixty], "first part", data=world.data)
    with pytest.raises(UsageError, match="already paired with intent"):
        workflow.pair(uid(1), [sixty, _line(ids, 3_000)], "again", data=world.data)
    with pytest.raises(UsageError, match="already paired by hand"):
        workflow.pair(uid(1), [_line(ids, 3_000)], "second part later", data=world.data)


def _debit_matched(world: World) -> str:
    """The credit the txid pass matched to uid(2)."""
    [row] = [m for m in match_rows(_latest(world)) if m["intent_id"] == uid(2)]
    return str(row["line_id"])


@pytest.fixture
def data_dir_factory(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return lambda: DataDir(tmp_path_factory.mktemp("parts") / "data").ensure()


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.integers(min_value=1, max_value=9_000), min_size=2, max_size=4))
def test_any_parts_leave_the_difference_and_the_books_balance(
    data_dir_factory: Any, parts: list[int]
) -> None:
    """However the parts add up, the next run matches each (rule manual), the intent's break
    is the difference (none when they agree), and the run's checks pass (the control totals
    balance, every line is accounted once: a failing check raises RunChecksFailed)."""
    world = World(data_dir_factory())
    world.snapshot([intent(1, amount=10_000, name="CARLA DIAS", doc="***.123.000-**")], AS_OF)
    lines = [
        line(10 + i, amount=c, at=T0 + timedelta(minutes=10 + i), **JOSE)
        for i, c in enumerate(parts)
    ]
    world.statement(lines)
    run(world, run_id="20261102T190000000000Z-0001")
    done = workflow.pair(uid(1), [x["line_id"] for x in lines], "in parts", data=world.data)
    second = run(world, run_id="20261102T200000000000Z-0002")
    assert {m["rule"] for m in match_rows(second)} == {"manual"} and len(match_rows(second)) == len(
        parts
    )
    left = {(b[0], b[2]) for b in _breaks(second)}
    want = {(done.rest_category, sum(parts))} if sum(parts) != 10_000 else set()
    assert left == want
