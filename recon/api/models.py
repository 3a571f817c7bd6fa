"""Typed models of the v2 API's resources (spec sections 2 and 4.7).

Every model is a frozen dataclass with snake_case fields plus ``raw``: the JSON object exactly
as the server sent it, so nothing the server adds is ever lost. ``from_api`` checks the shape
(required keys present, types right, enums known) and raises :class:`ResponseShapeError`
naming the offending field, so a malformed server response fails loudly at the boundary
instead of as a ``KeyError`` deep inside a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

from recon.errors import ResponseShapeError

__all__ = [
    "Intent",
    "IntentPage",
    "IntentStatus",
    "IntentType",
    "Party",
    "PartyProfile",
    "PartyStatus",
    "PartySummary",
    "PartyType",
    "PixInfo",
    "ResponseShapeError",
    "parse_timestamp",
]


class IntentType(StrEnum):
    """Kind of intent (spec 2.2)."""

    ONRAMP = "onramp"
    OFFRAMP = "offramp"


class IntentStatus(StrEnum):
    """Every intent status of spec 3.1, in the spec's order."""

    CREATED = "created"
    REQUIRES_COMPLIANCE = "requires_compliance"
    AWAITING_FIAT_PAYMENT = "awaiting_fiat_payment"
    FIAT_RECEIVED = "fiat_received"
    MINTING = "minting"
    AWAITING_ONCHAIN_TRANSFER = "awaiting_onchain_transfer"
    AWAITING_BURN_APPROVAL = "awaiting_burn_approval"
    BURN_APPROVED = "burn_approved"
    ONCHAIN_RECEIVED = "onchain_received"
    BURNING = "burning"
    PAYING_OUT = "paying_out"
    COMPLETED = "completed"
    EXPIRED = "expired"
    CANCELED = "canceled"
    FAILED = "failed"
    REFUNDED = "refunded"

    @property
    def is_terminal(self) -> bool:
        """True for statuses no lifecycle leaves (completed and the exits)."""
        return self in _TERMINAL


_TERMINAL = frozenset(
    {
        IntentStatus.COMPLETED,
        IntentStatus.EXPIRED,
        IntentStatus.CANCELED,
        IntentStatus.FAILED,
        IntentStatus.REFUNDED,
    }
)


class PartyStatus(StrEnum):
    """Party statuses (spec 3.2); a new party is ``pending``."""

    PENDING = "pending"
    ACTIVE = "active"
    SUSPENDED = "suspended"
    BLOCKED = "blocked"


class PartyType(StrEnum):
    """Party kinds (spec 2.1): an 11-digit CPF is a person, a 14-digit CNPJ a business."""

    PERSON = "person"
    BUSINESS = "business"


# --------------------------------------------------------------------------- field readers
# Small typed readers keep every `from_api` declarative and make each error name its field.

_Missing = object()
E = TypeVar("E", bound=StrEnum)


