"""The audit trail: every action on a break, appended to `data/audit.jsonl`, chained by a
keyed MAC.

One JSON object per line, never rewritten::

    {"seq": 3, "at": "2026-11-15T10:02:00+00:00", "by": "ana", "action": "resolve",
     "break_id": "3f9a...", "before": {"decision": "open"}, "after": {"decision": "resolved"},
     "note": "refunded by hand, FIN-123", "prev": "<hash of entry 2>", "alg": "hmac-sha256",
     "hash": "<hex>"}

`hash` = HMAC-SHA256(key, prev hash + the entry's canonical JSON without `hash`) (keys
sorted, no spaces, UTF-8); the first entry's `prev` is 64 zeros. The key lives outside the
data directory (`load_key`): someone who can write the data directory but not read the key
cannot write an entry that verifies, nor recompute the chain after changing one. Entries
written before the key (no `alg`: `hash` is plain sha256 of the same bytes) are accepted
only as the start of the log, sealed by a keyed entry after them (`seal`, which
`recon audit init` appends): the keyed entry's MAC covers their last hash, and so all of
them.

`data/audit.head` holds the number of entries and the last hash (removing the last lines
with the head untouched is caught). The head is also carried out of the data directory (the
daily record and the notification say it); `verify(expect_head=...)` checks that a head
recorded earlier is still in the chain, which catches what a keyed chain alone cannot:
the last entries cut off and audit.head rewritten to match, or both files deleted.

Writers hold `locked(data)` (an OS file lock), which verifies the log before it lets them
append: nothing is ever added to a broken log, and two writers never interleave. Readers
that act on the log's content (the review app, a run's history) use `read_verified`.
"""

from __future__ import annotations

import getpass
import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock

from recon.config import DataDir, load_config
from recon.errors import AuditBroken, ConfigError, UsageError

__all__ = [
    "ACTIONS",
    "ALG",
    "GENESIS",
    "KEY_ENV",
    "AuditBroken",
    "AuditWriter",
    "Verification",
    "audit_path",
    "entry_hash",
    "head_path",
    "init",
    "load_key",
    "locked",
    "read_entries",
    "read_verified",
    "verify",
]

GENESIS = "0" * 64
ALG = "hmac-sha256"
KEY_ENV = "RECON_AUDIT_KEY"
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
    "seal",  # `recon audit init`: the keyed entry after entries written before the key
)
_HEX64 = re.compile(r"^[0-9a-f]{64}$")


def audit_path(data: DataDir) -> Path:
    """`<data>/audit.jsonl`."""
    return data.root / "audit.jsonl"


def head_path(data: DataDir) -> Path:
    """`<data>/audit.head`: `<entries> <last hash>`."""
    return data.root / "audit.head"


# ---------------------------------------------------------------------------- the key


