"""One hand-built world holding every break category and every matching pass, each on its
own intent, plus look-alikes that must stay clean; the engine must report exactly the
planted breaks."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

import pyarrow.parquet as pq
import pytest

from recon import catalog
from recon.config import DataDir
from recon.reconciliation import ReconcileSettings
from recon.reconciliation.fees import FeeSchedule
from recon.schemas import CATEGORIES, EXCEPTIONS_SCHEMA, MATCHES_SCHEMA
from recon.statements.lines import BUSINESS_TZ
from recon.testing.handbuilt import T0, World, e2e, intent, line, uid

from .helpers import breaks, exception_rows, match_rows, matches, run

AS_OF = T0 + timedelta(hours=48)
PSP = "efi"  # an account whose PSP takes 0.99 % (min R$ 0,01) from each credit
SCHEDULE = FeeSchedule(PSP, rate_ppm=9_900, min_cents=1)
SETTINGS = ReconcileSettings(fee_schedules=(SCHEDULE,))
SECOND = "0002/7654321-0"
H = timedelta(hours=1)
M = timedelta(minutes=1)


def amt(n: int) -> int:
    return 10_000 + 101 * n  # distinct per intent, so no accidental attribute candidates


def tx(n: int) -> str:
    return uid(n).replace("-", "")


def build(world):
    ana = {"name": "ANA PAGA", "doc": "***.111.222-**"}
    it, ln = [], []
    # -- onramps ---------------------------------------------------------------------------
    it.append(intent(1, amount=amt(1)))
    ln.append(line(1, amount=amt(1), txid=tx(1)))  # clean, txid
    it.append(intent(2, amount=amt(2), client_reference="ORD-0002"))
    ln.append(line(2, amount=amt(2), description="pagamento ORD-0002"))  # clean, reference
    it.append(intent(3, amount=amt(3)))
    ln.append(line(3, amount=amt(3)))  # clean, attributes
    it.append(intent(4, amount=amt(4), status="fiat_received"))  # missing credit
    it.append(intent(5, amount=amt(5)))
    ln.append(line(5, amount=amt(5) - 1000, txid=tx(5)))  # underpaid
    it.append(intent(6, amount=amt(6), pix_description="PEDIDO-6-XYZ"))
    ln.append(line(6, amount=amt(6) + 100, description="PEDIDO-6-XYZ obrigado"))  # overpaid
    it.append(intent(7, amount=amt(7)))
    ln.append(line(7, amount=amt(7), txid=tx(7), at=T0 + 10 * M))
    ln.append(line(70, amount=amt(7), txid=tx(7), at=T0 + 20 * M))  # duplicate credit
    it.append(intent(8, amount=amt(8), status="expired", client_reference="ORD-0008",
                     updated=T0 + H))  # fmt: skip
    ln.append(line(8, amount=amt(8), description="ORD-0008", at=T0 + 100 * M))  # after expiry
    it.append(intent(9, amount=amt(9), status="awaiting_fiat_payment"))
    ln.append(line(9, amount=amt(9), txid=tx(9), at=T0 + 10 * M))  # status lag
    it.append(intent(10, amount=amt(10), status="awaiting_fiat_payment",
                     created=AS_OF - 20 * M))  # fmt: skip
    ln.append(line(10, amount=amt(10), txid=tx(10), at=AS_OF - 10 * M))  # in grace: clean
    ln.append(line(11, amount=777, name="JOAO NINGUEM", doc="***.999.888-**"))  # unmatched
    twin = {"name": "TWIN PAYER", "doc": "***.333.444-**"}
    it.append(intent(12, amount=12_000, created=T0 + H, **twin))
    it.append(intent(13, amount=12_000, created=T0 + H + M, **twin))
    ln.append(line(12, amount=12_000, at=T0 + H + 5 * M, **twin))  # ambiguous twins
    ln.append(line(13, amount=12_000, at=T0 + H + 6 * M, **twin))
    it.append(intent(14, amount=amt(14), status="refunded", updated=T0 + 2 * H))
    ln.append(line(14, amount=amt(14), txid=tx(14)))
    ln.append(line(140, kind="pix_refund_out", amount=amt(14), refund_of=e2e(14),
                   at=T0 + 2 * H))  # refund ok  # fmt: skip
    it.append(intent(15, amount=amt(15), status="refunded", updated=T0 + H))
    ln.append(line(15, amount=amt(15), txid=tx(15)))  # refund missing
    it.append(intent(16, amount=amt(16), status="refunded", updated=AS_OF - 2 * H))
    ln.append(line(16, amount=amt(16), txid=tx(16)))  # refund in grace: clean
    it.append(intent(17, amount=amt(17), status="refunded", updated=T0 + 2 * H))
    ln.append(line(17, amount=amt(17), txid=tx(17)))
    ln.append(line(170, kind="pix_refund_out", amount=amt(17) - 500, refund_of=e2e(17),
                   at=T0 + 2 * H))  # refund amount mismatch  # fmt: skip
    it.append(intent(18, amount=amt(18), status="failed", created=AS_OF - 2 * H,
                     updated=AS_OF - H))  # fmt: skip
    ln.append(line(18, amount=amt(18), txid=tx(18), at=AS_OF - 100 * M))  # failed, in grace
    # -- offramps --------------------------------------------------------------------------
    off = {"type": "offramp", **ana, "destination": "111.222.333-44"}
    pay = {"kind": "pix_out", **ana, "key": "11122233344"}
    it.append(intent(20, amount=amt(20), client_reference="OFF-0020", **off))
    ln.append(line(20, amount=amt(20), description="PIX ENVIADO OFF-0020", **pay))  # clean
    it.append(intent(21, amount=amt(21), **off))
    ln.append(line(21, amount=amt(21), **pay))  # clean, attributes
    it.append(intent(22, amount=amt(22), **off))  # missing payout
    it.append(intent(23, amount=amt(23), client_reference="OFF-0023", **off))
    ln.append(line(23, amount=amt(23) + 1, description="OFF-0023", **pay))  # wrong amount
    it.append(intent(24, amount=amt(24), client_reference="OFF-0024", **off))
    ln.append(line(24, amount=amt(24), description="OFF-0024", at=T0 + 10 * M, **pay))
    ln.append(line(240, amount=amt(24), description="OFF-0024", at=T0 + 30 * M, **pay))
    it.append(intent(25, amount=amt(25), status="failed", client_reference="OFF-0025", **off))
    ln.append(line(25, amount=amt(25), description="OFF-0025", **pay))  # payout for failed
    it.append(intent(26, amount=amt(26), status="paying_out", updated=T0 + H, **off))  # stuck
    it.append(intent(27, amount=amt(27), status="paying_out", created=AS_OF - H,
                     updated=AS_OF - 30 * M, **off))  # fmt: skip  # in grace: clean
    it.append(intent(28, amount=amt(28), status="paying_out", client_reference="OFF-0028",
                     **off))  # fmt: skip
    ln.append(line(28, amount=amt(28), description="OFF-0028", **pay))  # in flight: clean
    it.append(intent(33, amount=amt(33), client_reference="OFF-0033", **off))
    ln.append(line(33, amount=amt(33), description="OFF-0033", **pay))
    ln.append(line(330, kind="pix_refund_in", amount=amt(33), refund_of=e2e(33),
                   at=T0 + 2 * H))  # payout came back, offramp still completed  # fmt: skip
    it.append(intent(34, amount=amt(34), status="refunded", client_reference="OFF-0034", **off))
    ln.append(line(34, amount=amt(34), description="OFF-0034", **pay))
    ln.append(line(340, kind="pix_refund_in", amount=amt(34), refund_of=e2e(34),
                   at=T0 + 2 * H))  # came back, offramp refunded: clean  # fmt: skip
    it.append(intent(35, amount=amt(35)))  # completed: the tokens went out
    ln.append(line(35, amount=amt(35), txid=tx(35)))
    ln.append(line(350, kind="pix_refund_out", amount=amt(35) - 500, refund_of=e2e(35),
                   at=T0 + 30 * H, description="DEVOLUCAO PIX DEVOLVIDO MED_FRAUDE"))  # fmt: skip
    it.append(intent(40, amount=amt(40)))
    ln.append(line(40, amount=amt(40), txid=tx(40), **ana))  # paid by someone else
    it.append(intent(41, amount=amt(41)))
    ln.append(line(41, amount=amt(41), txid=tx(41), name="ANA PAGA", doc=None))  # no doc: clean
    ln.append(line(29, kind="pix_out", amount=999, name="FULANO", doc=None))  # unmatched
    ln.append(line(30, kind="fee", amount=250, name=None, doc=None, description="TARIFA PIX"))
    # -- a PSP that settles net of its fee -------------------------------------------------
    psp = {"account": PSP}
    it.append(intent(36, amount=amt(36)))
    net = amt(36) - SCHEDULE.fee(amt(36))
    ln.append(line(36, amount=net, txid=tx(36), **psp))  # net of the schedule's fee: clean
    it.append(intent(37, amount=amt(37)))
    ln.append(line(37, amount=amt(37) - 200, txid=tx(37), **psp))  # fee 200, schedule 136
    it.append(intent(38, amount=amt(38), **ana))
    fee = SCHEDULE.fee(amt(38))
    ln.append(line(38, amount=amt(38) - fee, fee=fee, **ana, **psp))  # states gross and fee
    it.append(intent(39, amount=amt(39), created=T0 + 3 * H, **ana))
    net = amt(39) - SCHEDULE.fee(amt(39)) + 1  # a cent of rounding
    ln.append(line(39, amount=net, at=T0 + 3 * H + M, **ana, **psp))  # net, by attributes
    it.append(intent(19, amount=amt(19)))
    ln.append(line(19, amount=amt(19) - 1000, txid=tx(19), **psp))  # the payer's shortfall
    ln.append(line(190, kind="fee", amount=321, name=None, doc=None, account=PSP,
                   description="TARIFA PIX RECEBIDOS"))  # the PSP's daily fee  # fmt: skip
    # -- the balance walk: a second account's day opens and closes at R$ 100,00, yet its
    # file lists a fee of R$ 2,50 (or lacks the line that made up for it)
    ln.append(line(360, kind="fee", amount=250, name=None, doc=None, account=SECOND))
    day = T0.astimezone(BUSINESS_TZ).date()
    world.balances([(SECOND, day, "opening", 10_000), (SECOND, day, "closing", 10_000)])
    # -- snapshot history ------------------------------------------------------------------
    it.append(intent(31, amount=amt(31), status="minting"))
    ln.append(line(31, amount=amt(31), txid=tx(31)))  # regressed from completed
    vanished = intent(32, amount=amt(32), status="awaiting_fiat_payment")

    first = [dict(r, status="completed") if r["id"] == uid(31) else r for r in it]
    world.snapshot([*first, vanished], AS_OF - 10 * M)
    world.snapshot(it, AS_OF)
    world.statement(ln)


EXPECTED = {
    ("onramp_missing_credit", uid(4), None),
    ("onramp_underpaid", uid(5), e2e(5)),
    ("onramp_overpaid", uid(6), e2e(6)),
    ("onramp_fee_mismatch", uid(37), e2e(37)),
    ("onramp_underpaid", uid(19), e2e(19)),
    ("onramp_duplicate_credit", uid(7), e2e(70)),
    ("onramp_credit_after_expiry", uid(8), e2e(8)),
    ("onramp_status_lag", uid(9), e2e(9)),
    ("unmatched_credit", None, e2e(11)),
    ("ambiguous_match", None, e2e(12)),
    ("ambiguous_match", None, e2e(13)),
    ("refund_missing", uid(15), None),
    ("refund_amount_mismatch", uid(17), e2e(170, "D")),
    ("offramp_missing_payout", uid(22), None),
    ("offramp_payout_amount_mismatch", uid(23), e2e(23)),
    ("offramp_duplicate_payout", uid(24), e2e(240)),
    ("offramp_payout_for_failed_intent", uid(25), e2e(25)),
    ("offramp_stuck_paying_out", uid(26), None),
    ("offramp_payout_returned", uid(33), e2e(330, "D")),
    ("onramp_credit_returned", uid(35), e2e(35)),
    ("onramp_third_party_payer", uid(40), e2e(40)),
    ("unmatched_debit", None, e2e(29)),
    ("statement_balance_gap", None, None),
    ("status_regression", uid(31), None),
    ("intent_vanished", uid(32), None),
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    world = World(DataDir(tmp_path_factory.mktemp("categories") / "data").ensure())
    build(world)
    return run(world, lang="en", settings=SETTINGS)


def test_every_category_found_and_nothing_else(result):
    assert breaks(result) == EXPECTED
    assert {c for c, _, _ in EXPECTED} == set(CATEGORIES)


def test_every_pass_matches_what_it_should(result):
    got = matches(result)
    for expected in [
        (uid(1), e2e(1), "txid"),
        (uid(2), e2e(2), "reference"),
        (uid(3), e2e(3), "attributes"),
        (uid(6), e2e(6), "reference"),
        (uid(7), e2e(7), "txid"),
        (uid(14), e2e(140, "D"), "refund"),
        (uid(20), e2e(20), "reference"),
        (uid(21), e2e(21), "attributes"),
        (uid(24), e2e(24), "reference"),
    ]:
        assert expected in got
    matched_lines = [e for _, e, _ in got]
    assert len(matched_lines) == len(set(matched_lines))
    assert e2e(70) not in matched_lines  # the duplicate is a break, not a match


def test_checks_pass_and_control_totals_balance(result):
    s = result.summary
    assert s.checks_passed, s.check_samples
    assert all(row["unexplained_cents"] == 0 for row in s.control_totals)
    assert "UNEXPLAINED" not in s.explained_by
    # the fees (the PSP's daily one, and one on the balance walk's account) stay out of the
    # PIX totals but are reported
    assert s.totals["fees_cents"] == 250 + 321 + 250
    # a credit net of its PSP's fee settles its onramp: the fee explains the difference
    fees = SCHEDULE.fee(amt(36)) + SCHEDULE.fee(amt(38)) + SCHEDULE.fee(amt(39)) - 1
    assert s.explained_by["psp_fee"] == -fees
    # the non-break states explain the look-alikes
    assert s.explained_by["in_flight"] == amt(10) + amt(18) + amt(28) - amt(16)
    assert s.explained_by["unmatched_credit"] == 777
    assert s.explained_by["onramp_underpaid"] == -2000
    assert s.explained_by["onramp_fee_mismatch"] == -200


def test_a_credit_net_of_its_psp_fee_matches_on_the_gross_and_keeps_the_fee(result):
    rows = {r["intent_id"]: r for r in match_rows(result)}
    for n, rule, fee in [
        (36, "txid", SCHEDULE.fee(amt(36))),  # the schedule's fee, taken
        (38, "attributes", SCHEDULE.fee(amt(38))),  # the fee the statement states
        (39, "attributes", SCHEDULE.fee(amt(39)) - 1),  # the schedule's, a cent of rounding off
    ]:
        row = rows[uid(n)]
        assert (row["rule"], row["expected_cents"], row["actual_cents"], row["fee_cents"]) == (
            rule,
            amt(n),
            amt(n),
            fee,
        )
    assert rows[uid(1)]["fee_cents"] is None  # a bank credit takes no fee
    assert rows[uid(37)]["fee_cents"] is None  # off the schedule: a break, no fee booked


def test_a_fee_off_the_schedule_names_the_schedule_and_the_numbers(result):
    row = next(r for r in exception_rows(result) if r["category"] == "onramp_fee_mismatch")
    assert (row["priority"], row["expected_cents"], row["actual_cents"]) == ("P2", 136, 200)
    reason = row["reason"]
    assert "account efi (0.99% (min R$ 0,01))" in reason, reason
    assert "net of a fee of R$2.00" in reason and "takes R$1.36" in reason  # in English
    assert "difference of R$0.64" in reason and uid(37) in reason


def test_recon_fees_gives_each_account_and_day_its_fees(result):
    data = DataDir(result.path.parent.parent)
    rows = catalog.sql("SELECT * FROM recon_fees ORDER BY account", data).to_dict("records")
    netted = SCHEDULE.fee(amt(36)) + SCHEDULE.fee(amt(38)) + SCHEDULE.fee(amt(39)) - 1
    day = T0.astimezone(ZoneInfo("America/Sao_Paulo")).date()
    assert [
        (
            r["account"],
            r["day"].date(),
            r["netted_fee_cents"],
            r["debited_fee_cents"],
            r["total_fee_cents"],
        )
        for r in rows
    ] == [
        ("0001/1234567-8", day, 0, 250, 250),
        (SECOND, day, 0, 250, 250),  # the balance walk's account pays a fee too
        (PSP, day, netted, 321, netted + 321),
    ]


def test_rows_follow_the_contract(result):
    ex = pq.read_table(result.exceptions_path)
    assert ex.schema == EXCEPTIONS_SCHEMA
    assert pq.read_table(result.matches_path).schema == MATCHES_SCHEMA
    for row in exception_rows(result):
        assert row["priority"] == CATEGORIES[row["category"]].priority
        assert row["state"] == "new" and row["first_seen_run"] == result.run_id
        assert row["reason"] and len(row["reason"]) > 40
        if row["expected_cents"] is not None and row["actual_cents"] is not None:
            assert row["delta_cents"] == row["actual_cents"] - row["expected_cents"]


def test_reasons_name_the_evidence(result):
    by = {(r["category"], r["intent_id"]): r for r in exception_rows(result)}
    under = by[("onramp_underpaid", uid(5))]["reason"]
    assert e2e(5) in under and "R$10.00 short" in under and uid(5) in under
    assert "booked 2026-11-02 10:10" in under  # in the business time zone
    stuck = by[("offramp_stuck_paying_out", uid(26))]["reason"]
    assert "paying out since 2026-11-02 11:00" in stuck and "120 min" in stuck
    amb = [r for r in exception_rows(result) if r["category"] == "ambiguous_match"]
    assert all(uid(12) in r["reason"] and uid(13) in r["reason"] for r in amb)


def test_summary_counts(result):
    s = result.summary
    assert s.breaks == len(EXPECTED)
    assert s.counts["ambiguous_match"] == 2
    assert sum(s.counts.values()) == s.breaks
    assert s.counts_by_priority["P1"] == sum(
        1 for c, _, _ in EXPECTED if CATEGORIES[c].priority == "P1"
    )
    assert 0 < s.auto_match_rate < 1
    assert s.matched_lines == sum(s.matches_by_rule.values())
