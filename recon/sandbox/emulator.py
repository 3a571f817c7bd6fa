"""Framework-free emulator of the whole v2 Intents and Parties API.

`Emulator.handle(method, path, query=, headers=, body=)` answers any /v2 request;
`create_app` (Starlette) and `EmulatorTransport` (httpx, in-process) are thin shells around it.
The control surface (`transition`, `tick`, `bulk_load`, `drift`, the clock) is what the world
generator, the tests and `/_sandbox/*` use; it is not part of the v2 API.

Storage is columnar per instance (arrays of machine ints + a few sparse dicts), so a million
intents fit in ~100 MB; intent objects are rendered on demand and cached (bounded). Lists are
served from per-(type, status) indexes kept sorted oldest→newest, so a page is an O(limit) slice
from the end and `total` is a `len`.

Intent ids are a keyed bijection of (instance, sequence number): the emulator can decode an id to
its row without a dictionary, and an id of another instance fails the key check (→ 404).
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import random
import threading
import uuid
from array import array
from bisect import bisect_left, insort
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.utils import format_datetime
from typing import Any

import base58

from recon.sandbox import validation as v
from recon.sandbox.clock import DEFAULT_START, Clock, format_ts
from recon.sandbox.lifecycle import (
    DEFAULT_REASONS,
    EXIT_STATUSES,
    OFFRAMP,
    ONRAMP,
    STATUS_CODE,
    STATUSES,
    TERMINAL,
    WAITING,
    Lifecycle,
)
from recon.sandbox.signatures import DEFAULT_SECRET, token_account_for, verify_approval

__all__ = [
    "Emulator",
    "EmulatorConfig",
    "EmulatorResponse",
    "Instance",
]

INTENT_TYPES = ("onramp", "offramp")
_TYPE_CODE = {"onramp": 0, "offramp": 1}
_ALL = -1
_M62 = (1 << 62) - 1
_MULT = 0x2545F4914F6CDD1D & _M62 | 1  # odd → invertible mod 2**62
_INV = pow(_MULT, -1, 1 << 62)
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_REF_BITS = 35  # 7 base32 characters
_REF_MASK = (1 << _REF_BITS) - 1
_REF_MULT = 0x5DEECE66D | 1
_RENDER_CACHE_MAX = 50_000
_CREATED = STATUS_CODE["created"]


@dataclass(frozen=True)
class Instance:
    """One (organization, instance) pair and the API key bound to it."""

    organization_id: str
    instance_id: str
    api_key: str

    def __repr__(self) -> str:  # never print a key in a repr
        return (
            f"Instance(organization_id={self.organization_id!r}, instance_id={self.instance_id!r})"
        )


class EmulatorResponse:
    """What `Emulator.handle` returns: status, JSON-able body (None = empty), headers.

    List pages are built directly as JSON text (`raw`); `body` then parses it on first access,
    so the HTTP shells never pay for a dict they only serialize again.
    """

    __slots__ = ("_body", "_raw", "headers", "status")

    def __init__(
        self,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        raw: bytes | None = None,
    ):
        self.status = status
        self.headers = headers if headers is not None else {}
        self._body = body
        self._raw = raw

    @property
    def body(self) -> Any:
        """The JSON body as Python objects (None for an empty body)."""
        if self._body is None and self._raw is not None:
            self._body = json.loads(self._raw)
        return self._body

    def content(self) -> bytes:
        """The body as JSON bytes (empty for None)."""
        if self._raw is not None:
            return self._raw
        if self._body is None:
            return b""
        return json.dumps(self._body, separators=(",", ":")).encode()

    def __repr__(self) -> str:
        return f"EmulatorResponse(status={self.status}, body={self.body!r})"


class _Raw(bytes):
    """A payload that is already JSON text."""


def _default_delays() -> dict[str, float]:
    return {
        "created": 2.0,
        "requires_compliance": 600.0,
        "fiat_received": 5.0,
        "minting": 20.0,
        "awaiting_onchain_transfer": 30.0,
        "burn_approved": 10.0,
        "onchain_received": 10.0,
        "burning": 20.0,
        "paying_out": 60.0,
    }


@dataclass
class EmulatorConfig:
    """Everything the spec leaves open, with the sandbox's defaults (see docs/emulator.md)."""

    start: datetime = DEFAULT_START
    #: the clock also moves with real time (for people poking a served sandbox by hand)
    follow_wall_clock: bool = False
    onramp_ttl: timedelta = timedelta(minutes=30)
    offramp_ttl: timedelta = timedelta(minutes=30)
    idempotency_window: timedelta = timedelta(hours=24)
    service_cnpj: str = "11222333000181"
    service_name: str = "Recon Sandbox Pagamentos Ltda"
    service_bank: str = "Banco Sandbox S.A."
    reference_prefix: str = "RECON"
    flow_version: int = 2
    adapters: tuple[str, str] = ("adapter-a", "adapter-b")
    onramp: Lifecycle = ONRAMP
    offramp: Lifecycle = OFFRAMP
    #: creation returns the intent already in its waiting status ("created" is transient)
    skip_created: bool = True
    #: intents with amountCents >= this go to requires_compliance first (None: never)
    compliance_threshold_cents: int | None = None
    #: tick() moves non-waiting statuses along the happy path after `step_delays` seconds
    auto_advance: bool = False
    step_delays: Mapping[str, float] = field(default_factory=_default_delays)
    #: tick() expires waiting intents at expiresAt
    expire_on_tick: bool = True
    #: every handled request first runs tick() if the clock moved since the last one
    tick_on_request: bool = True
    signing_secret: bytes = DEFAULT_SECRET

    def __post_init__(self) -> None:
        if not v.is_valid_cnpj(self.service_cnpj):
            raise ValueError("service_cnpj must be a valid CNPJ (14 digits, check digits)")
        if self.flow_version < 1:
            raise ValueError("flow_version must be >= 1")


