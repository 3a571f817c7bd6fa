"""The served sandbox answers every error as JSON in its family's shape, caps bodies, stays local.

Families: `/v2/parties*` ``{"error", "code"}``; `/v2/intents*`, `/_sandbox/*`, unknown paths
``{"code", "message", "validationErrors"}``; `/pix` an RFC 7807 problem; `/oauth/token`
``{"error", "error_description"}``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.cli import main
from recon.cli.sandbox import is_loopback
from recon.sandbox.asgi import MAX_BODY_BYTES
from recon.sandbox.compose import Sandbox, build_world
from recon.sandbox.serving import run_in_thread

PATHS = [
    "/v2/parties",
    "/v2/parties/00000000-0000-4000-8000-000000000000/wallet",
    "/v2/intents",
    "/v2/intents/onramp",
    "/v2/intents/offramp",
    "/v2/intents/00000000-0000-4000-8000-000000000000/approve-burn",
    "/_sandbox/clock",
    "/_sandbox/tick",
    "/_sandbox/faults",
    "/_sandbox/intents/00000000-0000-4000-8000-000000000000/transition",
    "/_sandbox/world/late-events",
    "/oauth/token",
    "/pix",
    "/openapi.json",
    "/nowhere",
]


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return build_world(seed=5, days=1, intents_per_day=20)


@pytest.fixture(scope="module")
def http(sandbox: Sandbox) -> Iterator[httpx.Client]:
    with (
        run_in_thread(sandbox.app()) as base_url,
        httpx.Client(base_url=base_url, headers={"x-api-key": sandbox.api_key}) as client,
    ):
        yield client


def assert_family_shape(path: str, resp: httpx.Response) -> dict[str, Any]:
    """The error body has exactly the shape of `path`'s family."""
    assert resp.status_code >= 400, resp.text
    body = resp.json()  # never plain text
    if path.startswith("/v2/parties"):
        assert set(body) == {"error", "code"}, body
    elif path == "/pix":
        assert resp.headers["content-type"].startswith("application/problem+json")
        assert {"type", "title", "status", "detail"} <= set(body), body
        assert body["status"] == resp.status_code
    elif path == "/oauth/token":
        assert set(body) == {"error", "error_description"}, body
    else:
        assert {"code", "message", "validationErrors"} <= set(body), body
    return body


def _deep(n: int = 30_000) -> bytes:  # under the body cap, far over the parser's depth
    return b"[" * n + b"]" * n


@pytest.mark.parametrize("path", ["/_sandbox/clock", "/_sandbox/faults"])
def test_deep_json_on_control_is_a_json_400(http: httpx.Client, path: str):
    for raw in (_deep(), b'{"advanceSeconds": ' + b"9" * 5000 + b"}"):
        resp = http.post(path, content=raw)
        assert resp.status_code == 400
        assert assert_family_shape(path, resp)["code"] == "invalid_request"


@pytest.mark.parametrize(
    "body",
    [
        {"advanceSeconds": 1e308},
        {"advanceSeconds": 10**400},
        {"advanceSeconds": -1},
        {"advanceSeconds": 400 * 366 * 86_400},
        {"set": "9999-12-31T23:59:59Z"},
        {"set": "0001-01-01T00:00:00Z"},
        {"set": "not a date"},
    ],
)
def test_clock_out_of_range_is_a_json_400(http: httpx.Client, sandbox: Sandbox, body: Any):
    before = sandbox.emulator.clock.now()
    raw = json.dumps(body).encode()
    resp = http.post("/_sandbox/clock", content=raw)
    assert resp.status_code == 400, resp.text
    assert assert_family_shape("/_sandbox/clock", resp)["code"] == "invalid_request"
    assert sandbox.emulator.clock.now() == before


def test_infinite_advance_is_a_json_400(http: httpx.Client):
    resp = http.post("/_sandbox/clock", content=b'{"advanceSeconds": Infinity}')
    assert resp.status_code == 400
    assert_family_shape("/_sandbox/clock", resp)


def test_fault_knobs_are_bounded(http: httpx.Client):
    resp = http.post("/_sandbox/faults", json={"latencyMs": 10**9})
    assert resp.status_code == 400
    assert "latency_ms must be at most" in resp.json()["message"]
    assert http.post("/_sandbox/faults", json={}).status_code == 200


@pytest.mark.parametrize(
    "value", ["Basic é", "Basic " + base64.b64encode("jo\u00e3o:sécret".encode()).decode(), "Basic"]
)
def test_odd_basic_headers_on_oauth_are_a_json_401(http: httpx.Client, value: str):
    resp = http.post(
        "/oauth/token",
        headers={"authorization": value.encode("latin-1", "replace")},
        content=b"grant_type=client_credentials",
    )
    assert resp.status_code == 401
    assert assert_family_shape("/oauth/token", resp)["error"] == "invalid_client"


