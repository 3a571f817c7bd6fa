"""A second account of the service, whose bank sends one OFX file per day: what the balance
walk watches (docs/contracts.md, the balance walk).

The account only pays the bank's fees (maintenance, PIX and TED fees), so none of its lines
is a break of its own. Its files are exported to `conta_tarifas/` (one `extrato-YYYYMMDD.ofx`
per day the world covers whole, each with its LEDGERBAL), to be imported under the account
label `conta-tarifas`, and two of them are faulty, as the ground truth records:

- one day's file leaves out one of its fees, while its LEDGERBAL counts it: a
  `statement_balance_gap` of that fee on that day;
- one day's file never came (fees were charged that day): a `statement_balance_gap` of that
  day's fees, across the day without a file.

Deterministic for the world's seed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

from recon.sandbox.bank import Account, Bank, Movement
from recon.sandbox.exports._common import BRT, local
from recon.sandbox.exports.ofx import render_ofx
from recon.sandbox.truth import GroundTruth

__all__ = ["ACCOUNT_LABEL", "DAILY_FAULTS", "FOLDER", "DailyAccount", "plant"]

FOLDER = "conta_tarifas"
ACCOUNT_LABEL = "conta-tarifas"
#: fault -> (what it is planted on, the break category it must produce), as FAULTS
DAILY_FAULTS: dict[str, tuple[str, str | None]] = {
    "daily_file_lacks_a_line": ("none", "statement_balance_gap"),
    "daily_file_missing": ("none", "statement_balance_gap"),
}
_FEES = (("TARIFA MANUTENCAO CONTA", 2_990), ("TARIFA PIX ENVIADO", 150), ("TARIFA TED", 1_050))


@dataclass
class DailyAccount:
    """The account's ledger, the days a file is due, and the two faulty files."""

    bank: Bank
    days: list[date] = field(default_factory=list)
    missing_day: date | None = None  # the day whose file never came
    lacking_day: date | None = None  # the day whose file leaves out one fee
    lacking_id: str | None = None  # that fee's movement id

    def files(self) -> dict[str, bytes]:
        """The daily OFX files the bank sent, by file name."""
        out = {}
        for day in self.days:
            if day == self.missing_day:
                continue
            start = _midnight(day)
            text = render_ofx(self.bank, start, start + timedelta(days=1))
            if day == self.lacking_day:
                text = _without(text, self.lacking_id or "")
            out[f"extrato-{day:%Y%m%d}.ofx"] = text
        return out


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=BRT).astimezone(UTC)


def _without(ofx: bytes, movement_id: str) -> bytes:
    """The OFX file less the STMTTRN block of one movement (its LEDGERBAL unchanged)."""
    block = re.compile(rb"<STMTTRN>(?:(?!</STMTTRN>).)*?<FITID>" + re.escape(movement_id.encode())
                       + rb"\r\n.*?</STMTTRN>\r\n", re.S)  # fmt: skip
    cut, n = block.subn(b"", ofx, count=1)
    if n != 1:
        raise ValueError(f"movement {movement_id} is not in the file")
    return cut


def plant(seed: int, start: datetime, end: datetime, truth: GroundTruth | None) -> DailyAccount:
    """The account over the days [start, end) covers whole, its fees, and its two faults
    (recorded in `truth`); fewer than five such days plant no fault."""
    rng = random.Random(f"daily-account|{seed}")
    account = Account(number="7654321", number_digit="0", bank_name="Banco Diario S.A.")
    daily = DailyAccount(Bank(account=account, opening_balance_cents=500_000, seed=seed))
    first = local(start).date() + timedelta(days=1)
    last = local(end).date() - timedelta(days=1)
    daily.days = [first + timedelta(days=k) for k in range((last - first).days + 1)]
    for day in daily.days:
        for k in range(rng.randint(1, 3)):
            text, cents = rng.choice(_FEES)
            at = _midnight(day) + timedelta(hours=9 + 3 * k, minutes=rng.randint(0, 59))
            daily.bank.charge_fee(at=at, amount_cents=cents, description=text)
    if len(daily.days) < 5 or truth is None:
        return daily
    # the missing day has a day after it; the lacking file is not the first day's nor the
    # missing day's next (LEDGERBAL only: no opening is known for either), and its fee is not
    # what the missing day's fees add to (two breaks, told apart by their amounts)
    missing = daily.days[rng.randint(1, len(daily.days) - 3)]
    gone = abs(sum(m.amount_cents for m in _day(daily.bank, missing)))
    candidates = [
        m
        for d in daily.days[1:]
        if d not in (missing, missing + timedelta(days=1))
        for m in _day(daily.bank, d)
        if abs(m.amount_cents) != gone
    ]
    if not candidates:
        return daily
    left_out = rng.choice(candidates)
    daily.missing_day, daily.lacking_id = missing, left_out.id
    daily.lacking_day = local(left_out.booked_at).date()
    truth.plant(
        "daily_file_lacks_a_line",
        "statement_balance_gap",
        intent_id=None,
        actual_cents=abs(left_out.amount_cents),
        note=f"{ACCOUNT_LABEL} {daily.lacking_day}: the file leaves out fee {left_out.id}",
    )
    truth.plant(
        "daily_file_missing",
        "statement_balance_gap",
        intent_id=None,
        actual_cents=gone,
        note=f"{ACCOUNT_LABEL} {missing}: no file; its fees moved the balance",
    )
    return daily


def _day(bank: Bank, day: date) -> list[Movement]:
    return bank.select(_midnight(day), _midnight(day) + timedelta(days=1))
