"""CSV statements recognized by their content: header vocabulary, sniffing, bank layouts.

`sniff_profile(raw)` reads the start of a CSV file and builds the CsvProfile that reads it:

- **encoding**: a UTF-8 BOM, else UTF-8 when the bytes are valid UTF-8, else Windows-1252
  (latin-1 for the five bytes cp1252 leaves undefined); decided over the whole file at
  parse time ("auto"), since one accented byte can sit anywhere;
- **delimiter and header line**: the first of the first 60 lines that, split by `;`, `,`,
  tab or `|`, names a date and an amount (or credit and debit columns) in the vocabulary
  below; lines before it are the preamble (bank name, account, period, balance);
- **columns** by the header vocabulary (Portuguese and English synonyms, accents, case,
  "(R$)" and punctuation ignored); a "tipo"-like column is the D/C flag only when its values
  are all credit/debit words (C, D, Crédito, Débito, Entrada, Saída, +, -, (+), (-), ...);
- **direction** when the amounts carry no sign (no -, +, parentheses or D/C letter, as in
  "150,00 C"): a column of credit/debit words under any header is the flag; a file that
  states the direction where recon cannot read it (a D/C column of other values; with no
  named layout, a text that says debit) is refused (`Sniffed.refused`) rather than read as
  all credits;
- **date format** from the values: dd/mm/yyyy, dd/mm/yy, yyyy-mm-dd, dd-mm-yyyy, dd.mm.yyyy,
  yyyymmdd, ISO 8601 with offset, each with an optional time; mm/dd/yyyy only when the
  values cannot be day-first;
- **decimal mark** from the values of every amount column: "1.234,56" vs "1,234.56" vs
  "1234.56"; unknown (every value ambiguous, like "1.234") falls back to recon.money's rules;
- the **named bank layout** whose header signature it has (recon.statements.banks, with the
  vocabulary and the flag words; where each came from is in docs/statements.md), which adds what the header cannot say: card statements, a daily
  (not running) balance column, continuation lines; a signature other banks share is told
  apart by the header as written, the delimiter and the dates (Layout.matches);
- a **card statement by its columns** when no layout is named (CARD_COLUMNS: Portador,
  Parcela, Final do Cartão, ...; not beside a merchant's sales columns, SALES_COLUMNS, nor
  when most amounts are negative: a warning then).

A file none of this recognizes is an error naming the headers seen and the nearest layout.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime

from recon.money import AmountError, dc_mark, parse_cents
from recon.statements.banks import (
    CARD_COLUMNS,
    DAILY_BALANCE,
    FLAG_CREDIT,
    FLAG_DEBIT,
    FLAG_ONLY,
    FLAG_SYMBOLS,
    GENERIC,
    HEADERLESS,
    LAYOUTS,
    SALES_COLUMNS,
    VOCABULARY,
    Layout,
    normalize,
)

__all__ = [
    "LAYOUTS",
    "Layout",
    "Sniffed",
    "declared_period",
    "decode_auto",
    "decode_csv",
    "is_header",
    "nearest_layout",
    "normalize",
    "sniff_text",
    "unwrap_rows",
]

DELIMITERS = (";", ",", "\t", "|")
HEAD_LINES = 60
SAMPLE_ROWS = 400


def flag_direction(value: str) -> str | None:
    """The direction a D/C flag value says: "credit", "debit", or None (blank included).

    Words (C, D, Crédito, Débito, Entrada, Saída, credit, debit, CR, DB, ...; accents and case
    ignored) and signs (`+`, `-`, `(+)`, `(-)`, spaces ignored).
    """
    compact = "".join(value.split())
    if compact in FLAG_SYMBOLS:
        return FLAG_SYMBOLS[compact]
    n = normalize(value)
    if n in FLAG_DEBIT:
        return "debit"
    if n in FLAG_CREDIT:
        return "credit"
    return None


@dataclass
class Sniffed:
    """What sniffing found in a CSV's first lines."""

    layout: Layout
    delimiter: str
    header_index: int  # 0-based line of the header
    header: list[str]
    columns: dict[str, str]  # recon field -> header cell as written
    sign: str  # signed | inverted | split | indicator
    debit_values: tuple[str, ...]
    date_format: str
    decimal_mark: str | None
    preamble: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # header cells not read
    skip: int = 0  # headerless files: lines before the first data row
    unsigned: bool = False  # the sampled amounts carry no sign at all
    notes: list[str] = field(default_factory=list)  # warnings on how it is read
    refused: tuple[int, str, str] | None = None  # (line, column, reason): direction unreadable


