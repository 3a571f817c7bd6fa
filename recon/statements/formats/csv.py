"""CSV statement exports: two built-in profiles and a generic mapping from TOML.

Profiles (`--csv-profile`):
- "psp": UTF-8, comma, header `data_hora,tipo,valor,end_to_end_id,txid,id_devolucao,
  e2e_original,nome_contraparte,documento_contraparte,chave_pix,descricao,id_transacao`;
  valor signed with a dot decimal; data_hora ISO 8601 with offset; tipo PIX_RECEBIDO |
  PIX_ENVIADO | DEVOLUCAO_RECEBIDA | DEVOLUCAO_ENVIADA | TARIFA (a sign that disagrees with
  tipo is an error). For a devolução end_to_end_id is its rtrId and e2e_original the
  original PIX.
- "bank": cp1252, semicolon, a preamble (bank, "Agência/Conta", "Período", blank line)
  then `Data;Histórico;Documento;Valor;Saldo`; Data DD/MM/YYYY (the start of that day in
  America/Sao_Paulo), Valor "-1.200,00"; Documento holds the e2e id (or rtrId) for PIX.
  A row with a Saldo and no Valor ("SALDO ANTERIOR") is a balance row, not a line; where
  consecutive rows carry Saldo, previous balance + Valor must equal it.
- a TOML file (generic mapping; keys at the top level or under [csv]):

      delimiter = ";"              # default ","
      decimal_mark = ","           # "," | "." | "auto" (recon.money rules); default "."
      encoding = "utf-8-sig"       # any Python codec; utf-8-sig also takes a BOM
      date_format = "%d/%m/%Y"     # "iso" (default) or a strptime format
      timezone = "America/Sao_Paulo"  # for times/dates without an offset
      skip_lines = 3               # preamble lines before the header (default: search)
      sign = "signed"              # signed | inverted | split | indicator
      debit_values = ["D"]         # indicator values meaning debit (sign = "indicator")
      card = false                 # a card bill: lines of kind other (with sign = "inverted")
      [columns]                    # recon field = CSV column
      booked_at = "Data"           # required
      amount = "Valor"             # required unless sign = "split" (credit, debit)
      # credit, debit, indicator, kind, end_to_end_id, txid, refund_of, refund_id,
      # counterparty_name, counterparty_document, counterparty_key, description,
      # detail (a second text column, joined with " - "), bank_reference, balance,
      # fee (the PSP's fee taken from the line, its sign ignored), gross (the line before
      # the fee: the fee is gross - |amount|); amount is then what moved, net of the fee
      [kinds]                      # values of the kind column -> recon kind
      "PIX RECEBIDO" = "pix_in"

Without `--csv-profile` the psp and bank profiles are recognized by their header, and any
other CSV by its content (recon.statements.formats.csv_sniff: sniffed encoding, delimiter,
decimal mark, date format and preamble; the header vocabulary and named bank layouts of
recon.statements.banks).

Every money column (amount, credit, debit, balance) of every profile may carry a D/C letter
("150,00 C", "1.234,56 D": recon.money's `dc_marks`): the letter is the amount's sign, read
once. A flag column, a credit/debit column or a sign that says otherwise is an error; the card
rule turns only figures without a letter.

Without a kind column the kind comes from the text (recon.statements.lines.classify), and
the counterparty, document and key from the description when the columns have none
(recon.statements.describe). Card statements: kind other, a purchase is a debit. A sniffed
file named like a card bill ("fatura") whose content does not say card is read as it is, with
a warning (a name is weaker evidence than columns).
`source_line` is the physical line number in the file (preamble and header counted).
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from functools import lru_cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow.compute as pc

from recon.errors import ConfigError, StatementError, StatementParseError, UsageError
from recon.money import AmountError, dc_mark, parse_cents, parse_plain_cents
from recon.statements.banks import BALANCE_LABEL, TABLE_FOOTER
from recon.statements.describe import describe
from recon.statements.formats import csv_sniff
from recon.statements.lines import (
    E2E_RE,
    KINDS,
    Bad,
    Balance,
    LineError,
    ParseResult,
    business_day,
    classify,
    clean,
    days_coverage,
    iso_to_us,
    vclean,
)

TARGETS = (
    "booked_at",
    "amount",
    "credit",
    "debit",
    "indicator",
    "kind",
    "end_to_end_id",
    "txid",
    "refund_of",
    "refund_id",
    "counterparty_name",
    "counterparty_document",
    "counterparty_key",
    "description",
    "detail",
    "bank_reference",
    "balance",
    "fee",
    "gross",
)
SIGNS = ("signed", "inverted", "split", "indicator")
_CREDIT_KINDS = frozenset({"pix_in", "pix_refund_in"})
_DEBIT_KINDS = frozenset({"pix_out", "pix_refund_out"})
_HAS_OFFSET = re.compile(r".*(?:[Zz]|[+-]\d{2}:?\d{2})$")


@dataclass(frozen=True)
class CsvProfile:
    """How to read one CSV shape (see the module doc)."""

    name: str
    columns: Mapping[str, str]
    delimiter: str = ","
    decimal_mark: str | None = "."  # None: infer per value (recon.money rules)
    encoding: str = "utf-8-sig"
    date_format: str = "iso"
    timezone: str = "America/Sao_Paulo"
    skip_lines: int | None = None
    sign: str = "signed"
    debit_values: tuple[str, ...] = ("D",)
    kinds: Mapping[str, str] = field(default_factory=dict)
    card: bool = False  # a card statement: lines of kind other, a purchase is a debit
    daily_balance: bool = False  # the balance column is the day's closing: not checked
    continuation: bool = False  # a row with only text continues the line above
    label: str = ""  # the bank layout, for people (inspect, errors)
    headerless: bool = False  # no header line: columns are "c0", "c1", ... by position
    # How an indicator is read: "listed" (a TOML profile: debit_values are debits, anything
    # else a credit); "words" (sniffed, amounts unsigned: every line needs a credit/debit word,
    # csv_sniff.flag_direction); "words-or-sign" (sniffed, amounts signed: a blank flag leaves
    # the amount's own sign). With words, a negative amount flagged credit is an error.
    flags: str = "listed"
    notes: tuple[str, ...] = ()  # warnings on how the file is read (sniffing, its name)
    refused: tuple[int, str, str] | None = None  # (line, column, reason): not read at all

    def __post_init__(self) -> None:
        unknown = set(self.columns) - set(TARGETS)
        if unknown:
            raise ConfigError(f"csv profile {self.name}: unknown fields {sorted(unknown)}")
        if "booked_at" not in self.columns:
            raise ConfigError(f"csv profile {self.name}: columns.booked_at is required")
        if self.sign not in SIGNS:
            raise ConfigError(f"csv profile {self.name}: sign must be one of {SIGNS}")
        need = {"split": ("credit", "debit"), "indicator": ("amount", "indicator")}.get(
            self.sign, ("amount",)
        )
        for target in need:
            if target not in self.columns:
                raise ConfigError(f"csv profile {self.name}: columns.{target} is required")
        if self.decimal_mark not in (None, ".", ","):
            raise ConfigError(f"csv profile {self.name}: decimal_mark must be ',', '.' or 'auto'")
        if len(self.delimiter) != 1:
            raise ConfigError(f"csv profile {self.name}: delimiter must be one character")
        bad_kinds = {v for v in self.kinds.values() if v not in KINDS}
        if bad_kinds:
            raise ConfigError(f"csv profile {self.name}: unknown kinds {sorted(bad_kinds)}")
        try:
            ZoneInfo(self.timezone)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ConfigError(
                f"csv profile {self.name}: unknown timezone {self.timezone!r}"
            ) from exc


PSP = CsvProfile(
    name="psp",
    columns={
        "booked_at": "data_hora",
        "kind": "tipo",
        "amount": "valor",
        "end_to_end_id": "end_to_end_id",
        "txid": "txid",
        "refund_id": "id_devolucao",
        "refund_of": "e2e_original",
        "counterparty_name": "nome_contraparte",
        "counterparty_document": "documento_contraparte",
        "counterparty_key": "chave_pix",
        "description": "descricao",
        "bank_reference": "id_transacao",
    },
    kinds={
        "PIX_RECEBIDO": "pix_in",
        "PIX_ENVIADO": "pix_out",
        "DEVOLUCAO_RECEBIDA": "pix_refund_in",
        "DEVOLUCAO_ENVIADA": "pix_refund_out",
        "TARIFA": "fee",
    },
)

BANK = CsvProfile(
    name="bank",
    columns={
        "booked_at": "Data",
        "description": "Histórico",
        "bank_reference": "Documento",
        "amount": "Valor",
        "balance": "Saldo",
    },
    delimiter=";",
    decimal_mark=",",
    encoding="cp1252",
    date_format="%d/%m/%Y",
)

PROFILES = {"psp": PSP, "bank": BANK}


def load_profile(path: Path) -> CsvProfile:
    """A generic CSV mapping from a TOML file."""
    try:
        with path.open("rb") as fh:
            doc = tomllib.load(fh)
    except FileNotFoundError as exc:
        raise UsageError(f"csv profile not found: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    section = doc.get("csv", doc)
    if not isinstance(section, dict) or not isinstance(section.get("columns"), dict):
        raise ConfigError(f"{path}: a csv profile needs a [columns] table")
    mark = section.get("decimal_mark", ".")
    try:
        return CsvProfile(
            name=str(section.get("name", path.stem)),
            columns={str(k): str(v) for k, v in section["columns"].items()},
            delimiter=str(section.get("delimiter", ",")),
            decimal_mark=None if mark == "auto" else mark,
            encoding=str(section.get("encoding", "utf-8-sig")),
            date_format=str(section.get("date_format", "iso")),
            timezone=str(section.get("timezone", "America/Sao_Paulo")),
            skip_lines=section.get("skip_lines"),
            sign=str(section.get("sign", "signed")),
            debit_values=tuple(str(v) for v in section.get("debit_values", ["D"])),
            kinds={str(k): str(v) for k, v in section.get("kinds", {}).items()},
            card=_bool(section.get("card", False), "card", path),
        )
    except TypeError as exc:
        raise ConfigError(f"{path}: bad csv profile: {exc}") from exc


def _bool(value: Any, key: str, path: Path) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{path}: {key} must be true or false")
    return value


def detect_profile(head: str) -> CsvProfile | None:
    """The built-in profile whose header appears in the first lines of a file, if any."""
    lines = head.splitlines()[:20]
    for line in lines:
        cells = {c.strip().strip('"') for c in line.split(",")}
        if {"data_hora", "tipo", "valor", "end_to_end_id"} <= cells:
            return PSP
        cells = {c.strip().strip('"') for c in line.split(";")}
        if set(BANK.columns.values()) <= cells:
            return BANK
    return None


def profile_from_sniff(sniffed: csv_sniff.Sniffed) -> CsvProfile:
    """The CsvProfile that reads a file as sniffing found it (encoding decided per file)."""
    layout = sniffed.layout
    return CsvProfile(
        name=layout.name,
        columns=sniffed.columns,
        delimiter=sniffed.delimiter,
        decimal_mark=sniffed.decimal_mark,
        encoding="auto",
        date_format=sniffed.date_format,
        skip_lines=max(sniffed.header_index, 0) if sniffed.header else sniffed.skip,
        sign=sniffed.sign,
        debit_values=sniffed.debit_values,
        card=layout.card,
        daily_balance=layout.daily_balance,
        continuation=layout.continuation,
        label=layout.label,
        headerless=sniffed.header_index < 0 or not sniffed.header,
        flags="words" if sniffed.unsigned else "words-or-sign",
        notes=tuple(sniffed.notes),
        refused=sniffed.refused,
    )


HEAD_BYTES = 1 << 16


def _head_text(path: Path) -> str:
    """The first 64 KiB of a file as text (UTF-8 if it is, else cp1252/latin-1)."""
    with path.open("rb") as fh:
        raw = fh.read(HEAD_BYTES)
    if len(raw) == HEAD_BYTES:
        cut = raw.rfind(b"\n")
        raw = raw[: cut + 1] if cut > 0 else raw
    return csv_sniff.decode_csv(raw)[0]


def sniff_head(head: str) -> CsvProfile | None:
    """The profile for a CSV starting with `head`: a built-in one, else sniffed, else None."""
    found = detect_profile(head)
    if found is not None:
        return found
    sniffed = csv_sniff.sniff_text(head)
    return profile_from_sniff(sniffed) if sniffed is not None else None


def unknown_shape(head: str, source: str) -> StatementError:
    """The error for a CSV nothing recognizes: the headers seen and the nearest layout."""
    lines = [ln for ln in re.split(r"\r\n|\r|\n", head)[: csv_sniff.HEAD_LINES] if ln.strip()]
    best: list[str] = []
    for line in lines:
        for d in csv_sniff.DELIMITERS:
            cells = [c.strip() for c in line.split(d)]
            if len(cells) > len(best):
                best = cells
    if not best:
        return StatementError(f"{source}: CSV of an unknown shape: no header line found")
    layout, _ = csv_sniff.nearest_layout(best)
    shown = [c[:40] for c in best[:20]]
    return StatementError(
        f"{source}: CSV of an unknown shape: headers seen {shown}; nearest layout "
        f"{layout.name} ({layout.label}) wants {sorted(layout.signature)}; pass "
        "--csv-profile psp|bank|FILE.toml"
    )


def resolve_profile(profile: Any, path: Path) -> CsvProfile:
    """A CsvProfile from a name ("psp", "bank"), a TOML path, a profile, or None (detect)."""
    if isinstance(profile, CsvProfile):
        return profile
    if profile is None:
        head = _head_text(path)
        found = sniff_head(head)
        if found is None:
            raise unknown_shape(head, str(path))
        return _by_name(found, path)
    name = str(profile)
    if name in PROFILES:
        return PROFILES[name]
    if name.endswith(".toml") or Path(name).is_file():
        return load_profile(Path(name))
    raise UsageError(f"unknown csv profile {name!r}; use psp, bank or a .toml file")


_CARD_NAME = re.compile(r"(?i)fatura")


def _by_name(profile: CsvProfile, path: Path) -> CsvProfile:
    """A sniffed profile with a warning when the file's name says card bill ("fatura") but its
    content does not: a name is weaker evidence than columns, so it never changes the reading."""
    if profile.card or profile.name not in ("generic", csv_sniff.HEADERLESS.name):
        return profile
    said = _CARD_NAME.search(path.name)
    if said is None:
        return profile
    note = (
        f"the file name says {said.group(0)!r} (a card bill?) but nothing in its columns says "
        "card: read as account lines (a positive amount is a credit); a card bill needs "
        '--csv-profile with card = true and sign = "inverted"'
    )
    return replace(profile, notes=(*profile.notes, note))


@lru_cache(maxsize=16384)
def _day_start(text: str, fmt: str, tz: tzinfo) -> str:
    try:
        dt = datetime.strptime(text, fmt)
    except ValueError as exc:
        raise LineError("booked_at", f"not a date in format {fmt}: {text!r}") from exc
    return dt.replace(tzinfo=tz).isoformat()


_BR_AMOUNT = re.compile(r"-?[0-9]{1,3}(?:\.[0-9]{3})*,[0-9]{2}|-?[0-9]+,[0-9]{2}")
_classify = lru_cache(maxsize=1 << 16)(classify)


class _Reader:
    """Reads one file with one profile; keeps the per-row state small for speed."""

    def __init__(self, profile: CsvProfile, source: str):
        self.p = profile
        self.source = source
        self.tz = ZoneInfo(profile.timezone)
        self.iso = profile.date_format == "iso"

    def cents(self, text: str, target: str) -> int:
        s = text.strip()
        if len(s) > MAX_AMOUNT_CHARS:
            raise LineError(target, f"amount of {len(s)} characters")
        try:
            if self.p.decimal_mark == ".":
                cents = parse_plain_cents(s, dc_marks=True)
            elif self.p.decimal_mark == "," and _BR_AMOUNT.fullmatch(s):
                digits = int(s.lstrip("-").replace(".", "").replace(",", ""))
                cents = -digits if s[0] == "-" else digits
            else:
                cents = parse_cents(s, decimal_mark=self.p.decimal_mark, dc_marks=True)
        except AmountError as exc:
            raise LineError(target, str(exc)) from exc
        return self.bounded(cents, target)

    @staticmethod
    def bounded(cents: int, target: str) -> int:
        """`cents` if it fits amount_cents (int64), else a LineError (never a wrong amount)."""
        if -MAX_CENTS <= cents <= MAX_CENTS:
            return cents
        raise LineError(target, "amount out of range (more than 2^63 cents)")

    def booked(self, text: str) -> str:
        s = text.strip()
        if not s:
            raise LineError("booked_at", "missing")
        if self.iso:
            if _HAS_OFFSET.match(s):
                return s
            try:
                dt = datetime.fromisoformat(s)
            except ValueError as exc:
                raise LineError("booked_at", f"not an ISO 8601 time: {s!r}") from exc
            return dt.replace(tzinfo=self.tz).isoformat()
        return _day_start(s, self.p.date_format, self.tz)


def _index(header: list[str], profile: CsvProfile, source: str, line: int) -> dict[str, int]:
    names = [h.strip().lstrip("\ufeff") for h in header]
    where: dict[str, int] = {}
    for target, column in profile.columns.items():
        if column not in names:
            raise StatementParseError(
                f"column {column!r} (for {target}) not in the header {names}",
                file=source,
                line=line,
                field=column,
            )
        where[target] = names.index(column)
    return where


def _find_header(lines: list[str], profile: CsvProfile) -> int | None:
    need = [profile.columns["booked_at"], profile.columns.get("amount") or ""]
    for i, line in enumerate(lines):
        cells = [c.strip().strip('"').lstrip("\ufeff") for c in line.split(profile.delimiter)]
        if all(n in cells for n in need if n):
            return i
    return None


# Bounds on what a file may hold (issue: a 200 MB line must not take the reader to GBs).
MAX_LINE_BYTES = 1 << 20  # one physical line of a statement CSV
MAX_AMOUNT_CHARS = 40  # an amount cell ("-R$ 1.234.567.890,12" is 20)
MAX_CENTS = (1 << 63) - 1  # int64, the type of amount_cents


def check_line_lengths(raw: bytes, source: str) -> None:
    """A clear error naming the first line longer than MAX_LINE_BYTES (vectorized scan)."""
    if len(raw) <= MAX_LINE_BYTES:
        return
    import numpy as np

    ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
    bounds = np.concatenate(([-1], ends, [len(raw)]))
    lengths = np.diff(bounds) - 1
    over = np.flatnonzero(lengths > MAX_LINE_BYTES)
    if over.size:
        line = int(over[0]) + 1
        raise StatementParseError(
            f"line of {int(lengths[over[0]]):,} bytes; a statement line may have at most "
            f"{MAX_LINE_BYTES:,}",
            file=source,
            line=line,
        )


def parse_file(path: Path, profile: CsvProfile) -> ParseResult:
    """Parse a CSV statement with `profile`."""
    raw = path.read_bytes()
    check_line_lengths(raw, str(path))
    encoding = profile.encoding
    try:
        if encoding == "auto":
            text, encoding = csv_sniff.decode_csv(raw)
        else:
            text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StatementParseError(
            f"not valid {encoding} text ({exc.reason})", file=str(path), line=line
        ) from exc
    except LookupError as exc:
        raise ConfigError(f"csv profile {profile.name}: unknown encoding {encoding}") from exc
    result = parse_text(text, str(path), profile)
    result.info["encoding"] = encoding
    return result


def _reader_after(text: str, skipped: int, delimiter: str) -> Any:
    """A csv reader over `text`, positioned after `skipped` preamble lines."""
    buffer = io.StringIO(text, newline="")
    for _ in range(skipped):
        buffer.readline()
    return csv.reader(buffer, delimiter=delimiter)


def parse_text(text: str, source: str, profile: CsvProfile) -> ParseResult:
    """Parse CSV text with `profile`."""
    if profile.refused is not None:
        line, column, reason = profile.refused
        raise StatementParseError(reason, file=source, line=line, field=column)
    if text.startswith("\ufeff"):
        text = text[1:]
    if profile.skip_lines is not None:
        skipped = profile.skip_lines
    else:
        found = _find_header(text[:16384].splitlines(), profile)
        if found is None:
            raise StatementParseError(
                f"no header with the columns of profile {profile.name!r}", file=source, line=1
            )
        skipped = found
    if profile.headerless:  # no header line: the columns are named c0, c1, ... by position
        width = 1 + max(int(c[1:]) for c in profile.columns.values())
        header = [f"c{i}" for i in range(width)]
        where = _index(header, profile, source, skipped + 1)
        result = _rows(
            _reader_after(text, skipped, profile.delimiter), where, profile, source, skipped, width
        )
        preamble = re.split(r"\r\n|\r|\n", text[: 1 << 16], maxsplit=skipped)[:skipped]
        _add_info(result, profile, preamble, 0)
        return result
    # The header is read from the first 64 KiB (copying a big file into a StringIO just to
    # read its header costs more than the whole vectorized read).
    start = text[: 1 << 16]
    if start.count("\n") <= skipped + 1:  # header not surely inside: read the whole text
        start = text
    reader = _reader_after(start, skipped, profile.delimiter)
    try:
        header = next(reader)
    except StopIteration:
        raise StatementParseError("no header line", file=source, line=skipped + 1) from None
    header_line = skipped + reader.line_num
    where = _index(header, profile, source, header_line)
    fast = (
        _fast(text, header_line, where, len(header), profile)
        if header_line == skipped + 1
        else None
    )
    if fast is None:
        reader = _reader_after(text, skipped, profile.delimiter)
        next(reader)
        fast = _rows(reader, where, profile, source, skipped, len(header))
    result = fast
    preamble = re.split(r"\r\n|\r|\n", text[: 1 << 16], maxsplit=skipped)[:skipped]
    _add_info(result, profile, preamble, header_line)
    return result


def _add_info(
    result: ParseResult, profile: CsvProfile, preamble: list[str], header_line: int
) -> None:
    """What inspect shows and coverage needs: profile, period (declared or first/last day)."""
    result.warnings[:0] = profile.notes
    declared = csv_sniff.declared_period(preamble)
    table = result.to_table()
    days = pc.utf8_slice_codeunits(table.column("booked_at"), 0, 10)
    low_high = pc.min_max(days).as_py() if table.num_rows else {"min": None, "max": None}
    if declared is not None:  # the statement's own period ("Período ;01/11/2026 a 05/11/2026")
        result.coverage = [days_coverage(declared[0], declared[1], "csv preamble period")]
        result.info["period"] = declared
    elif low_high["min"] is not None:
        with contextlib.suppress(ValueError):  # a bad time: the importer reports its line
            result.info["period"] = (
                date.fromisoformat(str(low_high["min"])),
                date.fromisoformat(str(low_high["max"])),
            )
    result.info.update(
        profile=profile.name,
        layout=profile.label or profile.name,
        delimiter=profile.delimiter,
        decimal_mark=profile.decimal_mark or "auto",
        date_format=profile.date_format,
        header_line=header_line,
        card=profile.card,
        sign=_sign_rule(profile),
        declared_account=csv_sniff.declared_account(preamble),
    )


def _sign_rule(profile: CsvProfile) -> str:
    """How the file's lines get their direction, for people (inspect)."""
    if profile.sign == "indicator":
        debits = ", ".join(profile.debit_values)
        column = profile.columns.get("indicator")
        return f"flag column {column!r} (debit: {debits})"
    if profile.sign == "split":
        return "credit/debit columns"
    if profile.sign == "inverted":
        return "amount turned (a positive amount, a purchase, is a debit)"
    return "signed amount"


