"""The /v2/intents endpoints (create, read, list, approve-burn) and the lifecycle clock."""

from __future__ import annotations

import heapq
import json
from collections.abc import Mapping
from typing import Any

from recon.sandbox import validation as v
from recon.sandbox.clock import format_ts
from recon.sandbox.emulator.parties import _Parties
from recon.sandbox.emulator.responses import (
    _canonical,
    _HttpError,
    _int_param,
    _json_body,
    _Raw,
)
from recon.sandbox.emulator.state import (
    _ALL,
    _CREATED,
    _CROCKFORD,
    _PAIRS,
    _REF_MASK,
    _REF_MULT,
    _TYPE_CODE,
    INTENT_TYPES,
    _digits,
    _Idem,
    _js,
    _Party,
    _Store,
)
from recon.sandbox.lifecycle import (
    DEFAULT_REASONS,
    EXIT_STATUSES,
    STATUS_CODE,
    STATUSES,
    TERMINAL,
    WAITING,
)
from recon.sandbox.signatures import token_account_for, verify_approval


class _Intents(_Parties):
    def _create_intent_request(
        self, store: _Store, itype: str, hdrs: Mapping[str, str], raw: bytes
    ) -> tuple[int, Any, dict[str, str]]:
        body = _json_body(hdrs, raw)
        errors: list[v.FieldError] = []

        def check(fn: Any, *args: Any, **kw: Any) -> Any:
            try:
                return fn(*args, **kw)
            except v.FieldError as err:
                errors.append(err)
                return None

        amount = check(v.positive_int, body, "amountCents")
        if itype == "onramp":
            target = check(_wallet_field, body)
        else:
            target = check(v.req_str, body, "destinationAddress", lo=1, hi=255)
        check(v.chain_id, body)
        client_ref = check(v.opt_str, body, "clientReference", hi=255)
        key = hdrs.get("idempotency-key")
        if key is not None and v.parse_uuid(key) is None:
            errors.append(
                v.FieldError("idempotency-key", "must be a UUID", "invalid_idempotency_key")
            )
        if errors:
            code = errors[0].code if len(errors) == 1 else "validation_error"
            msg = "; ".join(f"{e.field}: {e.message}" for e in errors)
            raise _HttpError(400, code, msg, errors=errors)

        now = self.clock.now_ms()
        fingerprint = itype + "|" + _canonical(body)
        idem_key = v.parse_uuid(key) if key else None
        if idem_key:
            prior = store.idem.get(idem_key)
            window = int(self.config.idempotency_window.total_seconds() * 1000)
            if prior is not None and now - prior.at_ms <= window:
                if prior.fingerprint != fingerprint:
                    raise _HttpError(
                        409,
                        "idempotency_key_reused",
                        "idempotency-key was already used with a different request body",
                    )
                return prior.status, prior.body, {"idempotent-replayed": "true"}

        if itype == "onramp":
            party = store.party_by_wallet.get(target)
            if party is None:
                err = v.FieldError(
                    "destinationWallet",
                    "is not the bound wallet of any party in this instance",
                    "unknown_destination_wallet",
                )
                raise _HttpError(400, err.code, f"{err.field}: {err.message}", errors=[err])
        else:
            party = self._party_for_pix_key(store, target)
            if party is None:
                err = v.FieldError(
                    "destinationAddress",
                    "is not the document, e-mail or phone of any party in this instance",
                    "unknown_destination_address",
                )
                raise _HttpError(400, err.code, f"{err.field}: {err.message}", errors=[err])
            if party.wallet is None:
                raise _HttpError(
                    400,
                    "party_wallet_not_bound",
                    "the party has no bound Solana wallet to burn from; bind one first",
                    details={"partyId": party.id},
                )
        seq = self._new_intent(store, party, itype, amount, client_ref, target, now)
        rendered = self._render(store, seq)
        if idem_key:
            store.idem[idem_key] = _Idem(fingerprint, now, 201, rendered)
        return 201, rendered, {}

    def _party_for_pix_key(self, store: _Store, address: str) -> _Party | None:
        keys = store.party_by_pix_key
        found = keys.get(address) or keys.get(address.lower())
        if found is None and v.is_valid_phone(address):
            found = keys.get("tel:" + _digits(address))
        return found

    def _new_intent(
        self,
        store: _Store,
        party: _Party,
        itype: str,
        amount: int,
        client_ref: str | None,
        dest: str | None,
        now: int,
    ) -> int:
        cfg = self.config
        life = self._life(itype)
        if not cfg.skip_created:
            status = "created"
        elif (
            cfg.compliance_threshold_cents is not None and amount >= cfg.compliance_threshold_cents
        ):
            status = "requires_compliance"
        else:
            status = life.waiting
        ttl = cfg.onramp_ttl if itype == "onramp" else cfg.offramp_ttl
        seq = store.count()
        store.party_idx.append(party.idx)
        store.itype.append(_TYPE_CODE[itype])
        store.status.append(STATUS_CODE[status])
        store.amount.append(amount)
        store.created.append(now)
        store.updated.append(now)
        store.expires.append(now + int(ttl.total_seconds() * 1000))
        store.client_ref.append(client_ref)
        store.dest.append(dest if itype == "offramp" else None)
        store.index_add(seq)
        self._schedule(store, seq, now)
        return seq

    # ------------------------------------------------------------------ intents: read
    def _intent_seq(self, store: _Store, intent_id: str) -> int:
        seq = store.decode(intent_id)
        if seq is None:
            raise _HttpError(404, "intent_not_found", "no intent with this id in this instance")
        return seq

    def _reference(self, store: _Store, seq: int) -> str:
        # a bijection of (seq, instance) into 35 bits → unique per intent in the emulator
        n = ((seq << 3) | (store.index & 7)) & _REF_MASK
        # one XOR for the whole emulator: per-instance masks would break cross-instance uniqueness
        n = ((n * _REF_MULT) & _REF_MASK) ^ self._ref_xor
        # 7 base32 characters, most significant first: one, then three pairs of 10 bits
        return (
            f"{self.config.reference_prefix} {_CROCKFORD[n >> 30]}"
            f"{_PAIRS[(n >> 20) & 1023]}{_PAIRS[(n >> 10) & 1023]}{_PAIRS[n & 1023]}"
        )

    def _render(self, store: _Store, seq: int) -> dict[str, Any]:
        """The intent object (a fresh dict each call)."""
        return json.loads(self._intent_json(store, seq, keep=False))

    def _intent_json(self, store: _Store, seq: int, *, keep: bool = True) -> bytes:
        """The intent object as JSON bytes, from the cache while the intent has not changed.

        Built from a template rather than dict + json.dumps: list pages are the hot path
        (1M-intent walks), and every caller-supplied string goes through `_js` (json.dumps).
        Key order and values are those of spec 2.2; tests compare with a dict-built oracle.
        `keep`: cache what was rendered (list pages; single reads and ground-truth dumps of
        every intent do not fill the cache).
        """
        cached = store.cache.entries.get(seq)
        if cached is not None:
            return cached
        party = store.parties[store.party_idx[seq]]
        t = store.itype[seq]
        code = store.status[seq]
        amount = store.amount[seq]
        expires = store.expires[seq]
        created = store.created[seq]
        updated = store.updated[seq]
        created_ts = format_ts(created)
        reason = store.reason.get(seq)
        expires_json = f'"{format_ts(expires)}"' if expires >= 0 else "null"
        if t == 0:
            metadata = "null"
            pix = f'{self._pix_prefix}{_js(self._reference(store, seq))},"amountCents":{amount}}}'
        else:
            metadata = f'{{"amountCents":{amount},"destinationAddress":{_js(store.dest[seq])}}}'
            pix = "null"
        out = (
            f'{{"id":"{store.intent_id(seq)}","instanceId":"{store.inst.instance_id}",'
            f'"partyId":"{party.id}","intentType":"{INTENT_TYPES[t]}",'
            f'"flowVersion":{self.config.flow_version},'
            f'"adapter":{"null" if code == _CREATED else self._adapter_json[t]},'
            f'"status":"{STATUSES[code]}",'
            f'"statusReason":{"null" if reason is None else _js(reason)},'
            f'"clientReference":{_js(store.client_ref[seq])},"metadata":{metadata},'
            f'"expiresAt":{expires_json},'
            f'"createdAt":"{created_ts}",'
            f'"updatedAt":"{created_ts if updated == created else format_ts(updated)}",'
            f'"pixInfo":{pix},"depositInstructions":null,"party":{party.subset_json},'
            f'"chainId":"solana"}}'
        ).encode()
        if keep:
            store.cache.put(seq, out)
        return out

    def _list(self, store: _Store, query: Mapping[str, str]) -> _Raw:
        errors: list[v.FieldError] = []
        itype = query.get("intentType", "all")
        if itype not in ("all", *INTENT_TYPES):
            errors.append(v.FieldError("intentType", 'must be "onramp", "offramp" or "all"'))
        status = query.get("status", "all")
        if status != "all" and status not in STATUS_CODE:
            errors.append(v.FieldError("status", 'must be an intent status or "all"'))
        limit = _int_param(query, "limit", 50, 1, 100, errors)
        offset = _int_param(query, "offset", 0, 0, None, errors)
        if errors:
            msg = "; ".join(f"{e.field}: {e.message}" for e in errors)
            raise _HttpError(400, "validation_error", msg, errors=errors)
        t = _TYPE_CODE.get(itype, _ALL)
        s = STATUS_CODE.get(status, _ALL)
        idx = store.indexes.get((t, s))
        total = len(idx) if idx is not None else 0
        head = b'{"intents":['
        tail = f'],"total":{total},"limit":{limit},"offset":{offset}}}'.encode()
        if idx is None or offset >= total:
            return _Raw(head + tail)
        hi = total - offset
        lo = max(0, hi - limit)
        # a page of cached intents is a dict look-up each and one join (no other copy)
        cached = store.cache.entries.get
        render = self._intent_json
        seqs = idx[lo:hi]
        seqs.reverse()
        parts = [cached(seq) or render(store, seq) for seq in seqs]
        parts[0] = head + parts[0]
        parts[-1] += tail
        return _Raw(b",".join(parts))

    # ------------------------------------------------------------------ approve-burn
    def _approve_burn(
        self, store: _Store, intent_id: str, hdrs: Mapping[str, str], raw: bytes
    ) -> dict[str, Any]:
        seq = self._intent_seq(store, intent_id)
        body = _json_body(hdrs, raw)
        errors: list[v.FieldError] = []
        sig = holder = ""
        try:
            sig = v.req_str(body, "txSignature", lo=1)
            if not v.is_base58(sig):
                raise v.FieldError("txSignature", "must be base58-encoded")
        except v.FieldError as err:
            errors.append(err)
        try:
            holder = v.req_str(body, "tokenHolder", lo=32, hi=44)
        except v.FieldError as err:
            errors.append(err)
        if errors:
            msg = "; ".join(f"{e.field}: {e.message}" for e in errors)
            raise _HttpError(400, "validation_error", msg, errors=errors)
        canon_id = store.intent_id(seq)
        used = self._used_signatures.get(sig)
        if used is not None:
            if used == (store.index, seq):
                # the signature is the deduplication key: a replay gets the same answer
                return {"status": "burn_approved"}
            raise _HttpError(
                400, "signature_already_used", "txSignature was already used for another intent"
            )
        status = STATUSES[store.status[seq]]
        if store.itype[seq] != _TYPE_CODE["offramp"] or status != "awaiting_burn_approval":
            raise _HttpError(
                400,
                "invalid_status",
                "only an offramp intent in awaiting_burn_approval can be approved",
                details={"intentType": INTENT_TYPES[store.itype[seq]], "status": status},
            )
        party = store.parties[store.party_idx[seq]]
        expected_holder = token_account_for(party.wallet or "")
        problem = verify_approval(
            sig,
            intent_id=canon_id,
            token_holder=holder,
            expected_holder=expected_holder,
            expected_amount_cents=store.amount[seq],
            secret=self.config.signing_secret,
        )
        if problem is not None:
            messages = {
                "signature_invalid": "txSignature does not verify",
                "wrong_signer": "tokenHolder is not the party's token account",
                "wrong_delegation_amount": "the approved amount differs from the intent amount",
            }
            raise _HttpError(400, problem, messages[problem])
        self._used_signatures[sig] = (store.index, seq)
        store.signature[seq] = sig
        self._set_status(store, seq, "burn_approved", None, self.clock.now_ms())
        return {"status": "burn_approved"}

    # ------------------------------------------------------------------ lifecycle
    def _set_status(self, store: _Store, seq: int, new: str, reason: str | None, at: int) -> None:
        old = store.status[seq]
        code = STATUS_CODE[new]
        if new in WAITING and STATUSES[old] in ("created", "requires_compliance"):
            # the payment/approval window opens when the intent starts waiting
            ttl = (
                self.config.onramp_ttl
                if new == "awaiting_fiat_payment"
                else self.config.offramp_ttl
            )
            store.expires[seq] = max(at, store.updated[seq] + 1) + int(ttl.total_seconds() * 1000)
        if old != code:
            store.index_move(seq, old, code)
            store.status[seq] = code
        # updatedAt must change on every transition, even several in the same millisecond
        store.updated[seq] = max(at, store.updated[seq] + 1)
        if new in EXIT_STATUSES:
            store.reason[seq] = reason or DEFAULT_REASONS[new]
        elif reason:
            store.reason[seq] = reason
        else:
            store.reason.pop(seq, None)
        store.cache.drop(seq)
        self._schedule(store, seq, store.updated[seq])

    def _schedule(self, store: _Store, seq: int, at: int) -> None:
        status = STATUSES[store.status[seq]]
        code = store.status[seq]
        if status in WAITING and store.expires[seq] >= 0:
            heapq.heappush(self._expiry_heap, (store.expires[seq], store.index, seq, code))
        elif self.config.auto_advance and status not in TERMINAL and status not in WAITING:
            delay = self.config.step_delays.get(status)
            if delay is not None:
                due = at + int(delay * 1000)
                heapq.heappush(self._advance_heap, (due, store.index, seq, code))

    def tick(self) -> list[str]:
        """Apply time-driven transitions due by now; returns the ids that moved.

        Waiting intents past expiresAt → expired (updatedAt = expiresAt); with
        `auto_advance`, other non-terminal statuses move one step after their delay
        (repeatedly, each step stamped at its due time).
        """
        moved: list[str] = []
        with self._lock:
            now = self.clock.now_ms()
            self._last_tick_ms = now
            while True:
                heap, kind = None, ""
                if (
                    self.config.expire_on_tick
                    and self._expiry_heap
                    and self._expiry_heap[0][0] <= now
                ):
                    heap, kind = self._expiry_heap, "expire"
                if (
                    self._advance_heap
                    and self._advance_heap[0][0] <= now
                    and (heap is None or self._advance_heap[0][0] < self._expiry_heap[0][0])
                ):
                    heap, kind = self._advance_heap, "advance"
                if heap is None:
                    break
                due, sidx, seq, code = heapq.heappop(heap)
                store = self._stores[sidx]
                if store.status[seq] != code:
                    continue  # it moved since this was scheduled
                status = STATUSES[code]
                if kind == "expire":
                    self._set_status(store, seq, "expired", None, due)
                else:
                    nxt = self._life(INTENT_TYPES[store.itype[seq]]).next_step(status)
                    threshold = self.config.compliance_threshold_cents
                    if (
                        status == "created"
                        and threshold is not None
                        and store.amount[seq] >= threshold
                    ):
                        nxt = "requires_compliance"
                    if nxt is None:
                        continue
                    self._set_status(store, seq, nxt, None, due)
                moved.append(store.intent_id(seq))
        return moved


def _wallet_field(body: dict[str, Any]) -> str:
    wallet = v.req_str(body, "destinationWallet", lo=1, hi=255)
    if not v.is_valid_solana_address(wallet):
        raise v.FieldError(
            "destinationWallet",
            "must be a Solana address (base58 decoding to 32 bytes)",
            "invalid_address",
        )
    return wallet
