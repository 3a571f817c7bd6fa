"""Matches a person made: a candidate of an ambiguous match confirmed, or a pair made by hand.

`data/manual_matches.csv` (written by `recon review`, `recon pair` / `recon unpair` and
`recon.pair`, or by hand):

    intent_id,line_id,break_id,confirmed_by,confirmed_at,note,action

`action` is `confirm` (one candidate of an ambiguous match), `pair` (a statement line paired
by hand with an intent that lacked its money) or `unpair` (the line's pair undone); a file
without the column is read with every row a `confirm`, and gains it on the next write. Rows
are only appended; for each line the last row wins, and an `unpair` leaves the line free.

The next run's pass 0 (`recon/models/intermediate/05_int_match_manual.sql`) matches each
pair first, with `rule = manual` in `recon_matches`; the heuristic passes then skip that line
and intent. The rules that allow a pair live in `recon.reconciliation.workflow`; every
change is also an entry of the audit trail (`recon.reconciliation.audit`).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import astuple, dataclass
from datetime import datetime
from pathlib import Path

from recon.config import DataDir
from recon.errors import UsageError
from recon.reconciliation import audit

__all__ = [
    "ACTIONS",
    "COLUMNS",
    "ManualMatch",
    "append_match",
    "load_manual_matches",
    "manual_path",
    "read_manual_rows",
]

COLUMNS = ("intent_id", "line_id", "break_id", "confirmed_by", "confirmed_at", "note", "action")
ACTIONS = ("confirm", "pair", "unpair")


@dataclass(frozen=True)
class ManualMatch:
    """A person's word that a statement line belongs to an intent (or, `unpair`, no longer)."""

    intent_id: str
    line_id: str
    break_id: str
    confirmed_by: str
    confirmed_at: str
    note: str
    action: str = "confirm"


def manual_path(data: DataDir) -> Path:
    """`<data>/manual_matches.csv`."""
    return data.root / "manual_matches.csv"


def read_manual_rows(data: DataDir) -> tuple[list[str], list[ManualMatch]]:
    """(header, every row in file order); ([], []) without a file."""
    path = manual_path(data)
    if not path.is_file():
        return [], []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read as UTF-8 text: {exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = [(h or "").strip() for h in (reader.fieldnames or [])]
    if "intent_id" not in header or "line_id" not in header:
        raise UsageError(f"{path}: header must have columns {', '.join(COLUMNS)}")
    rows: list[ManualMatch] = []
    for lineno, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        if not row.get("intent_id") or not row.get("line_id"):
            raise UsageError(f"{path}:{lineno}: intent_id and line_id are both required")
        row["action"] = row.get("action", "").lower() or "confirm"
        if row["action"] not in ACTIONS:
            raise UsageError(
                f"{path}:{lineno}: action {row['action']!r} must be one of {', '.join(ACTIONS)}"
            )
        rows.append(ManualMatch(*(row.get(c, "") for c in COLUMNS)))
    return header, rows


def load_manual_matches(data: DataDir) -> list[ManualMatch]:
    """The pairs in force, one per line (the last row for a line wins; `unpair` frees it)."""
    by_line: dict[str, ManualMatch] = {}
    for match in read_manual_rows(data)[1]:
        by_line.pop(match.line_id, None)  # keep file order of the winners
        by_line[match.line_id] = match
    return [m for m in by_line.values() if m.action != "unpair"]


def append_match(data: DataDir, log: audit.AuditWriter, match: ManualMatch) -> ManualMatch:
    """Append `match` to the file and its audit entry; the caller holds `audit.locked`."""
    path = manual_path(data)
    header, rows = read_manual_rows(data)
    before = {m.line_id: m.intent_id for m in load_manual_matches(data)}.get(match.line_id)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header == list(COLUMNS):
        existing = path.read_text(encoding="utf-8-sig")
        out.write(existing if existing.endswith("\n") else existing + "\n")
    else:  # a new file, or one from before the action column: written whole, migrated
        writer.writerow(COLUMNS)
        writer.writerows(astuple(r) for r in rows)
    writer.writerow(astuple(match))
    data.root.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(".tmp-" + path.name)
    tmp.write_text(out.getvalue(), encoding="utf-8")
    os.replace(tmp, path)
    after = None if match.action == "unpair" else match.intent_id
    log.append(
        by=match.confirmed_by,
        action="confirm_match" if match.action == "confirm" else match.action,
        break_id=match.break_id,
        before={"line_id": match.line_id, "intent_id": before},
        after={"line_id": match.line_id, "intent_id": after},
        note=match.note,
        at=datetime.fromisoformat(match.confirmed_at),
    )
    return match
