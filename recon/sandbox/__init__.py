"""recon.sandbox: the embedded v2 API emulator, a simulated world and the bank behind it.

    from recon.sandbox import build_world, export_statements
    sandbox = build_world(seed=7, days=14, intents_per_day=200)
    export_statements(sandbox.bank, "sandbox-out/")

Names are imported lazily, so `import recon.sandbox` (and the CLI) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Bank",
    "Emulator",
    "EmulatorConfig",
    "EmulatorTransport",
    "GroundTruth",
    "PixCredentials",
    "Sandbox",
    "WireFaults",
    "World",
    "WorldConfig",
    "banner",
    "build_world",
    "create_app",
    "export_statements",
]

_WHERE = {
    "Bank": "recon.sandbox.bank",
    "Emulator": "recon.sandbox.emulator",
    "EmulatorConfig": "recon.sandbox.emulator",
    "EmulatorTransport": "recon.sandbox.transport",
    "GroundTruth": "recon.sandbox.truth",
    "PixCredentials": "recon.sandbox.pix_api",
    "Sandbox": "recon.sandbox.compose",
    "WireFaults": "recon.sandbox.wire_faults",
    "World": "recon.sandbox.world",
    "WorldConfig": "recon.sandbox.world",
    "banner": "recon.sandbox.asgi",
    "build_world": "recon.sandbox.compose",
    "create_app": "recon.sandbox.asgi",
    "export_statements": "recon.sandbox.exports",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'recon.sandbox' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
