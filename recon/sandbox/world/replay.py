"""Phase 2, the replay: the plan run in time order against the emulator, moving its clock.

Client actions go through the v2 API (`recon.api.Client` over the in-process transport, or the
same requests straight to `Emulator.handle`); service actions through the control surface.
Every movement of money lands in the `Bank`, every planted fault once in the `GroundTruth`.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from recon.errors import ApiStatusError
from recon.sandbox.bank import Account, Bank, Movement
from recon.sandbox.exports import daily
from recon.sandbox.exports._common import BRT
from recon.sandbox.truth import GroundTruth

if TYPE_CHECKING:
    from recon.sandbox.emulator import Emulator

from recon.sandbox.world.collisions import bank_key, bank_name, psp_fee
from recon.sandbox.world.faults import FAULTS
from recon.sandbox.world.plan import _Party, _Plan, _Planner, _uuid


@dataclass
class WorldResult:
    """What building a world produced: the bank (with its ground truth) and the plan size."""

    bank: Bank
    truth: GroundTruth
    intents: int
    parties: int
    late_events: list[tuple[str, str]]

    @property
    def counts(self) -> dict[str, int]:
        """Movements per kind."""
        out: dict[str, int] = {}
        for m in self.bank.movements:
            out[m.kind] = out.get(m.kind, 0) + 1
        return out


# -- how the world talks to the API ----------------------------------------------------------
@dataclass(frozen=True)
class _Created:
    """What the world needs back from a create call."""

    id: str
    status: str
    expires_at: datetime | None
    description: str | None


class _ClientApi:
    """The v2 API through `recon.api.Client` over the in-process `EmulatorTransport`."""

    def __init__(self, emulator: Emulator, api_key: str):
        from recon.api import Client
        from recon.sandbox.transport import EmulatorTransport

        self.client = Client(
            "http://sandbox.invalid", api_key, transport=EmulatorTransport(emulator)
        )

    def create_party(self, **kw: Any) -> str:
        return self.client.create_party(**kw).id

    def bind_wallet(self, party_id: str, wallet: str) -> None:
        self.client.bind_wallet(party_id, wallet)

    @staticmethod
    def _created(intent: Any) -> _Created:
        pix = intent.pix_info
        return _Created(
            intent.id, str(intent.status), intent.expires_at, pix.description if pix else None
        )

    def create_onramp(self, **kw: Any) -> _Created:
        return self._created(self.client.create_onramp(**kw))

    def create_offramp(self, **kw: Any) -> _Created:
        return self._created(self.client.create_offramp(**kw))

    def approve_burn(self, intent_id: str, *, tx_signature: str, token_holder: str) -> None:
        self.client.approve_burn(intent_id, tx_signature=tx_signature, token_holder=token_holder)

    def close(self) -> None:
        self.client.close()


class _DirectApi:
    """The same v2 requests handed straight to `Emulator.handle`.

    No httpx and no JSON text on the way back, but the emulator's auth, validation and
    idempotency still run. Same calls in the same order, so the same world as `_ClientApi`.
    """

    def __init__(self, emulator: Emulator, api_key: str):
        self.emulator = emulator
        self.headers = {"x-api-key": api_key, "content-type": "application/json"}

    def _call(self, method: str, path: str, body: dict[str, Any], key: str | None = None) -> Any:
        headers = dict(self.headers, **({"idempotency-key": key} if key else {}))
        resp = self.emulator.handle(method, path, headers=headers, body=json.dumps(body).encode())
        if resp.status >= 300:
            raise ApiStatusError(f"{method} {path}: {resp.body}", status_code=resp.status)
        return resp.body

    def create_party(self, *, cpf: str, display_name: str, party_type: str, external_ref: str,
                     email: str, phone: str) -> str:  # fmt: skip
        body = {"cpf": cpf, "displayName": display_name, "partyType": party_type,
                "countryCode": "BR", "externalRef": external_ref, "email": email, "phone": phone}  # fmt: skip
        return str(self._call("POST", "/v2/parties", body)["id"])

    def bind_wallet(self, party_id: str, wallet: str) -> None:
        self._call("PATCH", f"/v2/parties/{party_id}/wallet", {"solanaWallet": wallet})

    def _intent(self, kind: str, target: str, kw: dict[str, Any]) -> _Created:
        body = {"amountCents": kw["amount_cents"], target: kw[_SNAKE[target]], "chainId": "solana"}
        if kw.get("client_reference") is not None:
            body["clientReference"] = kw["client_reference"]
        out = self._call("POST", f"/v2/intents/{kind}", body, kw.get("idempotency_key"))
        expires = out.get("expiresAt")
        pix = out.get("pixInfo") or {}
        return _Created(
            out["id"],
            out["status"],
            datetime.fromisoformat(expires.replace("Z", "+00:00")) if expires else None,
            pix.get("description"),
        )

    def create_onramp(self, **kw: Any) -> _Created:
        return self._intent("onramp", "destinationWallet", kw)

    def create_offramp(self, **kw: Any) -> _Created:
        return self._intent("offramp", "destinationAddress", kw)

    def approve_burn(self, intent_id: str, *, tx_signature: str, token_holder: str) -> None:
        body = {"txSignature": tx_signature, "tokenHolder": token_holder}
        self._call("POST", f"/v2/intents/{intent_id}/approve-burn", body)

    def close(self) -> None:
        """Nothing to release."""


_SNAKE = {"destinationWallet": "destination_wallet", "destinationAddress": "destination_address"}


class World(_Planner):
    """Plans and runs one simulated world; see `recon.sandbox.world`."""

    # ---------------------------------------------------------------- run
    def _at(self, at: datetime, fn: Callable[[], None]) -> None:
        self._seq += 1
        heapq.heappush(self._events, (at, self._seq, fn))

    def build(self, emulator: Emulator, *, api: str = "client") -> WorldResult:
        """Plan, then run the world against `emulator`; leaves its clock at the world's end.

        `api="client"` (default) speaks through `recon.api.Client` over the in-process
        transport; `api="direct"` hands the same requests to `Emulator.handle` (the fast
        path `recon sandbox serve|export` use). Both build the same world.
        """
        if api not in ("client", "direct"):
            raise ValueError('api must be "client" or "direct"')
        if not self.plans:
            self.plan()
        self.emulator = emulator
        inst = emulator.instances[0]
        self.bank.account = _account_for(emulator)
        self.client: _ClientApi | _DirectApi = (
            _ClientApi(emulator, inst.api_key)
            if api == "client"
            else _DirectApi(emulator, inst.api_key)
        )
        end = self.config.end.astimezone(UTC)
        try:
            for party in self.parties:
                self._at(party.created_at, functools.partial(self._onboard, party))
            for plan in self.plans:
                self._at(plan.created_at, functools.partial(self._create, plan))
            for stranger in self.strangers:
                self._at(stranger[0], functools.partial(self._stranger, *stranger))
            while self._events and self._events[0][0] <= end:
                at, _, fn = heapq.heappop(self._events)
                self._set_clock(at)
                fn()
            self._set_clock(end)
        finally:
            self.client.close()
        self._fees(end)
        start = self.bank.period_start or self.config.start
        self.bank.daily = daily.plant(self.config.seed, start, end, self.truth)
        return WorldResult(
            bank=self.bank,
            truth=self.truth,
            intents=len(self.plans),
            parties=len(self.parties),
            late_events=list(self.late_events),
        )

    def _set_clock(self, at: datetime) -> None:
        clock = self.emulator.clock
        if clock.now() != at:
            clock.set(at)
            self.emulator.tick()

    def apply_late_events(self, emulator: Emulator) -> list[str]:
        """Apply the held-back status regressions, then advance the clock by one minute.

        Call between two snapshots: the second snapshot then sees the regressions. Applying
        twice does nothing the second time.
        """
        if self._late_applied:
            return []
        self._late_applied = True
        moved = []
        for intent_id, status in self.late_events:
            emulator.transition(
                intent_id, status, reason="status re-opened by the service", force=True
            )
            moved.append(intent_id)
        emulator.clock.advance(60)
        emulator.tick()
        return moved

    # ---------------------------------------------------------------- actions
    def _onboard(self, party: _Party) -> None:
        party.id = self.client.create_party(
            cpf=party.doc,
            display_name=party.name,
            party_type=party.party_type,
            external_ref=f"cust-{party.idx:06d}",
            email=party.email,
            phone=party.phone,
        )
        if party.wallet:
            self.client.bind_wallet(party.id, party.wallet)

    def _transition(
        self, plan: _Plan, status: str, reason: str | None = None, *, skip: bool = False
    ) -> None:
        # skip=True: the service moved through steps nobody can observe (no snapshot is taken
        # while the world is built), so only the last one is applied; see docs/sandbox.md.
        assert plan.intent_id is not None
        self.emulator.move(plan.intent_id, status, reason=reason, force=skip)

    def _later(
        self,
        plan: _Plan,
        delay_s: float,
        status: str,
        then: Callable[[], None] | None = None,
        *,
        skip: bool = False,
    ) -> None:
        def step() -> None:
            self._transition(plan, status, skip=skip)
            if then is not None:
                then()

        self._at(self.emulator.clock.now() + timedelta(seconds=delay_s), step)

    def _create(self, plan: _Plan) -> None:
        rng = self.rng
        key = _uuid(rng)
        party = plan.party
        assert party.wallet is not None
        if plan.itype == "onramp":
            intent = self.client.create_onramp(
                amount_cents=plan.amount,
                destination_wallet=party.wallet,
                client_reference=plan.client_reference,
                idempotency_key=key,
            )
            plan.description = intent.description
        else:
            if plan.pix_key is None:
                plan.pix_key = self._pix_key(party, rng)
            intent = self.client.create_offramp(
                amount_cents=plan.amount,
                destination_address=plan.pix_key,
                client_reference=plan.client_reference,
                idempotency_key=key,
            )
        plan.intent_id = intent.id
        plan.expires_at = intent.expires_at
        if intent.status == "requires_compliance":
            hold = rng.uniform(*self.config.compliance_hold)
            rejected = rng.random() < self.config.compliance_reject
            waiting = (
                "awaiting_fiat_payment" if plan.itype == "onramp" else "awaiting_burn_approval"
            )

            def release() -> None:
                if rejected:
                    self._transition(plan, "canceled", "compliance review rejected")
                else:
                    self._transition(plan, waiting)
                    self._waiting(plan)

            self._at(self.emulator.clock.now() + timedelta(seconds=hold), release)
        else:
            self._waiting(plan)

    def _pix_key(self, party: _Party, rng: random.Random) -> str:
        r = rng.random()
        return party.doc if r < 0.5 else party.email if r < 0.8 else party.phone

    def _window(self, plan: _Plan) -> float:
        """Seconds left before the intent expires."""
        assert plan.expires_at is not None
        return (plan.expires_at - self.emulator.clock.now()).total_seconds()

    def _delay(self, plan: _Plan, median: float) -> float | None:
        # skewed: most act within minutes; a tail acts late in the window, never after it
        cfg, rng = self.config, self.rng
        room = self._window(plan) - 120
        if room <= 60:
            return None
        if rng.random() < cfg.pay_tail:
            return rng.uniform(0.6, 0.98) * room
        return min(room, 20 + rng.lognormvariate(math.log(median), 0.9))

    def _waiting(self, plan: _Plan) -> None:
        if plan.itype == "onramp":
            self._onramp_waiting(plan)
        else:
            self._offramp_waiting(plan)

    # onramps ---------------------------------------------------------------------------------
    def _onramp_waiting(self, plan: _Plan) -> None:
        rng, fault = self.rng, plan.fault
        if plan.fate == "unpaid":
            if fault == "paid_after_expiry":
                assert plan.expires_at is not None
                late = plan.expires_at + timedelta(seconds=rng.uniform(180, 1200))
                self._at(late, lambda: self._pay_after_expiry(plan))
            return  # the emulator expires it at expiresAt
        if plan.fate == "canceled":
            delay = rng.uniform(30, max(31.0, self._window(plan) - 120))
            self._later(plan, delay, "canceled")
            return
        if fault == "ambiguous_twins" and plan.twin_of is not None:
            return  # the first twin pays for both (see _pay)
        wait = self._delay(plan, self.config.pay_median_s)
        if wait is None:
            return  # no time left to pay: it expires
        delay = wait
        if fault == "ambiguous_twins":
            # both payments after the second twin exists and inside both windows
            delay = min(max(delay, 720.0), self._window(plan) - 600)
        self._at(self.emulator.clock.now() + timedelta(seconds=delay), lambda: self._pay(plan))

    def _payer_text(self, plan: _Plan) -> tuple[str | None, str | None]:
        """(txid, infoPagador) a payer of this intent sends."""
        rng, cfg = self.rng, self.config
        assert plan.intent_id is not None
        if plan.fault in ("omit_reference", "ambiguous_twins") or plan.no_reference:
            return None, None
        if plan.payer is not None:  # someone else scans the onramp's QR code
            return plan.intent_id.replace("-", ""), None
        reference = plan.description or plan.intent_id
        if plan.client_reference and rng.random() < cfg.share_reference_is_client_ref:
            reference = plan.client_reference
        text = rng.choice(("{}", "{}", "pagamento {}", "Pedido {}", "{} obrigado"))
        needs_reference = plan.fault in ("underpaid", "overpaid", "duplicate_credit")
        if not needs_reference and rng.random() < cfg.share_txid:
            info = text.format(reference) if rng.random() < 0.3 else None
            return plan.intent_id.replace("-", ""), info
        return None, text.format(reference)

    def _credit(self, plan: _Plan, amount: int, txid: str | None, info: str | None) -> Movement:
        payer = plan.payer or plan.party
        credit = self.bank.receive_pix(
            self.bank_rng,
            at=self.emulator.clock.now(),
            amount_cents=amount,
            payer_name=self._line_name(payer),
            payer_document=payer.doc,
            payer_ispb=payer.ispb,
            txid=txid,
            info_pagador=info,
            intent_id=plan.intent_id,
            fee_cents=psp_fee(amount) if plan.net_of_fee else None,
        )
        if plan.net_of_fee and txid is not None:
            assert plan.intent_id is not None and credit.end_to_end_id is not None
            self.truth.expect_match(
                plan.intent_id, credit.end_to_end_id, "txid", fault="net_of_fee"
            )
        return credit

    def _pay(self, plan: _Plan) -> None:
        rng, fault = self.rng, plan.fault
        txid, info = self._payer_text(plan)
        amount = plan.amount
        if fault == "underpaid":
            amount -= max(1, min(amount // 3, rng.choice((1, 10, 100, 1000, amount // 10))))
        elif fault == "overpaid":
            amount += rng.choice((1, 10, 100, 1000, max(1, amount // 10)))
        if fault != "missing_credit":
            plan.credit = self._credit(plan, amount, txid, info)
        e2e = plan.credit.end_to_end_id if plan.credit else None
        intent_id = plan.intent_id
        if fault == "underpaid":
            self.truth.plant(fault, "onramp_underpaid", intent_id=intent_id, end_to_end_id=e2e,
                             expected_cents=plan.amount, actual_cents=amount)  # fmt: skip
        elif fault == "overpaid":
            self.truth.plant(fault, "onramp_overpaid", intent_id=intent_id, end_to_end_id=e2e,
                             expected_cents=plan.amount, actual_cents=amount)  # fmt: skip
        elif fault == "missing_credit":
            self.truth.plant(fault, "onramp_missing_credit", intent_id=intent_id,
                             expected_cents=plan.amount, actual_cents=0,
                             note="intent marked paid, no PIX arrived")  # fmt: skip
        elif fault == "omit_reference":
            assert intent_id is not None and e2e is not None
            self.truth.expect_match(intent_id, e2e, "attributes", fault="omit_reference")
        elif fault == "duplicate_credit":
            gap = rng.uniform(60, 900)

            def again() -> None:
                dup = self._credit(plan, plan.amount, txid, info)
                self.truth.plant("duplicate_credit", "onramp_duplicate_credit",
                                 intent_id=intent_id, end_to_end_id=dup.end_to_end_id,
                                 expected_cents=plan.amount, actual_cents=plan.amount)  # fmt: skip

            self._at(self.emulator.clock.now() + timedelta(seconds=gap), again)
        elif fault == "ambiguous_twins" and plan.twin_of is None:
            twin = next(p for p in self._by_idx.values() if p.twin_of == plan.idx)
            assert e2e is not None
            self.truth.plant(fault, "ambiguous_match", intent_id=None, end_to_end_id=e2e,
                             actual_cents=amount,
                             note=f"candidates {plan.intent_id} {twin.intent_id}")  # fmt: skip

            def twin_pays() -> None:
                self._pay(twin)

            self._at(self.emulator.clock.now() + timedelta(seconds=rng.uniform(20, 240)), twin_pays)
        elif plan.twin_of is not None:
            first = self._by_idx[plan.twin_of]
            assert e2e is not None
            self.truth.plant("ambiguous_twins", "ambiguous_match", intent_id=None,
                             end_to_end_id=e2e, actual_cents=amount,
                             note=f"candidates {first.intent_id} {plan.intent_id}")  # fmt: skip
        if plan.payer is not None and plan.credit is not None:
            self.truth.plant("third_party_payer", "onramp_third_party_payer",
                             intent_id=intent_id, end_to_end_id=plan.credit.end_to_end_id,
                             expected_cents=plan.amount, actual_cents=amount,
                             note=f"paid by {plan.payer.name}, not the party")  # fmt: skip
        if plan.no_reference and plan.credit is not None:
            assert intent_id is not None
            self.truth.expect_match(intent_id, plan.credit.end_to_end_id or "", "attributes",
                                    fault="no_reference")  # fmt: skip
        # the service sees the money within seconds and moves the intent along
        self._later(plan, rng.uniform(5, 30), "fiat_received", lambda: self._after_fiat(plan))

    def _after_fiat(self, plan: _Plan) -> None:
        rng = self.rng
        if plan.fate == "refund":
            self._later(plan, rng.uniform(60, 600), "failed", lambda: self._refund(plan))
            return

        def regression() -> None:
            if plan.med_parts:
                self._claim_back(plan)
            if plan.fault == "status_regression":
                assert plan.intent_id is not None
                self.late_events.append((plan.intent_id, "minting"))
                self.truth.plant("status_regression", "status_regression",
                                 intent_id=plan.intent_id,
                                 note="completed -> minting between snapshots")  # fmt: skip

        # minting and the on-chain transfer take a minute to a few; the intermediate
        # statuses (minting, awaiting_onchain_transfer) are not observable during the build
        self._later(plan, rng.uniform(60, 900), "completed", regression, skip=True)

    def _refund(self, plan: _Plan) -> None:
        rng = self.rng

        def refund() -> None:
            self._transition(plan, "refunded", "mint failed; funds returned to the payer")
            credit = plan.credit
            assert credit is not None and plan.intent_id is not None
            if plan.fault == "missing_refund":
                self.truth.plant("missing_refund", "refund_missing", intent_id=plan.intent_id,
                                 expected_cents=credit.amount_cents, actual_cents=0)  # fmt: skip
                return
            amount = credit.amount_cents
            if plan.fault == "refund_amount_mismatch":
                amount = max(1, amount - rng.choice((1, 100, max(1, amount // 4))))
            if plan.split_refund and amount >= 2:
                dev = self._split_refund(plan, credit, amount)
            else:
                dev = self.bank.refund_pix(
                    self.bank_rng, credit, at=self.emulator.clock.now(), amount_cents=amount,
                    intent_id=plan.intent_id,
                )  # fmt: skip
            if plan.fault == "refund_amount_mismatch":
                self.truth.plant("refund_amount_mismatch", "refund_amount_mismatch",
                                 intent_id=plan.intent_id, end_to_end_id=dev.end_to_end_id,
                                 expected_cents=credit.amount_cents, actual_cents=amount)  # fmt: skip

        self._at(self.emulator.clock.now() + timedelta(seconds=rng.uniform(300, 3600)), refund)

    def _pay_after_expiry(self, plan: _Plan) -> None:
        # a payer who kept the QR open and paid after it expired, with the reference
        txid, info = None, f"pagamento {plan.description or plan.intent_id}"
        credit = self._credit(plan, plan.amount, txid, info)
        self.truth.plant("paid_after_expiry", "onramp_credit_after_expiry",
                         intent_id=plan.intent_id, end_to_end_id=credit.end_to_end_id,
                         expected_cents=plan.amount, actual_cents=plan.amount)  # fmt: skip

    def _stranger(
        self, at: datetime, amount: int, name: str, doc: str, ispb: str, text: str | None
    ) -> None:
        credit = self.bank.receive_pix(
            self.bank_rng, at=at, amount_cents=amount, payer_name=self._written(name, person=True), payer_document=doc,
            payer_ispb=ispb, info_pagador=text,
        )  # fmt: skip
        self.truth.plant("credits_without_intent", "unmatched_credit", intent_id=None,
                         end_to_end_id=credit.end_to_end_id, actual_cents=amount,
                         note="PIX from someone with no intent")  # fmt: skip

    # offramps --------------------------------------------------------------------------------
    def _offramp_waiting(self, plan: _Plan) -> None:
        rng = self.rng
        if plan.fate == "unapproved":
            if rng.random() < 0.3:
                self._later(plan, rng.uniform(30, max(31.0, self._window(plan) - 120)), "canceled")
            return
        delay = self._delay(plan, self.config.approve_median_s)
        if delay is None:
            return
        self._at(self.emulator.clock.now() + timedelta(seconds=delay), lambda: self._approve(plan))

    def _approve(self, plan: _Plan) -> None:
        from recon.sandbox.signatures import sign_approval, token_account_for

        assert plan.intent_id is not None and plan.party.wallet is not None
        holder = token_account_for(plan.party.wallet)
        signature = sign_approval(
            plan.intent_id, holder, plan.amount, secret=self.emulator.config.signing_secret
        )
        self.client.approve_burn(plan.intent_id, tx_signature=signature, token_holder=holder)
        rng = self.rng
        if plan.fate == "failed":

            def fail() -> None:
                self._transition(plan, "failed", "burn transaction failed")
                if plan.fault == "payout_for_failed":
                    self._at(
                        self.emulator.clock.now() + timedelta(seconds=rng.uniform(300, 3600)),
                        lambda: self._payout(plan, plan.amount, record="payout_for_failed"),
                    )

            self._at(self.emulator.clock.now() + timedelta(seconds=rng.uniform(30, 240)), fail)
            return
        # onchain_received and burning take seconds each and are not observable during the
        # build: the intent goes on to paying_out
        self._later(
            plan, rng.uniform(25, 150), "paying_out", lambda: self._paying_out(plan), skip=True
        )

    def _paying_out(self, plan: _Plan) -> None:
        rng, cfg, fault = self.rng, self.config, plan.fault
        assert plan.intent_id is not None
        if fault == "stuck_payout":
            self.truth.plant(fault, "offramp_stuck_paying_out", intent_id=plan.intent_id,
                             expected_cents=plan.amount, actual_cents=0)  # fmt: skip
            return
        latency = min(cfg.payout_max_s, 2 + rng.lognormvariate(math.log(cfg.payout_median_s), 1.0))

        def pay() -> None:
            if fault == "missing_payout":
                self.truth.plant(fault, "offramp_missing_payout", intent_id=plan.intent_id,
                                 expected_cents=plan.amount, actual_cents=0)  # fmt: skip
            elif fault == "wrong_amount_payout":
                amount = plan.amount + rng.choice((-1, 1)) * rng.choice(
                    (1, 100, max(1, plan.amount // 10))
                )
                self._payout(plan, max(1, amount), record="wrong_amount_payout")
            else:
                self._payout(plan, plan.amount)
                if fault == "duplicate_payout":
                    self._at(
                        self.emulator.clock.now() + timedelta(seconds=rng.uniform(60, 1800)),
                        lambda: self._payout(plan, plan.amount, record="duplicate_payout"),
                    )
            self._later(plan, rng.uniform(1, 20), "completed")

        self._at(self.emulator.clock.now() + timedelta(seconds=latency), pay)

    def _payout(self, plan: _Plan, amount: int, record: str | None = None) -> None:
        party = plan.party
        key = plan.pix_key or party.doc
        knobs = self.config.collisions
        debit = self.bank.send_pix(
            self.bank_rng,
            at=self.emulator.clock.now(),
            amount_cents=amount,
            payee_name=self._line_name(party),
            payee_document=None if plan.bare_payee else party.doc,
            payee_key=bank_key(key, self.crng) if knobs.bank_keys else key,
            payee_ispb=party.ispb,
            remittance=None if plan.no_reference else plan.client_reference or plan.intent_id,
            intent_id=plan.intent_id,
        )
        if record is None:
            if plan.no_reference:
                assert plan.intent_id is not None and debit.end_to_end_id is not None
                self.truth.expect_match(plan.intent_id, debit.end_to_end_id, "attributes",
                                        fault="lookalike_keys" if plan.bare_payee
                                        else "no_reference")  # fmt: skip
            if plan.returned:
                back = self.emulator.clock.now() + timedelta(seconds=self.crng.uniform(600, 3600))
                self._at(back, lambda: self._payout_returned(plan, debit))
            return
        category = FAULTS[record][1]
        assert category is not None
        self.truth.plant(record, category, intent_id=plan.intent_id,
                         end_to_end_id=debit.end_to_end_id, expected_cents=plan.amount,
                         actual_cents=amount)  # fmt: skip

    # collision worlds ---------------------------------------------------------------------
    def _line_name(self, party: _Party) -> str:
        """The party's name as this bank line writes it."""
        return self._written(party.name, person=party.party_type == "person")

    def _written(self, name: str, *, person: bool) -> str:
        if not self.config.collisions.bank_names:
            return name
        return bank_name(name, self.crng, person=person)

    def _split_refund(self, plan: _Plan, credit: Movement, amount: int) -> Movement:
        """Return `amount` of `credit` in two or three devoluções, hours apart; the last one."""
        crng = self.crng
        parts = crng.choice((2, 2, 3)) if amount >= 3 else 2
        cuts = sorted(crng.sample(range(1, amount), parts - 1))
        pieces = [b - a for a, b in zip([0, *cuts], [*cuts, amount], strict=True)]
        at = self.emulator.clock.now()
        dev = credit
        for piece in pieces:
            dev = self.bank.refund_pix(
                self.bank_rng, credit, at=at, amount_cents=piece, intent_id=plan.intent_id
            )
            if plan.fault is None:  # a clean partial refund: each devolução is a refund match
                assert plan.intent_id is not None and dev.end_to_end_id is not None
                self.truth.expect_match(
                    plan.intent_id, dev.end_to_end_id, "refund", fault="partial_refund"
                )
            at += timedelta(seconds=crng.uniform(600, 7200))
        return dev

    def _payout_returned(self, plan: _Plan, payout: Movement) -> None:
        back = self.bank.return_payout(
            self.bank_rng, payout, at=self.emulator.clock.now(), intent_id=plan.intent_id
        )
        self.truth.plant("payout_returned", "offramp_payout_returned", intent_id=plan.intent_id,
                         end_to_end_id=back.end_to_end_id, expected_cents=plan.amount,
                         actual_cents=plan.amount,
                         note="the payee's bank sent the payout back")  # fmt: skip

    def _claim_back(self, plan: _Plan) -> None:
        """The payer's bank claims the credit of a completed onramp back (MED), hours to
        weeks later (before the world ends), in `plan.med_parts` devoluções 6 h apart."""
        credit, crng = plan.credit, self.crng
        assert credit is not None and plan.intent_id is not None
        gap = timedelta(hours=6)
        first = self.emulator.clock.now() + gap
        last = self.config.end.astimezone(UTC) - timedelta(hours=2) - gap * plan.med_parts
        at = first + timedelta(seconds=crng.uniform(0, max(0.0, (last - first).total_seconds())))
        half = credit.amount_cents // 2
        parts = [credit.amount_cents] if plan.med_parts == 1 else [half, credit.amount_cents - half]

        def back(piece: int) -> None:
            self.bank.refund_pix(self.bank_rng, credit, at=self.emulator.clock.now(),
                                 amount_cents=piece, intent_id=plan.intent_id,
                                 nature="MED_FRAUDE")  # fmt: skip

        for i, piece in enumerate(parts):
            self._at(at + gap * i, functools.partial(back, piece))
        self.truth.plant("credit_returned", "onramp_credit_returned", intent_id=plan.intent_id,
                         end_to_end_id=credit.end_to_end_id, expected_cents=credit.amount_cents,
                         actual_cents=credit.amount_cents,
                         note="the payer's bank claimed the credit back (MED)")  # fmt: skip

    def _fees(self, end: datetime) -> None:
        # one fee per business day for the PIX sent that day, booked at 23:50 local
        per_day: dict[Any, int] = {}
        for m in self.bank.movements:
            if m.kind == "pix_out":
                day = m.booked_at.astimezone(BRT).date()
                per_day[day] = per_day.get(day, 0) + 1
        for day, n in sorted(per_day.items()):
            at = datetime(day.year, day.month, day.day, 23, 50, tzinfo=BRT).astimezone(UTC)
            if at < end:
                self.bank.charge_fee(
                    at=at,
                    amount_cents=n * self.config.fee_per_payout_cents,
                    description=f"TARIFA PIX ENVIADO ({n})",
                )


def _account_for(emulator: Emulator) -> Account:
    """The service account the emulator's `pixInfo` points payers to."""
    cfg = emulator.config
    digest = hashlib.sha256(f"account|{emulator.seed}".encode()).hexdigest()
    number = str(int(digest[:12], 16) % 10**7).rjust(7, "0")
    return Account(
        bank_name=cfg.service_bank,
        holder_name=cfg.service_name,
        holder_cnpj=cfg.service_cnpj,
        pix_key=cfg.service_cnpj,
        number=number,
        number_digit=str(int(digest[12], 16) % 10),
    )
