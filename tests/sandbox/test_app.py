"""The Starlette app: Date header, /openapi.json, /_sandbox control, wire faults, loopback."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from recon.sandbox import asgi as app_module
from recon.sandbox.asgi import create_app
from recon.sandbox.emulator import Emulator
from recon.sandbox.serving import run_in_thread
from recon.sandbox.validation import make_cpf, make_wallet
from recon.sandbox.wire_faults import WireFaults

KEY_A, KEY_B = "key-org-a", "key-org-b"


Open = Callable[..., httpx.Client]


@pytest.fixture
def serve() -> Iterator[Open]:
    """serve(app, key=...) → an httpx client of `app` served on loopback (closed at teardown).

    Starlette's TestClient is deprecated with httpx in this Starlette version, so the app is
    tested the way it is used: uvicorn in a thread.
    """
    with ExitStack() as stack:

        def open_(app: Any, key: str | None = KEY_A) -> httpx.Client:
            base_url = stack.enter_context(run_in_thread(app))
            headers = {"x-api-key": key} if key is not None else {}
            return stack.enter_context(httpx.Client(base_url=base_url, headers=headers))

        yield open_


@pytest.fixture
def tc(emu: Emulator, serve: Open) -> httpx.Client:
    return serve(create_app(emu))


def _seed(c: Any, n: int = 3) -> list[dict[str, Any]]:
    p = c.post("/v2/parties", json={"cpf": make_cpf(42), "displayName": "Ze"}).json()
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(42)})
    body = {"amountCents": 100, "destinationWallet": make_wallet(42), "chainId": "solana"}
    return [c.post("/v2/intents/onramp", json=body).json() for _ in range(n)]


def test_v2_through_the_app_with_the_emulator_date(emu: Emulator, tc: httpx.Client) -> None:
    intents = _seed(tc)
    r = tc.get("/v2/intents")
    assert r.status_code == 200 and r.json()["total"] == 3
    assert r.headers["date"] == "Sun, 01 Nov 2026 12:00:00 GMT"
    assert r.headers.get_list("date") == ["Sun, 01 Nov 2026 12:00:00 GMT"]
    assert tc.get(f"/v2/intents/{intents[0]['id']}").json() == intents[0]
    r = tc.get("/v2/intents", headers={"x-api-key": "nope"})
    assert r.status_code == 401 and r.json()["code"] == "unauthorized"


def test_openapi_document(tc: httpx.Client, monkeypatch, tmp_path: Path) -> None:
    class Files:
        def __init__(self, root: Path):
            self.root = root

        def joinpath(self, name: str) -> Path:
            return self.root / name

    monkeypatch.setattr(app_module.importlib.resources, "files", lambda _pkg: Files(tmp_path))
    r = tc.get("/openapi.json")
    assert r.status_code == 503 and r.json()["code"] == "openapi_unavailable"
    (tmp_path / "openapi.json").write_text('{"openapi": "3.1.0"}')
    r = tc.get("/openapi.json", headers={"x-api-key": ""})  # public: no key needed
    assert r.status_code == 200 and r.json() == {"openapi": "3.1.0"}


def test_shipped_openapi_is_served_when_present(emu: Emulator, serve: Open) -> None:
    import importlib.resources

    doc = importlib.resources.files("recon.api").joinpath("openapi.json")
    r = serve(create_app(emu), None).get("/openapi.json")
    if doc.is_file():
        assert r.status_code == 200 and r.json()["openapi"].startswith("3.1")
    else:
        assert r.status_code == 503


def test_clock_control(emu: Emulator, tc: httpx.Client) -> None:
    assert tc.get("/_sandbox/clock").json() == {"now": "2026-11-01T12:00:00.000Z", "moved": []}
    intents = _seed(tc, 2)
    r = tc.post("/_sandbox/clock", json={"advanceSeconds": 1800})
    assert r.json()["now"] == "2026-11-01T12:30:00.000Z"
    assert sorted(r.json()["moved"]) == sorted(i["id"] for i in intents)  # expired by the tick
    assert r.headers["date"] == "Sun, 01 Nov 2026 12:30:00 GMT"
    r = tc.post("/_sandbox/clock", json={"set": "2026-12-24T10:00:00Z"})
    assert r.json()["now"] == "2026-12-24T10:00:00.000Z"
    assert emu.clock.now().isoformat() == "2026-12-24T10:00:00+00:00"
    for bad in (
        {},
        {"advanceSeconds": -1},
        {"advanceSeconds": "5"},
        {"set": "2026-12-24"},
        {"set": 5},
    ):
        r = tc.post("/_sandbox/clock", json=bad)
        assert r.status_code == 400 and r.json()["code"] == "invalid_request", bad
    r = tc.post("/_sandbox/clock", content=b"{oops", headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert tc.post("/_sandbox/tick").json() == {"moved": []}


def test_control_needs_a_key(emu: Emulator, serve: Open) -> None:
    c = serve(create_app(emu), None)
    for method, path in [
        ("GET", "/_sandbox/clock"),
        ("POST", "/_sandbox/tick"),
        ("GET", "/_sandbox/faults"),
        ("POST", f"/_sandbox/intents/{uuid.uuid4()}/transition"),
    ]:
        r = c.request(method, path, headers={"x-api-key": "wrong"})
        assert r.status_code == 401 and r.json()["code"] == "unauthorized"


def test_transition_control(emu: Emulator, tc: httpx.Client, serve: Open) -> None:
    i = _seed(tc, 1)[0]
    r = tc.post(f"/_sandbox/intents/{i['id']}/transition", json={"status": "fiat_received"})
    assert r.status_code == 200 and r.json()["status"] == "fiat_received"
    r = tc.post(f"/_sandbox/intents/{i['id']}/transition", json={"status": "completed"})
    assert r.status_code == 400 and "cannot go from" in r.json()["message"]
    r = tc.post(
        f"/_sandbox/intents/{i['id']}/transition",
        json={"status": "completed", "force": True, "reason": "planted"},
    )
    assert r.json()["status"] == "completed" and r.json()["statusReason"] == "planted"
    for body in (
        {},
        {"status": 1},
        {"status": "failed", "force": "yes"},
        {"status": "x", "reason": 3},
    ):
        assert tc.post(f"/_sandbox/intents/{i['id']}/transition", json=body).status_code == 400
    other = serve(create_app(emu), KEY_B)
    r = other.post(f"/_sandbox/intents/{i['id']}/transition", json={"status": "failed"})
    assert r.status_code == 404  # another instance's intent is never touched or shown
    assert (
        tc.post(
            f"/_sandbox/intents/{uuid.uuid4()}/transition", json={"status": "failed"}
        ).status_code
        == 404
    )


def test_approval_helper(emu: Emulator, tc: httpx.Client, serve: Open) -> None:
    p = tc.post(
        "/v2/parties", json={"cpf": make_cpf(8), "displayName": "Hand", "email": "h@example.com"}
    ).json()
    tc.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(8)})
    body = {"amountCents": 900, "destinationAddress": "h@example.com", "chainId": "solana"}
    off = tc.post("/v2/intents/offramp", json=body).json()
    approval = tc.get(f"/_sandbox/intents/{off['id']}/approval").json()
    assert set(approval) == {"txSignature", "tokenHolder"}
    r = tc.post(f"/v2/intents/{off['id']}/approve-burn", json=approval)
    assert r.status_code == 200 and r.json() == {"status": "burn_approved"}
    other = serve(create_app(emu), KEY_B)
    assert other.get(f"/_sandbox/intents/{off['id']}/approval").status_code == 404


def test_faults_endpoint(tc: httpx.Client) -> None:
    assert tc.get("/_sandbox/faults").json() == WireFaults().to_dict()
    r = tc.post("/_sandbox/faults", json={"latencyMs": 5, "limit_cap": 7})
    assert r.json()["latency_ms"] == 5 and r.json()["limit_cap"] == 7
    # a POST replaces the whole set
    assert tc.post("/_sandbox/faults", json={}).json() == WireFaults().to_dict()
    for bad in ({"rate_429": 2}, {"nope": 1}, {"limit_cap": 0}, {"latency_ms": -1}, {"seed": True}):
        assert tc.post("/_sandbox/faults", json=bad).status_code == 400, bad


def test_rate_429_with_retry_after(emu: Emulator, serve: Open) -> None:
    c = serve(create_app(emu, faults=WireFaults(rate_429=1.0, retry_after=7)), None)
    r = c.get("/v2/intents", headers={"x-api-key": KEY_A})
    assert r.status_code == 429 and r.headers["retry-after"] == "7"
    assert r.json()["code"] == "rate_limited" and "validationErrors" in r.json()
    r = c.post("/v2/parties", json={}, headers={"x-api-key": KEY_A})
    assert r.status_code == 429 and set(r.json()) == {"error", "code"}  # parties shape
    # faults apply to /v2 only
    assert c.get("/_sandbox/clock", headers={"x-api-key": KEY_A}).status_code == 200


def test_rate_5xx_and_seeded_rolls(emu: Emulator, serve: Open) -> None:
    c = serve(create_app(emu, faults=WireFaults(rate_5xx=1.0)), None)
    r = c.get("/v2/intents", headers={"x-api-key": KEY_A})
    assert r.status_code in (500, 502, 503) and r.json()["code"] == "internal_error"

    def statuses(seed: int) -> list[int]:
        app = create_app(emu, faults=WireFaults(rate_5xx=0.3, rate_429=0.3, seed=seed))
        cl = serve(app, KEY_A)
        return [cl.get("/v2/intents").status_code for _ in range(16)]

    first = statuses(1)
    assert first == statuses(1) and {200, 429} <= set(first) and len(set(first)) >= 3


def test_latency(emu: Emulator, serve: Open) -> None:
    c = serve(create_app(emu, faults=WireFaults(latency_ms=150)), KEY_A)
    t0 = time.perf_counter()
    assert c.get("/v2/intents").status_code == 200
    assert time.perf_counter() - t0 >= 0.15


def test_limit_cap(emu: Emulator, serve: Open) -> None:
    emu.bulk_load(40)
    c = serve(create_app(emu, faults=WireFaults(limit_cap=15)), KEY_A)
    for params, applied in [({}, 15), ({"limit": "100"}, 15), ({"limit": "10"}, 10)]:
        page = c.get("/v2/intents", params=params).json()
        assert page["limit"] == applied and len(page["intents"]) == applied
    # the cap never turns an out-of-spec limit into a valid one
    assert c.get("/v2/intents", params={"limit": "500"}).status_code == 400
    assert c.get("/v2/intents", params={"limit": "abc"}).status_code == 400


def test_drift_over_http(emu: Emulator, serve: Open) -> None:
    emu.bulk_load(300, days=0.01)
    app = create_app(
        emu, faults=WireFaults(drift_inserts_per_list=2, drift_status_changes_per_list=1)
    )
    c = serve(app, KEY_A)
    first = c.get("/v2/intents", params={"limit": 10}).json()
    second = c.get("/v2/intents", params={"limit": 10}).json()
    assert first["total"] == 302 and second["total"] == 304
    assert second["intents"][2]["id"] == first["intents"][0]["id"]
    assert len(emu.drift_log) == 2 and all(len(e["changed"]) == 1 for e in emu.drift_log)
    # gets do not drift
    truth = emu.all_intents()
    assert c.get(f"/v2/intents/{truth[0]['id']}").status_code == 200
    assert emu.intent_count() == 304
    # drift can be switched off per test; the ground truth agrees with the served state
    c.post("/_sandbox/faults", json={})
    page = c.get("/v2/intents", params={"limit": 10}).json()
    assert page["total"] == 304 and page["intents"] == truth[:10]


def test_extra_routes(emu: Emulator, serve: Open) -> None:
    route = Route("/pix", lambda r: PlainTextResponse("pix here"))
    c = serve(create_app(emu, extra_routes=[route]), None)
    assert c.get("/pix").text == "pix here"


def test_run_in_thread_serves_on_loopback(emu: Emulator) -> None:
    app = create_app(emu)
    with run_in_thread(app) as base_url:
        assert base_url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=base_url, headers={"x-api-key": KEY_A}) as c:
            intents = _seed(c, 2)
            r = c.get("/v2/intents")
            assert r.json()["total"] == 2 and r.headers.get_list("date") == [emu.http_date()]
            assert c.get(f"/v2/intents/{intents[0]['id']}").json() == intents[0]
    with pytest.raises(httpx.ConnectError):
        httpx.get(base_url + "/v2/intents", timeout=1)


def test_faults_are_seeded_per_instance() -> None:
    a, b = WireFaults(rate_429=0.5, seed=3), WireFaults(rate_429=0.5, seed=3)
    assert [a.roll(0.5) for _ in range(20)] == [b.roll(0.5) for _ in range(20)]
    assert WireFaults.from_dict({"driftInsertsPerList": 2}).drift_inserts_per_list == 2
    assert not WireFaults().roll(0.0)
    assert isinstance(a.rng, random.Random)


def test_loopback_requests_do_not_wait_on_nagle(emu: Emulator, serve: Open) -> None:
    # without TCP_NODELAY on accepted sockets every response stalls ~40 ms (delayed ACK)
    c = serve(create_app(emu))
    c.get("/v2/intents")
    t0 = time.perf_counter()
    for _ in range(20):
        c.get("/v2/intents")
    assert time.perf_counter() - t0 < 0.6


def test_repeated_query_parameter_last_wins_over_http(tc: httpx.Client) -> None:
    r = tc.get("/v2/intents?limit=500&limit=5")
    assert r.status_code == 200 and r.json()["limit"] == 5


_PATH_CHARS = "/aZ09-._~!$&'()*+,;=:@%?#\\\t\r\n é☃"


@settings(max_examples=300, deadline=None)
@given(
    path=st.text(alphabet=_PATH_CHARS, max_size=20).map(lambda p: "/" + p),
    query=st.lists(
        st.tuples(st.sampled_from(["limit", "offset", "a", "", "é"]), st.text(max_size=5)),
        max_size=4,
    ).map(lambda pairs: urlencode(pairs).encode() + b"&x&=1&%zz=%"),
    headers=st.lists(
        st.tuples(st.sampled_from([b"x-api-key", b"host", b"a"]), st.binary(max_size=5)),
        max_size=5,
    ),
)
def test_the_v2_handler_reads_a_request_as_starlette_does(
    path: str, query: bytes, headers: list[tuple[bytes, bytes]]
) -> None:
    # the v2 handler reads scope fields itself (building URL/QueryParams/Headers cost ~25 us
    # a request); what it reads must be what Starlette's objects give
    scope = {
        "type": "http",
        "method": "GET",
        "scheme": "http",
        "server": ("127.0.0.1", 8000),
        "path": path,
        "query_string": query,
        "headers": headers,
    }
    request = Request(scope)
    assert app_module._url_path(request) == request.url.path
    q, h = app_module._query_and_headers(scope)
    assert q == {k: request.query_params[k] for k in request.query_params}
    assert h == dict(request.headers)


def test_the_date_header_follows_the_clock_to_the_second(emu: Emulator) -> None:
    from email.utils import format_datetime

    for step in (0, 0.4, 0.6, 0.999, 0.001, 59, 86_400 * 400):
        emu.clock.advance(step)
        assert emu.http_date() == format_datetime(emu.clock.now(), usegmt=True)
