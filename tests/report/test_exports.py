"""Exports a spreadsheet opens right: breaks.xlsx (R$ as numbers, currency format) and
breaks_br.csv (`;`, UTF-8 BOM, decimal commas, reais)."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

from hypothesis import given
from hypothesis import strategies as st

from recon import testing
from recon.money import MAX_CENTS, parse_cents
from recon.report import render
from recon.report.exports import (
    COLUMNS,
    XLSX_MONEY_FORMAT,
    headers,
    write_br_csv,
    write_xlsx,
)
from recon.testing import break_row

NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
ROWS = [
    break_row(
        "refund_amount_mismatch",
        1,
        expected_cents=215_610,
        actual_cents=0,
        delta_cents=-215_610,
        reason="Devolução de R$ 2.156,10 não encontrada; confira o extrato",
    ),
    break_row(
        "unmatched_credit", 2, intent_id=None, expected_cents=None, actual_cents=5, delta_cents=5
    ),
]


def _br_rows(data: bytes) -> list[list[str]]:
    assert data.startswith(b"\xef\xbb\xbf")  # the BOM: Excel reads UTF-8
    text = data.decode("utf-8-sig")
    assert "\r\n" in text
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))


def test_br_csv_semicolons_bom_decimal_commas_in_reais() -> None:
    out = io.BytesIO()
    write_br_csv(ROWS, out, lang="en")
    rows = _br_rows(out.getvalue())
    header = rows[0]
    assert header == [h for h, _, _ in COLUMNS]  # English: the headers as written
    first = dict(zip(header, rows[1], strict=True))
    assert first["expected (R$)"] == "2156,10" and first["difference (R$)"] == "-2156,10"
    assert first["at stake (R$)"] == "2156,10"
    assert first["reason"].startswith("Devolução de R$ 2.156,10")
    second = dict(zip(header, rows[2], strict=True))
    assert (
        second["intent id"] == ""
        and second["expected (R$)"] == ""
        and second["actual (R$)"] == "0,05"
    )


@given(st.integers(min_value=-MAX_CENTS, max_value=MAX_CENTS))
def test_br_csv_amounts_read_back_exactly(cents: int) -> None:
    out = io.BytesIO()
    write_br_csv([break_row("onramp_overpaid", 1, delta_cents=cents)], out)
    cell = _br_rows(out.getvalue())[1][7]
    assert "." not in cell and parse_cents(cell, decimal_mark=",") == cents


def _sheet(path: Path) -> tuple[dict[str, tuple[str | None, str | None, str | None]], list[str]]:
    """cell ref -> (type, value, number format), and the shared strings."""
    with zipfile.ZipFile(path) as z:
        sheet = ElementTree.fromstring(z.read("xl/worksheets/sheet1.xml"))
        styles = ElementTree.fromstring(z.read("xl/styles.xml"))
        shared = ElementTree.fromstring(z.read("xl/sharedStrings.xml"))
    formats = {f.get("numFmtId"): f.get("formatCode") for f in styles.iterfind(".//m:numFmt", NS)}
    xfs = [x.get("numFmtId") for x in styles.find("m:cellXfs", NS).iterfind("m:xf", NS)]
    strings = ["".join(t.text or "" for t in si.iterfind(".//m:t", NS)) for si in shared]
    cells = {}
    for c in sheet.iterfind(".//m:c", NS):
        v = c.find("m:v", NS)
        style = int(c.get("s", "0"))
        cells[c.get("r")] = (c.get("t"), v.text if v is not None else None, formats.get(xfs[style]))
    return cells, strings


def test_xlsx_money_is_numbers_in_reais_with_a_currency_format(tmp_path: Path) -> None:
    path = tmp_path / "b.xlsx"
    write_xlsx(ROWS, path)
    cells, strings = _sheet(path)
    assert strings[int(cells["A1"][1])] == "prioridade"  # pt-BR unless told otherwise
    kind, value, fmt = cells["F2"]  # expected (R$) of the first break
    assert kind is None and float(value) == 2156.10 and fmt == XLSX_MONEY_FORMAT
    assert float(cells["H2"][1]) == -2156.10 and cells["H2"][2] == XLSX_MONEY_FORMAT
    assert float(cells["G3"][1]) == 0.05
    assert "[$R$-416]" in XLSX_MONEY_FORMAT  # pt-BR currency: "R$ 2.156,10" in any Excel
    reason = [s for s in strings if s.startswith("Devolução")]
    assert reason  # text stays text, accents intact
    assert cells["J2"][0] is None and cells["J2"][1] == "1"  # age in days, a number


def test_report_writes_both_beside_breaks_csv(tmp_path: Path) -> None:
    run = testing.run(tmp_path, ROWS, run_id="run-x")
    html = render(run, charts=False)
    folder = html.parent
    assert (folder / "breaks.csv").is_file() and (folder / "breaks.parquet").is_file()
    # a category by its label, in the report's language
    assert (
        _br_rows((folder / "breaks_br.csv").read_bytes())[1][1] == "Valor da devolução divergente"
    )
    cells, _ = _sheet(folder / "breaks.xlsx")
    assert float(cells["F2"][1]) == 2156.10
    text = html.read_text(encoding="utf-8")
    assert re.search(r'href="breaks\.xlsx"', text) and 'href="breaks_br.csv"' in text
    assert not list(folder.glob(".tmp-*"))


HOSTILE = ('=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx")


@given(st.sampled_from(HOSTILE), st.sampled_from(["intent_id", "end_to_end_id", "reason",
                                                   "first_seen_run", "state"]))  # fmt: skip
def test_a_hostile_text_cell_is_text_in_every_export(value: str, key: str) -> None:
    """A cell starting with = + - @ tab or CR, whatever column it comes from, starts with `'`
    in breaks_br.csv and breaks.xlsx; a negative amount stays a number."""
    row = break_row("refund_amount_mismatch", 1, delta_cents=-2156, **{key: value})
    out = io.BytesIO()
    write_br_csv([row], out)
    header, cells = _br_rows(out.getvalue())
    assert cells[[k for _, k, _ in COLUMNS].index(key)] == "'" + value
    assert cells[header.index("diferença (R$)")] == "-21,56"
    book = io.BytesIO()
    write_xlsx([row], book)
    with zipfile.ZipFile(book) as z:
        sheet = z.read("xl/worksheets/sheet1.xml").decode()
        shared = ElementTree.fromstring(z.read("xl/sharedStrings.xml"))
    assert "<f>" not in sheet  # no formula anywhere
    strings = ["".join(t.text or "" for t in si.iterfind(".//m:t", NS)) for si in shared]
    assert "'" + value in [s.replace("_x000D_", "\r") for s in strings]


def test_breaks_csv_neutralizes_text_and_keeps_numbers(tmp_path: Path) -> None:
    row = break_row("refund_amount_mismatch", 1, delta_cents=-2156, intent_id="=1+2")
    run = testing.run(tmp_path, [row], run_id="run-h")
    folder = render(run, charts=False).parent
    [rec] = list(csv.DictReader(io.StringIO((folder / "breaks.csv").read_text("utf-8"))))
    assert rec["intent_id"] == "'=1+2" and rec["delta_cents"] == "-2156"
    assert "'=1+2" in (folder / "breaks_br.csv").read_bytes().decode("utf-8-sig")


def test_headers_and_labels_speak_the_language_the_format_stays_excel_br() -> None:
    """pt-BR by default, English on request; either way `;`, decimal comma, plain minus."""
    for lang, header, label in (
        (None, "diferença (R$)", "Valor da devolução divergente"),
        ("en", "difference (R$)", "Refund amount differs"),
    ):
        out = io.BytesIO()
        write_br_csv(ROWS, out, lang=lang)
        rows = _br_rows(out.getvalue())
        assert rows[0] == headers(COLUMNS, lang)
        first = dict(zip(rows[0], rows[1], strict=True))
        assert first[header] == "-2156,10" and rows[1][1] == label
