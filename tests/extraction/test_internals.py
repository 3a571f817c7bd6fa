"""Direct tests of the extractor's internals: the compact id set (`IdSet`), page id keys
(`id_keys`), a page's checked ids (`page_items`), the choice of the latest version among
ids read more than once (`_winners_of_repeated`) and the Parquet writer (`_VersionWriter`).

Each is compared against a brute-force model (a Python set, `uuid.UUID`, a dict of latest
versions) under hypothesis-generated inputs.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.extraction.flatten import (
    IntentParseError,
    PageItems,
    flatten_intent,
    flatten_page,
    page_items,
)
from recon.extraction.ids import UuidIds, is_uuid, item_uuid_keys
from recon.extraction.pages import decode_envelope, rows_of
from recon.extraction.snapshot import (
    ROW_GROUP_ROWS,
    _VersionWriter,
    _winners,
    _winners_of_repeated,
)
from recon.extraction.walk import IdSet, id_key, id_keys, id_text
from recon.schemas import INTENTS_SCHEMA
from recon.testing.fake_api import make_intent

FAST = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])

# -- id strategies -----------------------------------------------------------------------

# 16 bytes from a tiny alphabet: many near-identical keys and many NUL bytes (leading,
# embedded and trailing), the cases a fixed-width numpy bytes array could get wrong.
_near_bytes = st.lists(st.sampled_from([0, 1, 255]), min_size=16, max_size=16).map(bytes)
_canonical = st.one_of(st.uuids(), _near_bytes.map(lambda b: uuid.UUID(bytes=b))).map(str)
_malformed = st.one_of(
    _canonical.map(str.upper),  # upper case: a different id, kept as text
    _canonical.map(lambda s: s.replace("-", "")),  # no hyphens
    _canonical.map(lambda s: "{" + s + "}"),
    _canonical.map(lambda s: s[:-1] + "g"),  # not hex, right length
    _canonical.map(lambda s: s[:8] + "_" + s[9:]),  # wrong separator
    _canonical.map(lambda s: s[:35] + " "),  # whitespace bytes.fromhex would skip
    st.text(min_size=1, max_size=40).filter(str.strip),  # a blank id is refused
    st.just("not-a-uuid"),
)
any_id = st.one_of(_canonical, _canonical, _malformed)


class _SmallIdSet(IdSet):
    """The same set settling every few keys, so a few dozen keys go through many merges."""

    SETTLE_KEYS = 3


# -- id_keys -----------------------------------------------------------------------------


@FAST
@given(st.lists(any_id, max_size=30))
def test_id_keys_equal_id_key_and_round_trip(ids: list[str]) -> None:
    keys = id_keys(ids)
    assert keys == [id_key(i) for i in ids]
    assert [id_text(k) for k in keys] == ids


@FAST
@given(st.lists(_canonical, min_size=1, max_size=30))
def test_id_keys_of_canonical_uuids_are_their_16_bytes(ids: list[str]) -> None:
    keys = id_keys(ids)
    assert keys == [uuid.UUID(i).bytes for i in ids]


@FAST
@given(st.lists(any_id, max_size=30, unique=True))
def test_id_keys_are_injective(ids: list[str]) -> None:
    # distinct ids never share a key (else the set would merge two intents)
    assert len(set(id_keys(ids))) == len(ids)


@pytest.mark.parametrize(
    "bad",
    [
        "6B86B273-FF34-4CE1-8D6B-804EFF5A3F57",
        "6b86b273ff344ce18d6b804eff5a3f57",
        "6b86b273-ff34-4ce1-8d6b-804eff5a3fzz",
        "6b86b273-ff34-4ce1-8d6b-804eff5a3f5 ",
        "6b86b273-ff34-4ce1-8d6b_804eff5a3f57",
        "not-a-uuid",
    ],
)
def test_non_canonical_ids_stay_text_in_a_page_of_uuids(bad: str) -> None:
    # The contract is not to reject such ids (the API's ids are opaque text) but to keep
    # them exactly, as text, while the canonical ones around them are still compacted.
    good = "6b86b273-ff34-4ce1-8d6b-804eff5a3f57"
    keys = id_keys([good, bad, good])
    assert keys == [uuid.UUID(good).bytes, bad, uuid.UUID(good).bytes]


def test_id_keys_of_an_empty_page() -> None:
    assert id_keys([]) == []


# -- ids read from the items' bytes ------------------------------------------------------


def _raw_items(items: list[dict[str, Any]], ascii_only: bool) -> Any:
    body = json.dumps(
        {"intents": items, "total": len(items), "limit": 100, "offset": 0},
        ensure_ascii=ascii_only,
    )  # with spaces: decode_envelope removes them, as for any server
    page = decode_envelope(body.encode())
    assert page is not None
    return page[0]


_item = st.fixed_dictionaries(
    {"id": any_id, "status": st.sampled_from(["paid", "expired"])},
    optional={"note": st.text(max_size=8)},
)


@FAST
@given(st.lists(st.tuples(_item, st.booleans()), min_size=1, max_size=12), st.booleans())
def test_ids_read_from_the_items_bytes_equal_the_decoded_ids(
    rows: list[tuple[dict[str, Any], bool]], ascii_only: bool
) -> None:
    # the id first or last, canonical or not: the fast read gives the ids a JSON decoder
    # gives, or declines (None) and rows_of decodes them
    rest = [{k: v for k, v in item.items() if k != "id"} for item, _ in rows]
    items = [{"id": item["id"], **other} if first else {**other, "id": item["id"]}
             for (item, first), other in zip(rows, rest, strict=True)]  # fmt: skip
    raw = _raw_items(items, ascii_only)
    ids = [i["id"] for i in items]
    fast = item_uuid_keys(raw.raws)
    if fast is not None:
        assert list(fast) == ids
        assert all(first and uuid.UUID(i["id"]) for i, first in rows)
    elif all(first for _, first in rows) and all(isinstance(id_key(i), bytes) for i in ids):
        pytest.fail("every item begins with a canonical UUID id, but the fast read declined")
    assert list(rows_of(raw).ids) == ids


@pytest.mark.parametrize(
    "text",
    [
        '{"id":"6B86B273-FF34-4CE1-8D6B-804EFF5A3F57","a":1}',  # upper case
        '{"id":"\\u0036b86b273-ff34-4ce1-8d6b-804eff5a3f57","a":1}',  # an escape
        '{"id":"6b86b273-ff34-4ce1-8d6b-804eff5a3f5","a":1}',  # 35 characters
        '{"id":"6b86b273-ff34-4ce1-8d6b-804eff5a3f577","a":1}',  # 37 characters
        '{"id":"6b86b273-ff34-4ce1-8d6b-804eff5a3f5 "}',  # whitespace fromhex would skip
        '{"id":"6b86b273-ff34-4ce1-8d6b_804eff5a3f57"}',  # a wrong separator
        '{"id":"6b86b273-ff34-4ce1-8d6b-804eff5a3fé"}',  # not ASCII
        '{"ids":"6b86b273-ff34-4ce1-8d6b-804eff5a3f57"}',  # another key
        '{"id":"6b86b273"}',  # shorter than the head: the slice reaches the next item
        '{"id":"6b86b273-ff34-4ce1-8d6b-804eff5a"}',
    ],
)
def test_ids_not_read_from_bytes_that_are_no_canonical_uuid(text: str) -> None:
    good = b'{"id":"6b86b273-ff34-4ce1-8d6b-804eff5a3f57","a":1}'
    assert item_uuid_keys([good, text.encode(), good]) is None
    assert list(item_uuid_keys([good, good]) or []) == [good[7:43].decode()] * 2


def test_uuid_ids_read_as_a_sequence_of_ids() -> None:
    ids = [str(uuid.UUID(int=i)) for i in (1, 2, 3)]
    keys = UuidIds(b"".join(uuid.UUID(i).bytes for i in ids))
    assert len(keys) == 3 and list(keys) == ids and keys[1] == ids[1] and keys[-1] == ids[2]
    assert keys[1:] == ids[1:] and keys == ids and keys == UuidIds(keys.blob)
    assert id_keys(keys) == [uuid.UUID(i).bytes for i in ids]
    assert keys[::-2] == [ids[2], ids[0]]
    with pytest.raises(IndexError):
        keys[3]
    with pytest.raises(ValueError):
        UuidIds(b"short")


# -- IdSet -------------------------------------------------------------------------------


def _check_against_model(
    batches: list[list[str]], probes: list[str], make: type[IdSet] = IdSet, *, count_each: bool
) -> None:
    ids, model = make(), set()
    model_repeated: set[str] = set()
    for batch in batches:
        model_repeated.update(i for n, i in enumerate(batch) if i in model or i in batch[:n])
        ids.add(batch)
        model.update(batch)
        assert ids.count_hint() >= len(model)
        if count_each:  # settles every page; otherwise pages pile up until the end
            assert len(ids) == len(model)
    assert len(ids) == len(model) == ids.count_hint()
    assert {id_text(k) for k in ids.repeated} == model_repeated
    for probe in probes + [i for batch in batches for i in batch]:
        assert (id_keys([probe])[0] in ids) == (probe in model), probe


@FAST
@given(
    st.lists(st.lists(any_id, max_size=8), max_size=12),
    st.lists(any_id, max_size=10),
    st.booleans(),
)
def test_id_set_is_a_set(batches: list[list[str]], probes: list[str], count_each: bool) -> None:
    _check_against_model(batches, probes, count_each=count_each)


@FAST
@given(
    st.lists(st.lists(any_id, max_size=8), max_size=25),
    st.lists(any_id, max_size=10),
    st.booleans(),
)
def test_id_set_settling_often_is_a_set(
    batches: list[list[str]], probes: list[str], count_each: bool
) -> None:
    _check_against_model(batches, probes, _SmallIdSet, count_each=count_each)


@FAST
@given(st.lists(st.lists(_near_bytes.map(lambda b: str(uuid.UUID(bytes=b))), max_size=6)))
def test_id_set_with_near_identical_keys(batches: list[list[str]]) -> None:
    # keys from {0, 1, 255} bytes: sorted NUL-heavy fixed-width bytes, merged again and again
    probes = [str(uuid.UUID(int=0)), str(uuid.UUID(int=1))]
    _check_against_model(batches, probes, _SmallIdSet, count_each=False)


class _MidIdSet(IdSet):
    SETTLE_KEYS = 1 << 16


def test_id_set_at_full_size_across_settles() -> None:
    # pages of 100 canonical UUIDs, enough for several settles of large arrays
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 256, size=(300_000, 16), dtype=np.uint8)
    ids = [id_text(r.tobytes()) for r in raw]
    seen = _MidIdSet()
    for start in range(0, len(ids), 100):
        seen.add(ids[start : start + 100])
    assert len(seen) == len(ids) and not seen.repeated
    # every key is found again and re-adding a sample is counted as repeated, not new
    sample = ids[:: len(ids) // 500]
    assert all(id_key(i) in seen for i in sample)
    seen.add(sample)
    assert len(seen) == len(ids)
    assert {id_text(k) for k in seen.repeated} == set(sample)
    absent = [r.tobytes() for r in rng.integers(0, 256, size=(500, 16), dtype=np.uint8)]
    everything = {r.tobytes() for r in raw}
    assert [k in seen for k in absent] == [k in everything for k in absent]


def test_id_set_rejects_foreign_keys_and_clears() -> None:
    ids = _SmallIdSet()
    key = uuid.UUID(int=5).bytes
    ids.add([str(uuid.UUID(int=5)), "text-id", str(uuid.UUID(int=6)), str(uuid.UUID(int=7))])
    assert key in ids and "text-id" in ids
    # not keys of this set: a 15-byte prefix, the key's text form, other types
    assert key[:15] not in ids
    assert str(uuid.UUID(int=5)) not in ids
    assert 5 not in ids and None not in ids
    ids.clear()
    assert len(ids) == 0 and key not in ids and "text-id" not in ids and not ids.repeated
    ids.add([str(uuid.UUID(int=5))])
    assert len(ids) == 1


# -- page_items --------------------------------------------------------------------------


@FAST
@given(st.lists(st.one_of(_canonical, _canonical.map(str.upper)), max_size=20))
def test_page_items_keeps_ids_and_items_in_order(ids: list[str]) -> None:
    items = [make_intent(n, id=i) for n, i in enumerate(ids)]
    page = page_items(items)
    assert isinstance(page, PageItems)
    assert page.ids == ids
    assert len(page.table) == len(items)
    assert all(a is b for a, b in zip(page.table, items, strict=True))


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"id": None}, "id"),
        ({"id": ""}, "id"),
        ({"id": "   "}, "id"),
        ({"id": 42}, "id"),
        ({"id": ["x"]}, "id"),
        ({"id": '=HYPERLINK("http://evil.example","x")'}, "id"),
        ({"id": "6b86b273"}, "id"),
        ({"id": "6b86b273-ff34-fce1-9d6b-804eff5a3f57\n"}, "id"),
        ("not an object", "."),
        (None, "."),
        (["a", "list"], "."),
    ],
)
def test_page_items_rejects_an_item_without_a_usable_id(bad: Any, field: str) -> None:
    item: Any = dict(make_intent(3), **bad) if isinstance(bad, dict) else bad
    if isinstance(bad, dict) and bad["id"] is None:
        del item["id"]
    with pytest.raises(IntentParseError) as info:
        page_items([make_intent(1), make_intent(2), item])
    assert info.value.field == field
    assert "without an id" in str(info.value)


@FAST
@given(_malformed.filter(lambda s: not is_uuid(s)))
def test_an_id_that_is_not_a_uuid_is_refused_by_every_path(bad: str) -> None:
    """The API's ids are UUIDs: one that is not (a formula written in by a server in the
    middle, say) is refused naming the field, by the page check and both flatten paths."""
    items = [make_intent(1), dict(make_intent(2), id=bad)]
    for flatten in (page_items, flatten_page, lambda i: flatten_intent(i[1])):
        with pytest.raises(IntentParseError, match="is not a UUID") as info:
            flatten(items)
        assert info.value.field == "id"


# -- _winners_of_repeated ----------------------------------------------------------------

_ID_SCHEMA = pa.schema([INTENTS_SCHEMA.field("id"), INTENTS_SCHEMA.field("updated_at")])

# (which intent, updated_at in microseconds): few intents and few times, so ids repeat
# and updated_at ties are common
_rows = st.lists(st.tuples(st.integers(0, 6), st.integers(0, 3)), max_size=40)


def _write(path: Path, rows: list[tuple[int, int]], group: int) -> list[str]:
    ids = [str(uuid.UUID(int=i + 1)) if i % 2 else f"text-{i}" for i, _ in rows]
    table = pa.table(
        {"id": ids, "updated_at": pa.array([t for _, t in rows], pa.int64())},
    ).cast(_ID_SCHEMA)
    pq.write_table(table, path, row_group_size=group)
    return ids


def _brute_force(ids: list[str], updated: list[int], repeated: set[str]) -> list[bool]:
    """Per id, the row with the greatest updated_at, ties to the later read; rows of ids
    not in `repeated` are kept as they are."""
    best: dict[str, int] = {}
    for n, i in enumerate(ids):
        if i not in best or updated[n] >= updated[best[i]]:
            best[i] = n
    return [i not in repeated or best[i] == n for n, i in enumerate(ids)]


@settings(deadline=None, max_examples=80)
@given(_rows, st.integers(1, 9), st.lists(st.integers(0, 6), max_size=3))
def test_winners_of_repeated_is_the_latest_version(
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int, int]],
    group: int,
    extra: list[int],
) -> None:
    path = tmp_path_factory.mktemp("w") / "v.parquet"
    ids = _write(path, rows, group)
    counts: dict[str, int] = {}
    for i in ids:
        counts[i] = counts.get(i, 0) + 1
    # the walker's repeated ids, plus (harmless) ids read once or never read
    repeated = [i for i, c in counts.items() if c > 1]
    repeated += [str(uuid.UUID(int=e + 1)) if e % 2 else f"text-{e}" for e in extra]
    mask = _winners_of_repeated(path, len(ids), repeated)
    updated = [t for _, t in rows]
    assert mask.tolist() == _brute_force(ids, updated, set(repeated))
    # one row per distinct id, and the same choice as the path that looks at every row
    assert int(mask.sum()) == len(counts)
    assert mask.tolist() == _winners(path, len(ids), None).tolist()


def test_winners_of_repeated_across_row_groups(tmp_path: Path) -> None:
    # rows 0..5 in row groups of 2: the winner's position must count earlier groups' rows
    rows = [(1, 5), (3, 5), (1, 5), (3, 9), (5, 0), (1, 4)]
    ids = _write(tmp_path / "v.parquet", rows, 2)
    repeated = [ids[0], ids[1]]
    mask = _winners_of_repeated(tmp_path / "v.parquet", len(rows), repeated)
    # id 1: rows 0, 2 at t=5 (later read wins: 2), row 5 is older; id 3: row 3 is newer
    assert mask.tolist() == [False, False, True, True, True, False]


def test_winners_of_repeated_with_nothing_repeated_keeps_every_row(tmp_path: Path) -> None:
    _write(tmp_path / "v.parquet", [(1, 0), (3, 1)], 1)
    assert _winners_of_repeated(tmp_path / "v.parquet", 2, []).tolist() == [True, True]
    absent = [str(uuid.UUID(int=99))]
    assert _winners_of_repeated(tmp_path / "v.parquet", 2, absent).tolist() == [True, True]


# -- _VersionWriter ----------------------------------------------------------------------


def _raw_page(start: int, n: int) -> list[bytes]:
    return [json.dumps(make_intent(i)).encode() for i in range(start, start + n)]


def test_version_writer_keeps_read_order_in_whole_row_groups(tmp_path: Path) -> None:
    path = tmp_path / "v.parquet"
    writer = _VersionWriter(path, "run-1", lambda: 0)
    n, size = 2 * ROW_GROUP_ROWS + 2_500, 97  # pages that never line up with a job or a group
    for start in range(0, n, size):
        writer.add(_raw_page(start, min(size, n - start)))
    writer.close()
    parquet = pq.ParquetFile(path)
    groups = [parquet.metadata.row_group(i).num_rows for i in range(parquet.num_row_groups)]
    assert groups == [ROW_GROUP_ROWS, ROW_GROUP_ROWS, 2_500]
    table = parquet.read(columns=["id", "run_id"])
    assert table.column("id").to_pylist() == [make_intent(i)["id"] for i in range(n)]
    assert set(table.column("run_id").to_pylist()) == {"run-1"}


def test_version_writer_raises_a_malformed_item_and_stops_writing(tmp_path: Path) -> None:
    writer = _VersionWriter(tmp_path / "v.parquet", "run-1", lambda: 0)
    bad = json.dumps(make_intent(5, createdAt="not a time")).encode()
    with pytest.raises(IntentParseError):
        try:
            writer.add([*_raw_page(0, 5), bad])
            for start in range(6, 4 * ROW_GROUP_ROWS, 100):  # jobs queued behind the bad one
                writer.add(_raw_page(start, 100))
        finally:
            writer.close()
    assert writer.failed and not writer.ready


def test_part_files_skip_dictionaries_and_statistics_where_values_are_unique(
    tmp_path: Path,
) -> None:
    """id, metadata and raw are unique per row: no dictionary (built, then dropped, it only
    costs CPU); the JSON texts carry no min/max statistics. Other columns keep both."""
    path = tmp_path / "v.parquet"
    writer = _VersionWriter(path, "run-1", lambda: 0)
    writer.add(_raw_page(0, 500))
    writer.close()
    group = pq.ParquetFile(path).metadata.row_group(0)
    columns = {group.column(i).path_in_schema: group.column(i) for i in range(group.num_columns)}
    dictionary = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
    for name in ("id", "metadata", "raw"):
        assert not dictionary & set(columns[name].encodings), name
    assert dictionary & set(columns["status"].encodings)
    assert not columns["raw"].is_stats_set and not columns["metadata"].is_stats_set
    assert columns["id"].is_stats_set and columns["created_at"].is_stats_set
