"""OFX shapes seen in published bank files (a recheck over 85 of them): our own small
fixtures, written here, reproduce each shape; none of the published files is copied."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

import recon.statements.formats.ofx as ofx_module
from recon.cli import main
from recon.config import DataDir
from recon.errors import StatementError
from recon.statements import import_statements
from recon.statements.formats.ofx import parse_text
from recon.statements.lines import BUSINESS_TZ, to_us

from ..conftest import view_rows

SIGNON = (
    "<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>"
    "<DTSERVER>20250430205139[0:GMT]</DTSERVER><LANGUAGE>POR</LANGUAGE></SONRS></SIGNONMSGSRSV1>"
)


_TRN = {
    "amount": "-8.00",
    "when": "20250310000000[-3:BRT]",
    "fitid": "f1",
    "memo": "Compra no débito - Padaria",
    "extra": "",
    "trntype": "DEBIT",
}


def trn(*values: str, **given: str) -> str:
    """One STMTTRN block: _TRN's fields, overridden in their order (amount, when, fitid, memo)
    by `values` and by name (also extra tags before MEMO, trntype) by `given`."""
    f = {**_TRN, **dict(zip(_TRN, values, strict=False)), **given}
    return (
        f"<STMTTRN>\n<TRNTYPE>{f['trntype']}</TRNTYPE>\n<DTPOSTED>{f['when']}</DTPOSTED>\n"
        f"<TRNAMT>{f['amount']}</TRNAMT>\n<FITID>{f['fitid']}</FITID>\n{f['extra']}"
        f"<MEMO>{f['memo']}</MEMO>\n</STMTTRN>\n"
    )


def stmtrs(
    *blocks: str,
    acctid: str = "12345678-9",
    curdef: str = "BRL",
    start: str = "20250301000000[-3:BRT]",
    end: str = "20250331235959[-3:BRT]",
    after: str = "",
    tag: str = "STMTRS",
) -> str:
    acct = "CCACCTFROM" if tag == "CCSTMTRS" else "BANKACCTFROM"
    bank = "" if tag == "CCSTMTRS" else "<BANKID>0260</BANKID>\n<BRANCHID>1</BRANCHID>\n"
    period = (f"<DTSTART>{start}</DTSTART>\n" if start else "") + (
        f"<DTEND>{end}</DTEND>\n" if end else ""
    )
    return (
        f"<{tag}>\n<CURDEF>{curdef}</CURDEF>\n<{acct}>\n{bank}<ACCTID>{acctid}</ACCTID>\n"
        f"</{acct}>\n<BANKTRANLIST>\n{period}{''.join(blocks)}</BANKTRANLIST>\n"
        "<LEDGERBAL>\n<BALAMT>28.20</BALAMT>\n<DTASOF>20250331000000[-3:BRT]</DTASOF>\n"
        f"</LEDGERBAL>\n{after}</{tag}>\n"
    )


def ofx(*statements: str, signon: str = SIGNON) -> str:
    rs = "".join(
        f"<STMTTRNRS>\n<TRNUID>1</TRNUID>\n<STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY>"
        f"</STATUS>\n{s}</STMTTRNRS>\n"
        for s in statements
    )
    return (
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX>\n"
        f"{signon}\n<BANKMSGSRSV1>\n{rs}</BANKMSGSRSV1>\n</OFX>\n"
    )


NUBANK_BALLIST = (
    "<BALLIST>\n<BAL>\n<NAME>RENDIMENTO LIQUIDO</NAME>\n"
    "<DESC>RENDIMENTO LIQUIDO NO PERIODO</DESC>\n<BALTYPE>NUMBER</BALTYPE>\n"
    "<VALUE>0.00</VALUE>\n</BAL>\n</BALLIST>\n"
)


def both_paths(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    """(rows of the vectorized read, rows of the block-by-block read), the first taken."""
    fast = parse_text(text, "x.ofx")
    assert fast.table is not None, "the vectorized path was expected to read this file"
    with monkeypatch.context() as m:
        m.setattr(ofx_module, "_fast", lambda chunks, line: None)
        slow = parse_text(text, "x.ofx")
    return fast.all_rows(), slow.all_rows()


# ---------------------------------------------------------------------- a transaction's own fields


@pytest.mark.parametrize("n", [2, 12])  # the last block cut by RE2 over all, or alone
def test_a_name_after_the_last_transaction_is_not_its_counterparty(
    n: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nubank's account export: <BALLIST><BAL><NAME>RENDIMENTO LIQUIDO after the list."""
    text = ofx(stmtrs(*(trn(fitid=str(i)) for i in range(n)), after=NUBANK_BALLIST))
    fast, slow = both_paths(text, monkeypatch)
    assert fast == slow
    assert [r[8] for r in fast] == [None] * n  # counterparty_name
    assert "RENDIMENTO" not in repr(fast)


