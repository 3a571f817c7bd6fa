"""The emulator's clock: manual by default, so tests and the world decide what time it is."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

__all__ = ["DEFAULT_START", "Clock", "format_ts", "from_ms", "to_ms"]

#: Fixed start instant (not the real clock) so that a seed alone fixes every timestamp.
DEFAULT_START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def to_ms(dt: datetime) -> int:
    """Milliseconds since the epoch of an aware datetime."""
    if dt.tzinfo is None:
        raise ValueError("naive datetime: the emulator clock is UTC and needs aware datetimes")
    delta = dt - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def from_ms(ms: int) -> datetime:
    """Aware UTC datetime of epoch milliseconds."""
    return _EPOCH + timedelta(milliseconds=ms)


_MINUTE_CACHE: dict[int, str] = {}
#: "SS." for each second of a minute and "mmmZ" for each millisecond of a second
_SECONDS = tuple(f"{s:02d}." for s in range(60))
_MILLIS = tuple(f"{m:03d}Z" for m in range(1000))


def format_ts(ms: int) -> str:
    """ISO 8601 UTC with milliseconds and ``Z``, e.g. ``2026-11-01T12:00:00.000Z``."""
    # hot path (every rendered intent has three timestamps): two divmods, a cached
    # "YYYY-MM-DDTHH:MM:" prefix per minute and two table look-ups instead of datetime +
    # strftime (or int formatting) per call
    minute, rem = divmod(ms, 60_000)
    prefix = _MINUTE_CACHE.get(minute)
    if prefix is None:
        if len(_MINUTE_CACHE) > 200_000:
            _MINUTE_CACHE.clear()
        prefix = _MINUTE_CACHE[minute] = (_EPOCH + timedelta(minutes=minute)).strftime(
            "%Y-%m-%dT%H:%M:"
        )
    sec, milli = divmod(rem, 1000)
    return prefix + _SECONDS[sec] + _MILLIS[milli]


class Clock:
    """Controllable UTC clock with millisecond resolution.

    `follow_wall=True` makes it also move with real time from where it was set (handy when a
    person pokes a served sandbox by hand); otherwise it only moves by `set`/`advance`.
    """

    def __init__(self, start: datetime = DEFAULT_START, *, follow_wall: bool = False):
        self._lock = threading.Lock()
        self._base_ms = to_ms(start)
        self._follow_wall = follow_wall
        self._wall0 = time.monotonic()

    def now_ms(self) -> int:
        """Current emulator time in epoch milliseconds."""
        with self._lock:
            if self._follow_wall:
                return self._base_ms + int((time.monotonic() - self._wall0) * 1000)
            return self._base_ms

    def now(self) -> datetime:
        """Current emulator time as an aware UTC datetime."""
        return from_ms(self.now_ms())

    def set(self, dt: datetime) -> None:
        """Jump to `dt` (aware). Going backwards is allowed, for planted oddities."""
        ms = to_ms(dt)
        with self._lock:
            self._base_ms = ms
            self._wall0 = time.monotonic()

    def advance(self, delta: timedelta | float) -> None:
        """Move forward by a timedelta or a number of seconds (must not be negative)."""
        seconds = delta.total_seconds() if isinstance(delta, timedelta) else float(delta)
        if seconds < 0:
            raise ValueError("Clock.advance needs a non-negative duration; use set() to go back")
        now = self.now_ms()
        with self._lock:
            self._base_ms = now + round(seconds * 1000)
            self._wall0 = time.monotonic()
