"""Field rules (spec 4.x tables and limits table 8) and malformed bodies, both error shapes."""

from __future__ import annotations

from typing import Any

import base58
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.sandbox import validation as v
from recon.sandbox.validation import make_cnpj, make_cpf, make_wallet

# --- documents: an independent reference implementation -----------------------------------


def _ref_check(digits: list[int], weights: list[int]) -> int:
    r = sum(d * w for d, w in zip(digits, weights, strict=True)) % 11
    return 0 if r < 2 else 11 - r


def ref_cpf(doc: str) -> bool:
    if len(doc) != 11 or not all(c in "0123456789" for c in doc) or len(set(doc)) == 1:
        return False
    d = [int(c) for c in doc]
    return d[9] == _ref_check(d[:9], list(range(10, 1, -1))) and d[10] == _ref_check(
        d[:10], list(range(11, 1, -1))
    )


def ref_cnpj(doc: str) -> bool:
    if len(doc) != 14 or not all(c in "0123456789" for c in doc) or len(set(doc)) == 1:
        return False
    d = [int(c) for c in doc]
    w1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    return d[12] == _ref_check(d[:12], w1) and d[13] == _ref_check(d[:13], [6, *w1])


def test_known_documents() -> None:
    assert v.is_valid_cpf("52998224725") and v.is_valid_cpf("11144477735")
    assert not v.is_valid_cpf("52998224726") and not v.is_valid_cpf("11111111111")
    assert v.is_valid_cnpj("11222333000181") and not v.is_valid_cnpj("11222333000182")
    assert not v.is_valid_cnpj("00000000000000")


@settings(deadline=None)
@given(st.text(alphabet="0123456789", min_size=11, max_size=11))
def test_cpf_matches_reference(doc: str) -> None:
    assert v.is_valid_cpf(doc) == ref_cpf(doc)


@settings(deadline=None)
@given(st.text(alphabet="0123456789", min_size=14, max_size=14))
def test_cnpj_matches_reference(doc: str) -> None:
    assert v.is_valid_cnpj(doc) == ref_cnpj(doc)


@settings(deadline=None)
@given(st.text(alphabet="0123456789", min_size=9, max_size=9), st.integers(0, 9))
def test_cpf_check_digit_is_determined(base: str, other: int) -> None:
    doc = base + v.cpf_check_digits(base)
    if len(set(doc)) > 1:
        assert v.is_valid_cpf(doc)
        if other != int(doc[-1]):
            assert not v.is_valid_cpf(doc[:-1] + str(other))


@settings(deadline=None)
@given(st.text(alphabet="0123456789", min_size=12, max_size=12), st.integers(0, 9))
def test_cnpj_check_digit_is_determined(base: str, other: int) -> None:
    doc = base + v.cnpj_check_digits(base)
    if len(set(doc)) > 1:
        assert v.is_valid_cnpj(doc)
        if other != int(doc[-2]):
            assert not v.is_valid_cnpj(doc[:-2] + str(other) + doc[-1])


def test_masking_keeps_only_last_four_digits() -> None:
    assert v.mask_document("52998224725") == "***.***.*47-25"
    assert v.mask_document("11222333000181") == "**.***.***/**01-81"


# --- base58 / Solana addresses --------------------------------------------------------------


