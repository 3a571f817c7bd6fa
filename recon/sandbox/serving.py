"""Running the sandbox's ASGI app under uvicorn: in a background thread (tests, demos) or forever."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import uvicorn

if TYPE_CHECKING:
    from recon.sandbox.compose import Sandbox
    from recon.sandbox.wire_faults import WireFaults

__all__ = ["run_in_thread", "serve", "serve_forever"]


def _config(app: Any, host: str, port: int) -> uvicorn.Config:
    # date_header=False: the app sets `Date` from the emulator clock (server time), and uvicorn
    # would otherwise add a second one from the real clock.
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        lifespan="off",
        ws="none",
        date_header=False,
        server_header=False,
    )


@contextmanager
def run_in_thread(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve `app` on host:port (0 = a free port) in a thread; yields the base URL.

    The server stops and the thread is joined when the block exits.
    """
    # proto=IPPROTO_TCP: asyncio only sets TCP_NODELAY on accepted sockets whose proto says TCP;
    # without it every response waits ~40 ms on Nagle + delayed ACK.
    family, _, _, _, addr = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(addr)
    actual_port = sock.getsockname()[1]
    server = uvicorn.Server(_config(app, host, actual_port))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name="recon-sandbox", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the sandbox server did not start")
        time.sleep(0.01)
    try:
        shown = f"[{host}]" if family == socket.AF_INET6 else host
        yield f"http://{shown}:{actual_port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def serve_forever(app: Any, host: str = "127.0.0.1", port: int = 8700) -> None:
    """Serve `app` in the foreground until interrupted (Ctrl-C)."""
    uvicorn.Server(_config(app, host, port)).run()


def serve(
    sandbox: Sandbox,
    *,
    host: str = "127.0.0.1",
    port: int = 8700,
    faults: WireFaults | None = None,
    out: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Serve until interrupted (or `stop` is set), printing the banner once listening."""
    emit = out or (lambda line: print(line, flush=True))
    with sandbox.running(host, port, faults) as base_url:
        for line in sandbox.banner(base_url):
            emit(line)
        print(sandbox.summary(), file=sys.stderr, flush=True)
        (stop or threading.Event()).wait()
