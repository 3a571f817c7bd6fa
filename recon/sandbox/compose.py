"""Compose a sandbox: an emulator, the world built in it, its bank and its app (v2, /pix, /oauth/token).

    sandbox = build_world(seed=7, days=30, intents_per_day=500)   # Python API
    export_statements(sandbox.bank, "out/")                        # statements + ground truth
    with sandbox.running(port=0) as base_url: ...                  # served in a thread

`recon sandbox serve` and `recon sandbox export` are thin wrappers around these; running the app
under uvicorn is `recon.sandbox.serving`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from recon.sandbox.pix_api import PixCredentials, TokenStore, pix_routes
from recon.sandbox.world import World, WorldConfig, WorldResult

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from recon.sandbox.bank import Bank
    from recon.sandbox.emulator import Emulator
    from recon.sandbox.truth import GroundTruth
    from recon.sandbox.wire_faults import WireFaults

__all__ = ["Sandbox", "build_world", "emulator_for"]


def emulator_for(config: WorldConfig, *, keys: list[str] | None = None) -> Emulator:
    """An emulator set up the way the world expects (start, TTLs, compliance threshold)."""
    from recon.sandbox.emulator import Emulator, EmulatorConfig

    return Emulator(
        seed=config.seed,
        keys=keys,
        config=EmulatorConfig(
            start=config.start,
            onramp_ttl=config.onramp_ttl,
            offramp_ttl=config.offramp_ttl,
            compliance_threshold_cents=config.compliance_threshold_cents,
        ),
    )


@dataclass
class Sandbox:
    """A built world: the emulator holding its API state, the world, and its bank."""

    emulator: Emulator
    world: World
    result: WorldResult
    build_seconds: float
    credentials: PixCredentials
    tokens: TokenStore = field(default_factory=TokenStore)

    @property
    def bank(self) -> Bank:
        """The bank account behind the world (statements come from here)."""
        return self.result.bank

    @property
    def truth(self) -> GroundTruth:
        """What reconciling this world must find."""
        return self.result.truth

    @property
    def api_key(self) -> str:
        """The key of the instance the world lives in."""
        return self.emulator.instances[0].api_key

    def apply_late_events(self) -> list[str]:
        """Apply the held-back status regressions (between two snapshots)."""
        return self.world.apply_late_events(self.emulator)

    def app(self, faults: WireFaults | None = None) -> Starlette:
        """The Starlette app: B's v2 API + this world's /pix, /oauth/token, late events."""
        from recon.sandbox.asgi import create_app

        routes = pix_routes(
            self.bank,
            self.credentials,
            tokens=self.tokens,
            emulator=self.emulator,
            late_events=self.apply_late_events,
        )
        return create_app(self.emulator, faults=faults, extra_routes=routes)

    def banner(self, base_url: str) -> list[str]:
        """Start-up lines: B's banner (URL, keys), then the API Pix client credentials."""
        from recon.sandbox.asgi import banner

        return [*banner(base_url, self.emulator), self.credentials.banner()]

    def summary(self) -> str:
        """One line about what was built."""
        counts = self.result.counts
        return (
            f"World seed {self.world.config.seed}: {self.result.intents} intents, "
            f"{self.result.parties} parties, {sum(counts.values())} bank movements, "
            f"{len(self.truth.breaks)} expected breaks; built in {self.build_seconds:.1f} s"
        )

    @contextmanager
    def running(
        self, host: str = "127.0.0.1", port: int = 0, faults: WireFaults | None = None
    ) -> Iterator[str]:
        """Serve in a background thread; yields the base URL."""
        from recon.sandbox.serving import run_in_thread

        with run_in_thread(self.app(faults), host, port) as base_url:
            yield base_url


def build_world(
    config: WorldConfig | None = None,
    *,
    api: str = "direct",
    keys: list[str] | None = None,
    **overrides: Any,
) -> Sandbox:
    """Build a world (deterministic for its seed) in a fresh emulator.

    `overrides` are WorldConfig or FaultRates fields (e.g. ``seed=3, days=2,
    underpaid=0.01``). `api="client"` drives the emulator through `recon.api.Client`;
    the default `"direct"` sends the same requests straight to the emulator (faster, same
    world).
    """
    cfg = (config or WorldConfig()).with_overrides(**overrides)
    started = time.perf_counter()
    emulator = emulator_for(cfg, keys=keys)
    world = World(cfg)
    result = world.build(emulator, api=api)
    return Sandbox(
        emulator=emulator,
        world=world,
        result=result,
        build_seconds=time.perf_counter() - started,
        credentials=PixCredentials.for_seed(cfg.seed),
    )
