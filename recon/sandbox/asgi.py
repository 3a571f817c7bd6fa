"""The emulator as a Starlette app: /v2/*, /openapi.json, /_sandbox/* control, wire faults.

Every answer that is an error is JSON in the shape of the path's family (`error_response`):
unknown paths and methods, bodies over `MAX_BODY_BYTES` (413), bad control bodies and any bug
(500 ``internal_error``) included. Nothing here answers in plain text.
"""

from __future__ import annotations

import asyncio
import importlib.resources
import json
import logging
import math
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from recon.sandbox.clock import format_ts, to_ms
from recon.sandbox.emulator import Emulator, EmulatorResponse, Instance
from recon.sandbox.wire_faults import WireFaults

__all__ = ["MAX_BODY_BYTES", "banner", "create_app", "error_response"]

_V2_METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"]
#: The largest request body the sandbox reads. The biggest valid body of the API is under 2 KiB.
MAX_BODY_BYTES = 64 * 1024
#: How far `/_sandbox/clock` may move in one step, and the years the clock must stay inside.
MAX_ADVANCE_SECONDS = 10 * 366 * 86_400
_CLOCK_YEARS = (1970, 9000)
_PIX_ERR = "https://pix.bcb.gov.br/api/v2/error/"
_log = logging.getLogger("recon.sandbox")


