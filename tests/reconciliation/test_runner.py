"""The model runner's storage conventions and its out-of-memory retry."""

from __future__ import annotations

import logging

import duckdb
import pytest

from recon.engine.duck import DuckDBEngine
from recon.reconciliation import runner


def _models() -> list[runner.Model]:
    return [
        runner.Model("things", "staging", "things.sql", "SELECT 'a' AS id UNION ALL SELECT 'b'", key="thing_key"),
        runner.Model("pairs", "intermediate", "pairs.sql", "SELECT thing_key, id FROM things"),
        runner.Model("shown", "marts", "shown.sql", "SELECT id FROM pairs", view=True),
    ]  # fmt: skip


def test_surrogate_keys_are_dense_row_positions_and_views_stay_views():
    con = duckdb.connect()
    assert runner.run_models(con, _models()) == ["things", "pairs", "shown"]
    keys = sorted(r[0] for r in con.execute("SELECT thing_key FROM things").fetchall())
    assert keys == [0, 1]
    kinds = dict(
        con.execute(
            "SELECT table_name, 'table' FROM duckdb_tables() WHERE database_name = 'recon_work' "
            "UNION ALL SELECT view_name, 'view' FROM duckdb_views() WHERE temporary AND NOT internal"
        ).fetchall()
    )
    assert kinds == {"things__rows": "table", "things": "view", "pairs": "table", "shown": "view"}
    runner.drop_tables(con, ["things", "pairs", "shown"])
    assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall() == [(0,)]


def test_model_tables_shadow_catalog_views_of_the_same_name():
    con = duckdb.connect()
    con.execute("CREATE VIEW pairs AS SELECT 'catalog' AS id")  # like the catalog's run views
    runner.run_models(con, _models())
    assert sorted(con.execute("SELECT id FROM pairs").fetchall()) == [("a",), ("b",)]
    runner.drop_tables(con, ["things", "pairs", "shown"])
    assert con.execute("SELECT id FROM pairs").fetchall() == [("catalog",)]


def test_work_tables_on_disk_live_in_a_scratch_file(tmp_path):
    con = duckdb.connect()
    runner.use_work_database(con, tmp_path / "work.duckdb")
    runner.run_models(con, _models())
    path = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = 'recon_work'"
    ).fetchall()[0][0]
    assert path == str(tmp_path / "work.duckdb")
    assert sorted(con.execute("SELECT thing_key, id FROM pairs").fetchall()) == [(0, "a"), (1, "b")]
    runner.use_work_database(con)  # attached already: kept
    assert con.execute("SELECT count(*) FROM pairs").fetchall() == [(2,)]


def test_header_lines_declare_keys_and_views():
    models = {m.name: m for m in runner.load_models()}
    assert models["stg_intents"].key == "intent_key"
    assert models["stg_statement_lines"].key == "line_key"
    assert models["recon_matches"].view and models["stg_intent_history"].view
    assert not models["int_matches"].view and not models["int_matches"].key
    assert models["int_balance_walk"].only_with == "source_balance_files"


def test_a_model_only_with_an_empty_source_is_built_empty_without_reading():
    con = duckdb.connect()
    con.execute("CREATE VIEW stated AS SELECT 1 AS n WHERE false")
    # what the model reads would fail if it ran: only its plan is made, and pruned
    con.execute("CREATE VIEW costly AS SELECT CAST('not a number' AS INTEGER) AS n")
    walk = runner.Model(
        "walk", "intermediate", "walk.sql", "SELECT n, n + 1 AS m FROM costly", only_with="stated"
    )
    runner.run_models(con, [walk])
    assert con.execute("SELECT count(*) FROM walk").fetchall() == [(0,)]
    assert [c[0] for c in con.execute("DESCRIBE walk").fetchall()] == ["n", "m"]
    con.execute("CREATE OR REPLACE VIEW stated AS SELECT 1 AS n")
    with pytest.raises(RuntimeError, match="not a number"):
        runner.run_models(con, [walk])


def test_a_model_out_of_memory_is_retried_on_one_thread(monkeypatch, caplog):
    con = duckdb.connect()
    con.execute("SET threads = 2")
    real, calls = DuckDBEngine._build, []

    def flaky(engine: DuckDBEngine, model: runner.Model) -> None:
        calls.append((model.name, engine.threads()))
        if model.name == "pairs" and engine.threads() > 1:
            raise duckdb.OutOfMemoryException("Out of Memory Error: failed to pin block")
        real(engine, model)

    monkeypatch.setattr(DuckDBEngine, "_build", flaky)
    with caplog.at_level(logging.WARNING, logger="recon.engine.duck"):
        runner.run_models(con, _models())
    assert ("pairs", 2) in calls and ("pairs", 1) in calls
    assert DuckDBEngine(con).threads() == 2  # restored
    assert "retrying on one thread" in caplog.text
    assert con.execute("SELECT count(*) FROM pairs").fetchall() == [(2,)]


def test_out_of_memory_on_one_thread_names_the_model(monkeypatch):
    con = duckdb.connect()
    con.execute("SET threads = 2")

    def broke(engine: DuckDBEngine, model: runner.Model) -> None:
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to pin block")

    monkeypatch.setattr(DuckDBEngine, "_build", broke)
    with pytest.raises(RuntimeError, match=r"recon/models/staging/things.sql: Out of Memory"):
        runner.run_models(con, _models())
    assert DuckDBEngine(con).threads() == 2


@pytest.mark.parametrize("on_disk", [False, True])
def test_configure_sizes_the_engine_for_memory_or_disk(tmp_path, on_disk):
    from recon.reconciliation import ReconcileSettings

    con = duckdb.connect()
    runner.configure(con, ReconcileSettings(memory_limit="256MB"), tmp_path, on_disk=on_disk)

    def setting(name: str) -> str:
        return str(con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0])

    path = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = 'recon_work'"
    ).fetchall()[0][0]
    if on_disk:
        assert path == str(tmp_path / "work.duckdb")
        assert setting("block_allocator_memory") != "0 bytes"
        assert setting("fsync_mode").upper() == "NONE"
    else:
        assert path is None or path == ":memory:" or not path
        assert setting("block_allocator_memory") == "0 bytes"
    assert setting("preserve_insertion_order").lower() == "false"
