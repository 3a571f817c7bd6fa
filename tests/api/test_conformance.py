"""The client against the emulator (in-process and over a real loopback server).

Every call goes through `recon.api.Client`, and every response is also checked against
recon/api/openapi.json by a validating transport, so these tests hold three things together:
the spec's rules (tables 7.3 and 8), the emulator, and the client's mapping of them.
"""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import base58
import httpx
import pytest

from recon.api import AsyncClient, Client, IntentStatus, IntentType, PartyStatus, RetryPolicy
from recon.errors import Conflict, NotFound, Unauthorized, ValidationError
from recon.sandbox.asgi import create_app
from recon.sandbox.emulator import Emulator
from recon.sandbox.serving import run_in_thread
from recon.sandbox.signatures import sign_approval, token_account_for
from recon.sandbox.transport import AsyncEmulatorTransport, EmulatorTransport
from recon.sandbox.wire_faults import WireFaults

from ._oas import ValidatingTransport

# --------------------------------------------------------------------------- valid inputs
# Computed here (not imported from the emulator) so a wrong check-digit rule there fails.

_serial = itertools.count(1)


def _mod11(digits: list[int], weights: list[int]) -> int:
    rest = sum(d * w for d, w in zip(digits, weights, strict=True)) % 11
    return 0 if rest < 2 else 11 - rest


def new_cpf() -> str:
    """A fresh valid CPF (11 digits, check digits per Receita Federal)."""
    digits = [int(c) for c in f"{next(_serial) * 7919 + 100_000_000:09d}"[-9:]]
    digits.append(_mod11(digits, list(range(10, 1, -1))))
    digits.append(_mod11(digits, list(range(11, 1, -1))))
    return "".join(map(str, digits))


def new_cnpj() -> str:
    """A fresh valid CNPJ (14 digits)."""
    digits = [int(c) for c in f"{next(_serial) * 104729 + 10_000_000:08d}"[-8:] + "0001"]
    digits.append(_mod11(digits, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]))
    digits.append(_mod11(digits, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]))
    return "".join(map(str, digits))


def new_wallet() -> str:
    """A fresh Solana address: base58 of 32 bytes."""
    return base58.b58encode(uuid.uuid4().bytes + uuid.uuid4().bytes).decode()


def test_input_helpers_make_known_valid_documents() -> None:
    # 529.982.247-25 and 11.222.333/0001-81 are the classic published valid examples.
    digits = [5, 2, 9, 9, 8, 2, 2, 4, 7]
    assert _mod11(digits, list(range(10, 1, -1))) == 2
    assert _mod11([*digits, 2], list(range(11, 1, -1))) == 5
    assert (
        len(new_cpf()) == 11 and len(new_cnpj()) == 14 and len(base58.b58decode(new_wallet())) == 32
    )


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def emulator() -> Emulator:
    return Emulator(seed=2026)


@pytest.fixture(scope="module")
def loopback_url(emulator: Emulator) -> Iterator[str]:
    with run_in_thread(create_app(emulator)) as url:
        yield url


@pytest.fixture(scope="module")
def http_transport() -> Iterator[httpx.HTTPTransport]:
    # One connection pool for the module: building an SSL context per client costs ~0.1 s.
    with httpx.HTTPTransport() as transport:
        yield transport


