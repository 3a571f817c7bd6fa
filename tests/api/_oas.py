"""Validate a response against recon/api/openapi.json (used by the document and conformance tests).

`check(method, path, status, body, headers)` returns a list of problems (empty = conforms):
the status must be documented for the operation, the body must match its JSON schema
(Draft 2020-12, with format checks), and documented required headers must be present.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import httpx
from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from recon.api import openapi_document

DOC_URI = "urn:recon:openapi"


@cache
def document() -> dict[str, Any]:
    return openapi_document()


@cache
def _registry() -> Registry:
    return Registry().with_resource(
        DOC_URI, Resource(contents=document(), specification=DRAFT202012)
    )


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _resolve(pointer: str) -> Any:
    node: Any = document()
    for token in pointer.lstrip("#/").split("/"):
        node = node[token.replace("~1", "/").replace("~0", "~")]
    return node


@cache
def validator(pointer: str) -> Draft202012Validator:
    """A validator for the schema at `pointer` (``#/components/schemas/Intent`` etc.)."""
    return Draft202012Validator(
        {"$ref": DOC_URI + pointer}, registry=_registry(), format_checker=FormatChecker()
    )


def schema_errors(name: str, instance: Any) -> list[str]:
    """Messages of every violation of components/schemas/<name> by `instance`."""
    v = validator(f"#/components/schemas/{name}")
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(instance)]


def operation(method: str, path: str) -> tuple[str, dict[str, Any]] | None:
    """(template, operation object) for a concrete request path, literal paths first."""
    paths = document()["paths"]
    for template in sorted(paths, key=lambda t: t.count("{")):
        pattern = "^" + re.sub(r"\{[^}]+\}", "[^/]+", template) + "$"
        if re.match(pattern, path) and method.lower() in paths[template]:
            return template, paths[template][method.lower()]
    return None


def check(
    method: str, path: str, status: int, body: Any, headers: httpx.Headers | dict[str, str]
) -> list[str]:
    """Problems of one response against the document (empty list = conforms)."""
    found = operation(method, path)
    if found is None:
        return [f"{method} {path}: not in the document"]
    template, op = found
    where = f"{method} {path} -> {status}"
    responses = op["responses"]
    key = str(status) if str(status) in responses else f"{str(status)[0]}XX"
    if key not in responses:
        return [f"{where}: status not documented (documented: {sorted(responses)})"]
    pointer = f"#/paths/{_escape(template)}/{method.lower()}/responses/{key}"
    response = responses[key]
    if "$ref" in response:
        pointer = response["$ref"]
        response = _resolve(pointer)
    problems = []
    lowered = {k.lower() for k in headers}
    for name, header in response.get("headers", {}).items():
        if header.get("required") and name.lower() not in lowered:
            problems.append(f"{where}: required header {name} missing")
    schema_pointer = pointer + "/content/application~1json/schema"
    for error in validator(schema_pointer).iter_errors(body):
        path_ = "/".join(map(str, error.absolute_path))
        problems.append(f"{where}: {path_}: {error.message}")
    return problems


class ValidatingTransport(httpx.BaseTransport):
    """Wraps a transport; checks every response against the document, keeps the problems."""

    def __init__(self, inner: httpx.BaseTransport, *, owns_inner: bool = True):
        self.inner = inner
        self.owns_inner = owns_inner
        self.problems: list[str] = []
        self.seen: set[tuple[str, str, int]] = set()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        response.read()
        try:
            body = response.json()
        except ValueError:
            body = "<not json>"
        found = operation(request.method, request.url.path)
        template = found[0] if found else request.url.path
        self.seen.add((request.method, template, response.status_code))
        self.problems += check(
            request.method, request.url.path, response.status_code, body, response.headers
        )
        return response

    def close(self) -> None:
        if self.owns_inner:
            self.inner.close()
