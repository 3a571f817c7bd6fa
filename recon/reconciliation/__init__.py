"""recon.reconciliation: match intents to the money that moved, classify every break, publish runs.

    reconcile(data=None, *, as_of=None, settings=None, run_id=None, flows=True) -> RunResult
    resolve(break_id, note, *, data=None, decided_by=None) -> Decision | Request
    pair(intent_id, line_ids, note, *, data=None, by=None) -> Pairing
    unpair(line_id, note, *, data=None, by=None) -> tuple[ManualMatch, ...]  # the whole pair
    load_run(path) -> RunResult
    ReconcileSettings.load(data)   # recon.toml [reconcile]

The matching itself is SQL: recon/models/{staging,intermediate,marts,checks}/*.sql.
"""

from __future__ import annotations

from recon.reconciliation.decisions import Decision, load_decisions
from recon.reconciliation.runs import RunChecksFailed, RunResult, RunSummary, load_run, reconcile
from recon.reconciliation.settings import ReconcileSettings
from recon.reconciliation.workflow import Pairing, Request, pair, resolve, unpair

__all__ = [
    "Decision",
    "Pairing",
    "ReconcileSettings",
    "Request",
    "RunChecksFailed",
    "RunResult",
    "RunSummary",
    "load_decisions",
    "load_run",
    "pair",
    "reconcile",
    "resolve",
    "unpair",
]
