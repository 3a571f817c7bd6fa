"""Flattening one intent into an `intents` row: columns, amounts, timestamps, malformed input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.extraction.flatten import IntentParseError, RowBuffer, flatten_intent, parse_timestamp
from recon.schemas import INTENTS_SCHEMA
from recon.testing.fake_api import make_intent


def offramp(**extra: Any) -> dict[str, Any]:
    item = make_intent(5, pixInfo=None)
    item.update(
        intentType="offramp",
        metadata={"amountCents": 12345, "destinationAddress": "ana@example.com"},
    )
    item.update(extra)
    return item


def test_onramp_columns() -> None:
    item = make_intent(3)
    row = flatten_intent(item)
    assert row["id"] == item["id"]
    assert row["intent_type"] == "onramp"
    assert row["amount_cents"] == 1003
    assert row["amount_source"] == "pixInfo.amountCents"
    assert row["pix_amount_cents"] == 1003
    assert row["pix_description"] == "REF3"
    assert row["party_document_masked"] == "***.456.789-**"
    assert row["destination_address"] is None
    assert json.loads(row["raw"]) == item
    assert row["created_at"] == int(
        datetime(2026, 11, 1, 12, 0, 3, tzinfo=UTC).timestamp() * 1_000_000
    )
    assert set(row) == set(INTENTS_SCHEMA.names) - {
        "snapshot_at",
        "run_id",
        "destination_address_hash",
    }


def test_offramp_amount_and_destination_from_metadata() -> None:
    row = flatten_intent(offramp())
    assert row["amount_cents"] == 12345
    assert row["amount_source"] == "metadata.amountCents"
    assert row["destination_address"] == "ana@example.com"
    assert row["pix_key_type"] is None
    assert json.loads(row["metadata"]) == {
        "amountCents": 12345,
        "destinationAddress": "ana@example.com",
    }


def test_top_level_amount_wins() -> None:
    row = flatten_intent(offramp(amountCents=777))
    assert (row["amount_cents"], row["amount_source"]) == (777, "amountCents")


def test_unknown_fields_are_tolerated_and_kept_in_raw() -> None:
    row = flatten_intent(make_intent(1, brandNewField={"x": 1}))
    assert json.loads(row["raw"])["brandNewField"] == {"x": 1}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"id": None}, "id"),
        ({"id": ""}, "id"),
        ({"createdAt": "yesterday"}, "createdAt"),
        ({"updatedAt": None}, "updatedAt"),
        ({"createdAt": "2026-11-01T12:00:00"}, "createdAt"),  # no offset
        ({"expiresAt": 17}, "expiresAt"),
        ({"status": None}, "status"),
        ({"status": 3}, "status"),
        ({"intentType": 1}, "intentType"),
        ({"flowVersion": "2"}, "flowVersion"),
        ({"pixInfo": "x"}, "pixInfo"),
        ({"pixInfo": {"amountCents": 10.5}}, "pixInfo.amountCents"),
        ({"pixInfo": {"amountCents": True}}, "pixInfo.amountCents"),
        ({"amountCents": "100"}, "amountCents"),
        ({"party": []}, "party"),
    ],
)
def test_malformed_item_is_a_clear_error(change: dict[str, Any], field: str) -> None:
    item = make_intent(1)
    item.update(change)
    with pytest.raises(IntentParseError) as info:
        flatten_intent(item)
    assert info.value.field == field
    assert field in str(info.value)
    assert info.value.exit_code == 3


def test_not_an_object() -> None:
    with pytest.raises(IntentParseError):
        flatten_intent(["not", "an", "intent"])


@settings(deadline=None)
@given(
    st.datetimes(
        min_value=datetime(1971, 1, 1),
        max_value=datetime(2200, 1, 1),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=-3)), timezone(timedelta(hours=5, minutes=30))]
        ),
    )
)
def test_timestamps_become_utc_micros(dt: datetime) -> None:
    micros = parse_timestamp(dt.isoformat(), field="createdAt", intent_id="x")
    back = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=micros)
    assert back == dt


def test_z_suffix() -> None:
    assert parse_timestamp("1970-01-01T00:00:01.5Z", field="f", intent_id=None) == 1_500_000


def test_row_buffer_builds_the_exact_schema() -> None:
    buf = RowBuffer()
    buf.add(flatten_intent(make_intent(1)))
    buf.add(flatten_intent(offramp()))
    table = buf.take(snapshot_at_us=0, run_id="r1")
    assert table.schema.equals(INTENTS_SCHEMA)
    assert table.num_rows == 2
    assert len(buf) == 0
    assert table.column("run_id").to_pylist() == ["r1", "r1"]


def _variants() -> st.SearchStrategy[dict[str, Any]]:
    """Valid intents with the optional parts present, absent or null in every combination."""
    n = st.integers(min_value=0, max_value=10_000)
    cents = st.none() | st.integers(min_value=1, max_value=10**12)
    text = st.none() | st.text(max_size=12)
    offsets = st.sampled_from(["Z", "+00:00", "-03:00", "+05:30"])

    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        item = make_intent(draw(n))
        off = draw(offsets)
        item["createdAt"] = item["createdAt"].replace("Z", off)
        if draw(st.booleans()):
            item["pixInfo"] = None
            item["metadata"] = {
                "amountCents": draw(cents),
                "destinationAddress": draw(text),
                "extra": draw(text),
            }
        if draw(st.booleans()):
            item["amountCents"] = draw(cents)
        item["clientReference"] = draw(text)
        item["expiresAt"] = draw(st.none() | st.just(item["createdAt"]))
        if draw(st.booleans()):
            item["party"] = None
        if draw(st.booleans()):
            item["unknownField"] = draw(text)
        return item

    return build()


@settings(max_examples=40, deadline=None)
@given(st.lists(_variants(), min_size=1, max_size=8))
def test_vectorized_page_equals_item_by_item(items: list[dict[str, Any]]) -> None:
    from recon.extraction.flatten import _fast_page, _slow_page

    fast = _fast_page(items)
    slow = _slow_page(items)
    assert fast.ids == slow.ids
    assert fast.updated == slow.updated
    assert fast.table.equals(slow.table)


def test_malformed_item_in_a_page_names_it() -> None:
    from recon.extraction.flatten import flatten_page

    items = [make_intent(i) for i in range(5)]
    items[3]["updatedAt"] = "2026-13-45T00:00:00Z"
    with pytest.raises(IntentParseError, match=items[3]["id"]):
        flatten_page(items)


@settings(max_examples=40, deadline=None)
@given(st.lists(_variants(), min_size=0, max_size=8))
def test_bytes_page_equals_item_by_item(items: list[dict[str, Any]]) -> None:
    """The hot path (page bytes → msgspec Raw slices → pyarrow's JSON reader → `finish`)
    gives the same rows as flattening each decoded item in Python."""
    import orjson

    from recon.extraction.flatten import _slow_page, finish
    from recon.extraction.pages import RawItems, batch_table, rows_of
    from recon.extraction.walk import parse_page

    body = orjson.dumps({"intents": items, "total": len(items), "limit": 100, "offset": 0})
    page = parse_page(body, offset=0, limit=100)
    assert isinstance(page.items, RawItems)
    rows = rows_of(page.items)
    slow = _slow_page(items)
    assert rows.ids == slow.ids
    assert finish(batch_table(rows.table)).equals(slow.table)


def test_bytes_path_compacts_a_pretty_body_and_keeps_what_the_server_sent() -> None:
    import json

    from recon.extraction.flatten import finish
    from recon.extraction.pages import batch_table, rows_of
    from recon.extraction.walk import parse_page

    items = [make_intent(1), offramp(), make_intent(2, clientReference="caf\u00e9 \u2713")]
    body = json.dumps({"intents": items, "total": 3, "limit": 3, "offset": 0}, indent=2)
    table = finish(batch_table(rows_of(parse_page(body.encode(), offset=0, limit=3).items).table))
    raws = table.column("raw").to_pylist()
    assert raws == [json.dumps(i, separators=(",", ":"), ensure_ascii=True) for i in items]
    assert [json.loads(r) for r in raws] == items
    assert table.column("metadata").to_pylist()[1] == json.dumps(
        offramp()["metadata"], separators=(",", ":"), sort_keys=True
    )


@pytest.mark.parametrize(
    "item",
    [
        {"id": "x", "amountCents": 10.0},
        {"pixInfo": [1, 2]},
        {"createdAt": 5},
        {"amountCents": 2**70},
        {"metadata": {"amountCents": 2**70, "destinationAddress": "a"}},
        {"updatedAt": "2026-13-45T00:00:00Z"},
    ],
)
def test_bytes_path_sends_odd_items_to_the_precise_path(item: dict[str, Any]) -> None:
    """What the JSON reader refuses or cannot hold goes item by item: the same rows as
    `flatten_intent`, or its error naming the intent and field."""
    import json

    from recon.extraction.flatten import _slow_page, finish
    from recon.extraction.pages import batch_table, rows_of
    from recon.extraction.walk import parse_page

    items = [make_intent(1), {**make_intent(2), **item}]
    body = json.dumps({"intents": items, "total": 2, "limit": 2, "offset": 0}).encode()
    try:
        expected = _slow_page(items).table
    except IntentParseError as exc:
        with pytest.raises(IntentParseError, match=str(exc.field).replace(".", r"\.")):
            finish(batch_table(rows_of(parse_page(body, offset=0, limit=2).items).table))
        return
    got = finish(batch_table(rows_of(parse_page(body, offset=0, limit=2).items).table))
    assert got.drop_columns(["raw"]).equals(expected.drop_columns(["raw"]))


@settings(max_examples=60, deadline=None)
@given(
    base=st.integers(min_value=10_000_000, max_value=99_999_998),
    where=st.sampled_from(["key", "note"]),
)
def test_a_server_that_escapes_the_solidus_leaves_no_cnpj_whole(base: int, where: str) -> None:
    """JSON may write '/' as '\\/' (PHP's and some Java encoders do): a formatted CNPJ sent
    that way, as an offramp's destination key or inside any text, is stored masked in `raw`
    and `metadata` all the same, with the server's escaping kept."""
    from recon.extraction.flatten import finish, with_lineage
    from recon.extraction.pages import batch_table, rows_of
    from recon.extraction.walk import parse_page

    digits = f"{base:08d}0001"
    for _ in range(2):  # the two check digits
        weights = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2][-len(digits) :]
        rest = sum(int(d) * w for d, w in zip(digits, weights, strict=True)) % 11
        digits += "0" if rest < 2 else str(11 - rest)
    cnpj = f"{digits[:2]}.{digits[2:5]}.{digits[5:8]}/{digits[8:12]}-{digits[12:]}"
    meta = {"amountCents": 500}
    meta["destinationAddress" if where == "key" else "note"] = cnpj
    if where == "note":
        meta["destinationAddress"] = "ana@example.com"
    item = offramp(metadata=meta)
    body = json.dumps({"intents": [item], "total": 1, "limit": 1, "offset": 0})
    body = body.replace("/", "\\/")  # the escaped solidus, as such a server sends it
    page = parse_page(body.encode(), offset=0, limit=1)
    table = with_lineage(
        finish(batch_table(rows_of(page.items).table)), snapshot_at_us=0, run_id="r"
    )
    stored = " ".join(str(v) for v in table.to_pylist()[0].values())
    for shown in (cnpj, cnpj.replace("/", "\\/"), digits):
        assert shown not in stored
    assert "\\/" in table.column("raw")[0].as_py()  # what the server sent, masked in place
    assert json.loads(table.column("raw")[0].as_py())["metadata"] == json.loads(
        table.column("metadata")[0].as_py()
    )
