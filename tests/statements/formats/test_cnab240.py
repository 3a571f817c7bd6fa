"""CNAB 240 extrato (segment E): positions, signs, dates, balance and count checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from recon.config import DataDir
from recon.errors import StatementError, StatementParseError
from recon.statements import import_statements
from recon.statements.formats.cnab240 import decode, parse_file, parse_text
from recon.statements.sniff import sniff_bytes, sniff_format

from .. import cnab
from ..conftest import FIXTURES, view_rows

E1 = "E18236120202611011000s0123456789"
LINES = [
    (11000, "01112026", "PIX RECEBIDO", E1, "213"),
    (-350, "02112026", "TARIFA PIX", "000000123", "105"),
]


def _records(text: str) -> list[str]:
    return text.split("\r\n")[:-1]


def _join(records: list[str]) -> str:
    return "\r\n".join(records) + "\r\n"


def test_fixture() -> None:
    result = parse_file(FIXTURES / "extrato.cnab240")
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [11000, -123456, -250000, -350, 500000]
    assert [r[4] for r in result.all_rows()] == [
        "pix_in",
        "pix_refund_out",
        "pix_out",
        "fee",
        "other",
    ]
    first = result.all_rows()[0]
    assert first[0] == 3  # physical line
    assert first[1] == "2026-11-01T00:00:00-03:00"
    assert first[5] == E1
    assert first[11] == "PIX RECEBIDO"
    assert first[12] is None  # the document was the e2e id itself
    assert result.all_rows()[3][12] == "000000123"
    assert result.all_rows()[4][12] == "DOC 998877"
    assert any("opening 100000 + 511000 - 373806 = closing 237194" in c for c in result.checks)


def test_positions_are_the_standard_ones() -> None:
    record = cnab.detail(1, -123, "31122026", "HIST", "DOC")
    assert record[7] == "3" and record[13] == "E"
    assert record[142:150] == "31122026"  # 143-150 data do lançamento
    assert record[150:168] == "000000000000000123"  # 151-168 valor
    assert record[168] == "D"  # 169
    assert record[201:204] == "DOC"  # 202-240 documento


def test_trailing_blanks_stripped_by_an_editor() -> None:
    text = cnab.extrato(0, LINES)
    stripped = "\n".join(r.rstrip() for r in text.split("\r\n"))
    assert [r[2] for r in parse_text(stripped, "x").all_rows()] == [11000, -350]


@pytest.mark.parametrize(
    ("position", "value", "field"),
    [
        (150, "X", "data_lancamento"),  # bad date
        (143, "3", "data_lancamento"),  # 32/11: not a date
        (168, "A", "valor_lancamento"),
        (169, "X", "valor_lancamento"),  # sign must be D or C
        (14, "A", "segmento"),
    ],
)
def test_malformed_detail(
    tmp_path: Path, data_dir: DataDir, position: int, value: str, field: str
) -> None:
    records = _records(cnab.extrato(0, LINES))
    rec = list(records[2])
    rec[position - 1] = value
    records[2] = "".join(rec)
    path = tmp_path / "x.cnab240"
    path.write_text(_join(records), encoding="ascii")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.line, err.value.field) == (3, field)
    assert str(path) in str(err.value)
    # with quarantine the batch cannot balance any more: a warning, not an error
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.read, report.imported, report.quarantined) == (2, 1, 1)
    assert report.per_file[0].warnings


def _tamper_trailer(records: list[str], start: int, end: int, value: int) -> list[str]:
    rec = list(records[-2])
    rec[start - 1 : end] = list(str(value).rjust(end - start + 1, "0"))
    records[-2] = "".join(rec)
    return records


@pytest.mark.parametrize(
    ("start", "end", "value", "field"),
    [
        (151, 168, 999, "saldo_final"),
        (177, 194, 1, "somatoria_debitos"),
        (195, 212, 1, "somatoria_creditos"),
        (171, 176, 9, "qtd_registros"),
    ],
)
def test_batch_checks(tmp_path: Path, start: int, end: int, value: int, field: str) -> None:
    records = _tamper_trailer(_records(cnab.extrato(1000, LINES)), start, end, value)
    with pytest.raises(StatementParseError) as err:
        parse_text(_join(records), "f.cnab240")
    assert err.value.field == field
    assert err.value.line == 5  # the batch trailer
    assert err.value.file == "f.cnab240"


def test_opening_balance_mismatch(tmp_path: Path) -> None:
    records = _records(cnab.extrato(1000, LINES))
    records[1] = cnab.batch_header(2000)
    with pytest.raises(StatementParseError, match="opening 2000"):
        parse_text(_join(records), "f")


def test_file_trailer_counts() -> None:
    records = _records(cnab.extrato(0, LINES))
    records[-1] = cnab.file_trailer(1, 99)
    with pytest.raises(StatementParseError) as err:
        parse_text(_join(records), "f")
    assert (err.value.line, err.value.field) == (6, "qtd_registros")
    records[-1] = cnab.file_trailer(2, 6)
    with pytest.raises(StatementParseError, match="batches"):
        parse_text(_join(records), "f")


@pytest.mark.parametrize(
    "mutate",
    [
        lambda rs: rs[:-1],  # no file trailer
        lambda rs: rs[:3],  # cut inside a batch
        lambda rs: [rs[0], rs[2], *rs[1:]],  # a detail before the batch header
    ],
)
def test_structure_errors(mutate: object) -> None:
    records = _records(cnab.extrato(0, LINES))
    with pytest.raises(StatementError):
        result = parse_text(_join(mutate(records)), "f")  # type: ignore[operator]
        if result.bad:
            raise StatementError(result.bad[0].reason)


def test_wrong_service_and_long_record() -> None:
    records = _records(cnab.extrato(0, LINES))
    records[1] = cnab.batch_header(0, service="03")
    with pytest.raises(StatementError, match="not 04"):
        parse_text(_join(records), "f")
    records = _records(cnab.extrato(0, LINES))
    records[2] += "X"
    result = parse_text(_join(records), "f")
    assert [(b.source_line, b.field) for b in result.bad] == [(3, "record")]
    assert result.warnings  # the batch cannot balance without it


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(StatementError):
        parse_text("\r\n", "f")


def test_imported_twice(data_dir: DataDir) -> None:
    import_statements([FIXTURES / "extrato.cnab240"], data_dir)
    before = view_rows(data_dir)
    report = import_statements([FIXTURES / "extrato.cnab240"], data_dir)
    assert (report.imported, report.duplicate) == (0, 5)
    assert view_rows(data_dir) == before


# --------------------------------------------------------------------------- as editors leave them


def _stripped(text: str) -> str:
    """Every record with its trailing blanks stripped, as some editors save a file."""
    return "\r\n".join(r.rstrip(" ") for r in text.split("\r\n"))


def test_sniffed_when_an_editor_stripped_trailing_blanks(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "stripped.ret"
    path.write_text(_stripped(cnab.extrato(0, LINES)), encoding="ascii")
    assert len(path.read_bytes().split(b"\r\n")[0]) < 240
    assert sniff_format(path) == "cnab240"
    report = import_statements([path], data_dir)  # --format auto
    assert (report.read, report.imported) == (2, 2)


@pytest.mark.parametrize("strip", [False, True])
def test_sniffed_and_read_with_a_utf8_accent_in_the_header(
    tmp_path: Path, data_dir: DataDir, strip: bool
) -> None:
    """A header written in UTF-8 by a program that counts characters: 242 bytes, 240
    characters (the other records' trailing blanks stripped or not)."""
    records = _records(cnab.extrato(0, LINES))
    records[0] = cnab.file_header(company="RECON AÇÃO LTDA")
    if strip:
        records[1:] = [r.rstrip(" ") for r in records[1:]]
    path = tmp_path / "utf8.ret"
    path.write_bytes(_join(records).encode("utf-8"))
    assert len(path.read_bytes().split(b"\r\n")[0]) == 242
    assert sniff_format(path) == "cnab240"
    result = parse_file(path)
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [11000, -350]
    report = import_statements([path], data_dir)
    assert report.imported == 2


def _with_history(history: bytes) -> list[bytes]:
    """The LINES file as bytes, its first detail's history (177-201) replaced."""
    raw = [r.encode("ascii") for r in _records(cnab.extrato(0, LINES))]
    raw[2] = raw[2][:176] + history + raw[2][201:]
    return raw


def test_decode_tells_how_the_writer_counted() -> None:
    accent = "AÇÃO PIX".encode()  # 10 bytes, 8 characters
    # counted characters: 25 characters of history, 27 bytes, a 242-byte record
    chars = _with_history(accent + b" " * 17)
    assert len(chars[2]) == 242
    text = decode(b"\r\n".join(chars))
    assert text.split("\r\n")[2][176:201] == "AÇÃO PIX".ljust(25)
    # counted bytes: 25 bytes of history, a 240-byte record: one byte is one character
    byts = _with_history(accent + b" " * 15)
    assert len(byts[2]) == 240
    assert decode(b"\r\n".join(byts)).split("\r\n")[2][201:233] == E1
    # an editor stripped the blanks: nothing tells, one byte one character
    stripped = [r.rstrip(b" ") for r in chars]
    assert decode(b"\n".join(stripped)) == b"\n".join(stripped).decode("latin-1")
    assert decode(b"\xef\xbb\xbf" + b"\n".join(stripped)) == b"\n".join(stripped).decode("latin-1")
    assert decode("AÇÃO".encode("cp1252")) == "AÇÃO"  # not UTF-8 at all


def test_a_writer_that_counted_bytes_is_read_one_byte_one_character(tmp_path: Path) -> None:
    """A record with an accent that is exactly 240 bytes: the fields after the accent are
    where the bytes say (latin-1), not one character earlier."""
    raw = _with_history("AÇÃO PIX".encode() + b" " * 15)
    path = tmp_path / "bytes.ret"
    path.write_bytes(b"\r\n".join(raw) + b"\r\n")
    (first, _) = parse_file(path).all_rows()
    assert first[5] == E1  # the document (202-240) read from its own positions


def test_sniff_takes_the_header_shape_only() -> None:
    header = cnab.file_header().encode("ascii")
    assert sniff_bytes(header + b"\r\n") == "cnab240"
    assert sniff_bytes(header.rstrip() + b"\n") == "cnab240"
    assert sniff_bytes(b"\xef\xbb\xbf" + header + b"\n") == "cnab240"
    assert sniff_bytes(header + b"X\n") is None  # 241 characters that are not blanks
    assert sniff_bytes(b"34100010" + header[8:] + b"\n") is None  # lot 0001: not a file header
    assert sniff_bytes(b"34100000;valor;data\n") != "cnab240"  # a delimiter at position 9
    assert sniff_bytes(b"20260000,PIX RECEBIDO,10.00\n", "x.csv") != "cnab240"


def test_utf8_bom_is_not_part_of_the_first_record(tmp_path: Path, data_dir: DataDir) -> None:
    path = tmp_path / "bom.ret"
    path.write_bytes(b"\xef\xbb\xbf" + cnab.extrato(0, LINES).encode("ascii"))
    assert sniff_format(path) == "cnab240"
    assert [r[2] for r in parse_file(path).all_rows()] == [11000, -350]
    assert parse_text("\ufeff" + cnab.extrato(0, LINES), "f").bad == []


def test_blanks_beyond_240_are_editor_noise() -> None:
    records = _records(cnab.extrato(0, LINES))
    records[1] += " "  # one extra space on the batch header
    records[2] += "   "
    result = parse_text(_join(records), "f")
    assert result.bad == []
    assert [r[2] for r in result.all_rows()] == [11000, -350]


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda r: r + "X", "record"),  # more than blanks beyond 240
        (lambda r: r[:150] + "00000000000000O000" + r[168:], "saldo_inicial"),  # unreadable
    ],
)
def test_unreadable_batch_header_is_the_error_at_its_line(
    tmp_path: Path, data_dir: DataDir, mutate: object, field: str
) -> None:
    """Not the file trailer's batch count after it: the batch is counted and its details are
    its own, so the error is the header's line and, with --quarantine, the details import."""
    records = _records(cnab.extrato(0, LINES))
    records[1] = mutate(records[1])  # type: ignore[operator]
    path = tmp_path / "x.ret"
    path.write_text(_join(records), encoding="ascii")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.line, err.value.field) == (2, field)
    report = import_statements([path], data_dir, quarantine=True)
    assert (report.read, report.imported, report.quarantined) == (3, 2, 1)
    assert report.per_file[0].warnings  # the batch cannot balance without its header


