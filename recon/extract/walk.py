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
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from recon.errors import PaginationError

__all__ = [
    "Page",
    "PageFetcher",
    "WalkResult",
    "Walker",
    "id_key",
    "id_keys",
    "id_text",
    "parse_page",
]

log = logging.getLogger(__name__)

MAX_LIMIT = 100  # the spec's bound for `limit`


def id_key(intent_id: str) -> bytes | str:
    """A compact set key: the 16 bytes of a canonical (lowercase, hyphenated) UUID, else the
    text itself. `id_text(id_key(s)) == s` always, so distinct ids never share a key."""
    if len(intent_id) == 36 and intent_id[8] == intent_id[13] == intent_id[18] == "-":
        hexa = intent_id.replace("-", "")
        if len(hexa) == 32 and intent_id[23] == "-":
            try:
                raw = bytes.fromhex(hexa)
            except ValueError:
                return intent_id
            if raw.hex() == hexa:
                return raw
    return intent_id


_UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
_UUIDS = re.compile(f"(?:{_UUID})*")


def id_keys(ids: list[str]) -> list[bytes | str]:
    """`id_key` of every id (same result), one regex and one hex decode for a page of
    canonical UUIDs instead of a check per id."""
    # every id 36 long, so the 36-character chunks the regex checks are the ids themselves
    if ids and set(map(len, ids)) == {36} and _UUIDS.fullmatch(joined := "".join(ids)):
        raw = bytes.fromhex(joined.replace("-", ""))
        return [raw[i : i + 16] for i in range(0, len(raw), 16)]
    return [id_key(i) for i in ids]


def id_text(key: bytes | str) -> str:
    """The id text of an `id_key`."""
    if isinstance(key, bytes):
        h = key.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return key


class IdSet:
    """The set of id keys read (see `id_key`), ~16 bytes per canonical UUID.

    A Python set of 16-byte `bytes` costs ~90 bytes per id (object + table slot): 90 MB
    at 1M intents. Here UUID keys go to a small set of recent keys, which every
    `FLUSH_KEYS` is sorted into a numpy array of 16-byte strings (a "level"); membership is
    a vectorized binary search per level, levels are merged when there are too many.
    Other ids (not canonical UUIDs) stay in a plain set.
    """

    FLUSH_KEYS = 1 << 16
    MAX_LEVELS = 6

    def __init__(self) -> None:
        self._recent: set[bytes] = set()
        self._levels: list[np.ndarray[Any, Any]] = []
        self._other: set[str] = set()
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return key in self._other
        if not isinstance(key, bytes) or len(key) != 16:
            return False
        return key in self._recent or bool(self._in_levels([key])[0])

    def _in_levels(self, keys: list[bytes]) -> np.ndarray[Any, Any]:
        found = np.zeros(len(keys), dtype=bool)
        if not self._levels or not keys:
            return found
        query = np.frombuffer(b"".join(keys), dtype="S16")
        for level in self._levels:
            at = np.searchsorted(level, query)
            np.minimum(at, len(level) - 1, out=at)
            found |= level[at] == query
        return found

    def add_many(self, keys: list[bytes | str], repeated: set[bytes | str] | None = None) -> int:
        """Add `keys` (in order); return how many were not in the set before (a key twice
        in `keys` counts once). Keys already present are added to `repeated` if given."""
        before = self._count
        uuids = [k for k in keys if type(k) is bytes and len(k) == 16]
        if len(uuids) != len(keys):
            for k in keys:
                if isinstance(k, str):
                    if k not in self._other:
                        self._other.add(k)
                        self._count += 1
                    elif repeated is not None:
                        repeated.add(k)
        known = self._in_levels(uuids)
        recent = self._recent
        for k, old in zip(uuids, known.tolist(), strict=True):
            if not old and k not in recent:
                recent.add(k)
                self._count += 1
            elif repeated is not None:
                repeated.add(k)
        if len(recent) >= self.FLUSH_KEYS:
            self._flush()
        return self._count - before

    def _flush(self) -> None:
        level = np.frombuffer(b"".join(self._recent), dtype="S16").copy()
        level.sort()
        self._recent = set()
        self._levels.append(level)
        if len(self._levels) > self.MAX_LEVELS:
            merged = np.concatenate(self._levels)
            merged.sort()
            self._levels = [merged]

    def clear(self) -> None:
        """Forget every key (frees the memory)."""
        self._recent, self._levels, self._other, self._count = set(), [], set(), 0


@dataclass(frozen=True)
class Page:
    """One validated list response."""

    items: list[Any]
    total: int
    limit: int
    offset: int
    date: str | None = None


class PageFetcher(Protocol):
    """Fetches one list page: ``await fetch(offset=..., limit=...)`` → (JSON body, Date header)."""

    def __call__(self, *, offset: int, limit: int) -> Awaitable[tuple[Any, str | None]]: ...


