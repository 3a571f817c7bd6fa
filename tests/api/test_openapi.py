"""The OpenAPI 3.1 document: complete, true to the spec, and strict enough to catch a bad server."""

from __future__ import annotations

import copy
import json
from importlib import resources
from typing import Any

import pytest

from recon.api import IntentStatus, openapi_document

from . import _oas
from ._payloads import offramp_json, onramp_json, page_json, party_json

SPEC_OPERATIONS = {
    ("post", "/v2/parties"),
    ("get", "/v2/parties/{id}"),
    ("patch", "/v2/parties/{id}/wallet"),
    ("post", "/v2/intents/onramp"),
    ("post", "/v2/intents/offramp"),
    ("get", "/v2/intents/{id}"),
    ("get", "/v2/intents"),
    ("post", "/v2/intents/{id}/approve-burn"),
}

# Spec table 7.3: (method, path, status) -> the error schema of that endpoint's family.
TABLE_7_3 = [
    ("post", "/v2/parties", "400", "PartiesError"),
    ("post", "/v2/parties", "409", "PartiesError"),
    ("get", "/v2/parties/{id}", "404", "PartiesError"),
    ("patch", "/v2/parties/{id}/wallet", "400", "PartiesError"),
    ("patch", "/v2/parties/{id}/wallet", "404", "PartiesError"),
    ("post", "/v2/intents/onramp", "400", "IntentsError"),
    ("post", "/v2/intents/onramp", "409", "IntentsError"),
    ("post", "/v2/intents/offramp", "400", "IntentsError"),
    ("post", "/v2/intents/offramp", "409", "IntentsError"),
    ("get", "/v2/intents/{id}", "404", "IntentsError"),
    ("post", "/v2/intents/{id}/approve-burn", "400", "IntentsError"),
    ("post", "/v2/intents/{id}/approve-burn", "404", "IntentsError"),
]

DOC = openapi_document()
SCHEMAS = DOC["components"]["schemas"]


def _ops() -> list[tuple[str, str, dict[str, Any]]]:
    return [(m, p, op) for p, item in DOC["paths"].items() for m, op in item.items()]


def _response_schema_ref(op: dict[str, Any], status: str) -> str:
    response = op["responses"][status]
    if "$ref" in response:
        response = _oas._resolve(response["$ref"])
    schema = response["content"]["application/json"]["schema"]
    return str(schema["$ref"]).rsplit("/", 1)[-1]


def test_it_is_openapi_3_1_shipped_as_package_data() -> None:
    text = resources.files("recon.api").joinpath("openapi.json").read_text(encoding="utf-8")
    assert json.loads(text) == DOC
    assert DOC["openapi"].startswith("3.1.")
    first = openapi_document()
    first["paths"].clear()
    assert openapi_document()["paths"], "each call returns a fresh copy"


def test_every_spec_endpoint_and_nothing_else() -> None:
    assert {(m, p) for m, p, _ in _ops()} == SPEC_OPERATIONS
    assert len({op["operationId"] for _, _, op in _ops()}) == len(SPEC_OPERATIONS)


def test_x_api_key_is_required_everywhere() -> None:
    scheme = DOC["components"]["securitySchemes"]["ApiKey"]
    assert scheme == {**scheme, "type": "apiKey", "in": "header", "name": "X-API-Key"}
    assert DOC["security"] == [{"ApiKey": []}]
    assert all("security" not in op for _, _, op in _ops())  # no operation opts out


@pytest.mark.parametrize(("method", "path", "status", "schema"), TABLE_7_3)
def test_table_7_3_rows_are_documented_in_the_family_shape(
    method: str, path: str, status: str, schema: str
) -> None:
    op = DOC["paths"][path][method]
    assert _response_schema_ref(op, status) == schema


@pytest.mark.parametrize(("method", "path", "op"), _ops())
def test_every_operation_documents_401_429_and_5xx(method: str, path: str, op: Any) -> None:
    assert _response_schema_ref(op, "401") == "UnauthorizedError"
    assert _response_schema_ref(op, "429") == "AnyError"
    assert _response_schema_ref(op, "5XX") == "AnyError"
    success = {"get": {"200"}, "patch": {"200"}}.get(method)
    if success:
        assert success <= set(op["responses"])


def test_creates_take_a_uuid_idempotency_key_and_approve_burn_does_not() -> None:
    param = DOC["components"]["parameters"]["IdempotencyKey"]
    assert (param["name"], param["in"], param["schema"]) == (
        "idempotency-key",
        "header",
        {"type": "string", "format": "uuid"},
    )
    for path in ("/v2/intents/onramp", "/v2/intents/offramp"):
        op = DOC["paths"][path]["post"]
        assert {"$ref": "#/components/parameters/IdempotencyKey"} in op["parameters"]
        assert {"200", "201"} <= set(op["responses"])
    approve = DOC["paths"]["/v2/intents/{id}/approve-burn"]["post"]
    assert all(p.get("$ref") is None for p in approve["parameters"])


