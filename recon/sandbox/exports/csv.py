"""The CSV shapes bank and PSP portals export.

``psp`` (``extrato_psp.csv``): UTF-8, comma separated, header ``data_hora,tipo,valor,
end_to_end_id,txid,id_devolucao,e2e_original,nome_contraparte,documento_contraparte,
chave_pix,descricao,id_transacao``; ``valor`` signed with a dot decimal (``-200.00``),
``data_hora`` ISO 8601 with the -03:00 offset, ``tipo`` one of PIX_RECEBIDO, PIX_ENVIADO,
DEVOLUCAO_RECEBIDA, DEVOLUCAO_ENVIADA, TARIFA. For a devolução ``end_to_end_id`` and
``id_devolucao`` both hold its rtrId and ``e2e_original`` the returned PIX's e2e.
``descricao`` is the payer's free text (received PIX) or our remittance text (payouts).

``bank`` (``extrato_banco.csv``): Windows-1252, ``;`` separated, a preamble (bank name,
``Agência/Conta: ...``, ``Período: ...``, a blank line), then ``Data;Histórico;Documento;
Valor;Saldo`` with ``DD/MM/YYYY`` dates and ``-1.200,00`` amounts; ``Documento`` is the e2e
(rtrId for devoluções) for PIX, the bank's id otherwise; ``Saldo`` the running balance.

``inter`` (``extrato_inter.csv``): Banco Inter's account export: UTF-8 with a BOM, a preamble
(``Extrato Conta Corrente``, ``Conta ;…``, ``Período ;dd/mm/yyyy a dd/mm/yyyy``, ``Saldo ;…``,
a blank line), then ``Data Lançamento;Histórico;Descrição;Valor;Saldo`` with ``1.234,56``
amounts; ``Histórico`` says ``Pix recebido`` / ``Pix enviado`` / ``Devolução Pix …``, the
``Descrição`` of a PIX is Inter's ``Cp :<ISPB>-<NAME>``. No PIX id and no transaction id:
the importer pairs these lines with the same movement read from the other formats.

``nubank`` (``extrato_nubank.csv``): Nubank's account export: UTF-8, ``Data,Valor,
Identificador,Descrição``, dd/mm/yyyy, signed ``-37.79``; ``Identificador`` is the bank's
transaction id (the OFX FITID), ``Descrição`` Nubank's ``Transferência recebida pelo Pix -
NAME - •••.456.789-•• - BANK (code) Agência: 1 Conta: …``.
"""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta

from recon.money import format_cents
from recon.sandbox.bank import (
    FEE,
    PIX_IN,
    PIX_OUT,
    PIX_REFUND_IN,
    PIX_REFUND_OUT,
    PSPS,
    Bank,
    Movement,
)
from recon.sandbox.exports._common import local, rfc3339_local
from recon.sandbox.exports.ofx import memo

__all__ = [
    "BANK_HEADER",
    "PSP_HEADER",
    "render_bank_csv",
    "render_inter_csv",
    "render_nubank_csv",
    "render_psp_csv",
]

PSP_HEADER = (
    "data_hora",
    "tipo",
    "valor",
    "end_to_end_id",
    "txid",
    "id_devolucao",
    "e2e_original",
    "nome_contraparte",
    "documento_contraparte",
    "chave_pix",
    "descricao",
    "id_transacao",
)
BANK_HEADER = ("Data", "Histórico", "Documento", "Valor", "Saldo")

_TIPO = {
    PIX_IN: "PIX_RECEBIDO",
    PIX_OUT: "PIX_ENVIADO",
    PIX_REFUND_IN: "DEVOLUCAO_RECEBIDA",
    PIX_REFUND_OUT: "DEVOLUCAO_ENVIADA",
    FEE: "TARIFA",
}


def _psp_row(m: Movement) -> list[str]:
    is_refund = m.kind in (PIX_REFUND_IN, PIX_REFUND_OUT)
    if m.kind == PIX_IN:
        text = m.info_pagador or ""
    elif m.kind == PIX_OUT:
        text = m.remittance or ""
    else:
        text = m.description if m.kind == FEE else ""
    return [
        rfc3339_local(m.booked_at),
        _TIPO[m.kind],
        format_cents(m.amount_cents),
        m.end_to_end_id or "",
        m.txid or "",
        (m.end_to_end_id or "") if is_refund else "",
        (m.refund_of or "") if is_refund else "",
        m.counterparty_name or "",
        m.document_masked or "",
        m.counterparty_key or "",
        text,
        m.id,
    ]