def _obj(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ResponseShapeError(f"expected an object, got {type(value).__name__}", field=where)
    return value


def _get(data: Mapping[str, Any], key: str, where: str) -> Any:
    value = data.get(key, _Missing)
    if value is _Missing:
        raise ResponseShapeError("required field is missing", field=_join(where, key))
    return value


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _str(data: Mapping[str, Any], key: str, where: str) -> str:
    value = _get(data, key, where)
    if not isinstance(value, str):
        raise ResponseShapeError(
            f"expected a string, got {type(value).__name__}", field=_join(where, key)
        )
    return value


def _opt_str(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = _get(data, key, where)
    if value is not None and not isinstance(value, str):
        raise ResponseShapeError(
            f"expected a string or null, got {type(value).__name__}", field=_join(where, key)
        )
    return value


def _int(data: Mapping[str, Any], key: str, where: str) -> int:
    value = _get(data, key, where)
    # bool is an int subclass in Python; JSON true is not an integer.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ResponseShapeError(
            f"expected an integer, got {type(value).__name__}", field=_join(where, key)
        )
    return value


def _enum(data: Mapping[str, Any], key: str, where: str, enum: type[E]) -> E:
    value = _str(data, key, where)
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(m.value for m in enum)
        raise ResponseShapeError(
            f"unknown value {value!r} (expected one of {allowed})", field=_join(where, key)
        ) from None


def parse_timestamp(value: str) -> datetime:
    """Parse an ISO 8601 timestamp into an aware UTC datetime.

    Accepts a trailing ``Z``; a timestamp without an offset is taken as UTC (the service
    documents its times as UTC). Raises ``ValueError`` for anything else.
    """
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _time(data: Mapping[str, Any], key: str, where: str) -> datetime:
    value = _str(data, key, where)
    try:
        return parse_timestamp(value)
    except ValueError:
        raise ResponseShapeError(
            f"not an ISO 8601 timestamp: {value!r}", field=_join(where, key)
        ) from None


def _opt_time(data: Mapping[str, Any], key: str, where: str) -> datetime | None:
    if _get(data, key, where) is None:
        return None
    return _time(data, key, where)


# --------------------------------------------------------------------------- models


def _shown(d: Mapping[str, Any], where: str) -> dict[str, Any]:
    """What a party shows of itself (profile and intent summary alike)."""
    return {
        "display_name": _str(d, "displayName", where),
        "document_masked": _str(d, "documentMasked", where),
        "solana_wallet": _opt_str(d, "solanaWallet", where),
    }


@dataclass(frozen=True)
class PartyProfile:
    """``party.profile``: display data; never the e-mail, phone or full document."""

    display_name: str
    document_type: str
    document_masked: str
    solana_wallet: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, data: Any, where: str = "profile") -> PartyProfile:
        """Build from the JSON object; raises ResponseShapeError on a malformed one."""
        d = _obj(data, where)
        _str(d, "displayName", where)  # fields are checked in the document's order
        document_type = _str(d, "documentType", where)
        return cls(**_shown(d, where), document_type=document_type, raw=dict(d))


@dataclass(frozen=True)
class Party:
    """A party (spec 2.1): one end-user of the caller."""

    id: str
    instance_id: str
    party_type: PartyType
    country_code: str
    external_ref: str | None
    status: PartyStatus
    profile: PartyProfile
    created_at: datetime
    updated_at: datetime
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, data: Any, where: str = "") -> Party:
        """Build from the JSON object; raises ResponseShapeError on a malformed one."""
        d = _obj(data, where or "party")
        return cls(
            id=_str(d, "id", where),
            instance_id=_str(d, "instanceId", where),
            party_type=_enum(d, "partyType", where, PartyType),
            country_code=_str(d, "countryCode", where),
            external_ref=_opt_str(d, "externalRef", where),
            status=_enum(d, "status", where, PartyStatus),
            profile=PartyProfile.from_api(_get(d, "profile", where), _join(where, "profile")),
            created_at=_time(d, "createdAt", where),
            updated_at=_time(d, "updatedAt", where),
            raw=dict(d),
        )


@dataclass(frozen=True)
class PixInfo:
    """``intent.pixInfo``: the PIX deposit instructions of an onramp."""

    key_type: str
    key_value: str
    recipient_name: str
    bank: str
    description: str
    amount_cents: int
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, data: Any, where: str = "pixInfo") -> PixInfo:
        """Build from the JSON object; raises ResponseShapeError on a malformed one."""
        d = _obj(data, where)
        return cls(
            key_type=_str(d, "keyType", where),
            key_value=_str(d, "keyValue", where),
            recipient_name=_str(d, "recipientName", where),
            bank=_str(d, "bank", where),
            description=_str(d, "description", where),
            amount_cents=_int(d, "amountCents", where),
            raw=dict(d),
        )


@dataclass(frozen=True)
class PartySummary:
    """``intent.party``: the convenience subset of the resolved party."""

    display_name: str
    document_masked: str
    solana_wallet: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, data: Any, where: str = "party") -> PartySummary:
        """Build from the JSON object; raises ResponseShapeError on a malformed one."""
        d = _obj(data, where)
        return cls(**_shown(d, where), raw=dict(d))


