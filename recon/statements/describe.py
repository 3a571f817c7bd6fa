"""What banks write in a statement line's free text: counterparty, document, PIX key, ids, bank.

One parser for the banks' description texts (OFX MEMO, CSV histórico/descrição; a name field,
OFX NAME, goes through `name_and_document`): `describe(text, direction)` returns a `Described` with what the text says,
and nothing it does not say. The forms it reads are the ones banks really write (the table
in docs/statements.md, one example per bank, each under test; their patterns are in
recon.statements.banks), for instance:

- Nubank: ``Transferência recebida pelo Pix - NAME - •••.123.456-•• - BANK (0260)
  Agência: 1 Conta: 12345-6`` (name, masked document, bank and its code);
- Inter: ``Pix recebido: "Cp :18236120-NAME"`` (the payer PSP's ISPB, then the name);
- Itaú: ``PIX TRANSF NAME 05/11``, ``PIX TRANSFER NAME05/11``, ``PIX QRS NAME 05/11`` (name
  cut, day/month after it);
- Banco do Brasil: ``Pix - Recebido`` with details ``12/03 21:08 NAME``;
- Bradesco: ``Transfe Pix Rem: NAME`` / ``Des: NAME`` (its OFX MEMO: ``… NAME 01/12``);
- Mercado Pago / PagBank / Santander / C6: ``Pix recebido NAME``, ``PIX ENVIADO - NAME``,
  ``Pix enviado para NAME``, ``Pagamento com Código QR Pix NAME``;
- the sandbox's own ``PIX RECEBIDO <e2e> NAME`` and ``DEVOLUCAO PIX <rtrId> REF <e2e>``.

Direction words ("recebido", "enviada", "entrada", "saída", ...) are reported in
`Described.direction_word` only; the amount's sign (or its credit/debit column) is the
source of truth, and `direction_from_text` gives a direction only where no sign is known.
A word that disagrees with the sign is ignored (an "Estorno - Transferência enviada" is a
credit because its amount says so).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from recon.pii import bare_document, mask_document
from recon.statements.banks import (
    CREDIT_TEXT,
    DEBIT_TEXT,
    DOCUMENT_DASH_NAME,
    INTER_COUNTERPARTY,
    LEADING_DAY_TIME,
    PAYER_AND_PAYEE,
    PIX_LEADS,
    REFUND_TEXT,
    SENDER_OR_RECIPIENT,
)
from recon.statements.lines import E2E_RE, pix_ids

__all__ = ["Described", "describe", "direction_from_text", "name_and_document"]


class Described(NamedTuple):
    """What a description text says; None where it says nothing."""

    name: str | None = None
    document: str | None = None  # as written if masked (•••.123.456-••); a full CPF masked
    key: str | None = None  # a PIX key, only when the text labels it as one
    end_to_end_id: str | None = None
    refund_id: str | None = None  # a devolução's return id (D…)
    bank: str | None = None  # "NAME (code)" or an ISPB, as written
    direction_word: str | None = None  # credit | debit, what the words say
    pix: bool = False
    refund: bool = False


_MASK = r"[0-9•*xX●·]"
# CPF 000.000.000-00 and CNPJ 00.000.000/0000-00, masked or not; 11/14 bare digits only when
# labelled (CPF:/CNPJ:), so account numbers and ids are never taken for documents.
_DOC_RE = re.compile(
    rf"(?<![0-9])(?:{_MASK}{{2}}\.{_MASK}{{3}}\.{_MASK}{{3}}/{_MASK}{{4}}-{_MASK}{{2}}"
    rf"|{_MASK}{{3}}\.{_MASK}{{3}}\.{_MASK}{{3}}-{_MASK}{{2}})(?![0-9])"
)
_LABELLED_DOC = re.compile(r"(?i)\b(?:CPF|CNPJ)(?:/CNPJ|/CPF)?\s*[:.]?\s*([0-9]{11}|[0-9]{14})\b")
_KEY_RE = re.compile(r"(?i)\bchave(?:\s+pix)?\s*[:=]?\s*(\S+)")
_BANK_CODE = re.compile(r"^(?P<bank>.+?\(\s*[0-9]{3,8}\s*\))")
_AGENCY = re.compile(r"(?i)\s*\b(?:ag[êe]ncia|ag\.?)\s*:.*$")
_TRAIL_DAY = re.compile(r"\s*[0-9]{2}/[0-9]{2}\s*$")
_NOT_A_NAME = re.compile(r"(?i)^(?:ref|[-–:]|pix)?$")


def _is_lead_only(part: str) -> bool:
    m = PIX_LEADS.match(part)
    return m is not None and not part[m.end() :].strip()


def _masked(document: str) -> str:
    """A full CPF masked the way BACEN shows one (``***.456.789-**``): a person's document
    is personal data and never stored whole; a masked one with its mask characters written
    as '*' (Nubank's bullets), so that every reader stores one form; a CNPJ (a company's)
    as written."""
    digits = "".join(c for c in document if c.isdigit())
    if len(digits) == 11 and len(digits) == sum(c.isalnum() for c in document):
        return f"***.{digits[3:6]}.{digits[6:9]}-**"
    return mask_document(document) if _MASK_ONLY.search(document) else document


_MASK_ONLY = re.compile(r"[*•●·xX]")
# a run of digits alone between blanks: in a name it is a document, an account or an id
_DIGITS_TOKEN = re.compile(r"(?<!\S)[0-9]+(?!\S)")


def name_and_document(name: str | None, document: str | None) -> tuple[str | None, str | None]:
    """A bare CPF or CNPJ written into the name (a MEI's registered name carries its owner's
    CPF; Banco do Brasil writes ``000`` + CPF before the payer's name) becomes the document
    when the text gave none, and leaves the name; so do runs of 4+ digits at either end of
    it (an agency and account: Inter's ``00019 253084687 NAME``). Shorter numbers are part
    of a name ("99 TAXIS")."""
    if not name or not _DIGITS_TOKEN.search(name):
        return name, document
    words = name.split()
    for i, word in enumerate(words):
        found = bare_document(word) if word.isdigit() and len(word) in (11, 14) else None
        if found is not None:
            document = document or _masked(found)
            words[i] = ""
    words = [w for w in words if w]
    while words and words[0].isdigit() and len(words[0]) >= 4:
        words.pop(0)
    while words and words[-1].isdigit() and len(words[-1]) >= 4:
        words.pop()
    kept = " ".join(words)
    return (name if kept == " ".join(name.split()) else _tidy(kept)), document


def _document(text: str) -> str | None:
    if "." in text and "-" in text:
        m = _DOC_RE.search(text)
        if m:
            return m.group(0)
    m2 = _LABELLED_DOC.search(text)
    return m2.group(1) if m2 else None


def _tidy(name: str | None) -> str | None:
    if not name:
        return None
    # a day that ends the text is the PIX's, never the name's (Itaú "NAME05/11", Bradesco's
    # OFX "NAME 01/12")
    s = _KEY_RE.sub(" ", _LABELLED_DOC.sub(" ", _TRAIL_DAY.sub("", name))).replace('"', " ")
    s = re.sub(r"(?:\s+[-–])+\s+", " - ", " ".join(s.split())).strip(" -–:;,")
    if not s or _NOT_A_NAME.match(s) or not any(c.isalpha() for c in s):
        return None
    return s


def _nubank_parts(rest: str) -> tuple[str | None, str | None, str | None]:
    """``NAME - DOC - BANK (code) Agência: …`` → (name, doc, bank)."""
    parts = [p.strip() for p in re.split(r"\s+[-–]\s+", rest)]
    name, doc, tail = parts[0], None, parts[1:]
    for i, part in enumerate(tail):
        if _DOC_RE.fullmatch(part):
            doc, tail = part, tail[i + 1 :]
            break
    m = _BANK_CODE.match(_AGENCY.sub("", " - ".join(tail)))
    return name, doc, (m.group("bank").strip() if m else None)


@lru_cache(maxsize=1 << 16)  # statements repeat their texts (same payers, same fees)
def describe(text: str | None, direction: str | None = None) -> Described:
    """What `text` says about the movement (see the module doc).

    `direction` ("credit" / "debit", from the amount) is only used to drop a direction word
    that disagrees with it; it never changes what the text says otherwise.
    """
    if not text:
        return Described()
    e2e, rtr = pix_ids(text)
    upper = text.upper()
    pix = "PIX" in upper or e2e is not None or rtr is not None
    refund = rtr is not None or REFUND_TEXT.search(text) is not None
    word: str | None = None
    credit_w = CREDIT_TEXT.search(text) is not None
    debit_w = DEBIT_TEXT.search(text) is not None
    if credit_w != debit_w:
        word = "credit" if credit_w else "debit"
    if direction is not None and word is not None and word != direction:
        word = None
    document = _document(text)
    key_match = _KEY_RE.search(text)
    key = key_match.group(1).strip(".,;") if key_match else None
    bank: str | None = None
    name: str | None = None
    body = E2E_RE.sub(" ", text) if (e2e or rtr) else text
    inter = INTER_COUNTERPARTY.search(body)
    remdes = SENDER_OR_RECIPIENT.search(body)
    if inter:
        bank, name = inter.group("ispb"), inter.group("name")
    elif remdes:
        name = remdes.group("name")
    else:
        lead = PIX_LEADS.match(body)
        if lead is not None:
            rest = body[lead.end() :]
            if re.search(r"\s[-–]\s", rest) and (document or "(" in rest):
                name, doc2, bank = _nubank_parts(rest)
                document = document or doc2
            else:
                parts = re.split(r"\s+[-–]\s+", rest)
                if len(parts) > 1:  # drop a repeated "PIX RECEBIDO" detail
                    kept = [p for p in parts if not _is_lead_only(p)]
                    rest = " - ".join(kept)
                rest = LEADING_DAY_TIME.sub("", rest)
                parties = PAYER_AND_PAYEE.match(rest)
                if parties is not None:  # the counterparty is the side that is not us
                    side = direction or word or ""
                    rest = {"credit": parties["payer"], "debit": parties["payee"]}.get(side, "")
                rest = _KEY_RE.sub(" ", _LABELLED_DOC.sub(" ", rest))
                if document:
                    rest = rest.replace(document, " ")
                if rtr or e2e:  # sandbox forms: "… REF <e2e>" carries no name
                    rest = re.sub(r"(?i)\bREF\b", " ", rest)
                name = rest
        elif pix:
            name = None
        else:
            detail = LEADING_DAY_TIME.match(body)
            dashed = DOCUMENT_DASH_NAME.match(body)
            if detail is not None:  # BB details: "12/03 21:08 NAME"
                name = body[detail.end() :]
            elif dashed is not None and bare_document(dashed.group("doc")):
                name = f"{dashed.group('doc')} {dashed.group('name')}"  # the document leaves it
    name = _tidy(name)
    if name and document:
        name = _tidy(name.replace(document, " "))
    name, document = name_and_document(name, document)
    return Described(
        name=name,
        document=_masked(document) if document else None,
        key=key,
        end_to_end_id=e2e,
        refund_id=rtr,
        bank=_tidy(bank) if bank and not bank.isdigit() else bank,
        direction_word=word,
        pix=pix,
        refund=refund,
    )


def direction_from_text(text: str | None) -> str | None:
    """credit / debit when the words say so unambiguously and nothing else is known."""
    return describe(text).direction_word