class Api:
    """A client of instance 0 (and one of instance 1) on one transport kind."""

    def __init__(
        self, emulator: Emulator, kind: str, base_url: str | None, http: httpx.BaseTransport
    ):
        self.emulator = emulator
        self.http = http
        self.kind = kind
        self.base_url = base_url
        self.transports: list[ValidatingTransport] = []
        self.clients: list[Client] = []
        self.client = self.make(emulator.instances[0].api_key)
        self.other = self.make(emulator.instances[1].api_key)

    def make(self, key: str) -> Client:
        inner: httpx.BaseTransport = (
            EmulatorTransport(self.emulator) if self.kind == "in-process" else self.http
        )
        transport = ValidatingTransport(inner, owns_inner=False)
        self.transports.append(transport)
        client = Client(self.base_url, key, transport=transport, retry=RetryPolicy(max_attempts=1))
        self.clients.append(client)
        return client

    def raw(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """A request the typed client cannot express (e.g. a body missing a required field)."""
        headers = {"X-API-Key": self.emulator.instances[0].api_key, **kw.pop("headers", {})}
        transport = self.transports[0]
        http = httpx.Client(transport=transport, base_url=self.base_url or "http://sandbox")
        return http.request(method, path, headers=headers, **kw)  # closed with the client

    def party(self, *, wallet: bool = True, **kw: Any) -> tuple[str, str, str]:
        """A new party (with a bound wallet by default): (party_id, cpf, wallet)."""
        cpf = new_cpf()
        party = self.client.create_party(cpf=cpf, display_name="Conformance Party", **kw)
        address = new_wallet()
        if wallet:
            self.client.bind_wallet(party.id, address)
        return party.id, cpf, address


@pytest.fixture(params=["in-process", "loopback"])
def api(request: pytest.FixtureRequest, emulator: Emulator) -> Iterator[Api]:
    loopback = request.param == "loopback"
    base_url = request.getfixturevalue("loopback_url") if loopback else None
    http = request.getfixturevalue("http_transport") if loopback else EmulatorTransport(emulator)
    api = Api(emulator, request.param, base_url, http)
    yield api
    for client in api.clients:
        client.close()
    problems = [p for t in api.transports for p in t.problems]
    assert problems == [], "responses that break recon/api/openapi.json"


def _names_field(exc: ValidationError, field: str) -> bool:
    return field in {e["field"] for e in exc.validation_errors} or field in str(exc)


# --------------------------------------------------------------------------- parties


def test_party_create_get_bind_and_rebind(api: Api) -> None:
    cpf = new_cpf()
    party = api.client.create_party(
        cpf=cpf,
        display_name="Ana Souza",
        external_ref="crm-77",
        email="ana.souza@example.com",
        phone="+55 11 91234-5678",
    )
    assert party.status is PartyStatus.PENDING
    assert party.external_ref == "crm-77" and party.country_code == "BR"
    assert party.profile.document_type == "cpf" and party.profile.solana_wallet is None
    assert cpf not in party.profile.document_masked and "*" in party.profile.document_masked
    assert party.profile.document_masked.endswith(cpf[-2:])
    raw_text = str(party.raw)
    assert (
        "ana.souza@example.com" not in raw_text and "91234" not in raw_text and cpf not in raw_text
    )
    assert api.client.get_party(party.id) == party
    first, second = new_wallet(), new_wallet()
    assert api.client.bind_wallet(party.id, first).profile.solana_wallet == first
    rebound = api.client.bind_wallet(party.id, second)  # replaces: at most one wallet
    assert rebound.profile.solana_wallet == second
    assert api.client.get_party(party.id).profile.solana_wallet == second


def test_business_party_from_a_cnpj(api: Api) -> None:
    party = api.client.create_party(cpf=new_cnpj(), display_name="Acme Ltda", party_type="business")
    assert party.party_type == "business" and party.profile.document_type == "cnpj"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"cpf": "529.982.247-25"}, "cpf"),  # digits only
        ({"cpf": "5299822472"}, "cpf"),  # 10 digits
        ({"cpf": "529982247250"}, "cpf"),  # 12 digits
        ({"cpf": "52998224726"}, "cpf"),  # wrong check digit
        ({"display_name": "A"}, "displayName"),  # 2-100
        ({"display_name": "A" * 101}, "displayName"),
        ({"email": "not-an-email"}, "email"),
        ({"party_type": "robot"}, "partyType"),
    ],
)
def test_party_validation_400_names_the_field(api: Api, kwargs: dict[str, Any], field: str) -> None:
    args: dict[str, Any] = {"cpf": new_cpf(), "display_name": "Valid Name", **kwargs}
    with pytest.raises(ValidationError) as info:
        api.client.create_party(**args)
    assert info.value.status_code == 400 and _names_field(info.value, field)


