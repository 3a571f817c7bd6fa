"""One test per matching and break rule added for messy data (docs/contracts.md, "Matching
and break rules"): statement coverage, PIX keys by type, names as banks write them, every pass in
time, the offramp window, accounts, refunds per credit, returned payouts."""

from __future__ import annotations

from datetime import datetime, timedelta

import pyarrow.parquet as pq
import pytest

from recon import testing
from recon.reconciliation import ReconcileSettings
from recon.testing.handbuilt import T0, World, e2e, intent, line, uid

from .helpers import breaks, exception_rows, matches, run

AS_OF = T0 + timedelta(hours=6)
M = timedelta(minutes=1)
H = timedelta(hours=1)
OFF = {"type": "offramp", "name": "ANA SOUZA", "doc": None}


def tx(n: int) -> str:
    return uid(n).replace("-", "")


def awaiting(result) -> set[tuple[str, str]]:
    return {
        (r["would_be"], r["intent_id"]) for r in pq.read_table(result.awaiting_path).to_pylist()
    }


# ---------------------------------------------------------------- statement coverage


def test_no_statement_money_breaks_wait(world):
    """Without any statement, a paid onramp and a completed offramp are awaiting_statement,
    counted and listed, not breaks; the run passes its checks."""
    world.snapshot([intent(1), intent(2, destination="a@b.c", **OFF)], AS_OF)
    result = run(world)
    assert breaks(result) == set()
    assert awaiting(result) == {
        ("onramp_missing_credit", uid(1)),
        ("offramp_missing_payout", uid(2)),
    }
    s = result.summary
    assert s.awaiting["intents"] == 2 and s.awaiting["cents"] == 20_000
    assert (
        s.coverage_text
        == "no statement covers any time yet; 2 intents (R$ 200,00) wait for statements"
    )
    assert s.checks_passed and s.control_totals == ()


def test_money_outside_coverage_waits_inside_it_breaks(world):
    """The statements cover T0-1d .. T0+2h: an onramp whose window (T0 .. T0+1h30) is
    inside is a break; one created at T0+1h (window to T0+2h30) waits."""
    world.snapshot([intent(1), intent(2, created=T0 + H, name="B", doc=None)], AS_OF)
    world.statement([], covers=(T0 - timedelta(days=1), T0 + 2 * H))
    result = run(world, lang="en")
    assert breaks(result) == {("onramp_missing_credit", uid(1), None)}
    assert awaiting(result) == {("onramp_missing_credit", uid(2))}
    (row,) = pq.read_table(result.awaiting_path).to_pylist()
    assert "waits for statements" in row["reason"] and row["direction"] == "credit"


def test_a_later_statement_closes_the_waiting_intent(world):
    world.snapshot([intent(1, created=T0 + H, name="B", doc=None)], AS_OF)
    world.statement([], covers=(T0 - timedelta(days=1), T0 + 2 * H))
    assert awaiting(run(world)) == {("onramp_missing_credit", uid(1))}
    world.statement([line(1, amount=10_000, name="B", doc=None, at=T0 + 2 * H + M)],
                    covers=(T0 + 2 * H, AS_OF))  # fmt: skip
    later = run(world)
    assert awaiting(later) == set() and breaks(later) == set()
    assert matches(later) == {(uid(1), e2e(1), "attributes")}


def test_api_pix_covers_received_pix_only(world):
    """An API Pix period (scope received) covers credits, not payouts."""
    world.snapshot([intent(1), intent(2, destination="a@b.c", **OFF)], AS_OF)
    world.statement([], covers=(T0 - timedelta(days=1), AS_OF), scope="received")
    result = run(world)
    assert breaks(result) == {("onramp_missing_credit", uid(1), None)}
    assert awaiting(result) == {("offramp_missing_payout", uid(2))}
    assert {c["direction"] for c in result.summary.control_totals} <= {"credit"}


