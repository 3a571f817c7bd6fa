"""One exception tree for everything recon raises, and the exit codes it maps to.

    ReconError                      base; carries the CLI exit code
    ├── UsageError                  bad arguments, config or state on our side       (exit 2)
    │   ├── ConfigError             recon.toml / environment problems
    │   ├── LockedError             another writer holds the data directory's lock
    │   ├── SnapshotError           no / unreadable snapshot where one is needed
    │   ├── NotebookError           a notebook failed to execute
    │   └── FilterError             a review-queue filter that cannot be used
    ├── StatementError              a statement file we cannot take as it is         (exit 2)
    │   └── StatementParseError     names file, line and field
    ├── ReconciliationError         a run that could not be made or trusted          (exit 2)
    │   └── RunChecksFailed         published, but failed its own checks
    └── ApiError                    the v2 API (or a BACEN endpoint) failed us        (exit 3)
        ├── ApiConnectionError      network / timeout after retries
        ├── PaginationError         a list walk that could not be made consistent
        │   └── InconsistentSnapshotError   published with consistent=false
        ├── ResponseShapeError      a 2xx body without the shape the spec promises
        ├── ResponseLimitError      a response that crossed a bound (size, depth, deadline)
        ├── IntentParseError        an intent we cannot take as it is
        └── ApiStatusError          an HTTP error response; carries status, code, request, response
            ├── ValidationError     400, with `validation_errors`
            ├── Unauthorized        401
            ├── NotFound            404
            ├── Conflict            409
            ├── RateLimited         429, with `retry_after`
            └── ServerError         5xx

Misuse errors (UsageError) are separate from I/O errors (ApiError). Messages never contain
the API key: anything that formats a request redacts it first (see `redact`).

Exit codes, defined here and nowhere else (`exit_code_for` maps any exception):

    0   EXIT_OK          finished, nothing above the alert thresholds
    1   EXIT_BREAKS      finished, breaks above the thresholds (never an error)
    2   EXIT_USAGE       usage or input error
    3   EXIT_UPSTREAM    upstream/API failure after retries
    70  EXIT_SOFTWARE    anything unexpected: a bug, out of memory, disk full (sysexits'
                         EX_SOFTWARE); the traceback goes to a log file, one line to stderr
    130 EXIT_INTERRUPTED interrupted (Ctrl-C)
    141 EXIT_PIPE        whoever read the output stopped reading (`recon … | head`): quiet,
                         as a Unix tool ended by SIGPIPE (128 + 13)
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "EXIT_BREAKS",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_PIPE",
    "EXIT_SOFTWARE",
    "EXIT_UPSTREAM",
    "EXIT_USAGE",
    "ApiConnectionError",
    "ApiError",
    "ApiStatusError",
    "AuditBroken",
    "CommitConflict",
    "ConfigError",
    "Conflict",
    "FilterError",
    "InconsistentSnapshotError",
    "IntentParseError",
    "LakeError",
    "LockedError",
    "NotAllowed",
    "NotFound",
    "NotebookError",
    "PaginationError",
    "RateLimited",
    "ReconError",
    "ReconciliationError",
    "ResponseLimitError",
    "ResponseShapeError",
    "RunChecksFailed",
    "ServerError",
    "SnapshotError",
    "StatementError",
    "StatementParseError",
    "Unauthorized",
    "UsageError",
    "ValidationError",
    "exit_code_for",
    "redact",
]

EXIT_OK, EXIT_BREAKS, EXIT_USAGE, EXIT_UPSTREAM = 0, 1, 2, 3
EXIT_SOFTWARE, EXIT_INTERRUPTED, EXIT_PIPE = 70, 130, 141

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


class LakeError(UsageError):
    """A remote data directory (object storage) cannot be used as asked: a bad URI, no
    credentials, an endpoint or bucket out of reach, a commit the storage refused."""


class CommitConflict(LakeError):
    """Another writer's commit removed a file a Delta commit read or removes: nothing of
    the commit landed; the table is to be read again and the work redone (recon.lake)."""


class SnapshotError(UsageError):
    """A snapshot is missing or unreadable."""


class NotebookError(UsageError):
    """A notebook failed to execute; the message names the notebook and the cell's error."""


class FilterError(UsageError):
    """A query parameter of the review queue that cannot be used (shown, nothing done)."""


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
        # One line, bounded: a reason may quote a damaged file's content.
        message = " ".join(message.split())
        message = message if len(message) <= 500 else message[:500] + "..."
        super().__init__(prefix + message)
        self.file = file
        self.line = line
        self.field = field
        self.detail = message


class NotAllowed(UsageError):
    """The actor's role does not allow a review action (the review app answers 403)."""


class AuditBroken(ReconError):
    """The audit log does not verify: nothing acts on it or appends to it (exit 2)."""

    exit_code = 2


class ReconciliationError(ReconError):
    """A reconciliation run could not be made, or failed its own checks."""

    exit_code = 2


class RunChecksFailed(ReconciliationError):
    """The run was published but failed its own checks (e.g. control totals do not balance).

    `result` is the published run (a `recon.reconciliation.runs.RunResult`), so a report can still
    show what went wrong.
    """

    def __init__(self, message: str, result: Any):
        super().__init__(message)
        self.result = result


class ApiError(ReconError):
    """The upstream API failed; raised after retries are exhausted."""

    exit_code = 3


class ApiConnectionError(ApiError):
    """Could not reach the API (connection refused, reset, timeout)."""


class PaginationError(ApiError):
    """A list walk could not be made consistent within its passes."""


class InconsistentSnapshotError(PaginationError):
    """The walk could not be made consistent; the snapshot is published with consistent:false.

    `result` is the published snapshot (a `recon.extraction.snapshot.SnapshotResult`).
    """

    def __init__(self, result: Any):
        m = result.manifest
        super().__init__(
            f"the list did not stand still: after {m['passes']} passes the id set was not "
            f"stable ({'; '.join(m.get('drift') or []) or 'no detail'}); snapshot published "
            f"with consistent=false at {result.path}"
        )
        self.result = result


class ResponseShapeError(ApiError, ValueError):
    """A 2xx response whose body does not have the shape the spec promises.

    ``field`` is the dotted path of the offending field (e.g. ``intents[3].pixInfo.amountCents``).
    It is also a ``ValueError`` so generic callers that validate data can catch it as such.
    """

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(f"malformed API response: {field}: {message}" if field else message)
        self.field = field


class IntentParseError(ApiError):
    """The API returned an intent we cannot take as it is (exit 3: upstream data problem)."""

    def __init__(self, message: str, *, intent_id: str | None, field: str, where: str = ""):
        who = f"intent {intent_id}" if intent_id else "intent without an id"
        super().__init__(f"{who}{where}: field {field!r}: {message}")
        self.intent_id = intent_id
        self.field = field


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


def exit_code_for(exc: BaseException) -> int:
    """The exit code of a command that ended with `exc` (see the table above)."""
    if isinstance(exc, ReconError):
        return exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    return EXIT_SOFTWARE
