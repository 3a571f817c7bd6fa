"""ISO 20022 camt.053 / camt.054 (issue 14 item 6), our own fixtures modeled on the shapes
banks publish (001.02 flat status and Dbtr/Nm, 001.08 Sts/Cd and Pty/Nm, batch entries)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from recon.config import DataDir
from recon.errors import StatementError, StatementParseError
from recon.statements import import_statements
from recon.statements.formats.camt import parse_bytes, parse_file
from recon.statements.lines import BUSINESS_TZ, to_us
from recon.statements.sniff import sniff_format

from ..conftest import FIXTURES, by_e2e, view_rows

V08 = (FIXTURES / "camt053_v08.xml").read_text(encoding="utf-8")


def test_v02_fields_balance_and_batch() -> None:
    result = parse_file(FIXTURES / "camt053_v02.xml")
    assert result.bad == []
    rows = result.all_rows()
    assert [r[2] for r in rows] == [123456, -15000, -600, -400]
    received = rows[0]
    assert received[1] == "2026-11-01T14:03:22-03:00"  # no offset: Sao Paulo time
    assert received[4:9] == (
        "pix_in",
        "E60701190202611011703a1b2c3d4e5f",
        "7978c0c97ea847e78e8849634473c1f1",
        None,
        "Joao Pereira & Filhos",
    )
    assert received[11:] == ("RECON 7F3K2QX", "202611010001", None)  # no fee stated
    assert rows[1][8:10] == ("Ana Lima", "***.123.456-**")
    assert [r[5] for r in rows[2:]] == [
        "E13140088202611011900p0000000043",
        "E13140088202611011900p0000000044",
    ]
    assert any("opening -5000 + 107456 = closing 102456" in c for c in result.checks)
    assert any("INFO 1" in c for c in result.checks)  # an INFO entry is no money
    (cov,) = result.coverage or []
    start = datetime(2026, 11, 1, tzinfo=BUSINESS_TZ)
    assert (cov.start_us, cov.end_us, cov.basis) == (
        to_us(start),
        to_us(start + timedelta(days=1)) - 999_999,  # ToDtTm 23:59:59 is the last second
        "camt FrToDt",
    )


def test_v08_status_code_fee_and_pending() -> None:
    result = parse_bytes(V08.encode(), "v08.xml")
    rows = result.all_rows()
    assert [(r[2], r[4]) for r in rows] == [(11000, "pix_in"), (-500, "fee")]
    assert rows[0][8:11] == ("Maria da Silva", "***.456.789-**", "12345678000195")
    assert any("PDNG 1" in c for c in result.checks)


def test_camt054_devolucao() -> None:
    result = parse_file(FIXTURES / "camt054.xml")
    assert result.coverage == []  # a notification states no period
    (row,) = result.all_rows()
    assert row[2:8] == (
        -11000,
        "debit",
        "pix_refund_out",
        "D18236120202611021200r0000000001",
        None,
        "E18236120202611011000s0123456789",
    )


@pytest.mark.parametrize("name", ["camt053_v02.xml", "camt053_v08.xml", "camt054.xml"])
def test_sniffed(name: str) -> None:
    assert sniff_format(FIXTURES / name) == "camt"


def test_import_and_reimport(data_dir: DataDir) -> None:
    report = import_statements([FIXTURES / "camt053_v02.xml"], data_dir)
    assert (report.read, report.imported) == (4, 4)
    again = import_statements([FIXTURES / "camt053_v02.xml"], data_dir)
    assert (again.imported, again.duplicate) == (0, 4)
    assert by_e2e(data_dir)["E60701190202611011703a1b2c3d4e5f"]["source_format"] == "camt"


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('<Amt Ccy="BRL">110.00</Amt>', '<Amt Ccy="BRL">11O.00</Amt>', "Amt"),
        ("<CdtDbtInd>CRDT</CdtDbtInd><Sts>", "<CdtDbtInd>CR</CdtDbtInd><Sts>", "CdtDbtInd"),
        ("<Sts><Cd>BOOK</Cd></Sts>", "", "Sts"),
        ("<Sts><Cd>BOOK</Cd></Sts>", "<Sts><Cd>MAYBE</Cd></Sts>", "Sts"),
        ('<Amt Ccy="BRL">110.00</Amt>', '<Amt Ccy="EUR">110.00</Amt>', "Amt@Ccy"),
        ("<DtTm>2026-11-01T10:00:00-03:00</DtTm>", "<DtTm>ontem</DtTm>", "BookgDt/DtTm"),
    ],
)
def test_bad_entry(tmp_path: Path, data_dir: DataDir, old: str, new: str, field: str) -> None:
    assert old in V08
    path = tmp_path / "bad.xml"
    path.write_text(V08.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.field, err.value.line) == (field, 9)
    assert view_rows(data_dir) == []
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.imported, report.quarantined) == (1, 1)  # the balance check: a warning
    assert any("quarantined" in w for f in report.per_file for w in f.warnings)


def test_wrong_closing_balance(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "bal.xml"
    path.write_text(V08.replace("1105.00", "1105.01"), encoding="utf-8")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "Bal" and err.value.line == 8
    assert "closing balance (CLBD) says 110501" in str(err.value)


def test_batch_that_does_not_add_up(tmp_path: Path, data_dir: DataDir) -> None:
    text = (
        (FIXTURES / "camt053_v02.xml")
        .read_text(encoding="utf-8")
        .replace('<Amt Ccy="BRL">4.00</Amt>', '<Amt Ccy="BRL">4.01</Amt>')
    )
    path = tmp_path / "batch.xml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "NtryDtls"


def test_entity_expansion_is_off(tmp_path: Path, data_dir: DataDir) -> None:
    bomb = V08.replace(
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<?xml version="1.0"?><!DOCTYPE Document [<!ENTITY a "aaaaaaaaaa">'
        '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',
    ).replace("TARIFA PIX", "&b;")
    path = tmp_path / "bomb.xml"
    path.write_text(bomb, encoding="utf-8")
    with pytest.raises(StatementError, match="DTD"):
        import_statements([path], data_dir, format="camt")
    external = V08.replace(
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<?xml version="1.0"?><!DOCTYPE Document [<!ENTITY x SYSTEM "file:///etc/passwd">]>',
    ).replace("TARIFA PIX", "&x;")
    path.write_text(external, encoding="utf-8")
    with pytest.raises(StatementError, match="DTD"):
        import_statements([path], data_dir, format="camt")


@pytest.mark.parametrize("cut", [0.3, 0.6, 0.95])
def test_truncated(tmp_path: Path, data_dir: DataDir, cut: float) -> None:
    path = tmp_path / "cut.xml"
    path.write_text(V08[: int(len(V08) * cut)], encoding="utf-8")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir, format="camt", quarantine=True)
    assert err.value.field == "XML"


def test_not_camt(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "other.xml"
    path.write_text('<?xml version="1.0"?><Document xmlns="urn:x"><Stmt/></Document>')
    with pytest.raises(StatementError, match="not an ISO 20022 camt"):
        import_statements([path], data_dir, format="camt")


# --------------------------------------------------------------------------- small documents


def _doc(entries: str, ccy: str | None = "CHF", bals: str = "") -> bytes:
    """A camt.054.001.08 notification of `entries` for an account kept in `ccy` (or one that
    states no Ccy), one element per line so that the first Ntry is on line 6."""
    acct_ccy = f"<Ccy>{ccy}</Ccy>" if ccy else ""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.054.001.08">\n'
        "<BkToCstmrDbtCdtNtfctn><GrpHdr><MsgId>M</MsgId></GrpHdr>\n"
        f"<Ntfctn><Id>N</Id><Acct><Id><IBAN>CH2909000000250094239</IBAN></Id>{acct_ccy}</Acct>\n"
        f"{bals}\n{entries}\n"
        "</Ntfctn></BkToCstmrDbtCdtNtfctn></Document>\n"
    ).encode()


def _entry(amount: str, ind: str, inner: str = "", *, ccy: str = "CHF", rvsl: bool = False) -> str:
    reversal = "<RvslInd>true</RvslInd>" if rvsl else ""
    return (
        f'<Ntry><Amt Ccy="{ccy}">{amount}</Amt><CdtDbtInd>{ind}</CdtDbtInd>{reversal}'
        f"<Sts><Cd>BOOK</Cd></Sts><BookgDt><Dt>2020-11-25</Dt></BookgDt>{inner}</Ntry>"
    )


def _tx(amount: str, ccy: str = "CHF", ind: str = "", e2e: str = "NOTPROVIDED") -> str:
    own = f"<CdtDbtInd>{ind}</CdtDbtInd>" if ind else ""
    return (
        f"<TxDtls><Refs><EndToEndId>{e2e}</EndToEndId></Refs>"
        f'<Amt Ccy="{ccy}">{amount}</Amt>{own}</TxDtls>'
    )


def _batch(*txs: str) -> str:
    return f"<NtryDtls><Btch><NbOfTxs>{len(txs)}</NbOfTxs></Btch>{''.join(txs)}</NtryDtls>"


def _error(data: bytes) -> tuple[int | None, str | None, str]:
    (bad,) = parse_bytes(data, "n.xml").bad
    return bad.source_line, bad.field, bad.reason


def test_a_transaction_of_a_batch_in_another_currency_than_the_account() -> None:
    """Each transaction of a split batch is checked like an entry: in the account's Ccy."""
    data = _doc(_entry("15.00", "CRDT", _batch(_tx("10.00"), _tx("5.00", "EUR"))))
    assert _error(data) == (6, "TxDtls/Amt@Ccy", "EUR in an account kept in CHF")
    same = _doc(_entry("15.00", "CRDT", _batch(_tx("10.00"), _tx("5.00"))))
    assert [r[2] for r in parse_bytes(same, "n.xml").all_rows()] == [1000, 500]


