"""Statement coverage: every reader reports the period its file covers, the importer keeps it
per import in `statement_coverage`, and a declared period wins."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from recon.cli.statements import parse_period
from recon.config import DataDir
from recon.errors import UsageError
from recon.statements import import_statements
from recon.statements.formats import cnab240, ofx, pix_json
from recon.statements.lines import EPOCH, Coverage, days_coverage

from .conftest import view_rows


def utc(us: int) -> datetime:
    from datetime import timedelta

    return EPOCH + timedelta(microseconds=us)


def test_ofx_dtstart_dtend_date_only_covers_whole_last_day(fixtures):
    parsed = ofx.parse_file(fixtures / "statement.ofx")
    (period,) = parsed.coverage
    assert period.basis == "ofx DTSTART/DTEND" and period.scope == "all"
    # 20261101 .. 20261103 at -3: the whole of Nov 1, 2 and 3, São Paulo time
    assert utc(period.start_us) == datetime(2026, 11, 1, 3, tzinfo=UTC)
    assert utc(period.end_us) == datetime(2026, 11, 4, 3, tzinfo=UTC)
    (v2,) = ofx.parse_file(fixtures / "statement_v2.ofx").coverage
    assert (v2.start_us, v2.end_us) == (period.start_us, period.end_us)


def test_ofx_dtend_with_a_time_is_that_instant():
    text = (
        "<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><BANKTRANLIST>"
        "<DTSTART>20261101120000[-3:BRT]<DTEND>20261102120000[-3:BRT]"
        "</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>"
    )
    (period,) = ofx.parse_text(text, "x.ofx").coverage
    assert utc(period.start_us) == datetime(2026, 11, 1, 15, tzinfo=UTC)
    assert utc(period.end_us) == datetime(2026, 11, 2, 15, tzinfo=UTC)


def test_ofx_without_a_period_leaves_it_to_the_lines():
    text = "<OFX><BANKTRANLIST><DTSTART>garbage<DTEND>20261102</BANKTRANLIST></OFX>"
    parsed = ofx.parse_text(text, "x.ofx")
    assert parsed.coverage is None
    assert any("period unreadable" in w for w in parsed.warnings)


def test_cnab240_batch_balance_dates(fixtures):
    parsed = cnab240.parse_file(fixtures / "extrato.cnab240")
    assert parsed.coverage, "each batch covers its opening .. closing balance date"
    for period in parsed.coverage:
        assert period.basis == "cnab240 balance dates"
        assert (period.end_us - period.start_us) % (86_400 * 10**6) == 0


def test_pix_json_parametros_cover_received_pix_only(fixtures):
    (period,) = pix_json.parse_file(fixtures / "pix.json").coverage
    assert period.scope == "received"
    assert utc(period.start_us) == datetime(2026, 11, 1, 3, tzinfo=UTC)
    assert utc(period.end_us) == datetime(2026, 11, 3, 3, tzinfo=UTC)


def test_pix_json_pretty_and_minified_agree(fixtures, tmp_path):
    body = json.loads((fixtures / "pix.json").read_text(encoding="utf-8"))
    minified = tmp_path / "min.json"
    minified.write_text(json.dumps(body) + "\n", encoding="utf-8")
    assert (
        pix_json.parse_file(minified).coverage
        == pix_json.parse_file(fixtures / "pix.json").coverage
    )


def test_webhook_body_covers_nothing(fixtures):
    body = json.loads((fixtures / "pix.json").read_text(encoding="utf-8"))
    parsed = pix_json.parse_documents([{"pix": body["pix"]}], "webhook")
    assert parsed.coverage == []


def test_importer_records_coverage_per_file(fixtures, tmp_path):
    data = DataDir(tmp_path / "data")
    report = import_statements([fixtures / "statement.ofx", fixtures / "extrato_psp.csv"], data)
    rows = view_rows(data, "statement_coverage")
    bases = sorted(r["basis"] for r in rows)
    assert bases == ["lines first/last day", "ofx DTSTART/DTEND"]
    assert all(r["account"] == "default" for r in rows)
    assert all(f.coverage for f in report.per_file)
    # importing again adds no coverage row (nor lines)
    import_statements([fixtures / "statement.ofx", fixtures / "extrato_psp.csv"], data)
    assert len(view_rows(data, "statement_coverage")) == 2


def test_declared_period_wins(fixtures, tmp_path):
    data = DataDir(tmp_path / "data")
    import_statements(
        [fixtures / "extrato_psp.csv"], data, period=(date(2026, 10, 30), date(2026, 11, 5))
    )
    (row,) = view_rows(data, "statement_coverage")
    assert row["basis"] == "declared"
    assert row["covered_from"] == datetime(2026, 10, 30, 3, tzinfo=UTC)
    assert row["covered_to"] == datetime(2026, 11, 6, 3, tzinfo=UTC)


def test_an_empty_statement_still_covers_its_period(tmp_path):
    """A day with no movement is a covered day: its OFX has a period and no STMTTRN."""
    f = tmp_path / "empty.ofx"
    f.write_text(
        "OFXHEADER:100\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS><BANKTRANLIST>\n"
        "<DTSTART>20261105<DTEND>20261105\n</BANKTRANLIST></STMTRS></STMTTRNRS>"
        "</BANKMSGSRSV1></OFX>\n",
        encoding="latin-1",
    )
    data = DataDir(tmp_path / "data")
    import_statements([f], data, format="ofx")
    (row,) = view_rows(data, "statement_coverage")
    assert row["lines"] == 0
    assert row["covered_from"] == datetime(2026, 11, 5, 3, tzinfo=UTC)
    assert row["covered_to"] == datetime(2026, 11, 6, 3, tzinfo=UTC)
    assert view_rows(data) == []


def test_days_coverage_is_whole_local_days():
    c = days_coverage(date(2026, 11, 1), date(2026, 11, 1), "declared")
    assert c == Coverage(c.start_us, c.start_us + 86_400 * 10**6, "declared", "all")


@pytest.mark.parametrize("text", ["2026-11-03..2026-11-01", "2026-11-01", "x..y", "2026-11-01.."])
def test_bad_period_is_a_usage_error(text):
    with pytest.raises(UsageError):
        parse_period(text)


def test_period_flag(fixtures, tmp_path):
    from recon.cli import main

    data = tmp_path / "data"
    code = main(
        ["statements", "import", str(fixtures / "extrato_psp.csv"), "--data", str(data),
         "--period", "2026-11-01..2026-11-02"]
    )  # fmt: skip
    assert code == 0
    (row,) = view_rows(DataDir(Path(data)), "statement_coverage")
    assert row["basis"] == "declared"
