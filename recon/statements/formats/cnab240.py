"""FEBRABAN CNAB 240 "extrato para conciliação bancária" (batch service 04, segment E).

Positions are 1-based and inclusive, as the FEBRABAN layout writes them.

File header (record type 0) and file trailer (9): 18-23 number of batches, 24-29 number of
records in the file (all lines, headers and trailers included).
Batch header (1): 9 operation "E", 10-11 service "04", 143-150 opening balance date,
151-168 opening balance (16 digits + 2 decimals), 169 its D/C.
Segment E detail (3, segment at 14 = "E"): 109-111 natureza, 135-142 data contábil,
143-150 data do lançamento (DDMMAAAA), 151-168 valor (16+2), 169 tipo D/C,
170-172 categoria (105 = tarifas), 173-176 código histórico, 177-201 histórico (25),
202-240 número do documento (39: the sandbox writes the e2e id, or the rtrId for a
devolução, here).
Batch trailer (5): 143-150 closing balance date, 151-168 closing balance, 169 its D/C,
171-176 number of records in the batch (its header and trailer included),
177-194 sum of debits, 195-212 sum of credits.
Each batch's dated balances are also kept for the balance walk (`ParseResult.balances`): the
opening balance as the opening of its date, the closing balance as the closing of its date.

Checks, each an error naming the file, line and field when it fails: opening balance +
credits - debits = closing balance; the trailer's sums and record count equal what the
batch holds; the file trailer's batch and record counts. A record that cannot be read is
the error, at its own line, even when it is a batch header or trailer (the batch is still
counted, so the counts after it do not hide it); with --quarantine a batch that lost lines
to quarantine cannot balance, so its checks (and the file trailer's) become warnings.
A date-only booking is the start of that day in America/Sao_Paulo.

Records as editors leave them: a UTF-8 BOM is not part of the first record; trailing blanks
stripped are padded back; blanks beyond position 240 are dropped (anything else there is an
error naming the line). `decode` and `sniff` read the bytes the same way, so a file the
reader takes is also recognized by `--format auto`.
"""

from __future__ import annotations

import codecs
import re
from datetime import date, datetime
from functools import lru_cache
from pathlib import Path
from typing import Any

from recon.errors import StatementError, StatementParseError
from recon.money import MAX_CENTS
from recon.statements.lines import (
    BUSINESS_TZ,
    Bad,
    Balance,
    Coverage,
    LineError,
    ParseResult,
    classify,
    clean,
    days_coverage,
)

RECORD = 240
# FEBRABAN's categories of a lançamento (segment E, positions 170-172) that say the line is
# one of the bank's own: 102 encargos, 105 tarifas, 110 IOF, 211 dividendos
CODE_KINDS = {"102": "interest", "105": "fee", "110": "fee", "211": "yield"}
# The batch services (positions 10-11) a CNAB 240 file may hold, to name what a file is when
# it is not an extrato (04).
SERVICES = {
    "01": "cobrança",
    "20": "pagamento a fornecedores",
    "22": "pagamento de tributos",
    "30": "pagamento de salários",
    "98": "pagamentos diversos",
}
# A file header as the reader sees it once padded back to 240: 1-3 bank (digits), 4-7 lot
# "0000", 8 record type 0, 9-17 blanks (digits in some banks' layouts, e.g. Itaú SISPAG's
# layout version at 15-17).
_FILE_HEADER = re.compile(r"[0-9]{3}00000[0-9 ]{9}")


@lru_cache(maxsize=8192)
def cnab_day(text: str, field: str) -> str:
    """DDMMAAAA -> the start of that day in the business time zone, ISO with offset."""
    if len(text) != 8 or not text.isdigit():
        raise LineError(field, f"not a DDMMAAAA date: {text!r}")
    try:
        day = date(int(text[4:]), int(text[2:4]), int(text[:2]))
    except ValueError as exc:
        raise LineError(field, f"not a date: {text!r}") from exc
    return datetime(day.year, day.month, day.day, tzinfo=BUSINESS_TZ).isoformat()


def _number(record: str, start: int, end: int, field: str) -> int:
    text = record[start - 1 : end]
    if not text.isdigit():
        raise LineError(field, f"positions {start}-{end} must be digits, got {text!r}")
    return int(text)


def _signed(record: str, start: int, end: int, sign_pos: int, field: str) -> int:
    value = _number(record, start, end, field)
    if value > MAX_CENTS:
        raise LineError(field, f"{value} cents is out of range (more than 2^63 - 1)")
    sign = record[sign_pos - 1]
    if sign == "D":
        return -value
    if sign == "C":
        return value
    raise LineError(field, f"position {sign_pos} must be D or C, got {sign!r}")