def render_psp_csv(bank: Bank, start: datetime, end: datetime) -> bytes:
    """The account's movements in ``[start, end)`` in the PSP CSV shape (UTF-8)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PSP_HEADER)
    for m in bank.select(start, end):
        writer.writerow(_psp_row(m))
    return out.getvalue().encode("utf-8")


def _brl(cents: int) -> str:
    return format_cents(cents, decimal_mark=",", thousands=".")


def render_bank_csv(bank: Bank, start: datetime, end: datetime) -> bytes:
    """The account's movements in ``[start, end)`` in the bank-portal CSV shape (cp1252)."""
    acct = bank.account
    last_day = local(end - timedelta(seconds=1)).date()
    out = io.StringIO()
    out.write(f"{acct.bank_name}\r\n")
    out.write(f"Agência/Conta: {acct.label}\r\n")
    out.write(f"Período: {local(start):%d/%m/%Y} a {last_day:%d/%m/%Y}\r\n")
    out.write("\r\n")
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    writer.writerow(BANK_HEADER)
    balance = bank.balance_before(start)
    for m in bank.select(start, end):
        balance += m.amount_cents
        document = m.end_to_end_id or m.id
        writer.writerow(
            [
                f"{local(m.booked_at):%d/%m/%Y}",
                memo(m),
                document,
                _brl(m.amount_cents),
                _brl(balance),
            ]
        )
    return out.getvalue().encode("cp1252", errors="replace")


_INTER_HISTORY = {
    PIX_IN: "Pix recebido",
    PIX_OUT: "Pix enviado",
    PIX_REFUND_IN: "Devolução Pix recebida",
    PIX_REFUND_OUT: "Devolução Pix enviada",
}


def render_inter_csv(bank: Bank, start: datetime, end: datetime) -> bytes:
    """The account's movements in ``[start, end)`` as Inter's account CSV (UTF-8 with BOM)."""
    acct = bank.account
    last_day = local(end - timedelta(seconds=1)).date()
    balance = bank.balance_before(start)
    out = io.StringIO()
    out.write("Extrato Conta Corrente \n")
    out.write(f"Conta ;{acct.label}\n")
    out.write(f"Período ;{local(start):%d/%m/%Y} a {last_day:%d/%m/%Y}\n")
    out.write(f"Saldo ;{_brl(bank.balance_before(end))}\n")
    out.write("\n")
    writer = csv.writer(out, delimiter=";", lineterminator="\n")
    writer.writerow(("Data Lançamento", "Histórico", "Descrição", "Valor", "Saldo"))
    for m in bank.select(start, end):
        balance += m.amount_cents
        history = _INTER_HISTORY.get(m.kind, m.description)
        if m.kind in _INTER_HISTORY:
            text = f"Cp :{m.counterparty_ispb or acct.ispb}-{(m.counterparty_name or '').upper()}"
        else:
            text = m.description
        writer.writerow(
            [f"{local(m.booked_at):%d/%m/%Y}", history, text, _brl(m.amount_cents), _brl(balance)]
        )
    return ("\ufeff" + out.getvalue()).encode("utf-8")


_PSP_NAMES = {ispb: (code, name) for ispb, code, name in PSPS}


def _nubank_text(m: Movement) -> str:
    verb = {
        PIX_IN: "Transferência recebida pelo Pix",
        PIX_OUT: "Transferência enviada pelo Pix",
        PIX_REFUND_IN: "Reembolso recebido pelo Pix",
        PIX_REFUND_OUT: "Reembolso enviado pelo Pix",
    }.get(m.kind)
    if verb is None:
        return m.description
    parts = [verb, (m.counterparty_name or "").upper()]
    if m.document_masked:
        parts.append(m.document_masked.replace("*", "•"))
    code, name = _PSP_NAMES.get(m.counterparty_ispb or "", ("000", "IP"))
    parts.append(f"{name} ({code.zfill(4)}) Agência: 1 Conta: 1234567-8")
    return " - ".join(parts)


def render_nubank_csv(bank: Bank, start: datetime, end: datetime) -> bytes:
    """The account's movements in ``[start, end)`` as Nubank's account CSV (UTF-8)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(("Data", "Valor", "Identificador", "Descrição"))
    for m in bank.select(start, end):
        writer.writerow(
            [f"{local(m.booked_at):%d/%m/%Y}", format_cents(m.amount_cents), m.id, _nubank_text(m)]
        )
    return out.getvalue().encode("utf-8")