def test_open_finance_credits_only_page_covers_no_payout(world, tmp_path):
    """An Open Finance page requested with creditDebitIndicator=CREDITO lists credits only:
    a credit missing from it is a break, a payout missing from it waits (it would be a false
    missing-payout break if the page claimed to cover every movement)."""
    import json

    from recon.statements import import_statements

    url = (
        "https://api.banco.com.br/open-banking/accounts/v2/accounts/acc-1/transactions"
        "?fromBookingDate=2026-11-01&toBookingDate=2026-11-02&creditDebitIndicator=CREDITO"
    )
    page = {"data": [], "links": {"self": url}, "meta": {"totalRecords": 0, "totalPages": 1}}
    path = tmp_path / "credits.json"
    path.write_text(json.dumps(page))
    world.snapshot([intent(1), intent(2, destination="a@b.c", **OFF)], AS_OF)
    import_statements([path], world.data, format="open-finance")
    result = run(world)
    assert breaks(result) == {("onramp_missing_credit", uid(1), None)}
    assert awaiting(result) == {("offramp_missing_payout", uid(2))}


def test_open_finance_first_page_alone_covers_nothing(world, tmp_path):
    """Page 1 of 2 lists only part of its request's movements: alone it covers nothing, so a
    credit missing from it waits (it may be on page 2) instead of being a false missing-credit
    break; once page 2 is imported, in a later import or beside page 1 in one, the period is
    covered and the credit still missing is a break."""
    from recon.statements import import_statements
    from tests.shared import open_finance_fee_pages

    paths = open_finance_fee_pages(tmp_path)
    world.snapshot([intent(1)], AS_OF)
    import_statements(paths[:1], world.data)
    first = run(world)
    assert breaks(first) == set()
    assert awaiting(first) == {("onramp_missing_credit", uid(1))}
    import_statements(paths[1:], world.data)
    assert breaks(run(world)) == {("onramp_missing_credit", uid(1), None)}
    together = World(testing.data_dir(tmp_path / "together"))
    together.snapshot([intent(1)], AS_OF)
    import_statements(paths, together.data)
    assert breaks(run(together)) == {("onramp_missing_credit", uid(1), None)}


def test_control_totals_only_on_covered_days(world):
    world.snapshot([intent(1, created=T0 - timedelta(days=2))], AS_OF)
    world.statement([line(1, amount=10_000, at=T0 - timedelta(days=2) + M)],
                    covers=(T0 - timedelta(days=1), AS_OF))  # fmt: skip
    days = {(c["business_day"], c["direction"]) for c in run(world).summary.control_totals}
    assert days == set()  # the line's day (T0-2d) is not covered; T0-1d and T0 saw nothing


def test_statements_overdue(world, tmp_path):
    """A business day no account statement covers, more than statements_overdue after it
    ended (at as_of), is listed; daily/reconcile exit 1 on it."""
    from recon.reconciliation.alerts import assess_run

    world.snapshot([intent(1, created=T0 - timedelta(days=3), status="expired")], AS_OF)
    world.statement([], covers=(T0 - timedelta(days=1, hours=13), AS_OF))  # from T0-1d local 00:00
    result = run(world)
    days = result.summary.uncovered_days
    assert days == ("2026-10-30", "2026-10-31")
    assert result.summary.statements_overdue == days  # both ended > 30 h before as_of
    verdict = assess_run(result.path)
    assert (
        verdict.exit_code == 1 and "statements overdue for 2 business day(s)" in verdict.reasons[0]
    )
    lenient = run(world, settings=ReconcileSettings(statements_overdue=timedelta(days=5)))
    assert lenient.summary.statements_overdue == ()
    assert assess_run(lenient.path).exit_code == 0


def test_several_accounts_cover_a_moment_together(world):
    """With [reconcile] accounts = [A, B], a moment is covered only when both cover it, and
    another account's lines take no part."""
    world.snapshot([intent(1)], AS_OF)
    world.coverage(T0 - timedelta(days=1), AS_OF, account="A")
    world.statement([line(1, amount=10_000)], covers=None)  # account 0001/1234567-8
    two = ReconcileSettings(accounts=("A", "B"))
    assert breaks(run(world, settings=two)) == set()
    assert awaiting(run(world, settings=two)) == {("onramp_missing_credit", uid(1))}
    world.coverage(T0 - timedelta(days=1), AS_OF, account="B")
    result = run(world, settings=two)
    # the line is another account's: it is not the service's money
    assert breaks(result) == {("onramp_missing_credit", uid(1), None)}
    assert matches(result) == set()


