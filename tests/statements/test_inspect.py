"""`recon statements inspect`: how files would be read, importing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recon.cli import main
from recon.statements import import_statements
from recon.statements.inspect import inspect_statements

from . import cnab
from .bank_samples import BB_SINAIS, INTER_CONTA
from .conftest import FIXTURES


def _inter(tmp_path: Path) -> Path:
    path = tmp_path / "extrato.csv"
    path.write_bytes(INTER_CONTA.encode("utf-8"))
    return path


def test_inspect_json_reports_layout_period_totals(tmp_path, capsys) -> None:
    data = tmp_path / "data"
    code = main(["statements", "inspect", str(_inter(tmp_path)), "--json", "--data", str(data)])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    (f,) = doc["files"]
    assert f["format"] == "csv"
    assert f["csv"]["profile"] == "inter-conta"
    assert f["csv"]["encoding"] == "utf-8-sig"
    assert (f["csv"]["delimiter"], f["csv"]["decimal_mark"]) == (";", ",")
    assert f["declared_account"] == "72385499"
    assert f["account"] == "default"
    (period,) = f["periods"]
    assert (period["first"], period["last"]) == ("2026-11-01", "2026-11-05")
    assert period["basis"] == "csv preamble period"
    assert f["lines"] == 3 and f["malformed"] == 0
    assert f["currency"] == "BRL"
    assert f["credits"] == {
        "count": 1,
        "cents": 100000,
        "brl": "R$ 1.000,00",
        "text": "R$ 1.000,00",
    }
    assert f["debits"] == {
        "count": 2,
        "cents": -30590,
        "brl": "\u2212R$ 305,90",
        "text": "\u2212R$ 305,90",
    }
    assert f["kinds"] == {"other": 1, "pix_in": 1, "pix_out": 1}
    assert f["first_lines"][0]["counterparty_name"] == "MARIA DA SILVA"
    assert f["first_lines"][0]["source_line"] == 7
    assert not data.exists()  # nothing written, not even the data folder


def test_inspect_text_every_format_same_counts_as_import(tmp_path, capsys) -> None:
    code = main(["statements", "inspect", str(FIXTURES), "--lines", "1"])
    out = capsys.readouterr().out
    assert code == 0
    for name in ("pix.json", "statement.ofx", "extrato.cnab240", "extrato_psp.csv"):
        assert f"{name}: " in out
    reports, errors = inspect_statements([FIXTURES])
    assert errors == []
    report = import_statements([FIXTURES], data=tmp_path / "d")
    per_file = {Path(f.path).name: f.read for f in report.per_file}
    for r in reports:
        assert r["lines"] + r["malformed"] == per_file[Path(r["file"]).name]


def test_inspect_bad_file_reports_then_exits_2(tmp_path, capsys) -> None:
    bad = tmp_path / "x.csv"
    bad.write_text("Quando;Quanto\n01/11/2026;1,00\n", encoding="utf-8")
    code = main(["statements", "inspect", str(_inter(tmp_path)), str(bad)])
    captured = capsys.readouterr()
    assert code == 2
    assert "inter-conta" in captured.out
    assert "cannot be read" in captured.out
    assert captured.err.count("\n") == 1 and "unknown shape" in captured.err


def test_inspect_rejects_negative_lines(capsys) -> None:
    code = main(["statements", "inspect", str(FIXTURES / "pix.json"), "--lines", "-1"])
    assert code == 2


def test_inspect_malformed_line_is_counted(tmp_path) -> None:
    path = tmp_path / "x.csv"
    path.write_text(INTER_CONTA.replace("-55,90", "-55,9x"), encoding="utf-8")
    (report,), errors = inspect_statements([path])
    assert errors == []
    assert (report["lines"], report["malformed"]) == (2, 1)
    assert report["first_malformed"]["line"] == 9


@pytest.mark.parametrize("fmt", ["ofx", "cnab240", "pix-json"])
def test_inspect_forced_wrong_format_is_an_error(fmt) -> None:
    _reports, errors = inspect_statements([FIXTURES / "extrato_psp.csv"], format=fmt)
    assert len(errors) == 1


def test_inspect_folder_skips_what_import_skips(tmp_path, capsys) -> None:
    _inter(tmp_path)
    (tmp_path / "README.md").write_text("# notes\n", encoding="utf-8")
    (tmp_path / "expected_breaks.csv").write_text("category,intent_id\nx,y\n", encoding="utf-8")
    code = main(["statements", "inspect", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "README.md: skipped" in out and "expected_breaks.csv: skipped" in out
    assert "inter-conta" in out


def test_inspect_says_how_the_direction_is_read(tmp_path, capsys) -> None:
    path = tmp_path / "extrato.csv"
    path.write_text(BB_SINAIS, encoding="utf-8")
    assert main(["statements", "inspect", str(path), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["files"]
    assert f["csv"]["sign"] == "flag column 'Tipo de Transação' (debit: (-))"
    assert (f["credits"]["count"], f["debits"]["count"]) == (2, 2)
    assert main(["statements", "inspect", str(_inter(tmp_path))]) == 0
    assert "\n  sign: signed amount\n" in capsys.readouterr().out


def test_inspect_shows_a_foreign_statement_in_its_currency(tmp_path, capsys) -> None:
    """A camt statement kept in EUR: its amounts are not R$."""
    v08 = (FIXTURES / "camt053_v08.xml").read_text(encoding="utf-8")
    path = tmp_path / "eur.xml"
    path.write_text(v08.replace("BRL", "EUR"), encoding="utf-8")
    code = main(["statements", "inspect", str(path), "--data", str(tmp_path / "d")])
    out = capsys.readouterr().out
    assert code == 0
    assert "R$" not in out
    assert "1 credits EUR 110,00, 1 debits \u2212EUR 5,00" in out
    assert "EUR 110,00  pix_in" in out
    main(["statements", "inspect", str(path), "--json", "--data", str(tmp_path / "d")])
    (f,) = json.loads(capsys.readouterr().out)["files"]
    assert (f["currency"], f["currencies"]) == ("EUR", ["EUR"])
    assert f["credits"] == {"count": 1, "cents": 11000, "brl": None, "text": "EUR 110,00"}


_TRN = (
    "<BANKTRANLIST>\r\n<DTSTART>20261101\r\n<DTEND>20261103\r\n<STMTTRN>\r\n<TRNTYPE>CREDIT\r\n"
    "<DTPOSTED>20261102\r\n<TRNAMT>10.00\r\n<FITID>F1\r\n<MEMO>TED RECEBIDA\r\n</STMTTRN>\r\n"
    "</BANKTRANLIST>\r\n"
)


def _ofx(body: str) -> str:
    return f"OFXHEADER:100\r\nDATA:OFXSGML\r\nVERSION:102\r\n\r\n<OFX>\r\n{body}</OFX>\r\n"


def _bank(*acctids: str) -> str:
    """A bank message set (SGML) with one statement per ACCTID ("" for none)."""
    statements = "".join(
        "<STMTTRNRS>\r\n<STMTRS>\r\n<CURDEF>BRL\r\n<BANKACCTFROM>\r\n<BANKID>0001\r\n"
        f"<BRANCHID>1234-5\r\n{f'<ACCTID>{a}  ' if a else ''}\r\n<ACCTTYPE>CHECKING\r\n"
        f"</BANKACCTFROM>\r\n{_TRN}</STMTRS>\r\n</STMTTRNRS>\r\n"
        for a in acctids
    )
    return f"<BANKMSGSRSV1>\r\n{statements}</BANKMSGSRSV1>\r\n"


def _card(acctid: str) -> str:
    """A card message set (XML): the account in CCACCTFROM."""
    return (
        "<CREDITCARDMSGSRSV1><CCSTMTTRNRS><CCSTMTRS><CURDEF>BRL</CURDEF><CCACCTFROM>"
        f"<ACCTID>{acctid}</ACCTID></CCACCTFROM>{_TRN}</CCSTMTRS></CCSTMTTRNRS>"
        "</CREDITCARDMSGSRSV1>\r\n"
    )


_UUID = "6b2c9a7e-0000-4000-8000-000000000001"


@pytest.mark.parametrize(
    ("body", "declared"),
    [
        (_bank("98765-4"), "98765-4"),  # SGML, trailing blanks off
        (_card(_UUID), _UUID),
        # a card number written whole (Luhn-valid): its last four digits only
        (_card("4111111111111111"), "************1111"),
        (_card("4111 1111 1111 1111"), "**** **** **** 1111"),
        (_card("4111111111111112"), "4111111111111112"),  # fails Luhn: an account number
        (_bank("111-1", "222-2"), "111-1, 222-2"),
        (_bank("111-1", "111-1"), "111-1"),
        (_bank(""), None),  # no ACCTID: nothing named
    ],
)
def test_inspect_shows_the_ofx_acctid_as_declared_account(
    tmp_path, capsys, body: str, declared: str | None
) -> None:
    path = tmp_path / "extrato.ofx"
    path.write_bytes(_ofx(body).encode("cp1252"))
    assert main(["statements", "inspect", str(path), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["files"]
    assert (f["format"], f["declared_account"], f["csv"]) == ("ofx", declared, None)
    assert main(["statements", "inspect", str(path)]) == 0
    out = capsys.readouterr().out
    if declared is None:
        assert "\n  account: default\n" in out
    else:
        plural = "s" if ", " in declared else ""
        assert f"\n  account: default (the file names account{plural} {declared})\n" in out
    assert ", layout " not in out  # an OFX is not described as a CSV


@pytest.mark.parametrize(
    ("name", "declared"),
    [
        ("camt053_v02.xml", "BR1800360305000010009795493C1"),  # Acct/Id/IBAN
        ("camt053_v08.xml", "0001/1234567-8"),  # Acct/Id/Othr/Id
    ],
)
def test_inspect_shows_the_camt_account_as_declared_account(
    capsys, name: str, declared: str
) -> None:
    path = FIXTURES / name
    assert main(["statements", "inspect", str(path), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["files"]
    assert (f["format"], f["declared_account"]) == ("camt", declared)


def _cnab_with_accounts(company: tuple[str, str, str, str] | None, batch: bool) -> str:
    records = cnab.extrato(10_000, [(500, "02112026", "PIX RECEBIDO", "E1", "213")])
    lines = records.split("\r\n")
    head, lot = list(lines[0]), list(lines[1])
    if company is not None:  # agência, its digit, conta, its digit
        cnab.put(head, 53, 57, company[0], num=True)
        cnab.put(head, 58, 58, company[1])
        cnab.put(head, 59, 70, company[2], num=True)
        cnab.put(head, 71, 71, company[3])
    if not batch:
        cnab.put(lot, 53, 71, " " * 19)
    lines[0], lines[1] = "".join(head), "".join(lot)
    return "\r\n".join(lines)


@pytest.mark.parametrize(
    ("company", "batch", "declared"),
    [
        (None, True, "341 ag 1 c/c 123456-7"),  # the batch header's
        (("2", "3", "98765", "4"), True, "341 ag 1 c/c 123456-7"),  # batches win
        (("2", "3", "98765", "4"), False, "341 ag 2-3 c/c 98765-4"),  # else the file's
        (None, False, None),
    ],
)
def test_inspect_shows_the_cnab240_agencia_and_conta_as_declared_account(
    tmp_path, capsys, company, batch: bool, declared: str | None
) -> None:
    path = tmp_path / "extrato.ret"
    path.write_text(_cnab_with_accounts(company, batch), encoding="latin-1")
    assert main(["statements", "inspect", str(path), "--json"]) == 0
    (f,) = json.loads(capsys.readouterr().out)["files"]
    assert (f["format"], f["declared_account"]) == ("cnab240", declared)
