"""Open Finance Brasil accounts API transaction pages of the sandbox account
(``GET /accounts/v2/accounts/{accountId}/transactions``), saved as an aggregator delivers
them: one JSON file holding the list of pages of one request.

Each item: ``transactionId`` (the PIX end-to-end id for a PIX, the rtrId for a devolução,
as banks that key PIX by it do; the bank's own id otherwise), ``completedAuthorisedPaymentType``
``TRANSACAO_EFETIVADA``, ``creditDebitType`` CREDITO | DEBITO, ``transactionName`` (the
bank's history text, the OFX MEMO), ``type`` (PIX or TARIFA_SERVICOS_AVULSOS),
``transactionAmount`` ``{"amount": "110.0000", "currency": "BRL"}``, ``transactionDateTime``
(UTC, milliseconds), ``partiePersonType`` and ``partieCompeCode`` of the counterparty. The
counterparty's CPF/CNPJ (``partieCnpjCpf``) is left out: the API gives it in full and the
sandbox writes no full document into files people share.

``links.self`` carries the request (``fromBookingDate``/``toBookingDate`` = the period's
local days, ``page``, ``page-size``); ``meta`` the totals. Deterministic.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime, timedelta
from typing import Any

from recon.money import format_cents
from recon.sandbox.bank import FEE, PSPS, Bank, Movement
from recon.sandbox.exports._common import local
from recon.sandbox.exports.ofx import memo

__all__ = ["PAGE_SIZE", "render_open_finance"]

PAGE_SIZE = 1000  # the API's largest page-size
_COMPE = {ispb: code for ispb, code, _ in PSPS}


def _item(m: Movement) -> dict[str, Any]:
    cents = abs(m.amount_cents)
    item: dict[str, Any] = {
        "transactionId": m.end_to_end_id or m.id,
        "completedAuthorisedPaymentType": "TRANSACAO_EFETIVADA",
        "creditDebitType": "CREDITO" if m.amount_cents > 0 else "DEBITO",
        "transactionName": " ".join(memo(m).split())[:200],
        "type": "TARIFA_SERVICOS_AVULSOS" if m.kind == FEE else "PIX",
        "transactionAmount": {"amount": f"{format_cents(cents)}00", "currency": "BRL"},
        "transactionDateTime": m.booked_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
    }
    if m.counterparty_document:
        individual = len(m.counterparty_document) == 11
        item["partiePersonType"] = "PESSOA_NATURAL" if individual else "PESSOA_JURIDICA"
    if m.counterparty_ispb in _COMPE:
        item["partieCompeCode"] = _COMPE[m.counterparty_ispb]
    return item


def render_open_finance(
    bank: Bank, start: datetime, end: datetime, *, page_size: int = PAGE_SIZE
) -> bytes:
    """The account's movements in ``[start, end)`` as a JSON list of transaction pages."""
    items = [_item(m) for m in bank.select(start, end)]
    pages_total = max(1, math.ceil(len(items) / page_size))
    account_id = f"sandbox-{bank.account.branch}-{bank.account.number}"
    query = (
        f"fromBookingDate={local(start).date().isoformat()}"
        f"&toBookingDate={local(end - timedelta(microseconds=1)).date().isoformat()}"
    )
    base = f"https://sandbox.invalid/open-banking/accounts/v2/accounts/{account_id}/transactions"

    def link(page: int) -> str:
        return f"{base}?{query}&page={page}&page-size={page_size}"

    pages = []
    for number in range(1, pages_total + 1):
        links = {"self": link(number), "first": link(1), "last": link(pages_total)}
        if number > 1:
            links["prev"] = link(number - 1)
        if number < pages_total:
            links["next"] = link(number + 1)
        pages.append(
            {
                "data": items[(number - 1) * page_size : number * page_size],
                "links": links,
                "meta": {
                    "totalRecords": len(items),
                    "totalPages": pages_total,
                    "requestDateTime": end.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                },
            }
        )
    return (json.dumps(pages, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