def test_without_an_account_ccy_the_entry_stands_for_it() -> None:
    data = _doc(_entry("15.00", "CRDT", _batch(_tx("10.00"), _tx("5.00", "EUR"))), ccy=None)
    assert _error(data) == (
        6,
        "TxDtls/Amt@Ccy",
        "EUR in an account kept in CHF (the entry's currency; the account states none): "
        "transactions add up to 10.00 CHF CRDT and 5.00 EUR CRDT, the entry says 15.00 CHF CRDT",
    )


def test_a_batch_that_does_not_add_up_names_both_sums_as_written() -> None:
    """Unsigned, with currency and direction, as the file writes amounts (not signed cents)."""
    txs = _batch(_tx("3.10", ind="CRDT"), _tx("3.20", ind="CRDT"))
    data = _doc(_entry("200000", "DBIT", txs, ccy="SEK").replace("CHF", "SEK"), ccy=None)
    data = data.replace(b'<Amt Ccy="SEK">3', b'<Amt Ccy="CHF">3')
    line, field, reason = _error(data)
    assert line == 6
    assert field == "TxDtls/Amt@Ccy"
    assert reason.endswith(
        "transactions add up to 6.30 CHF CRDT, the entry says 200000.00 SEK DBIT"
    )
    short = _doc(_entry("15.00", "CRDT", _batch(_tx("10.00"), _tx("5.01"))))
    assert _error(short) == (
        6,
        "NtryDtls",
        "transactions add up to 15.01 CHF CRDT, the entry says 15.00 CHF CRDT",
    )


