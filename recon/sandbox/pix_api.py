"""BACEN-style "API Pix" on the sandbox: ``POST /oauth/token`` and ``GET /pix``.

Real PSPs expose received PIX through the BACEN API Pix (v2) behind OAuth2
client-credentials (usually with mTLS, which the sandbox leaves out):

- ``POST /oauth/token`` with HTTP Basic ``client_id:client_secret`` and the form body
  ``grant_type=client_credentials`` answers ``{"access_token", "token_type": "Bearer",
  "expires_in", "scope"}``; wrong credentials → 401 ``invalid_client``; another grant →
  400 ``unsupported_grant_type``.
- ``GET /pix?inicio=&fim=`` (RFC 3339, both required, ``fim`` inclusive) with optional
  ``cpf`` | ``cnpj`` (digits, not both), ``txid``, ``txIdPresente``, ``devolucaoPresente``,
  ``paginacao.paginaAtual`` (from 0) and ``paginacao.itensPorPagina`` (1–1000, default 100)
  answers ``{"parametros": {..., "paginacao": {...}}, "pix": [...]}`` oldest first. Without a
  valid ``Authorization: Bearer`` token → 401; bad parameters → 400. Errors use BACEN's
  problem-details shape: ``{"type", "title", "status", "detail", "violacoes": [{"razao",
  "propriedade"}]}``.

Tokens expire after `token_ttl` seconds of real time (authentication is about the caller's
wall clock, not the simulated one).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from recon.sandbox.bank import Bank
from recon.sandbox.exports.pix_json import pix_items, pix_page

if TYPE_CHECKING:
    from recon.sandbox.emulator import Emulator

__all__ = ["PixCredentials", "TokenStore", "pix_routes"]

_ERR = "https://pix.bcb.gov.br/api/v2/error/"
MAX_PAGE = 1000


@dataclass(frozen=True)
class PixCredentials:
    """OAuth2 client credentials of the sandbox's API Pix, derived from the seed."""

    client_id: str
    client_secret: str = field(repr=False)

    @classmethod
    def for_seed(cls, seed: int) -> PixCredentials:
        """Deterministic credentials, so a seed alone sets up a served sandbox."""
        digest = hashlib.sha256(f"recon-sandbox-pix|{seed}".encode()).hexdigest()
        return cls(client_id=f"recon-sandbox-{digest[:8]}", client_secret=digest[8:40])

    def banner(self) -> str:
        """The start-up line that tells a person how to log in to /pix."""
        return f"API Pix client {self.client_id} {self.client_secret}"


class TokenStore:
    """Issued bearer tokens and when they stop working (monotonic seconds)."""

    def __init__(self, ttl: float = 3600.0, clock: Callable[[], float] = time.monotonic):
        self.ttl = ttl
        self._clock = clock
        self._tokens: dict[str, float] = {}

    def issue(self) -> str:
        """A new opaque token."""
        token = secrets.token_urlsafe(32)
        self._tokens[token] = self._clock() + self.ttl
        return token

    def valid(self, token: str) -> bool:
        """True while `token` was issued here and has not expired."""
        expires = self._tokens.get(token)
        if expires is None:
            return False
        if self._clock() >= expires:
            del self._tokens[token]
            return False
        return True


def _problem(
    status: int, kind: str, title: str, detail: str, violations: list[dict[str, str]] | None = None
) -> JSONResponse:
    body: dict[str, Any] = {"type": _ERR + kind, "title": title, "status": status, "detail": detail}
    if violations:
        body["violacoes"] = violations
    headers = {"WWW-Authenticate": 'Bearer realm="pix"'} if status == 401 else None
    return JSONResponse(
        body, status_code=status, media_type="application/problem+json", headers=headers
    )


def _parse_time(text: str | None, name: str, violations: list[dict[str, str]]) -> datetime | None:
    if not text:
        violations.append({"razao": "obrigatório", "propriedade": name})
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        value = None
    if value is None or value.tzinfo is None:
        violations.append({"razao": "deve ser data/hora RFC 3339 com fuso", "propriedade": name})
        return None
    return value.astimezone(UTC)


def _parse_int(
    text: str | None,
    name: str,
    default: int,
    lo: int,
    hi: int | None,
    violations: list[dict[str, str]],
) -> int:
    if text is None or text == "":
        return default
    if not text.isdigit() or (value := int(text)) < lo or (hi is not None and value > hi):
        bound = f"entre {lo} e {hi}" if hi is not None else f"maior ou igual a {lo}"
        violations.append({"razao": f"deve ser inteiro {bound}", "propriedade": name})
        return default
    return value


def _parse_bool(text: str | None, name: str, violations: list[dict[str, str]]) -> bool | None:
    if text is None:
        return None
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    violations.append({"razao": "deve ser true ou false", "propriedade": name})
    return None


