"""Stated balances on object storage: the Delta table statements/balances holds each balance
once however often its file is imported, and the walk reads as on a local directory."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recon import catalog, lake
from recon.config import DataDir
from recon.statements.importer import import_statements
from tests.lake.conftest import S3
from tests.shared import daily_ofx


def walk(data: DataDir) -> pd.DataFrame:
    return catalog.sql("SELECT * FROM statement_balances ORDER BY account, day", data)


def test_balances_on_s3_are_stored_once_and_walk_as_on_a_local_dir(s3: S3, tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    daily_ofx(files)
    local = DataDir(tmp_path / "local").ensure()
    remote = DataDir.resolve(s3.uri())
    for data in (local, remote, remote):  # the second remote import adds nothing
        import_statements([files], data, account="itau-0001")
    stated = catalog.sql("SELECT count(*) AS n FROM statement_stated_balances", remote)
    assert stated["n"][0] == 5
    assert any(
        uri.endswith(".parquet") for uri, _p, _s in remote.table(lake.STATEMENT_BALANCES).files()
    )
    pd.testing.assert_frame_equal(walk(local), walk(remote))
    assert list(walk(remote)["state"]).count("no_file") == 3
