"""Run the engine on a hand-built world and read its breaks as comparable sets."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq

from recon import i18n
from recon.reconciliation import ReconcileSettings, RunResult, reconcile
from recon.testing.handbuilt import World


def run(world: World, lang: str | None = None, **kw: Any) -> RunResult:
    """Reconcile the world; its reasons in `lang` (default: pt-BR, as the tests speak)."""
    kw.setdefault("settings", ReconcileSettings())
    with i18n.override(lang):
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
