"""Simulated approve-burn signatures (the sandbox does not touch a real chain).

A real client signs an SPL Approve transaction delegating the offramp amount from the party's
associated token account; the service checks that signature on-chain. The sandbox replaces the
chain by a deterministic scheme that can tell the same three failures apart:

    signature = base58( amount_cents as 8 bytes big-endian
                        || HMAC-SHA512(secret, "intent_id|token_holder|amount_cents")[:56] )

64 bytes, like a real ed25519 signature (87–88 base58 characters). Verification:

- not base58, not 64 bytes, or the MAC does not match  -> ``signature_invalid``
- MAC matches but `token_holder` is not the party's token account -> ``wrong_signer``
- MAC matches, right holder, but the delegated amount differs      -> ``wrong_delegation_amount``

`token_account_for(wallet)` is the party's (simulated) associated token account for the
service's mint: a deterministic 32-byte address derived from the wallet.
"""

from __future__ import annotations

import functools
import hashlib
import hmac

import base58

__all__ = [
    "DEFAULT_SECRET",
    "SERVICE_MINT",
    "sign_approval",
    "token_account_for",
    "verify_approval",
]

DEFAULT_SECRET = b"recon-sandbox-approve-burn"
#: A fixed, fake mint address for the service's token (32 bytes, base58).
SERVICE_MINT = base58.b58encode(hashlib.sha256(b"recon-sandbox-mint").digest()).decode()


@functools.lru_cache(maxsize=65_536)
def token_account_for(wallet: str, *, mint: str = SERVICE_MINT) -> str:
    """The party's associated token account for `mint` (deterministic, base58, 32 bytes)."""
    digest = hashlib.sha256(b"ata|" + wallet.encode() + b"|" + mint.encode()).digest()
    return base58.b58encode(digest).decode()


def _mac(secret: bytes, intent_id: str, token_holder: str, amount_cents: int) -> bytes:
    msg = f"{intent_id}|{token_holder}|{amount_cents}".encode()
    return hmac.new(secret, msg, hashlib.sha512).digest()[:56]


def sign_approval(
    intent_id: str, token_holder: str, amount_cents: int, *, secret: bytes = DEFAULT_SECRET
) -> str:
    """A valid simulated signature of an SPL Approve of `amount_cents` by `token_holder`."""
    raw = amount_cents.to_bytes(8, "big") + _mac(secret, intent_id, token_holder, amount_cents)
    return base58.b58encode(raw).decode()


def verify_approval(
    signature: str,
    *,
    intent_id: str,
    token_holder: str,
    expected_holder: str,
    expected_amount_cents: int,
    secret: bytes = DEFAULT_SECRET,
) -> str | None:
    """None if the approval is good, else one of the error codes in the module docstring."""
    try:
        raw = base58.b58decode(signature)
    except ValueError:
        return "signature_invalid"
    if len(raw) != 64:
        return "signature_invalid"
    amount = int.from_bytes(raw[:8], "big")
    if not hmac.compare_digest(raw[8:], _mac(secret, intent_id, token_holder, amount)):
        return "signature_invalid"
    if token_holder != expected_holder:
        return "wrong_signer"
    if amount != expected_amount_cents:
        return "wrong_delegation_amount"
    return None
