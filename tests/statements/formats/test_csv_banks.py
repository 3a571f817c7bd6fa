"""Bank and PSP CSV exports recognized by their content (`--format auto`, no mapping)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.config import DataDir
from recon.errors import StatementError
from recon.statements import import_statements
from recon.statements.formats import csv_sniff
from recon.statements.formats.csv import parse_file, resolve_profile
from recon.statements.sniff import sniff_format

from ..bank_samples import BB_SINAIS, SAMPLES
from ..conftest import view_rows


def _write(tmp_path: Path, name: str, text: str, encoding: str) -> Path:
    path = tmp_path / f"{name}.csv"
    path.write_bytes(text.encode(encoding))
    return path


@pytest.mark.parametrize("saved_again", [False, True])
@pytest.mark.parametrize(("name", "text", "encoding", "layout", "lines", "period"), SAMPLES)
def test_bank_export_read_exactly(
    tmp_path, name, text, encoding, layout, lines, period, saved_again: bool
):
    # saved_again: the export re-saved as a one-column CSV, each line one quoted field
    # ('"Data,""Dependencia Origem"",""Histórico"",...,""Valor"","', published BB files)
    path = _write(tmp_path, name, _saved_again(text) if saved_again else text, encoding)
    assert sniff_format(path) == "csv"
    profile = resolve_profile(None, path)
    assert profile.name == layout
    result = parse_file(path, profile)
    assert result.bad == []
    got = [(r[2], r[4], r[8]) for r in result.all_rows()]
    assert got == lines
    assert result.info["period"] == period
    for row in result.all_rows():
        assert row[3] == ("debit" if row[2] < 0 else "credit")


@pytest.mark.parametrize(("name", "text", "encoding", "layout", "lines", "period"), SAMPLES)
def test_bank_export_imports_with_format_auto(
    tmp_path, name, text, encoding, layout, lines, period
):
    path = _write(tmp_path, name, text, encoding)
    data = DataDir(tmp_path / "data").ensure()
    report = import_statements([path], data=data)
    assert (report.read, report.imported, report.quarantined) == (len(lines), len(lines), 0)
    rows = view_rows(data)
    assert sorted(r["amount_cents"] for r in rows) == sorted(c for c, _, _ in lines)
    again = import_statements([path], data=data)
    assert again.imported == 0 and again.duplicate == len(lines)


def test_bb_detailed_export_reads_its_detail_column(tmp_path):
    """Banco do Brasil's detailed export (its "Excel" sheet, 11 columns): the PIX's time,
    the payer's document and name are in "Detalhamento Hist.", beside "Histórico"."""
    text = (
        "Data;Observação;Data Balancete;Agência Origem;Lote;Número Documento;Cód. Histórico;"
        "Histórico;Valor R$;Inf.;Detalhamento Hist.\n"
        "02/11/2026;;02/11/2026;0000;14397;110201;821;Pix - Recebido;150,00;C;"
        "31/10 10:12 00052998224725 JOAO VITOR\n"
        "02/11/2026;;02/11/2026;0000;13105;110202;144;Pix - Enviado;80,50;D;"
        "02/11 11:00 Maria Souza\n"
    )
    path = _write(tmp_path, "extrato-bb", text, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert result.bad == []
    got = [(r[2], r[4], r[8], r[9]) for r in result.all_rows()]
    assert got == [
        (15000, "pix_in", "JOAO VITOR", "***.982.247-**"),
        (-8050, "pix_out", "Maria Souza", None),
    ]
    described = [r[11] for r in result.all_rows()]
    assert described[0] == "Pix - Recebido - 31/10 10:12 00052998224725 JOAO VITOR"


def test_card_statement_lines_are_never_pix(tmp_path):
    text = "date,title,amount\n2026-11-03,PIX IFOOD E18236120202611011000s0123456789,10.00\n"
    path = _write(tmp_path, "card", text, "utf-8")
    row = parse_file(path, resolve_profile(None, path)).all_rows()[0]
    assert (row[2], row[4], row[5]) == (-1000, "other", None)


def test_bradesco_footer_is_reported_not_read(tmp_path):
    from ..bank_samples import BRADESCO

    path = _write(tmp_path, "bradesco", BRADESCO, "cp1252")
    result = parse_file(path, resolve_profile(None, path))
    assert len(result.all_rows()) == 2
    assert any("ends the table" in w and "2 rows after it" in w for w in result.warnings)
    assert result.checks == ["running balance verified on 2 lines"]


def test_running_balance_mismatch_names_the_line(tmp_path):
    from ..bank_samples import INTER_CONTA

    bad = INTER_CONTA.replace("-250,00;2.742,51", "-250,00;2.742,50")
    path = _write(tmp_path, "inter", bad, "utf-8")
    with pytest.raises(StatementError, match="running balance") as info:
        parse_file(path, resolve_profile(None, path))
    assert info.value.line == 8


def test_balance_written_in_the_amount_column_is_checked(tmp_path):
    from ..bank_samples import BB

    bad = BB.replace('"Saldo do dia","","","1.130,00"', '"Saldo do dia","","","1.131,00"')
    path = _write(tmp_path, "bb", bad, "latin-1")
    with pytest.raises(StatementError, match="balance row says 113100 cents"):
        parse_file(path, resolve_profile(None, path))


def test_unknown_shape_names_headers_and_nearest_layout(tmp_path):
    path = _write(tmp_path, "x", "Quando;Quanto;Quem\n01/11/2026;1,00;Fulano\n", "utf-8")
    with pytest.raises(StatementError) as info:
        resolve_profile(None, path)
    message = str(info.value)
    assert "headers seen ['Quando', 'Quanto', 'Quem']" in message
    assert "nearest layout" in message


def test_unknown_shape_nearest_is_the_closest_bank(tmp_path):
    # Nubank's header with the amount column renamed: nearest is Nubank (conta)
    path = _write(tmp_path, "x", "Data,Quantia2,Identificador,Descrição\n", "utf-8")
    with pytest.raises(StatementError, match=r"nearest layout nubank-conta"):
        resolve_profile(None, path)


def test_generic_english_header(tmp_path):
    text = "Date;Description;Amount;Balance\n2026-11-01;PIX RECEBIDO - ANA;1,234.56;1,234.56\n"
    path = _write(tmp_path, "en", text, "utf-8")
    profile = resolve_profile(None, path)
    assert (profile.name, profile.decimal_mark, profile.date_format) == ("generic", ".", "%Y-%m-%d")
    row = parse_file(path, profile).all_rows()[0]
    assert (row[2], row[4], row[8]) == (123456, "pix_in", "ANA")


@pytest.mark.parametrize(
    ("header", "credit", "debit"),
    [
        ("Tipo de Transação", "(+)", "(-)"),
        ("Tipo de Lançamento", "+", "-"),
        ("Tipo de Lançamento", "( + )", "( - )"),
        ("Sentido", "Crédito", "Débito"),  # no flag name: its values say it
        ("Sentido", "C", "D"),
    ],
)
def test_sign_words_in_a_flag_column_give_the_direction(tmp_path, header, credit, debit):
    text = BB_SINAIS.replace("Tipo de Transação", header)
    text = text.replace(",(+),", f",{credit},").replace(",(-),", f",{debit},")
    path = _write(tmp_path, "extrato", text, "utf-8")
    profile = resolve_profile(None, path)
    assert (profile.sign, profile.columns["indicator"]) == ("indicator", header)
    result = parse_file(path, profile)
    assert [(r[2], r[4]) for r in result.all_rows()] == [
        (-800, "pix_out"),
        (400, "pix_in"),
        (-542, "other"),
        (542, "other"),
    ]


def test_flag_past_the_sniffed_rows_is_never_a_guess(tmp_path):
    rows = "".join(f'05/11/2026,"1,00",(-),Compra {i},X\n' for i in range(450))
    for bad, reason in [("(?)", "'(?)' is no credit/debit word"), ("", "no credit/debit flag")]:
        text = BB_SINAIS + rows + f'06/11/2026,"9,00",{bad},Compra,X\n'
        path = _write(tmp_path, "extrato", text, "utf-8")
        result = parse_file(path, resolve_profile(None, path))
        assert len(result.all_rows()) == 454
        ((line, field, said, _),) = result.bad
        assert (line, field) == (457, "Tipo de Transação")
        assert said.startswith(reason) and "the amount carries no sign" in said


def test_signed_amount_flagged_the_other_way_is_an_error(tmp_path):
    from ..bank_samples import BB

    bad = BB.replace('"-370,00","Saída"', '"-370,00","Entrada"')
    path = _write(tmp_path, "bb", bad, "latin-1")
    ((line, field, said, _),) = parse_file(path, resolve_profile(None, path)).bad
    assert (line, field) == (3, "Tipo Lançamento")
    assert said == "a negative amount flagged 'Entrada' (credit)"


@pytest.mark.parametrize("daily", ["", ";Saldo do Dia"])  # a layout told by a column, too
def test_unsigned_amounts_and_a_text_that_says_debit_are_refused(tmp_path, daily):
    text = (
        f"Data;Descrição;Valor{daily}\n"
        f"01/11/2026;Pix - Recebido Maria;10,00{daily and ';10,00'}\n"
        f"02/11/2026;Pix - Enviado Joao;8,00{daily and ';2,00'}\n"
    )
    path = _write(tmp_path, "extrato", text, "utf-8")
    with pytest.raises(StatementError, match="the amounts carry no sign") as info:
        parse_file(path, resolve_profile(None, path))
    assert (info.value.line, info.value.field) == (3, "Descrição")
    assert "'Pix - Enviado Joao' says it is a debit" in str(info.value)
    with pytest.raises(StatementError, match="carry no sign"):  # a folder: refused, not skipped
        import_statements([tmp_path], data=DataDir(tmp_path / "data").ensure())


def test_flag_column_holding_other_values_is_refused(tmp_path):
    text = "Data;Histórico;Valor;D/C\n01/11/2026;TED;10,00;C\n02/11/2026;TED;8,00;E\n"
    path = _write(tmp_path, "extrato", text, "utf-8")
    with pytest.raises(StatementError, match="column 'D/C' gives the direction") as info:
        parse_file(path, resolve_profile(None, path))
    assert (info.value.line, info.value.field) == (3, "D/C")


def test_unsigned_amounts_read_as_written_when_nothing_says_otherwise(tmp_path):
    # a column of one bare "-" is a placeholder, not a D/C flag; no text says debit
    text = "Data;Descrição;Valor;Categoria\n01/11/2026;TED MARIA;10,00;-\n02/11/2026;DOC;8,00;-\n"
    path = _write(tmp_path, "extrato", text, "utf-8")
    profile = resolve_profile(None, path)
    assert profile.sign == "signed"
    assert [r[2] for r in parse_file(path, profile).all_rows()] == [1000, 800]


def test_named_layout_sign_convention_is_known(tmp_path):
    # Nubank signs its debits: an all-positive file is all credits, whatever its texts say
    from ..bank_samples import NUBANK_CONTA

    text = NUBANK_CONTA.replace("-37.79", "37.79").replace("-1200.50", "1200.50")
    path = _write(tmp_path, "nubank", text, "utf-8")
    assert all(r[2] > 0 for r in parse_file(path, resolve_profile(None, path)).all_rows())


# Card statements outside the named card layouts.


@pytest.mark.parametrize(
    "text",
    [
        "\ufeffdata;lançamento;valor (R$)\n01/11/2026;PIX QRS PADARIA01/11;-20,00\n"
        "02/11/2026;TED 102.0001 MARIA;1.500,00\n",  # Itaú's account CSV: same names
        "data,lançamento,valor\n01/11/2026,LOJA,-20.00\n02/11/2026,TED MARIA,1500.00\n",
    ],
)
def test_itau_card_layout_needs_its_whole_shape(tmp_path, text):
    path = _write(tmp_path, "extrato", text, "utf-8")
    profile = resolve_profile(None, path)
    assert (profile.name, profile.card, profile.sign) == ("generic", False, "signed")
    assert [r[2] for r in parse_file(path, profile).all_rows()] == [-2000, 150000]


def test_card_columns_with_a_daily_balance_column(tmp_path):
    text = "Data;Descrição;Portador;Valor;Saldo do Dia\n01/11/2026;LOJA;MARIA;10,00;5,00\n"
    path = _write(tmp_path, "c", text, "utf-8")
    profile = resolve_profile(None, path)
    assert (profile.name, profile.card, profile.daily_balance) == ("cartao", True, True)
    assert [r[2] for r in parse_file(path, profile).all_rows()] == [-1000]


def test_card_columns_beside_a_merchants_sales_columns_are_no_card(tmp_path):
    text = (
        "Data da Transação;Portador;Cartão;Bandeira;Valor Líquido\n"
        "01/11/2026;MARIA SILVA;****1234;VISA;97,50\n"
        "02/11/2026;JOAO SOUZA;****9876;MASTERCARD;-10,00\n"
    )
    path = _write(tmp_path, "vendas", text, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert [r[2] for r in result.all_rows()] == [9750, -1000]  # a sale is money in
    (warning,) = result.warnings
    assert "['Portador', 'Cartão'] are a card's" in warning
    assert "['Bandeira', 'Valor Líquido'] are a merchant's sales report" in warning


def test_card_columns_with_purchases_already_negative_keep_the_signs(tmp_path):
    text = (
        "Data;Descrição;Portador;Valor\n"
        "01/11/2026;LOJA;MARIA SILVA;-20,00\n"
        "02/11/2026;MERCADO;MARIA SILVA;-30,00\n"
        "03/11/2026;ESTORNO LOJA;MARIA SILVA;20,00\n"
    )
    path = _write(tmp_path, "gastos", text, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert [r[2] for r in result.all_rows()] == [-2000, -3000, 2000]
    assert result.info["card"] is False
    assert "most amounts are negative" in result.warnings[0]


def test_a_file_named_fatura_is_a_warning_not_a_card(tmp_path):
    text = "Data;Descrição;Valor\n01/11/2026;LOJA;20,00\n02/11/2026;MERCADO;-30,00\n"
    path = _write(tmp_path, "Fatura-2026-11", text, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert [r[2] for r in result.all_rows()] == [2000, -3000]  # read as written
    (warning,) = result.warnings
    assert "the file name says 'Fatura' (a card bill?)" in warning
    report = import_statements([path], data=DataDir(tmp_path / "data").ensure())
    assert report.per_file[0].warnings == (warning,)
    # a named layout, or a card by its columns, is told by content: no warning
    for name, sample in (("fatura-itau", "ITAU_CARTAO"), ("fatura-nubank", "NUBANK_CONTA")):
        from .. import bank_samples

        path = _write(tmp_path, name, getattr(bank_samples, sample), "utf-8")
        assert parse_file(path, resolve_profile(None, path)).warnings == []


def test_toml_profile_reads_a_card_bill(tmp_path):
    from recon.errors import ConfigError
    from recon.statements.formats.csv import load_profile

    toml = tmp_path / "cartao.toml"
    toml.write_text(
        'delimiter = ";"\ndecimal_mark = ","\ndate_format = "%d/%m/%Y"\nsign = "inverted"\n'
        'card = true\n[columns]\nbooked_at = "Quando"\namount = "Quanto"\n'
        'description = "Onde"\n',
        encoding="utf-8",
    )
    path = _write(
        tmp_path,
        "c",
        "Quando;Onde;Quanto\n01/11/2026;PIX LOJA;20,00\n02/11/2026;PAGO;-50,00\n",
        "utf-8",
    )
    rows = parse_file(path, load_profile(toml)).all_rows()
    assert [(r[2], r[4]) for r in rows] == [(-2000, "other"), (5000, "other")]
    toml.write_text('card = "yes"\n[columns]\nbooked_at = "d"\namount = "v"\n')
    with pytest.raises(ConfigError, match="card must be true or false"):
        load_profile(toml)


# Inter's 5-column export whose rows stop before the (empty) Saldo: `…;Valor` and no `;`.
INTER_SEM_SALDO = (
    " Extrato Conta Corrente \n"
    "Conta ;72385499\n"
    "Período ;01/07/2026 a 31/07/2026\n"
    "\n"
    "Data Lançamento;Histórico;Descrição;Valor;Saldo\n"
    "07/07/2026;Pagamento efetuado;Fatura cartão Inter;-1.184,18\n"
    "07/07/2026;Pix recebido;MARIA SILVA;100,00\n"
    "06/07/2026;Pix recebido;MARIA SILVA;1.084,00;3.000,00\n"
)


def test_row_short_of_trailing_optional_columns_is_read(tmp_path):
    path = _write(tmp_path, "inter", INTER_SEM_SALDO, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert result.bad == []
    assert [(r[0], r[2], r[4], r[8]) for r in result.all_rows()] == [
        (6, -118418, "other", None),
        (7, 10000, "pix_in", "MARIA SILVA"),
        (8, 108400, "pix_in", "MARIA SILVA"),
    ]


def test_row_short_of_a_required_column_is_an_error(tmp_path):
    text = INTER_SEM_SALDO + "08/07/2026;Pix recebido;JOAO\n"
    path = _write(tmp_path, "inter", text, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert len(result.all_rows()) == 3
    ((line, field, reason, _),) = result.bad
    assert (line, field, reason) == (9, "columns", "3 columns, the header has 5 (no Valor)")


def test_running_balance_checked_across_a_row_without_saldo(tmp_path):
    from ..bank_samples import INTER_CONTA

    short = INTER_CONTA.replace("-250,00;2.742,51", "-250,00")
    path = _write(tmp_path, "inter", short, "utf-8")
    result = parse_file(path, resolve_profile(None, path))
    assert [r[2] for r in result.all_rows()] == [100000, -25000, -5590]
    assert result.checks == ["running balance verified on 1 lines"]
    path = _write(tmp_path, "inter", short.replace("-55,90;2.686,61", "-55,90;2.686,62"), "utf-8")
    with pytest.raises(StatementError, match="running balance"):
        parse_file(path, resolve_profile(None, path))


def _saved_again(text: str) -> str:
    """The export saved once more as a one-column CSV: each line one quoted field (a byte
    order mark stays at the start of the file, where a program writes one)."""
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    for line in text.removeprefix(bom).splitlines():
        writer.writerow([line])
    return bom + out.getvalue()


_cell = st.text(alphabet=st.sampled_from('ab ,;"\t1.-/'), max_size=8)


@given(st.lists(st.lists(_cell, min_size=2, max_size=5), min_size=2, max_size=8))
def test_rows_unwrapped_are_the_rows_written(rows: list[list[str]]) -> None:
    inner = io.StringIO()
    csv.writer(inner, lineterminator="\n").writerows(rows)
    text = inner.getvalue()
    if "\n" in "".join(c for row in rows for c in row) or "\r" in text:
        return  # pragma: no cover - the alphabet has no line breaks
    lines = text.splitlines()
    if not all(any(m in line for m in ",;\t") for line in lines if line.strip()):
        return  # pragma: no cover - two cells always give a delimiter
    assert csv_sniff.unwrap_rows(_saved_again(text)) == "\n".join(lines) + "\n"
    # an export that is not wrapped is left exactly as it is
    assert csv_sniff.unwrap_rows(text) == text


@pytest.mark.parametrize(
    "text",
    [
        '"a","b"\n"1","2"\n',  # quoted cells, several per line: a normal CSV
        '"a,b"\nc,d\n',  # one line is wrapped, the next is not
        '"only one line, wrapped"\n',
        '"x"\n"y"\n',  # one column without a delimiter inside: not rows
    ],
)
def test_texts_that_are_not_wrapped_rows_stay_as_they_are(text: str) -> None:
    assert csv_sniff.unwrap_rows(text) == text


def test_wrapped_rows_keep_crlf_and_blank_lines() -> None:
    wrapped = '"a,""b"""\r\n\r\n"1,""2"""\r\n'
    assert csv_sniff.unwrap_rows(wrapped) == 'a,"b"\r\n\r\n1,"2"\r\n'
