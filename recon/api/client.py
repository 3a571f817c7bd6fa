"""Typed clients of the v2 Intents and Parties API: :class:`Client` (sync) and :class:`AsyncClient`.

Both share one core (:class:`_Core`): building requests, mapping error responses of either
shape onto :mod:`recon.errors`, redacting the API key, and the retry decisions. Only the
I/O loop differs (``time.sleep`` vs ``asyncio.sleep``).

Retries: 429, 5xx (except 501) and connection errors are retried under a
:class:`~recon.api._retry.RetryPolicy`; other 4xx never are. A ``Retry-After`` header is a
floor for the wait. A 429 also closes the client's shared pause gate, so concurrent requests
of the same client wait too. Creates of intents send one ``idempotency-key`` (generated once
per call unless given) on every attempt, so a retried create cannot create twice.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple
from urllib.parse import quote

import httpx
import orjson

from recon.api._retry import PauseGate, RetryPolicy, TokenBucket, parse_http_date
from recon.api._retry import parse_retry_after as _parse_retry_after
from recon.api.models import Intent, IntentPage, Party, ResponseShapeError
from recon.errors import (
    ApiConnectionError,
    ApiError,
    ApiStatusError,
    ConfigError,
    Conflict,
    NotFound,
    RateLimited,
    ServerError,
    Unauthorized,
    UsageError,
    ValidationError,
    redact,
)

__all__ = ["AsyncClient", "Client", "ClientStats", "RawPage"]

log = logging.getLogger("recon.api")

USER_AGENT = "recon-client/0.1"
# Used only when a transport is given and no base URL: in-process transports ignore the host.
_IN_PROCESS_BASE_URL = "http://sandbox.invalid"
_MAX_MESSAGE_CHARS = 300


@dataclass(frozen=True)
class ClientStats:
    """Counters of one client since it was made (a snapshot; the client keeps counting)."""

    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    server_errors: int = 0


class RawPage(NamedTuple):
    """A list page as received: the parsed JSON body and the response's ``Date`` header.

    ``date`` is the server's clock (the emulator's simulated clock in the sandbox); the
    extractor uses it as the snapshot time. ``server_time`` is the same as a UTC datetime.
    """

    body: dict[str, Any]
    date: str | None

    @property
    def server_time(self) -> datetime | None:
        """The ``Date`` header as an aware UTC datetime (None when absent or unparsable)."""
        return parse_http_date(self.date)


class _Secret:
    """Holds the API key so that no repr, vars() dump or debugger view shows it."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.value = value

    def __repr__(self) -> str:
        return "'***'" if self.value else "''"

    __str__ = __repr__


@dataclass(frozen=True)
class _Request:
    method: str
    path: str
    params: Mapping[str, str | int] | None = None
    json: Any = None
    idempotency_key: str | None = None


def _redact_json(value: Any, secret: str | None) -> Any:
    """Copy of a JSON value with the secret removed from every string (keys included)."""
    if not secret:
        return value
    if isinstance(value, str):
        return redact(value, secret)
    if isinstance(value, list):
        return [_redact_json(v, secret) for v in value]
    if isinstance(value, dict):
        return {redact(str(k), secret): _redact_json(v, secret) for k, v in value.items()}
    return value


def _is_retryable_status(status: int) -> bool:
    return status == 429 or (status >= 500 and status != 501)


# 400/422 (validation errors) and 429 (retry hint) need extra arguments: built in `_error`.
_STATUS_ERRORS: dict[int, type[ApiStatusError]] = {
    401: Unauthorized,
    404: NotFound,
    409: Conflict,
}


