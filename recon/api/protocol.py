"""The sans-IO core of every HTTP caller in recon: requests as data, one retry loop, bounds.

Nothing here opens a socket or sleeps (the way h11 and httpx keep the protocol apart from
the I/O). A call is a generator that **yields commands** and is **sent outcomes**:

* it yields a :class:`Request` and is sent back a :class:`Received` (status, headers, the
  body's bytes, already read within :class:`Limits`) or a :class:`Failed` (a transport
  error: connection refused, read timeout, a body cut short);
* it yields a :class:`Sleep` and is sent ``None`` once that many seconds have passed.

:func:`run_blocking` and :func:`run_async` are the two shells: they carry the commands out
with a blocking or an asyncio ``httpx`` client, ``time.sleep`` or ``asyncio.sleep``, and
know nothing else. So the v2 client (``Client``/``AsyncClient``), the extractor's walk and
``recon statements pull`` share one retry policy (:meth:`Pacer.exchange`), one pause gate
per client and one set of bounds on what a server may send.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import httpx

from recon.api._retry import PauseGate, RetryPolicy, TokenBucket
from recon.errors import (
    ApiConnectionError,
    ApiError,
    ConfigError,
    RateLimited,
    ResponseLimitError,
    redact,
)

__all__ = [
    "Call",
    "Failed",
    "Limits",
    "Pacer",
    "Received",
    "Request",
    "Sleep",
    "Verdict",
    "run_async",
    "run_blocking",
    "send_async",
    "send_blocking",
]

log = logging.getLogger("recon.api")

T = TypeVar("T")
Clock = Callable[[], float]

MiB = 1 << 20


@dataclass(frozen=True)
class Limits:
    """Bounds on what a server may send; crossing one is an :class:`ApiError` (exit 3).

    The defaults are far above what a real API sends (a page of 100 intents is ~100 KB, and
    answers in well under a second) and only stop a server that is broken or hostile.

    * ``max_body_bytes``: bytes on the wire per response (``Content-Length`` is checked
      first, then the stream is counted as it arrives);
    * ``max_decoded_bytes``: bytes after ``Content-Encoding`` (a gzip bomb: 2 MB that
      expands to 2 GB stops here, a chunk at a time);
    * ``read_timeout``: seconds between two reads from the socket (None: the client's
      ``timeout``);
    * ``response_deadline``: seconds for one response, first byte to last (a server
      trickling a byte every 2 s is cut off here; the attempt counts as a timeout and is
      retried under the retry policy's budget).
    """

    max_body_bytes: int = 64 * MiB
    max_decoded_bytes: int = 64 * MiB
    read_timeout: float | None = None
    response_deadline: float = 120.0

    def __post_init__(self) -> None:
        for name in ("max_body_bytes", "max_decoded_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1")
        for name in ("read_timeout", "response_deadline"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number, got {value!r}")


@dataclass(frozen=True)
class Request:
    """One HTTP request as data. ``what`` names it in messages ("GET /v2/intents"): never
    headers, never a secret."""

    method: str
    url: str
    what: str
    params: Mapping[str, str | int] | None = None
    json: Any = None
    form: Mapping[str, str] | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: tuple[str, str] | None = None


@dataclass(frozen=True)
class Sleep:
    """Wait this many seconds, then resume the call with ``None``."""

    seconds: float


class Received(NamedTuple):
    """A complete response: status, headers (case-insensitive), the decoded body's bytes."""

    status: int
    headers: Mapping[str, str]
    content: bytes


class Failed(NamedTuple):
    """The request got no complete response (a transport error: may be retried)."""

    error: Exception


Outcome = Received | Failed
Command = Request | Sleep
Call = Generator[Command, Any, T]


class Verdict(NamedTuple):
    """How one attempt went: ``error`` None is success; else whether to retry, and the
    server's ``Retry-After`` hint (seconds) if any."""

    error: ApiError | None
    retryable: bool = False
    retry_after: float | None = None


class Pacer:
    """One client's retry policy, shared pause gate, token bucket and counters.

    :meth:`exchange` is the one retry loop of recon: full-jitter backoff, ``Retry-After``
    as a floor, the policy's overall budget, and a 429 that pauses every request of this
    pacer (threads or tasks) until the server's instant.
    """

    def __init__(
        self,
        policy: RetryPolicy | None = None,
        *,
        clock: Clock | None = None,
        rng: random.Random | None = None,
        max_rps: float | None = None,
        secrets: tuple[str | None, ...] = (),
    ):
        self.policy = policy or RetryPolicy()
        self.clock = clock or time.monotonic
        self.rng = rng or random.Random()
        self.gate = PauseGate(self.clock)
        self.bucket = TokenBucket(max_rps, clock=self.clock) if max_rps else None
        self.secrets = secrets
        self._lock = threading.Lock()
        self.counts = {"requests": 0, "retries": 0, "rate_limited": 0, "server_errors": 0}

    def count(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1

    def redact(self, text: str) -> str:
        return redact(text, *self.secrets)

    def exchange(
        self,
        request: Request,
        classify: Callable[[Request, Outcome], Verdict],
        give_up: Callable[[ApiError, int], ApiError] | None = None,
    ) -> Call[Received]:
        """Send ``request`` until ``classify`` accepts an outcome; retry what it says may be
        retried, within the policy. Returns the accepted response; raises the last error
        (``give_up(error, attempts)`` may reword it)."""
        deadline = self.clock() + self.policy.budget
        attempt = 0
        while True:
            attempt += 1
            wait = self.gate.remaining()
            if self.bucket is not None:
                wait = max(wait, self.bucket.reserve())
            if wait > 0:
                yield Sleep(wait)
            # Re-check after sleeping: another worker may have extended the pause meanwhile.
            while (gate := self.gate.remaining()) > 0:
                yield Sleep(gate)
            outcome = yield request
            self.count("requests")
            verdict = classify(request, outcome)
            if verdict.error is None:
                assert isinstance(outcome, Received)
                return outcome
            delay = self._plan(request, verdict, attempt, deadline)
            if delay is None:
                error = give_up(verdict.error, attempt) if give_up else verdict.error
                raise error from (outcome.error if isinstance(outcome, Failed) else None)
            yield Sleep(delay)

    def _plan(
        self, request: Request, verdict: Verdict, attempt: int, deadline: float
    ) -> float | None:
        """Seconds to wait before the next attempt, or None to give up."""
        error = verdict.error
        delay = max(
            self.policy.delay(attempt, verdict.retry_after, self.rng), self.gate.remaining()
        )
        if isinstance(error, RateLimited):
            # Everyone on this pacer holds off until the server's instant, not just us,
            # even when this call itself gives up now.
            self.gate.pause_for(delay)
        if not verdict.retryable or attempt >= self.policy.max_attempts:
            return None
        if self.clock() + delay > deadline:
            log.warning(
                "%s: giving up after %d attempt(s): next wait %.2fs exceeds the %.0fs budget",
                request.what,
                attempt,
                delay,
                self.policy.budget,
            )
            return None
        self.count("retries")
        log.warning(
            "%s failed (%s); retry %d/%d in %.2fs",
            request.what,
            self.redact(str(error)),
            attempt,
            self.policy.max_attempts - 1,
            delay,
        )
        return delay

    def connection_error(self, request: Request, exc: Exception) -> ApiConnectionError:
        """A transport failure as the error the caller sees (secrets removed)."""
        return ApiConnectionError(f"{request.what}: {self.redact(f'{type(exc).__name__}: {exc}')}")


# ------------------------------------------------------------------------------ bodies


class BodyReader:
    """Collects a response body within :class:`Limits` (sans-IO: the shells feed it)."""

    def __init__(self, limits: Limits, what: str, clock: Clock):
        self.limits = limits
        self.what = what
        self.clock = clock
        self.started = clock()
        self.chunks: list[bytes] = []
        self.size = 0

    def start(self, headers: Mapping[str, str]) -> None:
        """Refuse a declared ``Content-Length`` over the bound before reading anything."""
        declared = headers.get("content-length")
        size = int(declared) if declared is not None and declared.strip().isdigit() else 0
        if size > self.limits.max_body_bytes:
            raise self._too_large(f"declares {size:,} bytes", "max_body_bytes")

    def feed(self, chunk: bytes, wire_bytes: int) -> None:
        """One decoded chunk, and the bytes read from the wire so far."""
        self.size += len(chunk)
        if wire_bytes > self.limits.max_body_bytes:
            raise self._too_large(f"sent more than {wire_bytes:,} bytes", "max_body_bytes")
        if self.size > self.limits.max_decoded_bytes:
            raise self._too_large(f"decodes to more than {self.size:,} bytes", "max_decoded_bytes")
        if self.clock() - self.started > self.limits.response_deadline:
            # Like a read timeout: a transport failure, retried within the budget.
            raise httpx.ReadTimeout(
                f"response not complete after {self.limits.response_deadline:g}s "
                "(limits.response_deadline)"
            )
        self.chunks.append(chunk)

    def received(self, status: int, headers: Mapping[str, str]) -> Received:
        content = b"".join(self.chunks)
        self.chunks = []
        return Received(status, headers, content)

    def _too_large(self, detail: str, bound: str) -> ResponseLimitError:
        limit = getattr(self.limits, bound)
        return ResponseLimitError(
            f"{self.what}: the response {detail}, over the bound of {limit:,} ({bound})"
        )


# ------------------------------------------------------------------------------ shells


def _stream_args(request: Request) -> dict[str, Any]:
    return {
        "method": request.method,
        "url": request.url,
        "params": request.params,
        "json": request.json,
        "data": request.form,
        "headers": request.headers,
        "auth": request.auth,
    }


def _failure(exc: httpx.HTTPError, request: Request, pacer: Pacer) -> Failed:
    """A transport error as an outcome to retry; other httpx errors are raised now."""
    if isinstance(exc, httpx.UnsupportedProtocol):
        raise ConfigError(pacer.redact(f"bad API base URL: {exc}")) from exc
    if isinstance(exc, httpx.TransportError):
        return Failed(exc)
    raise ApiError(pacer.redact(f"{request.what}: {exc}")) from exc


def send_blocking(http: httpx.Client, request: Request, limits: Limits, pacer: Pacer) -> Outcome:
    """Send one request with a blocking client; read its body within ``limits``."""
    body = BodyReader(limits, request.what, pacer.clock)
    stream: AbstractContextManager[httpx.Response] = http.stream(**_stream_args(request))
    try:
        with stream as response:
            body.start(response.headers)
            chunks: Iterator[bytes] = response.iter_bytes()
            for chunk in chunks:
                body.feed(chunk, response.num_bytes_downloaded)
            return body.received(response.status_code, response.headers)
    except httpx.HTTPError as exc:
        return _failure(exc, request, pacer)


async def send_async(
    http: httpx.AsyncClient, request: Request, limits: Limits, pacer: Pacer
) -> Outcome:
    """Send one request with an asyncio client; read its body within ``limits``."""
    body = BodyReader(limits, request.what, pacer.clock)
    stream: AbstractAsyncContextManager[httpx.Response] = http.stream(**_stream_args(request))
    try:
        # The deadline also covers headers that trickle in (no chunk to check it on yet).
        async with asyncio.timeout(limits.response_deadline), stream as response:
            body.start(response.headers)
            chunks: AsyncIterator[bytes] = response.aiter_bytes()
            async for chunk in chunks:
                body.feed(chunk, response.num_bytes_downloaded)
            return body.received(response.status_code, response.headers)
    except httpx.HTTPError as exc:
        return _failure(exc, request, pacer)
    except TimeoutError:
        return Failed(
            httpx.ReadTimeout(
                f"no complete response in {limits.response_deadline:g}s (response_deadline)"
            )
        )


def run_blocking(
    call: Call[T], send: Callable[[Request], Outcome], sleep: Callable[[float], None]
) -> T:
    """Carry out a call's commands with blocking I/O; return what the call returns."""
    command = next(call)
    while True:
        outcome: Outcome | None = None
        if isinstance(command, Sleep):
            sleep(command.seconds)
        else:
            outcome = send(command)
        try:
            command = call.send(outcome)
        except StopIteration as stop:
            return stop.value


async def run_async(
    call: Call[T],
    send: Callable[[Request], Awaitable[Outcome]],
    sleep: Callable[[float], Awaitable[None]],
) -> T:
    """Carry out a call's commands with asyncio; return what the call returns."""
    command = next(call)
    while True:
        outcome: Outcome | None = None
        if isinstance(command, Sleep):
            await sleep(command.seconds)
        else:
            outcome = await send(command)
        try:
            command = call.send(outcome)
        except StopIteration as stop:
            return stop.value
