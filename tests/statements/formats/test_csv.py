"""CSV exports: the psp and bank profiles and a generic TOML mapping."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from recon.config import DataDir
from recon.errors import ConfigError, StatementError, StatementParseError, UsageError
from recon.statements import import_statements
from recon.statements.formats.csv import BANK, PSP, load_profile, parse_file, resolve_profile

from ..conftest import FIXTURES, by_e2e, view_rows

E1 = "E18236120202611011000s0123456789"
PSP_HEADER = (
    "data_hora,tipo,valor,end_to_end_id,txid,id_devolucao,e2e_original,nome_contraparte,"
    "documento_contraparte,chave_pix,descricao,id_transacao"
)


def test_profiles_detected() -> None:
    assert resolve_profile(None, FIXTURES / "extrato_psp.csv") is PSP
    assert resolve_profile(None, FIXTURES / "extrato_banco.csv") is BANK
    assert resolve_profile("bank", FIXTURES / "x") is BANK


def test_psp_fixture() -> None:
    result = parse_file(FIXTURES / "extrato_psp.csv", PSP)
    assert result.bad == []
    kinds = [(r[0], r[2], r[4]) for r in result.all_rows()]
    assert kinds == [
        (2, 11000, "pix_in"),
        (3, -123456, "pix_refund_out"),
        (4, -250000, "pix_out"),
        (5, -350, "fee"),
        (6, 4500, "pix_refund_in"),
    ]
    first = result.all_rows()[0]
    assert first[11] == "pedido ABC-123, entrega"  # quoted comma
    assert first[8:11] == ("Maria da Silva", "***.456.789-**", "12.345.678/0001-90")
    refund = result.all_rows()[1]
    assert refund[5] == "D18236120202611021200r0000000001"
    assert refund[7] == "E00000000202611011230a1b2c3d4e5f"


def test_bank_fixture(data_dir: DataDir) -> None:
    result = parse_file(FIXTURES / "extrato_banco.csv", BANK)
    assert result.bad == []
    assert [(r[0], r[2]) for r in result.all_rows()] == [
        (7, 11000),
        (8, -123456),
        (9, -250000),
        (10, -350),
        (11, 1000000),
    ]
    assert result.all_rows()[1][4] == "pix_refund_out"  # "DEVOLUÇÃO" in cp1252
    assert result.all_rows()[1][5] == "D18236120202611021200r0000000001"
    assert result.all_rows()[0][1] == "2026-11-01T00:00:00-03:00"
    assert result.checks == ["running balance verified on 4 lines"]
    import_statements([FIXTURES / "extrato_banco.csv"], data_dir)
    assert by_e2e(data_dir)[E1]["booked_at"] == datetime(2026, 11, 1, 3, tzinfo=UTC)


def test_bank_running_balance_mismatch(tmp_path: Path) -> None:
    text = (FIXTURES / "extrato_banco.csv").read_text(encoding="cp1252")
    path = tmp_path / "b.csv"
    path.write_text(text.replace("-2.628,06", "-2.628,07"), encoding="cp1252")
    with pytest.raises(StatementParseError) as err:
        parse_file(path, BANK)
    assert (err.value.line, err.value.field) == (10, "Saldo")
    path.write_text(
        text.replace("03/11/2026;SALDO DO DIA;;;7.371,94", "03/11/2026;SALDO DO DIA;;;1,00"),
        encoding="cp1252",
    )
    with pytest.raises(StatementParseError, match="balance row"):
        parse_file(path, BANK)


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ("2026-11-01T10:00:00-03:00,PIX_RECEBIDO,-1.00,E1,,,,,,,,", "valor"),  # sign vs tipo
        ("2026-11-01T10:00:00-03:00,PIX_ENVIADO,1.00,,,,,,,,,", "valor"),
        ("2026-11-01T10:00:00-03:00,PIX_RECEBIDO,abc,,,,,,,,,", "valor"),
        ("2026-11-01T10:00:00-03:00,PIX_RECEBIDO,1.001,,,,,,,,,", "valor"),
        ("2026-11-01T10:00:00-03:00,OUTRO,1.00,,,,,,,,,", "tipo"),
        ("ontem,PIX_RECEBIDO,1.00,,,,,,,,,", "data_hora"),
        (",PIX_RECEBIDO,1.00,,,,,,,,,", "data_hora"),
        ("2026-11-01T10:00:00-03:00,PIX_RECEBIDO", "columns"),
    ],
)
def test_psp_malformed(tmp_path: Path, data_dir: DataDir, row: str, field: str) -> None:
    path = tmp_path / "p.csv"
    good = "2026-11-01T10:00:00-03:00,TARIFA,-1.00,,,,,,,,tarifa,T1"
    path.write_text(f"{PSP_HEADER}\n{good}\n{row}\n", encoding="utf-8")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.line, err.value.field) == (3, field)
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.read, report.imported, report.quarantined) == (2, 1, 1)


def test_psp_naive_time_is_local(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "p.csv"
    path.write_text(
        f"{PSP_HEADER}\n2026-11-01T10:00:00,TARIFA,-1.00,,,,,,,,t,T1\n", encoding="utf-8"
    )
    import_statements([path], data_dir, csv_profile="psp")
    assert view_rows(data_dir)[0]["booked_at"] == datetime(2026, 11, 1, 13, tzinfo=UTC)


def test_missing_column_and_bad_encoding(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "p.csv"
    path.write_text(PSP_HEADER.replace("descricao", "desc") + "\n", encoding="utf-8")
    with pytest.raises(StatementParseError, match="descricao"):
        import_statements([path], data_dir, csv_profile="psp")
    path.write_bytes(PSP_HEADER.encode() + b"\n2026-11-01T10:00:00Z,TARIFA,-1.00,,,,,,,,\xe7,T\n")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir, csv_profile="psp")
    assert err.value.line == 2


GENERIC = """
[csv]
name = "cartao"
delimiter = "\\t"
decimal_mark = "auto"
encoding = "utf-8-sig"
date_format = "%d.%m.%Y %H:%M"
skip_lines = 2
sign = "indicator"
debit_values = ["D", "DEB"]