def test_a_bank_that_never_closes_transactions_stops_at_its_list(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sgml = (
        "<STMTTRN>\n<TRNTYPE>DEBIT\n<DTPOSTED>20250310000000[-3:BRT]\n<TRNAMT>-8.00\n"
        "<FITID>a\n<MEMO>Compra\n"
    )
    text = ofx(stmtrs(sgml, sgml.replace("<FITID>a", "<FITID>b"), after=NUBANK_BALLIST))
    fast, slow = both_paths(text, monkeypatch)
    assert fast == slow
    assert [r[8] for r in fast] == [None, None]


# -------------------------------------------------------------------------------- FITID as written

BRADESCO_FITID = "N20300:02/12/25:-97.56:0940360: Pix Qrcode Din: Des: Amazon.com.br         02/12"


def test_fitid_is_kept_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bradesco's FITIDs hold runs of blanks: the id is kept, only its ends stripped."""
    text = ofx(stmtrs(trn(fitid=f"  {BRADESCO_FITID} "), trn(fitid="b\t\tc")))
    fast, slow = both_paths(text, monkeypatch)
    assert fast == slow
    assert [r[12] for r in fast] == [BRADESCO_FITID, "b\t\tc"]


def test_a_line_stored_with_its_fitid_collapsed_keeps_its_line_id(tmp_path: Path) -> None:
    """recon stored FITIDs with their blanks collapsed before: the same file imported again
    stores a new version of each line (the exact FITID), never a second line."""
    data = DataDir(tmp_path / "data")
    before, now = tmp_path / "before.ofx", tmp_path / "now.ofx"
    collapsed = " ".join(BRADESCO_FITID.split())
    before.write_text(ofx(stmtrs(trn(fitid=collapsed), trn(fitid="x"))), encoding="utf-8")
    now.write_text(ofx(stmtrs(trn(fitid=BRADESCO_FITID), trn(fitid="x"))), encoding="utf-8")
    import_statements([before], data)
    report = import_statements([now], data)
    assert (report.imported, report.duplicate, report.new_versions) == (0, 2, 1)
    assert sorted(r["bank_reference"] for r in view_rows(data)) == [BRADESCO_FITID, "x"]


def test_a_csv_naming_the_fitid_pairs_with_the_ofx_line(tmp_path: Path) -> None:
    """The bank's transaction id in a CSV (cleaned text) still names the OFX line whose FITID
    has runs of blanks."""
    data = DataDir(tmp_path / "data")
    e2e = "E18236120202503101000s0123456789"
    statement = tmp_path / "s.ofx"
    statement.write_text(
        ofx(stmtrs(trn("-97.56", fitid="ID  7", memo=f"PIX ENVIADO {e2e} LOJA"))),
        encoding="utf-8",
    )
    nubank = tmp_path / "nubank.csv"
    nubank.write_text(
        "Data,Valor,Identificador,Descrição\n"
        "10/03/2025,-97.56,ID 7,Transferência enviada pelo Pix - LOJA\n",
        encoding="utf-8",
    )
    import_statements([statement], data)
    report = import_statements([nubank], data)
    assert (report.imported, report.duplicate) == (0, 1)


# --------------------------------------------------------------------------- investment statements


def invstmtrs(*transactions: str, acctid: str = "0123456789") -> str:
    """An investment statement: securities transactions and/or cash lines (INVBANKTRAN)."""
    return (
        "<INVSTMTTRNRS><TRNUID>1</TRNUID><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY>"
        "</STATUS>\n<INVSTMTRS>\n<DTASOF>20110727180000[-4:EDT]</DTASOF>\n<CURDEF>USD</CURDEF>\n"
        f"<INVACCTFROM><BROKERID>vanguard.com</BROKERID><ACCTID>{acctid}</ACCTID></INVACCTFROM>\n"
        "<INVTRANLIST>\n<DTSTART>20110625180000[-4:EDT]</DTSTART>\n"
        f"<DTEND>20110727180000[-4:EDT]</DTEND>\n{''.join(transactions)}</INVTRANLIST>\n"
        "<INVPOSLIST><POSMF><INVPOS><SECID><UNIQUEID>922908728</UNIQUEID></SECID>"
        "<UNITS>1.0</UNITS></INVPOS></POSMF></INVPOSLIST>\n</INVSTMTRS>\n</INVSTMTTRNRS>\n"
    )


SELLMF = (
    "<SELLMF><INVSELL><INVTRAN><FITID>s1</FITID><DTTRADE>20110701</DTTRADE></INVTRAN>"
    "<SECID><UNIQUEID>922908728</UNIQUEID></SECID><UNITS>-1.0</UNITS><UNITPRICE>10</UNITPRICE>"
    "<TOTAL>10.00</TOTAL><SUBACCTSEC>CASH</SUBACCTSEC><SUBACCTFUND>CASH</SUBACCTFUND>"
    "</INVSELL><SELLTYPE>SELL</SELLTYPE></SELLMF>\n"
)


def investment_file(*transactions: str) -> str:
    return (
        f"OFXHEADER:100\nDATA:OFXSGML\n\n<OFX>\n{SIGNON}\n<INVSTMTMSGSRSV1>\n"
        f"{invstmtrs(*transactions)}</INVSTMTMSGSRSV1>\n</OFX>\n"
    )


def test_an_investment_statement_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Securities only (Vanguard, TD Ameritrade, TIAA-CREF): nothing recon reads. Read as an
    empty statement it would record its period as covered: 'nothing moved', false breaks."""
    path = tmp_path / "vanguard.ofx"
    path.write_text(investment_file(SELLMF), encoding="utf-8")
    with pytest.raises(StatementError) as err:
        parse_text(path.read_text(encoding="utf-8"), str(path))
    assert "is an OFX investment statement (INVSTMTRS): recon reads bank and card" in str(err.value)
    data = tmp_path / "data"
    assert main(["statements", "import", str(path), "--data", str(data)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("recon: error: ")
    assert "SELLMF" in lines[0]
    assert (
        not (data / "statements").exists() or view_rows(DataDir(data), "statement_coverage") == []
    )


def test_an_investment_statement_s_cash_lines_are_read_without_a_period(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cash = (
        "<INVBANKTRAN>\n"
        + trn("-50.00", "20110705120000[-4:EDT]", "c1")
        + ("<SUBACCTFUND>CASH</SUBACCTFUND>\n</INVBANKTRAN>\n")
    )
    text = investment_file(SELLMF, cash)
    result = parse_text(text, "x.ofx")
    assert [r[2] for r in result.all_rows()] == [-5000]
    assert result.coverage == []  # never None: that would cover the lines' days
    (warning,) = [w for w in result.warnings if "INVSTMTRS" in w]
    assert "1 cash line (INVBANKTRAN) read" in warning
    assert "no statement period" in warning and "SELLMF 1" in warning
    path = tmp_path / "inv.ofx"
    path.write_text(text, encoding="utf-8")
    data = DataDir(tmp_path / "data")
    assert import_statements([path], data).imported == 1
    assert view_rows(data, "statement_coverage") == []


# ------------------------------------------------------------------ several statements in one file


def test_statements_of_several_accounts_cover_nothing_and_say_so(tmp_path: Path) -> None:
    """Banco do Brasil's two-STMTRS export: an empty statement of one account (its own
    period), then another account's lines. One label gets all lines; neither period may be
    claimed for the other account's lines."""
    text = ofx(
        stmtrs(acctid="455000-5", start="20170220", end="20170220"),
        stmtrs(
            trn("133.18", "20170301", "1", "TED-CRÉDITO EM CONTA", trntype="CREDIT"),
            trn("-50.00", "20170327", "2", "Tarifa"),
            acctid="655000-2",
            start="20170224",
            end="20170329",
        ),
    )
    result = parse_text(text, "x.ofx")
    assert len(result.all_rows()) == 2
    assert result.coverage == []
    (warning,) = result.warnings
    assert "ACCTID 455000-5, 655000-2" in warning and "--account" in warning
    assert [c for c in result.checks if c.startswith("LEDGERBAL")] == [
        "LEDGERBAL 2820 cents (ACCTID 455000-5)",
        "LEDGERBAL 2820 cents (ACCTID 655000-2)",
    ]
    path = tmp_path / "two.ofx"
    path.write_text(text, encoding="utf-8")
    data = DataDir(tmp_path / "data")
    report = import_statements([path], data)
    assert report.imported == 2 and report.per_file[0].warnings == (warning,)
    assert view_rows(data, "statement_coverage") == []