def _detail(record: str, line: int) -> tuple[Any, ...]:
    booked = cnab_day(record[142:150], "data_lancamento")
    cents = _signed(record, 151, 168, 169, "valor_lancamento")
    direction = "debit" if cents < 0 else "credit"
    history = clean(record[176:201])
    document = clean(record[201:240])
    category = record[169:172]
    kind, e2e, refund_of = classify(
        direction, history, document, code_kind=CODE_KINDS.get(category)
    )
    # A document that is the PIX id itself is not a bank reference (it would hide the
    # OFX FITID when the view merges formats).
    reference = None if document in (e2e, refund_of) else document
    return (
        line,
        booked,
        cents,
        direction,
        kind,
        e2e,
        None,
        refund_of,
        None,
        None,
        None,
        history,
        reference,
    )


def fit(line: str) -> str:
    """A record as the reader reads it: without its line end, and without blanks beyond
    position 240 (an editor's; anything else there stays, to be refused). Shorter records
    are padded back by the reader itself, which needs to know where they were cut."""
    record = line.rstrip("\r")
    if len(record) > RECORD and not record[RECORD:].strip(" "):
        return record[:RECORD]
    return record


class _Batch:
    __slots__ = ("bad", "credits", "debits", "header_line", "opening", "opening_day", "records")

    def __init__(self, header_line: int, opening: int | None, opening_day: date | None = None):
        self.header_line = header_line
        self.opening = opening
        self.opening_day = opening_day
        self.records = 1
        self.debits = 0
        self.credits = 0
        self.bad = 0


