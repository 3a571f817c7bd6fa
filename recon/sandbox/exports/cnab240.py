"""FEBRABAN CNAB 240 "extrato para conciliação bancária" (service 04, segment E).

Layout after the FEBRABAN CNAB 240 manual (v10.x), extrato chapter; positions are 1-based
and inclusive as the manual prints them (segment E and the extrato batch header were
cross-checked against a bank's published extrato layout, Caixa "Extrato eletrônico para
conciliação bancária", which uses the same positions). Every record is exactly 240 ASCII characters;
numeric fields are right-aligned zero-filled, alphanumeric ones left-aligned space-filled,
upper case without accents; records end with CRLF.

- file header (record 0), one batch per business day (America/Sao_Paulo) with movements:
  batch header (1) carrying the day's opening balance, one segment E (3) per movement,
  batch trailer (5) with the closing balance, the record count and the sums of debits and
  credits; file trailer (9).
- segment E "número do documento" (202-240, 39 chars) holds the PIX end-to-end id (the
  rtrId for a devolução) or the bank's id for other movements; "descrição do histórico"
  (177-201, 25 chars) holds the history text, for payouts with the client reference.
"""

from __future__ import annotations

from datetime import date, datetime
from itertools import groupby

from recon.sandbox.bank import (
    FEE,
    PIX_IN,
    PIX_OUT,
    PIX_REFUND_IN,
    PIX_REFUND_OUT,
    Account,
    Bank,
    Movement,
)
from recon.sandbox.exports._common import ascii_upper, local

__all__ = ["RECORD_LENGTH", "history", "render_cnab240"]

RECORD_LENGTH = 240
LAYOUT_FILE = "089"  # G005 layout version of the file header (extrato, v10.x)
LAYOUT_BATCH = "033"  # G030 layout version of the extrato batch


def _n(value: int | str, width: int) -> str:
    text = str(value)
    if not text.isdigit() or len(text) > width:
        raise ValueError(f"numeric field of width {width} cannot hold {value!r}")
    return text.rjust(width, "0")


def _a(value: str | None, width: int) -> str:
    return ascii_upper(value, width)


def _date(d: date) -> str:
    return d.strftime("%d%m%Y")


def _record(*fields: str) -> str:
    line = "".join(fields)
    if len(line) != RECORD_LENGTH:
        raise AssertionError(f"CNAB record of {len(line)} chars: {line!r}")
    return line


def _company(acct: Account, *, name: bool = True) -> list[str]:
    # 18 tipo de inscrição (2 = CNPJ), 19-32 inscrição, 33-52 convênio, 53-57 agência,
    # 58 DV agência, 59-70 conta, 71 DV conta, 72 DV agência/conta, 73-102 nome da empresa
    # (the batch trailer stops at 72).
    fields = [
        "2",
        _n(acct.holder_cnpj, 14),
        _a("", 20),
        _n(acct.branch, 5),
        _a(acct.branch_digit, 1),
        _n(acct.number, 12),
        _a(acct.number_digit, 1),
        _a("", 1),
    ]
    return [*fields, _a(acct.holder_name, 30)] if name else fields


def history(m: Movement) -> str:
    """The 25-char history text (also the code-less description other formats show)."""
    if m.kind == PIX_IN:
        return "PIX RECEBIDO"
    if m.kind == PIX_OUT:
        return f"PIX ENVIADO {m.remittance or ''}".strip()
    if m.kind in (PIX_REFUND_OUT, PIX_REFUND_IN):
        return "DEVOLUCAO PIX"
    return m.description


def _category(m: Movement) -> tuple[str, str]:
    # G(categoria do lançamento): 105 tarifas, 120 transferência interbancária (débito),
    # 209 transferência interbancária (crédito), 103/204 estornos (devoluções).
    if m.kind == FEE:
        return "105", "0105"
    if m.kind == PIX_REFUND_OUT:
        return "103", "0103"
    if m.kind == PIX_REFUND_IN:
        return "204", "0204"
    return ("209", "0209") if m.amount_cents > 0 else ("120", "0120")


def _file_header(acct: Account, generated: datetime, sequence: int) -> str:
    g = local(generated)
    return _record(
        _n(acct.bank_code, 3),  # 1-3 banco
        "0000",  # 4-7 lote
        "0",  # 8 registro: header de arquivo
        _a("", 9),  # 9-17 CNAB
        *_company(acct),  # 18-102
        _a(acct.bank_name, 30),  # 103-132 nome do banco
        _a("", 10),  # 133-142 CNAB
        "2",  # 143 código remessa/retorno: 2 = retorno (banco -> cliente)
        _date(g.date()),  # 144-151 data de geração DDMMAAAA
        g.strftime("%H%M%S"),  # 152-157 hora de geração HHMMSS
        _n(sequence, 6),  # 158-163 NSA
        LAYOUT_FILE,  # 164-166 versão do layout do arquivo
        "01600",  # 167-171 densidade
        _a("", 20),  # 172-191 reservado banco
        _a("", 20),  # 192-211 reservado empresa
        _a("", 29),  # 212-240 CNAB
    )


def _balance(cents: int) -> tuple[str, str]:
    return _n(abs(cents), 18), ("C" if cents >= 0 else "D")


