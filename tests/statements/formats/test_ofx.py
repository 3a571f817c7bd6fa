"""OFX 1.x SGML and 2.x XML, with the quirks Brazilian banks ship."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from recon.config import DataDir
from recon.errors import StatementError, StatementParseError
from recon.statements import import_statements
from recon.statements.formats.ofx import decode, ofx_cents, ofx_time, parse_file, parse_text
from recon.statements.lines import LineError

from ..conftest import FIXTURES, by_e2e, view_rows

E1 = "E18236120202611011000s0123456789"


def _ofx(*transactions: str, header: str = "OFXHEADER:100\nDATA:OFXSGML\n\n") -> str:
    body = "".join(f"<STMTTRN>\n{t}\n</STMTTRN>\n" for t in transactions)
    return f"{header}<OFX>\n<BANKTRANLIST>\n{body}</BANKTRANLIST>\n</OFX>\n"


def test_sgml_fixture() -> None:
    result = parse_file(FIXTURES / "statement.ofx")
    assert result.bad == []
    rows = result.all_rows()
    assert [r[2] for r in rows] == [11000, -123456, -250000, -350, 350]
    pix_in, refund, payout, fee, fee_back = rows
    assert pix_in[1] == "2026-11-01T10:00:00-03:00"  # [-3:GMT]: the offset counts
    assert pix_in[4:6] == ("pix_in", E1)
    assert pix_in[8] == "MARIA DA SILVA"  # from MEMO, after the id
    assert pix_in[12] == "202611010001"  # FITID
    assert refund[1] == "2026-11-02T00:00:00-03:00"  # date only: local midnight
    assert refund[4:8] == (
        "pix_refund_out",
        "D18236120202611021200r0000000001",
        None,
        "E00000000202611011230a1b2c3d4e5f",
    )
    assert refund[8] == "Empresa X LTDA"  # NAME wins
    assert payout[8] == "JOÃO AÇAÍ CONCEIÇÃO"  # cp1252 decoded
    assert payout[1] == "2026-11-02T14:30:00.000-03:00"
    assert fee[4] == "fee" and fee[2] == -350  # positive TRNAMT on a FEE TRNTYPE
    assert fee_back[4] == "fee" and fee_back[2] == 350
    # the first <STMTTRN> of the fixture is on line 40 of the file
    assert pix_in[0] == 40
    assert (FIXTURES / "statement.ofx").read_bytes().split(b"\r\n")[39] == b"<STMTTRN>"


def test_xml_fixture() -> None:
    result = parse_file(FIXTURES / "statement_v2.ofx")
    assert [r[2] for r in result.all_rows()] == [11000, -4510]
    assert result.all_rows()[0][11].endswith("& cia")  # entity unescaped
    assert result.all_rows()[0][1] == "2026-11-01T10:00:00.358-03:00"
    assert result.all_rows()[1][1] == "2026-11-02T09:30:00-03:00"  # no zone: Sao Paulo time
    assert "LEDGERBAL 106490 cents" in result.checks


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("20261101", "2026-11-01T00:00:00-03:00"),
        ("20261101[-3:GMT]", "2026-11-01T00:00:00-03:00"),
        ("20261101120000", "2026-11-01T12:00:00-03:00"),
        ("20261101120000[0:GMT]", "2026-11-01T12:00:00+00:00"),
        ("20261101120000.123[-03:EST]", "2026-11-01T12:00:00.123-03:00"),
        ("20261101120000[+5.75:NPT]", "2026-11-01T12:00:00+05:45"),
        ("20261101120000[-3]", "2026-11-01T12:00:00-03:00"),
        ("202611011200", "2026-11-01T12:00:00-03:00"),
        ("20150101120000", "2015-01-01T12:00:00-02:00"),  # Brazil still had DST then
    ],
)
def test_times(text: str, iso: str) -> None:
    assert ofx_time(text) == iso


@pytest.mark.parametrize("text", ["2026-11-01", "2026110", "yesterday", "20261101[-99:X]"])
def test_bad_times(text: str) -> None:
    with pytest.raises(LineError):
        ofx_time(text)


@pytest.mark.parametrize(
    ("text", "cents"),
    [
        ("-10.00", -1000),
        ("-10,00", -1000),
        ("  0000012.30 ", 1230),
        ("1234,5", 123450),
        ("-1.234,56", -123456),
        ("100", 10000),
        ("+3.5", 350),
    ],
)
def test_amounts(text: str, cents: int) -> None:
    assert ofx_cents(text) == cents


def test_encoding_fallbacks() -> None:
    assert decode("AÇÃO".encode("cp1252")) == "AÇÃO"
    assert decode("AÇÃO".encode()) == "AÇÃO"
    assert decode(b"\xef\xbb\xbfA") == "A"
    assert decode(b"\x81") == "\x81"  # undefined in cp1252: latin-1


def test_cross_format_one_line(data_dir: DataDir) -> None:
    """The same PIX from OFX and API Pix is one line, with the best of both."""
    import_statements([FIXTURES / "statement.ofx"], data_dir)
    report = import_statements([FIXTURES / "pix.json"], data_dir)
    assert report.duplicate == 2  # E1 and the devolução were already there from OFX
    line = by_e2e(data_dir)[E1]
    assert line["source_format"] == "pix-json"
    assert line["booked_at"] == datetime(2026, 11, 1, 13, 0, 0, 358000, tzinfo=UTC)
    assert line["txid"] == "7978c0c97ea847e78e8849634473c1f1"  # only API Pix has it
    assert line["bank_reference"] == "202611010001"  # only OFX has it
    assert line["counterparty_name"] == "Maria da Silva"  # the richer format wins
    assert len([r for r in view_rows(data_dir) if r["end_to_end_id"] == E1]) == 1


def test_malformed_transactions(data_dir: DataDir, tmp_path: Path) -> None:
    text = _ofx(
        "<TRNTYPE>CREDIT\n<DTPOSTED>20261101\n<TRNAMT>1,00\n<FITID>1",
        "<TRNTYPE>CREDIT\n<DTPOSTED>20261101\n<FITID>2",
        "<TRNTYPE>CREDIT\n<TRNAMT>1.00\n<FITID>3",
        "<TRNTYPE>CREDIT\n<DTPOSTED>20261101\n<TRNAMT>abc\n<FITID>4",
        "<TRNTYPE>CREDIT\n<DTPOSTED>20261341\n<TRNAMT>1.00\n<FITID>5",
    )
    path = tmp_path / "bad.ofx"
    path.write_text(text, encoding="ascii")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.line, err.value.field) == (12, "TRNAMT")  # its <STMTTRN> line
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.read, report.imported, report.quarantined) == (5, 1, 4)
    fields = sorted(
        (r["source_line"], r["field"]) for r in view_rows(data_dir, "statement_quarantine")
    )
    assert fields == [(12, "TRNAMT"), (17, "DTPOSTED"), (22, "TRNAMT"), (28, "DTPOSTED")]


def test_not_ofx(tmp_path: Path) -> None:
    with pytest.raises(StatementError):
        parse_text("hello", "x.ofx")


def test_lowercase_tags_and_unclosed() -> None:
    text = "<ofx><stmttrn><trntype>DEBIT<dtposted>20261101<trnamt>5.00<fitid>a<memo>TARIFA</ofx>"
    rows = parse_text(text, "x").all_rows()
    assert rows[0][2:5] == (-500, "debit", "fee")


def test_fast_path_equals_block_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The vectorized read gives exactly what the block-by-block read gives."""
    import recon.statements.formats.ofx as ofx_module

    d1 = "D18236120202611021200r0000000001"
    memos = [
        f"PIX RECEBIDO {E1} MARIA DA SILVA",
        f"PIX ENVIADO - {E1} - JOÃO AÇAÍ",
        f"DEVOLUCAO PIX {d1} REF {E1}",
        f"DEVOLUCAO PIX {d1}",
        "DEVOLUÇÃO SEM ID",
        "TARIFA PIX ENVIADO (3)",
        "PIX SEM ID",
        "TED RECEBIDA",
        f"X{E1}",  # glued: not an id
        f"{E1}",
        "",
        # banks' own forms, no PIX id: what describe reads (Itaú, Inter, BB, C6)
        "PIX TRANSF  FULANO S05/11",
        'Pix recebido: "Cp :18236120-Fulano de Tal"',
        "Pix - Recebido - 12/03 21:08 João Vitor Oliveira",
        # the bank's own words: before "PIX" they say what the line is, after it they name
        "CASHBACK TURBINADO PIX - Inter Primus",
        "Transferência recebida pelo Pix - CASSIANO BITTAR JORGE",
        "ESTORNO TARIFA PIX",
        "PIX ENVIADO - CESTA BASICA LTDA",
        "DEB.IOF",
    ]
    blocks = []
    for i, memo in enumerate(memos * 3):
        name = "<NAME>Fulano  de Tal\n" if i % 3 == 1 else ""
        memo_tag = f"<MEMO>{memo}\n" if memo else ""
        kind = ["CREDIT", "DEBIT", "FEE", "XFER", "PAYMENT"][i % 5]
        amount = ["110.00", "-2500,00", "+3.50", "0000012.30", "7,05"][i % 5]
        when = ["20261101100000[-3:GMT]", "20261102143000.123[+5:X]", "20261102010203[0]"][i % 3]
        blocks.append(
            f"<STMTTRN>\n<TRNTYPE>{kind}\n<DTPOSTED>{when}\n<TRNAMT>{amount}\n"
            f"<FITID>F{i}\n{name}{memo_tag}</STMTTRN>\n"
        )
    text = _ofx().replace("<BANKTRANLIST>\n", "<BANKTRANLIST>\n" + "".join(blocks))
    fast = parse_text(text, "x")
    assert fast.table is not None
    monkeypatch.setattr(ofx_module, "_fast", lambda chunks, line: None)
    slow = parse_text(text, "x")
    assert slow.table is None
    assert fast.all_rows() == slow.all_rows()


