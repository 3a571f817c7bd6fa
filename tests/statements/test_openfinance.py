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

from .conftest import FIXTURES, by_e2e

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
