"""httpx transports that call `Emulator.handle` directly: in-process, no ASGI, no network.

Wire faults are not applied here (they live in the HTTP app); use `create_app` + `run_in_thread`
or httpx's ASGI transport to test a client against faults.
"""

from __future__ import annotations

import httpx

from recon.sandbox.emulator import Emulator, EmulatorResponse

__all__ = ["AsyncEmulatorTransport", "EmulatorTransport"]


def _call(emulator: Emulator, request: httpx.Request, body: bytes) -> httpx.Response:
    path = request.url.path
    if not path.startswith("/v2/") and path != "/v2":
        resp = EmulatorResponse(
            404,
            {"code": "not_found", "message": f"no such endpoint: {path}", "validationErrors": []},
            {"content-type": "application/json", "date": emulator.http_date()},
        )
    else:
        # a repeated parameter: the last value wins, as in the Starlette app
        query = dict(request.url.params.multi_items())
        resp = emulator.handle(
            request.method, path, query=query, headers=dict(request.headers), body=body
        )
    return httpx.Response(resp.status, headers=resp.headers, content=resp.content())


class EmulatorTransport(httpx.BaseTransport):
    """Synchronous transport: ``httpx.Client(transport=EmulatorTransport(emu), base_url=...)``."""

    def __init__(self, emulator: Emulator):
        self.emulator = emulator

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Serve one request from the emulator."""
        return _call(self.emulator, request, request.read())


class AsyncEmulatorTransport(httpx.AsyncBaseTransport):
    """Asynchronous twin of `EmulatorTransport`."""

    def __init__(self, emulator: Emulator):
        self.emulator = emulator

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Serve one request from the emulator."""
        return _call(self.emulator, request, await request.aread())