E_PIX = "E18236120202611011000s0123456789"


@pytest.mark.parametrize(
    ("inner", "ind", "kind", "refund_of"),
    [
        # a Swiss direct-debit refund, a card and a wire reversal: no PIX, no devolução
        (
            "<AddtlNtryInf>RÜCKBELASTUNG (REFUND) CHDD-BASISLASTSCHRIFT</AddtlNtryInf>",
            "DBIT",
            "other",
            None,
        ),
        ("<AddtlNtryInf>CARD PAYMENT REVERSAL</AddtlNtryInf>", "CRDT", "other", None),
        (
            "<NtryDtls><TxDtls><Refs><EndToEndId>EndToEndId-001-03-04</EndToEndId></Refs>"
            "</TxDtls></NtryDtls><AddtlNtryInf>RETOUR</AddtlNtryInf>",
            "CRDT",
            "other",
            None,
        ),
        # a reversed fee is still a fee
        (
            "<BkTxCd><Domn><Cd>ACMT</Cd><Fmly><Cd>MDOP</Cd><SubFmlyCd>CHRG</SubFmlyCd></Fmly>"
            "</Domn></BkTxCd>",
            "CRDT",
            "fee",
            None,
        ),
        # PIX evidence: a BACEN e2e id, the word PIX, a PIX bank transaction code
        (
            f"<NtryDtls><TxDtls><Refs><EndToEndId>{E_PIX}</EndToEndId></Refs></TxDtls></NtryDtls>",
            "CRDT",
            "pix_refund_in",
            E_PIX,
        ),
        ("<AddtlNtryInf>PIX ENVIADO</AddtlNtryInf>", "CRDT", "pix_refund_in", None),
        ("<BkTxCd><Prtry><Cd>PIX</Cd></Prtry></BkTxCd>", "DBIT", "pix_refund_out", None),
        (f"<AddtlNtryInf>REF {E_PIX}</AddtlNtryInf>", "DBIT", "pix_refund_out", E_PIX),
    ],
)
def test_a_reversal_is_a_devolucao_only_of_a_pix(
    inner: str, ind: str, kind: str, refund_of: str | None
) -> None:
    (row,) = parse_bytes(_doc(_entry("6.00", ind, inner, rvsl=True)), "r.xml").all_rows()
    assert (row[4], row[5], row[7]) == (kind, None, refund_of)
    assert row[11].startswith("ESTORNO")  # the reversal is noted


