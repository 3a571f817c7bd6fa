"""The emulator as a Starlette app: /v2/*, /openapi.json, /_sandbox/* control, wire faults."""

from __future__ import annotations

import asyncio
import importlib.resources
import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from recon.sandbox.clock import format_ts, to_ms
from recon.sandbox.emulator import Emulator, EmulatorResponse, Instance
from recon.sandbox.wire_faults import WireFaults

__all__ = ["banner", "create_app"]

_V2_METHODS = ["GET", "POST", "PATCH", "PUT", "DELETE"]


def banner(base_url: str, emulator: Emulator) -> list[str]:
    """Lines to print at start: the base URL, then one ``API key <instance_id> <key>`` each."""
    lines = [f"Serving v2 API at {base_url}"]
    lines += [f"API key {i.instance_id} {i.api_key}" for i in emulator.instances]
    return lines


def _to_response(resp: EmulatorResponse) -> Response:
    return Response(resp.content(), status_code=resp.status, headers=resp.headers)


def _intents_error(
    emulator: Emulator, status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    body = {"code": code, "message": message, "validationErrors": []}
    hdrs = {"date": emulator.http_date(), **(headers or {})}
    return JSONResponse(body, status_code=status, headers=hdrs)


def create_app(
    emulator: Emulator,
    *,
    faults: WireFaults | None = None,
    extra_routes: Sequence[BaseRoute] = (),
) -> Starlette:
    """Wrap `emulator` in a Starlette app. `app.state.faults` holds the live WireFaults."""

    async def v2(request: Request) -> Response:
        f: WireFaults = request.app.state.faults
        path = request.url.path
        family = "parties" if path.startswith("/v2/parties") else "intents"
        if f.latency_ms:
            await asyncio.sleep(f.latency_ms / 1000)
        if f.roll(f.rate_429):
            return _fault(
                emulator,
                family,
                429,
                "rate_limited",
                "too many requests",
                {"retry-after": str(f.retry_after)},
            )
        if f.roll(f.rate_5xx):
            status = f.rng.choice((500, 502, 503))
            return _fault(emulator, family, status, "internal_error", "injected server error", {})
        query = {k: request.query_params[k] for k in request.query_params}
        headers = dict(request.headers)
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
    app = Starlette(routes=routes)
    app.state.emulator = emulator
    app.state.faults = faults or WireFaults()
    return app


def _fault(
    emulator: Emulator, family: str, status: int, code: str, message: str, headers: dict[str, str]
) -> Response:
    body: dict[str, Any]
    if family == "parties":
        body = {"error": message, "code": code}
    else:
        body = {"code": code, "message": message, "validationErrors": []}
    return JSONResponse(body, status_code=status, headers={"date": emulator.http_date(), **headers})


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
    except (UnicodeDecodeError, json.JSONDecodeError):
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
                if isinstance(secs, bool) or not isinstance(secs, int | float) or secs < 0:
                    raise ValueError("advanceSeconds must be a non-negative number")
                emulator.clock.advance(secs)
            elif "set" in body:
                text = body["set"]
                if not isinstance(text, str):
                    raise ValueError("set must be an ISO 8601 timestamp with offset")
                dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
                if dt.tzinfo is None:
                    raise ValueError("set needs a timezone offset (e.g. Z)")
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
