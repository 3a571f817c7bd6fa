"""Golden files of a run over the every-category world: summary.json, the report's breaks.csv
(and breaks_br.csv) and the reason sentences, so any change to what users read shows as a
reviewed diff
(RECON_UPDATE_GOLDEN=1 rewrites them; see tests/golden.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from recon.config import DataDir
from recon.report.render import write_breaks
from recon.testing.handbuilt import World
from tests.golden import assert_golden

from .helpers import exception_rows, run
from .test_categories import SETTINGS, build

GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    world = World(DataDir(tmp_path_factory.mktemp("golden") / "data").ensure())
    build(world)
    return run(world, run_id="20261104T130000000000Z-g01d", settings=SETTINGS)


def test_summary_json(golden):
    text = (golden.path / "summary.json").read_text(encoding="utf-8")
    assert json.loads(text)["run_id"] == golden.run_id
    assert_golden(GOLDEN / "summary.json", text + "\n")


def test_breaks_csv(golden, tmp_path):
    csv_path, _ = write_breaks(pq.read_table(golden.exceptions_path), tmp_path)
    with csv_path.open(encoding="utf-8", newline="") as fh:
        assert_golden(GOLDEN / "breaks.csv", fh.read())
    # the spreadsheet CSV beside it (BOM, CRLF and all)
    with (tmp_path / "breaks_br.csv").open(encoding="utf-8", newline="") as fh:
        assert_golden(GOLDEN / "breaks_br.csv", fh.read())


def test_reason_sentences(golden):
    rows = sorted(
        exception_rows(golden),
        key=lambda r: (r["category"], r["intent_id"] or "", r["end_to_end_id"] or ""),
    )
    text = "".join(f"{r['category']}\n  {r['reason']}\n" for r in rows)
    assert_golden(GOLDEN / "reasons.txt", text)
