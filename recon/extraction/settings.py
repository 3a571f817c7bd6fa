"""`[extract]` in recon.toml: the bounds of a walk against a server that is broken or hostile.

```toml
[extract]
max_body_bytes = 67108864      # bytes on the wire per response (64 MiB)
max_decoded_bytes = 67108864   # bytes after Content-Encoding (a gzip bomb stops here)
read_timeout = 30              # seconds between two reads from the socket
response_deadline = 120        # seconds for one response, first byte to last
max_total = 1000000000         # a `total` above this is refused, not walked
deadline = 21600               # seconds for the whole walk (6 h), retries included
retry_attempts = 6             # tries per request (the client's RetryPolicy)
retry_budget = 120             # seconds per request, its retries included
```

The defaults are far above what a real API does (a page of 100 intents is ~100 KB and comes
back in well under a second; a million intents walk in minutes) and only stop a server that
would otherwise exhaust memory or hold `recon daily`'s lock forever. Crossing one is exit 3
(an upstream failure), one line, and nothing is published.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from recon.api._retry import RetryPolicy
from recon.api.protocol import Limits
from recon.config import DataDir, load_config
from recon.errors import ConfigError

__all__ = ["ExtractSettings"]

_LIMIT_KEYS = ("max_body_bytes", "max_decoded_bytes", "read_timeout", "response_deadline")


@dataclass(frozen=True)
class ExtractSettings:
    """Bounds of one extract (see the module docstring for each)."""

    limits: Limits = field(default_factory=lambda: Limits(read_timeout=30.0))
    max_total: int = 1_000_000_000
    deadline: float = 6 * 3600.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)

    @classmethod
    def from_mapping(cls, section: Any) -> ExtractSettings:
        """Settings from an `[extract]` table; unknown keys and bad values raise ConfigError."""
        if not isinstance(section, dict):
            raise ConfigError("[extract] must be a table")
        known = {*_LIMIT_KEYS, "max_total", "deadline", "retry_attempts", "retry_budget"}
        unknown = sorted(set(section) - known)
        if unknown:
            raise ConfigError(
                f"[extract] unknown setting(s): {', '.join(unknown)} "
                f"(known: {', '.join(sorted(known))})"
            )
        for key, value in section.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"[extract] {key} must be a number, got {value!r}")
            if not (value > 0 and math.isfinite(value)):
                raise ConfigError(f"[extract] {key} must be positive, got {value!r}")
            whole = key in ("max_body_bytes", "max_decoded_bytes", "max_total", "retry_attempts")
            if whole and value != int(value):
                raise ConfigError(f"[extract] {key} must be a whole number, got {value!r}")
        base = cls()
        limits = replace(base.limits, **{k: section[k] for k in _LIMIT_KEYS if k in section})
        retry = base.retry
        if "retry_attempts" in section:
            retry = replace(retry, max_attempts=int(section["retry_attempts"]))
        if "retry_budget" in section:
            retry = replace(retry, budget=float(section["retry_budget"]))
        return cls(
            limits=limits,
            max_total=int(section.get("max_total", base.max_total)),
            deadline=float(section.get("deadline", base.deadline)),
            retry=retry,
        )

    @classmethod
    def load(cls, data: DataDir | None = None) -> ExtractSettings:
        """Settings from recon.toml (`load_config` search order), defaults when absent."""
        return cls.from_mapping(load_config(data=data).get("extract", {}))

    def as_dict(self) -> dict[str, Any]:
        """For the manifest: what bounded this walk."""
        out: dict[str, Any] = {k: getattr(self.limits, k) for k in _LIMIT_KEYS}
        out.update(
            max_total=self.max_total,
            deadline=self.deadline,
            retry_attempts=self.retry.max_attempts,
            retry_budget=self.retry.budget,
        )
        return out
