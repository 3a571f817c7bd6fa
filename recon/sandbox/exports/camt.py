"""ISO 20022 camt.053.001.08 bank-to-customer statement of the sandbox account.

One ``Stmt`` for the whole period: ``Acct/Id/Othr/Id`` = agência/conta, ``Acct/Ccy`` BRL,
``FrToDt`` = the period (``ToDtTm`` its last second), opening (OPBD) and closing (CLBD)
booked balances, and one booked ``Ntry`` per movement with one ``TxDtls``:
``BookgDt/DtTm`` (Brasília time with offset), ``ValDt/Dt``, ``AcctSvcrRef`` = the bank's
transaction id, ``Refs/EndToEndId`` = the PIX end-to-end id (the rtrId for a devolução),
``RltdPties`` (the payer of a credit as ``Dbtr``, the payee of a payout as ``Cdtr`` with
the key paid as ``CdtrAcct/Prxy/Id``; documents masked), ``RmtInf/Ustrd`` (the payer's
text or our client reference), ``RmtInf/Strd/CdtrRefInf/Ref`` = the txid of a dynamic
charge, ``AddtlNtryInf`` = the bank's history text (the OFX MEMO), and ``BkTxCd`` sub-family
``CHRG`` for fees. Compact (no indentation), UTF-8, deterministic.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from xml.sax.saxutils import escape

from recon.money import format_cents
from recon.sandbox.bank import FEE, PIX_IN, PIX_OUT, Bank, Movement
from recon.sandbox.exports._common import local, rfc3339_local
from recon.sandbox.exports.ofx import memo

__all__ = ["NAMESPACE", "render_camt053"]

NAMESPACE = "urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"


def _t(text: str | None) -> str:
    return escape(" ".join((text or "").split()))


def _balance(code: str, cents: int, at: datetime) -> str:
    side = "CRDT" if cents >= 0 else "DBIT"
    return (
        f"<Bal><Tp><CdOrPrtry><Cd>{code}</Cd></CdOrPrtry></Tp>"
        f'<Amt Ccy="BRL">{format_cents(abs(cents))}</Amt><CdtDbtInd>{side}</CdtDbtInd>'
        f"<Dt><Dt>{local(at).date().isoformat()}</Dt></Dt></Bal>"
    )


def _party(m: Movement) -> str:
    if not m.counterparty_name and not m.counterparty_key:
        return ""
    role = "Dbtr" if m.amount_cents > 0 else "Cdtr"
    ident = (
        f"<Id><PrvtId><Othr><Id>{_t(m.document_masked)}</Id></Othr></PrvtId></Id>"
        if m.document_masked
        else ""
    )
    name = f"<{role}><Pty><Nm>{_t(m.counterparty_name)}</Nm>{ident}</Pty></{role}>"
    key = (
        f"<CdtrAcct><Prxy><Id>{_t(m.counterparty_key)}</Id></Prxy></CdtrAcct>"
        if m.kind == PIX_OUT and m.counterparty_key
        else ""
    )
    return f"<RltdPties>{name}{key}</RltdPties>"


def _entry(m: Movement) -> str:
    side = "CRDT" if m.amount_cents > 0 else "DBIT"
    text = m.info_pagador if m.kind == PIX_IN else m.remittance if m.kind == PIX_OUT else None
    remittance = f"<Ustrd>{_t(text)}</Ustrd>" if text else ""
    if m.txid:
        remittance += f"<Strd><CdtrRefInf><Ref>{_t(m.txid)}</Ref></CdtrRefInf></Strd>"
    details = (
        (f"<Refs><EndToEndId>{m.end_to_end_id}</EndToEndId></Refs>" if m.end_to_end_id else "")
        + _party(m)
        + (f"<RmtInf>{remittance}</RmtInf>" if remittance else "")
    )
    codes = (
        "<BkTxCd><Domn><Cd>ACMT</Cd><Fmly><Cd>MDOP</Cd><SubFmlyCd>CHRG</SubFmlyCd></Fmly>"
        "</Domn></BkTxCd>"
        if m.kind == FEE
        else ""
    )
    return (
        f'<Ntry><Amt Ccy="BRL">{format_cents(abs(m.amount_cents))}</Amt>'
        f"<CdtDbtInd>{side}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>"
        f"<BookgDt><DtTm>{rfc3339_local(m.booked_at)}</DtTm></BookgDt>"
        f"<ValDt><Dt>{local(m.booked_at).date().isoformat()}</Dt></ValDt>"
        f"<AcctSvcrRef>{_t(m.id)}</AcctSvcrRef>{codes}"
        + (f"<NtryDtls><TxDtls>{details}</TxDtls></NtryDtls>" if details else "")
        + f"<AddtlNtryInf>{_t(memo(m))}</AddtlNtryInf></Ntry>\n"
    )


def render_camt053(bank: Bank, start: datetime, end: datetime) -> bytes:
    """The account's movements in ``[start, end)`` as one camt.053.001.08 statement."""
    acct = bank.account
    stamp = rfc3339_local(end)
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<Document xmlns="{NAMESPACE}"><BkToCstmrStmt>'
        f"<GrpHdr><MsgId>RECON-{local(start):%Y%m%d}-{local(end):%Y%m%d}</MsgId>"
        f"<CreDtTm>{stamp}</CreDtTm></GrpHdr>"
        f"<Stmt><Id>{acct.branch}-{acct.number}-{local(start):%Y%m%d}</Id><CreDtTm>{stamp}</CreDtTm>"
        f"<FrToDt><FrDtTm>{rfc3339_local(start)}</FrDtTm>"
        f"<ToDtTm>{rfc3339_local(end - timedelta(seconds=1))}</ToDtTm></FrToDt>"
        f"<Acct><Id><Othr><Id>{_t(acct.label)}</Id></Othr></Id><Ccy>BRL</Ccy>"
        f"<Svcr><FinInstnId><ClrSysMmbId><MmbId>{acct.ispb}</MmbId></ClrSysMmbId>"
        f"<Nm>{_t(acct.bank_name)}</Nm></FinInstnId></Svcr></Acct>"
        + _balance("OPBD", bank.balance_before(start), start)
        # the closing balance is dated the last day covered: `end` is exclusive (a period
        # cut at midnight closes the day before)
        + _balance("CLBD", bank.balance_before(end), end - timedelta(seconds=1))
        + "\n"
    )
    body = "".join(_entry(m) for m in bank.select(start, end))
    return (head + body + "</Stmt></BkToCstmrStmt></Document>\n").encode("utf-8")
