"""`handle`: one /v2 request in, one response out (auth, tick-on-request, routing, errors)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from recon.sandbox.emulator.intents import _Intents
from recon.sandbox.emulator.responses import (
    EmulatorResponse,
    _error_body,
    _HttpError,
    _json_body,
    _Raw,
)
from recon.sandbox.emulator.state import INTENT_TYPES, _Store


class _Routes(_Intents):
    def handle(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> EmulatorResponse:
        """Answer one /v2 request (the whole API surface, including auth and errors)."""
        hdrs = {k.lower(): val for k, val in (headers or {}).items()}
        query = query or {}
        family = "parties" if path.startswith("/v2/parties") else "intents"
        with self._lock:
            try:
                store = self._by_key.get(hdrs.get("x-api-key", ""))
                if store is None:
                    # 401 in the intents shape on every endpoint, both families
                    raise _HttpError(401, "unauthorized", "missing or invalid X-API-Key header")
                if self.config.tick_on_request and self.clock.now_ms() != self._last_tick_ms:
                    self.tick()
                status, payload, extra = self._route(store, method.upper(), path, query, hdrs, body)
                headers = {"date": self.http_date(), **extra}
                if isinstance(payload, _Raw):
                    resp = EmulatorResponse(status, None, headers, raw=payload.data)
                else:
                    resp = EmulatorResponse(status, payload, headers)
            except Exception as exc:  # a bug must still answer in the family's shape
                if not isinstance(exc, _HttpError):
                    exc = _HttpError(500, "internal_error", f"internal error: {type(exc).__name__}")
                shape = "intents" if exc.status == 401 else family
                resp = EmulatorResponse(
                    exc.status, _error_body(shape, exc), {"date": self.http_date(), **exc.headers}
                )
        if resp._body is not None or resp._raw is not None:
            resp.headers.setdefault("content-type", "application/json")
        return resp

    # ------------------------------------------------------------------ routing
    def _route(
        self,
        store: _Store,
        method: str,
        path: str,
        query: Mapping[str, str],
        hdrs: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, Any, dict[str, str]]:
        seg = path.split("/")
        if len(seg) < 3 or seg[0] != "" or seg[1] != "v2":
            raise _HttpError(404, "not_found", f"no such endpoint: {path}")
        parts = seg[2:]

        def allow(*methods: str) -> None:
            if method not in methods:
                raise _HttpError(
                    405,
                    "method_not_allowed",
                    f"{method} is not allowed on {path}",
                    headers={"allow": ", ".join(methods)},
                )

        if parts == ["parties"]:
            allow("POST")
            return 201, self._create_party(store, _json_body(hdrs, body)), {}
        if len(parts) == 2 and parts[0] == "parties":
            allow("GET")
            return 200, self._render_party(self._party(store, parts[1])), {}
        if len(parts) == 3 and parts[0] == "parties" and parts[2] == "wallet":
            allow("PATCH")
            party = self._party(store, parts[1])
            return 200, self._bind_wallet(store, party, _json_body(hdrs, body)), {}
        if parts == ["intents"]:
            allow("GET")
            return 200, self._list(store, query), {}
        if len(parts) == 2 and parts[0] == "intents" and parts[1] in INTENT_TYPES:
            allow("POST")
            return self._create_intent_request(store, parts[1], hdrs, body)
        if len(parts) == 2 and parts[0] == "intents":
            allow("GET")
            return 200, self._render(store, self._intent_seq(store, parts[1])), {}
        if len(parts) == 3 and parts[0] == "intents" and parts[2] == "approve-burn":
            allow("POST")
            return 200, self._approve_burn(store, parts[1], hdrs, body), {}
        raise _HttpError(404, "not_found", f"no such endpoint: {path}")
