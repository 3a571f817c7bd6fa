"""The balance walk (catalog view statement_balances): each account's stated balances walked
day by day through its statement lines."""

from __future__ import annotations

import tempfile
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from recon import catalog, testing
from recon.config import DataDir

ACCOUNT = "0001/1234567-8"
FIRST = date(2026, 11, 2)
_seq = iter(range(1, 10**9))


def day_start(day: date) -> datetime:
    """Local midnight of `day` in São Paulo (UTC-3, no daylight saving in 2026)."""
    return datetime(day.year, day.month, day.day, 3, tzinfo=UTC)


def day_file(
    data: DataDir, day: date, amounts: list[int], opening: int | None, closing: int | None
) -> None:
    """One day's statement file: its lines, the day it covers, the balances it states."""
    lines = [
        testing.statement_line(
            n := next(_seq),
            kind="pix_in" if cents > 0 else "pix_out",
            amount_cents=cents,
            booked_at=day_start(day) + timedelta(hours=10, minutes=k),
            end_to_end_id=f"E{n:031d}",
        )
        for k, cents in enumerate(amounts)
    ]
    start = day_start(day)
    testing.statement_lines(data, lines, covers=(start, start + timedelta(days=1)))
    stated = [(ACCOUNT, day, "opening", opening), (ACCOUNT, day, "closing", closing)]
    testing.stated_balances(data, [(a, d, s, c) for a, d, s, c in stated if c is not None])


def walk(data: DataDir) -> dict[date, dict[str, Any]]:
    """The walk's rows by day, days as text, NULL as None."""
    frame = catalog.sql(
        "SELECT * REPLACE (CAST(day AS VARCHAR) AS day, CAST(walked_from AS VARCHAR) AS "
        "walked_from) FROM statement_balances ORDER BY account, day",
        data,
    )
    rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
    return {date.fromisoformat(r["day"]): r for r in rows}


def test_a_day_whose_file_lacks_a_line_has_that_gap(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data").ensure()
    day_file(data, FIRST, [5_000, -2_000], 100_000, 103_000)
    day_file(data, FIRST + timedelta(days=1), [7_000], None, 111_000)  # lacks a 1_000 credit
    day_file(data, FIRST + timedelta(days=2), [-1_000], None, 110_000)
    rows = walk(data)
    assert [rows[d]["gap_cents"] for d in sorted(rows)] == [0, 1_000, 0]
    second = rows[FIRST + timedelta(days=1)]
    assert (second["opening_cents"], second["movements_cents"], second["closing_cents"]) == (
        103_000, 7_000, 111_000,
    )  # fmt: skip
    assert second["state"] == "walked"


def test_a_day_with_no_file_is_not_walked_and_the_next_opens_on_its_own(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data").ensure()
    day_file(data, FIRST, [5_000], 100_000, 105_000)
    # FIRST + 1: no file (its 3_000 credit is in no file)
    day_file(data, FIRST + timedelta(days=2), [1_000], 108_000, 109_000)
    rows = walk(data)
    missing = rows[FIRST + timedelta(days=1)]
    assert missing["state"] == "no_file"
    assert missing["gap_cents"] is None and missing["opening_cents"] is None
    assert rows[FIRST + timedelta(days=2)]["gap_cents"] == 0


def test_a_day_with_no_known_opening_is_not_walked(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data").ensure()
    day_file(data, FIRST, [5_000], None, 105_000)  # an OFX: closing only
    rows = walk(data)
    assert rows[FIRST]["state"] == "no_opening"
    assert rows[FIRST]["gap_cents"] is None


def test_days_with_a_file_and_no_stated_balance_are_walked_through(tmp_path: Path) -> None:
    data = DataDir(tmp_path / "data").ensure()
    day_file(data, FIRST, [], None, 100_000)  # last month's closing
    day_file(data, FIRST + timedelta(days=1), [1_000], None, None)  # a month's file: one
    day_file(data, FIRST + timedelta(days=2), [2_000], None, None)  # closing at its end
    day_file(data, FIRST + timedelta(days=3), [4_000], None, 106_000)  # R$ 10,00 short
    rows = walk(data)
    last = rows[FIRST + timedelta(days=3)]
    assert (last["opening_cents"], last["gap_cents"]) == (103_000, -1_000)
    assert last["walked_from"] == str(FIRST + timedelta(days=1))
    middle = rows[FIRST + timedelta(days=2)]
    assert middle["state"] == "no_closing" and middle["opening_cents"] == 101_000


# -- the property: a world of days, some of whose files lack a line and some of which never
# came; the walk names exactly the days that lack a line, and never walks a day with no file


@st.composite
def worlds(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(2, 9))
    amounts = [
        draw(st.lists(st.integers(-50_000, 50_000).filter(bool), max_size=4)) for _ in range(n)
    ]
    missing = draw(st.sets(st.integers(1, n - 2), max_size=max(0, n - 2))) if n > 2 else set()
    removed = {
        i: draw(st.integers(0, len(amounts[i]) - 1))
        for i in range(n)
        if i not in missing and amounts[i] and draw(st.booleans())
    }
    return {"amounts": amounts, "missing": missing, "removed": removed,
            "opening": draw(st.integers(-10**9, 10**9))}  # fmt: skip


def build(world: dict[str, Any], data: DataDir, *, openings: bool) -> None:
    balance = world["opening"]
    for i, amounts in enumerate(world["amounts"]):
        start, balance = balance, balance + sum(amounts)
        if i in world["missing"]:
            continue
        lines = [a for k, a in enumerate(amounts) if world["removed"].get(i) != k]
        day_file(data, FIRST + timedelta(days=i), lines, start if openings else None, balance)


@settings(max_examples=25)
@given(world=worlds())
def test_the_walk_finds_exactly_the_days_that_lack_a_line(world: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(Path(tmp) / "data").ensure()
        build(world, data, openings=True)  # CNAB 240, camt: each file opens and closes its day
        rows = walk(data)
    for i in range(len(world["amounts"])):
        row = rows[FIRST + timedelta(days=i)]
        if i in world["missing"]:
            assert row["state"] == "no_file" and row["gap_cents"] is None, i
        elif i in world["removed"]:
            removed = world["amounts"][i][world["removed"][i]]
            assert row["gap_cents"] == removed, i
        else:
            assert row["gap_cents"] == 0, i


@settings(max_examples=25)
@given(world=worlds())
def test_a_walk_on_closings_only_skips_the_day_after_a_missing_one(world: dict[str, Any]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(Path(tmp) / "data").ensure()
        build(world, data, openings=False)  # OFX: LEDGERBAL, the day's closing, only
        rows = walk(data)
    for i in range(len(world["amounts"])):
        row = rows[FIRST + timedelta(days=i)]
        if i in world["missing"] or i == 0 or i - 1 in world["missing"]:
            assert row["gap_cents"] is None, i  # no file, or no known opening
        elif i in world["removed"]:
            assert row["gap_cents"] == world["amounts"][i][world["removed"][i]], i
        else:
            assert row["gap_cents"] == 0, i
