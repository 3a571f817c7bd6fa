"""Hand-built worlds for the engine's tests, with known answers: short names for
recon.testing's rows and writers, and a `World` (a data directory) that publishes them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from recon import testing
from recon.config import DataDir
from recon.testing import T0, e2e, uid

__all__ = ["T0", "World", "e2e", "intent", "line", "uid"]

_seq = itertools.count(1)


def intent(
    n: int,
    *,
    type: str = "onramp",
    status: str = "completed",
    amount: int = 10_000,
    created: datetime = T0,
    updated: datetime | None = None,
    expires: datetime | None = None,
    name: str = "MARIA SILVA",
    doc: str = "***.456.789-**",
    client_reference: str | None = None,
    pix_description: str | None = None,
    destination: str | None = None,
) -> dict[str, Any]:
    """An intents row (recon.testing.intent), onramp by default, completed, R$ 100,00."""
    fields: dict[str, Any] = {
        "intent_type": type,
        "status": status,
        "amount_cents": amount,
        "created_at": created,
        "updated_at": updated or created + timedelta(minutes=5),
        "party_display_name": name,
        "party_document_masked": doc,
        "client_reference": client_reference,
        "pix_description": pix_description,
        "destination_address": destination if type == "offramp" else None,
    }
    if expires is not None:
        fields["expires_at"] = expires
    return testing.intent(n, **fields)


def line(
    n: int,
    *,
    kind: str = "pix_in",
    amount: int = 10_000,
    at: datetime = T0 + timedelta(minutes=10),
    txid: str | None = None,
    refund_of: str | None = None,
    name: str | None = "MARIA SILVA",
    doc: str | None = "***.456.789-**",
    key: str | None = None,
    description: str | None = None,
    e2e_id: str | None = None,
    fee: int | None = None,
    account: str | None = None,
) -> dict[str, Any]:
    """A statement line (recon.testing.statement_line); `amount` is a positive magnitude
    (what moved), `fee` the PSP's fee the statement states."""
    credit = kind in ("pix_in", "pix_refund_in", "yield")
    fields: dict[str, Any] = {
        "kind": kind,
        "amount_cents": amount if credit else -amount,
        "booked_at": at,
        "txid": txid,
        "refund_of": refund_of,
        "counterparty_name": name,
        "counterparty_document": doc,
        "counterparty_key": key,
        "description": description,
    }
    if e2e_id is not None:
        fields["end_to_end_id"] = e2e_id
    if fee is not None:
        fields["fee_cents"] = fee
    if account is not None:
        fields["account"] = account
    return testing.statement_line(n, **fields)


@dataclass
class World:
    """A data dir plus what was written; `snapshot()` and `statement()` publish through
    recon.testing (the real storage code)."""

    data: DataDir
    snapshots: list[datetime] = field(default_factory=list)

    def snapshot(
        self, intents: list[dict[str, Any]], at: datetime, manifest: dict[str, Any] | None = None
    ) -> str:
        run_id = at.strftime("%Y%m%dT%H%M%S%fZ") + "-0000"
        testing.snapshot(self.data, intents, at=at, run_id=run_id, manifest=manifest)
        self.snapshots.append(at)
        return run_id

    def statement(
        self,
        lines: list[dict[str, Any]],
        batch: str = "batch",
        covers: tuple[datetime, datetime] | None = (
            T0 - timedelta(days=30),
            T0 + timedelta(days=30),
        ),
        scope: str = "all",
    ) -> None:
        """Write statement lines and (unless `covers` is None) the period they cover."""
        testing.statement_lines(
            self.data, lines, batch=f"{batch}-{next(_seq)}", covers=covers, scope=scope
        )

    def balances(self, balances: list[tuple[str, date, str, int]]) -> None:
        """Record balances the statement files state: (account, day, side, cents)."""
        testing.stated_balances(self.data, balances, batch=f"bal-{next(_seq)}")

    def coverage(
        self,
        start: datetime,
        end: datetime,
        *,
        scope: str = "all",
        batch: str = "cov",
        account: str = "0001/1234567-8",
        lines: int = 0,
    ) -> None:
        """Record that the account's statements cover [start, end)."""
        testing.coverage(
            self.data,
            start,
            end,
            scope=scope,
            batch=f"{batch}-{next(_seq)}",
            account=account,
            lines=lines,
        )
