"""Personal data: what recon stores of a person's documents, phones and PIX keys.

Brazil's LGPD treats a CPF, a CNPJ of a sole trader and a phone number as personal data, and a
report is made to be shared. So recon never keeps them whole:

- **masked** where a person reads them, the way BACEN shows a payer: a CPF as
  ``***.456.789-**`` (digits 4 to 9), a CNPJ as ``**.345.678/0001-**``, a phone as
  ``+55 11 *****-4321`` (area code and last four digits). Masking keeps a text's length, so a
  fixed-width file (CNAB 240) keeps its layout;
- **hashed** where equality is all a rule needs: an HMAC-SHA256 of the normalized value
  (the digits of a document or phone) under a secret key, so the same person gives the same
  hash in every snapshot, statement and run, but the hash cannot be reversed by trying all
  10^9 CPFs without the key.

The key comes from ``RECON_PII_KEY`` (any string; a team sharing data dirs shares it). When
it is unset, a random key is created once in ``$XDG_CONFIG_HOME/recon/pii.key`` (default
``~/.config/recon``), readable only by its owner, outside every data directory: whoever
holds a data dir alone cannot test a guess.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import re
import secrets
from collections.abc import Callable, Container
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "PersonalDataFilter",
    "digest",
    "document_digest",
    "key_digest",
    "map_unique",
    "mask_document",
    "mask_key",
    "pii_key",
    "protect_intents",
    "redact_file",
    "redact_json",
    "redact_text",
    "redact_workbook",
]

_ENV = "RECON_PII_KEY"


def _key_file() -> Path:
    return _key_path(os.environ.get("XDG_CONFIG_HOME"), os.environ.get("HOME"))


@lru_cache(maxsize=16)
def _key_path(xdg: str | None, home: str | None) -> Path:
    # `digest` asks for the key once per distinct value hashed (~1,000 per batch of 8,192
    # rows in an extract): the Path work, ~15 us, is done once per environment (HOME is
    # what Path.home() reads, so a changed HOME or XDG_CONFIG_HOME finds its own file)
    base = xdg or str(Path.home() / ".config")
    return Path(base) / "recon" / "pii.key"


@cache
def _file_key(path: Path) -> bytes:
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fresh = secrets.token_hex(32).encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it first: use theirs
        return path.read_bytes().strip()
    with os.fdopen(fd, "wb") as fh:
        fh.write(fresh)
    return fresh


def pii_key() -> bytes:
    """The HMAC key: ``RECON_PII_KEY``, else the per-user key file (created on first use)."""
    env = os.environ.get(_ENV)
    if env:
        return env.encode()
    return _file_key(_key_file())


def digest(normalized: str) -> str:
    """HMAC-SHA256 (hex, 32 characters) of an already normalized value."""
    return _hmac(pii_key(), normalized)


@lru_cache(maxsize=1 << 16)  # a payee's key recurs page after page
def _hmac(key: bytes, normalized: str) -> str:
    return hmac.new(key, normalized.encode(), hashlib.sha256).hexdigest()[:32]


def _digits(text: str) -> str:
    return re.sub(r"[^0-9]", "", text)


def _cpf_ok(d: str) -> bool:
    if len(d) != 11 or len(set(d)) == 1:
        return False
    for n in (9, 10):
        total = sum(int(d[i]) * (n + 1 - i) for i in range(n))
        if total * 10 % 11 % 10 != int(d[n]):
            return False
    return True


def _cnpj_ok(d: str) -> bool:
    if len(d) != 14 or len(set(d)) == 1:
        return False
    weights = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    for w, n in ((weights, 12), ([6, *weights], 13)):
        rest = sum(int(d[i]) * w[i] for i in range(n)) % 11
        if (0 if rest < 2 else 11 - rest) != int(d[n]):
            return False
    return True


def _mask_digits(text: str, keep: Container[int]) -> str:
    """`text` with every digit outside the `keep` positions (counted among digits) as '*'."""
    out, i = [], 0
    for ch in text:
        if ch.isdigit():
            out.append(ch if i in keep else "*")
            i += 1
        else:
            out.append(ch)
    return "".join(out)


# The characters banks mask a document's digits with (BACEN writes '*'; Nubank '•')
_MASKED_DOCUMENT = re.compile(r"[0-9./\s-]*[*•●·xX][0-9*•●·xX./\s-]*")
_MASK_CHAR = re.compile(r"[•●·xX]")


def mask_document(text: str) -> str:
    """A CPF or CNPJ (bare or formatted) masked as BACEN shows it; length kept. One that is
    masked already is kept (its visible digits are what rules compare), each mask character
    written as '*' (Nubank's `•••.123.456-••` is `***.123.456-**`)."""
    if _MASKED_DOCUMENT.fullmatch(text):
        return _MASK_CHAR.sub("*", text)
    if "*" in text:
        return text
    n = len(_digits(text))
    return _mask_digits(text, range(3, 9) if n == 11 else range(2, 12) if n == 14 else range(0))


def mask_card(text: str) -> str:
    """A payment card number (13–19 digits, blanks or dashes between them, Luhn check right)
    with only its last four digits shown, length kept; any other text as it is. A card
    statement's account is its card number, and some banks write it whole."""
    digits = _digits(text)
    if not 13 <= len(digits) <= 19 or re.search(r"[^0-9 -]", text.strip()):
        return text
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    if total % 10:
        return text
    return _mask_digits(text, range(len(digits) - 4, len(digits)))


def _mask_phone(text: str) -> str:
    """A phone with only +55, the area code and the last four digits shown; length kept."""
    n = len(_digits(text))
    head = 4 if n in (12, 13) else 2 if n in (10, 11) else 0
    return _mask_digits(text, {*range(head), *range(max(head, n - 4), n)})


_EVP = re.compile(
    r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
)
_PHONE_TEXT = re.compile(r"^\+?[0-9\s().-]{10,20}$")


def key_digest(key: str) -> str | None:
    """The hash a PIX key is compared by, for the keys that are personal numbers: a CPF/CNPJ
    or a phone, hashed on their national digits (a phone's +55 dropped, so ``+55 11
    98765-4321`` and ``11987654321`` agree). None for e-mails, random keys, masked keys."""
    digits = _key_number(key)
    return None if digits is None else digest(digits)


@lru_cache(maxsize=1 << 16)  # a payee's key recurs page after page (~3 us of regexes each)
def _key_number(key: str) -> str | None:
    """The national digits `key_digest` hashes, or None when the key is not a number."""
    text = key.strip()
    if not text or "*" in text or "@" in text or _EVP.match(text):
        return None
    digits = _digits(text)
    if not _PHONE_TEXT.match(text) and not re.fullmatch(r"[0-9./-]+", text):
        return None
    if text.startswith("+") or (len(digits) in (12, 13) and digits.startswith("55")):
        digits = digits[2:] if digits.startswith("55") else digits
    if len(digits) not in (10, 11, 14):
        return None
    return digits


def document_digest(text: str) -> str | None:
    """The hash of a full CPF/CNPJ (bare or formatted); None for a masked or odd one."""
    d = _digits(text)
    return digest(d) if "*" not in text and len(d) in (11, 14) else None


def map_unique(column: pa.Array | pa.ChunkedArray, fn: Callable[[str], str | None]) -> pa.Array:
    """`fn` over a string column, once per distinct value (nulls stay null)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    encoded = pc.dictionary_encode(column.cast(pa.string()))
    mapped = pa.array([fn(v) for v in encoded.dictionary.to_pylist()], pa.string())
    return pc.take(mapped, encoded.indices)


@lru_cache(maxsize=1 << 16)
def mask_key(key: str) -> str:
    """A PIX key as it may be shown and stored: a CPF/CNPJ or phone masked (its hash is
    key_digest), an e-mail or random key as it is."""
    text = key.strip()
    if "*" in text or "@" in text or _EVP.match(text) or not re.search(r"[0-9]", text):
        return key
    digits = _digits(text)
    if not re.fullmatch(r"[+0-9\s()./-]+", text):
        return key
    phone_like = text.startswith("+") or (len(digits) in (12, 13) and digits.startswith("55"))
    if _FORMATTED.fullmatch(text) or (
        not phone_like
        and ((len(digits) == 11 and _cpf_ok(digits)) or (len(digits) == 14 and _cnpj_ok(digits)))
    ):
        return mask_document(key)
    if len(digits) >= 10:
        return _mask_phone(key)
    return key


# Documents and phones inside free text (raw JSON, descriptions, quarantined lines, logs).
# A formatted CPF/CNPJ is always masked; a bare run of 11 or 14 digits only when its check
# digits say it is one (so timestamps and ids stay); a phone when written with +55.
_FORMATTED = re.compile(
    r"(?<![0-9])(?:[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}|[0-9]{2}\.[0-9]{3}\.[0-9]{3}\\?/[0-9]{4}-[0-9]{2})(?![0-9])"
)
_BARE = re.compile(r"(?<![0-9])(?:[0-9]{11}|[0-9]{14})(?![0-9])")
_PHONE = re.compile(r"\+55[\s(]*[0-9]{2}[\s)]*(?:9[\s.-]?)?[0-9]{4}[\s.-]?[0-9]{4}(?![0-9])")
_ANY = re.compile(r"[0-9]{3}")  # every form holds a run of three digits


# yyyyMMddHHmmss: a time stamp (OFX, CNAB) that happens to pass the CNPJ check stays
_STAMP = re.compile(
    r"(?:19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])(?:[01][0-9]|2[0-3])[0-5][0-9][0-5][0-9]"
)


def bare_document(digits: str) -> str | None:
    """A run of 11 or 14 bare digits that is a document: a CPF or a CNPJ (check digits
    right; a yyyyMMddHHmmss time stamp that happens to pass the CNPJ check is not one), or
    Banco do Brasil's 14-digit form of a CPF (000 and the CPF): the CPF or CNPJ, else None.

    Fourteen digits that read both ways (000 and a valid CPF that also pass a CNPJ's check,
    about one CPF in a hundred) are the CPF: a CNPJ starting 00.0 is one of a few hundred
    old registrations, and a CPF read as a CNPJ would be kept whole."""
    if len(digits) == 11:
        return digits if _cpf_ok(digits) else None
    if len(digits) != 14 or _STAMP.fullmatch(digits):
        return None
    if digits.startswith("000") and _cpf_ok(digits[3:]):
        return digits[3:]
    return digits if _cnpj_ok(digits) else None


def _bare(m: re.Match[str]) -> str:
    d = m.group(0)
    document = bare_document(d)
    if document is None:
        return d
    return d[: len(d) - len(document)] + mask_document(document)


def redact_text(text: str) -> str:
    """`text` with every CPF/CNPJ and +55 phone in it masked (length kept)."""
    if not _ANY.search(text):
        return text
    text = _FORMATTED.sub(lambda m: mask_document(m.group(0)), text)
    text = _PHONE.sub(lambda m: _mask_phone(m.group(0)), text)
    return _BARE.sub(_bare, text)


# The same masks over JSON text (an intent's `raw` and `metadata`), vectorized (RE2, one pass
# per pattern over the whole column): a quoted run of 11 or 14 digits is a document there
# (ids, amounts and times never are one), a formatted CPF/CNPJ anywhere, a +55 phone. JSON
# may escape the solidus (`"11.222.333\/0001-81"`, as PHP and some Java encoders write it):
# the CNPJ's slash is read either way and kept as the server wrote it.
_JSON_RULES = (
    (r'"[0-9]{3}([0-9]{6})[0-9]{2}"', r'"***\1**"'),
    (r'"[0-9]{2}([0-9]{10})[0-9]{2}"', r'"**\1**"'),
    (r"[0-9]{3}\.([0-9]{3})\.([0-9]{3})-[0-9]{2}", r"***.\1.\2-**"),
    (r"[0-9]{2}\.([0-9]{3})\.([0-9]{3})(\\?/)([0-9]{4})-[0-9]{2}", r"**.\1.\2\3\4-**"),
    (r'\+55([^0-9"]*)([0-9]{2})[^"]*([0-9]{4})"', r'+55\1\2 *****-\3"'),
)


_JSON_ANY = "|".join(f"(?:{pattern})" for pattern, _ in _JSON_RULES)


def redact_json(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column of JSON texts with every document and phone in them masked. One pass finds
    the texts that hold any (most intents hold none); only those are rewritten."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    hit = pc.fill_null(pc.match_substring_regex(column, pattern=_JSON_ANY), False)
    if not pc.any(hit).as_py():
        return column
    some = column.filter(hit)
    for pattern, replacement in _JSON_RULES:
        some = pc.replace_substring_regex(some, pattern=pattern, replacement=replacement)
    return pc.replace_with_mask(column, hit, some)


def protect_intents(table: pa.Table) -> pa.Table:
    """Intent rows as recon stores them: the payee's PIX key masked with its hash beside it
    (`destination_address`, `destination_address_hash`), `pix_key_value` masked, and
    `metadata` and `raw` with every document and phone masked."""
    dest = table.column("destination_address")
    pix = table.column("pix_key_value")
    known = [dest.to_pylist(), pix.to_pylist()]
    key = pii_key()  # read once per table: ~2 us of environment lookups per value otherwise

    def hashed(value: str) -> str | None:  # key_digest under that key
        digits = _key_number(value)
        return None if digits is None else _hmac(key, digits)

    hashes = map_unique(dest, hashed)
    if "destination_address_hash" in table.schema.names:  # rows stored before: keep theirs
        hashes = pc.coalesce(table.column("destination_address_hash").cast(pa.string()), hashes)
    columns = {
        "destination_address": map_unique(dest, mask_key),
        "destination_address_hash": hashes,
        "pix_key_value": map_unique(pix, mask_key),
        "metadata": redact_json(_mask_known(table.column("metadata"), known)),
        "raw": redact_json(_mask_known(table.column("raw"), known)),
    }
    for name, values in columns.items():
        i = table.schema.get_field_index(name)
        field = pa.field(name, pa.string())
        table = table.set_column(i, field, values) if i >= 0 else table.append_column(field, values)
    return table


def _mask_known(column: pa.Array | pa.ChunkedArray, known: list[list[Any]]) -> pa.Array:
    """JSON texts with the row's own keys (known from its flattened columns) masked where
    they stand as JSON strings: a literal replace, far cheaper than the regular expressions,
    which then find nothing left in almost every row (redact_json)."""
    out: list[str | None] = []
    for text, *values in zip(column.to_pylist(), *known, strict=True):
        if text is not None:
            for value in values:
                if value and (masked := mask_key(value)) != value:
                    text = text.replace(f'"{value}"', f'"{masked}"')
                    if "/" in value:  # written with JSON's escaped solidus
                        shown, hidden = (v.replace("/", "\\/") for v in (value, masked))
                        text = text.replace(f'"{shown}"', f'"{hidden}"')
        out.append(text)
    return pa.array(out, pa.string())


def redact_file(path: Path) -> None:
    """Mask every document and phone in a kept statement file, in place (atomically: a
    temporary copy renamed over it). Bytes are read as Latin-1 and written back the same way,
    so every other byte of any encoding stays as it was, and masks keep lengths, so a
    fixed-width layout keeps its columns.

    A workbook (xlsx, xls, ods: compressed or binary, which Latin-1 masking would corrupt)
    is read cell by cell instead; when any cell names a document or phone it is rewritten as
    an .xlsx workbook of its cell values, masked, under its own name (`redact_workbook`)."""
    with path.open("rb") as fh:
        head = fh.read(1 << 16)
    from recon import workbook

    if head.startswith((workbook.OLE2, workbook.ZIP)) and workbook.kind_of(head, path):
        redact_workbook(path)
        return
    text = path.read_bytes().decode("latin-1")
    redacted = redact_text(text)
    if redacted == text:
        return
    tmp = path.with_name(f".tmp-{path.name}.redact")
    tmp.write_bytes(redacted.encode("latin-1"))
    os.replace(tmp, path)


def _masked_cell(value: Any) -> Any:
    """A cell's value with its documents and phones masked: text masked as in free text; a
    whole number of 10 to 14 digits (a CPF or CNPJ stored as a number, its leading zeros
    lost) becomes the masked document as text when its check digits say it is one."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    if isinstance(value, float) and not value.is_integer():
        return value
    digits = str(abs(int(value)))
    if not 10 <= len(digits) <= 14:
        return value
    for width in (11, 14):
        padded = digits.zfill(width)
        if len(padded) == width and bare_document(padded) is not None:
            return mask_document(padded)
    return value


def redact_workbook(path: Path) -> bool:
    """Mask a kept workbook (see `redact_file`); True when it was rewritten. Unchanged when
    no cell names anyone. The copy holds every sheet's values (a formula's last value, dates
    as dates) and merged ranges, not the bank's styles, formulas or charts: it is kept for
    the audit trail, which needs what the statement said."""
    import xlsxwriter

    from recon.workbook import read_workbook

    sheets = read_workbook(path)
    masked = [[[_masked_cell(v) for v in row] for row in s.rows] for s in sheets]
    if all(m == s.rows for m, s in zip(masked, sheets, strict=True)):
        return False
    tmp = path.with_name(f".tmp-{path.name}.redact")
    book = xlsxwriter.Workbook(
        str(tmp),
        {"strings_to_numbers": False, "strings_to_formulas": False, "strings_to_urls": False},
    )
    formats = {
        "date": book.add_format({"num_format": "dd/mm/yyyy"}),
        "datetime": book.add_format({"num_format": "dd/mm/yyyy hh:mm:ss"}),
        "time": book.add_format({"num_format": "hh:mm:ss"}),
    }
    used: set[str] = set()
    for number, (sheet, rows) in enumerate(zip(sheets, masked, strict=True), 1):
        if sheet.chart:
            continue
        name = sheet.name if _sheet_name_ok(sheet.name, used) else f"Planilha{number}"
        used.add(name.lower())
        ws = book.add_worksheet(name)
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                _write_cell(ws, r, c, value, formats)
        for (r0, c0), (r1, c1) in sheet.merges:
            if (r1, c1) != (r0, c0) and r0 < len(rows) and c0 < len(rows[r0]):
                ws.merge_range(r0, c0, r1, c1, None)
                _write_cell(ws, r0, c0, rows[r0][c0], formats)
        if not sheet.visible:
            ws.hide()
    book.close()
    os.replace(tmp, path)
    return True


_BAD_SHEET_NAME = re.compile(r"[\[\]:*?/\\]")


def _sheet_name_ok(name: str, used: set[str]) -> bool:
    return 0 < len(name) <= 31 and not _BAD_SHEET_NAME.search(name) and name.lower() not in used


def _write_cell(ws: Any, r: int, c: int, value: Any, formats: dict[str, Any]) -> None:
    from datetime import date, datetime, time, timedelta

    if value is None or value == "":
        return
    if isinstance(value, bool):
        ws.write_boolean(r, c, value)
    elif isinstance(value, (int, float)):
        ws.write_number(r, c, value)
    elif isinstance(value, datetime):
        ws.write_datetime(r, c, value, formats["datetime"])
    elif isinstance(value, date):
        ws.write_datetime(r, c, datetime(value.year, value.month, value.day), formats["date"])
    elif isinstance(value, (time, timedelta)):
        ws.write_datetime(r, c, value, formats["time"])
    else:
        ws.write_string(r, c, str(value))


class PersonalDataFilter(logging.Filter):
    """A logging filter that masks documents and phones in every record it passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = redact_text(message)
        if masked != message:
            record.msg, record.args = masked, None
        return True
