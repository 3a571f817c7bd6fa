"""A PSP's report that states gross, fee and net per line (Mercado Pago's settlement and
release reports): the line is what moved, net, and keeps the fee."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.config import DataDir
from recon.errors import StatementParseError
from recon.statements import import_statements

from ..conftest import view_rows

# Mercado Pago's settlement report ("Todas as transações"): gross, fee (negative), net
SETTLEMENT = """\
TRANSACTION_DATE,SOURCE_ID,EXTERNAL_REFERENCE,TRANSACTION_TYPE,TRANSACTION_AMOUNT,FEE_AMOUNT,SETTLEMENT_NET_AMOUNT
2026-11-02T10:10:00-03:00,88001,ORD-1,SETTLEMENT,100.00,-0.99,99.01
2026-11-02T11:00:00-03:00,88002,ORD-2,SETTLEMENT,50.00,0.00,50.00
2026-11-02T12:00:00-03:00,88003,,WITHDRAWAL,-30.00,,-30.00
"""
# its release report: net credit / debit columns, gross, MP's fee
RELEASE = """\
DATE;SOURCE_ID;EXTERNAL_REFERENCE;RECORD_TYPE;DESCRIPTION;NET_CREDIT_AMOUNT;NET_DEBIT_AMOUNT;GROSS_AMOUNT;MP_FEE_AMOUNT
02/11/2026;88001;ORD-1;release;payment;99,01;;100,00;-0,99
02/11/2026;88004;;release;withdrawal;;30,00;-30,00;0,00
"""


def _lines(data: DataDir) -> list[tuple[int, int | None]]:
    rows = sorted(view_rows(data), key=lambda r: r["source_line"])
    return [(r["amount_cents"], r["fee_cents"]) for r in rows]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (SETTLEMENT, [(9901, 99), (5000, 0), (-3000, 0)]),  # a blank fee: gross - net
        (RELEASE, [(9901, 99), (-3000, 0)]),
    ],
)
def test_a_psp_report_keeps_the_fee_beside_the_net(
    tmp_path: Path, data_dir: DataDir, text: str, expected: list[tuple[int, int | None]]
) -> None:
    path = tmp_path / "mercadopago.csv"
    path.write_text(text, encoding="utf-8")
    import_statements([path], data_dir)
    assert _lines(data_dir) == expected


def test_a_gross_without_a_fee_column_gives_the_fee(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "vendas.csv"
    path.write_text(
        "Data;Descrição;Valor Bruto;Valor Líquido\n"
        "02/11/2026;PIX RECEBIDO MARIA;100,00;98,50\n"
        "02/11/2026;PIX ENVIADO JOAO;20,00;-21,00\n",
        encoding="utf-8",
    )
    import_statements([path], data_dir)
    assert _lines(data_dir) == [(9850, 150), (-2100, 100)]


def test_a_gross_below_the_net_credit_is_a_bad_line(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "vendas.csv"
    path.write_text(
        "Data;Descrição;Valor Bruto;Valor Líquido\n02/11/2026;PIX RECEBIDO MARIA;90,00;98,50\n",
        encoding="utf-8",
    )
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "Valor Bruto"
