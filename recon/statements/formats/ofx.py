"""OFX 1.x (SGML) and 2.x (XML) bank statements, read by our own tolerant reader.

Why our own: ofxtools is GPLv3 (recon is Apache-2.0) and ofxparse is unmaintained and
strict about exactly the quirks Brazilian banks ship. We only need STMTTRN blocks, so a
small regex reader does it, and is fast enough for a million lines.

Quirks handled:
- encoding: the header's CHARSET/ENCODING are often wrong (USASCII with accented names), so
  the bytes are read as UTF-8 when they are valid UTF-8, else as cp1252 (latin-1 for the
  five bytes cp1252 leaves undefined);
- unclosed SGML tags (`<TRNAMT>-10.00` with no `</TRNAMT>`), lower-case tags, XML entities;
- TRNAMT with a comma decimal ("-200,50"), blanks or zero padding ("  0000012.30");
  a positive TRNAMT on a debit TRNTYPE (DEBIT, PAYMENT, FEE, ...) is taken as a debit;
- dates "YYYYMMDD[HHMMSS[.XXX]][offset:TZ]" with zones like "[-3:GMT]" or "[-03:BRT]"
  (the offset counts, the name is ignored); a date-only value is the start of that day in
  the business time zone (America/Sao_Paulo) and a time without a zone is local time
  there too (Brazilian banks mean local time; the OFX spec's GMT default would shift
  every such line by three hours);
- every DTPOSTED of a file at one clock other than midnight (Banco do Brasil, Caixa and
  Bradesco 12:00:00, Itaú 10:00:00) is a placeholder: the lines are read as dates, and a
  DTSTART at that clock as its day (`_placeholder_clock`);
- empty LEDGERBAL/AVAILBAL amounts are ignored; a SALDO row with no amount (Caixa) is a
  balance, not a line.
FITID is kept as bank_reference exactly as written (only the element's leading and trailing
blanks stripped). For PIX the bank writes the end-to-end id (and, for a
devolução, the return id then the original id) in MEMO: "PIX RECEBIDO E… NOME",
"DEVOLUCAO PIX D… REF E…"; NAME holds the counterparty when the bank fills it, else the
words after the ids in MEMO are used.

The account a file names (ACCTID of BANKACCTFROM, CCACCTFROM or INVACCTFROM, as written; the
distinct ones joined with ", " when it holds several) is `info["declared_account"]`, shown by
`recon statements inspect` as a CSV preamble's account number is; it never replaces the
account label of the import.

A file may hold several statements (STMTRS, CCSTMTRS, INVSTMTRS): each has its own period,
account, currency and balances, and its own transactions. What a file holds decides what is
read and what period it covers (docs/statements.md, OFX): statements of several accounts
cover nothing; an investment statement's cash lines are read but cover nothing, and a file
of investment statements only is refused; a period contradicted by its own lines is widened
to them; a currency other than BRL is read as it is, with a warning; a bank's error response
is refused with its code and message.
"""

from __future__ import annotations

import codecs
import html
import re
from bisect import bisect_right
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from recon.errors import StatementError, StatementParseError
from recon.money import AmountError, parse_cents
from recon.pii import mask_card
from recon.schemas import TS
from recon.statements.describe import describe, name_and_document
from recon.statements.lines import (
    BUSINESS_TZ,
    EPOCH,
    PARSED_SCHEMA,
    Bad,
    Balance,
    Coverage,
    LineError,
    ParseResult,
    business_day,
    classify,
    clean,
    currency_warning,
    days_coverage,
    iso_to_us,
    local_text,
    to_us,
    vclean,
    vkind,
)

_TRN_SPLIT = re.compile(r"<STMTTRN>", re.IGNORECASE)
# Where a transaction's fields end: its closing tag or, for a bank that never closes
# STMTTRN, the end of its list or statement, or the statement's balances. A field after that
# is not the transaction's: every Nubank account export has <BALLIST><BAL><NAME>RENDIMENTO
# LIQUIDO after its last </STMTTRN>. Both paths cut each block here (tests check they agree).
_END_TAGS = (
    "</STMTTRN>",
    "</BANKTRANLIST>",
    "</STMTRS>",
    "</CCSTMTRS>",
    "</INVBANKTRAN>",
    "</INVTRANLIST>",
    "</INVSTMTRS>",
    "<STMTTRNRS>",
    "<CCSTMTTRNRS>",
    "<LEDGERBAL>",
    "<AVAILBAL>",
    "<BALLIST>",
)
_TRN_END = re.compile("|".join(_END_TAGS), re.IGNORECASE)
_TRN_END_RE2 = "(?is)(?:" + "|".join(_END_TAGS) + ").*"
_FIELD = re.compile(r"<([A-Za-z0-9.]+)>([^<]*)")
_DATE = re.compile(
    r"(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(?:(\d{2})(?:\.(\d{1,6})\d*)?)?)?"
    r"\s*(?:\[\s*([+-]?\d{1,2}(?:[.:]\d{1,2})?)\s*(?::[^\]]*)?\])?"
)
_PLAIN = re.compile(r"[-+]?[0-9]{1,13}[.,][0-9]{2}")
_DOC = re.compile(
    r"[\d*]{2}\.[\d*]{3}\.[\d*]{3}/[\d*]{4}-[\d*]{2}|[\d*]{3}\.[\d*]{3}\.[\d*]{3}-[\d*]{2}"
)
_DEBIT_TYPES = frozenset(
    {"DEBIT", "PAYMENT", "FEE", "SRVCHG", "ATM", "POS", "CHECK", "DIRECTDEBIT", "REPEATPMT"}
)
# TRNTYPEs that say a line is one of the bank's own (OFX 1.6 and 2.x: FEE "FI fee", SRVCHG
# "service charge", INT "interest earned or paid", DIV "dividend")
_CODE_KINDS = {"FEE": "fee", "SRVCHG": "fee", "INT": "interest", "DIV": "yield"}


