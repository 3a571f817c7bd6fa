"""Money is integer cents, end to end. Parsing goes through Decimal, never float.

`parse_cents` reads the amounts Brazilian banks and PSPs write: "10.00", "10,00",
"1.234,56", "1,234.56", "-200,00", "200,00-", "(200.00)", "R$ 1.234,56", "  00012,30 ".
It never rounds: an amount with more than two decimal places that are not zeros is an error.

How the decimal mark is decided (the only ambiguous part, so it is spelled out):

1. `decimal_mark="."` or `","` given: that character is the decimal mark and the other one
   may only appear as a thousands separator, in proper groups of three ("1.234.567,89").
2. No mark given, both "," and "." present: the one that appears last is the decimal mark
   ("1.234,56" and "1,234.56" both read 1234.56).
3. No mark given, only one of them present, more than once: thousands separator
   ("1.234.567" reads 1234567.00).
4. No mark given, only one of them present, once, followed by exactly three digits and
   properly grouped ("1.234", "12,345"): a thousands separator. Banks never write three
   decimal places for BRL, while "10.000" for ten thousand is common; pass `decimal_mark`
   to override.
5. Otherwise a single "," or "." is the decimal mark ("10,5" is 10.50, "0.123" has three
   decimals and fails unless the extra digits are zeros).

A sign is one of: a leading "+" or "-", a trailing "-", or enclosing parentheses; two sign
marks at once ("-200-", "-(5)") are an error rather than a guess.

D/C marks, only where the caller says the text may carry them (`dc_marks=True`; the CSV
reader does, for every money column): Brazilian banks write the direction as a letter beside
the figure ("1.234,56 D", "150,00 C", "1.234,56D", "R$ 1.234,56 D", "D 1.234,56", lower case
too). `D` is a debit (negative), `C` a credit (positive); one letter, at the start or the end,
blanks around it ignored. A letter at both ends ("D 5,00 C") is an error. Beside a sign, a mark
that agrees is redundant and accepted ("-150,00 D", "(150,00) D", "+150,00 C": some PDF-to-CSV
exports print both); one that disagrees ("-150,00 C", "+150,00 D") is an error rather than a
guess. Other words (DR, CR, Déb, Créd) are not marks. Off by default: a field whose format
signs amounts otherwise (OFX TRNAMT, camt Amt with CdtDbtInd, API Pix `valor`, Open Finance
`amount` with creditDebitType) must not start reading letters, where a letter is a damaged
file. `dc_mark(text)` says which mark an accepted text carried.
"""

from __future__ import annotations

import re
from decimal import Decimal

__all__ = [
    "MAX_CENTS",
    "MINUS",
    "AmountError",
    "check_range",
    "dc_mark",
    "format_brl",
    "format_cents",
    "format_count",
    "format_duration",
    "format_percent",
    "parse_cents",
]

# The largest magnitude any parser accepts: what amount_cents (int64) holds. A larger amount
# is an error, never an OverflowError or a wrapped number further down.
MAX_CENTS = (1 << 63) - 1

# A person reads amounts and counts in one pt-BR style everywhere (report, console, review app,
# charts): "R$ 1.289.574,70", "−R$ 2.156,10" (U+2212, the minus sign, not a hyphen),
# "1.939", "98,9 %", "2 h".
MINUS = "\u2212"


class AmountError(ValueError):
    """A text that is not an amount of money."""


_BLANKS = re.compile(r"[\s\u00a0\u202f]+")
_BODY = re.compile(r"[0-9.,]+")
_GROUPED = re.compile(r"[1-9][0-9]{0,2}(?:S[0-9]{3})+")  # 'S' stands for the separator
_PLAIN_DOT = re.compile(r"-?[0-9]{1,13}\.[0-9]{2}")


def _show(text: str) -> str:
    """`text` quoted for an error message, cut short: a damaged file may hold megabytes."""
    return repr(text) if len(text) <= 40 else repr(text[:40]) + f"... ({len(text)} characters)"


_DC = {"D": "debit", "d": "debit", "C": "credit", "c": "credit"}