def default_key_path() -> Path:
    """`$XDG_CONFIG_HOME/recon/audit.key` (default `~/.config/recon/audit.key`)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "recon" / "audit.key"


def key_file(data: DataDir, config: str | os.PathLike[str] | None = None) -> Path:
    """The key file: `[audit] key_file` of recon.toml, else `default_key_path()`. Refused
    inside the data directory (its writer would hold the key)."""
    section = load_config(config, data).get("audit", {})
    if not isinstance(section, dict) or set(section) - {"key_file"}:
        raise ConfigError("recon.toml [audit]: the one setting is key_file")
    named = section.get("key_file")
    if named is not None and (not isinstance(named, str) or not named):
        raise ConfigError("recon.toml [audit] key_file must be a path")
    path = Path(named).expanduser() if named else default_key_path()
    root = data.root.resolve()
    if path.resolve() == root or root in path.resolve().parents:
        raise ConfigError(f"{path}: the audit key must live outside the data directory {data.root}")
    return path


def load_key(
    data: DataDir, config: str | os.PathLike[str] | None = None, *, create: bool = False
) -> bytes | None:
    """The MAC key: `$RECON_AUDIT_KEY`, else the key file (`key_file`), which must be
    readable by its owner only. None when there is none; `create` makes the file (0600)."""
    env = os.environ.get(KEY_ENV, "")
    if env:
        if len(env) < 16:
            raise ConfigError(f"{KEY_ENV} must have at least 16 characters")
        return env.encode()
    path = key_file(data, config)
    if create and not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first: use theirs
        else:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(32) + "\n")
    if not path.is_file():
        return None
    if path.stat().st_mode & 0o077:
        raise ConfigError(f"{path}: the audit key must be readable by its owner only (chmod 600)")
    key = path.read_bytes().strip()
    if len(key) < 32:
        raise ConfigError(f"{path}: the audit key is too short (at least 32 characters)")
    return key


# ---------------------------------------------------------------------------- entries


def _canonical(entry: dict[str, Any]) -> bytes:
    body = {k: v for k, v in entry.items() if k != "hash"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def entry_hash(prev: str, entry: dict[str, Any], key: bytes | None = None) -> str:
    """The entry's `hash`: HMAC-SHA256 under `key` over the previous hash and the entry's
    canonical JSON (without `hash`); plain sha256 of the same bytes without a key."""
    body = prev.encode("ascii") + _canonical(entry)
    if key is None:
        return hashlib.sha256(body).hexdigest()
    return hmac.new(key, body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Verification:
    """The outcome of `verify`: ok, entries checked, where the chain breaks, and its head."""

    ok: bool
    entries: int
    line: int | None = None  # 1-based line of the log where the chain breaks
    problem: str = ""
    head: str = GENESIS  # the last good entry's hash
    unsealed: int = 0  # entries at the end written without the key

    def describe(self, path: Path) -> str:
        """One line naming the log, the line and the problem."""
        if self.ok:
            return f"{path}: {self.entries} entries, chain intact, head {self.head}"
        return (
            f"{path}:{self.line}: audit chain broken: {self.problem} "
            f"({self.entries} entries verified before it)"
        )


_NO_KEY = (
    f"it is keyed, and no key is set (${KEY_ENV}, or the file [audit] key_file names, "
    "or ~/.config/recon/audit.key)"
)


def _check(
    raw: bytes, prev: str, count: int, key: bytes | None, keyed: bool
) -> tuple[dict[str, Any] | None, str]:
    """(entry, "") when the line follows `prev` as entry `count + 1`, else (None, why)."""
    try:
        entry = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None, "not a JSON object"
    if not isinstance(entry, dict) or not isinstance(entry.get("hash"), str):
        return None, "not an audit entry"
    if entry.get("prev") != prev or entry.get("seq") != count + 1:
        return None, "does not follow the entry before it (a line was inserted or deleted)"
    alg = entry.get("alg")
    if alg == ALG:
        if key is None:
            return None, _NO_KEY
        want = entry_hash(prev, entry, key)
    elif alg is None and not keyed:
        want = entry_hash(prev, entry)
    elif alg is None:
        return None, "an entry without the key's MAC after keyed ones (forged)"
    else:
        return None, f"unknown alg {alg!r}"
    if not hmac.compare_digest(want, entry["hash"]):
        return None, "its content or its MAC was changed (or it was written with another key)"
    return entry, ""


def _walk(data: DataDir, key: bytes | None) -> tuple[Verification, list[dict[str, Any]]]:
    """Every entry that verifies, and where the first one that does not is."""
    path = audit_path(data)
    entries: list[dict[str, Any]] = []
    prev, lineno, keyed, unsealed = GENESIS, 0, False, 0
    if path.is_file():
        with path.open("rb") as fh:
            for lineno, raw in enumerate(fh, start=1):
                entry, problem = _check(raw, prev, len(entries), key, keyed)
                if entry is None:
                    return Verification(False, len(entries), lineno, problem, prev), entries
                keyed = keyed or entry.get("alg") == ALG
                unsealed = 0 if keyed else unsealed + 1
                entries.append(entry)
                prev = entry["hash"]
    return Verification(True, len(entries), lineno + 1, "", prev, unsealed), entries


def _check_head(data: DataDir, result: Verification) -> Verification:
    head = head_path(data)
    if head.is_file():
        want_count, _, want_hash = head.read_text(encoding="ascii").strip().partition(" ")
        if want_count != str(result.entries) or want_hash != result.head:
            return Verification(
                False, result.entries, result.line,
                f"the log ends after {result.entries} entries but audit.head says "
                f"{want_count} (entries at its end were deleted, or the head rewritten)",
                result.head,
            )  # fmt: skip
    elif result.entries:
        return Verification(False, result.entries, result.line, "audit.head is missing")
    return result


def _check_expected(result: Verification, hashes: list[str], expect: str) -> Verification:
    expect = expect.strip().lower()
    if not _HEX64.match(expect):
        raise UsageError(f"--expect-head must be 64 hexadecimal digits, got {expect[:80]!r}")
    if expect == GENESIS or expect in hashes:
        return result
    return Verification(
        False, result.entries, result.line,
        f"the expected head {expect} is not in the log (entries were deleted or rewritten)",
        result.head,
    )  # fmt: skip


def _verified(
    data: DataDir, key: bytes | None, sealed: bool
) -> tuple[Verification, list[dict[str, Any]]]:
    result, entries = _walk(data, key)
    if result.ok and key is not None and result.unsealed and sealed:
        result = Verification(
            False, result.entries, result.line,
            f"its last {result.unsealed} entries were written without the audit key (forged, "
            "or older than the key: check them, then seal them with `recon audit init`)",
            result.head,
        )  # fmt: skip
    if result.ok:
        result = _check_head(data, result)
    return result, entries


def verify(
    data: DataDir,
    *,
    expect_head: str | None = None,
    key: bytes | None = None,
    sealed: bool = True,
) -> Verification:
    """Walk the chain: the first line that does not follow from the one before breaks it.

    `key` defaults to `load_key(data)`; with a key, entries written without it are accepted
    only before a keyed one (`sealed=False` accepts them at the end too, for `init`).
    `expect_head`: a hash the log held once (the daily record, a notification), which must
    still be one of its entries' hashes."""
    result, entries = _verified(data, key or load_key(data), sealed)
    if expect_head is not None:
        result = _check_expected(result, [e["hash"] for e in entries], expect_head)
    return result