@pytest.mark.parametrize("name", ["Al", "B" * 100])
def test_display_name_limits_are_inclusive(api: Api, name: str) -> None:
    assert api.client.create_party(cpf=new_cpf(), display_name=name).profile.display_name == name


def test_party_missing_required_field_is_400_in_the_parties_shape(api: Api) -> None:
    response = api.raw("POST", "/v2/parties", json={"displayName": "No Document"})
    assert response.status_code == 400
    assert isinstance(response.json()["error"], str) and "cpf" in response.json()["error"]


def test_party_conflict_409_for_an_existing_document(api: Api) -> None:
    cpf = new_cpf()
    api.client.create_party(cpf=cpf, display_name="First")
    with pytest.raises(Conflict) as info:
        api.client.create_party(cpf=cpf, display_name="Second")
    assert info.value.status_code == 409


def test_get_party_404_unknown_and_other_instance(api: Api) -> None:
    with pytest.raises(NotFound):
        api.client.get_party(str(uuid.uuid4()))
    party_id, _, _ = api.party(wallet=False)
    with pytest.raises(NotFound):  # scoped to the key's instance, never leaked
        api.other.get_party(party_id)


def test_bind_wallet_400_and_404(api: Api) -> None:
    party_id, _, _ = api.party(wallet=False)
    with pytest.raises(ValidationError) as info:
        api.client.bind_wallet(party_id, "not-base58-0OIl")
    assert _names_field(info.value, "solanaWallet")
    with pytest.raises(ValidationError):  # base58 but 16 bytes, not 32
        api.client.bind_wallet(party_id, base58.b58encode(b"x" * 16).decode())
    missing = api.raw("PATCH", f"/v2/parties/{party_id}/wallet", json={})
    assert missing.status_code == 400 and "solanaWallet" in missing.json()["error"]
    body = {"solanaWallet": new_wallet(), "chainId": "solana"}  # exactly one field, no chainId
    extra = api.raw("PATCH", f"/v2/parties/{party_id}/wallet", json=body)
    assert extra.status_code == 400 and "chainId" in extra.json()["error"]
    with pytest.raises(NotFound):
        api.client.bind_wallet(str(uuid.uuid4()), new_wallet())
    with pytest.raises(NotFound):
        api.other.bind_wallet(party_id, new_wallet())


# --------------------------------------------------------------------------- onramp


def test_onramp_resolves_the_party_by_bound_wallet(api: Api) -> None:
    party_id, _, wallet = api.party()
    intent = api.client.create_onramp(
        amount_cents=12_345, destination_wallet=wallet, chain_id="polygon", client_reference="o-1"
    )
    assert intent.party_id == party_id and intent.intent_type is IntentType.ONRAMP
    assert intent.chain_id == "solana"  # responses only ever carry solana
    assert intent.pix_info is not None and intent.pix_info.amount_cents == 12_345
    assert intent.pix_info.key_type == "cnpj" and intent.deposit_instructions is None
    assert intent.client_reference == "o-1" and intent.amount_cents == 12_345
    assert intent.party is not None and intent.party.solana_wallet == wallet
    assert intent.expires_at is not None and intent.expires_at > intent.created_at
    assert api.client.get_intent(intent.id) == intent


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"amount_cents": 0}, "amountCents"),
        ({"amount_cents": -100}, "amountCents"),
        ({"amount_cents": 10.5}, "amountCents"),
        ({"amount_cents": "100"}, "amountCents"),
        ({"destination_wallet": ""}, "destinationWallet"),
        ({"destination_wallet": "x" * 256}, "destinationWallet"),
        ({"destination_wallet": "0OIl-not-base58"}, "destinationWallet"),
        ({"destination_wallet": "WALLET_NOT_BOUND"}, "destinationWallet"),
        ({"chain_id": "ethereum"}, "chainId"),
        ({"client_reference": "r" * 256}, "clientReference"),
        ({"idempotency_key": "not-a-uuid"}, "idempotency-key"),
    ],
)
def test_onramp_validation_400_names_the_field(
    api: Api, kwargs: dict[str, Any], field: str
) -> None:
    _, _, wallet = api.party()
    args: dict[str, Any] = {"amount_cents": 100, "destination_wallet": wallet, **kwargs}
    if args["destination_wallet"] == "WALLET_NOT_BOUND":
        args["destination_wallet"] = new_wallet()
    with pytest.raises(ValidationError) as info:
        api.client.create_onramp(**args)
    assert _names_field(info.value, field), info.value.validation_errors