class _Core:
    """Everything the sync and async clients share except the I/O loop."""

    _http_owned: bool

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        *,
        has_transport: bool,
        client_base_url: str | None,
        retry: RetryPolicy | None,
        max_rps: float | None,
        clock: Callable[[], float] | None,
        rng: random.Random | None,
    ):
        url = base_url or os.environ.get("RECON_BASE_URL") or client_base_url
        if not url and has_transport:
            url = _IN_PROCESS_BASE_URL
        if not url:
            raise ConfigError("no API base URL: pass base_url= or set RECON_BASE_URL")
        key = api_key if api_key is not None else os.environ.get("RECON_API_KEY")
        if key is None:
            raise ConfigError("no API key: pass api_key= or set RECON_API_KEY")
        self.base_url = url.rstrip("/")
        self._key = _Secret(key)
        self.retry = retry or RetryPolicy()
        self._clock = clock or time.monotonic
        self._rng = rng or random.Random()
        self._gate = PauseGate(self._clock)
        self._bucket = TokenBucket(max_rps, clock=self._clock) if max_rps else None
        self._stats_lock = threading.Lock()
        self._counts = {"requests": 0, "retries": 0, "rate_limited": 0, "server_errors": 0}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key={self._key!r})"

    @property
    def stats(self) -> ClientStats:
        """Request counters: requests sent, retries made, 429s and 5xx seen."""
        with self._stats_lock:
            return ClientStats(**self._counts)

    def _count(self, name: str) -> None:
        with self._stats_lock:
            self._counts[name] += 1

    # ------------------------------------------------------------------ requests

    def _headers(self, request: _Request) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self._key.value:  # an explicit empty key sends no header (to test the 401 path)
            headers["X-API-Key"] = self._key.value
        if request.idempotency_key is not None:
            headers["idempotency-key"] = request.idempotency_key
        return headers

    def _url(self, path: str) -> str:
        return self.base_url + path

    def _describe(self, request: _Request) -> str:
        return self._redact(f"{request.method} {request.path}")

    def _redact(self, text: str) -> str:
        return redact(text, self._key.value)

    @staticmethod
    def _path_id(value: str) -> str:
        # Quote ids so that a caller-supplied "../x" cannot address another endpoint.
        return quote(str(value), safe="")

    def _party_create(
        self,
        cpf: str,
        display_name: str,
        party_type: str,
        country_code: str,
        external_ref: str | None,
        email: str | None,
        phone: str | None,
    ) -> _Request:
        body: dict[str, Any] = {
            "cpf": cpf,
            "displayName": display_name,
            "partyType": str(party_type),
            "countryCode": country_code,
        }
        optional = {"externalRef": external_ref, "email": email, "phone": phone}
        body.update({k: v for k, v in optional.items() if v is not None})
        return _Request("POST", "/v2/parties", json=body)

    def _intent_create(
        self,
        kind: str,
        amount_cents: int,
        destination_field: str,
        destination: str,
        chain_id: str,
        client_reference: str | None,
        idempotency_key: str | None,
    ) -> _Request:
        body: dict[str, Any] = {
            "amountCents": amount_cents,
            destination_field: destination,
            "chainId": chain_id,
        }
        if client_reference is not None:
            body["clientReference"] = client_reference
        # One key per user intent: generated here, once, and reused by every retry.
        key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
        return _Request("POST", f"/v2/intents/{kind}", json=body, idempotency_key=key)

    @staticmethod
    def _list_params(intent_type: str, status: str, limit: int, offset: int) -> dict[str, Any]:
        return {
            "intentType": str(intent_type),
            "status": str(status),
            "limit": limit,
            "offset": offset,
        }

    def _approve(self, intent_id: str, tx_signature: str, token_holder: str) -> _Request:
        return _Request(
            "POST",
            f"/v2/intents/{self._path_id(intent_id)}/approve-burn",
            json={"txSignature": tx_signature, "tokenHolder": token_holder},
        )

    # ------------------------------------------------------------------ responses

    def _json(self, response: httpx.Response, request: _Request) -> Any:
        try:
            return response.json()
        except ValueError:
            raise ResponseShapeError(
                f"{self._describe(request)} returned {response.status_code} with a body "
                "that is not JSON"
            ) from None

    def _json_fast(self, response: httpx.Response, request: _Request) -> Any:
        """`_json` through orjson (list bodies: the hot path of a walk); anything orjson
        refuses (non-UTF-8, NaN, integers beyond 64 bits) goes to the stdlib path."""
        try:
            return orjson.loads(response.content)
        except orjson.JSONDecodeError:
            return self._json(response, request)

    def _error(self, response: httpx.Response, request: _Request) -> ApiStatusError:
        """Map an error response of either shape onto the recon.errors tree (redacted)."""
        status = response.status_code
        try:
            body: Any = response.json()
        except ValueError:
            body = None
        body = _redact_json(body, self._key.value)
        code: str | None = None
        message: str | None = None
        validation_errors: list[dict[str, str]] = []
        details: dict[str, Any] = {}
        if isinstance(body, dict):
            # intents shape: code/message/validationErrors/details; parties: error/code.
            # An empty message is no message: fall back to the other shape, then the reason.
            for key in ("message", "error"):
                if isinstance(body.get(key), str) and body[key].strip():
                    message = body[key]
                    break
            if isinstance(body.get("code"), str):
                code = body["code"]
            raw_errors = body.get("validationErrors")
            if isinstance(raw_errors, list):
                validation_errors = [
                    {"field": str(e.get("field", "")), "message": str(e.get("message", ""))}
                    for e in raw_errors
                    if isinstance(e, dict)
                ]
            if isinstance(body.get("details"), dict):
                details = body["details"]
        if message is None:
            text = self._redact(response.text.strip())[:_MAX_MESSAGE_CHARS]
            message = text or response.reason_phrase or "error"
        named = [e for e in validation_errors if e["field"] and e["field"] not in message]
        if named:
            message += " [" + "; ".join(f"{e['field']}: {e['message']}" for e in named) + "]"
        kw: dict[str, Any] = {
            "status_code": status,
            "code": code,
            "request": self._describe(request),
            "body": body,
            "details": details,
        }
        if status in (400, 422):
            return ValidationError(message, validation_errors=validation_errors, **kw)
        if status == 429:
            return RateLimited(message, retry_after=self._retry_after(response), **kw)
        if status >= 500:
            return ServerError(message, **kw)
        return _STATUS_ERRORS.get(status, ApiStatusError)(message, **kw)

    @staticmethod
    def _retry_after(response: httpx.Response) -> float | None:
        # An HTTP-date is measured from the server's own Date, so clock skew (or the
        # emulator's simulated clock) does not distort the wait.
        return _parse_retry_after(
            response.headers.get("retry-after"), parse_http_date(response.headers.get("date"))
        )

    # ------------------------------------------------------------------ retry decisions

    def _outcome(
        self, request: _Request, response: httpx.Response | None, exc: Exception | None
    ) -> tuple[ApiError | None, float | None]:
        """Classify one attempt: (error or None for success, Retry-After hint)."""
        if exc is not None:
            return self._connection_error(request, exc), None
        assert response is not None
        self._count("requests")
        status = response.status_code
        if 200 <= status < 300:
            log.debug("%s -> %d", self._describe(request), status)
            return None, None
        if status == 429:
            self._count("rate_limited")
        elif status >= 500:
            self._count("server_errors")
        error = self._error(response, request)
        hint = self._retry_after(response) if _is_retryable_status(status) else None
        return error, hint

    def _connection_error(self, request: _Request, exc: Exception) -> ApiError:
        self._count("requests")
        detail = self._redact(f"{type(exc).__name__}: {exc}")
        return ApiConnectionError(f"{self._describe(request)}: {detail}")

    def _plan_retry(
        self, request: _Request, error: ApiError, hint: float | None, attempt: int, deadline: float
    ) -> float | None:
        """Seconds to wait before the next attempt, or None to give up and raise ``error``."""
        retryable = isinstance(error, ApiConnectionError) or (
            isinstance(error, ApiStatusError) and _is_retryable_status(error.status_code)
        )
        delay = max(self.retry.delay(attempt, hint, self._rng), self._gate.remaining())
        if isinstance(error, RateLimited):
            # Everyone on this client holds off until the server's instant, not just us,
            # even when this call itself gives up now.
            self._gate.pause_for(delay)
        if not retryable or attempt >= self.retry.max_attempts:
            return None
        if self._clock() + delay > deadline:
            log.warning(
                "%s: giving up after %d attempt(s): next wait %.2fs exceeds the %.0fs budget",
                self._describe(request),
                attempt,
                delay,
                self.retry.budget,
            )
            return None
        self._count("retries")
        log.warning(
            "%s failed (%s); retry %d/%d in %.2fs",
            self._describe(request),
            self._redact(str(error)),
            attempt,
            self.retry.max_attempts - 1,
            delay,
        )
        return delay

    def _pre_send_wait(self) -> float:
        wait = self._gate.remaining()
        if self._bucket is not None:
            wait = max(wait, self._bucket.reserve())
        return wait

    @staticmethod
    def _check_retry_conflict(error: ApiError, request: _Request, attempt: int) -> ApiError:
        # A party create has no idempotency key: if an earlier attempt got through before
        # the connection failed, the retry sees 409. Say so rather than mislead.
        if isinstance(error, Conflict) and attempt > 1 and request.idempotency_key is None:
            error.args = (
                f"{error.args[0]} (after a retry: an earlier attempt may have succeeded)",
            )
        return error


