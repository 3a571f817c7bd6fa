"""Asaas payments: saved `GET /v3/payments` pages, a PSP that takes its fee from each payment.

A file holds one page `{"object": "list", "hasMore", "totalCount", "limit", "offset",
"data": [...]}`, a JSON list of pages or of payments, one per line (NDJSON), or webhook
bodies `{"event": "PAYMENT_RECEIVED", "payment": {...}}`. Each payment (`"object":
"payment"`):

- `status`: RECEIVED is money the account received; so are REFUNDED, REFUND_REQUESTED,
  REFUND_IN_PROGRESS, CHARGEBACK_REQUESTED, CHARGEBACK_DISPUTE and
  AWAITING_CHARGEBACK_REVERSAL (received first; what goes back is a movement of the
  account's own, in its extrato). PENDING, OVERDUE, CONFIRMED (a card payment not yet
  credited), RECEIVED_IN_CASH (paid outside Asaas), AWAITING_RISK_ANALYSIS and a `deleted`
  payment moved no money: counted in the checks, not lines. Any other status is a bad line;
- `value` is what the payer paid (the gross), `netValue` what Asaas credits the account: the
  line's amount_cents is `netValue` and its fee_cents `value - netValue` (the pair is matched
  on the gross, their sum). JSON numbers, read as exact decimals: a fraction of a cent, a
  negative amount, or a `netValue` above `value` is a bad line;
- `paymentDate` (else `clientPaymentDate`), a day: booked at its start in America/Sao_Paulo;
- `billingType` PIX is a `pix_in`; BOLETO, CREDIT_CARD, ... are `other` (money in, not a PIX);
- `id` is the bank_reference; `description` and `externalReference` (the reference the
  service gave the charge) the description, which the reference pass reads.

A list of payments states no period (it is filtered by status and dates recon cannot see):
it covers nothing, as an API Pix webhook body. `source_line` is the payment's position in
the file (1-based).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from recon.errors import StatementError
from recon.statements.lines import (
    BUSINESS_TZ,
    Bad,
    LineError,
    ParseResult,
    clean,
    json_documents,
    json_shape,
)

RECEIVED = frozenset(
    {
        "RECEIVED",
        "REFUNDED",
        "REFUND_REQUESTED",
        "REFUND_IN_PROGRESS",
        "CHARGEBACK_REQUESTED",
        "CHARGEBACK_DISPUTE",
        "AWAITING_CHARGEBACK_REVERSAL",
    }
)
NOT_MONEY = frozenset(
    {"PENDING", "OVERDUE", "CONFIRMED", "RECEIVED_IN_CASH", "AWAITING_RISK_ANALYSIS"}
)
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def is_asaas(doc: Any) -> bool:
    """Whether a decoded document is an Asaas payments page, payment or webhook body."""
    if not isinstance(doc, dict):
        return False
    if doc.get("object") == "list" and isinstance(doc.get("data"), list) and "hasMore" in doc:
        return True
    return doc.get("object") == "payment" or isinstance(doc.get("payment"), dict)


def _payments(docs: list[Any], source: str) -> Iterator[Any]:
    for doc in docs:
        if isinstance(doc, dict) and doc.get("object") == "list":
            if not isinstance(doc.get("data"), list):
                raise StatementError(f"{source}: an Asaas page's 'data' must be a list")
            yield from doc["data"]
        elif isinstance(doc, dict) and "payment" in doc:
            yield doc["payment"]  # a webhook body
        elif isinstance(doc, dict) and doc.get("object") == "payment":
            yield doc
        else:
            raise StatementError(
                f"{source}: not Asaas payments (expected a page with 'object': 'list' and a "
                f"'data' list, a payment, or a webhook body; seen: {json_shape(doc)})"
            )


def _cents(payment: dict[str, Any], key: str) -> int:
    value = payment.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise LineError(key, "missing" if value is None else "must be a number")
    exact = Decimal(value) * 100
    if exact != exact.to_integral_value():
        raise LineError(key, f"{value} has a fraction of a cent; recon never rounds")
    if exact < 0:
        raise LineError(key, f"must not be negative, got {value}")
    return int(exact)


def _booked(payment: dict[str, Any]) -> str:
    for key in ("paymentDate", "clientPaymentDate"):
        day = payment.get(key)
        if day is None:
            continue
        if not isinstance(day, str) or not _DAY.fullmatch(day):
            raise LineError(key, f"not a date (YYYY-MM-DD): {str(day)[:40]!r}")
        try:
            d = date.fromisoformat(day)
        except ValueError as exc:
            raise LineError(key, f"not a date: {day!r}") from exc
        return datetime(d.year, d.month, d.day, tzinfo=BUSINESS_TZ).isoformat()
    raise LineError("paymentDate", "missing (and no clientPaymentDate)")


def _text(payment: dict[str, Any], key: str) -> str | None:
    value = payment.get(key)
    if value is None or isinstance(value, str):
        return clean(value)
    raise LineError(key, f"must be text, got {type(value).__name__}")


class _NotMoney(Exception):
    pass


def _row(number: int, payment: Any) -> tuple[Any, ...]:
    if not isinstance(payment, dict):
        raise LineError("data", "a payment must be an object")
    status = payment.get("status")
    if payment.get("deleted") is True or status in NOT_MONEY:
        raise _NotMoney("deleted" if payment.get("deleted") is True else status)
    if status not in RECEIVED:
        raise LineError("status", f"unknown status {str(status)[:40]!r}")
    gross, net = _cents(payment, "value"), _cents(payment, "netValue")
    if not 0 < net <= gross:
        raise LineError("netValue", f"must be more than 0 and at most value ({net} > {gross})")
    billing = _text(payment, "billingType")
    words = [_text(payment, "description"), _text(payment, "externalReference")]
    return (
        number,
        _booked(payment),
        net,
        "credit",
        "pix_in" if billing == "PIX" else "other",
        None,
        None,
        None,
        None,
        None,
        None,
        clean(" ".join(w for w in words if w)),
        _text(payment, "id"),
        gross - net,
    )


def parse_documents(docs: list[Any], source: str) -> ParseResult:
    """Lines from decoded Asaas payments pages, payments or webhook bodies."""
    result = ParseResult(coverage=[])
    not_money: dict[str, int] = {}
    for number, payment in enumerate(_payments(docs, source), start=1):
        try:
            result.rows.append(_row(number, payment))
        except _NotMoney as skip:
            not_money[str(skip)] = not_money.get(str(skip), 0) + 1
        except LineError as exc:
            raw = json.dumps(payment, default=str, ensure_ascii=False)[:500]
            result.bad.append(Bad(number, exc.field, exc.reason, raw))
    if not_money:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(not_money.items()))
        result.checks.append(f"{sum(not_money.values())} payments moved no money ({counts})")
    result.checks.append(
        f"{len(result.rows)} payments received: amount = netValue, fee = value - netValue"
    )
    return result


def parse_file(path: Path) -> ParseResult:
    """Parse a file of Asaas payments (UTF-8, BOM tolerated)."""
    text = path.read_bytes().decode("utf-8-sig")
    return parse_documents(json_documents(text, str(path)), str(path))
