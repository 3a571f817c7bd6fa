"""Elimination: a group of twins (lines and intents connected only to each other by
attribute candidates) with exactly one way to pair them all is paired, rule `elimination`;
any group with two ways or more (or none) stays ambiguous_match."""

from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.config import DataDir
from recon.testing.handbuilt import T0, World, e2e, intent, line, uid

from .helpers import breaks, exception_rows, matches, run

AS_OF = T0 + timedelta(hours=6)
M = timedelta(minutes=1)
WIDTH = 11  # a masked document's length: one position per intent


def _doc(shown: dict[int, str]) -> str:
    """A masked document showing `shown` digits at those positions, stars elsewhere."""
    return "".join(shown.get(k, "*") for k in range(WIDTH))


def _world(world: World, n_lines: int, n_intents: int, edges: set[tuple[int, int]]) -> None:
    """Intents and lines of one payer and amount whose masked documents make line i a
    candidate of intent j exactly when (i, j) is an edge: intent j shows 1 at position j,
    line i shows 1 there for a candidate and 2 for any other intent."""
    world.snapshot([intent(j + 1, doc=_doc({j: "1"})) for j in range(n_intents)], AS_OF)
    world.statement([
        line(i + 1, at=T0 + (10 + i) * M,
             doc=_doc({j: "1" if (i, j) in edges else "2" for j in range(n_intents)}))
        for i in range(n_lines)
    ])  # fmt: skip


def test_partial_overlap_twins_are_paired_by_elimination(world):
    """Credit 2 fits only intent B, so credit 1 can only be intent A."""
    _world(world, 2, 2, {(0, 0), (0, 1), (1, 1)})
    result = run(world)
    assert matches(result) == {
        (uid(1), e2e(1), "elimination"),
        (uid(2), e2e(2), "elimination"),
    }
    assert breaks(result) == set() and result.summary.checks_passed
    assert result.summary.matches_by_rule["elimination"] == 2


def test_twins_with_two_ways_stay_ambiguous(world):
    _world(world, 2, 2, {(0, 0), (0, 1), (1, 0), (1, 1)})
    result = run(world)
    assert {c for c, _, _ in breaks(result)} == {"ambiguous_match"}
    assert matches(result) == set()


def test_an_intent_two_lines_fit_says_it_fits_one_intent(world):
    """Two credits, one intent: no way to pair them all; each credit fits one intent."""
    _world(world, 2, 1, {(0, 0), (1, 0)})
    rows = exception_rows(run(world, lang="en"))
    assert {r["category"] for r in rows} == {"ambiguous_match"} and len(rows) == 2
    for row in rows:
        assert row["reason_code"] == "ambiguous_credit_shared"
        assert f" fits one intent by amount, payer and time, {uid(1)}, " in row["reason"]
        assert "other lines fit it too" in row["reason"]


def test_a_line_with_several_candidates_names_them(world):
    _world(world, 1, 2, {(0, 0), (0, 1)})
    (row,) = exception_rows(run(world, lang="en"))
    assert row["reason_code"] == "ambiguous_credit"
    assert f"cannot tell which: {uid(1)}, {uid(2)}." in row["reason"]


def test_a_group_of_more_than_3_lines_stays_ambiguous(world):
    """A staircase of 4 credits and 4 intents has one way, but elimination looks at groups of
    at most 3 lines: a person decides."""
    _world(world, 4, 4, {(0, 0), (0, 1), (1, 1), (1, 2), (2, 2), (2, 3), (3, 3)})
    result = run(world)
    assert matches(result) == set()
    assert {c for c, _, _ in breaks(result)} == {"ambiguous_match"}


def _components(n_lines, n_intents, edges):
    """Connected groups of the bipartite graph: (lines, intents) per group."""
    parent = {("l", i): ("l", i) for i in range(n_lines)}
    parent |= {("i", j): ("i", j) for j in range(n_intents)}

    def find(x):
        while parent[x] != x:
            x = parent[x]
        return x

    for i, j in edges:
        parent[find(("l", i))] = find(("i", j))
    groups: dict = {}
    for node in parent:
        groups.setdefault(find(node), []).append(node)
    return [([k for t, k in g if t == "l"], [k for t, k in g if t == "i"]) for g in groups.values()]


def _pairings(lines, intents, edges):
    """Every way to pair all of `lines` with all of `intents` along edges (brute force)."""
    if len(lines) != len(intents):
        return []
    return [
        list(zip(lines, perm, strict=True))
        for perm in itertools.permutations(intents)
        if all((i, j) in edges for i, j in zip(lines, perm, strict=True))
    ]


@st.composite
def groups(draw):
    n_lines, n_intents = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cells = list(itertools.product(range(n_lines), range(n_intents)))
    edges = draw(st.sets(st.sampled_from(cells)))
    return n_lines, n_intents, edges


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(group=groups())
def test_elimination_pairs_exactly_the_groups_with_one_way(tmp_path_factory, group):
    n_lines, n_intents, edges = group
    world = World(DataDir(tmp_path_factory.mktemp("data")).ensure())
    _world(world, n_lines, n_intents, edges)
    expected = set()
    ambiguous = set()
    for lines, intents in _components(n_lines, n_intents, edges):
        ways = _pairings(lines, intents, edges)
        has_edges = any(i in lines for i, _ in edges)
        if len(ways) == 1 and has_edges:
            rule = "attributes" if len(lines) == 1 else "elimination"
            expected |= {(uid(j + 1), e2e(i + 1), rule) for i, j in ways[0]}
        elif has_edges:
            ambiguous |= {e2e(i + 1) for i in lines if any(a == i for a, _ in edges)}
    result = run(world)
    assert matches(result) == expected
    got = {e for c, _, e in breaks(result) if c == "ambiguous_match"}
    assert got == ambiguous
    assert result.summary.checks_passed
