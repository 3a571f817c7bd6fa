"""CSV amounts written with a D/C letter ("150,00 C", "50,00 D"), as Banco do Brasil, Caixa,
Sicoob and many PDF-to-CSV conversions write them: the letter is the sign, read once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recon.cli import main
from recon.config import DataDir
from recon.statements.formats.csv import parse_file, resolve_profile
from recon.statements.formats.ofx import ofx_cents
from recon.statements.lines import LineError

from ..conftest import view_rows

# Banco do Brasil style: no D/C column, the letter beside the figure, balances "C"/"D" too.
BB_LETRAS = (
    "Data;Histórico;Valor;Saldo\n"
    "31/10/2026;Saldo Anterior;;1.000,00 C\n"
    "03/11/2026;Pix - Recebido 03/11 10:15 MARIA DA SILVA;150,00 C;1.150,00 C\n"
    "04/11/2026;Pix - Enviado 04/11 11:20 JOAO SOUZA;50,00 D;1.100,00 C\n"
    "05/11/2026;Tarifa Pacote de Serviços;1.234,56D;134,56D\n"
)


def _write(tmp_path: Path, text: str, name: str = "extrato.csv", encoding: str = "cp1252") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_bb_letters_are_the_sign(tmp_path: Path) -> None:
    path = _write(tmp_path, BB_LETRAS)
    profile = resolve_profile(None, path)
    assert profile.refused is None  # the amounts carry a sign: nothing to refuse
    assert profile.columns["amount"] == "Valor"
    assert profile.sign == "signed"
    result = parse_file(path, profile)
    assert result.bad == []
    assert [(r[2], r[3], r[4]) for r in result.all_rows()] == [
        (15000, "credit", "pix_in"),
        (-5000, "debit", "pix_out"),
        (-123456, "debit", "fee"),
    ]
    assert result.info["decimal_mark"] == ","  # voted by the marked values too
    assert result.checks == ["running balance verified on 3 lines"]  # "134,56D" is negative


def test_bb_letters_import_and_inspect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(
        tmp_path,
        "Data;Histórico;Valor\n"
        + "".join(line.rsplit(";", 1)[0] + "\n" for line in BB_LETRAS.splitlines()[2:4]),
    )
    data = tmp_path / "data"
    assert main(["statements", "inspect", str(path), "--json", "--data", str(data)]) == 0
    (f,) = json.loads(capsys.readouterr().out)["files"]
    assert (f["lines"], f["malformed"]) == (2, 0)
    assert (f["credits"]["cents"], f["debits"]["cents"]) == (15000, -5000)
    assert f["kinds"] == {"pix_in": 1, "pix_out": 1}
    assert main(["statements", "import", str(path), "--data", str(data)]) == 0
    rows = sorted(view_rows(DataDir(data)), key=lambda r: r["source_line"])
    assert [(r["amount_cents"], r["direction"], r["kind"]) for r in rows] == [
        (15000, "credit", "pix_in"),
        (-5000, "debit", "pix_out"),
    ]


@pytest.mark.parametrize(
    ("amount", "flag", "cents"),
    [
        ("50,00 D", "D", -5000),  # letter and flag agree: a debit once, not turned twice
        ("150,00 C", "C", 15000),
        ("-50,00", "D", -5000),
        ("50,00", "D", -5000),
        ("50,00 D", "", -5000),  # a blank flag: the amount's own letter
    ],
)
def test_flag_column_beside_a_marked_amount(
    tmp_path: Path, amount: str, flag: str, cents: int
) -> None:
    text = (
        "Data;Histórico;Valor;D/C\n"
        "03/11/2026;PAGAMENTO;10,00 C;C\n"
        f"04/11/2026;LANCAMENTO;{amount};{flag}\n"
    )
    path = _write(tmp_path, text)
    profile = resolve_profile(None, path)
    assert (profile.sign, profile.columns["indicator"]) == ("indicator", "D/C")
    result = parse_file(path, profile)
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [1000, cents]


@pytest.mark.parametrize(("amount", "flag"), [("150,00 C", "D"), ("50,00 D", "C")])
def test_flag_that_contradicts_the_letter_is_an_error(tmp_path: Path, amount: str, flag: str):
    text = (
        "Data;Histórico;Valor;D/C\n"
        "03/11/2026;PAGAMENTO;10,00 C;C\n"
        f"04/11/2026;LANCAMENTO;{amount};{flag}\n"
    )
    path = _write(tmp_path, text)
    result = parse_file(path, resolve_profile(None, path))
    assert [r[2] for r in result.all_rows()] == [1000]
    ((line, field, reason, _),) = result.bad
    assert (line, field) == (3, "D/C")
    assert "credit" in reason and "debit" in reason


def test_toml_flag_beside_a_marked_amount(tmp_path: Path) -> None:
    profile = tmp_path / "p.toml"
    profile.write_text(
        'delimiter = ";"\ndecimal_mark = ","\ndate_format = "%d/%m/%Y"\nsign = "indicator"\n'
        'debit_values = ["DEB"]\n'
        '[columns]\nbooked_at = "Data"\namount = "Valor"\nindicator = "Tipo"\n',
        encoding="utf-8",
    )
    path = _write(
        tmp_path,
        "Data;Valor;Tipo\n"
        "03/11/2026;50,00 D;DEB\n"  # agree
        "03/11/2026;50,00 D;\n"  # blank flag: the letter
        "03/11/2026;50,00;DEB\n"
        "03/11/2026;50,00 D;CRED\n",  # the flag says credit: contradiction
        encoding="utf-8",
    )
    result = parse_file(path, resolve_profile(str(profile), path))
    assert [r[2] for r in result.all_rows()] == [-5000, -5000, -5000]
    assert [(b.source_line, b.field) for b in result.bad] == [(5, "Tipo")]


def test_card_rule_turns_only_unmarked_amounts(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "date,title,amount\n"
        "2026-11-03,Burger King,72.80\n"  # a purchase, positive in a card file: a debit
        "2026-11-04,Studio Z,106.66 D\n"  # the letter already says debit: not turned again
        "2026-11-05,Pagamento recebido,4558.53 C\n",
        encoding="utf-8",
    )
    profile = resolve_profile(None, path)
    assert (profile.name, profile.sign) == ("nubank-cartao", "inverted")
    result = parse_file(path, profile)
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [-7280, -10666, 455853]


def test_split_columns_refuse_a_letter_of_the_other_side(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "Data;Histórico;Crédito;Débito\n"
        "03/11/2026;A;150,00 C;\n"
        "03/11/2026;B;;50,00 D\n"
        "03/11/2026;C;20,00 D;\n",
    )
    result = parse_file(path, resolve_profile(None, path))
    assert [r[2] for r in result.all_rows()] == [15000, -5000]
    ((line, field, reason, _),) = result.bad
    assert (line, field) == (4, "Crédito") and "marked debit" in reason


def test_ofx_trnamt_takes_no_letters() -> None:
    # OFX signs TRNAMT itself (and TRNTYPE): a letter there is a damaged file, not a sign.
    assert ofx_cents("-150,00") == -15000
    with pytest.raises(LineError, match="not an amount"):
        ofx_cents("150,00 D")


def test_spreadsheet_text_cells_with_letters(tmp_path: Path) -> None:
    """A sheet is read by the CSV machinery: amounts typed as text with a D/C letter too (the
    sheet reader took such rows for a block after the statement and left them unread)."""
    from datetime import datetime

    import xlsxwriter

    from recon.statements.importer import parse_path

    path = tmp_path / "extrato.xlsx"
    book = xlsxwriter.Workbook(str(path))
    sheet = book.add_worksheet("Extrato")
    day = book.add_format({"num_format": "dd/mm/yyyy"})
    for r, line in enumerate(BB_LETRAS.splitlines()):
        for c, cell in enumerate(line.split(";")):
            if r and c == 0:
                sheet.write_datetime(r, c, datetime.strptime(cell, "%d/%m/%Y"), day)
            elif cell:
                sheet.write_string(r, c, cell)
    book.close()
    fmt, result = parse_path(path, "auto")
    assert fmt == "spreadsheet" and result.bad == []
    assert [(r[2], r[4]) for r in result.all_rows()] == [
        (15000, "pix_in"),
        (-5000, "pix_out"),
        (-123456, "fee"),
    ]
    assert result.checks == ["running balance verified on 3 lines"]
    assert not any("not read" in w for w in result.warnings)
