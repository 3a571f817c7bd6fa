"""Property-based run of recon/api/openapi.json against the emulator's ASGI app (schemathesis).

The schema is loaded from the app's own ``/openapi.json`` (so this also checks the emulator
serves the shipped document). Every generated request, valid and invalid, must get a
documented status, a body matching the schema and no 5xx. Bounded and derandomized so it is
fast and repeatable: a failure here reproduces on every run.
"""

from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from recon.sandbox.asgi import create_app
from recon.sandbox.emulator import Emulator

EMULATOR = Emulator(seed=31)
# Real intents of every type and status, so list/get responses carry full objects to validate.
EMULATOR.bulk_load(120, seed=1)
APP = create_app(EMULATOR)

schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
schema.config.update(headers={"X-API-Key": EMULATOR.instances[0].api_key})
schema.config.generation.update(modes=["positive", "negative"], deterministic=True)
schema.config.phases.update(phases=["examples", "fuzzing"])

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@schema.parametrize()
@settings(
    max_examples=25,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_emulator_conforms_to_the_openapi_document(case: schemathesis.Case) -> None:
    case.call_and_validate(checks=CHECKS)