def dc_mark(text: str) -> str | None:
    """The direction a D/C mark says ("150,00 C": "credit", "D 1.234,56": "debit"), else None.

    Meant for a text `parse_cents(text, dc_marks=True)` accepted: it only looks at the ends,
    as parse_cents does (blanks and a leading "R$" aside)."""
    s = text.strip()  # cheap first: the CSV reader asks on every line
    if len(s) < 2:
        return None
    mark = _DC.get(s[-1])
    if mark is not None:
        return mark
    if s.startswith("R$"):
        s = _BLANKS.sub("", s)[2:]
    return _DC.get(s[0]) if len(s) > 1 else None


def _strip_dc(s: str, original: str) -> tuple[str | None, str]:
    """Split off the one D/C letter a blank-free amount may carry: (direction or None, rest)."""
    lead, trail = _DC.get(s[0]), _DC.get(s[-1])
    if lead is None and trail is None:
        return None, s
    if len(s) == 1:
        raise AmountError(f"not an amount: {_show(original)}")
    if lead is not None and trail is not None:
        raise AmountError(f"more than one D/C mark in amount {_show(original)}")
    return (lead, s[1:]) if lead is not None else (trail, s[:-1])


def _strip_sign(text: str, original: str) -> tuple[bool, bool, str]:
    """Split off the one sign mark an amount may carry: (negative, a sign was written, body)."""
    marks = 0
    negative = False
    s = text
    if s.startswith("(") and s.endswith(")"):
        negative, s, marks = True, s[1:-1], marks + 1
    if s.startswith("R$"):  # "(R$ 5,00)" or "-R$ 5,00" put the currency inside the sign
        s = s[2:]
    if s[:1] in ("+", "-"):
        negative, s, marks = s[0] == "-", s[1:], marks + 1
    if s.endswith("-"):
        negative, s, marks = True, s[:-1], marks + 1
    if s.startswith("R$"):
        s = s[2:]
    if marks > 1:
        raise AmountError(f"more than one sign in amount {_show(original)}")
    return negative, marks > 0, s


def _grouped(integer: str, sep: str) -> bool:
    """True if `integer` is digits in groups of three separated by `sep` ("1.234.567")."""
    return _GROUPED.fullmatch(integer.replace(sep, "S")) is not None


def _infer_mark(body: str) -> str | None:
    """The decimal mark of an unsigned body per the module rules; None = no decimal part."""
    dots, commas = body.count("."), body.count(",")
    if dots and commas:
        return "." if body.rfind(".") > body.rfind(",") else ","
    if not dots and not commas:
        return None
    sep = "." if dots else ","
    if dots + commas > 1:
        return None  # rule 3: repeated, so it separates thousands
    if _grouped(body, sep):
        return None  # rule 4: "1.234" / "12,345"
    return sep


