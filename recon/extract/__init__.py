"""recon.extract: walk the v2 intents list into atomic Parquet snapshots.

    >>> import recon
    >>> result = recon.extract(base_url="http://127.0.0.1:8700")   # key from $RECON_API_KEY
    >>> result.manifest["consistent"], result.path

`recon.extract` is both this package and its main function (see recon._callable).
"""

from __future__ import annotations

from recon._callable import make_callable
from recon.extract.flatten import IntentParseError, flatten_intent
from recon.extract.snapshot import (
    InconsistentSnapshotError,
    SnapshotResult,
    extract,
    extract_async,
)
from recon.extract.walk import Walker

__all__ = [
    "InconsistentSnapshotError",
    "IntentParseError",
    "SnapshotResult",
    "Walker",
    "extract",
    "extract_async",
    "flatten_intent",
]

make_callable(__name__, "recon.extract.snapshot:extract")