def pix_routes(
    bank_source: Bank | Callable[[], Bank],
    credentials: PixCredentials,
    *,
    tokens: TokenStore | None = None,
    emulator: Emulator | None = None,
    late_events: Callable[[], list[str]] | None = None,
) -> list[BaseRoute]:
    """Starlette routes for ``/oauth/token`` and ``/pix`` (and the world's late events).

    `bank_source` is the bank (or a callable returning the current one). With `emulator` and
    `late_events`, ``POST /_sandbox/world/late-events`` (X-API-Key of any instance) applies the
    world's held-back status regressions and answers ``{"applied": [ids]}``.
    """
    store = tokens or TokenStore()

    def bank() -> Bank:
        return bank_source() if callable(bank_source) else bank_source

    async def token(request: Request) -> Response:
        auth = request.headers.get("authorization", "")
        scheme, _, value = auth.partition(" ")
        client_id = client_secret = b""
        if scheme.lower() == "basic":
            try:
                # a header is Latin-1 text: anything not base64 (non-ASCII included) is refused
                raw = base64.b64decode(value.strip().encode("ascii"), validate=True)
            except ValueError:  # binascii.Error and UnicodeEncodeError are ValueErrors
                raw = b""
            client_id, _, client_secret = raw.partition(b":")
        # compared as bytes: compare_digest refuses non-ASCII str
        ok = hmac.compare_digest(client_id, credentials.client_id.encode()) and hmac.compare_digest(
            client_secret, credentials.client_secret.encode()
        )
        if not ok:
            return JSONResponse(
                {"error": "invalid_client", "error_description": "bad client credentials"},
                status_code=401,
                headers={"WWW-Authenticate": 'Basic realm="oauth"'},
            )
        form = (await request.body()).decode("utf-8", "replace")
        params = dict(part.partition("=")[::2] for part in form.split("&") if part)
        if params.get("grant_type") != "client_credentials":
            return JSONResponse(
                {
                    "error": "unsupported_grant_type",
                    "error_description": "only grant_type=client_credentials is supported",
                },
                status_code=400,
            )
        return JSONResponse(
            {
                "access_token": store.issue(),
                "token_type": "Bearer",
                "expires_in": int(store.ttl),
                "scope": "pix.read",
            },
            headers={"cache-control": "no-store"},
        )

    async def list_pix(request: Request) -> Response:
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not store.valid(value.strip()):
            return _problem(
                401, "AcessoNegado", "Não autorizado", "token ausente, inválido ou expirado"
            )
        q = request.query_params
        violations: list[dict[str, str]] = []
        inicio = _parse_time(q.get("inicio"), "inicio", violations)
        fim = _parse_time(q.get("fim"), "fim", violations)
        page = _parse_int(
            q.get("paginacao.paginaAtual"), "paginacao.paginaAtual", 0, 0, None, violations
        )
        size = _parse_int(
            q.get("paginacao.itensPorPagina"),
            "paginacao.itensPorPagina",
            100,
            1,
            MAX_PAGE,
            violations,
        )
        cpf, cnpj, txid = q.get("cpf"), q.get("cnpj"), q.get("txid")
        if cpf is not None and cnpj is not None:
            violations.append(
                {"razao": "cpf e cnpj não podem ser usados juntos", "propriedade": "cpf"}
            )
        if cpf is not None and not (cpf.isdigit() and len(cpf) == 11):
            violations.append({"razao": "deve ter 11 dígitos", "propriedade": "cpf"})
        if cnpj is not None and not (cnpj.isdigit() and len(cnpj) == 14):
            violations.append({"razao": "deve ter 14 dígitos", "propriedade": "cnpj"})
        if txid is not None and not (txid.isalnum() and txid.isascii() and 26 <= len(txid) <= 35):
            violations.append(
                {"razao": "deve ter de 26 a 35 caracteres alfanuméricos", "propriedade": "txid"}
            )
        has_txid = _parse_bool(q.get("txIdPresente"), "txIdPresente", violations)
        has_refund = _parse_bool(q.get("devolucaoPresente"), "devolucaoPresente", violations)
        if inicio is not None and fim is not None and fim < inicio:
            violations.append({"razao": "fim deve ser posterior a inicio", "propriedade": "fim"})
        if violations or inicio is None or fim is None:
            return _problem(
                400,
                "ConsultarPixRecebidosOperacaoInvalida",
                "Operação inválida",
                "a requisição não respeita o schema",
                violations,
            )
        items = pix_items(
            bank(), inicio, fim + timedelta(microseconds=1), cpf=cpf, cnpj=cnpj, txid=txid
        )
        if has_txid is not None:
            items = [i for i in items if ("txid" in i) == has_txid]
        if has_refund is not None:
            items = [i for i in items if bool(i["devolucoes"]) == has_refund]
        extra: dict[str, Any] = {
            k: v for k, v in (("cpf", cpf), ("cnpj", cnpj), ("txid", txid)) if v is not None
        }
        if has_txid is not None:
            extra["txIdPresente"] = has_txid
        if has_refund is not None:
            extra["devolucaoPresente"] = has_refund
        body = pix_page(
            items,
            inicio=q["inicio"],
            fim=q["fim"],
            pagina_atual=page,
            itens_por_pagina=size,
            extra_params=extra,
        )
        return JSONResponse(body)

    routes: list[BaseRoute] = [
        Route("/oauth/token", token, methods=["POST"]),
        Route("/pix", list_pix, methods=["GET"]),
    ]
    if emulator is not None and late_events is not None:
        emu, apply = emulator, late_events

        async def late(request: Request) -> Response:
            if emu.instance_for_key(request.headers.get("x-api-key")) is None:
                return JSONResponse(
                    {
                        "code": "unauthorized",
                        "message": "missing or invalid X-API-Key",
                        "validationErrors": [],
                    },
                    status_code=401,
                )
            return JSONResponse({"applied": apply()}, headers={"date": emu.http_date()})

        routes.append(Route("/_sandbox/world/late-events", late, methods=["POST"]))
    return routes
