"""Matches a person confirmed: one candidate of an ambiguous match, honoured by every later run.

`data/manual_matches.csv` (written by `recon review`, or by hand):

    intent_id,line_id,break_id,confirmed_by,confirmed_at,note

The next run's pass 0 (`recon/models/intermediate/05_int_match_manual.sql`) matches each pair
first, with `rule = manual` in `recon_matches`; the heuristic passes then skip that line and
intent. A line is matched once: when a line appears in several rows, the last one wins.
Every confirmation is also an entry of the audit trail (`recon.reconciliation.audit`).
"""

from __future__ import annotations

import csv
import io
import os
from dataclasses import astuple, dataclass
from datetime import UTC, datetime
from pathlib import Path

from recon.config import DataDir
from recon.errors import UsageError
from recon.reconciliation import audit

__all__ = ["COLUMNS", "ManualMatch", "confirm_match", "load_manual_matches", "manual_path"]

COLUMNS = ("intent_id", "line_id", "break_id", "confirmed_by", "confirmed_at", "note")


@dataclass(frozen=True)
class ManualMatch:
    """A person's word that a statement line belongs to an intent."""

    intent_id: str
    line_id: str
    break_id: str
    confirmed_by: str
    confirmed_at: str
    note: str


def manual_path(data: DataDir) -> Path:
    """`<data>/manual_matches.csv`."""
    return data.root / "manual_matches.csv"


def load_manual_matches(data: DataDir) -> list[ManualMatch]:
    """The confirmed pairs, one per line (the last row for a line wins); [] without a file."""
    path = manual_path(data)
    if not path.is_file():
        return []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read as UTF-8 text: {exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    header = [(h or "").strip() for h in (reader.fieldnames or [])]
    if "intent_id" not in header or "line_id" not in header:
        raise UsageError(f"{path}: header must have columns {', '.join(COLUMNS)}")
    by_line: dict[str, ManualMatch] = {}
    for lineno, raw in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in raw.items() if k is not None}
        if not any(row.values()):
            continue
        if not row.get("intent_id") or not row.get("line_id"):
            raise UsageError(f"{path}:{lineno}: intent_id and line_id are both required")
        match = ManualMatch(*(row.get(c, "") for c in COLUMNS))
        by_line.pop(match.line_id, None)  # keep file order of the winners
        by_line[match.line_id] = match
    return list(by_line.values())


def confirm_match(
    data: DataDir,
    *,
    break_id: str,
    intent_id: str,
    line_id: str,
    by: str,
    note: str = "",
    now: datetime | None = None,
) -> ManualMatch:
    """Record that `line_id` belongs to `intent_id` (settling `break_id`), and audit it.

    The caller checks that the pair is one of the break's candidates; this only writes.
    """
    if not intent_id.strip() or not line_id.strip():
        raise UsageError("a manual match needs an intent id and a line id")
    at = (now or datetime.now(UTC)).astimezone(UTC)
    match = ManualMatch(
        intent_id.strip(),
        line_id.strip(),
        break_id,
        by,
        at.isoformat(timespec="seconds"),
        " ".join(note.split()),
    )
    path = manual_path(data)
    with audit.locked(data) as log:
        before = {m.line_id: m.intent_id for m in load_manual_matches(data)}
        existing = path.read_text(encoding="utf-8-sig") if path.is_file() else ""
        out = io.StringIO()
        if not existing.strip():
            csv.writer(out, lineterminator="\n").writerow(COLUMNS)
        else:
            out.write(existing if existing.endswith("\n") else existing + "\n")
        csv.writer(out, lineterminator="\n").writerow(astuple(match))
        tmp = path.with_name(".tmp-" + path.name)
        tmp.write_text(out.getvalue(), encoding="utf-8")
        os.replace(tmp, path)
        log.append(
            by=by,
            action="confirm_match",
            break_id=break_id,
            before={"line_id": match.line_id, "intent_id": before.get(match.line_id)},
            after={"line_id": match.line_id, "intent_id": match.intent_id},
            note=match.note,
            at=at,
        )
    return match
