"""Run the engine on a hand-built world and read its breaks as comparable sets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from recon.config import DataDir
from recon.reconciliation import ReconcileSettings, RunResult, reconcile
from recon.testing.handbuilt import World

# the accuracy worlds: small enough for every test run, big enough to show every category
DAYS, INTENTS_PER_DAY = 3, 60


def run(world: World, **kw: Any) -> RunResult:
    kw.setdefault("settings", ReconcileSettings())
    return reconcile(world.data, **kw)


def breaks(result: RunResult) -> set[tuple[str, str | None, str | None]]:
    """(category, intent_id, end_to_end_id) of every open break."""
    rows = pq.read_table(result.exceptions_path).to_pylist()
    return {(r["category"], r["intent_id"], r["end_to_end_id"]) for r in rows}


def exception_rows(result: RunResult) -> list[dict[str, Any]]:
    return pq.read_table(result.exceptions_path).to_pylist()


def match_rows(result: RunResult) -> list[dict[str, Any]]:
    return pq.read_table(result.matches_path).to_pylist()


def matches(result: RunResult) -> set[tuple[str, str | None, str]]:
    """(intent_id, end_to_end_id, rule) of every match."""
    return {(r["intent_id"], r["end_to_end_id"], r["rule"]) for r in match_rows(result)}


def sandbox_job(
    seed: int, root: Path, work_storage: str = "auto", engine: str | None = None, **world: Any
) -> tuple[Any, RunResult]:
    """The whole job on a sandbox world: build, extract, late events, extract again, export
    and import every statement format, reconcile (on `engine`, default DuckDB)."""
    from recon.extraction import extract
    from recon.sandbox import build_world
    from recon.sandbox.exports import STATEMENT_FILES, export_statements
    from recon.sandbox.transport import AsyncEmulatorTransport
    from recon.statements import import_statements

    sandbox = build_world(
        **{"seed": seed, "days": DAYS, "intents_per_day": INTENTS_PER_DAY, **world}
    )
    data = DataDir(root / "data").ensure()
    transport = AsyncEmulatorTransport(sandbox.emulator)
    api = {"base_url": "http://sandbox.test", "api_key": sandbox.api_key, "quiet": True}
    extract(data, transport=transport, **api)
    sandbox.apply_late_events()
    extract(data, transport=transport, **api)
    export_statements(sandbox.bank, root / "sandbox")
    import_statements([root / "sandbox" / name for name in STATEMENT_FILES], data=data)
    result = reconcile(data, settings=ReconcileSettings(work_storage=work_storage), engine=engine)
    return sandbox, result
