"""Field rules of the v2 API (spec tables 4.x and limits table 8), framework-free.

Each `check_*` function returns the cleaned value or raises `FieldError` naming the field;
the emulator turns those into 400s in the endpoint family's error shape.
"""

from __future__ import annotations

import functools
import hashlib
import re
import uuid
from typing import Any

import base58

__all__ = [
    "FieldError",
    "cnpj_check_digits",
    "cpf_check_digits",
    "is_valid_cnpj",
    "is_valid_cpf",
    "is_valid_email",
    "is_valid_solana_address",
    "make_cnpj",
    "make_cpf",
    "make_wallet",
    "mask_document",
    "parse_uuid",
]


class FieldError(ValueError):
    """One invalid field; `field` is the JSON name the caller sent (or should have)."""

    def __init__(self, field: str, message: str, code: str = "validation_error"):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
        self.code = code


# --- documents -----------------------------------------------------------------------------


def cpf_check_digits(base9: str) -> str:
    """The two CPF check digits for the first nine digits (Receita Federal mod-11 rule)."""
    digits = [int(c) for c in base9]
    for weight_start in (10, 11):
        total = sum(d * w for d, w in zip(digits, range(weight_start, 1, -1), strict=False))
        rest = total % 11
        digits.append(0 if rest < 2 else 11 - rest)
    return f"{digits[-2]}{digits[-1]}"


def cnpj_check_digits(base12: str) -> str:
    """The two CNPJ check digits for the first twelve digits (mod-11, weights 5..2,9..2)."""
    digits = [int(c) for c in base12]
    for weights in ((5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2), (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)):
        total = sum(d * w for d, w in zip(digits, weights, strict=True))
        rest = total % 11
        digits.append(0 if rest < 2 else 11 - rest)
    return f"{digits[-2]}{digits[-1]}"


def is_valid_cpf(doc: str) -> bool:
    """11 ASCII digits, not all equal, with correct check digits."""
    if len(doc) != 11 or not doc.isascii() or not doc.isdigit() or len(set(doc)) == 1:
        return False
    return cpf_check_digits(doc[:9]) == doc[9:]


def is_valid_cnpj(doc: str) -> bool:
    """14 ASCII digits, not all equal, with correct check digits."""
    if len(doc) != 14 or not doc.isascii() or not doc.isdigit() or len(set(doc)) == 1:
        return False
    return cnpj_check_digits(doc[:12]) == doc[12:]


def mask_document(doc: str) -> str:
    """Mask a CPF/CNPJ keeping its last four digits: ``***.***.*09-87`` / ``**.***.***/**01-23``."""
    if len(doc) == 11:
        return f"***.***.*{doc[7:9]}-{doc[9:]}"
    if len(doc) == 14:
        return f"**.***.***/**{doc[10:12]}-{doc[12:]}"
    return "*" * max(0, len(doc) - 4) + doc[-4:]


def make_cpf(n: int) -> str:
    """A valid CPF derived deterministically from n (sample data for tests and the sandbox)."""
    base = f"{(n * 7919 + 100_000_000) % 10**9:09d}"
    return base + cpf_check_digits(base)


def make_cnpj(n: int) -> str:
    """A valid CNPJ (branch 0001) derived deterministically from n."""
    base = f"{(n * 104729 + 10**7) % 10**8:08d}0001"
    return base + cnpj_check_digits(base)


def make_wallet(n: int) -> str:
    """A valid Solana address (32 bytes, base58) derived deterministically from n."""
    digest = hashlib.sha256(f"recon-sandbox-wallet|{n}".encode()).digest()
    return base58.b58encode(digest).decode()


# --- other formats -------------------------------------------------------------------------

# Pragmatic e-mail syntax: one @, a dot-atom local part, a domain of labels with a TLD.
_EMAIL = re.compile(
    r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$"
)
_PHONE = re.compile(r"^\+?[0-9][0-9 ()-]{6,22}[0-9]$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")


def is_valid_email(value: str) -> bool:
    """Syntactic e-mail check (RFC 5322 dot-atom subset), at most 254 characters."""
    return len(value) <= 254 and _EMAIL.fullmatch(value) is not None


def is_valid_phone(value: str) -> bool:
    """Digits with an optional leading + and spaces/dashes/parentheses; 8–15 digits."""
    if _PHONE.fullmatch(value) is None:
        return False
    return 8 <= sum(c.isdigit() for c in value) <= 15


_B58_ALPHABET = frozenset("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")


_B58_DIGIT = {
    c: i for i, c in enumerate("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz")
}


@functools.lru_cache(maxsize=65_536)
def is_valid_solana_address(value: str) -> bool:
    """Base58 (Bitcoin alphabet) that decodes to exactly 32 bytes (an ed25519 public key)."""
    # explicit alphabet check: base58 decoders silently strip surrounding whitespace
    if not 32 <= len(value) <= 44 or not _B58_ALPHABET.issuperset(value):
        return False
    # decoded length = one zero byte per leading "1" + the bytes of the number the rest spells
    rest = value.lstrip("1")
    n = 0
    for c in rest:
        n = n * 58 + _B58_DIGIT[c]
    return len(value) - len(rest) + (n.bit_length() + 7) // 8 == 32


def is_base58(value: str) -> bool:
    """Non-empty string of the Bitcoin base58 alphabet (every such string decodes)."""
    return bool(value) and _B58_ALPHABET.issuperset(value)


_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def parse_uuid(value: str) -> str | None:
    """Canonical lower-case form of a hyphenated UUID, or None if `value` is not one."""
    if len(value) != 36:
        return None
    if _CANONICAL_UUID.fullmatch(value):
        return value  # already canonical: what uuid.UUID would give back
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


# --- generic field checks ------------------------------------------------------------------


def req_str(body: dict[str, Any], field: str, *, lo: int = 1, hi: int | None = None) -> str:
    """A required string field with a length bound (characters)."""
    if field not in body or body[field] is None:
        raise FieldError(field, "is required", "missing_field")
    return _str(body[field], field, lo=lo, hi=hi)


def opt_str(body: dict[str, Any], field: str, *, lo: int = 0, hi: int | None = None) -> str | None:
    """An optional string field; null counts as absent."""
    if body.get(field) is None:
        return None
    return _str(body[field], field, lo=lo, hi=hi)


def _str(value: Any, field: str, *, lo: int, hi: int | None) -> str:
    if not isinstance(value, str):
        raise FieldError(field, "must be a string", "invalid_type")
    if len(value) < lo:
        raise FieldError(
            field, "must not be empty" if lo == 1 else f"must be at least {lo} characters"
        )
    if hi is not None and len(value) > hi:
        raise FieldError(field, f"must be at most {hi} characters")
    return value


def positive_int(body: dict[str, Any], field: str) -> int:
    """A required JSON integer > 0 (floats, booleans and strings are refused)."""
    if field not in body or body[field] is None:
        raise FieldError(field, "is required", "missing_field")
    value = body[field]
    # bool is a subclass of int in Python; JSON true must not pass as 1 cent.
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(field, "must be an integer number of cents", "invalid_type")
    if value <= 0:
        raise FieldError(field, "must be greater than 0")
    if value > 2**53 - 1:
        raise FieldError(field, "is too large")
    return value


def chain_id(body: dict[str, Any]) -> str:
    """Required chainId, "solana" or "polygon"."""
    value = req_str(body, "chainId")
    if value not in ("solana", "polygon"):
        raise FieldError("chainId", 'must be "solana" or "polygon"')
    return value