def decode_auto(raw: bytes) -> tuple[str, str]:
    """(text, encoding) of CSV bytes: BOM → UTF-8, valid UTF-8, else cp1252 (latin-1 fallback)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", errors="strict"), "utf-8-sig"
    try:
        return raw.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return raw.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return raw.decode("latin-1"), "latin-1"


def decode_csv(raw: bytes) -> tuple[str, str]:
    """(text, encoding) of a CSV file's bytes (`decode_auto`), its rows unwrapped when the
    file was saved once more as a one-column CSV (`unwrap_rows`)."""
    text, encoding = decode_auto(raw)
    return unwrap_rows(text), encoding


def unwrap_rows(text: str) -> str:
    """A CSV saved again as a one-column CSV, every line one quoted field that holds the
    real row with its quotes doubled (``"Data,""Histórico"",""Valor"","``, as a spreadsheet
    or a script re-saving a bank's export writes it): the rows inside, line for line, so
    that line numbers still point into the file. Any other text is returned as it is: a
    line that is not one such field, or fewer than two rows with columns inside, leave the
    whole text alone."""
    lines = text.split("\n")
    filled = [line.rstrip("\r") for line in lines[:200] if line.strip()]
    if len(filled) < 2 or not all(
        len(line) >= 2 and line[0] == '"' and line[-1] == '"' for line in filled
    ):
        return text
    rows, with_columns = [], 0
    for line in lines:
        end = "\r" if line.endswith("\r") else ""
        if not line.strip():
            rows.append(line)
            continue
        cells = _split(line.rstrip("\r"), ",")
        if len(cells) != 1:
            return text
        with_columns += any(mark in cells[0] for mark in ",;\t")  # a title line has none
        rows.append(cells[0] + end)
    return "\n".join(rows) if with_columns >= 2 else text


def _split(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return line.split(delimiter)


def _map_header(cells: Sequence[str]) -> dict[str, list[int]]:
    """recon field (or "text") -> indexes of the header cells the vocabulary names."""
    found: dict[str, list[int]] = {}
    for i, cell in enumerate(cells):
        n = normalize(cell)
        if not n:
            continue
        for target, names in VOCABULARY.items():
            if n in names:
                found.setdefault(target, []).append(i)
    return found


def _is_header(found: dict[str, list[int]]) -> bool:
    has_amount = "amount" in found or ("credit" in found and "debit" in found)
    return "booked_at" in found and has_amount


def is_header(cells: Sequence[str]) -> bool:
    """Whether `cells` name a date and an amount (or credit and debit columns): a statement's
    header line by the vocabulary (a spreadsheet's header written over two merged rows is
    told by this once composed)."""
    return _is_header(_map_header(cells))


_DATE_FORMATS = (
    "%d/%m/%Y",
    "%d/%m/%y",
    "%Y-%m-%d",
    "%d-%m-%Y",
    "%d.%m.%Y",
    "%Y%m%d",
    "%Y/%m/%d",
    "%m/%d/%Y",
)
_TIMES = ("", " %H:%M:%S", " %H:%M", "T%H:%M:%S", "T%H:%M", " - %H:%M:%S", " - %H:%M")
_ISO_OFFSET = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})$"
)


def _date_format(values: Iterable[str]) -> str | None:
    """The first format that reads every value that looks like a date (see module doc)."""
    samples = [v.strip() for v in values if v.strip() and v.strip()[:1].isdigit()]
    samples = [v for v in samples if not re.fullmatch(r"0+[/.-]0+[/.-]0+", v)]
    if not samples:
        return None
    if all(_ISO_OFFSET.match(v) for v in samples):
        return "iso"
    for base in _DATE_FORMATS:
        for t in _TIMES:
            fmt = base + t
            try:
                for v in samples:
                    datetime.strptime(v, fmt)
            except ValueError:
                continue
            return fmt
    return None


_AMOUNT_CLEAN = re.compile(r"[\s\u00a0R$()+-]|^[DdCc]|[DdCc]$")


def _decimal_mark(values: Iterable[str]) -> str | None:
    """',' or '.' when the values say which, else None (recon.money's per-value rules)."""
    votes = {",": 0, ".": 0}
    for v in values:
        s = _AMOUNT_CLEAN.sub("", v.strip())
        if not s:
            continue
        if "," in s and "." in s:
            votes["," if s.rfind(",") > s.rfind(".") else "."] += 1
        elif re.search(r",\d{1,2}$", s):
            votes[","] += 1
        elif re.search(r"\.\d{1,2}$", s):
            votes["."] += 1
        elif re.search(r"^\d{1,3}(,\d{3})+$", s):
            votes["."] += 1  # "1,234" with no decimals: a comma groups thousands
    if votes[","] and not votes["."]:
        return ","
    if votes["."] and not votes[","]:
        return "."
    return None


def _indicator_values(values: Iterable[str]) -> tuple[str, ...] | None:
    """The debit values of a D/C flag column, or None if some value is no credit/debit word."""
    debit: set[str] = set()
    seen = False
    for v in values:
        if not v.strip():
            continue
        seen = True
        way = flag_direction(v)
        if way is None:
            return None
        if way == "debit":
            debit.add(v.strip())
    return tuple(sorted(debit)) if seen else None


_SIGN_MARK = re.compile(r"[-+()\u2212]")
_NEGATIVE = re.compile(r"[-(\u2212]")
_BALANCE_CELL = re.compile(r"(?i)^\s*(?:saldo\b|s\s+a\s+l\s+d\s+o\b)")


def _dc_marked(value: str) -> bool:
    """An amount written with a D/C letter ("150,00 C", "1.234,56D", "D 5,00")."""
    if dc_mark(value) is None:
        return False
    try:
        parse_cents(value, dc_marks=True)
    except AmountError:
        return False
    return True


def _unsigned(values: Iterable[str]) -> bool:
    """Whether amounts are written without any sign (-, +, parentheses, a D/C letter): at
    least one value."""
    seen = [v for v in (x.strip() for x in values) if v]
    return bool(seen) and not any(_SIGN_MARK.search(v) or _dc_marked(v) for v in seen)


def _placeholder(values: Iterable[str]) -> bool:
    """A column of one bare sign only ("-" everywhere): a placeholder, not a D/C flag."""
    marks = {"".join(v.split()) for v in values if v.strip()}
    return marks <= {"-"} or marks <= {"+"}


def _layout_for(
    cells: Sequence[str], delimiter: str = "", date_format: str | None = None
) -> Layout:
    for layout in LAYOUTS:
        if layout.matches(cells, delimiter, date_format):
            return layout
    return GENERIC


def nearest_layout(cells: Sequence[str]) -> tuple[Layout, float]:
    """The named layout whose signature is closest to `cells` (Jaccard), and the score."""
    names = {normalize(c) for c in cells} - {""}
    best, score = LAYOUTS[0], -1.0
    for layout in LAYOUTS:
        union = names | layout.signature
        s = len(names & layout.signature) / len(union) if union else 0.0
        if s > score:
            best, score = layout, s
    return best, score


def _header_candidates(
    lines: Sequence[str],
) -> tuple[int, str, list[str], dict[str, list[int]]] | None:
    best: tuple[int, str, list[str], dict[str, list[int]]] | None = None
    best_key = (-1, 0)
    for i, line in enumerate(lines[:HEAD_LINES]):
        if not line.strip():
            continue
        for d in DELIMITERS:
            if d not in line:
                continue
            cells = _split(line, d)
            found = _map_header(cells)
            if not _is_header(found):
                continue
            key = (sum(len(v) for v in found.values()), -i)
            if key > best_key:
                best, best_key = (i, d, cells, found), key
        if best is not None:
            return best  # the first header line wins; later lines are data
    return None


def sniff_text(text: str) -> Sniffed | None:
    """Sniff the start of a CSV's text (at least its first lines; see module doc)."""
    lines = re.split(r"\r\n|\r|\n", text)
    found_header = _header_candidates(lines)
    if found_header is None:
        return _headerless(lines)
    index, delimiter, cells, found = found_header
    header = [c.strip().lstrip("\ufeff") for c in cells]
    numbered = [
        (index + 2 + k, _split(line, delimiter))
        for k, line in enumerate(lines[index + 1 : index + 1 + SAMPLE_ROWS])
    ]
    numbered = [(n, r) for n, r in numbered if any(c.strip() for c in r)]
    cols = _Columns(header, [r for _, r in numbered])
    notes: list[str] = []
    date_i = found["booked_at"][0]
    found_format = _date_format(cols.values(date_i))
    layout = _layout_for(header, delimiter, found_format)
    cols.take("booked_at", date_i)
    amount_i = found["amount"][0] if "amount" in found else None
    unsigned = amount_i is not None and _unsigned(cols.values(amount_i))
    money = [i for t in ("amount", "credit", "debit") for i in found.get(t, [])]
    not_flags = {date_i, *money, *found.get("balance", [])}
    indicator = cols.indicator(found, not_flags, amount_i, unsigned)
    cols.take_the_rest(found)
    named = layout is not GENERIC
    if not named:
        amounts = cols.values(amount_i) if amount_i is not None else None
        layout = _card_by_columns(header, amounts, notes)
    columns = cols.columns
    if "balance" in columns and normalize(columns["balance"]) in DAILY_BALANCE:
        layout = replace(layout, daily_balance=True)
    if "amount" in columns:
        sign = "indicator" if indicator is not None else ("inverted" if layout.card else "signed")
    else:
        sign = "split"
    refused = None
    if sign == "signed" and unsigned:
        refused = _unstated_direction(header, numbered, not_flags, texts=not named)
    money_values = [v for i in money + found.get("balance", []) for v in cols.values(i)]
    return Sniffed(
        layout=layout,
        delimiter=delimiter,
        header_index=index,
        header=header,
        columns=columns,
        sign=sign,
        debit_values=indicator or ("D",),
        date_format=found_format or "%d/%m/%Y",
        decimal_mark=_decimal_mark(money_values),
        preamble=lines[:index],
        ignored=[h for i, h in enumerate(header) if i not in cols.used and h],
        unsigned=unsigned,
        notes=notes,
        refused=refused,
    )


class _Columns:
    """The recon fields a header's cells are taken for, and the sampled rows under it."""

    def __init__(self, header: list[str], rows: list[list[str]]) -> None:
        self.header = header
        self.rows = rows
        self.columns: dict[str, str] = {}
        self.used: set[int] = set()

    def values(self, i: int) -> list[str]:
        return [r[i] for r in self.rows if i < len(r)]

    def take(self, target: str, i: int) -> None:
        self.columns[target] = self.header[i]
        self.used.add(i)

    def indicator(
        self, found: dict[str, list[int]], not_flags: set[int], amount_i: int | None, unsigned: bool
    ) -> tuple[str, ...] | None:
        """The D/C flag column's debit values, the column taken; None when there is none."""
        for i in found.get("indicator", []):
            flags = _indicator_values(self.values(i))
            if flags is not None and i not in self.used:
                self.take("indicator", i)
                return flags
        if not unsigned:
            return None
        # Amounts without a sign: a column whose every value is a credit/debit word says the
        # direction, whatever its header ("Sentido" C/D).
        for i in range(len(self.header)):
            if i in not_flags or i in self.used:
                continue
            values = self.values(i)
            flags = _indicator_values(values)
            if flags is None or _placeholder(values) or not _filled(self.rows, i, amount_i):
                continue
            self.take("indicator", i)
            return flags
        return None

    def take_the_rest(self, found: dict[str, list[int]]) -> None:
        """The money, the other fields and the texts (description, then detail)."""
        if "amount" in found:
            self.take("amount", found["amount"][0])
        elif "credit" in found and "debit" in found:
            self.take("credit", found["credit"][0])
            self.take("debit", found["debit"][0])
        for target in (
            "balance",
            "bank_reference",
            "end_to_end_id",
            "txid",
            "counterparty_name",
            "counterparty_document",
            "counterparty_key",
            "fee",
            "gross",
        ):
            for i in found.get(target, []):
                if i not in self.used:
                    self.take(target, i)
                    break
        texts = [i for i in found.get("text", []) if i not in self.used]
        if texts:
            self.take("description", texts[0])
        if len(texts) > 1:
            self.take("detail", texts[1])


def _filled(rows: Sequence[Sequence[str]], i: int, amount_i: int | None) -> bool:
    """Whether column `i` has a value on every sampled line that has an amount (balance rows,
    "Saldo Anterior", may leave it blank)."""
    for r in rows:
        if amount_i is None or amount_i >= len(r) or not r[amount_i].strip():
            continue
        if i < len(r) and r[i].strip():
            continue
        if not any(_BALANCE_CELL.match(c) for c in r):
            return False
    return True


def _card_by_columns(header: Sequence[str], amounts: list[str] | None, notes: list[str]) -> Layout:
    """GENERIC, or a card statement when its columns are a card's (see CARD_COLUMNS)."""
    cards = [h for h in header if normalize(h) in CARD_COLUMNS]
    if not cards:
        return GENERIC
    sales = [h for h in header if normalize(h) in SALES_COLUMNS]
    if sales:
        notes.append(
            f"columns {cards} are a card's, but columns {sales} are a merchant's sales report: "
            "read as account lines (a sale is a credit); a card bill needs --csv-profile "
            "with card = true"
        )
        return GENERIC
    if amounts is not None:
        negative = sum(1 for v in amounts if _NEGATIVE.search(v))
        positive = sum(1 for v in amounts if v.strip()) - negative
        if negative >= positive:
            notes.append(
                f"columns {cards} are a card statement's, but most amounts are negative "
                "(purchases already written as debits): read with the amounts' own signs"
            )
            return GENERIC
    return replace(
        GENERIC, name="cartao", label=f"card statement, by its columns {cards}", card=True
    )


def _unstated_direction(
    header: Sequence[str],
    numbered: Sequence[tuple[int, Sequence[str]]],
    skip: set[int],
    *,
    texts: bool,
) -> tuple[int, str, str] | None:
    """(line, column, reason) when amounts carry no sign and no usable D/C column was found but
    the file states the direction somewhere recon cannot read; None when nothing says so.

    Where: a column of a D/C flag's name (FLAG_ONLY), or one mostly of credit/debit words,
    holding other values; and, with `texts` (a file of no named layout, whose sign convention
    nothing tells), a text that says debit ("Pix - Enviado", "Compra no débito"; not a refund,
    which is money back). A named layout's all-positive sample is all credits: its bank signs
    debits."""
    from recon.statements.describe import describe

    for i, name in enumerate(header):
        if i in skip:
            continue
        cells = [(n, r[i].strip()) for n, r in numbered if i < len(r) and r[i].strip()]
        worded = [c for _, c in cells if flag_direction(c) and c not in ("+", "-")]
        odd = [(n, c) for n, c in cells if flag_direction(c) is None]
        if odd and (normalize(name) in FLAG_ONLY or 2 * len(worded) >= len(cells) > 1):
            shown = sorted({c[:20] for _, c in odd})[:3]
            return (
                odd[0][0],
                name,
                f"the amounts carry no sign and column {name!r} gives the direction with "
                f"values that are no credit/debit words ({', '.join(map(repr, shown))}); recon "
                "does not guess: pass --csv-profile with a mapping (sign, indicator, "
                "debit_values)",
            )
    for n, r in numbered if texts else ():
        for i, cell in enumerate(r):
            if i in skip or not cell.strip():
                continue
            said = describe(cell.strip())
            if said.direction_word == "debit" and not said.refund:
                return (
                    n,
                    header[i] if i < len(header) else f"column {i + 1}",
                    f"the amounts carry no sign and no credit/debit column was found, but "
                    f"{cell.strip()[:40]!r} says it is a debit; recon does not guess the "
                    "direction: pass --csv-profile with a mapping (sign, indicator, debit_values)",
                )
    return None


_LOOKS_DATE = re.compile(r"^\s*\d{2}/\d{2}/\d{2,4}\s*$")
_LOOKS_AMOUNT = re.compile(
    r"^\s*-?\s*(?:R\$\s*)?\d{1,3}(?:\.?\d{3})*,\d{2}-?\s*$|^\s*-?\d+\.\d{2}\s*$"
)


def _headerless(lines: Sequence[str]) -> Sniffed | None:
    """Itaú's TXT/CSV export has no header: every row `dd/mm/yyyy;HISTÓRICO;-1.234,56`
    (and sometimes a fourth column, the balance). Taken only when every one of the first
    non-blank lines has that shape."""
    sample = [line for line in lines[:HEAD_LINES] if line.strip()]
    if not sample:
        return None
    for d in (";", ",", "\t"):
        rows = [_split(line, d) for line in sample]
        width = len(rows[0])
        if width not in (3, 4) or any(len(r) != width for r in rows):
            continue
        if not all(
            _LOOKS_DATE.match(r[0])
            and _LOOKS_AMOUNT.match(r[2])
            and (width == 3 or not r[3].strip() or _LOOKS_AMOUNT.match(r[3]))
            for r in rows
        ):
            continue
        columns = {"booked_at": "c0", "description": "c1", "amount": "c2"}
        if width == 4:
            columns["balance"] = "c3"
        money = [r[i] for r in rows for i in range(2, width)]
        skip = next(i for i, line in enumerate(lines) if line.strip())
        return Sniffed(
            layout=HEADERLESS,
            delimiter=d,
            header_index=-1,
            header=[],
            columns=columns,
            sign="signed",
            debit_values=("D",),
            date_format=_date_format(r[0] for r in rows) or "%d/%m/%Y",
            decimal_mark=_decimal_mark(money),
            skip=skip,
        )
    return None


_PERIOD = re.compile(
    r"(?i)(?:per[ií]odo|entre|de)\b[^0-9]*(\d{2}/\d{2}/\d{2,4})\s*(?:a|at[ée]|e|-|–)\s*"
    r"(\d{2}/\d{2}/\d{2,4})"
)


def declared_period(preamble: Sequence[str]) -> tuple[date, date] | None:
    """A period a preamble declares ("Período ;01/11/2026 a 05/11/2026", "Entre … e …")."""
    for line in preamble:
        m = _PERIOD.search(line)
        if not m:
            continue
        days = []
        for text in m.groups():
            fmt = "%d/%m/%Y" if len(text) == 10 else "%d/%m/%y"
            try:
                days.append(datetime.strptime(text, fmt).date())
            except ValueError:
                break
        if len(days) == 2 and days[0] <= days[1]:
            return days[0], days[1]
    return None


_ACCOUNT = re.compile(
    r"(?i)\b(?:conta|ag[êe]ncia/conta|ag/conta|account)(?:\s*[:;])*\s*([0-9][0-9 ./-]*[0-9Xx])"
)


def declared_account(preamble: Sequence[str]) -> str | None:
    """The account number a preamble names ("Conta ;72385499", "Agência/Conta: 1234/5678-9")."""
    for line in preamble:
        m = _ACCOUNT.search(line)
        if m:
            return m.group(1).strip()
    return None