def _kinds_read(
    monkeypatch: pytest.MonkeyPatch, fast: bool, memos: list[tuple[str, str, str]]
) -> list[str]:
    """The kinds of (TRNTYPE, TRNAMT, MEMO) blocks, read by the fast path or the per-line one."""
    import recon.statements.formats.ofx as ofx_module

    blocks = "".join(
        f"<STMTTRN>\n<TRNTYPE>{t}\n<DTPOSTED>20261101100000[-3:BRT]\n<TRNAMT>{a}\n"
        f"<FITID>F{i}\n<MEMO>{m}\n</STMTTRN>\n"
        for i, (t, a, m) in enumerate(memos)
    )
    if not fast:
        monkeypatch.setattr(ofx_module, "_fast", lambda chunks, line: None)
    result = parse_text(_ofx().replace("<BANKTRANLIST>\n", "<BANKTRANLIST>\n" + blocks), "x")
    assert (result.table is not None) == fast
    return [r[4] for r in result.all_rows()]


@pytest.mark.parametrize("fast", [True, False])
def test_bank_words_kinds_on_both_paths(monkeypatch: pytest.MonkeyPatch, fast: bool) -> None:
    """Inter's cashback named after a PIX product is no PIX received; a payer named BITTAR
    is no fee (the vectorized path tested "TAR " anywhere in the text)."""
    memos = [
        ("CREDIT", "10.00", "CASHBACK TURBINADO PIX - Inter Primus"),
        ("CREDIT", "150.00", "Transferência recebida pelo Pix - CASSIANO BITTAR JORGE"),
        ("CREDIT", "5.00", "ESTORNO TARIFA PIX"),
        ("DEBIT", "-40.00", "PIX ENVIADO - CESTA BASICA LTDA"),
        ("DEBIT", "-1.00", "DEB.IOF"),
    ]
    kinds = _kinds_read(monkeypatch, fast, memos)
    assert kinds == ["other", "pix_in", "fee", "pix_out", "fee"]