# ---------------------------------------------------------------- PIX keys by type


@pytest.mark.parametrize(
    ("destination", "paid", "compatible"),
    [
        ("ana.souza4412@gmail.com", "souza4412@gmail.com", False),  # never by suffix
        ("Ana.Souza@Gmail.com", "ana.souza@gmail.com", True),  # e-mail: case only
        ("+55 11 98765-4321", "11987654321", True),  # phone: E.164, +55 optional
        ("(11) 98765-4321", "+5511987654321", True),
        ("+5511987654321", "+5511987654320", False),
        ("111.222.333-44", "11122233344", True),  # CPF by digits
        ("111.222.333-44", "***.222.333-**", True),  # masked: visible digits agree
        ("111.222.333-44", "***.222.999-**", False),
        ("111.222.333-44", "**.222.333-**", False),  # length does not fit
        ("11.222.333/0001-81", "11222333000181", True),  # CNPJ
        ("123e4567-e89b-12d3-a456-426614174000", "123E4567E89B12D3A456426614174000", True),
        ("123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174999", False),
        ("33344455566", "4455566", False),
    ],
)
def test_pix_keys_compared_by_type(world, destination, paid, compatible):
    world.snapshot([intent(1, destination=destination, **OFF)], AS_OF)
    world.statement([line(1, kind="pix_out", amount=10_000, name="ANA SOUZA", doc=None,
                          key=paid, at=T0 + M)])  # fmt: skip
    got = matches(run(world))
    assert got == ({(uid(1), e2e(1), "attributes")} if compatible else set())


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("party", "written", "compatible"),
    [
        ("João Pedro da Silva", "JOAO P SILVA", True),  # initial
        ("João Pedro da Silva", "JOAO SILVA", True),  # dropped middle name and particle
        ("João Pedro da Silva", "JOAO PEDRO DA SIL", True),  # truncated to the field width
        ("João Pedro da Silva", "joão pedro, da silva.", True),  # case, accents, punctuation
        ("Maria das Dores Santos", "MARIA D SANTOS", True),
        ("João Pedro da Silva", "JOAO PAULO SILVA", False),  # another middle name
        ("João Pedro da Silva", "JOAO PEDRO SOUZA", False),  # another last name
        ("João Pedro da Silva", "PEDRO SILVA", False),  # another first name
        # a bank's 30-character cut ending inside a particle, or inside any word
        ("Antônia Bittencourt dos Reis de Araújo", "ANTONIA BITTENCOURT DOS REIS D", True),
        ("Antônia Bittencourt dos Reis de Araújo", "ANTONIA BITTENCOURT DOS RE", True),
        ("Antônia Bittencourt dos Reis de Araújo", "ANTONIA BITTENCOURT DOS SANTOS D", False),
        ("Antônia Bittencourt dos Reis de Araújo", "ANTONIO BITTENCOURT DOS REIS D", False),
        # a MEI's registered name starts with its CNPJ's root; numbers are no part of a name
        ("Alan Araujo Santos", "52.062.865 Alan Araujo Santos", True),
        ("52.062.865 ALAN ARAUJO SANTOS", "ALAN ARAUJO SANTOS", True),
        ("12345678 Alan Araujo Santos", "ALAN A SANTOS", True),
        ("52.062.865 Alan Araujo Santos", "52.062.865 Bruno Lima", False),
    ],
)
def test_names_as_banks_write_them(world, party, written, compatible):
    world.snapshot([intent(1, name=party, doc=None)], AS_OF)
    world.statement([line(1, amount=10_000, name=written, doc=None, at=T0 + M)])
    got = matches(run(world))
    assert got == ({(uid(1), e2e(1), "attributes")} if compatible else set())


def test_a_name_never_confirms_what_the_document_contradicts(world):
    world.snapshot([intent(1, name="João Pedro da Silva", doc="***.456.789-**")], AS_OF)
    world.statement([line(1, amount=10_000, name="JOAO P SILVA", doc="***.999.789-**")])
    assert matches(run(world)) == set()


