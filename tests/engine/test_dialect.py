"""The translation to Spark SQL: every model, check and catalog view translates, and calls
only functions on the Spark list (a new DuckDB-only spelling cannot land unseen)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.engine import dialect
from recon.engine.base import load_models, sql_files


def _macros() -> dict[str, dialect.Macro]:
    found: dict[str, dialect.Macro] = {}
    for folder in ("staging", "intermediate", "marts", "checks"):
        for name, text in sql_files(folder):
            if name.startswith("_"):
                found.update(dialect.parse_macros(text))
    return found


def _texts() -> list[tuple[str, str]]:
    """(where, DuckDB text) of every statement recon runs on an engine."""
    texts = [(f"{m.layer}/{m.file}", m.sql) for m in load_models() if not m.is_script]
    texts += [(f"checks/{n}", t) for n, t in sql_files("checks") if not n.startswith("_")]
    for name, text in sql_files("catalog"):
        for i, statement in enumerate(re.split(r";\s*(?:\n|$)", re.sub(r"--[^\n]*", "", text))):
            body = re.sub(r"(?is)^\s*CREATE\s+OR\s+REPLACE\s+VIEW\s+\w+\s+AS\s+", "", statement)
            if body.strip():
                texts.append((f"catalog/{name}#{i}", body))
    return texts


def _columns(_query: str) -> list[tuple[str, str]]:
    return [("category", "string"), ("money_side", "string")]


def test_every_text_translates_to_spark_with_listed_functions_only() -> None:
    macros = _macros()
    translated = [
        (where, dialect.to_spark(text, macros, columns_of=_columns)) for where, text in _texts()
    ]
    assert len(translated) >= 40
    assert dialect.check_functions(translated) == []


def test_a_duckdb_only_function_is_caught() -> None:
    text = dialect.to_spark("select jaro_winkler_similarity(a, b) as y from t")
    assert dialect.check_functions([("new.sql", text)]) == [
        "new.sql: JAROWINKLER_SIMILARITY is not in the Spark function list"
    ]


def test_macros_expand_with_their_arguments() -> None:
    macros = dialect.parse_macros(
        "CREATE OR REPLACE TEMP MACRO twice(x) AS x + x;\n"
        "CREATE OR REPLACE TEMP MACRO quad(y) AS twice(twice(y));\n"
    )
    assert dialect.to_spark("select quad(a + 1) as q from t", macros) == (
        "SELECT ((((((a + 1)) + ((a + 1)))) + ((((a + 1)) + ((a + 1)))))) AS q FROM t"
    )


def test_a_macro_with_the_wrong_arity_is_an_error() -> None:
    macros = dialect.parse_macros("CREATE OR REPLACE TEMP MACRO twice(x) AS x + x;")
    with pytest.raises(ValueError, match="takes 1 arguments, got 2"):
        dialect.to_spark("select twice(a, b) from t", macros)


def test_a_file_that_is_not_macros_is_refused() -> None:
    with pytest.raises(ValueError, match="not a macro definition"):
        dialect.parse_macros("select 1;")


@pytest.mark.parametrize(
    ("duckdb", "spark"),
    [
        ("select l[1], l[-1], l[2:-2] from t",
         "SELECT TRY_ELEMENT_AT(l, 1), TRY_ELEMENT_AT(l, -1), SLICE(l, 2, GREATEST(SIZE(l) - 2, 0)) FROM t"),
        ("select array_length(l) from t", "SELECT SIZE(l) FROM t"),
        ("select timezone('America/Sao_Paulo', ts) from t",
         "SELECT CAST(FROM_UTC_TIMESTAMP(ts, 'America/Sao_Paulo') AS TIMESTAMP_NTZ) FROM t"),
        ("select epoch(ts) from t", "SELECT CAST(UNIX_MICROS(ts) AS DOUBLE) / 1000000 FROM t"),
        ("select timezone(z, cast(d as timestamp)) from t",
         "SELECT TO_UTC_TIMESTAMP(CAST(d AS TIMESTAMP_NTZ), z) FROM t"),
        ("select format('{:,}', n) from t", "SELECT FORMAT_NUMBER(n, 0) FROM t"),
        ("select regexp_full_match(s, '[0-9]{11}') from t",
         "SELECT REGEXP_LIKE(s, '^(?:[0-9]{11})$') FROM t"),
        ("select epoch_us(ts) from t", "SELECT UNIX_MICROS(ts) FROM t"),
        ("select hash(x) from t", "SELECT XXHASH64(x) FROM t"),
        ("select unnest(l) + 1 as b from t", "SELECT EXPLODE(TRANSFORM(l, __v -> __v + 1)) AS b FROM t"),
        ("select string_agg(distinct a, ', ' order by a) from t",
         "SELECT ARRAY_JOIN(ARRAY_SORT(COLLECT_SET(a)), ', ') FROM t"),
        ("select (a, b) > (c, d) from t", "SELECT STRUCT(a, b) > STRUCT(c, d) FROM t"),
        # Spark has no TIME: its CAST('00:00:00' AS TIMESTAMP) is today's midnight
        ("select cast(timezone(z, ts) as time) = time '00:00:00' from t",
         "SELECT DATE_FORMAT(CAST(FROM_UTC_TIMESTAMP(ts, z) AS TIMESTAMP_NTZ), 'HH:mm:ss.SSSSSS')"
         " = '00:00:00.000000' FROM t"),
    ],
)  # fmt: skip
def test_rewrites(duckdb: str, spark: str) -> None:
    assert dialect.to_spark(duckdb) == spark


@given(st.lists(st.integers(min_value=1, max_value=5), min_size=0, max_size=8))
def test_a_slice_keeps_duckdbs_meaning(values: list[int]) -> None:
    """l[2:-2] (DuckDB: the second to the second-to-last, inclusive) has as many elements
    as the Spark SLICE computes: max(n - 2, 0)."""
    import duckdb

    got = duckdb.sql(f"select ({values}::int[])[2:-2]").fetchall()[0][0]
    assert len(got) == max(len(values) - 2, 0)
    assert got == values[1:-1]
