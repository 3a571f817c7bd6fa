"""Reconciliation settings: the `[reconcile]` section of recon.toml, with safe defaults.

    [reconcile]
    amount_tolerance_cents = 0          # |actual - expected| allowed before an amount break
    onramp_payment_grace = "30m"        # credit window = created_at .. expires_at + grace;
                                        # status lag when a credit is older than this
    offramp_payout_grace = "2h"         # paying_out older than this with no payout = stuck
    refund_grace = "24h"                # refunded intent with no refund line after this
    business_tz = "America/Sao_Paulo"   # business day of the control totals
    date_from = "2026-11-01"            # optional business-day window (inclusive)
    date_to = "2026-11-14"
    memory_limit = "1GB"                # DuckDB, spilling to temp_directory beyond it
    threads = 2
    temp_directory = ""                 # default: <data>/.tmp-duckdb
    work_storage = "auto"               # the engine's work tables: "memory", "disk" (a
                                        # scratch database in temp_directory) or "auto"
    accounts = []                       # the service's accounts (statement account labels);
                                        # [] = every account imported
    clock_skew = "60s"                  # a line may be booked this long before the intent's
                                        # created_at (bank and API clocks differ)
    priorities = {}                     # a category's priority other than its default,
                                        # e.g. { onramp_third_party_payer = "P1" }

    [alerts]
    statements_overdue = "30h"          # a business day no account statement covers this
                                        # long after it ended (at as_of) -> exit 1

    [accounts.efi]                      # an account's PSP fee schedule (recon.reconciliation.fees):
    fee = { percent = "0.99", min_cents = 1 }  # a credit net of it matches, with its fee

    [engine]
    kind = "duckdb"                     # or "spark" (pip install 'pixrecon[spark]', Java 17+):
                                        # the same models on Spark SQL, local mode

"auto" keeps the work tables in memory while the inputs (Parquet bytes of the latest snapshot
and the statements; staged, about 3x that) fit in memory_limit, and on disk beyond it.

Durations are numbers of seconds or strings like "90s", "30m", "2h", "1d", "1h30m".
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass, fields, replace
from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from recon.config import DEFAULT_BUSINESS_TZ, DataDir, load_config
from recon.errors import ConfigError
from recon.reconciliation.fees import FeeSchedule, schedules_from_config
from recon.schemas import CATEGORIES

__all__ = ["ReconcileSettings", "parse_duration"]

_DURATION_PART = re.compile(r"(\d+)\s*([smhd])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_MEMORY = re.compile(r"^\s*(\d+(\.\d+)?)\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*$", re.IGNORECASE)
_UNIT_BYTES = {"B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
               "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}  # fmt: skip
_STAGED_EXPANSION = 3  # staged tables in memory / their Parquet bytes (measured: 2.8 at 10M)
WORK_STORAGE = ("auto", "memory", "disk")
_DURATIONS = (
    "onramp_payment_grace",
    "offramp_payout_grace",
    "refund_grace",
    "clock_skew",
    "statements_overdue",
)


def parse_duration(value: Any, *, name: str) -> timedelta:
    """A timedelta from seconds (int) or a string like "30m", "2h", "1h30m"; ConfigError if bad."""
    if isinstance(value, timedelta):
        seconds = value.total_seconds()
    elif isinstance(value, bool):
        raise ConfigError(f"[reconcile] {name}: expected a duration, got {value!r}")
    elif isinstance(value, int):
        seconds = value
    elif isinstance(value, str):
        text = value.strip().lower()
        if text.isdigit():
            seconds = int(text)
        else:
            parts = _DURATION_PART.findall(text)
            if not parts or _DURATION_PART.sub("", text).strip():
                raise ConfigError(
                    f"[reconcile] {name}: {value!r} is not a duration (use e.g. 90s, 30m, 2h, 1d)"
                )
            seconds = sum(int(n) * _UNIT_SECONDS[u] for n, u in parts)
    else:
        raise ConfigError(f"[reconcile] {name}: expected a duration, got {value!r}")
    if seconds < 0:
        raise ConfigError(f"[reconcile] {name}: must not be negative, got {value!r}")
    return timedelta(seconds=seconds)


@dataclass(frozen=True)
class ReconcileSettings:
    """How the engine matches and when a difference becomes a break (see module docstring)."""

    amount_tolerance_cents: int = 0
    onramp_payment_grace: timedelta = timedelta(minutes=30)
    offramp_payout_grace: timedelta = timedelta(hours=2)
    refund_grace: timedelta = timedelta(hours=24)
    business_tz: str = DEFAULT_BUSINESS_TZ
    date_from: date | None = None
    date_to: date | None = None
    memory_limit: str = "1GB"
    threads: int = 2
    temp_directory: str | None = None
    work_storage: str = "auto"
    accounts: tuple[str, ...] = ()
    clock_skew: timedelta = timedelta(seconds=60)
    statements_overdue: timedelta = timedelta(hours=30)  # from [alerts]
    engine: str = "duckdb"  # from [engine] kind
    fee_schedules: tuple[FeeSchedule, ...] = ()  # from [accounts.<name>] fee
    priorities: tuple[tuple[str, str], ...] = ()  # (category, priority) overriding its default

    def __post_init__(self) -> None:
        tol = self.amount_tolerance_cents
        if isinstance(tol, bool) or not isinstance(tol, int) or tol < 0:
            raise ConfigError(
                f"[reconcile] amount_tolerance_cents: expected an integer >= 0, got {tol!r}"
            )
        for name in _DURATIONS:
            value = getattr(self, name)
            if not isinstance(value, timedelta) or value < timedelta(0):
                raise ConfigError(f"[reconcile] {name}: expected a duration >= 0, got {value!r}")
        try:
            ZoneInfo(self.business_tz)
        except (ZoneInfoNotFoundError, ValueError, TypeError) as exc:
            raise ConfigError(
                f"[reconcile] business_tz: unknown time zone {self.business_tz!r}"
            ) from exc
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ConfigError(
                f"[reconcile] date_from {self.date_from} is after date_to {self.date_to}"
            )
        if not isinstance(self.memory_limit, str) or not _MEMORY.match(self.memory_limit):
            raise ConfigError(
                f"[reconcile] memory_limit: expected a size like '1GB', got {self.memory_limit!r}"
            )
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 1:
            raise ConfigError(
                f"[reconcile] threads: expected an integer >= 1, got {self.threads!r}"
            )
        if not isinstance(self.accounts, tuple) or not all(
            isinstance(a, str) and a for a in self.accounts
        ):
            raise ConfigError(
                f"[reconcile] accounts: expected a list of account labels, got {self.accounts!r}"
            )
        if self.work_storage not in WORK_STORAGE:
            raise ConfigError(
                f"[reconcile] work_storage: expected one of {', '.join(WORK_STORAGE)}, "
                f"got {self.work_storage!r}"
            )

    def priority(self, category: str) -> str:
        """The category's priority: `priorities` when it names the category, else its default."""
        return dict(self.priorities).get(category) or CATEGORIES[category].priority

    @property
    def memory_limit_bytes(self) -> int:
        """memory_limit in bytes, as DuckDB reads it (GB = 10^9 bytes, GiB = 2^30)."""
        match = _MEMORY.match(self.memory_limit)
        assert match is not None  # validated in __post_init__
        number, unit = float(match.group(1)), match.group(3).upper()
        return int(number * _UNIT_BYTES[unit])

    def work_on_disk(self, input_bytes: int) -> bool:
        """Whether the work tables go to a scratch database on disk, for inputs of this size.

        Staged, the inputs take about 3x their Parquet bytes. While that fits memory_limit,
        memory is faster (nothing to write); beyond it DuckDB would spill the tables to temp
        files and write them again each time it evicts them, where blocks of a database file
        are written once and dropped from memory for free (10M rows: 90 s vs 83 s).
        """
        if self.work_storage == "auto":
            return input_bytes * _STAGED_EXPANSION > self.memory_limit_bytes
        return self.work_storage == "disk"

    @classmethod
    def from_mapping(cls, section: dict[str, Any]) -> ReconcileSettings:
        """Settings from a `[reconcile]` table; unknown keys and bad values raise ConfigError."""
        if not isinstance(section, dict):
            raise ConfigError("[reconcile] must be a table")
        known = {f.name for f in fields(cls)} - {"statements_overdue", "engine", "fee_schedules"}
        unknown = sorted(set(section) - known)
        if unknown:
            raise ConfigError(
                f"[reconcile] unknown setting(s): {', '.join(unknown)} "
                f"(known: {', '.join(sorted(known))})"
            )
        kw: dict[str, Any] = {}
        for key, value in section.items():
            if key in _DURATIONS:
                kw[key] = parse_duration(value, name=key)
            elif key == "accounts":
                if not isinstance(value, (list, tuple)):
                    raise ConfigError(
                        f"[reconcile] accounts: expected a list of account labels, got {value!r}"
                    )
                kw[key] = tuple(value)
            elif key == "priorities":
                kw[key] = _parse_priorities(value)
            elif key in ("date_from", "date_to"):
                kw[key] = _parse_date(value, name=key)
            elif key == "temp_directory":
                kw[key] = str(value) if value else None
            else:
                kw[key] = value
        return cls(**kw)

    @classmethod
    def load(cls, data: DataDir | None = None, path: str | None = None) -> ReconcileSettings:
        """Settings from recon.toml (`load_config` search order), defaults when absent."""
        config = load_config(path, data)
        settings = cls.from_mapping(config.get("reconcile", {}))
        alerts = config.get("alerts", {})
        if isinstance(alerts, dict) and "statements_overdue" in alerts:
            overdue = parse_duration(alerts["statements_overdue"], name="statements_overdue")
            settings = replace(settings, statements_overdue=overdue)
        engine = config.get("engine", {})
        if not isinstance(engine, dict):
            raise ConfigError("[engine] must be a table")
        unknown = sorted(set(engine) - {"kind"})
        if unknown:
            raise ConfigError(f"[engine] unknown setting {unknown[0]!r} (known: kind)")
        kind = engine.get("kind", "duckdb")
        if kind not in ENGINES:
            raise ConfigError(f"[engine] kind: expected one of {', '.join(ENGINES)}, got {kind!r}")
        return replace(settings, engine=kind, fee_schedules=schedules_from_config(config))

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly view (durations in seconds, dates ISO) for the run summary."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if isinstance(value, timedelta):
                out[key] = int(value.total_seconds())
            elif isinstance(value, date):
                out[key] = value.isoformat()
            elif key == "priorities":
                out[key] = dict(value)
            elif isinstance(value, tuple):
                out[key] = list(value)
            else:
                out[key] = value
        return out


ENGINES = ("duckdb", "spark")


def _parse_date(value: Any, *, name: str) -> date | None:
    if value in (None, ""):
        return None
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise ConfigError(f"[reconcile] {name}: expected a date YYYY-MM-DD, got {value!r}")


def _parse_priorities(value: Any) -> tuple[tuple[str, str], ...]:
    """`{ category = "P1" }` as sorted (category, priority) pairs; ConfigError if bad."""
    if not isinstance(value, dict):
        raise ConfigError(
            f"[reconcile] priorities: expected a table of category = priority, got {value!r}"
        )
    for category, priority in value.items():
        if category not in CATEGORIES:
            raise ConfigError(f"[reconcile] priorities: unknown category {category!r}")
        if priority not in ("P1", "P2", "P3"):
            raise ConfigError(
                f"[reconcile] priorities.{category}: expected P1, P2 or P3, got {priority!r}"
            )
    return tuple(sorted(value.items()))


def settings_kw(
    config: str | os.PathLike[str] | None, data: DataDir | None = None
) -> dict[str, Any]:
    """Engine settings from an explicit config file (else the engine finds recon.toml)."""
    if config is None:
        return {}
    return {"settings": ReconcileSettings.load(data, str(config))}
