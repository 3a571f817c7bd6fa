"""recon.reconcile: match intents to the money that moved, classify every break, publish runs.

    reconcile(data=None, *, as_of=None, settings=None, run_id=None, flows=True) -> RunResult
    resolve(break_id, note, *, data=None, decided_by=None) -> Decision
    load_run(path) -> RunResult
    ReconcileSettings.load(data)   # recon.toml [reconcile]

The matching itself is SQL: recon/sql/{staging,intermediate,marts,checks}/*.sql.
"""

from __future__ import annotations

from recon._callable import make_callable
from recon.reconcile.decisions import Decision, load_decisions, resolve
from recon.reconcile.runs import RunChecksFailed, RunResult, RunSummary, load_run, reconcile
from recon.reconcile.settings import ReconcileSettings

__all__ = [
    "Decision",
    "ReconcileSettings",
    "RunChecksFailed",
    "RunResult",
    "RunSummary",
    "load_decisions",
    "load_run",
    "reconcile",
    "resolve",
]

# `recon.reconcile(...)` calls the function even after a submodule import rebinds the name.
make_callable(__name__, "recon.reconcile.runs:reconcile")