def test_a_payout_from_a_psp_s_sent_pix_webhook_is_matched(world, tmp_path):
    """An Efí webhook names the key it is registered on (ours) in a sent PIX's `chave`; read
    as the key paid it contradicted the offramp's destination, and a payout that really paid
    it was an unmatched debit plus a missing payout."""
    import json

    from recon.statements import import_statements

    world.snapshot([intent(1, destination="ana@example.com", **OFF)], AS_OF)
    body = {
        "pix": [
            {
                "endToEndId": e2e(1),
                "chave": "2c3c7441-b91e-4982-3c25-6105581e18ae",
                "tipo": "SOLICITACAO",
                "status": "REALIZADO",
                "valor": "100.00",
                "horario": (T0 + 10 * M).isoformat(),
                "gnExtras": {"idEnvio": "ENVIO1"},
                "favorecido": {"nome": "ANA SOUZA"},
            }
        ]
    }
    path = tmp_path / "webhook.json"
    path.write_text(json.dumps(body))
    import_statements([path], world.data)
    assert matches(run(world)) == {(uid(1), e2e(1), "attributes")}


@pytest.mark.parametrize("stored", ["as imported now", "as an older recon stored it"])
def test_a_document_masked_with_bullets_agrees_with_stars(world, monkeypatch, stored):
    """Nubank masks a payer's CPF with bullets (•••.456.789-••), the API with stars: the same
    visible digits agree, whether the line was stored with its bullets turned into stars (an
    import today) or as written (data imported before)."""
    if stored == "as an older recon stored it":
        monkeypatch.setattr(testing, "personal_columns", lambda arrays: {})
    world.snapshot([intent(1, name="ANA SOUZA", doc="***.456.789-**")], AS_OF)
    world.statement([line(1, amount=10_000, name="ANA SOUZA", doc="•••.456.789-••")])
    assert matches(run(world)) == {(uid(1), e2e(1), "attributes")}


def test_compatible_names_still_need_a_unique_candidate(world):
    a = intent(1, name="João Pedro da Silva", doc=None)
    b = intent(2, name="João Silva", doc=None, created=T0 + M)
    world.snapshot([a, b], AS_OF)
    world.statement([line(1, amount=10_000, name="JOAO P SILVA", doc=None, at=T0 + 5 * M)])
    assert breaks(run(world)) >= {("ambiguous_match", None, e2e(1))}


# ---------------------------------------------------------------- every pass in time


def test_reference_pass_needs_an_intent_created_before_the_booking(world):
    """A line naming an intent created a day after it was booked is no evidence (issue:
    another account's CSV matched intents created up to 24 days later)."""
    world.snapshot([intent(1, client_reference="ORD-777001", created=T0 + 2 * H)], AS_OF)
    world.statement([line(1, amount=10_000, description="ORD-777001", at=T0)])
    result = run(world)
    assert matches(result) == set()
    assert ("unmatched_credit", None, e2e(1)) in breaks(result)


def test_txid_pass_in_time_with_clock_skew(world):
    """Booked 40 s before the intent's created_at (clocks differ): within the default
    60 s clock_skew; at 0 skew it is not paired."""
    world.snapshot([intent(1, created=T0)], AS_OF)
    world.statement([line(1, amount=10_000, txid=tx(1), at=T0 - timedelta(seconds=40))])
    assert matches(run(world)) == {(uid(1), e2e(1), "txid")}
    strict = run(world, settings=ReconcileSettings(clock_skew=timedelta(0)))
    assert matches(strict) == set()


def test_date_only_booking_is_in_time_on_its_day(world):
    """A CNAB 240 / bank CSV booking is local midnight: it may pay an intent created later
    that day."""
    midnight = T0 - timedelta(hours=10)  # 00:00 São Paulo of T0's day
    world.snapshot([intent(1, created=T0)], AS_OF)
    world.statement([line(1, amount=10_000, txid=tx(1), at=midnight)])
    assert matches(run(world)) == {(uid(1), e2e(1), "txid")}


# ---------------------------------------------------------------- windows