def decode(raw: bytes) -> str:
    """Text of an OFX file whatever its header claims (see module doc)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="latin1fallback")


def _latin1_fallback(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeDecodeError):
        raise exc
    bad = exc.object[exc.start : exc.end]
    return bytes(bad).decode("latin-1"), exc.end


codecs.register_error("latin1fallback", _latin1_fallback)


@lru_cache(maxsize=256)
def _offset_text(spec: str) -> str:
    """ "-3" / "-03" / "-3.5" / "+5:30" -> "-03:00" / "-03:00" / "-03:30" / "+05:30"."""
    sign = "-" if spec.startswith("-") else "+"
    body = spec.lstrip("+-")
    if ":" in body:
        hours_s, minutes_s = body.split(":", 1)
        hours, minutes = int(hours_s), int(minutes_s)
    elif "." in body:
        value = float(body)  # fractional hours of a time zone, not money
        hours, minutes = int(value), round((value - int(value)) * 60)
    else:
        hours, minutes = int(body), 0
    if hours > 14 or minutes >= 60:
        raise LineError("DTPOSTED", f"time zone offset out of range: {spec!r}")
    return f"{sign}{hours:02d}:{minutes:02d}"


@lru_cache(maxsize=8192)
def _local_offset(y: int, m: int, d: int, hh: int) -> str:
    try:
        off = datetime(y, m, d, hh, tzinfo=BUSINESS_TZ).utcoffset()
    except ValueError as exc:
        raise LineError("DTPOSTED", f"not a date: {y:04d}-{m:02d}-{d:02d}") from exc
    assert off is not None
    minutes = int(off.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def ofx_time(text: str, field: str = "DTPOSTED") -> str:
    """An OFX date/time as ISO 8601 text with a UTC offset (see module doc for defaults)."""
    m = _DATE.fullmatch(text.strip())
    if m is None:
        raise LineError(field, f"not an OFX date: {text!r}")
    y, mo, d, hh, mi, ss, frac, tz = m.groups()
    if tz is not None:
        offset = _offset_text(tz)
    else:
        offset = _local_offset(int(y), int(mo), int(d), int(hh or 0))
    clock = f"{hh or '00'}:{mi or '00'}:{ss or '00'}" + (f".{frac}" if frac else "")
    return f"{y}-{mo}-{d}T{clock}{offset}"


def ofx_cents(text: str) -> int:
    """TRNAMT: "-10.00", "-10,00", " 0000012.30 ". OFX never groups thousands, so a single
    "," or "." is the decimal mark."""
    s = text.strip()
    if _PLAIN.fullmatch(s):  # "-10.00" or "-10,00": exact integer arithmetic, no parsing
        whole, frac = s[:-3], s[-2:]
        cents = abs(int(whole)) * 100 + int(frac)
        return -cents if whole.startswith("-") else cents
    if "," in s and "." not in s:
        mark: str | None = ","
    elif "." in s and "," not in s:
        mark = "."
    else:
        mark = None
    try:
        return parse_cents(s, decimal_mark=mark)
    except AmountError as exc:
        raise LineError("TRNAMT", str(exc)) from exc


def _document(text: str | None) -> str | None:
    # A CPF/CNPJ needs a '.' and a '-'; skip the regex for texts that cannot hold one.
    if not text or "-" not in text or "." not in text:
        return None
    m = _DOC.search(text)
    return m.group(0) if m else None


def _counterparty(name: str | None, memo: str | None) -> tuple[str | None, str | None]:
    """(name, document): NAME when the bank fills it, else what the MEMO says of the
    counterparty, read by the one parser of banks' free texts (recon.statements.describe:
    Nubank's "Transferência … - NAME - •••.123.456-•• - BANK", Inter's "Cp :ISPB-NAME", the
    words after a PIX id, …). A document (formatted in either text, or a bare CPF/CNPJ in
    the name) is taken out of the name."""
    said = describe(memo)
    doc = _document(memo) or _document(name) or said.document
    if not name:
        return said.name, doc
    return name_and_document(clean(_DOC.sub("", name)) if _document(name) else name, doc)


# A balance a bank lists among its transactions with no amount: Caixa's "SALDO DIA" with
# <TRNAMT>            .  </TRNAMT>. Not money: skipped and counted in the checks.
_NO_AMOUNT = re.compile(r"\s*[.,]?\s*")
_BALANCE_WORD = re.compile(r"\s*SALDO\b", re.IGNORECASE)


def _balance_row(fields: dict[str, str]) -> bool:
    amount = fields.get("TRNAMT")
    if amount is not None and not _NO_AMOUNT.fullmatch(amount):
        return False
    return any(_BALANCE_WORD.match(fields.get(k) or "") for k in ("MEMO", "NAME"))


def _transaction(fields: dict[str, str], line: int) -> tuple[Any, ...]:
    amount_text = fields.get("TRNAMT")
    if amount_text is None or not amount_text.strip():
        raise LineError("TRNAMT", "missing")
    cents = ofx_cents(amount_text)
    posted = fields.get("DTPOSTED") or fields.get("DTUSER")
    if not posted or not posted.strip():
        raise LineError("DTPOSTED", "missing")
    booked = ofx_time(posted)
    trntype = (fields.get("TRNTYPE") or "").strip().upper()
    if cents > 0 and trntype in _DEBIT_TYPES:
        cents = -cents
    direction = "debit" if cents < 0 else "credit"
    memo = clean(fields.get("MEMO"))
    name = clean(fields.get("NAME") or fields.get("PAYEE"))
    text = " ".join(t for t in (memo, name) if t)
    kind, e2e, refund_of = classify(direction, text, None, code_kind=_CODE_KINDS.get(trntype))
    cp_name, cp_doc = _counterparty(name, memo)
    fitid = fields.get("FITID") or None  # as written (stripped): an id, not text to tidy
    return (
        line,
        booked,
        cents,
        direction,
        kind,
        e2e,
        None,
        refund_of,
        cp_name,
        cp_doc,
        None,
        memo or name,
        fitid,
    )


_RE2_ID = r"[0-9]{20}[A-Za-z0-9]{11}"
_RE2_FIRST_E = rf"(?:^|[^A-Za-z0-9])(?P<v>E{_RE2_ID})(?:[^A-Za-z0-9]|$)"
_RE2_FIRST_D = rf"(?:^|[^A-Za-z0-9])(?P<v>D{_RE2_ID})(?:[^A-Za-z0-9]|$)"
_RE2_TAIL = rf"^(?:.*[^A-Za-z0-9])?[ED]{_RE2_ID}(?P<v>(?:[^A-Za-z0-9].*)?)$"
_RE2_DATE = (
    r"^(?P<y>[0-9]{4})(?P<m>[0-9]{2})(?P<d>[0-9]{2})(?P<H>[0-9]{2})(?P<M>[0-9]{2})"
    r"(?P<S>[0-9]{2})(?P<f>\.[0-9]{1,6})?\s*\[\s*(?P<z>[+-]?[0-9]{1,2})\s*(?::[A-Za-z]*)?\]$"
)
_RE2_MEMO_WORDS = (
    r"(?i)^(?:(?:(?:PIX|RECEBIDO|ENVIADO|DEVOLUCAO|DEVOLUÇÃO|TRANSF|REF|DE|PARA)\b|[-:])\s*)+"
)
_FAST_TAGS = ("TRNTYPE", "DTPOSTED", "TRNAMT", "FITID", "NAME", "MEMO")


def _fast(chunks: list[str], first_line: int) -> ParseResult | None:
    """Vectorized read (pyarrow, RE2) of STMTTRN blocks of the common shape; None = use the
    block-by-block path. Taken only when nothing needs that path's extra care (entities,
    lower-case tags, PAYEE/DTUSER, repeated tags, documents in the text, dates without a
    full time and an hour offset, odd amounts); tests check both paths agree."""
    blocks = chunks[1:]
    n = len(blocks)
    if n == 0:
        return None
    full = _bodies(blocks)
    odd = r"&|<[a-z]|<PAYEE>|<DTUSER>|<CURRENCY>|<ORIGCURRENCY>"
    if pc.any(pc.match_substring_regex(full, odd)).as_py():
        return None
    for label in _FAST_TAGS:
        if pc.max(pc.count_substring(full, f"<{label}>")).as_py() > 1:
            return None

    def tag(name: str) -> Any:
        found = pc.extract_regex(full, rf"<{name}>(?P<v>[^<]*)")
        return pc.utf8_trim_whitespace(pc.struct_field(found, "v"))

    trntype = pc.utf8_upper(pc.fill_null(tag("TRNTYPE"), ""))
    cents = _fast_cents(tag("TRNAMT"), trntype)
    booked = _fast_booked(tag("DTPOSTED"))
    if cents is None or booked is None:
        return None
    negative = pc.less(cents, 0)
    direction = pc.if_else(negative, "debit", "credit")
    memo = vclean(tag("MEMO"))
    name = vclean(tag("NAME"))
    text = pc.binary_join_element_wise(pc.fill_null(memo, ""), pc.fill_null(name, ""), " ")
    text = pc.utf8_trim_whitespace(text)
    if pc.any(pc.match_substring_regex(text, _DOC.pattern)).as_py():
        return None
    upper = pc.utf8_upper(text)
    e_id = pc.struct_field(pc.extract_regex(text, _RE2_FIRST_E), "v")
    d_id = pc.struct_field(pc.extract_regex(text, _RE2_FIRST_D), "v")
    # classify's rule, over the column (lines.vkind): the same words, the same order
    codes = pc.index_in(trntype, value_set=pa.array(list(_CODE_KINDS)))
    code_kind = pc.take(pa.array(list(_CODE_KINDS.values())), codes)
    kind, by_ids = vkind(negative, upper, pc.is_valid(e_id), pc.is_valid(d_id), code_kind)
    null = pa.scalar(None, pa.string())
    e2e = pc.if_else(by_ids, d_id, e_id)
    refund_of = pc.if_else(by_ids, e_id, null)
    counterparty = _fast_counterparty(memo, name, pc.and_(pc.is_null(e_id), pc.is_null(d_id)))
    if counterparty is None:
        return None
    counts = np.fromiter((b.count("\n") for b in blocks), dtype=np.int64, count=n)
    lines = first_line + np.concatenate([[0], np.cumsum(counts)[:-1]])
    result = ParseResult()
    result.table = pa.table(
        [
            pa.array(lines, pa.int64()),
            booked,
            cents,
            direction,
            kind,
            e2e,
            pa.nulls(n, pa.string()),
            refund_of,
            counterparty,
            pa.nulls(n, pa.string()),
            pa.nulls(n, pa.string()),
            pc.coalesce(memo, name),
            _nonempty(tag("FITID")),  # as written (trimmed), inner blanks kept
            pa.nulls(n, pa.int64()),
        ],
        schema=PARSED_SCHEMA,
    )
    return result


def _fast_cents(amount: Any, trntype: Any) -> Any:
    """TRNAMT in cents, a debit TRNTYPE's positive amount turned; None unless every amount
    has two decimals."""
    if (
        amount.null_count
        or not pc.all(pc.match_substring_regex(amount, r"^[+-]?[0-9]{1,13}[.,][0-9]{2}$")).as_py()
    ):
        return None
    cents = pc.cast(
        pc.multiply(
            pc.cast(pc.replace_substring(amount, ",", "."), pa.decimal128(20, 2)),
            pa.scalar(100, pa.decimal128(3, 0)),
        ),
        pa.int64(),
    )
    debit_type = pc.is_in(trntype, value_set=pa.array(sorted(_DEBIT_TYPES)))
    return pc.if_else(pc.and_(pc.greater(cents, 0), debit_type), pc.negate(cents), cents)


def _fast_booked(posted: Any) -> Any:
    """DTPOSTED as ISO 8601 with its offset; None unless every one has a full time and an
    hour offset."""
    if posted.null_count:
        return None
    parts = pc.extract_regex(posted, _RE2_DATE)
    if parts.null_count:
        return None
    zones = pc.struct_field(parts, "z")
    unique = pc.unique(zones).to_pylist()
    try:
        offsets = [_offset_text(z) for z in unique]
    except LineError:
        return None
    offset = pc.take(pa.array(offsets, pa.string()), pc.index_in(zones, value_set=pa.array(unique)))
    g = {k: pc.struct_field(parts, k) for k in ("y", "m", "d", "H", "M", "S", "f")}
    return pc.binary_join_element_wise(
        g["y"], "-", g["m"], "-", g["d"], "T", g["H"], ":", g["M"], ":", g["S"], g["f"], offset, ""
    )


def _fast_counterparty(memo: Any, name: Any, no_id: Any) -> Any:
    """NAME, else what the MEMO says after its PIX words; None where the block path must
    read it (digits that may be a document or an account, a document in the text)."""
    tail = pc.struct_field(pc.extract_regex(pc.fill_null(memo, ""), _RE2_TAIL), "v")
    tail = vclean(pc.replace_substring_regex(pc.utf8_trim_whitespace(tail), _RE2_MEMO_WORDS, ""))
    # a run of digits in a name may be a document (a bare CPF) or an account: the block
    # path's parser takes it out
    if pc.any(
        pc.match_substring_regex(pc.fill_null(pc.coalesce(name, tail), ""), "[0-9]{4}")
    ).as_py():
        return None
    counterparty = pc.if_else(pc.is_valid(name), name, tail)
    # a MEMO with no PIX id is read by the parser of banks' texts (describe), once per text
    plain = pc.and_(pc.and_(pc.is_null(name), no_id), pc.is_valid(memo))
    if pc.any(plain).as_py():
        said = {t: describe(t) for t in pc.unique(pc.filter(memo, plain)).to_pylist()}
        if any(d.document for d in said.values()):
            return None
        read = pa.array([said[t].name for t in pc.filter(memo, plain).to_pylist()], pa.string())
        counterparty = pc.replace_with_mask(counterparty, plain, read)
    return counterparty


def _bodies(blocks: list[str]) -> Any:
    """Each block's own text, as an Arrow column: what follows its end is another element's
    (_END_TAGS). Almost every block ends with its </STMTTRN> (nothing to cut: that tag holds
    no field); only the others (the last one, those before another statement, a bank that
    never closes STMTTRN) are cut, in Python when few, else by RE2 over the column."""
    column = pa.array(blocks, pa.string())
    others = pc.invert(pc.match_substring_regex(column, r"</STMTTRN>\s*$"))
    where = pc.indices_nonzero(others).to_pylist()
    if not where:
        return column
    if len(where) * 10 > len(blocks):
        return pc.replace_substring_regex(column, _TRN_END_RE2, "")
    cut = []
    for index in where:
        end = _TRN_END.search(blocks[index])
        cut.append(blocks[index][: end.start()] if end else blocks[index])
    return pc.replace_with_mask(column, others, pa.array(cut, pa.string()))


def _nonempty(values: Any) -> Any:
    return pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)


_CLOSE = re.compile(r"</STMTTRN>", re.IGNORECASE)
_OFX_END = re.compile(r"</OFX>\s*\Z", re.IGNORECASE)
_BALANCE = re.compile(
    r"<(LEDGERBAL|AVAILBAL)>(.*?)(?=</LEDGERBAL>|</AVAILBAL>|<AVAILBAL>|</STMTRS>|\Z)",
    re.IGNORECASE | re.DOTALL,
)
# The statements of a file: a bank statement (STMTRS), a card statement (CCSTMTRS) or an
# investment statement (INVSTMTRS), each up to the next one's opening tag.
_OPEN = re.compile(r"<(STMTRS|CCSTMTRS|INVSTMTRS)>", re.IGNORECASE)
_HEAD_LEAF = re.compile(
    r"<(CURDEF|ACCTID|BANKID|BRANCHID|DTSTART|DTEND)>([^<\r\n]*)", re.IGNORECASE
)
# An investment statement's securities transactions (OFX 2.x INVTRANLIST), never lines.
_SECURITIES = re.compile(
    r"<(BUYDEBT|BUYMF|BUYOPT|BUYOTHER|BUYSTOCK|CLOSUREOPT|INCOME|INVEXPENSE|JRNLFUND|JRNLSEC|"
    r"MARGININTEREST|REINVEST|RETOFCAP|SELLDEBT|SELLMF|SELLOPT|SELLOTHER|SELLSTOCK|SPLIT|"
    r"TRANSFER)>",
    re.IGNORECASE,
)
_POSITIONS = re.compile(r"<POS(?:DEBT|MF|OPT|OTHER|STOCK)>", re.IGNORECASE)
INVESTMENT = "INVSTMTRS"


@dataclass
class _Statement:
    """One statement of a file: its tag ("" when the file has none: its transactions are read
    as one statement), where it is in the text, the leaves before its first transaction
    (CURDEF, ACCTID, BANKID, BRANCHID, DTSTART, DTEND; the first of each), its blocks."""

    tag: str
    start: int
    end: int
    head: dict[str, str] = field(default_factory=dict)
    blocks: list[int] = field(default_factory=list)
    tail: int = 0  # where its last block starts (its start if none): its balances follow

    @property
    def account(self) -> str | None:
        return self.head.get("ACCTID") or None

    def label(self, several: bool) -> str:
        """'' for the only statement of a file, else 'ACCTID 123: ' to prefix its messages."""
        return f"ACCTID {self.account or '?'}: " if several else ""


def _statements(text: str, chunks: list[str]) -> tuple[list[_Statement], np.ndarray]:
    """The file's statements and, for each STMTTRN block, the index of its statement."""
    n = len(chunks) - 1
    opens = [(m.start(), m.group(1).upper()) for m in _OPEN.finditer(text)]
    if len(opens) <= 1:
        tag, start = opens[0][1] if opens else "", opens[0][0] if opens else 0
        st = _Statement(tag, start, len(text), blocks=list(range(n)))
        first = len(chunks[0]) if n else len(text)
        st.head = _head(text[start:first] if first > start else chunks[0])
        st.tail = len(text) - len(chunks[-1]) - 9 if n else start
        return [st], np.zeros(n, dtype=np.int64)
    statements = [
        _Statement(tag, at, opens[i + 1][0] if i + 1 < len(opens) else len(text))
        for i, (at, tag) in enumerate(opens)
    ]
    starts = [st.start for st in statements]
    owner = np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n, dtype=np.int64)
    at = len(chunks[0])
    for index in range(n):
        offsets[index] = at
        owner[index] = max(bisect_right(starts, at) - 1, 0)
        statements[owner[index]].blocks.append(index)
        at += 9 + len(chunks[index + 1])  # len("<STMTTRN>")
    for st in statements:
        first = int(offsets[st.blocks[0]]) if st.blocks else st.end
        st.head = _head(text[st.start : max(first, st.start)])
        st.tail = int(offsets[st.blocks[-1]]) if st.blocks else st.start
    return statements, owner


