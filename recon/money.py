"""Money is integer cents, end to end. Parsing goes through Decimal, never float."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["AmountError", "format_brl", "format_cents", "parse_cents"]


class AmountError(ValueError):
    """A text that is not an amount of money."""


_SPACES = re.compile(r"[\s\u00a0]+")


def parse_cents(text: str, *, decimal_mark: str | None = None) -> int:
    """Parse a money amount into integer cents, exactly.

    Accepts "10.00", "10,00", "1.234,56", "1,234.56", "-200,00", "(200.00)", "+5", padded
    text ("  00012,30 "), a trailing minus ("200,00-") and a leading "R$". With no
    `decimal_mark` the mark is inferred: the last of "," or "." followed by 1-2 digits at
    the end. More than two decimal places that are not zeros is an error (we never round).
    """
    if not isinstance(text, str):
        raise AmountError(f"not a text amount: {text!r}")
    s = _SPACES.sub("", text)
    s = s.replace("R$", "")
    if not s:
        raise AmountError("empty amount")
    negative = False
    if s.startswith("(") and s.endswith(")"):
        negative, s = True, s[1:-1]
    if s.endswith("-"):
        negative, s = not negative, s[:-1]
    if s[:1] in "+-":
        negative, s = (negative != (s[0] == "-")), s[1:]
    if not s or not re.fullmatch(r"[0-9.,]+", s):
        raise AmountError(f"not an amount: {text!r}")
    mark = decimal_mark
    if mark is None:
        last_dot, last_comma = s.rfind("."), s.rfind(",")
        pos = max(last_dot, last_comma)
        if pos == -1:
            mark = "."
        else:
            candidate = s[pos]
            other = "," if candidate == "." else "."
            tail = s[pos + 1 :]
            if s.count(candidate) == 1 and (other in s[:pos] or len(tail) != 3):
                mark = candidate
            elif s.count(candidate) == 1 and other not in s:
                # "1.234" or "1,234": ambiguous; three digits after a single mark read as
                # thousands only if the mark is "." in a comma-decimal world is unknowable,
                # so treat it as a decimal mark (banks write at most 2 decimals; 3 is an error
                # unless it ends in 0).
                mark = candidate
            else:
                mark = other
    if mark not in {",", "."}:
        raise AmountError(f"decimal mark must be ',' or '.', got {mark!r}")
    thousands = "." if mark == "," else ","
    body = s.replace(thousands, "")
    if body.count(mark) > 1:
        raise AmountError(f"not an amount: {text!r}")
    body = body.replace(mark, ".")
    if body.startswith(".") or body.endswith("."):
        body = body.strip(".") if body.count(".") == 1 and body not in {"."} else body
        if body == "." or not body:
            raise AmountError(f"not an amount: {text!r}")
    try:
        value = Decimal(body)
    except InvalidOperation as exc:
        raise AmountError(f"not an amount: {text!r}") from exc
    cents = value * 100
    if cents != cents.to_integral_value():
        raise AmountError(f"more than two decimal places: {text!r}")
    result = int(cents)
    return -result if negative else result


def format_cents(cents: int, *, decimal_mark: str = ".", thousands: str = "") -> str:
    """Format cents as text: 123456 -> "1234.56" (or "1.234,56" with mark "," and "." )."""
    if not isinstance(cents, int) or isinstance(cents, bool):
        raise TypeError(f"cents must be int, got {type(cents).__name__}")
    sign = "-" if cents < 0 else ""
    units, frac = divmod(abs(cents), 100)
    whole = f"{units:,}".replace(",", thousands) if thousands else str(units)
    return f"{sign}{whole}{decimal_mark}{frac:02d}"


def format_brl(cents: int) -> str:
    """Human BRL: 123456 -> "R$ 1.234,56"."""
    return "R$ " + format_cents(cents, decimal_mark=",", thousands=".")