def test_the_right_credentials_still_get_a_token(http: httpx.Client, sandbox: Sandbox):
    creds = sandbox.credentials
    resp = http.post(
        "/oauth/token",
        auth=(creds.client_id, creds.client_secret),
        data={"grant_type": "client_credentials"},
    )
    assert resp.status_code == 200 and resp.json()["token_type"] == "Bearer"


@pytest.mark.parametrize("path", PATHS)
def test_bodies_over_the_cap_are_a_413_in_the_family_shape(http: httpx.Client, path: str):
    big = b"{" + b" " * MAX_BODY_BYTES + b"}"
    resp = http.post(path, content=big, headers={"content-type": "application/json"})
    assert resp.status_code == 413
    body = assert_family_shape(path, resp)
    assert "payload_too_large" in json.dumps(body)


def test_a_chunked_body_over_the_cap_is_a_413_too(http: httpx.Client):
    def chunks() -> Iterator[bytes]:
        for _ in range(MAX_BODY_BYTES // 1024 + 2):
            yield b" " * 1024

    resp = http.post(
        "/v2/intents/onramp", content=chunks(), headers={"content-type": "application/json"}
    )
    assert resp.status_code == 413
    assert assert_family_shape("/v2/intents/onramp", resp)["code"] == "payload_too_large"


def test_a_body_at_the_cap_is_read(http: httpx.Client):
    raw = b"{" + b" " * (MAX_BODY_BYTES - 2) + b"}"
    resp = http.post("/v2/parties", content=raw, headers={"content-type": "application/json"})
    assert resp.status_code == 400  # read and validated: cpf is missing
    assert assert_family_shape("/v2/parties", resp)["code"] != "payload_too_large"


def test_unknown_paths_and_methods_are_json(http: httpx.Client):
    resp = http.get("/nowhere")
    assert resp.status_code == 404
    assert assert_family_shape("/nowhere", resp)["code"] == "not_found"
    resp = http.request("OPTIONS", "/v2/intents")
    assert resp.status_code == 405
    assert assert_family_shape("/v2/intents", resp)["code"] == "method_not_allowed"
    resp = http.delete("/pix")
    assert resp.status_code == 405
    assert_family_shape("/pix", resp)
    assert "allow" in resp.headers


def test_a_bug_is_a_json_500_not_plain_text(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch):
    def broken() -> list[str]:
        raise RuntimeError("boom")

    with (
        run_in_thread(sandbox.app()) as base_url,
        httpx.Client(base_url=base_url, headers={"x-api-key": sandbox.api_key}) as http,
    ):
        monkeypatch.setattr(sandbox.emulator, "tick", broken)
        resp = http.post("/_sandbox/tick")
    assert resp.status_code == 500
    assert assert_family_shape("/_sandbox/tick", resp) == {
        "code": "internal_error",
        "message": "internal error: RuntimeError",
        "validationErrors": [],
    }


_METHODS = st.sampled_from(["GET", "POST", "PATCH", "PUT", "DELETE"])
_BODIES = st.one_of(
    st.binary(max_size=300),
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=20),
        lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids),
        max_leaves=12,
    ).map(lambda v: json.dumps(v).encode()),
)
# what a client can put in a header: visible ASCII and Latin-1, no surrounding blanks
_HEADER_TEXT = st.text(
    st.characters(min_codepoint=32, max_codepoint=255, blacklist_characters="\x7f"),
    max_size=40,
).map(str.strip)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    path=st.sampled_from(PATHS),
    method=_METHODS,
    body=_BODIES,
    content_type=st.sampled_from(["application/json", "text/plain", "", "application/json; x=1"]),
    auth=_HEADER_TEXT,
    query=st.dictionaries(
        st.sampled_from(["limit", "offset", "status", "intentType", "inicio", "fim", "txid"]),
        st.text(max_size=12),
        max_size=3,
    ),
)
def test_malformed_requests_on_every_family_never_break_the_shape(
    http: httpx.Client,
    path: str,
    method: str,
    body: bytes,
    content_type: str,
    auth: str,
    query: dict[str, str],
):
    headers = {"content-type": content_type, "authorization": auth.encode("latin-1")}
    resp = http.request(method, path, content=body, headers=headers, params=query)
    assert resp.status_code != 500, resp.text
    if resp.status_code >= 400:
        assert_family_shape(path, resp)
    else:
        resp.json()  # successes are JSON too


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("127.8.9.1", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.0.10", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_loopback_hosts(host: str, local: bool):
    assert is_loopback(host) is local


def test_serve_refuses_a_remote_host_in_one_line(capsys: pytest.CaptureFixture[str]):
    assert main(["sandbox", "serve", "--host", "0.0.0.0", "--days", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("recon: error: --host 0.0.0.0")
    assert "--allow-remote" in err