def test_offramp_window_ends_at_completion_plus_grace(world):
    """created_at .. updated_at (completion) + offramp_payout_grace (2 h), inclusive: two
    payouts of one amount to one key on different days are no longer ambiguous."""
    day1 = intent(1, destination="a@b.c", updated=T0 + H, **OFF)
    day2 = intent(2, destination="a@b.c", created=T0 + timedelta(days=1),
                  updated=T0 + timedelta(days=1, hours=1), **OFF)  # fmt: skip
    world.snapshot([day1, day2], T0 + timedelta(days=2))
    world.statement([
        line(1, kind="pix_out", amount=10_000, name="ANA SOUZA", doc=None, key="a@b.c",
             at=T0 + 3 * H),  # completion + grace, exactly: inside
        line(2, kind="pix_out", amount=10_000, name="ANA SOUZA", doc=None, key="a@b.c",
             at=T0 + timedelta(days=1, hours=3, seconds=1)),  # a second past: outside
    ])  # fmt: skip
    result = run(world)
    assert matches(result) == {(uid(1), e2e(1), "attributes")}
    assert breaks(result) == {
        ("offramp_missing_payout", uid(2), None),
        ("unmatched_debit", None, e2e(2)),
    }


# ---------------------------------------------------------------- refunds per credit


def _refunded(world, *parts: int, updated=T0 + H, as_of=AS_OF):
    world.snapshot([intent(1, amount=20_000, status="refunded", updated=updated)], as_of)
    lines = [line(1, amount=20_000, txid=tx(1), at=T0 + M)]
    lines += [
        line(100 + i, kind="pix_refund_out", amount=cents, refund_of=e2e(1), at=T0 + (10 + i) * M)
        for i, cents in enumerate(parts)
    ]
    world.statement(lines)
    return run(world)


def test_devolucoes_of_one_credit_are_summed(world):
    result = _refunded(world, 12_000, 8_000)
    assert breaks(result) == set()
    assert result.summary.checks_passed
    assert result.summary.explained_by.get("split_refund", 0) == 0  # they net to zero


def test_refund_mismatch_is_one_break_per_credit(world):
    result = _refunded(world, 10_000, 9_000, as_of=T0 + timedelta(days=2))
    (row,) = exception_rows(result)
    assert (row["category"], row["intent_id"], row["end_to_end_id"]) == (
        "refund_amount_mismatch", uid(1), e2e(101, "D"))  # fmt: skip
    assert (row["expected_cents"], row["actual_cents"]) == (20_000, 19_000)
    assert "R$ 200,00, recebido" in row["reason"]  # pt-BR, as the tests speak by default
    assert "devoluções que somam R$ 190,00 (partes: 2;" in row["reason"]
    assert "ainda faltam R$ 10,00 a devolver" in row["reason"]
    assert result.summary.checks_passed


def test_a_refund_under_way_is_not_a_break_until_refund_grace(world):
    recent = _refunded(world, 10_000, updated=AS_OF - H)
    assert breaks(recent) == set() and recent.summary.checks_passed


def test_a_refund_under_way_breaks_after_refund_grace(world):
    old = _refunded(world, 10_000, updated=T0 + H, as_of=T0 + timedelta(days=2))
    assert {c for c, _, _ in breaks(old)} == {"refund_amount_mismatch"}


# ---------------------------------------------------------------- returned payouts


def test_returned_payout_on_a_completed_offramp(world):
    world.snapshot([intent(1, client_reference="OFF-9001", destination="a@b.c", **OFF)], AS_OF)
    world.statement([
        line(1, kind="pix_out", amount=10_000, description="OFF-9001", name="ANA SOUZA",
             doc=None, key="a@b.c", at=T0 + M),
        line(2, kind="pix_refund_in", amount=10_000, refund_of=e2e(1), at=T0 + H),
    ])  # fmt: skip
    result = run(world, lang="en")
    (row,) = exception_rows(result)
    assert (row["category"], row["priority"]) == ("offramp_payout_returned", "P1")
    assert "came back" in row["reason"] and result.summary.checks_passed