def test_unreadable_batch_trailer_closes_its_batch(tmp_path: Path, data_dir: DataDir) -> None:
    records = _records(cnab.extrato(0, LINES))
    records[4] = records[4][:150] + "0000000000000000O0" + records[4][168:]
    path = tmp_path / "x.ret"
    path.write_text(_join(records), encoding="ascii")
    with pytest.raises(StatementParseError) as err:
        import_statements([path], data_dir)
    assert (err.value.line, err.value.field) == (5, "saldo_final")  # not "no trailer" at 2


def test_a_service_other_than_extrato_is_named_at_its_line() -> None:
    records = _records(cnab.extrato(0, LINES))
    records[1] = cnab.batch_header(0, service="01") + " "  # cobrança, one blank too many
    with pytest.raises(StatementError, match=r"f:2: batch service '01' \(cobrança\) is not 04"):
        parse_text(_join(records), "f")


def test_a_batch_header_inside_an_open_batch_names_that_batch() -> None:
    records = _records(cnab.extrato(0, LINES))
    records[4:4] = [cnab.batch_header(0, lot=2)]  # batch 1 never closed
    with pytest.raises(StatementParseError, match="no trailer") as err:
        parse_text(_join(records), "f")
    assert err.value.line == 2


def test_returned_cheque_is_not_a_pix_refund() -> None:
    """Itaú's extrato line for a returned cheque (history 177-201 as the bank writes it)."""
    lines = [
        (-150000, "04112026", "DEVOL CHQ PAGTO CTA/TIT", "000000000000000", "119"),
        (-1000, "04112026", "DEVOLUCAO PIX", "D18236120202611021200r0000000001", "213"),
    ]
    rows = parse_text(cnab.extrato(0, lines), "f").all_rows()
    assert [r[4] for r in rows] == ["other", "pix_refund_out"]


def test_categories_say_the_banks_own_lines() -> None:
    """FEBRABAN's categories: 102 encargos, 105 tarifas, 110 IOF, 211 dividendos."""
    lines = [
        (-1149, "04112026", "LIS", "000000000000000", "102"),
        (-350, "04112026", "PACOTE", "000000000000000", "105"),
        (-79, "04112026", "SALDO DEVEDOR", "000000000000000", "110"),
        (120, "04112026", "CREDITO", "000000000000000", "211"),
        (12, "04112026", "REND PAGO APLIC AUT MAIS", "000000000000000", "205"),
    ]
    rows = parse_text(cnab.extrato(0, lines), "f").all_rows()
    assert [r[4] for r in rows] == ["interest", "fee", "fee", "yield", "yield"]