@dataclass(slots=True, eq=False)
class _Party:
    idx: int
    id: str
    instance_id: str
    doc: str
    party_type: str
    display_name: str
    country: str
    external_ref: str | None
    email: str | None
    phone: str | None
    status: str
    wallet: str | None
    created_ms: int
    updated_ms: int
    masked: str = ""
    #: the intent's `party` subset as JSON text (rebuilt when the wallet changes)
    subset_json: str = ""

    def __post_init__(self) -> None:
        self.masked = v.mask_document(self.doc)
        self.refresh()

    def refresh(self) -> None:
        self.subset_json = (
            f'{{"displayName":{_js(self.display_name)},"documentMasked":{_js(self.masked)},'
            f'"solanaWallet":{_js(self.wallet)}}}'
        )


@dataclass
class _Idem:
    fingerprint: str
    at_ms: int
    status: int
    body: Any


class _Store:
    """One instance's parties and intents."""

    def __init__(self, inst: Instance, index: int, seed: int):
        self.inst = inst
        self.index = index
        self.salt = hashlib.blake2b(f"{seed}|{inst.instance_id}".encode(), digest_size=16).digest()
        self.mask62 = int.from_bytes(self.salt[:8], "big") & _M62
        self.parties: list[_Party] = []
        self.party_by_id: dict[str, _Party] = {}
        self.party_by_doc: dict[str, _Party] = {}
        self.party_by_wallet: dict[str, _Party] = {}
        self.party_by_pix_key: dict[str, _Party] = {}
        # intent columns, indexed by sequence number
        self.party_idx = array("i")
        self.itype = array("b")
        self.status = array("b")
        self.amount = array("q")
        self.created = array("q")
        self.updated = array("q")
        self.expires = array("q")  # -1 = none
        self.client_ref: list[str | None] = []
        self.dest: list[str | None] = []
        self.reason: dict[int, str] = {}
        self.signature: dict[int, str] = {}
        # (type code | -1, status code | -1) -> seqs sorted by (createdAt, id) ascending
        self.indexes: dict[tuple[int, int], array[int]] = {}
        self.idem: dict[str, _Idem] = {}
        self.cache: dict[int, str] = {}  # seq -> intent JSON text

    # --- ids ---------------------------------------------------------------------------
    def uuid_int(self, seq: int) -> int:
        lo = (1 << 63) | (((seq * _MULT) & _M62) ^ self.mask62)
        hi = int.from_bytes(
            hashlib.blake2b(seq.to_bytes(8, "big"), key=self.salt, digest_size=8).digest(), "big"
        )
        hi = (hi & ~0xF000) | 0x4000  # UUID version 4 nibble
        return (hi << 64) | lo

    def intent_id(self, seq: int) -> str:
        h = f"{self.uuid_int(seq):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def decode(self, intent_id: str) -> int | None:
        canon = v.parse_uuid(intent_id)
        if canon is None:
            return None
        n = uuid.UUID(canon).int
        lo = n & ((1 << 64) - 1)
        if lo >> 62 != 0b10:
            return None
        seq = (((lo & _M62) ^ self.mask62) * _INV) & _M62
        if seq >= len(self.created) or self.uuid_int(seq) != n:
            return None
        return seq

    def key(self, seq: int) -> tuple[int, int]:
        return (self.created[seq], self.uuid_int(seq))

    # --- indexes -----------------------------------------------------------------------
    def _index(self, t: int, s: int) -> array[int]:
        idx = self.indexes.get((t, s))
        if idx is None:
            idx = self.indexes[(t, s)] = array("i")
        return idx

    def _insert(self, idx: array[int], seq: int) -> None:
        if idx:
            last = idx[-1]
            c_new, c_last = self.created[seq], self.created[last]
            if c_new < c_last or (c_new == c_last and self.uuid_int(seq) < self.uuid_int(last)):
                insort(idx, seq, key=self.key)
                return
        idx.append(seq)

    def _remove(self, idx: array[int], seq: int) -> None:
        i = bisect_left(idx, self.key(seq), key=self.key)
        if i >= len(idx) or idx[i] != seq:  # pragma: no cover - an index bug, never a user error
            raise RuntimeError(f"index out of sync for seq {seq}")
        del idx[i]

    def index_add(self, seq: int) -> None:
        t, s = self.itype[seq], self.status[seq]
        for key in ((_ALL, _ALL), (t, _ALL), (_ALL, s), (t, s)):
            self._insert(self._index(*key), seq)

    def index_move(self, seq: int, old: int, new: int) -> None:
        t = self.itype[seq]
        self._remove(self._index(_ALL, old), seq)
        self._remove(self._index(t, old), seq)
        self._insert(self._index(_ALL, new), seq)
        self._insert(self._index(t, new), seq)

    def rebuild_indexes(self) -> None:
        self.indexes = {}
        order = sorted(range(len(self.created)), key=self.key)
        for seq in order:
            t, s = self.itype[seq], self.status[seq]
            for key in ((_ALL, _ALL), (t, _ALL), (_ALL, s), (t, s)):
                self._index(*key).append(seq)

    def count(self) -> int:
        return len(self.created)


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _HttpError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        errors: Sequence[v.FieldError] = (),
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = list(errors)
        self.details = details
        self.headers = headers or {}