_FAST_AMOUNT = r"^[+-]?[0-9]{1,16}(\.[0-9]{1,2})?$"
_FAST_OFFSET = r"(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})$"


def _fast(
    text: str, header_line: int, where: dict[str, int], width: int, profile: CsvProfile
) -> ParseResult | None:
    """Vectorized read (pyarrow) of a clean file of a simple shape; None = use the row path.

    Taken only for signed dot-decimal amounts, ISO times with offsets and a kind column,
    and only when every row passes the same checks the row path makes; any doubt (a quoted
    newline, a blank line, an odd amount, an unknown kind) falls back to the row path,
    which then names the offending line.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (
        profile.sign == "signed"
        and profile.decimal_mark == "."
        and profile.date_format == "iso"
        and "kind" in where
        and "balance" not in where
        and "fee" not in where
        and "gross" not in where
    ):
        return None
    table = _fast_table(text, header_line, width, profile)
    if table is None:
        return None

    def col(target: str) -> pa.ChunkedArray:
        return pc.utf8_trim_whitespace(table.column(where[target]))

    amount = col("amount")
    if not pc.all(pc.match_substring_regex(amount, _FAST_AMOUNT)).as_py():
        return None
    cents = pc.cast(
        pc.multiply(pc.cast(amount, pa.decimal128(20, 2)), pa.scalar(100, pa.decimal128(3, 0))),
        pa.int64(),
    )
    mapping = {k: k for k in KINDS} | dict(profile.kinds)
    raw_kind = col("kind")
    index = pc.index_in(raw_kind, value_set=pa.array(list(mapping), pa.string()))
    if index.null_count:
        return None
    kind = pc.take(pa.array(list(mapping.values()), pa.string()), index)
    negative = pc.less(cents, 0)
    credit_kind = pc.is_in(kind, value_set=pa.array(sorted(_CREDIT_KINDS)))
    debit_kind = pc.is_in(kind, value_set=pa.array(sorted(_DEBIT_KINDS)))
    wrong_sign = pc.or_(pc.and_(credit_kind, negative), pc.and_(debit_kind, pc.greater(cents, 0)))
    if pc.any(wrong_sign).as_py():
        return None
    booked = col("booked_at")
    if not pc.all(pc.match_substring_regex(booked, _FAST_OFFSET)).as_py():
        return None

    def optional(target: str) -> pa.ChunkedArray:
        if target not in where:
            return pa.chunked_array([pa.nulls(table.num_rows, pa.string())])
        return vclean(table.column(where[target]))

    from recon.statements.lines import PARSED_SCHEMA

    n = table.num_rows
    columns = {
        "source_line": pa.array(range(header_line + 1, header_line + 1 + n), pa.int64()),
        "booked_at": booked,
        "amount_cents": cents,
        "direction": pc.if_else(negative, "debit", "credit"),
        "kind": kind,
        "end_to_end_id": optional("end_to_end_id"),
        "txid": optional("txid"),
        "refund_of": optional("refund_of"),
        "counterparty_name": optional("counterparty_name"),
        "counterparty_document": optional("counterparty_document"),
        "counterparty_key": optional("counterparty_key"),
        "description": optional("description"),
        "bank_reference": pc.coalesce(optional("bank_reference"), optional("refund_id")),
        "fee_cents": pa.nulls(n, pa.int64()),
    }
    out = pa.table([columns[f.name] for f in PARSED_SCHEMA], schema=PARSED_SCHEMA)
    return ParseResult(table=out)


def _fast_table(text: str, header_line: int, width: int, profile: CsvProfile) -> Any:
    """The rows after the header as a table of strings (columns c0, c1, ...); None when
    pyarrow does not read exactly one row per physical line."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    pos = 0
    for _ in range(header_line):
        pos = text.find("\n", pos) + 1
        if pos == 0:
            return None
    body = text[pos:]
    physical = body.count("\n") + (0 if body.endswith("\n") or not body else 1)
    if physical == 0:
        return None
    names = [f"c{i}" for i in range(width)]
    try:
        table = pacsv.read_csv(
            pa.py_buffer(body.encode("utf-8")),
            read_options=pacsv.ReadOptions(column_names=names, block_size=16 << 20),
            parse_options=pacsv.ParseOptions(
                delimiter=profile.delimiter, newlines_in_values=False, ignore_empty_lines=False
            ),
            convert_options=pacsv.ConvertOptions(
                column_types={n: pa.string() for n in names},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != physical:
        return None
    return table.combine_chunks()  # one contiguous chunk per column: cheaper kernels


# What a line cannot be read without; a row short of other (trailing) columns reads them empty.
_REQUIRED = ("booked_at", "amount", "credit", "debit", "indicator", "kind")


def is_footer(text: str) -> bool:
    """Whether a row's first text ends a statement's table ("Total", "Lançamentos futuros")."""
    return TABLE_FOOTER.match(text) is not None


def is_balance_label(text: str) -> bool:
    """Whether a text labels a balance row ("SALDO ANTERIOR", "S A L D O")."""
    return BALANCE_LABEL.match(text) is not None


class _Row:
    """The pieces of one line, kept until its continuation rows (if any) are read."""

    __slots__ = ("booked", "cents", "direction", "fee", "fields", "kind", "line", "text")

    def __init__(self, line: int, booked: str, cents: int, direction: str) -> None:
        self.line, self.booked, self.cents, self.direction = line, booked, cents, direction
        self.kind = ""
        self.fee: int | None = None
        self.fields: list[str | None] = []
        self.text: str | None = None


# The columns a line takes as they are written (cleaned), in `_Rows.finish`'s order.
_AS_WRITTEN = (
    "end_to_end_id",
    "txid",
    "refund_of",
    "counterparty_name",
    "counterparty_document",
    "counterparty_key",
    "bank_reference",
    "refund_id",
)


class _Rows(_Reader):
    """The row path: one line per row, balance rows and the running balance checked, the
    rows that continue a line joined to it, the table's footer where it ends."""

    def __init__(self, where: dict[str, int], profile: CsvProfile, source: str, width: int):
        super().__init__(profile, source)
        get = where.get
        self.width = width
        self.i_booked = where["booked_at"]
        self.i_amount, self.i_credit, self.i_debit = get("amount"), get("credit"), get("debit")
        self.i_ind, self.i_kind = get("indicator"), get("kind")
        self.i_balance = None if profile.daily_balance else get("balance")
        self.i_desc, self.i_detail = get("description"), get("detail")
        self.i_fee, self.i_gross = get("fee"), get("gross")
        self.as_written = [get(t) for t in _AS_WRITTEN]
        self.money_cells = [
            i for i in (self.i_amount, self.i_credit, self.i_debit) if i is not None
        ]
        # A row may lack trailing columns only where nothing it needs is: the date, the money
        # and the flag or kind that say what it is (a missing Saldo or text is read as empty).
        self.required = {t: where[t] for t in _REQUIRED if t in where}
        self.needed = max(self.required.values())
        self.debit_values = {v.strip().casefold() for v in profile.debit_values}
        self.flag_way = lru_cache(maxsize=256)(csv_sniff.flag_direction)
        self.plain = profile.decimal_mark == "." and profile.sign == "signed"
        self.result = ParseResult()
        self.balance: int | None = None
        self.balance_line = 0
        self.checked = 0
        # the balance walk (ParseResult.balances): a day closes with the Saldo stated after
        # its last line (its own, or a balance row's); the first line's day opens with a
        # balance row before it, or with the first line's own Saldo less its amount. A daily
        # balance column (C6's "Saldo do Dia") is the day's closing as it is.
        self.i_daily = get("balance") if profile.daily_balance else None
        self.day: date | None = None  # the business day of the last line read
        self.closing: tuple[int, int, str] | None = None  # (cents, file line, basis)
        self.opening: tuple[int, int, str, date | None] | None = None  # a row before any line
        self.last: tuple[_Row, list[Any]] | None = None  # the line a continuation row extends

    def read(self, reader: Any, offset: int) -> ParseResult:
        """Every row of `reader` (its line numbers after `offset` preamble lines)."""
        stopped_at: int | None = None
        while True:
            try:
                cells = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                raise StatementParseError(
                    f"not readable as CSV ({exc}); a field may have at most "
                    f"{csv.field_size_limit():,} characters",
                    file=self.source,
                    line=offset + reader.line_num,
                ) from None
            line = offset + reader.line_num
            if not cells or not "".join(cells).strip():
                continue
            try:
                if len(cells) < self.width:
                    if len(cells) == 1 and TABLE_FOOTER.match(cells[0]):
                        stopped_at = line
                        break
                    cells = self.padded(cells)
                if not self.row(cells, line):
                    stopped_at = line  # "Total", "Últimos Lançamentos": the table ends here
                    break
            except LineError as exc:
                column = self.p.columns.get(exc.field, exc.field)
                bad = Bad(line, column, exc.reason, self.p.delimiter.join(cells)[:2000])
                self.result.bad.append(bad)
                self.balance = None  # a lost line breaks the running balance: next Saldo restarts
                self.last = None
        return self.close(reader, stopped_at)

    def close(self, reader: Any, stopped_at: int | None) -> ParseResult:
        """The result, with what the footer left unread and the balance checks made."""
        result = self.result
        if stopped_at is not None:
            rest = sum(1 for c in reader if c and any(x.strip() for x in c))
            result.warnings.append(
                f"line {stopped_at} ends the table ({self.p.label or self.p.name} footer); "
                f"{rest} rows after it (totals, future entries) not read"
            )
        if self.checked:
            result.checks.append(f"running balance verified on {self.checked} lines")
        if self.day is not None:
            self.close_day()
        elif self.opening is not None:  # no line at all: the balance is its day's closing
            cents, line, basis, day = self.opening
            if day is not None:
                result.balances.append(Balance(day, "closing", cents, basis, line))
        return result

    def walked(self, booked: str, cells: list[str], cents: int, line: int) -> None:
        """What a line tells the balance walk (see __init__)."""
        day = _business_day(booked)
        if self.day is None:
            i = self.i_balance
            own = cells[i].strip() if i is not None else ""
            if self.opening is not None:
                stated, at, basis, _ = self.opening
                self.result.balances.append(Balance(day, "opening", stated, basis, at))
            elif own:
                basis = f"column {self.p.columns['balance']} less the first line"
                opening = self.cents(own, "balance") - cents
                self.result.balances.append(Balance(day, "opening", opening, basis, line))
        elif day != self.day:
            self.close_day()
        self.day = day
        i = self.i_balance if self.i_balance is not None else self.i_daily
        text = cells[i].strip() if i is not None else ""
        if text:
            basis = f"column {self.p.columns['balance']}"
            self.closing = (self.cents(text, "balance"), line, basis)
        elif self.i_daily is None:  # a running Saldo not stated here: none known
            self.closing = None

    def close_day(self) -> None:
        """The closing of the last line's day, when a Saldo is stated after its last line."""
        if self.closing is not None and self.day is not None:
            cents, line, basis = self.closing
            self.result.balances.append(Balance(self.day, "closing", cents, basis, line))
        self.closing = None

    def balance_stated(self, cells: list[str], stated: int, line: int, desc: str | None) -> None:
        """A balance row, for the balance walk: the closing of the last line's day, or
        before any line the opening of the first line's day."""
        if self.p.card:  # a card bill's balance is a debt, not the account's
            return
        basis = f"row {desc[:40]}" if desc else "balance row"
        if self.day is not None:
            self.closing = (stated, line, basis)
            return
        try:
            day: date | None = _business_day(self.booked(cells[self.i_booked]))
        except LineError:
            day = None
        self.opening = (stated, line, basis, day)

    def padded(self, cells: list[str]) -> list[str]:
        """A short row with its missing trailing columns empty, if none it needs is missing."""
        if len(cells) <= self.needed:
            missing = [self.p.columns[t] for t, i in self.required.items() if i >= len(cells)]
            raise LineError(
                "columns",
                f"{len(cells)} columns, the header has {self.width} (no {', '.join(missing)})",
            )
        return cells + [""] * (self.width - len(cells))

    def row(self, cells: list[str], line: int) -> bool:
        """Read one row of the header's width; False when it is the table's footer."""
        date_text = cells[self.i_booked].strip()
        has_money = any(cells[i].strip() for i in self.money_cells)
        if not date_text and not has_money and self.p.continuation:
            self.continued(cells)
            return True
        desc = self.text_of(cells)
        if not date_text[:1].isdigit() and TABLE_FOOTER.match(date_text or desc or ""):
            return False
        if self.balance_row(cells, line, desc, has_money):
            return True
        cents = self.signed(cells)
        booked = self.booked(cells[self.i_booked])
        row = _Row(line, booked, cents, "debit" if cents < 0 else "credit")
        row.text = desc
        row.fee = self.fee_of(cells, cents)
        values = [(clean(cells[i]) if i is not None else None) for i in self.as_written]
        if self.i_kind is not None and not self.p.card:
            row.kind = self.kind_of(cells, cents)
        self.run_balance(cells, cents, line)
        if not self.p.card:  # a card bill's balance is a debt, not the account's (nor walked)
            self.walked(booked, cells, cents, line)
        self.result.rows.append(self.finish(row, values))
        self.last = (row, values)
        return True

    def continued(self, cells: list[str]) -> None:
        """A row with text only: more of the line above (Bradesco: the counterparty)."""
        if self.last is None:
            return
        more = self.text_of(cells) or clean(" ".join(cells))
        if more:
            row, values = self.last
            row.text = f"{row.text} {more}" if row.text else more
            self.result.rows[-1] = self.finish(row, values)

    def balance_row(self, cells: list[str], line: int, desc: str | None, has_money: bool) -> bool:
        """Whether a row states a balance (checked against the running one), not a line."""
        labelled = (
            self.i_kind is None
            and desc is not None
            and desc[:1] in "Ss"  # cheap test first: most lines are no balance row
            and BALANCE_LABEL.match(desc) is not None
        )
        i_balance = self.i_balance
        if i_balance is not None and not has_money:
            text_balance = cells[i_balance].strip()
            if text_balance:  # a balance row ("SALDO ANTERIOR", "SALDO DO DIA")
                stated = self.cents(text_balance, "balance")
                self.stated(stated, line, "balance")
                self.balance_stated(cells, stated, line, desc)
                return True
        if labelled and has_money and (i_balance is None or not cells[i_balance].strip()):
            # BB / Caixa: the balance written in the amount column
            if not self.p.daily_balance:  # the day's closing (BTG's "Saldo Diário"): unchecked
                # a balance as written: a card file's rule turns lines, never its balance
                stated = (
                    self.cents(cells[self.i_amount], "amount")  # type: ignore[index]
                    if self.p.sign == "inverted"
                    else self.signed(cells, balance_row=True)
                )
                self.stated(stated, line, "amount")
                self.balance_stated(cells, stated, line, desc)
            return True
        return labelled and not has_money  # a balance label with no figure

    def stated(self, stated: int, line: int, target: str) -> None:
        """A balance row: it must equal the running balance when one is known."""
        if self.balance is not None and stated != self.balance:
            raise StatementParseError(
                f"balance row says {stated} cents, the lines before sum to {self.balance}",
                file=self.source,
                line=line,
                field=self.p.columns.get(target, target),
            )
        self.balance, self.balance_line = stated, line

    def run_balance(self, cells: list[str], cents: int, line: int) -> None:
        """The running balance after a line; a Saldo the row states must equal it."""
        text_balance = cells[self.i_balance].strip() if self.i_balance is not None else ""
        balance = self.balance
        if text_balance:
            now = self.cents(text_balance, "balance")
            if balance is not None and balance + cents != now:
                raise StatementParseError(
                    f"running balance: {balance} (line {self.balance_line}) + {cents} "
                    f"= {balance + cents}, the file says {now} cents",
                    file=self.source,
                    line=line,
                    field=self.p.columns["balance"],
                )
            if balance is not None:
                self.checked += 1
            self.balance, self.balance_line = now, line
        elif balance is not None:
            self.balance = balance + cents
            self.balance_line = line

    def kind_of(self, cells: list[str], cents: int) -> str:
        """The kind a kind column says, its sign checked against the amount's."""
        raw_kind = cells[self.i_kind].strip()  # type: ignore[index]
        kind = self.p.kinds.get(raw_kind, raw_kind if raw_kind in KINDS else "")
        if not kind:
            raise LineError("kind", f"unknown kind {raw_kind!r}")
        if (kind in _CREDIT_KINDS and cents < 0) or (kind in _DEBIT_KINDS and cents > 0):
            shown = cells[self.i_amount].strip() if self.i_amount is not None else cents
            raise LineError("amount", f"sign of {shown!r} disagrees with {raw_kind}")
        return kind

    def signed(self, cells: list[str], balance_row: bool = False) -> int:
        """A row's amount in cents, signed by the profile's rule."""
        if self.plain:
            return self.plain_cents(cells[self.i_amount])  # type: ignore[index]
        sign = self.p.sign
        if sign == "split":
            return self.split_cents(cells)
        text = cells[self.i_amount]  # type: ignore[index]
        cents = self.cents(text, "amount")
        if sign == "inverted":
            # a D/C letter says the direction outright: only an unmarked figure is turned
            return cents if dc_mark(text) else -cents
        if sign == "indicator":
            assert self.i_ind is not None
            flag = cells[self.i_ind].strip()
            mark = dc_mark(text)
            if self.p.flags == "listed":
                if mark and not flag:
                    return cents  # no flag: the amount's own D/C letter
                way = "debit" if flag.casefold() in self.debit_values else "credit"
                return _agreed(text, mark, cents, way, flag)
            return self.flagged(flag, text, mark, cents, balance_row)
        return cents

    def plain_cents(self, text: str) -> int:
        """A signed dot-decimal amount (the fast rule of the row path)."""
        amount_text = text.strip()
        if len(amount_text) > MAX_AMOUNT_CHARS:
            raise LineError("amount", f"amount of {len(amount_text)} characters")
        try:
            cents = parse_plain_cents(amount_text, dc_marks=True)
        except AmountError as exc:
            raise LineError("amount", str(exc)) from exc
        return self.bounded(cents, "amount")

    def split_cents(self, cells: list[str]) -> int:
        """The amount of a row with credit and debit columns: exactly one is filled."""
        assert self.i_credit is not None and self.i_debit is not None
        credit_t, debit_t = cells[self.i_credit].strip(), cells[self.i_debit].strip()
        if bool(credit_t) == bool(debit_t):
            raise LineError("amount", "exactly one of credit/debit must be filled")
        target, text = ("credit", credit_t) if credit_t else ("debit", debit_t)
        cents = self.cents(text, target)
        mark = dc_mark(text)
        if mark not in (None, target):
            raise LineError(target, f"{text[:40]!r} is marked {mark} in the {target} column")
        return abs(cents) if credit_t else -abs(cents)

    def flagged(self, flag: str, text: str, mark: str | None, cents: int, balance_row: bool) -> int:
        """A sniffed D/C flag: a credit/debit word, never a guess (see CsvProfile.flags)."""
        way = self.flag_way(flag) if flag else None
        if way is None:
            if not flag and (balance_row or self.p.flags == "words-or-sign" or cents < 0 or mark):
                return cents  # no flag: the amount as written ("Saldo Anterior", a signed file)
            said = f"{flag[:40]!r} is no credit/debit word" if flag else "no credit/debit flag"
            raise LineError("indicator", f"{said}; the amount carries no sign")
        if way == "credit" and cents < 0 and mark is None:
            raise LineError("indicator", f"a negative amount flagged {flag[:40]!r} (credit)")
        return _agreed(text, mark, cents, way, flag)

    def finish(self, row: _Row, values: list[Any]) -> tuple[Any, ...]:
        """The parsed line: kind, PIX ids and counterparty from its columns or its text."""
        e2e, txid, refund_of, cp_name, cp_doc, cp_key, ref, refund_id = values
        desc = row.text
        if self.p.card:
            kind = "other"
        elif self.i_kind is not None:
            kind = row.kind
        else:
            document = ref or e2e
            if document is not None and (len(document) < 32 or not E2E_RE.search(document)):
                document = None  # holds no PIX id: the text decides (cached per text)
            kind, found_e2e, found_of = _classify(row.direction, desc, document)
            e2e = e2e or found_e2e
            refund_of = refund_of or found_of
            if ref is not None and ref in (e2e, refund_of):
                ref = None  # the PIX id itself, not a bank reference
        if desc is not None and (cp_name is None or cp_doc is None or cp_key is None):
            said = describe(desc, row.direction)
            cp_name = cp_name or said.name
            cp_doc = cp_doc or said.document
            cp_key = cp_key or said.key
        return (
            row.line,
            row.booked,
            row.cents,
            row.direction,
            kind,
            e2e,
            txid,
            refund_of,
            cp_name,
            cp_doc,
            cp_key,
            desc,
            ref or refund_id,
            row.fee,
        )

    def fee_of(self, cells: list[str], cents: int) -> int | None:
        """The PSP's fee on a line: its fee column (a magnitude: reports write it negative),
        else what its gross column and the amount that moved differ by (a credit moves the
        gross less the fee, a debit the gross and the fee); None when neither says one."""
        if self.i_fee is not None and (text := cells[self.i_fee].strip()):
            return abs(self.cents(text, "fee"))
        if self.i_gross is not None and (text := cells[self.i_gross].strip()):
            gross = abs(self.cents(text, "gross"))
            fee = gross - cents if cents >= 0 else -cents - gross
            if fee < 0:
                raise LineError("gross", f"gross {text[:40]!r} and amount {cents} leave no fee")
            return fee
        return None

    def text_of(self, cells: list[str]) -> str | None:
        """The line's text: its description, and its detail column after " - "."""
        desc = clean(cells[self.i_desc]) if self.i_desc is not None else None
        if self.i_detail is not None:
            detail = clean(cells[self.i_detail])
            if detail:
                desc = f"{desc} - {detail}" if desc else detail
        return desc


@lru_cache(maxsize=1 << 14)
def _business_day(booked: str) -> date:
    """The business day of a line's booking (ISO text with its offset)."""
    return business_day(iso_to_us(booked))


def _agreed(text: str, mark: str | None, cents: int, way: str, flag: str) -> int:
    """`cents` in the direction a flag says; an amount's D/C letter must say the same (a
    letter and a flag are one sign written twice, never turned twice)."""
    if mark is not None and mark != way:
        raise LineError(
            "indicator",
            f"the amount {text.strip()[:40]!r} says {mark}, the flag {flag[:40]!r} {way}",
        )
    return abs(cents) if way == "credit" else -abs(cents)


def _rows(
    reader: Any, where: dict[str, int], profile: CsvProfile, source: str, offset: int, width: int
) -> ParseResult:
    return _Rows(where, profile, source, width).read(reader, offset)
