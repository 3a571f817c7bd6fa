"""A list page from bytes to Arrow columns, with no Python object per field (the hot path).

1. `decode_envelope`: the body with its whitespace removed (`msgspec.json.format`), then
   decoded into ``{intents: [Raw, ...], total, limit, offset}``: each item stays the bytes the
   server sent (a `msgspec.Raw` slice), never a dict.
2. `rows_of`: only the ids, for the walker: read from each item's first bytes when every
   item begins with its id, a canonical UUID (`recon.extraction.ids.item_uuid_keys`), else
   decoded by msgspec, skipping every other field; the items stay raw bytes for the writer.
3. `batch_table` (on the writer thread, ~8,192 items at a time): the items joined as NDJSON
   and read by pyarrow's JSON reader (C++) against an explicit schema of the fields a row
   needs (unknown fields are skipped, a wrong type is an error); `raw` is a string column
   over the same bytes; `recon.extraction.flatten.finish` then casts, coalesces and names them.

Anything this path does not handle (a body that is not the usual envelope, an item of the
wrong shape, invalid UTF-8, integers beyond 64 bits) goes to the dict path (`orjson` or the
stdlib, then `recon.extraction.flatten`), which handles it or says precisely what is wrong.
Checks run per page and per batch, never per intent.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec
import numpy as np
import pyarrow as pa
import pyarrow.json as pj

from recon.extraction.flatten import (
    _ITEM,
    _SLOW,
    ITEM_SCHEMA,
    _loads_item,
    dumps,
    fallback_table,
    page_items,
)
from recon.extraction.ids import item_uuid_keys

__all__ = ["PageRows", "RawItems", "batch_table", "decode_envelope", "rows_of"]

_PARSE = pj.ParseOptions(explicit_schema=pa.schema(list(_ITEM)), unexpected_field_behavior="ignore")


class _Envelope(msgspec.Struct):
    intents: list[msgspec.Raw]
    total: int
    limit: int
    offset: int


_ENVELOPE = msgspec.json.Decoder(_Envelope)


@dataclass(frozen=True)
class RawItems:
    """A page's items as the server sent them, whitespace removed (one `msgspec.Raw` each)."""

    raws: list[msgspec.Raw]

    def __len__(self) -> int:
        return len(self.raws)


def decode_envelope(content: bytes) -> tuple[RawItems, dict[str, Any]] | None:
    """The page's items and counts, or None when the body is not the usual envelope (the
    caller then decodes it the slow way, which says precisely what is wrong)."""
    try:
        page = _ENVELOPE.decode(msgspec.json.format(content, indent=-1))
    except (msgspec.DecodeError, RecursionError):
        return None
    counts = {"total": page.total, "limit": page.limit, "offset": page.offset}
    return RawItems(page.intents), counts


@dataclass(frozen=True)
class PageRows:
    """A page for the walker (its ids, in order) and the writer (`table`: the items as raw
    JSON bytes, parsed into columns a batch at a time by `batch_table`)."""

    ids: Sequence[str]
    table: list[Any]


class _Id(msgspec.Struct):
    id: str


_IDS = msgspec.json.Decoder(list[_Id])


def _raw_table(raws: list[Any]) -> pa.Table:
    lines = b"\n".join(raws)  # compact JSON has no newline outside strings
    read = pj.ReadOptions(use_threads=False, block_size=max(len(lines) + 1, 1 << 16))
    table = pj.read_json(io.BytesIO(lines), read_options=read, parse_options=_PARSE)
    if table.num_rows != len(raws):
        raise ValueError("an item is not one JSON object")
    offsets = np.zeros(len(raws) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, raws), dtype=np.int64, count=len(raws)), out=offsets[1:])
    raw = pa.LargeStringArray.from_buffers(
        len(raws), pa.py_buffer(offsets), pa.py_buffer(b"".join(raws))
    )
    raw.validate(full=True)  # UTF-8
    return table.append_column("raw", raw.cast(pa.string()))


def batch_table(raws: list[Any]) -> pa.Table:
    """Items as raw JSON bytes (a writer's batch) → an ITEM_SCHEMA table, in one call of
    pyarrow's JSON reader. A batch it refuses keeps only ids and `raw`, so that `finish`
    takes it item by item (and names what is wrong)."""
    if not raws:
        return ITEM_SCHEMA.empty_table()
    try:
        return _raw_table(raws)
    except _SLOW:
        pass
    dicts = [_loads_item(bytes(r)) for r in raws]  # not JSON (or not UTF-8): named here
    return fallback_table(dicts, [bytes(r).decode() for r in raws])


def rows_of(items: RawItems | list[Any]) -> PageRows:
    """A page's items (raw bytes, or dicts) → its ids (checked) and its items as raw JSON.

    Only the ids are decoded now (the walker's bookkeeping needs them); an item without a
    usable id raises `IntentParseError` naming it."""
    if isinstance(items, RawItems):
        raws: list[Any] = items.raws
        keys = item_uuid_keys(raws)
        if keys is not None:
            return PageRows(keys, raws)
        try:
            ids = [i.id for i in _IDS.decode(b"[" + b",".join(raws) + b"]")]
            if all(v.strip() for v in ids):
                return PageRows(ids, raws)
        except msgspec.DecodeError:
            pass
        dicts = [_loads_item(bytes(r)) for r in raws]
    else:
        dicts, raws = items, [dumps(i).encode() for i in items]
    return PageRows(page_items(dicts).ids, raws)  # page_items names a bad id