def test_onramp_limits_accept_the_boundaries(api: Api) -> None:
    _, _, wallet = api.party()
    intent = api.client.create_onramp(
        amount_cents=1, destination_wallet=wallet, client_reference="r" * 255
    )
    assert intent.amount_cents == 1 and intent.client_reference == "r" * 255


def test_onramp_missing_required_fields_are_400_in_the_intents_shape(api: Api) -> None:
    response = api.raw("POST", "/v2/intents/onramp", json={"amountCents": 100})
    body = response.json()
    assert response.status_code == 400
    fields = {e["field"] for e in body["validationErrors"]}
    assert {"destinationWallet", "chainId"} <= fields and isinstance(body["message"], str)


def test_onramp_idempotency_same_body_same_response_other_body_409(api: Api) -> None:
    _, _, wallet = api.party()
    key = str(uuid.uuid4())
    first = api.client.create_onramp(
        amount_cents=500, destination_wallet=wallet, idempotency_key=key
    )
    again = api.client.create_onramp(
        amount_cents=500, destination_wallet=wallet, idempotency_key=key
    )
    assert again.raw == first.raw
    with pytest.raises(Conflict) as info:
        api.client.create_onramp(amount_cents=501, destination_wallet=wallet, idempotency_key=key)
    assert info.value.code and info.value.status_code == 409
    other = api.client.create_onramp(amount_cents=500, destination_wallet=wallet)  # new key
    assert other.id != first.id


# --------------------------------------------------------------------------- offramp


@pytest.mark.parametrize("pix_key", ["document", "email", "phone"])
def test_offramp_resolves_the_party_by_pix_key(api: Api, pix_key: str) -> None:
    n = next(_serial)
    email, phone = f"payee{n}@example.com", f"+55 11 9{n:04d}-{n % 10000:04d}"
    party_id, cpf, _ = api.party(email=email, phone=phone)
    address = {"document": cpf, "email": email, "phone": phone}[pix_key]
    intent = api.client.create_offramp(amount_cents=20_000, destination_address=address)
    assert intent.party_id == party_id and intent.intent_type is IntentType.OFFRAMP
    assert intent.pix_info is None and intent.deposit_instructions is None
    assert intent.status is IntentStatus.AWAITING_BURN_APPROVAL
    assert (intent.amount_cents, intent.destination_address) == (20_000, address)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"amount_cents": 0}, "amountCents"),
        ({"destination_address": ""}, "destinationAddress"),
        ({"destination_address": "k" * 256}, "destinationAddress"),
        ({"destination_address": "nobody@example.com"}, "destinationAddress"),
        ({"chain_id": "bitcoin"}, "chainId"),
        ({"client_reference": "r" * 256}, "clientReference"),
    ],
)
def test_offramp_validation_400_names_the_field(
    api: Api, kwargs: dict[str, Any], field: str
) -> None:
    _, cpf, _ = api.party()
    args: dict[str, Any] = {"amount_cents": 100, "destination_address": cpf, **kwargs}
    with pytest.raises(ValidationError) as info:
        api.client.create_offramp(**args)
    assert _names_field(info.value, field), info.value.validation_errors


