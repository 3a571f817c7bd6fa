"""Open Finance Brasil accounts API: saved transaction pages
(`GET /accounts/v2/accounts/{accountId}/transactions`), as an aggregator or a bank's portal
delivers them: one page per file, a JSON list of pages, or one page per line.

A page is `{"data": [...], "links": {"self", "first", "prev", "next", "last"},
"meta": {"totalRecords", "totalPages", "requestDateTime"}}`. Each `data[]` item:

- `completedAuthorisedPaymentType`: only `TRANSACAO_EFETIVADA` (carried out) is money;
  `LANCAMENTO_FUTURO` (scheduled, its id may still change) and `TRANSACAO_PROCESSANDO`
  (processing) are counted in the checks and are not lines (a later page brings them
  once they are carried out); anything else is an error;
- `creditDebitType` CREDITO | DEBITO: the sign (required: the direction is never guessed);
- `transactionAmount: {amount: "100.0000", currency: "BRL"}` (v2; up to 4 decimals, the
  extra ones must be zeros) or v1's `amount` + `transactionCurrency` (a JSON number, read
  as an exact decimal: numbers are never floats here); amounts are unsigned;
- `transactionDateTime` (v2, UTC with milliseconds) else `transactionDate` (a day: its
  start in America/Sao_Paulo);
- `transactionId` is the bank_reference; a transactionId with BACEN's end-to-end shape
  (banks that use the PIX id as theirs) is the PIX's end_to_end_id;
- `transactionName` the description (PIX ids and a devolução's original id are read from
  it as from an OFX MEMO), `type` (PIX, TED, TARIFA_SERVICOS_AVULSOS, PACOTE_TARIFA_SERVICOS,
  ...) the kind, `partieCnpjCpf` the counterparty document; `partieCompeCode`,
  `partieBranchCode`, `partieNumber`, `partieCheckDigit` (the counterparty's account) join
  the description.

Coverage: the `fromBookingDate`/`toBookingDate` of the request (from `links.self`), for the
accountId in its path; without them, the first and last booking days read. Only for what
the request listed: `creditDebitIndicator=CREDITO` covers credits only (scope "received"),
`DEBITO` or a query parameter recon does not know covers nothing, and so does a page whose
lines contradict its request (booked outside its period); each with a warning.
If a file holds every page of one request (pages 1..totalPages), its items must add up to
`meta.totalRecords`.
`source_line` is the item's position in the file (1-based, over all pages).
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from recon.errors import StatementError
from recon.money import AmountError, parse_cents
from recon.statements.lines import (
    BUSINESS_TZ,
    E2E_FULL,
    EPOCH,
    Bad,
    LineError,
    ParseResult,
    classify,
    clean,
    days_coverage,
    iso_to_us,
    json_documents,
    json_shape,
)

CARRIED_OUT = "TRANSACAO_EFETIVADA"
NOT_MONEY = frozenset({"LANCAMENTO_FUTURO", "TRANSACAO_PROCESSANDO"})
FEE_TYPES = frozenset({"PACOTE_TARIFA_SERVICOS", "TARIFA_SERVICOS_AVULSOS", "TARIFA"})
PIX_TYPES = frozenset({"PIX"})
_ACCOUNT = re.compile(r"/accounts/([^/?#]+)/transactions")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_PLAIN = re.compile(r"([0-9]{1,16})\.([0-9]{2})(?:00)?")
_FRACTION = re.compile(r"[0-9]{1,16}\.[0-9]{2}([0-9]+)")  # digits past the cents


def _pages(docs: list[Any], source: str) -> list[dict[str, Any]]:
    pages = []
    for doc in docs:
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
            raise StatementError(
                f"{source}: not an Open Finance transactions page (expected an object with "
                f"a 'data' list; seen: {json_shape(doc)})"
            )
        pages.append(doc)
    return pages


def _text(item: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = item.get(key)
    if value is None or value == "":
        if required:
            raise LineError(key, "missing")
        return None
    if not isinstance(value, str):
        raise LineError(key, f"must be text, got {type(value).__name__}")
    return value


def _cents(number: int, item: dict[str, Any]) -> int:
    amount = item.get("transactionAmount")
    if amount is not None:
        if not isinstance(amount, dict):
            raise LineError("transactionAmount", "must be an object {amount, currency}")
        value, currency = amount.get("amount"), amount.get("currency")
        where, currency_field = "transactionAmount.amount", "transactionAmount.currency"
    else:  # v1
        value, currency = item.get("amount"), item.get("transactionCurrency")
        where, currency_field = "amount", "transactionCurrency"
    if isinstance(value, (Decimal, int)) and not isinstance(value, bool):
        value = format(Decimal(value), "f")
    if not isinstance(value, str):
        raise LineError(where, "missing")
    if currency is not None and currency != "BRL":
        raise LineError(currency_field, f"{str(currency)[:10]!r}, not BRL")
    plain = _PLAIN.fullmatch(value)
    if plain is not None:  # "110.0000", the API's own form: exact integer arithmetic
        return int(plain.group(1)) * 100 + int(plain.group(2))
    fraction = _FRACTION.fullmatch(value.strip())
    if fraction is not None and fraction.group(1).strip("0"):
        # The API allows 4 decimals; the official mock data fills them ('9848.2852'). Money
        # moves in whole cents (a PIX cannot carry part of one), and recon never rounds.
        tx_id = item.get("transactionId")
        named = f" (transactionId {str(tx_id)[:40]!r})" if tx_id else ""
        raise LineError(
            where,
            f"item {number}{named}: {value[:40]!r} has a fraction of a cent "
            f"({len(fraction.group(1))} decimals past the cents); money moves in whole cents "
            "and recon never rounds, so the amount is refused rather than rounded",
        )
    try:
        cents = parse_cents(value.strip(), decimal_mark=".")
    except AmountError as exc:
        raise LineError(where, str(exc)) from exc
    if cents < 0:
        raise LineError(where, f"amounts are unsigned, got {value[:40]!r}")
    return cents


def _booked(item: dict[str, Any]) -> str:
    when = _text(item, "transactionDateTime")
    if when is not None:
        try:
            iso_to_us(when)
        except LineError as exc:
            raise LineError("transactionDateTime", exc.reason) from exc
        return when
    day = _text(item, "transactionDate")
    if day is None:
        raise LineError("transactionDateTime", "missing (and no transactionDate)")
    if not _DAY.fullmatch(day[:10]):
        raise LineError("transactionDate", f"not a date: {day[:40]!r}")
    try:
        d = date.fromisoformat(day[:10])
    except ValueError as exc:
        raise LineError("transactionDate", f"not a date: {day[:40]!r}") from exc
    return datetime(d.year, d.month, d.day, tzinfo=BUSINESS_TZ).isoformat()


class NotMoney(Exception):
    def __init__(self, status: str):
        super().__init__(status)
        self.status = status


def _row(number: int, item: Any) -> tuple[Any, ...]:
    if not isinstance(item, dict):
        raise LineError("data", "item must be an object")
    status = _text(item, "completedAuthorisedPaymentType", required=True)
    assert status is not None
    if status in NOT_MONEY:
        raise NotMoney(status)
    if status != CARRIED_OUT:
        raise LineError("completedAuthorisedPaymentType", f"unknown value {status[:40]!r}")
    side = _text(item, "creditDebitType", required=True)
    if side not in ("CREDITO", "DEBITO"):
        raise LineError("creditDebitType", f"must be CREDITO or DEBITO, got {str(side)[:20]!r}")
    direction = "credit" if side == "CREDITO" else "debit"
    cents = _cents(number, item)
    booked = _booked(item)
    tx_id = clean(_text(item, "transactionId"))
    name = clean(_text(item, "transactionName"))
    kind_type = (_text(item, "type") or "").upper()
    document = _text(item, "partieCnpjCpf")
    account = [
        f"{label} {value}"
        for label, key in (
            ("banco", "partieCompeCode"),
            ("ag", "partieBranchCode"),
            ("conta", "partieNumber"),
            ("dv", "partieCheckDigit"),
        )
        if (value := clean(_text(item, key)))
    ]
    pix_id = tx_id if tx_id and E2E_FULL.fullmatch(tx_id) else None
    kind, e2e, refund_of = classify(direction, name, pix_id, fee_hint=kind_type in FEE_TYPES)
    if kind == "other" and kind_type in PIX_TYPES:
        kind = "pix_in" if direction == "credit" else "pix_out"
    description = clean(" ".join([name or "", *account])) or None
    reference = None if tx_id in (e2e, refund_of) else tx_id
    return (
        number,
        booked,
        cents if direction == "credit" else -cents,
        direction,
        kind,
        e2e,
        None,
        refund_of,
        None,
        clean(document),
        None,
        description,
        reference,
    )


def parse_documents(docs: list[Any], source: str) -> ParseResult:
    """Lines from decoded Open Finance transaction pages."""
    pages = _pages(docs, source)
    result = ParseResult()
    not_money: dict[str, int] = {}
    number = 0
    page_rows: list[list[tuple[Any, ...]]] = []
    for page in pages:
        first_row = len(result.rows)
        for item in page["data"]:
            number += 1
            try:
                result.rows.append(_row(number, item))
            except NotMoney as skip:
                not_money[skip.status] = not_money.get(skip.status, 0) + 1
            except LineError as exc:
                result.bad.append(Bad(number, exc.field, exc.reason, _raw(item)))
        page_rows.append(result.rows[first_row:])
    if not_money:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(not_money.items()))
        result.checks.append(
            f"{sum(not_money.values())} items not carried out, not lines ({counts})"
        )
    _check_total(pages, number, result, source)
    _coverage(pages, page_rows, result)
    return result


def _query(page: dict[str, Any]) -> tuple[str | None, dict[str, list[str]]]:
    links = page.get("links")
    url = links.get("self") if isinstance(links, dict) else None
    if not isinstance(url, str):
        return None, {}
    parts = urlsplit(url[:4096])
    match = _ACCOUNT.search(parts.path)
    return (match.group(1) if match else None), parse_qs(parts.query)


def _check_total(pages: list[dict[str, Any]], items: int, result: ParseResult, source: str) -> None:
    meta = pages[0].get("meta") if pages else None
    if not isinstance(meta, dict):
        return
    total, count = meta.get("totalRecords"), meta.get("totalPages")
    if not isinstance(total, int) or not isinstance(count, int) or count > 100_000:
        return
    numbers = set()
    for page in pages:
        values = _query(page)[1].get("page") or ["1"]
        if values[0].isdigit():
            numbers.add(int(values[0]))
    if numbers != set(range(1, count + 1)) or len(pages) != count:
        result.warnings.append(
            f"{len(pages)} of the request's {count} pages in this file: totals not checked"
        )
        return
    if items != total:
        raise StatementError(
            f"{source}: the pages hold {items} transactions, meta.totalRecords says {total} "
            "(a page is missing or damaged)"
        )
    result.checks.append(f"{count} pages, {items} transactions = meta.totalRecords")


# The query parameters of `GET /accounts/{accountId}/transactions` and `.../transactions-current`
# (accounts API v1 and v2): paging, the booking-date period, and `creditDebitIndicator`, the
# one filter of what is listed. A parameter outside these may have filtered the listing too.
_PAGING = frozenset({"page", "page-size", "pagination-key"})
_KNOWN_PARAMETERS = _PAGING | {"fromBookingDate", "toBookingDate", "creditDebitIndicator"}


def _listing(query: dict[str, list[str]]) -> tuple[str | None, str]:
    """What a request lists, from its query: ("all", ""), ("received", "") for credits only
    (creditDebitIndicator=CREDITO: the engine's scope that covers the credit side only), or
    (None, why) for a request whose listing covers no period recon can use."""
    unknown = sorted(k for k in query if k not in _KNOWN_PARAMETERS)
    if unknown:
        names = ", ".join(k[:40] for k in unknown[:5])
        return None, (
            f"the request has query parameters recon does not know ({names}), which may have "
            "filtered what is listed"
        )
    values = {v.strip().upper() for v in query.get("creditDebitIndicator", [])}
    if not values:
        return "all", ""
    if values == {"CREDITO"}:
        return "received", ""
    if values == {"DEBITO"}:
        return None, (
            "the request asked for debits only (creditDebitIndicator=DEBITO): a period is "
            "recorded for every movement or for credits only, and a debits-only one would "
            "claim that no credit came in"
        )
    shown = ",".join(sorted(v[:20] for v in values))
    return None, f"creditDebitIndicator={shown} is not CREDITO or DEBITO"


def _bound(query: dict[str, list[str]], key: str) -> date | None:
    values = query.get(key)
    if not values or not _DAY.fullmatch(values[0]):
        return None
    try:
        return date.fromisoformat(values[0])
    except ValueError:
        return None


def _day(booked: str) -> date:
    """The business day of a parsed line's booking time."""
    return (EPOCH + timedelta(microseconds=iso_to_us(booked))).astimezone(BUSINESS_TZ).date()


def _contradiction(query: dict[str, list[str]], scope: str, rows: list[tuple[Any, ...]]) -> str:
    """Why a page's lines are not what its request (links.self) asked for; "" when they are."""
    if not rows:
        return ""
    if scope == "received" and any(row[3] == "debit" for row in rows):
        return "a debit line in a page requested with creditDebitIndicator=CREDITO"
    low, high = _bound(query, "fromBookingDate"), _bound(query, "toBookingDate")
    if low is None and high is None:
        return ""
    days = sorted({_day(row[1]) for row in rows})
    if (low is not None and days[0] < low) or (high is not None and days[-1] > high):
        asked = " ".join(
            f"{key}={day}"
            for key, day in (("fromBookingDate", low), ("toBookingDate", high))
            if day is not None
        )
        return f"lines booked {days[0]}..{days[-1]} fall outside the requested {asked}"
    return ""


def _coverage(
    pages: list[dict[str, Any]], page_rows: list[list[tuple[Any, ...]]], result: ParseResult
) -> None:
    """The request's fromBookingDate .. toBookingDate (whole days) from `links.self`; without
    them the importer takes the lines' first to last day. Either covers only what the request
    listed: a page asked for credits only (creditDebitIndicator=CREDITO) covers the credit
    side (scope "received"); one asked for debits only, or with a parameter recon does not
    know, covers nothing (a warning says why). A page whose lines contradict its request
    (booked outside the requested period, a debit in a credits-only page) is not what it says
    it answers: it covers nothing either (a warning), though its lines are read. Several pages
    in one file: the narrowest of their scopes."""
    scopes: set[str] = set()
    for page, rows in zip(pages, page_rows, strict=True):
        query = _query(page)[1]
        scope, why = _listing(query)
        if scope is None:
            result.warnings.append(f"{why}: no statement period recorded")
            result.coverage = []
            return
        wrong = _contradiction(query, scope, rows)
        if wrong:
            result.warnings.append(
                f"{wrong} (links.self): the page is not what its request asked for, so "
                "neither the requested period nor the lines' days are trusted: no statement "
                "period recorded"
            )
            result.coverage = []
            return
        scopes.add(scope)
    scope = "received" if "received" in scopes else "all"
    result.lines_scope = scope
    starts: list[str] = []
    ends: list[str] = []
    for page in pages:
        query = _query(page)[1]
        for key, bucket in (("fromBookingDate", starts), ("toBookingDate", ends)):
            values = query.get(key)
            if values and _DAY.fullmatch(values[0]):
                bucket.append(values[0])
    if not starts or not ends:
        return
    try:
        first, last = date.fromisoformat(min(starts)), date.fromisoformat(max(ends))
    except ValueError:
        result.warnings.append("fromBookingDate/toBookingDate unreadable: no statement period")
        return
    if last < first:
        result.warnings.append("toBookingDate is before fromBookingDate: no statement period")
        return
    basis = "open-finance fromBookingDate/toBookingDate"
    if scope == "received":
        basis += " creditDebitIndicator=CREDITO"
    result.coverage = [days_coverage(first, last, basis)._replace(scope=scope)]


def _raw(item: Any) -> str:
    try:
        return json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)[:2000]
    except (TypeError, ValueError):
        return repr(item)[:2000]


def parse_file(path: Path) -> ParseResult:
    """Parse a file of Open Finance Brasil transaction pages (UTF-8, BOM tolerated)."""
    text = path.read_bytes().decode("utf-8-sig")
    return parse_documents(json_documents(text, str(path)), str(path))
