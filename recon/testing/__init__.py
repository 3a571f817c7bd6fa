"""Factories for tests: snapshots, statement lines and runs written by recon's own storage code.

For recon's test suite and for users' own tests of code that reads a data directory. Each
writer goes through the same functions the real commands use (`publish_snapshot`, the
statement store's atomic writer, `atomic_dir` and the run's ``flows.parquet`` writer), so a
change of layout shows up here, not in a hundred hand-written folders. Row factories fill
every column of the contract schema with plausible defaults; a test states only what
matters to it::

    from recon import testing

    data = testing.data_dir(tmp_path)
    paid = testing.intent(1, amount_cents=5_000)
    testing.snapshot(data, [paid, testing.intent(2, status="expired")])
    testing.statement_lines(data, [testing.statement_line(1, amount_cents=5_000)])
    run = testing.run(data, [testing.break_row("unmatched_credit", 1)])

Ids are deterministic: ``intent(n)`` has id ``uid(n)``, a uuid-shaped hash of `n`, and
``statement_line(n)`` the end-to-end id ``e2e(n)``. Amounts are integer cents; times are UTC.

    handbuilt   a `World` (data directory) with the engine's short names for rows
    fake_api    an in-memory v2 list endpoint and client, to time the extractor's pages
    daily       `FakeSteps`: extract, import and reconcile stand-ins for `run_daily`
    jobs        `sandbox_job`: extract, import and reconcile a generated sandbox world
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from recon.config import DataDir, new_run_id
from recon.extraction.snapshot import publish_snapshot
from recon.reconciliation.flows import FLOWS_FILE, run_history, write_flows
from recon.reconciliation.runs import MATCH_RULES, RunSummary
from recon.schemas import (
    CATEGORIES,
    EXCEPTIONS_SCHEMA,
    INTENTS_SCHEMA,
    MATCHES_SCHEMA,
    STATEMENT_COVERAGE_SCHEMA,
    STATEMENT_LINES_SCHEMA,
)
from recon.statements.importer import personal_columns
from recon.statements.lines import BUSINESS_TZ, EPOCH, days_coverage
from recon.statements.stored import (
    BALANCES_STORED_SCHEMA,
    balances_path,
    coverage_path,
    line_path,
    write_parquet_atomic,
)
from recon.storage import atomic_dir, write_json

__all__ = [
    "T0",
    "break_row",
    "coverage",
    "data_dir",
    "e2e",
    "intent",
    "match_row",
    "run",
    "snapshot",
    "statement_line",
    "statement_lines",
    "uid",
]

T0 = datetime(2026, 11, 2, 13, 0, tzinfo=UTC)  # 10:00 in São Paulo, a Monday

DataLike = str | os.PathLike[str] | DataDir


def _dd(data: DataLike) -> DataDir:
    return data if isinstance(data, DataDir) else DataDir(Path(data)).ensure()


def data_dir(root: str | os.PathLike[str]) -> DataDir:
    """An empty data directory at `root/data` (a test's tmp_path) with its sub-folders."""
    return DataDir(Path(root) / "data").ensure()


def uid(n: int) -> str:
    """A deterministic uuid-shaped id for `n`."""
    h = hashlib.sha256(str(n).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def e2e(n: int, prefix: str = "E") -> str:
    """A 32-character PIX end-to-end id for `n` (prefix ``D`` for a devolução)."""
    return f"{prefix}18236120202611021300{n:011d}"


def intent(n: int = 1, **fields: Any) -> dict[str, Any]:
    """An intents row (INTENTS_SCHEMA): an onramp of R$ 100,00, completed, created at T0.

    Any column can be given; `intent_type="offramp"` switches the defaults that differ (no
    PIX key, the amount from metadata, no expiry).
    """
    kind = fields.get("intent_type", "onramp")
    created = fields.get("created_at", T0)
    amount = fields.get("amount_cents", 10_000)
    onramp = kind == "onramp"
    row: dict[str, Any] = {
        "id": uid(n),
        "instance_id": "inst",
        "party_id": f"party-{n}",
        "intent_type": kind,
        "flow_version": 2,
        "adapter": None,
        "status": "completed",
        "status_reason": None,
        "client_reference": None,
        "metadata": None,
        "expires_at": created + timedelta(hours=1) if onramp else None,
        "created_at": created,
        "updated_at": created + timedelta(minutes=5),
        "chain_id": "solana",
        "amount_cents": amount,
        "amount_source": "pixInfo.amountCents" if onramp else "metadata.amountCents",
        "pix_key_type": "cnpj" if onramp else None,
        "pix_key_value": "12345678000195" if onramp else None,
        "pix_recipient_name": None,
        "pix_bank": None,
        "pix_description": None,
        "pix_amount_cents": amount if onramp else None,
        "party_display_name": "MARIA SILVA",
        "party_document_masked": "***.456.789-**",
        "party_solana_wallet": None,
        "destination_address": None,
        "snapshot_at": None,
        "run_id": None,
        "raw": "{}",
    }
    _update(row, fields, INTENTS_SCHEMA, "intent")
    return row


def statement_line(n: int = 1, **fields: Any) -> dict[str, Any]:
    """A statement line (STATEMENT_LINES_SCHEMA): a PIX credit of R$ 100,00 at T0 + 10 min.

    `amount_cents` is signed as in the table (credit > 0); pass a negative amount with
    ``kind="pix_out"`` for a debit (the direction follows the kind: pix_in, pix_refund_in and
    yield are credits).
    """
    kind = fields.get("kind", "pix_in")
    credit = kind in ("pix_in", "pix_refund_in", "yield")
    prefix = "D" if kind.startswith("pix_refund") else "E"
    own = kind in ("fee", "interest", "yield")  # the bank's own lines carry no PIX id
    end_to_end = fields.get("end_to_end_id", None if own else e2e(n, prefix))
    row: dict[str, Any] = {
        "line_id": hashlib.sha256(f"acct|{end_to_end or n}|{kind}".encode()).hexdigest()[:32],
        "source_format": "csv",
        "source_file": "extrato.csv",
        "source_line": n,
        "account": "0001/1234567-8",
        "booked_at": T0 + timedelta(minutes=10),
        "amount_cents": 10_000 if credit else -10_000,
        "direction": "credit" if credit else "debit",
        "kind": kind,
        "end_to_end_id": end_to_end,
        "txid": None,
        "refund_of": None,
        "counterparty_name": "MARIA SILVA",
        "counterparty_document": "***.456.789-**",
        "counterparty_key": None,
        "description": None,
        "bank_reference": f"B{n}",
        "imported_at": datetime(2026, 11, 20, tzinfo=UTC),
    }
    _update(row, fields, STATEMENT_LINES_SCHEMA, "statement line")
    return row


def break_row(category: str = "onramp_missing_credit", n: int = 1, **fields: Any) -> dict[str, Any]:
    """A break (EXCEPTIONS_SCHEMA) of `category`, its priority from the vocabulary: an
    intent expected at R$ 100,00 + n cents with nothing found, new in run ``run-1``."""
    row: dict[str, Any] = {
        "break_id": f"b{n:04d}",
        "run_id": "run-1",
        "category": category,
        "priority": CATEGORIES[category].priority,
        "intent_id": f"intent-{n}",
        "line_id": None,
        "end_to_end_id": None,
        "expected_cents": 10_000 + n,
        "actual_cents": 0,
        "delta_cents": -(10_000 + n),
        "reason": f"reason for break {n}",
        # a row with no code shows its sentence as it is (recon.reconciliation.reasons)
        "reason_code": None,
        "reason_params": None,
        "first_seen_run": fields.get("run_id", "run-1"),
        "age_days": n % 12,
        "state": "new",
    }
    _update(row, fields, EXCEPTIONS_SCHEMA, "break")
    return row


def match_row(n: int = 1, **fields: Any) -> dict[str, Any]:
    """A matched pair (MATCHES_SCHEMA): an onramp of R$ 5,00 matched by txid."""
    row: dict[str, Any] = {
        "run_id": "run-1",
        "intent_id": f"m-intent-{n}",
        "line_id": f"line-{n}",
        "end_to_end_id": e2e(n),
        "rule": "txid",
        "intent_type": "onramp",
        "intent_status": "completed",
        "line_kind": "pix_in",
        "expected_cents": 500,
        "actual_cents": 500,
        "booked_at": T0 + timedelta(minutes=10),
    }
    _update(row, fields, MATCHES_SCHEMA, "match")
    return row


def _update(row: dict[str, Any], fields: Mapping[str, Any], schema: pa.Schema, what: str) -> None:
    unknown = sorted(set(fields) - set(schema.names))
    if unknown:
        raise TypeError(f"{what} has no column(s) {', '.join(unknown)}")
    row.update(fields)


def snapshot(
    data: DataLike,
    intents: Iterable[Mapping[str, Any]] = (),
    *,
    at: datetime = T0 + timedelta(hours=2),
    run_id: str | None = None,
    manifest: Mapping[str, Any] | None = None,
) -> Path | str:
    """Publish `intents` as one committed snapshot taken at `at` (server time); return its
    folder (on a remote data directory, its partition's URI). `snapshot_at` and `run_id` of every row are set; the manifest says a full,
    consistent walk unless `manifest` overrides some of its fields (e.g. ``kind="filtered"``,
    ``consistent=False``)."""
    dd = _dd(data)
    at = at.astimezone(UTC)
    run_id = run_id or new_run_id(at)
    rows = [dict(r, snapshot_at=at, run_id=run_id) for r in intents]
    table = pa.Table.from_pylist(rows, schema=INTENTS_SCHEMA)
    full = {
        "run_id": run_id,
        "snapshot_at": at.isoformat().replace("+00:00", "Z"),
        "snapshot_time_source": "server",
        "consistent": True,
        "kind": "full",
        "filters": {"intent_type": "all", "status": "all"},
        "rows": len(rows),
        "unique_ids": len({r["id"] for r in rows}),
        "files": ["part-00000.parquet"],
    }
    full.update(manifest or {})
    return publish_snapshot(dd, table, at, run_id, full)


def statement_lines(
    data: DataLike,
    lines: Iterable[Mapping[str, Any]],
    *,
    source_format: str = "csv",
    batch: str | None = None,
    covers: tuple[datetime, datetime] | str | None = "lines",
    scope: str = "all",
) -> Path:
    """Store `lines` as one imported batch of `source_format`; return the Parquet file.

    `batch` defaults to a new name, so each call adds a batch, as each import does. The
    period the batch covers is recorded too, as the importer does: by default the first to
    the last business day of its lines (a CSV that states no period); `covers=(start, end)`
    declares one, `covers=None` records none (a statement whose period is unknown).
    """
    dd = _dd(data)
    rows = list(lines)
    name = batch or f"testing-{new_run_id()}"
    table = pa.Table.from_pylist(rows, schema=STATEMENT_LINES_SCHEMA)
    # documents and keys as an import stores them: masked, with their hashes (recon.pii)
    for column, values in personal_columns(
        {n: table.column(n) for n in table.schema.names}
    ).items():
        table = table.set_column(table.schema.get_field_index(column), column, values)
    path = write_parquet_atomic(table, line_path(dd, source_format, name))
    account = str(rows[0]["account"]) if rows else "0001/1234567-8"
    if covers == "lines" and rows:
        days = [r["booked_at"].astimezone(BUSINESS_TZ).date() for r in rows]
        period = days_coverage(min(days), max(days), "lines first/last day")
        start, end = (EPOCH + timedelta(microseconds=us) for us in (period.start_us, period.end_us))
        coverage(dd, start, end, account=account, source_format=source_format,
                 basis=period.basis, scope=scope, lines=len(rows), batch=name)  # fmt: skip
    elif isinstance(covers, tuple):
        coverage(dd, *covers, account=account, source_format=source_format, scope=scope,
                 lines=len(rows), batch=name)  # fmt: skip
    return path


def coverage(
    data: DataLike,
    start: datetime,
    end: datetime,
    *,
    account: str = "0001/1234567-8",
    source_format: str = "csv",
    basis: str = "declared",
    scope: str = "all",
    lines: int = 0,
    batch: str | None = None,
) -> Path:
    """Record that `account`'s statements cover [start, end) (`statement_coverage`); `scope`
    is ``all`` (an account statement) or ``received`` (API Pix: PIX received only)."""
    dd = _dd(data)
    row = {
        "account": account,
        "source_format": source_format,
        "source_file": f"extrato.{source_format}",
        "covered_from": start,
        "covered_to": end,
        "basis": basis,
        "scope": scope,
        "lines": lines,
        "imported_at": datetime(2026, 11, 20, tzinfo=UTC),
    }
    table = pa.Table.from_pylist([row], schema=STATEMENT_COVERAGE_SCHEMA)
    return write_parquet_atomic(table, coverage_path(dd, batch or f"testing-{new_run_id()}"))


def stated_balances(
    data: DataLike,
    balances: Iterable[tuple[str, date, str, int]],
    *,
    source_format: str = "csv",
    batch: str | None = None,
) -> Path:
    """Record balances statement files state (`statement_stated_balances`): one row per
    (account, day, "opening" | "closing", cents)."""
    dd = _dd(data)
    rows = [
        {
            "account": account,
            "day": day,
            "side": side,
            "balance_cents": cents,
            "stated_at": None,
            "basis": "declared",
            "source_format": source_format,
            "source_file": f"extrato.{source_format}",
            "source_line": 0,
            "imported_at": datetime(2026, 11, 20, tzinfo=UTC),
            "row_key": f"{account}|{day}|{side}|{cents}",
        }
        for account, day, side, cents in balances
    ]
    table = pa.Table.from_pylist(rows, schema=BALANCES_STORED_SCHEMA)
    return write_parquet_atomic(table, balances_path(dd, batch or f"testing-{new_run_id()}"))


def run(
    data: DataLike,
    breaks: Iterable[Mapping[str, Any]] = (),
    *,
    matches: int | Iterable[Mapping[str, Any]] = 3,
    summary: Mapping[str, Any] | None = None,
    flows: Mapping[str, pd.DataFrame] | None = None,
    run_id: str | None = None,
) -> Path:
    """Publish a committed run folder holding `breaks` (its open breaks) and `matches`
    (rows, or how many default `match_row`s); return the folder.

    summary.json has the RunSummary shape, its counts computed from the rows; `summary`
    overrides fields. flows.parquet holds `flows` (frame name -> DataFrame, e.g.
    ``{"funnel_onramp": analytics.funnel(...)}``) and the trend of the runs up to this one,
    as a real run writes it.
    """
    dd = _dd(data)
    run_id = run_id or new_run_id()
    rows = [dict(b, run_id=run_id) for b in breaks]
    pairs = (
        [match_row(i, run_id=run_id) for i in range(matches)]
        if isinstance(matches, int)
        else [dict(m, run_id=run_id) for m in matches]
    )
    payload = _summary(run_id, rows, pairs) | dict(summary or {})
    with atomic_dir(dd.runs / run_id) as tmp:
        pq.write_table(
            pa.Table.from_pylist(rows, schema=EXCEPTIONS_SCHEMA), tmp / "exceptions.parquet"
        )
        pq.write_table(pa.Table.from_pylist(pairs, schema=MATCHES_SCHEMA), tmp / "matches.parquet")
        write_json(tmp / "summary.json", payload)
        history = run_history(dd.runs, run_id, str(payload["as_of"]), tmp / "exceptions.parquet")
        write_flows({**(flows or {}), "run_history": history}, tmp / FLOWS_FILE)
    return dd.runs / run_id


def _summary(
    run_id: str, breaks: list[dict[str, Any]], matches: list[dict[str, Any]]
) -> dict[str, Any]:
    """A RunSummary consistent with the rows (one statement line per match, all matched)."""
    counts = dict.fromkeys(CATEGORIES, 0)
    for b in breaks:
        counts[b["category"]] = counts.get(b["category"], 0) + 1
    rules = dict.fromkeys(MATCH_RULES, 0)
    for m in matches:
        rules[m["rule"]] = rules.get(m["rule"], 0) + 1
    matched = sum(m["actual_cents"] or 0 for m in matches)
    return RunSummary(
        run_id=run_id,
        previous_run_id=None,
        as_of=(T0 + timedelta(hours=2)).isoformat(),
        settings={"amount_tolerance_cents": 0, "business_tz": "America/Sao_Paulo"},
        intents=len(matches),
        statement_lines=len(matches),
        matched_lines=len(matches),
        auto_match_rate=1.0,
        matches_by_rule=rules,
        breaks=len(breaks),
        counts=counts,
        counts_by_priority={p: sum(b["priority"] == p for b in breaks) for p in ("P1", "P2", "P3")},
        new_breaks=sum(b["state"] == "new" for b in breaks),
        persisting_breaks=sum(b["state"] == "persisting" for b in breaks),
        totals={"matched_cents": matched},
        control_totals=(),
        explained_by={},
        checks={},
        checks_passed=True,
    ).to_json()
