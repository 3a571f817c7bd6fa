"""The bank account behind the sandbox world: every movement of money the world implies.

The world books PIX credits for paid onramps, PIX payouts for offramps, devoluções (PIX
refunds) and fees here; the exporters (`recon.sandbox.exports`) render this ledger as the
statements banks and PSPs deliver. Identifiers follow BACEN's rules:

- ``endToEndId``: ``E`` + 8-digit ISPB of the PSP that initiated the payment +
  ``yyyyMMddHHmm`` (UTC) + 11 alphanumerics (32 chars, matches
  ``^E[0-9]{8}[0-9]{12}[a-zA-Z0-9]{11}$``);
- ``rtrId`` of a devolução: the same shape with ``D``;
- ``txid`` of a dynamic charge: the intent id without hyphens (the txid convention of docs/contracts.md,
  32 chars, inside ``^[a-zA-Z0-9]{26,35}$``).

Money is integer cents (signed: credit > 0); times are aware UTC datetimes with second
precision. Randomness comes only from the `random.Random` the caller passes in, so the same
seed gives the same ledger.
"""

from __future__ import annotations

import csv
import io
import random
import string
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from recon.sandbox.exports.daily import DailyAccount
    from recon.sandbox.truth import GroundTruth

__all__ = [
    "PSPS",
    "Account",
    "Bank",
    "Movement",
    "MovementKind",
    "mask_document",
]

_ALNUM = string.ascii_letters + string.digits

# Kinds as in the statement_lines contract.
MovementKind = str
PIX_IN, PIX_OUT, PIX_REFUND_IN, PIX_REFUND_OUT, FEE = (
    "pix_in",
    "pix_out",
    "pix_refund_in",
    "pix_refund_out",
    "fee",
)
INTEREST, YIELD = "interest", "yield"
KINDS = (PIX_IN, PIX_OUT, PIX_REFUND_IN, PIX_REFUND_OUT, FEE, INTEREST, YIELD)


def _psps() -> tuple[tuple[str, str, str], ...]:
    text = (resources.files("recon.sandbox") / "psps.csv").read_text(encoding="utf-8")
    return tuple((r["ispb"], r["compe"], r["name"]) for r in csv.DictReader(io.StringIO(text)))


# (ISPB, bank code, short name) of real PSPs payers use (psps.csv, a reference table kept as
# data); the ISPB is the one in the e2e id.
PSPS: tuple[tuple[str, str, str], ...] = _psps()


def mask_document(digits: str) -> str:
    """Mask a CPF/CNPJ the way PSPs show a payer: ``***.456.789-**`` / ``**.345.678/0001-**``."""
    if len(digits) == 11:
        return f"***.{digits[3:6]}.{digits[6:9]}-**"
    if len(digits) == 14:
        return f"**.{digits[2:5]}.{digits[5:8]}/{digits[8:12]}-**"
    raise ValueError(f"not a CPF/CNPJ: {len(digits)} digits")


@dataclass(frozen=True)
class Account:
    """The service's account: where onramp PIX arrive and offramp payouts leave from."""

    ispb: str = "13140088"
    bank_code: str = "332"
    bank_name: str = "Banco Simulado S.A."
    branch: str = "0001"
    branch_digit: str = "9"
    number: str = "1234567"
    number_digit: str = "8"
    holder_name: str = "Recon Sandbox Servicos Digitais Ltda"
    holder_cnpj: str = "12345678000195"
    pix_key: str = "12345678000195"

    @property
    def label(self) -> str:
        """``agência/conta-dv`` as banks print it."""
        return f"{self.branch}/{self.number}-{self.number_digit}"


@dataclass(frozen=True)
class Refund:
    """A devolução of a received PIX, as BACEN's ``devolucoes`` item describes it."""

    id: str  # the id the receiving PSP gave the devolução request
    rtr_id: str
    amount_cents: int  # positive magnitude
    requested_at: datetime
    settled_at: datetime | None
    status: str  # EM_PROCESSAMENTO | DEVOLVIDO | NAO_REALIZADO
    nature: str = "ORIGINAL"
    reason: str = "Devolucao solicitada pelo recebedor"


