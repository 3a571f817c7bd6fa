"""Typed clients of the v2 Intents and Parties API: :class:`Client` (sync) and :class:`AsyncClient`.

Every endpoint is written **once**, as a sans-IO operation (a generator over
:mod:`recon.api.protocol` commands: build the request, let the one retry loop run, parse the
body). :class:`Client` and :class:`AsyncClient` are thin shells that carry those commands out
with a blocking or an asyncio ``httpx`` client; their methods are the same operations.

Retries: 429, 5xx (except 501) and connection errors are retried under a
:class:`~recon.api._retry.RetryPolicy`; other 4xx never are. A ``Retry-After`` header is a
floor for the wait. A 429 also closes the client's shared pause gate, so concurrent requests
of the same client wait too. Creates of intents send one ``idempotency-key`` (generated once
per call unless given) on every attempt, so a retried create cannot create twice. Bodies are
read within :class:`~recon.api.protocol.Limits`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import random
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Concatenate, Generic, NamedTuple, ParamSpec, TypeVar
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import httpx

from recon.api._retry import RetryPolicy, parse_http_date
from recon.api._retry import parse_retry_after as _parse_retry_after
from recon.api.models import Intent, IntentPage, Party, ResponseShapeError
from recon.api.protocol import (
    Call,
    Limits,
    Outcome,
    Pacer,
    Received,
    Request,
    Verdict,
    loads_json,
    run_async,
    run_blocking,
    send_async,
    send_blocking,
)
from recon.api.wire import AsyncWire, proxy_configured
from recon.errors import (
    ApiError,
    ApiStatusError,
    ConfigError,
    Conflict,
    NotFound,
    RateLimited,
    ResponseLimitError,
    ServerError,
    Unauthorized,
    UsageError,
    ValidationError,
    redact,
)

__all__ = ["AsyncClient", "Client", "ClientStats", "PageBytes", "RawPage"]

log = logging.getLogger("recon.api")

USER_AGENT = "recon-client/0.1"
# Used only when a transport is given and no base URL: in-process transports ignore the host.
_IN_PROCESS_BASE_URL = "http://sandbox.invalid"
_MAX_MESSAGE_CHARS = 300

P = ParamSpec("P")
T = TypeVar("T")


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


class PageBytes(NamedTuple):
    """A list page's body as the bytes received, and the response's ``Date`` header."""

    content: bytes
    date: str | None


class _Secret:
    """Holds a secret so that no repr, vars() dump or debugger view shows it."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.value = value

    def __repr__(self) -> str:
        return "'***'" if self.value else "''"

    __str__ = __repr__


