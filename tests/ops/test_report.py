"""The HTML report: golden file, self-containedness, and the breaks beside it."""

from __future__ import annotations

import csv
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ops.fakes import break_row, write_run
from recon.errors import UsageError
from recon.report import render
from recon.report.render import format_brl, report_dir_for

GOLDEN = Path(__file__).parent / "golden" / "report.html"
NOW = datetime(2026, 11, 21, 3, 0, tzinfo=UTC)


def normalise(html: str) -> str:
    """Strip what legitimately varies: embedded images and the generation time."""
    html = re.sub(r'src="data:image/png;base64,[A-Za-z0-9+/=]+"', 'src="data:IMAGE"', html)
    html = re.sub(r'<figure class="chart">.*?</figure>', "<figure>CHART</figure>", html, flags=re.S)
    return re.sub(r"generated [0-9T:+\-]+", "generated TIME", html)


def golden_run(root: Path) -> Path:
    breaks = [
        break_row(
            "onramp_missing_credit", 1, reason="Onramp paid per the API; no PIX credit <found>."
        ),
        break_row(
            "onramp_underpaid", 2, actual_cents=9_000, delta_cents=-1_002, end_to_end_id="E1"
        ),
        break_row(
            "unmatched_credit",
            3,
            intent_id=None,
            expected_cents=None,
            actual_cents=77_700,
            delta_cents=77_700,
            state="persisting",
            age_days=40,
        ),
        break_row("ambiguous_match", 4, intent_id=None, reason="candidates: a, b"),
        break_row("status_regression", 5, expected_cents=None, actual_cents=None, delta_cents=None),
        break_row("offramp_stuck_paying_out", 6, age_days=3),
    ]
    return write_run(root / "runs", "run-golden", breaks)


def test_report_matches_golden_file(tmp_path: Path) -> None:
    run = golden_run(tmp_path)
    out = render(run, now=NOW)
    got = normalise(out.read_text(encoding="utf-8"))
    if os.environ.get("RECON_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(got, encoding="utf-8")
    assert GOLDEN.is_file(), "golden file missing: run with RECON_UPDATE_GOLDEN=1"
    assert got == GOLDEN.read_text(encoding="utf-8")


def test_report_is_self_contained_and_escaped(tmp_path: Path) -> None:
    out = render(golden_run(tmp_path), now=NOW)
    html = out.read_text(encoding="utf-8")
    assert out == report_dir_for(tmp_path / "runs" / "run-golden") / "report.html"
    # nothing fetched from elsewhere: no external scripts, styles or images
    assert not re.search(r'(src|href)="(https?:)?//', html)
    assert "<script" not in html
    assert "&lt;found&gt;" in html and "<found>" not in html
    assert "R$ 777,00" in html  # unmatched credit of 77 700 cents


def test_breaks_written_beside_report_most_urgent_first(tmp_path: Path) -> None:
    out = render(golden_run(tmp_path), tmp_path / "custom" / "r.html", now=NOW, charts=False)
    assert out == tmp_path / "custom" / "r.html"
    with (out.parent / "breaks.csv").open(encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 6
    assert [r["priority"] for r in rows] == sorted(r["priority"] for r in rows)
    assert rows[0]["category"] == "onramp_missing_credit"  # P1, biggest delta
    table = pq.read_table(out.parent / "breaks.parquet")
    assert table.num_rows == 6
    assert table.column("break_id").to_pylist() == [r["break_id"] for r in rows]
    assert not list(out.parent.glob(".tmp-*"))


def test_out_folder_and_empty_run(tmp_path: Path) -> None:
    run = write_run(tmp_path / "runs", "run-empty", [], matches=0, summary={"control_totals": []})
    out = render(run, tmp_path / "folder", now=NOW, charts=False)
    assert out == tmp_path / "folder" / "report.html"
    html = out.read_text(encoding="utf-8")
    assert "No open breaks" in html
    assert (tmp_path / "folder" / "breaks.csv").read_text().count("\n") == 1  # header only


@pytest.mark.parametrize(
    "content", [None, "not json", "[1, 2]"], ids=["missing", "malformed", "not-an-object"]
)
def test_bad_run_folder_is_a_usage_error(tmp_path: Path, content: str | None) -> None:
    run = tmp_path / "runs" / "r"
    run.mkdir(parents=True)
    if content is not None:
        (run / "summary.json").write_text(content)
    with pytest.raises(UsageError, match=r"summary\.json"):
        render(run)


@pytest.mark.parametrize(
    ("cents", "text"),
    [
        (0, "R$ 0,00"),
        (5, "R$ 0,05"),
        (123456, "R$ 1.234,56"),
        (-100000000, "R$ -1.000.000,00"),
        (None, "—"),
    ],
)
def test_format_brl(cents: int | None, text: str) -> None:
    assert format_brl(cents) == text