def read_verified(data: DataDir) -> list[dict[str, Any]]:
    """Every entry, oldest first, after the log verifies; `AuditBroken` when it does not."""
    result, entries = _verified(data, load_key(data), True)
    if not result.ok:
        raise AuditBroken(result.describe(audit_path(data)))
    return entries


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


# ---------------------------------------------------------------------------- writing


class AuditWriter:
    """Appends keyed entries to a log `locked()` has verified."""

    def __init__(self, data: DataDir, key: bytes, verified: Verification):
        self.data = data
        self.path = audit_path(data)
        self.key = key
        self.seq, self.last = verified.entries, verified.head

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
            "alg": ALG,
        }
        entry["hash"] = entry_hash(self.last, entry, self.key)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        self.data.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.fchmod(fd, 0o600)  # a log written before it was private
            os.write(fd, line.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        self.seq, self.last = entry["seq"], entry["hash"]
        head = head_path(self.data)
        tmp = head.with_name(".tmp-" + head.name)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(f"{self.seq} {self.last}\n")
        os.replace(tmp, head)
        return entry


@contextmanager
def locked(data: DataDir, *, sealed: bool = True) -> Iterator[AuditWriter]:
    """Hold the review state's lock; verify the log (`AuditBroken` when it does not); yield
    a writer for it. The key is made (`load_key(create=True)`) when there is none yet."""
    data.root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(data.root / ".audit.lock"), timeout=30):
        key = load_key(data, create=True)
        assert key is not None  # made above
        result = verify(data, key=key, sealed=sealed)
        if not result.ok:
            raise AuditBroken(result.describe(audit_path(data)))
        yield AuditWriter(data, key, result)


def init(data: DataDir) -> tuple[Path | None, int]:
    """`recon audit init`: make the key file when there is no key (0600, outside the data
    directory), and seal entries written before the key with a keyed `seal` entry.
    Returns (the key file made, or None; how many entries were sealed)."""
    made = None
    if not os.environ.get(KEY_ENV) and load_key(data) is None:
        load_key(data, create=True)
        made = key_file(data)
    with locked(data, sealed=False) as log:
        result = verify(data, key=log.key, sealed=False)
        if result.unsealed:
            log.append(
                by=_os_user(), action="seal", break_id="",
                note=f"{result.unsealed} entries written before the audit key, sealed",
            )  # fmt: skip
    return made, result.unsealed


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "local"
