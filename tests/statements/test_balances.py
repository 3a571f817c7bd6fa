"""The balances each statement format states, as the parsers hand them to the balance walk
(ParseResult.balances), and as an import stores them (statement_stated_balances)."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pyarrow.parquet as pq

from recon import catalog
from recon.config import DataDir
from recon.statements import stored
from recon.statements.formats import camt, cnab240, ofx
from recon.statements.formats import csv as csv_format
from recon.statements.importer import import_statements, read_source
from recon.statements.lines import Balance

FIXTURES = Path(__file__).parent / "fixtures"


def walked(balances: list[Balance]) -> list[tuple[date, str, int]]:
    return [(b.day, b.side, b.cents) for b in balances]


def ofx_text(*, ledger: str = "1500.00", asof: str = "20261103", avail: str = "9999.00") -> str:
    return f"""OFXHEADER:100
DATA:OFXSGML
VERSION:102

<OFX>
<BANKMSGSRSV1><STMTTRNRS><STMTRS>
<CURDEF>BRL
<BANKACCTFROM><BANKID>0341<BRANCHID>0001<ACCTID>12345-6</BANKACCTFROM>
<BANKTRANLIST>
<DTSTART>20261103
<DTEND>20261103
<STMTTRN>
<TRNTYPE>CREDIT
<DTPOSTED>20261103100000[-3:BRT]
<TRNAMT>500.00
<FITID>1
<MEMO>TED RECEBIDA
</STMTTRN>
</BANKTRANLIST>
<LEDGERBAL><BALAMT>{ledger}<DTASOF>{asof}</LEDGERBAL>
<AVAILBAL><BALAMT>{avail}<DTASOF>{asof}</AVAILBAL>
</STMTRS></STMTTRNRS></BANKMSGSRSV1>
</OFX>
"""


def test_ofx_ledger_balance_is_the_closing_of_its_day_and_availbal_is_not_walked() -> None:
    result = ofx.parse_text(ofx_text(), "extrato.ofx")
    assert walked(result.balances) == [(date(2026, 11, 3), "closing", 150_000)]
    assert result.balances[0].basis == "ofx LEDGERBAL"
    assert any("AVAILBAL 999900 cents (available, not the ledger" in c for c in result.checks)


def test_ofx_balance_dated_with_a_time_belongs_to_that_local_day() -> None:
    # 01:30 UTC on the 4th is 22:30 of the 3rd in São Paulo
    result = ofx.parse_text(ofx_text(asof="20261104013000[0:GMT]"), "extrato.ofx")
    assert walked(result.balances) == [(date(2026, 11, 3), "closing", 150_000)]
    assert result.balances[0].at_us is not None


def test_ofx_balance_at_the_period_s_exclusive_end_closes_its_last_day() -> None:
    text = ofx_text(asof="20261104000000[-3:BRT]").replace(
        "<DTEND>20261103", "<DTEND>20261104000000[-3:BRT]"
    )
    result = ofx.parse_text(text, "extrato.ofx")
    assert walked(result.balances) == [(date(2026, 11, 3), "closing", 150_000)]
    # the time of the export, the morning after: the balance at the period's end
    later = ofx_text(asof="20261104091500[-3:BRT]")
    assert walked(ofx.parse_text(later, "extrato.ofx").balances)[0][0] == date(2026, 11, 3)


def test_ofx_balance_without_a_date_or_of_several_accounts_is_only_a_check() -> None:
    assert ofx.parse_text(ofx_text(asof=""), "extrato.ofx").balances == []
    text = ofx_text()
    two = text.replace("<STMTRS>", "<STMTRS>", 1).replace(
        "</STMTRS>", "</STMTRS><STMTRS>" + text.split("<STMTRS>")[1].split("</STMTRS>")[0]
        .replace("12345-6", "99999-9") + "</STMTRS>",
    )  # fmt: skip
    result = ofx.parse_text(two, "extrato.ofx")
    assert result.balances == []
    assert sum("LEDGERBAL" in c for c in result.checks) == 2


def test_cnab240_batch_opening_and_closing_are_their_dates_balances() -> None:
    result = cnab240.parse_file(FIXTURES / "extrato.cnab240")
    assert walked(result.balances) == [
        (date(2026, 11, 1), "opening", 100_000),
        (date(2026, 11, 3), "closing", 237_194),
    ]
    assert [b.basis for b in result.balances] == ["cnab240 saldo_inicial", "cnab240 saldo_final"]


def test_camt_opening_and_closing_booked_balances() -> None:
    result = camt.parse_file(FIXTURES / "camt053_v08.xml")
    assert walked(result.balances) == [
        (date(2026, 11, 1), "opening", 100_000),
        (date(2026, 11, 1), "closing", 110_500),
    ]


def test_camt_previously_closed_balance_is_the_closing_of_its_day() -> None:
    text = (FIXTURES / "camt053_v08.xml").read_text(encoding="utf-8")
    assert "<Cd>OPBD</Cd>" in text
    prcd = text.replace("<Cd>OPBD</Cd>", "<Cd>PRCD</Cd>", 1)
    prcd = prcd.replace("<Dt><Dt>2026-11-01</Dt></Dt>", "<Dt><Dt>2026-10-31</Dt></Dt>", 1)
    result = camt.parse_bytes(prcd.encode(), "camt.xml")
    assert (date(2026, 10, 31), "closing", 100_000) in walked(result.balances)
    assert result.balances[0].basis == "camt PRCD"


def test_bank_csv_balance_rows_and_running_saldo() -> None:
    _fmt, result = read_source(FIXTURES / "extrato_banco.csv", "auto")
    assert walked(result.balances) == [
        (date(2026, 11, 1), "opening", 100_000),  # SALDO ANTERIOR, before any line
        (date(2026, 11, 1), "closing", 111_000),  # the day's last line's Saldo
        (date(2026, 11, 2), "closing", -262_806),
        (date(2026, 11, 3), "closing", 737_194),  # SALDO DO DIA after the day's lines
    ]


def test_csv_day_whose_last_line_states_no_saldo_has_no_closing(tmp_path: Path) -> None:
    text = (
        "Data;Histórico;Documento;Valor;Saldo\n"
        "01/11/2026;TED RECEBIDA;1;100,00;1.100,00\n"
        "01/11/2026;TARIFA;2;-1,00;\n"
        "02/11/2026;TED RECEBIDA;3;50,00;1.149,00\n"
    )
    result = csv_format.parse_text(text, "x.csv", csv_format.BANK)
    assert walked(result.balances) == [
        (date(2026, 11, 1), "opening", 100_000),  # the first line's Saldo less its amount
        (date(2026, 11, 2), "closing", 114_900),
    ]


def test_a_card_bill_states_no_account_balance() -> None:
    text = (
        "Data;Histórico;Documento;Valor;Saldo\n01/11/2026;SALDO ANTERIOR;;;1.000,00\n"
        "01/11/2026;LOJA;1;-10,00;990,00\n"
    )
    result = csv_format.parse_text(text, "fatura.csv", replace(csv_format.BANK, card=True))
    assert result.balances == []


def test_an_import_stores_each_balance_once(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data").ensure()
    files = [FIXTURES / "extrato_banco.csv", FIXTURES / "extrato.cnab240"]
    import_statements(files, data, account="itau")
    import_statements(files, data, account="itau")  # again: nothing new
    stored_files = stored.balances_files(data)
    assert len(stored_files) == 1
    table = pq.read_table(stored_files[0])
    assert table.num_rows == 6
    frame = catalog.sql(
        "SELECT CAST(day AS VARCHAR), side, balance_cents, source_format "
        "FROM statement_stated_balances "
        "ORDER BY source_format, day, side DESC",
        data,
    )
    assert frame.values.tolist()[:2] == [
        ["2026-11-01", "opening", 100_000, "cnab240"],
        ["2026-11-03", "closing", 237_194, "cnab240"],
    ]
    assert set(frame["source_format"]) == {"cnab240", "csv"}
