"""recon.extract: walk the v2 intents list into atomic Parquet snapshots.

    >>> import recon
    >>> result = recon.extract(base_url="http://127.0.0.1:8700")   # key from $RECON_API_KEY
    >>> result.manifest["consistent"], result.path

`recon.extract` is both this package and its main function: the package is callable, so
``recon.extract(...)`` works whether or not ``recon.extract`` was imported as a module first.
"""

from __future__ import annotations

import sys
import types
from typing import Any

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


class _CallableModule(types.ModuleType):
    """Lets ``recon.extract(...)`` call `extract` even when the name resolves to the package."""

    def __call__(self, *args: Any, **kwargs: Any) -> SnapshotResult:
        return extract(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
