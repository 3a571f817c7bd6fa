"""What the emulator answers: responses, HTTP errors in each family's shape, body parsing."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from recon.sandbox import validation as v


class EmulatorResponse:
    """What `Emulator.handle` returns: status, JSON-able body (None = empty), headers.

    List pages are built directly as JSON text (`raw`); `body` then parses it on first access,
    so the HTTP shells never pay for a dict they only serialize again.
    """

    __slots__ = ("_body", "_raw", "headers", "status")

    def __init__(
        self,
        status: int,
        body: Any = None,
        headers: dict[str, str] | None = None,
        *,
        raw: bytes | None = None,
    ):
        self.status = status
        self.headers = headers if headers is not None else {}
        self._body = body
        self._raw = raw

    @property
    def body(self) -> Any:
        """The JSON body as Python objects (None for an empty body)."""
        if self._body is None and self._raw is not None:
            self._body = json.loads(self._raw)
        return self._body

    def content(self) -> bytes:
        """The body as JSON bytes (empty for None)."""
        if self._raw is not None:
            return self._raw
        if self._body is None:
            return b""
        return json.dumps(self._body, separators=(",", ":")).encode()

    def __repr__(self) -> str:
        return f"EmulatorResponse(status={self.status}, body={self.body!r})"


class _Raw:
    """A payload that is already JSON text (held, not copied)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _HttpError(Exception):
    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        errors: Sequence[v.FieldError] = (),
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.errors = list(errors)
        self.details = details
        self.headers = headers or {}


def _field_error(err: v.FieldError) -> _HttpError:
    return _HttpError(400, err.code, f"{err.field}: {err.message}", errors=[err])


def _int_param(
    query: Mapping[str, str],
    name: str,
    default: int,
    lo: int,
    hi: int | None,
    errors: list[v.FieldError],
) -> int:
    raw = query.get(name)
    if raw is None:
        return default
    text = raw.strip()
    if not (text.isascii() and text.lstrip("-").isdigit()):
        errors.append(v.FieldError(name, "must be an integer"))
        return default
    # cap the digits before int(): a huge string must not cost quadratic time
    value = int(text) if len(text) <= 18 else 10**18
    if value < lo or (hi is not None and value > hi):
        bound = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        errors.append(v.FieldError(name, f"must be {bound}"))
        return default
    return value


def _json_body(hdrs: Mapping[str, str], raw: bytes) -> dict[str, Any]:
    ctype = hdrs.get("content-type", "")
    if ctype.split(";")[0].strip().lower() != "application/json":
        raise _HttpError(400, "unsupported_content_type", "Content-Type must be application/json")
    try:
        body = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):  # bad UTF-8 or JSON, 4,300+ digit numbers, nesting
        raise _HttpError(400, "invalid_json", "the request body is not valid JSON") from None
    if not isinstance(body, dict):
        raise _HttpError(400, "invalid_json", "the request body must be a JSON object")
    return body


def _error_body(shape: str, exc: _HttpError) -> dict[str, Any]:
    if shape == "parties":
        return {"error": exc.message, "code": exc.code}
    out: dict[str, Any] = {
        "code": exc.code,
        "message": exc.message,
        "validationErrors": [{"field": e.field, "message": e.message} for e in exc.errors],
    }
    if exc.details:
        out["details"] = exc.details
    return out
