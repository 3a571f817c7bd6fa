"""A PSP's fee schedule, declared per account in recon.toml, and the fee it takes.

    [accounts.efi]
    fee = { percent = "0.99", fixed_cents = 0, min_cents = 1, max_cents = 1000 }

`percent` is a number as written in the file (`0.99` or "0.99" is 0.99 %; at most 4 decimal
places, 0 to 100); `basis_points` (an integer, 1 = 0.01 %) may be given instead. A TOML float is
read back through its shortest decimal text (Python's repr, which round-trips the digits the
file wrote), so `0.99` is exactly 0.99 and never 0.98999999999999999112. `fixed_cents`,
`min_cents` and `max_cents` are integers >= 0 (all optional; min <= max).

The fee on a payment of A cents is, in integer cents,

    clamp(fixed_cents + round_half_up(A * percent / 100), min_cents, max_cents)

PSPs round the percent part half up, half even or down; each differs from half up by at most
one cent, so a fee within FEE_TOLERANCE_CENTS of the schedule's (plus the run's
amount_tolerance_cents) is the schedule's. The models compute the same fee in SQL
(recon/models/staging/_macros.sql, schedule_fee) from the `fee_schedules` table that
set_params registers (fee_schedule_rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa

from recon.errors import ConfigError
from recon.money import format_brl

__all__ = ["FEE_TOLERANCE_CENTS", "FeeSchedule", "fee_schedule_rows", "schedules_from_config"]

PPM = 1_000_000  # the rate is held in millionths of the amount (percent × 10^4)
FEE_TOLERANCE_CENTS = 1
_KEYS = ("percent", "basis_points", "fixed_cents", "min_cents", "max_cents")

FEE_SCHEDULES_SCHEMA = pa.schema(
    [
        ("account", pa.string()),
        ("rate_ppm", pa.int64()),
        ("fixed_cents", pa.int64()),
        ("min_cents", pa.int64()),
        ("max_cents", pa.int64()),  # NULL: no ceiling
        ("tolerance_cents", pa.int64()),  # FEE_TOLERANCE_CENTS
        ("label", pa.string()),  # the schedule as a reason names it
    ]
)


@dataclass(frozen=True)
class FeeSchedule:
    """One account's fee schedule (module doc); rate_ppm is the percent in millionths."""

    account: str
    rate_ppm: int = 0
    fixed_cents: int = 0
    min_cents: int = 0
    max_cents: int | None = None

    def fee(self, amount_cents: int) -> int:
        """The fee on a payment of `amount_cents` (>= 0), in cents."""
        fee = self.fixed_cents + (amount_cents * self.rate_ppm + PPM // 2) // PPM
        fee = max(fee, self.min_cents)
        return fee if self.max_cents is None else min(fee, self.max_cents)

    def label(self) -> str:
        """The schedule as a person reads it: "0.99% + R$ 0,50 (min R$ 0,10, max R$ 10,00)"."""
        parts = []
        if self.rate_ppm:
            percent = (Decimal(self.rate_ppm) / 10_000).normalize()
            parts.append(f"{percent:f}%")
        if self.fixed_cents or not parts:
            parts.append(format_brl(self.fixed_cents))
        bounds = []
        if self.min_cents:
            bounds.append(f"min {format_brl(self.min_cents)}")
        if self.max_cents is not None:
            bounds.append(f"max {format_brl(self.max_cents)}")
        return " + ".join(parts) + (f" ({', '.join(bounds)})" if bounds else "")


def _cents(where: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"{where}: {key} must be an integer >= 0 (cents), got {value!r}")
    return value


def _rate_ppm(where: str, fee: Mapping[str, Any]) -> int:
    """The rate from `percent` (a number or decimal text) or `basis_points` (integer)."""
    if "percent" in fee and "basis_points" in fee:
        raise ConfigError(f"{where}: give percent or basis_points, not both")
    if "basis_points" in fee:
        points = _cents(where, "basis_points", fee["basis_points"])
        if points > 10_000:
            raise ConfigError(f"{where}: basis_points must be at most 10000, got {points}")
        return points * 100
    value = fee.get("percent", 0)
    if isinstance(value, float):  # the digits the file wrote (repr is the shortest round trip)
        value = repr(value)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ConfigError(f'{where}: percent must be decimal text like "0.99", got {value!r}')
    try:
        percent = Decimal(str(value).strip())
    except InvalidOperation:
        raise ConfigError(f'{where}: percent {value!r} is not a number like "0.99"') from None
    if not percent.is_finite() or not 0 <= percent <= 100:
        raise ConfigError(f"{where}: percent must be between 0 and 100, got {value!r}")
    ppm = percent * 10_000
    if ppm != ppm.to_integral_value():
        raise ConfigError(f"{where}: percent {value!r} has more than 4 decimal places")
    return int(ppm)


def schedule_from_mapping(account: str, fee: Any) -> FeeSchedule:
    """One `[accounts.<name>] fee = {...}` table as a FeeSchedule; ConfigError when bad."""
    where = f"[accounts.{account}] fee"
    if not isinstance(fee, Mapping):
        raise ConfigError(f"{where}: expected a table {{ percent = ..., fixed_cents = ... }}")
    unknown = sorted(set(fee) - set(_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_KEYS)})"
        )
    rate = _rate_ppm(where, fee)
    fixed = _cents(where, "fixed_cents", fee.get("fixed_cents", 0))
    low = _cents(where, "min_cents", fee.get("min_cents", 0))
    high = fee.get("max_cents")
    if high is not None:
        high = _cents(where, "max_cents", high)
        if high < low:
            raise ConfigError(f"{where}: max_cents {high} is below min_cents {low}")
    if not (rate or fixed or low):
        raise ConfigError(
            f"{where}: states no fee (give percent, basis_points, fixed_cents or min_cents)"
        )
    return FeeSchedule(account, rate, fixed, low, high)


def schedules_from_config(config: Mapping[str, Any]) -> tuple[FeeSchedule, ...]:
    """The fee schedules of recon.toml's `[accounts.<name>]` tables (by account name)."""
    accounts = config.get("accounts", {})
    if not isinstance(accounts, Mapping):
        raise ConfigError("[accounts] must be a table of [accounts.<name>] tables")
    out = []
    for name, section in sorted(accounts.items()):
        if not isinstance(section, Mapping):
            raise ConfigError(f"[accounts.{name}] must be a table")
        unknown = sorted(set(section) - {"fee"})
        if unknown:
            raise ConfigError(
                f"[accounts.{name}] unknown setting(s): {', '.join(unknown)} (known: fee)"
            )
        if "fee" in section:
            out.append(schedule_from_mapping(name, section["fee"]))
    return tuple(out)


def fee_schedule_rows(schedules: tuple[FeeSchedule, ...]) -> pa.Table:
    """The schedules as the `fee_schedules` table the models read."""
    return pa.Table.from_pylist(
        [
            {
                "account": s.account,
                "rate_ppm": s.rate_ppm,
                "fixed_cents": s.fixed_cents,
                "min_cents": s.min_cents,
                "max_cents": s.max_cents,
                "tolerance_cents": FEE_TOLERANCE_CENTS,
                "label": s.label(),
            }
            for s in schedules
        ],
        schema=FEE_SCHEDULES_SCHEMA,
    )
