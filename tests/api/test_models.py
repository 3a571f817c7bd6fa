"""Models: parse spec-shaped JSON, keep `raw`, and refuse malformed shapes naming the field."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.api import (
    Intent,
    IntentPage,
    IntentStatus,
    IntentType,
    Party,
    PartyStatus,
    PartyType,
    ResponseShapeError,
)
from recon.api.models import parse_timestamp
from recon.errors import ApiError

from ._payloads import WALLET, offramp_json, onramp_json, page_json, party_json

SPEC_STATUSES = [
    "created",
    "requires_compliance",
    "awaiting_fiat_payment",
    "fiat_received",
    "minting",
    "awaiting_onchain_transfer",
    "awaiting_burn_approval",
    "burn_approved",
    "onchain_received",
    "burning",
    "paying_out",
    "completed",
    "expired",
    "canceled",
    "failed",
    "refunded",
]


def test_enums_hold_exactly_the_spec_values() -> None:
    assert [s.value for s in IntentStatus] == SPEC_STATUSES
    assert {t.value for t in IntentType} == {"onramp", "offramp"}
    assert {s.value for s in PartyStatus} == {"pending", "active", "suspended", "blocked"}
    assert {t.value for t in PartyType} == {"person", "business"}
    assert IntentStatus.COMPLETED == "completed"  # StrEnum compares to the wire string
    assert IntentStatus.REFUNDED.is_terminal and not IntentStatus.MINTING.is_terminal


def test_party_parses_every_field() -> None:
    party = Party.from_api(party_json(externalRef="crm-9"))
    assert party.id.startswith("3f1c")
    assert party.party_type is PartyType.PERSON
    assert party.status is PartyStatus.PENDING
    assert party.external_ref == "crm-9"
    assert party.profile.document_masked == "*******4725"
    assert party.profile.solana_wallet is None
    assert party.created_at == datetime(2026, 11, 1, 12, tzinfo=UTC)
    assert party.updated_at.microsecond == 123000
    assert party.raw == party_json(externalRef="crm-9")


def test_onramp_and_offramp_parse_with_amounts_from_the_documented_places() -> None:
    onramp = Intent.from_api(onramp_json())
    assert onramp.intent_type is IntentType.ONRAMP
    assert onramp.status is IntentStatus.AWAITING_FIAT_PAYMENT
    assert onramp.pix_info is not None and onramp.pix_info.amount_cents == 15000
    assert (onramp.amount_cents, onramp.amount_source) == (15000, "pixInfo")
    assert onramp.party is not None and onramp.party.solana_wallet == WALLET
    assert onramp.deposit_instructions is None
    offramp = Intent.from_api(offramp_json())
    assert offramp.pix_info is None and offramp.expires_at is None
    assert (offramp.amount_cents, offramp.amount_source) == (20000, "metadata")
    assert offramp.destination_address == "ana@example.com"
    top = Intent.from_api(offramp_json(amountCents=999))  # a server-sent top level amount wins
    assert (top.amount_cents, top.amount_source) == (999, "amountCents")
    bare = Intent.from_api(offramp_json(metadata=None))
    assert bare.amount_cents is None and bare.destination_address is None


def test_models_are_frozen_hashable_and_raw_is_not_compared() -> None:
    party = Party.from_api(party_json())
    with pytest.raises(dataclasses.FrozenInstanceError):
        party.status = PartyStatus.ACTIVE  # type: ignore[misc]
    assert hash(party) == hash(Party.from_api(party_json()))
    intent = Intent.from_api(offramp_json())
    assert hash(intent)  # metadata (a dict) is excluded from the hash
    assert "raw" not in repr(party)


@pytest.mark.parametrize("key", sorted(party_json()))
def test_party_missing_field_is_named(key: str) -> None:
    data = party_json()
    del data[key]
    with pytest.raises(ResponseShapeError, match=rf"\b{key}\b") as info:
        Party.from_api(data)
    assert info.value.field == key
    assert isinstance(info.value, ApiError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("key", sorted(onramp_json()))
def test_intent_missing_field_is_named(key: str) -> None:
    data = onramp_json()
    del data[key]
    with pytest.raises(ResponseShapeError) as info:
        Intent.from_api(data)
    assert info.value.field == key


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (party_json(profile={"displayName": "A"}), "profile.documentType"),
        (party_json(profile=None), "profile"),
        (party_json(status="deleted"), "status"),
        (party_json(partyType=1), "partyType"),
        (party_json(createdAt="yesterday"), "createdAt"),
        (party_json(externalRef=5), "externalRef"),
    ],
)
def test_party_malformed_values_are_named(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ResponseShapeError) as info:
        Party.from_api(data)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("data", "field"),
    [
        (onramp_json(status="teleported"), "status"),
        (onramp_json(intentType="swap"), "intentType"),
        (onramp_json(flowVersion="2"), "flowVersion"),
        (onramp_json(flowVersion=True), "flowVersion"),
        (onramp_json(metadata=[1]), "metadata"),
        (onramp_json(pixInfo={"keyType": "cnpj"}), "pixInfo.keyValue"),
        (
            onramp_json(pixInfo=dict(onramp_json()["pixInfo"], amountCents=1.5)),
            "pixInfo.amountCents",
        ),
        (onramp_json(party={"displayName": "x"}), "party.documentMasked"),
        (onramp_json(expiresAt=12), "expiresAt"),
        (onramp_json(chainId=None), "chainId"),
    ],
)
def test_intent_malformed_values_are_named(data: dict[str, Any], field: str) -> None:
    with pytest.raises(ResponseShapeError, match="malformed API response") as info:
        Intent.from_api(data)
    assert info.value.field == field


def test_not_an_object_is_refused() -> None:
    with pytest.raises(ResponseShapeError):
        Party.from_api(["not", "an", "object"])
    with pytest.raises(ResponseShapeError):
        IntentPage.from_api("nope")


def test_page_parses_and_names_the_bad_item() -> None:
    page = IntentPage.from_api(page_json([onramp_json(), offramp_json()], total=3, limit=2))
    assert [i.intent_type for i in page.intents] == [IntentType.ONRAMP, IntentType.OFFRAMP]
    assert (page.total, page.limit, page.offset, page.next_offset) == (3, 2, 0, 2)
    last = IntentPage.from_api(page_json([onramp_json()], total=3, limit=2, offset=2))
    assert last.next_offset is None
    assert IntentPage.from_api(page_json([], total=0)).next_offset is None
    broken = onramp_json()
    del broken["status"]
    with pytest.raises(ResponseShapeError) as info:
        IntentPage.from_api(page_json([onramp_json(), broken], total=2))
    assert info.value.field == "intents[1].status"
    with pytest.raises(ResponseShapeError, match="intents"):
        IntentPage.from_api({"items": [], "total": 0, "limit": 50, "offset": 0})
    with pytest.raises(ResponseShapeError, match="total"):
        IntentPage.from_api({"intents": [], "limit": 50, "offset": 0})


def test_parse_timestamp_forms() -> None:
    assert parse_timestamp("2026-11-01T09:00:00-03:00") == datetime(2026, 11, 1, 12, tzinfo=UTC)
    assert parse_timestamp("2026-11-01T12:00:00").tzinfo is UTC  # naive taken as UTC
    with pytest.raises(ValueError):
        parse_timestamp("2026-13-01T00:00:00Z")


@given(st.sampled_from(sorted(onramp_json())), st.one_of(st.integers(), st.lists(st.none())))
def test_any_required_field_with_a_wrong_type_never_escapes_as_another_error(
    key: str, value: Any
) -> None:
    data = onramp_json()
    data[key] = value
    try:
        Intent.from_api(data)
    except ResponseShapeError as exc:
        assert exc.field is not None and exc.field.split(".")[0].split("[")[0] == key
    # Some (key, value) pairs are valid (flowVersion=int); those must simply parse.
