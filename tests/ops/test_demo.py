"""`recon demo`: scoring, its own folder, and the whole job end to end on a tiny world."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from recon.errors import UsageError
from recon.ops.demo import MARKER, _prepare, break_key, ensure_demo_data, run_demo, score_breaks


def test_score_breaks_counts_exact_identities() -> None:
    expected = [
        break_key("onramp_underpaid", "i1", "E1"),
        break_key("onramp_underpaid", "i2", "E2"),
        break_key("unmatched_credit", "", "E3"),
    ]
    found = [
        break_key("onramp_underpaid", "i1", "E1"),
        break_key("onramp_overpaid", "i2", "E2"),  # right intent, wrong category
        break_key("unmatched_credit", None, "E3"),  # blank and None are the same
    ]
    scores = score_breaks(found, expected)
    assert (scores["all"].expected, scores["all"].found, scores["all"].true_positive) == (3, 3, 2)
    assert scores["onramp_underpaid"].recall == 0.5
    assert scores["onramp_underpaid"].precision == 1.0
    assert scores["onramp_overpaid"].precision == 0.0
    assert scores["onramp_overpaid"].recall == 1.0  # nothing expected
    assert scores["unmatched_credit"].precision == scores["unmatched_credit"].recall == 1.0
    assert score_breaks([], [])["all"].precision == 1.0


def test_demo_never_deletes_a_folder_it_did_not_make(tmp_path: Path) -> None:
    foreign = tmp_path / "demo-7"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep me")
    with pytest.raises(UsageError, match="not made by `recon demo`"):
        _prepare(foreign)
    assert (foreign / "precious.txt").read_text() == "keep me"
    (foreign / "precious.txt").unlink()
    _prepare(foreign)  # empty is fine
    (foreign / MARKER).write_text("{}")
    (foreign / "old-run").mkdir()
    _prepare(foreign)  # ours: started afresh
    assert not (foreign / "old-run").exists()


def test_bad_sizes_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        run_demo(tmp_path, days=0)


def test_demo_end_to_end_on_a_tiny_world(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recon demo` as a user runs it: every step, the table, the report, under a minute."""
    from recon.cli import main

    started = time.perf_counter()
    argv = [
        "demo",
        "--data",
        str(tmp_path),
        "--seed",
        "3",
        "--days",
        "2",
        "--intents-per-day",
        "30",
    ]
    assert main(argv) == 0
    elapsed = time.perf_counter() - started
    assert elapsed < 60
    out = capsys.readouterr().out
    for step in ("build world", "extract", "late events + extract", "reconcile", "report"):
        assert f"✓ {step}" in out
    assert "precision" in out and "recall" in out
    root = tmp_path / "demo-3"
    reports = list((root / "reports").glob("*/report.html"))
    assert len(reports) == 1 and f"report: {reports[0]}\n" in out  # a whole line
    assert f"data: {root}\n" in out
    html = reports[0].read_text(encoding="utf-8")
    assert html.count("data:image/png;base64,") >= 4
    assert (reports[0].parent / "breaks.csv").is_file()
    assert (root / "sandbox" / "expected_breaks.csv").is_file()
    # by default the data stays where the printed next command looks for it
    assert {"snapshots", "statements", "runs", "reports", "sandbox"} <= {
        p.name for p in root.iterdir()
    }
    assert f"--data {root}" in out.replace("\n", "")
    assert main(["sql", "select count(*) n from recon_exceptions", "--data", str(root)]) == 0
    print(f"demo tiny world: {elapsed:.1f}s")
    # --no-keep-data: only the report, the sandbox files and the marker stay
    assert main([*argv, "--no-keep-data"]) == 0
    assert sorted(p.name for p in root.iterdir()) == sorted([MARKER, "reports", "sandbox"])


def test_ensure_demo_data_builds_once_then_reuses(tmp_path: Path) -> None:
    target = tmp_path / "nb-data"
    dd = ensure_demo_data(target, seed=5, days=1, intents_per_day=20)
    assert any(dd.snapshots.rglob("*.parquet")) and any(dd.statements.rglob("*.parquet"))
    runs = sorted(p.name for p in dd.runs.iterdir())
    assert ensure_demo_data(target, seed=5, days=1, intents_per_day=20) == dd
    assert sorted(p.name for p in dd.runs.iterdir()) == runs  # nothing run again
