"""OFX structure checks (issue 19 item 3): a damaged file is an error or a quarantined
block, never fewer lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.config import DataDir
from recon.errors import StatementParseError
from recon.statements import import_statements
from recon.statements.formats.ofx import parse_text

from ..conftest import view_rows


def _statement(n: int = 60) -> str:
    blocks = "".join(
        f"<STMTTRN>\r\n<TRNTYPE>CREDIT\r\n<DTPOSTED>20261101{10 + i % 10:02d}0000[-3:BRT]\r\n"
        f"<TRNAMT>{i + 1}.{i % 100:02d}\r\n<FITID>F{i:04d}\r\n<MEMO>TED RECEBIDA {i}\r\n"
        "</STMTTRN>\r\n"
        for i in range(n)
    )
    return (
        "OFXHEADER:100\r\nDATA:OFXSGML\r\n\r\n<OFX>\r\n<BANKMSGSRSV1>\r\n<STMTTRNRS>\r\n<STMTRS>\r\n"
        "<BANKACCTFROM>\r\n<BANKID>332\r\n<BRANCHID>0001\r\n<ACCTID>1234567-8\r\n</BANKACCTFROM>\r\n"
        "<BANKTRANLIST>\r\n<DTSTART>20261101000000[-3:BRT]\r\n<DTEND>20261102000000[-3:BRT]\r\n"
        f"{blocks}</BANKTRANLIST>\r\n<LEDGERBAL>\r\n<BALAMT>100.00\r\n</LEDGERBAL>\r\n"
        "</STMTRS>\r\n</STMTTRNRS>\r\n</BANKMSGSRSV1>\r\n</OFX>\r\n"
    )


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "statement.ofx"
    path.write_bytes(text.encode("cp1252"))
    return path


def test_whole_file_reads_every_line_and_its_period() -> None:
    result = parse_text(_statement(), "s.ofx")
    assert len(result.all_rows()) == 60 and result.bad == []
    (cov,) = result.coverage or []
    assert cov.basis == "ofx DTSTART/DTEND"


@pytest.mark.parametrize("damage", ["deleted", "misspelled", "lower-case misspelled"])
def test_lost_opening_tag(tmp_path: Path, data_dir: DataDir, damage: str) -> None:
    text = _statement()
    at = text.index("<STMTTRN>", text.index("F0029"))
    replacement = {"deleted": "", "misspelled": "<STMTRN>", "lower-case misspelled": "<stmttrm>"}
    damaged = text[:at] + replacement[damage] + text[at + len("<STMTTRN>") :]
    path = _write(tmp_path, damaged)
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "STMTTRN"
    assert view_rows(data_dir) == []
    report = import_statements([path], data_dir, quarantine=True)
    # 59 good lines, the block holding two transactions quarantined: nothing silent.
    assert (report.imported, report.quarantined) == (58, 1)


def test_cut_in_half(tmp_path: Path, data_dir: DataDir) -> None:
    text = _statement()
    path = _write(tmp_path, text[: len(text) // 2])
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir, quarantine=True)
    assert err.value.field == "</OFX>"
    assert "cut short" in str(err.value)


def test_cut_after_a_closed_block(tmp_path: Path, data_dir: DataDir) -> None:
    text = _statement()
    path = _write(tmp_path, text[: text.index("</STMTTRN>") + len("</STMTTRN>")])
    with pytest.raises(StatementParseError):
        import_statements([path], data_dir)


def test_unclosed_block(tmp_path: Path, data_dir: DataDir) -> None:
    text = _statement()
    at = text.index("</STMTTRN>", text.index("F0010"))
    path = _write(tmp_path, text[:at] + text[at + len("</STMTTRN>") :])
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "STMTTRN"


def test_close_before_any_open(tmp_path: Path, data_dir: DataDir) -> None:
    text = _statement()
    at = text.index("<STMTTRN>")
    path = _write(tmp_path, text[:at] + text[at + len("<STMTTRN>") :])
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "STMTTRN"


def test_bank_that_never_closes_blocks_still_reads(tmp_path: Path) -> None:
    text = _statement(5).replace("</STMTTRN>\r\n", "")
    assert len(parse_text(text, "s.ofx").all_rows()) == 5
    # and a lost opening tag there shows as a repeated tag
    at = text.index("<STMTTRN>", text.index("F0002"))
    result = parse_text(text[:at] + text[at + 9 :], "s.ofx")
    assert len(result.bad) == 1 and "twice" in result.bad[0].reason


def test_unreadable_ledger_balance(tmp_path: Path, data_dir: DataDir) -> None:
    path = _write(tmp_path, _statement(3).replace("<BALAMT>100.00", "<BALAMT>1O0,00"))
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert err.value.field == "BALAMT"
