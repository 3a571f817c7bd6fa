"""The emulator's state: its configuration, one columnar store per instance, and ids.

Storage is columnar per instance (arrays of machine ints + a few sparse dicts), so a million
intents fit in ~100 MB; intent objects are rendered on demand, and list pages keep each
intent's JSON bytes until the intent changes (`RenderCache`, bounded in bytes). Lists are
served from per-(type, status) indexes kept sorted oldest→newest, so a page is an O(limit) slice
from the end and `total` is a `len`.

Intent ids are a keyed bijection of (instance, sequence number): the emulator can decode an id to
its row without a dictionary, and an id of another instance fails the key check (→ 404).
"""

from __future__ import annotations

import hashlib
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
from recon.sandbox.clock import DEFAULT_START, Clock, from_ms
from recon.sandbox.lifecycle import (
    OFFRAMP,
    ONRAMP,
    STATUS_CODE,
    Lifecycle,
)
from recon.sandbox.signatures import DEFAULT_SECRET

INTENT_TYPES = ("onramp", "offramp")
_TYPE_CODE = {"onramp": 0, "offramp": 1}
_ALL = -1
_M62 = (1 << 62) - 1
_MULT = 0x2545F4914F6CDD1D & _M62 | 1  # odd → invertible mod 2**62
_INV = pow(_MULT, -1, 1 << 62)
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
#: the two Crockford characters of each 10-bit number
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)
_REF_BITS = 35  # 7 base32 characters
_REF_MASK = (1 << _REF_BITS) - 1
_REF_MULT = 0x5DEECE66D | 1
#: what the rendered intents of one instance may hold (JSON bytes + ~120 bytes of bookkeeping
#: each: ~150,000 intents of ~740 bytes); past it the cache starts over
RENDER_CACHE_BYTES = 128 << 20
_ENTRY_OVERHEAD = 120
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


class RenderCache:
    """One instance's rendered intents: seq -> the intent's JSON bytes, as of its last change.

    Every change to what an intent renders drops it (`drop`: a status move; `clear`: a wallet
    bound, a bulk load). Bounded by `max_bytes` (the JSON plus an estimate of the dict's and
    the bytes object's own cost); when full it starts over, which under a scan of more
    intents than fit (a 1M walk) costs what no cache would, and keeps a walk that fits warm.
    """

    __slots__ = ("entries", "max_bytes", "size")

    def __init__(self, max_bytes: int = RENDER_CACHE_BYTES):
        self.entries: dict[int, bytes] = {}
        self.max_bytes = max_bytes
        self.size = 0

    def __len__(self) -> int:
        return len(self.entries)

    def put(self, seq: int, data: bytes) -> None:
        cost = len(data) + _ENTRY_OVERHEAD
        if self.size + cost > self.max_bytes:
            self.clear()
            if cost > self.max_bytes:
                return
        old = self.entries.get(seq)
        if old is not None:
            self.size -= len(old) + _ENTRY_OVERHEAD
        self.entries[seq] = data
        self.size += cost

    def drop(self, seq: int) -> None:
        old = self.entries.pop(seq, None)
        if old is not None:
            self.size -= len(old) + _ENTRY_OVERHEAD

    def clear(self) -> None:
        self.entries.clear()
        self.size = 0


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
        self.uuid_hi = array("Q")  # high 64 bits of each intent's id, filled as ids are made
        self.client_ref: list[str | None] = []
        self.dest: list[str | None] = []
        self.reason: dict[int, str] = {}
        self.signature: dict[int, str] = {}
        # (type code | -1, status code | -1) -> seqs sorted by (createdAt, id) ascending
        self.indexes: dict[tuple[int, int], array[int]] = {}
        self.idem: dict[str, _Idem] = {}
        self.cache = RenderCache()  # seq -> intent JSON bytes

    # --- ids ---------------------------------------------------------------------------
    def uuid_int(self, seq: int) -> int:
        lo = (1 << 63) | (((seq * _MULT) & _M62) ^ self.mask62)
        his = self.uuid_hi
        if seq < len(his):
            return (his[seq] << 64) | lo
        hi = int.from_bytes(
            hashlib.blake2b(seq.to_bytes(8, "big"), key=self.salt, digest_size=8).digest(), "big"
        )
        hi = (hi & ~0xF000) | 0x4000  # UUID version 4 nibble
        if seq == len(his) and seq < len(self.created):
            his.append(hi)  # the keyed hash is the costly half: kept, 8 bytes per intent
        return (hi << 64) | lo

    def intent_id(self, seq: int) -> str:
        h = f"{self.uuid_int(seq):032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def decode(self, intent_id: str) -> int | None:
        canon = v.parse_uuid(intent_id)
        if canon is None:
            return None
        n = int(canon.replace("-", ""), 16)
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


# ---------------------------------------------------------------------- helpers


_js_str = json.encoder.encode_basestring_ascii  # what json.dumps does with a str, in C


def _js(value: Any) -> str:
    """One JSON value as text (strings escaped; None → null), as `json.dumps` writes it."""
    # the common cases without json.dumps' encoder set-up (~0.4 µs a string, ~2 µs a null)
    if value is None:
        return "null"
    if type(value) is str:
        return _js_str(value)
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


class _State:
    """Everything an emulator holds; the layers above (parties, intents, routes, control)
    each add one part of the behaviour."""

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
        self._date: tuple[int | None, str] = (None, "")
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
        # every response carries one, and it changes once a second at most
        second = self.clock.now_ms() // 1000
        cached = self._date  # one tuple, replaced whole: safe across threads
        if cached[0] != second:
            cached = self._date = (second, format_datetime(from_ms(second * 1000), usegmt=True))
        return cached[1]

    def _store(self, instance_id: str | None) -> _Store:
        if instance_id is None:
            return self._stores[0]
        try:
            return self._by_instance[instance_id]
        except KeyError:
            raise KeyError(f"no instance {instance_id}") from None

    def _find(self, intent_id: str) -> tuple[_Store, int]:
        for store in self._stores:
            seq = store.decode(intent_id)
            if seq is not None:
                return store, seq
        raise KeyError(f"no intent {intent_id}")

    def _life(self, itype: str) -> Lifecycle:
        return self.config.onramp if itype == "onramp" else self.config.offramp