def _transport_base_url(client: httpx.Client | httpx.AsyncClient | None) -> str | None:
    if client is None:
        return None
    return str(client.base_url) or None


class Client(_Core):
    """Synchronous client of the v2 API.

    ``base_url`` defaults to ``$RECON_BASE_URL`` and ``api_key`` to ``$RECON_API_KEY``.
    Pass ``transport=`` (e.g. ``httpx.MockTransport`` or the sandbox's
    ``EmulatorTransport``) or a ready ``client=`` for tests. ``clock``/``sleep``/``rng`` are
    seams for deterministic tests of the retry timing.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        client: httpx.Client | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        max_rps: float | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], None] | None = None,
        rng: random.Random | None = None,
    ):
        if transport is not None and client is not None:
            raise UsageError("pass transport= or client=, not both")
        super().__init__(
            base_url,
            api_key,
            has_transport=transport is not None,
            client_base_url=_transport_base_url(client),
            retry=retry,
            max_rps=max_rps,
            clock=clock,
            rng=rng,
        )
        self._sleep = sleep or time.sleep
        self._http_owned = client is None
        self._http = client or httpx.Client(transport=transport, timeout=timeout)

    def close(self) -> None:
        """Close the underlying connection pool (only if this client created it)."""
        if self._http_owned:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ I/O loop

    def _send(self, request: _Request) -> httpx.Response:
        deadline = self._clock() + self.retry.budget
        attempt = 0
        while True:
            attempt += 1
            wait = self._pre_send_wait()
            if wait > 0:
                self._sleep(wait)
            # Re-check after sleeping: another thread may have extended the pause meanwhile.
            while (gate := self._gate.remaining()) > 0:
                self._sleep(gate)
            response: httpx.Response | None = None
            cause: Exception | None = None
            try:
                response = self._http.request(
                    request.method,
                    self._url(request.path),
                    params=request.params,
                    json=request.json,
                    headers=self._headers(request),
                )
            except httpx.UnsupportedProtocol as exc:
                raise ConfigError(self._redact(f"bad API base URL: {exc}")) from exc
            except httpx.TransportError as exc:
                cause = exc
            except httpx.HTTPError as exc:
                raise ApiError(self._redact(f"{self._describe(request)}: {exc}")) from exc
            error, hint = self._outcome(request, response, cause)
            if error is None:
                assert response is not None
                return response
            delay = self._plan_retry(request, error, hint, attempt, deadline)
            if delay is None:
                raise self._check_retry_conflict(error, request, attempt) from cause
            self._sleep(delay)

    def _call(self, request: _Request) -> Any:
        return self._json(self._send(request), request)

    # ------------------------------------------------------------------ parties

    def create_party(
        self,
        *,
        cpf: str,
        display_name: str,
        party_type: str = "person",
        country_code: str = "BR",
        external_ref: str | None = None,
        email: str | None = None,
        phone: str | None = None,
    ) -> Party:
        """``POST /v2/parties``: create a party (201). 409 → Conflict if it exists."""
        request = self._party_create(
            cpf, display_name, party_type, country_code, external_ref, email, phone
        )
        return Party.from_api(self._call(request))

    def get_party(self, party_id: str) -> Party:
        """``GET /v2/parties/{id}``; NotFound outside the key's organization/instance."""
        return Party.from_api(self._call(_Request("GET", f"/v2/parties/{self._path_id(party_id)}")))

    def bind_wallet(self, party_id: str, solana_wallet: str) -> Party:
        """``PATCH /v2/parties/{id}/wallet``: bind or replace the party's Solana wallet."""
        request = _Request(
            "PATCH",
            f"/v2/parties/{self._path_id(party_id)}/wallet",
            json={"solanaWallet": solana_wallet},
        )
        return Party.from_api(self._call(request))

    # ------------------------------------------------------------------ intents

    def create_onramp(
        self,
        *,
        amount_cents: int,
        destination_wallet: str,
        chain_id: str = "solana",
        client_reference: str | None = None,
        idempotency_key: str | None = None,
    ) -> Intent:
        """``POST /v2/intents/onramp``; one idempotency key (generated if None) for all tries."""
        request = self._intent_create(
            "onramp",
            amount_cents,
            "destinationWallet",
            destination_wallet,
            chain_id,
            client_reference,
            idempotency_key,
        )
        return Intent.from_api(self._call(request))

    def create_offramp(
        self,
        *,
        amount_cents: int,
        destination_address: str,
        chain_id: str = "solana",
        client_reference: str | None = None,
        idempotency_key: str | None = None,
    ) -> Intent:
        """``POST /v2/intents/offramp``; one idempotency key (generated if None) for all tries."""
        request = self._intent_create(
            "offramp",
            amount_cents,
            "destinationAddress",
            destination_address,
            chain_id,
            client_reference,
            idempotency_key,
        )
        return Intent.from_api(self._call(request))

    def get_intent(self, intent_id: str) -> Intent:
        """``GET /v2/intents/{id}``; NotFound outside the key's organization/instance."""
        path = f"/v2/intents/{self._path_id(intent_id)}"
        return Intent.from_api(self._call(_Request("GET", path)))

    def list_intents(
        self, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
    ) -> IntentPage:
        """``GET /v2/intents``: one page, newest first (in the sandbox)."""
        return IntentPage.from_api(
            self.list_intents_raw(
                intent_type=intent_type, status=status, limit=limit, offset=offset
            ).body
        )

    def list_intents_raw(
        self, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
    ) -> RawPage:
        """One list page as received (JSON body, unparsed items) plus the server's Date."""
        request = _Request(
            "GET", "/v2/intents", params=self._list_params(intent_type, status, limit, offset)
        )
        response = self._send(request)
        return RawPage(_page_body(self._json_fast(response, request)), response.headers.get("date"))

    def iter_intents(
        self, *, intent_type: str = "all", status: str = "all", page_size: int = 100
    ) -> Iterator[Intent]:
        """Every intent matching the filters, page by page.

        Offset pages can shift while we walk them (new intents at the head push items onto
        the next page); ids already yielded are skipped. For a consistent snapshot use
        ``recon.extract``, which checks the walk.
        """
        offset = 0
        seen: set[str] = set()
        while True:
            page = self.list_intents(
                intent_type=intent_type, status=status, limit=page_size, offset=offset
            )
            for intent in page.intents:
                if intent.id not in seen:
                    seen.add(intent.id)
                    yield intent
            if page.next_offset is None:
                return
            offset = page.next_offset

    def approve_burn(self, intent_id: str, *, tx_signature: str, token_holder: str) -> str:
        """``POST /v2/intents/{id}/approve-burn``; returns the new status ("burn_approved")."""
        request = self._approve(intent_id, tx_signature, token_holder)
        return _approve_status(self._call(request))


