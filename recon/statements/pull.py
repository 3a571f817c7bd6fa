"""Fetch received PIX for a period from a BACEN-style "API Pix" and import them.

OAuth2 client credentials: `POST <token_url>` (default `<base_url>/oauth/token`) with
`grant_type=client_credentials` and HTTP Basic client_id:client_secret gives a bearer
token. Then `GET <base_url>/pix?inicio=…&fim=…&paginacao.paginaAtual=N&
paginacao.itensPorPagina=M` is walked page by page until `parametros.paginacao.
quantidadeDePaginas` is reached. Pages are imported as one API Pix source (their items are
deduplicated like any import, so pulling an overlapping period adds nothing).

Transient failures (connection errors, 429, 5xx) are retried a few times with backoff
(Retry-After honoured, capped); a 401 on a page fetches a new token once. The client
secret never appears in messages: errors are redacted.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from recon.config import DataDir
from recon.errors import (
    ApiConnectionError,
    ApiStatusError,
    PaginationError,
    RateLimited,
    ServerError,
    Unauthorized,
    UsageError,
    redact,
)
from recon.statements import pixjson
from recon.statements.importer import ImportReport, import_parsed
from recon.statements.lines import Coverage, iso_to_us

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
    def __init__(
        self,
        http: httpx.Client,
        base_url: str,
        client_id: str,
        client_secret: str,
        token_url: str | None,
        attempts: int,
        sleep: Callable[[float], None],
    ):
        self.http = http
        self.base_url = base_url.rstrip("/")
        self.client_id = client_id
        self.secret = client_secret
        self.token_url = token_url or f"{self.base_url}/oauth/token"
        self.attempts = attempts
        self.sleep = sleep
        self.token: str | None = None

    def _send(self, build: Callable[[], httpx.Response], what: str) -> httpx.Response:
        delay = 0.2
        for attempt in range(1, self.attempts + 1):
            try:
                response = build()
            except httpx.HTTPError as exc:
                if attempt == self.attempts:
                    raise ApiConnectionError(
                        redact(f"{what}: {type(exc).__name__}: {exc}", self.secret)
                    ) from exc
                self.sleep(delay)
                delay *= 2
                continue
            if response.status_code == 429 or response.status_code >= 500:
                if attempt == self.attempts:
                    break
                hint = _retry_after(response.headers.get("retry-after"))
                self.sleep(min(max(hint or 0.0, delay), 10.0))
                delay *= 2
                continue
            return response
        self._raise(response, what)
        raise AssertionError("unreachable")  # pragma: no cover

    def _raise(self, response: httpx.Response, what: str) -> None:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text[:500]
        detail = ""
        if isinstance(body, dict):
            detail = str(body.get("detail") or body.get("title") or body.get("error") or "")
        message = redact(detail or response.reason_phrase or "error", self.secret)
        status = response.status_code
        kwargs: dict[str, Any] = {"status_code": status, "request": what, "body": body}
        if status == 401:
            raise Unauthorized(message, **kwargs)
        if status == 429:
            raise RateLimited(message, **kwargs)
        if status >= 500:
            raise ServerError(message, **kwargs)
        raise ApiStatusError(message, **kwargs)

    def fetch_token(self) -> str:
        response = self._send(
            lambda: self.http.post(
                self.token_url,
                data={"grant_type": "client_credentials"},
                auth=(self.client_id, self.secret),
            ),
            f"POST {self.token_url}",
        )
        if response.status_code != 200:
            self._raise(response, f"POST {self.token_url}")
        try:
            token = response.json()["access_token"]
        except (ValueError, KeyError, TypeError) as exc:
            raise ApiStatusError(
                "token response has no access_token",
                status_code=response.status_code,
                request=f"POST {self.token_url}",
            ) from exc
        if not isinstance(token, str) or not token:
            raise ApiStatusError(
                "empty access_token", status_code=response.status_code, request="token"
            )
        self.token = token
        return token

    def page(self, params: dict[str, str | int]) -> dict[str, Any]:
        url = f"{self.base_url}/pix"
        what = f"GET {url} page {params['paginacao.paginaAtual']}"
        for renewed in (False, True):
            token = self.token or self.fetch_token()
            response = self._send(
                lambda token=token: self.http.get(  # type: ignore[misc]
                    url, params=params, headers={"Authorization": f"Bearer {token}"}
                ),
                what,
            )
            if response.status_code == 401 and not renewed:
                self.token = None  # expired: one fresh token, then give up
                continue
            if response.status_code != 200:
                self._raise(response, what)
            try:
                body = response.json()
            except ValueError as exc:
                raise ApiStatusError(
                    "page is not JSON", status_code=response.status_code, request=what
                ) from exc
            if not isinstance(body, dict) or not isinstance(body.get("pix"), list):
                raise ApiStatusError(
                    "page has no 'pix' list", status_code=response.status_code, request=what
                )
            return body
        raise AssertionError("unreachable")  # pragma: no cover


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds > 0 else None


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
    attempts: int = 4,
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
        session = _Session(http, base_url, client_id, client_secret, token_url, attempts, sleep)
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
    parsed = pixjson.parse_documents(pages, source)
    if not parsed.coverage:  # the server did not echo parametros: the query's own period
        parsed.coverage = [
            Coverage(iso_to_us(_iso(inicio)), iso_to_us(_iso(fim)), "pull inicio/fim", "received")
        ]
    return import_parsed(
        [(source, "pix-json", parsed)], data, quarantine=quarantine, account=account
    )
