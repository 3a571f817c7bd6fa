"""End-to-end walk of the v2 API through the in-process transport."""

from __future__ import annotations

import asyncio
import uuid

import httpx

from recon.sandbox.emulator import Emulator
from recon.sandbox.transport import AsyncEmulatorTransport


def test_walk_parties_intents_list_and_approve(emu: Emulator, client, new_party) -> None:
    party = new_party(email="ana@example.com")
    wallet = party["profile"]["solanaWallet"]
    on = client.post(
        "/v2/intents/onramp",
        json={"amountCents": 1500, "destinationWallet": wallet, "chainId": "solana"},
        headers={"idempotency-key": str(uuid.uuid4())},
    )
    assert on.status_code == 201
    assert on.json()["partyId"] == party["id"]
    off = client.post(
        "/v2/intents/offramp",
        json={"amountCents": 700, "destinationAddress": "ana@example.com", "chainId": "solana"},
    )
    assert off.status_code == 201
    sig, holder = emu.approval_for(off.json()["id"])
    r = client.post(
        f"/v2/intents/{off.json()['id']}/approve-burn",
        json={"txSignature": sig, "tokenHolder": holder},
    )
    assert r.status_code == 200 and r.json() == {"status": "burn_approved"}
    page = client.get("/v2/intents").json()
    # same clock instant: newest-first order falls back to id descending
    expected = sorted([on.json(), off.json()], key=lambda i: (i["createdAt"], i["id"]))[::-1]
    assert page["total"] == 2
    assert [i["id"] for i in page["intents"]] == [i["id"] for i in expected]
    assert client.get(f"/v2/intents/{on.json()['id']}").json()["status"] == "awaiting_fiat_payment"


def test_async_transport(emu: Emulator) -> None:
    async def go() -> tuple[int, dict]:
        async with httpx.AsyncClient(
            transport=AsyncEmulatorTransport(emu),
            base_url="http://sandbox.test",
            headers={"x-api-key": emu.instances[0].api_key},
        ) as c:
            r = await c.post("/v2/parties", json={"cpf": "52998224725", "displayName": "As"})
            return r.status_code, (await c.get("/v2/intents", params={"limit": 5})).json()

    status, page = asyncio.run(go())
    assert status == 201 and page == {"intents": [], "total": 0, "limit": 5, "offset": 0}


def test_transport_outside_v2_is_404(client) -> None:
    r = client.get("/openapi.json")
    assert r.status_code == 404 and r.json()["code"] == "not_found"


def test_internal_errors_answer_in_the_family_shape(emu: Emulator, client, monkeypatch) -> None:
    def boom(*a, **kw):
        raise ZeroDivisionError

    monkeypatch.setattr(emu, "_list", boom)
    monkeypatch.setattr(emu, "_create_party", boom)
    r = client.get("/v2/intents")
    assert r.status_code == 500 and r.json()["code"] == "internal_error"
    r = client.post("/v2/parties", json={})
    assert r.status_code == 500 and set(r.json()) == {"error", "code"}


def test_repeated_query_parameter_last_wins(client) -> None:
    r = client.get("/v2/intents?limit=500&limit=5")
    assert r.status_code == 200 and r.json()["limit"] == 5
