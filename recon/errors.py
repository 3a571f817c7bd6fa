"""One exception tree for everything recon raises.

    ReconError                      base; carries the CLI exit code
    ├── UsageError                  bad arguments, config or state on our side       (exit 2)
    │   ├── ConfigError             recon.toml / environment problems
    │   ├── LockedError             another `recon daily` holds the lock
    │   └── SnapshotError           no / unreadable snapshot where one is needed
    ├── StatementError              a statement file we cannot take as it is         (exit 2)
    │   └── StatementParseError     names file, line and field
    ├── ReconciliationError         a run whose checks failed                        (exit 2)
    └── ApiError                    the v2 API (or a BACEN endpoint) failed us        (exit 3)
        ├── ApiConnectionError      network / timeout after retries
        ├── PaginationError         a list walk that could not be made consistent
        └── ApiStatusError          an HTTP error response; carries status, code, request, response
            ├── ValidationError     400, with `validation_errors`
            ├── Unauthorized        401
            ├── NotFound            404
            ├── Conflict            409
            ├── RateLimited         429, with `retry_after`
            └── ServerError         5xx

Misuse errors (UsageError) are separate from I/O errors (ApiError). Messages never contain
the API key: anything that formats a request redacts it first (see `redact`).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiStatusError",
    "ConfigError",
    "Conflict",
    "LockedError",
    "NotFound",
    "PaginationError",
    "RateLimited",
    "ReconError",
    "ReconciliationError",
    "ResponseLimitError",
    "ServerError",
    "SnapshotError",
    "StatementError",
    "StatementParseError",
    "Unauthorized",
    "UsageError",
    "ValidationError",
    "redact",
]

REDACTED = "***"


def redact(text: str, *secrets: str | None) -> str:
    """Return `text` with every non-empty secret replaced by ``***``."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


class ReconError(Exception):
    """Base of every error recon raises on purpose."""

    exit_code: int = 2


class UsageError(ReconError):
    """The caller asked for something that cannot be done as asked."""

    exit_code = 2


class ConfigError(UsageError):
    """recon.toml or the environment is wrong."""


class LockedError(UsageError):
    """Another run holds the lock."""


class SnapshotError(UsageError):
    """A snapshot is missing or unreadable."""


class StatementError(ReconError):
    """A statement file cannot be imported as it is."""

    exit_code = 2


class StatementParseError(StatementError):
    """A malformed statement line; names the file, the line and the field."""

    def __init__(
        self, message: str, *, file: str, line: int | None = None, field: str | None = None
    ):
        where = file if line is None else f"{file}:{line}"
        prefix = f"{where}: " + (f"field {field!r}: " if field else "")
        super().__init__(prefix + message)
        self.file = file
        self.line = line
        self.field = field
        self.detail = message


class ReconciliationError(ReconError):
    """A reconciliation run failed its own checks."""

    exit_code = 2


class ApiError(ReconError):
    """The upstream API failed; raised after retries are exhausted."""

    exit_code = 3


class ApiConnectionError(ApiError):
    """Could not reach the API (connection refused, reset, timeout)."""


class PaginationError(ApiError):
    """A list walk could not be made consistent within its passes."""


class ResponseLimitError(ApiError):
    """A response crossed one of the client's bounds (size, decoded size, JSON depth, page
    size, `total`, the walk's deadline): the server is broken or hostile; nothing is kept."""


class ApiStatusError(ApiError):
    """An HTTP error response from the API.

    `code` and `message` come from either error shape (parties: error/code; intents:
    code/message/validationErrors/details). `request` is "METHOD URL" (never headers).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        code: str | None = None,
        request: str | None = None,
        body: Any = None,
        details: dict[str, Any] | None = None,
    ):
        super().__init__(
            f"{status_code} {code or 'error'}: {message}" + (f" ({request})" if request else "")
        )
        self.status_code = status_code
        self.code = code
        self.message = message
        self.request = request
        self.body = body
        self.details = details or {}


class ValidationError(ApiStatusError):
    """400: the request was refused; `validation_errors` lists [{field, message}]."""

    def __init__(
        self, message: str, *, validation_errors: list[dict[str, str]] | None = None, **kw: Any
    ):
        super().__init__(message, **kw)
        self.validation_errors = validation_errors or []


class Unauthorized(ApiStatusError):
    """401: missing or wrong API key."""


class NotFound(ApiStatusError):
    """404: no such resource in the key's organization/instance."""


class Conflict(ApiStatusError):
    """409: duplicate party or idempotency-key reuse with another body."""


class RateLimited(ApiStatusError):
    """429: too many requests; `retry_after` is the server's hint in seconds, if any."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw: Any):
        super().__init__(message, **kw)
        self.retry_after = retry_after


class ServerError(ApiStatusError):
    """5xx from the API."""
