"""recon.extraction: walk the v2 intents list into atomic Parquet snapshots.

    >>> import recon
    >>> result = recon.extract(base_url="http://127.0.0.1:8700")   # key from $RECON_API_KEY
    >>> result.manifest["consistent"], result.path

`recon.extract` is this package's `extract`, exported from `recon`.
"""

from __future__ import annotations

from recon.extraction.flatten import IntentParseError, flatten_intent
from recon.extraction.snapshot import (
    InconsistentSnapshotError,
    SnapshotResult,
    extract,
    extract_async,
)
from recon.extraction.walk import Walker

__all__ = [
    "InconsistentSnapshotError",
    "IntentParseError",
    "SnapshotResult",
    "Walker",
    "extract",
    "extract_async",
    "flatten_intent",
]
