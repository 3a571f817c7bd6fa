"""Phase 1, the plan: the world's settings, its population, and every intent's fate.

Only `random.Random(seed)` is involved (no emulator): when each intent is created, by whom, for
how much, its fate, and which intents carry a planted fault.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from recon.sandbox.bank import PSPS, Bank, Movement
from recon.sandbox.exports._common import BRT
from recon.sandbox.truth import GroundTruth

if TYPE_CHECKING:
    pass

from recon.sandbox.world.collisions import (
    PROFILES,
    SHARED_AMOUNTS,
    Collisions,
    names_could_blur,
    person_name,
)
from recon.sandbox.world.faults import FAULTS, FaultRates

#: Fixed end of the simulated history (not the real clock), so a seed fixes everything.
DEFAULT_END = datetime(2026, 11, 1, 12, 0, tzinfo=BRT).astimezone(UTC)

_S = timedelta(seconds=1)
_MIN = timedelta(minutes=1)


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
    #: collision-world knobs (recon.sandbox.world.collisions); all off by default
    collisions: Collisions = field(default_factory=Collisions)

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
        """A copy with some fields (or FaultRates / Collisions fields) replaced.

        None values are ignored; ``profile="collisions"`` starts from that named set of
        collision knobs (`PROFILES`), which single knobs then override.
        """
        names = {f.name for f in fields(self)}
        rate_names = {f.name for f in fields(FaultRates)}
        knob_names = Collisions.field_names()
        given = {k: v for k, v in overrides.items() if v is not None}
        profile = given.pop("profile", None)
        unknown = set(given) - names - rate_names - knob_names
        if unknown:
            raise TypeError(f"unknown world settings: {', '.join(sorted(unknown))}")
        if profile is not None and profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
        out = replace(self, **{k: v for k, v in given.items() if k in names})
        rates = {k: v for k, v in given.items() if k in rate_names}
        if rates:
            out = replace(out, faults=replace(out.faults, **rates))
        knobs = {k: v for k, v in given.items() if k in knob_names}
        if profile is not None or knobs:
            base = PROFILES[profile] if profile is not None else out.collisions
            out = replace(out, collisions=replace(base, **knobs))
        return out


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
    # collision worlds (recon.sandbox.world.collisions)
    no_reference: bool = False  # no txid/text on the credit, no remittance on the payout
    split_refund: bool = False  # the refund goes back in several devoluções
    returned: bool = False  # the payee's bank sends the payout back
    med_parts: int = 0  # the payer's bank claims the credit back (MED) in this many parts
    bare_payee: bool = False  # the payout line shows no payee document
    net_of_fee: bool = False  # the PSP takes its fee from the credit (PSP_FEE_PPM)
    payer: _Party | None = None  # someone else pays the onramp, by its txid


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


class _Planner:
    """The planning half of `World` (see `recon.sandbox.world.replay.World`)."""

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
        #: collision decisions only: the rest of the world draws as it would without them
        self.crng = random.Random(f"collisions|{self.config.seed}")

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
        if cfg.collisions.active:
            self._collide_before_faults()
        self._plant()
        if cfg.collisions.active:
            self._collide_after_faults()
            self.plans.sort(key=lambda p: (p.created_at, p.idx))
            self._by_idx = {p.idx: p for p in self.plans}

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

    # ---------------------------------------------------------------- collision worlds
    def _collide_before_faults(self) -> None:
        """Fuller names for people and shared amounts (faults then pick their own amounts)."""
        knobs, crng = self.config.collisions, self.crng
        if knobs.bank_names:
            for party in self.parties:
                if party.party_type == "person":
                    first, *_, last = party.name.split()
                    party.name = person_name(crng, first, last, crng.choice(_LAST))
        for plan in self.plans:
            if crng.random() < knobs.shared_amounts:
                plan.amount = crng.choice(SHARED_AMOUNTS)
                self._amounts.add(plan.amount)

    def _collide_after_faults(self) -> None:
        """Plant unreferenced payments, split refunds, returned payouts and credits, look-alike
        keys."""
        cfg, knobs, crng = self.config, self.config.collisions, self.crng
        lo = cfg.start + timedelta(hours=2)
        hi = cfg.end.astimezone(UTC) - timedelta(hours=36)

        def plain(p: _Plan, fate: str = "paid") -> bool:
            return (
                p.fault is None
                and p.fate == fate
                and lo <= p.created_at < hi
                and p.amount < cfg.compliance_threshold_cents
            )

        # who could be taken for whom: the same amount and a name a bank line could blur
        # (statements do not always carry the payer's document, so it cannot tell them apart)
        near: dict[tuple[str, int], list[_Plan]] = {}
        for p in self.plans:
            near.setdefault((p.itype, p.amount), []).append(p)

        def alone(p: _Plan) -> bool:
            # no other intent a bank line of this payer and amount could fit: onramp windows
            # close at expiry (hours), an offramp not completed stays open until as_of (any
            # earlier offramp counts)
            span = timedelta(hours=8)
            return all(
                o is p
                or o.created_at - p.created_at > span
                or (p.itype == "onramp" and p.created_at - o.created_at > span)
                or not names_could_blur(o.party.name, p.party.name)
                for o in near[(p.itype, p.amount)]
            )

        for p in self.plans:
            if plain(p) and crng.random() < knobs.no_reference and alone(p):
                p.no_reference = True
        if knobs.partial_refunds:
            refunds = [p for p in self.plans if p.itype == "onramp" and p.fate == "refund"
                       and lo <= p.created_at < hi]  # fmt: skip
            if not any(p.fault is None for p in refunds):  # at least one clean split refund
                paid = [p for p in self.plans if p.itype == "onramp" and plain(p)
                        and not p.no_reference]  # fmt: skip
                if paid:
                    extra = crng.choice(paid)
                    extra.fate = "refund"
                    extra.split_refund = True
            for p in refunds:  # the planted refund_amount_mismatch splits too
                p.split_refund = p.split_refund or crng.random() < knobs.partial_refunds
        offramps = [
            p for p in self.plans if p.itype == "offramp" and plain(p) and not p.no_reference
        ]
        for p in crng.sample(offramps, min(len(offramps), knobs.returned_payouts)):
            p.returned = True
        onramps = [p for p in self.plans if p.itype == "onramp" and plain(p)
                   and not p.no_reference and not p.split_refund]  # fmt: skip
        claimed = crng.sample(onramps, min(len(onramps), knobs.returned_credits))
        for n, p in enumerate(claimed):
            p.med_parts = 2 if n == len(claimed) - 1 else 1
        for n in range(knobs.lookalike_keys):
            self._lookalike_pair(crng, lo, hi, n)
        if knobs.net_of_fee:
            for p in onramps:
                if not p.med_parts and crng.random() < knobs.net_of_fee:
                    p.net_of_fee = True
        self._third_party_payers(crng, [p for p in onramps if not p.med_parts and not p.net_of_fee])

    def _third_party_payers(self, crng: random.Random, onramps: list[_Plan]) -> None:
        """Someone else (a spouse) pays a person's onramp by its QR code: another person of
        the world whose CPF differs where both masks show digits (the API's last four, the
        bank's middle six: digits 8 and 9)."""
        people = [o for o in self.parties if o.party_type == "person"]
        mine = [p for p in onramps if p.party.party_type == "person"]
        for p in crng.sample(mine, min(len(mine), self.config.collisions.third_party_payers)):
            others = [o for o in people if o.doc[7:9] != p.party.doc[7:9]]
            p.payer = crng.choice(others) if others else None

    def _lookalike_pair(self, crng: random.Random, lo: datetime, hi: datetime, n: int) -> None:
        """Two people whose e-mail keys differ by a prefix, paid the same amount at once."""
        handle = f"souza{crng.randrange(1000, 10_000)}"
        at = _ms(lo + timedelta(seconds=crng.uniform(0, max(60.0, (hi - lo).total_seconds()))))
        amount = self._unique_amount(crng)
        for name, email in (("Ana Souza", f"{handle}@gmail.com"),
                            ("Ana Maria Souza", f"ana.{handle}@gmail.com")):  # fmt: skip
            while True:
                doc = _cpf(crng)
                if doc not in self._docs:
                    self._docs.add(doc)
                    break
            party = _Party(
                idx=len(self.parties),
                name=name,
                doc=doc,
                party_type="person",
                email=email,
                phone=f"+55 21 9{crng.randrange(10**7, 10**8)}",
                wallet=_wallet(crng),
                ispb=crng.choice(PSPS)[0],
                created_at=at - timedelta(minutes=30),
            )
            self.parties.append(party)
            idx = len(self.plans)
            self.plans.append(
                _Plan(
                    idx,
                    "offramp",
                    at,
                    party,
                    amount,
                    "paid",
                    client_reference=f"OFF-L{n}{idx + 1:06d}",
                    pix_key=email,
                    no_reference=True,
                    bare_payee=True,
                )
            )
            at = _ms(at + timedelta(seconds=crng.uniform(30, 300)))
