"""Flatten v2 intent objects into rows of `recon.schemas.INTENTS_SCHEMA`.

One intent becomes one row: ids, type and status as text, timestamps as UTC microseconds,
money as integer cents, `pixInfo` and `party` flattened, `metadata` and the whole item kept
as JSON text. Unknown extra fields are tolerated (they survive in `raw`); a malformed item
(no id, an id that is not a UUID, a timestamp that does not parse, a wrong type) raises `IntentParseError` naming the
intent and the field: nothing is dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import msgspec
import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from recon.api.protocol import loads_json
from recon.errors import ApiError, IntentParseError
from recon.extraction.ids import UUID_PATTERN, is_uuid, item_uuid_keys
from recon.pii import protect_intents
from recon.schemas import INTENTS_SCHEMA

__all__ = [
    "FlatPage",
    "IntentParseError",
    "PageItems",
    "RowBuffer",
    "dumps",
    "flatten_intent",
    "flatten_page",
    "page_items",
    "parse_timestamp",
]


def _json_dumps(obj: Any, sort_keys: bool = False) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, sort_keys=sort_keys)


dumps: Callable[..., str]
try:  # orjson is ~10x faster at re-encoding `raw`; both give compact UTF-8 JSON.
    import orjson

    def _orjson_dumps(obj: Any, sort_keys: bool = False) -> str:
        try:
            return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
        except TypeError:  # e.g. integers beyond 64 bits: let the stdlib encode them
            return _json_dumps(obj, sort_keys)

    dumps = _orjson_dumps
except ImportError:  # pragma: no cover - depends on the environment
    dumps = _json_dumps

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# (column, key in pixInfo)
_PIX_FIELDS = (
    ("pix_key_type", "keyType"),
    ("pix_key_value", "keyValue"),
    ("pix_recipient_name", "recipientName"),
    ("pix_bank", "bank"),
    ("pix_description", "description"),
)
_PARTY_FIELDS = (
    ("party_display_name", "displayName"),
    ("party_document_masked", "documentMasked"),
    ("party_solana_wallet", "solanaWallet"),
)
_TEXT_FIELDS = (
    ("instance_id", "instanceId"),
    ("party_id", "partyId"),
    ("intent_type", "intentType"),
    ("adapter", "adapter"),
    ("status_reason", "statusReason"),
    ("client_reference", "clientReference"),
    ("chain_id", "chainId"),
)


def parse_timestamp(value: Any, *, field: str, intent_id: str | None) -> int:
    """ISO 8601 text with an offset (``Z`` or ``±HH:MM``) → UTC microseconds since the epoch.

    A timestamp without an offset is refused: guessing its zone could shift a payment
    across a business day.
    """
    if not isinstance(value, str):
        raise IntentParseError(
            f"expected an ISO 8601 string, got {type(value).__name__}",
            intent_id=intent_id,
            field=field,
        )
    text = value.strip()
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise IntentParseError(
            f"not an ISO 8601 timestamp: {value!r}", intent_id=intent_id, field=field
        ) from exc
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise IntentParseError(
            f"timestamp has no UTC offset: {value!r}", intent_id=intent_id, field=field
        )
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _text(obj: Mapping[str, Any], key: str, field: str, intent_id: str | None) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise IntentParseError(
        f"expected a string, got {type(value).__name__}", intent_id=intent_id, field=field
    )


def _cents(value: Any, field: str, intent_id: str | None) -> int | None:
    if value is None:
        return None
    # bool is an int subclass; a float is never money here.
    if isinstance(value, bool) or not isinstance(value, int):
        raise IntentParseError(
            f"expected integer cents, got {value!r}", intent_id=intent_id, field=field
        )
    if not -(2**63) <= value < 2**63:
        raise IntentParseError(
            "integer cents out of the 64-bit range", intent_id=intent_id, field=field
        )
    return value


def _object(obj: Mapping[str, Any], key: str, intent_id: str | None) -> Mapping[str, Any] | None:
    value = obj.get(key)
    if value is None or isinstance(value, Mapping):
        return value
    raise IntentParseError(
        f"expected an object or null, got {type(value).__name__}", intent_id=intent_id, field=key
    )


def flatten_intent(item: Any, *, raw: str | None = None) -> dict[str, Any]:
    """One intent object → a row dict with INTENTS_SCHEMA's columns except the lineage ones.

    Timestamps come back as UTC microseconds (int); `raw` defaults to the item re-encoded
    as compact JSON. `snapshot_at` and `run_id` are added by the writer.
    """
    if not isinstance(item, Mapping):
        raise IntentParseError(
            f"expected an intent object, got {type(item).__name__}", intent_id=None, field="."
        )
    intent_id = item.get("id")
    if not isinstance(intent_id, str) or not intent_id.strip():
        raise IntentParseError("missing or empty id", intent_id=None, field="id")
    if not is_uuid(intent_id):
        raise IntentParseError(
            f"the id {intent_id[:80]!r} is not a UUID (the API's ids are UUIDs)",
            intent_id=None,
            field="id",
        )
    row: dict[str, Any] = {"id": intent_id}
    for column, key in _TEXT_FIELDS:
        row[column] = _text(item, key, key, intent_id)
    status = item.get("status")
    if not isinstance(status, str) or not status:
        raise IntentParseError("missing or empty status", intent_id=intent_id, field="status")
    row["status"] = status
    flow = item.get("flowVersion")
    if flow is not None and (
        isinstance(flow, bool) or not isinstance(flow, int) or not -(2**63) <= flow < 2**63
    ):
        raise IntentParseError(
            f"expected an integer, got {flow!r}", intent_id=intent_id, field="flowVersion"
        )
    row["flow_version"] = flow

    metadata = _object(item, "metadata", intent_id)
    row["metadata"] = None if metadata is None else dumps(metadata, sort_keys=True)
    row["created_at"] = parse_timestamp(
        item.get("createdAt"), field="createdAt", intent_id=intent_id
    )
    row["updated_at"] = parse_timestamp(
        item.get("updatedAt"), field="updatedAt", intent_id=intent_id
    )
    expires = item.get("expiresAt")
    row["expires_at"] = (
        None
        if expires is None
        else parse_timestamp(expires, field="expiresAt", intent_id=intent_id)
    )

    pix = _object(item, "pixInfo", intent_id) or {}
    for column, key in _PIX_FIELDS:
        row[column] = _text(pix, key, f"pixInfo.{key}", intent_id)
    row["pix_amount_cents"] = _cents(pix.get("amountCents"), "pixInfo.amountCents", intent_id)
    party = _object(item, "party", intent_id) or {}
    for column, key in _PARTY_FIELDS:
        row[column] = _text(party, key, f"party.{key}", intent_id)
    meta = metadata or {}
    row["destination_address"] = _text(
        meta, "destinationAddress", "metadata.destinationAddress", intent_id
    )

    # amount: a top-level amountCents if the server sends one, else pixInfo, else metadata.
    amount: int | None = None
    source: str | None = None
    for label, container, key in (
        ("amountCents", item, "amountCents"),
        ("pixInfo.amountCents", pix, "amountCents"),
        ("metadata.amountCents", meta, "amountCents"),
    ):
        value = _cents(container.get(key), label, intent_id)
        if value is not None:
            amount, source = value, label
            break
    row["amount_cents"] = amount
    row["amount_source"] = source
    row["raw"] = raw if raw is not None else dumps(item)
    return row


# what flattening makes; the lineage and the personal-data hashes are added by with_lineage
DATA_SCHEMA = pa.schema(
    [
        f
        for f in INTENTS_SCHEMA
        if f.name not in ("snapshot_at", "run_id", "destination_address_hash")
    ]
)


class RowBuffer:
    """Column lists that fill up with flattened rows and turn into an Arrow table."""

    _DATA_COLUMNS = tuple(DATA_SCHEMA.names)

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in self._DATA_COLUMNS}

    def __len__(self) -> int:
        return len(self.columns["id"])

    def add(self, row: Mapping[str, Any]) -> None:
        """Append one flattened row (see `flatten_intent`)."""
        for name, values in self.columns.items():
            values.append(row[name])

    def take(self, *, snapshot_at_us: int, run_id: str) -> pa.Table:
        """The buffered rows as a table with INTENTS_SCHEMA (see `with_lineage`)."""
        return with_lineage(self.take_data(), snapshot_at_us=snapshot_at_us, run_id=run_id)

    def take_data(self) -> pa.Table:
        """The buffered rows as a DATA_SCHEMA table (no lineage columns); the buffer is emptied."""
        arrays = [pa.array(self.columns[f.name], type=f.type) for f in DATA_SCHEMA]
        self.columns = {name: [] for name in self._DATA_COLUMNS}
        return pa.Table.from_arrays(arrays, schema=DATA_SCHEMA)


_TS_UTC = INTENTS_SCHEMA.field("created_at").type


@dataclass(frozen=True)
class FlatPage:
    """One page of intents, flattened: ids and updated_at (µs) for the walker, the table for
    the writer (DATA_SCHEMA: INTENTS_SCHEMA without the lineage columns)."""

    ids: list[str]
    updated: list[int]
    table: pa.Table


class _Slow(Exception):
    """The fast path met something it does not handle; redo the rows item by item."""


# What can make the vectorized path refuse a page: the item-by-item path then either
# handles it or raises IntentParseError naming the item and field.
_SLOW = (
    _Slow,
    pa.ArrowInvalid,
    pa.ArrowTypeError,
    TypeError,
    AttributeError,
    ValueError,
    OverflowError,
    msgspec.DecodeError,
)

_S = pa.string()
_I = pa.int64()
# The fields a row needs, as one Arrow struct: pyarrow converts a page of dicts to it in
# C++ (missing keys and nulls become nulls, unknown keys are ignored, a string field holding
# anything but a string is an error). Timestamps come in as text and are cast below.
_ITEM = pa.struct(
    [(key, _S) for _, key in _TEXT_FIELDS]
    + [
        ("id", _S),
        ("status", _S),
        ("flowVersion", _I),
        ("amountCents", _I),
        ("createdAt", _S),
        ("updatedAt", _S),
        ("expiresAt", _S),
        ("pixInfo", pa.struct([(key, _S) for _, key in _PIX_FIELDS] + [("amountCents", _I)])),
        ("party", pa.struct([(key, _S) for _, key in _PARTY_FIELDS])),
        ("metadata", pa.struct([("destinationAddress", _S), ("amountCents", _I)])),
    ]
)
#: A page's items as the writer batches them: the fields a row needs, plus `raw` (the item
#: as compact JSON text). `finish` turns a batch of these into DATA_SCHEMA rows.
ITEM_SCHEMA = pa.schema([*_ITEM, pa.field("raw", _S)])
_INT_OR_NONE = frozenset({int, type(None)})
_AMOUNT_SOURCES = (
    ("amountCents", "amountCents"),
    ("pixInfo.amountCents", "pixInfo"),
    ("metadata.amountCents", "metadata"),
)


class _MetadataOnly(msgspec.Struct, gc=False):
    metadata: Any = None


_METADATA = msgspec.json.Decoder(list[_MetadataOnly])


def _dumps_bytes(items: list[Any]) -> list[bytes]:
    try:
        return [orjson.dumps(i) for i in items]
    except TypeError:  # e.g. integers beyond 64 bits: `dumps` has the stdlib fallback
        return [dumps(i).encode() for i in items]


def items_table(items: list[Any]) -> pa.Table:
    """A page of intent objects (dicts) as an ITEM_SCHEMA table; raises `_Slow` (or an Arrow
    error) when the page is not the usual shape."""
    # What pyarrow's conversion would not refuse by itself is checked here first: the
    # nested objects must be objects (it would take a tuple), integers must be integers (it
    # would truncate a float).
    get = dict.get
    if {type(i) for i in items} - {dict}:
        raise _Slow
    nested = {}
    for key in ("pixInfo", "party", "metadata"):
        values = [get(i, key) for i in items]
        if {type(v) for v in values} - {dict, type(None)}:
            raise _Slow
        nested[key] = values
    ints = {type(get(i, "flowVersion")) for i in items}
    ints |= {type(get(i, "amountCents")) for i in items}
    ints |= {type(get(p, "amountCents")) for p in nested["pixInfo"] if p is not None}
    ints |= {type(get(m, "amountCents")) for m in nested["metadata"] if m is not None}
    if not ints <= _INT_OR_NONE:
        raise _Slow
    struct = pa.array(items, type=_ITEM)
    # compact JSON as bytes, validated as UTF-8 by the cast (no per-item str objects)
    raw = pa.array(_dumps_bytes(items), type=pa.binary()).cast(_S)
    return pa.Table.from_arrays([*struct.flatten(), raw], schema=ITEM_SCHEMA)


def fallback_table(items: list[Any], raws: list[str]) -> pa.Table:
    """Items the vectorized path refused, kept as `raw` text only: `finish` sends such rows
    down the item-by-item path (which parses `raw` again and names what is wrong)."""
    n = len(raws)
    arrays = [pa.nulls(n, f.type) for f in _ITEM]
    ids = [i.get("id") if isinstance(i, dict) else None for i in items]
    arrays[_ITEM.get_field_index("id")] = pa.array(
        [v if isinstance(v, str) else None for v in ids], type=_S
    )
    return pa.Table.from_arrays([*arrays, pa.array(raws, type=_S)], schema=ITEM_SCHEMA)


def _loads_item(raw: str | bytes) -> Any:
    try:
        return loads_json(raw)  # exact integers of any size
    except (ValueError, ApiError) as exc:
        raise IntentParseError(f"not a JSON value ({exc})", intent_id=None, field=".") from None


def _metadata_texts(raws: list[str]) -> list[str | None]:
    """`metadata` of each item as JSON text with sorted keys (only offramps carry it)."""
    # decoded by the same exact JSON path as a whole item (msgspec: integers of any size
    # stay integers), all of a batch's at once; then encoded with sorted keys
    decoded = _METADATA.decode("[" + ",".join(raws) + "]")
    return [None if m.metadata is None else dumps(m.metadata, sort_keys=True) for m in decoded]


def _finish(table: pa.Table) -> pa.Table:
    table = table.combine_chunks()
    n = table.num_rows
    fields = {
        name: table.column(name).chunk(0) if n else pa.array([], t)
        for name, t in zip(ITEM_SCHEMA.names, ITEM_SCHEMA.types, strict=True)
    }
    checks = [
        fields["createdAt"].null_count,
        fields["updatedAt"].null_count,
        fields["id"].null_count,
        fields["status"].null_count,
    ]
    if any(checks):
        raise _Slow
    # ids UUIDs and statuses non-empty, as flatten_intent requires
    if n and (
        not pc.all(pc.match_substring_regex(fields["id"], UUID_PATTERN)).as_py()
        or pc.min(pc.utf8_length(fields["status"])).as_py() == 0
    ):
        raise _Slow
    pix = dict(
        zip((f.name for f in _ITEM.field("pixInfo").type), fields["pixInfo"].flatten(), strict=True)
    )
    party = dict(
        zip((f.name for f in _ITEM.field("party").type), fields["party"].flatten(), strict=True)
    )
    meta_struct = fields["metadata"]
    meta = dict(
        zip((f.name for f in _ITEM.field("metadata").type), meta_struct.flatten(), strict=True)
    )

    # amount: a top-level amountCents, else pixInfo's, else metadata's (as flatten_intent)
    amounts = (fields["amountCents"], pix["amountCents"], meta["amountCents"])
    source = pa.nulls(n, _S)
    for (label, _), values in reversed(list(zip(_AMOUNT_SOURCES, amounts, strict=True))):
        source = pc.if_else(pc.is_valid(values), pa.scalar(label, _S), source)
    metadata = pa.nulls(n, _S)
    if meta_struct.null_count < n:
        has = pc.is_valid(meta_struct)
        texts = _metadata_texts(fields["raw"].filter(has).to_pylist())
        metadata = pc.replace_with_mask(metadata, has, pa.array(texts, type=_S))
    columns: dict[str, pa.Array] = {
        "id": fields["id"],
        "status": fields["status"],
        "flow_version": fields["flowVersion"],
        "metadata": metadata,
        "expires_at": fields["expiresAt"].cast(_TS_UTC),
        "created_at": fields["createdAt"].cast(_TS_UTC),
        "updated_at": fields["updatedAt"].cast(_TS_UTC),
        "amount_cents": pc.coalesce(*amounts),
        "amount_source": source,
        "pix_amount_cents": pix["amountCents"],
        "destination_address": meta["destinationAddress"],
        "raw": fields["raw"],
    }
    for column, key in _TEXT_FIELDS:
        columns[column] = fields[key]
    for column, key in _PIX_FIELDS:
        columns[column] = pix[key]
    for column, key in _PARTY_FIELDS:
        columns[column] = party[key]
    return pa.Table.from_arrays([columns[f.name] for f in DATA_SCHEMA], schema=DATA_SCHEMA)


def finish(table: pa.Table) -> pa.Table:
    """An ITEM_SCHEMA batch → DATA_SCHEMA rows, vectorized; anything unusual sends the batch
    down the item-by-item path, which handles it or raises `IntentParseError` naming it."""
    try:
        return _finish(table)
    except _SLOW:
        raws = table.column("raw").to_pylist()
        return _slow_page([_loads_item(r) for r in raws], raws).table


def _fast_page(items: list[Any]) -> FlatPage:
    table = _finish(items_table(items))
    upd = table.column("updated_at").cast(pa.int64()).to_numpy(zero_copy_only=False)
    return FlatPage(table.column("id").to_pylist(), upd.tolist(), table)


@dataclass(frozen=True)
class PageItems:
    """One page's ids (checked) and its items left as they are (`table`), for a writer that
    flattens many pages at once: Arrow's per-call cost is then paid per batch, not per page."""

    ids: list[str]
    table: list[Any]


