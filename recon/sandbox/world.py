"""A simulated world for the sandbox: weeks of parties and intents, the bank behind them.

The world drives the emulator *through the public v2 API* (`recon.api.Client` over the
in-process `EmulatorTransport`) for everything a client does — create parties, bind
wallets, create onramp/offramp intents with idempotency keys and client references,
approve burns with valid simulated signatures — and through the emulator's control surface
(`transition`, `tick`, the clock) for what the service does on its own. Every movement of
money lands in a `Bank`; every planted fault lands once in the `GroundTruth`.

Two phases keep it deterministic and checkable:

1. **plan** — with `random.Random(seed)` only: when each intent is created, by whom, for
   how much, and its fate (paid, unpaid, canceled, failed and refunded, ... or a planted
   fault). Faults are assigned to distinct intents inside a planting window far enough from
   the world's end that every grace period has run out;
2. **run** — replay the plan in time order against the emulator, moving its clock.

Everything not planted reconciles clean at the world's end with the default grace periods
(onramp 30 min, offramp payout 2 h, refunds 24 h): payers pay inside the window, the service
moves status within seconds, payouts happen within minutes, refunds are paid.
"""

from __future__ import annotations

import functools
import hashlib
import heapq
import json
import math
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from recon.errors import ApiStatusError
from recon.sandbox.bank import PSPS, Account, Bank, Movement
from recon.sandbox.exports._common import BRT
from recon.sandbox.truth import GroundTruth

if TYPE_CHECKING:
    from recon.sandbox.emulator import Emulator

__all__ = [
    "DEFAULT_END",
    "FAULTS",
    "FaultRates",
    "World",
    "WorldConfig",
    "WorldResult",
]

#: Fixed end of the simulated history (not the real clock), so a seed fixes everything.
DEFAULT_END = datetime(2026, 11, 1, 12, 0, tzinfo=BRT).astimezone(UTC)

_S = timedelta(seconds=1)
_MIN = timedelta(minutes=1)


@dataclass(frozen=True)
class FaultRates:
    """Share of eligible intents (or lines per day) that get each planted fault.

    Onramp faults are shares of onramps, offramp faults shares of offramps, created inside
    the planting window; `credits_without_intent` is a count per day. With `min_each` every
    fault is planted at least that many times (small worlds still show every kind).
    """

    underpaid: float = 0.004
    overpaid: float = 0.003
    duplicate_credit: float = 0.003
    paid_after_expiry: float = 0.003
    missing_credit: float = 0.003
    omit_reference: float = 0.01
    ambiguous_twins: float = 0.002
    missing_refund: float = 0.002
    refund_amount_mismatch: float = 0.002
    status_regression: float = 0.003
    missing_payout: float = 0.005
    duplicate_payout: float = 0.004
    wrong_amount_payout: float = 0.004
    payout_for_failed: float = 0.003
    stuck_payout: float = 0.004
    credits_without_intent: float = 0.5
    min_each: int = 1


#: fault -> (intent type it is planted on, break category it must produce, or None)
FAULTS: dict[str, tuple[str, str | None]] = {
    "underpaid": ("onramp", "onramp_underpaid"),
    "overpaid": ("onramp", "onramp_overpaid"),
    "duplicate_credit": ("onramp", "onramp_duplicate_credit"),
    "paid_after_expiry": ("onramp", "onramp_credit_after_expiry"),
    "missing_credit": ("onramp", "onramp_missing_credit"),
    "omit_reference": ("onramp", None),
    "ambiguous_twins": ("onramp", "ambiguous_match"),
    "missing_refund": ("onramp", "refund_missing"),
    "refund_amount_mismatch": ("onramp", "refund_amount_mismatch"),
    "status_regression": ("onramp", "status_regression"),
    "missing_payout": ("offramp", "offramp_missing_payout"),
    "duplicate_payout": ("offramp", "offramp_duplicate_payout"),
    "wrong_amount_payout": ("offramp", "offramp_payout_amount_mismatch"),
    "payout_for_failed": ("offramp", "offramp_payout_for_failed_intent"),
    "stuck_payout": ("offramp", "offramp_stuck_paying_out"),
    "credits_without_intent": ("none", "unmatched_credit"),
}


