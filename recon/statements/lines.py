"""What every parser produces: parsed statement lines, plus the helpers they share.

A parser yields rows (tuples in `PARSED_SCHEMA` column order, cheap to build in tight
loops) or `Bad` records for lines it could not read. The importer adds what does not depend
on the file's content (line_id, account, source_format/file, imported_at) and deduplicates.

PIX identifiers (BACEN): an end-to-end id is "E" + the payer PSP's ISPB (8 digits) +
yyyyMMddHHmm (12) + 11 alphanumerics = 32 characters; a devolução's return id (rtrId)
has the same shape with "D". Statement text is searched for these shapes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from recon.config import DEFAULT_BUSINESS_TZ
from recon.errors import StatementError
from recon.statements.banks import OWN_KINDS, OWN_WORDS, REFUND_WORDS, kind_words

KINDS = (
    "pix_in",
    "pix_out",
    "pix_refund_in",
    "pix_refund_out",
    "fee",
    "interest",
    "yield",
    "other",
)
# The bank's own lines (OWN_KINDS: its charges, the interest it charges, what the account
# earns) are nobody's payment: no intent explains them and none is a break; the control totals
# count them apart (recon/models: stg_statement_lines.bank_own).
FORMATS = ("pix-json", "camt", "open-finance", "ofx", "cnab240", "csv", "spreadsheet", "asaas")
# Which format's value wins when one line is read from several (the catalog view's order,
# recon/models/catalog/20_statement_lines.sql): the formats that carry the most exact fields first.
# A spreadsheet ranks last, as the view's ELSE does: it holds what the bank's CSV holds.
FORMAT_RANK = {
    "pix-json": 1,
    "camt": 2,
    "open-finance": 3,
    "cnab240": 4,
    "ofx": 5,
    "csv": 6,
    "spreadsheet": 7,
    "asaas": 7,  # a PSP's payments: no other format reads the same line (the view's ELSE)
}

E2E_RE = re.compile(r"(?<![A-Za-z0-9])([ED][0-9]{20}[A-Za-z0-9]{11})(?![A-Za-z0-9])")
E2E_FULL = re.compile(r"[ED][0-9]{20}[A-Za-z0-9]{11}")

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_US = timedelta(microseconds=1)
BUSINESS_TZ: tzinfo = ZoneInfo(DEFAULT_BUSINESS_TZ)


class Coverage(NamedTuple):
    """A period a statement says it covers, for every line booked in it: [start_us, end_us)
    in UTC µs (end exclusive), how we know it (`basis`, e.g. "ofx DTSTART/DTEND"), and
    which movements it lists (`scope`: an account statement lists "all"; API Pix `GET /pix`
    lists only the PIX "received" and their devoluções, never our payouts).

    A covered period with no line in it is a period in which nothing moved; outside every
    covered period the engine cannot tell a missing payment from a statement not yet
    received, so it raises no money-side break there (docs/statements.md, statement coverage).
    """

    start_us: int
    end_us: int
    basis: str
    scope: str = "all"  # "all" movements, or "received": PIX received and their devoluções


def days_coverage(first: date, last: date, basis: str, tz: tzinfo = BUSINESS_TZ) -> Coverage:
    """Whole business days `first` .. `last` (inclusive) as a Coverage."""
    return Coverage(
        local_midnight_us(first, tz), local_midnight_us(last + timedelta(days=1), tz), basis
    )


class Balance(NamedTuple):
    """A balance a statement states, kept for the balance walk (the catalog view
    `statement_balances`): the business day it belongs to (`day`, the local date in the
    business time zone), `side` "opening" (before the day's first movement) or "closing"
    (after its last), signed cents, what states it (`basis`: "ofx LEDGERBAL", "cnab240
    saldo_final", "camt CLBD", "csv Saldo"...), the file line it is on and the instant the
    file dates it at (UTC µs; None when the file gives a day only)."""

    day: date
    side: str  # "opening" | "closing"
    cents: int
    basis: str
    source_line: int
    at_us: int | None = None


def business_day(us: int, tz: tzinfo = BUSINESS_TZ) -> date:
    """The business day (local date in `tz`) of an instant in UTC µs."""
    return (EPOCH + timedelta(microseconds=us)).astimezone(tz).date()


class Bad(NamedTuple):
    """A line a parser could not read: where, which field, why, and the raw text."""

    source_line: int
    field: str | None
    reason: str
    raw: str


# What a parser hands over, as columns: each line's fields with booked_at still ISO 8601 text
# (cast to UTC timestamps in one vectorized step by the importer).
PARSED_SCHEMA = pa.schema(
    [
        ("source_line", pa.int64()),
        ("booked_at", pa.string()),
        ("amount_cents", pa.int64()),
        ("direction", pa.string()),
        ("kind", pa.string()),
        ("end_to_end_id", pa.string()),
        ("txid", pa.string()),
        ("refund_of", pa.string()),
        ("counterparty_name", pa.string()),
        ("counterparty_document", pa.string()),
        ("counterparty_key", pa.string()),
        ("description", pa.string()),
        ("bank_reference", pa.string()),
        # the PSP's fee taken from a credit, as its item states it (amount_cents is what the
        # account received; amount_cents + fee_cents the payer paid). Trailing and optional:
        # a parser's row tuple may stop before it (NULL: no fee stated)
        ("fee_cents", pa.int64()),
    ]
)

# Python's str.split() whitespace, as an RE2 class, so `vclean` equals `clean`.
BLANKS_RE2 = r"[\s\v\x{1c}-\x{1f}\x{85}\pZ]+"
_BLANKS_RE2 = BLANKS_RE2
_OTHER_BLANK = r"[\t\n\v\f\r\x{1c}-\x{1f}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]"
_ODD_BLANKS_RE2 = rf"^ | $|  |{_OTHER_BLANK}"


def vclean(values: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """`clean` over a whole string column: collapse blanks, trim, empty -> null."""
    # Most fields need nothing but the empty check; the regex rewrite only runs when some
    # value has a blank other than single inner spaces.
    odd = pc.match_substring_regex(values, _ODD_BLANKS_RE2)
    if pc.any(odd).as_py():
        values = pc.utf8_trim_whitespace(pc.replace_substring_regex(values, _BLANKS_RE2, " "))
    return pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)


@dataclass
class ParseResult:
    """What a parser read from one source: good rows, bad lines, and the checks it made.

    Lines come as `rows` (tuples in PARSED_SCHEMA order, from per-line parsers) and/or as `table`
    (PARSED_SCHEMA columns, from vectorized fast paths); the importer takes both.

    `coverage`: the periods the source says it covers (OFX DTSTART/DTEND, CNAB 240 balance
    dates, API Pix parametros.inicio/fim). None = the source states none, and the importer
    takes the first to the last business day of its lines (a CSV); [] = it covers nothing
    (a webhook body: single PIX, no period).
    """

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    table: pa.Table | None = None
    bad: list[Bad] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    coverage: list[Coverage] | None = None
    # What the lines' first-to-last-day period (coverage None) lists: "all", or "received"
    # for a source that lists credits only (an Open Finance page asked for CREDITO).
    lines_scope: str = "all"
    info: dict[str, Any] = field(default_factory=dict)  # how the file was read (inspect)
    # the balances the source states (OFX LEDGERBAL, CNAB 240 and camt opening and closing,
    # a CSV's Saldo), for the balance walk; a source that states none leaves it empty
    balances: list[Balance] = field(default_factory=list)

    def to_table(self) -> pa.Table:
        """All lines as one PARSED_SCHEMA table (vectorized part first, then rows)."""
        parts = [self.table.cast(PARSED_SCHEMA)] if self.table is not None else []
        if self.rows or not parts:
            width = len(PARSED_SCHEMA)
            rows = self.rows
            if any(len(row) != width for row in rows):
                rows = [row + (None,) * (width - len(row)) for row in rows]
            columns = list(zip(*rows, strict=True)) if rows else [()] * width
            parts.append(
                pa.table(
                    [
                        pa.array(list(c), f.type)
                        for c, f in zip(columns, PARSED_SCHEMA, strict=True)
                    ],
                    schema=PARSED_SCHEMA,
                )
            )
        return pa.concat_tables(parts) if len(parts) > 1 else parts[0]

    def all_rows(self) -> list[tuple[Any, ...]]:
        """All lines as tuples in PARSED_SCHEMA order (for tests and small files)."""
        table = self.to_table()
        return list(zip(*(table.column(n).to_pylist() for n in PARSED_SCHEMA.names), strict=True))


def currency_warning(currencies: Iterable[str | None]) -> str | None:
    """The warning for amounts in currencies other than BRL, which every reader reads as they
    are (recon converts nothing); None when all are BRL (or unstated)."""
    foreign = sorted({c for c in currencies if c and c != "BRL"})
    return f"amounts in {', '.join(foreign)} are read as they are, not BRL" if foreign else None


class LineError(ValueError):
    """Raised inside a parser for one line; turned into a Bad record with the field name."""

    def __init__(self, field: str, reason: str):
        super().__init__(reason)
        self.field = field
        self.reason = reason


def to_us(dt: datetime) -> int:
    """An aware datetime as integer microseconds since the epoch (UTC), exactly."""
    if dt.tzinfo is None:
        raise LineError("time", f"time {dt.isoformat()} has no UTC offset")
    return (dt - EPOCH) // ONE_US


@lru_cache(maxsize=4096)
def local_midnight_us(day: date, tz: tzinfo = BUSINESS_TZ) -> int:
    """Start of `day` in the business time zone, as UTC µs (for date-only bookings)."""
    return to_us(datetime(day.year, day.month, day.day, tzinfo=tz))


def local_text(us: int) -> str:
    """UTC µs as business-time-zone wall clock text, '2026-06-30 16:38' (for messages)."""
    return (EPOCH + timedelta(microseconds=us)).astimezone(BUSINESS_TZ).strftime("%Y-%m-%d %H:%M")


def iso_to_us(text: str, *, naive_tz: tzinfo | None = None) -> int:
    """RFC 3339 / ISO 8601 text to UTC µs; naive times need `naive_tz` or are an error."""
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise LineError("time", f"not an ISO 8601 time: {text!r}") from exc
    if dt.tzinfo is None:
        if naive_tz is None:
            raise LineError("time", f"time {text!r} has no UTC offset")
        dt = dt.replace(tzinfo=naive_tz)
    return to_us(dt)


def clean(text: str | None) -> str | None:
    """Trimmed text with inner runs of blanks collapsed; empty becomes None."""
    if text is None:
        return None
    s = " ".join(text.split())
    return s or None


def pix_ids(text: str | None) -> tuple[str | None, str | None]:
    """(first end-to-end id "E…", first return id "D…") found in free text."""
    if not text:
        return None, None
    e2e = rtr = None
    for m in E2E_RE.finditer(text):
        token = m.group(1)
        if token[0] == "E":
            e2e = e2e or token
        else:
            rtr = rtr or token
    return e2e, rtr


def _words(words: tuple[str, ...], not_letter: str) -> str:
    return rf"(?:^|{not_letter})(?:{'|'.join(words)})(?:{not_letter}|$)"


# The same patterns for Python's re and for RE2 (Arrow), which has \p{L} but no lookaround.
_NOT_LETTER, _NOT_LETTER_RE2 = r"[\W\d_]", r"[^\p{L}]"
# (kind, its words) in the order classify tells them, for Python's re and for RE2
_KIND_RE = tuple((k, re.compile(_words(kind_words(k), _NOT_LETTER))) for k in OWN_KINDS)
_KIND_RE2 = tuple((k, _words(kind_words(k), _NOT_LETTER_RE2)) for k in OWN_KINDS)
_OWN_RE = re.compile(_words(OWN_WORDS, _NOT_LETTER))
_OWN_RE2 = _words(OWN_WORDS, _NOT_LETTER_RE2)


def classify(
    direction: str,
    text: str | None,
    document: str | None = None,
    *,
    code_kind: str | None = None,
) -> tuple[str, str | None, str | None]:
    """Kind, end-to-end id and refund_of for a bank line, from its text and document number.

    In order (`vkind` is the same rule over a column, for vectorized readers):

    1. a return id (D…), or an end-to-end id (E…) with a refund word (DEVOLUCAO / DEVOLUÇÃO /
       DEVOLVIDO / DEVOL, REEMBOLSO, ESTORNO): a devolução; its end_to_end_id is the return
       id and refund_of the original E… id when the text names it;
    2. an E… id: pix_in / pix_out;
    3. `code_kind`, the bank's own kind (OWN_KINDS) the format's code says (OFX TRNTYPE, a
       CNAB 240 category, a camt bank transaction code, an Open Finance type);
    4. else a word of one of the bank's own kinds (banks.KIND_WORDS) before the text says
       PIX, the kinds told in OWN_KINDS order: fee ("TARIFA PIX"; "ESTORNO TARIFA PIX", a
       fee given back, is a fee too, not a devolução), yield ("REND PAGO APLIC AUT MAIS",
       "CRED JUROS"), interest ("JUROS SALDO DEVEDOR");
    5. no "PIX" in the text, or one of the bank's other words (OWN_WORDS: CASHBACK) before
       it: other ("CASHBACK PIX" is the bank's credit, not a PIX from a payer);
    6. a refund word with the word PIX: a devolução without ids ("DEVOLUCAO PIX", Nubank's
       "Reembolso recebido pelo Pix"); a returned cheque ("DEVOL CHQ") or TED is not one;
    7. else the text says PIX: pix_in / pix_out.
    """
    d_e2e, d_rtr = pix_ids(document)
    t_e2e, t_rtr = pix_ids(text)
    e2e = d_e2e or t_e2e
    rtr = d_rtr or t_rtr
    upper = (text or "").upper()
    refund_word = any(w in upper for w in REFUND_WORDS)
    credit = direction == "credit"
    if rtr is not None or (e2e is not None and refund_word):
        kind = "pix_refund_in" if credit else "pix_refund_out"
        return kind, rtr, e2e
    if e2e is not None:
        return ("pix_in" if credit else "pix_out"), e2e, None
    if code_kind is not None:
        return code_kind, None, None
    head, pix, _ = upper.partition("PIX")
    for kind, words in _KIND_RE:
        if words.search(head):
            return kind, None, None
    if not pix or _OWN_RE.search(head):
        return "other", None, None
    if refund_word:
        return ("pix_refund_in" if credit else "pix_refund_out"), None, None
    return ("pix_in" if credit else "pix_out"), None, None


def vkind(negative: Any, upper: Any, has_e2e: Any, has_rtr: Any, code_kind: Any) -> tuple[Any, Any]:
    """`classify`'s kind over columns (Arrow): `negative` the debits, `upper` the upper-cased
    texts, `has_e2e` / `has_rtr` whether each names an E… / D… id, `code_kind` the kind each
    line's code says (null: none). Returns (kind, by_ids): `by_ids` marks the devoluções
    told by their ids (rule 1), whose end_to_end_id is the return id and refund_of the E… id."""
    upper = pc.fill_null(upper, "")  # no text: no word (as classify reads None)
    refund_word = pc.match_substring_regex(upper, "|".join(REFUND_WORDS))
    by_ids = pc.or_(has_rtr, pc.and_(has_e2e, refund_word))
    head = pc.struct_field(pc.extract_regex(upper, r"^(?P<v>(?s:.)*?)PIX"), "v")
    pix_word = pc.is_valid(head)
    head = pc.coalesce(head, upper)
    own = pc.match_substring_regex(head, _OWN_RE2)
    refund = pc.if_else(negative, "pix_refund_out", "pix_refund_in")
    pix = pc.if_else(negative, "pix_out", "pix_in")
    conditions = [by_ids, has_e2e, pc.is_valid(code_kind)]
    conditions += [pc.match_substring_regex(head, words) for _, words in _KIND_RE2]
    conditions += [pc.or_(pc.invert(pix_word), own), refund_word]
    values = [refund, pix, code_kind, *(k for k, _ in _KIND_RE2), "other", refund, pix]
    kind = pc.case_when(
        pc.make_struct(*conditions, field_names=[f"c{i}" for i in range(len(conditions))]),
        *values,
    )
    return kind, by_ids


# --------------------------------------------------------------------------- bounds

# The longest value each text column may hold (characters). Real statements stay far below
# (OFX MEMO 255, camt Ustrd 140 per line, API Pix infoPagador 140); a longer value is a
# damaged or hostile file, reported as a bad line instead of being stored whole.
MAX_LENGTH = {
    "booked_at": 64,
    "end_to_end_id": 64,
    "txid": 64,
    "refund_of": 64,
    "counterparty_name": 512,
    "counterparty_document": 64,
    "counterparty_key": 512,
    "description": 4096,
    "bank_reference": 256,
}
ID_COLUMNS = ("end_to_end_id", "refund_of")
# C0 controls other than blanks (which `clean` already collapses), DEL: never in statement text.
_CONTROL_RE2 = r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]"


def check_bounds(table: pa.Table) -> tuple[pa.Table, list[tuple[int, str, str]]]:
    """(rows within bounds, [(row index, field, reason)] of the others).

    Every text column: at most MAX_LENGTH characters, no control characters; end-to-end and
    return ids: ASCII letters and digits only (BACEN's ids are 32 of them, but PSPs document
    shorter ones: Efí's examples have 26, so the check is on charset and length only). One
    vectorized pass per column; only a column with an offending value is looked at row by row.
    """
    bad: dict[int, tuple[str, str]] = {}
    for name, limit in MAX_LENGTH.items():
        column = table.column(name)
        if column.null_count == len(column):
            continue
        long = pc.greater(pc.utf8_length(column), limit)
        if name in ID_COLUMNS:
            odd = pc.invert(pc.match_substring_regex(column, r"^[A-Za-z0-9]{1,64}$"))
            reason = f"must be 1 to {limit} ASCII letters and digits"
        else:
            odd = pc.match_substring_regex(column, _CONTROL_RE2)
            reason = "holds control characters"
        flags = pc.fill_null(pc.or_(long, odd), False)
        if not pc.any(flags).as_py():
            continue
        lengths = pc.utf8_length(column).to_pylist()
        for index in pc.indices_nonzero(flags).to_pylist():
            if index in bad:
                continue
            if lengths[index] > limit:
                bad[index] = (name, f"{lengths[index]} characters, longer than {limit}")
            else:
                bad[index] = (name, reason)
    if not bad:
        return table, []
    keep = np.ones(table.num_rows, dtype=bool)
    keep[list(bad)] = False
    return table.filter(pa.array(keep)), [(i, f, r) for i, (f, r) in sorted(bad.items())]


# --------------------------------------------------------------------------- JSON

MAX_NUMBER_CHARS = 40


def _number(text: str) -> Any:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a JSON number of {len(text)} characters")
    return Decimal(text)


def _integer(text: str) -> int:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a JSON number of {len(text)} characters")
    return int(text)


def _constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def load_json(text: str, source: str) -> Any:
    """A JSON document from outside, bounded: numbers become Decimal (never float) and may not
    exceed MAX_NUMBER_CHARS characters, NaN/Infinity are refused, and a document nested too
    deep for the parser is a StatementError rather than a RecursionError.

    Raises json.JSONDecodeError for text that is not one JSON document (callers may then try
    one document per line)."""
    try:
        return json.loads(text, parse_float=_number, parse_int=_integer, parse_constant=_constant)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:
        raise StatementError(f"{source}: unreadable JSON: {exc}") from exc
    except RecursionError as exc:
        raise StatementError(f"{source}: JSON nested too deep") from exc


def json_shape(doc: Any) -> str:
    """What a decoded JSON document is, in a few words for an error: "an object with keys
    'mensagens', 'resultado'", "a list of 3 objects (keys 'a', 'b')", "a string"."""
    if isinstance(doc, dict):
        keys = [repr(str(k)[:30]) for k in list(doc)[:8]]
        more = ", ..." if len(doc) > 8 else ""
        return f"an object with keys {', '.join(keys)}{more}" if keys else "an empty object"
    if isinstance(doc, list):
        if not doc:
            return "an empty list"
        first = doc[0]
        inner = f" ({json_shape(first)})" if isinstance(first, dict) else ""
        return f"a list of {len(doc)}, the first {_kind(first)}{inner}"
    return _kind(doc)


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return "a number"


def json_documents(text: str, source: str) -> list[Any]:
    """The JSON documents in a file: one document, a list of them, or one per line (NDJSON)."""
    try:
        doc = load_json(text, source)
    except json.JSONDecodeError as first:
        docs = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                docs.append(load_json(line, f"{source}:{number}"))
            except json.JSONDecodeError as exc:
                where = f"line {first.lineno}" if number == 1 else f"line {number}"
                raise StatementError(f"{source}: not valid JSON ({where}): {exc.msg}") from exc
        return docs
    return doc if isinstance(doc, list) else [doc]
