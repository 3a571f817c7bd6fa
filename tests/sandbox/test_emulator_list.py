"""GET /v2/intents: order, filters, totals, paging; indexes under transitions; bulk_load; drift."""

from __future__ import annotations

import random
import time
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recon.sandbox.emulator import Emulator
from recon.sandbox.lifecycle import STATUSES
from recon.sandbox.transport import EmulatorTransport
from recon.sandbox.validation import make_cpf, make_wallet


def _client(emu: Emulator, key: str = "a") -> httpx.Client:
    return httpx.Client(
        transport=EmulatorTransport(emu), base_url="http://t", headers={"x-api-key": key}
    )


def _walk(c: httpx.Client, page_size: int, **params: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = c.get("/v2/intents", params={**params, "limit": page_size, "offset": offset}).json()
        out += page["intents"]
        offset += page_size
        if offset >= page["total"]:
            return out


def _newest_first(items: list[dict[str, Any]]) -> list[str]:
    return [i["id"] for i in sorted(items, key=lambda i: (i["createdAt"], i["id"]), reverse=True)]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["onramp", "offramp", "move", "tick"]),
            st.integers(0, 3),  # clock advance in ms (0 → ties)
            st.sampled_from(STATUSES),
        ),
        min_size=1,
        max_size=40,
    ),
    page_size=st.integers(1, 7),
)
def test_list_agrees_with_a_brute_force_model(steps: list, page_size: int) -> None:
    emu = Emulator(seed=2, keys=["a", "b"])
    c = _client(emu)
    p = c.post(
        "/v2/parties", json={"cpf": make_cpf(1), "displayName": "Mo", "email": "mo@example.com"}
    ).json()
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(1)})
    ids: list[str] = []
    rng = random.Random(0)
    for action, advance_ms, status in steps:
        emu.clock.advance(advance_ms / 1000)
        if action == "onramp":
            body = {"amountCents": 10, "destinationWallet": make_wallet(1), "chainId": "solana"}
            ids.append(c.post("/v2/intents/onramp", json=body).json()["id"])
        elif action == "offramp":
            body = {"amountCents": 10, "destinationAddress": "mo@example.com", "chainId": "solana"}
            ids.append(c.post("/v2/intents/offramp", json=body).json()["id"])
        elif action == "move" and ids:
            emu.transition(rng.choice(ids), status, force=True)
        else:
            emu.tick()
    truth = [c.get(f"/v2/intents/{i}").json() for i in ids]
    for itype in ("all", "onramp", "offramp"):
        for status in ("all", *{t["status"] for t in truth}, "refunded"):
            want = [
                t
                for t in truth
                if itype in ("all", t["intentType"]) and status in ("all", t["status"])
            ]
            got = _walk(c, page_size, intentType=itype, status=status)
            assert [i["id"] for i in got] == _newest_first(want)
            total = c.get("/v2/intents", params={"intentType": itype, "status": status}).json()
            assert total["total"] == len(want)


