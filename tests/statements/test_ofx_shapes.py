"""OFX shapes seen in published bank files (a recheck over 85 of them): our own small
fixtures, written here, reproduce each shape; none of the published files is copied."""

from __future__ import annotations

import pytest

import recon.statements.ofx as ofx_module
from recon.statements.ofx import parse_text

SIGNON = (
    "<SIGNONMSGSRSV1><SONRS><STATUS><CODE>0</CODE><SEVERITY>INFO</SEVERITY></STATUS>"
    "<DTSERVER>20250430205139[0:GMT]</DTSERVER><LANGUAGE>POR</LANGUAGE></SONRS></SIGNONMSGSRSV1>"
)


def trn(
    amount: str = "-8.00",
    when: str = "20250310000000[-3:BRT]",
    fitid: str = "f1",
    memo: str = "Compra no débito - Padaria",
    extra: str = "",
    trntype: str = "DEBIT",
) -> str:
    return (
        f"<STMTTRN>\n<TRNTYPE>{trntype}</TRNTYPE>\n<DTPOSTED>{when}</DTPOSTED>\n"
        f"<TRNAMT>{amount}</TRNAMT>\n<FITID>{fitid}</FITID>\n{extra}"
        f"<MEMO>{memo}</MEMO>\n</STMTTRN>\n"
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


# --------------------------------------------------------------------------- P1


def test_a_name_after_the_last_transaction_is_not_its_counterparty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Nubank's account export: <BALLIST><BAL><NAME>RENDIMENTO LIQUIDO after the list."""
    text = ofx(stmtrs(trn(fitid="a"), trn(fitid="b"), after=NUBANK_BALLIST))
    fast, slow = both_paths(text, monkeypatch)
    assert fast == slow
    assert [r[8] for r in fast] == [None, None]  # counterparty_name
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
