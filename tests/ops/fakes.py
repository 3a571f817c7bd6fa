"""Small fakes behind the same interfaces as the real parts (tests only, never product code).

`write_run` builds a committed run folder with the contract schemas, as the engine would.
`FakeSteps` stands in for extract / import / reconcile so `run_daily` can be tested alone.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from recon.config import DataDir
from recon.schemas import CATEGORIES, EXCEPTIONS_SCHEMA, MATCHES_SCHEMA


def break_row(category: str, n: int, *, run_id: str = "run-1", **kw: Any) -> dict[str, Any]:
    """One break row in EXCEPTIONS_SCHEMA shape."""
    row: dict[str, Any] = {
        "break_id": f"b{n:04d}",
        "run_id": run_id,
        "category": category,
        "priority": CATEGORIES[category].priority,
        "intent_id": f"intent-{n}",
        "line_id": None,
        "end_to_end_id": None,
        "expected_cents": 10_000 + n,
        "actual_cents": 0,
        "delta_cents": -(10_000 + n),
        "reason": f"reason for break {n}",
        "first_seen_run": run_id,
        "age_days": n % 12,
        "state": "new",
    }
    row.update(kw)
    return row


def match_row(n: int, run_id: str = "run-1") -> dict[str, Any]:
    return {
        "run_id": run_id,
        "intent_id": f"m-intent-{n}",
        "line_id": f"line-{n}",
        "end_to_end_id": f"E{n:031d}",
        "rule": "txid",
        "intent_type": "onramp",
        "intent_status": "completed",
        "line_kind": "pix_in",
        "expected_cents": 500,
        "actual_cents": 500,
        "booked_at": datetime(2026, 11, 20, 12, 0, tzinfo=UTC),
    }


def write_run(
    runs: Path,
    run_id: str,
    breaks: list[dict[str, Any]],
    *,
    matches: int = 3,
    summary: dict[str, Any] | None = None,
) -> Path:
    """A committed run folder: exceptions.parquet, matches.parquet, summary.json."""
    folder = runs / run_id
    folder.mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(breaks, schema=EXCEPTIONS_SCHEMA), folder / "exceptions.parquet"
    )
    pq.write_table(
        pa.Table.from_pylist([match_row(i, run_id) for i in range(matches)], schema=MATCHES_SCHEMA),
        folder / "matches.parquet",
    )
    counts: dict[str, int] = {}
    for b in breaks:
        counts[b["category"]] = counts.get(b["category"], 0) + 1
    by_priority = {p: sum(b["priority"] == p for b in breaks) for p in ("P1", "P2", "P3")}
    # the shape of recon.reconcile.RunSummary as saved in summary.json
    payload = {
        "run_id": run_id,
        "previous_run_id": None,
        "as_of": "2026-11-21T02:59:59+00:00",
        "settings": {"amount_tolerance_cents": 0, "business_tz": "America/Sao_Paulo"},
        "intents": 40,
        "statement_lines": 41,
        "matched_lines": matches,
        "auto_match_rate": 0.9625,
        "matches_by_rule": {"txid": matches, "reference": 0, "attributes": 0, "refund": 0},
        "breaks": len(breaks),
        "counts": {name: counts.get(name, 0) for name in CATEGORIES},
        "counts_by_priority": by_priority,
        "new_breaks": sum(b["state"] == "new" for b in breaks),
        "persisting_breaks": sum(b["state"] == "persisting" for b in breaks),
        "totals": {"statement_credit_cents": 123_456, "intents_credit_cents": 120_000},
        "control_totals": [
            {
                "business_day": "2026-11-20",
                "direction": "credit",
                "statement_cents": 123_456,
                "intents_cents": 120_000,
                "explained_cents": 3_456,
                "unexplained_cents": 0,
            },
        ],
        "explained_by": {"onramp_overpaid": 3_456},
        "checks": {"no_line_matched_twice": 0},
        "checks_passed": True,
        "check_samples": {},
        "resolved_breaks": ["00000000deadbeef"],
        "decided_breaks": [
            {
                "break_id": "00000000cafebabe",
                "category": "unmatched_credit",
                "note": "known <test>",
                "decided_by": "ana",
                "decided_at": "2026-11-20T10:00:00+00:00",
            }
        ],
    }
    payload.update(summary or {})
    (folder / "summary.json").write_text(json.dumps(payload, indent=2, sort_keys=True))
    return folder


@dataclass
class FakeSnapshot:
    run_id: str
    path: Path
    manifest: dict[str, Any]


@dataclass
class FakeRun:
    run_id: str
    path: Path
    summary: Any


@dataclass
class FakeSteps:
    """extract / import_statements / reconcile with the real signatures' shape, recording calls."""

    snapshot_at: datetime = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
    breaks: list[dict[str, Any]] = field(default_factory=list)
    extract_error: Exception | None = None
    import_error: Exception | None = None
    calls: list[tuple[str, Any]] = field(default_factory=list)
    started: threading.Event = field(default_factory=threading.Event)
    release: threading.Event | None = None
    runs: int = 0

    def extract(self, data: Any = None, **kw: Any) -> FakeSnapshot:
        self.calls.append(("extract", kw))
        self.started.set()
        if self.release is not None:
            self.release.wait(10)
        if self.extract_error is not None:
            raise self.extract_error
        dd = DataDir.resolve(data) if not isinstance(data, DataDir) else data
        path = dd.snapshots / f"snapshot_date={self.snapshot_at.date()}" / "run_id=s1"
        path.mkdir(parents=True, exist_ok=True)
        return FakeSnapshot("s1", path, {"snapshot_at": self.snapshot_at.isoformat()})

    def import_statements(self, paths: Any, data: Any = None, **kw: Any) -> Any:
        self.calls.append(("import", [Path(p).name for p in paths]))
        if self.import_error is not None:
            raise self.import_error
        return None

    def reconcile(self, data: Any = None, *, as_of: Any = None, **kw: Any) -> FakeRun:
        self.calls.append(("reconcile", as_of))
        self.runs += 1
        dd = DataDir.resolve(data) if not isinstance(data, DataDir) else data
        existing = len(list(dd.runs.iterdir())) if dd.runs.is_dir() else 0
        run_id = f"20261120T180000000000Z-{existing + 1:04d}"
        folder = write_run(dd.runs, run_id, [dict(b, run_id=run_id) for b in self.breaks])
        return FakeRun(run_id, folder, json.loads((folder / "summary.json").read_text()))
