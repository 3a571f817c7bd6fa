"""The lean GET lane (recon.api.wire) against a scripted raw server on loopback: framing
(length, chunked, read to close), encodings, keep-alive and a stale connection, failures."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from collections.abc import Callable
from typing import Any

import pytest

from recon.api import AsyncClient, Limits, RetryPolicy
from recon.api.protocol import Failed, Pacer, Received, Request
from recon.api.wire import AsyncWire
from recon.errors import ApiConnectionError, ResponseLimitError

Script = Callable[[int, bytes], bytes | None]  # (request number, request head) -> reply


def serve(script: Script, coro: Callable[[str], Any], *, close_after: int = 0) -> Any:
    """Run `coro(url)` against a server answering with `script`; return its result and
    the request heads seen. `close_after`: close each connection after that many replies."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        served = 0
        try:
            while len(seen) < 50:
                head = await reader.readuntil(b"\r\n\r\n")
                seen.append(head)
                reply = script(len(seen), head)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                served += 1
                if close_after and served >= close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> Any:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            return await coro(url)
        finally:
            server.close()

    return asyncio.run(main()), seen


def ok(body: bytes, **headers: str) -> bytes:
    head = {"Content-Type": "application/json", "Content-Length": str(len(body)), **headers}
    return (
        b"HTTP/1.1 200 OK\r\n"
        + "".join(f"{k}: {v}\r\n" for k, v in head.items()).encode()
        + b"\r\n"
        + body
    )


def get(url: str, limits: Limits | None = None, **params: Any) -> Any:
    async def go() -> Any:
        wire = AsyncWire(limits or Limits(response_deadline=5), 5.0)
        try:
            request = Request(
                "GET",
                url + "/v2/intents",
                "GET /v2/intents",
                params=params,
                headers={"X-API-Key": "k"},
            )
            return await wire.send(request, Pacer())
        finally:
            await wire.aclose()

    return go()


def test_content_length_keep_alive_and_query() -> None:
    async def twice(url: str) -> list[Any]:
        wire = AsyncWire(Limits(), 5.0)
        request = Request(
            "GET", url + "/v2/intents", "GET /v2/intents", params={"limit": 2, "offset": 0}
        )
        try:
            return [await wire.send(request, Pacer()), await wire.send(request, Pacer())]
        finally:
            await wire.aclose()

    (first, second), seen = serve(lambda n, h: ok(b'{"n":%d}' % n), twice)
    assert (
        isinstance(first, Received) and first.content == b'{"n":1}' and second.content == b'{"n":2}'
    )
    assert seen[0].startswith(b"GET /v2/intents?limit=2&offset=0 HTTP/1.1\r\n")
    assert len(seen) == 2  # one connection, kept alive


def test_chunked_gzip_and_deflate_bodies() -> None:
    payload = b'{"intents":[],"total":0}' * 50
    gz = gzip.compress(payload)
    chunked = b"".join(
        b"%x\r\n%s\r\n" % (len(gz[i : i + 100]), gz[i : i + 100]) for i in range(0, len(gz), 100)
    )
    reply = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
        + chunked
        + b"0\r\nX-Trailer: 1\r\n\r\n"
    )
    got, _ = serve(lambda n, h: reply, get)
    assert got.content == payload
    got, _ = serve(lambda n, h: ok(zlib.compress(payload), **{"Content-Encoding": "deflate"}), get)
    assert got.content == payload


def test_read_to_close_and_a_bomb_stops_at_the_bound() -> None:
    reply = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{}"
    got, _ = serve(lambda n, h: reply, get, close_after=1)
    assert got.content == b"{}"
    bomb = gzip.compress(bytes(8 << 20))
    with pytest.raises(ResponseLimitError, match="max_decoded_bytes"):
        serve(
            lambda n, h: ok(bomb, **{"Content-Encoding": "gzip"}),
            lambda u: get(u, Limits(max_decoded_bytes=1 << 20)),
        )


def test_a_stale_keep_alive_connection_is_replaced() -> None:
    """The server closes after each reply: the second GET finds the kept connection dead
    before any byte, and goes again on a fresh one (no error, no retry counted)."""

    async def twice(url: str) -> list[Any]:
        wire = AsyncWire(Limits(), 5.0)
        request = Request("GET", url + "/x", "GET /x")
        try:
            first = await wire.send(request, Pacer())
            await asyncio.sleep(0.05)
            return [first, await wire.send(request, Pacer())]
        finally:
            await wire.aclose()

    (first, second), seen = serve(lambda n, h: ok(b"{}"), twice, close_after=1)
    assert isinstance(first, Received)
    assert isinstance(second, Received) and second.status == 200 and len(seen) == 2


@pytest.mark.parametrize(
    ("reply", "text"),
    [
        (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}", "peer closed connection"),
        (b"SPDY/9 200 OK\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed header line"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "invalid literal"),
    ],
)
def test_broken_responses_are_transport_failures(reply: bytes, text: str) -> None:
    got, _ = serve(lambda n, h: reply, get, close_after=1)
    assert isinstance(got, Failed) and text in str(got.error)


def test_refused_connection_is_retried_then_one_error() -> None:
    async def go() -> None:
        async with AsyncClient(
            "http://127.0.0.1:9", "k", retry=RetryPolicy(max_attempts=2, base_delay=0.01)
        ) as c:
            await c.list_intents_bytes()

    with pytest.raises(ApiConnectionError, match="GET /v2/intents: ConnectError"):
        asyncio.run(go())


def test_the_client_takes_the_lane_only_when_it_owns_its_connections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import httpx

    assert AsyncClient("http://h", "k")._wire is not None
    assert (
        AsyncClient(
            "http://h", "k", transport=httpx.MockTransport(lambda r: httpx.Response(200))
        )._wire
        is None
    )
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    assert AsyncClient("http://h", "k")._wire is None