def _batch_header(acct: Account, batch: int, day: date, opening: int, sequence: int) -> str:
    value, sign = _balance(opening)
    return _record(
        _n(acct.bank_code, 3),  # 1-3 banco
        _n(batch, 4),  # 4-7 lote
        "1",  # 8 registro: header de lote
        "E",  # 9 tipo de operação: E = extrato
        "04",  # 10-11 tipo de serviço: 04 = extrato para conciliação
        "40",  # 12-13 forma de lançamento
        LAYOUT_BATCH,  # 14-16 versão do layout do lote
        " ",  # 17 CNAB
        *_company(acct),  # 18-102
        _a("", 40),  # 103-142 CNAB
        _date(day),  # 143-150 data do saldo inicial
        value,  # 151-168 valor do saldo inicial 16V2
        sign,  # 169 situação do saldo inicial D/C
        "F",  # 170 posição do saldo inicial: F = final (of the previous day)
        "BRL",  # 171-173 moeda
        _n(sequence, 5),  # 174-178 número de sequência do extrato
        _a("", 62),  # 179-240 CNAB
    )


def _segment_e(acct: Account, batch: int, seq: int, m: Movement) -> str:
    day = local(m.booked_at).date()
    category, code = _category(m)
    document = m.end_to_end_id or m.id
    return _record(
        _n(acct.bank_code, 3),  # 1-3 banco
        _n(batch, 4),  # 4-7 lote
        "3",  # 8 registro: detalhe
        _n(seq, 5),  # 9-13 número sequencial do registro no lote
        "E",  # 14 segmento
        _a("", 3),  # 15-17 CNAB
        *_company(acct),  # 18-102
        _a("", 6),  # 103-108 CNAB
        "DPV",  # 109-111 natureza do lançamento: DPV = disponível
        "00",  # 112-113 tipo do complemento: 00 = sem complemento
        _a("", 20),  # 114-133 complemento do lançamento
        "S",  # 134 isenção CPMF
        _date(day),  # 135-142 data contábil
        _date(day),  # 143-150 data do lançamento
        _n(abs(m.amount_cents), 18),  # 151-168 valor do lançamento 16V2
        "C" if m.amount_cents > 0 else "D",  # 169 tipo do lançamento D/C
        category,  # 170-172 categoria do lançamento
        code,  # 173-176 código do histórico no banco
        _a(history(m), 25),  # 177-201 descrição do histórico no banco
        # 202-240 número do documento: e2e ids are case-sensitive, so not upper-cased
        document.ljust(39),
    )


def _batch_trailer(
    acct: Account, batch: int, day: date, closing: int, count: int, debits: int, credits: int
) -> str:
    value, sign = _balance(closing)
    return _record(
        _n(acct.bank_code, 3),  # 1-3 banco
        _n(batch, 4),  # 4-7 lote
        "5",  # 8 registro: trailer de lote
        _a("", 9),  # 9-17 CNAB
        *_company(acct, name=False),  # 18-72
        _a("", 16),  # 73-88 CNAB
        _n(0, 18),  # 89-106 saldo bloqueado acima de 24h (vinculado)
        _n(0, 18),  # 107-124 limite da conta
        _n(0, 18),  # 125-142 saldo bloqueado até 24h
        _date(day),  # 143-150 data do saldo final
        value,  # 151-168 valor do saldo final
        sign,  # 169 situação do saldo final D/C
        "F",  # 170 posição do saldo final: F = final
        _n(count, 6),  # 171-176 quantidade de registros do lote (header + details + trailer)
        _n(debits, 18),  # 177-194 somatória dos valores a débito
        _n(credits, 18),  # 195-212 somatória dos valores a crédito
        _a("", 28),  # 213-240 CNAB
    )


def _file_trailer(acct: Account, batches: int, records: int) -> str:
    return _record(
        _n(acct.bank_code, 3),  # 1-3 banco
        "9999",  # 4-7 lote
        "9",  # 8 registro: trailer de arquivo
        _a("", 9),  # 9-17 CNAB
        _n(batches, 6),  # 18-23 quantidade de lotes
        _n(records, 6),  # 24-29 quantidade de registros (all, headers/trailers included)
        _n(1, 6),  # 30-35 quantidade de contas para conciliação
        _a("", 205),  # 36-240 CNAB
    )


def render_cnab240(
    bank: Bank,
    start: datetime,
    end: datetime,
    *,
    generated: datetime | None = None,
    sequence: int = 1,
) -> bytes:
    """The account's movements in ``[start, end)`` as a CNAB 240 extrato (ASCII, CRLF)."""
    acct = bank.account
    movements = bank.select(start, end)
    records = [_file_header(acct, generated or end, sequence)]
    balance = bank.balance_before(start)
    batches = 0
    for day, group in groupby(movements, key=lambda m: local(m.booked_at).date()):
        batches += 1
        day_moves: list[Movement] = list(group)
        records.append(_batch_header(acct, batches, day, balance, sequence))
        debits = credits = 0
        for seq, m in enumerate(day_moves, start=1):
            records.append(_segment_e(acct, batches, seq, m))
            if m.amount_cents > 0:
                credits += m.amount_cents
            else:
                debits -= m.amount_cents
        balance += credits - debits
        count = len(day_moves) + 2
        records.append(_batch_trailer(acct, batches, day, balance, count, debits, credits))
    records.append(_file_trailer(acct, batches, len(records) + 1))
    return ("\r\n".join(records) + "\r\n").encode("ascii")