def test_memo_read_by_the_one_parser_of_bank_texts() -> None:
    """OFX MEMOs as Nubank, Inter and C6 write them give the counterparty and document that
    the same text gives in a CSV (recon.statements.describe): the OFX reader only read the
    words after a PIX id, so these lines had neither."""
    memos = [
        "Transferência enviada pelo Pix - Izabella de Paula Braga - •••.911.786-•• - "
        "NU PAGAMENTOS - IP (0260) Agência: 1 Conta: 1234567-8",
        "PIX ENVIADO - Cp :16501555-KATIANA PINHEIRO JANSEN 52998224725",
        "52998224725-CLEITON DA SILVA NEGREIROS",
        f"PIX RECEBIDO {E1} MARIA DA SILVA",
    ]
    blocks = "".join(
        f"<STMTTRN>\n<TRNTYPE>DEBIT\n<DTPOSTED>20261101100000[-3:BRT]\n<TRNAMT>-1.00\n"
        f"<FITID>F{i}\n<MEMO>{memo}\n</STMTTRN>\n"
        for i, memo in enumerate(memos)
    )
    text = _ofx().replace("<BANKTRANLIST>\n", "<BANKTRANLIST>\n" + blocks)
    rows = parse_text(text, "x").all_rows()
    assert [(r[8], r[9]) for r in rows] == [
        ("Izabella de Paula Braga", "***.911.786-**"),
        ("KATIANA PINHEIRO JANSEN", "***.982.247-**"),
        ("CLEITON DA SILVA NEGREIROS", "***.982.247-**"),
        ("MARIA DA SILVA", None),
    ]


