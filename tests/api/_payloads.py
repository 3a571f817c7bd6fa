"""Spec-shaped JSON payloads and a fake clock shared by the client's unit tests."""

from __future__ import annotations

import copy
from typing import Any

PARTY_ID = "3f1c2b8e-6a4d-4e8f-9b1a-2c3d4e5f6a7b"
INSTANCE_ID = "0b9a8c7d-6e5f-4a3b-8c2d-1e0f9a8b7c6d"
INTENT_ID = "7c6b5a49-3827-4615-a4b3-c2d1e0f9a8b7"
OFFRAMP_ID = "9e8d7c6b-5a49-4382-a716-15a4b3c2d1e0"
WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
API_KEY = "sk_test_7f3a9c1e5b2d4f6a8c0e"


def party_json(**overrides: Any) -> dict[str, Any]:
    """A party object exactly as spec 2.1 describes it."""
    data: dict[str, Any] = {
        "id": PARTY_ID,
        "instanceId": INSTANCE_ID,
        "partyType": "person",
        "countryCode": "BR",
        "externalRef": None,
        "status": "pending",
        "profile": {
            "displayName": "Ana Souza",
            "documentType": "cpf",
            "documentMasked": "*******4725",
            "solanaWallet": None,
        },
        "createdAt": "2026-11-01T12:00:00Z",
        "updatedAt": "2026-11-01T12:00:00.123+00:00",
    }
    data.update(copy.deepcopy(overrides))
    return data


def onramp_json(**overrides: Any) -> dict[str, Any]:
    """An onramp intent object exactly as spec 2.2 describes it."""
    data: dict[str, Any] = {
        "id": INTENT_ID,
        "instanceId": INSTANCE_ID,
        "partyId": PARTY_ID,
        "intentType": "onramp",
        "flowVersion": 2,
        "adapter": None,
        "status": "awaiting_fiat_payment",
        "statusReason": None,
        "clientReference": "order-1",
        "metadata": None,
        "expiresAt": "2026-11-01T12:30:00Z",
        "createdAt": "2026-11-01T12:00:00Z",
        "updatedAt": "2026-11-01T12:00:01Z",
        "pixInfo": {
            "keyType": "cnpj",
            "keyValue": "12345678000195",
            "recipientName": "Servico Cripto Ltda",
            "bank": "Banco Exemplo",
            "description": "RECON 7c6b5a49",
            "amountCents": 15000,
        },
        "depositInstructions": None,
        "party": {
            "displayName": "Ana Souza",
            "documentMasked": "*******4725",
            "solanaWallet": WALLET,
        },
        "chainId": "solana",
    }
    data.update(copy.deepcopy(overrides))
    return data


def offramp_json(**overrides: Any) -> dict[str, Any]:
    """An offramp intent object (emulator choice: amount and destination in metadata)."""
    data = onramp_json(
        id=OFFRAMP_ID,
        intentType="offramp",
        status="awaiting_burn_approval",
        pixInfo=None,
        expiresAt=None,
        metadata={"amountCents": 20000, "destinationAddress": "ana@example.com"},
    )
    data.update(copy.deepcopy(overrides))
    return data


def page_json(intents: list[dict[str, Any]], total: int, limit: int = 50, offset: int = 0) -> dict:
    """A list page as spec 4.7 describes it."""
    return {"intents": intents, "total": total, "limit": limit, "offset": offset}


class FakeTime:
    """A monotonic clock that only moves when the code under test sleeps."""

    def __init__(self, start: float = 1000.0):
        self.now = start
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)
