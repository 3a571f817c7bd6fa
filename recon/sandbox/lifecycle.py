"""Intent lifecycles (docs/emulator.md, lifecycles): the status graph per intent type.

onramp:  created → [requires_compliance] → awaiting_fiat_payment → fiat_received → minting
         → awaiting_onchain_transfer → completed
offramp: created → [requires_compliance] → awaiting_burn_approval → burn_approved
         → onchain_received → burning → paying_out → completed
exits:   expired (from the waiting status, at expiresAt), canceled (before money moved),
         failed (from any non-terminal status), refunded (after money moved, or from
         failed/expired/canceled when money arrived anyway).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from recon.schemas import INTENT_STATUSES, OFFRAMP_LIFECYCLE, ONRAMP_LIFECYCLE

__all__ = [
    "EXIT_STATUSES",
    "OFFRAMP",
    "ONRAMP",
    "STATUSES",
    "TERMINAL",
    "WAITING",
    "Lifecycle",
]

#: Every intent status of spec 3.1, in spec order. Index = the compact code the store keeps.
STATUSES: tuple[str, ...] = INTENT_STATUSES
STATUS_CODE: dict[str, int] = {s: i for i, s in enumerate(STATUSES)}
EXIT_STATUSES = frozenset({"expired", "canceled", "failed", "refunded"})
TERMINAL = frozenset({"completed", "expired", "canceled", "refunded"})
#: Statuses that wait for an outside event (payment / approve-burn) and expire at expiresAt.
WAITING = frozenset({"awaiting_fiat_payment", "awaiting_burn_approval"})

DEFAULT_REASONS: dict[str, str] = {
    "expired": "not completed before expiresAt",
    "canceled": "canceled",
    "failed": "processing failed",
    "refunded": "funds returned to the payer",
}


@dataclass(frozen=True)
class Lifecycle:
    """One intent type's graph: the happy path plus exit edges."""

    path: tuple[str, ...]
    #: status -> exits allowed from it (on top of the next step of the path)
    exits: Mapping[str, frozenset[str]]
    #: optional steps that may be skipped (e.g. requires_compliance)
    optional: frozenset[str] = field(default_factory=lambda: frozenset({"requires_compliance"}))

    def next_step(self, status: str) -> str | None:
        """The happy-path successor (skipping optional steps), or None at the end."""
        if status not in self.path:
            return None
        i = self.path.index(status) + 1
        while i < len(self.path) and self.path[i] in self.optional:
            i += 1
        return self.path[i] if i < len(self.path) else None

    def allowed(self, status: str) -> frozenset[str]:
        """Every status reachable in one transition from `status`."""
        out: set[str] = set(self.exits.get(status, frozenset()))
        if status in self.path:
            i = self.path.index(status) + 1
            # the next step, and any optional step may be entered or skipped
            while i < len(self.path):
                out.add(self.path[i])
                if self.path[i] not in self.optional:
                    break
                i += 1
        return frozenset(out)

    def can(self, src: str, dst: str) -> bool:
        """True if src → dst is an edge of the graph."""
        return dst in self.allowed(src)

    @property
    def waiting(self) -> str:
        """This type's waiting status (the one that expires)."""
        return next(s for s in self.path if s in WAITING)

    @property
    def statuses(self) -> frozenset[str]:
        """Every status an intent of this type can be in."""
        out = set(self.path)
        for exits in self.exits.values():
            out |= exits
        return frozenset(out)


def _exits(pre: tuple[str, ...], moved: tuple[str, ...], waiting: str) -> dict[str, frozenset[str]]:
    """Exit edges: before money moved → canceled/failed; after → failed/refunded."""
    out: dict[str, frozenset[str]] = {}
    for s in pre:
        out[s] = frozenset({"canceled", "failed"} | ({"expired"} if s == waiting else set()))
    for s in moved:
        out[s] = frozenset({"failed", "refunded"})
    # money can arrive after an intent was given up; it is then returned
    for s in ("failed", "expired", "canceled"):
        out[s] = frozenset({"refunded"})
    return out


ONRAMP = Lifecycle(
    path=ONRAMP_LIFECYCLE,
    exits=_exits(
        ("created", "requires_compliance", "awaiting_fiat_payment"),
        ("fiat_received", "minting", "awaiting_onchain_transfer"),
        "awaiting_fiat_payment",
    ),
)

OFFRAMP = Lifecycle(
    path=OFFRAMP_LIFECYCLE,
    exits=_exits(
        ("created", "requires_compliance", "awaiting_burn_approval", "burn_approved"),
        ("onchain_received", "burning", "paying_out"),
        "awaiting_burn_approval",
    ),
)