# A status the bank reports (SONRS, STMTTRNRS, ...): <CODE>, <SEVERITY>, <MESSAGE> in order.
_ERROR = re.compile(r"<SEVERITY>\s*ERROR\b", re.IGNORECASE)
_RESPONSE = re.compile(r"<([A-Z0-9.]*RS)>", re.IGNORECASE)
_CODE = re.compile(r"<CODE>\s*([^<\s]*)", re.IGNORECASE)
_MESSAGE = re.compile(r"\s*(?:</SEVERITY>\s*)?<MESSAGE>([^<]*)", re.IGNORECASE)


def _errors(text: str, start: int, end: int) -> list[str]:
    """The error statuses the bank reports in text[start:end], each as 'SONRS error 15500:
    'message''."""
    found = []
    for m in _ERROR.finditer(text, start, end):
        before = text[max(0, m.start() - 2000) : m.start()]
        codes, responses = _CODE.findall(before), _RESPONSE.findall(before)
        what = f"{responses[-1].upper() if responses else 'status'} error"
        what += f" {codes[-1]}" if codes and codes[-1] else ""
        said = _MESSAGE.match(text, m.end())
        message = _bounded(html.unescape(said.group(1)), 160) if said else ""
        found.append(what + (f" {message!r}" if message else ""))
    return found


