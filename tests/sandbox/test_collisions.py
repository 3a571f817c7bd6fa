"""Collision worlds: deterministic, every planted item in the ground truth once, and built as
the profile says (shared amounts, unreferenced payments, bank names and keys, partial refunds,
returned payouts, look-alike keys)."""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.cli import main
from recon.cli.sandbox import PROFILE_NAMES
from recon.money import format_cents
from recon.sandbox.bank import PIX_IN, PIX_OUT, PIX_REFUND_IN, PIX_REFUND_OUT
from recon.sandbox.compose import Sandbox, build_world
from recon.sandbox.exports import export_statements
from recon.sandbox.exports.daily import DAILY_FAULTS
from recon.sandbox.world import FAULTS, WorldConfig
from recon.sandbox.world.collisions import (
    COLLISION_FAULTS,
    PROFILES,
    SHARED_AMOUNTS,
    Collisions,
    bank_key,
    bank_name,
    names_could_blur,
    psp_fee,
)
from recon.schemas import CATEGORIES

SMALL = {"seed": 2, "days": 4, "intents_per_day": 80, "profile": "collisions"}


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return build_world(**SMALL)


def _plans(sandbox: Sandbox):
    return sandbox.world.plans


def test_profiles_are_the_cli_choices():
    assert set(PROFILE_NAMES) == set(PROFILES)
    assert not PROFILES["default"].active and PROFILES["collisions"].active


def test_same_seed_same_bytes(sandbox: Sandbox, tmp_path: Path):
    first = export_statements(sandbox.bank, tmp_path / "a")
    again = export_statements(build_world(**SMALL).bank, tmp_path / "b")
    for name, path in first.items():
        assert path.read_bytes() == again[name].read_bytes(), name


def test_the_profile_changes_the_world_and_single_knobs_override_it():
    cfg = WorldConfig().with_overrides(profile="collisions", returned_payouts=5)
    assert cfg.collisions == Collisions(
        **{**PROFILES["collisions"].__dict__, "returned_payouts": 5}
    )
    assert WorldConfig().with_overrides(no_reference=0.2).collisions == Collisions(no_reference=0.2)
    with pytest.raises(ValueError, match="unknown profile"):
        WorldConfig().with_overrides(profile="chaos")
    with pytest.raises(ValueError, match="share"):
        Collisions(shared_amounts=1.5)


def test_every_planted_item_is_recorded_once_with_its_category(sandbox: Sandbox):
    truth = sandbox.truth
    kinds = set(FAULTS) | set(COLLISION_FAULTS) | set(DAILY_FAULTS)
    assert {f.fault for f in truth.faults} <= kinds
    for brk in truth.breaks:
        assert brk.category in CATEGORIES
    assert len(set(truth.breaks)) == len(truth.breaks)
    assert len(set(truth.matches)) == len(truth.matches)
    # a clean collision item is a match, never also a break
    broken = {b.intent_id for b in truth.breaks}
    for m in truth.matches:
        assert m.intent_id not in broken, m
    counts = truth.fault_counts()
    assert counts["no_reference"] >= 10
    assert counts["payout_returned"] == PROFILES["collisions"].returned_payouts
    assert counts["lookalike_keys"] == 2 * PROFILES["collisions"].lookalike_keys
    assert truth.counts()["offramp_payout_returned"] == counts["payout_returned"]


def test_most_amounts_are_shared(sandbox: Sandbox):
    amounts = Counter(p.amount for p in _plans(sandbox))
    shared = sum(n for a, n in amounts.items() if a in SHARED_AMOUNTS)
    assert shared / sum(amounts.values()) > 0.6


def test_unreferenced_payments_carry_no_reference(sandbox: Sandbox):
    by_e2e = {m.end_to_end_id: m for m in sandbox.bank.movements}
    for m in sandbox.truth.matches:
        if m.rule != "attributes":
            continue
        line = by_e2e[m.end_to_end_id]
        assert line.intent_id == m.intent_id
        if line.kind == PIX_IN:
            assert line.txid is None and line.info_pagador is None
        else:
            assert line.kind == PIX_OUT and line.remittance is None