def test_missing_indicator_and_status_say_missing() -> None:
    no_ind = _doc(_entry("6.00", "CRDT").replace("<CdtDbtInd>CRDT</CdtDbtInd>", ""))
    assert _error(no_ind)[1:] == ("CdtDbtInd", "missing: credit or debit cannot be told")
    no_sts = _doc(_entry("6.00", "CRDT").replace("<Sts><Cd>BOOK</Cd></Sts>", ""))
    assert _error(no_sts)[1:] == ("Sts", "missing: booked or pending cannot be told")
    bal = (
        '<Bal><Tp><CdOrPrtry><Cd>OPBD</Cd></CdOrPrtry></Tp><Amt Ccy="CHF">1.00</Amt>'
        "<Dt><Dt>2020-11-25</Dt></Dt></Bal>"
    )
    with pytest.raises(StatementParseError) as err:
        parse_bytes(_doc(_entry("6.00", "CRDT"), bals=bal), "b.xml")
    assert (err.value.field, err.value.line) == ("Bal/CdtDbtInd", 5)
    assert "missing" in str(err.value) and "None" not in str(err.value)


def test_a_statement_in_another_currency_is_read_with_a_warning() -> None:
    """The same warning as an OFX statement's (recon.statements.lines.currency_warning)."""
    euro = V08.replace('Ccy="BRL"', 'Ccy="EUR"').replace("<Ccy>BRL<", "<Ccy>EUR<")
    result = parse_bytes(euro.encode(), "v08.xml")
    assert [r[2] for r in result.all_rows()] == [11000, -500]
    assert "amounts in EUR are read as they are, not BRL" in result.warnings
    assert not parse_bytes(V08.encode(), "v08.xml").warnings


@pytest.mark.parametrize(
    ("family", "sub", "ind", "kind"),
    [
        ("MDOP", "INTR", "DBIT", "interest"),  # interest charged
        ("MCOP", "INTR", "CRDT", "interest"),  # interest paid
        ("MCOP", "DVCA", "CRDT", "yield"),  # a cash dividend
        ("MDOP", "FEES", "DBIT", "fee"),
    ],
)
def test_bank_transaction_codes_say_the_banks_own_lines(
    family: str, sub: str, ind: str, kind: str
) -> None:
    code = (
        f"<BkTxCd><Domn><Cd>ACMT</Cd><Fmly><Cd>{family}</Cd><SubFmlyCd>{sub}</SubFmlyCd></Fmly>"
        "</Domn></BkTxCd><AddtlNtryInf>LANCAMENTO</AddtlNtryInf>"
    )
    (row,) = parse_bytes(_doc(_entry("1.23", ind, code)), "c.xml").all_rows()
    assert row[4] == kind