@settings(deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_any_32_bytes_is_a_wallet(raw: bytes) -> None:
    addr = base58.b58encode(raw).decode()
    assert v.is_valid_solana_address(addr) == (32 <= len(addr) <= 44)
    if raw[0] != 0:  # leading zero bytes give short "1..." encodings, still 32 bytes
        assert v.is_valid_solana_address(addr)


@settings(deadline=None)
@given(st.binary(min_size=1, max_size=64).filter(lambda b: len(b) != 32))
def test_other_lengths_are_not_wallets(raw: bytes) -> None:
    assert not v.is_valid_solana_address(base58.b58encode(raw).decode())


@settings(deadline=None)
@given(st.text(min_size=32, max_size=44))
def test_non_base58_text_is_rejected(text: str) -> None:
    if any(c not in base58.alphabet.decode() for c in text):
        assert not v.is_valid_solana_address(text)


@pytest.mark.parametrize(
    "bad",
    ["0" * 44, "O" * 44, "I" * 44, "l" * 44, "", "abc", make_wallet(1) + " ", " " + make_wallet(1)],
)
def test_bad_alphabet_wallets(bad: str) -> None:
    assert not v.is_valid_solana_address(bad)


@pytest.mark.parametrize(
    ("email", "ok"),
    [
        ("ana@example.com", True),
        ("a.b+c@sub.example.com.br", True),
        ("ana@", False),
        ("@example.com", False),
        ("ana@example", False),
        ("ana example@x.com", False),
        ("ana@@example.com", False),
        ("a..b@example.com", False),
    ],
)
def test_email_syntax(email: str, ok: bool) -> None:
    assert v.is_valid_email(email) == ok


# --- POST /v2/parties -------------------------------------------------------------------


def _party_body(**over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"cpf": make_cpf(900), "displayName": "Maria Silva"}
    body.update(over)
    return {k: val for k, val in body.items() if val is not ...}


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"cpf": ...}, "cpf"),
        ({"cpf": None}, "cpf"),
        ({"cpf": 52998224725}, "cpf"),
        ({"cpf": "529.982.247-25"}, "cpf"),
        ({"cpf": "5299822472"}, "cpf"),  # 10 digits
        ({"cpf": "529982247250"}, "cpf"),  # 12
        ({"cpf": "1122233300018"}, "cpf"),  # 13
        ({"cpf": "112223330001810"}, "cpf"),  # 15
        ({"cpf": "52998224726"}, "cpf"),  # wrong check digit
        ({"cpf": "11222333000182"}, "cpf"),
        ({"cpf": "١١١٤٤٤٧٧٧٣٥"}, "cpf"),  # non-ASCII digits
        ({"displayName": ...}, "displayName"),
        ({"displayName": "A"}, "displayName"),
        ({"displayName": "A" * 101}, "displayName"),
        ({"displayName": "  "}, "displayName"),
        ({"displayName": 42}, "displayName"),
        ({"partyType": "company"}, "partyType"),
        ({"partyType": "business"}, "partyType"),  # 11-digit CPF cannot be a business
        ({"countryCode": "bra"}, "countryCode"),
        ({"countryCode": "br"}, "countryCode"),
        ({"email": "not-an-email"}, "email"),
        ({"email": 5}, "email"),
        ({"phone": "abc"}, "phone"),
        ({"externalRef": "x" * 256}, "externalRef"),
    ],
)
def test_party_validation_names_the_field(client: httpx.Client, over: dict, field: str) -> None:
    r = client.post("/v2/parties", json=_party_body(**over))
    assert r.status_code == 400
    body = r.json()
    assert set(body) == {"error", "code"}  # parties error shape
    assert body["error"].startswith(field + ":")


@pytest.mark.parametrize("name_len", [2, 100])
def test_display_name_bounds_accepted(client: httpx.Client, name_len: int) -> None:
    r = client.post(
        "/v2/parties", json=_party_body(cpf=make_cpf(name_len), displayName="N" * name_len)
    )
    assert r.status_code == 201


def test_business_defaults_by_length(client: httpx.Client) -> None:
    r = client.post("/v2/parties", json={"cpf": make_cnpj(1), "displayName": "ACME Ltda"})
    assert r.status_code == 201
    assert r.json()["partyType"] == "business"
    assert r.json()["profile"]["documentType"] == "cnpj"
    r = client.post(
        "/v2/parties", json={"cpf": make_cnpj(2), "displayName": "X", "partyType": "person"}
    )
    assert r.status_code == 400


