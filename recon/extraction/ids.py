"""Intent ids as compact keys: a canonical UUID (lowercase, hyphenated) is its 16 bytes,
any other id its text. The walk's set of ids read (`IdSet`) holds them; a page whose ids are
all canonical UUIDs carries them as one string of keys (`UuidIds`), never as one object per
id."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import accumulate
from typing import Any, overload

import numpy as np

__all__ = ["UUID_PATTERN", "IdSet", "UuidIds", "id_key", "id_keys", "id_text", "is_uuid",
           "item_uuid_keys"]  # fmt: skip

# the API's ids are UUIDs (8-4-4-4-12 hex digits, either case): anything else is refused at
# extraction, so an id rewritten on the way (`=HYPERLINK(...)`) never reaches a snapshot
UUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
_UUID = re.compile(UUID_PATTERN)


def is_uuid(text: object) -> bool:
    """True for a UUID's text (8-4-4-4-12 hex digits, either case, nothing around it)."""
    return isinstance(text, str) and _UUID.fullmatch(text) is not None


def id_key(intent_id: str) -> bytes | str:
    """A compact set key: the 16 bytes of a canonical (lowercase, hyphenated) UUID, else the
    text itself. `id_text(id_key(s)) == s` always, so distinct ids never share a key."""
    return (len(intent_id) == 36 and _canonical_blob(intent_id, 1)) or intent_id


def _canonical_blob(joined: str, n: int) -> bytes | None:
    """The 16-byte keys of `n` canonical UUIDs written back to back (36 characters each), or
    None when any is not one. A few string operations for them all, none per id."""
    if len(joined) != 36 * n:
        return None
    if not joined[8::36] == joined[13::36] == joined[18::36] == joined[23::36] == "-" * n:
        return None
    hexa = joined.replace("-", "")
    try:
        raw = bytes.fromhex(hexa)
    except ValueError:
        return None
    # fromhex skips whitespace and reads upper case: only the canonical text round-trips
    return raw if len(raw) == 16 * n and raw.hex() == hexa else None


class UuidIds(Sequence[str]):
    """A page's ids when all are canonical UUIDs, held as their 16-byte keys concatenated
    (`blob`): what the id set takes as it is. Read as a sequence, the ids' text."""

    __slots__ = ("blob",)

    def __init__(self, blob: bytes):
        if len(blob) % 16:
            raise ValueError("a UUID key is 16 bytes")
        self.blob = blob

    def __len__(self) -> int:
        return len(self.blob) // 16

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> list[str]: ...
    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        at = range(len(self))[index] * 16  # IndexError past the end, negatives from it
        return id_text(self.blob[at : at + 16])

    def __iter__(self) -> Iterator[str]:
        return (id_text(self.blob[at : at + 16]) for at in range(0, len(self.blob), 16))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UuidIds):
            return self.blob == other.blob
        return isinstance(other, Sequence) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]


def _uuid_blob(ids: Sequence[str]) -> bytes | None:
    """The 16 bytes of every id, concatenated, when all are canonical UUIDs; else None."""
    if isinstance(ids, UuidIds):
        return ids.blob
    if not ids or set(map(len, ids)) != {36}:
        return None
    return _canonical_blob("".join(ids), len(ids))


def id_keys(ids: Sequence[str]) -> list[bytes | str]:
    """`id_key` of every id (same result), with no check per id for a page of canonical
    UUIDs."""
    blob = _uuid_blob(ids)
    if blob is not None:
        return [blob[i : i + 16] for i in range(0, len(blob), 16)]
    return [id_key(i) for i in ids]


def id_text(key: bytes | str) -> str:
    """The id text of an `id_key`."""
    if isinstance(key, bytes):
        h = key.hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return key


