"""Helpers the statement exporters share: business time zone, text and number rendering."""

from __future__ import annotations

import unicodedata
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from recon.money import format_cents

BRT = ZoneInfo("America/Sao_Paulo")


def local(at: datetime) -> datetime:
    """`at` in Brasília time (banks print local time; Brazil has no DST since 2019)."""
    return at.astimezone(BRT)


def rfc3339_local(at: datetime) -> str:
    """``2026-10-05T14:03:22-03:00``: RFC 3339 with the -03:00 offset BACEN PSPs send."""
    return local(at).isoformat(timespec="seconds")


def valor(cents: int) -> str:
    """BACEN ``valor``: ``^\\d{1,10}\\.\\d{2}$`` (positive magnitude)."""
    return format_cents(abs(cents))


def ascii_upper(text: str | None, width: int | None = None) -> str:
    """Upper-case ASCII without accents (CNAB fields), cut/padded to `width` if given."""
    plain = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode("ascii")
    plain = " ".join(plain.upper().split())
    if width is None:
        return plain
    return plain[:width].ljust(width)


def to_bound(value: date | datetime | None) -> datetime | None:
    """A period bound as an aware UTC datetime: a bare date means local midnight."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("period bounds must be timezone-aware")
        return value.astimezone(UTC)
    return datetime.combine(value, time(0), tzinfo=BRT).astimezone(UTC)
