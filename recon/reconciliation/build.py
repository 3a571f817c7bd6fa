"""The engine in one call, for notebooks and tests: build every model on a connection.

`build(con, settings, as_of)` leaves the staging, intermediate and mart tables (and the
checks' results) on `con`, without publishing a run, so an analyst can query
`recon_exceptions`, `recon_control_totals` or any intermediate pass directly. The tables
live in the in-memory database `recon_work`, attached to `con` and put first on its
search path (see `runner.use_work_database`).
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from recon.reconciliation import runner
from recon.reconciliation.settings import ReconcileSettings

__all__ = ["build"]


def build(
    con: duckdb.DuckDBPyConnection,
    as_of: datetime,
    settings: ReconcileSettings | None = None,
) -> list[runner.CheckResult]:
    """Run every model over the catalog views on `con` and return the checks' results."""
    runner.set_params(con, settings or ReconcileSettings(), as_of)
    runner.run_models(con)
    return runner.run_checks(con)
