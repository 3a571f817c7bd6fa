"""What stands between the network and the review app's handlers: the Host check, the
session cookie's flags, and the sign-in throttle.

- **Hosts.** A request whose `Host` is not a loopback name (`127.0.0.1`, `localhost`,
  `::1`), the host of `[review] base_url`, or the address `recon review --host` listens on
  is refused with 400 before any handler runs: a web page that rebinds its own name to
  127.0.0.1 (DNS rebinding) reaches the app with its own name as the Host, and gets nothing.
- **Cookies.** The handlers leave the session cookie to write in `request.state`; this
  layer writes it, `Secure` when the request came over https (the `base_url` scheme, the
  server's own TLS, or `X-Forwarded-Proto: https` from a proxy trusted with
  `[review] trust_proxy = true`).
- **Throttle.** Failed sign-ins are counted per user name and per client address; past a few
  free tries each further one waits twice as long as the last (up to 15 minutes).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["COOKIE_STATE", "LOOPBACK_HOSTS", "Guard", "Throttle", "allowed_hosts", "host_name"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
COOKIE_STATE = "recon_session_cookie"  # request.state key: the cookie to set ("" = delete)


def host_name(value: str) -> str:
    """The name in a Host header (or a URL's authority), lower case, without the port or
    an IPv6 address's brackets; "" when it is not one."""
    try:
        return (urlsplit("//" + value.strip()).hostname or "").lower()
    except ValueError:
        return ""


def allowed_hosts(base_url: str = "", listen: Iterable[str] = ()) -> frozenset[str]:
    """The loopback names, `base_url`'s host, and the addresses listened on (not a
    wildcard such as 0.0.0.0: that is every address, and names none)."""
    hosts = set(LOOPBACK_HOSTS)
    if base_url:
        hosts.add(host_name(urlsplit(base_url).netloc))
    for address in listen:
        name = address.strip("[]").lower()
        if name and name not in ("0.0.0.0", "::"):
            hosts.add(name)
    hosts.discard("")
    return frozenset(hosts)


class Guard:
    """ASGI middleware: refuse a foreign Host; write the session cookie a handler left."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: frozenset[str],
        https: Callable[[Scope], bool],
        cookie: str,
        max_age: int,
    ):
        self.app, self.hosts, self.https = app, hosts, https
        self.cookie, self.max_age = cookie, max_age

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if host_name(Headers(scope=scope).get("host", "")) not in self.hosts:
            refused = PlainTextResponse(
                "Invalid Host header: this app answers only to its own names "
                "(loopback, or [review] base_url's host).",
                status_code=400,
            )
            await refused(scope, receive, send)
            return

        async def send_with_cookie(message: Message) -> None:
            state = scope.get("state") or {}
            if message["type"] == "http.response.start" and COOKIE_STATE in state:
                value = state[COOKIE_STATE]
                carrier = Response()
                if value:
                    carrier.set_cookie(
                        self.cookie, value, max_age=self.max_age, path="/", httponly=True,
                        samesite="strict", secure=self.https(scope),
                    )  # fmt: skip
                else:
                    carrier.delete_cookie(
                        self.cookie, path="/", httponly=True, samesite="strict",
                        secure=self.https(scope),
                    )  # fmt: skip
                cookies = [(k, v) for k, v in carrier.raw_headers if k == b"set-cookie"]
                message = {**message, "headers": [*message.get("headers", []), *cookies]}
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def is_https(scope: Scope, *, base_url: str, trust_proxy: bool) -> bool:
    """Whether the browser reached the app over https."""
    if base_url.lower().startswith("https://") or scope.get("scheme") == "https":
        return True
    if trust_proxy:
        proto = Headers(scope=scope).get("x-forwarded-proto", "")
        return proto.split(",")[0].strip().lower() == "https"
    return False


def client_address(request: Request, *, trust_proxy: bool) -> str:
    """The client's address: the peer, or behind a trusted proxy the address it saw (the
    last `X-Forwarded-For` entry: the one the proxy added, which the client cannot set)."""
    if trust_proxy:
        forwarded = request.headers.get("x-forwarded-for", "")
        if forwarded.strip():
            return forwarded.split(",")[-1].strip()
    return request.client.host if request.client else ""


@dataclass
class _Strikes:
    count: int
    last: float


class Throttle:
    """Failed sign-ins per user name and per client address (in this process's memory).

    The first `free_user` failures for a name (`free_address` for an address) cost nothing;
    after them each try waits `base * 2**(extra failures - 1)` seconds after the last, up to
    `cap`. A name's or address's count is forgotten `cap` seconds after its last failure;
    a successful sign-in clears the name's (not the address's: one good account does not
    buy an address more guesses).
    """

    MAX_KEYS = 10_000

    def __init__(
        self,
        *,
        free_user: int = 5,
        free_address: int = 20,
        base: float = 1.0,
        cap: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.free = {"user": free_user, "address": free_address}
        self.base, self.cap, self.clock = base, cap, clock
        self._strikes: dict[tuple[str, str], _Strikes] = {}

    def _keys(self, user: str, address: str) -> list[tuple[str, str]]:
        return [("user", user.lower()), ("address", address)]

    def wait(self, user: str, address: str) -> int:
        """Whole seconds before this name from this address may try again (0: now)."""
        now, longest = self.clock(), 0.0
        for key in self._keys(user, address):
            strikes = self._strikes.get(key)
            if strikes is None:
                continue
            if now - strikes.last > self.cap:
                del self._strikes[key]
                continue
            extra = strikes.count - self.free[key[0]]
            if extra > 0:
                delay = min(self.cap, self.base * 2 ** (extra - 1))
                longest = max(longest, strikes.last + delay - now)
        return math.ceil(longest) if longest > 0 else 0

    def failed(self, user: str, address: str) -> None:
        now = self.clock()
        if len(self._strikes) >= self.MAX_KEYS:  # a flood of names: keep the newest half
            keep = sorted(self._strikes.items(), key=lambda kv: kv[1].last)
            self._strikes = dict(keep[len(keep) // 2 :])
        for key in self._keys(user, address):
            strikes = self._strikes.setdefault(key, _Strikes(0, now))
            strikes.count, strikes.last = strikes.count + 1, now

    def succeeded(self, user: str) -> None:
        self._strikes.pop(("user", user.lower()), None)