def test_names_and_keys_as_banks_write_them(sandbox: Sandbox):
    lines = [m for m in sandbox.bank.movements if m.kind in (PIX_IN, PIX_OUT)]
    names = [m.counterparty_name or "" for m in lines]
    assert all(n == n.upper() and n.isascii() for n in names)
    assert any(re.search(r" [A-Z] ", n) for n in names)  # an initial
    keys = [m.counterparty_key or "" for m in lines if m.kind == PIX_OUT]
    assert any(re.fullmatch(r"\*\*\*\.\d{3}\.\d{3}-\*\*", k) for k in keys)
    assert any(re.fullmatch(r"\d{10,11}", k) for k in keys)  # a phone without +55


def test_partial_refunds_and_returned_payouts_in_the_ledger():
    sandbox = build_world(seed=3, days=4, intents_per_day=80, profile="collisions")
    moves = sandbox.bank.movements
    by_e2e = {m.end_to_end_id: m for m in moves}
    devs = Counter(m.refund_of for m in moves if m.kind == PIX_REFUND_OUT)
    split = [e2e for e2e, n in devs.items() if n > 1]
    assert split, "no credit returned in several devoluções"
    for e2e in split:
        returned = sum(-m.amount_cents for m in moves if m.refund_of == e2e)
        assert returned <= by_e2e[e2e].amount_cents
    back = [m for m in moves if m.kind == PIX_REFUND_IN]
    assert len(back) == PROFILES["collisions"].returned_payouts
    planted = {b.end_to_end_id: b for b in sandbox.truth.breaks}
    for m in back:
        payout = by_e2e[m.refund_of]
        assert payout.kind == PIX_OUT and m.amount_cents == -payout.amount_cents
        assert planted[m.end_to_end_id].category == "offramp_payout_returned"
        assert planted[m.end_to_end_id].intent_id == payout.intent_id


def test_credits_claimed_back_under_med_after_delivery(sandbox: Sandbox):
    """Each planted MED return sends the whole credit of a completed onramp back, after it
    was paid, the last one in two parts; its text and API Pix natureza say MED."""
    moves = sandbox.bank.movements
    planted = [b for b in sandbox.truth.breaks if b.category == "onramp_credit_returned"]
    assert len(planted) == PROFILES["collisions"].returned_credits
    by_e2e = {m.end_to_end_id: m for m in moves}
    parts = []
    for brk in planted:
        credit = by_e2e[brk.end_to_end_id]
        devs = [m for m in moves if m.refund_of == credit.end_to_end_id]
        assert sum(-m.amount_cents for m in devs) == credit.amount_cents == brk.actual_cents
        assert all(m.booked_at > credit.booked_at and m.description.endswith(" MED")
                   and m.refund.nature == "MED_FRAUDE" for m in devs)  # fmt: skip
        parts.append(len(devs))
    assert sorted(parts) == [1, 2]


def test_someone_else_pays_an_onramp_by_its_qr_code(sandbox: Sandbox):
    """Each planted third-party payment is the credit of a person's paid onramp, by its txid,
    from another person whose CPF differs where the API's and the bank's masks both show
    digits."""
    by_e2e = {m.end_to_end_id: m for m in sandbox.bank.movements}
    plans = {p.intent_id: p for p in _plans(sandbox)}
    planted = [b for b in sandbox.truth.breaks if b.category == "onramp_third_party_payer"]
    assert len(planted) == PROFILES["collisions"].third_party_payers
    for brk in planted:
        credit, plan = by_e2e[brk.end_to_end_id], plans[brk.intent_id]
        assert credit.kind == PIX_IN and credit.intent_id == brk.intent_id
        assert credit.txid == brk.intent_id.replace("-", "")
        assert plan.payer is not None and plan.party.party_type == plan.payer.party_type == "person"
        assert credit.counterparty_document == plan.payer.doc != plan.party.doc
        assert plan.payer.doc[7:9] != plan.party.doc[7:9]
        assert brk.expected_cents == brk.actual_cents == credit.amount_cents


def test_lookalike_keys_are_two_people_paid_alike(sandbox: Sandbox):
    pair = [p for p in _plans(sandbox) if p.bare_payee]
    assert len(pair) == 2
    a, b = sorted(pair, key=lambda p: len(p.pix_key or ""))
    assert b.pix_key == "ana." + (a.pix_key or "")
    assert a.amount == b.amount and a.party.doc != b.party.doc
    paid = [m for m in sandbox.bank.movements if m.intent_id in (a.intent_id, b.intent_id)]
    assert {m.counterparty_document for m in paid} == {None}
    assert {(m.intent_id, m.end_to_end_id) for m in paid} == {
        (x.intent_id, x.end_to_end_id) for x in sandbox.truth.matches if x.intent_id in
        (a.intent_id, b.intent_id)
    }  # fmt: skip


