"""The consistency algorithm against exact interleavings (in-memory list, no HTTP).

Every test asserts the published snapshot holds exactly the server's id set with no
duplicate, or that the extractor says loudly that it could not (exit 3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.config import DataDir
from recon.errors import PaginationError
from recon.extraction import InconsistentSnapshotError, IntentParseError, SnapshotResult, extract
from recon.extraction.walk import parse_page
from recon.schemas import INTENTS_SCHEMA
from recon.testing.fake_api import FakeAsyncClient, FakeList


def snapshot_ids(result: SnapshotResult) -> list[str]:
    table = pq.read_table(result.path / "part-00000.parquet")
    assert table.schema.equals(INTENTS_SCHEMA)
    return table.column("id").to_pylist()


def run(data: DataDir, fake: FakeList, **kw: Any) -> SnapshotResult:
    return extract(data, client=FakeAsyncClient(fake), quiet=True, **kw)


def assert_exact(result: SnapshotResult, expected: set[str]) -> None:
    ids = snapshot_ids(result)
    assert len(ids) == len(set(ids)), "duplicate ids in the snapshot"
    assert set(ids) == expected
    m = result.manifest
    assert m["rows"] == m["unique_ids"] == len(expected)
    assert m["consistent"] is True


def test_no_drift_is_one_pass(data_dir: DataDir) -> None:
    fake = FakeList.of(1050)
    result = run(data_dir, fake)
    assert_exact(result, fake.ids())
    m = result.manifest
    assert (m["passes"], m["pages"], m["duplicates_dropped"]) == (1, 11, 0)
    assert m["total_first"] == m["total_last"] == 1050
    assert m["snapshot_at"] == "2026-11-01T12:30:00Z"
    assert result.path.parent.name == "snapshot_date=2026-11-01"
    on_disk = json.loads((result.path / "_manifest.json").read_text())
    assert on_disk == m


def test_empty_list(data_dir: DataDir) -> None:
    result = run(data_dir, FakeList())
    assert_exact(result, set())
    assert result.manifest["pages"] == 1


def test_limit_capped_below_the_ask(data_dir: DataDir) -> None:
    fake = FakeList.of(257, cap=30)
    result = run(data_dir, fake)
    assert_exact(result, fake.ids())
    assert result.manifest["page_limit"] == 30
    offsets = sorted(o for o, _ in fake.calls)
    assert offsets == list(range(0, 257, 30))


def test_cap_that_shrinks_mid_walk_fills_the_gap(data_dir: DataDir) -> None:
    fake = FakeList.of(500)

    def shrink(f: FakeList, offset: int) -> None:
        if len(f.calls) == 3:
            f.cap = 40

    fake.before_page = shrink
    result = run(data_dir, fake, concurrency=1)
    assert_exact(result, fake.ids())


def test_inserts_at_the_head_during_the_walk(data_dir: DataDir) -> None:
    fake = FakeList.of(1000)

    def insert(f: FakeList, offset: int) -> None:
        if len(f.calls) <= 8:  # a burst of new intents while the first pages are read
            for _ in range(7):
                f.insert()

    fake.before_page = insert
    result = run(data_dir, fake)
    assert_exact(result, fake.ids())
    assert result.manifest["passes"] >= 2
    assert result.manifest["total_first"] < result.manifest["total_last"]
    assert result.manifest["drift"]


def test_inserts_on_every_request_at_the_head_are_caught_up(data_dir: DataDir) -> None:
    """Each response already holds the intent its request added, at the head: gap filling
    reads the head last, so the count proof holds even though the list never stops."""
    fake = FakeList.of(300)
    fake.before_page = lambda f, offset: f.insert()
    result = run(data_dir, fake, page_size=10)
    ids = snapshot_ids(result)
    assert len(ids) == len(set(ids))
    assert result.manifest["consistent"] and result.manifest["passes"] >= 2
    assert set(ids) <= fake.ids() and len(fake.ids()) - len(ids) <= 8  # in flight at the end


def test_inserts_in_the_middle_fall_back_to_full_walks(data_dir: DataDir) -> None:
    fake = FakeList.of(400)
    calls = {"n": 0}

    def insert(f: FakeList, offset: int) -> None:
        calls["n"] += 1
        if calls["n"] <= 30:
            f.insert_at(200)

    fake.before_page = insert
    result = run(data_dir, fake, page_size=20)
    assert_exact(result, fake.ids())


def test_inserts_between_out_of_order_pages_are_not_missed(data_dir: DataDir) -> None:
    """Page 2 read before page 1, with inserts in between: a naive walk misses items."""
    fake = FakeList.of(300)
    order: list[int] = []

    def insert(f: FakeList, offset: int) -> None:
        order.append(offset)
        if len(order) == 2:  # after the first two concurrent reads, 50 new at the head
            for _ in range(50):
                f.insert()

    fake.before_page = insert
    result = run(data_dir, fake, concurrency=2)
    assert_exact(result, fake.ids())


def test_status_changes_with_a_status_filter(data_dir: DataDir) -> None:
    fake = FakeList.of(600)
    for i in range(0, 600, 3):
        fake.set_status(i, "completed")

    def churn(f: FakeList, offset: int) -> None:
        n = len(f.calls)
        if n <= 6:
            # one intent leaves the filtered list, another one enters it
            f.set_status(10 * n + 1, "expired")
            f.set_status(10 * n + 3, "awaiting_fiat_payment")

    fake.before_page = churn
    result = run(data_dir, fake, status="awaiting_fiat_payment")
    assert_exact(result, fake.ids("awaiting_fiat_payment"))
    assert result.manifest["kind"] == "filtered"
    assert result.manifest["passes"] >= 2


def test_filtered_walk_without_drift_needs_two_agreeing_passes(data_dir: DataDir) -> None:
    fake = FakeList.of(250)
    result = run(data_dir, fake, status="awaiting_fiat_payment")
    assert_exact(result, fake.ids())
    assert result.manifest["passes"] == 2


def test_latest_version_wins(data_dir: DataDir) -> None:
    fake = FakeList.of(400)
    target = fake.items[5]["id"]  # near the head: the catch-up pass reads it again

    def move(f: FakeList, offset: int) -> None:
        if len(f.calls) == 2:
            for _ in range(30):  # shift, so the walk needs another pass...
                f.insert()
        if len(f.calls) == 6:  # ...and the target changes status before that pass
            idx = next(i for i, x in enumerate(f.items) if x["id"] == target)
            f.set_status(idx, "completed")

    fake.before_page = move
    result = run(data_dir, fake, concurrency=1)
    assert_exact(result, fake.ids())
    table = pq.read_table(result.path / "part-00000.parquet").to_pandas()
    assert table.loc[table["id"] == target, "status"].item() == "completed"


def test_a_list_that_never_stands_still_is_published_inconsistent(data_dir: DataDir) -> None:
    fake = FakeList.of(300)
    fake.churn_everywhere()  # every request adds an intent somewhere: never still
    with pytest.raises(InconsistentSnapshotError) as info:
        run(data_dir, fake, max_passes=3, page_size=10)
    err = info.value
    assert err.exit_code == 3
    assert isinstance(err, PaginationError)
    m = err.result.manifest
    assert m["consistent"] is False
    assert m["passes"] == 3
    assert (err.result.path / "_manifest.json").is_file()
    ids = snapshot_ids(err.result)
    assert len(ids) == len(set(ids))


def test_malformed_item_fails_the_extract_and_publishes_nothing(data_dir: DataDir) -> None:
    fake = FakeList.of(120)
    fake.items[110]["createdAt"] = "not a time"
    with pytest.raises(IntentParseError, match="createdAt"):
        run(data_dir, fake)
    assert not list(data_dir.snapshots.rglob("_manifest.json"))
    assert not [p for p in data_dir.snapshots.iterdir() if p.name.startswith(".tmp-")]


def test_rerun_makes_a_new_snapshot(data_dir: DataDir) -> None:
    fake = FakeList.of(30)
    a = run(data_dir, fake)
    b = run(data_dir, fake)
    assert a.run_id != b.run_id
    assert len(list(data_dir.snapshots.rglob("part-*.parquet"))) == 2


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ([], "not a JSON object"),
        ({"total": 1, "limit": 1, "offset": 0}, "'intents'"),
        ({"intents": [], "limit": 1, "offset": 0}, "'total'"),
        ({"intents": [], "total": -1, "limit": 1, "offset": 0}, "'total'"),
        ({"intents": [], "total": 1, "limit": "1", "offset": 0}, "'limit'"),
        ({"intents": [], "total": 1, "limit": 0, "offset": 0}, "limit=0"),
        ({"intents": [], "total": 1, "limit": 10, "offset": 5}, "echoed offset=5"),
        ({"intents": [{}, {}], "total": 2, "limit": 1, "offset": 0}, "2 intents"),
    ],
)
def test_malformed_pages(body: Any, message: str) -> None:
    with pytest.raises(PaginationError, match=message):
        parse_page(body, offset=0, limit=10)


def test_no_leftovers_after_success(data_dir: DataDir, tmp_path: Path) -> None:
    run(data_dir, FakeList.of(10))
    assert not [p for p in data_dir.snapshots.rglob(".tmp-*")]


def test_winners_latest_updated_at_then_later_read(tmp_path: Path) -> None:
    from recon.extraction.flatten import RowBuffer, flatten_intent
    from recon.extraction.snapshot import _compact, _winners
    from recon.testing.fake_api import make_intent

    def version(n: int, updated: str, status: str) -> dict[str, Any]:
        return flatten_intent(make_intent(n, updatedAt=updated, status=status))

    buf = RowBuffer()
    for row in [
        version(1, "2026-11-01T12:00:00Z", "created"),  # 0
        version(2, "2026-11-01T12:00:00Z", "created"),  # 1
        version(1, "2026-11-01T12:05:00Z", "minting"),  # 2
        version(1, "2026-11-01T12:05:00Z", "completed"),  # 3: same time, later read: wins
        version(2, "2026-11-01T11:00:00-03:00", "failed"),  # 4: 14:00 UTC: newest for 2
        version(3, "2026-11-01T12:00:00Z", "created"),  # 5
        version(1, "2026-11-01T09:05:00-03:00", "minting"),  # 6: = 12:05 UTC, later: wins
    ]:
        buf.add(row)
    source = tmp_path / "v.parquet"
    pq.write_table(buf.take(snapshot_at_us=0, run_id="r"), source)
    mask = _winners(source, 7, None)
    assert mask.tolist() == [False, False, False, False, True, True, True]
    only = _winners(source, 7, [make_intent(2)["id"], make_intent(3)["id"]])
    assert only.tolist() == [False, False, False, False, True, True, False]
    assert _compact(source, tmp_path / "out.parquet", mask) == 3
    out = pq.read_table(tmp_path / "out.parquet").to_pylist()
    assert [r["status"] for r in out] == ["failed", "created", "minting"]


@pytest.mark.parametrize(
    "text",
    [
        "6b86b273-ff34-4ce1-8d6b-804eff5a3f57",
        "6B86B273-FF34-4CE1-8D6B-804EFF5A3F57",  # upper case: a different id, kept as text
        "00000000-0000-0000-0000-000000000001",
        "not-a-uuid",
        "6b86b273-ff34-4ce1-8d6b-804eff5a3fzz",
        "6b86b273ff344ce18d6b804eff5a3f57----",
        "",
    ],
)
def test_id_keys_round_trip(text: str) -> None:
    from recon.extraction.walk import id_key, id_text

    assert id_text(id_key(text)) == text


@given(st.uuids(), st.booleans())
def test_id_keys_are_compact_and_distinct(value: Any, upper: bool) -> None:
    from recon.extraction.walk import id_key, id_text

    text = str(value).upper() if upper else str(value)
    key = id_key(text)
    assert id_text(key) == text
    assert isinstance(key, bytes) != (upper and text != text.lower())
