"""Hand-built snapshot histories.

A `History` collects intents and the status each snapshot saw, then publishes one committed
snapshot per snapshot time through recon.testing (the extractor's own storage code).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from recon import testing
from recon.config import DataDir, new_run_id
from recon.schemas import EXCEPTIONS_SCHEMA


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


@dataclass
class Obs:
    status: str
    updated_at: datetime | None
    status_reason: str | None = None


@dataclass
class Intent:
    id: str
    intent_type: str
    created_at: datetime
    amount_cents: int
    expires_at: datetime | None = None
    seen: dict[datetime, Obs] = field(default_factory=dict)


class History:
    """Intents and what each snapshot saw of them."""

    def __init__(self) -> None:
        self.intents: dict[str, Intent] = {}
        self.snapshot_times: set[datetime] = set()

    def intent(
        self,
        id: str,
        *,
        created_at: datetime,
        amount_cents: int = 10_000,
        intent_type: str = "onramp",
        expires_at: datetime | None = None,
    ) -> Intent:
        it = Intent(id, intent_type, created_at, amount_cents, expires_at)
        self.intents[id] = it
        return it

    def see(
        self,
        id: str,
        at: datetime,
        status: str,
        *,
        updated_at: datetime | None = None,
        reason: str | None = None,
    ) -> None:
        """Snapshot at `at` saw intent `id` in `status` (updated_at defaults to `at`)."""
        self.intents[id].seen[at] = Obs(status, updated_at or at, reason)
        self.snapshot_times.add(at)

    def rows(self, at: datetime) -> list[dict[str, Any]]:
        """What the snapshot at `at` saw, as intents rows (recon.testing.intent)."""
        out = []
        for it in self.intents.values():
            obs = it.seen.get(at)
            if obs is None:
                continue
            out.append(
                testing.intent(
                    0,
                    id=it.id,
                    instance_id="inst-1",
                    party_id="party-" + it.id,
                    intent_type=it.intent_type,
                    adapter="pix",
                    status=obs.status,
                    status_reason=obs.status_reason,
                    metadata="{}",
                    expires_at=it.expires_at,
                    created_at=it.created_at,
                    updated_at=obs.updated_at,
                    amount_cents=it.amount_cents,
                    amount_source="pixInfo.amountCents",
                    pix_key_type=None,
                    pix_key_value=None,
                    pix_amount_cents=it.amount_cents,
                    party_display_name=None,
                    party_document_masked=None,
                    raw=json.dumps({"id": it.id, "status": obs.status}),
                )
            )
        return out

    def write(self, data: DataDir) -> list[str]:
        """Publish one committed snapshot per snapshot time; return the run ids."""
        run_ids = []
        for at in sorted(self.snapshot_times):
            run_id = new_run_id(at)
            testing.snapshot(data, self.rows(at), at=at, run_id=run_id)
            run_ids.append(run_id)
        return run_ids


def write_exceptions(
    data: DataDir,
    rows: list[dict[str, Any]],
    run_id: str | None = None,
    *,
    summary: dict[str, Any] | None = None,
    matches: list[dict[str, Any]] | None = None,
) -> str:
    """A committed run (recon.testing.run) whose open breaks are `rows` (missing columns
    null), with `summary` over its summary.json and, if given, `matches`."""
    run_id = run_id or new_run_id(utc(2026, 11, 20, 12))
    full = [{name: r.get(name) for name in EXCEPTIONS_SCHEMA.names} for r in rows]
    testing.run(data, full, matches=matches or 0, summary=summary, run_id=run_id)
    return run_id


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)
