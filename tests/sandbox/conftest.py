"""Fixtures for the emulator tests: an emulator, an httpx client over the in-process transport,
and helpers that create parties with valid documents and wallets."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from recon.sandbox.emulator import Emulator
from recon.sandbox.transport import EmulatorTransport
from recon.sandbox.validation import make_cpf, make_wallet

_counter = itertools.count(1)


@pytest.fixture
def emu() -> Emulator:
    """A fresh emulator with fixed keys (the env var must not leak into tests)."""
    return Emulator(seed=3, keys=["key-org-a", "key-org-b"])


@pytest.fixture
def client(emu: Emulator) -> Iterator[httpx.Client]:
    """httpx client of instance 0, in-process."""
    with httpx.Client(
        transport=EmulatorTransport(emu),
        base_url="http://sandbox.test",
        headers={"x-api-key": emu.instances[0].api_key},
    ) as c:
        yield c


@pytest.fixture
def other_client(emu: Emulator) -> Iterator[httpx.Client]:
    """httpx client of instance 1 (another organization)."""
    with httpx.Client(
        transport=EmulatorTransport(emu),
        base_url="http://sandbox.test",
        headers={"x-api-key": emu.instances[1].api_key},
    ) as c:
        yield c


@pytest.fixture
def new_party(client: httpx.Client) -> Callable[..., dict[str, Any]]:
    """Create a party (optionally with a bound wallet); returns the party object."""

    def make(
        *, wallet: bool = True, http: httpx.Client | None = None, **extra: Any
    ) -> dict[str, Any]:
        n = next(_counter)
        c = http or client
        body = {"cpf": make_cpf(n), "displayName": f"Party {n}", **extra}
        r = c.post("/v2/parties", json=body)
        assert r.status_code == 201, r.text
        party = r.json()
        if wallet:
            r = c.patch(f"/v2/parties/{party['id']}/wallet", json={"solanaWallet": make_wallet(n)})
            assert r.status_code == 200, r.text
            party = r.json()
        return party

    return make