def _status(
    text: str, chunks: list[str], statements: list[_Statement], source: str, notes: list[str]
) -> None:
    """A bank's error response instead of a statement (a failed sign-on, a server error) is
    refused with the bank's own code and message; an error beside statements is a warning.
    Statuses are looked for outside the transactions only (the file's head and each
    statement's end), so a large file is not scanned twice."""
    first = len(chunks[0])
    errors = _errors(text, 0, first)
    for st in statements:
        if st.end > first:
            errors += _errors(text, max(st.tail, first), st.end)
    empty = not statements[0].tag and not statements[0].blocks
    if empty and errors:
        raise StatementError(
            f"{source}: the bank answered with an error, not a statement: {'; '.join(errors)}"
        )
    if empty and "<BANKTRANLIST>" not in chunks[0].upper():
        notes.append("no bank or card statement in the file (no STMTRS, CCSTMTRS or STMTTRN)")
    notes.extend(f"the bank reports {e}: a statement may be missing" for e in errors)


def _head(text: str) -> dict[str, str]:
    head: dict[str, str] = {}
    for tag, value in _HEAD_LEAF.findall(text):
        head.setdefault(tag.upper(), value.strip())
    return head


def _left_out(text: str) -> str:
    """What an investment statement holds that recon does not read, in words ('' = nothing)."""
    kinds = Counter(m.upper() for m in _SECURITIES.findall(text))
    parts = []
    if kinds:
        total = sum(kinds.values())
        by_kind = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        parts.append(f"{_plural(total, 'securities transaction')} ({by_kind})")
    positions = len(_POSITIONS.findall(text))
    if positions:
        parts.append(f"{_plural(positions, 'position')} (INVPOSLIST)")
    return " and ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _bounded(text: str, limit: int = 300) -> str:
    """One line of at most `limit` characters (a message may quote what a file holds)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."


def _investments(text: str, statements: list[_Statement], source: str, warnings: list[str]) -> None:
    """An investment statement is not a bank statement: a file of investment statements only,
    with no cash line, is refused; an investment statement's cash lines (INVBANKTRAN) are
    read, but it covers no period (its cash also moves with the securities transactions,
    which are not lines), and what is left out is a warning."""
    investments = [st for st in statements if st.tag == INVESTMENT]
    if not investments:
        return
    several = len(statements) > 1
    if len(investments) == len(statements) and not any(st.blocks for st in statements):
        held = "; ".join(
            f"{st.label(several)}{_left_out(text[st.start : st.end]) or 'no transactions'}"
            for st in investments
        )
        raise StatementError(
            f"{source} is an OFX investment statement (INVSTMTRS): recon reads bank and card "
            f"statements (it holds {_bounded(held)}; no cash lines)"
        )
    for st in investments:
        what = _left_out(text[st.start : st.end])
        if st.blocks:
            note = (
                f"{st.label(several)}investment statement (INVSTMTRS): "
                f"{_plural(len(st.blocks), 'cash line')} (INVBANKTRAN) read, no statement "
                "period recorded from it (its cash also moves with securities transactions, "
                "which are not lines)"
            )
            warnings.append(note + (f"; left out: {what}" if what else ""))
        else:
            warnings.append(
                f"{st.label(several)}investment statement (INVSTMTRS) left out"
                + (f" ({what})" if what else "")
                + ": recon reads bank and card statements"
            )


def _structure(text: str, chunks: list[str], first_line: int, source: str) -> dict[int, Bad]:
    """Check the file's structure; returns the blocks that cannot be read as one transaction.

    A file that does not end with </OFX> was cut short (an error for the whole file). Where
    the file closes its transactions (</STMTTRN>, as the spec requires), every block must be
    closed exactly once: a block with two closing tags holds two transactions because an
    opening tag was deleted or misspelled, one with none lost its end. A block that repeats
    TRNAMT is caught by the block reader whatever the style."""
    if _OFX_END.search(text) is None:
        raise StatementParseError(
            "the file ends before </OFX> (cut short?): transactions may be missing",
            file=source,
            line=text.count("\n") + 1,
            field="</OFX>",
        )
    bad: dict[int, Bad] = {}
    if _CLOSE.search(text) is None:
        return bad  # a bank that never closes STMTTRN: blocks end at the next one
    if _CLOSE.search(chunks[0]):
        line = chunks[0][: _CLOSE.search(chunks[0]).start()].count("\n") + 1  # type: ignore[union-attr]
        raise StatementParseError(
            "</STMTTRN> before any <STMTTRN>: a transaction's opening tag is missing or misspelled",
            file=source,
            line=line,
            field="STMTTRN",
        )
    closes = pc.count_substring_regex(pa.array(chunks[1:], pa.string()), "(?i)</STMTTRN>")
    odd = pc.not_equal(closes, 1)
    if not pc.any(odd).as_py():
        return bad
    line = first_line
    counts = closes.to_pylist()
    for index, chunk in enumerate(chunks[1:]):
        if counts[index] == 0:
            reason = "<STMTTRN> is never closed: its end or the next opening tag is damaged"
        elif counts[index] > 1:
            reason = (
                f"one <STMTTRN> block holds {counts[index]} </STMTTRN>: an opening <STMTTRN> "
                "is missing or misspelled"
            )
        else:
            reason = ""
        if reason:
            bad[index] = Bad(line, "STMTTRN", reason, "<STMTTRN>" + chunk.strip()[:2000])
        line += chunk.count("\n")
    return bad


# Every DTPOSTED of a file at one clock time other than midnight is no time at all: the bank
# writes a placeholder (Banco do Brasil, Caixa and Bradesco 12:00:00, Itaú 10:00:00) on
# lines booked on a date. Read as that date, a PIX made after the placeholder on its day
# could never match an intent created after it (created_at <= booked_at + clock_skew).
_POSTED_CLOCK = re.compile(r"<DTPOSTED>\s*\d{8}(\d{6}(?:\.\d{1,3})?)?", re.IGNORECASE)


def _placeholder_clock(text: str) -> tuple[str, str | None]:
    """The text with a placeholder clock (see above) taken out: DTPOSTED at local midnight
    and DTSTART as a date; and a note saying so. DTEND is left as written: the statement
    may have been taken that day before the rest of its movements, so its placeholder is
    the safer end of what it covers."""
    found = _POSTED_CLOCK.finditer(text)
    first = next(found, None)
    if first is None or set(first.group(1) or "0") <= set("0."):
        return text, None  # no line, or dates already (no clock, or midnight)
    lines = 1
    for other in found:  # a file of real times differs within its first lines
        if other.group(1) != first.group(1):
            return text, None
        lines += 1
    if lines < 2:
        return text, None  # one line: cannot tell
    clock = re.escape(first.group(1))
    text = re.sub(rf"(<DTPOSTED>\s*\d{{8}}){clock}", r"\g<1>000000", text, flags=re.IGNORECASE)
    # a DTSTART equal to its DTEND stays: the period is then empty, and read as the lines'
    # whole days (C6 and Santander write the export's time as both)
    ends = set(re.findall(rf"<DTEND>\s*(\d{{8}}){clock}", text, flags=re.IGNORECASE))
    text = re.sub(
        rf"(<DTSTART>\s*)(\d{{8}}){clock}",
        lambda m: m.group(0) if m.group(2) in ends else m.group(1) + m.group(2),
        text,
        flags=re.IGNORECASE,
    )
    shown = f"{first.group(1)[:2]}:{first.group(1)[2:4]}:{first.group(1)[4:6]}"
    return text, f"every DTPOSTED at {shown}, the bank's placeholder: lines read as dates"


def parse_text(text: str, source: str) -> ParseResult:
    """Parse OFX text (already decoded)."""
    text, placeholder = _placeholder_clock(text)
    chunks = _TRN_SPLIT.split(text)
    line = 1 + chunks[0].count("\n")
    if len(chunks) == 1 and "<OFX>" not in chunks[0].upper():
        raise_not_ofx(source)
    statements, owner = _statements(text, chunks)
    notes: list[str] = []
    _status(text, chunks, statements, source, notes)
    _investments(text, statements, source, notes)
    broken = _structure(text, chunks, line, source)
    result = (None if broken else _fast(chunks, line)) or ParseResult()
    result.warnings.extend(notes)
    if placeholder:
        result.checks.append(placeholder)
    blocks = _Blocks()
    if result.table is None:
        blocks.read(chunks[1:], line, broken, owner, result)
    currencies, converted, balance_rows = blocks.currencies, blocks.converted, blocks.balance_rows
    several = len(statements) > 1
    for st in statements:
        _balances(text, st, source, result, several)
    # a card statement's ACCTID is the card number: shown by its last four digits only
    named = dict.fromkeys(mask_card(_bounded(st.account, 60)) for st in statements if st.account)
    if named:  # what `inspect` shows beside the account label, as a CSV preamble's number
        result.info["declared_account"] = ", ".join(named)
    currencies.update(st.head.get("CURDEF", "").upper() for st in statements if st.blocks)
    warning = currency_warning(currencies)
    if warning:
        result.warnings.append(warning)
    for symbol, count in sorted(converted.items()):
        result.checks.append(
            f"{_plural(count, 'line')} converted by the bank from {symbol} (ORIGCURRENCY): "
            "read in the statement's currency"
        )
    result.checks.append(
        f"{len(chunks) - 1} STMTTRN blocks, each closed once; file ends with </OFX>"
    )
    if balance_rows:
        result.checks.append(
            f"{_plural(balance_rows, 'balance row')} (SALDO with no amount), not lines"
        )
    if result.table is not None:
        booked, owners = result.table.column("booked_at"), owner
    else:
        booked = pa.array([r[1] for r in result.rows], pa.string())
        owners = np.array(blocks.row_owner)
    result.coverage = _file_coverage(statements, _line_ranges(booked, owners), result)
    result.balances = _within(result.balances, result.coverage)
    return result


def _within(balances: list[Balance], coverage: list[Coverage] | None) -> list[Balance]:
    """Each LEDGERBAL as the closing of the last day its statement covers up to DTASOF: a
    DTASOF at the exclusive end of the period (the next midnight) or after it (the time of
    the export) is the balance at the period's end, the closing of its last day."""
    if not coverage or not balances:
        return balances
    last = max(c.end_us for c in coverage) - 1
    return [
        b._replace(day=business_day(min(b.at_us, last))) if b.at_us is not None else b
        for b in balances
    ]


