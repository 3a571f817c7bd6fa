"""Spreadsheet statements (.xlsx, .xls as HTML or text): sniffed by content, read by the CSV
machinery, money exact. Workbooks are written here with xlsxwriter; a binary .xls or an .ods
cannot be written by our libraries, so .xls is tested in its HTML and text forms and .ods by
a minimal document written with zipfile (real files of each were read by hand: see
docs/statements.md)."""

from __future__ import annotations

import contextlib
import json
import zipfile
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import xlsxwriter
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.cli import main
from recon.config import DataDir
from recon.errors import StatementError
from recon.statements import import_statements
from recon.statements.formats.spreadsheet import number_text
from recon.statements.importer import parse_path
from recon.statements.inspect import inspect_statements
from recon.statements.sniff import sniff_format

E2E = "E12345678202611051200abcdefghijk"


def workbook(path: Path, sheets: dict[str, list[list[Any]]], **opts: Any) -> Path:
    """A workbook of `sheets` (rows of cells: str, int, float, date, datetime, None);
    opts: merges={sheet: [(r0, c0, r1, c1, value)]}, hidden={sheet}, chart=True."""
    book = xlsxwriter.Workbook(str(path))
    day = book.add_format({"num_format": "dd/mm/yyyy"})
    moment = book.add_format({"num_format": "dd/mm/yyyy hh:mm:ss"})
    money = book.add_format({"num_format": "#,##0.00"})
    for name, rows in sheets.items():
        ws = book.add_worksheet(name)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                if value is None:
                    continue
                if isinstance(value, datetime):
                    ws.write_datetime(r, c, value, moment)
                elif isinstance(value, date):
                    ws.write_datetime(r, c, datetime(value.year, value.month, value.day), day)
                elif isinstance(value, float):
                    ws.write_number(r, c, value, money)
                elif isinstance(value, int):
                    ws.write_number(r, c, value)
                else:
                    ws.write_string(r, c, value)
        for r0, c0, r1, c1, value in opts.get("merges", {}).get(name, []):
            ws.merge_range(r0, c0, r1, c1, value)
        if name in opts.get("hidden", set()):
            ws.hide()
    if opts.get("chart"):
        chart = book.add_chart({"type": "line"})
        first = next(iter(sheets))
        chart.add_series({"values": f"='{first}'!$D$2:$D$3"})
        book.add_chartsheet("Gráfico").set_chart(chart)
    book.close()
    return path


ITAU_PREAMBLE: list[list[Any]] = [
    ["Logotipo Itaú"],
    ["Atualização:", "06/11/2026 às 10:36:59"],
    ["Nome:", "EMPRESA EXEMPLO LTDA"],
    ["Agência:", 3750],
    ["Conta:", "10574-8"],
    [],
    ["Período: 01/11/2026 a 05/11/2026"],
    [],
    ["data", "lançamento", "ag./origem", "valor (R$)", "saldos (R$)"],
    ["lançamentos"],
]


def itau(path: Path, lines: list[list[Any]] | None = None) -> Path:
    body = lines or [
        [date(2026, 11, 3), "SALDO ANTERIOR", None, None, 1000.0],
        [date(2026, 11, 3), f"PIX RECEBIDO MARIA {E2E}", None, 1234.56, None],
        [date(2026, 11, 3), "PIX TRANSF JOAO03/11", None, -200.1, None],
        [date(2026, 11, 3), "SALDO TOTAL DISPONÍVEL DIA", None, None, 2034.46],
        [date(2026, 11, 4), "TAR PACOTE", None, -0.3, None],
        [date(2026, 11, 4), "SALDO TOTAL DISPONÍVEL DIA", None, None, 2034.16],
        [],
        ["lançamentos futuros"],
        [date(2026, 12, 1), "SEGURO CARTAO", None, -26.14, None],
    ]
    return workbook(path, {"Lançamentos": ITAU_PREAMBLE + body})


