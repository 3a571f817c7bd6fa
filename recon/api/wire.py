"""A lean asyncio HTTP/1.1 lane for GET requests: the list walk's hot path.

httpx spends ~0.9 ms of CPU per request on its layers (URL models, the connection pool's
bookkeeping, anyio, h11 events): 9 µs per intent at 100 intents a page, more than all the
decoding. A list page needs none of it: one keep-alive connection per worker, a request
line and a few headers out, a status line, headers and a body in (``Content-Length``,
``chunked`` or read to close; ``gzip``/``deflate`` decoded a bounded piece at a time). That
is ~60 µs per request. Everything it reads goes through the same `BodyReader` (Limits) as
the httpx lane, and its failures are the same httpx transport errors, so the one retry
loop treats both alike.

`AsyncClient` uses it for GETs when it owns its connections (no `transport=`/`client=`
test seam) and no proxy is configured in the environment (httpx honours those; this lane
does not): everything else goes through httpx.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import ssl
import zlib
from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import quote_plus, urlsplit

import httpx

from recon.api.protocol import BodyReader, Failed, Limits, Outcome, Pacer, Request
from recon.errors import ConfigError, ResponseLimitError

__all__ = ["AsyncWire", "proxy_configured"]

log = logging.getLogger("recon.api")

_HEAD_LIMIT = 64 * 1024  # status line + headers
_READ = 256 * 1024
_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")


def proxy_configured() -> bool:
    """True when the environment names a proxy (then httpx, which honours it, is used)."""
    return any(os.environ.get(v) or os.environ.get(v.upper()) for v in _PROXY_VARS)


class _Decoder:
    """Content-Encoding, decoded at most `room` bytes at a time (a bomb never expands whole)."""

    def __init__(self, encoding: str):
        wbits = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS}.get(encoding)
        if wbits is None and encoding != "deflate":
            raise ResponseLimitError(f"unsupported Content-Encoding {encoding!r}")
        self.zlib = zlib.decompressobj(wbits or zlib.MAX_WBITS)

    def pieces(self, data: bytes, room: int) -> list[bytes]:
        out = [self.zlib.decompress(data, room)]
        while self.zlib.unconsumed_tail and len(out[-1]) < room:
            out.append(self.zlib.decompress(self.zlib.unconsumed_tail, room))
        return out


class _Stale(Exception):
    """A reused keep-alive connection was closed by the server before answering."""


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


class AsyncWire:
    """Keep-alive connections per origin, GET only (see the module docstring)."""

    def __init__(self, limits: Limits, connect_timeout: float):
        self.limits = limits
        self.connect_timeout = connect_timeout
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._ssl: ssl.SSLContext | None = None

    async def aclose(self) -> None:
        for connections in self._idle.values():
            for _, writer in connections:
                writer.close()
        self._idle.clear()

    async def _open(self, scheme: str, host: str, port: int) -> Connection:
        context = None
        if scheme == "https":
            if self._ssl is None:
                self._ssl = httpx.create_ssl_context()  # the same trust store as httpx
            context = self._ssl
        try:
            async with asyncio.timeout(self.connect_timeout):
                return await asyncio.open_connection(
                    host,
                    port,
                    ssl=context,
                    limit=_HEAD_LIMIT,
                    server_hostname=host if context else None,
                )
        except TimeoutError:
            raise httpx.ConnectTimeout(
                f"no connection to {host}:{port} in {self.connect_timeout:g}s"
            ) from None
        except OSError as exc:
            raise httpx.ConnectError(str(exc)) from None

    async def send(self, request: Request, pacer: Pacer) -> Outcome:
        """One GET; the body read within the limits. Transport failures come back as
        `Failed` (retried by the caller's policy); a crossed size bound is raised."""
        try:
            key, target, fields = _prepared(
                request.url, tuple(request.headers.items()), request.auth
            )
        except ValueError:
            raise ConfigError(pacer.redact(f"bad API base URL: {request.url}")) from None
        if request.params:
            target += ("&" if "?" in target else "?") + _query(request.params)
        data = f"GET {target} HTTP/1.1\r\n{fields}".encode("latin-1")
        for _ in range(2):
            try:
                return await self._exchange(key, data, request, pacer)
            except _Stale:
                continue  # once more on a fresh connection
        return Failed(
            httpx.RemoteProtocolError("server closed the connection twice")
        )  # pragma: no cover

    async def _exchange(
        self, key: tuple[str, str, int], data: bytes, request: Request, pacer: Pacer
    ) -> Outcome:
        idle = self._idle.get(key)
        reused = bool(idle)
        try:
            reader, writer = idle.pop() if idle else await self._open(*key)
        except httpx.TransportError as exc:
            return Failed(exc)
        body = BodyReader(self.limits, request.what, pacer.clock)
        keep = False
        try:
            async with asyncio.timeout(self.limits.response_deadline):
                writer.write(data)
                status, headers, keep = await self._response(reader, body, reused)
        except TimeoutError:
            return Failed(
                httpx.ReadTimeout(
                    f"no complete response in {self.limits.response_deadline:g}s "
                    "(response_deadline)"
                )
            )
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            return Failed(httpx.RemoteProtocolError(_protocol_text(exc)))
        except (OSError, httpx.TransportError) as exc:
            return Failed(
                exc if isinstance(exc, httpx.TransportError) else httpx.ReadError(str(exc))
            )
        finally:
            if not keep:
                writer.close()
        if keep:
            self._idle.setdefault(key, []).append((reader, writer))  # kept alive for the next GET
        log.debug("HTTP Request: GET %s %d", request.url, status)  # as httpx logs it
        return body.received(status, headers)

    async def _response(
        self, reader: asyncio.StreamReader, body: BodyReader, reused: bool
    ) -> tuple[int, dict[str, str], bool]:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as exc:
            if reused and not exc.partial:
                raise _Stale from None
            raise
        lines = head[:-4].decode("latin-1").split("\r\n")
        version, _, rest = lines[0].partition(" ")
        status = int(rest.split(" ", 1)[0])
        if not version.startswith("HTTP/1.") or not 100 <= status <= 599:
            raise ValueError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep:
                raise ValueError(f"malformed header line: {line[:80]!r}")
            name = name.strip().lower()
            headers[name] = (
                f"{headers[name]}, {value.strip()}" if name in headers else value.strip()
            )
        connection = headers.get("connection", "").lower()
        keep = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
        body.start(headers)
        encoding = headers.get("content-encoding", "identity").strip().lower()
        decoder = None if encoding in ("", "identity") else _Decoder(encoding)
        wire = 0

        def feed(raw: bytes) -> None:
            nonlocal wire
            wire += len(raw)
            if decoder is None:
                body.feed(raw, wire)
                return
            room = self.limits.max_decoded_bytes - body.size + 1
            for piece in decoder.pieces(raw, room):
                body.feed(piece, wire)

        if status < 200 or status in (204, 304):
            return status, headers, keep
        if "chunked" in headers.get("transfer-encoding", "").lower():
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass  # trailers
                    return status, headers, keep
                while size:
                    chunk = await reader.read(min(size, _READ))
                    if not chunk:
                        raise asyncio.IncompleteReadError(b"", size)
                    size -= len(chunk)
                    feed(chunk)
                await reader.readexactly(2)
        length = headers.get("content-length")
        if length is not None:
            remaining = int(length)
            expected = remaining
            while remaining:
                chunk = await reader.read(min(remaining, _READ))
                if not chunk:
                    raise ValueError(
                        "peer closed connection without sending complete message body "
                        f"(received {expected - remaining} bytes, expected {expected})"
                    )
                remaining -= len(chunk)
                feed(chunk)
            return status, headers, keep
        while chunk := await reader.read(_READ):  # no length: the body ends with the connection
            feed(chunk)
        return status, headers, False


@lru_cache(maxsize=64)
def _prepared(
    url: str, headers: tuple[tuple[str, str], ...], auth: tuple[str, str] | None
) -> tuple[tuple[str, str, int], str, str]:
    """What every GET to `url` with these headers shares, worked out once: the connection
    key (scheme, host, port), the request target, and the header lines with the blank line
    that ends them. ValueError for a URL this lane cannot use."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(url)
    port = parts.port or (443 if scheme == "https" else 80)
    target = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    host = parts.hostname if parts.port is None else f"{parts.hostname}:{parts.port}"
    if ":" in parts.hostname:  # IPv6 literal
        host = f"[{parts.hostname}]" + (f":{parts.port}" if parts.port else "")
    fields = {"Host": host, "Accept-Encoding": "gzip, deflate", **dict(headers)}
    if auth is not None:
        fields["Authorization"] = "Basic " + base64.b64encode(":".join(auth).encode()).decode()
    lines = "".join(f"{k}: {v}\r\n" for k, v in fields.items()) + "\r\n"
    return (scheme, parts.hostname, port), target, lines


def _query(params: Mapping[str, str | int]) -> str:
    """`urlencode(params)`, with integers (the walk's offset and limit) written directly."""
    return "&".join(
        f"{quote_plus(k)}={v}" if type(v) is int else f"{quote_plus(k)}={quote_plus(str(v))}"
        for k, v in params.items()
    )


def _protocol_text(exc: Any) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        return (
            f"peer closed connection without sending a complete response ({len(exc.partial)} bytes)"
        )
    if isinstance(exc, asyncio.LimitOverrunError):
        return "response headers too long"
    return str(exc)
