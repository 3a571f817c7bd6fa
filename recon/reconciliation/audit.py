"""The audit trail: every action on a break, appended to `data/audit.jsonl`, chained by hash.

One JSON object per line, never rewritten::

    {"seq": 3, "at": "2026-11-15T10:02:00+00:00", "by": "ana", "action": "resolve",
     "break_id": "3f9a...", "before": {"decision": "open"}, "after": {"decision": "resolved"},
     "note": "refunded by hand, FIN-123", "prev": "<hash of entry 2>", "hash": "<sha256>"}

`hash` = sha256(prev hash + the entry's canonical JSON without `hash`) (keys sorted, no
spaces, UTF-8); the first entry's `prev` is 64 zeros. `data/audit.head` holds the number of
entries and the last hash, so removing the last lines is detected too. `verify` walks the
chain and names the first line where it breaks: an edited line no longer hashes to its
`hash`, an inserted or deleted line breaks the next line's `prev` (and `seq`).

Writers hold `locked(data)` (an OS file lock) across their change and its entry, so two
writers (the review app, `recon resolve`) never interleave.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from recon.config import DataDir

__all__ = [
    "ACTIONS",
    "GENESIS",
    "AuditWriter",
    "Verification",
    "audit_path",
    "entry_hash",
    "head_path",
    "locked",
    "read_entries",
    "verify",
]

GENESIS = "0" * 64
ACTIONS = (
    "resolve",
    "reopen",
    "assign",
    "comment",
    "confirm_match",
    "pair",
    "unpair",
    "request_approval",
    "approve",
)


def audit_path(data: DataDir) -> Path:
    """`<data>/audit.jsonl`."""
    return data.root / "audit.jsonl"


def head_path(data: DataDir) -> Path:
    """`<data>/audit.head`: `<entries> <last hash>`."""
    return data.root / "audit.head"


def _canonical(entry: dict[str, Any]) -> bytes:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(prev: str, entry: dict[str, Any]) -> str:
    """sha256 over the previous hash and the entry's canonical JSON (without `hash`)."""
    return hashlib.sha256(prev.encode("ascii") + _canonical(entry)).hexdigest()


class AuditWriter:
    """Appends entries while `locked()` holds the lock."""

    def __init__(self, data: DataDir):
        self.data = data
        self.path = audit_path(data)
        self.seq, self.last = self._tail()

    def _tail(self) -> tuple[int, str]:
        head = head_path(self.data)
        if head.is_file():
            count, _, last = head.read_text(encoding="ascii").strip().partition(" ")
            return int(count), last
        if self.path.is_file() and self.path.stat().st_size:
            # an old log without its head file: take its last line as it is
            entries = read_entries(self.data)
            return len(entries), str(entries[-1]["hash"])
        return 0, GENESIS

    def append(
        self,
        *,
        by: str,
        action: str,
        break_id: str,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
        note: str = "",
        at: datetime | None = None,
    ) -> dict[str, Any]:
        """Append one entry (fsynced, then the head) and return it."""
        if action not in ACTIONS:
            raise ValueError(f"unknown audit action {action!r}")
        entry: dict[str, Any] = {
            "seq": self.seq + 1,
            "at": (at or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="microseconds"),
            "by": by,
            "action": action,
            "break_id": break_id,
            "before": before or {},
            "after": after or {},
            "note": note,
            "prev": self.last,
        }
        entry["hash"] = entry_hash(self.last, entry)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        self.data.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        self.seq, self.last = entry["seq"], entry["hash"]
        head = head_path(self.data)
        tmp = head.with_name(".tmp-" + head.name)
        tmp.write_text(f"{self.seq} {self.last}\n", encoding="ascii")
        os.replace(tmp, head)
        return entry


@contextmanager
def locked(data: DataDir) -> Iterator[AuditWriter]:
    """Hold the review state's lock; yield a writer for the audit log."""
    data.root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(data.root / ".audit.lock"), timeout=30):
        yield AuditWriter(data)


def read_entries(data: DataDir) -> list[dict[str, Any]]:
    """Every entry, oldest first ([] when there is no log). Does not verify the chain."""
    path = audit_path(data)
    if not path.is_file():
        return []
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
    return out


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify`: ok, entries checked, and where the chain breaks."""

    ok: bool
    entries: int
    line: int | None = None  # 1-based line of the log where the chain breaks
    problem: str = ""


def verify(data: DataDir) -> Verification:
    """Walk the chain; the first line that does not follow from the one before breaks it."""
    path = audit_path(data)
    prev, count, lineno = GENESIS, 0, 0
    if path.is_file():
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    entry = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError):
                    return Verification(False, count, lineno, "not a JSON object")
                if not isinstance(entry, dict) or not isinstance(entry.get("hash"), str):
                    return Verification(False, count, lineno, "not an audit entry")
                if entry.get("prev") != prev or entry.get("seq") != count + 1:
                    return Verification(
                        False,
                        count,
                        lineno,
                        "does not follow the entry before it (a line was inserted or deleted)",
                    )
                if entry_hash(prev, entry) != entry["hash"]:
                    return Verification(False, count, lineno, "its content was changed")
                prev, count = entry["hash"], count + 1
    head = head_path(data)
    if head.is_file():
        want_count, _, want_hash = head.read_text(encoding="ascii").strip().partition(" ")
        if want_count != str(count) or want_hash != prev:
            return Verification(
                False,
                count,
                lineno + 1,
                f"the log ends after {count} entries but {want_count} were written "
                "(entries at its end were deleted)",
            )
    elif count:
        return Verification(False, count, lineno + 1, "audit.head is missing")
    return Verification(True, count)