@pytest.mark.parametrize(
    ("headers", "content", "code"),
    [
        ({"content-type": "application/json"}, b"{not json", "invalid_json"),
        ({"content-type": "application/json"}, b"", "invalid_json"),
        ({"content-type": "application/json"}, b"[1, 2]", "invalid_json"),
        ({"content-type": "application/json"}, b"\xff\xfe", "invalid_json"),
        ({"content-type": "application/json"}, b"[" * 100_000, "invalid_json"),
        ({"content-type": "text/plain"}, b'{"cpf": "52998224725"}', "unsupported_content_type"),
        ({}, b'{"cpf": "52998224725"}', "unsupported_content_type"),
    ],
)
def test_malformed_bodies_in_both_shapes(
    client: httpx.Client, headers: dict, content: bytes, code: str
) -> None:
    r = client.post("/v2/parties", content=content, headers=headers)
    assert r.status_code == 400 and r.json() == {"error": r.json()["error"], "code": code}
    r = client.post("/v2/intents/onramp", content=content, headers=headers)
    assert r.status_code == 400
    assert r.json()["code"] == code and "message" in r.json() and "validationErrors" in r.json()


# --- PATCH wallet -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "solanaWallet"),
        ({"solanaWallet": None}, "solanaWallet"),
        ({"solanaWallet": ""}, "solanaWallet"),
        ({"solanaWallet": "not-base58-0OIl"}, "solanaWallet"),
        ({"solanaWallet": base58.b58encode(b"\x05" * 31).decode()}, "solanaWallet"),
        ({"solanaWallet": make_wallet(5), "chainId": "solana"}, "chainId"),
    ],
)
def test_wallet_body_validation(client: httpx.Client, new_party, body: dict, field: str) -> None:
    party = new_party(wallet=False)
    r = client.patch(f"/v2/parties/{party['id']}/wallet", json=body)
    assert r.status_code == 400
    assert r.json()["error"].startswith(field + ":") and set(r.json()) == {"error", "code"}


# --- intents bodies -----------------------------------------------------------------------


@pytest.fixture
def wallet(new_party) -> str:
    return new_party()["profile"]["solanaWallet"]


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"amountCents": ...}, "amountCents"),
        ({"amountCents": 0}, "amountCents"),
        ({"amountCents": -5}, "amountCents"),
        ({"amountCents": 10.0}, "amountCents"),
        ({"amountCents": 10.5}, "amountCents"),
        ({"amountCents": True}, "amountCents"),
        ({"amountCents": "100"}, "amountCents"),
        ({"amountCents": None}, "amountCents"),
        ({"amountCents": 2**60}, "amountCents"),
        ({"destinationWallet": ...}, "destinationWallet"),
        ({"destinationWallet": ""}, "destinationWallet"),
        ({"destinationWallet": "x" * 256}, "destinationWallet"),
        ({"destinationWallet": "0OIl" * 10}, "destinationWallet"),
        ({"destinationWallet": 12}, "destinationWallet"),
        ({"chainId": ...}, "chainId"),
        ({"chainId": "ethereum"}, "chainId"),
        ({"chainId": "SOLANA"}, "chainId"),
        ({"clientReference": "r" * 256}, "clientReference"),
        ({"clientReference": 7}, "clientReference"),
    ],
)
def test_onramp_validation(client: httpx.Client, wallet: str, over: dict, field: str) -> None:
    body = {"amountCents": 100, "destinationWallet": wallet, "chainId": "solana", **over}
    body = {k: val for k, val in body.items() if val is not ...}
    r = client.post("/v2/intents/onramp", json=body)
    assert r.status_code == 400
    err = r.json()
    assert {"code", "message", "validationErrors"} <= set(err)
    assert [e["field"] for e in err["validationErrors"]] == [field]


def test_onramp_reports_every_bad_field(client: httpx.Client) -> None:
    r = client.post("/v2/intents/onramp", json={"amountCents": -1, "chainId": "btc"})
    fields = {e["field"] for e in r.json()["validationErrors"]}
    assert r.status_code == 400 and fields == {"amountCents", "destinationWallet", "chainId"}


