"""The control surface: what the world generator, the tests and `/_sandbox/*` use.

`transition`, `tick` (in intents), `drift`, `bulk_load`, ground-truth reads; not part of the v2 API.
"""

from __future__ import annotations

import heapq
import random
from typing import Any

from recon.sandbox.emulator.routes import _Routes
from recon.sandbox.emulator.state import (
    _ALL,
    _TYPE_CODE,
    INTENT_TYPES,
    _Party,
    _random_cpf,
    _random_wallet,
    _Store,
)
from recon.sandbox.lifecycle import (
    DEFAULT_REASONS,
    EXIT_STATUSES,
    STATUS_CODE,
    STATUSES,
    TERMINAL,
)
from recon.sandbox.signatures import token_account_for


class Emulator(_Routes):
    """The v2 API in memory: parties, intents, keys, idempotency, lifecycles and a clock."""

    def transition(
        self, intent_id: str, to_status: str, *, reason: str | None = None, force: bool = False
    ) -> dict[str, Any]:
        """Move an intent to `to_status` now; the lifecycle graph is checked unless `force`.

        Raises KeyError for an unknown id, ValueError for an unknown status or a move the graph
        does not allow. Returns the intent object after the move.
        """
        with self._lock:
            store, seq = self._move(intent_id, to_status, reason, force)
            return self._render(store, seq)

    def move(
        self, intent_id: str, to_status: str, *, reason: str | None = None, force: bool = False
    ) -> None:
        """`transition` without rendering the intent afterwards (the world's bulk of moves)."""
        with self._lock:
            self._move(intent_id, to_status, reason, force)

    def _move(
        self, intent_id: str, to_status: str, reason: str | None, force: bool
    ) -> tuple[_Store, int]:
        if to_status not in STATUS_CODE:
            raise ValueError(f"unknown status {to_status!r}")
        store, seq = self._find(intent_id)
        itype = INTENT_TYPES[store.itype[seq]]
        current = STATUSES[store.status[seq]]
        if not force and not self._life(itype).can(current, to_status):
            raise ValueError(
                f"{itype} cannot go from {current} to {to_status} "
                f"(allowed: {', '.join(sorted(self._life(itype).allowed(current))) or 'none'})"
            )
        self._set_status(store, seq, to_status, reason, self.clock.now_ms())
        return store, seq

    def get_intent(self, intent_id: str) -> dict[str, Any]:
        """The intent object of any instance (control surface; KeyError if unknown)."""
        with self._lock:
            store, seq = self._find(intent_id)
            return self._render(store, seq)

    def all_intents(
        self, instance_id: str | None = None, *, intent_type: str = "all", status: str = "all"
    ) -> list[dict[str, Any]]:
        """Ground truth: every matching intent of an instance, in list order (newest first)."""
        with self._lock:
            store = self._store(instance_id)
            idx = store.indexes.get(
                (_TYPE_CODE.get(intent_type, _ALL), STATUS_CODE.get(status, _ALL))
            )
            return [self._render(store, s) for s in reversed(idx or [])]

    def approval_for(self, intent_id: str) -> tuple[str, str]:
        """(txSignature, tokenHolder) that approve-burn accepts for this offramp intent."""
        from recon.sandbox.signatures import sign_approval

        with self._lock:
            store, seq = self._find(intent_id)
            party = store.parties[store.party_idx[seq]]
            holder = token_account_for(party.wallet or "")
            sig = sign_approval(
                store.intent_id(seq), holder, store.amount[seq], secret=self.config.signing_secret
            )
            return sig, holder

    def drift(
        self, instance_id: str | None, *, inserts: int, status_changes: int, rng: random.Random
    ) -> dict[str, list[str]]:
        """List drift: add `inserts` newest intents and move `status_changes` intents one step.

        Each insert advances the clock by 1 ms so it is strictly the newest. Returns and logs
        the ids touched (also in `drift_log`), so tests can compare with the ground truth.
        """
        inserted: list[str] = []
        changed: list[str] = []
        with self._lock:
            store = self._store(instance_id)
            for _ in range(inserts):
                party = self._drift_party(store, rng)
                itype = "onramp" if rng.random() < 0.6 else "offramp"
                self.clock.advance(0.001)
                dest = party.doc if itype == "offramp" else party.wallet
                seq = self._new_intent(
                    store,
                    party,
                    itype,
                    rng.randint(1_000, 500_000),
                    None,
                    dest,
                    self.clock.now_ms(),
                )
                inserted.append(store.intent_id(seq))
            movable = [
                idx
                for (t, s), idx in store.indexes.items()
                if t == _ALL and s != _ALL and STATUSES[s] not in TERMINAL and len(idx)
            ]
            for _ in range(status_changes):
                weights = [len(i) for i in movable]
                if not sum(weights):
                    break
                idx = rng.choices(movable, weights=weights)[0]
                seq = idx[rng.randrange(len(idx))]
                life = self._life(INTENT_TYPES[store.itype[seq]])
                nxt = life.next_step(STATUSES[store.status[seq]])
                if nxt is None:  # a failed intent: its only move is refunded
                    nxt = "refunded"
                self._set_status(store, seq, nxt, None, self.clock.now_ms())
                changed.append(store.intent_id(seq))
            event = {"instanceId": store.inst.instance_id, "inserted": inserted, "changed": changed}
            self.drift_log.append(event)
        return {"inserted": inserted, "changed": changed}

    def _drift_party(self, store: _Store, rng: random.Random) -> _Party:
        with_wallet = [p for p in store.parties[:1000] if p.wallet]
        if with_wallet:
            return rng.choice(with_wallet)
        party = self._add_party(
            store,
            doc=_random_cpf(rng, store),
            party_type="person",
            display_name="Drift Party",
            country="BR",
            external_ref=None,
            email=None,
            phone=None,
        )
        self.bind_wallet_direct(store, party, _random_wallet(rng))
        return party

    # ------------------------------------------------------------------ bulk load
    def bulk_load(
        self, n: int, *, instance_id: str | None = None, seed: int = 0, days: float = 30.0
    ) -> None:
        """Fill an instance with `n` intents created over the `days` before now, no HTTP.

        Statuses follow the lifecycles (recent ones still waiting, older ones mostly completed,
        some expired/failed/refunded/canceled). Deterministic for (emulator seed, seed).
        """
        if n < 0:
            raise ValueError("n must be >= 0")
        rng = random.Random(f"bulk|{self.seed}|{seed}")
        with self._lock:
            store = self._store(instance_id)
            n_parties = max(2, min(2000, n // 100))
            parties = []
            for i in range(n_parties):
                p = self._add_party(
                    store,
                    doc=_random_cpf(rng, store),
                    party_type="person",
                    display_name=f"Bulk Party {i:04d}",
                    country="BR",
                    external_ref=None,
                    email=None,
                    phone=None,
                )
                self.bind_wallet_direct(store, p, _random_wallet(rng))
                parties.append(p)
            now = self.clock.now_ms()
            span = int(days * 86_400_000)
            start = now - span
            base = store.count()
            was_sorted_tail = base == 0 or store.created[base - 1] < start
            on_ttl = int(self.config.onramp_ttl.total_seconds() * 1000)
            off_ttl = int(self.config.offramp_ttl.total_seconds() * 1000)
            c = STATUS_CODE
            done_on = [c["completed"]] * 80 + [c["expired"]] * 12 + [c["failed"]] * 2
            done_on += [c["refunded"]] * 2 + [c["canceled"]] * 2 + [c["minting"]] * 2
            done_off = [c["completed"]] * 80 + [c["expired"]] * 12 + [c["failed"]] * 2
            done_off += [c["refunded"]] * 2 + [c["canceled"]] * 2 + [c["paying_out"]] * 2
            wait_on, wait_off = c["awaiting_fiat_payment"], c["awaiting_burn_approval"]
            rnd = rng.random
            pidx, ity, sts, amt = store.party_idx, store.itype, store.status, store.amount
            cre, upd, exp = store.created, store.updated, store.expires
            cref, dest = store.client_ref, store.dest
            for i in range(n):
                created = start + (i * span) // max(n, 1)
                p = parties[int(rnd() * n_parties)]
                off = rnd() < 0.35
                ttl = off_ttl if off else on_ttl
                if created + ttl > now:
                    status = wait_off if off else wait_on
                    updated = created
                else:
                    status = (done_off if off else done_on)[int(rnd() * 100)]
                    updated = created + int(rnd() * ttl)
                pidx.append(p.idx)
                ity.append(1 if off else 0)
                sts.append(status)
                amt.append(1_000 + int(rnd() * 499_000))
                cre.append(created)
                upd.append(updated)
                exp.append(created + ttl)
                cref.append(None)
                dest.append(p.doc if off else None)
            for seq in range(base, base + n):
                code = store.status[seq]
                if STATUSES[code] in EXIT_STATUSES:
                    store.reason[seq] = DEFAULT_REASONS[STATUSES[code]]
                if code in (wait_on, wait_off):
                    heapq.heappush(self._expiry_heap, (store.expires[seq], store.index, seq, code))
            strictly_increasing = span >= n
            if was_sorted_tail and strictly_increasing:
                for seq in range(base, base + n):
                    t, s = store.itype[seq], store.status[seq]
                    store._index(_ALL, _ALL).append(seq)
                    store._index(t, _ALL).append(seq)
                    store._index(_ALL, s).append(seq)
                    store._index(t, s).append(seq)
            else:
                store.rebuild_indexes()
            store.cache.clear()
