"""Lifecycles (docs/emulator.md), transitions, tick/expiry, auto-advance, compliance, the clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon.sandbox.clock import Clock, format_ts, from_ms, to_ms
from recon.sandbox.emulator import Emulator, EmulatorConfig
from recon.sandbox.lifecycle import OFFRAMP, ONRAMP, STATUSES
from recon.sandbox.transport import EmulatorTransport
from recon.sandbox.validation import make_cpf, make_wallet


def _setup(config: EmulatorConfig | None = None) -> tuple[Emulator, httpx.Client, str, str]:
    emu = Emulator(seed=1, keys=["a", "b"], config=config)
    c = httpx.Client(
        transport=EmulatorTransport(emu), base_url="http://t", headers={"x-api-key": "a"}
    )
    p = c.post(
        "/v2/parties", json={"cpf": make_cpf(1), "displayName": "Li", "email": "li@example.com"}
    ).json()
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(1)})
    return emu, c, make_wallet(1), "li@example.com"


def _on(c: httpx.Client, wallet: str, amount: int = 1000) -> dict[str, Any]:
    r = c.post(
        "/v2/intents/onramp",
        json={"amountCents": amount, "destinationWallet": wallet, "chainId": "solana"},
    )
    assert r.status_code == 201, r.text
    return r.json()


def _off(c: httpx.Client, address: str, amount: int = 1000) -> dict[str, Any]:
    r = c.post(
        "/v2/intents/offramp",
        json={"amountCents": amount, "destinationAddress": address, "chainId": "solana"},
    )
    assert r.status_code == 201, r.text
    return r.json()


def test_graph_edges() -> None:
    assert ONRAMP.can("created", "requires_compliance") and ONRAMP.can(
        "created", "awaiting_fiat_payment"
    )
    assert ONRAMP.can("awaiting_fiat_payment", "expired")
    assert not ONRAMP.can("awaiting_fiat_payment", "minting")
    assert not ONRAMP.can("completed", "minting") and ONRAMP.allowed("completed") == frozenset()
    assert ONRAMP.can("expired", "refunded") and not ONRAMP.can("expired", "completed")
    assert OFFRAMP.can("awaiting_burn_approval", "burn_approved")
    assert not OFFRAMP.can("awaiting_burn_approval", "fiat_received")
    assert OFFRAMP.next_step("created") == "awaiting_burn_approval"
    assert OFFRAMP.waiting == "awaiting_burn_approval" and ONRAMP.waiting == "awaiting_fiat_payment"
    assert ONRAMP.statuses | OFFRAMP.statuses == set(STATUSES)


def test_happy_paths_by_transition() -> None:
    emu, c, wallet, email = _setup()
    on = _on(c, wallet)
    seen = [on["updatedAt"]]
    for status in ("fiat_received", "minting", "awaiting_onchain_transfer", "completed"):
        out = emu.transition(on["id"], status)
        assert out["status"] == status and out["statusReason"] is None
        seen.append(out["updatedAt"])
        assert c.get(f"/v2/intents/{on['id']}").json()["status"] == status
    # updatedAt changes on every transition, even within the same clock millisecond
    assert len(set(seen)) == len(seen) and seen == sorted(seen)
    off = _off(c, email)
    for status in ("burn_approved", "onchain_received", "burning", "paying_out", "completed"):
        assert emu.transition(off["id"], status)["status"] == status


def test_graph_is_enforced_and_force_bypasses() -> None:
    emu, c, wallet, _ = _setup()
    on = _on(c, wallet)
    with pytest.raises(ValueError, match="cannot go from awaiting_fiat_payment to completed"):
        emu.transition(on["id"], "completed")
    with pytest.raises(ValueError, match="unknown status"):
        emu.transition(on["id"], "paid")
    with pytest.raises(KeyError):
        emu.transition("00000000-0000-4000-8000-000000000000", "completed")
    for status in ("fiat_received", "minting", "awaiting_onchain_transfer", "completed"):
        emu.transition(on["id"], status)
    # a planted regression
    out = emu.transition(on["id"], "minting", force=True)
    assert out["status"] == "minting"
    page = c.get("/v2/intents", params={"status": "minting"}).json()
    assert [i["id"] for i in page["intents"]] == [on["id"]]
    assert c.get("/v2/intents", params={"status": "completed"}).json()["total"] == 0


def test_exit_reasons() -> None:
    emu, c, wallet, _ = _setup()
    a, b = _on(c, wallet), _on(c, wallet)
    assert emu.transition(a["id"], "failed")["statusReason"] == "processing failed"
    assert (
        emu.transition(a["id"], "refunded", reason="payer asked")["statusReason"] == "payer asked"
    )
    assert emu.transition(b["id"], "canceled")["statusReason"] == "canceled"
    assert emu.transition(b["id"], "awaiting_fiat_payment", force=True)["statusReason"] is None


def test_tick_expires_waiting_intents_at_expires_at() -> None:
    emu, c, wallet, email = _setup()
    on, off = _on(c, wallet), _off(c, email)
    paid = _on(c, wallet)
    emu.transition(paid["id"], "fiat_received")
    emu.clock.advance(timedelta(minutes=29, seconds=59))
    assert emu.tick() == []
    emu.clock.advance(timedelta(seconds=1))
    assert sorted(emu.tick()) == sorted([on["id"], off["id"]])
    for i in (on, off):
        now = c.get(f"/v2/intents/{i['id']}").json()
        assert now["status"] == "expired" and now["updatedAt"] == i["expiresAt"]
        assert now["statusReason"] == "not completed before expiresAt"
    assert c.get(f"/v2/intents/{paid['id']}").json()["status"] == "fiat_received"
    assert emu.tick() == []


def test_requests_tick_when_the_clock_moved() -> None:
    emu, c, wallet, _ = _setup()
    on = _on(c, wallet)
    emu.clock.advance(timedelta(hours=1))
    assert c.get(f"/v2/intents/{on['id']}").json()["status"] == "expired"


def test_tick_on_request_can_be_disabled() -> None:
    emu, c, wallet, _ = _setup(EmulatorConfig(tick_on_request=False))
    on = _on(c, wallet)
    emu.clock.advance(timedelta(hours=1))
    assert c.get(f"/v2/intents/{on['id']}").json()["status"] == "awaiting_fiat_payment"
    emu.tick()
    assert c.get(f"/v2/intents/{on['id']}").json()["status"] == "expired"


def test_auto_advance_walks_to_completed() -> None:
    cfg = EmulatorConfig(auto_advance=True, skip_created=False)
    emu, c, wallet, email = _setup(cfg)
    on = _on(c, wallet)
    assert on["status"] == "created" and on["adapter"] is None
    emu.clock.advance(2)
    assert c.get(f"/v2/intents/{on['id']}").json()["status"] == "awaiting_fiat_payment"
    emu.transition(on["id"], "fiat_received")  # the payment: an outside event
    emu.clock.advance(timedelta(minutes=5))
    final = c.get(f"/v2/intents/{on['id']}").json()
    assert final["status"] == "completed" and final["adapter"] in cfg.adapters
    # each step is stamped at its due time: 5 s + 20 s + 30 s after the payment (which came
    # 1 ms after the auto-advance to awaiting, as updatedAt is strictly increasing)
    paid_at = to_ms(datetime(2026, 11, 1, 12, 0, 2, tzinfo=UTC))
    assert final["updatedAt"] == format_ts(paid_at + 1 + 55_000)
    off = _off(c, email)
    emu.clock.advance(5)
    sig, holder = emu.approval_for(off["id"])
    r = c.post(
        f"/v2/intents/{off['id']}/approve-burn", json={"txSignature": sig, "tokenHolder": holder}
    )
    assert r.status_code == 200
    emu.clock.advance(timedelta(minutes=5))
    assert c.get(f"/v2/intents/{off['id']}").json()["status"] == "completed"


def test_waiting_never_auto_advances() -> None:
    emu, c, wallet, _ = _setup(EmulatorConfig(auto_advance=True))
    on = _on(c, wallet)
    emu.clock.advance(timedelta(minutes=10))
    assert c.get(f"/v2/intents/{on['id']}").json()["status"] == "awaiting_fiat_payment"


def test_compliance_threshold() -> None:
    cfg = EmulatorConfig(compliance_threshold_cents=100_000, auto_advance=True)
    emu, c, wallet, _ = _setup(cfg)
    big, small = _on(c, wallet, 100_000), _on(c, wallet, 99_999)
    assert big["status"] == "requires_compliance" and small["status"] == "awaiting_fiat_payment"
    emu.clock.advance(timedelta(minutes=10))  # default compliance review: 600 s
    now = c.get(f"/v2/intents/{big['id']}").json()
    assert now["status"] == "awaiting_fiat_payment"
    # the payment window opens when the intent starts waiting
    assert now["expiresAt"] == "2026-11-01T12:40:00.000Z"


def test_compliance_from_created_when_not_skipped() -> None:
    cfg = EmulatorConfig(compliance_threshold_cents=10, auto_advance=True, skip_created=False)
    emu, c, wallet, _ = _setup(cfg)
    on = _on(c, wallet, 50)
    emu.clock.advance(3)
    assert c.get(f"/v2/intents/{on['id']}").json()["status"] == "requires_compliance"


def test_clock() -> None:
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC))
    clock.advance(1.5)
    clock.advance(timedelta(minutes=1))
    assert clock.now() == datetime(2026, 1, 1, 0, 1, 1, 500_000, tzinfo=UTC)
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        clock.set(datetime(2026, 1, 1))  # naive
    clock.set(datetime(2025, 1, 1, tzinfo=UTC))
    assert clock.now().year == 2025
    wall = Clock(datetime(2026, 1, 1, tzinfo=UTC), follow_wall=True)
    assert wall.now() >= datetime(2026, 1, 1, tzinfo=UTC)


def test_config_rejects_an_invalid_service_cnpj() -> None:
    with pytest.raises(ValueError):
        EmulatorConfig(service_cnpj="11222333000182")


@settings(deadline=None)
@given(st.integers(0, 4_102_444_800_000))
def test_format_ts_matches_datetime(ms: int) -> None:
    dt = from_ms(ms)
    assert format_ts(ms) == dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"
    assert to_ms(dt) == ms