class _File:
    """One CNAB 240 file as it is read: its open batch, its counts, the accounts it names."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.result = ParseResult()
        self.batch: _Batch | None = None
        self.batches = 0
        self.records = 0
        self.trailer_seen = False
        self.accounts: dict[str, None] = {}  # the batches' agência/conta (else the file header's)
        self.company: str | None = None

    def fail(self, line: int, field: str, message: str, lost: bool) -> None:
        """A failed check: the error, unless lines were lost to bad records before it (then
        the first bad record is the error, or with --quarantine this is a warning)."""
        if lost:
            self.result.warnings.append(f"line {line}: {field}: {message} (lines were quarantined)")
            return
        raise StatementParseError(message, file=self.source, line=line, field=field)

    def read(self, text: str) -> ParseResult:
        """Every record of `text`, then the file's checks."""
        if text.startswith("\ufeff"):
            text = text[1:]  # a BOM is not part of the first record
        for line, raw in enumerate(text.split("\n"), start=1):
            record = fit(raw)
            if not record.strip():
                continue
            self.records += 1
            if len(record) < RECORD:
                cut = len(record)
                record = record.ljust(RECORD)  # editors strip trailing blanks
                if record[7] == "3" and _cut_id(record, cut):
                    self.lost(
                        Bad(
                            line,
                            "numero_documento",
                            f"record cut short at {cut} characters inside its PIX id "
                            f"{record[201:cut]!r}",
                            raw,
                        )
                    )
                    continue
            elif len(record) > RECORD:
                self.too_long(record, line)
                continue
            try:
                self.record(record, line)
            except LineError as exc:
                self.lost(Bad(line, exc.field, exc.reason, record))
        return self.close()

    def lost(self, bad: Bad) -> None:
        """A record not read: quarantined, and counted against its batch."""
        self.result.bad.append(bad)
        if self.batch is not None:
            self.batch.bad += 1

    def too_long(self, record: str, line: int) -> None:
        """A record longer than 240 characters: the error at its line, and still a record of
        its batch (a batch header opens its batch and a trailer closes it), so the counts
        after it hold."""
        self.result.bad.append(
            Bad(
                line,
                "record",
                f"{len(record)} characters, not {RECORD} (more than blanks after "
                f"position {RECORD})",
                record,
            )
        )
        if record[7] == "1":
            if self.batch is not None:
                _unclosed(self.batch, self.source)
            self.batch = _Batch(line, None)
            self.batches += 1
        elif record[7] == "9":
            self.trailer_seen = True
        if self.batch is not None:
            self.batch.bad += 1
            self.batch.records += 1
            if record[7] == "5":
                self.batch = None

    def record(self, record: str, line: int) -> None:
        """One record of 240 characters, by its type (position 8)."""
        kind = record[7]
        if kind == "3":
            self.detail(record, line)
        elif kind == "1":
            self.batch_header(record, line)
        elif kind == "5":
            self.batch_trailer(record, line)
        elif kind == "9":
            self.file_trailer(record, line)
        elif kind == "0":
            self.company = _account(record)
        else:
            raise LineError("tipo_registro", f"unknown record type {kind!r} at position 8")

    def detail(self, record: str, line: int) -> None:
        """A detail record (segment E): one statement line."""
        batch = self.batch
        if batch is None:
            raise LineError("tipo_registro", "detail record outside a batch")
        batch.records += 1
        if record[13] != "E":
            raise LineError("segmento", f"segment {record[13]!r}, expected 'E'")
        row = _detail(record, line)
        self.result.rows.append(row)
        if row[2] < 0:
            batch.debits -= row[2]
        else:
            batch.credits += row[2]

    def batch_header(self, record: str, line: int) -> None:
        """A batch header: an extrato's batch opens, with its account and opening balance."""
        service = record[9:11]
        if service != "04":
            what = f" ({SERVICES[service]})" if service in SERVICES else ""
            raise StatementError(
                f"{self.source}:{line}: batch service {service!r}{what} is not 04 (extrato)"
            )
        if self.batch is not None:
            _unclosed(self.batch, self.source)
        # The batch is open (and counted) before its balance is read: an unreadable
        # header is then the error at its line, not the counts after it.
        self.batch = _Batch(line, None, _day(record[142:150]))
        self.batches += 1
        if named := _account(record):
            self.accounts[named] = None
        opening = self.batch.opening = _signed(record, 151, 168, 169, "saldo_inicial")
        if (day := self.batch.opening_day) is not None:  # the balance walk's opening of that day
            self.result.balances.append(
                Balance(day, "opening", opening, "cnab240 saldo_inicial", line)
            )

    def batch_trailer(self, record: str, line: int) -> None:
        """A batch trailer: the batch closes, its counts and balances checked."""
        if self.batch is None:
            raise LineError("tipo_registro", "batch trailer without a batch header")
        closed, self.batch = self.batch, None  # closed even when its trailer is unreadable
        closed.records += 1
        try:
            _check_batch(record, line, closed, self.fail, self.result)
        except LineError:
            closed.bad += 1
            raise
        _cover(closed.opening_day, _day(record[142:150]), self.result)

    def file_trailer(self, record: str, line: int) -> None:
        """The file trailer: its counts of batches and records checked."""
        self.trailer_seen = True
        want_batches = _number(record, 18, 23, "qtd_lotes")
        want_records = _number(record, 24, 29, "qtd_registros")
        lost = bool(self.result.bad)
        batches, records = self.batches, self.records
        if want_batches != batches:
            self.fail(
                line, "qtd_lotes", f"trailer says {want_batches} batches, file has {batches}", lost
            )
        if want_records != records:
            self.fail(
                line,
                "qtd_registros",
                f"trailer says {want_records} records, file has {records}",
                lost,
            )
        self.result.checks.append(f"file trailer: {batches} batches, {records} records")

    def close(self) -> ParseResult:
        """The result once every record is read: the file must be whole."""
        if self.records == 0:
            raise StatementError(f"{self.source}: empty CNAB 240 file")
        if self.batch is not None:
            _unclosed(self.batch, self.source)
        if not self.trailer_seen:
            raise StatementParseError(
                "no file trailer (record type 9)", file=self.source, line=self.records
            )
        declared = list(self.accounts) or ([self.company] if self.company else [])
        if declared:  # what `inspect` shows beside the account label
            self.result.info["declared_account"] = ", ".join(declared)
        return self.result


def parse_text(text: str, source: str) -> ParseResult:
    """Parse CNAB 240 text (one 240-character record per line)."""
    return _File(source).read(text)


def _account(record: str) -> str | None:
    """The bank, agência and conta a file or batch header names (positions 1-3, 53-57 and
    its digit at 58, 59-70 and its digit at 71), e.g. "341 ag 1234 c/c 12345-6"; None when
    the fields hold no number."""
    agency, account = record[52:57].strip().lstrip("0"), record[58:70].strip().lstrip("0")
    if not (agency.isdigit() and account.isdigit()):
        return None
    # the account's digit at 71, or (Itaú) at 72, where FEBRABAN puts the agência/conta digit
    agency_dv, account_dv = record[57].strip(), record[70].strip() or record[71].strip()
    return (
        f"{record[0:3]} ag {agency}{'-' + agency_dv if agency_dv else ''} "
        f"c/c {account}{'-' + account_dv if account_dv else ''}"
    )


def _unclosed(batch: _Batch, source: str) -> None:
    raise StatementParseError(
        "batch has no trailer (file cut short?)", file=source, line=batch.header_line
    )


def _day(text: str) -> date | None:
    """A DDMMAAAA balance date, or None when blank or not a date (it only sets coverage)."""
    try:
        return date(int(text[4:]), int(text[2:4]), int(text[:2])) if text.isdigit() else None
    except ValueError:
        return None