[csv.columns]
booked_at = "Quando"
amount = "Montante"
indicator = "DC"
description = "O que"
bank_reference = "Id"
end_to_end_id = "E2E"

[csv.kinds]
"""


def test_generic_toml_profile(tmp_path: Path, data_dir: DataDir) -> None:
    profile = tmp_path / "cartao.toml"
    profile.write_text(GENERIC, encoding="utf-8")
    path = tmp_path / "c.txt"
    path.write_text(
        "\ufeffExtrato do cartão\ngerado em 03/11\n"
        "Quando\tMontante\tDC\tO que\tId\tE2E\n"
        f"01.11.2026 10:00\t1.234,56\tC\tPIX RECEBIDO\tA1\t{E1}\n"
        "01.11.2026 11:00\t10.00\tDEB\tTARIFA MENSAL\tA2\t\n"
        "02.11.2026 09:00\t1.000\tD\tCOMPRA\tA3\t\n",
        encoding="utf-8",
    )
    report = import_statements([path], data_dir, csv_profile=str(profile))
    assert (report.read, report.imported) == (3, 3)
    rows = sorted(view_rows(data_dir), key=lambda r: r["booked_at"])
    assert [(r["amount_cents"], r["kind"]) for r in rows] == [
        (123456, "pix_in"),
        (-1000, "fee"),
        (-100000, "other"),  # "1.000": thousands (recon.money rule 4)
    ]
    assert rows[0]["booked_at"] == datetime(2026, 11, 1, 13, tzinfo=UTC)
    assert rows[0]["end_to_end_id"] == E1


def test_split_columns_profile(tmp_path: Path, data_dir: DataDir) -> None:
    profile = tmp_path / "split.toml"
    profile.write_text(
        'delimiter = ";"\ndecimal_mark = ","\ndate_format = "%Y-%m-%d"\nsign = "split"\n'
        '[columns]\nbooked_at = "dia"\ncredit = "credito"\ndebit = "debito"\n'
        'description = "hist"\n',
        encoding="utf-8",
    )
    path = tmp_path / "s.csv"
    path.write_text(
        "dia;credito;debito;hist\n2026-11-01;10,00;;A\n2026-11-01;;2,50;B\n2026-11-01;1,00;1,00;C\n",
        encoding="utf-8",
    )
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir, csv_profile=str(profile))
    assert err.value.line == 4
    report = import_statements([path], data_dir, csv_profile=str(profile), quarantine=True)
    assert (report.imported, report.quarantined) == (2, 1)
    assert sorted(r["amount_cents"] for r in view_rows(data_dir)) == [-250, 1000]


@pytest.mark.parametrize(
    "toml",
    [
        "[columns]\namount = 'v'\n",  # no booked_at
        "[columns]\nbooked_at = 'd'\n",  # no amount
        "sign = 'weird'\n[columns]\nbooked_at = 'd'\namount = 'v'\n",
        "[columns]\nbooked_at = 'd'\namount = 'v'\nnonsense = 'x'\n",
        "timezone = 'Mars/Olympus'\n[columns]\nbooked_at = 'd'\namount = 'v'\n",
        "[kinds]\nX = 'bogus'\n[columns]\nbooked_at = 'd'\namount = 'v'\n",
        "not toml = = =",
        "delimiter = ';'\n",  # no [columns]
    ],
)
def test_bad_profiles(tmp_path: Path, toml: str) -> None:
    path = tmp_path / "p.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(ConfigError):
        load_profile(path)


def test_unknown_shapes(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "x.csv"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(StatementError, match="csv-profile"):
        import_statements([path], data_dir)
    with pytest.raises(UsageError):
        import_statements([path], data_dir, csv_profile="nope")
    with pytest.raises(StatementParseError, match="no header"):
        import_statements([path], data_dir, csv_profile="bank")


def test_fast_path_equals_row_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The vectorized read gives exactly what the line-by-line read gives."""
    import recon.statements.formats.csv as csv_format

    extra = (
        "2026-11-04T10:00:00+00:00,PIX_RECEBIDO,+7,E60701190202611040500r0000000009,,,,"
        '"  Nome   com\u00a0 espaços ",,,"x  y",T9\n'
    )
    path = tmp_path / "p.csv"
    path.write_text((FIXTURES / "extrato_psp.csv").read_text(encoding="utf-8-sig") + extra)
    fast = parse_file(path, PSP)
    assert fast.table is not None and not fast.rows  # took the fast path
    monkeypatch.setattr(csv_format, "_fast", lambda *a, **k: None)
    slow = parse_file(path, PSP)
    assert slow.table is None
    assert fast.all_rows() == slow.all_rows()
    assert fast.all_rows()[-1][8] == "Nome com espaços"


@pytest.mark.parametrize(
    "row",
    [
        '2026-11-01T10:00:00-03:00,TARIFA,"-1,000.00",,,,,,,,t,T\n',  # grouped: row path
        "2026-11-01T10:00:00,TARIFA,-1.00,,,,,,,,t,T\n",  # naive time: row path
        "\n2026-11-01T10:00:00Z,TARIFA,-1.00,,,,,,,,t,T\n",  # blank line
        '2026-11-01T10:00:00Z,TARIFA,-1.00,,,,,,,,"multi\nline",T\n',  # quoted newline
    ],
)
def test_odd_files_take_the_row_path(tmp_path: Path, row: str) -> None:
    path = tmp_path / "p.csv"
    path.write_text(PSP_HEADER + "\n" + row, encoding="utf-8")
    result = parse_file(path, PSP)
    assert result.table is None
    assert [r[2] for r in result.all_rows()] == [-100000 if "1,000" in row else -100]
