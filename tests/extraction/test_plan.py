"""The walk's sans-IO plan (recon.extraction.walk.WalkPlan) driven by hand, no event loop.

A tiny list server lives in the test; "workers" are simulated by picking, at random, which
pending request is answered next, and the list may grow at the head between any two
answers. Whatever the interleaving, a plan that says `consistent` holds exactly the server's
id set at its largest total, and the plan never asks beyond what it was told exists.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.extraction.walk import Page, PageRequest, WalkPlan


class ListServer:
    """Newest first; `cap` on limit; `grow()` inserts at the head."""

    def __init__(self, n: int, cap: int):
        self.ids = [f"id-{i}" for i in range(n)][::-1]
        self.next = n
        self.cap = cap
        self.biggest: set[str] = set()  # the id set when the list was longest
        self.reads = 0
        self.fed: set[str] = set()  # every id handed to the plan

    def grow(self, k: int = 1) -> None:
        for _ in range(k):
            self.ids.insert(0, f"id-{self.next}")
            self.next += 1

    def read(self, request: PageRequest) -> Page:
        limit = min(request.limit, self.cap)
        items = self.ids[request.offset : request.offset + limit]
        self.reads += 1
        if len(self.ids) > len(self.biggest):
            self.biggest = set(self.ids)
        return Page([{"id": i} for i in items], len(self.ids), limit, request.offset)


def walk(
    plan: WalkPlan, server: ListServer, rng: random.Random, workers: int, drift: float
) -> None:
    """Run `plan` as the asyncio shell would: each worker asks, reads, feeds, asks again."""
    while not plan.finished:
        first = plan.start_pass()
        if first is not None:
            page = server.read(first)
            plan.feed(first, page, [i["id"] for i in page.items])
            server.fed.update(i["id"] for i in page.items)
        pending: list[PageRequest] = []
        for _ in range(workers):
            request = plan.next_request()
            if request is not None:
                pending.append(request)
        while pending:
            request = pending.pop(rng.randrange(len(pending)))
            if server.reads < 60 and rng.random() < drift:
                server.grow(rng.randint(1, 3))
            page = server.read(request)
            assert request.offset <= max(plan.biggest_total, page.total) + plan.page_size
            plan.feed(request, page, [i["id"] for i in page.items])
            server.fed.update(i["id"] for i in page.items)
            follow = plan.next_request()
            if follow is not None:
                pending.append(follow)
        plan.end_pass()


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(0, 300),
    cap=st.integers(3, 100),
    page_size=st.integers(3, 100),
    workers=st.integers(1, 8),
    drift=st.sampled_from([0.0, 0.05, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
def test_a_consistent_plan_holds_exactly_the_servers_set(
    n: int, cap: int, page_size: int, workers: int, drift: float, seed: int
) -> None:
    rng = random.Random(seed)
    server = ListServer(n, cap)
    plan = WalkPlan(monotone=True, page_size=page_size, max_passes=8)
    walk(plan, server, rng, workers, drift)
    result = plan.result()
    if drift == 0.0:
        assert result.consistent and result.passes == 1
    if result.consistent:
        truth = server.biggest
        assert server.fed == truth and len(plan.seen) == len(truth) == plan.biggest_total
        assert result.rows_written - result.duplicates_dropped == len(truth)
    else:
        assert result.passes == 8 and result.drift


def test_no_drift_reads_each_page_once() -> None:
    server = ListServer(1050, cap=100)
    plan = WalkPlan(page_size=100)
    walk(plan, server, random.Random(0), workers=8, drift=0.0)
    assert plan.result().pages == 11 and plan.result().consistent


def test_a_cap_that_shrinks_mid_walk_is_filled() -> None:
    server = ListServer(500, cap=100)
    plan = WalkPlan(page_size=100)
    first = plan.start_pass()
    assert first == PageRequest(0, 100)
    page = server.read(first)
    plan.feed(first, page, [i["id"] for i in page.items])
    server.cap = 30
    request = plan.next_request()
    assert request == PageRequest(100, 100)
    page = server.read(request)
    plan.feed(request, page, [i["id"] for i in page.items])
    # the 70 items the smaller cap left out of that slot are asked for next, 30 at a time
    fills = []
    while (r := plan.next_request()) is not None and r.fill_end is not None:
        fills.append(r)
        page = server.read(r)
        plan.feed(r, page, [i["id"] for i in page.items])
    assert [(f.offset, f.fill_end) for f in fills] == [(130, 200), (160, 200), (190, 200)]


def test_a_huge_total_never_sizes_anything() -> None:
    """Gap ranges are walked lazily: a plan told 10^12 hands out offsets one at a time."""
    plan = WalkPlan(page_size=100, max_passes=3)
    first = plan.start_pass()
    assert first is not None
    plan.feed(first, Page([{"id": "a"}], 10**12, 100, 0), ["a"])
    plan.end_pass()
    assert not plan.finished
    assert plan.start_pass() is None  # a gap-fill pass: no lone first page
    offsets = [plan.next_request() for _ in range(3)]
    assert [o.offset for o in offsets if o] == [0, 75, 150]


def test_bad_settings() -> None:
    with pytest.raises(ValueError):
        WalkPlan(max_passes=0)
    with pytest.raises(ValueError):
        WalkPlan(page_size=101)
