"""recon: reconcile a fiat-crypto service's v2 Intents API against bank / PIX statements.

The public surface is listed once, in ``__all__``; names are imported lazily so
``import recon`` stays fast in a notebook or a cron job.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # client
    "Client": "recon.api",
    "AsyncClient": "recon.api",
    # extract + catalog
    "extract": "recon.extraction",
    "connect": "recon.catalog",
    "sql": "recon.catalog",
    # statements
    "import_statements": "recon.statements",
    # reconciliation
    "reconcile": "recon.reconciliation",
    "pair": "recon.reconciliation",
    # configuration
    "DataDir": "recon.config",
    # errors
    "ReconError": "recon.errors",
}

__all__ = sorted([*_EXPORTS, "__version__"])


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'recon' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
