"""Retry policy, Retry-After parsing, and the two pacing primitives shared by both clients.

* :class:`RetryPolicy`: full-jitter exponential backoff ("Exponential Backoff and Jitter",
  AWS architecture blog): attempt *n* sleeps ``uniform(0, min(max_delay, base * 2**(n-1)))``.
  A server's ``Retry-After`` is a floor, never shortened by jitter. An overall time budget
  bounds one call including all its retries.
* :class:`PauseGate`: when one request is told to back off (429), every request of the same
  client waits until that instant, so a burst does not keep hammering a throttled server.
* :class:`TokenBucket`: an optional requests-per-second cap.

Both primitives hand out *how long to wait* instead of sleeping themselves, so the sync
client sleeps with ``time.sleep`` and the async client with ``asyncio.sleep`` on the same
objects; a lock makes them safe to share between threads.
"""

from __future__ import annotations

import math
import random
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = ["PauseGate", "RetryPolicy", "TokenBucket", "parse_retry_after"]

Clock = Callable[[], float]


@dataclass(frozen=True)
class RetryPolicy:
    """How a client retries 429, 5xx and connection errors.

    ``max_attempts`` counts the first try (1 = never retry). ``budget`` is the wall-clock
    limit in seconds for one call including its retries: a retry whose wait would end past
    the budget is not made and the last error is raised instead.
    """

    max_attempts: int = 6
    base_delay: float = 0.2
    max_delay: float = 20.0
    budget: float = 120.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be >= 1")
        for name in ("base_delay", "max_delay", "budget"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """Full-jitter backoff before retry number ``attempt`` (1 = first retry)."""
        if attempt < 1:
            raise ValueError("attempt must be >= 1")
        # 2**attempt overflows float for huge attempts; the cap makes larger exponents moot.
        ceiling = min(self.max_delay, self.base_delay * 2.0 ** min(attempt - 1, 64))
        return (rng or random).uniform(0.0, ceiling)

    def delay(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry ``attempt``: the server's hint is a floor."""
        jittered = self.backoff(attempt, rng)
        return max(retry_after, jittered) if retry_after is not None else jittered


_DELTA_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*$")


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks us to wait, or None for no usable hint.

    Accepts delta-seconds (``"120"``, also ``"1.5"``) and an HTTP-date
    (``"Wed, 21 Oct 2015 07:28:00 GMT"``), measured from ``now`` (pass the response's
    ``Date`` so a skewed local clock does not matter; default: the local UTC clock).
    Zero, a date not in the future, negative numbers and garbage all mean "no hint".
    """
    if value is None:
        return None
    match = _DELTA_SECONDS.match(value)
    if match:
        seconds = float(match.group(1))
        return seconds if 0 < seconds < math.inf else None
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None:  # pragma: no cover - older Pythons returned None instead of raising
        return None
    if when.tzinfo is None:  # "-0000" dates are naive; HTTP-dates are GMT by definition
        when = when.replace(tzinfo=UTC)
    reference = now or datetime.now(UTC)
    seconds = (when - reference).total_seconds()
    return seconds if seconds > 0 else None


def parse_http_date(value: str | None) -> datetime | None:
    """An HTTP ``Date`` header as an aware UTC datetime, or None when absent/garbage."""
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.astimezone(UTC)


class PauseGate:
    """A shared "nobody sends before T" instant on a monotonic clock."""

    def __init__(self, clock: Clock = time.monotonic):
        self._clock = clock
        self._until = -math.inf
        self._lock = threading.Lock()

    def pause_for(self, seconds: float) -> None:
        """Hold every request for ``seconds`` from now (never shortens an existing pause)."""
        if seconds <= 0:
            return
        with self._lock:
            self._until = max(self._until, self._clock() + seconds)

    def remaining(self) -> float:
        """Seconds left before requests may go (0 when open)."""
        with self._lock:
            return max(0.0, self._until - self._clock())


class TokenBucket:
    """Rate limiter: ``rate`` tokens per second, at most ``burst`` saved up.

    :meth:`reserve` takes a token now and returns how long the caller must wait before using
    it; the balance may go negative, which is what queues concurrent callers fairly without
    holding a lock while they sleep.
    """

    def __init__(self, rate: float, burst: float = 1.0, clock: Clock = time.monotonic):
        if not (rate > 0 and math.isfinite(rate)):
            raise ValueError(f"rate must be a positive number, got {rate!r}")
        if burst < 1:
            raise ValueError("burst must be >= 1")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = burst
        self._last = clock()
        self._lock = threading.Lock()

    def reserve(self) -> float:
        """Take one token; return the seconds to wait before the request may be sent."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._last) * self.rate)
            self._last = now
            self._tokens -= 1.0
            return 0.0 if self._tokens >= 0 else -self._tokens / self.rate
