"""BACEN "API Pix" ``GET /pix`` bodies: received PIX (credits) and their devoluções.

Shape (API Pix v2, ``PixConsultados``): ``{"parametros": {"inicio", "fim", "paginacao":
{"paginaAtual", "itensPorPagina", "quantidadeDePaginas", "quantidadeTotalDeItens"}},
"pix": [...]}``. Each item: ``endToEndId``, ``txid`` (only for dynamic charges), ``valor``
(``"123.45"``), ``chave`` (the receiving key), ``horario`` (RFC 3339, -03:00),
``infoPagador`` (payer's free text, when given), the PSP extension ``pagador``
(``{"nome", "cpf"|"cnpj"}`` masked) and ``devolucoes`` (always present, possibly empty):
``{id, rtrId, valor, horario: {solicitacao, liquidacao}, status, natureza, motivo}``.
Only received PIX appear; payouts and fees are not part of this API.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from recon.sandbox.bank import PIX_IN, PIX_REFUND_OUT, Bank, Movement
from recon.sandbox.exports._common import rfc3339_local, valor

__all__ = ["pix_item", "pix_items", "pix_page", "render_pix_json"]


def _payer(m: Movement) -> dict[str, str]:
    payer = {"nome": m.counterparty_name or ""}
    doc = m.counterparty_document or ""
    if doc:
        payer["cnpj" if len(doc) == 14 else "cpf"] = m.document_masked or ""
    return payer


def _refund(r: Movement, until: datetime | None) -> dict[str, Any] | None:
    info = r.refund
    if info is None or (until is not None and info.requested_at >= until):
        return None
    settled = (
        info.settled_at if info.settled_at and (until is None or info.settled_at < until) else None
    )
    horario = {"solicitacao": rfc3339_local(info.requested_at)}
    if settled is not None:
        horario["liquidacao"] = rfc3339_local(settled)
    return {
        "id": info.id,
        "rtrId": info.rtr_id,
        "valor": valor(info.amount_cents),
        "horario": horario,
        "status": info.status if settled is not None else "EM_PROCESSAMENTO",
        "natureza": info.nature,
        "motivo": info.reason,
    }


def pix_item(
    m: Movement, refunds: Sequence[Movement], *, chave: str, until: datetime | None = None
) -> dict[str, Any]:
    """One ``pix`` item for a received PIX, with the devoluções booked before `until`."""
    item: dict[str, Any] = {"endToEndId": m.end_to_end_id}
    if m.txid:
        item["txid"] = m.txid
    item["valor"] = valor(m.amount_cents + (m.fee_cents or 0))  # what the payer sent
    item["chave"] = chave
    item["horario"] = rfc3339_local(m.booked_at)
    if m.info_pagador:
        item["infoPagador"] = m.info_pagador
    item["pagador"] = _payer(m)
    if m.fee_cents is not None:
        item["gnExtras"] = {"tarifa": valor(m.fee_cents)}  # Efí: the fee it took
    item["devolucoes"] = [d for r in refunds if (d := _refund(r, until)) is not None]
    return item


def pix_items(
    bank: Bank,
    start: datetime | None = None,
    end: datetime | None = None,
    *,
    cpf: str | None = None,
    cnpj: str | None = None,
    txid: str | None = None,
) -> list[dict[str, Any]]:
    """Received PIX booked in ``[start, end)`` as ``pix`` items, oldest first.

    `cpf`/`cnpj` (digits) and `txid` filter as BACEN's query parameters do.
    """
    refunds: dict[str, list[Movement]] = {}
    for m in bank.sorted_movements():
        if m.kind == PIX_REFUND_OUT and m.refund_of:
            refunds.setdefault(m.refund_of, []).append(m)
    items = []
    for m in bank.select(start, end):
        if m.kind != PIX_IN:
            continue
        if cpf is not None and m.counterparty_document != cpf:
            continue
        if cnpj is not None and m.counterparty_document != cnpj:
            continue
        if txid is not None and m.txid != txid:
            continue
        items.append(
            pix_item(
                m, refunds.get(m.end_to_end_id or "", []), chave=bank.account.pix_key, until=end
            )
        )
    return items


def pix_page(
    items: Sequence[dict[str, Any]],
    *,
    inicio: str,
    fim: str,
    pagina_atual: int = 0,
    itens_por_pagina: int = 100,
    extra_params: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``GET /pix`` response body: one page of `items` with BACEN's ``paginacao``."""
    total = len(items)
    pages = max(1, math.ceil(total / itens_por_pagina)) if itens_por_pagina else 1
    lo = pagina_atual * itens_por_pagina
    params: dict[str, Any] = {"inicio": inicio, "fim": fim}
    params.update(extra_params or {})
    params["paginacao"] = {
        "paginaAtual": pagina_atual,
        "itensPorPagina": itens_por_pagina,
        "quantidadeDePaginas": pages,
        "quantidadeTotalDeItens": total,
    }
    return {"parametros": params, "pix": list(items[lo : lo + itens_por_pagina])}


def render_pix_json(
    bank: Bank, start: datetime, end: datetime, items: Iterable[dict[str, Any]] | None = None
) -> bytes:
    """The whole period as one ``GET /pix`` page (UTF-8 JSON)."""
    all_items = list(items) if items is not None else pix_items(bank, start, end)
    body = pix_page(
        all_items,
        inicio=rfc3339_local(start),
        fim=rfc3339_local(end),
        itens_por_pagina=max(1, len(all_items)),
    )
    return (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