def test_xlsx_statement_reads_like_its_csv(tmp_path: Path, data_dir: DataDir) -> None:
    path = itau(tmp_path / "extrato.xlsx")
    assert sniff_format(path) == "spreadsheet"
    fmt, parsed = parse_path(path, "auto")
    rows = parsed.all_rows()
    assert fmt == "spreadsheet"
    assert [(r[0], r[2], r[4]) for r in rows] == [
        (12, 123456, "pix_in"),
        (13, -20010, "pix_out"),
        (15, -30, "fee"),
    ]
    assert rows[0][1].startswith("2026-11-03T00:00:00")
    assert rows[0][5] == E2E
    assert parsed.info["layout"] == "Itaú" and parsed.info["sheet"] == "Lançamentos"
    assert parsed.info["declared_account"] == "10574-8"
    assert parsed.info["period"] == (date(2026, 11, 1), date(2026, 11, 5))
    assert [c.basis for c in parsed.coverage or []] == ["spreadsheet preamble period"]
    assert any("ends the table" in w for w in parsed.warnings)
    assert any("section titles" in w and "row 10" in w for w in parsed.warnings)
    report = import_statements([path], data_dir)
    assert (report.imported, report.quarantined) == (3, 0)
    assert report.per_file[0].format == "spreadsheet"
    assert report.per_file[0].coverage  # the preamble's period


def test_bb_detailed_sheet_reads_its_detail_column(tmp_path: Path) -> None:
    """Banco do Brasil's "Excel" export: three rows of preamble, then 11 columns, the
    amount unsigned beside a C/D flag and the PIX's time, document and name in the last."""
    header = ["Data", "Observação", "Data Balancete", "Agência Origem", "Lote",
              "Número Documento", "Cód. Histórico", "Histórico", "Valor R$", "Inf.",
              "Detalhamento Hist."]  # fmt: skip
    rows: list[list[Any]] = [
        ["Extrato de Conta Corrente"],
        ["Agência: 1234-5   Conta: 98765-4"],
        [],
        header,
        [date(2026, 11, 2), None, date(2026, 11, 2), "0000", "14397", "110201", "821",
         "Pix - Recebido", 150.0, "C", "31/10 10:12 00052998224725 JOAO VITOR"],
        [date(2026, 11, 2), None, date(2026, 11, 2), "0000", "13105", "110202", "144",
         "Pix - Enviado", 80.5, "D", "02/11 11:00 Maria Souza"],
    ]  # fmt: skip
    path = workbook(tmp_path / "extrato-bb.xlsx", {"Extrato": rows})
    fmt, parsed = parse_path(path, "auto")
    assert fmt == "spreadsheet"
    assert [(r[2], r[4], r[8], r[9]) for r in parsed.all_rows()] == [
        (15000, "pix_in", "JOAO VITOR", "***.982.247-**"),
        (-8050, "pix_out", "Maria Souza", None),
    ]


def test_balance_rows_are_checked(tmp_path: Path) -> None:
    bad = itau(
        tmp_path / "x.xlsx",
        [
            [date(2026, 11, 3), "SALDO ANTERIOR", None, None, 1000.0],
            [date(2026, 11, 3), "PIX TRANSF JOAO03/11", None, -200.1, None],
            [date(2026, 11, 3), "SALDO TOTAL DISPONÍVEL DIA", None, None, 799.8],
        ],
    )
    with pytest.raises(StatementError, match=r"x\.xlsx sheet 'Lançamentos':13: .*79980"):
        parse_path(bad, "auto")


def test_totals_rows_end_the_table_and_saldo_final_is_checked(tmp_path: Path) -> None:
    rows: list[list[Any]] = [
        ["Extrato de conta corrente"],
        ["Data", "Histórico", "Documento", "Valor (R$)", "Saldo (R$)"],
        [date(2026, 11, 2), "SALDO ANTERIOR", None, None, 10.0],
        [date(2026, 11, 3), "PIX RECEBIDO ANA", "123", 5.25, 15.25],
        [None, "SALDO FINAL", None, None, 15.25],
        ["Total", None, None, 5.25, None],
    ]
    path = workbook(tmp_path / "santander.xlsx", {"Extrato": rows})
    _, parsed = parse_path(path, "auto")
    assert [r[2] for r in parsed.all_rows()] == [525]
    assert parsed.info["layout"] == "Santander"
    assert any("line 6 ends the table" in w for w in parsed.warnings)
    rows[4][4] = 15.26
    with pytest.raises(StatementError, match="balance row says 1526 cents"):
        parse_path(workbook(tmp_path / "bad.xlsx", {"Extrato": rows}), "auto")


