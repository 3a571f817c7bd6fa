"""What a notebook user sees: real signatures and docs, exact cents, clear errors."""

from __future__ import annotations

import inspect
import pydoc
from pathlib import Path

import pandas as pd
import pytest

import recon
from recon import testing
from recon.analytics import breaks
from recon.cli import main
from recon.config import DataDir
from recon.errors import UsageError


@pytest.mark.parametrize(
    ("func", "first"), [(recon.sql, "query"), (recon.extract, "data"), (recon.reconcile, "data")]
)
def test_the_public_functions_show_their_signature_and_doc(func: object, first: str) -> None:
    sig = inspect.signature(func)  # type: ignore[arg-type]
    assert next(iter(sig.parameters)) == first
    assert inspect.getdoc(func)
    assert f"({first}" in pydoc.render_doc(func)


def test_sql_on_a_missing_data_dir_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(UsageError, match="no data directory"):
        recon.sql("select 1", tmp_path / "nowhere")
    assert main(["sql", "select 1", "--data", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recon: error: no data directory") and len(err.splitlines()) == 1


def test_sql_on_an_empty_data_dir_warns(
    data_dir: DataDir, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sql", "select count(*) n from intents", "--data", str(data_dir.root)]) == 0
    assert "holds no snapshots or statements yet" in capsys.readouterr().err


def test_cents_are_never_float(data_dir: DataDir) -> None:
    df = recon.sql("select NULL::BIGINT AS expected_cents, 1::BIGINT AS n", data_dir)
    assert df.expected_cents.dtype == pd.Int64Dtype() and df.n.dtype == "int64"
    testing.run(data_dir, [testing.break_row("unmatched_credit", 0)])
    frame = breaks(data_dir)
    cents = [c for c in frame.columns if c.endswith("_cents")]
    assert cents and all(frame[c].dtype == pd.Int64Dtype() for c in cents)


def test_a_sum_of_cents_is_an_integer_not_decimals(tmp_path: Path) -> None:
    """DuckDB sums BIGINT cents into HUGEINT; recon.sql gives integers, not Python Decimals."""
    import recon

    total = recon.sql(
        "SELECT sum(x) AS total_cents, sum(x) AS n FROM (VALUES (1), (2)) t(x)", tmp_path
    )
    assert str(total.total_cents.dtype) == "Int64" and total.total_cents.item() == 3
    assert pd.api.types.is_integer_dtype(total.n) and total.n.item() == 3
