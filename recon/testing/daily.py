"""Fakes behind the same interfaces as the daily job's steps, for tests of `run_daily`.

`FakeSteps` stands in for extract / import / reconcile so `run_daily` can be tested alone; the
runs it "makes" are written by `recon.testing.run`, as the engine lays them out.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon import testing
from recon.config import DataDir


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
        folder = testing.run(dd, self.breaks, run_id=run_id)
        return FakeRun(run_id, folder, json.loads((folder / "summary.json").read_text()))