def _field_error(err: v.FieldError) -> _HttpError:
    return _HttpError(400, err.code, f"{err.field}: {err.message}", errors=[err])


class Emulator:
    """The v2 API in memory: parties, intents, keys, idempotency, lifecycles and a clock."""

    def __init__(
        self,
        *,
        seed: int = 0,
        keys: Sequence[str] | None = None,
        config: EmulatorConfig | None = None,
    ):
        self.seed = seed
        self.config = config or EmulatorConfig()
        self.clock = Clock(self.config.start, follow_wall=self.config.follow_wall_clock)
        self._lock = threading.RLock()
        self._rng = random.Random(f"recon-sandbox|{seed}")
        self._ref_xor = random.Random(f"recon-sandbox-ref|{seed}").getrandbits(_REF_BITS)
        cfg = self.config
        self._pix_prefix = (
            f'{{"keyType":"cnpj","keyValue":{_js(cfg.service_cnpj)},'
            f'"recipientName":{_js(cfg.service_name)},"bank":{_js(cfg.service_bank)},'
            f'"description":'
        )
        self._adapter_json = (_js(cfg.adapters[0]), _js(cfg.adapters[1]))
        if keys is None:
            env = os.environ.get("RECON_SANDBOX_KEYS", "")
            keys = [k.strip() for k in env.split(",") if k.strip()] or None
        self._stores: list[_Store] = []
        key_rng = random.Random(f"recon-sandbox-keys|{seed}")
        given = list(keys or [])
        if len(set(given)) != len(given):
            raise ValueError("API keys must be distinct")
        for i in range(max(2, len(given))):
            org = str(uuid.UUID(int=key_rng.getrandbits(128), version=4))
            inst = str(uuid.UUID(int=key_rng.getrandbits(128), version=4))
            derived = "rk_sandbox_" + f"{key_rng.getrandbits(160):040x}"
            api_key = given[i] if i < len(given) else derived
            self._stores.append(_Store(Instance(org, inst, api_key), i, seed))
        self._by_key = {s.inst.api_key: s for s in self._stores}
        self._by_instance = {s.inst.instance_id: s for s in self._stores}
        self._used_signatures: dict[str, tuple[int, int]] = {}
        # (due_ms, store index, seq, status code expected at due time)
        self._expiry_heap: list[tuple[int, int, int, int]] = []
        self._advance_heap: list[tuple[int, int, int, int]] = []
        self._last_tick_ms = self.clock.now_ms()
        self.drift_log: list[dict[str, Any]] = []

    # ------------------------------------------------------------------ public surface
    @property
    def instances(self) -> list[Instance]:
        """The (organization, instance, key) triples; at least two organizations."""
        return [s.inst for s in self._stores]

    def instance_for_key(self, api_key: str | None) -> Instance | None:
        """The instance a key is bound to, or None for a missing/unknown key."""
        store = self._by_key.get(api_key or "")
        return store.inst if store else None

    def intent_count(self, instance_id: str | None = None) -> int:
        """Number of intents in one instance (default: the first)."""
        return self._store(instance_id).count()

    def http_date(self) -> str:
        """The emulator clock as an HTTP ``Date`` value."""
        return format_datetime(self.clock.now(), usegmt=True)

    def handle(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> EmulatorResponse:
        """Answer one /v2 request (the whole API surface, including auth and errors)."""
        hdrs = {k.lower(): val for k, val in (headers or {}).items()}
        query = query or {}
        family = "parties" if path.startswith("/v2/parties") else "intents"
        with self._lock:
            try:
                store = self._by_key.get(hdrs.get("x-api-key", ""))
                if store is None:
                    # DESIGN.md: 401 in the intents shape on every endpoint, both families
                    raise _HttpError(401, "unauthorized", "missing or invalid X-API-Key header")
                if self.config.tick_on_request and self.clock.now_ms() != self._last_tick_ms:
                    self.tick()
                status, payload, extra = self._route(store, method.upper(), path, query, hdrs, body)
                headers = {"date": self.http_date(), **extra}
                if isinstance(payload, _Raw):
                    resp = EmulatorResponse(status, None, headers, raw=bytes(payload))
                else:
                    resp = EmulatorResponse(status, payload, headers)
            except Exception as exc:  # a bug must still answer in the family's shape
                if not isinstance(exc, _HttpError):
                    exc = _HttpError(500, "internal_error", f"internal error: {type(exc).__name__}")
                shape = "intents" if exc.status == 401 else family
                resp = EmulatorResponse(
                    exc.status, _error_body(shape, exc), {"date": self.http_date(), **exc.headers}
                )
        if resp._body is not None or resp._raw is not None:
            resp.headers.setdefault("content-type", "application/json")
        return resp

    # ------------------------------------------------------------------ routing
    def _route(
        self,
        store: _Store,
        method: str,
        path: str,
        query: Mapping[str, str],
        hdrs: Mapping[str, str],
        body: bytes,
    ) -> tuple[int, Any, dict[str, str]]:
        seg = path.split("/")
        if len(seg) < 3 or seg[0] != "" or seg[1] != "v2":
            raise _HttpError(404, "not_found", f"no such endpoint: {path}")
        parts = seg[2:]

        def allow(*methods: str) -> None:
            if method not in methods:
                raise _HttpError(
                    405,
                    "method_not_allowed",
                    f"{method} is not allowed on {path}",
                    headers={"allow": ", ".join(methods)},
                )

        if parts == ["parties"]:
            allow("POST")
            return 201, self._create_party(store, _json_body(hdrs, body)), {}
        if len(parts) == 2 and parts[0] == "parties":
            allow("GET")
            return 200, self._render_party(self._party(store, parts[1])), {}
        if len(parts) == 3 and parts[0] == "parties" and parts[2] == "wallet":
            allow("PATCH")
            party = self._party(store, parts[1])
            return 200, self._bind_wallet(store, party, _json_body(hdrs, body)), {}
        if parts == ["intents"]:
            allow("GET")
            return 200, self._list(store, query), {}
        if len(parts) == 2 and parts[0] == "intents" and parts[1] in INTENT_TYPES:
            allow("POST")
            return self._create_intent_request(store, parts[1], hdrs, body)
        if len(parts) == 2 and parts[0] == "intents":
            allow("GET")
            return 200, self._render(store, self._intent_seq(store, parts[1])), {}
        if len(parts) == 3 and parts[0] == "intents" and parts[2] == "approve-burn":
            allow("POST")
            return 200, self._approve_burn(store, parts[1], hdrs, body), {}
        raise _HttpError(404, "not_found", f"no such endpoint: {path}")

    # ------------------------------------------------------------------ parties
    def _party(self, store: _Store, party_id: str) -> _Party:
        canon = v.parse_uuid(party_id)
        party = store.party_by_id.get(canon) if canon else None
        if party is None:
            raise _HttpError(404, "party_not_found", "no party with this id in this instance")
        return party

    def _create_party(self, store: _Store, body: dict[str, Any]) -> dict[str, Any]:
        try:
            doc = v.req_str(body, "cpf")
            if not (doc.isascii() and doc.isdigit()):
                raise v.FieldError("cpf", "must contain digits only (no dots, dashes or spaces)")
            if len(doc) not in (11, 14):
                raise v.FieldError("cpf", "must have 11 digits (CPF) or 14 digits (CNPJ)")
            ok = v.is_valid_cpf(doc) if len(doc) == 11 else v.is_valid_cnpj(doc)
            if not ok:
                kind = "CPF" if len(doc) == 11 else "CNPJ"
                raise v.FieldError(
                    "cpf", f"is not a valid {kind} (check digits)", "invalid_document"
                )
            by_length = "person" if len(doc) == 11 else "business"
            party_type = v.opt_str(body, "partyType") or by_length
            if party_type not in ("person", "business"):
                raise v.FieldError("partyType", 'must be "person" or "business"')
            if party_type != by_length:
                raise v.FieldError(
                    "partyType",
                    "person needs an 11-digit CPF and business a 14-digit CNPJ",
                    "party_type_mismatch",
                )
            name = v.req_str(body, "displayName", lo=2, hi=100)
            if not name.strip():
                raise v.FieldError("displayName", "must not be blank")
            country = v.opt_str(body, "countryCode") or "BR"
            if not v._COUNTRY.fullmatch(country):
                raise v.FieldError("countryCode", "must be an ISO 3166-1 alpha-2 code, e.g. BR")
            external_ref = v.opt_str(body, "externalRef", hi=255)
            email = v.opt_str(body, "email")
            if email is not None and not v.is_valid_email(email):
                raise v.FieldError("email", "must be a valid e-mail address")
            phone = v.opt_str(body, "phone")
            if phone is not None and not v.is_valid_phone(phone):
                raise v.FieldError("phone", "must be a phone number with 8 to 15 digits")
        except v.FieldError as err:
            raise _field_error(err) from None
        if doc in store.party_by_doc:
            raise _HttpError(409, "party_exists", "a party already exists for this document")
        party = self._add_party(
            store,
            doc=doc,
            party_type=party_type,
            display_name=name,
            country=country,
            external_ref=external_ref,
            email=email,
            phone=phone,
        )
        return self._render_party(party)

    def _add_party(self, store: _Store, **kw: Any) -> _Party:
        now = self.clock.now_ms()
        party = _Party(
            idx=len(store.parties),
            instance_id=store.inst.instance_id,
            id=str(uuid.UUID(int=self._rng.getrandbits(128), version=4)),
            status="pending",
            wallet=None,
            created_ms=now,
            updated_ms=now,
            **kw,
        )
        store.parties.append(party)
        store.party_by_id[party.id] = party
        store.party_by_doc[party.doc] = party
        # PIX keys for offramp resolution: document, e-mail, phone (first party wins)
        store.party_by_pix_key.setdefault(party.doc, party)
        if party.email:
            store.party_by_pix_key.setdefault(party.email.lower(), party)
        if party.phone:
            store.party_by_pix_key.setdefault("tel:" + _digits(party.phone), party)
        return party

    def _bind_wallet(self, store: _Store, party: _Party, body: dict[str, Any]) -> dict[str, Any]:
        try:
            extra = sorted(set(body) - {"solanaWallet"})
            if extra:
                raise v.FieldError(extra[0], "is not allowed; the body has exactly solanaWallet")
            wallet = v.req_str(body, "solanaWallet")
            if not v.is_valid_solana_address(wallet):
                raise v.FieldError(
                    "solanaWallet",
                    "must be a Solana address (base58 decoding to 32 bytes)",
                    "invalid_address",
                )
        except v.FieldError as err:
            raise _field_error(err) from None
        owner = store.party_by_wallet.get(wallet)
        if owner is not None and owner is not party:
            raise _HttpError(400, "wallet_already_bound", "solanaWallet is bound to another party")
        self.bind_wallet_direct(store, party, wallet)
        return self._render_party(party)

    def bind_wallet_direct(self, store: _Store, party: _Party, wallet: str) -> None:
        """Bind without HTTP (used by bulk_load/drift parties)."""
        if party.wallet and store.party_by_wallet.get(party.wallet) is party:
            del store.party_by_wallet[party.wallet]
        party.wallet = wallet
        party.refresh()
        party.updated_ms = self.clock.now_ms()
        store.party_by_wallet[wallet] = party
        store.cache.clear()  # the intents' `party` subset shows the current wallet

    def _render_party(self, p: _Party) -> dict[str, Any]:
        return {
            "id": p.id,
            "instanceId": p.instance_id,
            "partyType": p.party_type,
            "countryCode": p.country,
            "externalRef": p.external_ref,
            "status": p.status,
            "profile": {
                "displayName": p.display_name,
                "documentType": "cpf" if len(p.doc) == 11 else "cnpj",
                "documentMasked": p.masked,
                "solanaWallet": p.wallet,
            },
            "createdAt": format_ts(p.created_ms),
            "updatedAt": format_ts(p.updated_ms),
        }

    # ------------------------------------------------------------------ intents: create
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
    def _life(self, itype: str) -> Lifecycle:
        return self.config.onramp if itype == "onramp" else self.config.offramp

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
        chars = []
        for _ in range(7):
            chars.append(_CROCKFORD[n & 31])
            n >>= 5
        return f"{self.config.reference_prefix} {''.join(reversed(chars))}"

    def _render(self, store: _Store, seq: int) -> dict[str, Any]:
        """The intent object (a fresh dict each call)."""
        return json.loads(self._render_json(store, seq))

    def _render_json(self, store: _Store, seq: int) -> str:
        """The intent object as JSON text, cached until the intent changes.

        Built from a template rather than dict + json.dumps: list pages are the hot path
        (1M-intent walks), and every caller-supplied string goes through `_js` (json.dumps).
        Key order and values are those of spec 2.2; tests compare with a dict-built oracle.
        """
        cached = store.cache.get(seq)
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
            f'"expiresAt":{_js(format_ts(expires)) if expires >= 0 else "null"},'
            f'"createdAt":"{created_ts}",'
            f'"updatedAt":"{created_ts if updated == created else format_ts(updated)}",'
            f'"pixInfo":{pix},"depositInstructions":null,"party":{party.subset_json},'
            f'"chainId":"solana"}}'
        )
        if len(store.cache) >= _RENDER_CACHE_MAX:
            store.cache.clear()
        store.cache[seq] = out
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
        page: list[str] = []
        if idx is not None and offset < total:
            hi = total - offset
            lo = max(0, hi - limit)
            page = [self._render_json(store, seq) for seq in reversed(idx[lo:hi])]
        text = f'{{"intents":[{",".join(page)}],"total":{total},"limit":{limit},"offset":{offset}}}'
        return _Raw(text.encode())

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
        store.cache.pop(seq, None)
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

    def _find(self, intent_id: str) -> tuple[_Store, int]:
        for store in self._stores:
            seq = store.decode(intent_id)
            if seq is not None:
                return store, seq
        raise KeyError(f"no intent {intent_id}")

    def transition(
        self, intent_id: str, to_status: str, *, reason: str | None = None, force: bool = False
    ) -> dict[str, Any]:
        """Move an intent to `to_status` now; the lifecycle graph is checked unless `force`.

        Raises KeyError for an unknown id, ValueError for an unknown status or a move the graph
        does not allow. Returns the intent object after the move.
        """
        if to_status not in STATUS_CODE:
            raise ValueError(f"unknown status {to_status!r}")
        with self._lock:
            store, seq = self._find(intent_id)
            itype = INTENT_TYPES[store.itype[seq]]
            current = STATUSES[store.status[seq]]
            if not force and not self._life(itype).can(current, to_status):
                raise ValueError(
                    f"{itype} cannot go from {current} to {to_status} "
                    f"(allowed: {', '.join(sorted(self._life(itype).allowed(current))) or 'none'})"
                )
            self._set_status(store, seq, to_status, reason, self.clock.now_ms())
            return self._render(store, seq)

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

    # ------------------------------------------------------------------ control helpers
    def _store(self, instance_id: str | None) -> _Store:
        if instance_id is None:
            return self._stores[0]
        try:
            return self._by_instance[instance_id]
        except KeyError:
            raise KeyError(f"no instance {instance_id}") from None

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


