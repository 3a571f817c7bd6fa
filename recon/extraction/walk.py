"""Walk an offset-paginated list until its id set is known to be complete and stable.

The v2 list endpoint has no cursor, no date filter and no documented order, and intents are
created and change status while a walk is under way. A naive walk (fetch offset 0, L, 2L, ...
until a short page) silently duplicates items that shift to higher offsets and misses items
that shift to lower ones. This module reads every page's `total`, checks the echoed
`limit`/`offset`, and keeps walking until the result is provably (or observably) right.

Two kinds of list, two proofs:

* **Monotone lists** (no status filter). Intents are never deleted and their type never
  changes, so an intent that was in the list once is in it for good: the set only grows.
  Every id we saw therefore exists at the moment of the last response, and if the number of
  distinct ids equals the `total` of that last response, the set *is* the server's set at
  that moment. Proof by counting, whatever the order or the interleaving of pages.
  Pass 1 fetches every page concurrently. If the count does not match (inserts during the
  walk, pages shifted under concurrency), a *gap-fill* pass reads only what may have been
  missed: with inserts at the head (newest first, the emulator's and the real service's
  order), a page read when the list had `total` items now sits `max_total - total` further
  down, so mapping every page read to today's offsets shows the ranges nobody read (the new
  head, and the seams where neighbouring pages were read on either side of an insert).
  Those ranges, with a margin, are read concurrently; repeat while the count is short.
  Every third pass is a full walk with overlapping pages instead, in case the list does
  not grow at the head. At most `max_passes`; the count proof alone decides success, so a
  wrong guess about the order costs passes, never correctness.

* **Non-monotone lists** (a status filter: intents enter and leave the filtered list as they
  move). Counting cannot tell "X left and Y entered" from "nothing happened", so we walk
  fully, again and again, until two consecutive passes are each clean (same total on every
  page, no duplicate id, as many distinct ids as `total`) and return the *same* id set. The
  snapshot is that set; ids seen in earlier passes but not in the last one are left out
  (they left the filtered list).

Within a run, an id seen more than once keeps its latest version: the greatest
`updated_at`, ties going to the later read. Rows are not held in memory: the walker hands
every version to a sink (the Parquet writer) and keeps only the set of ids seen (16 bytes
each for canonical UUIDs); the snapshot writer picks the winning versions afterwards.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from recon.api.protocol import loads_json
from recon.errors import PaginationError, ResponseLimitError
from recon.extraction.ids import IdSet, UuidIds, id_key, id_keys, id_text
from recon.extraction.pages import decode_envelope

__all__ = [
    "IdSet",
    "Page",
    "PageFetcher",
    "PageRequest",
    "UuidIds",
    "WalkPlan",
    "WalkResult",
    "Walker",
    "id_key",
    "id_keys",
    "id_text",
    "parse_page",
]

log = logging.getLogger(__name__)

MAX_LIMIT = 100  # the spec's bound for `limit`


@dataclass(frozen=True)
class Page:
    """One validated list response (`items`: dicts, or `RawItems` on the bytes path)."""

    items: Any
    total: int
    limit: int
    offset: int
    date: str | None = None


class PageFetcher(Protocol):
    """Fetches one list page: ``await fetch(offset=..., limit=...)`` → (body, Date header);
    the body as bytes (decoded by `parse_page`) or already decoded JSON."""

    def __call__(self, *, offset: int, limit: int) -> Awaitable[tuple[Any, str | None]]: ...


def parse_page(
    body: Any, *, offset: int, limit: int, date: str | None = None, max_total: int = 0
) -> Page:
    """Validate a list response body against what was asked; raise PaginationError if unusable.

    The page may hold at most the echoed `limit` items, and the echoed limit may not exceed
    the one asked; `total` may not exceed `max_total` (0: no bound): nothing is ever sized
    by a server's `total`, but a walk that believed 10^12 would never end.
    """
    asked = f"offset={offset} limit={limit}"
    decoded = decode_envelope(body) if isinstance(body, bytes) else None
    items: Any
    counts: Mapping[str, Any]
    if decoded is not None:
        items, counts = decoded  # the fast path: items stay bytes
    else:
        if isinstance(body, bytes):
            try:
                body = loads_json(body)
            except ValueError:
                raise PaginationError(f"list response is not JSON ({asked})") from None
            except ResponseLimitError as exc:  # nested too deep
                raise ResponseLimitError(f"list response ({asked}): {exc}") from None
        if not isinstance(body, Mapping):
            raise PaginationError(f"list response is not a JSON object ({asked})")
        items, counts = body.get("intents"), body
        if not isinstance(items, list):
            raise PaginationError(f"list response has no 'intents' array ({asked})")
    values: dict[str, int] = {}
    for key in ("total", "limit", "offset"):
        value = counts.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise PaginationError(
                f"list response field {key!r} is not a count: {value!r} ({asked})"
            )
        values[key] = value
    if values["offset"] != offset:
        # A server that ignores `offset` would make the walk loop over the same page.
        raise PaginationError(
            f"server echoed offset={values['offset']} for a request with offset={offset}"
        )
    if values["limit"] < 1:
        raise PaginationError(f"server echoed limit=0 ({asked})")
    if values["limit"] > limit:
        raise PaginationError(
            f"server echoed limit={values['limit']}, above the {limit} asked ({asked})"
        )
    if len(items) > values["limit"]:
        raise PaginationError(
            f"server returned {len(items)} intents for an echoed limit of {values['limit']} "
            f"({asked})"
        )
    if max_total and values["total"] > max_total:
        raise ResponseLimitError(
            f"server claims total={values['total']:,}, over the bound of {max_total:,} "
            f"(max_total; {asked})"
        )
    return Page(items, values["total"], values["limit"], values["offset"], date)


@dataclass
class WalkResult:
    """What a walk found: counts for the manifest and which written rows to keep."""

    consistent: bool
    total_first: int
    total_last: int
    passes: int
    pages: int
    rows_written: int  # every version handed to the sink
    unique_ids: int  # ids in the final set
    duplicates_dropped: int  # rows written that are not kept
    final_ids: list[str] | None  # the ids to keep; None = every id read (monotone walks)
    repeated_ids: list[str] = field(default_factory=list)  # ids read more than once
    drift: list[str] = field(default_factory=list)  # what was observed, for the manifest
    page_limit: int = 0  # the limit the server applied
    first_date: str | None = None  # Date header of the first page: the server's clock


class PageRows(Protocol):
    """What `flatten` makes of a page: its ids (in order) and what the sink takes
    (`recon.extraction.flatten.FlatPage` or `PageItems`)."""

    @property
    def ids(self) -> Sequence[str]: ...

    @property
    def table(self) -> Any: ...


Sink = Callable[[Any], None]  # receives PageRows.table
Flatten = Callable[[Any], PageRows]  # receives Page.items


@dataclass(frozen=True)
class PageRequest:
    """A page to read. `fill_end`: this read fills a slot a shrunk cap left uncovered, up to
    that offset (the next part of the slot is asked for once this one is in)."""

    offset: int
    limit: int
    fill_end: int | None = None


@dataclass
class _Pass:
    number: int
    kind: str  # full | gap-fill
    ids: set[bytes | str] | None  # only kept for non-monotone walks
    totals: set[int] = field(default_factory=set)
    rows: int = 0
    duplicates: int = 0
    short_pages: int = 0
    pages: int = 0
    clean_ids: bool = False


class WalkPlan:
    """The walk's decisions and bookkeeping, sans I/O: which page to read next, what a page
    read tells (ids, totals, drift, the server's cap), when a pass ends and whether the
    result is proven. A shell (:class:`Walker`) asks :meth:`start_pass`, then
    :meth:`next_request` from as many workers as it likes, :meth:`feed` s each page back,
    and calls :meth:`end_pass`; nothing here touches a socket or waits.

    `monotone=True` when nothing can leave the list (no status filter).
    """

    def __init__(
        self,
        *,
        monotone: bool = True,
        page_size: int = MAX_LIMIT,
        max_passes: int = 5,
        max_total: int = 0,
    ):
        if max_passes < 1:
            raise ValueError("max_passes must be >= 1")
        if not 1 <= page_size <= MAX_LIMIT:
            raise ValueError(f"page_size must be 1..{MAX_LIMIT}")
        self.monotone = monotone
        self.max_passes = max_passes
        self.max_total = max_total  # a bound on `total` (0: none)
        self.page_size = page_size
        # every id read, as compact keys (see `id_key`); seen.repeated: the ids read more
        # than once (drift), whose versions need choosing at the end
        self.seen = IdSet()
        self.rows_written = 0
        self.pages = 0
        self.limit = page_size  # asked first; then the limit the server applies (echoed)
        self.total_first: int | None = None
        self.total_last = 0
        self.biggest_total = 0
        self.first_date: str | None = None
        self.drift: list[str] = []
        # (offset, items returned, total) of every page read: where pages landed
        self.coverage: list[tuple[int, int, int]] = []
        self.passes: list[_Pass] = []
        self.consistent = False
        self.finished = False
        self.final_ids: set[bytes | str] | None = None
        self._overlap = 0
        # the current pass's queue: extra reads first, then strided offsets up to `frontier`
        self._extra: list[PageRequest] = []
        self._next = 0
        self._stride = 1
        self._frontier = 0
        self._ended = False
        self._first_pending = False
        self._offsets: Iterator[int] = iter(())

    @property
    def current(self) -> _Pass:
        return self.passes[-1]

    # -- passes --------------------------------------------------------------------------

    def start_pass(self) -> PageRequest | None:
        """Begin the next pass; return the request to read alone before any other (page 0
        of a full pass: it tells the total and the server's cap), or None."""
        number = len(self.passes) + 1
        # monotone: full, then gap fills; every third pass a full overlapping walk, in case
        # the list does not grow at the head as gap filling assumes
        kind = "full" if not self.monotone or number % 3 == 1 else "gap-fill"
        self.passes.append(_Pass(number, kind, None if self.monotone else set()))
        self._extra, self._ended = [], False
        if kind == "full":
            self._next = self._frontier = 0  # nothing until page 0 is in
            self._first_pending = True
            return PageRequest(0, self.limit)
        margin = max(1, self.limit // 4)
        step = max(1, self.limit - margin)
        # lazily: a range is never materialized, whatever a server claimed
        self._offsets = (o for start, end in self.gaps(margin) for o in range(start, end, step))
        return None

    def next_request(self) -> PageRequest | None:
        """The next page to read in this pass, or None when this worker may stop."""
        if self._extra:
            return self._extra.pop()
        if self.current.kind == "gap-fill":
            offset = next(self._offsets, None)
            return None if offset is None else PageRequest(offset, self.limit)
        if self._next >= self._frontier:
            return None
        offset, self._next = self._next, self._next + self._stride
        return PageRequest(offset, self.limit)

    def feed(self, request: PageRequest, page: Page, ids: Sequence[str]) -> None:
        """Record a page read for `request` (with its items' ids, in order)."""
        p = self.current
        self.pages += 1
        if self.total_first is None:
            self.total_first = page.total
            self.first_date = page.date
        self.total_last = page.total
        self.biggest_total = max(self.biggest_total, page.total)
        p.pages += 1
        self.coverage.append((page.offset, len(page.items), page.total))
        p.totals.add(page.total)
        if len(page.items) < page.limit and page.offset + len(page.items) < page.total:
            p.short_pages += 1
        if p.ids is not None:
            p.ids.update(id_keys(ids))
        self.seen.add(ids)
        p.rows += len(ids)
        self.rows_written += len(ids)
        if request.fill_end is not None:
            self._after_fill(request, page)
        elif p.kind == "gap-fill":
            self.limit = min(self.limit, page.limit)
        elif self._first_pending:
            self._first_pending = False
            self._after_first(page)
        else:
            self._after_page(request, page)

    def _after_first(self, first: Page) -> None:
        if first.limit < self.limit:
            log.info("server caps limit at %d (asked %d)", first.limit, self.limit)
        self.limit = min(first.limit, self.limit)
        if not first.items:
            self._ended = True
            return
        # With an overlap, consecutive pages share that many items, so a shift of up to
        # `overlap` positions between the reads of two neighbouring pages loses nothing.
        self._stride = max(1, self.limit - min(self._overlap, self.limit // 2))
        self._next, self._frontier = self._stride, first.total

    def _after_page(self, request: PageRequest, page: Page) -> None:
        if page.items and page.limit < self._stride:
            # The cap shrank mid-walk: read the part of this slot it did not cover.
            self._fill(request.offset + page.limit, request.offset + self._stride)
        if not page.items:
            # An empty page ends the list, whatever an older total said.
            self._ended = True
            self._frontier = min(self._frontier, request.offset)
        elif not self._ended:
            self._frontier = max(self._frontier, page.total)

    def _fill(self, start: int, end: int) -> None:
        if start < end:
            self._extra.append(PageRequest(start, min(self.limit, end - start), end))

    def _after_fill(self, request: PageRequest, page: Page) -> None:
        if page.items and request.fill_end is not None:
            self._fill(request.offset + page.limit, request.fill_end)

    def end_pass(self) -> None:
        """Close the current pass: note its drift, decide whether the walk is done."""
        p = self.current
        if p.number == 1:  # ids read twice in the first pass: pages shifted under it
            p.duplicates = p.rows - len(self.seen)
        self._note_drift(p)
        if self.monotone:
            # Counting proof: every id seen exists at the time of the response with the
            # largest total (totals never decrease), so equal counts mean equal sets.
            self.consistent = len(self.seen) == self.biggest_total
        else:
            assert p.ids is not None
            p.clean_ids = (
                len(p.totals) == 1 and p.short_pages == 0 and len(p.ids) == next(iter(p.totals))
            )
            if p.clean_ids and len(self.passes) >= 2:
                prev = self.passes[-2]
                self.consistent = prev.clean_ids and prev.ids == p.ids
            if len(self.passes) >= 2:
                self.passes[-2].ids = None  # the next comparison needs only the last set
            self.final_ids = p.ids
        # Re-walks overlap their pages: shifts between neighbouring reads lose nothing.
        self._overlap = max(1, self.limit // 4)
        self.finished = self.consistent or len(self.passes) >= self.max_passes

    def gaps(self, margin: int) -> list[tuple[int, int]]:
        """Ranges of the list, in today's offsets, that no page read may have covered.

        With inserts at the head (newest first), a page read when the list had `total`
        items now sits `biggest_total - total` positions further down. Mapping every page
        read to today's offsets shows the ranges nobody read (the head, and the seams where
        pages shifted between concurrent reads); each gets `margin` extra on both sides.
        """
        top = self.biggest_total
        spans = sorted(
            (offset + top - total, offset + top - total + n)
            for offset, n, total in self.coverage
            if n
        )
        holes: list[tuple[int, int]] = []
        reach = 0
        for start, end in spans:
            if start > reach:
                holes.append((reach, start))
            reach = max(reach, end)
        if reach < top:
            holes.append((reach, top))
        merged: list[tuple[int, int]] = []
        for start, end in holes:
            start, end = max(0, start - margin), end + margin
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    def result(self) -> WalkResult:
        """What the walk found (after the last pass)."""
        final = self.final_ids
        unique = len(self.seen) if final is None else len(final)
        return WalkResult(
            consistent=self.consistent,
            total_first=self.total_first or 0,
            total_last=self.total_last,
            passes=len(self.passes),
            pages=self.pages,
            rows_written=self.rows_written,
            unique_ids=unique,
            duplicates_dropped=self.rows_written - unique,
            final_ids=None if final is None else [id_text(k) for k in final],
            repeated_ids=[id_text(k) for k in self.seen.repeated],
            drift=self.drift,
            page_limit=self.limit,
            first_date=self.first_date,
        )

    def _note_drift(self, p: _Pass) -> None:
        notes = []
        if len(p.totals) > 1:
            notes.append(f"total changed ({min(p.totals)}..{max(p.totals)})")
        if p.duplicates:
            notes.append(f"{p.duplicates} ids seen twice")
        if p.short_pages:
            notes.append(f"{p.short_pages} short pages before the end")
        if self.monotone and len(self.seen) != self.biggest_total:
            notes.append(f"{len(self.seen)} distinct ids for total {self.biggest_total}")
        if notes:
            self.drift.append(f"pass {p.number} ({p.kind}): " + ", ".join(notes))
            log.info("drift in pass %d: %s", p.number, ", ".join(notes))


class Walker:
    """The asyncio shell of a :class:`WalkPlan`: reads what the plan asks for with `fetch`
    (``concurrency`` pages at a time), flattens items with `flatten`, hands rows to `sink`.

    `on_progress(rows_seen, total)` is called after every page. `max_total` bounds the
    `total` a server may claim (0: none).
    """

    def __init__(
        self,
        fetch: PageFetcher,
        *,
        flatten: Flatten,
        sink: Sink,
        monotone: bool = True,
        page_size: int = MAX_LIMIT,
        concurrency: int = 8,
        max_passes: int = 5,
        max_total: int = 0,
        on_progress: Callable[[int, int], None] | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        self.plan = WalkPlan(
            monotone=monotone, page_size=page_size, max_passes=max_passes, max_total=max_total
        )
        self.fetch = fetch
        self.flatten = flatten
        self.sink = sink
        self.concurrency = concurrency
        self.on_progress = on_progress

    @property
    def seen(self) -> IdSet:
        return self.plan.seen

    @property
    def first_date(self) -> str | None:
        return self.plan.first_date

    async def _read(self, request: PageRequest) -> None:
        plan = self.plan
        body, date = await self.fetch(offset=request.offset, limit=request.limit)
        page = parse_page(
            body, offset=request.offset, limit=request.limit, date=date, max_total=plan.max_total
        )
        rows = self.flatten(page.items)
        plan.feed(request, page, rows.ids)
        if rows.ids:
            self.sink(rows.table)
        if self.on_progress is not None:
            seen = plan.seen.count_hint()
            self.on_progress(seen, max(page.total, seen))

    async def _worker(self) -> None:
        while (request := self.plan.next_request()) is not None:
            await self._read(request)

    async def run(self) -> WalkResult:
        """Walk until complete (monotone: count proof; otherwise: two equal clean passes)."""
        plan = self.plan
        while not plan.finished:
            first = plan.start_pass()
            if first is not None:
                await self._read(first)
            await asyncio.gather(*(self._worker() for _ in range(self.concurrency)))
            plan.end_pass()
        return plan.result()
