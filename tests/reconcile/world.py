"""Hand-built worlds for the engine tests: intents snapshots and statement lines written
straight to Parquet with the contract schemas, with known answers."""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from recon.config import DataDir
from recon.schemas import INTENTS_SCHEMA, STATEMENT_COVERAGE_SCHEMA, STATEMENT_LINES_SCHEMA

T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in São Paulo, a Monday
_seq = itertools.count(1)


def uid(n: int) -> str:
    """A deterministic uuid-looking id."""
    h = hashlib.sha256(str(n).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def e2e(n: int, prefix: str = "E") -> str:
    return f"{prefix}18236120202611021300{n:011d}"


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
    """An intents row (INTENTS_SCHEMA), onramp by default, completed, R$ 100,00."""
    iid = uid(n)
    return {
        "id": iid,
        "instance_id": "inst",
        "party_id": f"party-{n}",
        "intent_type": type,
        "flow_version": 2,
        "adapter": None,
        "status": status,
        "status_reason": None,
        "client_reference": client_reference,
        "metadata": None,
        "expires_at": expires
        if expires is not None
        else (created + timedelta(hours=1) if type == "onramp" else None),
        "created_at": created,
        "updated_at": updated or created + timedelta(minutes=5),
        "chain_id": "solana",
        "amount_cents": amount,
        "amount_source": "pixInfo.amountCents" if type == "onramp" else "metadata.amountCents",
        "pix_key_type": "cnpj" if type == "onramp" else None,
        "pix_key_value": "12345678000195" if type == "onramp" else None,
        "pix_recipient_name": None,
        "pix_bank": None,
        "pix_description": pix_description,
        "pix_amount_cents": amount if type == "onramp" else None,
        "party_display_name": name,
        "party_document_masked": doc,
        "party_solana_wallet": None,
        "destination_address": destination if type == "offramp" else None,
        "snapshot_at": None,
        "run_id": None,
        "raw": "{}",
    }


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
) -> dict[str, Any]:
    """A statement line (STATEMENT_LINES_SCHEMA); `amount` is a positive magnitude."""
    credit = kind in ("pix_in", "pix_refund_in")
    prefix = "D" if kind.startswith("pix_refund") else "E"
    end_to_end = e2e_id or (e2e(n, prefix) if kind != "fee" else None)
    return {
        "line_id": hashlib.sha256(f"acct|{end_to_end or n}|{kind}".encode()).hexdigest()[:32],
        "source_format": "csv",
        "source_file": "extrato.csv",
        "source_line": n,
        "account": "0001/1234567-8",
        "booked_at": at,
        "amount_cents": amount if credit else -amount,
        "direction": "credit" if credit else "debit",
        "kind": kind,
        "end_to_end_id": end_to_end,
        "txid": txid,
        "refund_of": refund_of,
        "counterparty_name": name,
        "counterparty_document": doc,
        "counterparty_key": key,
        "description": description,
        "bank_reference": f"B{n}",
        "imported_at": datetime(2026, 11, 20, tzinfo=UTC),
    }


@dataclass
class World:
    """A data dir plus what was written; `snapshot()` and `statement()` write Parquet."""

    data: DataDir
    snapshots: list[datetime] = field(default_factory=list)

    def snapshot(
        self, intents: list[dict[str, Any]], at: datetime, manifest: dict[str, Any] | None = None
    ) -> str:
        run_id = at.strftime("%Y%m%dT%H%M%S%fZ") + "-0000"
        rows = [dict(r, snapshot_at=at, run_id=run_id) for r in intents]
        folder = self.data.snapshots / f"snapshot_date={at:%Y-%m-%d}" / f"run_id={run_id}"
        folder.mkdir(parents=True)
        pq.write_table(
            pa.Table.from_pylist(rows, schema=INTENTS_SCHEMA), folder / "part-00000.parquet"
        )
        if manifest is not None:
            (folder / "_manifest.json").write_text(json.dumps(manifest))
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
        folder = self.data.statements / "source=csv"
        folder.mkdir(parents=True, exist_ok=True)
        seq = next(_seq)
        pq.write_table(
            pa.Table.from_pylist(lines, schema=STATEMENT_LINES_SCHEMA),
            folder / f"{batch}-{seq}.parquet",
        )
        if covers is not None:
            self.coverage(*covers, scope=scope, batch=f"{batch}-{seq}", lines=len(lines))

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
        folder = self.data.statements / "coverage"
        folder.mkdir(parents=True, exist_ok=True)
        row = {
            "account": account,
            "source_format": "csv",
            "source_file": "extrato.csv",
            "covered_from": start,
            "covered_to": end,
            "basis": "declared",
            "scope": scope,
            "lines": lines,
            "imported_at": datetime(2026, 11, 20, tzinfo=UTC),
        }
        pq.write_table(
            pa.Table.from_pylist([row], schema=STATEMENT_COVERAGE_SCHEMA),
            folder / f"{batch}-{next(_seq)}.parquet",
        )