def split_userinfo(url: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:secret@host/x`` → (``http://host/x``, (user, secret)); no userinfo: (url, None).

    The credentials then travel as HTTP Basic auth and the URL that is logged, shown in a
    repr or written to a manifest never holds them."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, None
    userinfo, _, host = parts.netloc.rpartition("@")
    user, _, password = userinfo.partition(":")
    return urlunsplit(parts._replace(netloc=host)), (unquote(user), unquote(password))


def _redact_json(value: Any, secrets: tuple[str | None, ...]) -> Any:
    """Copy of a JSON value with the secrets removed from every string (keys included)."""
    if isinstance(value, str):
        return redact(value, *secrets)
    if isinstance(value, list):
        return [_redact_json(v, secrets) for v in value]
    if isinstance(value, dict):
        return {redact(str(k), *secrets): _redact_json(v, secrets) for k, v in value.items()}
    return value


def _is_retryable_status(status: int) -> bool:
    return status == 429 or (status >= 500 and status != 501)


# 400/422 (validation errors) and 429 (retry hint) need extra arguments: built in `_error`.
_STATUS_ERRORS: dict[int, type[ApiStatusError]] = {
    401: Unauthorized,
    404: NotFound,
    409: Conflict,
}


@dataclass
class _Pager:
    """Offset paging for ``iter_intents`` (sans-IO): which offset next, which ids are new."""

    offset: int = 0
    done: bool = False
    seen: set[str] = field(default_factory=set)

    def take(self, page: IntentPage) -> list[Intent]:
        fresh = [i for i in page.intents if i.id not in self.seen]
        self.seen.update(i.id for i in fresh)
        if page.next_offset is None:
            self.done = True
        else:
            self.offset = page.next_offset
        return fresh


HttpT = TypeVar("HttpT", httpx.Client, httpx.AsyncClient)
TransportT = TypeVar("TransportT", httpx.BaseTransport, httpx.AsyncBaseTransport)
SleepT = TypeVar("SleepT", Callable[[float], None], Callable[[float], Awaitable[None]])


class _Core(Generic[HttpT, TransportT, SleepT]):
    """Everything the sync and async clients share except carrying out I/O."""

    _sleep: SleepT

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        transport: TransportT | None = None,
        client: HttpT | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        max_rps: float | None = None,
        clock: Callable[[], float] | None = None,
        sleep: SleepT | None = None,
        rng: random.Random | None = None,
        limits: Limits | None = None,
    ):
        if transport is not None and client is not None:
            raise UsageError("pass transport= or client=, not both")
        url = base_url or os.environ.get("RECON_BASE_URL")
        url = url or (str(client.base_url) or None if client is not None else None)
        if not url and transport is not None:
            url = _IN_PROCESS_BASE_URL
        if not url:
            raise ConfigError("no API base URL: set RECON_BASE_URL or give --base-url")
        key = api_key if api_key is not None else os.environ.get("RECON_API_KEY")
        if key is None:
            raise ConfigError("no API key: set RECON_API_KEY")
        url, self._auth = split_userinfo(url)
        self.base_url = url.rstrip("/")
        self._key = _Secret(key)
        self._url_secret = _Secret(self._auth[1] if self._auth else "")
        self.limits = limits or Limits()
        self._pacer = Pacer(
            retry,
            clock=clock,
            rng=rng,
            max_rps=max_rps,
            secrets=(key, self._url_secret.value),
        )
        self.retry = self._pacer.policy
        self._http_owned = client is None
        self._transport: TransportT | None = transport
        self._timeouts = httpx.Timeout(timeout, read=self.limits.read_timeout or timeout)
        # An owned httpx client is made on first use (`_http`): making one loads the CA
        # certificates, ~20 ms of CPU, which an AsyncClient whose requests all take the
        # lean GET lane (recon.api.wire) never needs.
        self._http_client: HttpT | None = client
        self._closed = False
        self._sleep = sleep if sleep is not None else self._default_sleep()
        self._setup()

    def _setup(self) -> None:
        """The end of __init__, for what a shell adds (the async client's GET lane)."""

    @property
    def _http(self) -> HttpT:
        if self._http_client is None:
            if self._closed:  # as httpx says of a closed client: never a new pool after close
                raise RuntimeError("Cannot send a request, as the client has been closed.")
            self._http_client = self._new_http(self._transport, self._timeouts)
        return self._http_client

    def _new_http(self, transport: TransportT | None, timeout: httpx.Timeout) -> HttpT:
        raise NotImplementedError

    def _default_sleep(self) -> SleepT:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r}, api_key={self._key!r})"

    @property
    def stats(self) -> ClientStats:
        """Request counters: requests sent, retries made, 429s and 5xx seen."""
        return ClientStats(**self._pacer.counts)

    def _redact(self, text: str) -> str:
        return self._pacer.redact(text)

    @staticmethod
    def _path_id(value: str) -> str:
        # Quote ids so that a caller-supplied "../x" cannot address another endpoint.
        return quote(str(value), safe="")

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str | int] | None = None,
        json: Any = None,
        idempotency_key: str | None = None,
    ) -> Request:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if self._key.value:  # an explicit empty key sends no header (to test the 401 path)
            headers["X-API-Key"] = self._key.value
        if idempotency_key is not None:
            headers["idempotency-key"] = idempotency_key
        return Request(
            method,
            self.base_url + path,
            self._redact(f"{method} {path}"),
            params=params,
            json=json,
            headers=headers,
            auth=self._auth,
        )

    # ------------------------------------------------------------------ responses

    def _classify(self, request: Request, outcome: Outcome) -> Verdict:
        """One attempt: success, or the error with whether it may be retried."""
        if not isinstance(outcome, Received):
            return Verdict(self._pacer.connection_error(request, outcome.error), True)
        status = outcome.status
        if 200 <= status < 300:
            log.debug("%s -> %d", request.what, status)
            return Verdict(None)
        if status == 429:
            self._pacer.count("rate_limited")
        elif status >= 500:
            self._pacer.count("server_errors")
        error = self._error(outcome, request)
        if not _is_retryable_status(status):
            return Verdict(error)
        return Verdict(error, True, self._retry_after(outcome.headers))

    def _error(self, response: Received, request: Request) -> ApiStatusError:
        """Map an error response of either shape onto the recon.errors tree (redacted)."""
        status = response.status
        try:
            body: Any = _redact_json(loads_json(response.content), self._pacer.secrets)
        except (ValueError, ResponseLimitError):
            body = None
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
            text = response.content[: _MAX_MESSAGE_CHARS * 4].decode("utf-8", "replace")
            text = self._redact(text.strip())[:_MAX_MESSAGE_CHARS]
            message = text or _reason(status)
        named = [e for e in validation_errors if e["field"] and e["field"] not in message]
        if named:
            message += " [" + "; ".join(f"{e['field']}: {e['message']}" for e in named) + "]"
        kw: dict[str, Any] = {
            "status_code": status,
            "code": code,
            "request": request.what,
            "body": body,
            "details": details,
        }
        if status in (400, 422):
            return ValidationError(message, validation_errors=validation_errors, **kw)
        if status == 429:
            return RateLimited(message, retry_after=self._retry_after(response.headers), **kw)
        if status >= 500:
            return ServerError(message, **kw)
        return _STATUS_ERRORS.get(status, ApiStatusError)(message, **kw)

    @staticmethod
    def _retry_after(headers: Mapping[str, str]) -> float | None:
        # An HTTP-date is measured from the server's own Date, so clock skew (or the
        # emulator's simulated clock) does not distort the wait.
        return _parse_retry_after(headers.get("retry-after"), parse_http_date(headers.get("date")))

    def _exchange(self, request: Request) -> Call[Received]:
        """The one retry loop (see `Pacer.exchange`) with this API's error mapping."""

        def give_up(error: ApiError, attempts: int) -> ApiError:
            # A party create has no idempotency key: if an earlier attempt got through
            # before the connection failed, the retry sees 409. Say so rather than mislead.
            if (
                isinstance(error, Conflict)
                and attempts > 1
                and "idempotency-key" not in (request.headers)
            ):
                error.args = (
                    f"{error.args[0]} (after a retry: an earlier attempt may have succeeded)",
                )
            return error

        return self._pacer.exchange(request, self._classify, give_up)

    def _call(self, request: Request) -> Call[Any]:
        """Send ``request`` (with retries) and return its JSON body."""
        response = yield from self._exchange(request)
        _check_json_type(response, request)
        return _json_body(response, request.what)


