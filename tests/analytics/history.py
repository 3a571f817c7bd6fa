"""Hand-built snapshot histories: snapshots written straight to Parquet (INTENTS_SCHEMA).

A `History` collects intents and the status each snapshot saw, then writes one committed
snapshot folder per snapshot time, exactly as the extractor lays them out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from recon.config import DataDir, new_run_id
from recon.schemas import EXCEPTIONS_SCHEMA, INTENTS_SCHEMA, MATCHES_SCHEMA


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

    def rows(self, at: datetime, run_id: str) -> list[dict[str, Any]]:
        out = []
        for it in self.intents.values():
            obs = it.seen.get(at)
            if obs is None:
                continue
            out.append(
                {
                    "id": it.id,
                    "instance_id": "inst-1",
                    "party_id": "party-" + it.id,
                    "intent_type": it.intent_type,
                    "flow_version": 2,
                    "adapter": "pix",
                    "status": obs.status,
                    "status_reason": obs.status_reason,
                    "client_reference": None,
                    "metadata": "{}",
                    "expires_at": it.expires_at,
                    "created_at": it.created_at,
                    "updated_at": obs.updated_at,
                    "chain_id": "solana",
                    "amount_cents": it.amount_cents,
                    "amount_source": "pixInfo.amountCents",
                    "pix_key_type": None,
                    "pix_key_value": None,
                    "pix_recipient_name": None,
                    "pix_bank": None,
                    "pix_description": None,
                    "pix_amount_cents": it.amount_cents,
                    "party_display_name": None,
                    "party_document_masked": None,
                    "party_solana_wallet": None,
                    "destination_address": None,
                    "snapshot_at": at,
                    "run_id": run_id,
                    "raw": json.dumps({"id": it.id, "status": obs.status}),
                }
            )
        return out

    def write(self, data: DataDir) -> list[str]:
        """Write one committed snapshot per snapshot time; return the run ids."""
        run_ids = []
        for at in sorted(self.snapshot_times):
            run_id = new_run_id(at)
            folder = data.snapshots / f"snapshot_date={at:%Y-%m-%d}" / f"run_id={run_id}"
            folder.mkdir(parents=True)
            table = pa.Table.from_pylist(self.rows(at, run_id), schema=INTENTS_SCHEMA)
            pq.write_table(table, folder / "part-00000.parquet")
            (folder / "_manifest.json").write_text(
                json.dumps({"run_id": run_id, "snapshot_at": at.isoformat(), "rows": len(table)})
            )
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
    """A committed run holding `exceptions.parquet` with `rows`, summary.json (`summary`)
    and, if given, `matches.parquet`."""
    run_id = run_id or new_run_id(utc(2026, 11, 20, 12))
    folder = data.runs / run_id
    folder.mkdir(parents=True)
    full = [
        {name: r.get(name) for name in EXCEPTIONS_SCHEMA.names} | {"run_id": run_id} for r in rows
    ]
    pq.write_table(
        pa.Table.from_pylist(full, schema=EXCEPTIONS_SCHEMA), folder / "exceptions.parquet"
    )
    if matches is not None:
        full_matches = [
            {name: m.get(name) for name in MATCHES_SCHEMA.names} | {"run_id": run_id}
            for m in matches
        ]
        pq.write_table(
            pa.Table.from_pylist(full_matches, schema=MATCHES_SCHEMA), folder / "matches.parquet"
        )
    (folder / "summary.json").write_text(json.dumps({"run_id": run_id} | (summary or {})))
    return run_id


def minutes(n: float) -> timedelta:
    return timedelta(minutes=n)