def parse_cents(text: str, *, decimal_mark: str | None = None, dc_marks: bool = False) -> int:
    """Parse a money amount into integer cents, exactly (see the module doc for the rules).

    `dc_marks`: also read a D/C letter as the sign ("150,00 C", "1.234,56 D").
    Raises AmountError for anything that is not an amount or would need rounding.
    """
    if not isinstance(text, str):
        raise AmountError(f"not a text amount: {repr(text)[:60]}")
    if decimal_mark not in (None, ".", ","):
        raise AmountError(f"decimal mark must be ',' or '.', got {decimal_mark!r}")
    s = _BLANKS.sub("", text)
    if s.startswith("R$"):
        s = s[2:]
    if not s:
        raise AmountError("empty amount")
    marked = None
    if dc_marks:
        marked, s = _strip_dc(s, text)
    negative, signed, body = _strip_sign(s, text)
    if marked is not None:
        if signed and negative != (marked == "debit"):
            raise AmountError(f"sign and D/C mark disagree in amount {_show(text)}")
        negative = marked == "debit"
    if not body or _BODY.fullmatch(body) is None:
        raise AmountError(f"not an amount: {_show(text)}")
    mark = decimal_mark if decimal_mark is not None else _infer_mark(body)
    if mark is None:
        integer, fraction = body, ""
        thousands = "." if "." in body else ","
    else:
        thousands = "," if mark == "." else "."
        if body.count(mark) > 1:
            raise AmountError(f"more than one decimal mark {mark!r} in {_show(text)}")
        integer, _, fraction = body.partition(mark)
        if thousands in fraction:
            raise AmountError(f"thousands separator after the decimal mark in {_show(text)}")
    if thousands in integer:
        if not _grouped(integer, thousands):
            raise AmountError(f"thousands separators not in groups of three in {_show(text)}")
        integer = integer.replace(thousands, "")
    if not integer and not fraction:
        raise AmountError(f"not an amount: {_show(text)}")
    if mark is not None and mark in body and not fraction:
        raise AmountError(f"decimal mark without decimals in {_show(text)}")
    if len(fraction) > 2 and fraction[2:].strip("0"):
        raise AmountError(f"more than two decimal places in {_show(text)} (recon never rounds)")
    if len(integer.lstrip("0")) > 17:
        raise AmountError(f"amount out of range in {_show(text)} (more than 2^63 - 1 cents)")
    value = Decimal(f"{integer or '0'}.{(fraction[:2] or '0')}")
    cents = int(value * 100)
    return check_range(-cents if negative else cents, text)


def check_range(cents: int, text: str = "") -> int:
    """`cents` if its magnitude is at most MAX_CENTS, else AmountError."""
    if -MAX_CENTS <= cents <= MAX_CENTS:
        return cents
    raise AmountError(f"amount out of range {_show(text)} (more than 2^63 - 1 cents)")


def parse_plain_cents(text: str, *, dc_marks: bool = False) -> int:
    """Fast path for the canonical form "-123.45" (API Pix `valor`, PSP CSV); else parse_cents
    with a dot decimal mark (and `dc_marks`).

    Exact: the digits are split at the mark and joined as integers, no float involved.
    """
    if _PLAIN_DOT.fullmatch(text) is not None:
        whole, frac = text[:-3], text[-2:]
        cents = abs(int(whole)) * 100 + int(frac)
        return check_range(-cents if whole.startswith("-") else cents, text)
    return parse_cents(text, decimal_mark=".", dc_marks=dc_marks)


def format_cents(cents: int, *, decimal_mark: str = ".", thousands: str = "") -> str:
    """Format cents as text: 123456 -> "1234.56" (or "1.234,56" with mark "," and "." )."""
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise TypeError(f"cents must be int, got {type(cents).__name__}")
    sign = "-" if cents < 0 else ""
    units, frac = divmod(abs(cents), 100)
    whole = f"{units:,}".replace(",", thousands) if thousands else str(units)
    return f"{sign}{whole}{decimal_mark}{frac:02d}"


def format_brl(cents: int) -> str:
    """Human BRL, pt-BR: 123456 -> "R$ 1.234,56"; -215610 -> "−R$ 2.156,10" (U+2212)."""
    text = "R$ " + format_cents(abs(cents), decimal_mark=",", thousands=".")
    return MINUS + text if cents < 0 else text


def format_count(n: int) -> str:
    """A count, pt-BR: 1939 -> "1.939"; -5 -> "−5"."""
    text = f"{abs(int(n)):,}".replace(",", ".")
    return MINUS + text if n < 0 else text


def format_percent(fraction: float, digits: int = 1) -> str:
    """A share, pt-BR: 0.989672 -> "99,0 %" (`digits` decimals)."""
    text = f"{abs(100 * fraction):,.{digits}f}".replace(",", "_").replace(".", ",")
    text = text.replace("_", ".")
    return f"{MINUS if fraction < 0 else ''}{text} %"


def format_duration(seconds: int) -> str:
    """A duration in the largest unit that divides it: 7200 -> "2 h", 1800 -> "30 min",
    86400 -> "1 d", 90 -> "90 s", 5400 -> "90 min"."""
    seconds = int(seconds)
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds and seconds % size == 0:
            return f"{format_count(seconds // size)} {unit}"
    return f"{format_count(seconds)} s"