class IdSet:
    """The set of ids read (~16 bytes per canonical UUID), counted when a count is asked.

    A page's canonical UUIDs are added as one string of their 16-byte keys (`add`: no work
    per id); they are sorted into one array of unique keys (numpy fixed-width bytes) only
    when the set is counted or probed (at the end of a pass) or when `SETTLE_KEYS` are
    pending. A Python set of 16-byte keys would cost ~90 bytes per id, and looking each
    page's keys up as they come ~1 µs of CPU per id; settling 1M keys costs ~0.15 s.
    Ids that are not canonical UUIDs stay text, in a plain set. `repeated` collects the
    keys added more than once (their versions need choosing).
    """

    SETTLE_KEYS = 1 << 20

    def __init__(self) -> None:
        self.repeated: set[bytes | str] = set()
        self._sorted: np.ndarray[Any, Any] = np.empty(0, dtype="S16")
        self._pending: list[bytes] = []
        self._pending_keys = 0
        self._other: set[str] = set()

    def clear(self) -> None:
        """Forget every key (frees the memory)."""
        self.repeated, self._sorted = set(), np.empty(0, dtype="S16")
        self._pending, self._pending_keys, self._other = [], 0, set()

    def add(self, ids: Sequence[str]) -> None:
        """Add a page's ids."""
        blob = _uuid_blob(ids)
        if blob is not None:
            self._pend(blob)
            return
        for key in map(id_key, ids):
            if isinstance(key, bytes):
                self._pend(key)
            elif key in self._other:
                self.repeated.add(key)
            else:
                self._other.add(key)

    def _pend(self, blob: bytes) -> None:
        self._pending.append(blob)
        self._pending_keys += len(blob) // 16
        if self._pending_keys >= self.SETTLE_KEYS:
            self._settle()

    def _settle(self) -> None:
        if not self._pending:
            return
        keys = np.sort(np.frombuffer(b"".join(self._pending), dtype="S16"))
        self._pending, self._pending_keys = [], 0
        if len(keys) > 1:
            again = keys[1:] == keys[:-1]
            if again.any():
                self._note_repeated(keys[1:][again])
                keys = keys[np.concatenate(([True], ~again))]
        known = self._sorted
        if not len(known):
            self._sorted = keys
            return
        at = np.searchsorted(known, keys)
        found = known[np.minimum(at, len(known) - 1)] == keys
        if found.any():
            self._note_repeated(keys[found])
            keys, at = keys[~found], at[~found]
        self._sorted = np.insert(known, at, keys)

    def _note_repeated(self, keys: np.ndarray[Any, Any]) -> None:
        blob = keys.tobytes()  # whole 16-byte items (an item read back would lose trailing NULs)
        self.repeated.update(blob[i : i + 16] for i in range(0, len(blob), 16))

    def __len__(self) -> int:
        self._settle()
        return len(self._sorted) + len(self._other)

    def count_hint(self) -> int:
        """An upper bound of len() that settles nothing (for progress shown per page)."""
        return len(self._sorted) + self._pending_keys + len(self._other)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            return key in self._other
        if not isinstance(key, bytes) or len(key) != 16:
            return False
        self._settle()
        known = self._sorted
        if not len(known):
            return False
        query = np.frombuffer(key, dtype="S16")
        return bool(known[min(int(np.searchsorted(known, query)[0]), len(known) - 1)] == query[0])


_PREFIX = b'{"id":"'


def item_uuid_keys(raws: Sequence[Any]) -> UuidIds | None:
    """The ids of a page's items (compact JSON objects, as bytes) when every item begins with
    its id, a canonical UUID (``{"id":"6b86b273-…"``: how the service writes them): read
    from those bytes with a few bytes operations per page, no JSON decoded. None otherwise
    (the caller decodes the ids). Such an id has no escape in it, so these bytes are its
    value."""
    n = len(raws)
    if not n:
        return None
    joined = b"".join(raws)
    starts = [0, *accumulate(map(len, raws))]
    starts.pop()
    if not all(joined.startswith(_PREFIX, at) for at in starts):
        return None
    # each item's next 37 bytes: the id's 36 characters and its closing quote
    heads = b"".join([joined[at + 7 : at + 44] for at in starts])
    if heads[36::37] != b'"' * n:
        return None
    raw = _canonical_blob(heads.decode("latin-1").replace('"', ""), n)
    return None if raw is None else UuidIds(raw)
