"""recon_suggestions: the nearest candidates of each break without its money and each
unexplained line, ranked, with what differs from a pair the matching passes would confirm."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.reconciliation import RunResult
from recon.schemas import SUGGESTIONS_SCHEMA
from recon.testing.handbuilt import T0, World, intent, line, uid

from .helpers import exception_rows, match_rows, run

M = timedelta(minutes=1)
AS_OF = T0 + timedelta(days=2)


def suggestions(result: RunResult) -> list[dict[str, Any]]:
    table = pq.read_table(result.path / "suggestions.parquet")
    assert table.schema == SUGGESTIONS_SCHEMA
    return table.to_pylist()


def by_break(result: RunResult) -> dict[str, list[dict[str, Any]]]:
    """Each break's category -> its suggestions, best first."""
    categories = {r["break_id"]: r["category"] for r in exception_rows(result)}
    out: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(suggestions(result), key=lambda r: (r["break_id"], r["rank"])):
        out.setdefault(categories[row["break_id"]], []).append(row)
    return out


def one_pair(world: World, **line_fields: Any) -> dict[str, list[dict[str, Any]]]:
    """A completed onramp of R$ 100,00 (window T0 - skew .. T0 + 1 h + 30 min) and one credit
    that the passes do not pair with it."""
    world.snapshot([intent(1, expires=T0 + timedelta(hours=1))], AS_OF)
    world.statement([line(1, **line_fields)])
    return by_break(run(world, as_of=AS_OF))


def test_amount_less_is_said_in_reais_under_both_breaks(world):
    found = one_pair(world, amount=9_900, name="JOAO SOUZA")
    for category in ("onramp_missing_credit", "unmatched_credit"):
        [row] = found[category]
        assert row["rank"] == 1
        assert row["differences"] == "amount R$ 1,00 less; payer name 'JOAO SOUZA' vs 'MARIA SILVA'"


def test_payer_name_not_compatible(world):
    found = one_pair(world, name="M SILVA")
    [row] = found["unmatched_credit"]
    assert row["differences"] == "payer name 'M SILVA' vs 'MARIA SILVA'"
    assert row["score"] == 85


def test_booked_after_the_window_closed(world):
    closed = T0 + timedelta(hours=1, minutes=30)
    found = one_pair(world, at=closed + 41 * M)
    [row] = found["unmatched_credit"]
    assert row["differences"] == "booked 41 min after the window closed"


def test_document_contradicts(world):
    found = one_pair(world, doc="***.111.222-**")
    [row] = found["onramp_missing_credit"]
    assert row["differences"] == "document contradicts"
    assert row["score"] == 75


def test_nothing_beyond_the_bounds(world):
    # three times the amount, and a week later: no candidate
    world.snapshot([intent(1, expires=T0 + timedelta(hours=1))], AS_OF + timedelta(days=7))
    world.statement([
        line(1, amount=30_000, name="JOAO SOUZA"),
        line(2, amount=10_000, at=T0 + timedelta(days=7), name="JOAO SOUZA"),
    ])  # fmt: skip
    assert suggestions(run(world, as_of=AS_OF + timedelta(days=7))) == []


def test_ranked_by_score_then_nearest_amount_three_at_most(world):
    world.snapshot([intent(1, expires=T0 + timedelta(hours=1))], AS_OF)
    world.statement([
        line(1, amount=9_000, name="JOAO SOUZA"),
        line(2, amount=9_950, name="JOAO SOUZA"),
        line(3, amount=9_990, name="JOAO SOUZA", doc="***.111.222-**"),
        line(4, amount=9_500, name="JOAO SOUZA"),
    ])  # fmt: skip
    result = run(world, as_of=AS_OF)
    lines = {r["line_id"]: r["actual_cents"] for r in exception_rows(result) if r["line_id"]}
    rows = by_break(result)["onramp_missing_credit"]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert [lines[r["line_id"]] for r in rows] == [9_950, 9_500, 9_000]
    assert [r["score"] for r in rows] == sorted((r["score"] for r in rows), reverse=True)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    amounts=st.lists(st.integers(5_000, 20_000), min_size=1, max_size=4),
    kinds=st.lists(st.sampled_from(["pix_in", "pix_out"]), min_size=4, max_size=4),
    types=st.lists(st.sampled_from(["onramp", "offramp"]), min_size=3, max_size=3),
)
def test_suggestions_pair_the_right_direction_and_nothing_matched(
    tmp_path_factory, amounts, kinds, types
):
    world = World(DataDir(tmp_path_factory.mktemp("data")))
    world.snapshot(
        [
            intent(n, type=t, amount=10_000 + 10 * n, destination="maria@example.com")
            for n, t in enumerate(types, start=1)
        ],
        AS_OF,
    )
    world.statement([line(n, kind=kinds[n - 1], amount=a) for n, a in enumerate(amounts, 1)])
    result = run(world, as_of=AS_OF)
    matched = match_rows(result)
    matched_lines = {m["line_id"] for m in matched}
    matched_intents = {m["intent_id"] for m in matched}
    breaks = {r["break_id"]: r for r in exception_rows(result)}
    line_side = {r["line_id"]: r["category"] for r in breaks.values() if r["line_id"]}
    intent_type = {uid(n): t for n, t in enumerate(types, start=1)}
    for s in suggestions(result):
        b = breaks[s["break_id"]]
        assert s["line_id"] not in matched_lines and s["intent_id"] not in matched_intents
        assert s["line_id"] == b["line_id"] or s["intent_id"] == b["intent_id"]
        assert 1 <= s["rank"] <= 3 and 0 <= s["score"] <= 100
        # the line is an unexplained one, in the direction the intent's money moves
        credit = intent_type[s["intent_id"]] == "onramp"
        assert line_side[s["line_id"]] == ("unmatched_credit" if credit else "unmatched_debit")
