"""The merged statement_lines view keeps the most precise booking time of a line."""

from __future__ import annotations

from datetime import UTC, datetime

from recon import catalog, testing
from recon.config import DataDir
from recon.schemas import STATEMENT_LINES_SCHEMA


def _version(data: DataDir, fmt: str, booked_at: datetime, reference: str) -> None:
    row = {name: None for name in STATEMENT_LINES_SCHEMA.names}
    row.update(
        line_id="same-line",
        source_format=fmt,
        source_file=f"extrato.{fmt}",
        source_line=1,
        account="default",
        booked_at=booked_at,
        amount_cents=-12_345,
        direction="debit",
        kind="pix_out",
        end_to_end_id="E1111111120261102173200000000001",
        bank_reference=reference,
        imported_at=datetime(2026, 11, 3, tzinfo=UTC),
    )
    testing.statement_lines(data, [row], source_format=fmt, batch="b")


def test_exact_time_from_ofx_beats_date_only_cnab(data_dir: DataDir) -> None:
    # CNAB 240 carries only the date: stored as local midnight (03:00 UTC in Sao Paulo).
    _version(data_dir, "cnab240", datetime(2026, 11, 2, 3, 0, tzinfo=UTC), "cnab-doc")
    _version(data_dir, "ofx", datetime(2026, 11, 2, 17, 32, 5, tzinfo=UTC), "FITID-1")
    con = catalog.connect(data_dir)
    rows = con.execute(
        "select source_format, booked_at, bank_reference from statement_lines"
    ).fetchall()
    assert len(rows) == 1
    source_format, booked_at, bank_reference = rows[0]
    assert source_format == "cnab240"  # lineage still from the higher-ranked format
    assert booked_at == datetime(2026, 11, 2, 17, 32, 5, tzinfo=UTC)
    assert bank_reference == "cnab-doc"


def test_date_only_everywhere_keeps_the_date(data_dir: DataDir) -> None:
    _version(data_dir, "cnab240", datetime(2026, 11, 2, 3, 0, tzinfo=UTC), "cnab-doc")
    con = catalog.connect(data_dir)
    (booked_at,) = con.execute("select booked_at from statement_lines").fetchone()  # type: ignore[misc]
    assert booked_at == datetime(2026, 11, 2, 3, 0, tzinfo=UTC)
