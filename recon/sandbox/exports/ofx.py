"""OFX 1.x SGML statements the way Brazilian banks export them.

Header block (``OFXHEADER:100``, ``DATA:OFXSGML``, ``VERSION:102``, ``ENCODING:USASCII``,
``CHARSET:1252``), SGML body with unclosed leaf elements, CRLF line ends, Windows-1252 bytes
(so ``João`` is one byte per letter). One ``STMTTRN`` per movement of the whole account:
credits, payouts, devoluções and fees. ``FITID`` = the bank's transaction id; ``NAME`` = the
counterparty (OFX 1.x allows 32 chars); ``MEMO`` for PIX carries the end-to-end id:

- ``PIX RECEBIDO <e2e> <PAYER NAME>``
- ``PIX ENVIADO <e2e> <PAYEE NAME> <client reference>``
- ``DEVOLUCAO PIX <rtrId> REF <original e2e>``

Dates are ``YYYYMMDDHHMMSS[-3:BRT]``. ``LEDGERBAL`` is the balance at the end of the period.
"""

from __future__ import annotations

from datetime import datetime

from recon.sandbox.bank import (
    FEE,
    INTEREST,
    PIX_IN,
    PIX_OUT,
    PIX_REFUND_IN,
    PIX_REFUND_OUT,
    Bank,
    Movement,
)
from recon.sandbox.exports._common import local

__all__ = ["memo", "render_ofx"]

HEADER = (
    "OFXHEADER:100",
    "DATA:OFXSGML",
    "VERSION:102",
    "SECURITY:NONE",
    "ENCODING:USASCII",
    "CHARSET:1252",
    "COMPRESSION:NONE",
    "OLDFILEUID:NONE",
    "NEWFILEUID:NONE",
)


def _dt(at: datetime) -> str:
    return local(at).strftime("%Y%m%d%H%M%S") + "[-3:BRT]"


def _text(value: str) -> str:
    # SGML character data: the three markup characters must be escaped; newlines never appear.
    value = " ".join(value.split())
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _amount(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    units, frac = divmod(abs(cents), 100)
    return f"{sign}{units}.{frac:02d}"


def memo(m: Movement) -> str:
    """The MEMO text of a movement (also used as the bank CSV history)."""
    name = (m.counterparty_name or "").upper()
    if m.kind == PIX_IN:
        return f"PIX RECEBIDO {m.end_to_end_id} {name}".strip()
    if m.kind == PIX_OUT:
        parts = ["PIX ENVIADO", m.end_to_end_id or "", name, m.remittance or ""]
        return " ".join(p for p in parts if p)
    if m.kind in (PIX_REFUND_OUT, PIX_REFUND_IN):
        return f"DEVOLUCAO PIX {m.end_to_end_id} REF {m.refund_of}"
    return m.description


def _trntype(m: Movement) -> str:
    if m.kind == FEE:
        return "FEE"
    if m.kind == INTEREST:
        return "INT"  # a yield is a CREDIT its memo names (REND PAGO APLIC AUT MAIS)
    return "CREDIT" if m.amount_cents > 0 else "DEBIT"


def render_ofx(
    bank: Bank, start: datetime, end: datetime, *, server_time: datetime | None = None
) -> bytes:
    """The account's movements in ``[start, end)`` as an OFX 1.02 SGML file (cp1252 bytes)."""
    movements = bank.select(start, end)
    closing = bank.balance_before(end)
    acct = bank.account
    lines = [*HEADER, ""]
    lines += [
        "<OFX>",
        "<SIGNONMSGSRSV1>",
        "<SONRS>",
        "<STATUS>",
        "<CODE>0",
        "<SEVERITY>INFO",
        "</STATUS>",
        f"<DTSERVER>{_dt(server_time or end)}",
        "<LANGUAGE>POR",
        "</SONRS>",
        "</SIGNONMSGSRSV1>",
        "<BANKMSGSRSV1>",
        "<STMTTRNRS>",
        "<TRNUID>1001",
        "<STATUS>",
        "<CODE>0",
        "<SEVERITY>INFO",
        "</STATUS>",
        "<STMTRS>",
        "<CURDEF>BRL",
        "<BANKACCTFROM>",
        f"<BANKID>{acct.bank_code}",
        f"<BRANCHID>{acct.branch}",
        f"<ACCTID>{acct.number}-{acct.number_digit}",
        "<ACCTTYPE>CHECKING",
        "</BANKACCTFROM>",
        "<BANKTRANLIST>",
        f"<DTSTART>{_dt(start)}",
        f"<DTEND>{_dt(end)}",
    ]
    for m in movements:
        lines += [
            "<STMTTRN>",
            f"<TRNTYPE>{_trntype(m)}",
            f"<DTPOSTED>{_dt(m.booked_at)}",
            f"<TRNAMT>{_amount(m.amount_cents)}",
            f"<FITID>{m.id}",
            f"<CHECKNUM>{m.id[-8:]}",
        ]
        if m.end_to_end_id:
            lines.append(f"<REFNUM>{m.end_to_end_id}")
        if m.counterparty_name:
            lines.append(f"<NAME>{_text(m.counterparty_name[:32])}")
        lines += [f"<MEMO>{_text(memo(m)[:255])}", "</STMTTRN>"]
    lines += [
        "</BANKTRANLIST>",
        "<LEDGERBAL>",
        f"<BALAMT>{_amount(closing)}",
        f"<DTASOF>{_dt(end)}",
        "</LEDGERBAL>",
        "</STMTRS>",
        "</STMTTRNRS>",
        "</BANKMSGSRSV1>",
        "</OFX>",
    ]
    return ("\r\n".join(lines) + "\r\n").encode("cp1252", errors="replace")
