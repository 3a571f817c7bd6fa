"""Planted faults: which exist, how often, and the break category each must produce."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


@dataclass(frozen=True)
class FaultRates:
    """Share of eligible intents (or lines per day) that get each planted fault.

    Onramp faults are shares of onramps, offramp faults shares of offramps, created inside
    the planting window; `credits_without_intent` is a count per day. With `min_each` every
    fault is planted at least that many times (small worlds still show every kind).
    """

    underpaid: float = 0.004
    overpaid: float = 0.003
    duplicate_credit: float = 0.003
    paid_after_expiry: float = 0.003
    missing_credit: float = 0.003
    omit_reference: float = 0.01
    ambiguous_twins: float = 0.002
    missing_refund: float = 0.002
    refund_amount_mismatch: float = 0.002
    status_regression: float = 0.003
    missing_payout: float = 0.005
    duplicate_payout: float = 0.004
    wrong_amount_payout: float = 0.004
    payout_for_failed: float = 0.003
    stuck_payout: float = 0.004
    credits_without_intent: float = 0.5
    min_each: int = 1


#: fault -> (intent type it is planted on, break category it must produce, or None)
FAULTS: dict[str, tuple[str, str | None]] = {
    "underpaid": ("onramp", "onramp_underpaid"),
    "overpaid": ("onramp", "onramp_overpaid"),
    "duplicate_credit": ("onramp", "onramp_duplicate_credit"),
    "paid_after_expiry": ("onramp", "onramp_credit_after_expiry"),
    "missing_credit": ("onramp", "onramp_missing_credit"),
    "omit_reference": ("onramp", None),
    "ambiguous_twins": ("onramp", "ambiguous_match"),
    "missing_refund": ("onramp", "refund_missing"),
    "refund_amount_mismatch": ("onramp", "refund_amount_mismatch"),
    "status_regression": ("onramp", "status_regression"),
    "missing_payout": ("offramp", "offramp_missing_payout"),
    "duplicate_payout": ("offramp", "offramp_duplicate_payout"),
    "wrong_amount_payout": ("offramp", "offramp_payout_amount_mismatch"),
    "payout_for_failed": ("offramp", "offramp_payout_for_failed_intent"),
    "stuck_payout": ("offramp", "offramp_stuck_paying_out"),
    "credits_without_intent": ("none", "unmatched_credit"),
}
