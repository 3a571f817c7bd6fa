"""When a finished run still exits 1: the alert thresholds (`[alerts]` in recon.toml).

Both `recon reconcile` and `recon daily` assess a run with them, so they live beside the
runs (the ops layer, above, only reads them):

    [alerts]
    fail_on_priorities = ["P1"]   # any open break of these priorities -> exit 1
    max_breaks = 50               # more open breaks than this -> exit 1 (default: no limit)
    statements_overdue = "30h"    # a business day no account statement covers this long
                                  # after it ended (at the run's as_of) -> exit 1
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from recon.errors import EXIT_BREAKS, EXIT_OK, ConfigError

__all__ = ["Assessment", "Thresholds", "assess_run"]


@dataclass(frozen=True)
class Thresholds:
    """When a finished run still exits 1 (``[alerts]`` in recon.toml)."""

    fail_on_priorities: tuple[str, ...] = ("P1",)
    max_breaks: int | None = None

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Thresholds:
        """Read ``[alerts]``; unknown keys and wrong types are a ConfigError."""
        section = config.get("alerts", {})
        if not isinstance(section, dict):
            raise ConfigError("[alerts] must be a table")
        # statements_overdue is read by the engine (ReconcileSettings.load), which records
        # the overdue days in the run; it is validated there
        unknown = set(section) - {"fail_on_priorities", "max_breaks", "statements_overdue"}
        if unknown:
            raise ConfigError(f"[alerts]: unknown key(s) {', '.join(sorted(unknown))}")
        prios = section.get("fail_on_priorities", ["P1"])
        if not isinstance(prios, list) or not all(p in ("P1", "P2", "P3") for p in prios):
            raise ConfigError('[alerts] fail_on_priorities must be a list of "P1"/"P2"/"P3"')
        limit = section.get("max_breaks")
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 0
        ):
            raise ConfigError("[alerts] max_breaks must be a non-negative integer")
        return cls(tuple(prios), limit)


@dataclass(frozen=True)
class Assessment:
    """What a run's breaks mean for the exit code."""

    exit_code: int
    breaks: int
    by_priority: dict[str, int]
    reasons: tuple[str, ...]


def assess_run(run_dir: Path, thresholds: Thresholds | None = None) -> Assessment:
    """Exit code of a finished run: 1 if its open breaks cross the thresholds, else 0."""
    thresholds = thresholds or Thresholds()
    path = Path(run_dir) / "exceptions.parquet"
    priorities: list[str] = []
    if path.is_file():
        priorities = [
            p or "" for p in pq.read_table(path, columns=["priority"])["priority"].to_pylist()
        ]
    by_priority = {p: priorities.count(p) for p in ("P1", "P2", "P3")}
    reasons = [
        f"{by_priority.get(p, 0)} open {p} break(s)"
        for p in thresholds.fail_on_priorities
        if by_priority.get(p, 0)
    ]
    if thresholds.max_breaks is not None and len(priorities) > thresholds.max_breaks:
        reasons.append(f"{len(priorities)} open breaks > max_breaks {thresholds.max_breaks}")
    overdue = _overdue_days(Path(run_dir))
    if overdue:
        reasons.append(
            f"statements overdue for {len(overdue)} business day(s): {', '.join(overdue)}"
        )
    return Assessment(
        EXIT_BREAKS if reasons else EXIT_OK, len(priorities), by_priority, tuple(reasons)
    )


def _overdue_days(run_dir: Path) -> list[str]:
    """The business days the run found no account statement for, past [alerts]
    statements_overdue (summary.json; absent in runs made before statement coverage)."""
    path = run_dir / "summary.json"
    if not path.is_file():
        return []
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return []
    days = summary.get("statements_overdue") if isinstance(summary, dict) else None
    return [str(d) for d in days] if isinstance(days, list) else []
