"""The attributes pass's compatibility tests (rules 3c, 3d, 3e) over any values: a line and an
intent are compared the same way whichever side a value is on, a value always agrees with
itself, and normalizing a name twice changes nothing."""

from __future__ import annotations

from datetime import timedelta

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon import catalog
from recon.config import DataDir
from recon.reconciliation.build import build
from recon.testing.handbuilt import T0, World, intent

NAME_WORDS = ["JOAO", "João", "PEDRO", "P", "da", "DOS", "Silva", "SIL", "52.062.865", "ME",
              "D'AVILA", "Maria", "-", ".", "E", "Ltda", "99"]  # fmt: skip
names = st.lists(st.sampled_from(NAME_WORDS), max_size=6).map(" ".join)
keys = st.one_of(
    st.sampled_from(
        [
            "a@b.c",
            "A@B.C",
            "+55 11 98765-4321",
            "11987654321",
            "(11) 98765-4321",
            "123.456.789-09",
            "12345678909",
            "***.456.789-**",
            "11.222.333/0001-81",
            "11222333000181",
            "123e4567-e89b-12d3-a456-426614174000",
            "123E4567E89B12D3A456426614174000",
            "chave-qualquer",
        ]
    ),
    st.text(alphabet="0123456789*.-/()+@ ab", min_size=1, max_size=16),
)
docs = st.one_of(
    st.sampled_from(
        [
            "***.456.789-**",
            "123.456.789-09",
            "12345678909",
            "•••.456.789-••",
            "11.222.333/0001-81",
            "**.222.333/0001-**",
            "XXX.456.789-XX",
        ]
    ),
    st.text(alphabet="0123456789*.-/•xX", min_size=1, max_size=18),
)


@pytest.fixture(scope="module")
def con(tmp_path_factory) -> duckdb.DuckDBPyConnection:
    """A connection with the engine's macros (a tiny world built once)."""
    world = World(DataDir(tmp_path_factory.mktemp("macros")))
    world.snapshot([intent(1)], T0 + timedelta(hours=1))
    con = catalog.connect(world.data)
    build(con, T0 + timedelta(hours=1))
    return con


def _pairs(con: duckdb.DuckDBPyConnection, expr: str, pairs: list[tuple[str, str]]) -> list:
    con.execute("CREATE OR REPLACE TEMP TABLE pairs (i INTEGER, a VARCHAR, b VARCHAR)")
    con.executemany(
        "INSERT INTO pairs VALUES (?, ?, ?)", [(i, a, b) for i, (a, b) in enumerate(pairs)]
    )
    return con.execute(f"SELECT a, b, {expr} FROM pairs ORDER BY i").fetchall()


# each test as a template over two values, and whether a value must agree with itself (a
# document with no digit, '*' or '-', compares as unknown: NULL)
CASES = {
    "names": ("names_compatible({x}, {y})", names, True),
    "keys": ("keys_compatible({x}, {y})", keys, True),
    "documents": ("docs_compatible(norm_doc({x}), norm_doc({y}))", docs, False),
}


@pytest.mark.parametrize("what", CASES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_values_compare_alike_both_ways(con, what: str, data: st.DataObject) -> None:
    template, values, reflexive = CASES[what]
    pairs = data.draw(st.lists(st.tuples(values, values), min_size=1, max_size=30))
    both = ", ".join(template.format(x=x, y=y) for x, y in (("a", "b"), ("b", "a"), ("a", "a")))
    for a, b, ab, ba, aa in _pairs(con, both, pairs):
        assert ab == ba, (a, b)
        assert aa is True if reflexive else aa is not False, a


@settings(max_examples=40, deadline=None)
@given(values=st.lists(names, min_size=1, max_size=30))
def test_a_name_normalized_twice_is_the_same(con, values: list[str]) -> None:
    rows = _pairs(
        con, "norm_name(norm_name(a)) IS NOT DISTINCT FROM norm_name(a)", [(v, v) for v in values]
    )
    assert all(same for _a, _b, same in rows)