def test_client_reference_255_accepted(client: httpx.Client, wallet: str) -> None:
    body = {"amountCents": 1, "destinationWallet": wallet, "chainId": "solana"}
    r = client.post("/v2/intents/onramp", json={**body, "clientReference": "r" * 255})
    assert r.status_code == 201 and r.json()["clientReference"] == "r" * 255


@pytest.mark.parametrize(
    ("over", "field"),
    [
        ({"destinationAddress": ...}, "destinationAddress"),
        ({"destinationAddress": ""}, "destinationAddress"),
        ({"destinationAddress": "a" * 256}, "destinationAddress"),
        ({"amountCents": 0}, "amountCents"),
        ({"amountCents": 1.25}, "amountCents"),
        ({"chainId": "eth"}, "chainId"),
        ({"clientReference": "c" * 256}, "clientReference"),
    ],
)
def test_offramp_validation(client: httpx.Client, over: dict, field: str) -> None:
    body = {"amountCents": 100, "destinationAddress": make_cpf(1), "chainId": "solana", **over}
    body = {k: val for k, val in body.items() if val is not ...}
    r = client.post("/v2/intents/offramp", json=body)
    assert r.status_code == 400
    assert [e["field"] for e in r.json()["validationErrors"]] == [field]


def test_destination_address_255_passes_validation(client: httpx.Client) -> None:
    # 255 characters is structurally fine; it then fails party resolution with its own code
    body = {"amountCents": 100, "destinationAddress": "a" * 255, "chainId": "solana"}
    r = client.post("/v2/intents/offramp", json=body)
    assert r.status_code == 400 and r.json()["code"] == "unknown_destination_address"


@pytest.mark.parametrize(
    "key",
    [
        "abc",
        "123",
        "92e07e63-f8f9-4957-9f1e-5c6e78cfe961x",
        "{a2d27f52-ab57-4407-8120-a6225fc65417}",
    ],
)
def test_idempotency_key_must_be_uuid(client: httpx.Client, wallet: str, key: str) -> None:
    body = {"amountCents": 100, "destinationWallet": wallet, "chainId": "solana"}
    r = client.post("/v2/intents/onramp", json=body, headers={"idempotency-key": key})
    assert r.status_code == 400 and r.json()["code"] == "invalid_idempotency_key"
    assert r.json()["validationErrors"][0]["field"] == "idempotency-key"


# --- list query ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"limit": "0"}, "limit"),
        ({"limit": "101"}, "limit"),
        ({"limit": "-1"}, "limit"),
        ({"limit": "abc"}, "limit"),
        ({"limit": "1.5"}, "limit"),
        ({"limit": ""}, "limit"),
        ({"limit": "9" * 40}, "limit"),
        ({"offset": "-1"}, "offset"),
        ({"offset": "x"}, "offset"),
        ({"offset": "2.0"}, "offset"),
        ({"intentType": "swap"}, "intentType"),
        ({"intentType": "ONRAMP"}, "intentType"),
        ({"status": "done"}, "status"),
    ],
)
def test_list_query_validation(client: httpx.Client, params: dict, field: str) -> None:
    r = client.get("/v2/intents", params=params)
    assert r.status_code == 400
    assert [e["field"] for e in r.json()["validationErrors"]] == [field]


@pytest.mark.parametrize(("limit", "applied"), [(None, 50), ("1", 1), ("100", 100)])
def test_list_limit_bounds(client: httpx.Client, limit: str | None, applied: int) -> None:
    params = {"limit": limit} if limit else {}
    r = client.get("/v2/intents", params=params)
    assert r.status_code == 200 and r.json()["limit"] == applied and r.json()["offset"] == 0


# --- approve-burn body --------------------------------------------------------------------


@settings(deadline=None, max_examples=30)
@given(st.text(min_size=1, max_size=100))
def test_non_base58_signature_is_a_validation_error(text: str) -> None:
    assume_bad = any(c not in base58.alphabet.decode() for c in text)
    if assume_bad:
        assert not v.is_base58(text)
    else:
        assert v.is_base58(text)