def page_items(items: list[Any]) -> PageItems:
    """The ids of a page of intent objects, checked; the items are flattened later (by
    `flatten_page` on a batch). A page with an item that has no usable id raises
    `IntentParseError` naming it, as `flatten_page` would."""
    get = dict.get
    try:
        ids: list[str] = [get(i, "id") for i in items]  # type: ignore[misc]  # checked next
        if all(map(is_uuid, ids)):
            return PageItems(ids, items)
    except TypeError:  # an item that is not an object
        pass
    for item in items:
        flatten_intent(item)  # raises IntentParseError for the first bad item
    return PageItems([item["id"] for item in items], items)  # pragma: no cover


def _slow_page(items: list[Any], raws: list[str] | None = None) -> FlatPage:
    buf = RowBuffer()
    for n, item in enumerate(items):
        if raws is not None:
            _one_id(item, raws[n])
        # raises IntentParseError naming the item and field
        buf.add(flatten_intent(item, raw=None if raws is None else raws[n]))
    ids: list[str] = [str(i) for i in buf.columns["id"]]
    updated = list(buf.columns["updated_at"])
    return FlatPage(ids, updated, buf.take_data())


def _one_id(item: Any, raw: str) -> None:
    """An item whose text begins with one id and names another later (a key twice): the
    walk reads the first (`recon.extraction.ids.item_uuid_keys`), a JSON decoder the last.
    Refused: which one is the intent's cannot be told."""
    first = item_uuid_keys([raw.encode()])
    if first is not None and isinstance(item, dict) and item.get("id") != first[0]:
        raise IntentParseError(
            f"named twice in the object ({first[0]!r}, then {item.get('id')!r})",
            intent_id=first[0],
            field="id",
        )


def flatten_page(items: list[Any]) -> FlatPage:
    """Flatten a page of intent objects (vectorized; identical to `flatten_intent` per item).

    Anything unusual (a wrong type, an unparsable timestamp) sends the page down the
    item-by-item path, which either handles it or raises `IntentParseError` naming it.
    """
    try:
        return _fast_page(items)
    except _SLOW:
        return _slow_page(items)


def with_lineage(table: pa.Table, *, snapshot_at_us: int, run_id: str) -> pa.Table:
    """DATA_SCHEMA table → INTENTS_SCHEMA table (constant snapshot_at and run_id columns),
    with personal data masked and hashed as recon stores it (recon.pii.protect_intents)."""
    table = protect_intents(table)
    n = table.num_rows
    at = pa.array(np.full(n, snapshot_at_us, dtype=np.int64)).cast(_TS_UTC)
    rid = pa.array([run_id], type=pa.string()).take(pa.array(np.zeros(n, dtype=np.int64)))
    arrays = [
        at if f.name == "snapshot_at" else rid if f.name == "run_id" else table.column(f.name)
        for f in INTENTS_SCHEMA
    ]
    return pa.Table.from_arrays(arrays, schema=INTENTS_SCHEMA)
