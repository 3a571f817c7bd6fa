"""Fetch received PIX for a period from a BACEN-style "API Pix" and import them.

OAuth2 client credentials: `POST <token_url>` (default `<base_url>/oauth/token`) with
`grant_type=client_credentials` and HTTP Basic client_id:client_secret gives a bearer
token. Then `GET <base_url>/pix?inicio=…&fim=…&paginacao.paginaAtual=N&
paginacao.itensPorPagina=M` is walked page by page until `parametros.paginacao.
quantidadeDePaginas` is reached. Pages are imported as one API Pix source (their items are
deduplicated like any import, so pulling an overlapping period adds nothing).

Transient failures (connection errors, 429, 5xx) are retried under the same
`recon.api.RetryPolicy` as the v2 client (`recon.api.protocol`'s one retry loop: full-jitter
backoff, Retry-After as a floor, an overall budget); bodies are read within the same
`Limits`. A 401 on a page fetches a new token once. The client
secret never appears in messages: errors are redacted.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx

from recon.api._retry import RetryPolicy, parse_retry_after
from recon.api.protocol import (
    Call,
    Limits,
    Outcome,
    Pacer,
    Received,
    Request,
    Verdict,
    run_blocking,
    send_blocking,
)
from recon.config import DataDir
from recon.errors import (
    ApiStatusError,
    PaginationError,
    RateLimited,
    ServerError,
    Unauthorized,
    UsageError,
    redact,
)
from recon.statements.formats import pix_json
from recon.statements.importer import ImportReport, import_parsed
from recon.statements.lines import Coverage, iso_to_us

T = TypeVar("T")
SECRET_ENV = "RECON_PIX_CLIENT_SECRET"
MAX_PAGES = 100_000


def _iso(value: datetime | str) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise UsageError("inicio/fim must carry a UTC offset")
        return value.isoformat()
    text = str(value)
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise UsageError(f"not an RFC 3339 time: {text!r}") from exc
    if parsed.tzinfo is None:
        raise UsageError(f"{text!r} has no UTC offset (write e.g. 2026-11-01T00:00:00-03:00)")
    return text


class _Session:
    """The API Pix calls as sans-IO operations over `recon.api.protocol`: the one retry
    policy of recon (full jitter, Retry-After as a floor, an overall budget), run blocking."""

    def __init__(
        self,
        http: httpx.Client,
        base_url: str,
        client_id: str,
        client_secret: str,
        token_url: str | None,
        retry: RetryPolicy | None,
        sleep: Callable[[float], None],
        limits: Limits | None = None,
    ):
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.client_id = client_id
        self.secret = client_secret
        self.token_url = token_url or f"{self.base_url}/oauth/token"
        self.sleep = sleep
        self.limits = limits or Limits()
        self.pacer = Pacer(retry, secrets=(client_secret,))
        self.token: str | None = None

    def _run(self, call: Call[T]) -> T:
        send = lambda r: send_blocking(self.http, r, self.limits, self.pacer)  # noqa: E731
        return run_blocking(call, send, self.sleep)

    def _classify(self, request: Request, outcome: Outcome) -> Verdict:
        # Connection errors, 429 and 5xx are retried; any other answer is the caller's.
        if not isinstance(outcome, Received):
            return Verdict(self.pacer.connection_error(request, outcome.error), True)
        if outcome.status == 429 or (outcome.status >= 500 and outcome.status != 501):
            hint = parse_retry_after(outcome.headers.get("retry-after"))
            return Verdict(self._error(outcome, request.what), True, hint)
        return Verdict(None)

    def _error(self, response: Received, what: str) -> ApiStatusError:
        try:
            body: Any = json.loads(response.content)
        except ValueError:
            body = response.content[:500].decode("utf-8", "replace")
        detail = ""
        if isinstance(body, dict):
            detail = str(body.get("detail") or body.get("title") or body.get("error") or "")
        reason = httpx.codes.get_reason_phrase(response.status)
        message = redact(detail or reason or "error", self.secret)
        status = response.status
        kwargs: dict[str, Any] = {"status_code": status, "request": what, "body": body}
        if status == 401:
            return Unauthorized(message, **kwargs)
        if status == 429:
            return RateLimited(message, **kwargs)
        if status >= 500:
            return ServerError(message, **kwargs)
        return ApiStatusError(message, **kwargs)

    def _token(self) -> Call[str]:
        what = f"POST {self.token_url}"
        request = Request(
            "POST",
            self.token_url,
            what,
            form={"grant_type": "client_credentials"},
            auth=(self.client_id, self.secret),
        )
        response = yield from self.pacer.exchange(request, self._classify)
        if response.status != 200:
            raise self._error(response, what)
        try:
            token = json.loads(response.content)["access_token"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ApiStatusError(
                "token response has no access_token", status_code=response.status, request=what
            ) from exc
        if not isinstance(token, str) or not token:
            raise ApiStatusError("empty access_token", status_code=response.status, request=what)
        self.token = token
        return token

    def _page(self, params: dict[str, str | int]) -> Call[dict[str, Any]]:
        url = f"{self.base_url}/pix"
        what = f"GET {url} page {params['paginacao.paginaAtual']}"
        for renewed in (False, True):
            token = self.token or (yield from self._token())
            headers = {"Authorization": f"Bearer {token}"}
            request = Request("GET", url, what, params=params, headers=headers)
            response = yield from self.pacer.exchange(request, self._classify)
            if response.status == 401 and not renewed:
                self.token = None  # expired: one fresh token, then give up
                continue
            if response.status != 200:
                raise self._error(response, what)
            try:
                body = json.loads(response.content)
            except (ValueError, RecursionError) as exc:
                raise ApiStatusError(
                    "page is not JSON", status_code=response.status, request=what
                ) from exc
            if not isinstance(body, dict) or not isinstance(body.get("pix"), list):
                raise ApiStatusError(
                    "page has no 'pix' list", status_code=response.status, request=what
                )
            return body
        raise AssertionError("unreachable")  # pragma: no cover

    def page(self, params: dict[str, str | int]) -> dict[str, Any]:
        return self._run(self._page(params))


def fetch_pages(
    base_url: str,
    client_id: str,
    client_secret: str,
    inicio: datetime | str,
    fim: datetime | str,
    *,
    page_size: int = 100,
    token_url: str | None = None,
    transport: httpx.BaseTransport | None = None,
    client: httpx.Client | None = None,
    timeout: float = 30.0,
    retry: RetryPolicy | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> list[dict[str, Any]]:
    """Every `GET /pix` page of the period, as received."""
    if not client_secret:
        raise UsageError(f"no client secret: set ${SECRET_ENV}")
    if not 1 <= page_size <= 1000:
        raise UsageError("page size must be 1..1000 (BACEN's itensPorPagina limit)")
    params: dict[str, str | int] = {
        "inicio": _iso(inicio),
        "fim": _iso(fim),
        "paginacao.itensPorPagina": page_size,
    }
    own = client is None
    http = client or httpx.Client(transport=transport, timeout=timeout)
    try:
        session = _Session(http, base_url, client_id, client_secret, token_url, retry, sleep)
        pages: list[dict[str, Any]] = []
        page = 0
        while True:
            params["paginacao.paginaAtual"] = page
            body = session.page(dict(params))
            pages.append(body)
            paging = (body.get("parametros") or {}).get("paginacao") or {}
            total_pages = paging.get("quantidadeDePaginas")
            if not isinstance(total_pages, int):
                # No paging info: a single page unless it came back full.
                if len(body["pix"]) < page_size:
                    break
            elif page + 1 >= total_pages:
                break
            if not body["pix"]:
                break
            page += 1
            if page >= MAX_PAGES:
                raise PaginationError(f"more than {MAX_PAGES} pages; narrow inicio/fim")
        return pages
    finally:
        if own:
            http.close()


def pull_pix(
    base_url: str,
    client_id: str,
    client_secret: str | None = None,
    inicio: datetime | str = "",
    fim: datetime | str = "",
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    account: str | None = None,
    quarantine: bool = False,
    page_size: int = 100,
    token_url: str | None = None,
    transport: httpx.BaseTransport | None = None,
    client: httpx.Client | None = None,
    save_dir: str | os.PathLike[str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> ImportReport:
    """Fetch received PIX for [inicio, fim] and import them (secret default: $RECON_PIX_CLIENT_SECRET)."""
    secret = client_secret if client_secret is not None else os.environ.get(SECRET_ENV, "")
    pages = fetch_pages(
        base_url,
        client_id,
        secret,
        inicio,
        fim,
        page_size=page_size,
        token_url=token_url,
        transport=transport,
        client=client,
        sleep=sleep,
    )
    source = f"{base_url.rstrip('/')}/pix?inicio={_iso(inicio)}&fim={_iso(fim)}"
    if save_dir is not None:
        folder = Path(save_dir)
        folder.mkdir(parents=True, exist_ok=True)
        stamp = _iso(inicio).replace(":", "")
        for number, body in enumerate(pages):
            target = folder / f"pix-{stamp}-p{number:04d}.json"
            tmp = target.with_name(".tmp-" + target.name)
            tmp.write_text(json.dumps(body, ensure_ascii=False, indent=1), encoding="utf-8")
            tmp.replace(target)
    parsed = pix_json.parse_documents(pages, source)
    if not parsed.coverage:  # the server did not echo parametros: the query's own period
        parsed.coverage = [
            Coverage(iso_to_us(_iso(inicio)), iso_to_us(_iso(fim)), "pull inicio/fim", "received")
        ]
    return import_parsed(
        [(source, "pix-json", parsed)], data, quarantine=quarantine, account=account
    )