class _Blocks:
    """The block-by-block path: each STMTTRN block one line, a balance row or a bad line."""

    def __init__(self) -> None:
        self.row_owner: list[int] = []  # the statement of each row
        self.currencies: set[str] = set()  # of transactions that state their own (CURRENCY)
        self.converted: Counter[str] = Counter()  # lines the bank converted (ORIGCURRENCY)
        self.balance_rows = 0

    def read(
        self, chunks: list[str], line: int, broken: dict[int, Bad], owner: Any, result: ParseResult
    ) -> None:
        """Read `chunks` (the blocks, the first at `line`) into `result`."""
        for index, chunk in enumerate(chunks):
            if index in broken:
                result.bad.append(broken[index])
            else:
                end = _TRN_END.search(chunk)
                body = chunk[: end.start()] if end else chunk
                try:
                    self.block(_block_fields(body), line, int(owner[index]), result)
                except LineError as exc:
                    bad = Bad(line, exc.field, exc.reason, "<STMTTRN>" + body.strip()[:2000])
                    result.bad.append(bad)
            line += chunk.count("\n")

    def block(self, fields: dict[str, str], line: int, owner: int, result: ParseResult) -> None:
        """One block's fields: a line of statement `owner`, or a balance row."""
        if _balance_row(fields):
            self.balance_rows += 1
            return
        result.rows.append(_transaction(fields, line))
        self.row_owner.append(owner)
        symbol = fields.get("CURSYM", "").upper()
        if symbol and "ORIGCURRENCY" in fields:
            self.converted[symbol] += 1
        elif symbol:
            self.currencies.add(symbol)