def _check_json_type(response: Received, request: Request) -> None:
    """A body declared as something other than JSON (a login page) is an error."""
    media = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media and not (media.endswith("/json") or media.endswith("+json")):
        raise ResponseShapeError(
            f"{request.what} returned {response.status} with Content-Type {media!r}, not JSON"
        )


def _json_body(response: Received, what: str) -> Any:
    """A 2xx response's JSON; a body that is not JSON is an error."""
    try:
        return loads_json(response.content)
    except ValueError:
        raise ResponseShapeError(
            f"{what} returned {response.status} with a body that is not JSON"
        ) from None
    except ResponseLimitError as exc:
        raise ResponseLimitError(f"{what}: {exc}") from None


def _reason(status: int) -> str:
    return httpx.codes.get_reason_phrase(status) or "error"


# ---------------------------------------------------------------------- the operations
#
# Each endpoint once, as a sans-IO generator: Client runs it blocking, AsyncClient awaits it.


def create_party(
    api: _Core,
    *,
    cpf: str,
    display_name: str,
    party_type: str = "person",
    country_code: str = "BR",
    external_ref: str | None = None,
    email: str | None = None,
    phone: str | None = None,
) -> Call[Party]:
    """``POST /v2/parties``: create a party (201). 409 → Conflict if it exists."""
    body: dict[str, Any] = {
        "cpf": cpf,
        "displayName": display_name,
        "partyType": str(party_type),
        "countryCode": country_code,
    }
    optional = {"externalRef": external_ref, "email": email, "phone": phone}
    body.update({k: v for k, v in optional.items() if v is not None})
    return Party.from_api((yield from api._call(api._request("POST", "/v2/parties", json=body))))


def get_party(api: _Core, party_id: str) -> Call[Party]:
    """``GET /v2/parties/{id}``; NotFound outside the key's organization/instance."""
    request = api._request("GET", f"/v2/parties/{api._path_id(party_id)}")
    return Party.from_api((yield from api._call(request)))


def bind_wallet(api: _Core, party_id: str, solana_wallet: str) -> Call[Party]:
    """``PATCH /v2/parties/{id}/wallet``: bind or replace the party's Solana wallet."""
    request = api._request(
        "PATCH",
        f"/v2/parties/{api._path_id(party_id)}/wallet",
        json={"solanaWallet": solana_wallet},
    )
    return Party.from_api((yield from api._call(request)))