def test_returned_payout_on_a_refunded_offramp_is_clean(world):
    """completed -> refunded on an offramp: the payout came back and the tokens were
    returned; no break."""
    world.snapshot([intent(1, client_reference="OFF-9002", destination="a@b.c",
                           status="refunded", **OFF)], AS_OF)  # fmt: skip
    world.statement([
        line(1, kind="pix_out", amount=10_000, description="OFF-9002", name="ANA SOUZA",
             doc=None, key="a@b.c", at=T0 + M),
        line(2, kind="pix_refund_in", amount=10_000, refund_of=e2e(1), at=T0 + H),
    ])  # fmt: skip
    result = run(world)
    assert breaks(result) == set() and result.summary.checks_passed


def test_a_line_that_is_no_pix_gets_advice_that_fits_it(world):
    """A credit or debit that does not say PIX (a cashback, a yield, a TED: kind other) is
    still a break no intent explains, but "identify the payer or return the money" sent a
    person after a payer who may not exist: its reason says what such a line may be and
    what to do."""
    world.snapshot([intent(9, created=T0 + 3 * H)], AS_OF)  # paid by neither line
    cashback = line(1, amount=1_234, name=None, doc=None, description="CASHBACK PIX")
    cashback = {**cashback, "kind": "other", "amount_cents": 1_234, "direction": "credit"}
    ted = line(2, kind="other", amount=5_000, name=None, doc=None, description="TED ENVIADA")
    world.statement([cashback, ted])
    rows = exception_rows(run(world, lang="en"))
    reasons = {r["category"]: r["reason"] for r in rows if r["category"].startswith("unmatched")}
    assert set(reasons) == {"unmatched_credit", "unmatched_debit"}
    for reason in reasons.values():
        assert "does not say PIX" in reason and "record why (recon resolve)" in reason
    assert "return the money" not in reasons["unmatched_credit"]
    assert "if a payer sent it, identify them" in reasons["unmatched_credit"]
    assert "find who authorised it" in reasons["unmatched_debit"]


def _said(at) -> str:
    """Banco do Brasil's text of a PIX received at `at`: 'Pix - Recebido - 31/10 11:10 …'."""
    local = at.astimezone(testing.BUSINESS_TZ)
    return f"Pix - Recebido - {local:%d/%m %H:%M} 000***456789** MARIA SILVA"


@pytest.mark.parametrize(
    "description",
    [
        "Pix - Recebido - 20/10 11:10 MARIA SILVA",  # 13 days before the booking: not it
        "Pix - Recebido - 31/02 11:10 MARIA SILVA",  # no such date
        "Pix - Recebido - 03/11 11:10 MARIA SILVA",  # after the booking's day
        "PIX TRANSF  MARIA S20/10",  # Itaú's closing day: 13 days before the booking
        "PIX TRANSF  MARIA S31/02",
        "PIX TRANSF  MARIA S03/11",
    ],
)
def test_a_time_in_the_text_that_cannot_be_the_pix_is_ignored(world, description: str) -> None:
    world.snapshot(
        [intent(1, created=T0 - timedelta(days=2), expires=T0 - timedelta(days=2) + H / 2)],
        AS_OF,
    )
    world.statement([line(1, at=T0 - timedelta(hours=10), description=description)])
    assert matches(run(world)) == set()


def test_a_time_past_23_59_is_no_time(world) -> None:
    """'31/10 24:00' names no time of day: DuckDB's cast read it as 1 November 00:00, which
    put the Monday line in the window of an onramp of Saturday night (23:50 .. 00:20)."""
    night = datetime(2026, 10, 31, 23, 50, tzinfo=testing.BUSINESS_TZ)
    world.snapshot([intent(1, created=night, expires=night + H / 2)], AS_OF)
    text = "Pix - Recebido - 31/10 24:00 MARIA SILVA"
    world.statement([line(1, at=T0 - timedelta(hours=10), description=text)])
    assert matches(run(world)) == set()


def _itau(on, name: str = "MARIA S") -> str:
    """Itaú's text of a PIX made on `on`: the name cut to its field, the PIX's day after it
    ('PIX TRANSF  MARIA S04/10')."""
    return f"PIX TRANSF  {name}{on.astimezone(testing.BUSINESS_TZ):%d/%m}"