@dataclass(frozen=True)
class WorldConfig:
    """How big the world is, how it behaves, and which faults it plants.

    Rates are probabilities; durations are seconds unless typed as timedelta.
    """

    seed: int = 7
    days: int = 14
    intents_per_day: int = 200
    end: datetime = DEFAULT_END
    # population
    parties_per_100_intents: float = 7.0
    share_business: float = 0.12
    share_with_wallet: float = 0.85
    share_offramp: float = 0.3
    # lifecycles
    onramp_ttl: timedelta = timedelta(minutes=60)
    offramp_ttl: timedelta = timedelta(minutes=60)
    compliance_threshold_cents: int = 300_000
    compliance_hold: tuple[float, float] = (120.0, 1200.0)
    compliance_reject: float = 0.1
    share_paid: float = 0.78
    share_canceled: float = 0.03
    pay_median_s: float = 150.0
    pay_tail: float = 0.08  # of payers: pay late in the window
    share_txid: float = 0.6  # payers of dynamic charges (txid = intent id without hyphens)
    share_reference_is_client_ref: float = 0.25
    onramp_fail_refund: float = 0.02
    share_approved: float = 0.85
    approve_median_s: float = 90.0
    offramp_fail: float = 0.02
    payout_median_s: float = 60.0
    payout_max_s: float = 2400.0
    fee_per_payout_cents: int = 9
    # seasonality: weekday factors Monday..Sunday and hourly weights (local time)
    weekday_factors: tuple[float, ...] = (1.0, 1.05, 1.05, 1.1, 1.2, 0.8, 0.6)
    hour_weights: tuple[float, ...] = (
        0.2, 0.1, 0.05, 0.05, 0.05, 0.1, 0.3, 0.6, 0.9, 1.1, 1.3, 1.4,
        1.4, 1.3, 1.2, 1.2, 1.2, 1.3, 1.4, 1.5, 1.5, 1.3, 0.9, 0.5,
    )  # fmt: skip
    faults: FaultRates = field(default_factory=FaultRates)

    def __post_init__(self) -> None:
        if self.days < 1 or self.intents_per_day < 1:
            raise ValueError("days and intents_per_day must be at least 1")
        if self.end.tzinfo is None:
            raise ValueError("end must be timezone-aware")
        if len(self.weekday_factors) != 7 or len(self.hour_weights) != 24:
            raise ValueError("weekday_factors needs 7 values and hour_weights 24")

    @property
    def start(self) -> datetime:
        """Beginning of the simulated history."""
        return self.end.astimezone(UTC) - timedelta(days=self.days)

    def with_overrides(self, **overrides: Any) -> WorldConfig:
        """A copy with some fields (or FaultRates fields) replaced; None values are ignored."""
        names = {f.name for f in fields(self)}
        rate_names = {f.name for f in fields(FaultRates)}
        top = {k: v for k, v in overrides.items() if v is not None and k in names}
        rates = {k: v for k, v in overrides.items() if v is not None and k in rate_names}
        unknown = set(overrides) - names - rate_names
        if unknown:
            raise TypeError(f"unknown world settings: {', '.join(sorted(unknown))}")
        out = replace(self, **top)
        return replace(out, faults=replace(out.faults, **rates)) if rates else out


@dataclass
class _Party:
    idx: int
    name: str
    doc: str
    party_type: str
    email: str
    phone: str
    wallet: str | None
    ispb: str
    created_at: datetime
    id: str | None = None


@dataclass
class _Plan:
    idx: int
    itype: str
    created_at: datetime
    party: _Party
    amount: int
    fate: str  # paid | unpaid | canceled | refund | (offramp) paid | unapproved | failed
    fault: str | None = None
    client_reference: str | None = None
    twin_of: int | None = None
    # filled in while running
    intent_id: str | None = None
    description: str | None = None
    expires_at: datetime | None = None
    credit: Movement | None = None
    pix_key: str | None = None


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


# -- names and documents ----------------------------------------------------------------------
_FIRST = (
    "Ana", "João", "Maria", "José", "Antônio", "Francisca", "Carlos", "Paulo", "Lúcia",
    "Pedro", "Luíza", "Marcos", "Fernanda", "Rafael", "Juliana", "Thiago", "Camila", "Bruno",
    "Letícia", "Gabriel", "Beatriz", "Lucas", "Sônia", "André", "Patrícia", "Márcio",
    "Conceição", "Vinícius", "Débora", "Otávio", "Cecília", "Raimundo", "Luana", "Caio",
)  # fmt: skip
_LAST = (
    "Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira",
    "Lima", "Gomes", "Costa", "Ribeiro", "Martins", "Carvalho", "Araújo", "Melo", "Barbosa",
    "Cardoso", "Rocha", "Dias", "Nascimento", "Andrade", "Moreira", "Nunes", "Marques",
    "Machado", "Mendes", "Freitas", "Conceição", "Galvão", "Assunção", "Brandão",
)  # fmt: skip
_BIZ = (
    "Padaria", "Mercado", "Oficina", "Comércio", "Distribuidora", "Farmácia", "Papelaria",
    "Açougue", "Transportes", "Tecnologia", "Confecções", "Restaurante", "Auto Peças",
)  # fmt: skip
_BIZ_NAME = (
    "Estrela", "Boa Vista", "São Jorge", "Horizonte", "Primavera", "Ipê", "Aurora",
    "Bandeirantes", "Três Irmãos", "Paraíso", "Pioneira", "Central", "Atlântica",
)  # fmt: skip
_BIZ_SUFFIX = ("Ltda", "ME", "EIRELI", "S.A.", "Ltda ME")
_STRANGER_TEXT = (None, None, "aluguel", "presente", "acerto", "obrigado", "referente nf 1182")
_B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"


