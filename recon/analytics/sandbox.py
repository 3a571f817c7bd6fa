"""Data for notebooks on a fresh machine: the user's data, or a small sandbox world."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from recon.config import DataDir

__all__ = ["DEMO_DAYS", "DEMO_INTENTS_PER_DAY", "default_data_dir", "ensure_demo_data"]

# Small enough that a notebook run on a fresh clone builds it in seconds, big enough that
# every chart has something to show (each day is a cohort).
DEMO_DAYS = 7
DEMO_INTENTS_PER_DAY = 60


def default_data_dir() -> Path:
    """$RECON_DATA when set, else a sandbox folder in the system temp dir (never ./data, so
    opening a notebook does not write into the repository)."""
    env = os.environ.get("RECON_DATA")
    if env:
        return Path(env).expanduser().resolve()
    return Path(tempfile.gettempdir()) / "recon-sandbox-data"


def ensure_demo_data(
    data_dir: str | os.PathLike[str] | None = None,
    *,
    seed: int = 7,
    days: int = DEMO_DAYS,
    intents_per_day: int = DEMO_INTENTS_PER_DAY,
) -> DataDir:
    """The data directory to analyse: `data_dir` as it is when it holds a snapshot; otherwise
    a sandbox world built there in-process (emulator → extract → late events → extract →
    statements → reconcile, via `recon.demo.ensure_demo_data`) and re-used on later calls.

    `data_dir=None` means `default_data_dir()`. Building refuses a non-empty folder that
    the demo did not make (a clear UsageError), so real data is never overwritten.
    """
    root = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir()
    # the data-directory contract (README, Contracts): committed snapshot parts
    if any(root.glob("snapshots/snapshot_date=*/run_id=*/part-*.parquet")):
        return DataDir(root)
    from recon.demo import ensure_demo_data as build_demo

    return build_demo(root, seed=seed, days=days, intents_per_day=intents_per_day)