def test_number_text_is_excel_precision_never_float_arithmetic() -> None:
    assert number_text(0.1 + 0.2) == "0,3"
    assert number_text(-1234.5) == "-1234,5"
    assert number_text(1e15) == "1000000000000000"
    assert number_text(12055.3, ".") == "12055.3"
    assert number_text(-0.0) == "0"
    assert number_text(7) == "7"
    assert number_text(float("nan")) == ""


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cents=st.lists(st.integers(-(10**15) + 1, 10**15 - 1), min_size=1, max_size=8),
    as_text=st.booleans(),
)
def test_cents_round_trip_through_cells(tmp_path: Path, cents: list[int], as_text: bool) -> None:
    """Random cents written as numeric cells (the nearest double, as Excel stores them) or as
    pt-BR text ("-1.234,56") read back exactly."""

    def cell(c: int) -> Any:
        if not as_text:
            return float(Decimal(c) / 100)
        whole, frac = divmod(abs(c), 100)
        return ("-" if c < 0 else "") + f"{whole:,}".replace(",", ".") + f",{frac:02d}"

    rows = [["Data", "Descrição", "Valor"]] + [
        [date(2026, 11, 3), f"TED {i}", cell(c)] for i, c in enumerate(cents)
    ]
    path = workbook(tmp_path / f"p{abs(hash(tuple(cents)))}.xlsx", {"Plan1": rows})
    _, parsed = parse_path(path, "spreadsheet")
    assert parsed.bad == []
    assert [r[2] for r in parsed.all_rows()] == cents


def test_date_cells_datetimes_and_serial_days(tmp_path: Path) -> None:
    rows: list[list[Any]] = [
        ["Data e hora", "Descrição", "Valor"],
        [datetime(2026, 11, 3, 21, 6, 5), "Pix recebido", 1.0],
        [datetime(2026, 11, 4, 0, 0, 0), "Pix recebido", 2.0],
    ]
    _, parsed = parse_path(workbook(tmp_path / "a.xlsx", {"S": rows}), "auto")
    assert [r[1][:19] for r in parsed.all_rows()] == ["2026-11-03T21:06:05", "2026-11-04T00:00:00"]
    serial = [["Data", "Histórico", "Valor"], [46329, "TED", 1.5], [46330.5, "TED", -2.0]]
    _, parsed = parse_path(workbook(tmp_path / "b.xlsx", {"S": serial}), "auto")
    assert [r[1][:19] for r in parsed.all_rows()] == ["2026-11-03T00:00:00", "2026-11-04T12:00:00"]


def test_two_row_merged_header_and_a_date_merged_down(tmp_path: Path) -> None:
    rows: list[list[Any]] = [
        ["Bradesco - Extrato"],
        [None, "Histórico", None, None],
        [None, None, "Crédito (R$)", "Débito (R$)"],
        [None, "PIX RECEBIDO", 10.0, None],
        [None, "TARIFA", None, 1.5],
        [date(2026, 11, 4), "TED", 7.0, None],
    ]
    merges = {
        "E": [
            (1, 0, 2, 0, "Data"),
            (1, 1, 2, 1, "Histórico"),
            (1, 2, 1, 3, "Valor"),
            (3, 0, 4, 0, datetime(2026, 11, 3)),
        ]
    }
    _, parsed = parse_path(workbook(tmp_path / "m.xlsx", {"E": rows}, merges=merges), "auto")
    got = [(r[0], r[1][:10], r[2]) for r in parsed.all_rows()]
    assert got == [(4, "2026-11-03", 1000), (5, "2026-11-03", -150), (6, "2026-11-04", 700)]