def test_offset_past_the_end_is_an_empty_page(client, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    for _ in range(3):
        client.post(
            "/v2/intents/onramp",
            json={"amountCents": 10, "destinationWallet": wallet, "chainId": "solana"},
        )
    page = client.get("/v2/intents", params={"offset": 10, "limit": 2}).json()
    assert page == {"intents": [], "total": 3, "limit": 2, "offset": 10}
    page = client.get("/v2/intents", params={"offset": 2, "limit": 2}).json()
    assert len(page["intents"]) == 1 and page["offset"] == 2


def test_bulk_load_is_consistent_and_fast() -> None:
    emu = Emulator(seed=4, keys=["a", "b"])
    t0 = time.perf_counter()
    emu.bulk_load(20_000, seed=1)
    assert time.perf_counter() - t0 < 10
    c = _client(emu)
    assert emu.intent_count() == 20_000 and emu.intent_count(emu.instances[1].instance_id) == 0
    everything = emu.all_intents()
    assert len(everything) == 20_000
    keys = [(i["createdAt"], i["id"]) for i in everything]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    counts: dict[tuple[str, str], int] = {}
    for i in everything:
        counts[(i["intentType"], i["status"])] = counts.get((i["intentType"], i["status"]), 0) + 1
        if i["status"] in ("expired", "failed", "canceled", "refunded"):
            assert i["statusReason"]
    for (itype, status), n in counts.items():
        page = c.get("/v2/intents", params={"intentType": itype, "status": status, "limit": 1})
        assert page.json()["total"] == n
        only = page.json()["intents"][0]
        assert (only["intentType"], only["status"]) == (itype, status)
    assert (
        sum(v for (t, _), v in counts.items() if t == "onramp")
        == (c.get("/v2/intents", params={"intentType": "onramp"}).json()["total"])
    )
    # deep pages are answered by slicing: fast, and exactly the ground truth
    t0 = time.perf_counter()
    page = c.get("/v2/intents", params={"limit": 100, "offset": 19_950}).json()
    assert time.perf_counter() - t0 < 0.5
    assert [i["id"] for i in page["intents"]] == [i["id"] for i in everything[19_950:]]
    # a bulk-loaded offramp can be found and is a full intent object
    off = c.get("/v2/intents", params={"intentType": "offramp", "limit": 1}).json()["intents"][0]
    assert off["metadata"]["amountCents"] > 0 and off["pixInfo"] is None
    assert c.get(f"/v2/intents/{off['id']}").json() == off
    # same seeds → same data
    again = Emulator(seed=4, keys=["a", "b"])
    again.bulk_load(20_000, seed=1)
    assert _client(again).get("/v2/intents").json()["intents"] == everything[:50]


def test_bulk_load_after_newer_intents_keeps_the_order(client, emu: Emulator, new_party) -> None:
    wallet = new_party()["profile"]["solanaWallet"]
    first = client.post(
        "/v2/intents/onramp",
        json={"amountCents": 10, "destinationWallet": wallet, "chainId": "solana"},
    ).json()
    emu.bulk_load(2_000, days=1)  # all older than `first`, loaded after it
    everything = emu.all_intents()
    assert everything[0]["id"] == first["id"]
    keys = [(i["createdAt"], i["id"]) for i in everything]
    assert keys == sorted(keys, reverse=True)
    with pytest.raises(ValueError):
        emu.bulk_load(-1)


def test_drift_inserts_at_the_head_and_moves_statuses(emu: Emulator) -> None:
    emu.bulk_load(500, days=0.01)  # recent: many intents still waiting
    c = _client(emu, emu.instances[0].api_key)
    before = c.get("/v2/intents", params={"limit": 100}).json()
    event = emu.drift(None, inserts=3, status_changes=4, rng=random.Random(1))
    after = c.get("/v2/intents", params={"limit": 100}).json()
    assert after["total"] == before["total"] + 3
    assert [i["id"] for i in after["intents"][:3]] == event["inserted"][::-1]
    # the page shifted by three: offsets are not stable under inserts
    assert after["intents"][3]["id"] == before["intents"][0]["id"]
    assert len(event["changed"]) == 4
    for intent_id in event["changed"]:
        assert c.get(f"/v2/intents/{intent_id}").json()["updatedAt"] == format_now(emu)
    assert emu.drift_log[-1]["inserted"] == event["inserted"]


def format_now(emu: Emulator) -> str:
    from recon.sandbox.clock import format_ts

    return format_ts(emu.clock.now_ms())


def test_pix_descriptions_unique_across_instances() -> None:
    emu = Emulator(seed=8, keys=["a", "b"])
    for inst in emu.instances:
        emu.bulk_load(3_000, instance_id=inst.instance_id, days=1)
    refs = [
        i["pixInfo"]["description"]
        for inst in emu.instances
        for i in emu.all_intents(inst.instance_id, intent_type="onramp")
    ]
    assert len(refs) > 3_000 and len(set(refs)) == len(refs)


def _oracle(emu: Emulator, intent_id: str) -> dict[str, Any]:
    """The intent object built the obvious way (dicts), from the emulator's stored columns."""
    from recon.sandbox.clock import format_ts

    store, seq = emu._find(intent_id)
    cfg = emu.config
    party = store.parties[store.party_idx[seq]]
    itype = ("onramp", "offramp")[store.itype[seq]]
    status = STATUSES[store.status[seq]]
    amount = store.amount[seq]
    return {
        "id": intent_id,
        "instanceId": store.inst.instance_id,
        "partyId": party.id,
        "intentType": itype,
        "flowVersion": cfg.flow_version,
        "adapter": None if status == "created" else cfg.adapters[store.itype[seq]],
        "status": status,
        "statusReason": store.reason.get(seq),
        "clientReference": store.client_ref[seq],
        "metadata": (
            {"amountCents": amount, "destinationAddress": store.dest[seq]}
            if itype == "offramp"
            else None
        ),
        "expiresAt": format_ts(store.expires[seq]),
        "createdAt": format_ts(store.created[seq]),
        "updatedAt": format_ts(store.updated[seq]),
        "pixInfo": (
            {
                "keyType": "cnpj",
                "keyValue": cfg.service_cnpj,
                "recipientName": cfg.service_name,
                "bank": cfg.service_bank,
                "description": emu._reference(store, seq),
                "amountCents": amount,
            }
            if itype == "onramp"
            else None
        ),
        "depositInstructions": None,
        "party": {
            "displayName": party.display_name,
            "documentMasked": party.masked,
            "solanaWallet": party.wallet,
        },
        "chainId": "solana",
    }


NASTY = ['he said "no"', "back\\slash", "☃ snow ✓", "tab\there", "nul\x00", "ls\u2028ps", "{}[],:"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NASTY).map(lambda s: "N " + s),
    ref=st.one_of(st.none(), st.sampled_from(NASTY), st.text(max_size=30)),
    reason=st.one_of(st.none(), st.sampled_from(NASTY)),
    status=st.sampled_from(STATUSES),
)
def test_template_rendering_matches_the_dict_oracle(
    name: str, ref: str | None, reason: str | None, status: str
) -> None:
    emu = Emulator(seed=1, keys=["a", "b"])
    c = _client(emu)
    email = "o'neil+{x}@example.com"
    p = c.post("/v2/parties", json={"cpf": make_cpf(3), "displayName": name, "email": email})
    assert p.status_code == 201, p.text
    c.patch(f"/v2/parties/{p.json()['id']}/wallet", json={"solanaWallet": make_wallet(3)})
    extra = {"clientReference": ref} if ref is not None else {}
    on = c.post(
        "/v2/intents/onramp",
        json={"amountCents": 7, "destinationWallet": make_wallet(3), "chainId": "solana", **extra},
    ).json()
    off = c.post(
        "/v2/intents/offramp",
        json={"amountCents": 9, "destinationAddress": email, "chainId": "polygon", **extra},
    ).json()
    emu.transition(off["id"], status, reason=reason, force=True)
    emu.clock.advance(0.5)
    for intent in (on, off):
        fresh = c.get(f"/v2/intents/{intent['id']}").json()
        assert fresh == _oracle(emu, intent["id"])
        assert list(fresh) == list(_oracle(emu, intent["id"]))  # key order too
    page = c.get("/v2/intents").json()
    assert page["intents"] == [_oracle(emu, i["id"]) for i in page["intents"]]
    assert {i["id"] for i in page["intents"]} == {on["id"], off["id"]}


