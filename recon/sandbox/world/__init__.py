"""A simulated world for the sandbox: weeks of parties and intents, the bank behind them.

The world drives the emulator *through the public v2 API* (`recon.api.Client` over the
in-process `EmulatorTransport`) for everything a client does — create parties, bind
wallets, create onramp/offramp intents with idempotency keys and client references,
approve burns with valid simulated signatures — and through the emulator's control surface
(`transition`, `tick`, the clock) for what the service does on its own. Every movement of
money lands in a `Bank`; every planted fault lands once in the `GroundTruth`.

Two phases keep it deterministic and checkable:

1. **plan** — with `random.Random(seed)` only: when each intent is created, by whom, for
   how much, and its fate (paid, unpaid, canceled, failed and refunded, ... or a planted
   fault). Faults are assigned to distinct intents inside a planting window far enough from
   the world's end that every grace period has run out;
2. **run** — replay the plan in time order against the emulator, moving its clock.

Everything not planted reconciles clean at the world's end with the default grace periods
(onramp 30 min, offramp payout 2 h, refunds 24 h): payers pay inside the window, the service
moves status within seconds, payouts happen within minutes, refunds are paid.

Modules: `faults` (which faults exist, their rates, the category each must produce),
`plan` (the world's settings and phase 1), `replay` (phase 2: `World.build`).
"""

from recon.sandbox.world.faults import FAULTS, FaultRates
from recon.sandbox.world.plan import DEFAULT_END, WorldConfig
from recon.sandbox.world.replay import World, WorldResult

__all__ = ["DEFAULT_END", "FAULTS", "FaultRates", "World", "WorldConfig", "WorldResult"]
