"""Flattening one intent into an `intents` row: columns, amounts, timestamps, malformed input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.extract.flatten import IntentParseError, RowBuffer, flatten_intent, parse_timestamp
from recon.schemas import INTENTS_SCHEMA
from tests.extract.fakes import make_intent


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
    assert set(row) == set(INTENTS_SCHEMA.names) - {"snapshot_at", "run_id"}


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
    from recon.extract.flatten import _fast_page, _slow_page

    fast = _fast_page(items)
    slow = _slow_page(items)
    assert fast.ids == slow.ids
    assert fast.updated == slow.updated
    assert fast.table.equals(slow.table)


def test_malformed_item_in_a_page_names_it() -> None:
    from recon.extract.flatten import flatten_page

    items = [make_intent(i) for i in range(5)]
    items[3]["updatedAt"] = "2026-13-45T00:00:00Z"
    with pytest.raises(IntentParseError, match=items[3]["id"]):
        flatten_page(items)