def test_a_document_in_the_name_field_leaves_the_name() -> None:
    block = (
        "<STMTTRN>\n<TRNTYPE>CREDIT\n<DTPOSTED>20261101100000[-3:BRT]\n<TRNAMT>5.00\n"
        "<FITID>F1\n<NAME>ANA LIMA 52998224725\n<MEMO>PIX RECEBIDO\n</STMTTRN>\n"
    )
    (row,) = parse_text(
        _ofx().replace("<BANKTRANLIST>\n", "<BANKTRANLIST>\n" + block), "x"
    ).all_rows()
    assert (row[8], row[9]) == ("ANA LIMA", "***.982.247-**")


@pytest.mark.parametrize(
    "odd",
    [
        "<DTPOSTED>20261101",
        "<TRNAMT>1.234,56",
        "<MEMO>A &amp; B",
        "<memo>x",
        "<MEMO>CPF 123.456.789-00",
    ],
)
def test_odd_blocks_take_the_block_path(odd: str) -> None:
    block = "<TRNTYPE>CREDIT\n<DTPOSTED>20261101100000[-3]\n<TRNAMT>1.00\n<FITID>1"
    tag = odd.split(">")[0] + ">"
    lines = [ln for ln in block.split("\n") if not ln.upper().startswith(tag.upper())] + [odd]
    result = parse_text(_ofx("\n".join(lines)), "x")
    assert result.table is None
    assert len(result.all_rows()) == 1


@pytest.mark.parametrize("fast", [True, False])
def test_trntype_says_interest_and_yield_on_both_paths(
    monkeypatch: pytest.MonkeyPatch, fast: bool
) -> None:
    """TRNTYPE INT (interest earned or paid) and DIV (a dividend) are the bank's own lines,
    whatever the memo says; FEE and SRVCHG fees."""
    memos = [
        ("INT", "-3.10", "ENCARGOS"),
        ("INT", "0.45", "CREDITO"),
        ("DIV", "1.20", "CREDITO"),
        ("SRVCHG", "-9.90", "PACOTE"),
        ("CREDIT", "0.12", "REND PAGO APLIC AUT MAIS"),
        ("DEBIT", "-1.84", "Cobrança de Juros - Juros Saldo Devedor Conta"),
    ]
    kinds = _kinds_read(monkeypatch, fast, memos)
    assert kinds == ["interest", "interest", "yield", "fee", "yield", "interest"]
