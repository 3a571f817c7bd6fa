"""Open Finance Brasil accounts API transaction pages (issue 14 item 5)."""

from __future__ import annotations

import copy
import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from recon.config import DataDir
from recon.errors import StatementError, StatementParseError
from recon.statements import import_statements
from recon.statements.lines import days_coverage
from recon.statements.openfinance import parse_documents, parse_file
from recon.statements.sniff import sniff_format

from .conftest import FIXTURES, by_e2e, view_rows

PAGE: dict[str, Any] = json.loads((FIXTURES / "open_finance_page.json").read_text())
E1 = "E18236120202611011000s0123456789"


def test_fixture() -> None:
    result = parse_file(FIXTURES / "open_finance_page.json")
    assert result.bad == []
    pix, fee = result.all_rows()
    assert pix[1:6] == ("2026-11-01T13:00:00.358Z", 11000, "credit", "pix_in", E1)
    assert pix[9] == "43908445778"
    assert pix[11] == "PIX RECEBIDO MARIA DA SILVA banco 260 ag 0001 conta 67890854360 dv 4"
    assert pix[12] is None  # the transactionId is the PIX id itself
    assert fee[2:5] == (-350, "debit", "fee") and fee[12] == "TRF20261101000002"
    assert any("LANCAMENTO_FUTURO 1" in c for c in result.checks)  # scheduled: no money
    assert any("= meta.totalRecords" in c for c in result.checks)
    assert result.coverage == [
        days_coverage(
            date(2026, 11, 1), date(2026, 11, 1), "open-finance fromBookingDate/toBookingDate"
        )
    ]


def test_sniffed_and_imported(data_dir: DataDir) -> None:
    assert sniff_format(FIXTURES / "open_finance_page.json") == "open-finance"
    report = import_statements([FIXTURES / "open_finance_page.json"], data_dir)
    assert (report.read, report.imported) == (2, 2)
    assert by_e2e(data_dir)[E1]["source_format"] == "open-finance"


def test_v1_number_amount_is_exact() -> None:
    item = {
        "transactionId": "X1",
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": "DEBITO",
        "transactionName": "TED ENVIADA",
        "type": "TED",
        "amount": json.loads("1000.04", parse_float=__import__("decimal").Decimal),
        "transactionCurrency": "BRL",
        "transactionDate": "2026-11-03",
    }
    (row,) = parse_documents([{"data": [item]}], "p.json").all_rows()
    assert row[1:5] == ("2026-11-03T00:00:00-03:00", -100004, "debit", "other")


def test_list_of_pages_and_fallback_coverage(tmp_path: Path) -> None:
    first = copy.deepcopy(PAGE)
    second = copy.deepcopy(PAGE)
    for page in (first, second):
        page["links"] = {}
        page.pop("meta")
    second["data"] = [
        {
            **second["data"][1],
            "transactionId": "TRF2",
            "transactionDateTime": "2026-11-04T15:00:00Z",
        }
    ]
    result = parse_documents([first, second], "pages.json")
    assert [r[0] for r in result.all_rows()] == [1, 2, 4]
    assert result.coverage is None  # the importer takes the lines' days


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"creditDebitType": None}, "creditDebitType"),
        ({"creditDebitType": "AMBOS"}, "creditDebitType"),
        ({"completedAuthorisedPaymentType": "TALVEZ"}, "completedAuthorisedPaymentType"),
        ({"transactionAmount": {"amount": "1.001", "currency": "BRL"}}, "transactionAmount.amount"),
        ({"transactionAmount": {"amount": "-1.00", "currency": "BRL"}}, "transactionAmount.amount"),
        (
            {"transactionAmount": {"amount": "1.00", "currency": "USD"}},
            "transactionAmount.currency",
        ),
        ({"transactionDateTime": "amanha"}, "transactionDateTime"),
    ],
)
def test_bad_items(tmp_path: Path, data_dir: DataDir, change: dict[str, Any], field: str) -> None:
    page = copy.deepcopy(PAGE)
    page["data"][1].update(change)
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.field, err.value.line) == (field, 2)


def test_missing_page_detected(tmp_path: Path, data_dir: DataDir) -> None:
    page = copy.deepcopy(PAGE)
    page["meta"]["totalRecords"] = 5
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(StatementError, match=r"meta.totalRecords says 5"):
        import_statements([path], data_dir)


def test_not_a_page(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"data": {"creditDebitType": "CREDITO"}}))
    with pytest.raises(StatementError, match="not an Open Finance"):
        import_statements([path], data_dir, format="open-finance")


# ---------------------------------------------------------------- what a request covers
# A covered period with no line in it means "nothing moved": a page covers only what its
# request (links.self) listed, and nothing when its lines contradict that request.

SELF = "https://api.banco.com.br/open-banking/accounts/v2/accounts/acc-1/transactions"


def _page(query: str, *items: dict[str, Any]) -> dict[str, Any]:
    return {
        "data": list(items),
        "links": {"self": f"{SELF}?{query}"},
        "meta": {"totalRecords": len(items), "totalPages": 1},
    }


def _credit(**extra: Any) -> dict[str, Any]:
    return {**PAGE["data"][0], **extra}


def _debit(**extra: Any) -> dict[str, Any]:
    return {**PAGE["data"][1], **extra}


