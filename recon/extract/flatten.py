"""Flatten v2 intent objects into rows of `recon.schemas.INTENTS_SCHEMA`.

One intent becomes one row: ids, type and status as text, timestamps as UTC microseconds,
money as integer cents, `pixInfo` and `party` flattened, `metadata` and the whole item kept
as JSON text. Unknown extra fields are tolerated (they survive in `raw`); a malformed item
(no id, a timestamp that does not parse, a wrong type) raises `IntentParseError` naming the
intent and the field: nothing is dropped silently.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from recon.errors import ApiError
from recon.schemas import INTENTS_SCHEMA

__all__ = ["IntentParseError", "RowBuffer", "flatten_intent", "parse_timestamp"]

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


class IntentParseError(ApiError):
    """The API returned an intent we cannot take as it is (exit 3: upstream data problem)."""

    def __init__(self, message: str, *, intent_id: str | None, field: str, where: str = ""):
        who = f"intent {intent_id}" if intent_id else "intent without an id"
        super().__init__(f"{who}{where}: field {field!r}: {message}")
        self.intent_id = intent_id
        self.field = field


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
    row: dict[str, Any] = {"id": intent_id}
    for column, key in _TEXT_FIELDS:
        row[column] = _text(item, key, key, intent_id)
    status = item.get("status")
    if not isinstance(status, str) or not status:
        raise IntentParseError("missing or empty status", intent_id=intent_id, field="status")
    row["status"] = status
    flow = item.get("flowVersion")
    if flow is not None and (isinstance(flow, bool) or not isinstance(flow, int)):
        raise IntentParseError(
            f"expected an integer, got {flow!r}", intent_id=intent_id, field="flowVersion"
        )
    row["flow_version"] = flow

    metadata = _object(item, "metadata", intent_id)
    row["metadata"] = (
        None if metadata is None else json.dumps(metadata, separators=(",", ":"), sort_keys=True)
    )
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
    row["raw"] = raw if raw is not None else json.dumps(item, separators=(",", ":"))
    return row


_COLUMNS = INTENTS_SCHEMA.names


class RowBuffer:
    """Column lists that fill up with flattened rows and turn into an Arrow table."""

    _DATA_COLUMNS = tuple(n for n in _COLUMNS if n not in ("snapshot_at", "run_id"))

    def __init__(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in self._DATA_COLUMNS}

    def __len__(self) -> int:
        return len(self.columns["id"])

    def add(self, row: Mapping[str, Any]) -> None:
        """Append one flattened row (see `flatten_intent`)."""
        for name, values in self.columns.items():
            values.append(row[name])

    def take(self, *, snapshot_at_us: int, run_id: str) -> pa.Table:
        """The buffered rows as a table with INTENTS_SCHEMA (lineage columns filled in)."""
        n = len(self)
        arrays = []
        for f in INTENTS_SCHEMA:
            if f.name == "snapshot_at":
                arrays.append(pa.array([snapshot_at_us] * n, type=f.type))
            elif f.name == "run_id":
                arrays.append(pa.array([run_id] * n, type=f.type))
            else:
                arrays.append(pa.array(self.columns[f.name], type=f.type))
        self.columns = {name: [] for name in self._DATA_COLUMNS}
        return pa.Table.from_arrays(arrays, schema=INTENTS_SCHEMA)