def test_statements_of_one_account_each_cover_their_own_period() -> None:
    """Several monthly statements of one card (American Express's download)."""
    text = ofx(
        stmtrs(
            trn(when="20130913000000.000[-7:MST]"),
            acctid="5555",
            start="20130907050000.000[-7:MST]",
            end="20130921050000.000[-7:MST]",
            tag="CCSTMTRS",
        ),
        stmtrs(
            acctid="5555",
            start="20130809050000.000[-7:MST]",
            end="20130906050000.000[-7:MST]",
            tag="CCSTMTRS",
        ),
    )
    result = parse_text(text, "x.ofx")
    assert result.warnings == []
    periods = sorted((c.start_us, c.end_us, c.basis) for c in result.coverage or [])
    aug, sep = (
        (to_us(datetime(2013, 8, 9, 12, tzinfo=UTC)), to_us(datetime(2013, 9, 6, 12, tzinfo=UTC))),
        (to_us(datetime(2013, 9, 7, 12, tzinfo=UTC)), to_us(datetime(2013, 9, 21, 12, tzinfo=UTC))),
    )
    assert periods == [(*aug, "ofx DTSTART/DTEND"), (*sep, "ofx DTSTART/DTEND")]


# --------------------------------------------------------------- a period its own lines contradict


def sp(year: int, month: int, day: int, hour: int = 0) -> int:
    """São Paulo local time as UTC µs (Brazil still had summer time in 2010)."""
    return to_us(datetime(year, month, day, hour, tzinfo=BUSINESS_TZ))