@dataclass(frozen=True)
class Movement:
    """One booked movement of the account (one statement line in every format)."""

    id: str  # the bank's own transaction id (OFX FITID, CSV id_transacao, CNAB doc for fees)
    kind: MovementKind
    booked_at: datetime  # UTC, second precision
    amount_cents: int  # signed: credit > 0
    end_to_end_id: str | None = None  # for a devolução: its rtrId
    txid: str | None = None
    refund_of: str | None = None  # the original e2e, for devoluções
    counterparty_name: str | None = None
    counterparty_document: str | None = None  # digits (exports mask it)
    counterparty_key: str | None = None  # the PIX key money went to / came from
    counterparty_ispb: str | None = None
    info_pagador: str | None = None  # payer's free text (received PIX)
    remittance: str | None = None  # our free text on a payout (the client reference)
    description: str = ""  # the bank's own history text
    refund: Refund | None = None  # for pix_refund_out: the devolução record
    # a PSP's fee taken from a received PIX: amount_cents is what the account got, the payer
    # sent amount_cents + fee_cents (API Pix states it: Efí's gnExtras.tarifa)
    fee_cents: int | None = None
    intent_id: str | None = None  # which intent caused it (ground truth only; never exported)

    @property
    def direction(self) -> str:
        """``credit`` or ``debit``."""
        return "credit" if self.amount_cents > 0 else "debit"

    @property
    def document_masked(self) -> str | None:
        """The counterparty document masked as PSPs show it."""
        return mask_document(self.counterparty_document) if self.counterparty_document else None


