"""Manual decisions on breaks, kept across reruns, with every note and a reopen.

A person who has dealt with a break records it with `recon resolve BREAK_ID --note ...`, the
review app (`recon review`), or by adding a row to `data/decisions.csv` in a spreadsheet:

    break_id,note,decided_by,decided_at,action
    3f9a0c...,"refunded by hand, ticket FIN-123",ana,2026-11-15T10:02:00+00:00,resolve
    3f9a0c...,"the refund bounced, looking again",bia,2026-11-16T09:00:00+00:00,reopen

Rows are only ever appended, so every note stays; a break's last row says whether it is
decided (`resolve`, also an empty `action`) or open again (`reopen`). Later runs leave a
decided break out of `exceptions.parquet` (open breaks only) and list it in the run summary
under `decided_breaks` with its notes. Break ids are stable (a hash of category, intent and
line), so a decision keeps applying to the same break in every later run. Deleting a break's
rows by hand reopens it too. Files written before the `action` column existed (four columns)
are read as they are and gain the column, every old row a `resolve`, on the next write.

Every resolve and reopen is also an entry of the audit trail (`recon.reconciliation.audit`),
written under the same lock; the rules that allow one (`resolve`, `reopen`, four-eyes) live in
`recon.reconciliation.workflow`.
"""

from __future__ import annotations

import csv
import getpass
import io
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from recon.config import DataDir
from recon.errors import UsageError
from recon.reconciliation import audit

__all__ = [
    "COLUMNS",
    "Decision",
    "append_decision",
    "check_break_id",
    "current_user",
    "decisions_path",
    "load_decisions",
    "load_history",
]

COLUMNS = ("break_id", "note", "decided_by", "decided_at", "action")
DECISION_ACTIONS = ("resolve", "reopen")
_BREAK_ID = re.compile(r"^[0-9a-f]{8,64}$")


@dataclass(frozen=True)
class Decision:
    """One row of decisions.csv: someone resolved (or reopened) a break, with a note."""

    break_id: str
    note: str
    decided_by: str
    decided_at: str  # ISO 8601
    action: str = "resolve"

    def as_row(self) -> list[str]:
        return [self.break_id, self.note, self.decided_by, self.decided_at, self.action]

    def to_json(self) -> dict[str, str]:
        return {
            "action": self.action,
            "note": self.note,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at,
        }


def current_user() -> str:
    """The OS user (the default author of a decision)."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return os.environ.get("USER", "") or "unknown"


def decisions_path(data: DataDir) -> Path:
    """`<data>/decisions.csv`."""
    return data.root / "decisions.csv"


def _read(path: Path) -> tuple[list[str], list[Decision]]:
    """(header, rows) of a decisions file; a malformed one is a UsageError naming the line."""
    if not path.is_file():
        return [], []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read as UTF-8 text: {exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = [(h or "").strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("break_id", "note") if c not in header]
    if missing:
        raise UsageError(
            f"{path}: header must have columns {', '.join(COLUMNS)}; missing {missing}"
        )
    rows: list[Decision] = []
    for lineno, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        break_id = row.get("break_id", "").lower()
        if not _BREAK_ID.match(break_id):
            raise UsageError(f"{path}:{lineno}: break_id {break_id!r} is not a break id")
        if not row.get("note"):
            raise UsageError(f"{path}:{lineno}: a decision needs a note")
        action = row.get("action", "").lower() or "resolve"
        if action not in DECISION_ACTIONS:
            raise UsageError(
                f"{path}:{lineno}: action {action!r} must be one of {', '.join(DECISION_ACTIONS)}"
            )
        rows.append(
            Decision(
                break_id, row["note"], row.get("decided_by", ""), row.get("decided_at", ""), action
            )
        )
    return header, rows


def load_history(data: DataDir) -> dict[str, list[Decision]]:
    """Every row of the decisions file per break, oldest first ({} if there is none)."""
    history: dict[str, list[Decision]] = {}
    for row in _read(decisions_path(data))[1]:
        history.setdefault(row.break_id, []).append(row)
    return history


def load_decisions(data: DataDir) -> dict[str, Decision]:
    """The breaks decided now, as {break_id: latest resolve}; {} if there is no file.

    A break is decided when its last row is a resolve. A malformed file is a UsageError
    naming the file and line, never silently skipped.
    """
    return {
        break_id: rows[-1]
        for break_id, rows in load_history(data).items()
        if rows[-1].action == "resolve"
    }


def check_break_id(break_id: str) -> str:
    """The id as stored (lower case); a UsageError when it is not one."""
    break_id = break_id.strip().lower()
    if not _BREAK_ID.match(break_id):
        raise UsageError(f"{break_id!r} is not a break id (hex, as shown in the report)")
    return break_id


def append_decision(
    data: DataDir, log: audit.AuditWriter, decision: Decision, was_decided: bool
) -> Decision:
    """Append `decision` to the file and to the audit log; the caller holds `audit.locked`.

    The file is rewritten atomically (a crash leaves the old or the new one); a file from
    before the action column is written whole, migrated. The rules that decide whether the
    decision may be made live in `recon.reconciliation.workflow`.
    """
    path = decisions_path(data)
    header, rows = _read(path)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header == list(COLUMNS):
        existing = path.read_text(encoding="utf-8-sig")
        out.write(existing if existing.endswith("\n") else existing + "\n")
    else:
        writer.writerow(COLUMNS)
        writer.writerows(r.as_row() for r in rows)
    writer.writerow(decision.as_row())
    data.root.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".tmp-" + path.name)
    tmp.write_text(out.getvalue(), encoding="utf-8")
    os.replace(tmp, path)
    state = {True: "resolved", False: "open"}
    log.append(
        by=decision.decided_by,
        action=decision.action,
        break_id=decision.break_id,
        before={"decision": state[was_decided]},
        after={"decision": state[decision.action == "resolve"]},
        note=decision.note,
        at=datetime.fromisoformat(decision.decided_at),
    )
    return decision


def read_decisions_csv(path: Path) -> list[tuple[str, str, str]]:
    """(break_id, note, decided_by) rows of a decisions CSV (header: break_id,note[,decided_by])."""
    import csv

    from recon.errors import UsageError

    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UsageError(f"decisions file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read as UTF-8 text: {exc}") from exc
    reader = csv.DictReader(text.splitlines())
    header = [(h or "").strip() for h in reader.fieldnames or []]
    if "break_id" not in header or "note" not in header:
        raise UsageError(f"{path}: header must have columns break_id,note (got {header})")
    rows = []
    for lineno, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        if not row.get("break_id") or not row.get("note"):
            raise UsageError(f"{path}:{lineno}: break_id and note are both required")
        rows.append((row["break_id"], row["note"], row.get("decided_by", "")))
    if not rows:
        raise UsageError(f"{path}: no decisions in the file")
    return rows