def test_an_empty_declared_period_is_not_trusted() -> None:
    """C6 and Santander write the export's time as both DTSTART and DTEND: the statement
    covers its lines' whole days, and says so."""
    when = "20260630163858[-3:BRT]"
    text = ofx(
        stmtrs(
            trn(when="20260602004538[-3:BRT]", fitid="a"),
            trn(when="20260630145749[-3:BRT]", fitid="b"),
            start=when,
            end=when,
        )
    )
    result = parse_text(text, "x.ofx")
    assert result.table is not None  # the vectorized path
    (period,) = result.coverage or []
    assert (period.start_us, period.end_us) == (sp(2026, 6, 2), sp(2026, 7, 1))
    assert period.basis == "lines first/last day"
    (warning,) = result.warnings
    assert "DTSTART = DTEND (2026-06-30 16:38) is empty" in warning
    assert "booked 2026-06-02 00:45 .. 2026-06-30 14:57" in warning


def test_an_empty_declared_period_without_lines_covers_nothing() -> None:
    when = "20260630163858[-3:BRT]"
    result = parse_text(ofx(stmtrs(start=when, end=when)), "x.ofx")
    assert result.coverage == []
    assert "is empty: nothing covered" in result.warnings[0]


@pytest.mark.parametrize(
    ("start", "end", "first", "last"),
    [
        # DTEND before the last lines (a Bradesco export of December with January's lines)
        ("20251201000000", "20251231000000", "20251201", "20260116"),
        # DTSTART after the first line (Banco do Brasil, date-only: the block-by-block path)
        ("20100930", "20101025", "20100826", "20101025"),
    ],
)
def test_lines_outside_the_declared_period_widen_it(
    start: str, end: str, first: str, last: str, tmp_path: Path
) -> None:
    text = ofx(stmtrs(trn(when=first, fitid="a"), trn(when=last, fitid="b"), start=start, end=end))
    result = parse_text(text, "x.ofx")
    low = min(_local(start), _local(first))
    high = max(_local(end, end=True), _local(last) + 86_400 * 10**6)
    (period,) = result.coverage or []
    assert (period.start_us, period.end_us) == (low, high)
    assert period.basis == "ofx DTSTART/DTEND and its lines' days"
    (warning,) = result.warnings
    assert "does not hold all its lines" in warning
    path = tmp_path / "s.ofx"
    path.write_text(text, encoding="utf-8")
    data = DataDir(tmp_path / "data")
    import_statements([path], data)
    (row,) = view_rows(data, "statement_coverage")
    assert (to_us(row["covered_from"]), to_us(row["covered_to"])) == (low, high)