def _block_fields(body: str) -> dict[str, str]:
    """The tags of one STMTTRN block and their values (entities unescaped, trimmed)."""
    fields: dict[str, str] = {}
    for tag, value in _FIELD.findall(body):
        if "&" in value:
            value = html.unescape(value)
        key = tag.upper()
        if key in fields and key in _ONCE:
            raise LineError(key, f"{key} twice in one <STMTTRN> block: an opening tag is missing")
        fields[key] = value.strip()
    return fields


def _balances(text: str, st: _Statement, source: str, result: ParseResult, several: bool) -> None:
    """LEDGERBAL/AVAILBAL of a statement (after its transactions), as checks; LEDGERBAL (the
    booked balance) also kept for the balance walk as the closing of its DTASOF's business
    day (`_within` brings a DTASOF past the statement's period back to its last day). AVAILBAL is not kept: the available balance is the ledger less holds
    plus any overdraft limit, never what the lines add to. Only a file's one bank statement
    (STMTRS) is walked: statements of several accounts share one account label, and a card
    or investment statement's balance is no bank balance."""
    region = text[st.tail : st.end]
    suffix = f" (ACCTID {st.account or '?'})" if several else ""
    for m in _BALANCE.finditer(region):
        label = m.group(1).upper()
        amount = {t.upper(): v.strip() for t, v in _FIELD.findall(m.group(2))}
        if not amount.get("BALAMT"):
            continue
        line = text.count("\n", 0, st.tail + m.start()) + 1
        try:
            cents = ofx_cents(amount["BALAMT"])
        except LineError as exc:
            raise StatementParseError(
                f"{label} amount unreadable: {exc.reason}", file=source, line=line, field="BALAMT"
            ) from exc
        kept = label == "LEDGERBAL" and not several and st.tag in ("", "STMTRS")
        at = _as_of(amount.get("DTASOF")) if kept else None
        if at is not None:
            result.balances.append(
                Balance(business_day(at), "closing", cents, "ofx LEDGERBAL", line, at)
            )
        note = " (available, not the ledger: not walked)" if label == "AVAILBAL" else ""
        result.checks.append(f"{label} {cents} cents{suffix}{note}")