def error_response(
    path: str,
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """An error in the shape of `path`'s family.

    `/v2/parties*`: ``{"error", "code"}``; `/pix`: RFC 7807 problem (BACEN's shape);
    `/oauth/token`: RFC 6749 ``{"error", "error_description"}``; everything else (`/v2/intents*`,
    `/_sandbox/*`, `/openapi.json`, unknown paths): ``{"code", "message", "validationErrors"}``.
    """
    media_type = "application/json"
    body: dict[str, Any]
    if path.startswith("/v2/parties"):
        body = {"error": message, "code": code}
    elif path == "/pix" or path.startswith("/pix/"):
        title = HTTPStatus(status).phrase if status in HTTPStatus._value2member_map_ else code
        body = {"type": _PIX_ERR + code, "title": title, "status": status, "detail": message}
        media_type = "application/problem+json"
    elif path == "/oauth/token":
        body = {"error": code, "error_description": message}
    else:
        body = {"code": code, "message": message, "validationErrors": []}
    return JSONResponse(body, status_code=status, headers=headers, media_type=media_type)


_HTTP_CODES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large"}


class _Guard:
    """Caps request bodies (413) and turns any exception into a JSON 500, per family.

    Placed inside Starlette's own error middleware, so a bug never reaches its plain-text 500.
    The body is read here (at most `max_body` bytes kept) and replayed to the app.
    """

    def __init__(self, app: ASGIApp, emulator: Emulator, max_body: int = MAX_BODY_BYTES):
        self.app, self.emulator, self.max_body = app, emulator, max_body

    async def _error(self, send: Send, path: str, status: int, code: str, message: str) -> None:
        headers = {"date": self.emulator.http_date()}
        if status == 413:
            headers["connection"] = "close"
        resp = error_response(path, status, code, message, headers)
        await resp({"type": "http"}, _no_receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        too_large = f"the request body is over {self.max_body} bytes"
        for name, value in scope.get("headers", []):
            if name == b"content-length" and value.isdigit() and int(value) > self.max_body:
                await self._error(send, path, 413, "payload_too_large", too_large)
                return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                await self._error(send, path, 413, "payload_too_large", too_large)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        replay: list[Message] = [{"type": "http.request", "body": b"".join(chunks)}]

        async def receive_again() -> Message:
            return replay.pop() if replay else await receive()

        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive_again, send_tracked)
        except Exception as exc:
            if started:
                raise
            _log.exception("sandbox: unexpected error on %s %s", scope.get("method"), path)
            await self._error(
                send, path, 500, "internal_error", f"internal error: {type(exc).__name__}"
            )


async def _no_receive() -> Message:  # pragma: no cover - a response never reads the request
    return {"type": "http.disconnect"}


def banner(base_url: str, emulator: Emulator) -> list[str]:
    """Lines to print at start: the base URL, then one ``API key <instance_id> <key>`` each."""
    lines = [f"Serving v2 API at {base_url}"]
    lines += [f"API key {i.instance_id} {i.api_key}" for i in emulator.instances]
    return lines


def _to_response(resp: EmulatorResponse) -> Response:
    return Response(resp.content(), status_code=resp.status, headers=resp.headers)


def _intents_error(emulator: Emulator, status: int, code: str, message: str) -> Response:
    return error_response("/_sandbox", status, code, message, {"date": emulator.http_date()})


def create_app(
    emulator: Emulator,
    *,
    faults: WireFaults | None = None,
    extra_routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """Wrap `emulator` in a Starlette app. `app.state.faults` holds the live WireFaults."""

    async def v2(request: Request) -> Response:
        f: WireFaults = request.app.state.faults
        path = _url_path(request)
        if f.latency_ms:
            await asyncio.sleep(f.latency_ms / 1000)
        if f.roll(f.rate_429):
            return error_response(
                path,
                429,
                "rate_limited",
                "too many requests",
                {"date": emulator.http_date(), "retry-after": str(f.retry_after)},
            )
        if f.roll(f.rate_5xx):
            status = f.rng.choice((500, 502, 503))
            return error_response(
                path,
                status,
                "internal_error",
                "injected server error",
                {"date": emulator.http_date()},
            )
        query, headers = _query_and_headers(request.scope)
        body = await request.body()
        if path == "/v2/intents" and request.method == "GET":
            inst = emulator.instance_for_key(headers.get("x-api-key"))
            if inst is not None:
                if f.limit_cap is not None:
                    _cap_limit(query, f.limit_cap)
                if f.drift_inserts_per_list or f.drift_status_changes_per_list:
                    emulator.drift(
                        inst.instance_id,
                        inserts=f.drift_inserts_per_list,
                        status_changes=f.drift_status_changes_per_list,
                        rng=f.rng,
                    )
        resp = emulator.handle(request.method, path, query=query, headers=headers, body=body)
        return _to_response(resp)

    async def openapi(request: Request) -> Response:
        try:
            doc = importlib.resources.files("recon.api").joinpath("openapi.json")
            data = doc.read_bytes() if doc.is_file() else None
        except (FileNotFoundError, ModuleNotFoundError):
            data = None
        if data is None:
            return JSONResponse(
                {
                    "code": "openapi_unavailable",
                    "message": "recon/api/openapi.json is not in this build yet",
                    "validationErrors": [],
                },
                status_code=503,
            )
        return Response(data, media_type="application/json")

    def _auth(request: Request) -> Instance | None:
        return emulator.instance_for_key(request.headers.get("x-api-key"))

    async def control(request: Request) -> Response:
        inst = _auth(request)
        if inst is None:
            return _intents_error(emulator, 401, "unauthorized", "missing or invalid X-API-Key")
        try:
            body = await _control_body(request)
            return _control(request, emulator, inst, body)
        except ValueError as exc:
            return _intents_error(emulator, 400, "invalid_request", str(exc))
        except KeyError:
            return _intents_error(emulator, 404, "not_found", "no such intent in this instance")

    routes: list[BaseRoute] = [
        Route("/openapi.json", openapi, methods=["GET"]),
        Route("/_sandbox/clock", control, methods=["GET", "POST"]),
        Route("/_sandbox/tick", control, methods=["POST"]),
        Route("/_sandbox/faults", control, methods=["GET", "POST"]),
        Route("/_sandbox/intents/{intent_id}/transition", control, methods=["POST"]),
        Route("/_sandbox/intents/{intent_id}/approval", control, methods=["GET"]),
        *extra_routes,
        Route("/v2/{rest:path}", v2, methods=_V2_METHODS),
    ]

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        headers = {"date": emulator.http_date(), **(exc.headers or {})}
        return error_response(request.url.path, exc.status_code, code, exc.detail, headers)

    app = Starlette(
        routes=routes,
        middleware=[Middleware(_Guard, emulator=emulator)],
        exception_handlers={HTTPException: http_error},
    )
    app.state.emulator = emulator
    app.state.faults = faults or WireFaults()
    return app


#: a path that Starlette's `request.url.path` gives back as it is (no character it escapes or
#: urlsplit drops, no leading "//")
_PLAIN_PATH = re.compile(r"/(?!/)[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")


def _url_path(request: Request) -> str:
    """`request.url.path` without building a URL (parsing it costs ~12 us a request)."""
    path: str = request.scope["path"]
    return path if _PLAIN_PATH.fullmatch(path) else request.url.path


def _query_and_headers(scope: Scope) -> tuple[dict[str, str], dict[str, str]]:
    """The query as Starlette's `QueryParams` reads it (the last of a repeated name) and the
    headers as ``dict(request.headers)`` (the first of a repeated name), without building
    either object."""
    query = dict(parse_qsl(scope["query_string"].decode("latin-1"), keep_blank_values=True))
    headers: dict[str, str] = {}
    for name, value in scope["headers"]:
        key = name.decode("latin-1")
        if key not in headers:
            headers[key] = value.decode("latin-1")
    return query, headers


def _cap_limit(query: dict[str, str], cap: int) -> None:
    """Apply min(limit, cap) to a valid limit; invalid ones are left for the emulator's 400."""
    raw = query.get("limit", "50").strip()
    if raw.isascii() and raw.isdigit() and len(raw) < 4 and cap < int(raw) <= 100:
        query["limit"] = str(cap)


async def _control_body(request: Request) -> dict[str, Any]:
    if request.method != "POST":
        return {}
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, a 4,300-digit number, deep nesting
        raise ValueError("the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise ValueError("the request body must be a JSON object")
    return body


def _control(
    request: Request, emulator: Emulator, inst: Instance, body: dict[str, Any]
) -> Response:
    path = request.url.path
    hdrs = {"date": emulator.http_date()}
    if path == "/_sandbox/clock":
        moved: list[str] = []
        if request.method == "POST":
            if "advanceSeconds" in body:
                secs = body["advanceSeconds"]
                if (
                    isinstance(secs, bool)
                    or not isinstance(secs, int | float)
                    or not 0 <= secs <= MAX_ADVANCE_SECONDS
                    or not math.isfinite(secs)
                ):
                    raise ValueError(
                        f"advanceSeconds must be a number from 0 to {MAX_ADVANCE_SECONDS}"
                    )
                later = emulator.clock.now().timestamp() + secs
                if later >= _clock_bound(_CLOCK_YEARS[1]):
                    raise ValueError(f"the clock must stay before the year {_CLOCK_YEARS[1]}")
                emulator.clock.advance(secs)
            elif "set" in body:
                text = body["set"]
                if not isinstance(text, str):
                    raise ValueError("set must be an ISO 8601 timestamp with offset")
                dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
                if dt.tzinfo is None:
                    raise ValueError("set needs a timezone offset (e.g. Z)")
                lo, hi = _CLOCK_YEARS
                if not _clock_bound(lo) <= dt.timestamp() < _clock_bound(hi):
                    raise ValueError(f"set must be from the year {lo} to before {hi}")
                emulator.clock.set(dt)
            else:
                raise ValueError("POST /_sandbox/clock takes advanceSeconds or set")
            moved = emulator.tick()
        hdrs = {"date": emulator.http_date()}
        now = format_ts(to_ms(emulator.clock.now()))
        return JSONResponse({"now": now, "moved": moved}, headers=hdrs)
    if path == "/_sandbox/tick":
        return JSONResponse({"moved": emulator.tick()}, headers=hdrs)
    if path == "/_sandbox/faults":
        if request.method == "POST":
            # a POST replaces the whole set: unspecified knobs go back to their defaults
            request.app.state.faults = WireFaults.from_dict(body)
        return JSONResponse(request.app.state.faults.to_dict(), headers=hdrs)
    # /_sandbox/intents/{id}/...
    intent_id = request.path_params["intent_id"]
    emulator_intent = emulator.get_intent(intent_id)
    if emulator_intent["instanceId"] != inst.instance_id:
        raise KeyError(intent_id)  # another instance's intent: 404, never leaked
    if path.endswith("/approval"):
        # what a wallet would sign, for people trying approve-burn by hand
        sig, holder = emulator.approval_for(intent_id)
        return JSONResponse({"txSignature": sig, "tokenHolder": holder}, headers=hdrs)
    status = body.get("status")
    if not isinstance(status, str):
        raise ValueError("status (string) is required")
    reason = body.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise ValueError("reason must be a string")
    force = body.get("force", False)
    if not isinstance(force, bool):
        raise ValueError("force must be a boolean")
    intent = emulator.transition(intent_id, status, reason=reason, force=force)
    return JSONResponse(intent, headers=hdrs)


def _clock_bound(year: int) -> float:
    return datetime(year, 1, 1, tzinfo=UTC).timestamp()