@dataclass(frozen=True)
class Intent:
    """An intent (spec 2.2). Every field of the spec is always present in the JSON."""

    id: str
    instance_id: str
    party_id: str
    intent_type: IntentType
    flow_version: int
    adapter: str | None
    status: IntentStatus
    status_reason: str | None
    client_reference: str | None
    metadata: dict[str, Any] | None = field(hash=False)
    expires_at: datetime | None
    created_at: datetime
    updated_at: datetime
    pix_info: PixInfo | None
    deposit_instructions: Any = field(hash=False)
    party: PartySummary | None
    chain_id: str
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, data: Any, where: str = "") -> Intent:
        """Build from the JSON object; raises ResponseShapeError on a malformed one."""
        d = _obj(data, where or "intent")
        metadata = _get(d, "metadata", where)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise ResponseShapeError("expected an object or null", field=_join(where, "metadata"))
        pix = _get(d, "pixInfo", where)
        party = _get(d, "party", where)
        return cls(
            id=_str(d, "id", where),
            instance_id=_str(d, "instanceId", where),
            party_id=_str(d, "partyId", where),
            intent_type=_enum(d, "intentType", where, IntentType),
            flow_version=_int(d, "flowVersion", where),
            adapter=_opt_str(d, "adapter", where),
            status=_enum(d, "status", where, IntentStatus),
            status_reason=_opt_str(d, "statusReason", where),
            client_reference=_opt_str(d, "clientReference", where),
            metadata=dict(metadata) if metadata is not None else None,
            expires_at=_opt_time(d, "expiresAt", where),
            created_at=_time(d, "createdAt", where),
            updated_at=_time(d, "updatedAt", where),
            pix_info=None if pix is None else PixInfo.from_api(pix, _join(where, "pixInfo")),
            deposit_instructions=_get(d, "depositInstructions", where),
            party=None if party is None else PartySummary.from_api(party, _join(where, "party")),
            chain_id=_str(d, "chainId", where),
            raw=dict(d),
        )

    @property
    def amount_cents(self) -> int | None:
        """The intent's amount in cents, from the first place that has it (the order of the `intents` contract, docs/contracts.md).

        The spec's intent has no top-level amount: a top-level ``amountCents`` if a server
        sends one, else ``pixInfo.amountCents`` (onramps), else ``metadata.amountCents``
        (the emulator's offramps).
        """
        source = self.amount_source
        if source == "amountCents":
            return int(self.raw["amountCents"])
        if source == "pixInfo" and self.pix_info is not None:
            return self.pix_info.amount_cents
        if source == "metadata" and self.metadata is not None:
            return int(self.metadata["amountCents"])
        return None

    @property
    def amount_source(self) -> str | None:
        """Where :attr:`amount_cents` comes from: ``amountCents``, ``pixInfo``, ``metadata``."""
        if _is_int(self.raw.get("amountCents")):
            return "amountCents"
        if self.pix_info is not None:
            return "pixInfo"
        if self.metadata is not None and _is_int(self.metadata.get("amountCents")):
            return "metadata"
        return None

    @property
    def destination_address(self) -> str | None:
        """An offramp's PIX destination, read from ``metadata.destinationAddress`` if there."""
        if self.metadata is None:
            return None
        value = self.metadata.get("destinationAddress")
        return value if isinstance(value, str) else None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class IntentPage:
    """One page of ``GET /v2/intents`` (spec 4.7): offset pagination."""

    intents: tuple[Intent, ...]
    total: int
    limit: int
    offset: int
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_api(cls, data: Any) -> IntentPage:
        """Build from the JSON body; raises ResponseShapeError on a malformed one."""
        d = _obj(data, "page")
        items = _get(d, "intents", "")
        if not isinstance(items, list):
            raise ResponseShapeError("expected an array", field="intents")
        return cls(
            intents=tuple(Intent.from_api(item, f"intents[{i}]") for i, item in enumerate(items)),
            total=_int(d, "total", ""),
            limit=_int(d, "limit", ""),
            offset=_int(d, "offset", ""),
            raw=dict(d),
        )

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or None when this page reaches ``total``."""
        nxt = self.offset + len(self.intents)
        return nxt if self.intents and nxt < self.total else None
