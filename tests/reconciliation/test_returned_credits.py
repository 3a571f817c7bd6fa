"""onramp_credit_returned: a credit of an onramp whose tokens were delivered goes back to
the payer (a MED claim weeks later, or any devolução), in whole or in parts."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.testing.handbuilt import T0, World, e2e, intent, line, uid

from .helpers import breaks, exception_rows, run

M = timedelta(minutes=1)
DAY = timedelta(days=1)
MED = "DEVOLUCAO PIX DEVOLVIDO MED_FRAUDE"
LATE = T0 + 40 * DAY  # a MED claim 40 days after the payment


def _credit(world: World, status: str = "completed", as_of=LATE + 5 * DAY) -> None:
    world.snapshot([intent(1, amount=20_000, status=status)], as_of)
    world.statement([line(1, amount=20_000, txid=uid(1).replace("-", ""), at=T0 + M)])


def _return(world: World, *parts: int, description: str | None = MED, first: int = 100) -> None:
    world.statement(
        [
            line(
                first + i,
                kind="pix_refund_out",
                amount=cents,
                refund_of=e2e(1),
                at=LATE + (first - 100 + i) * DAY,
                description=description,
            )
            for i, cents in enumerate(parts)
        ],
        covers=(LATE - DAY, LATE + 30 * DAY),
    )


@pytest.mark.parametrize("status", ["completed", "awaiting_onchain_transfer"])
def test_a_med_return_weeks_later_is_a_p1_break(world, status):
    _credit(world, status)
    _return(world, 20_000)
    result = run(world, lang="en")
    (row,) = exception_rows(result)
    assert (row["category"], row["priority"]) == ("onramp_credit_returned", "P1")
    assert (row["intent_id"], row["end_to_end_id"]) == (uid(1), e2e(1))
    assert (row["expected_cents"], row["actual_cents"]) == (20_000, 20_000)
    reason = row["reason"]
    assert f"is {status} (tokens delivered)" in reason
    assert "R$200.00 of it went back to the payer in devoluções (parts: 1;" in reason
    assert e2e(100, "D") in reason and "marked MED_FRAUDE: a MED claim" in reason
    assert "contest the claim" in reason
    assert result.summary.checks_passed
    assert result.summary.explained_by["onramp_credit_returned"] == 20_000
    assert "returned" not in result.summary.explained_by


def test_partial_returns_are_summed_per_credit_under_one_break_id(world):
    _credit(world)
    _return(world, 5_000)
    first = exception_rows(run(world))
    _return(world, 7_000, first=101)
    (row,) = exception_rows(run(world, lang="en"))
    assert [r["break_id"] for r in first] == [row["break_id"]]
    assert (row["expected_cents"], row["actual_cents"]) == (20_000, 12_000)
    assert "R$120.00 of it went back to the payer in devoluções (parts: 2;" in row["reason"]
    assert f"latest {e2e(101, 'D')}" in row["reason"]


def test_the_break_appears_on_the_run_that_imports_the_devolucao(world):
    _credit(world)
    assert breaks(run(world)) == set()
    _return(world, 20_000)
    assert breaks(run(world)) == {("onramp_credit_returned", uid(1), e2e(1))}


@pytest.mark.parametrize(
    "description", [None, "DEVOLUCAO PIX DEVOLVIDO", "DEVOLUCAO PIX MEDEIROS ORIGINAL"]
)
def test_a_return_without_a_med_marker_says_none(world, description):
    _credit(world)
    _return(world, 20_000, description=description)
    (row,) = exception_rows(run(world, lang="en"))
    assert row["category"] == "onramp_credit_returned"
    assert "MED" not in row["reason"].replace("MEDEIROS", "")
    assert row["reason"].endswith("Recover the tokens or the money from the customer.")


def test_a_plain_med_word_is_a_marker(world):
    _credit(world)
    _return(world, 20_000, description="DEVOL PIX MED 123")
    (row,) = exception_rows(run(world, lang="en"))
    assert "marked MED:" in row["reason"]


def test_a_refunded_onramp_whose_devolucao_matches_stays_clean(world):
    _credit(world, "refunded")
    _return(world, 20_000)
    result = run(world)
    assert breaks(result) == set() and result.summary.checks_passed


def test_an_onramp_still_minting_is_no_returned_credit(world):
    """Minting: the tokens are not out yet; the service can still stop them."""
    _credit(world, "minting")
    _return(world, 20_000)
    assert "onramp_credit_returned" not in {c for c, _, _ in breaks(run(world))}


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(parts=st.lists(st.integers(1, 20_000), min_size=1, max_size=4))
def test_any_parts_sum_to_one_break(tmp_path_factory, parts):
    world = World(DataDir(tmp_path_factory.mktemp("data")).ensure())
    _credit(world)
    _return(world, *parts)
    result = run(world)
    (row,) = exception_rows(result)
    assert row["category"] == "onramp_credit_returned"
    assert (row["expected_cents"], row["actual_cents"]) == (20_000, sum(parts))
    assert result.summary.checks_passed