def _local(ofx_date: str, *, end: bool = False) -> int:
    """An OFX date without a zone (São Paulo) as UTC µs; a date-only DTEND is its whole day."""
    day = datetime.strptime(ofx_date[:8], "%Y%m%d")
    moment = sp(day.year, day.month, day.day)
    return moment + (86_400 * 10**6 if end and len(ofx_date) == 8 else 0)


def test_a_line_booked_at_dtend_itself_is_held() -> None:
    """Itaú books every line at 10:00 and writes the last day's 10:00 as DTEND; Nubank the
    last day's midnight. Not a contradiction: no warning. The 10:00 on every line is Itaú's
    placeholder: the lines are read as dates, DTSTART as its day; DTEND stays as stated."""
    itau = ofx(
        stmtrs(
            trn(when="20160401100000[-03:EST]", fitid="a"),
            trn(when="20160420100000[-03:EST]", fitid="b"),
            start="20160401100000[-03:EST]",
            end="20160420100000[-03:EST]",
        )
    )
    result = parse_text(itau, "x.ofx")
    assert result.warnings == []
    (period,) = result.coverage or []
    assert (period.start_us, period.end_us) == (sp(2016, 4, 1), sp(2016, 4, 20, 10))
    assert period.basis == "ofx DTSTART/DTEND"
    assert [r[1] for r in result.all_rows()] == [
        "2016-04-01T00:00:00-03:00",
        "2016-04-20T00:00:00-03:00",
    ]


def test_a_declared_period_apart_from_the_lines_is_kept_with_their_days() -> None:
    text = ofx(stmtrs(trn(when="20260610", fitid="a"), start="20260101", end="20260131"))
    result = parse_text(text, "x.ofx")
    assert [(c.start_us, c.end_us, c.basis) for c in result.coverage or []] == [
        (sp(2026, 1, 1), sp(2026, 2, 1), "ofx DTSTART/DTEND"),
        (sp(2026, 6, 10), sp(2026, 6, 11), "lines first/last day"),
    ]
    assert "does not hold all its lines" in result.warnings[0]


# -------------------------------------------------------------------------------- other currencies


