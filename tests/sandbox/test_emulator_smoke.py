"""End-to-end walk of the v2 API through the in-process transport."""

from __future__ import annotations

import uuid

from recon.sandbox.emulator import Emulator


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
