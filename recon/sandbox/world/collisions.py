"""Collision worlds: the messy data a real statement brings, planted with its ground truth.

Off by default (the default world is unchanged, byte for byte); `PROFILES["collisions"]`
(`recon sandbox serve|export --profile collisions`) turns every knob on:

- **shared amounts**: most intents use a handful of round amounts (R$ 50, 100, 200, ...);
- **no reference**: a share of payments carries no txid and no text (credits) or no remittance
  text (payouts), matchable only by payer, amount and time window. Planted only where those
  attributes pin one intent (no other intent of a payer with the same masked document has the
  same amount within hours), and recorded as a clean ``attributes`` match;
- **names as banks write them**: people get particles (da, de, dos) and middle names; every
  statement line writes the name the way a bank does (upper case, no accents, truncated to a
  field width, middle names abbreviated to initials or dropped: ``JOAO P SILVA``);
- **keys as banks show them**: a payout's CPF key masked ``***.123.456-**``, a phone key with or
  without ``+55``, an e-mail in upper case;
- **partial refunds**: a refund paid in several devoluções of one credit (clean when they add up
  to what was received, each a ``refund`` match); the planted ``refund_amount_mismatch`` is split
  too (R$ 100 + R$ 90 of R$ 200: one break, named by the latest devolução);
- **returned payouts**: the payee's bank sends one of our payouts back (a devolução received)
  while the offramp stays completed: ``offramp_payout_returned``;
- **returned credits**: the payer's bank claims a paid onramp's credit back under MED (a
  fraud claim) days or weeks after the tokens were delivered, the last one in two parts:
  ``onramp_credit_returned`` (one break per credit);
- **third-party payers**: someone else (a spouse) pays a paid onramp by its QR code (txid),
  from another name and CPF: the credit stays matched by ``txid`` and is
  ``onramp_third_party_payer``;
- **look-alike keys**: two people whose e-mail keys differ only by a prefix
  (``souza4412@gmail.com`` and ``ana.souza4412@gmail.com``), compatible names, the same amount
  at the same time, payouts without a reference or a document: each payout must match its own
  offramp and never the other (two clean ``attributes`` matches);
- **net of fee**: a share of clean onramp credits reach the account net of the PSP's fee
  (0.99 %, at least one cent: ``PSP_FEE_PPM``), which the API Pix item states as Efí does
  (``valor`` the gross, ``gnExtras.tarifa`` the fee); each must match its onramp, its fee
  recorded, with no break.

Every collision decision draws from its own `random.Random(f"collisions|{seed}")`, so the rest
of the world is planned exactly as without them.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass, fields

__all__ = [
    "COLLISION_FAULTS",
    "PROFILES",
    "PSP_FEE_PPM",
    "Collisions",
    "bank_key",
    "bank_name",
    "psp_fee",
]

PSP_FEE_PPM = 9_900  # the sandbox PSP's fee: 0.99 % of a credit, rounded half up, min 1 cent


def psp_fee(amount_cents: int) -> int:
    """The sandbox PSP's fee on a credit of `amount_cents`."""
    return max(1, (amount_cents * PSP_FEE_PPM + 500_000) // 1_000_000)


@dataclass(frozen=True)
class Collisions:
    """The collision knobs (all off by default). Shares are of eligible intents."""

    shared_amounts: float = 0.0
    no_reference: float = 0.0
    bank_names: bool = False
    bank_keys: bool = False
    partial_refunds: float = 0.0
    returned_payouts: int = 0
    returned_credits: int = 0
    lookalike_keys: int = 0
    net_of_fee: float = 0.0
    third_party_payers: int = 0

    def __post_init__(self) -> None:
        for name in ("shared_amounts", "no_reference", "partial_refunds", "net_of_fee"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name} must be a share in [0, 1]")
        counts = ("returned_payouts", "returned_credits", "lookalike_keys", "third_party_payers")
        if min(getattr(self, name) for name in counts) < 0:
            raise ValueError(f"{', '.join(counts)} must be >= 0")

    @property
    def active(self) -> bool:
        """True when any knob is on."""
        return self != Collisions()

    @classmethod
    def field_names(cls) -> set[str]:
        """The knob names (accepted by `WorldConfig.with_overrides`)."""
        return {f.name for f in fields(cls)}


#: Named world profiles (`--profile NAME`).
PROFILES: dict[str, Collisions] = {
    "default": Collisions(),
    "collisions": Collisions(
        shared_amounts=0.8,
        no_reference=0.5,
        bank_names=True,
        bank_keys=True,
        partial_refunds=0.6,
        returned_payouts=2,
        returned_credits=2,
        lookalike_keys=1,
        net_of_fee=0.1,
        third_party_payers=2,
    ),
}

#: collision item -> (intent type, break category it must produce, or None for a clean match)
COLLISION_FAULTS: dict[str, tuple[str, str | None]] = {
    "no_reference": ("both", None),
    "partial_refund": ("onramp", None),
    "payout_returned": ("offramp", "offramp_payout_returned"),
    "credit_returned": ("onramp", "onramp_credit_returned"),
    "lookalike_keys": ("offramp", None),
    "net_of_fee": ("onramp", None),
    "third_party_payer": ("onramp", "onramp_third_party_payer"),
}

#: The round amounts most intents share in a collision world (cents).
SHARED_AMOUNTS = (5_000, 10_000, 15_000, 20_000, 25_000, 30_000, 50_000, 100_000)

MIDDLE = ("Pedro", "Paula", "Maria", "Luiz", "Cristina", "Henrique", "Aparecida", "Eduardo")
PARTICLES = ("da", "de", "dos", "do", "das")
#: Name field widths of bank layouts (characters).
WIDTHS = (20, 25, 30, 40)


def plain_upper(text: str) -> str:
    """Upper case without accents, the way bank files write names."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().upper()


def person_name(rng: random.Random, first: str, last: str, other_last: str) -> str:
    """A fuller name: a middle name, and often a particle before a last name."""
    middle = rng.choice(MIDDLE)
    if rng.random() < 0.6:
        return f"{first} {middle} {rng.choice(PARTICLES)} {last} {other_last}"
    return f"{first} {middle} {last}"


def bank_name(name: str, rng: random.Random, *, person: bool) -> str:
    """`name` the way one bank line writes it (upper, no accents, and often shortened).

    People: full, middle names as initials (``JOAO P DA S SANTOS``), middle names dropped
    (``JOAO SANTOS``), or cut at a field width, inside any word, particles included
    (``ANTONIA BITTENCOURT DOS REIS D``); businesses: full or cut.
    """
    words = plain_upper(name).split()
    style = rng.random()
    if person and len(words) > 2 and style < 0.3:
        middle = [w if w.lower() in PARTICLES else w[0] for w in words[1:-1]]
        return " ".join([words[0], *middle, words[-1]])
    if person and len(words) > 2 and style < 0.5:
        return f"{words[0]} {words[-1]}"
    full = " ".join(words)
    width = rng.choice(WIDTHS)
    if style < 0.8 or len(full) <= width:
        return full
    return full[:width].rstrip()


def _tokens(name: str) -> list[str]:
    words = "".join(ch if ch.isalnum() else " " for ch in plain_upper(name)).split()
    return [w for w in words if w.lower() not in (*PARTICLES, "e")]


def names_could_blur(a: str, b: str) -> bool:
    """Could some bank-written form of `a` pass for `b` (or the reverse)? Conservative.

    True when the first and last names agree (initials and dropped middle names blur the
    rest) or the names start alike (a cut at a field width blurs the end).
    """
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb:
        return True
    if ta[0] == tb[0] and ta[-1] == tb[-1]:
        return True
    return " ".join(ta)[:12] == " ".join(tb)[:12]


def bank_key(key: str, rng: random.Random) -> str:
    """A PIX key the way a bank statement shows the key paid."""
    digits = "".join(c for c in key if c.isdigit())
    if "@" in key:
        return key.upper() if rng.random() < 0.3 else key
    if key.startswith("+"):  # a phone: E.164 with or without +55
        return f"+{digits}" if rng.random() < 0.5 else digits[2:]
    if len(digits) == 11:  # a CPF, masked as BACEN shows it
        return f"***.{digits[3:6]}.{digits[6:9]}-**"
    return key