class AsyncClient(_Core):
    """Asynchronous twin of :class:`Client`: the same methods, awaited.

    All concurrent requests of one AsyncClient share one pause gate (a 429 holds them all
    until its Retry-After instant) and one token bucket (``max_rps``).
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        client: httpx.AsyncClient | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        max_rps: float | None = None,
        clock: Callable[[], float] | None = None,
        sleep: Callable[[float], Awaitable[None]] | None = None,
        rng: random.Random | None = None,
    ):
        if transport is not None and client is not None:
            raise UsageError("pass transport= or client=, not both")
        super().__init__(
            base_url,
            api_key,
            has_transport=transport is not None,
            client_base_url=_transport_base_url(client),
            retry=retry,
            max_rps=max_rps,
            clock=clock,
            rng=rng,
        )
        self._sleep = sleep or asyncio.sleep
        self._http_owned = client is None
        self._http = client or httpx.AsyncClient(transport=transport, timeout=timeout)

    async def aclose(self) -> None:
        """Close the underlying connection pool (only if this client created it)."""
        if self._http_owned:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _send(self, request: _Request) -> httpx.Response:
        deadline = self._clock() + self.retry.budget
        attempt = 0
        while True:
            attempt += 1
            wait = self._pre_send_wait()
            if wait > 0:
                await self._sleep(wait)
            # Re-check after sleeping: another task may have extended the pause meanwhile.
            while (gate := self._gate.remaining()) > 0:
                await self._sleep(gate)
            response: httpx.Response | None = None
            cause: Exception | None = None
            try:
                response = await self._http.request(
                    request.method,
                    self._url(request.path),
                    params=request.params,
                    json=request.json,
                    headers=self._headers(request),
                )
            except httpx.UnsupportedProtocol as exc:
                raise ConfigError(self._redact(f"bad API base URL: {exc}")) from exc
            except httpx.TransportError as exc:
                cause = exc
            except httpx.HTTPError as exc:
                raise ApiError(self._redact(f"{self._describe(request)}: {exc}")) from exc
            error, hint = self._outcome(request, response, cause)
            if error is None:
                assert response is not None
                return response
            delay = self._plan_retry(request, error, hint, attempt, deadline)
            if delay is None:
                raise self._check_retry_conflict(error, request, attempt) from cause
            await self._sleep(delay)

    async def _call(self, request: _Request) -> Any:
        return self._json(await self._send(request), request)

    async def create_party(
        self,
        *,
        cpf: str,
        display_name: str,
        party_type: str = "person",
        country_code: str = "BR",
        external_ref: str | None = None,
        email: str | None = None,
        phone: str | None = None,
    ) -> Party:
        """``POST /v2/parties``: create a party (201). 409 → Conflict if it exists."""
        request = self._party_create(
            cpf, display_name, party_type, country_code, external_ref, email, phone
        )
        return Party.from_api(await self._call(request))

    async def get_party(self, party_id: str) -> Party:
        """``GET /v2/parties/{id}``; NotFound outside the key's organization/instance."""
        path = f"/v2/parties/{self._path_id(party_id)}"
        return Party.from_api(await self._call(_Request("GET", path)))

    async def bind_wallet(self, party_id: str, solana_wallet: str) -> Party:
        """``PATCH /v2/parties/{id}/wallet``: bind or replace the party's Solana wallet."""
        request = _Request(
            "PATCH",
            f"/v2/parties/{self._path_id(party_id)}/wallet",
            json={"solanaWallet": solana_wallet},
        )
        return Party.from_api(await self._call(request))

    async def create_onramp(
        self,
        *,
        amount_cents: int,
        destination_wallet: str,
        chain_id: str = "solana",
        client_reference: str | None = None,
        idempotency_key: str | None = None,
    ) -> Intent:
        """``POST /v2/intents/onramp``; one idempotency key (generated if None) for all tries."""
        request = self._intent_create(
            "onramp",
            amount_cents,
            "destinationWallet",
            destination_wallet,
            chain_id,
            client_reference,
            idempotency_key,
        )
        return Intent.from_api(await self._call(request))

    async def create_offramp(
        self,
        *,
        amount_cents: int,
        destination_address: str,
        chain_id: str = "solana",
        client_reference: str | None = None,
        idempotency_key: str | None = None,
    ) -> Intent:
        """``POST /v2/intents/offramp``; one idempotency key (generated if None) for all tries."""
        request = self._intent_create(
            "offramp",
            amount_cents,
            "destinationAddress",
            destination_address,
            chain_id,
            client_reference,
            idempotency_key,
        )
        return Intent.from_api(await self._call(request))

    async def get_intent(self, intent_id: str) -> Intent:
        """``GET /v2/intents/{id}``; NotFound outside the key's organization/instance."""
        path = f"/v2/intents/{self._path_id(intent_id)}"
        return Intent.from_api(await self._call(_Request("GET", path)))

    async def list_intents(
        self, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
    ) -> IntentPage:
        """``GET /v2/intents``: one page, newest first (in the sandbox)."""
        raw = await self.list_intents_raw(
            intent_type=intent_type, status=status, limit=limit, offset=offset
        )
        return IntentPage.from_api(raw.body)

    async def list_intents_raw(
        self, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
    ) -> RawPage:
        """One list page as received (JSON body, unparsed items) plus the server's Date."""
        request = _Request(
            "GET", "/v2/intents", params=self._list_params(intent_type, status, limit, offset)
        )
        response = await self._send(request)
        return RawPage(_page_body(self._json_fast(response, request)), response.headers.get("date"))

    async def iter_intents(
        self, *, intent_type: str = "all", status: str = "all", page_size: int = 100
    ) -> AsyncIterator[Intent]:
        """Every intent matching the filters (``async for``); see :meth:`Client.iter_intents`."""
        offset = 0
        seen: set[str] = set()
        while True:
            page = await self.list_intents(
                intent_type=intent_type, status=status, limit=page_size, offset=offset
            )
            for intent in page.intents:
                if intent.id not in seen:
                    seen.add(intent.id)
                    yield intent
            if page.next_offset is None:
                return
            offset = page.next_offset

    async def approve_burn(self, intent_id: str, *, tx_signature: str, token_holder: str) -> str:
        """``POST /v2/intents/{id}/approve-burn``; returns the new status ("burn_approved")."""
        request = self._approve(intent_id, tx_signature, token_holder)
        return _approve_status(await self._call(request))


def _page_body(body: Any) -> dict[str, Any]:
    """Check a list body's envelope (items are left for the caller to parse)."""
    if not isinstance(body, dict):
        raise ResponseShapeError(f"expected an object, got {type(body).__name__}", field="page")
    if not isinstance(body.get("intents"), list):
        raise ResponseShapeError("required array is missing", field="intents")
    for key in ("total", "limit", "offset"):
        value = body.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ResponseShapeError("required integer is missing", field=key)
    return body


def _approve_status(body: Any) -> str:
    if not isinstance(body, dict) or not isinstance(body.get("status"), str):
        raise ResponseShapeError("expected {'status': <string>}", field="status")
    return str(body["status"])