def test_several_sheets_summary_hidden_and_chart(tmp_path: Path) -> None:
    head = ["Data", "Descrição", "Valor"]
    sheets = {
        "Resumo": [["Saldo inicial", 10.0], ["Saldo final", 20.0]],
        "Novembro": [head, [date(2026, 11, 3), "TED A", 1.0], [date(2026, 11, 4), "TED B", 2.0]],
        "Dezembro": [head, [date(2026, 12, 1), "TED C", -3.0]],
        "Dados": [head, [date(2026, 12, 1), "TED C", -3.0]],
    }
    path = workbook(tmp_path / "w.xlsx", sheets, hidden={"Dados"}, chart=True)
    _, parsed = parse_path(path, "auto")
    rows = parsed.all_rows()
    assert [(r[0], r[2]) for r in rows] == [(2, 100), (3, 200), (5, -300)]
    said = "\n".join(parsed.warnings)
    assert "read 2 sheets" in said and "'Novembro' (2 lines" in said
    assert "'Resumo' skipped: no statement header" in said
    assert "hidden sheet 'Dados'" in said and "'Gráfico' skipped: a chart" in said
    assert parsed.info["sheet"] == ["Novembro", "Dezembro"]


def test_inspect_shows_the_sheet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = itau(tmp_path / "extrato.xlsx")
    assert main(["statements", "inspect", str(path), "--data", str(tmp_path / "d")]) == 0
    out = capsys.readouterr().out
    assert "spreadsheet (xlsx), sheet 'Lançamentos', layout Itaú [itau]" in out
    assert "header on row 9" in out and "the file names account 10574-8" in out
    assert main(["statements", "inspect", str(path), "--json", "--data", str(tmp_path)]) == 0
    (report,) = json.loads(capsys.readouterr().out)["files"]
    assert report["format"] == "spreadsheet" and report["csv"]["sheet"] == "Lançamentos"


HTML = """<html><head><meta charset="utf-8"></head><body>
<table><tr><td>Extrato</td></tr><tr><td>Período: 01/11/2026 a 30/11/2026</td></tr>
<tr><td>Conta: 12345-6</td></tr></table>
<table border=1>
<tr><th>Data</th><th>Histórico</th><th colspan=2>Documento</th><th>Valor</th><th>Saldo</th></tr>
<tr><td>03/11/2026</td><td>PIX RECEBIDO<br>ANA &amp; CIA</td><td>1</td><td></td>
<td>1.234,56</td><td>1.234,56</td></tr>
<tr><td>04/11/2026</td><td>TARIFA</td><td>2</td><td></td><td>-0,50</td><td>1.234,06</td></tr>
</table></body></html>"""


def test_xls_that_is_html(tmp_path: Path) -> None:
    path = tmp_path / "extrato.xls"
    path.write_text(HTML, encoding="utf-8")
    assert sniff_format(path) == "spreadsheet"
    _, parsed = parse_path(path, "auto")
    rows = parsed.all_rows()
    assert [(r[2], r[11]) for r in rows] == [(123456, "PIX RECEBIDO ANA & CIA"), (-50, "TARIFA")]
    assert parsed.info["workbook"] == "html"
    assert parsed.info["period"] == (date(2026, 11, 1), date(2026, 11, 30))
    assert "running balance verified on 1 lines" in parsed.checks


def test_html_entities_and_doctype_are_not_expanded(tmp_path: Path) -> None:
    path = tmp_path / "x.xls"
    path.write_text(
        '<!DOCTYPE html [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
        "<table><tr><td>Data</td><td>Histórico</td><td>Valor</td></tr>"
        "<tr><td>03/11/2026</td><td>&x;</td><td>1,00</td></tr></table>",
        encoding="utf-8",
    )
    _, parsed = parse_path(path, "auto")
    (row,) = parsed.all_rows()
    assert "root:" not in (row[11] or "")


def test_xls_that_is_text_is_a_csv(tmp_path: Path) -> None:
    path = tmp_path / "extrato.xls"
    path.write_bytes("Data\tHistórico\tValor\n03/11/2026\tPIX RECEBIDO\t10,00\n".encode("cp1252"))
    assert sniff_format(path) == "csv"
    assert [r[2] for r in parse_path(path, "auto")[1].all_rows()] == [1000]


