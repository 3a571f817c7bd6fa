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

And only once every page of the request has been read (`judge`): page 1 of 6 lists part of
the period's movements, and a covered period with no line in it means "nothing moved". The
pages of a request are those whose `links.self` is the same without `page`, `page-size` and
`pagination-key`; it has meta.totalPages pages, or (accounts v2, whose meta states no
totals) as many as the number of the page that links no `next`. Pages read whole must add up
to `meta.totalRecords` (an error otherwise: a page missing or damaged). A file's pages are
judged here; an import judges the pages of a request spread over its files, and with the
pages earlier imports read (`judge_import`, recon.statements.importer).
`source_line` is the item's position in the file (1-based, over all pages).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

from recon.errors import StatementError
from recon.money import AmountError, parse_cents
from recon.statements.lines import (
    BUSINESS_TZ,
    E2E_FULL,
    EPOCH,
    Bad,
    Coverage,
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
# Transaction types (Open Finance Brasil, accounts API `type`) that say a line is the bank's own
CODE_KINDS = {
    "PACOTE_TARIFA_SERVICOS": "fee",
    "TARIFA_SERVICOS_AVULSOS": "fee",
    "TARIFA": "fee",
    "ENCARGOS_JUROS_CHEQUE_ESPECIAL": "interest",
    "RENDIMENTO_APLIC_FINANCEIRA": "yield",
}
PIX_TYPES = frozenset({"PIX"})
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
    kind, e2e, refund_of = classify(direction, name, pix_id, code_kind=CODE_KINDS.get(kind_type))
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


def parse_documents(docs: list[Any], source: str) -> OpenFinanceResult:
    """Lines from decoded Open Finance transaction pages."""
    pages = _pages(docs, source)
    result = OpenFinanceResult()
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
    result.pages = [
        _page(source, page, rows, result.warnings)
        for page, rows in zip(pages, page_rows, strict=True)
    ]
    # pages that name no request (no links.self) are this file's pages of one, in order
    anonymous = [i for i, page in enumerate(result.pages) if page.request is None]
    for place, i in enumerate(anonymous, start=1):
        result.pages[i] = replace(result.pages[i], number=place)
    result.coverage = []
    for group in _grouped(result.pages).values():
        verdict = judge(group)
        result.coverage += verdict.coverage
        result.checks += verdict.checks
        result.warnings += verdict.warnings
        if verdict.whole:
            result.whole.add(group[0].group)
        else:
            result.partial += verdict.warnings
    return result


# --------------------------------------------------------------------------- the request

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


@dataclass(frozen=True)
class Page:
    """One transaction page, as far as it tells whether its request has been read whole: the
    request (`links.self` without its paging parameters), which page of it this is, what it
    says of the others (meta.totalPages, meta.totalRecords, links.next), and its lines' days."""

    source: str  # the file it was read from
    request: str | None  # None: no links.self (grouped with its own file's pages only)
    number: int | None  # links.self `page` (1 when absent), None when unreadable; without
    # links.self, its place among the file's pages
    last: int | None  # the request's last page: meta.totalPages, else this page when its links
    # name no next one; None when it does not say
    records: int | None  # meta.totalRecords
    items: int  # its data items, money or not
    first_day: date | None  # business days of its lines
    last_day: date | None
    wrong: bool = False  # its lines contradict its request (a warning said so when read)
    stored: bool = False  # read by an earlier import

    @property
    def group(self) -> str:
        """The pages that complete each other: those of one request, or of one file when they
        name no request."""
        return self.request if self.request is not None else "\0" + self.source


@dataclass
class OpenFinanceResult(ParseResult):
    """A ParseResult with the pages read, so an import can tell when the pages of a request
    spread over several files (or imports) hold all of it (`judge_import`)."""

    pages: list[Page] = field(default_factory=list)
    whole: set[str] = field(default_factory=set)  # Page.group of the requests held whole
    partial: list[str] = field(default_factory=list)  # the warnings on the others' pages


@dataclass
class Verdict:
    """What the pages of one request come to: the period they cover (none until every page of
    the request is read), and the checks and warnings to report."""

    coverage: list[Coverage] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    whole: bool = False


_PAGE_NUMBER = re.compile(r"[0-9]{1,9}")
_ENDPOINT = re.compile(r"accounts/[^/?#]{1,100}/transactions(?:-current)?")
MAX_PAGES = 100_000


def _page(
    source: str, page: dict[str, Any], rows: list[tuple[Any, ...]], warnings: list[str]
) -> Page:
    """The Page of one decoded page; a request that narrows the listing, or lines that
    contradict their request, add their warning to `warnings` (once each)."""
    links = page.get("links")
    url = links.get("self") if isinstance(links, dict) else None
    request = None
    query: dict[str, list[str]] = {}
    if isinstance(url, str):
        parts = urlsplit(url[:4096])
        query = parse_qs(parts.query)
        kept = sorted(
            (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in _PAGING
        )
        request = urlunsplit(
            (parts.scheme.lower(), parts.netloc.lower(), parts.path, urlencode(kept), "")
        )
    number = None  # without links.self: numbered by its place in the file (parse_documents)
    if request is not None:
        value = (query.get("page") or ["1"])[0]
        number = int(value) if _PAGE_NUMBER.fullmatch(value) and int(value) >= 1 else None
    meta = page.get("meta")
    meta = meta if isinstance(meta, dict) else {}
    total_pages, records = _count(meta.get("totalPages")), _count(meta.get("totalRecords"))
    last: int | None = None
    if total_pages is not None:
        # an empty listing may say 0 pages; an absurd count leaves the last page unknown
        last = max(total_pages, 1) if total_pages <= MAX_PAGES else None
    elif request is not None and isinstance(links, dict) and not links.get("next"):
        last = number  # no next page: this is the last (Accounts v2 states no totalPages)
    scope, why = _listing(query)
    wrong = False
    if scope is None:
        _warn(warnings, f"{why}: no statement period recorded")
    elif reason := _contradiction(query, scope, rows):
        _warn(
            warnings,
            f"{reason} (links.self): the page is not what its request asked for, so neither "
            "the requested period nor the lines' days are trusted: no statement period recorded",
        )
        wrong = True
    days = sorted({_day(row[1]) for row in rows})
    return Page(
        source,
        request,
        number,
        last,
        records,
        len(page["data"]),
        days[0] if days else None,
        days[-1] if days else None,
        wrong,
    )


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _warn(warnings: list[str], text: str) -> None:
    if text not in warnings:
        warnings.append(text)


def _grouped(pages: Sequence[Page]) -> dict[str, list[Page]]:
    groups: dict[str, list[Page]] = {}
    for page in pages:
        groups.setdefault(page.group, []).append(page)
    return groups


def judge(pages: Sequence[Page], stored: Sequence[Page] = ()) -> Verdict:
    """The verdict on the pages of one request read by one file or import (`pages`), with
    the pages earlier imports read (`stored`) when those alone do not hold every page.

    Pages that hold every page of their request (1 .. the last, with no sign that the listing
    changed between them) are checked against meta.totalRecords, a mismatch an error as in a
    single file (a page missing or damaged), and cover what the request listed. Completed
    only with stored pages, a mismatch is a warning instead: a stored page cannot be taken
    back, and importing every page of the request together again finds which one is wrong.
    Otherwise they cover nothing, and a warning names the request, the pages read and those
    missing."""
    count, why = _whole(pages)
    if count is not None:
        error, check = _totals(pages, count)
        if error:
            raise StatementError(f"{_files(pages)}: {error}")
        coverage, warnings = _claim(pages)
        return Verdict(coverage, [check] if check else [], warnings, whole=True)
    if not _may_cover(pages):
        return Verdict()  # a warning already says it covers nothing
    label = _label(pages[0].request)
    if stored:
        both = [*pages, *stored]
        count, why = _whole(both)
        if count is not None:
            error, check = _totals(both, count)
            if error:
                return Verdict(
                    warnings=[
                        f"{label}: with the pages earlier imports read, {error}: no statement "
                        "period recorded (import every page of it together to find which)"
                    ]
                )
            coverage, warnings = _claim(both)
            checks = [f"{label}: {check}, with pages earlier imports read"] if check else []
            return Verdict(coverage, checks, warnings, whole=True)
        why += " (with the pages earlier imports read)"
    return Verdict(
        warnings=[
            f"{label}: {why}: no statement period recorded until every page of it is imported "
            "(its lines are imported)"
        ]
    )


def judge_import(
    files: Sequence[OpenFinanceResult], load_stored: Callable[[list[str]], Sequence[Page]]
) -> list[tuple[int, Verdict]]:
    """The verdicts on the requests that no single file of an import holds whole, over every
    file of the import (`files`, in the import's order), with the pages earlier imports read
    (`load_stored(requests)`, asked only when the import's own pages are not whole); each
    with the index of the last file that holds a page of the request, where it is reported."""
    whole = set().union(*(f.whole for f in files))
    groups: dict[str, list[Page]] = {}
    where: dict[str, int] = {}
    for index, parsed in enumerate(files):
        for page in parsed.pages:
            if page.group not in whole:
                groups.setdefault(page.group, []).append(page)
                where[page.group] = index
    open_requests = [
        pages[0].request
        for pages in groups.values()
        if pages[0].request is not None and _whole(pages)[0] is None and _may_cover(pages)
    ]
    stored = _grouped(load_stored(open_requests)) if open_requests else {}
    return [(where[key], judge(pages, stored.get(key, ()))) for key, pages in groups.items()]


def remembered(page: Page) -> bool:
    """Whether a later import needs this page to tell that its request was read whole: a
    numbered page of a named request that may cover a period (not one that narrows the
    listing, nor one whose lines contradict it)."""
    return page.request is not None and page.number is not None and _may_cover([page])


def _whole(pages: Sequence[Page]) -> tuple[int | None, str]:
    """(the request's number of pages, "") when `pages` hold every page of it and nothing says
    its listing changed between them; else (None, what is missing or wrong)."""
    lasts = sorted({p.last for p in pages if p.last is not None})
    records = sorted({p.records for p in pages if p.records is not None})
    if len(lasts) > 1 or len(records) > 1:
        said = "; ".join(
            f"{name} {', '.join(map(str, values))}"
            for name, values in (("pages", lasts), ("meta.totalRecords", records))
            if len(values) > 1
        )
        return None, (
            f"its pages disagree on the totals ({said}): the listing changed between them, so "
            "a movement may have moved from one page to another unseen"
        )
    items: dict[int, set[int]] = {}
    for page in pages:
        if page.number is None:
            return None, "a page's number (links.self page) is unreadable"
        items.setdefault(page.number, set()).add(page.items)
    twice = sorted(n for n, counts in items.items() if len(counts) > 1)
    if twice:
        counts = ", ".join(map(str, sorted(items[twice[0]])))
        return None, (
            f"its pages disagree: page {twice[0]} was read twice, with {counts} items: the "
            "listing changed between them"
        )
    numbers = sorted(items)
    if not lasts and pages[0].request is None:
        return len(numbers), ""  # no links, no meta.totalPages: nothing tells of other pages
    if not lasts:
        return None, (
            f"{_pages_text(numbers)} read, the last page not read yet (each page read links a "
            "next one)"
        )
    last = lasts[0]
    if numbers[-1] > last:
        return None, f"its pages disagree: page {numbers[-1]} is past the last page, {last}"
    missing = [n for n in range(1, last + 1) if n not in items]
    if missing:
        return None, f"{_pages_text(numbers)} of {last} read, {_pages_text(missing)} missing"
    return last, ""


def _totals(pages: Sequence[Page], count: int) -> tuple[str, str]:
    """(error, check) of the items of every page (one copy each) against meta.totalRecords."""
    records = next((p.records for p in pages if p.records is not None), None)
    plural = "s" if count != 1 else ""
    if records is None:
        return "", (f"{count} pages, every page of the request" if count > 1 else "")
    items = sum({p.number: p.items for p in pages}.values())
    if items != records:
        return (
            f"the pages hold {items} transactions, meta.totalRecords says {records} "
            "(a page is missing or damaged)"
        ), ""
    return "", f"{count} page{plural}, {items} transactions = meta.totalRecords"


def _may_cover(pages: Sequence[Page]) -> bool:
    """False when the request covers nothing even with every page (a warning says why)."""
    query = parse_qs(urlsplit(pages[0].request or "").query)
    return _listing(query)[0] is not None and not any(p.wrong for p in pages)


def _claim(pages: Sequence[Page]) -> tuple[list[Coverage], list[str]]:
    """(coverage, warnings) of a request read whole: fromBookingDate .. toBookingDate (whole
    days) from its `links.self`, else its lines' first to last day, for what it listed."""
    if not _may_cover(pages):
        return [], []
    query = parse_qs(urlsplit(pages[0].request or "").query)
    scope = _listing(query)[0]
    assert scope is not None
    low, high = ((query.get(key) or [""])[0] for key in ("fromBookingDate", "toBookingDate"))
    if _DAY.fullmatch(low) and _DAY.fullmatch(high):
        try:
            first, last = date.fromisoformat(low), date.fromisoformat(high)
        except ValueError:
            return [], ["fromBookingDate/toBookingDate unreadable: no statement period"]
        if last < first:
            return [], ["toBookingDate is before fromBookingDate: no statement period"]
        basis = "open-finance fromBookingDate/toBookingDate"
        if scope == "received":
            basis += " creditDebitIndicator=CREDITO"
        return [days_coverage(first, last, basis)._replace(scope=scope)], []
    days = [d for p in pages for d in (p.first_day, p.last_day) if d is not None]
    if not days:
        return [], []
    return [days_coverage(min(days), max(days), "lines first/last day")._replace(scope=scope)], []


def _label(request: str | None) -> str:
    """'request accounts/acc-1/transactions 2026-11-01..2026-11-30', as a person fetches it."""
    if request is None:
        return "the pages (no links.self)"
    parts = urlsplit(request)
    query = parse_qs(parts.query)
    match = _ENDPOINT.search(parts.path)
    name = match.group(0) if match else parts.path[-80:]
    low, high = ((query.get(key) or ["…"])[0][:40] for key in ("fromBookingDate", "toBookingDate"))
    credits = ", credits only" if _listing(query)[0] == "received" else ""
    return f"request {name} {low}..{high}{credits}"


def _pages_text(numbers: Sequence[int]) -> str:
    """'page 2', 'pages 1, 3-5' (at most 10 stretches shown)."""
    stretches: list[list[int]] = []
    for n in numbers:
        if stretches and n == stretches[-1][1] + 1:
            stretches[-1][1] = n
        else:
            stretches.append([n, n])
    shown = ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in stretches[:10])
    more = ", …" if len(stretches) > 10 else ""
    return f"page{'s' if len(numbers) > 1 else ''} {shown}{more}"


def _files(pages: Sequence[Page]) -> str:
    names = list(dict.fromkeys(p.source for p in pages))
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return ", ".join(names[:3]) + more


def _raw(item: Any) -> str:
    try:
        return json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)[:2000]
    except (TypeError, ValueError):
        return repr(item)[:2000]


def parse_file(path: Path) -> OpenFinanceResult:
    """Parse a file of Open Finance Brasil transaction pages (UTF-8, BOM tolerated)."""
    text = path.read_bytes().decode("utf-8-sig")
    return parse_documents(json_documents(text, str(path)), str(path))