def test_a_statement_in_another_currency_is_read_as_it_is_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CURDEF USD/EUR (28 of the published files): as camt does, the amounts are read as they
    are and the file says so."""
    text = ofx(stmtrs(trn("-13.50", fitid="a"), trn("-6.00", fitid="b"), curdef="EUR"))
    fast, slow = both_paths(text, monkeypatch)
    assert fast == slow and [r[2] for r in fast] == [-1350, -600]
    assert parse_text(text, "x.ofx").warnings == ["amounts in EUR are read as they are, not BRL"]
    assert parse_text(text.replace("EUR", "BRL"), "x.ofx").warnings == []


def test_a_transaction_in_its_own_currency_is_named() -> None:
    """CURRENCY in a STMTTRN: that line's amount is in CURSYM, not the statement's CURDEF."""
    own = "<CURRENCY><CURRATE>5.1</CURRATE><CURSYM>USD</CURSYM></CURRENCY>\n"
    result = parse_text(ofx(stmtrs(trn(fitid="a"), trn(fitid="b", extra=own))), "x.ofx")
    assert result.warnings == ["amounts in USD are read as they are, not BRL"]


def test_a_transaction_the_bank_converted_is_in_the_statement_s_currency() -> None:
    """ORIGCURRENCY: the amount was converted to CURDEF (BRL) by the bank: no warning, a check."""
    orig = "<ORIGCURRENCY><CURRATE>5.1</CURRATE><CURSYM>USD</CURSYM></ORIGCURRENCY>\n"
    result = parse_text(ofx(stmtrs(trn(fitid="a", extra=orig))), "x.ofx")
    assert result.warnings == []
    assert (
        "1 line converted by the bank from USD (ORIGCURRENCY): read in the statement's "
        "currency" in result.checks
    )


# ------------------------------------------------------------------------------------ balance rows


def test_a_balance_row_without_an_amount_is_not_a_line(tmp_path: Path) -> None:
    """Caixa lists the day's balance as a transaction, <TRNAMT>            .  </TRNAMT>
    with <MEMO>SALDO DIA: a balance, not money; it no longer fails the whole import."""
    saldo = trn("            .  ", "20220411120000[-3:BRT]", "0", "SALDO DIA", trntype="CREDIT")
    blank = trn("", "20220411120000[-3:BRT]", "00", "SALDO ANTERIOR", trntype="CREDIT")
    text = ofx(stmtrs(saldo, trn(fitid="1"), blank, start="20220411", end="20220412"))
    result = parse_text(text, "x.ofx")
    assert (len(result.all_rows()), result.bad) == (1, [])
    assert "2 balance rows (SALDO with no amount), not lines" in result.checks
    path = tmp_path / "caixa.ofx"
    path.write_text(text, encoding="utf-8")
    report = import_statements([path], DataDir(tmp_path / "data"))
    assert (report.read, report.imported) == (1, 1)


def test_a_transaction_without_an_amount_is_still_malformed() -> None:
    result = parse_text(ofx(stmtrs(trn(" . ", memo="PIX RECEBIDO"))), "x.ofx")
    assert result.all_rows() == [] and result.bad[0].field == "TRNAMT"


# ------------------------------------------------------------------------- a bank's error response

SIGNON_FAIL = (
    "<SIGNONMSGSRSV1><SONRS><STATUS><CODE>15500<SEVERITY>ERROR<MESSAGE>Your request could not "
    "be processed because you supplied an invalid identification code</STATUS>"
    "<DTSERVER>20130325211209.350[-7:MST]<LANGUAGE>ENG</SONRS></SIGNONMSGSRSV1>"
)


@pytest.mark.parametrize(
    ("body", "quoted"),
    [
        # a failed sign-on (SGML, unclosed elements): the bank sends no statement
        (f"<OFX>{SIGNON_FAIL}</OFX>", "SONRS error 15500 'Your request could not be processed"),
        # the statement request failed (XML)
        (
            f"<OFX>{SIGNON}<BANKMSGSRSV1><STMTTRNRS><TRNUID>1</TRNUID><STATUS><CODE>2000</CODE>"
            "<SEVERITY>ERROR</SEVERITY><MESSAGE>General Server Error</MESSAGE></STATUS>"
            "</STMTTRNRS></BANKMSGSRSV1></OFX>",
            "STMTTRNRS error 2000 'General Server Error'",
        ),
    ],
)
def test_a_bank_error_response_is_refused_with_its_code(
    body: str, quoted: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read as an empty statement it imported nothing with exit 0: the failure went unseen."""
    path = tmp_path / "error.ofx"
    path.write_text("OFXHEADER:100\nDATA:OFXSGML\n\n" + body + "\n", encoding="utf-8")
    assert main(["statements", "import", str(path), "--data", str(tmp_path / "data")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("recon: error: ")
    assert "the bank answered with an error, not a statement" in line and quoted in line


def test_an_error_beside_a_statement_is_a_warning() -> None:
    failed = (
        "<STATUS><CODE>2000</CODE><SEVERITY>ERROR</SEVERITY><MESSAGE>General Server Error"
        "</MESSAGE></STATUS>"
    )
    text = ofx(stmtrs(trn(fitid="a"))).replace(
        "</BANKMSGSRSV1>", f"<STMTTRNRS><TRNUID>2</TRNUID>{failed}</STMTTRNRS></BANKMSGSRSV1>"
    )
    result = parse_text(text, "x.ofx")
    assert len(result.all_rows()) == 1
    assert result.warnings == [
        "the bank reports STMTTRNRS error 2000 'General Server Error': a statement may be missing"
    ]


def test_a_file_with_no_statement_says_so() -> None:
    result = parse_text(f"<OFX>{SIGNON}</OFX>", "x.ofx")
    assert result.all_rows() == [] and not result.coverage
    assert result.warnings == [
        "no bank or card statement in the file (no STMTRS, CCSTMTRS or STMTTRN)"
    ]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize(
    ("clock", "zone"),
    [("120000", "[-3:BRT]"), ("120000.000", "[-03:EST]"), ("100000", "")],  # BB, Caixa, Itaú
)
def test_a_placeholder_clock_on_every_line_is_read_as_dates(
    monkeypatch: pytest.MonkeyPatch, fast: bool, clock: str, zone: str
) -> None:
    """Banco do Brasil, Caixa and Bradesco write 12:00:00 on every line, Itaú 10:00:00: no
    time at all. Read as a time, a PIX made later that day could not match an intent created
    after it; read as dates (local midnight, counted to the end of the day by the matching),
    it can. DTSTART with the same clock is its day; DTEND is kept as written."""
    if not fast:
        monkeypatch.setattr("recon.statements.formats.ofx._fast", lambda *a: None)
    text = ofx(
        stmtrs(
            trn("150.00", f"20220302{clock}{zone}", "a", "Pix - Recebido - 26/02 16:37 ANA"),
            trn("-30.00", f"20220309{clock}{zone}", "b", "Pix - Enviado - 09/03 07:26 RUI"),
            start=f"20220225{clock}{zone}",
            end=f"20220321{clock}{zone}",
        )
    )
    result = parse_text(text, "x.ofx")
    assert [r[1] for r in result.all_rows()] == [
        "2022-03-02T00:00:00-03:00",
        "2022-03-09T00:00:00-03:00",
    ]
    (period,) = result.coverage or []
    assert (period.start_us, period.end_us) == (sp(2022, 2, 25), sp(2022, 3, 21, int(clock[:2])))
    assert result.warnings == []
    assert f"every DTPOSTED at {clock[:2]}:00:00, the bank's placeholder" in result.checks[0]


@pytest.mark.parametrize(
    "whens",
    [
        ["20220302120000[-3:BRT]", "20220309120001[-3:BRT]"],  # one second apart: real times
        ["20220302120000[-3:BRT]"],  # one line: cannot tell
        ["20220302120000[-3:BRT]", "20220309"],  # a date beside a time
    ],
)
def test_lines_at_real_or_undecidable_times_keep_them(whens: list[str]) -> None:
    blocks = [trn("10.00", when, f"f{i}", "PIX RECEBIDO") for i, when in enumerate(whens)]
    result = parse_text(ofx(stmtrs(*blocks)), "x.ofx")
    assert result.all_rows()[0][1] == "2022-03-02T12:00:00-03:00"
    assert not any("placeholder" in c for c in result.checks)


def test_a_placeholder_period_of_one_instant_is_still_the_lines_whole_days() -> None:
    """Bradesco: every line and both DTSTART and DTEND at 12:00:00 of one day. The lines are
    read as dates; the period, empty as written, covers their whole days as before."""
    noon = "20150730120000[-03:EST]"
    text = ofx(stmtrs(trn(when=noon, fitid="a"), trn(when=noon, fitid="b"), start=noon, end=noon))
    result = parse_text(text, "x.ofx")
    assert {r[1] for r in result.all_rows()} == {"2015-07-30T00:00:00-03:00"}
    (period,) = result.coverage or []
    assert (period.start_us, period.end_us) == (sp(2015, 7, 30), sp(2015, 7, 31))
    assert "is empty" in result.warnings[0]
