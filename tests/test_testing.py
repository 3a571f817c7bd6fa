"""recon.testing writes what the real code reads: the catalog sees its snapshots, lines and runs."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from recon import catalog, testing
from recon.config import DataDir
from recon.reconciliation import load_run, reconcile
from recon.reconciliation.flows import read_flows


def test_snapshot_lines_and_run_are_what_the_catalog_reads(tmp_path: Path) -> None:
    data = testing.data_dir(tmp_path)
    first = testing.snapshot(data, [testing.intent(1), testing.intent(2, status="expired")])
    later = testing.T0 + timedelta(hours=5)
    testing.snapshot(data, [testing.intent(1)], at=later)
    testing.statement_lines(data, [testing.statement_line(1), testing.statement_line(2)])
    run = testing.run(data, [testing.break_row("unmatched_credit", 1)])

    assert (first / "_manifest.json").is_file() and (first / "part-00000.parquet").is_file()
    con = catalog.connect(data)
    # the latest full snapshot wins; every snapshot stays in intent_snapshots
    assert con.execute("select count(*) from intents").fetchone() == (1,)
    assert con.execute("select count(*) from intent_snapshots").fetchone() == (3,)
    assert con.execute("select count(*) from statement_lines").fetchone() == (2,)
    assert con.execute("select category from recon_exceptions").fetchall() == [
        ("unmatched_credit",)
    ]
    assert catalog.latest_run(data) == run
    summary = load_run(run).summary  # the RunSummary shape, counts from the rows
    assert summary.breaks == 1 and summary.counts["unmatched_credit"] == 1
    assert summary.counts_by_priority == {"P1": 0, "P2": 1, "P3": 0}
    assert list(read_flows(run)["run_history"]["breaks"]) == [1]


def test_rows_state_only_what_matters() -> None:
    offramp = testing.intent(3, intent_type="offramp", amount_cents=777)
    assert offramp["id"] == testing.uid(3) and offramp["pix_key_type"] is None
    assert offramp["expires_at"] is None and offramp["amount_source"] == "metadata.amountCents"
    debit = testing.statement_line(4, kind="pix_out", amount_cents=-500)
    assert debit["direction"] == "debit" and debit["end_to_end_id"] == testing.e2e(4)
    assert testing.break_row("ambiguous_match")["priority"] == "P3"
    with pytest.raises(TypeError, match="no column"):
        testing.intent(1, amount=5)


def test_a_reconcile_over_factory_data(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "d").ensure()
    paid = testing.intent(1, amount_cents=5_000)
    testing.snapshot(data, [paid, testing.intent(2)])
    credit = testing.statement_line(1, amount_cents=5_000, txid=paid["id"].replace("-", ""))
    testing.statement_lines(data, [credit])
    result = reconcile(data, strict=False)
    assert result.summary.matched_lines == 1
    assert result.summary.counts["onramp_missing_credit"] == 1