def test_limits_of_table_8_are_in_the_request_schemas() -> None:
    party = SCHEMAS["PartyCreate"]["properties"]
    assert (party["displayName"]["minLength"], party["displayName"]["maxLength"]) == (2, 100)
    assert party["cpf"]["pattern"] == "^([0-9]{11}|[0-9]{14})$"
    assert party["email"]["format"] == "email"
    assert set(SCHEMAS["PartyCreate"]["required"]) == {"cpf", "displayName"}
    for name, dest in (
        ("OnrampCreate", "destinationWallet"),
        ("OfframpCreate", "destinationAddress"),
    ):
        props = SCHEMAS[name]["properties"]
        assert (props[dest]["minLength"], props[dest]["maxLength"]) == (1, 255)
        assert props["clientReference"]["maxLength"] == 255
        assert props["amountCents"] == {
            **props["amountCents"],
            "type": "integer",
            "exclusiveMinimum": 0,
        }
        assert set(SCHEMAS[name]["required"]) == {"amountCents", dest, "chainId"}
    assert SCHEMAS["ChainIdRequest"]["enum"] == ["solana", "polygon"]
    approve = SCHEMAS["ApproveBurn"]["properties"]
    assert approve["txSignature"]["minLength"] == 1
    assert (approve["tokenHolder"]["minLength"], approve["tokenHolder"]["maxLength"]) == (32, 44)
    params = {p["name"]: p["schema"] for p in DOC["paths"]["/v2/intents"]["get"]["parameters"]}
    assert params["limit"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 50}
    assert params["offset"] == {"type": "integer", "minimum": 0, "default": 0}
    assert params["intentType"]["enum"] == ["onramp", "offramp", "all"]
    assert params["status"]["enum"] == [s.value for s in IntentStatus] + ["all"]
    assert SCHEMAS["WalletBinding"]["additionalProperties"] is False


def test_all_references_resolve() -> None:
    refs: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.append(node["$ref"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(DOC)
    assert refs
    for ref in refs:
        _oas._resolve(ref)  # KeyError if dangling


@pytest.mark.parametrize(
    ("schema", "instance"),
    [
        ("Party", party_json()),
        ("Party", party_json(externalRef="x", status="active", partyType="business")),
        ("Intent", onramp_json()),
        ("Intent", offramp_json()),
        ("IntentList", page_json([onramp_json(), offramp_json()], total=2)),
        ("ApproveBurnResult", {"status": "burn_approved"}),
        ("PartiesError", {"error": "exists", "code": "party_exists"}),
        ("PartiesError", {"error": "exists"}),
        ("IntentsError", {"code": "x", "message": "y"}),
        (
            "IntentsError",
            {
                "code": "x",
                "message": "y",
                "validationErrors": [{"field": "a", "message": "b"}],
                "details": {},
            },
        ),
        ("UnauthorizedError", {"code": "unauthorized", "message": "no key"}),
    ],
)
def test_spec_shaped_payloads_conform(schema: str, instance: Any) -> None:
    assert _oas.schema_errors(schema, instance) == []


def _without(data: dict[str, Any], key: str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    del out[key]
    return out


BROKEN = [
    ("Party", _without(party_json(), "externalRef"), "every field is always present"),
    ("Party", party_json(email="a@b.co"), "e-mail must never be returned"),
    (
        "Party",
        party_json(profile=dict(party_json()["profile"], document="52998224725")),
        "full doc",
    ),
    ("Party", party_json(status="deleted"), "unknown status"),
    ("Party", party_json(id="not-a-uuid"), "id is a uuid"),
    ("Party", party_json(createdAt="yesterday"), "timestamps are ISO 8601"),
    ("Intent", _without(onramp_json(), "depositInstructions"), "every field is always present"),
    ("Intent", onramp_json(depositInstructions={}), "always null in v2"),
    ("Intent", onramp_json(chainId="polygon"), "responses only ever carry solana"),
    ("Intent", onramp_json(status="teleported"), "unknown status"),
    ("Intent", onramp_json(pixInfo=None), "onramps carry pixInfo"),
    ("Intent", offramp_json(pixInfo=onramp_json()["pixInfo"]), "offramps have no pixInfo"),
    ("Intent", onramp_json(pixInfo=dict(onramp_json()["pixInfo"], keyType="cpf")), "cnpj only"),
    ("Intent", onramp_json(flowVersion="2"), "integer"),
    ("Intent", onramp_json(amount=1), "no undocumented fields"),
    ("IntentList", {"items": [], "total": 0, "limit": 50, "offset": 0}, "the key is intents"),
    ("IntentList", page_json([], total=0, limit=0), "limit 1-100"),
    ("IntentList", page_json([], total=-1), "total >= 0"),
    ("ApproveBurnResult", {"status": "burn_approved", "intent": {}}, "the intent is not echoed"),
    ("PartiesError", {"code": "x", "message": "y"}, "parties shape has error"),
    ("IntentsError", {"error": "y"}, "intents shape has code and message"),
    ("IntentsError", {"code": "x", "message": "y", "validationErrors": [{"field": "a"}]}, "items"),
    ("UnauthorizedError", {"code": "forbidden", "message": "no"}, "code is unauthorized"),
]


@pytest.mark.parametrize(("schema", "instance", "why"), BROKEN)
def test_broken_payloads_fail_validation(schema: str, instance: Any, why: str) -> None:
    assert _oas.schema_errors(schema, instance), why


def test_check_flags_undocumented_statuses_and_missing_date() -> None:
    body = page_json([], total=0)
    assert _oas.check("GET", "/v2/intents", 200, body, {"date": "x"}) == []
    assert any("Date" in p for p in _oas.check("GET", "/v2/intents", 200, body, {}))
    assert any("not documented" in p for p in _oas.check("GET", "/v2/intents", 409, {}, {}))
    assert _oas.check("POST", "/v2/intents/onramp", 201, onramp_json(), {}) == []
    assert _oas.check("GET", "/v2/intents/onramp", 200, onramp_json(), {}) == []  # {id} route
    assert _oas.check("GET", "/v2/parties/x", 503, {"error": "down"}, {}) == []
