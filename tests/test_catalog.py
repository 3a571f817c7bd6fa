"""The catalog's views exist with their full columns on an empty data directory."""

from __future__ import annotations

from recon import catalog
from recon.config import DataDir
from recon.schemas import EXCEPTIONS_SCHEMA, INTENTS_SCHEMA, STATEMENT_LINES_SCHEMA


def test_views_exist_on_empty_data_dir(data_dir: DataDir) -> None:
    con = catalog.connect(data_dir)
    names = {
        r[0]
        for r in con.execute("select view_name from duckdb_views() where not internal").fetchall()
    }
    assert set(catalog.VIEW_NAMES) <= names
    cols = [r[0] for r in con.execute("describe intents").fetchall()]
    assert cols == INTENTS_SCHEMA.names
    cols = [r[0] for r in con.execute("describe statement_lines").fetchall()]
    assert cols == STATEMENT_LINES_SCHEMA.names
    cols = [r[0] for r in con.execute("describe recon_exceptions").fetchall()]
    assert cols == EXCEPTIONS_SCHEMA.names
    assert con.execute("select count(*) from intents").fetchone() == (0,)


def test_write_database(data_dir: DataDir) -> None:
    import duckdb

    path = catalog.write_database(data_dir)
    con = duckdb.connect(str(path), read_only=True)
    assert con.execute("select count(*) from intents").fetchone() == (0,)