def test_offramp_idempotency_409(api: Api) -> None:
    _, cpf, _ = api.party()
    key = str(uuid.uuid4())
    first = api.client.create_offramp(
        amount_cents=700, destination_address=cpf, idempotency_key=key
    )
    assert (
        api.client.create_offramp(amount_cents=700, destination_address=cpf, idempotency_key=key).id
        == first.id
    )
    with pytest.raises(Conflict):
        api.client.create_offramp(
            amount_cents=700, destination_address=cpf + "0", idempotency_key=key
        )


# --------------------------------------------------------------------------- get / list


def test_get_intent_404_unknown_and_other_instance(api: Api) -> None:
    with pytest.raises(NotFound):
        api.client.get_intent(str(uuid.uuid4()))
    _, _, wallet = api.party()
    intent = api.client.create_onramp(amount_cents=100, destination_wallet=wallet)
    with pytest.raises(NotFound):
        api.other.get_intent(intent.id)


def test_list_filters_order_pagination_and_server_date(api: Api) -> None:
    _, cpf, wallet = api.party()
    made = []
    for i in range(3):
        api.emulator.clock.advance(1)  # distinct createdAt: the list is newest first
        made.append(api.client.create_onramp(amount_cents=100 + i, destination_wallet=wallet))
    api.emulator.clock.advance(1)
    made.append(api.client.create_offramp(amount_cents=900, destination_address=cpf))
    page = api.client.list_intents(limit=4)
    assert page.limit == 4 and page.offset == 0 and page.total >= 4
    assert [i.id for i in page.intents] == [i.id for i in reversed(made)]
    stamps = [(i.created_at, i.id) for i in api.client.list_intents(limit=100).intents]
    assert stamps == sorted(stamps, reverse=True)  # ties on createdAt: id descending
    offramps = api.client.list_intents(intent_type="offramp", limit=100)
    assert offramps.intents and all(i.intent_type is IntentType.OFFRAMP for i in offramps.intents)
    waiting = api.client.list_intents(status="awaiting_fiat_payment", intent_type="onramp", limit=1)
    assert waiting.limit == 1 and len(waiting.intents) == 1
    assert waiting.intents[0].status is IntentStatus.AWAITING_FIAT_PAYMENT
    second = api.client.list_intents(limit=2, offset=2)
    assert [i.id for i in second.intents] == [made[1].id, made[0].id]
    everything = list(api.client.iter_intents(page_size=7))
    assert len(everything) == page.total == len({i.id for i in everything})
    raw = api.client.list_intents_raw(limit=1)
    assert raw.date == api.emulator.http_date() and raw.server_time == api.emulator.clock.now()
    assert set(raw.body) == {"intents", "total", "limit", "offset"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 101}, "limit"),
        ({"offset": -1}, "offset"),
        ({"intent_type": "swap"}, "intentType"),
        ({"status": "teleported"}, "status"),
    ],
)
def test_list_validation_400_names_the_field(api: Api, kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        api.client.list_intents(**kwargs)
    assert _names_field(info.value, field)


@pytest.mark.parametrize(("limit", "offset"), [(1, 0), (100, 0), (50, 10**6)])
def test_list_limits_accept_the_boundaries(api: Api, limit: int, offset: int) -> None:
    page = api.client.list_intents(limit=limit, offset=offset)
    assert (page.limit, page.offset) == (limit, offset) and len(page.intents) <= limit


def test_list_defaults_are_limit_50_offset_0(api: Api) -> None:
    body = api.raw("GET", "/v2/intents").json()
    assert (body["limit"], body["offset"]) == (50, 0)


# --------------------------------------------------------------------------- approve-burn


def _offramp(api: Api, amount: int = 20_000) -> tuple[str, str, int]:
    _, cpf, wallet = api.party()
    intent = api.client.create_offramp(amount_cents=amount, destination_address=cpf)
    return intent.id, token_account_for(wallet), amount


def test_approve_burn_moves_the_intent_and_replays_with_the_same_signature(api: Api) -> None:
    intent_id, holder, amount = _offramp(api)
    signature = sign_approval(intent_id, holder, amount)
    assert (
        api.client.approve_burn(intent_id, tx_signature=signature, token_holder=holder)
        == "burn_approved"
    )
    assert api.client.get_intent(intent_id).status is IntentStatus.BURN_APPROVED
    # The signature is the deduplication key: the same one on the same intent is the same 200.
    assert (
        api.client.approve_burn(intent_id, tx_signature=signature, token_holder=holder)
        == "burn_approved"
    )
    other_id, other_holder, _ = _offramp(api)
    with pytest.raises(ValidationError):  # reused on another intent
        api.client.approve_burn(other_id, tx_signature=signature, token_holder=other_holder)


@pytest.mark.parametrize("problem", ["bad_signature", "wrong_signer", "wrong_amount", "onramp"])
def test_approve_burn_refusals_are_400(api: Api, problem: str) -> None:
    intent_id, holder, amount = _offramp(api)
    signer = holder
    if problem == "bad_signature":
        signature = base58.b58encode(b"\x01" * 64).decode()
    elif problem == "wrong_signer":
        signer = token_account_for(new_wallet())
        signature = sign_approval(intent_id, signer, amount)
    elif problem == "wrong_amount":
        signature = sign_approval(intent_id, holder, amount + 1)
    else:
        _, _, wallet = api.party()
        intent_id = api.client.create_onramp(amount_cents=100, destination_wallet=wallet).id
        signature = sign_approval(intent_id, holder, 100)
    with pytest.raises(ValidationError) as info:
        api.client.approve_burn(intent_id, tx_signature=signature, token_holder=signer)
    assert info.value.code and info.value.message


@pytest.mark.parametrize(
    ("signature", "holder", "field"),
    [
        ("", "H" * 32, "txSignature"),
        ("5" * 10, "H" * 31, "tokenHolder"),
        ("5" * 10, "H" * 45, "tokenHolder"),
    ],
)
def test_approve_burn_body_limits(api: Api, signature: str, holder: str, field: str) -> None:
    intent_id, _, _ = _offramp(api)
    with pytest.raises(ValidationError) as info:
        api.client.approve_burn(intent_id, tx_signature=signature, token_holder=holder)
    assert _names_field(info.value, field)


@pytest.mark.parametrize("length", [32, 44])
def test_approve_burn_token_holder_length_limits_are_inclusive(api: Api, length: int) -> None:
    intent_id, _, _ = _offramp(api)
    signature = base58.b58encode(b"\x02" * 64).decode()
    with pytest.raises(ValidationError) as info:  # refused, but for the signature, not the length
        api.client.approve_burn(intent_id, tx_signature=signature, token_holder="H" * length)
    assert "tokenHolder" not in {e["field"] for e in info.value.validation_errors}
    assert info.value.code != "validation_error"


def test_approve_burn_404(api: Api) -> None:
    with pytest.raises(NotFound):
        api.client.approve_burn(str(uuid.uuid4()), tx_signature="5" * 10, token_holder="H" * 32)
    intent_id, holder, amount = _offramp(api)
    with pytest.raises(NotFound):
        api.other.approve_burn(
            intent_id, tx_signature=sign_approval(intent_id, holder, amount), token_holder=holder
        )


# --------------------------------------------------------------------------- auth


@pytest.mark.parametrize("key", ["", "rk_wrong_key"])
def test_missing_or_wrong_key_is_401_in_the_intents_shape_on_both_families(
    api: Api, key: str
) -> None:
    client = api.make(key)
    for call in (lambda: client.get_party(str(uuid.uuid4())), lambda: client.list_intents()):
        with pytest.raises(Unauthorized) as info:
            call()
        assert info.value.code == "unauthorized" and info.value.status_code == 401
        assert isinstance(info.value.body, dict) and "message" in info.value.body


# --------------------------------------------------------------------------- wire faults


def test_retries_through_injected_429_and_5xx_create_each_intent_once() -> None:
    emulator = Emulator(seed=7)
    faults = WireFaults(rate_429=0.3, rate_5xx=0.2, retry_after=0, seed=3)
    with run_in_thread(create_app(emulator, faults=faults)) as url:
        client = Client(
            url,
            emulator.instances[0].api_key,
            retry=RetryPolicy(max_attempts=12, base_delay=0.001, max_delay=0.01, budget=30),
        )
        party = client.create_party(cpf=new_cpf(), display_name="Faulty Net")
        wallet = new_wallet()
        client.bind_wallet(party.id, wallet)
        made = {
            client.create_onramp(amount_cents=100 + i, destination_wallet=wallet).id
            for i in range(15)
        }
        listed = {i.id for i in client.iter_intents(page_size=5)}
        client.close()
    assert listed == made and emulator.intent_count() == 15
    assert (
        client.stats.retries > 0
        and client.stats.rate_limited > 0
        and client.stats.server_errors > 0
    )


def test_async_client_against_the_emulator() -> None:
    import asyncio

    emulator = Emulator(seed=8)

    async def scenario() -> tuple[int, int]:
        async with AsyncClient(
            api_key=emulator.instances[0].api_key, transport=AsyncEmulatorTransport(emulator)
        ) as client:
            party = await client.create_party(cpf=new_cpf(), display_name="Async Ana")
            wallet = new_wallet()
            await client.bind_wallet(party.id, wallet)
            await asyncio.gather(
                *(
                    client.create_onramp(amount_cents=100 + i, destination_wallet=wallet)
                    for i in range(10)
                )
            )
            ids = [i.id async for i in client.iter_intents(page_size=3)]
            return len(ids), len(set(ids))

    assert asyncio.run(scenario()) == (10, 10)


def test_async_client_over_loopback_with_faults_creates_each_intent_once() -> None:
    import asyncio

    emulator = Emulator(seed=9)
    faults = WireFaults(rate_429=0.25, rate_5xx=0.15, retry_after=0, seed=5)
    policy = RetryPolicy(max_attempts=15, base_delay=0.001, max_delay=0.01, budget=30)
    with run_in_thread(create_app(emulator, faults=faults)) as url:

        async def scenario() -> tuple[set[str], set[str], Any]:
            async with AsyncClient(url, emulator.instances[0].api_key, retry=policy) as client:
                party = await client.create_party(cpf=new_cpf(), display_name="Async Net")
                wallet = new_wallet()
                await client.bind_wallet(party.id, wallet)
                made = await asyncio.gather(
                    *(
                        client.create_onramp(amount_cents=100 + i, destination_wallet=wallet)
                        for i in range(12)
                    )
                )
                listed = {i.id async for i in client.iter_intents(page_size=5)}
                return {i.id for i in made}, listed, client.stats

        made, listed, stats = asyncio.run(scenario())
    assert made == listed and len(made) == 12 == emulator.intent_count()
    assert stats.retries > 0 and stats.rate_limited > 0


def test_key_stays_out_of_every_log_record_on_a_real_connection(
    api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # httpx/httpcore debug traces included
    party_id, _, wallet = api.party()
    api.client.create_onramp(amount_cents=100, destination_wallet=wallet)
    with pytest.raises(NotFound):
        api.client.get_party(str(uuid.uuid4()))
    key = api.emulator.instances[0].api_key
    assert caplog.records and all(key not in r.getMessage() for r in caplog.records)
    assert party_id
