"""Each matching pass on its own: claiming order, ambiguity, tolerance, windows and grace
edges, counterparty compatibility."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.reconciliation import ReconcileSettings
from recon.schemas import status_vocabulary
from recon.testing.handbuilt import T0, World, e2e, intent, line, uid

from .helpers import breaks, exception_rows, matches, run

AS_OF = T0 + timedelta(hours=6)
M = timedelta(minutes=1)


def tx(n: int) -> str:
    return uid(n).replace("-", "")


def test_txid_claims_the_line_before_reference(world):
    a = intent(1, amount=5_000)
    b = intent(2, amount=5_000, client_reference="ORD-000B", status="awaiting_fiat_payment",
               created=AS_OF - 20 * M)  # fmt: skip
    world.snapshot([a, b], AS_OF)
    # the payer's text names B, but the txid says A: txid wins, B is not paid by it
    world.statement([line(1, amount=5_000, txid=tx(1), description="ORD-000B")])
    result = run(world)
    assert matches(result) == {(uid(1), e2e(1), "txid")}
    assert breaks(result) == set()


def test_reference_claims_before_attributes_and_intent_taken_once(world):
    a = intent(1, amount=5_000, client_reference="ORD-000A")
    b = intent(2, amount=5_000)
    world.snapshot([a, b], AS_OF)
    # line 1 names A; line 2 has no reference and fits A and B by attributes, but A is
    # already matched, so it is B's
    world.statement([line(1, amount=5_000, description="ORD-000A"), line(2, amount=5_000)])
    result = run(world)
    assert matches(result) == {(uid(1), e2e(1), "reference"), (uid(2), e2e(2), "attributes")}
    assert breaks(result) == set()


def test_reference_by_intent_id_with_or_without_hyphens(world):
    a, b = intent(1, amount=5_000), intent(2, amount=6_000)
    world.snapshot([a, b], AS_OF)
    world.statement([
        line(1, amount=5_000, description=f"pedido {uid(1)}"),
        line(2, amount=6_000, description=f"ref:{tx(2).lower()}"),
    ])  # fmt: skip
    assert matches(run(world)) == {(uid(1), e2e(1), "reference"), (uid(2), e2e(2), "reference")}


def test_reference_naming_two_intents_is_ambiguous(world):
    a = intent(1, amount=5_000, client_reference="ORD-000A")
    b = intent(2, amount=5_000, client_reference="ORD-000B")
    world.snapshot([a, b], AS_OF)
    world.statement([line(1, amount=5_000, description="ORD-000A ORD-000B")])
    assert breaks(run(world)) == {("ambiguous_match", None, e2e(1))}


def test_shared_reference_is_not_a_key(world):
    # a description shared by two intents proves nothing; attributes decide (name differs)
    a = intent(1, amount=5_000, pix_description="Compra de cripto")
    b = intent(2, amount=5_000, pix_description="Compra de cripto", name="OUTRA PESSOA",
               doc="***.000.111-**", status="awaiting_fiat_payment", created=AS_OF - 20 * M)  # fmt: skip
    world.snapshot([a, b], AS_OF)
    world.statement([line(1, amount=5_000, description="Compra de cripto")])
    assert matches(run(world)) == {(uid(1), e2e(1), "attributes")}


def test_reference_of_several_words_joins_on_its_most_specific_word(world):
    # "Pedido 7KX2Q9A" (several words) is found in a longer text, case aside; a one-word
    # reference equal to that word ("7KX2Q9A") is another intent's: a text holding the
    # whole phrase names both (ambiguous), a text holding only the word names one
    a = intent(1, amount=5_000, pix_description="Pedido 7KX2Q9A")
    b = intent(2, amount=6_000, client_reference="7KX2Q9A")
    c = intent(3, amount=7_000, client_reference="Z9Q8W7 Loja Centro")
    world.snapshot([a, b, c], AS_OF)
    world.statement([
        line(1, amount=5_000, description="pagamento pedido 7kx2q9a obrigado"),
        line(2, amount=6_000, description="ref 7KX2Q9A"),
        line(3, amount=7_000, description="Z9Q8W7 LOJA CENTRO"),
    ])  # fmt: skip
    result = run(world)
    assert matches(result) == {(uid(2), e2e(2), "reference"), (uid(3), e2e(3), "reference")}
    assert breaks(result) == {("ambiguous_match", None, e2e(1))}


def test_short_reference_is_not_a_key(world):
    # a reference under 6 characters is too weak to prove anything: attributes decide
    a = intent(1, amount=5_000, client_reference="AB12")
    b = intent(2, amount=6_000)
    world.snapshot([a, b], AS_OF)
    world.statement([line(1, amount=6_000, description="AB12")])
    result = run(world)
    assert matches(result) == {(uid(2), e2e(1), "attributes")}


def test_attributes_need_a_unique_candidate_on_both_sides(world):
    # one line, two fitting intents -> ambiguous; the intents are not reported missing
    a, b = intent(1, amount=5_000), intent(2, amount=5_000)
    world.snapshot([a, b], AS_OF)
    world.statement([line(1, amount=5_000)])
    assert breaks(run(world)) == {("ambiguous_match", None, e2e(1))}


def test_two_lines_one_intent_by_attributes_is_ambiguous(world):
    world.snapshot([intent(1, amount=5_000)], AS_OF)
    world.statement([line(1, amount=5_000), line(2, amount=5_000, at=T0 + 20 * M)])
    assert breaks(run(world)) == {
        ("ambiguous_match", None, e2e(1)),
        ("ambiguous_match", None, e2e(2)),
    }


def test_counterparty_must_be_compatible(world):
    a = intent(1, amount=5_000, name="MARIA DA SILVA SAURO", doc="***.456.789-**")
    b = intent(2, amount=6_000, name="MARIA SILVA", doc="***.456.789-**")
    c = intent(3, amount=7_000, name="JOSE", doc="***.456.789-**")
    world.snapshot([a, b, c], AS_OF)
    world.statement([
        # truncated name (prefix), document digits agree where both show them
        line(1, amount=5_000, name="MARIA DA SILVA S", doc="123.456.789-01"),
        # accents and case do not matter
        line(2, amount=6_000, name="María Silva", doc=None),
        # same amount and time, other person
        line(3, amount=7_000, name="JOSE", doc="***.999.789-**"),
    ])  # fmt: skip
    result = run(world)
    assert matches(result) == {(uid(1), e2e(1), "attributes"), (uid(2), e2e(2), "attributes")}
    assert breaks(result) == {
        ("unmatched_credit", None, e2e(3)),
        ("onramp_missing_credit", uid(3), None),
    }


def test_payout_key_must_be_compatible(world):
    off = {"type": "offramp", "name": "ANA", "doc": "***.111.222-**"}
    a = intent(1, amount=5_000, destination="ana@example.com", **off)
    b = intent(2, amount=6_000, destination="+55 11 98888-7777", **off)
    world.snapshot([a, b], AS_OF)
    world.statement([
        line(1, kind="pix_out", amount=5_000, name="ANA", doc=None, key="other@example.com"),
        line(2, kind="pix_out", amount=6_000, name="ANA", doc=None, key="11988887777"),
    ])  # fmt: skip
    result = run(world)
    assert matches(result) == {(uid(2), e2e(2), "attributes")}
    assert breaks(result) == {
        ("unmatched_debit", None, e2e(1)),
        ("offramp_missing_payout", uid(1), None),
    }


def test_direction_must_fit_the_intent_type(world):
    # a debit carrying an onramp's txid is not its payment
    world.snapshot([intent(1, amount=5_000)], AS_OF)
    world.statement([line(1, kind="pix_out", amount=5_000, txid=tx(1), name=None, doc=None)])
    assert breaks(run(world)) == {
        ("unmatched_debit", None, e2e(1)),
        ("onramp_missing_credit", uid(1), None),
    }


def test_onramp_window_edges(world):
    # expires at T0+1h; window ends at expires_at + 30 min grace, inclusive
    a, b = intent(1, amount=5_000), intent(2, amount=6_000, name="B", doc=None)
    world.snapshot([a, b], AS_OF)
    world.statement([
        line(1, amount=5_000, at=T0 + timedelta(minutes=90)),
        line(2, amount=6_000, name="B", doc=None, at=T0 + timedelta(minutes=90, seconds=1)),
    ])  # fmt: skip
    result = run(world)
    assert matches(result) == {(uid(1), e2e(1), "attributes")}
    assert ("unmatched_credit", None, e2e(2)) in breaks(result)


def test_amount_tolerance(world):
    world.snapshot([intent(1, amount=5_000), intent(2, amount=6_000, name="B", doc=None)], AS_OF)
    world.statement([
        line(1, amount=5_003, txid=tx(1)),
        line(2, amount=6_004, name="B", doc=None),
    ])  # fmt: skip
    strict = run(world)
    assert breaks(strict) == {
        ("onramp_overpaid", uid(1), e2e(1)),
        ("unmatched_credit", None, e2e(2)),
        ("onramp_missing_credit", uid(2), None),
    }
    loose = run(world, settings=ReconcileSettings(amount_tolerance_cents=5))
    assert breaks(loose) == set()
    assert matches(loose) == {(uid(1), e2e(1), "txid"), (uid(2), e2e(2), "attributes")}
    assert loose.summary.checks_passed
    assert loose.summary.explained_by["within_tolerance"] == 7


def test_status_lag_grace_edge(world):
    grace = timedelta(minutes=30)
    a = intent(1, amount=5_000, status="awaiting_fiat_payment", created=AS_OF - 2 * grace)
    b = intent(2, amount=6_000, status="awaiting_fiat_payment", created=AS_OF - 2 * grace)
    world.snapshot([a, b], AS_OF)
    world.statement([
        line(1, amount=5_000, txid=tx(1), at=AS_OF - grace),  # exactly at the edge: no lag
        line(2, amount=6_000, txid=tx(2), at=AS_OF - grace - timedelta(seconds=1)),
    ])  # fmt: skip
    result = run(world)
    assert breaks(result) == {("onramp_status_lag", uid(2), e2e(2))}
    assert result.summary.checks_passed


def test_stuck_payout_and_refund_grace_edges(world):
    off = {"type": "offramp", "destination": "x@y.z"}
    a = intent(1, amount=5_000, status="paying_out", updated=AS_OF - timedelta(hours=2), **off)
    b = intent(2, amount=6_000, status="paying_out",
               updated=AS_OF - timedelta(hours=2, seconds=1), **off)  # fmt: skip
    world.snapshot([a, b], AS_OF)
    world.statement([])  # a statement of the period with no movement
    result = run(world)
    assert breaks(result) == {("offramp_stuck_paying_out", uid(2), None)}
    later = run(world, settings=ReconcileSettings(offramp_payout_grace=timedelta(hours=3)))
    assert breaks(later) == set()


def test_lines_after_as_of_wait_for_the_next_run(world):
    world.snapshot([intent(1, amount=5_000, status="awaiting_fiat_payment",
                           created=AS_OF - 10 * M)], AS_OF)  # fmt: skip
    world.statement([line(9, amount=777, at=AS_OF + M, name="X", doc=None)])
    assert breaks(run(world)) == set()
    assert breaks(run(world, as_of=AS_OF + 2 * M)) == {("unmatched_credit", None, e2e(9))}


def test_refund_of_an_unmatched_credit(world):
    world.snapshot([intent(1, amount=5_000, status="awaiting_fiat_payment",
                           created=AS_OF - 10 * M)], AS_OF)  # fmt: skip
    world.statement([
        line(1, amount=777, name="X", doc=None),
        line(2, kind="pix_refund_out", amount=777, refund_of=e2e(1), name="X", doc=None),
    ])  # fmt: skip
    # nobody's money came in and went back out: both lines stay visible for a person
    result = run(world)
    assert breaks(result) == {
        ("unmatched_credit", None, e2e(1)),
        ("unmatched_debit", None, e2e(2, "D")),
    }
    assert result.summary.checks_passed


def test_expired_onramp_paid_and_returned_is_clean(world):
    world.snapshot([intent(1, amount=5_000, status="expired", client_reference="ORD-0001")], AS_OF)
    world.statement([
        line(1, amount=5_000, description="ORD-0001", at=T0 + 2 * timedelta(hours=1)),
        line(2, kind="pix_refund_out", amount=5_000, refund_of=e2e(1), at=T0 + 3 * M * 60),
    ])  # fmt: skip
    result = run(world)
    assert breaks(result) == set()
    assert result.summary.checks_passed
    assert result.summary.explained_by["returned"] == 10_000


def test_history_checks_use_the_latest_full_snapshot(world):
    a = intent(1, amount=5_000, status="awaiting_fiat_payment", created=AS_OF - 20 * M)
    b = intent(2, amount=6_000, type="offramp", status="created", created=AS_OF - 20 * M)
    world.snapshot([a, b], AS_OF - 10 * M)
    world.snapshot([a, b], AS_OF - 5 * M)
    # a later onramp-only extract is not "the latest": the offramp has not vanished
    world.snapshot([a], AS_OF, manifest={"filters": {"intent_type": "onramp"}, "consistent": True})
    assert breaks(run(world)) == set()
    # a full snapshot without the offramp: now it has vanished
    world.snapshot([a], AS_OF + M)
    assert breaks(run(world)) == {("intent_vanished", uid(2), None)}


def test_status_moving_backwards_between_snapshots(world):
    a = intent(1, amount=5_000, type="offramp", status="paying_out", destination="x@y.z")
    world.snapshot([dict(a, status="burning")], AS_OF - 20 * M)
    world.snapshot([a], AS_OF - 10 * M)
    world.snapshot([dict(a, status="burn_approved")], AS_OF)
    result = run(world)
    assert breaks(result) == {("status_regression", uid(1), None)}
    (row,) = [r for r in exception_rows(result)]
    params = json.loads(row["reason_params"])
    assert (params["from_status"], params["to_status"]) == ("paying_out", "burn_approved")


# an offramp's place along its happy path, as the history rule ranks it: every terminal
# status after every stage, a status outside the vocabulary before them all
_OFFRAMP_RANK = {
    status: 100 if terminal else rank
    for kind, status, rank, _k, terminal, _f in status_vocabulary()
    if kind == "offramp"
}


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(
    histories=st.lists(
        st.lists(st.sampled_from([*_OFFRAMP_RANK, "on_hold"]), min_size=2, max_size=4),
        min_size=1,
        max_size=3,
    )
)
def test_any_step_backwards_is_found_whatever_came_after(tmp_path_factory, histories):
    """status_regression names each intent whose status stepped back between two
    consecutive snapshots, with its latest such step, also when a later snapshot went
    forward again, or returned to an earlier status; an intent never seen at two places
    has none."""
    world = World(DataDir(tmp_path_factory.mktemp("history")))
    depth = max(len(h) for h in histories)
    for k in range(depth):
        at = AS_OF - (depth - 1 - k) * 10 * M
        seen = [
            intent(n, amount=1_000 + n, type="offramp", status=h[k], destination="x@y.z")
            for n, h in enumerate(histories, start=1)
            if k < len(h)
        ]
        world.snapshot(seen, at)
    expected = {}
    for n, h in enumerate(histories, start=1):
        ranks = [_OFFRAMP_RANK.get(s, 0) for s in h]
        steps = [j for j in range(1, len(h)) if ranks[j] < ranks[j - 1]]
        if steps:
            expected[uid(n)] = (h[steps[-1] - 1], h[steps[-1]])
    rows = [r for r in exception_rows(run(world)) if r["category"] == "status_regression"]
    assert {r["intent_id"] for r in rows} == set(expected)
    for r in rows:
        before, after = expected[r["intent_id"]]
        params = json.loads(r["reason_params"])
        assert (params["from_status"], params["to_status"]) == (before, after)
