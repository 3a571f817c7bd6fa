"""A tiny in-memory v2 list endpoint with hooks, to drive the walker through exact interleavings.

The fault tests run against the real emulator (recon.sandbox); this fake exists so the
consistency algorithm can be tested against adversarial timings the emulator does not produce
on demand (a page read, then the list shifts, then the next page).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

BASE = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)


def make_intent(n: int, *, status: str = "awaiting_fiat_payment", **extra: Any) -> dict[str, Any]:
    """A plausible onramp intent; `n` orders them (bigger = newer)."""
    created = BASE + timedelta(seconds=n)
    item: dict[str, Any] = {
        "id": str(uuid.UUID(int=n + 1)),
        "instanceId": "11111111-1111-1111-1111-111111111111",
        "partyId": "22222222-2222-2222-2222-222222222222",
        "intentType": "onramp",
        "flowVersion": 2,
        "adapter": None,
        "status": status,
        "statusReason": None,
        "clientReference": f"ref-{n}",
        "metadata": None,
        "expiresAt": (created + timedelta(minutes=30)).isoformat().replace("+00:00", "Z"),
        "createdAt": created.isoformat().replace("+00:00", "Z"),
        "updatedAt": created.isoformat().replace("+00:00", "Z"),
        "pixInfo": {
            "keyType": "cnpj",
            "keyValue": "12345678000199",
            "recipientName": "Service Ltda",
            "bank": "Banco",
            "description": f"REF{n}",
            "amountCents": 1000 + n,
        },
        "depositInstructions": None,
        "party": {"displayName": "Ana", "documentMasked": "***.456.789-**", "solanaWallet": None},
        "chainId": "solana",
    }
    item.update(extra)
    return item


@dataclass
class FakeList:
    """Intents newest first; `status` filter; `cap` on limit; `before_page(offset)` hook."""

    items: list[dict[str, Any]] = field(default_factory=list)
    cap: int = 100
    calls: list[tuple[int, int]] = field(default_factory=list)
    before_page: Callable[[FakeList, int], object] | None = None
    counter: int = 0
    delay: float = 0.0

    @classmethod
    def of(cls, n: int, **kw: Any) -> FakeList:
        fake = cls(**kw)
        for _ in range(n):
            fake.insert()
        return fake

    def insert(self, **extra: Any) -> dict[str, Any]:
        item = make_intent(self.counter, **extra)
        self.counter += 1
        self.items.insert(0, item)  # newest first
        return item

    def insert_at(self, index: int) -> dict[str, Any]:
        """A new intent somewhere in the middle (a list that does not grow at the head)."""
        item = make_intent(self.counter)
        self.counter += 1
        self.items.insert(index, item)
        return item

    def churn_everywhere(self, seed: int = 0) -> None:
        """From now on, every request first inserts an intent at a random position."""
        import random

        rng = random.Random(seed)
        self.before_page = lambda f, offset: f.insert_at(rng.randrange(len(f.items) + 1))

    def set_status(self, index: int, status: str) -> None:
        item = dict(self.items[index])
        item["status"] = status
        item["updatedAt"] = (
            datetime.fromisoformat(item["updatedAt"]) + timedelta(seconds=1)
        ).isoformat()
        self.items[index] = item

    def ids(self, status: str = "all") -> set[str]:
        return {i["id"] for i in self.items if status in ("all", i["status"])}

    def page(self, *, status: str, limit: int, offset: int) -> dict[str, Any]:
        self.calls.append((offset, limit))
        if self.before_page is not None:
            self.before_page(self, offset)
        chosen = [i for i in self.items if status in ("all", i["status"])]
        applied = min(limit, self.cap)
        return {
            "intents": json.loads(json.dumps(chosen[offset : offset + applied])),
            "total": len(chosen),
            "limit": applied,
            "offset": offset,
        }


@dataclass
class PageBytes:
    content: bytes
    date: str | None


@dataclass
class RawPage:
    body: dict[str, Any]
    date: str | None


class FakeAsyncClient:
    """Quacks like recon.api.AsyncClient for the list calls (all the extractor uses)."""

    base_url = "http://fake.invalid"

    def __init__(self, fake: FakeList, date: str | None = "Sun, 01 Nov 2026 12:30:00 GMT"):
        self.fake = fake
        self.date = date

    async def list_intents_raw(
        self, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
    ) -> RawPage:
        await asyncio.sleep(self.fake.delay)
        return RawPage(self.fake.page(status=status, limit=limit, offset=offset), self.date)

    async def list_intents_bytes(
        self, *, intent_type: str = "all", status: str = "all", limit: int = 50, offset: int = 0
    ) -> PageBytes:
        await asyncio.sleep(self.fake.delay)
        body = self.fake.page(status=status, limit=limit, offset=offset)
        return PageBytes(json.dumps(body).encode(), self.date)

    async def aclose(self) -> None:
        return None
