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
from recon.reconcile.engine import build

from .world import T0, World, intent

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


@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(names, names), min_size=1, max_size=30))
def test_names_compare_alike_both_ways(con, pairs) -> None:
    rows = _pairs(
        con,
        "names_compatible(norm_name(a), norm_name(b)), names_compatible(norm_name(b), norm_name(a)),"
        " names_compatible(norm_name(a), norm_name(a)),"
        " norm_name(norm_name(a)) IS NOT DISTINCT FROM norm_name(a)",
        pairs,
    )
    for a, b, ab, ba, aa, idempotent in rows:
        assert ab == ba, (a, b)
        assert aa is True, a
        assert idempotent, a


@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(keys, keys), min_size=1, max_size=30))
def test_pix_keys_compare_alike_both_ways(con, pairs) -> None:
    rows = _pairs(con, "keys_compatible(a, b), keys_compatible(b, a), keys_compatible(a, a)", pairs)
    for a, b, ab, ba, aa in rows:
        assert ab == ba, (a, b)
        assert aa is True, a


@settings(max_examples=40, deadline=None)
@given(pairs=st.lists(st.tuples(docs, docs), min_size=1, max_size=30))
def test_documents_compare_alike_both_ways(con, pairs) -> None:
    rows = _pairs(
        con,
        "docs_compatible(norm_doc(a), norm_doc(b)), docs_compatible(norm_doc(b), norm_doc(a)),"
        " docs_compatible(norm_doc(a), norm_doc(a))",
        pairs,
    )
    for a, b, ab, ba, aa in rows:
        assert ab == ba, (a, b)
        assert aa is not False, a  # NULL: nothing to compare ('*', '-')
