"""Ground truth of a sandbox world: the breaks reconciliation must find, and nothing else.

The world plants each fault on its own intent and records here, once, the break row(s) the
fault must produce at the reconciliation grain of the team contract:

- per intent (``end_to_end_id`` empty): onramp_missing_credit, offramp_missing_payout,
  offramp_stuck_paying_out, refund_missing, status_regression;
- per (intent, matched line): onramp_underpaid/overpaid, onramp_credit_after_expiry,
  offramp_payout_amount_mismatch, offramp_payout_for_failed_intent, refund_amount_mismatch
  (the line is the devolução's rtrId);
- per extra line: onramp_duplicate_credit, offramp_duplicate_payout;
- per line, no intent: unmatched_credit, unmatched_debit, ambiguous_match.

Amounts are positive magnitudes in cents: ``expected_cents`` what the intent (or the
received credit, for refunds) says, ``actual_cents`` what the line moved (0 when the line is
missing); both empty where the contract has no expectation (a line with no intent has only
``actual_cents``). Heuristic matches the world intends (payers who left out the reference)
go to ``expected_matches.csv`` with their rule.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from dataclasses import dataclass, field

from recon.schemas import CATEGORIES

__all__ = ["BREAK_COLUMNS", "ExpectedBreak", "ExpectedMatch", "GroundTruth", "PlantedFault"]

BREAK_COLUMNS = ("category", "intent_id", "end_to_end_id", "expected_cents", "actual_cents")
MATCH_COLUMNS = ("intent_id", "end_to_end_id", "rule")
FAULT_COLUMNS = ("fault", "category", "intent_id", "end_to_end_id", "note")


@dataclass(frozen=True, order=True)
class ExpectedBreak:
    """One row of ``expected_breaks.csv``."""

    category: str
    intent_id: str | None
    end_to_end_id: str | None
    expected_cents: int | None
    actual_cents: int | None

    def row(self) -> list[str]:
        """The CSV cells (empty text for None)."""
        return [
            "" if v is None else str(v)
            for v in (
                self.category,
                self.intent_id,
                self.end_to_end_id,
                self.expected_cents,
                self.actual_cents,
            )
        ]


@dataclass(frozen=True, order=True)
class ExpectedMatch:
    """One row of ``expected_matches.csv``: a match only a heuristic pass can make."""

    intent_id: str
    end_to_end_id: str
    rule: str


@dataclass(frozen=True, order=True)
class PlantedFault:
    """A fault the world planted, and the break it must produce (``planted_faults.csv``)."""

    fault: str
    category: str
    intent_id: str | None
    end_to_end_id: str | None
    note: str = ""


def _key(value: object) -> tuple[int, str]:
    return (0, "") if value is None else (1, str(value))


@dataclass
class GroundTruth:
    """What reconciling the world's statements against its API must report."""

    breaks: list[ExpectedBreak] = field(default_factory=list)
    matches: list[ExpectedMatch] = field(default_factory=list)
    faults: list[PlantedFault] = field(default_factory=list)

    def plant(
        self,
        fault: str,
        category: str,
        *,
        intent_id: str | None,
        end_to_end_id: str | None = None,
        expected_cents: int | None = None,
        actual_cents: int | None = None,
        note: str = "",
    ) -> ExpectedBreak:
        """Record a planted fault and the break row it must produce."""
        if category not in CATEGORIES:
            raise ValueError(f"unknown break category {category!r}")
        brk = ExpectedBreak(category, intent_id, end_to_end_id, expected_cents, actual_cents)
        if brk in self.breaks:
            raise ValueError(f"break recorded twice: {brk}")
        self.breaks.append(brk)
        self.faults.append(PlantedFault(fault, category, intent_id, end_to_end_id, note))
        return brk

    def expect_match(
        self, intent_id: str, end_to_end_id: str, rule: str, *, fault: str | None = None
    ) -> None:
        """Record a match only a heuristic pass can make (and the planted fault behind it)."""
        self.matches.append(ExpectedMatch(intent_id, end_to_end_id, rule))
        if fault is not None:
            self.faults.append(
                PlantedFault(fault, "", intent_id, end_to_end_id, f"no break; matched by {rule}")
            )

    def counts(self) -> dict[str, int]:
        """Expected breaks per category."""
        return dict(sorted(Counter(b.category for b in self.breaks).items()))

    def fault_counts(self) -> dict[str, int]:
        """Planted faults per kind (one per intent, or per line for line-only faults)."""
        return dict(sorted(Counter(f.fault for f in self.faults).items()))

    def _sorted_breaks(self) -> list[ExpectedBreak]:
        return sorted(
            self.breaks,
            key=lambda b: (b.category, _key(b.intent_id), _key(b.end_to_end_id)),
        )

    def breaks_csv(self) -> bytes:
        """``expected_breaks.csv`` bytes (UTF-8, comma, sorted)."""
        return _csv(BREAK_COLUMNS, [b.row() for b in self._sorted_breaks()])

    def matches_csv(self) -> bytes:
        """``expected_matches.csv`` bytes."""
        return _csv(
            MATCH_COLUMNS, [[m.intent_id, m.end_to_end_id, m.rule] for m in sorted(self.matches)]
        )

    def faults_csv(self) -> bytes:
        """``planted_faults.csv`` bytes: which fault stands behind each expected break."""
        rows = sorted(
            self.faults,
            key=lambda f: (f.fault, f.category, _key(f.intent_id), _key(f.end_to_end_id)),
        )
        return _csv(
            FAULT_COLUMNS,
            [[f.fault, f.category, f.intent_id or "", f.end_to_end_id or "", f.note] for f in rows],
        )


def _csv(header: tuple[str, ...], rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode("utf-8")