@pytest.mark.parametrize("says", [True, False])
@pytest.mark.parametrize("form", ["time", "day"])
def test_a_pix_booked_days_later_matches_by_the_time_its_text_says(
    world, form: str, says: bool
) -> None:
    """Banco do Brasil and Itaú book a PIX of the weekend on Monday, on a date; BB's text
    says when the PIX was made (a day and a time), Itaú's ends with its day. That places the
    line in the onramp's window (Saturday 10:00 .. 10:30 + 30 min); the Monday booking alone
    is outside it, and both sides are breaks."""
    saturday = T0 - timedelta(days=2)
    world.snapshot([intent(1, created=saturday, expires=saturday + H / 2)], AS_OF)
    monday = T0 - timedelta(hours=10)  # 00:00 São Paulo of T0's day: booked on a date
    said = {"time": _said(saturday + timedelta(minutes=10)), "day": _itau(saturday)}[form]
    silent = {"time": "Pix - Recebido", "day": "PIX TRANSF  MARIA S"}[form]
    world.statement([line(1, at=monday, name=None, doc=None, description=said if says else silent)])
    result = run(world)
    if says:
        assert matches(result) == {(uid(1), e2e(1), "attributes")}
    else:
        assert matches(result) == set()
        assert ("unmatched_credit", None, e2e(1)) in breaks(result)


def test_the_day_a_text_says_is_that_day_only(world) -> None:
    """A PIX the text says was made on Saturday cannot pay an onramp created on Monday (it
    did not exist yet), though the line is booked on Monday; the Monday PIX pays it."""
    saturday, monday = T0 - timedelta(days=2), T0 - timedelta(hours=10)
    world.snapshot([intent(1, created=T0, expires=T0 + H / 2)], AS_OF)
    world.statement([
        line(1, at=monday, name=None, doc=None, description=_itau(saturday)),
        line(2, at=monday, name=None, doc=None, description=_itau(monday)),
    ])  # fmt: skip
    result = run(world)
    assert matches(result) == {(uid(1), e2e(2), "attributes")}
    assert ("unmatched_credit", None, e2e(1)) in breaks(result)


def test_itau_s_csv_weekend_pix_matches_its_onramp(world, tmp_path) -> None:
    """The whole way, from Itaú's own CSV: a PIX of Saturday booked on Monday with the name
    cut to its field and the day after it, beside one of Monday; each matches its onramp."""
    from recon.statements import import_statements

    saturday = T0 - timedelta(days=2)
    world.snapshot(
        [
            intent(1, name="Maria Silva", doc=None, created=saturday, expires=saturday + H / 2),
            intent(2, name="João Pedro da Silva", doc=None, created=T0, expires=T0 + H / 2),
        ],
        AS_OF,
    )
    path = tmp_path / "extrato-itau.csv"
    path.write_text(
        "data;lançamento;ag./origem;valor (R$);saldos (R$)\n"
        "30/10/2026;SALDO ANTERIOR;;;1.000,00\n"
        "02/11/2026;PIX TRANSF  MARIA S31/10;;100,00;\n"
        "02/11/2026;PIX TRANSF  JOAO PE02/11;;100,00;\n"
        "02/11/2026;SALDO TOTAL DISPONÍVEL DIA;;;1.200,00\n",
        encoding="latin-1",
    )
    import_statements([path], world.data)
    result = run(world)
    assert {(i, rule) for i, _line, rule in matches(result)} == {
        (uid(1), "attributes"),
        (uid(2), "attributes"),
    }
    assert breaks(result) == set()


def test_a_date_with_its_year_is_no_closing_day(world) -> None:
    """'… 15/01/11' is a date (15 January 2011), not a PIX made on 1 November: the line
    stays on its Monday booking, outside the Sunday onramp's window."""
    sunday = T0 - timedelta(days=1)
    world.snapshot([intent(1, created=sunday, expires=sunday + H / 2)], AS_OF)
    text = "PIX RECEBIDO MARIA S 15/01/11"
    world.statement([line(1, at=T0 - timedelta(hours=10), name=None, description=text)])
    assert matches(run(world)) == set()
