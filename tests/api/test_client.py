"""Client unit tests over httpx.MockTransport: every method, errors, retries, redaction."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import uuid
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.api import AsyncClient, Client, IntentStatus, RetryPolicy
from recon.errors import (
    ApiConnectionError,
    ApiError,
    ApiStatusError,
    ConfigError,
    Conflict,
    NotFound,
    RateLimited,
    ReconError,
    ServerError,
    Unauthorized,
    UsageError,
    ValidationError,
)

from ._payloads import (
    API_KEY,
    INTENT_ID,
    OFFRAMP_ID,
    PARTY_ID,
    WALLET,
    FakeTime,
    offramp_json,
    onramp_json,
    page_json,
    party_json,
)

Reply = httpx.Response | Exception
BASE = "http://api.test"


class Server:
    """A scripted server: replies in order (the last one repeats); records every request."""

    def __init__(self, *replies: Reply | Callable[[httpx.Request], Reply]):
        self.replies = list(replies)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        reply = self.replies[min(len(self.requests) - 1, len(self.replies) - 1)]
        if callable(reply) and not isinstance(reply, httpx.Response):
            reply = reply(request)
        if isinstance(reply, Exception):
            raise reply
        return reply

    @property
    def bodies(self) -> list[Any]:
        return [json.loads(r.content) if r.content else None for r in self.requests]


def make(server: Server, t: FakeTime | None = None, **kw: Any) -> tuple[Client, FakeTime]:
    t = t or FakeTime()
    kw.setdefault("retry", RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=8, budget=60))
    client = Client(
        BASE,
        API_KEY,
        transport=httpx.MockTransport(server),
        clock=t.clock,
        sleep=t.sleep,
        rng=random.Random(0),
        **kw,
    )
    return client, t


def ok(body: Any, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(status, json=body, headers=headers)


def intents_error(status: int, code: str, message: str = "failed", **extra: Any) -> httpx.Response:
    return httpx.Response(status, json={"code": code, "message": message, **extra})


def parties_error(status: int, error: str, code: str | None = None) -> httpx.Response:
    body = {"error": error} | ({"code": code} if code else {})
    return httpx.Response(status, json=body)


# --------------------------------------------------------------------------- every method


def test_create_party_sends_camel_case_body_and_key_header() -> None:
    server = Server(ok(party_json(externalRef="crm-1"), 201))
    client, _ = make(server)
    party = client.create_party(
        cpf="52998224725", display_name="Ana Souza", external_ref="crm-1", email="a@b.co"
    )
    request = server.requests[0]
    assert (request.method, request.url.path) == ("POST", "/v2/parties")
    assert request.headers["x-api-key"] == API_KEY
    assert request.headers["content-type"] == "application/json"
    assert "idempotency-key" not in request.headers
    assert server.bodies[0] == {
        "cpf": "52998224725",
        "displayName": "Ana Souza",
        "partyType": "person",
        "countryCode": "BR",
        "externalRef": "crm-1",
        "email": "a@b.co",
    }
    assert party.external_ref == "crm-1"


def test_get_party_and_bind_wallet() -> None:
    bound = party_json(profile=dict(party_json()["profile"], solanaWallet=WALLET))
    server = Server(ok(party_json()), ok(bound))
    client, _ = make(server)
    assert client.get_party(PARTY_ID).id == PARTY_ID
    party = client.bind_wallet(PARTY_ID, WALLET)
    assert party.profile.solana_wallet == WALLET
    get, patch = server.requests
    assert (get.method, get.url.path) == ("GET", f"/v2/parties/{PARTY_ID}")
    assert (patch.method, patch.url.path) == ("PATCH", f"/v2/parties/{PARTY_ID}/wallet")
    assert server.bodies[1] == {"solanaWallet": WALLET}  # exactly one field, no envelope


def test_path_ids_are_quoted_so_they_cannot_reach_another_endpoint() -> None:
    server = Server(parties_error(404, "not found"))
    client, _ = make(server)
    with pytest.raises(NotFound):
        client.get_party("../intents")
    assert server.requests[0].url.raw_path == b"/v2/parties/..%2Fintents"


def test_create_onramp_generates_a_uuid_idempotency_key() -> None:
    server = Server(ok(onramp_json(), 201))
    client, _ = make(server)
    intent = client.create_onramp(
        amount_cents=15000, destination_wallet=WALLET, client_reference="order-1"
    )
    request = server.requests[0]
    assert request.url.path == "/v2/intents/onramp"
    assert uuid.UUID(request.headers["idempotency-key"]).version == 4
    assert server.bodies[0] == {
        "amountCents": 15000,
        "destinationWallet": WALLET,
        "chainId": "solana",
        "clientReference": "order-1",
    }
    assert intent.pix_info is not None and intent.amount_cents == 15000


def test_each_create_gets_its_own_key_unless_one_is_given() -> None:
    server = Server(ok(offramp_json(), 201))
    client, _ = make(server)
    client.create_offramp(amount_cents=20000, destination_address="ana@example.com")
    client.create_offramp(amount_cents=20000, destination_address="ana@example.com")
    key = str(uuid.uuid4())
    client.create_offramp(
        amount_cents=1, destination_address="x", chain_id="polygon", idempotency_key=key
    )
    keys = [r.headers["idempotency-key"] for r in server.requests]
    assert keys[0] != keys[1] and keys[2] == key
    assert server.requests[0].url.path == "/v2/intents/offramp"
    assert server.bodies[0] == {
        "amountCents": 20000,
        "destinationAddress": "ana@example.com",
        "chainId": "solana",
    }
    assert server.bodies[2]["chainId"] == "polygon"


def test_get_intent_and_approve_burn() -> None:
    server = Server(ok(onramp_json()), ok({"status": "burn_approved"}))
    client, _ = make(server)
    assert client.get_intent(INTENT_ID).status is IntentStatus.AWAITING_FIAT_PAYMENT
    holder = "Gh9ZwEmdLJ8DscKNTkTqPbNwLNNBjuSzaG9Vp2KGtKJr"
    assert client.approve_burn(OFFRAMP_ID, tx_signature="5sig", token_holder=holder) == (
        "burn_approved"
    )
    approve = server.requests[1]
    assert approve.url.path == f"/v2/intents/{OFFRAMP_ID}/approve-burn"
    assert "idempotency-key" not in approve.headers  # the signature is the dedup key
    assert server.bodies[1] == {"txSignature": "5sig", "tokenHolder": holder}


def test_list_intents_sends_filters_and_parses_the_page() -> None:
    server = Server(
        ok(
            page_json([offramp_json()], total=7, limit=1, offset=3),
            date="Sun, 01 Nov 2026 12:00:00 GMT",
        )
    )
    client, _ = make(server)
    page = client.list_intents(intent_type="offramp", status="completed", limit=1, offset=3)
    params = dict(server.requests[0].url.params)
    assert params == {"intentType": "offramp", "status": "completed", "limit": "1", "offset": "3"}
    assert (page.total, page.limit, page.offset, len(page.intents)) == (7, 1, 3, 1)


def test_list_intents_raw_returns_the_body_and_server_date() -> None:
    body = page_json([onramp_json(extraField="kept")], total=1)
    server = Server(ok(body, date="Sun, 01 Nov 2026 12:00:00 GMT"))
    client, _ = make(server)
    raw = client.list_intents_raw()
    assert raw.body == body and raw.body["intents"][0]["extraField"] == "kept"
    assert raw.date == "Sun, 01 Nov 2026 12:00:00 GMT"
    assert (
        raw.server_time is not None and raw.server_time.isoformat() == "2026-11-01T12:00:00+00:00"
    )
    body_, date = raw  # also a plain tuple
    assert body_ is raw.body and date == raw.date
    assert dict(server.requests[0].url.params) == {
        "intentType": "all",
        "status": "all",
        "limit": "50",
        "offset": "0",
    }


def test_list_raw_rejects_a_body_without_the_envelope() -> None:
    client, _ = make(Server(ok({"items": [], "total": 0})))
    with pytest.raises(ApiError, match="intents"):
        client.list_intents_raw()


def test_iter_intents_walks_every_page_and_skips_ids_shifted_onto_the_next_page() -> None:
    items = [onramp_json(id=str(uuid.UUID(int=i))) for i in range(5)]

    def pages(request: httpx.Request) -> httpx.Response:
        offset, limit = int(request.url.params["offset"]), int(request.url.params["limit"])
        # The second page starts one item early, as if a new intent had been inserted.
        start = offset - 1 if offset else 0
        return ok(page_json(items[start : start + limit], total=5, limit=limit, offset=offset))

    server = Server(pages)
    client, _ = make(server)
    ids = [i.id for i in client.iter_intents(page_size=2)]
    assert ids == [i["id"] for i in items]
    assert [r.url.params["offset"] for r in server.requests] == ["0", "2", "4"]


def test_iter_intents_stops_on_an_empty_page() -> None:
    server = Server(ok(page_json([], total=10)))
    client, _ = make(server)
    assert list(client.iter_intents()) == []
    assert len(server.requests) == 1


# --------------------------------------------------------------------------- error mapping
# Spec table 7.3, one row each, in the endpoint's own error shape.

TABLE_7_3 = [
    ("create_party", parties_error(400, "cpf must be 11 or 14 digits"), ValidationError),
    ("create_party", parties_error(409, "party exists", "party_exists"), Conflict),
    ("get_party", parties_error(404, "party not found"), NotFound),
    ("bind_wallet", parties_error(400, "solanaWallet is required"), ValidationError),
    ("bind_wallet", parties_error(404, "party not found"), NotFound),
    ("create_onramp", intents_error(400, "validation_error"), ValidationError),
    ("create_onramp", intents_error(409, "idempotency_conflict"), Conflict),
    ("create_offramp", intents_error(400, "validation_error"), ValidationError),
    ("create_offramp", intents_error(409, "idempotency_conflict"), Conflict),
    ("get_intent", intents_error(404, "not_found"), NotFound),
    ("approve_burn", intents_error(400, "invalid_signature"), ValidationError),
    ("approve_burn", intents_error(404, "not_found"), NotFound),
]

CALLS: dict[str, Callable[[Client], Any]] = {
    "create_party": lambda c: c.create_party(cpf="52998224725", display_name="Ana"),
    "get_party": lambda c: c.get_party(PARTY_ID),
    "bind_wallet": lambda c: c.bind_wallet(PARTY_ID, WALLET),
    "create_onramp": lambda c: c.create_onramp(amount_cents=1, destination_wallet=WALLET),
    "create_offramp": lambda c: c.create_offramp(amount_cents=1, destination_address="k"),
    "get_intent": lambda c: c.get_intent(INTENT_ID),
    "list_intents": lambda c: c.list_intents(),
    "approve_burn": lambda c: c.approve_burn(INTENT_ID, tx_signature="s", token_holder="h" * 32),
}


@pytest.mark.parametrize(("method", "response", "error"), TABLE_7_3)
def test_table_7_3_statuses_map_to_the_error_tree(
    method: str, response: httpx.Response, error: type[ApiStatusError]
) -> None:
    server = Server(response)
    client, _ = make(server)
    with pytest.raises(error) as info:
        CALLS[method](client)
    exc = info.value
    body = json.loads(response.content)
    assert exc.status_code == response.status_code
    assert exc.message == body.get("message", body.get("error"))
    assert exc.code == body.get("code")
    assert exc.body == body
    assert exc.request is not None and exc.request.startswith(server.requests[0].method)
    assert isinstance(exc, ApiError) and isinstance(exc, ReconError) and exc.exit_code == 3
    assert len(server.requests) == 1  # 4xx are never retried


def test_intents_shape_keeps_validation_errors_and_details_and_names_fields() -> None:
    response = intents_error(
        400,
        "validation_error",
        "Request validation failed",
        validationErrors=[
            {"field": "amountCents", "message": "must be greater than 0"},
            {"field": "chainId", "message": "must be solana or polygon"},
            "junk",
        ],
        details={"hint": "see docs"},
    )
    client, _ = make(Server(response))
    with pytest.raises(ValidationError) as info:
        client.create_onramp(amount_cents=0, destination_wallet=WALLET, chain_id="eth")
    exc = info.value
    assert exc.validation_errors == [
        {"field": "amountCents", "message": "must be greater than 0"},
        {"field": "chainId", "message": "must be solana or polygon"},
    ]
    assert exc.details == {"hint": "see docs"}
    assert "amountCents: must be greater than 0" in str(exc)
    assert "chainId" in str(exc) and str(exc).startswith("400 validation_error:")


def test_401_in_the_intents_shape_even_on_parties_endpoints() -> None:
    client, _ = make(Server(intents_error(401, "unauthorized", "missing or invalid API key")))
    with pytest.raises(Unauthorized) as info:
        client.get_party(PARTY_ID)
    assert info.value.code == "unauthorized"


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (httpx.Response(403, text="<html>Forbidden</html>"), "<html>Forbidden</html>"),
        (httpx.Response(418, json=["not", "an", "object"]), '["not","an","object"]'),
        (httpx.Response(418, text=""), "I'm a teapot"),
        (httpx.Response(405, json={"detail": "no"}), '{"detail":"no"}'),
    ],
)
def test_other_statuses_and_odd_bodies_still_give_a_readable_api_status_error(
    response: httpx.Response, message: str
) -> None:
    client, _ = make(Server(response))
    with pytest.raises(ApiStatusError) as info:
        client.get_intent(INTENT_ID)
    assert type(info.value) is ApiStatusError
    assert info.value.message == message


def test_a_2xx_that_is_not_json_is_a_clear_api_error() -> None:
    client, _ = make(Server(httpx.Response(200, text="<html>proxy</html>")))
    with pytest.raises(ApiError, match="not JSON"):
        client.get_intent(INTENT_ID)


def test_a_malformed_success_body_names_the_field() -> None:
    broken = onramp_json()
    del broken["pixInfo"]
    client, _ = make(Server(ok(broken)))
    with pytest.raises(ValueError, match="pixInfo"):
        client.get_intent(INTENT_ID)
    client, _ = make(Server(ok({"status": 1})))
    with pytest.raises(ApiError, match="status"):
        client.approve_burn(INTENT_ID, tx_signature="s", token_holder="h")


# --------------------------------------------------------------------------- retries


@pytest.mark.parametrize(
    "failure",
    [
        intents_error(500, "internal"),
        httpx.Response(502, text="bad gateway"),
        intents_error(503, "unavailable"),
        intents_error(429, "rate_limited"),
        httpx.ConnectError("connection refused"),
        httpx.ReadTimeout("timed out"),
    ],
)
def test_transient_failures_are_retried_then_succeed(failure: Reply) -> None:
    server = Server(failure, failure, ok(onramp_json()))
    client, t = make(server)
    assert client.get_intent(INTENT_ID).id == INTENT_ID
    assert len(server.requests) == 3
    assert len(t.sleeps) == 2 and all(0 <= s <= 8 for s in t.sleeps)
    assert client.stats.retries == 2 and client.stats.requests == 3


@pytest.mark.parametrize("status", [400, 401, 404, 409, 422, 501])
def test_non_transient_statuses_are_not_retried(status: int) -> None:
    server = Server(intents_error(status, "nope"), ok(onramp_json()))
    client, t = make(server)
    with pytest.raises(ApiStatusError):
        client.get_intent(INTENT_ID)
    assert len(server.requests) == 1 and t.sleeps == []


def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    server = Server(intents_error(503, "unavailable", "try later"))
    client, t = make(server)
    with pytest.raises(ServerError, match="try later") as info:
        client.list_intents()
    assert info.value.status_code == 503
    assert len(server.requests) == 4 and len(t.sleeps) == 3
    assert client.stats.server_errors == 4


def test_connection_errors_are_wrapped_with_the_cause() -> None:
    cause = httpx.ConnectError("connection refused")
    client, _ = make(Server(cause))
    with pytest.raises(ApiConnectionError, match="connection refused") as info:
        client.get_intent(INTENT_ID)
    assert info.value.__cause__ is cause
    assert f"GET /v2/intents/{INTENT_ID}" in str(info.value)


def test_retry_after_seconds_is_a_floor_for_the_wait() -> None:
    limited = httpx.Response(
        429, json={"code": "rate_limited", "message": "slow down"}, headers={"Retry-After": "7"}
    )
    server = Server(limited, ok(onramp_json()))
    client, t = make(server)
    client.get_intent(INTENT_ID)
    assert t.sleeps == [7.0]  # the jittered backoff (<= 0.5 s) never shortens it
    assert client.stats.rate_limited == 1


def test_retry_after_http_date_is_measured_from_the_server_date() -> None:
    # The server's clock is far from ours (the emulator's is simulated): only the
    # difference between its Date and its Retry-After instant matters.
    limited = httpx.Response(
        429,
        json={"code": "rate_limited", "message": "slow"},
        headers={
            "Retry-After": "Mon, 01 Jan 2001 00:00:12 GMT",
            "Date": "Mon, 01 Jan 2001 00:00:00 GMT",
        },
    )
    server = Server(limited, ok(onramp_json()))
    client, t = make(server)
    client.get_intent(INTENT_ID)
    assert t.sleeps == [12.0]


@pytest.mark.parametrize("header", ["0", "garbage", "-3"])
def test_useless_retry_after_falls_back_to_backoff(header: str) -> None:
    limited = httpx.Response(
        503, json={"code": "x", "message": "y"}, headers={"Retry-After": header}
    )
    server = Server(limited, ok(onramp_json()))
    client, t = make(server)
    client.get_intent(INTENT_ID)
    assert len(t.sleeps) == 1 and 0 <= t.sleeps[0] <= 0.5


def test_rate_limited_error_carries_retry_after_when_retries_run_out() -> None:
    limited = httpx.Response(
        429, json={"code": "rate_limited", "message": "slow"}, headers={"Retry-After": "3"}
    )
    client, _ = make(Server(limited), retry=RetryPolicy(max_attempts=1))
    with pytest.raises(RateLimited) as info:
        client.get_intent(INTENT_ID)
    assert info.value.retry_after == 3.0


def test_budget_stops_retrying_when_the_next_wait_would_overrun_it() -> None:
    limited = httpx.Response(
        429, json={"code": "rate_limited", "message": "slow"}, headers={"Retry-After": "30"}
    )
    server = Server(limited)
    client, t = make(server, retry=RetryPolicy(max_attempts=10, budget=70))
    with pytest.raises(RateLimited):
        client.get_intent(INTENT_ID)
    # 30 s + 30 s fit in 70 s; a third wait would end at 90 s, so we stop.
    assert t.sleeps == [30.0, 30.0] and len(server.requests) == 3


def test_budget_counts_time_spent_in_requests() -> None:
    t = FakeTime()

    def slow_failure(request: httpx.Request) -> httpx.Response:
        t.now += 25  # each attempt takes 25 s before failing
        return intents_error(500, "internal")

    server = Server(slow_failure)
    client, _ = make(server, t, retry=RetryPolicy(max_attempts=10, base_delay=0, budget=60))
    with pytest.raises(ServerError):
        client.get_intent(INTENT_ID)
    assert len(server.requests) == 3  # 0, 25, 50 s; the next start would be past 60 s


def test_idempotency_key_is_reused_across_every_retry_of_a_create() -> None:
    server = Server(
        httpx.ReadTimeout("lost response"),
        intents_error(502, "bad_gateway"),
        httpx.Response(429, json={"code": "rate_limited", "message": "slow"}),
        ok(onramp_json(), 201),
    )
    client, _ = make(server)
    client.create_onramp(amount_cents=15000, destination_wallet=WALLET)
    keys = {r.headers["idempotency-key"] for r in server.requests}
    assert len(server.requests) == 4 and len(keys) == 1
    assert len({r.content for r in server.requests}) == 1  # the same body each time


def test_party_create_conflict_after_a_retry_says_an_earlier_attempt_may_have_won() -> None:
    server = Server(httpx.ReadTimeout("lost"), parties_error(409, "party already exists"))
    client, _ = make(server)
    with pytest.raises(Conflict, match="earlier attempt may have succeeded"):
        client.create_party(cpf="52998224725", display_name="Ana")


def test_a_429_pauses_the_whole_client_even_when_that_call_gives_up() -> None:
    limited = httpx.Response(
        429, json={"code": "rate_limited", "message": "slow"}, headers={"Retry-After": "5"}
    )
    server = Server(limited, ok(onramp_json()))
    client, t = make(server, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(RateLimited):
        client.get_intent(INTENT_ID)
    client.get_intent(INTENT_ID)  # the next request of any caller waits for the instant
    assert sum(t.sleeps) >= 5.0


def test_max_rps_spaces_requests() -> None:
    server = Server(ok(onramp_json()))
    client, t = make(server, max_rps=4)
    for _ in range(5):
        client.get_intent(INTENT_ID)
    assert sum(t.sleeps) == pytest.approx(1.0)  # 5 requests at 4/s take 1 s after the first


# --------------------------------------------------------------------------- construction


def test_base_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECON_BASE_URL", "http://env.test/")
    monkeypatch.setenv("RECON_API_KEY", API_KEY)
    server = Server(ok(onramp_json()))
    client = Client(transport=httpx.MockTransport(server))
    client.get_intent(INTENT_ID)
    assert str(server.requests[0].url).startswith("http://env.test/v2/intents/")
    assert server.requests[0].headers["x-api-key"] == API_KEY


def test_missing_configuration_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RECON_BASE_URL", raising=False)
    monkeypatch.delenv("RECON_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="RECON_BASE_URL"):
        Client(api_key="k")
    with pytest.raises(ConfigError, match="RECON_API_KEY"):
        Client("http://x")
    with pytest.raises(UsageError):
        Client("http://x", "k", transport=httpx.MockTransport(Server()), client=httpx.Client())
    with pytest.raises(ConfigError, match="base URL"):
        Client("ftp://x", "k").get_intent(INTENT_ID)
    # An in-process transport needs no URL at all.
    assert Client(api_key="k", transport=httpx.MockTransport(Server())).base_url


def test_an_empty_key_sends_no_header() -> None:
    server = Server(intents_error(401, "unauthorized"))
    client = Client(BASE, "", transport=httpx.MockTransport(server))
    with pytest.raises(Unauthorized):
        client.list_intents()
    assert "x-api-key" not in server.requests[0].headers


def test_a_given_httpx_client_is_used_and_not_closed() -> None:
    server = Server(ok(onramp_json()))
    http = httpx.Client(transport=httpx.MockTransport(server), base_url="http://given.test")
    with Client(api_key=API_KEY, client=http) as client:
        client.get_intent(INTENT_ID)
    assert server.requests[0].url.host == "given.test"
    assert not http.is_closed
    http.close()


def test_a_client_closed_before_any_request_stays_closed() -> None:
    """Its httpx pool is made on first use: a close before that must not let a later
    request open a new one."""
    client = Client(BASE, API_KEY)
    client.close()
    with pytest.raises(RuntimeError, match="closed"):
        client.get_intent(INTENT_ID)

    async def closed_async() -> None:
        aclient = AsyncClient(BASE, API_KEY)
        await aclient.aclose()
        with pytest.raises(RuntimeError, match="closed"):
            await aclient.create_party(cpf="52998224725", display_name="Ana")

    asyncio.run(closed_async())


# --------------------------------------------------------------------------- the API key


def test_key_never_in_repr() -> None:
    client, _ = make(Server())
    assert API_KEY not in repr(client) and "***" in repr(client)
    assert API_KEY not in repr(vars(client))


def test_key_echoed_by_the_server_is_redacted_from_errors_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    echo = f"invalid key {API_KEY}"
    server = Server(
        intents_error(503, "unavailable", echo, details={"key": API_KEY}),
        intents_error(
            400,
            "validation_error",
            echo,
            validationErrors=[{"field": f"h-{API_KEY}", "message": echo}],
        ),
    )
    client, _ = make(server)
    caplog.set_level(logging.DEBUG)
    with pytest.raises(ValidationError) as info:
        client.create_onramp(amount_cents=1, destination_wallet=WALLET)
    exc = info.value
    texts = [str(exc), repr(exc), exc.message, json.dumps(exc.body), json.dumps(exc.details)]
    texts += [json.dumps(exc.validation_errors), *(str(a) for a in exc.args)]
    texts += [r.getMessage() for r in caplog.records]
    assert all(API_KEY not in text for text in texts)
    assert "***" in exc.message
    assert any("retry" in r.getMessage() for r in caplog.records)  # the logs did say something


def test_key_in_a_non_json_error_and_in_connection_errors_is_redacted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server(httpx.Response(401, text=f"bad key {API_KEY}"))
    client, _ = make(server)
    with pytest.raises(Unauthorized) as info:
        client.get_intent(INTENT_ID)
    assert API_KEY not in str(info.value)
    caplog.set_level(logging.DEBUG)
    client, _ = make(Server(httpx.ConnectError(f"proxy refused {API_KEY}")))
    with pytest.raises(ApiConnectionError) as conn:
        client.get_intent(INTENT_ID)
    assert API_KEY not in str(conn.value)
    assert all(API_KEY not in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------------------- async twin


def amake(server: Server, t: FakeTime | None = None, **kw: Any) -> tuple[AsyncClient, FakeTime]:
    t = t or FakeTime()
    kw.setdefault("retry", RetryPolicy(max_attempts=4, base_delay=0.5, max_delay=8, budget=60))

    async def handler(request: httpx.Request) -> httpx.Response:
        return server(request)

    client = AsyncClient(
        BASE,
        API_KEY,
        transport=httpx.MockTransport(handler),
        clock=t.clock,
        sleep=t.asleep,
        rng=random.Random(0),
        **kw,
    )
    return client, t


def test_async_client_covers_every_method() -> None:
    bound = party_json(profile=dict(party_json()["profile"], solanaWallet=WALLET))
    server = Server(
        ok(party_json(), 201),
        ok(party_json()),
        ok(bound),
        ok(onramp_json(), 201),
        ok(offramp_json(), 201),
        ok(onramp_json()),
        ok(page_json([onramp_json()], total=2, limit=1), date="Sun, 01 Nov 2026 12:00:00 GMT"),
        ok(page_json([onramp_json()], total=2, limit=1), date="Sun, 01 Nov 2026 12:00:00 GMT"),
        ok(page_json([offramp_json()], total=2, limit=1, offset=1)),
        ok({"status": "burn_approved"}),
    )

    async def scenario() -> list[Any]:
        async with amake(server)[0] as client:
            out: list[Any] = [
                await client.create_party(cpf="52998224725", display_name="Ana"),
                await client.get_party(PARTY_ID),
                await client.bind_wallet(PARTY_ID, WALLET),
                await client.create_onramp(amount_cents=15000, destination_wallet=WALLET),
                await client.create_offramp(amount_cents=20000, destination_address="k"),
                await client.get_intent(INTENT_ID),
                await client.list_intents_raw(limit=1),
                [i.id async for i in client.iter_intents(page_size=1)],
                await client.approve_burn(OFFRAMP_ID, tx_signature="s", token_holder="h" * 32),
            ]
            return out

    results = asyncio.run(scenario())
    assert results[2].profile.solana_wallet == WALLET
    assert results[6].date == "Sun, 01 Nov 2026 12:00:00 GMT"
    assert results[7] == [INTENT_ID, OFFRAMP_ID]
    assert results[8] == "burn_approved"
    methods = [(r.method, r.url.path) for r in server.requests]
    assert methods[:3] == [
        ("POST", "/v2/parties"),
        ("GET", f"/v2/parties/{PARTY_ID}"),
        ("PATCH", f"/v2/parties/{PARTY_ID}/wallet"),
    ]
    assert "idempotency-key" in server.requests[3].headers


def test_async_retries_reuse_the_idempotency_key_and_map_errors() -> None:
    server = Server(
        httpx.ConnectError("refused"), intents_error(500, "internal"), ok(onramp_json(), 201)
    )
    client, t = amake(server)
    asyncio.run(client.create_onramp(amount_cents=1, destination_wallet=WALLET))
    assert len({r.headers["idempotency-key"] for r in server.requests}) == 1
    assert len(server.requests) == 3 and len(t.sleeps) == 2
    client, _ = amake(Server(intents_error(404, "not_found")))
    with pytest.raises(NotFound):
        asyncio.run(client.get_intent(INTENT_ID))


def test_async_429_holds_every_concurrent_request_until_the_retry_after_instant() -> None:
    """One 429 with Retry-After: 10 makes all other requests of the client wait too."""
    t = FakeTime()
    sent_at: list[float] = []
    first = True

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal first
        sent_at.append(t.now)
        if first:
            first = False
            return httpx.Response(
                429, json={"code": "rate_limited", "message": "slow"}, headers={"Retry-After": "10"}
            )
        return ok(onramp_json())

    async def sleep(seconds: float) -> None:
        wake = t.now + seconds
        t.sleeps.append(seconds)
        await asyncio.sleep(0)  # let the other tasks run, as a real sleep would
        t.now = max(t.now, wake)

    client = AsyncClient(
        BASE, API_KEY, transport=httpx.MockTransport(handler), clock=t.clock, sleep=sleep
    )

    async def concurrent() -> None:
        # The first request sent gets the 429; the others are already in flight or start
        # while the gate is closed: none may be sent before the Retry-After instant.
        await asyncio.gather(*(client.get_intent(INTENT_ID) for _ in range(4)))

    asyncio.run(concurrent())
    assert sent_at[0] == 1000.0
    assert all(s >= 1010.0 for s in sent_at[1:]), sent_at
    assert len(sent_at) == 5 and client.stats.rate_limited == 1


def test_async_max_rps_paces_concurrent_requests() -> None:
    t = FakeTime()
    sent_at: list[float] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        sent_at.append(t.now)
        return ok(onramp_json())

    async def sleep(seconds: float) -> None:
        # Concurrent sleepers: each wakes at its own instant, as on a real event loop.
        wake = t.now + seconds
        t.sleeps.append(seconds)
        await asyncio.sleep(0)
        t.now = max(t.now, wake)

    client = AsyncClient(
        BASE, API_KEY, transport=httpx.MockTransport(handler), clock=t.clock, sleep=sleep, max_rps=2
    )

    async def scenario() -> None:
        await asyncio.gather(*(client.get_intent(INTENT_ID) for _ in range(5)))

    asyncio.run(scenario())
    assert sorted(t.sleeps) == pytest.approx([0.5, 1.0, 1.5, 2.0])  # all reserved at once
    assert sorted(sent_at) == pytest.approx([1000.0, 1000.5, 1001.0, 1001.5, 1002.0])


def test_async_repr_hides_the_key() -> None:
    client, _ = amake(Server())
    assert API_KEY not in repr(client)


# --------------------------------------------------------------------------- property: any error body

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
error_bodies = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"code": st.text(max_size=10), "message": st.text(max_size=30)},
        optional={"validationErrors": json_values, "details": json_values},
    ),
    st.fixed_dictionaries({"error": st.text(max_size=30)}, optional={"code": json_values}),
)


@settings(max_examples=150, deadline=None)
@given(
    status=st.integers(400, 599),
    body=error_bodies,
    echo_key=st.booleans(),
)
def test_any_error_response_maps_into_the_tree_without_leaking_the_key(
    status: int, body: Any, echo_key: bool
) -> None:
    if echo_key:
        body = {"code": "x", "message": f"key={API_KEY}", "details": {"k": [API_KEY]}}
    server = Server(httpx.Response(status, json=body))
    client, _ = make(server, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ApiStatusError) as info:
        client.get_intent(INTENT_ID)
    exc = info.value
    assert exc.status_code == status and isinstance(exc.message, str) and exc.message
    expected = {
        400: ValidationError,
        401: Unauthorized,
        404: NotFound,
        409: Conflict,
        429: RateLimited,
    }
    assert isinstance(exc, expected.get(status, ServerError if status >= 500 else ApiStatusError))
    assert all(isinstance(e, dict) for e in getattr(exc, "validation_errors", []))
    assert API_KEY not in str(exc) + json.dumps(exc.body) + json.dumps(exc.details)
