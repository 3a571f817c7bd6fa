"""`recon reconcile --engine spark`, `[engine] kind` in recon.toml, and what a user without
Java or pyspark is told."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from recon import catalog
from recon.cli import main
from recon.errors import ConfigError
from recon.reconciliation import ReconcileSettings, load_run
from recon.testing.jobs import sandbox_job
from tests.engine.test_spark_parity import assert_same_run

KEYS = {
    "recon_exceptions": "category, intent_id, end_to_end_id, line_id, break_id",
    "recon_matches": "line_id, intent_id",
}


def _views(data: Path) -> dict[str, list[tuple]]:
    out = {}
    for view, order in KEYS.items():
        frame = catalog.sql(f"select * exclude (run_id) from {view} order by {order}", data)
        if "first_seen_run" in frame:
            frame = frame.drop(columns=["first_seen_run", "state"])
        frame = frame.astype(object).where(frame.notna(), None)  # NaN never equals NaN
        out[view] = [tuple(r) for r in frame.itertuples(index=False)]
    return out


@pytest.mark.slow
def test_reconcile_engine_spark_gives_the_same_views(tmp_path: Path, capsys) -> None:
    _sandbox, first = sandbox_job(2, tmp_path)
    data = first.path.parent.parent
    as_of = first.summary.as_of
    assert main(["reconcile", "--data", str(data), "--as-of", as_of]) in (0, 1)
    duckdb_views = _views(data)
    assert main(["reconcile", "--data", str(data), "--as-of", as_of, "--engine", "spark"]) in (0, 1)
    out = capsys.readouterr().out
    assert "run written to" in out
    spark_views = _views(data)
    assert len(duckdb_views["recon_exceptions"]) >= 15  # the world plants 17 breaks
    assert spark_views == duckdb_views
    # and every file the two runs published, row for row (this world is the parity suite's
    # seed 2: one Spark run checks the command line and the engine both)
    written = re.findall(r"^run written to (.+)$", out, re.MULTILINE)
    assert len(written) == 2, out
    duck_run, spark_run = (load_run(path) for path in written)
    assert_same_run(duck_run, spark_run)


def test_an_unknown_engine_is_a_usage_error(data_dir, capsys) -> None:
    with pytest.raises(SystemExit) as info:
        main(["reconcile", "--data", str(data_dir.root), "--engine", "sparkle"])
    assert info.value.code == 2
    assert "invalid choice: 'sparkle'" in capsys.readouterr().err


def test_engine_kind_in_recon_toml(tmp_path: Path) -> None:
    config = tmp_path / "recon.toml"
    config.write_text('[engine]\nkind = "spark"\n')
    assert ReconcileSettings.load(None, str(config)).engine == "spark"
    config.write_text('[engine]\nkind = "postgres"\n')
    with pytest.raises(ConfigError, match=r"\[engine\] kind: expected one of duckdb, spark"):
        ReconcileSettings.load(None, str(config))
    config.write_text('[engine]\nkin = "spark"\n')
    with pytest.raises(ConfigError, match=r"\[engine\] unknown setting 'kin'"):
        ReconcileSettings.load(None, str(config))


def test_without_java_the_spark_engine_says_what_to_install(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    _sandbox, first = sandbox_job(1, tmp_path)
    import recon.engine.spark as spark

    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(spark.shutil, "which", lambda _name: None)
    data = first.path.parent.parent
    (data / "recon.toml").write_text('[engine]\nkind = "spark"\n')
    code = main(["reconcile", "--data", str(data)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        "recon: error: the Spark engine needs Java 17+ (`java` not found): apt-get install "
        "openjdk-17-jre-headless, or set JAVA_HOME"
    )


@pytest.mark.slow
def test_a_local_spark_session_leaves_no_folder_where_recon_ran(
    tmp_path: Path, monkeypatch
) -> None:
    """Spark's default warehouse is `./spark-warehouse`: a user running recon from a
    project folder would find an empty one there after every Spark run."""
    from recon.engine.spark import local_session

    monkeypatch.chdir(tmp_path)
    session = local_session()
    session.sql("select 1 as x").createOrReplaceTempView("probe")
    assert session.sql("select * from probe").collect()[0].x == 1
    warehouse = session.conf.get("spark.sql.warehouse.dir")
    assert str(tmp_path) not in warehouse
    assert not (tmp_path / "spark-warehouse").exists()