def _cpf(rng: random.Random) -> str:
    base = [rng.randrange(10) for _ in range(9)]
    for n in (10, 11):
        s = sum(d * w for d, w in zip(base, range(n, 1, -1), strict=False))
        base.append(0 if s % 11 < 2 else 11 - s % 11)
    return "".join(map(str, base))


def _cnpj(rng: random.Random) -> str:
    base = [rng.randrange(10) for _ in range(8)] + [0, 0, 0, 1]
    for weights in ((5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2), (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)):
        s = sum(d * w for d, w in zip(base, weights, strict=False))
        base.append(0 if s % 11 < 2 else 11 - s % 11)
    return "".join(map(str, base))


def _wallet(rng: random.Random) -> str:
    # a base58 text of 32 random bytes, like an ed25519 public key
    n = rng.getrandbits(256) | (1 << 255)
    out = []
    while n:
        n, r = divmod(n, 58)
        out.append(_B58[r])
    return "".join(reversed(out))


def _slug(text: str) -> str:
    import unicodedata

    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return ".".join(plain.lower().replace(".", "").split())


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ms(at: datetime) -> datetime:
    return at.replace(microsecond=(at.microsecond // 1000) * 1000)


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


# -- the world --------------------------------------------------------------------------------
class World:
    """Plans and runs one simulated world; see the module docstring."""

    def __init__(self, config: WorldConfig | None = None):
        self.config = config or WorldConfig()
        self.rng = random.Random(self.config.seed)
        self.bank_rng = random.Random(f"bank|{self.config.seed}")
        self.truth = GroundTruth()
        self.bank = Bank(period_start=self.config.start, period_end=self.config.end.astimezone(UTC))
        self.bank.seed = self.config.seed
        self.bank.truth = self.truth
        self.parties: list[_Party] = []
        self.plans: list[_Plan] = []
        self.strangers: list[tuple[datetime, int, str, str, str, str | None]] = []
        self.late_events: list[tuple[str, str]] = []
        self._late_applied = False
        self._by_idx: dict[int, _Plan] = {}
        self._docs: set[str] = set()
        self._amounts: set[int] = set()
        self._events: list[tuple[datetime, int, Callable[[], None]]] = []
        self._seq = 0

    # ---------------------------------------------------------------- plan
    def _new_party(self, at: datetime, wallet: bool) -> _Party:
        rng = self.rng
        business = rng.random() < self.config.share_business
        while True:
            doc = _cnpj(rng) if business else _cpf(rng)
            if doc not in self._docs:
                self._docs.add(doc)
                break
        if business:
            name = f"{rng.choice(_BIZ)} {rng.choice(_BIZ_NAME)} {rng.choice(_BIZ_SUFFIX)}"
        else:
            name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)} {rng.choice(_LAST)}"
        idx = len(self.parties)
        party = _Party(
            idx=idx,
            name=name,
            doc=doc,
            party_type="business" if business else "person",
            email=f"{_slug(name)}.{idx}@example.com.br",
            phone=f"+55 11 9{rng.randrange(10**7, 10**8)}",
            wallet=_wallet(rng) if wallet else None,
            ispb=rng.choice(PSPS)[0],
            created_at=at,
        )
        self.parties.append(party)
        return party

    def _creation_times(self) -> list[datetime]:
        cfg, rng = self.config, self.rng
        total_w = sum(cfg.hour_weights)
        out: list[datetime] = []
        hour = cfg.start.replace(minute=0, second=0, microsecond=0)
        end = cfg.end.astimezone(UTC)
        while hour < end:
            lt = hour.astimezone(BRT)
            mean = (
                cfg.intents_per_day
                * cfg.weekday_factors[lt.weekday()]
                * cfg.hour_weights[lt.hour]
                / total_w
            )
            n = int(mean) + (1 if rng.random() < mean - int(mean) else 0)
            for _ in range(n):
                at = _ms(hour + timedelta(seconds=rng.uniform(0, 3600)))
                if cfg.start <= at < end - 5 * _MIN:
                    out.append(at)
            hour += timedelta(hours=1)
        out.sort()
        return out

    def _amount(self, rng: random.Random) -> int:
        if rng.random() < 0.35:
            return rng.choice((50, 100, 150, 200, 250, 300, 500, 800, 1000, 1500, 2000)) * 100
        value = math.exp(rng.gauss(math.log(350), 1.0))
        return max(1_000, min(2_000_000, int(value * 100)))

    def _unique_amount(self, rng: random.Random, lo: int = 2_000, hi: int = 250_000) -> int:
        # amounts no other intent or line uses, so heuristic matching has one candidate
        while True:
            cents = rng.randrange(lo, hi)
            if cents % 100 and cents not in self._amounts:
                self._amounts.add(cents)
                return cents

    def plan(self) -> None:
        """Decide every party, intent and fate (no emulator involved)."""
        cfg, rng = self.config, self.rng
        times = self._creation_times()
        n_parties = max(4, round(len(times) * cfg.parties_per_100_intents / 100))
        # the population: most with wallets (only they transact), weighted by activity
        for _ in range(n_parties):
            self._new_party(cfg.start, rng.random() < cfg.share_with_wallet)
        active = [p for p in self.parties if p.wallet]
        if not active:
            active = [self.parties[0]]
            active[0].wallet = _wallet(rng)
        cum: list[float] = []
        total = 0.0
        for i in range(len(active)):
            total += 1.0 / (i + 1) ** 0.6
            cum.append(total)
        for i, at in enumerate(times):
            itype = "offramp" if rng.random() < cfg.share_offramp else "onramp"
            party = rng.choices(active, cum_weights=cum)[0]
            amount = self._amount(rng)
            self._amounts.add(amount)
            if itype == "onramp":
                r = rng.random()
                fate = (
                    "paid"
                    if r < cfg.share_paid
                    else "canceled"
                    if r < cfg.share_paid + cfg.share_canceled
                    else "unpaid"
                )
                if fate == "paid" and rng.random() < cfg.onramp_fail_refund:
                    fate = "refund"
            else:
                r = rng.random()
                fate = "unapproved" if r > cfg.share_approved else "paid"
                if fate == "paid" and rng.random() < cfg.offramp_fail:
                    fate = "failed"
            ref_prefix = "ORD" if itype == "onramp" else "OFF"
            client_ref = (
                f"{ref_prefix}-{i + 1:07d}" if itype == "offramp" or rng.random() < 0.9 else None
            )
            self.plans.append(_Plan(i, itype, at, party, amount, fate, client_reference=client_ref))
        # first appearance of a party = its onboarding (a few minutes before its first intent)
        first: dict[int, datetime] = {}
        for p in self.plans:
            first.setdefault(p.party.idx, p.created_at)
        for party in self.parties:
            seen = first.get(party.idx)
            if seen is None:  # never transacts: onboarded at some point
                at = cfg.start + timedelta(seconds=rng.uniform(0, cfg.days * 86_400 - 600))
            else:
                at = seen - timedelta(seconds=rng.uniform(60, 1800))
            party.created_at = _ms(max(cfg.start - timedelta(days=30), at))
        self._plant()

    def _plant(self) -> None:
        cfg, rng, rates = self.config, self.rng, self.config.faults
        end = cfg.end.astimezone(UTC)
        lo, hi = cfg.start + timedelta(hours=2), end - timedelta(hours=36)

        def eligible(itype: str, fate: str) -> list[_Plan]:
            return [
                p
                for p in self.plans
                if p.itype == itype
                and p.fault is None
                and p.fate == fate
                and lo <= p.created_at < hi
                and p.amount < cfg.compliance_threshold_cents  # no compliance hold
            ]

        def count(rate: float, pool: int) -> int:
            return min(pool, max(rates.min_each, round(rate * pool)))

        on_window = sum(1 for p in self.plans if p.itype == "onramp" and lo <= p.created_at < hi)
        off_window = sum(1 for p in self.plans if p.itype == "offramp" and lo <= p.created_at < hi)
        plan_faults = [
            # (fault, fate it needs, rate, pool size it is a share of)
            ("underpaid", "paid", rates.underpaid, on_window),
            ("overpaid", "paid", rates.overpaid, on_window),
            ("duplicate_credit", "paid", rates.duplicate_credit, on_window),
            ("paid_after_expiry", "unpaid", rates.paid_after_expiry, on_window),
            ("missing_credit", "paid", rates.missing_credit, on_window),
            ("omit_reference", "paid", rates.omit_reference, on_window),
            ("missing_refund", "refund", rates.missing_refund, on_window),
            ("refund_amount_mismatch", "refund", rates.refund_amount_mismatch, on_window),
            ("status_regression", "paid", rates.status_regression, on_window),
            ("ambiguous_twins", "paid", rates.ambiguous_twins, on_window),
            ("missing_payout", "paid", rates.missing_payout, off_window),
            ("duplicate_payout", "paid", rates.duplicate_payout, off_window),
            ("wrong_amount_payout", "paid", rates.wrong_amount_payout, off_window),
            ("payout_for_failed", "failed", rates.payout_for_failed, off_window),
            ("stuck_payout", "paid", rates.stuck_payout, off_window),
        ]
        for fault, fate, rate, pool in plan_faults:
            itype = FAULTS[fault][0]
            wanted = count(rate, pool)
            candidates = eligible(itype, fate)
            if len(candidates) < wanted and fate != "paid":
                # rare fates (refund, failed, unpaid): convert ordinary paid intents
                extra = eligible(itype, "paid")
                rng.shuffle(extra)
                for p in extra[: wanted - len(candidates)]:
                    p.fate = fate
            candidates = eligible(itype, fate)
            chosen = rng.sample(candidates, min(len(candidates), wanted))
            for p in chosen:
                p.fault = fault
                if fault in ("omit_reference", "missing_credit", "ambiguous_twins"):
                    # heuristic-sensitive: an amount nobody else uses
                    p.amount = self._unique_amount(rng)
                if fault == "ambiguous_twins":
                    twin = _Plan(
                        idx=len(self.plans),
                        itype="onramp",
                        created_at=_ms(p.created_at + timedelta(seconds=rng.uniform(60, 600))),
                        party=p.party,
                        amount=p.amount,
                        fate="paid",
                        fault="ambiguous_twins",
                        client_reference=f"ORD-{len(self.plans) + 1:07d}",
                        twin_of=p.idx,
                    )
                    self.plans.append(twin)
        # credits nobody can explain: odd amounts no intent has, from strangers
        n = max(rates.min_each, round(rates.credits_without_intent * cfg.days))
        for _ in range(n):
            at = _ms(lo + timedelta(seconds=rng.uniform(0, max(60.0, (hi - lo).total_seconds()))))
            name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
            self.strangers.append(
                (
                    at,
                    self._unique_amount(rng),
                    name,
                    _cpf(rng),
                    rng.choice(PSPS)[0],
                    rng.choice(_STRANGER_TEXT),
                )
            )
        self.plans.sort(key=lambda p: (p.created_at, p.idx))
        self._by_idx = {p.idx: p for p in self.plans}  # twins refer to each other by idx

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
        self.emulator.transition(plan.intent_id, status, reason=reason, force=skip)

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
        if plan.fault in ("omit_reference", "ambiguous_twins"):
            return None, None
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
        return self.bank.receive_pix(
            self.bank_rng,
            at=self.emulator.clock.now(),
            amount_cents=amount,
            payer_name=plan.party.name,
            payer_document=plan.party.doc,
            payer_ispb=plan.party.ispb,
            txid=txid,
            info_pagador=info,
            intent_id=plan.intent_id,
        )

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
        # the service sees the money within seconds and moves the intent along
        self._later(plan, rng.uniform(5, 30), "fiat_received", lambda: self._after_fiat(plan))

    def _after_fiat(self, plan: _Plan) -> None:
        rng = self.rng
        if plan.fate == "refund":
            self._later(plan, rng.uniform(60, 600), "failed", lambda: self._refund(plan))
            return

        def regression() -> None:
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
            self.bank_rng, at=at, amount_cents=amount, payer_name=name, payer_document=doc,
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
        debit = self.bank.send_pix(
            self.bank_rng,
            at=self.emulator.clock.now(),
            amount_cents=amount,
            payee_name=party.name,
            payee_document=party.doc,
            payee_key=key,
            payee_ispb=party.ispb,
            remittance=plan.client_reference or plan.intent_id,
            intent_id=plan.intent_id,
        )
        if record is None:
            return
        category = FAULTS[record][1]
        assert category is not None
        self.truth.plant(record, category, intent_id=plan.intent_id,
                         end_to_end_id=debit.end_to_end_id, expected_cents=plan.amount,
                         actual_cents=amount)  # fmt: skip

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