def test_by_content_never_by_name(tmp_path: Path) -> None:
    named_csv = itau(tmp_path / "extrato.csv")
    assert sniff_format(named_csv) == "spreadsheet"
    text = tmp_path / "extrato.xlsx"
    text.write_text("Data;Histórico;Valor\n03/11/2026;TED;1,00\n", encoding="utf-8")
    assert sniff_format(text) == "csv"


def _ods(path: Path, rows_xml: str) -> Path:
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"'
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ns} '
        'office:version="1.2"><office:body><office:spreadsheet><table:table table:name="Extrato">'
        f"{rows_xml}</table:table></office:spreadsheet></office:body></office:document-content>"
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", content, zipfile.ZIP_DEFLATED)
        z.writestr("META-INF/manifest.xml", MANIFEST, zipfile.ZIP_DEFLATED)
    return path


MANIFEST = (
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest='
    '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">'
    '<manifest:file-entry manifest:full-path="/" manifest:media-type='
    '"application/vnd.oasis.opendocument.spreadsheet"/><manifest:file-entry '
    'manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>'
)


def _s(text: str) -> str:
    return (
        f'<table:table-cell office:value-type="string"><text:p>{text}</text:p></table:table-cell>'
    )


def _n(value: str) -> str:
    return f'<table:table-cell office:value-type="float" office:value="{value}"/>'


def test_ods(tmp_path: Path) -> None:
    path = _ods(
        tmp_path / "extrato.ods",
        f"<table:table-row>{_s('Data')}{_s('Histórico')}{_s('Valor')}</table:table-row>"
        f"<table:table-row>{_s('03/11/2026')}{_s('TED')}{_n('-12.34')}</table:table-row>",
    )
    assert sniff_format(path) == "spreadsheet"
    assert [r[2] for r in parse_path(path, "auto")[1].all_rows()] == [-1234]