@dataclass
class Bank:
    """The ledger: an account, its opening balance and its movements.

    `truth` is attached by the world: what reconciling this ledger against the API must find.
    """

    account: Account = field(default_factory=Account)
    opening_balance_cents: int = 50_000_000
    movements: list[Movement] = field(default_factory=list)
    truth: GroundTruth | None = None
    # The simulated period [start, end) the world covers (exports default to it).
    period_start: datetime | None = None
    period_end: datetime | None = None
    seed: int | None = None
    # the service's second account, sent as daily files (recon.sandbox.exports.daily), when planted
    daily: DailyAccount | None = None
    _seq: int = 0

    # -- ids --------------------------------------------------------------------------------
    @staticmethod
    def end_to_end_id(rng: random.Random, ispb: str, at: datetime, prefix: str = "E") -> str:
        """A BACEN end-to-end id (``E``) or return id (``D``) for a payment at `at`."""
        stamp = at.astimezone(UTC).strftime("%Y%m%d%H%M")
        tail = "".join(rng.choice(_ALNUM) for _ in range(11))
        return f"{prefix}{ispb}{stamp}{tail}"

    def _next_id(self, at: datetime) -> str:
        self._seq += 1
        return f"{at.astimezone(UTC):%Y%m%d}{self._seq:010d}"

    # -- booking ----------------------------------------------------------------------------
    def _book(self, kind: MovementKind, at: datetime, amount_cents: int, **fields: Any) -> Movement:
        """Append a movement of `kind` booked at `at` (signed cents) under the bank's next id."""
        movement = Movement(
            id=self._next_id(at), kind=kind, booked_at=at, amount_cents=amount_cents, **fields
        )
        self.movements.append(movement)
        return movement

    def receive_pix(
        self,
        rng: random.Random,
        *,
        at: datetime,
        amount_cents: int,
        payer_name: str,
        payer_document: str,
        payer_ispb: str,
        txid: str | None = None,
        info_pagador: str | None = None,
        intent_id: str | None = None,
        fee_cents: int | None = None,
    ) -> Movement:
        """Book a received PIX (to the account's key); with `fee_cents`, the PSP's fee is
        taken from it: the account gets `amount_cents` less the fee."""
        at = _second(at)
        if amount_cents <= 0:
            raise ValueError("a received PIX has a positive amount")
        if fee_cents is not None and not 0 <= fee_cents < amount_cents:
            raise ValueError("a fee is at least 0 and less than the PIX")
        return self._book(
            PIX_IN,
            at,
            amount_cents - (fee_cents or 0),
            fee_cents=fee_cents,
            end_to_end_id=self.end_to_end_id(rng, payer_ispb, at),
            txid=txid,
            counterparty_name=payer_name,
            counterparty_document=payer_document,
            counterparty_key=self.account.pix_key,
            counterparty_ispb=payer_ispb,
            info_pagador=info_pagador,
            description="PIX RECEBIDO",
            intent_id=intent_id,
        )

    def send_pix(
        self,
        rng: random.Random,
        *,
        at: datetime,
        amount_cents: int,
        payee_name: str,
        payee_document: str | None,
        payee_key: str,
        payee_ispb: str,
        remittance: str | None = None,
        intent_id: str | None = None,
    ) -> Movement:
        """Book a PIX payout from the account (an offramp's fiat leg)."""
        at = _second(at)
        if amount_cents <= 0:
            raise ValueError("a payout has a positive amount")
        return self._book(
            PIX_OUT,
            at,
            -amount_cents,
            end_to_end_id=self.end_to_end_id(rng, self.account.ispb, at),
            counterparty_name=payee_name,
            counterparty_document=payee_document,
            counterparty_key=payee_key,
            counterparty_ispb=payee_ispb,
            remittance=remittance,
            description="PIX ENVIADO",
            intent_id=intent_id,
        )

    def refund_pix(
        self,
        rng: random.Random,
        original: Movement,
        *,
        at: datetime,
        amount_cents: int,
        intent_id: str | None = None,
        nature: str = "ORIGINAL",
    ) -> Movement:
        """Book a devolução (debit) of a received PIX; its e2e is a fresh rtrId. `nature` is
        API Pix's `natureza`: ORIGINAL (the receiver returns it) or a MED claim of the
        payer's bank (MED_FRAUDE, MED_OPERACIONAL), which the bank's text says too."""
        at = _second(at)
        if original.kind != PIX_IN or original.end_to_end_id is None:
            raise ValueError("only a received PIX can be returned")
        if not 0 < amount_cents <= original.amount_cents:
            raise ValueError("a devolução is positive and at most the amount received")
        return self._devolucao(
            rng, original, at, -amount_cents, self.account.ispb, intent_id, nature
        )

    def return_payout(
        self,
        rng: random.Random,
        original: Movement,
        *,
        at: datetime,
        intent_id: str | None = None,
    ) -> Movement:
        """Book a devolução received (credit): the payee's bank sent one of our payouts back."""
        at = _second(at)
        if original.kind != PIX_OUT or original.end_to_end_id is None:
            raise ValueError("only a payout we sent can come back")
        ispb = original.counterparty_ispb or self.account.ispb
        return self._devolucao(rng, original, at, -original.amount_cents, ispb, intent_id)

    def _devolucao(
        self,
        rng: random.Random,
        original: Movement,
        at: datetime,
        signed_cents: int,
        ispb: str,
        intent_id: str | None,
        nature: str = "ORIGINAL",
    ) -> Movement:
        """A devolução of `original` (sent when `signed_cents` < 0, received when > 0)."""
        med = nature.startswith("MED")
        rtr_id = self.end_to_end_id(rng, ispb, at, prefix="D")
        refund = Refund(
            id="DV" + "".join(rng.choice(_ALNUM) for _ in range(18)),
            rtr_id=rtr_id,
            amount_cents=abs(signed_cents),
            requested_at=at,
            settled_at=at,
            status="DEVOLVIDO",
            nature=nature,
            reason="Devolucao MED solicitada pelo PSP do pagador" if med else Refund.reason,
        )
        return self._book(
            PIX_REFUND_OUT if signed_cents < 0 else PIX_REFUND_IN,
            at,
            signed_cents,
            end_to_end_id=rtr_id,
            refund_of=original.end_to_end_id,
            counterparty_name=original.counterparty_name,
            counterparty_document=original.counterparty_document,
            counterparty_ispb=original.counterparty_ispb,
            description=("DEVOLUCAO PIX" if signed_cents < 0 else "DEVOLUCAO PIX RECEBIDA")
            + (" MED" if med else ""),
            refund=refund,
            intent_id=intent_id,
        )

    def charge_fee(self, *, at: datetime, amount_cents: int, description: str) -> Movement:
        """Book a bank fee (tarifa); fees carry no e2e and are never reconciliation breaks."""
        if amount_cents <= 0:
            raise ValueError("a fee has a positive amount")
        return self.book_own(FEE, at=at, signed_cents=-amount_cents, description=description)

    def book_own(
        self, kind: MovementKind, *, at: datetime, signed_cents: int, description: str
    ) -> Movement:
        """Book one of the bank's own lines (a fee, interest, a yield: signed cents, a credit
        > 0); they carry no e2e and are never reconciliation breaks."""
        if kind not in (FEE, INTEREST, YIELD) or signed_cents == 0:
            raise ValueError(f"not a line of the bank's own: {kind} {signed_cents}")
        return self._book(kind, _second(at), signed_cents, description=description)

    # -- reading ----------------------------------------------------------------------------
    def sorted_movements(self) -> list[Movement]:
        """Movements in booking order (time, then the bank's id)."""
        return sorted(self.movements, key=lambda m: (m.booked_at, m.id))

    def select(self, start: datetime | None = None, end: datetime | None = None) -> list[Movement]:
        """Movements booked in ``[start, end)`` (either bound optional), in booking order."""
        return [
            m
            for m in self.sorted_movements()
            if (start is None or m.booked_at >= start) and (end is None or m.booked_at < end)
        ]

    def balance_before(self, at: datetime | None) -> int:
        """Balance in cents just before `at` (the opening balance when `at` is None)."""
        if at is None:
            return self.opening_balance_cents
        return self.opening_balance_cents + sum(
            m.amount_cents for m in self.movements if m.booked_at < at
        )


def _second(at: datetime) -> datetime:
    if at.tzinfo is None:
        raise ValueError("booking times must be timezone-aware")
    return at.astimezone(UTC).replace(microsecond=0)