def _as_of(text: str | None) -> int | None:
    """A balance's DTASOF as UTC µs; None when absent or unreadable (the balance is then
    only a check)."""
    try:
        return to_us(datetime.fromisoformat(ofx_time(text, "DTASOF"))) if text else None
    except (LineError, ValueError):
        return None


def _line_ranges(booked: Any, owners: np.ndarray) -> dict[int, tuple[int, int]]:
    """{statement index: (first, last) booking time in UTC µs} of the lines read."""
    if len(booked) == 0:
        return {}
    try:
        micros = pc.cast(pc.cast(booked, TS), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        micros = pa.array([_micros(v) for v in booked.to_pylist()], pa.int64())
    table = pa.table({"o": pa.array(owners, pa.int64()), "t": micros})
    found = table.group_by("o").aggregate([("t", "min"), ("t", "max")]).to_pylist()
    return {r["o"]: (r["t_min"], r["t_max"]) for r in found if r["t_min"] is not None}


def _micros(text: str | None) -> int | None:
    """An ISO time as UTC µs; None when unreadable (the importer reports that line)."""
    try:
        return iso_to_us(text) if text else None
    except (ValueError, LineError):
        return None


def _one_account(statements: list[_Statement]) -> bool:
    keys = {(st.head.get("BANKID"), st.head.get("BRANCHID"), st.account) for st in statements}
    return len(keys) == 1 and all(st.account for st in statements)


def _file_coverage(
    statements: list[_Statement], ranges: dict[int, tuple[int, int]], result: ParseResult
) -> list[Coverage] | None:
    """The periods the file covers: each bank or card statement's own, for its own lines.

    Statements of several accounts in one file all go under the one account label of the
    import, so no statement's period may be claimed for the others' lines: none is
    recorded, and a warning asks to split the file. None (the lines' first to last day,
    importer.file_coverage) only for a single statement that states no period."""
    read = [i for i, st in enumerate(statements) if st.tag != INVESTMENT or st.blocks]
    if len(read) > 1 and not _one_account([statements[i] for i in read]):
        ids = ", ".join(dict.fromkeys(statements[i].account or "?" for i in read))
        result.warnings.append(
            f"{len(read)} statements of several accounts in one file (ACCTID {ids}): their "
            "lines all go under one account label and no statement period is recorded; split "
            "the file and import each account's statement with its own --account"
        )
        return []
    banks = [i for i, st in enumerate(statements) if st.tag != INVESTMENT]
    several = len(statements) > 1
    if len(banks) == 1 and read == banks:
        return _coverage(statements[banks[0]], ranges.get(banks[0]), result, several)
    periods: list[Coverage] = []
    for i in banks:
        found = _coverage(statements[i], ranges.get(i), result, several)
        if found is None:
            found = [_days(*ranges[i], "lines first/last day")] if i in ranges else []
        periods += found
    return periods


def _days(first_us: int, last_us: int, basis: str) -> Coverage:
    """The whole business days from `first_us` to `last_us`, as a Coverage."""
    first, last = (
        (EPOCH + timedelta(microseconds=us)).astimezone(BUSINESS_TZ).date()
        for us in (first_us, last_us)
    )
    return days_coverage(first, last, basis)


_ONCE = frozenset({"TRNAMT", "DTPOSTED", "FITID", "TRNTYPE"})


def _coverage(
    st: _Statement, lines: tuple[int, int] | None, result: ParseResult, several: bool
) -> list[Coverage] | None:
    """A statement's period from its BANKTRANLIST's DTSTART/DTEND (before its first STMTTRN).

    DTSTART is inclusive, DTEND exclusive; a date-only DTEND (8 digits) means that whole
    day. Without both, None: its lines' first to last day.

    A period that does not hold the statement's own lines (`lines`: first and last booking,
    UTC µs; one booked at DTEND itself counts as held), or that is empty (DTSTART = DTEND,
    C6 and Santander write the time of the export in both), is not trusted: the statement
    covers that period and its lines' whole days (their union), and a warning names both.
    """
    found = st.head
    if "DTSTART" not in found or "DTEND" not in found:
        return None
    label = st.label(several)
    try:
        start = datetime.fromisoformat(ofx_time(found["DTSTART"], "DTSTART"))
        end = datetime.fromisoformat(ofx_time(found["DTEND"], "DTEND"))
    except (LineError, ValueError) as exc:
        result.warnings.append(f"{label}statement period unreadable ({exc}); using the lines' days")
        return None
    if re.fullmatch(r"\d{8}", found["DTEND"].split("[")[0].strip()):
        end += timedelta(days=1)
    if end < start:
        result.warnings.append(f"{label}DTEND is before DTSTART; using the lines' days")
        return None
    low, high = to_us(start), to_us(end)
    # A line booked at DTEND itself is not taken as outside: Itaú writes every posting at
    # 10:00 and the last day's 10:00 as DTEND, Nubank the last day's midnight. The period
    # stays as stated (the rest of that day is not claimed).
    if low < high and (lines is None or (low <= lines[0] and lines[1] <= high)):
        return [Coverage(low, high, "ofx DTSTART/DTEND")]
    if lines is None:
        result.warnings.append(
            f"{label}statement period DTSTART = DTEND ({local_text(low)}) is empty: nothing covered"
        )
        return []
    days = _days(*lines, "lines first/last day")
    if low == high:
        periods = [days]
        said = f"DTSTART = DTEND ({local_text(low)}) is empty"
    else:
        said = f"DTSTART..DTEND {local_text(low)} .. {local_text(high)} does not hold all its lines"
        if days.start_us <= high and low <= days.end_us:  # they overlap or touch: one period
            periods = [
                Coverage(
                    min(low, days.start_us),
                    max(high, days.end_us),
                    "ofx DTSTART/DTEND and its lines' days",
                )
            ]
        else:
            periods = sorted([Coverage(low, high, "ofx DTSTART/DTEND"), days])
    covered = " and ".join(f"{local_text(c.start_us)} .. {local_text(c.end_us)}" for c in periods)
    result.warnings.append(
        f"{label}statement period {said} (booked {local_text(lines[0])} .. {local_text(lines[1])}): "
        f"covering {covered} {BUSINESS_TZ}"
    )
    return periods


def raise_not_ofx(source: str) -> None:
    """Refuse a file that has no OFX element."""
    raise StatementError(f"{source}: not an OFX file (no <OFX> element)")


def parse_file(path: Path) -> ParseResult:
    """Parse an OFX 1.x/2.x file."""
    return parse_text(decode(path.read_bytes()), str(path))
