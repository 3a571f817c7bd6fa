"""Manual decisions on breaks, kept across reruns.

A person who has dealt with a break records it, with `recon resolve BREAK_ID --note ...`
or by adding a row to `data/decisions.csv` in a spreadsheet or editor:

    break_id,note,decided_by,decided_at
    3f9a0c...,"refunded by hand, ticket FIN-123",ana,2026-11-15T10:02:00+00:00

Later runs leave a decided break out of `exceptions.parquet` (open breaks only) and list it
in the run summary under `decided_breaks` with its note, so nothing is lost from view.
Because break ids are stable (a hash of category, intent and line), a decision keeps
applying to the same break in every later run. When a break_id appears more than once, the
last row wins; deleting a row reopens the break.
"""

from __future__ import annotations

import csv
import io
import os
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock

from recon.config import DataDir
from recon.errors import UsageError

__all__ = ["COLUMNS", "Decision", "decisions_path", "load_decisions", "resolve"]

COLUMNS = ("break_id", "note", "decided_by", "decided_at")
_BREAK_ID = re.compile(r"^[0-9a-f]{8,64}$")


@dataclass(frozen=True)
class Decision:
    """Someone's note that a break is dealt with."""

    break_id: str
    note: str
    decided_by: str
    decided_at: str  # ISO 8601


def decisions_path(data: DataDir) -> Path:
    """`<data>/decisions.csv`."""
    return data.root / "decisions.csv"


def load_decisions(data: DataDir) -> dict[str, Decision]:
    """The decisions file as {break_id: Decision} (last row per break wins); {} if absent.

    A malformed file is a UsageError naming the file and line, never silently skipped.
    """
    path = decisions_path(data)
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8-sig")
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in (reader.fieldnames or [])]
    missing = [c for c in ("break_id", "note") if c not in header]
    if missing:
        raise UsageError(
            f"{path}: header must have columns {', '.join(COLUMNS)}; missing {missing}"
        )
    decisions: dict[str, Decision] = {}
    for lineno, row in enumerate(reader, start=2):
        row = {(k or "").strip(): (v or "").strip() for k, v in row.items() if k is not None}
        if not any(row.values()):
            continue
        break_id = row.get("break_id", "").lower()
        if not _BREAK_ID.match(break_id):
            raise UsageError(f"{path}:{lineno}: break_id {break_id!r} is not a break id")
        if not row.get("note"):
            raise UsageError(f"{path}:{lineno}: a decision needs a note")
        decisions[break_id] = Decision(
            break_id, row["note"], row.get("decided_by", ""), row.get("decided_at", "")
        )
    return decisions


def resolve(
    break_id: str,
    note: str,
    *,
    data: str | os.PathLike[str] | DataDir | None = None,
    decided_by: str | None = None,
    now: datetime | None = None,
    check_exists: bool = True,
) -> Decision:
    """Record that `break_id` is dealt with; later runs report it as decided, not open.

    With `check_exists` (default) the break must be in the latest run. The file is rewritten
    atomically under a lock, so a concurrent `recon resolve` or a crash cannot corrupt it.
    """
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    break_id = break_id.strip().lower()
    if not _BREAK_ID.match(break_id):
        raise UsageError(f"{break_id!r} is not a break id (hex, as shown in the report)")
    note = " ".join(note.split())
    if not note:
        raise UsageError("a decision needs a note saying what was done")
    if check_exists:
        _require_break(dd, break_id)
    decision = Decision(
        break_id,
        note,
        decided_by or os.environ.get("USER", ""),
        (now or datetime.now(UTC)).astimezone(UTC).isoformat(timespec="seconds"),
    )
    path = decisions_path(dd)
    dd.root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=30):
        existing = path.read_text(encoding="utf-8-sig") if path.is_file() else ""
        out = io.StringIO()
        if not existing.strip():
            csv.writer(out, lineterminator="\n").writerow(COLUMNS)
        else:
            out.write(existing if existing.endswith("\n") else existing + "\n")
        csv.writer(out, lineterminator="\n").writerow([asdict(decision)[c] for c in COLUMNS])
        tmp = path.with_name(".tmp-" + path.name)
        tmp.write_text(out.getvalue(), encoding="utf-8")
        os.replace(tmp, path)
    load_decisions(dd)  # the file must stay readable after our write
    return decision


def _require_break(data: DataDir, break_id: str) -> None:
    import pyarrow.parquet as pq

    from recon.catalog import latest_run

    run = latest_run(data)
    if run is None:
        raise UsageError("no reconciliation run yet: run `recon reconcile` first")
    ids = pq.read_table(run / "exceptions.parquet", columns=["break_id"]).column(0).to_pylist()
    if break_id not in ids:
        raise UsageError(f"break {break_id} is not in the latest run {run.name}")
