"""A hostile v2 list server on loopback: each mode breaks one promise a real API keeps.

Raw asyncio (no framework that would tidy the wire up for us), in a thread of its own,
bound to 127.0.0.1 only; every loop is bounded (requests served, bytes sent, seconds spent),
so a client that ignored a bound would fail its test, not hang the suite.
"""

from __future__ import annotations

import asyncio
import json
import struct
import threading
import zlib
from functools import cache
from typing import Any
from urllib.parse import parse_qs, urlsplit

from recon.testing.fake_api import make_intent

MODES = (
    "huge_total",
    "huge_body",
    "endless_body",
    "gzip_bomb",
    "trickle",
    "deep_json",
    "too_many_items",
    "wrong_content_type",
    "truncated",
    "id_twice",
)
MAX_REQUESTS = 200
MAX_STREAM_BYTES = 256 << 20  # what an endless body sends at most
TRICKLE_SECONDS = 2.0
TRICKLE_BYTES = 30


@cache
def gzip_bomb(decoded: int = 2 << 30) -> bytes:
    """``decoded`` zero bytes as one gzip member of ~1 KB per MiB (2 GiB → ~2 MB).

    Built from one fully flushed 1 MiB block repeated (deflate output is byte-aligned after
    a full flush, and identical once the window holds only zeros), so it takes a moment, not
    the 17 s of compressing 2 GiB; the trailer's CRC and size are the real ones."""
    mib = bytes(1 << 20)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    first = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(mib) + c.flush(zlib.Z_FULL_FLUSH)
    end = c.flush()[:-8]  # the final block; the trailer is rewritten below
    n = decoded >> 20
    crc = 0
    for _ in range(n):
        crc = zlib.crc32(mib, crc)
    trailer = struct.pack("<II", crc, decoded & 0xFFFFFFFF)
    return first + again * (n - 1) + end + trailer


def _page(offset: int, limit: int, *, items: int | None = None, total: int = 1) -> dict[str, Any]:
    count = min(limit, total - offset) if items is None else items
    return {
        "intents": [make_intent(offset + i) for i in range(max(0, count))],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


class HostileServer:
    """``with HostileServer("gzip_bomb") as server: ... server.url``."""

    def __init__(self, mode: str):
        if mode not in MODES:
            raise ValueError(mode)
        self.mode = mode
        self.requests = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.tasks: set[asyncio.Task[None]] = set()
        self.url = ""

    def __enter__(self) -> HostileServer:
        self.thread.start()
        started = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._accept, "127.0.0.1", 0), self.loop
        )
        self.server = started.result(10)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    def __exit__(self, *exc: object) -> None:
        async def stop() -> None:
            self.server.close()
            for task in list(self.tasks):
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)  # type: ignore[arg-type]
        try:
            while self.requests < MAX_REQUESTS:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                query = parse_qs(urlsplit(head.split(b" ", 2)[1].decode()).query)
                offset = int(query.get("offset", ["0"])[0])
                limit = int(query.get("limit", ["100"])[0])
                keep_open = await getattr(self, f"_{self.mode}")(writer, offset, limit)
                if not keep_open:
                    break
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        finally:
            writer.close()
            self.tasks.discard(task)  # type: ignore[arg-type]

    @staticmethod
    def _head(status: str, headers: dict[str, str]) -> bytes:
        lines = [
            f"HTTP/1.1 {status}",
            "Date: Sun, 01 Nov 2026 12:30:00 GMT",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        return ("\r\n".join(lines) + "\r\n\r\n").encode()

    async def _send(
        self,
        writer: asyncio.StreamWriter,
        body: bytes,
        content_type: str = "application/json",
        **headers: str,
    ) -> bool:
        fields = {"Content-Type": content_type, "Content-Length": str(len(body)), **headers}
        writer.write(self._head("200 OK", fields) + body)
        await writer.drain()
        return True

    async def _huge_total(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        # 10^12 intents claimed, a full page every time: a walk sized by `total` never ends
        page = _page(offset, limit, items=limit, total=10**12)
        return await self._send(writer, json.dumps(page).encode())

    async def _huge_body(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        # declares 2 GiB, then streams filler until the client hangs up (bounded)
        head = {"Content-Type": "application/json", "Content-Length": str(2 << 30)}
        writer.write(self._head("200 OK", head) + b'{"intents": [')
        await self._stream(writer, b" " * 65536)
        return False

    async def _endless_body(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        # no length at all: the body ends when the connection does (never, unless bounded)
        head = {"Content-Type": "application/json", "Connection": "close"}
        writer.write(self._head("200 OK", head) + b'{"intents": [')
        await self._stream(writer, b" " * 65536)
        return False

    @staticmethod
    async def _stream(writer: asyncio.StreamWriter, chunk: bytes) -> None:
        for _ in range(MAX_STREAM_BYTES // len(chunk)):
            writer.write(chunk)
            await writer.drain()

    async def _gzip_bomb(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        return await self._send(writer, gzip_bomb(), **{"Content-Encoding": "gzip"})

    async def _trickle(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        body = json.dumps(_page(offset, limit, total=50)).encode()
        head = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        writer.write(self._head("200 OK", head))
        for byte in body[:TRICKLE_BYTES]:  # a byte every 2 s: no read timeout ever fires
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(TRICKLE_SECONDS)
        return False

    async def _deep_json(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        depth = 200_000
        body = b'{"intents": [' + b"[" * depth + b"]" * depth
        body += f'], "total": 1, "limit": {limit}, "offset": {offset}}}'.encode()
        return await self._send(writer, body)

    async def _too_many_items(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        page = _page(offset, limit, items=limit + 5, total=10_000)
        return await self._send(writer, json.dumps(page).encode())

    async def _wrong_content_type(
        self, writer: asyncio.StreamWriter, offset: int, limit: int
    ) -> bool:
        body = b"<html><body><form action=/login>Sign in</form></body></html>"
        return await self._send(writer, body, content_type="text/html; charset=utf-8")

    async def _id_twice(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        # one item names its id twice, with two values: readers disagree on which is its id
        page = _page(offset, limit, total=50)
        text = json.dumps(page, separators=(",", ":"))
        first = page["intents"][0]["id"]
        other = "ffffffff" + first[8:]
        text = text.replace(f'{{"id":"{first}"', f'{{"id":"{first}","id":"{other}"', 1)
        return await self._send(writer, text.encode())

    async def _truncated(self, writer: asyncio.StreamWriter, offset: int, limit: int) -> bool:
        body = json.dumps(_page(offset, limit, total=50)).encode()
        head = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        writer.write(self._head("200 OK", head) + body[: len(body) // 3])
        await writer.drain()
        return False