def _create_intent(
    api: _Core,
    kind: str,
    destination: dict[str, str],
    amount_cents: int,
    chain_id: str,
    client_reference: str | None,
    idempotency_key: str | None,
) -> Call[Intent]:
    body: dict[str, Any] = {"amountCents": amount_cents, **destination, "chainId": chain_id}
    if client_reference is not None:
        body["clientReference"] = client_reference
    # One key per user intent: generated here, once, and reused by every retry.
    key = idempotency_key if idempotency_key is not None else str(uuid.uuid4())
    request = api._request("POST", f"/v2/intents/{kind}", json=body, idempotency_key=key)
    return Intent.from_api((yield from api._call(request)))


def create_onramp(
    api: _Core,
    *,
    amount_cents: int,
    destination_wallet: str,
    chain_id: str = "solana",
    client_reference: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Intent]:
    """``POST /v2/intents/onramp``: the payer gets `pixInfo` to pay; one idempotency key
    (generated if None) for all tries, so a retried create cannot create twice."""
    return _create_intent(
        api,
        "onramp",
        {"destinationWallet": destination_wallet},
        amount_cents,
        chain_id,
        client_reference,
        idempotency_key,
    )


def create_offramp(
    api: _Core,
    *,
    amount_cents: int,
    destination_address: str,
    chain_id: str = "solana",
    client_reference: str | None = None,
    idempotency_key: str | None = None,
) -> Call[Intent]:
    """``POST /v2/intents/offramp``; one idempotency key (generated if None) for all tries."""
    destination = {"destinationAddress": destination_address}
    return _create_intent(
        api, "offramp", destination, amount_cents, chain_id, client_reference, idempotency_key
    )


def get_intent(api: _Core, intent_id: str) -> Call[Intent]:
    """``GET /v2/intents/{id}``; NotFound outside the key's organization/instance."""
    request = api._request("GET", f"/v2/intents/{api._path_id(intent_id)}")
    return Intent.from_api((yield from api._call(request)))


def list_intents_bytes(
    api: _Core, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
) -> Call[PageBytes]:
    """One list page's body as the bytes received (JSON by its Content-Type, within the
    client's Limits) plus the server's Date: for a caller that decodes it itself."""
    params: dict[str, str | int] = {
        "intentType": str(intent_type),
        "status": str(status),
        "limit": limit,
        "offset": offset,
    }
    request = api._request("GET", "/v2/intents", params=params)
    response = yield from api._exchange(request)
    _check_json_type(response, request)
    return PageBytes(response.content, response.headers.get("date"))


def list_intents_raw(
    api: _Core, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
) -> Call[RawPage]:
    """One list page as received (JSON body, unparsed items) plus the server's Date."""
    page = yield from list_intents_bytes(
        api, intent_type=intent_type, status=status, limit=limit, offset=offset
    )
    what = "GET /v2/intents"
    return RawPage(_page_body(_json_body(Received(200, {}, page.content), what)), page.date)


def list_intents(
    api: _Core, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
) -> Call[IntentPage]:
    """``GET /v2/intents``: one page, newest first (in the sandbox)."""
    raw = yield from list_intents_raw(
        api, intent_type=intent_type, status=status, limit=limit, offset=offset
    )
    return IntentPage.from_api(raw.body)


def approve_burn(api: _Core, intent_id: str, *, tx_signature: str, token_holder: str) -> Call[str]:
    """``POST /v2/intents/{id}/approve-burn``; returns the new status ("burn_approved")."""
    request = api._request(
        "POST",
        f"/v2/intents/{api._path_id(intent_id)}/approve-burn",
        json={"txSignature": tx_signature, "tokenHolder": token_holder},
    )
    return _approve_status((yield from api._call(request)))


