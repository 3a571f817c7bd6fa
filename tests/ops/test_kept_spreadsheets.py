"""A spreadsheet statement kept in inbox/processed is masked cell by cell (never corrupted by
the byte-level masking of text files), still reads as the statement it was, and `recon erase`
finds a person inside it."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any

import xlsxwriter

from recon import pii
from recon.config import DataDir
from recon.ops.daily import Steps, run_daily
from recon.ops.erase import erase_document
from recon.statements.importer import parse_path
from recon.testing.daily import FakeSteps
from recon.workbook import workbook_text

CPF = "52998224725"  # a valid CPF (check digits right), no one's
CPF_SHOWN = "529.982.247-25"
CNPJ_SHOWN = "11.222.333/0001-81"
NOW = datetime(2026, 11, 20, 20, 0)


def statement(path: Path, *, people: bool = True) -> Path:
    book = xlsxwriter.Workbook(str(path))
    ws = book.add_worksheet("Extrato")
    day = book.add_format({"num_format": "dd/mm/yyyy"})
    rows: list[list[Any]] = [
        ["Extrato conta corrente"],
        ["Período: 01/11/2026 a 30/11/2026"],
        ["Data", "Histórico", "CPF/CNPJ", "Valor", "Saldo"],
        [date(2026, 11, 3), "SALDO ANTERIOR", None, None, 100.0],
        [
            date(2026, 11, 3),
            f"PIX RECEBIDO MARIA SOUZA {CPF_SHOWN}" if people else "PIX RECEBIDO",
            int(CPF) if people else None,
            1234.56,
            1334.56,
        ],
        [
            date(2026, 11, 4),
            f"PIX ENVIADO LOJA {CNPJ_SHOWN} +55 11 98765-4321" if people else "PIX ENVIADO",
            None,
            -0.56,
            1334.0,
        ],
    ]
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            if isinstance(v, date):
                ws.write_datetime(r, c, datetime(v.year, v.month, v.day), day)
            elif isinstance(v, (int, float)):
                ws.write_number(r, c, v)
            elif v is not None:
                ws.write_string(r, c, v)
    ws.merge_range(0, 0, 0, 4, "Extrato conta corrente")
    book.close()
    return path


def amounts(path: Path) -> list[int]:
    return [r[2] for r in parse_path(path, "auto")[1].all_rows()]


def test_a_kept_workbook_is_masked_cell_by_cell_and_still_reads(tmp_path: Path) -> None:
    path = statement(tmp_path / "extrato.xls")  # a bank's name; the content is what counts
    before = amounts(path)
    pii.redact_file(path)
    cells = workbook_text(path)
    assert CPF_SHOWN not in cells and CPF not in cells and CNPJ_SHOWN not in cells
    assert "98765-4321" not in cells
    assert pii.mask_document(CPF_SHOWN) in cells and pii.mask_document(CPF) in cells
    assert "MARIA SOUZA" in cells  # names are not documents: kept, as in every kept file
    assert amounts(path) == before == [123456, -56]
    _, parsed = parse_path(path, "auto")
    assert parsed.info["period"] == (date(2026, 11, 1), date(2026, 11, 30))


def test_a_workbook_naming_no_one_is_kept_as_the_bank_sent_it(tmp_path: Path) -> None:
    path = statement(tmp_path / "extrato.xlsx", people=False)
    body = path.read_bytes()
    pii.redact_file(path)
    assert path.read_bytes() == body


def test_daily_keeps_an_inbox_workbook_masked(data_dir: DataDir) -> None:
    statement(data_dir.inbox / "extrato.xlsx")
    fake = FakeSteps()
    steps = Steps(fake.extract, fake.import_statements, fake.reconcile, _render)
    result = run_daily(data_dir, steps=steps, now=NOW.replace(tzinfo=_utc()))
    assert result.imported == ("extrato.xlsx",)
    kept = data_dir.inbox / "processed" / "2026-11-20" / "extrato.xlsx"
    assert CPF_SHOWN not in workbook_text(kept)
    assert amounts(kept) == [123456, -56]


def test_erase_finds_a_person_inside_a_kept_workbook(data_dir: DataDir) -> None:
    folder = data_dir.inbox / "processed" / "2026-11-20"
    folder.mkdir(parents=True)
    named = statement(folder / "extrato.xlsx")
    pii.redact_file(named)  # as daily keeps it: the document masked in its cells
    other = statement(folder / "outro.xlsx", people=False)
    result = erase_document(data_dir, CPF_SHOWN)
    assert not named.exists() and other.exists()
    assert result.files_deleted == ["inbox/processed/2026-11-20/extrato.xlsx"]


def _utc() -> Any:
    from datetime import UTC

    return UTC


def _render(run_dir: Path) -> Path:
    from recon.report import render

    return render(run_dir, charts=False)
