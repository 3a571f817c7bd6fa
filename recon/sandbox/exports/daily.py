"""A second account of the service, whose bank sends one OFX file per day: what the balance
walk watches (docs/contracts.md, the balance walk).

The account only moves the bank's own money: its fees (maintenance, PIX and TED fees), the
interest on a day it was overdrawn (OFX TRNTYPE INT) and the yield of its automatic
investment (a CREDIT whose memo says so, as Itaú writes it), so none of its lines is a break
of its own: the ground truth expects none. Its files are exported to `conta_tarifas/` (one `extrato-YYYYMMDD.ofx`
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
# the bank's other own lines: (kind, text, sign), booked with their own random stream so that
# the fees and the faults stay where they were
_OWN = (("interest", "JUROS SALDO DEVEDOR", -1), ("yield", "REND PAGO APLIC AUT MAIS", 1))


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
    if len(daily.days) >= 5 and truth is not None:
        _plant_faults(daily, rng, truth)
    _book_interest_and_yield(daily, seed)
    return daily


def _plant_faults(daily: DailyAccount, rng: random.Random, truth: GroundTruth) -> None:
    """The two faulty files, among the fees (recorded in `truth`)."""
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
        return
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


def _book_interest_and_yield(daily: DailyAccount, seed: int) -> None:
    """Interest or a yield on every other day but the one whose file never came (its gap is
    its fees'), at 06:00 local, of up to R$ 9,00."""
    rng = random.Random(f"daily-own|{seed}")
    for k, day in enumerate(daily.days):
        if k % 2 and day != daily.missing_day:
            kind, text, sign = _OWN[rng.randrange(len(_OWN))]
            at = _midnight(day) + timedelta(hours=6)
            cents = sign * rng.randint(1, 900)
            daily.bank.book_own(kind, at=at, signed_cents=cents, description=text)


def _day(bank: Bank, day: date) -> list[Movement]:
    return bank.select(_midnight(day), _midnight(day) + timedelta(days=1))