def test_credits_net_of_the_psp_fee_state_gross_and_fee(sandbox: Sandbox, tmp_path: Path):
    plans = [p for p in _plans(sandbox) if p.net_of_fee]
    assert plans and all(p.itype == "onramp" and p.fault is None for p in plans)
    for p in plans:
        credit = p.credit
        assert credit is not None and credit.fee_cents == psp_fee(p.amount)
        assert credit.amount_cents == p.amount - credit.fee_cents  # the account gets the net
    files = export_statements(sandbox.bank, tmp_path)
    body = json.loads(files["pix.json"].read_text(encoding="utf-8"))  # a GET /pix response
    items = {i["endToEndId"]: i for i in body["pix"]}
    for p in plans:
        item = items[p.credit.end_to_end_id]
        assert item["valor"] == format_cents(p.amount)  # what the payer sent
        assert item["gnExtras"] == {"tarifa": format_cents(psp_fee(p.amount))}


def test_the_default_world_plants_no_collision():
    sandbox = build_world(seed=2, days=2, intents_per_day=60)
    assert not set(sandbox.truth.fault_counts()) & set(COLLISION_FAULTS)
    assert not any(m.kind == PIX_REFUND_IN for m in sandbox.bank.movements)


def test_export_takes_the_profile(tmp_path: Path, capsys):
    out = tmp_path / "col"
    args = ["--seed", "4", "--days", "2", "--intents-per-day", "40", "--profile", "collisions"]
    assert main(["sandbox", "export", *args, "--out", str(out)]) == 0
    text = out.joinpath("planted_faults.csv").read_text()
    assert "no_reference" in text and "payout_returned" in text


# -- the documented name rule (docs/reconcile.md, pass 3), as a check of what the world writes
_PARTICLES = {"DA", "DE", "DO", "DAS", "DOS", "E"}


def _norm(name: str) -> list[str]:
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().upper()
    words = "".join(c if c.isalnum() else " " for c in plain).split()
    return [w for w in words if w not in _PARTICLES]


def _compatible(a: str, b: str) -> bool:
    ta, tb = _norm(a), _norm(b)
    sa, sb = " ".join(ta), " ".join(tb)
    if sa.startswith(sb) or sb.startswith(sa):
        return True
    if len(ta) < 2 or len(tb) < 2 or ta[0] != tb[0]:
        return False
    if not (ta[-1].startswith(tb[-1]) or tb[-1].startswith(ta[-1])):
        return False
    short, long_ = (ta, tb) if len(ta) <= len(tb) else (tb, ta)

    def agree(x: str, y: str) -> bool:
        return x == y or (len(x) == 1 and y.startswith(x)) or (len(y) == 1 and x.startswith(y))

    return all(any(agree(x, y) for y in long_[1:-1]) for x in short[1:-1])


_WORD = st.sampled_from(["João", "Ana", "Pedro", "Conceição", "Souza", "Araújo", "Luíza", "Dias"])


@given(
    first=_WORD,
    middle=_WORD,
    particle=st.sampled_from(["da", "de", "dos", "do", "das"]),
    last=_WORD,
    other=_WORD,
    seed=st.integers(0, 10_000),
)
def test_bank_names_stay_compatible_with_the_name(first, middle, particle, last, other, seed):
    import random

    for name in (f"{first} {middle} {particle} {last} {other}", f"{first} {middle} {last}"):
        written = bank_name(name, random.Random(seed), person=True)
        assert written == written.upper() and written.isascii()
        assert _compatible(written, name), (written, name)
        assert names_could_blur(name, name)


def test_bank_keys():
    import random

    rng = random.Random(1)
    assert bank_key("12345678901", rng) == "***.456.789-**"
    shown = {bank_key("+55 11 912345678", random.Random(s)) for s in range(20)}
    assert shown == {"+5511912345678", "11912345678"}
    assert bank_key("ana@x.com.br", random.Random(3)).lower() == "ana@x.com.br"
