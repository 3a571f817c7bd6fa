"""Where recon keeps its data, and how it reads `recon.toml`.

The data directory is `--data DIR`, else `$RECON_DATA`, else `./data`. Its layout is a
contract (README, Contracts):

    data/
      snapshots/snapshot_date=YYYY-MM-DD/run_id=<id>/part-*.parquet + _manifest.json
      statements/source=<format>/...parquet
      runs/<run_id>/{matches,exceptions}.parquet + summary.json
      inbox/
"""

from __future__ import annotations

import os
import secrets
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from recon.errors import ConfigError

DEFAULT_BUSINESS_TZ = "America/Sao_Paulo"


@dataclass(frozen=True)
class DataDir:
    """The data directory and its well-known sub-folders."""

    root: Path

    @classmethod
    def resolve(cls, path: str | os.PathLike[str] | None = None) -> DataDir:
        """`path`, else `$RECON_DATA`, else `./data` (made absolute)."""
        chosen = path or os.environ.get("RECON_DATA") or "data"
        return cls(Path(chosen).expanduser().resolve())

    @property
    def snapshots(self) -> Path:
        return self.root / "snapshots"

    @property
    def statements(self) -> Path:
        return self.root / "statements"

    @property
    def runs(self) -> Path:
        return self.root / "runs"

    @property
    def inbox(self) -> Path:
        return self.root / "inbox"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def duckdb_path(self) -> Path:
        return self.root / "recon.duckdb"

    @property
    def config_path(self) -> Path:
        return self.root / "recon.toml"

    def ensure(self) -> DataDir:
        for p in (self.snapshots, self.statements, self.runs, self.inbox):
            p.mkdir(parents=True, exist_ok=True)
        return self


def new_run_id(now: datetime | None = None) -> str:
    """A run id that sorts by time: ``20261122T073500123456Z-1a2b``."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    return now.strftime("%Y%m%dT%H%M%S%fZ") + "-" + secrets.token_hex(2)


def load_config(
    path: str | os.PathLike[str] | None = None, data: DataDir | None = None
) -> dict[str, Any]:
    """Read recon.toml: the explicit path, else `./recon.toml`, else `<data>/recon.toml`.

    Returns {} when there is none. Sections are read by the modules that own them
    (e.g. `[reconcile]` by recon.reconcile.settings).
    """
    candidates: list[Path] = []
    if path is not None:
        candidates.append(Path(path))
    else:
        env = os.environ.get("RECON_CONFIG")
        if env:
            candidates.append(Path(env))
        candidates.append(Path("recon.toml"))
        if data is not None:
            candidates.append(data.config_path)
    for candidate in candidates:
        if candidate.is_file():
            try:
                with candidate.open("rb") as fh:
                    return tomllib.load(fh)
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{candidate}: not valid TOML: {exc}") from exc
        if path is not None:
            raise ConfigError(f"config file not found: {candidate}")
    return {}