# ---------------------------------------------------------------------- helpers


def _js(value: Any) -> str:
    """One JSON value as text (strings escaped; None → null)."""
    return json.dumps(value)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def _random_cpf(rng: random.Random, store: _Store) -> str:
    while True:
        base = f"{rng.randrange(10**9):09d}"
        doc = base + v.cpf_check_digits(base)
        if v.is_valid_cpf(doc) and doc not in store.party_by_doc:
            return doc


def _random_wallet(rng: random.Random) -> str:
    return base58.b58encode(rng.randbytes(32)).decode()


def _wallet_field(body: dict[str, Any]) -> str:
    wallet = v.req_str(body, "destinationWallet", lo=1, hi=255)
    if not v.is_valid_solana_address(wallet):
        raise v.FieldError(
            "destinationWallet",
            "must be a Solana address (base58 decoding to 32 bytes)",
            "invalid_address",
        )
    return wallet


def _int_param(
    query: Mapping[str, str],
    name: str,
    default: int,
    lo: int,
    hi: int | None,
    errors: list[v.FieldError],
) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    text = raw.strip()
    if not (text.isascii() and text.lstrip("-").isdigit()):
        errors.append(v.FieldError(name, "must be an integer"))
        return default
    # cap the digits before int(): a huge string must not cost quadratic time
    value = int(text) if len(text) <= 18 else 10**18
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        errors.append(v.FieldError(name, f"must be {bound}"))
        return default
    return value


def _json_body(hdrs: Mapping[str, str], raw: bytes) -> dict[str, Any]:
    ctype = hdrs.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise _HttpError(400, "unsupported_content_type", "Content-Type must be application/json")
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise _HttpError(400, "invalid_json", "the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise _HttpError(400, "invalid_json", "the request body must be a JSON object")
    return body


def _error_body(shape: str, exc: _HttpError) -> dict[str, Any]:
    if shape == "parties":
        return {"error": exc.message, "code": exc.code}
    out: dict[str, Any] = {
        "code": exc.code,
        "message": exc.message,
        "validationErrors": [{"field": e.field, "message": e.message} for e in exc.errors],
    }
    if exc.details:
        out["details"] = exc.details
    return out
