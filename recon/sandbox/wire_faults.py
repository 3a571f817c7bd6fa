"""Faults on the wire for testing clients: latency, 429 with Retry-After, 5xx, limit cap, drift.

Applied by the HTTP app (`create_app`) to `/v2/*` only, never by the in-process transports.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, fields
from typing import Any

__all__ = ["WireFaults"]

#: Integer knobs and their upper bounds: a fault makes a client's life hard, never the server hang.
_MOST: dict[str, int | None] = {
    "latency_ms": 60_000,
    "retry_after": 86_400,
    "drift_inserts_per_list": 1_000,
    "drift_status_changes_per_list": 1_000,
    "seed": None,
}


@dataclass
class WireFaults:
    """Knobs, all off by default. Rates are probabilities per request in [0, 1].

    - latency_ms: added delay on every /v2 request;
    - rate_429: share of requests answered 429 with ``Retry-After: retry_after`` (seconds);
    - rate_5xx: share answered 500/502/503;
    - limit_cap: the list applies ``min(limit, limit_cap)`` and echoes the applied limit;
    - drift_inserts_per_list / drift_status_changes_per_list: on each list request, first
      insert that many new intents at the head (newest first, so offsets shift) and move that
      many intents one step along their lifecycle;
    - seed: the RNG deciding which requests fail (reset whenever faults are set).
    """

    latency_ms: int = 0
    rate_429: float = 0.0
    retry_after: int = 1
    rate_5xx: float = 0.0
    limit_cap: int | None = None
    drift_inserts_per_list: int = 0
    drift_status_changes_per_list: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        self.validate()
        self.rng = random.Random(self.seed)

    def validate(self) -> None:
        """Raise ValueError naming the first bad knob."""
        for name in ("rate_429", "rate_5xx"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number in [0, 1]")
        for name, most in _MOST.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer")
            if most is not None and value > most:
                raise ValueError(f"{name} must be at most {most}")
        cap = self.limit_cap
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ValueError("limit_cap must be a positive integer or null")

    def to_dict(self) -> dict[str, Any]:
        """JSON-able view (what GET /_sandbox/faults shows)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WireFaults:
        """Build from JSON (snake_case or camelCase keys); unknown keys raise ValueError."""
        names = {f.name for f in fields(cls)}
        camel = {_camel(n): n for n in names}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            name = key if key in names else camel.get(key)
            if name is None:
                raise ValueError(f"unknown fault {key!r}; known: {', '.join(sorted(names))}")
            kwargs[name] = value
        return cls(**kwargs)

    def roll(self, rate: float) -> bool:
        """One seeded coin flip with probability `rate`."""
        return rate > 0 and self.rng.random() < rate


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.capitalize() for p in rest)
