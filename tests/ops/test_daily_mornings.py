"""`recon daily` on three ordinary mornings of one data dir: the bank file has not arrived,
then a file covering part of the period, then the full statements. Every morning finishes
with a report and a day record; intents wait for statements instead of becoming breaks;
the last morning finds exactly the planted breaks; nothing is lost or counted twice."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, time, timedelta
from functools import partial
from pathlib import Path
from zoneinfo import ZoneInfo

import pyarrow.parquet as pq

from recon.config import DataDir


def _ids(run_dir: Path, name: str, column: str) -> list[str]:
    return [v for v in pq.read_table(run_dir / name).column(column).to_pylist() if v]


def test_three_mornings_empty_partial_full_inbox(tmp_path: Path) -> None:
    from recon.ops.daily import Steps, run_daily
    from recon.report import render
    from recon.sandbox import build_world
    from recon.sandbox.exports import render_statements
    from recon.sandbox.transport import AsyncEmulatorTransport

    sandbox = build_world(seed=5, days=3, intents_per_day=40)
    bank = sandbox.bank
    start, end = bank.period_start, bank.period_end
    assert start is not None and end is not None
    data = DataDir(tmp_path / "data").ensure()
    steps = replace(Steps.default(), render=partial(render, charts=False))
    job = partial(
        run_daily,
        data,
        base_url="http://sandbox.test",
        api_key=sandbox.api_key,
        transport=AsyncEmulatorTransport(sandbox.emulator),
        quiet=True,
        steps=steps,
    )
    day = end.date()
    expected = {(b.category, b.intent_id, b.end_to_end_id) for b in sandbox.truth.breaks}

    # -- morning 1: the inbox is empty ---------------------------------------------------
    first = job(date=day)
    summary = json.loads((first.run_dir / "summary.json").read_text())
    assert first.report.is_file()
    assert json.loads((data.root / "daily" / f"{day}.json").read_text())["run_id"] == first.run_id
    assert summary["checks_passed"], summary["check_samples"]
    waiting = set(_ids(first.run_dir, "awaiting.parquet", "intent_id"))
    assert summary["awaiting"]["intents"] == len(waiting) > 0
    assert summary["coverage_text"].startswith("no statement covers any time yet; ")
    money = {c for c, _, _ in expected} - {"status_regression", "intent_vanished"}
    found = {r["category"] for r in pq.read_table(first.run_dir / "exceptions.parquet").to_pylist()}
    assert not found & money, "no money-side break without a statement"
    assert summary["statements_overdue"], "days older than 30 h have no statement"
    assert first.exit_code == 1 and any("statements overdue" in r for r in first.reasons)
    assert "wait for statements" in first.report.read_text(encoding="utf-8")

    sandbox.apply_late_events()  # the API moves on overnight (the truth is as of after them)

    # -- morning 2: the statements of the first days only ---------------------------------
    # (cut at a local midnight: CNAB 240 and the bank CSV state whole days)
    tz = ZoneInfo("America/Sao_Paulo")
    cut = datetime.combine(start.astimezone(tz).date() + timedelta(days=2), time(0), tzinfo=tz)
    partial_files = render_statements(bank, start, cut)
    for name, body in partial_files.items():
        (data.inbox / f"parcial-{name}").write_bytes(body)
    second = job(date=day + timedelta(days=1))
    summary2 = json.loads((second.run_dir / "summary.json").read_text())
    assert len(second.imported) == len(partial_files) and second.report.is_file()
    assert summary2["checks_passed"], summary2["check_samples"]
    still = set(_ids(second.run_dir, "awaiting.parquet", "intent_id"))
    assert 0 < len(still) < len(waiting)
    breaks2 = pq.read_table(second.run_dir / "exceptions.parquet").to_pylist()
    matched2 = set(_ids(second.run_dir, "matches.parquet", "intent_id"))
    broken2 = {r["intent_id"] for r in breaks2 if r["intent_id"]}
    candidates2 = set(_ids(second.run_dir, "candidates.parquet", "intent_id"))  # ambiguous
    # every intent that waited is now matched, a break (or a candidate of an ambiguous
    # line), or still waiting: none lost
    assert waiting <= matched2 | broken2 | candidates2 | still
    # a break raised on the partial file is a planted one (covered time only)
    assert {(r["category"], r["intent_id"], r["end_to_end_id"]) for r in breaks2} - expected <= {
        (r["category"], r["intent_id"], r["end_to_end_id"])
        for r in breaks2
        if r["category"] in ("status_regression", "intent_vanished")
    }

    # -- morning 3: the full statements, every format --------------------------------------
    for name, body in render_statements(bank, start, end).items():
        (data.inbox / name).write_bytes(body)
    third = job(date=day + timedelta(days=2))
    summary3 = json.loads((third.run_dir / "summary.json").read_text())
    assert summary3["checks_passed"], summary3["check_samples"]
    assert summary3["awaiting"]["intents"] == 0, summary3["coverage_text"]
    found3 = {
        (r["category"], r["intent_id"], r["end_to_end_id"])
        for r in pq.read_table(third.run_dir / "exceptions.parquet").to_pylist()
    }
    assert found3 == expected
    assert summary3["statements_overdue"] == []
    # nothing counted twice: the first day's lines, read again from the full files, are one
    lines = pq.read_table(third.run_dir / "matches.parquet").column("line_id").to_pylist()
    assert len(lines) == len(set(lines))
    from recon.catalog import connect

    con = connect(data)
    try:
        n, distinct = con.execute(
            "SELECT count(*), count(DISTINCT line_id) FROM statement_lines"
        ).fetchall()[0]
    finally:
        con.close()
    assert n == distinct == len(bank.movements)
    assert third.exit_code == (
        1 if any(b.category for b in sandbox.truth.breaks if b.category in _p1()) else 0
    )


def _p1() -> set[str]:
    from recon.schemas import CATEGORIES

    return {name for name, c in CATEGORIES.items() if c.priority == "P1"}