def test_credits_only_request_covers_the_credit_side(tmp_path: Path, data_dir: DataDir) -> None:
    page = _page(
        "fromBookingDate=2026-11-01&toBookingDate=2026-11-03&creditDebitIndicator=CREDITO",
        _credit(),
    )
    (period,) = parse_documents([page], "p.json").coverage
    assert period.scope == "received"  # the engine's scope that covers credits only
    assert period.basis.endswith("creditDebitIndicator=CREDITO")
    path = tmp_path / "credits.json"
    path.write_text(json.dumps(page))
    import_statements([path], data_dir)
    (row,) = view_rows(data_dir, "statement_coverage")
    assert row["scope"] == "received"


def test_credits_only_request_without_dates_covers_the_lines_days_for_credits(
    tmp_path: Path,
) -> None:
    from recon.statements.inspect import inspect_statements

    path = tmp_path / "credits.json"
    path.write_text(json.dumps(_page("creditDebitIndicator=CREDITO", _credit())))
    (report,), errors = inspect_statements([path], tmp_path / "data")
    assert errors == []
    assert [(p["first"], p["last"], p["scope"]) for p in report["periods"]] == [
        ("2026-11-01", "2026-11-01", "received")
    ]


@pytest.mark.parametrize(
    ("query", "why"),
    [
        ("creditDebitIndicator=DEBITO", "debits only"),
        ("creditDebitIndicator=AMBOS", "not CREDITO or DEBITO"),
        ("type=PIX", "query parameters recon does not know (type)"),
    ],
)
def test_a_request_that_narrows_the_listing_otherwise_covers_nothing(
    tmp_path: Path, data_dir: DataDir, query: str, why: str
) -> None:
    page = _page(f"fromBookingDate=2026-11-01&toBookingDate=2026-11-01&{query}", _debit())
    result = parse_documents([page], "p.json")
    assert result.coverage == []
    assert len(result.all_rows()) == 1  # its lines are read all the same
    assert any(why in w and "no statement period" in w for w in result.warnings)
    path = tmp_path / "debits.json"
    path.write_text(json.dumps(page))
    report = import_statements([path], data_dir)
    assert report.imported == 1 and view_rows(data_dir, "statement_coverage") == []


@pytest.mark.parametrize(
    "query",
    [
        "fromBookingDate=2025-11-01&toBookingDate=2025-11-03",  # the lines are a year later
        "toBookingDate=2025-11-03",
        "fromBookingDate=2026-11-02",
    ],
)
def test_lines_outside_the_requested_period_cover_nothing(query: str) -> None:
    result = parse_documents([_page(query, _credit(), _debit())], "p.json")
    assert result.coverage == []
    assert len(result.all_rows()) == 2
    (warning,) = result.warnings
    assert "lines booked 2026-11-01..2026-11-01 fall outside the requested" in warning


def test_a_debit_in_a_credits_only_page_covers_nothing() -> None:
    page = _page("creditDebitIndicator=CREDITO", _credit(), _debit())
    result = parse_documents([page], "p.json")
    assert result.coverage == [] and any("a debit line" in w for w in result.warnings)


def test_lines_inside_a_one_sided_request_keep_the_lines_days() -> None:
    result = parse_documents([_page("fromBookingDate=2026-10-01", _credit())], "p.json")
    assert result.coverage is None and result.lines_scope == "all" and result.warnings == []


# ---------------------------------------------------------------- fractions of a cent
# The API allows 4 decimals and the official mock data fills them ('9848.2852'). Money moves
# in whole cents and recon never rounds: such an amount is refused, by name.


def test_an_amount_with_a_fraction_of_a_cent_is_refused_by_name(
    tmp_path: Path, data_dir: DataDir
) -> None:
    page = copy.deepcopy(PAGE)
    page["data"][1]["transactionAmount"]["amount"] = "9848.2852"
    path = tmp_path / "page.json"
    path.write_text(json.dumps(page))
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.file, err.value.line, err.value.field) == (
        str(path),
        2,
        "transactionAmount.amount",
    )
    message = str(err.value)
    assert "item 2 (transactionId 'TRF20261101000002')" in message
    assert "'9848.2852' has a fraction of a cent" in message
    assert "never rounds" in message and "\n" not in message
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.imported, report.quarantined) == (1, 1)


@pytest.mark.parametrize("amount", ["10.0050", "10.001", "10.10000001"])
def test_every_fraction_of_a_cent_is_named_so(amount: str) -> None:
    page = copy.deepcopy(PAGE)
    page["data"][0]["transactionAmount"]["amount"] = amount
    (bad,) = parse_documents([page], "p.json").bad
    assert bad.field == "transactionAmount.amount" and "fraction of a cent" in bad.reason


def test_a_v1_number_with_a_fraction_of_a_cent_names_its_own_field() -> None:
    from decimal import Decimal

    item = {
        "transactionId": "X1",
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": "DEBITO",
        "type": "TED",
        "amount": Decimal("9848.2852"),
        "transactionCurrency": "BRL",
        "transactionDate": "2026-11-03",
    }
    (bad,) = parse_documents([{"data": [item]}], "p.json").bad
    assert bad.field == "amount" and "'9848.2852' has a fraction of a cent" in bad.reason
    (bad,) = parse_documents([{"data": [{**item, "transactionCurrency": "USD"}]}], "p").bad
    assert bad.field == "transactionCurrency"


def test_trailing_zeros_past_the_cents_are_read() -> None:
    page = copy.deepcopy(PAGE)
    page["data"][0]["transactionAmount"]["amount"] = "110.000000"
    assert parse_documents([page], "p.json").all_rows()[0][2] == 11000
