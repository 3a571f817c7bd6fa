"""Spec rules beyond field syntax: 409/404 (table 7.3), objects, resolution, idempotency,
approve-burn, authentication and keys."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta
from typing import Any

import httpx
import pytest

from recon.sandbox.asgi import banner
from recon.sandbox.emulator import Emulator, EmulatorConfig
from recon.sandbox.signatures import sign_approval, token_account_for
from recon.sandbox.transport import EmulatorTransport
from recon.sandbox.validation import is_valid_cnpj, make_cpf, make_wallet

PARTY_KEYS = {
    "id",
    "instanceId",
    "partyType",
    "countryCode",
    "externalRef",
    "status",
    "profile",
    "createdAt",
    "updatedAt",
}
INTENT_KEYS = {
    "id",
    "instanceId",
    "partyId",
    "intentType",
    "flowVersion",
    "adapter",
    "status",
    "statusReason",
    "clientReference",
    "metadata",
    "expiresAt",
    "createdAt",
    "updatedAt",
    "pixInfo",
    "depositInstructions",
    "party",
    "chainId",
}


def onramp(client: httpx.Client, wallet: str, amount: int = 1000, **kw: Any) -> httpx.Response:
    headers = kw.pop("headers", {})
    body = {"amountCents": amount, "destinationWallet": wallet, "chainId": "solana", **kw}
    return client.post("/v2/intents/onramp", json=body, headers=headers)


def offramp(client: httpx.Client, address: str, amount: int = 1000, **kw: Any) -> httpx.Response:
    headers = kw.pop("headers", {})
    body = {"amountCents": amount, "destinationAddress": address, "chainId": "solana", **kw}
    return client.post("/v2/intents/offramp", json=body, headers=headers)


# --- parties: 409, 404, object --------------------------------------------------------------


def test_duplicate_document_is_409_per_instance(client, other_client) -> None:
    body = {"cpf": make_cpf(77), "displayName": "Joana"}
    assert client.post("/v2/parties", json=body).status_code == 201
    r = client.post("/v2/parties", json={**body, "displayName": "Other name"})
    assert r.status_code == 409 and r.json() == {"error": r.json()["error"], "code": "party_exists"}
    # the same document in another organization's instance is a different party
    assert other_client.post("/v2/parties", json=body).status_code == 201


def test_party_object_is_exactly_the_spec(client, emu: Emulator) -> None:
    body = {
        "cpf": "52998224725",
        "displayName": "Ana Souza",
        "email": "ana.souza@example.com",
        "phone": "+55 11 98765-4321",
        "externalRef": "crm-1",
        "countryCode": "PT",
    }
    r = client.post("/v2/parties", json=body)
    p = r.json()
    assert r.status_code == 201 and set(p) == PARTY_KEYS
    assert set(p["profile"]) == {"displayName", "documentType", "documentMasked", "solanaWallet"}
    assert p["status"] == "pending" and p["partyType"] == "person"
    assert p["instanceId"] == emu.instances[0].instance_id
    assert p["externalRef"] == "crm-1" and p["countryCode"] == "PT"
    assert p["profile"] == {
        "displayName": "Ana Souza",
        "documentType": "cpf",
        "documentMasked": "***.***.*47-25",
        "solanaWallet": None,
    }
    uuid.UUID(p["id"])
    assert p["createdAt"].endswith("Z")
    # the defaults
    q = client.post("/v2/parties", json={"cpf": make_cpf(3), "displayName": "Bo"}).json()
    assert q["countryCode"] == "BR" and q["externalRef"] is None


def test_no_email_phone_or_document_in_any_response(client, emu: Emulator) -> None:
    cpf, email, phone = "52998224725", "secret.person@example.com", "+5511987654321"
    party = client.post(
        "/v2/parties", json={"cpf": cpf, "displayName": "Sec", "email": email, "phone": phone}
    ).json()
    wallet = make_wallet(1)
    texts = [json.dumps(party)]
    texts.append(client.get(f"/v2/parties/{party['id']}").text)
    texts.append(
        client.patch(f"/v2/parties/{party['id']}/wallet", json={"solanaWallet": wallet}).text
    )
    texts.append(onramp(client, wallet).text)
    for address in (cpf, email, phone):
        texts.append(offramp(client, address).text)
    texts.append(client.get("/v2/intents").text)
    for text in texts:
        # offramp metadata echoes the caller's own destinationAddress; strip that echo first
        for item in [json.loads(text), *json.loads(text).get("intents", [])]:
            if isinstance(item, dict) and item.get("metadata"):
                text = text.replace(json.dumps(item["metadata"]["destinationAddress"]), '""')
        assert cpf not in text and email not in text and "98765" not in text


def test_get_party_404s(client, other_client, new_party) -> None:
    party = new_party()
    assert client.get(f"/v2/parties/{party['id']}").status_code == 200
    for bad in (party["id"], str(uuid.uuid4()), "not-a-uuid", "1"):
        r = other_client.get(f"/v2/parties/{bad}")
        assert r.status_code == 404 and set(r.json()) == {"error", "code"}
    r = other_client.patch(
        f"/v2/parties/{party['id']}/wallet", json={"solanaWallet": make_wallet(9)}
    )
    assert r.status_code == 404


def test_uppercase_uuid_finds_the_party(client, new_party) -> None:
    party = new_party()
    assert client.get(f"/v2/parties/{party['id'].upper()}").status_code == 200


def test_wallet_bind_and_replace(client, new_party) -> None:
    a = new_party(wallet=False)
    b = new_party(wallet=False)
    w1, w2 = make_wallet(101), make_wallet(102)
    r = client.patch(f"/v2/parties/{a['id']}/wallet", json={"solanaWallet": w1})
    assert r.status_code == 200 and r.json()["profile"]["solanaWallet"] == w1
    # a wallet is bound to one party at a time
    r = client.patch(f"/v2/parties/{b['id']}/wallet", json={"solanaWallet": w1})
    assert r.status_code == 400 and r.json()["code"] == "wallet_already_bound"
    # replacing: the old wallet no longer resolves onramps
    assert (
        client.patch(f"/v2/parties/{a['id']}/wallet", json={"solanaWallet": w2}).status_code == 200
    )
    assert onramp(client, w1).json()["code"] == "unknown_destination_wallet"
    assert onramp(client, w2).json()["partyId"] == a["id"]
    assert (
        client.patch(f"/v2/parties/{b['id']}/wallet", json={"solanaWallet": w1}).status_code == 200
    )


# --- intents: object, resolution -----------------------------------------------------------


def test_onramp_object(client, emu: Emulator, new_party) -> None:
    party = new_party()
    wallet = party["profile"]["solanaWallet"]
    r = onramp(client, wallet, 2599, chainId="polygon", clientReference="order-1")
    i = r.json()
    assert r.status_code == 201 and set(i) == INTENT_KEYS
    assert i["chainId"] == "solana"  # polygon requests still answer solana
    assert i["depositInstructions"] is None and i["metadata"] is None
    assert i["intentType"] == "onramp" and i["partyId"] == party["id"]
    assert i["status"] == "awaiting_fiat_payment" and i["statusReason"] is None
    assert isinstance(i["flowVersion"], int) and i["adapter"] in emu.config.adapters
    assert i["clientReference"] == "order-1"
    assert i["party"] == {
        "displayName": party["profile"]["displayName"],
        "documentMasked": party["profile"]["documentMasked"],
        "solanaWallet": wallet,
    }
    pix = i["pixInfo"]
    assert set(pix) == {
        "keyType",
        "keyValue",
        "recipientName",
        "bank",
        "description",
        "amountCents",
    }
    assert pix["keyType"] == "cnpj" and is_valid_cnpj(pix["keyValue"])
    assert pix["amountCents"] == 2599 and pix["description"].startswith("RECON ")
    assert i["createdAt"] == "2026-11-01T12:00:00.000Z"
    assert i["expiresAt"] == "2026-11-01T12:30:00.000Z"  # default 30-minute TTL


def test_ttl_is_configurable() -> None:
    emu = Emulator(keys=["a", "b"], config=EmulatorConfig(onramp_ttl=timedelta(hours=2)))
    c = httpx.Client(
        transport=EmulatorTransport(emu), base_url="http://t", headers={"x-api-key": "a"}
    )
    p = c.post("/v2/parties", json={"cpf": make_cpf(1), "displayName": "Al"}).json()
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(1)})
    assert onramp(c, make_wallet(1)).json()["expiresAt"] == "2026-11-01T14:00:00.000Z"


def test_pix_descriptions_are_unique(client, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    refs = {onramp(client, wallet, 100 + n).json()["pixInfo"]["description"] for n in range(300)}
    assert len(refs) == 300


def test_offramp_object_and_resolution(client, new_party) -> None:
    party = new_party(email="Pay.Me@Example.com", phone="+55 (11) 91234-5678")
    doc_party = new_party()
    cases = {
        "PAY.me@EXAMPLE.com": party["id"],  # e-mail keys are case-insensitive
        "+5511912345678": party["id"],  # phone keys compare by digits
        make_cpf(int(doc_party["profile"]["displayName"].split()[-1])): doc_party["id"],
    }
    for address, party_id in cases.items():
        r = offramp(client, address, 4321)
        i = r.json()
        assert r.status_code == 201 and set(i) == INTENT_KEYS, r.text
        assert (
            i["partyId"] == party_id and i["pixInfo"] is None and i["depositInstructions"] is None
        )
        assert i["metadata"] == {"amountCents": 4321, "destinationAddress": address}
        assert i["status"] == "awaiting_burn_approval" and i["chainId"] == "solana"


def test_offramp_unknown_address_and_unbound_party(client, new_party) -> None:
    r = offramp(client, "nobody@example.com")
    assert r.status_code == 400 and r.json()["code"] == "unknown_destination_address"
    assert r.json()["validationErrors"][0]["field"] == "destinationAddress"
    new_party(wallet=False, email="nowallet@example.com")
    r = offramp(client, "nowallet@example.com")
    assert r.status_code == 400 and r.json()["code"] == "party_wallet_not_bound"


def test_onramp_unknown_wallet(client, other_client, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    r = onramp(client, make_wallet(999_999))
    assert r.status_code == 400 and r.json()["code"] == "unknown_destination_wallet"
    # another instance's party wallet is unknown here
    assert onramp(other_client, wallet).json()["code"] == "unknown_destination_wallet"


def test_get_intent_404_scoping(client, other_client, new_party) -> None:
    i = onramp(client, new_party()["profile"]["solanaWallet"]).json()
    assert client.get(f"/v2/intents/{i['id']}").json() == i
    for bad in (i["id"], str(uuid.uuid4()), "zzz", i["id"][:-1] + "0"):
        r = other_client.get(f"/v2/intents/{bad}")
        assert r.status_code == 404 and r.json()["code"] == "intent_not_found"
        assert {"code", "message", "validationErrors"} <= set(r.json())
        assert i["partyId"] not in r.text
    assert other_client.get("/v2/intents").json()["total"] == 0


# --- idempotency ------------------------------------------------------------------------


def test_idempotent_replay_and_conflict(client, other_client, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    key = str(uuid.uuid4())
    first = onramp(client, wallet, 500, headers={"idempotency-key": key})
    again = onramp(client, wallet, 500, headers={"idempotency-key": key})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert client.get("/v2/intents").json()["total"] == 1
    # same key, different body → 409 (also on the other create endpoint)
    r = onramp(client, wallet, 501, headers={"idempotency-key": key})
    assert r.status_code == 409 and r.json()["code"] == "idempotency_key_reused"
    r = offramp(client, "x@example.com", 500, headers={"idempotency-key": key})
    assert r.status_code in (400, 409)
    # keys are scoped per instance
    w2 = new_party(http=other_client)["profile"]["solanaWallet"]
    assert onramp(other_client, w2, 500, headers={"idempotency-key": key}).status_code == 201
    # no key → no deduplication
    assert onramp(client, wallet, 500).json()["id"] != onramp(client, wallet, 500).json()["id"]


def test_idempotency_replay_survives_status_change(client, emu: Emulator, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    key = str(uuid.uuid4())
    first = onramp(client, wallet, 500, headers={"idempotency-key": key}).json()
    emu.transition(first["id"], "fiat_received")
    assert onramp(client, wallet, 500, headers={"idempotency-key": key}).json() == first


def test_idempotency_window(emu: Emulator, client, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    key = str(uuid.uuid4())
    first = onramp(client, wallet, 500, headers={"idempotency-key": key}).json()
    emu.clock.advance(timedelta(hours=23, minutes=59))
    assert onramp(client, wallet, 500, headers={"idempotency-key": key}).json()["id"] == first["id"]
    emu.clock.advance(timedelta(minutes=2))
    later = onramp(client, wallet, 999, headers={"idempotency-key": key})
    assert later.status_code == 201 and later.json()["id"] != first["id"]


def test_idempotency_window_configurable() -> None:
    emu = Emulator(keys=["a", "b"], config=EmulatorConfig(idempotency_window=timedelta(seconds=5)))
    c = httpx.Client(
        transport=EmulatorTransport(emu), base_url="http://t", headers={"x-api-key": "a"}
    )
    p = c.post("/v2/parties", json={"cpf": make_cpf(500), "displayName": "Wi"}).json()
    wallet = make_wallet(500)
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": wallet})
    key = str(uuid.uuid4())
    a = onramp(c, wallet, headers={"idempotency-key": key}).json()
    emu.clock.advance(6)
    assert onramp(c, wallet, headers={"idempotency-key": key}).json()["id"] != a["id"]


# --- approve-burn ---------------------------------------------------------------------------


@pytest.fixture
def off(client, new_party) -> dict[str, Any]:
    new_party(email="burner@example.com")
    return offramp(client, "burner@example.com", 12_345).json()


def _approve(client: httpx.Client, intent_id: str, sig: str, holder: str) -> httpx.Response:
    return client.post(
        f"/v2/intents/{intent_id}/approve-burn", json={"txSignature": sig, "tokenHolder": holder}
    )


def test_approve_burn_happy_path_and_replay(emu: Emulator, client, off) -> None:
    sig, holder = emu.approval_for(off["id"])
    assert holder == token_account_for(off["party"]["solanaWallet"])
    assert sig == sign_approval(off["id"], holder, 12_345)
    emu.clock.advance(60)
    r = _approve(client, off["id"], sig, holder)
    assert r.status_code == 200 and r.json() == {"status": "burn_approved"}
    after = client.get(f"/v2/intents/{off['id']}").json()
    assert after["status"] == "burn_approved" and after["updatedAt"] != off["updatedAt"]
    # the signature is the deduplication key: the same call answers the same
    again = _approve(client, off["id"], sig, holder)
    assert again.status_code == 200 and again.json() == {"status": "burn_approved"}
    # a different (valid) signature on an approved intent is a status error
    other = sign_approval(off["id"], holder, 12_344)
    r = _approve(client, off["id"], other, holder)
    assert r.status_code == 400 and r.json()["code"] == "invalid_status"


def test_signature_reuse_on_another_intent(emu: Emulator, client, off) -> None:
    sig, holder = emu.approval_for(off["id"])
    assert _approve(client, off["id"], sig, holder).status_code == 200
    second = offramp(client, "burner@example.com", 12_345).json()
    r = _approve(client, second["id"], sig, holder)
    assert r.status_code == 400 and r.json()["code"] == "signature_already_used"


def test_signature_failures(emu: Emulator, client, off) -> None:
    holder = token_account_for(off["party"]["solanaWallet"])
    stranger = token_account_for(make_wallet(4242))
    cases = {
        "signature_invalid": (sign_approval(off["id"], holder, 12_345, secret=b"other"), holder),
        "wrong_signer": (sign_approval(off["id"], stranger, 12_345), stranger),
        "wrong_delegation_amount": (sign_approval(off["id"], holder, 12_000), holder),
    }
    for code, (sig, h) in cases.items():
        r = _approve(client, off["id"], sig, h)
        assert r.status_code == 400 and r.json()["code"] == code, r.text
    # a signature made for another intent does not verify here
    r = _approve(client, off["id"], sign_approval(str(uuid.uuid4()), holder, 12_345), holder)
    assert r.json()["code"] == "signature_invalid"
    # short random base58
    assert _approve(client, off["id"], "3xyz", holder).json()["code"] == "signature_invalid"
    # nothing changed
    assert client.get(f"/v2/intents/{off['id']}").json()["status"] == "awaiting_burn_approval"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"tokenHolder": "1" * 32}, "txSignature"),
        ({"txSignature": "", "tokenHolder": "1" * 32}, "txSignature"),
        ({"txSignature": "0OIl", "tokenHolder": "1" * 32}, "txSignature"),
        ({"txSignature": 5, "tokenHolder": "1" * 32}, "txSignature"),
        ({"txSignature": "abc"}, "tokenHolder"),
        ({"txSignature": "abc", "tokenHolder": "1" * 31}, "tokenHolder"),
        ({"txSignature": "abc", "tokenHolder": "1" * 45}, "tokenHolder"),
    ],
)
def test_approve_burn_body_rules(client, off, body: dict, field: str) -> None:
    r = client.post(f"/v2/intents/{off['id']}/approve-burn", json=body)
    assert r.status_code == 400 and r.json()["validationErrors"][0]["field"] == field


@pytest.mark.parametrize("holder_len", [32, 44])
def test_token_holder_length_bounds_pass_validation(client, off, holder_len: int) -> None:
    r = _approve(client, off["id"], "3xyz", "1" * holder_len)
    assert r.status_code == 400 and r.json()["code"] == "signature_invalid"


def test_approve_burn_status_guard_and_404(
    emu: Emulator, client, other_client, off, new_party
) -> None:
    on = onramp(client, new_party()["profile"]["solanaWallet"]).json()
    sig, holder = emu.approval_for(on["id"])
    r = _approve(client, on["id"], sig, holder)
    assert r.status_code == 400 and r.json()["code"] == "invalid_status"
    assert r.json()["details"] == {"intentType": "onramp", "status": "awaiting_fiat_payment"}
    emu.transition(off["id"], "canceled")
    sig, holder = emu.approval_for(off["id"])
    assert _approve(client, off["id"], sig, holder).json()["code"] == "invalid_status"
    for bad in (off["id"], str(uuid.uuid4()), "nope"):
        r = _approve(other_client, bad, sig, holder)
        assert r.status_code == 404 and r.json()["code"] == "intent_not_found"


# --- authentication, keys, errors outside the API ----------------------------------------

ENDPOINTS = [
    ("POST", "/v2/parties"),
    ("GET", f"/v2/parties/{uuid.UUID(int=1)}"),
    ("PATCH", f"/v2/parties/{uuid.UUID(int=1)}/wallet"),
    ("POST", "/v2/intents/onramp"),
    ("POST", "/v2/intents/offramp"),
    ("GET", "/v2/intents"),
    ("GET", f"/v2/intents/{uuid.UUID(int=1)}"),
    ("POST", f"/v2/intents/{uuid.UUID(int=1)}/approve-burn"),
    ("GET", "/v2/nothing-here"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
@pytest.mark.parametrize("key", [None, "", "wrong-key", "key-org-a "])
def test_401_on_every_endpoint(emu: Emulator, method: str, path: str, key: str | None) -> None:
    headers = {"content-type": "application/json"}
    if key is not None:
        headers["x-api-key"] = key
    r = emu.handle(method, path, headers=headers, body=b"{}")
    assert r.status == 401
    assert r.body == {
        "code": "unauthorized",
        "message": r.body["message"],
        "validationErrors": [],
    }
    assert "key-org-a" not in json.dumps(r.body)


def test_unknown_endpoint_and_method(client) -> None:
    r = client.get("/v2/unknown")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    r = client.delete("/v2/intents")
    assert r.status_code == 405 and r.headers["allow"] == "GET"
    r = client.get("/v2/intents/onramp")
    assert r.status_code == 405 and r.headers["allow"] == "POST"


def test_keys_are_derived_from_the_seed(monkeypatch) -> None:
    monkeypatch.delenv("RECON_SANDBOX_KEYS", raising=False)
    a, b, c = Emulator(seed=1), Emulator(seed=1), Emulator(seed=2)
    assert a.instances == b.instances and a.instances != c.instances
    assert len({i.organization_id for i in a.instances}) >= 2
    assert len({i.api_key for i in a.instances}) == len(a.instances)
    # a repr never shows a key
    assert all(i.api_key not in repr(i) for i in a.instances)


def test_keys_from_env(monkeypatch) -> None:
    monkeypatch.setenv("RECON_SANDBOX_KEYS", "k1, k2")
    emu = Emulator(seed=5)
    assert [i.api_key for i in emu.instances] == ["k1", "k2"]
    assert emu.instances[0].organization_id != emu.instances[1].organization_id
    assert emu.handle("GET", "/v2/intents", headers={"X-API-Key": "k2"}).status == 200
    with pytest.raises(ValueError):
        Emulator(keys=["same", "same"])


def test_banner_lines(emu: Emulator) -> None:
    lines = banner("http://127.0.0.1:8700", emu)
    assert lines[0] == "Serving v2 API at http://127.0.0.1:8700"
    assert lines[1:] == [f"API key {i.instance_id} {i.api_key}" for i in emu.instances]


def test_same_seed_same_calls_same_ids() -> None:
    def run() -> list[str]:
        emu = Emulator(seed=11, keys=["a", "b"])
        c = httpx.Client(
            transport=EmulatorTransport(emu), base_url="http://t", headers={"x-api-key": "a"}
        )
        out = []
        for n in range(3):
            p = c.post("/v2/parties", json={"cpf": make_cpf(n), "displayName": f"P{n}"}).json()
            c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(n)})
            out += [p["id"], onramp(c, make_wallet(n)).json()["id"]]
            emu.clock.advance(1)
        return out

    first = run()
    assert first == run() and len(set(first)) == 6


def test_date_header_is_the_emulator_clock(emu: Emulator, client) -> None:
    assert client.get("/v2/intents").headers["date"] == "Sun, 01 Nov 2026 12:00:00 GMT"
    emu.clock.advance(timedelta(days=1, seconds=5))
    assert client.get("/v2/intents").headers["date"] == "Mon, 02 Nov 2026 12:00:05 GMT"
    assert client.get("/v2/nothing").headers["date"] == "Mon, 02 Nov 2026 12:00:05 GMT"
