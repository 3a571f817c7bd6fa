"""The whole job on a generated sandbox world, as the daily job runs it: for tests that
compare what a run finds with what the sandbox knows it did (recon.sandbox)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from recon.config import DataDir
from recon.reconciliation import ReconcileSettings, RunResult, reconcile

__all__ = ["DAYS", "INTENTS_PER_DAY", "sandbox_job"]

# the accuracy worlds: small enough for every test run, big enough to show every category
DAYS, INTENTS_PER_DAY = 3, 60


def sandbox_job(
    seed: int, root: Path, work_storage: str = "auto", engine: str | None = None, **world: Any
) -> tuple[Any, RunResult]:
    """The whole job on a sandbox world: build, extract, late events, extract again, export
    and import every statement format, reconcile (on `engine`, default DuckDB)."""
    from recon.extraction import extract
    from recon.sandbox import build_world
    from recon.sandbox.exports import STATEMENT_FILES, export_statements
    from recon.sandbox.exports.daily import ACCOUNT_LABEL as DAILY_ACCOUNT
    from recon.sandbox.exports.daily import FOLDER as DAILY_FOLDER
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
    if (root / "sandbox" / DAILY_FOLDER).is_dir():  # the second account, under its own label
        import_statements([root / "sandbox" / DAILY_FOLDER], data=data, account=DAILY_ACCOUNT)
    result = reconcile(data, settings=ReconcileSettings(work_storage=work_storage), engine=engine)
    return sandbox, result