# ---------------------------------------------------------------- the render cache of list pages


def _page_matches_oracle(emu: Emulator, c: httpx.Client, **params: Any) -> list[dict[str, Any]]:
    page = c.get("/v2/intents", params={"limit": 100, **params}).json()["intents"]
    assert page == [_oracle(emu, i["id"]) for i in page]
    return page


def test_a_cached_intent_shows_its_lifecycle_step_on_the_next_page() -> None:
    emu = Emulator(seed=4, keys=["a", "b"])
    emu.bulk_load(300, days=0.01)  # recent: many intents still waiting
    c = _client(emu)
    first = _page_matches_oracle(emu, c)  # every intent of the page is now cached
    assert len(emu._stores[0].cache) == 100
    waiting = next(i for i in first if i["status"] == "awaiting_fiat_payment")
    emu.clock.advance(1)
    emu.transition(waiting["id"], "fiat_received")
    again = _page_matches_oracle(emu, c)
    moved = next(i for i in again if i["id"] == waiting["id"])
    assert moved["status"] == "fiat_received"
    assert moved["updatedAt"] == format_now(emu)
    # the same through approve-style moves the clock makes: expiry on tick
    emu.clock.advance(3600)
    emu.tick()
    expired = [i for i in _page_matches_oracle(emu, c) if i["id"] != waiting["id"]]
    assert {i["status"] for i in expired} >= {"expired"}
    assert "awaiting_fiat_payment" not in {i["status"] for i in expired}


def test_drift_is_seen_through_the_cache() -> None:
    emu = Emulator(seed=5, keys=["a", "b"])
    emu.bulk_load(400, days=0.01)
    c = _client(emu)
    _walk(c, 100)  # fill the cache with every intent
    rng = random.Random(3)
    for _ in range(5):
        event = emu.drift(None, inserts=2, status_changes=6, rng=rng)
        everything = _walk(c, 100)
        assert everything == [_oracle(emu, i["id"]) for i in everything]
        by_id = {i["id"]: i for i in everything}
        for intent_id in event["changed"]:
            assert by_id[intent_id]["updatedAt"] == format_now(emu)
        assert [i["id"] for i in everything[:2]] == event["inserted"][::-1]


def test_a_bound_wallet_and_a_bulk_load_reach_cached_pages() -> None:
    emu = Emulator(seed=6, keys=["a", "b"])
    c = _client(emu)
    p = c.post("/v2/parties", json={"cpf": make_cpf(5), "displayName": "Al"}).json()
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(5)})
    made = c.post(
        "/v2/intents/onramp",
        json={"amountCents": 5, "destinationWallet": make_wallet(5), "chainId": "solana"},
    ).json()
    assert _page_matches_oracle(emu, c)[0]["party"]["solanaWallet"] == make_wallet(5)
    c.patch(f"/v2/parties/{p['id']}/wallet", json={"solanaWallet": make_wallet(6)})
    page = _page_matches_oracle(emu, c)
    assert page[0]["id"] == made["id"] and page[0]["party"]["solanaWallet"] == make_wallet(6)
    emu.bulk_load(50, days=1)
    assert len(_page_matches_oracle(emu, c, offset=0)) == 51


def test_the_render_cache_stays_within_its_bytes() -> None:
    emu = Emulator(seed=7, keys=["a", "b"])
    emu.bulk_load(1_000, days=1)
    cache = emu._stores[0].cache
    cache.max_bytes = 50_000  # ~58 intents
    c = _client(emu)
    everything = _walk(c, 100)
    assert everything == [_oracle(emu, i["id"]) for i in everything]
    assert 0 < cache.size <= 50_000 and 0 < len(cache) < 100
    assert cache.size == sum(len(b) + 120 for b in cache.entries.values())
    # single reads and ground-truth dumps do not fill it
    cache.clear()
    emu.all_intents()
    c.get(f"/v2/intents/{everything[0]['id']}")
    assert len(cache) == 0 and cache.size == 0
