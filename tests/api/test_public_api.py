"""recon.api's public surface is listed once and is exactly the intended names."""

from __future__ import annotations

import recon
import recon.api


def test_exported_names_are_exactly_the_intended_ones() -> None:
    assert sorted(recon.api.__all__) == sorted(
        [
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
    )
    for name in recon.api.__all__:
        assert getattr(recon.api, name).__doc__, f"{name} has no docstring"


def test_the_top_level_package_re_exports_the_clients() -> None:
    assert recon.Client is recon.api.Client
    assert recon.AsyncClient is recon.api.AsyncClient