def _error(path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    code = main(["statements", "import", str(path), "--data", str(path.parent / "data")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("recon: error: ") and str(path) in err
    assert "Traceback" not in err
    return err


def test_damaged_workbooks_are_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = itau(tmp_path / "good.xlsx").read_bytes()
    cut = tmp_path / "cut.xlsx"
    cut.write_bytes(good[: len(good) // 2])
    assert "damaged or unreadable" in _error(cut, capsys)
    ole = tmp_path / "garbage.xls"
    ole.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"W\x00o\x00r\x00k\x00b\x00o\x00o\x00k\x00" * 40
    )
    assert "damaged or unreadable xls workbook" in _error(ole, capsys)
    locked = tmp_path / "locked.xlsx"
    locked.write_bytes(
        b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + "EncryptedPackage".encode("utf-16-le") * 8
    )
    assert "password-protected" in _error(locked, capsys)


def test_xml_spreadsheet_2003_is_refused_clearly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "extrato.xls"
    path.write_text(
        '<?xml version="1.0"?><Workbook xmlns="urn:schemas-microsoft-com:office:spreadsheet">'
        "<Worksheet><Table><Row><Cell><Data>Data</Data></Cell></Row></Table></Worksheet>"
        "</Workbook>",
        encoding="utf-8",
    )
    assert "XML Spreadsheet 2003" in _error(path, capsys)


def test_a_huge_sparse_sheet_is_refused_before_it_is_loaded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "sparse.xlsx"
    book = xlsxwriter.Workbook(str(path))
    ws = book.add_worksheet()
    ws.write(0, 0, "Data")
    ws.write(1048575, 16383, "x")
    book.close()
    assert "recon reads sheets of at most" in _error(path, capsys)
    ods = _ods(
        tmp_path / "sparse.ods",
        f"<table:table-row>{_s('Data')}</table:table-row><table:table-row "
        'table:number-rows-repeated="1000000"><table:table-cell/></table:table-row>'
        f'<table:table-row><table:table-cell table:number-columns-repeated="16000"/>{_s("x")}'
        "</table:table-row>",
    )
    assert "recon reads sheets of at most" in _error(ods, capsys)


def test_no_statement_sheet_names_what_it_saw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = workbook(tmp_path / "cotas.xlsx", {"Plan1": [["Grupo", "Cota", "Nome"], ["A", 1, "x"]]})
    err = _error(path, capsys)
    assert "no sheet of this xlsx workbook has a statement header" in err
    assert "'Grupo', 'Cota', 'Nome'" in err


def test_a_folder_skips_a_workbook_that_is_no_statement(tmp_path: Path, data_dir: DataDir) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    itau(folder / "extrato.xlsx")
    workbook(folder / "breaks.xlsx", {"breaks": [["categoria", "intent"], ["x", "y"]]})
    report = import_statements([folder], data_dir)
    assert report.imported == 3 and report.skipped_files == (str(folder / "breaks.xlsx"),)
    reports, errors = inspect_statements([folder])
    assert errors == [] and any(r.get("skipped") for r in reports)


def test_a_bad_line_is_quarantined_with_its_row(tmp_path: Path, data_dir: DataDir) -> None:
    rows: list[list[Any]] = [
        ["Data", "Histórico", "Valor"],
        [date(2026, 11, 3), "TED", 1.0],
        ["31/02/2026", "TED", 2.0],
    ]
    path = workbook(tmp_path / "q.xlsx", {"S": rows})
    with pytest.raises(StatementError, match=r"q\.xlsx.*:3"):
        import_statements([path], data_dir)
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.imported, report.quarantined) == (1, 1)


def test_utf8_read_as_latin1_is_repaired(tmp_path: Path) -> None:
    rows: list[list[Any]] = [
        ["Data", "Histórico", "Valor"],
        [date(2026, 11, 3), "PAGAMENTO SERVIÃ\u0087O", -1.0],
    ]
    _, parsed = parse_path(workbook(tmp_path / "m.xlsx", {"S": rows}), "auto")
    assert parsed.all_rows()[0][11] == "PAGAMENTO SERVIÇO"


def test_csv_profile_applies_to_a_sheet(tmp_path: Path, data_dir: DataDir) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        'decimal_mark = ","\ndate_format = "%d/%m/%Y"\n[columns]\nbooked_at = "Quando"\n'
        'amount = "Quanto"\ndescription = "O quê"\n',
        encoding="utf-8",
    )
    rows: list[list[Any]] = [["Quando", "O quê", "Quanto"], [date(2026, 11, 3), "TED", -2.5]]
    path = workbook(tmp_path / "x.xlsx", {"S": rows})
    report = import_statements([path], data_dir, csv_profile=str(profile))
    assert report.imported == 1


_BASE: list[bytes] = []


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_damaged_workbooks_never_crash(tmp_path: Path, data: st.DataObject) -> None:
    """A workbook cut short or with bytes changed is read, or is one StatementError."""
    if not _BASE:  # one base for every example (xlsxwriter stamps the time it wrote)
        _BASE.append(itau(tmp_path / "base.xlsx").read_bytes())
    body = bytearray(_BASE[0])
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, len(body) - 1))
        body[at] = data.draw(st.integers(0, 255))
    body = body[: data.draw(st.integers(8, len(body)))]
    path = tmp_path / "mutant.xlsx"
    path.write_bytes(bytes(body))
    with contextlib.suppress(StatementError):
        parse_path(path, "auto")


def test_text_amounts_with_a_d_c_letter(tmp_path: Path) -> None:
    """Banco do Brasil's and Sicoob's workbooks write amounts as text with a D/C letter
    ("150,00 C", "1.234,56 D"): read by the CSV reader's rule, the letter is the sign."""
    path = workbook(
        tmp_path / "extrato.xlsx",
        {
            "Extrato": [
                ["Data", "Histórico", "Valor"],
                [date(2026, 11, 3), "PIX RECEBIDO MARIA", "1.234,56 C"],
                [date(2026, 11, 3), "PIX ENVIADO JOAO", "200,10 D"],
                [date(2026, 11, 4), "TARIFA PACOTE", "0,30D"],
            ]
        },
    )
    _, parsed = parse_path(path, "auto")
    assert [(r[2], r[4]) for r in parsed.all_rows()] == [
        (123456, "pix_in"),
        (-20010, "pix_out"),
        (-30, "fee"),
    ]