def parse_page(body: Any, *, offset: int, limit: int, date: str | None = None) -> Page:
    """Validate a list response body against what was asked; raise PaginationError if unusable."""
    asked = f"offset={offset} limit={limit}"
    if not isinstance(body, Mapping):
        raise PaginationError(f"list response is not a JSON object ({asked})")
    items = body.get("intents")
    if not isinstance(items, list):
        raise PaginationError(f"list response has no 'intents' array ({asked})")
    values: dict[str, int] = {}
    for key in ("total", "limit", "offset"):
        value = body.get(key)
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
    if len(items) > values["limit"]:
        raise PaginationError(
            f"server returned {len(items)} intents for an echoed limit of {values['limit']} "
            f"({asked})"
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
    (`recon.extract.flatten.FlatPage` or `PageItems`)."""

    @property
    def ids(self) -> list[str]: ...

    @property
    def table(self) -> Any: ...


Sink = Callable[[Any], None]  # receives PageRows.table
Flatten = Callable[[list[Any]], PageRows]


@dataclass
class _Pass:
    number: int
    kind: str  # full | gap-fill
    ids: set[bytes | str] | None  # only kept for non-monotone walks
    totals: set[int] = field(default_factory=set)
    duplicates: int = 0
    short_pages: int = 0
    pages: int = 0
    new_ids: int = 0
    clean_ids: bool = False


class Walker:
    """Walks the list with `fetch`, flattens items with `flatten`, hands rows to `sink`.

    `monotone=True` when nothing can leave the list (no status filter).
    `on_progress(rows_seen, total)` is called after every page.
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
        on_progress: Callable[[int, int], None] | None = None,
    ):
        if concurrency < 1:
            raise ValueError("concurrency must be >= 1")
        if max_passes < 1:
            raise ValueError("max_passes must be >= 1")
        if not 1 <= page_size <= MAX_LIMIT:
            raise ValueError(f"page_size must be 1..{MAX_LIMIT}")
        self.fetch = fetch
        self.flatten = flatten
        self.sink = sink
        self.monotone = monotone
        self.page_size = page_size
        self.concurrency = concurrency
        self.max_passes = max_passes
        self.on_progress = on_progress
        # every id read, as compact keys (see `id_key`)
        self.seen = IdSet()
        # ids read more than once (drift): only their versions need choosing at the end
        self.repeated: set[bytes | str] = set()
        self.rows_written = 0
        self.pages = 0
        self.limit = page_size  # asked first; then the limit the server applies (echoed)
        self.total_first: int | None = None
        self.total_last = 0
        self.max_total = 0
        self.first_date: str | None = None
        self.drift: list[str] = []
        # (offset, items returned, total) of every page read: where pages landed
        self.coverage: list[tuple[int, int, int]] = []

    # -- pages ---------------------------------------------------------------------------

    async def _get(self, offset: int, limit: int) -> Page:
        body, date = await self.fetch(offset=offset, limit=limit)
        page = parse_page(body, offset=offset, limit=limit, date=date)
        self.pages += 1
        if self.total_first is None:
            self.total_first = page.total
            self.first_date = date
        self.total_last = page.total
        self.max_total = max(self.max_total, page.total)
        return page

    def _take(self, page: Page, p: _Pass) -> int:
        """Record a page's items; return how many ids were new to the run."""
        p.pages += 1
        self.coverage.append((page.offset, len(page.items), page.total))
        p.totals.add(page.total)
        if len(page.items) < page.limit and page.offset + len(page.items) < page.total:
            p.short_pages += 1
        flat = self.flatten(page.items)
        keys = id_keys(flat.ids)
        if p.ids is not None:
            p.ids.update(keys)
        new = self.seen.add_many(keys, self.repeated)
        if p.number == 1:
            p.duplicates += len(keys) - new  # read twice in the first pass: pages shifted
        self.rows_written += len(flat.ids)
        if flat.ids:
            self.sink(flat.table)
        p.new_ids += new
        if self.on_progress is not None:
            self.on_progress(len(self.seen), max(page.total, len(self.seen)))
        return new

    # -- passes --------------------------------------------------------------------------

    async def _full_pass(self, p: _Pass, overlap: int = 0) -> None:
        """Fetch page 0, then every other page concurrently (bounded), following `total`.

        With `overlap` > 0, consecutive pages overlap by that many items, so a shift of up to
        `overlap` positions between the reads of two neighbouring pages loses nothing.
        """
        first = await self._get(0, self.limit)
        if first.limit < self.limit:
            log.info("server caps limit at %d (asked %d)", first.limit, self.limit)
        self.limit = min(first.limit, self.limit)
        self._take(first, p)
        if not first.items:
            return
        stride = max(1, self.limit - min(overlap, self.limit // 2))
        state = {"next": stride, "frontier": first.total, "ended": 0}

        async def worker() -> None:
            while state["next"] < state["frontier"]:
                offset = state["next"]
                state["next"] += stride
                page = await self._get(offset, self.limit)
                self._take(page, p)
                if page.items and page.limit < stride:
                    # The cap shrank mid-walk: read the part of this slot it did not cover.
                    await self._fill(offset + page.limit, offset + stride, p)
                if not page.items:
                    # An empty page ends the list, whatever an older total said.
                    state["ended"] = 1
                    state["frontier"] = min(state["frontier"], offset)
                elif not state["ended"]:
                    state["frontier"] = max(state["frontier"], page.total)

        await asyncio.gather(*(worker() for _ in range(self.concurrency)))

    async def _fill(self, start: int, end: int, p: _Pass) -> None:
        offset = start
        while offset < end:
            page = await self._get(offset, min(self.limit, end - offset))
            self._take(page, p)
            if not page.items:
                return
            offset += page.limit

    def gaps(self, margin: int) -> list[tuple[int, int]]:
        """Ranges of the list, in today's offsets, that no page read may have covered.

        With inserts at the head (newest first), a page read when the list had `total`
        items now sits `max_total - total` positions further down. Mapping every page read
        to today's offsets shows the ranges nobody read (the head, and the seams where pages
        shifted between concurrent reads); each gets `margin` extra on both sides.
        """
        spans = sorted(
            (offset + self.max_total - total, offset + self.max_total - total + n)
            for offset, n, total in self.coverage
            if n
        )
        holes: list[tuple[int, int]] = []
        reach = 0
        for start, end in spans:
            if start > reach:
                holes.append((reach, start))
            reach = max(reach, end)
        if reach < self.max_total:
            holes.append((reach, self.max_total))
        merged: list[tuple[int, int]] = []
        for start, end in holes:
            start, end = max(0, start - margin), end + margin
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        return merged

    async def _gap_fill(self, p: _Pass) -> None:
        """Read only the ranges `gaps` finds, concurrently (bounded), a page at a time."""
        margin = max(1, self.limit // 4)
        offsets = [
            offset
            for start, end in self.gaps(margin)
            for offset in range(start, end, max(1, self.limit - margin))
        ]
        queue = iter(offsets)

        async def worker() -> None:
            for offset in queue:
                page = await self._get(offset, self.limit)
                self.limit = min(self.limit, page.limit)
                self._take(page, p)

        await asyncio.gather(*(worker() for _ in range(min(self.concurrency, len(offsets)))))

    # -- the walk ------------------------------------------------------------------------

    def _complete(self) -> bool:
        # Counting proof (monotone lists): every id seen exists at the time of the response
        # with the largest total (totals never decrease), so equal counts mean equal sets.
        return len(self.seen) == self.max_total

    async def run(self) -> WalkResult:
        """Walk until complete (monotone: count proof; otherwise: two equal clean passes)."""
        passes: list[_Pass] = []
        consistent = False
        final_ids: set[bytes | str] | None = None
        overlap = 0
        while len(passes) < self.max_passes:
            number = len(passes) + 1
            if self.monotone:
                # full, then gap fills; every third pass a full overlapping walk, in case
                # the list does not grow at the head as gap filling assumes
                kind = "full" if number % 3 == 1 else "gap-fill"
                p = _Pass(number, kind, None)
                if kind == "full":
                    await self._full_pass(p, overlap)
                else:
                    await self._gap_fill(p)
                passes.append(p)
                self._note_drift(p)
                if self._complete():
                    consistent = True
                    break
            else:
                p = _Pass(number, "full", set())
                await self._full_pass(p, overlap)
                passes.append(p)
                self._note_drift(p)
                assert p.ids is not None
                clean = (
                    len(p.totals) == 1 and p.short_pages == 0 and len(p.ids) == next(iter(p.totals))
                )
                p.clean_ids = clean
                if clean and number >= 2:
                    prev = passes[-2]
                    if prev.clean_ids and prev.ids == p.ids:
                        consistent = True
                        final_ids = p.ids
                        break
                if number >= 2:
                    passes[-2].ids = None  # the next comparison needs only the last set
            # Re-walks overlap their pages: shifts between neighbouring reads lose nothing.
            overlap = max(1, self.limit // 4)
        if not self.monotone and final_ids is None and passes:
            final_ids = passes[-1].ids
        unique = len(self.seen) if final_ids is None else len(final_ids)
        return WalkResult(
            consistent=consistent,
            total_first=self.total_first or 0,
            total_last=self.total_last,
            passes=len(passes),
            pages=self.pages,
            rows_written=self.rows_written,
            unique_ids=unique,
            duplicates_dropped=self.rows_written - unique,
            final_ids=None if final_ids is None else [id_text(k) for k in final_ids],
            repeated_ids=[id_text(k) for k in self.repeated],
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
        if self.monotone and len(self.seen) != self.max_total:
            notes.append(f"{len(self.seen)} distinct ids for total {self.max_total}")
        if notes:
            self.drift.append(f"pass {p.number} ({p.kind}): " + ", ".join(notes))
            log.info("drift in pass %d: %s", p.number, ", ".join(notes))
