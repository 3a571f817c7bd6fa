"""Asaas payments (GET /v3/payments pages): gross, fee and net, what is money, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.config import DataDir
from recon.errors import StatementError
from recon.statements import import_statements
from recon.statements.formats.asaas import parse_documents, parse_file
from recon.statements.sniff import sniff_bytes, sniff_format

from ..conftest import FIXTURES, view_rows

PAGE = json.loads((FIXTURES / "asaas_payments.json").read_text(encoding="utf-8"))


def _payment(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "object": "payment",
        "id": "pay_1",
        "value": Decimal("10.00"),
        "netValue": Decimal("9.01"),
        "billingType": "PIX",
        "status": "RECEIVED",
        "paymentDate": "2026-11-03",
        "deleted": False,
    }
    return base | fields


def test_fixture_gross_fee_net() -> None:
    result = parse_file(FIXTURES / "asaas_payments.json")
    assert result.bad == []
    assert result.coverage == []  # a list of payments states no period
    pix, boleto, refunded = result.all_rows()
    assert pix[1:5] == ("2026-11-01T00:00:00-03:00", 12891, "credit", "pix_in")
    assert pix[11:] == ("Pedido 056984 ORD-056984", "pay_080225913252", 99)
    assert boleto[2] + boleto[13] == 10000 and boleto[4] == "other"
    assert refunded[2:5] == (4901, "credit", "pix_in") and refunded[13] == 99
    assert any("1 payments moved no money (PENDING 1)" in c for c in result.checks)


def test_sniffed_imported_and_matched_on_the_gross(data_dir: DataDir) -> None:
    path = FIXTURES / "asaas_payments.json"
    assert sniff_format(path) == "asaas"
    report = import_statements([path], data_dir, account="asaas")
    assert (report.read, report.imported) == (3, 3)
    rows = {r["bank_reference"]: r for r in view_rows(data_dir)}
    first = rows["pay_080225913252"]
    assert (first["amount_cents"], first["fee_cents"]) == (12891, 99)
    assert first["source_format"] == "asaas"


def test_a_webhook_body_and_a_bare_payment_are_read() -> None:
    body = {"event": "PAYMENT_RECEIVED", "payment": _payment()}
    assert sniff_bytes(json.dumps(body, default=str).encode()) == "asaas"
    result = parse_documents([body, _payment(id="pay_2")], "w.json")
    assert [(r[2], r[13], r[12]) for r in result.all_rows()] == [
        (901, 99, "pay_1"),
        (901, 99, "pay_2"),
    ]


@pytest.mark.parametrize(
    ("fields", "field", "reason"),
    [
        ({"value": Decimal("10.001")}, "value", "fraction of a cent"),
        ({"netValue": Decimal("10.50")}, "netValue", "at most value"),
        ({"netValue": Decimal("-1")}, "netValue", "negative"),
        ({"value": "10.00"}, "value", "must be a number"),
        ({"paymentDate": "03/11/2026"}, "paymentDate", "not a date"),
        ({"paymentDate": None}, "paymentDate", "missing"),
        ({"status": "WHATEVER"}, "status", "unknown status"),
    ],
)
def test_a_bad_payment_is_a_bad_line(fields: dict[str, object], field: str, reason: str) -> None:
    result = parse_documents([_payment(**fields)], "p.json")
    assert result.rows == []
    (bad,) = result.bad
    assert bad.field == field and reason in bad.reason


def test_a_document_that_is_not_asaas_is_an_error() -> None:
    with pytest.raises(StatementError, match="not Asaas payments"):
        parse_documents([{"foo": 1}], "x.json")
    with pytest.raises(StatementError, match="'data' must be a list"):
        parse_documents([{"object": "list", "data": {}}], "x.json")


@pytest.mark.parametrize(
    "content",
    [
        '{"object": "list", "hasMore": false, "data": {"x": 1}}',
        '{"object": "list", "hasMore": false, "data": [',
    ],
)
def test_the_cli_refuses_a_broken_file_in_one_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "asaas.json"
    path.write_text(content, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "recon", "statements", "import", str(path), "--format", "asaas",
         "--data", str(tmp_path / "data")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recon: error: "), done.stderr


@given(
    st.lists(
        st.tuples(st.integers(1, 10**9), st.integers(0, 10**6), st.booleans()),
        min_size=1,
        max_size=20,
    )
)
def test_net_and_fee_add_up_to_the_value_whatever_its_written_form(
    cases: list[tuple[int, int, bool]],
) -> None:
    """Asaas writes money as JSON numbers (129.9, 100, 98.01): read exactly, the fee is
    value - netValue and the line's amount the net."""
    payments = []
    for i, (net, fee, short) in enumerate(cases):
        gross = net + fee

        def number(cents: int, short: bool = short) -> str:
            text = f"{cents // 100}.{cents % 100:02d}"
            return text.rstrip("0").rstrip(".") if short else text

        payments.append(
            f'{{"object": "payment", "id": "pay_{i}", "status": "RECEIVED", '
            f'"billingType": "PIX", "paymentDate": "2026-11-03", '
            f'"value": {number(gross)}, "netValue": {number(net)}}}'
        )
    text = '{"object": "list", "hasMore": false, "data": [' + ", ".join(payments) + "]}"
    from recon.statements.lines import json_documents

    result = parse_documents(json_documents(text, "p.json"), "p.json")
    assert result.bad == []
    assert [(r[2], r[13]) for r in result.all_rows()] == [(n, f) for n, f, _ in cases]
