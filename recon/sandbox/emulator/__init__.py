"""Framework-free emulator of the whole v2 Intents and Parties API.

`Emulator.handle(method, path, query=, headers=, body=)` answers any /v2 request;
`recon.sandbox.asgi.create_app` (Starlette) and `EmulatorTransport` (httpx, in-process) are thin
shells around it. The control surface (`transition`, `tick`, `bulk_load`, `drift`, the clock) is
what the world generator, the tests and `/_sandbox/*` use; it is not part of the v2 API.

One module per part, each a layer of the `Emulator` class:

- `store`: configuration, the columnar per-instance store, intent ids (`_State`);
- `responses`: `EmulatorResponse`, HTTP errors in each family's shape, body parsing;
- `parties`: `/v2/parties`;
- `intents`: `/v2/intents` (create, read, list, approve-burn) and the lifecycle (`tick`);
- `routes`: `handle`, auth and routing;
- `control`: `Emulator` itself, with the control surface.
"""

from __future__ import annotations

from recon.sandbox.emulator.control import Emulator
from recon.sandbox.emulator.responses import EmulatorResponse
from recon.sandbox.emulator.state import EmulatorConfig, Instance

__all__ = ["Emulator", "EmulatorConfig", "EmulatorResponse", "Instance"]
