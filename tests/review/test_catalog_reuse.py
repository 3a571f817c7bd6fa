"""The review app opens the catalog once per run, not once per break page: opening one reads
every source's listing, the largest part of a break page's time."""

from __future__ import annotations

from datetime import timedelta

import pytest

from recon import catalog
from recon.review.queue import Store
from recon.testing.handbuilt import World, intent

from .conftest import AS_OF, ReviewWorld


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    opened: list[str] = []
    real = catalog.connect

    def counting(*args, **kwargs):
        opened.append("connect")
        return real(*args, **kwargs)

    monkeypatch.setattr(catalog, "connect", counting)
    return opened


def test_break_pages_share_one_catalog_until_a_new_run(rworld: ReviewWorld, connects) -> None:
    store = Store(rworld.data)
    store.frame()  # the queue's names: read once per run
    connects.clear()
    for _ in range(3):
        for bid in (rworld.missing, rworld.stranger, rworld.ambiguous):
            view = store.find(bid)
            assert view is not None and (view.snapshots or view.lines)
    assert len(connects) == 1
    rworld.rerun("20261102T200000000000Z-0002")
    connects.clear()
    view = store.find(rworld.missing)
    assert view is not None and view.run_id == "20261102T200000000000Z-0002"
    assert len(connects) == 2  # the new run's names, and its catalog


def test_a_snapshot_taken_after_the_run_shows_on_the_break_page(rworld: ReviewWorld) -> None:
    store = Store(rworld.data)
    before = store.find(rworld.missing)
    assert before is not None
    World(rworld.data).snapshot(
        [intent(3, amount=8_800, client_reference="ORD-3", name="CARLA DIAS", status="refunded")],
        AS_OF + timedelta(hours=1),
    )
    after = store.find(rworld.missing)
    assert after is not None and len(after.snapshots) == len(before.snapshots) + 1
    assert after.snapshots[-1]["status"] == "refunded"


def test_the_runs_a_break_was_listed_in_follow_a_new_run(rworld: ReviewWorld) -> None:
    """The break page's run history is read once per set of runs: a new run is in it."""
    store = Store(rworld.data)
    first = store.find(rworld.stranger)
    assert first is not None and [r["run_id"] for r in first.runs] == [first.run_id]
    rworld.rerun("20261102T200000000000Z-0002")
    again = store.find(rworld.stranger)
    assert again is not None
    assert [r["run_id"] for r in again.runs] == [first.run_id, "20261102T200000000000Z-0002"]