def _cover(first: date | None, last: date | None, result: ParseResult) -> None:
    """A batch covers its opening balance date through its closing balance date (whole
    business days); without both dates the file states no period for it."""
    if first is None or last is None or last < first:
        result.warnings.append("batch balance dates missing or reversed: no statement period")
        return
    periods: list[Coverage] = result.coverage if result.coverage is not None else []
    periods.append(days_coverage(first, last, "cnab240 balance dates"))
    result.coverage = periods


def _cut_id(record: str, cut: int) -> bool:
    """A detail record that ends inside a PIX id in its document number (202-240): an id is
    32 characters, so a record whose document starts like one and stops before its 32nd
    character lost the rest, which no editor's blank-stripping explains."""
    document = record[201:cut]
    return (
        201 < cut < 233
        and document[:1] in ("E", "D")
        and document[1:9].isdigit()
        and document.strip() == document
    )


def _check_batch(record: str, line: int, batch: _Batch, fail: Any, result: ParseResult) -> None:
    closing = _signed(record, 151, 168, 169, "saldo_final")
    closing_day = _day(record[142:150])
    if closing_day is not None:  # the balance walk's closing of that day
        result.balances.append(
            Balance(closing_day, "closing", closing, "cnab240 saldo_final", line)
        )
    count = _number(record, 171, 176, "qtd_registros")
    debits = _number(record, 177, 194, "somatoria_debitos")
    credits = _number(record, 195, 212, "somatoria_creditos")
    lost = batch.bad > 0  # lines quarantined: the batch cannot balance
    if debits != batch.debits:
        fail(
            line,
            "somatoria_debitos",
            f"trailer says {debits} cents of debits, lines sum to {batch.debits}",
            lost,
        )
    if credits != batch.credits:
        fail(
            line,
            "somatoria_creditos",
            f"trailer says {credits} cents of credits, lines sum to {batch.credits}",
            lost,
        )
    if count != batch.records:
        fail(
            line,
            "qtd_registros",
            f"trailer says {count} records in the batch, it has {batch.records}",
            lost,
        )
    if batch.opening is None:  # its header could not be read (a bad line already)
        result.warnings.append(
            f"line {line}: saldo_final: the batch at line {batch.header_line} has no readable "
            "opening balance, its balance is not checked (lines were quarantined)"
        )
        return
    opening = batch.opening
    if opening + batch.credits - batch.debits != closing:
        fail(
            line,
            "saldo_final",
            f"opening {opening} + credits {batch.credits} - debits {batch.debits} "
            f"= {opening + batch.credits - batch.debits}, closing balance says {closing}",
            lost,
        )
    result.checks.append(
        f"batch at line {batch.header_line}: opening {opening} + {batch.credits} - "
        f"{batch.debits} = closing {closing} cents, {batch.records} records"
    )


def decode(raw: bytes) -> str:
    """The text of CNAB 240 bytes, as the reader and the sniffer read them.

    A UTF-8 BOM is dropped. Positions count one byte per character in the standard, so one
    byte is one character (latin-1) unless the bytes say a UTF-8 writer counted characters:
    they are valid UTF-8 and a record holding an accent is longer than 240 bytes but 240
    characters in UTF-8 (blanks beyond 240 aside), and no record holding an accent is exactly
    240 bytes (a writer that counted bytes). Records shortened by an editor do not tell: they
    are read one byte one character, which at worst puts the history's last character (a
    blank) before the document number, where UTF-8 read wrongly would cut the document's
    first character (a PIX id) off.
    """
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    if raw.isascii():
        return raw.decode("ascii")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")
    characters = False
    for record in raw.split(b"\n"):
        record = record.rstrip(b"\r")
        if record.isascii():
            continue
        if len(record) == RECORD:
            return raw.decode("latin-1")  # its writer counted bytes
        if len(record) > RECORD and len(fit(record.decode("utf-8"))) <= RECORD:
            characters = True
    return text if characters else raw.decode("latin-1")


def sniff(head: bytes) -> bool:
    """Whether a file starting with `head` opens with a CNAB 240 file header, read as the
    reader reads it (`decode`, then `fit`): record type 0 at position 8 after lot 0000 and a
    3-digit bank, blanks or digits at 9-17, and no more than 240 characters (a shorter
    record is padded back)."""
    cut = head.rfind(b"\n")
    text = decode(head[: cut + 1] if cut > 0 else head)
    for line in text.split("\n", 64):
        record = fit(line)
        if record.strip():
            return len(record) <= RECORD and _FILE_HEADER.match(record.ljust(RECORD)) is not None
    return False


def parse_file(path: Path) -> ParseResult:
    """Parse a CNAB 240 extrato file (ASCII, latin-1 or UTF-8: `decode`)."""
    return parse_text(decode(path.read_bytes()), str(path))
