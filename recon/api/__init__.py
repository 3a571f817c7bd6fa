"""recon.api: typed client of the v2 Intents and Parties API, and its OpenAPI document.

    from recon.api import Client
    with Client("http://127.0.0.1:8700", api_key) as api:
        party = api.create_party(cpf="52998224725", display_name="Ana Souza")

Errors are the :mod:`recon.errors` tree (``ApiError`` and its subclasses).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from recon.api._retry import RetryPolicy, parse_retry_after
from recon.api.client import AsyncClient, Client, ClientStats, RawPage
from recon.api.models import (
    Intent,
    IntentPage,
    IntentStatus,
    IntentType,
    Party,
    PartyProfile,
    PartyStatus,
    PartySummary,
    PartyType,
    PixInfo,
    ResponseShapeError,
)
from recon.api.protocol import Limits

__all__ = [
    "AsyncClient",
    "Client",
    "ClientStats",
    "Intent",
    "IntentPage",
    "IntentStatus",
    "IntentType",
    "Limits",
    "Party",
    "PartyProfile",
    "PartyStatus",
    "PartySummary",
    "PartyType",
    "PixInfo",
    "RawPage",
    "ResponseShapeError",
    "RetryPolicy",
    "openapi_document",
    "parse_retry_after",
]


def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of the v2 surface, shipped as package data (a fresh copy)."""
    text = resources.files("recon.api").joinpath("openapi.json").read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    return document