def _blocking(op: Callable[Concatenate[Any, P], Call[T]]) -> Callable[Concatenate[Client, P], T]:
    @functools.wraps(op)
    def method(self: Client, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._run(op(self, *args, **kwargs))

    method.__qualname__ = f"Client.{op.__name__}"
    return method


def _awaitable(
    op: Callable[Concatenate[Any, P], Call[T]],
) -> Callable[Concatenate[AsyncClient, P], Coroutine[Any, Any, T]]:
    @functools.wraps(op)
    async def method(self: AsyncClient, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._run(op(self, *args, **kwargs))

    method.__qualname__ = f"AsyncClient.{op.__name__}"
    return method


class Client(_Core[httpx.Client, httpx.BaseTransport, Callable[[float], None]]):
    """Synchronous client of the v2 API.

    ``base_url`` defaults to ``$RECON_BASE_URL`` and ``api_key`` to ``$RECON_API_KEY``.
    Pass ``transport=`` (e.g. ``httpx.MockTransport`` or the sandbox's
    ``EmulatorTransport``) or a ready ``client=`` for tests. ``clock``/``sleep``/``rng`` are
    seams for deterministic tests of the retry timing; ``limits`` bounds what a server may
    send (:class:`~recon.api.protocol.Limits`).
    """

    def _new_http(
        self, transport: httpx.BaseTransport | None, timeout: httpx.Timeout
    ) -> httpx.Client:
        return httpx.Client(transport=transport, timeout=timeout)

    def _default_sleep(self) -> Callable[[float], None]:
        return time.sleep

    def close(self) -> None:
        """Close the underlying connection pool (only if this client created it)."""
        self._closed = True
        if self._http_owned and self._http_client is not None:
            self._http_client.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, call: Call[T]) -> T:
        return run_blocking(
            call, lambda r: send_blocking(self._http, r, self.limits, self._pacer), self._sleep
        )

    create_party = _blocking(create_party)
    get_party = _blocking(get_party)
    bind_wallet = _blocking(bind_wallet)
    create_onramp = _blocking(create_onramp)
    create_offramp = _blocking(create_offramp)
    get_intent = _blocking(get_intent)
    list_intents = _blocking(list_intents)
    list_intents_raw = _blocking(list_intents_raw)
    list_intents_bytes = _blocking(list_intents_bytes)
    approve_burn = _blocking(approve_burn)

    def iter_intents(
        self, *, intent_type: str = "all", status: str = "all", page_size: int = 100
    ) -> Iterator[Intent]:
        """Every intent matching the filters, page by page.

        Offset pages can shift while we walk them (new intents at the head push items onto
        the next page); ids already yielded are skipped. For a consistent snapshot use
        ``recon.extract``, which checks the walk.
        """
        pager = _Pager()
        while not pager.done:
            yield from pager.take(
                self.list_intents(
                    intent_type=intent_type, status=status, limit=page_size, offset=pager.offset
                )
            )


class AsyncClient(
    _Core[httpx.AsyncClient, httpx.AsyncBaseTransport, Callable[[float], Awaitable[None]]]
):
    """Asynchronous twin of :class:`Client`: the same methods, awaited.

    All concurrent requests of one AsyncClient share one pause gate (a 429 holds them all
    until its Retry-After instant) and one token bucket (``max_rps``). GETs go through the
    lean asyncio lane of :mod:`recon.api.wire` when the client owns its connections.
    """

    _wire: AsyncWire | None = None  # the lean lane for GETs (recon.api.wire), when usable

    def _setup(self) -> None:
        if self._http_owned and self._transport is None and not proxy_configured():
            connect = self._timeouts.connect
            self._wire = AsyncWire(self.limits, connect if connect is not None else 30.0)

    def _new_http(
        self, transport: httpx.AsyncBaseTransport | None, timeout: httpx.Timeout
    ) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport, timeout=timeout)

    def _default_sleep(self) -> Callable[[float], Awaitable[None]]:
        return asyncio.sleep

    # the same operations as Client's, awaited
    create_party = _awaitable(create_party)
    get_party = _awaitable(get_party)
    bind_wallet = _awaitable(bind_wallet)
    create_onramp = _awaitable(create_onramp)
    create_offramp = _awaitable(create_offramp)
    get_intent = _awaitable(get_intent)
    list_intents = _awaitable(list_intents)
    list_intents_raw = _awaitable(list_intents_raw)
    list_intents_bytes = _awaitable(list_intents_bytes)
    approve_burn = _awaitable(approve_burn)

    async def aclose(self) -> None:
        """Close the underlying connection pool (only if this client created it)."""
        self._closed = True
        if self._wire is not None:
            await self._wire.aclose()
        if self._http_owned and self._http_client is not None:
            await self._http_client.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, call: Call[T]) -> T:
        return await run_async(call, self._send, self._sleep)

    async def _send(self, request: Request) -> Outcome:
        # GETs take the lean asyncio lane when this client owns its connections (no test
        # seam, no proxy in the environment); the rest goes through httpx.
        if self._wire is not None and request.method == "GET":
            return await self._wire.send(request, self._pacer)
        return await send_async(self._http, request, self.limits, self._pacer)

    async def iter_intents(
        self, *, intent_type: str = "all", status: str = "all", page_size: int = 100
    ) -> AsyncIterator[Intent]:
        """Every intent matching the filters (``async for``); see :meth:`Client.iter_intents`."""
        pager = _Pager()
        while not pager.done:
            page = await self.list_intents(
                intent_type=intent_type, status=status, limit=page_size, offset=pager.offset
            )
            for intent in pager.take(page):
                yield intent


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
