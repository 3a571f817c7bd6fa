"""import_statements as a whole: counts, idempotency, sniffing, storage and the views."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from recon.catalog import connect
from recon.config import DataDir
from recon.errors import StatementError, StatementParseError, UsageError
from recon.schemas import (
    STATEMENT_COVERAGE_SCHEMA,
    STATEMENT_LINES_SCHEMA,
    STATEMENT_QUARANTINE_SCHEMA,
)
from recon.statements import import_statements
from recon.statements.sniff import sniff_bytes

from .conftest import FIXTURES, view_rows


def _stored_files(data: DataDir) -> list[Path]:
    return sorted(data.statements.rglob("*"))


def test_counts_add_up_and_second_import_adds_nothing(data_dir: DataDir) -> None:
    first = import_statements([FIXTURES], data_dir)
    assert first.read == first.imported + first.duplicate + first.quarantined
    for f in first.per_file:
        assert f.read == f.imported + f.duplicate + f.quarantined
    lines = view_rows(data_dir)
    assert len(lines) == first.imported
    assert len({r["line_id"] for r in lines}) == len(lines)
    files = _stored_files(data_dir)

    second = import_statements([FIXTURES], data_dir)
    assert (second.read, second.imported, second.duplicate) == (first.read, 0, first.read)
    assert second.new_versions == 0
    assert view_rows(data_dir) == lines
    assert _stored_files(data_dir) == files  # not even an empty file


def test_order_of_import_does_not_change_the_table(tmp_path: Path) -> None:
    a, b = DataDir(tmp_path / "a").ensure(), DataDir(tmp_path / "b").ensure()
    some = [FIXTURES / "pix.json", FIXTURES / "statement.ofx", FIXTURES / "extrato_psp.csv"]
    for path in some:
        import_statements([path], a)
    import_statements(list(reversed(some)), b)
    keep = ("line_id", "amount_cents", "kind", "end_to_end_id", "refund_of", "txid", "booked_at")
    rows_a = sorted(tuple(r[k] for k in keep) for r in view_rows(a))
    rows_b = sorted(tuple(r[k] for k in keep) for r in view_rows(b))
    assert rows_a == rows_b


def test_same_file_twice_in_one_import(data_dir: DataDir, tmp_path: Path) -> None:
    copy = tmp_path / "copy.json"
    shutil.copy(FIXTURES / "pix.json", copy)
    report = import_statements([FIXTURES / "pix.json", copy], data_dir)
    assert (report.read, report.imported, report.duplicate) == (8, 4, 4)
    assert report.new_versions == 0  # the copy's lines differ only in where they were read


def test_overlapping_ranges(data_dir: DataDir, tmp_path: Path) -> None:
    """Two bank CSVs covering overlapping days: the common days are not counted twice."""
    text = (FIXTURES / "extrato_banco.csv").read_text(encoding="cp1252").splitlines()
    header, body = text[:5], text[5:]
    first = tmp_path / "a.csv"
    second = tmp_path / "b.csv"
    first.write_text("\n".join(header + body[:5]) + "\n", encoding="cp1252")  # days 1-2
    second.write_text("\n".join(header + body[2:]) + "\n", encoding="cp1252")  # days 2-3
    r1 = import_statements([first], data_dir)
    r2 = import_statements([second], data_dir)
    assert r1.imported + r2.imported == 5
    assert r2.duplicate == 3
    assert len(view_rows(data_dir)) == 5


def test_view_columns_are_the_schema(data_dir: DataDir) -> None:
    con = connect(data_dir)
    try:
        empty = [d[0] for d in con.execute("SELECT * FROM statement_lines").description]
        assert empty == STATEMENT_LINES_SCHEMA.names
        import_statements([FIXTURES], data_dir)
        con.close()
        con = connect(data_dir)
        cur = con.execute("SELECT * FROM statement_lines")
        assert [d[0] for d in cur.description] == STATEMENT_LINES_SCHEMA.names
        q = con.execute("SELECT * FROM statement_quarantine")
        assert [d[0] for d in q.description] == STATEMENT_QUARANTINE_SCHEMA.names
    finally:
        con.close()


def test_storage_layout_and_schema(data_dir: DataDir) -> None:
    import_statements([FIXTURES / "pix.json", FIXTURES / "statement.ofx"], data_dir)
    parts = sorted(
        p.relative_to(data_dir.statements).parts[0] for p in data_dir.statements.rglob("*.parquet")
    )
    assert parts == ["coverage", "source=ofx", "source=pix-json"]
    for path in data_dir.statements.glob("source=*/*.parquet"):
        schema = pq.read_schema(path)
        assert schema.names[: len(STATEMENT_LINES_SCHEMA)] == STATEMENT_LINES_SCHEMA.names
    for path in data_dir.statements.glob("coverage/*.parquet"):
        assert pq.read_schema(path).names == STATEMENT_COVERAGE_SCHEMA.names
    assert not list(data_dir.statements.rglob(".tmp-*"))


def test_failed_write_leaves_nothing_visible(
    data_dir: DataDir, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from recon.statements import stored

    def boom(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "rename", boom)
    with pytest.raises(OSError):
        import_statements([FIXTURES / "pix.json"], data_dir)
    monkeypatch.undo()
    assert stored.line_files(data_dir) == []
    assert not list(data_dir.statements.rglob("*.parquet"))
    assert not list(data_dir.statements.rglob(".tmp-*"))  # the temp file was removed


def test_a_bad_file_stops_everything(data_dir: DataDir, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"pix": [{"endToEndId": "E1", "valor": "x", "horario": "2026-11-01T00:00:00Z"}]}'
    )
    with pytest.raises(StatementParseError):
        import_statements([FIXTURES / "pix.json", bad], data_dir)
    assert view_rows(data_dir) == []


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("pix.json", "pix-json"),
        ("statement.ofx", "ofx"),
        ("statement_v2.ofx", "ofx"),
        ("extrato.cnab240", "cnab240"),
        ("extrato_psp.csv", "csv"),
        ("extrato_banco.csv", "csv"),
    ],
)
def test_sniff_by_content(name: str, fmt: str) -> None:
    # the name is not looked at except as a last hint for CSV
    assert sniff_bytes((FIXTURES / name).read_bytes()[:8192], "renamed.bin") == fmt


def test_unknown_format(data_dir: DataDir, tmp_path: Path) -> None:
    path = tmp_path / "notes.bin"
    path.write_bytes(b"\x00\x01 nothing to see")
    with pytest.raises(StatementError, match="unknown statement format"):
        import_statements([path], data_dir)
    with pytest.raises(UsageError, match="unknown statement format"):
        import_statements([path], data_dir, format="mt940")
    with pytest.raises(UsageError, match="no such"):
        import_statements([tmp_path / "missing.ofx"], data_dir)


def test_folder_skips_what_is_not_a_statement(data_dir: DataDir, tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "pix.json", tmp_path / "pix.json")
    (tmp_path / "README.md").write_text("# hello\n")
    (tmp_path / "expected_breaks.csv").write_text("category,intent_id\nx,y\n")
    report = import_statements([tmp_path], data_dir)
    assert report.imported == 4
    assert sorted(Path(p).name for p in report.skipped_files) == [
        "README.md",
        "expected_breaks.csv",
    ]


def test_account_label(data_dir: DataDir) -> None:
    a = import_statements([FIXTURES / "pix.json"], data_dir, account="itau-0001")
    b = import_statements([FIXTURES / "pix.json"], data_dir, account="bb-0002")
    assert a.imported == b.imported == 4  # another account: other lines
    assert {r["account"] for r in view_rows(data_dir)} == {"itau-0001", "bb-0002"}


def test_account_from_config(data_dir: DataDir) -> None:
    data_dir.config_path.write_text('[statements]\naccount = "conta-principal"\n')
    import_statements([FIXTURES / "pix.json"], data_dir)
    assert {r["account"] for r in view_rows(data_dir)} == {"conta-principal"}


def test_same_fee_in_every_format_is_one_line(data_dir: DataDir, tmp_path: Path) -> None:
    """A non-PIX line whose bank document number is the same in each format is one line."""
    psp = tmp_path / "p.csv"
    psp.write_text(
        (FIXTURES / "extrato_psp.csv").read_text(encoding="utf-8-sig").splitlines()[0]
        + "\n2026-11-02T23:50:00-03:00,TARIFA,-3.50,,,,,,,,TARIFA PIX,000123\n",
        encoding="utf-8",
    )
    import_statements([FIXTURES / "extrato_banco.csv", psp], data_dir)
    fees = [r for r in view_rows(data_dir) if r["kind"] == "fee"]
    assert len(fees) == 1
    assert fees[0]["amount_cents"] == -350


def test_one_bad_time_among_many_is_found(data_dir: DataDir, tmp_path: Path) -> None:
    import json

    items = [
        {
            "endToEndId": f"E18236120202611011000{n:011d}",
            "valor": "1.00",
            "horario": "2026-11-01T10:00:00-03:00" if n != 7000 else "2026-11-01 25:00",
        }
        for n in range(9000)
    ]
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"pix": items}))
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.line, err.value.field) == (7001, "booked_at")
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.imported, report.quarantined) == (8999, 1)
