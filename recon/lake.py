"""Delta Lake tables on object storage: what a remote data directory (`--data s3://…`) is made of.

A data directory given as a URI (``s3://bucket/prefix``, ``gs://…``, ``abfs://…``) keeps
recon's tables as Delta Lake tables under the prefix (docs/object-storage.md). On object
storage a folder cannot be renamed into place (S3 copies then deletes), so
publication is a Delta commit instead: the data files are written first under fresh names,
then one log entry ``_delta_log/<version>.json`` names them, written with a conditional PUT
(``If-None-Match: *``) that only one writer can win. A reader sees a commit whole or not at
all; a writer that loses the race re-reads the table and tries again (appends always go
through, a MERGE is re-run against what the winner wrote), so two writers at once never lose
a commit; a writer that dies between its data files and its commit leaves files no commit
names, which no reader ever lists.

This module holds only the primitives (no recon table knows about another):

- `Location` / `parse`: a URI checked once (scheme, bucket, prefix); `scheme_of`: whether a
  data directory's text names a scheme at all (then it must parse: `s3:/x` is a mistake,
  never a local folder); `storage_options` from the environment; `Timeouts` (how long a
  request is waited for, how often it is tried again); `check` (credentials, reachability:
  a refused connection fails in milliseconds, an endpoint that never answers within the
  timeouts, and a server that is not S3 is named for what it answered).
- `Table`: one Delta table under the location: `append` (with partition values and commit
  metadata), `merge_new` (insert the rows whose key is not there yet: idempotent imports),
  `commits` (the history with each commit's metadata), `files` (the committed files, by
  partition), `dataset` (a pyarrow dataset over an explicit committed file list, read with
  pyarrow's own S3 client: DuckDB scans it as an Arrow object, no DuckDB extension and no
  jar is ever needed).
- `Table.replace_files` (some committed files replaced by new rows as one commit: remove +
  add, what `recon erase` rewrites) and `Table.purge_removed` (the files such commits
  removed deleted for good and their column statistics dropped from the log: a VACUUM of
  those files alone, see its doc).

S3 credentials and endpoint come from the usual variables (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, AWS_ENDPOINT_URL, AWS_ALLOW_HTTP for a
plain-HTTP endpoint such as a local test server) or a profile (AWS_PROFILE).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import unquote

from recon.errors import CommitConflict, ConfigError, LakeError

if TYPE_CHECKING:  # pyarrow loads where a table is read or written: recon.config stays light
    import pyarrow as pa
    import pyarrow.dataset as ds

__all__ = [
    "SCHEMES",
    "CommitConflict",
    "DataFile",
    "LakeError",
    "Location",
    "Purged",
    "Table",
    "Timeouts",
    "check",
    "configure",
    "is_uri",
    "parse",
    "scheme_of",
    "storage_options",
    "timeouts",
    "with_views",
]

# URI scheme -> the store it names
SCHEMES = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gs",
    "gcs": "gs",
    "abfs": "abfs",
    "abfss": "abfs",
    "az": "abfs",
}
_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://(.*)$")
# a text that starts like a URI of a known store (or file:), however it goes on
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_BUCKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{1,254}$")
# a commit that lost the race to another writer is re-run this many times (MERGE) before
# the import gives up and says so
MERGE_ATTEMPTS = 8
# commit metadata key under which recon keeps what a commit published (a snapshot manifest)
METADATA_KEY = "recon"
# log objects read at once when a purge reads a table's whole log
_LOG_READERS = 16
_COMMIT_ENTRY = re.compile(r"(?:^|/)\d{20}\.json$")
_CHECKPOINT = re.compile(r"(?:^|/)(\d{20})\.checkpoint\.parquet$")


@dataclass(frozen=True)
class DataFile:
    """A committed data file of a table."""

    path: str  # as the log names it, relative to the table: its object's key below the table
    uri: str
    partition: Mapping[str, Any]
    size: int


@dataclass
class Purged:
    """What `Table.purge_removed` did."""

    deleted: list[str] = field(default_factory=list)  # URIs of the data files deleted
    log_entries: int = 0  # log objects rewritten (commit entries, checkpoints, checksums)


@dataclass(frozen=True)
class Location:
    """A checked data-directory URI: ``<scheme>://<bucket>/<prefix>``."""

    scheme: str  # as written (s3, gs, abfss, ...)
    store: str  # s3 | gs | abfs
    bucket: str
    prefix: str  # no leading or trailing slash; may be empty

    @property
    def uri(self) -> str:
        return f"{self.scheme}://{self.bucket}" + (f"/{self.prefix}" if self.prefix else "")

    def join(self, *parts: str) -> str:
        """The URI of a path under the location."""
        return "/".join([self.uri, *(p.strip("/") for p in parts if p)])

    def key(self, *parts: str) -> str:
        """``bucket/prefix/parts`` (a path for pyarrow's file systems)."""
        return "/".join(p for p in (self.bucket, self.prefix, *parts) if p)


def is_uri(text: str | os.PathLike[str]) -> bool:
    """Whether `text` is written as a URI (``scheme://…``) rather than a local path."""
    return isinstance(text, str) and bool(_URI.match(text))


def scheme_of(text: str | os.PathLike[str]) -> str | None:
    """The scheme a data directory's text names (lower case), or None for a local path.

    Any ``name://`` names one, and so does a known store's or ``file`` followed by a colon
    however it goes on (``s3:/x``, ``gs:bucket``, ``file:data``): such a text must parse as
    a URI, never become a local folder of that name. A relative folder whose name has a
    colon stays writable as ``./s3:x``."""
    if not isinstance(text, str):
        return None
    match = _SCHEME.match(text.strip())
    if not match:
        return None
    scheme = match.group(1).lower()
    if _URI.match(text.strip()) or scheme in SCHEMES or scheme == "file":
        return scheme
    return None


def parse(uri: str) -> Location:
    """A data-directory URI checked: a known scheme, a bucket, a clean prefix."""
    match = _URI.match(uri.strip())
    if not match:
        scheme = scheme_of(uri) or "s3"
        raise LakeError(
            f"{uri!r} is not a URI: write {scheme}://bucket/prefix (or ./{uri} for a local "
            "folder of that name)"
        )
    scheme, rest = match.group(1).lower(), match.group(2)
    store = SCHEMES.get(scheme)
    if store is None:
        known = ", ".join(f"{s}://" for s in sorted(SCHEMES))
        raise LakeError(f"unsupported data directory scheme {scheme}:// in {uri!r}: use {known}")
    bucket, _, prefix = rest.partition("/")
    prefix = prefix.strip("/")
    if not _BUCKET.match(bucket):
        raise LakeError(f"{uri!r}: {bucket!r} is not a bucket name")
    parts = prefix.split("/") if prefix else []
    if any(p in ("", ".", "..") for p in parts) or "?" in prefix or "#" in prefix:
        raise LakeError(f"{uri!r}: the prefix must be a plain path (no '.', '..', '//', ? or #)")
    return Location(scheme, store, bucket, prefix)


def _env(*names: str) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


@dataclass(frozen=True)
class Timeouts:
    """How long one request to object storage is waited for, and how often it is tried
    again: a connection not made in `connect` seconds, or no answer for `read` seconds,
    fails the attempt; `retries` more attempts follow, then the command fails with one line.
    So an endpoint that accepts connections and never answers costs at most
    ``(retries + 1) * (connect + read)`` seconds per request (20 s by default)."""

    connect: float = 5.0
    read: float = 10.0
    retries: int = 1

    @property
    def attempts(self) -> int:
        return self.retries + 1


# recon.toml's [storage] key -> (environment variable, Timeouts field); the variable wins
TIMEOUT_SETTINGS = {
    "connect_timeout": ("RECON_STORAGE_CONNECT_TIMEOUT", "connect"),
    "read_timeout": ("RECON_STORAGE_READ_TIMEOUT", "read"),
    "retries": ("RECON_STORAGE_RETRIES", "retries"),
}
_MAX_RETRIES = 10
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")
_configured: dict[str, Any] = {}


def configure(section: Mapping[str, Any]) -> None:
    """Take recon.toml's ``[storage]`` section (connect_timeout, read_timeout: seconds, or
    a text such as "500ms", "2s", "1m"; retries: a count). Checked at once: a wrong key or
    value is a ConfigError naming it."""
    if not isinstance(section, Mapping):
        raise ConfigError(f"recon.toml: [storage] must be a table, not {section!r}")
    unknown = sorted(set(section) - set(TIMEOUT_SETTINGS))
    if unknown:
        known = ", ".join(TIMEOUT_SETTINGS)
        raise ConfigError(f"recon.toml [storage]: unknown key {unknown[0]!r} (known: {known})")
    for key, value in section.items():
        _setting(key, value, f"recon.toml [storage] {key}")
    _configured.clear()
    _configured.update(section)


def timeouts() -> Timeouts:
    """The timeouts in force: each from its environment variable, else recon.toml's
    ``[storage]`` (see `configure`), else the default."""
    values: dict[str, Any] = {}
    for key, (variable, name) in TIMEOUT_SETTINGS.items():
        raw = os.environ.get(variable)
        if raw is not None and raw.strip():
            values[name] = _setting(key, raw, variable)
        elif key in _configured:
            values[name] = _setting(key, _configured[key], f"recon.toml [storage] {key}")
    return Timeouts(**values)


def _setting(key: str, value: Any, where: str) -> float | int:
    """A timeout in seconds (> 0) or a retry count (0 to _MAX_RETRIES), else ConfigError."""
    if key == "retries":
        text = str(value).strip()
        if isinstance(value, bool) or not text.isdigit() or int(text) > _MAX_RETRIES:
            raise ConfigError(f"{where}: {value!r} is not a retry count (0 to {_MAX_RETRIES})")
        return int(text)
    match = None if isinstance(value, bool) else _DURATION.match(str(value))
    seconds = 0.0
    if match:
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0}[match.group(2) or "s"]
        seconds = float(match.group(1)) * scale
    if not 0 < seconds <= 3600:
        raise ConfigError(
            f"{where}: {value!r} is not a timeout (seconds, or a text like 500ms / 2s / 1m; "
            "more than 0, at most an hour)"
        )
    return seconds


def _millis(seconds: float) -> str:
    return f"{max(1, round(seconds * 1000))}ms"


def _client_options(t: Timeouts) -> dict[str, str]:
    """deltalake's (object_store's) client options for the timeouts: `timeout` bounds a
    whole request there, and no retry starts once `retry_timeout` has passed."""
    return {
        "connect_timeout": _millis(t.connect),
        "timeout": _millis(t.read),
        "max_retries": str(t.retries),
        "retry_timeout": _millis(t.attempts * (t.connect + t.read)),
    }


def endpoint_of(loc: Location) -> str:
    """The endpoint requests for `loc` go to (AWS's own unless one is set)."""
    if loc.store == "s3":
        options = storage_options(loc)
        return (
            options.get("AWS_ENDPOINT_URL") or f"https://s3.{options['AWS_REGION']}.amazonaws.com"
        )
    return {"gs": "https://storage.googleapis.com", "abfs": "Azure Blob Storage"}[loc.store]


def storage_options(loc: Location) -> dict[str, str]:
    """The deltalake `storage_options` for a location, from the environment.

    S3: the endpoint, region, keys and AWS_ALLOW_HTTP as set; commits use S3's conditional
    PUT (deltalake's default since S3 supports If-None-Match), so no lock table is needed.
    gs:// and abfs:// read their usual variables (GOOGLE_APPLICATION_CREDENTIALS,
    AZURE_STORAGE_ACCOUNT_NAME, ...) inside deltalake itself.
    Every store is given the timeouts in force (`timeouts`).
    """
    options = _client_options(timeouts())
    if loc.store != "s3":
        return options
    pairs = {
        "AWS_ACCESS_KEY_ID": ("AWS_ACCESS_KEY_ID",),
        "AWS_SECRET_ACCESS_KEY": ("AWS_SECRET_ACCESS_KEY",),
        "AWS_SESSION_TOKEN": ("AWS_SESSION_TOKEN",),
        "AWS_REGION": ("AWS_REGION", "AWS_DEFAULT_REGION"),
        "AWS_ENDPOINT_URL": ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
        "AWS_PROFILE": ("AWS_PROFILE",),
    }
    for key, names in pairs.items():
        value = _env(*names)
        if value:
            options[key] = value
    options.setdefault("AWS_REGION", "us-east-1")
    if _truthy(os.environ.get("AWS_ALLOW_HTTP")):
        options["AWS_ALLOW_HTTP"] = "true"
    return options


def _credentials_problem(loc: Location) -> str | None:
    """Why S3 cannot be signed for, or None (keys, a profile, or a role's token file)."""
    if loc.store != "s3":
        return None
    key, secret = _env("AWS_ACCESS_KEY_ID"), _env("AWS_SECRET_ACCESS_KEY")
    if key and not secret:
        return "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not"
    if secret and not key:
        return "AWS_SECRET_ACCESS_KEY is set but AWS_ACCESS_KEY_ID is not"
    if key and secret:
        return None
    others = (
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
        "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    )
    if _env(*others):
        return None
    shared = _env("AWS_SHARED_CREDENTIALS_FILE") or os.path.expanduser("~/.aws/credentials")
    if os.path.isfile(shared):
        return None
    return (
        "no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, "
        "or run where a role provides AWS_WEB_IDENTITY_TOKEN_FILE / AWS_CONTAINER_CREDENTIALS_*)"
    )


def arrow_filesystem(loc: Location) -> Any:
    """A pyarrow file system for the location (pyarrow's own S3 client for s3://; fsspec's
    gcsfs / adlfs for the others, when installed)."""
    import pyarrow.fs as pafs

    if loc.store == "s3":
        options = storage_options(loc)
        endpoint = options.get("AWS_ENDPOINT_URL")
        t = timeouts()
        kwargs: dict[str, Any] = {
            "region": options.get("AWS_REGION"),
            "connect_timeout": t.connect,
            "request_timeout": t.read,
            "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=t.attempts),
        }
        if "AWS_ACCESS_KEY_ID" in options:
            kwargs["access_key"] = options["AWS_ACCESS_KEY_ID"]
            kwargs["secret_key"] = options.get("AWS_SECRET_ACCESS_KEY")
            kwargs["session_token"] = options.get("AWS_SESSION_TOKEN")
        if endpoint:
            scheme, _, host = endpoint.partition("://")
            kwargs["endpoint_override"] = host.rstrip("/") if host else endpoint
            kwargs["scheme"] = scheme if host else "https"
        return pafs.S3FileSystem(**kwargs)
    try:
        import fsspec
    except ImportError as exc:  # pragma: no cover - fsspec comes with the lake extra
        raise LakeError(
            f"{loc.uri}: reading {loc.scheme}:// needs fsspec (pip install 'pixrecon[lake]')"
        ) from exc
    protocol = {"gs": "gcs", "abfs": "abfs"}[loc.store]
    try:
        fs = fsspec.filesystem(protocol)
    except (ImportError, ValueError) as exc:
        package = {"gs": "gcsfs", "abfs": "adlfs"}[loc.store]
        raise LakeError(f"{loc.uri}: reading {loc.scheme}:// needs {package} installed") from exc
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs))


_checked: set[str] = set()
_checked_guard = threading.Lock()


def check(loc: Location) -> None:
    """Credentials present and the bucket reachable (once per process and location).

    Raises LakeError with one line: no credentials, an endpoint that refuses the connection
    or does not answer within the timeouts (naming it), a server that is not S3 (what it
    answered), a bucket that does not exist or refuses us. Cheap: one HEAD-like request.
    """
    with _checked_guard:
        if loc.uri in _checked:
            return
    problem = _credentials_problem(loc)
    if problem:
        raise LakeError(f"{loc.uri}: {problem}")
    if loc.store == "s3":
        import pyarrow.fs as pafs

        fs = arrow_filesystem(loc)
        try:
            info = fs.get_file_info(loc.bucket)
        except OSError as exc:
            raise LakeError(f"{loc.uri}: {_unreachable(loc, exc)}") from None
        if info.type == pafs.FileType.NotFound:
            seen = _not_s3(loc)
            raise LakeError(f"{loc.uri}: {seen or f'bucket {loc.bucket!r} does not exist'}")
    with _checked_guard:
        _checked.add(loc.uri)


def _unreachable(loc: Location, exc: OSError) -> str:
    """Why the bucket could not be reached, naming the endpoint (and the timeouts, when
    it accepted the connection and never answered)."""
    text = _first_line(exc)
    where = endpoint_of(loc)
    if "curlCode: 28" in text or "Timeout was reached" in text:
        t = timeouts()
        return (
            f"{where} did not answer (waited {t.connect:g} s to connect, {t.read:g} s for a "
            f"reply, {t.attempts} attempts); if it is only slow, raise "
            "RECON_STORAGE_READ_TIMEOUT or read_timeout in recon.toml's [storage]"
        )
    return f"cannot reach the bucket at {where}: {text}"


def _not_s3(loc: Location) -> str | None:
    """What a custom endpoint that said "no such bucket" to a HEAD answers to a listing of
    it, when that is not S3's XML error (a web server, a proxy's page); None when it is S3
    (or the endpoint is AWS's own)."""
    options = storage_options(loc)
    where = options.get("AWS_ENDPOINT_URL")
    if not where:
        return None
    import httpx

    t = timeouts()
    url = f"{where.rstrip('/')}/{loc.bucket}"
    try:
        response = httpx.get(
            url,
            params={"list-type": "2", "max-keys": "0"},
            timeout=httpx.Timeout(t.read, connect=t.connect),
        )
    except httpx.HTTPError as exc:
        return f"{where} answered HEAD /{loc.bucket} with 404, then GET failed: {_first_line(exc)}"
    head = response.content[:4096]
    if b"<Error>" in head and b"<Code>" in head:
        return None  # S3's own error document: the bucket is missing
    kind = response.headers.get("content-type", "no content type")
    body = " ".join(response.text[:80].split()) or "an empty body"
    return (
        f"{where} is not an S3 endpoint: GET /{loc.bucket} answered HTTP "
        f"{response.status_code} ({kind}) with {body!r}, not S3's XML; check AWS_ENDPOINT_URL"
    )


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _first_line(exc: BaseException) -> str:
    text = " ".join(_ANSI.sub("", str(exc)).split())
    return text[:300] or type(exc).__name__


def _is_conflict(exc: BaseException) -> bool:
    from deltalake.exceptions import CommitFailedError

    return isinstance(exc, CommitFailedError)


class Table:
    """One Delta table under a location (``<location>/<name>``)."""

    def __init__(self, loc: Location, name: str):
        self.loc = loc
        self.name = name.strip("/")
        self.uri = loc.join(self.name)

    def __repr__(self) -> str:
        return f"Table({self.uri!r})"

    @property
    def options(self) -> dict[str, str]:
        return storage_options(self.loc)

    def load(self) -> Any:
        """The table at its latest committed version, or None when nothing was committed."""
        from deltalake import DeltaTable
        from deltalake.exceptions import TableNotFoundError

        try:
            return DeltaTable(self.uri, storage_options=self.options)
        except TableNotFoundError:
            return None
        except OSError as exc:
            raise LakeError(f"{self.uri}: cannot read the table: {_first_line(exc)}") from None

    def version(self) -> int | None:
        table = self.load()
        return None if table is None else int(table.version())

    def append(
        self,
        data: pa.Table | pa.RecordBatchReader,
        *,
        partition_by: list[str] | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Append rows as one commit; returns the table's version after it (ours, or a
        later one when another writer committed meanwhile).

        The data files are written first, then the commit names them: a failure before the
        commit leaves only files no reader lists. Appends never conflict with each other
        (a concurrent commit moves ours to the next version)."""
        return self._write(data, "append", partition_by, None, metadata)

    def replace_partition(
        self,
        data: pa.Table | pa.RecordBatchReader,
        column: str,
        value: str,
        *,
        metadata: Mapping[str, Any] | None = None,
    ) -> int:
        """Make the partition ``column = value`` hold exactly `data` (rows of that partition
        only), as one commit that removes whatever it held and adds the new files (Delta's
        replaceWhere); returns the table's version after it.

        What a writer publishes under a key of its own (a run's rows, partitioned by its
        id) goes through here, so running it again after a cut, at any commit, replaces the
        partition whole: never two copies of it. Other partitions are not touched, and an
        append to them meanwhile moves ours to the next version."""
        literal = value.replace("'", "''")
        return self._write(data, "overwrite", [column], f"{column} = '{literal}'", metadata)

    def _write(
        self,
        data: pa.Table | pa.RecordBatchReader,
        mode: Literal["append", "overwrite"],
        partition_by: list[str] | None,
        predicate: str | None,
        metadata: Mapping[str, Any] | None,
    ) -> int:
        from deltalake import write_deltalake
        from deltalake.transaction import CommitProperties, PostCommitHookProperties

        props = CommitProperties(
            custom_metadata={METADATA_KEY: json.dumps(dict(metadata or {}), sort_keys=True)},
            max_commit_retries=100,
        )
        # deltalake types a predicate as an overwrite's only; schema_mode "merge": a column a
        # schema gained (statement_lines.fee_cents) is added to a table written without it,
        # whose older files read it as NULL
        options: dict[str, Any] = {"mode": mode, "predicate": predicate, "schema_mode": "merge"}
        try:
            write_deltalake(
                self.uri,
                data,
                partition_by=partition_by,
                storage_options=self.options,
                configuration=_TABLE_CONFIG,
                commit_properties=props,
                # commit entries are kept: a snapshot's manifest lives in its commit
                post_commithook_properties=PostCommitHookProperties(cleanup_expired_logs=False),
                **options,
            )
        except Exception as exc:
            raise self._commit_error(exc, "replaced the same rows meanwhile; run again") from None
        version = self.version()
        assert version is not None
        return version

    def merge_new(
        self,
        data: pa.Table,
        keys: Iterable[str],
        *,
        metadata: Mapping[str, Any] | None = None,
        on_conflict: Callable[[int], None] | None = None,
    ) -> int:
        """Insert the rows of `data` whose `keys` are not in the table yet (a MERGE with
        only ``WHEN NOT MATCHED THEN INSERT``); returns the rows inserted.

        The MERGE reads the table, so a writer that committed in between makes ours
        conflict: it is re-run against the new version (at most MERGE_ATTEMPTS times), and
        rows the other writer stored are not stored twice. An empty `data` commits nothing.
        """
        from deltalake import DeltaTable
        from deltalake.transaction import CommitProperties, PostCommitHookProperties

        if data.num_rows == 0:
            return 0
        keys = list(keys)
        for attempt in range(MERGE_ATTEMPTS):
            table = self.load()
            if table is None:
                # never "create by appending": two first imports at once would both append
                # (appends never conflict) and store every row twice. Create it empty, then
                # MERGE into it like any later import.
                self.create(data.schema)
                continue
            assert isinstance(table, DeltaTable)
            predicate = " AND ".join(f"t.{k} = s.{k}" for k in keys)
            props = CommitProperties(
                custom_metadata={METADATA_KEY: json.dumps(dict(metadata or {}), sort_keys=True)},
                max_commit_retries=0,
            )
            try:
                result = (
                    table.merge(
                        data,
                        predicate,
                        source_alias="s",
                        target_alias="t",
                        merge_schema=True,  # a column the schema gained joins an older table
                        commit_properties=props,
                        post_commithook_properties=PostCommitHookProperties(
                            cleanup_expired_logs=False
                        ),
                    )
                    .when_not_matched_insert_all()
                    .execute()
                )
            except Exception as exc:
                if not _is_conflict(exc):
                    if isinstance(exc, OSError):
                        raise LakeError(
                            f"{self.uri}: the merge failed: {_first_line(exc)}"
                        ) from None
                    raise
                if on_conflict is not None:
                    on_conflict(attempt)
                time.sleep(min(0.05 * 2**attempt, 1.0))
                continue
            return int(result.get("num_target_rows_inserted", 0) or 0)
        raise LakeError(
            f"{self.uri}: {MERGE_ATTEMPTS} concurrent writers in a row won the commit; run again"
        )

    def create(self, schema: pa.Schema, partition_by: list[str] | None = None) -> None:
        """Create the table empty (version 0) unless it exists; two writers creating it at
        once are fine (one commit wins, the other finds the table)."""
        from deltalake import DeltaTable

        try:
            DeltaTable.create(
                self.uri,
                schema,
                mode="ignore",
                partition_by=partition_by,
                configuration=_TABLE_CONFIG,
                storage_options=self.options,
            )
        except Exception as exc:
            if self.load() is None:
                if isinstance(exc, OSError):
                    raise LakeError(f"{self.uri}: cannot create: {_first_line(exc)}") from None
                raise

    def commits(self, after: int = -1, table: Any = None) -> list[dict[str, Any]]:
        """The commits after version `after` (default: every one), oldest first:
        {"version", "timestamp", "operation", "recon"} where "recon" is the metadata the
        writer attached (decoded; {} for commits by others). Each commit is one small object
        to read, so a caller that remembers what it read asks only for the newer ones."""
        table = table if table is not None else self.load()
        if table is None:
            return []
        newer = int(table.version()) - after
        if newer <= 0:
            return []
        try:
            history = table.history(newer if after >= 0 else None)
        except OSError as exc:
            raise LakeError(f"{self.uri}: cannot read the history: {_first_line(exc)}") from None
        out = []
        for entry in history:
            raw = entry.get(METADATA_KEY)
            try:
                meta = json.loads(raw) if isinstance(raw, str) else (raw or {})
            except ValueError:
                meta = {}
            out.append(
                {
                    "version": int(entry.get("version", -1)),
                    "timestamp": entry.get("timestamp"),
                    "operation": entry.get("operation"),
                    METADATA_KEY: meta if isinstance(meta, dict) else {},
                }
            )
        return sorted((c for c in out if c["version"] > after), key=lambda c: c["version"])

    def files(self, table: Any = None) -> list[tuple[str, dict[str, str | None], int]]:
        """The committed data files: (uri, partition values, size in bytes)."""
        return sorted((f.uri, dict(f.partition), f.size) for f in self.data_files(table))

    def data_files(self, table: Any = None) -> list[DataFile]:
        """The committed data files (of `table`, a loaded version, else the latest)."""
        import pyarrow as pa

        table = table if table is not None else self.load()
        if table is None:
            return []
        actions = pa.table(table.get_add_actions(flatten=True)).to_pylist()
        out = []
        for action in actions:
            parts = {
                k.removeprefix("partition."): v
                for k, v in action.items()
                if k.startswith("partition.")
            }
            path = str(action["path"])
            out.append(
                DataFile(
                    path if is_uri(path) else unquote(path),
                    self._file_uri(path),
                    parts,
                    int(action.get("size_bytes") or 0),
                )
            )
        return sorted(out, key=lambda f: f.uri)

    def _file_uri(self, path: str) -> str:
        return path if is_uri(path) else f"{self.uri}/{unquote(path)}"

    def files_where(
        self, files: Sequence[DataFile], schema: pa.Schema, where: ds.Expression
    ) -> set[str]:
        """The paths of those of `files` that hold a row `where` selects (one scan of their
        columns `where` reads, filtered with pushdown)."""
        if not files:
            return set()
        paths = {_fs_path(f.uri): f.path for f in files}
        try:
            found = self.dataset([f.uri for f in files], schema).to_table(
                columns=["__filename"], filter=where
            )
        except OSError as exc:
            raise LakeError(f"{self.uri}: cannot read the table: {_first_line(exc)}") from None
        return {paths[name] for name in found.column("__filename").unique().to_pylist()}

    def read_file(self, file: DataFile) -> pa.Table:
        """One committed file's rows, with the file's own schema (deltalake writes texts as
        Arrow string views: read as plain strings and binaries, as recon's schemas type
        them)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        fs = arrow_filesystem(self.loc)
        try:
            with fs.open_input_file(_fs_path(file.uri)) as handle:
                rows = pq.ParquetFile(handle).read()
        except OSError as exc:
            raise LakeError(f"{file.uri}: cannot read: {_first_line(exc)}") from None
        plain = pa.schema([f.with_type(_without_views(f.type)) for f in rows.schema])
        return rows if plain.equals(rows.schema) else rows.cast(plain)

    def replace_files(
        self,
        table: Any,
        replacements: Sequence[tuple[DataFile, pa.Table]],
        *,
        metadata: Mapping[str, Any] | None = None,
        write_options: Mapping[str, Any] | None = None,
    ) -> list[DataFile]:
        """Replace committed files of `table` (the version they were read from) by new rows,
        as one commit: each new file is uploaded beside the one it replaces (same partition),
        then one commit removes the old files and adds the new ones. Returns the new files.

        A reader sees the old files or the new ones, never both and never neither. Another
        writer's commit in between moves ours to the next version (appends, MERGEs that
        removed nothing of ours), unless it removed one of the files we replace: then
        nothing is committed and CommitConflict says to read the table again. The files
        uploaded for a commit that failed are deleted again (they hold the other rows of
        the files they were to replace), unless the table's latest version lists them: a
        commit whose answer was lost may have landed all the same.
        """
        import pyarrow.parquet as pq
        from deltalake.transaction import (
            AddAction,
            CommitProperties,
            PostCommitHookProperties,
            RemoveAction,
        )

        fs = arrow_filesystem(self.loc)
        now = int(time.time() * 1000)
        actions: list[Any] = []
        written: list[DataFile] = []
        options = dict(write_options or {"compression": "zstd"})
        try:
            for old, rows in replacements:
                folder = "" if is_uri(old.path) else old.path.rpartition("/")[0]
                name = f"part-00000-{uuid.uuid4()}-c000.{options.get('compression', 'none')}"
                path = f"{folder}/{name}.parquet" if folder else f"{name}.parquet"
                key = self.loc.key(self.name, path)
                with fs.open_output_stream(key) as stream:  # no folder marker objects
                    pq.write_table(rows, stream, **options)
                size = int(fs.get_file_info(key).size or 0)
                parts = {k: None if v is None else str(v) for k, v in old.partition.items()}
                written.append(DataFile(path, f"{self.uri}/{path}", parts, size))
                actions.append(RemoveAction(old.path, True, now, old.size, parts))
                actions.append(AddAction(path, size, parts, now, True, _file_stats(rows)))
        except OSError as exc:
            self._forget_uploads(fs, written)
            raise LakeError(f"{self.uri}: cannot upload a file: {_first_line(exc)}") from None
        props = CommitProperties(
            custom_metadata={METADATA_KEY: json.dumps(dict(metadata or {}), sort_keys=True)},
            max_commit_retries=100,
        )
        try:
            table.create_write_transaction(
                actions,
                "append",
                table.schema(),
                partition_by=list(table.metadata().partition_columns) or None,
                commit_properties=props,
                post_commithook_properties=PostCommitHookProperties(cleanup_expired_logs=False),
            )
        except Exception as exc:
            if self._forget_uploads(fs, written):
                return written  # the commit landed, its answer did not
            raise self._commit_error(exc, "changed these files meanwhile") from None
        return written

    def _commit_error(self, exc: Exception, conflict: str) -> Exception:
        """What a failed commit raises: CommitConflict when another writer's commit
        conflicts with ours ("another writer <conflict>"), LakeError for the store's own
        failure (one line), anything else as it was."""
        if _is_conflict(exc):
            return CommitConflict(f"{self.uri}: another writer {conflict}")
        if isinstance(exc, OSError):
            return LakeError(f"{self.uri}: the commit failed: {_first_line(exc)}")
        return exc

    def _forget_uploads(self, fs: Any, written: Sequence[DataFile]) -> bool:
        """After a failed commit: True when the latest version lists the files uploaded for
        it (it landed after all); else delete them, as far as the store lets us."""
        if not written:
            return False
        try:
            latest = self.load()
            live = {f.path for f in self.data_files(latest)} if latest is not None else set()
            if any(f.path in live for f in written):
                return True
            for f in written:
                _delete_object(self.loc, fs, self.loc.key(self.name, f.path))
        except (OSError, LakeError):
            pass  # left uncommitted: no reader lists them
        return False

    def purge_removed(
        self, marker: str, holding: Callable[[list[DataFile]], set[str]] | None = None
    ) -> Purged:
        """Delete for good the data files that commits carrying `marker` in their recon
        metadata removed (and those any other commit removed that `holding` says hold what
        is being erased), and drop their column statistics from every log entry that names
        them: what a VACUUM with no retention does, for those files alone.

        A VACUUM would delete every file no version references any more (another writer's
        upload not committed yet, whose commit would then name a missing file) and every
        file any commit removed (what time travel reads). Here only those files go. Their
        `add` entries in older commits and checkpoints keep the rows' min/max values
        (stats), so those are dropped too: the entry is rewritten in place, everything else
        in it kept byte for byte (numRecords and nullCount stay, the version still opens;
        reading its rows then fails on the deleted file, as after a VACUUM).

        `holding(files)` is given the files other commits removed that are still there
        (at most once each) and returns the paths of those to purge too.

        Idempotent, and a purge cut short is finished by the next one: it always works
        from every marked commit in the log. Two purges at once (two machines) may rewrite
        the same log object; each pass ends by looking for commits it did not know, and
        passes again while there are some, so the last write knows every one.
        """
        fs = arrow_filesystem(self.loc)
        log = self.loc.key(self.name, "_delta_log")
        done = Purged()
        known: set[str] = set()
        checked: set[str] = set()
        try:
            listed = _list_files(fs, log)
            entries = _read_objects(fs, [k for k in listed if _COMMIT_ENTRY.search(k)])
            for _attempt in range(MERGE_ATTEMPTS):
                marked: set[str] = set()
                others: dict[str, dict[str, Any]] = {}
                for body in entries.values():
                    found, removes = _removes(body, marker)
                    marked |= found
                    others.update(removes)
                known |= marked
                fresh = {p: a for p, a in others.items() if p not in known | checked}
                if holding is not None and fresh:
                    there = self._existing(fs, fresh)
                    known |= holding(there)
                    checked |= set(fresh)
                if known:
                    done.deleted += self._delete(fs, known)
                    names = known | {unquote(p) for p in known}
                    done.log_entries += _strip_log(fs, log, listed, entries, names)
                again = _list_files(fs, log)
                newer = [k for k in again if _COMMIT_ENTRY.search(k) and k not in listed]
                if not newer:
                    return done
                # commits landed meanwhile: read the whole log again (another purge may
                # have rewritten an entry we wrote without knowing ours)
                listed = again
                entries = _read_objects(fs, [k for k in listed if _COMMIT_ENTRY.search(k)])
        except OSError as exc:
            raise LakeError(f"{self.uri}: the vacuum failed: {_first_line(exc)}") from None
        raise LakeError(f"{self.uri}: other writers kept committing during the vacuum")

    def _object_keys(self, path: str) -> list[str]:
        """Where a path the log names may be stored: as written, or percent-decoded once
        (deltalake names its own files one way and the files it is handed the other)."""
        if is_uri(path):
            return [_fs_path(path)]
        return sorted({self.loc.key(self.name, path), self.loc.key(self.name, unquote(path))})

    def _existing(self, fs: Any, removes: Mapping[str, Mapping[str, Any]]) -> list[DataFile]:
        """The removed files (path -> their remove action) still stored."""
        import pyarrow.fs as pafs

        where = {key: path for path in removes for key in self._object_keys(path)}
        out = []
        for info in fs.get_file_info(sorted(where)):
            if info.type == pafs.FileType.File:
                path = where[info.path]
                action = removes[path]
                parts = action.get("partitionValues") or {}
                uri = f"{self.loc.scheme}://{info.path}"
                out.append(DataFile(path, uri, parts, int(action.get("size") or info.size or 0)))
        return out

    def _delete(self, fs: Any, paths: Iterable[str]) -> list[str]:
        """Delete the stored files of `paths` (those still there); their URIs."""
        import pyarrow.fs as pafs

        keys = sorted({key for path in paths for key in self._object_keys(path)})
        deleted = []
        for info in fs.get_file_info(keys):
            if info.type == pafs.FileType.File and _delete_object(self.loc, fs, info.path):
                deleted.append(f"{self.loc.scheme}://{info.path}")
        return deleted

    def dataset(self, uris: Iterable[str], schema: pa.Schema) -> ds.Dataset:
        """A pyarrow dataset over committed files (their URIs), read with `schema`: what
        DuckDB registers as an Arrow object and pyarrow scans with pushdown."""
        return files_dataset(self.loc, uris, schema)


def files_dataset(loc: Location, uris: Iterable[str], schema: pa.Schema) -> ds.Dataset:
    """A pyarrow dataset over object-storage files named by URI."""
    import pyarrow.dataset as ds

    fs = arrow_filesystem(loc)
    paths = [_fs_path(u) for u in uris]
    return ds.FileSystemDataset.from_paths(
        paths, schema=schema, format=ds.ParquetFileFormat(), filesystem=fs
    )


def _fs_path(uri: str) -> str:
    match = _URI.match(uri)
    return match.group(2) if match else uri


def with_views(dataset: ds.FileSystemDataset) -> ds.FileSystemDataset:
    """`dataset` (the same files) with its texts and binaries typed as Arrow views: how
    deltalake writes them."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    def view(kind: pa.DataType) -> pa.DataType:
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return pa.string_view()
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            return pa.binary_view()
        return kind

    schema = pa.schema([f.with_type(view(f.type)) for f in dataset.schema])
    return ds.FileSystemDataset(
        list(dataset.get_fragments()), schema, dataset.format, dataset.filesystem
    )


def _without_views(kind: pa.DataType) -> pa.DataType:
    import pyarrow as pa

    if pa.types.is_string_view(kind):
        return pa.string()
    if pa.types.is_binary_view(kind):
        return pa.binary()
    return kind


def _file_stats(rows: pa.Table) -> str:
    """A new file's Delta statistics: its row count and null counts. No min/max: they are
    optional (a reader that finds none reads the file), and they would copy values out of
    the file into the log, where an erase would have to find them again."""
    import pyarrow as pa

    nulls = {
        f.name: rows.column(i).null_count
        for i, f in enumerate(rows.schema)
        if not pa.types.is_nested(f.type)
    }
    return json.dumps({"numRecords": rows.num_rows, "nullCount": nulls}, separators=(",", ":"))


def _list_files(fs: Any, folder: str) -> list[str]:
    import pyarrow.fs as pafs

    selector = pafs.FileSelector(folder, recursive=True, allow_not_found=True)
    return sorted(i.path for i in fs.get_file_info(selector) if i.type == pafs.FileType.File)


def _read_objects(fs: Any, keys: Sequence[str]) -> dict[str, bytes]:
    """Log objects' bytes, read in parallel. A JSON one that does not parse is read again
    a few times: an object being replaced by another purge can read torn on a store that
    does not replace objects atomically (S3 does; the tests' moto server not always)."""

    def read(key: str) -> bytes:
        for attempt in range(_TORN_READS):
            with fs.open_input_stream(key) as stream:
                body = bytes(stream.read())
            if not key.endswith((".json", ".crc")) or _parses(body):
                return body
            time.sleep(0.05 * (attempt + 1))
        raise LakeError(f"{key}: not a readable log entry")

    if not keys:
        return {}
    with ThreadPoolExecutor(min(_LOG_READERS, len(keys))) as pool:
        return dict(zip(keys, pool.map(read, keys), strict=True))


_TORN_READS = 5


def _parses(body: bytes) -> bool:
    try:
        for line in body.splitlines():
            if line.strip():
                json.loads(line)
    except ValueError:  # UnicodeDecodeError too
        return False
    return True


def _read_checkpoint(fs: Any, key: str) -> pa.Table:
    """A checkpoint's rows (read again when torn, as `_read_objects` does)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for attempt in range(_TORN_READS):
        try:
            with fs.open_input_file(key) as handle:
                return pq.ParquetFile(handle).read()
        except pa.ArrowInvalid:
            time.sleep(0.05 * (attempt + 1))
    raise LakeError(f"{key}: not a readable checkpoint")


def _delete_object(loc: Location, fs: Any, key: str) -> bool:
    """Delete an object; False when it is gone already (another purge deleted it).

    On S3 through s3fs (one DeleteObject): pyarrow's delete_file then writes an empty
    "folder" object in its place when it thinks the folder would vanish."""
    try:
        if loc.store == "s3":
            _s3fs(loc).rm_file(key)
        else:
            fs.delete_file(key)
    except FileNotFoundError:
        return False
    return True


def _s3fs(loc: Location) -> Any:
    """An s3fs file system for the location (the `lake` extra's), from `storage_options`."""
    import s3fs

    options = storage_options(loc)
    client = {"region_name": options.get("AWS_REGION")}
    if options.get("AWS_ENDPOINT_URL"):
        client["endpoint_url"] = options["AWS_ENDPOINT_URL"]
    t = timeouts()
    return s3fs.S3FileSystem(
        config_kwargs={
            "connect_timeout": t.connect,
            "read_timeout": t.read,
            "retries": {"max_attempts": t.attempts, "mode": "standard"},
        },
        key=options.get("AWS_ACCESS_KEY_ID"),
        secret=options.get("AWS_SECRET_ACCESS_KEY"),
        token=options.get("AWS_SESSION_TOKEN"),
        profile=options.get("AWS_PROFILE"),
        client_kwargs=client,
    )


def _write_object(fs: Any, key: str, body: bytes) -> None:
    with fs.open_output_stream(key) as stream:
        stream.write(body)


def _removes(entry: bytes, marker: str) -> tuple[set[str], dict[str, dict[str, Any]]]:
    """The paths a commit entry removes: all of them when its recon metadata carries
    `marker`, else none, and the remove actions (path -> action) of an unmarked one."""
    actions = [json.loads(line) for line in entry.splitlines() if line.strip()]
    info = next((a["commitInfo"] for a in actions if "commitInfo" in a), None)
    raw = info.get(METADATA_KEY) if isinstance(info, dict) else None
    try:
        meta = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        meta = None
    removes = {
        str(a["remove"]["path"]): a["remove"] for a in actions if isinstance(a.get("remove"), dict)
    }
    if isinstance(meta, dict) and marker in meta:
        return set(removes), {}
    return set(), removes


def _names_one_of(path: Any, names: set[str]) -> bool:
    return isinstance(path, str) and (path in names or unquote(path) in names)


def _without_bounds(stats: str) -> str:
    """A file's statistics without its values (minValues, maxValues)."""
    try:
        parsed = json.loads(stats)
    except ValueError:
        return stats
    if not isinstance(parsed, dict) or not ({"minValues", "maxValues"} & parsed.keys()):
        return stats
    parsed.pop("minValues", None)
    parsed.pop("maxValues", None)
    return json.dumps(parsed, separators=(",", ":"))


def _strip_action(action: Any, names: set[str]) -> bool:
    """Drop the values from the stats of an add or remove naming one of `names`."""
    changed = False
    for kind in ("add", "remove"):
        body = action.get(kind) if isinstance(action, dict) else None
        if isinstance(body, dict) and _names_one_of(body.get("path"), names):
            stats = body.get("stats")
            if isinstance(stats, str) and (new := _without_bounds(stats)) != stats:
                body["stats"] = new
                changed = True
            if body.get("stats_parsed") is not None:
                body["stats_parsed"] = None
                changed = True
    return changed


def _strip_entry(body: bytes, names: set[str]) -> bytes | None:
    """A commit entry (JSON lines) with the values of `names`' stats dropped; None when
    nothing changes. Lines that change nothing stay byte for byte."""
    out, changed = [], False
    for line in body.split(b"\n"):
        if line.strip() and any(n.encode() in line for n in names):
            action = json.loads(line)
            if _strip_action(action, names):
                line = json.dumps(action, separators=(",", ":"), ensure_ascii=False).encode()
                changed = True
        out.append(line)
    return b"\n".join(out) if changed else None


def _strip_checksum(body: bytes, names: set[str]) -> bytes | None:
    """A version checksum (``.crc``) whose `allFiles` lists files' stats."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    files = parsed.get("allFiles") if isinstance(parsed, dict) else None
    if not isinstance(files, list):
        return None
    changed = False
    for add in files:
        changed |= _strip_action({"add": add}, names)
    return json.dumps(parsed, separators=(",", ":")).encode() if changed else None


def _strip_checkpoint(table: pa.Table, names: set[str]) -> pa.Table | None:
    """A checkpoint (or sidecar) with the values of `names`' stats dropped, or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    changed = False
    for column in ("add", "remove"):
        index = table.schema.get_field_index(column)
        if index < 0:
            continue
        actions = table.column(index).combine_chunks()
        kind = actions.type
        children = {kind.field(i).name: i for i in range(kind.num_fields)}
        if "path" not in children or "stats" not in children:
            continue
        valid = actions.is_valid().to_pylist()
        paths = actions.field("path").to_pylist()
        stats = actions.field("stats").to_pylist()
        hit = [
            ok and _names_one_of(p, names) and (s is not None or "stats_parsed" in children)
            for ok, p, s in zip(valid, paths, stats, strict=True)
        ]
        new_stats = [
            _without_bounds(s) if h and isinstance(s, str) else s
            for h, s in zip(hit, stats, strict=True)
        ]
        if new_stats == stats and not ("stats_parsed" in children and any(hit)):
            continue
        arrays = []
        for i in range(kind.num_fields):
            name = kind.field(i).name
            child = actions.field(i)
            if name == "stats":
                child = pa.array(new_stats, kind.field(i).type)
            elif name == "stats_parsed":
                child = pc.if_else(pa.array(hit), pa.nulls(len(child), child.type), child)
            arrays.append(child)
        rebuilt = pa.StructArray.from_arrays(arrays, fields=list(kind), mask=actions.is_null())
        table = table.set_column(index, table.schema.field(index), rebuilt)
        changed = True
    return table if changed else None


def _strip_log(
    fs: Any, log: str, listed: Sequence[str], entries: Mapping[str, bytes], names: set[str]
) -> int:
    """Drop the values of `names`' stats from every log object; returns those rewritten."""
    import io

    import pyarrow.parquet as pq

    rewritten = 0
    texts = {k: v for k, v in entries.items()}
    others = [k for k in listed if k not in texts and k.endswith((".json", ".crc"))]
    texts.update(_read_objects(fs, others))
    for key in sorted(texts):
        body = texts[key]
        new = _strip_checksum(body, names) if key.endswith(".crc") else _strip_entry(body, names)
        if new is not None:
            _write_object(fs, key, new)
            rewritten += 1
    sizes: dict[int, int] = {}
    for key in (k for k in listed if k.endswith(".parquet")):
        table = _read_checkpoint(fs, key)
        stripped = _strip_checkpoint(table, names)
        if stripped is None:
            continue
        sink = io.BytesIO()
        pq.write_table(stripped, sink)
        _write_object(fs, key, sink.getvalue())
        rewritten += 1
        single = _CHECKPOINT.search(key)
        if single:
            sizes[int(single.group(1))] = len(sink.getvalue())
    if sizes:
        _resize_last_checkpoint(fs, f"{log}/_last_checkpoint", sizes)
    return rewritten


def _resize_last_checkpoint(fs: Any, key: str, sizes: Mapping[int, int]) -> None:
    """`_last_checkpoint` names its checkpoint's size: keep it true after a rewrite."""
    try:
        with fs.open_input_stream(key) as stream:
            hint = json.loads(stream.read())
    except (FileNotFoundError, ValueError):
        return
    if not isinstance(hint, dict) or hint.get("version") not in sizes:
        return
    if "sizeInBytes" in hint:
        hint["sizeInBytes"] = sizes[hint["version"]]
    hint.pop("checksum", None)  # of the old content
    _write_object(fs, key, json.dumps(hint, separators=(",", ":")).encode() + b"\n")


def read_bytes(loc: Location, uri: str) -> bytes:
    """An object's bytes (pyarrow's client)."""
    fs = arrow_filesystem(loc)
    with fs.open_input_stream(_fs_path(uri)) as stream:
        return bytes(stream.read())


# Tables recon creates keep their whole log (a snapshot's manifest is in its commit).
_TABLE_CONFIG = {"delta.enableExpiredLogCleanup": "false"}


# ---------------------------------------------------------------------------------- layout
# recon's tables under a remote data directory (docs/object-storage.md).
# Partition columns are extra columns, never the contract's own: Delta keeps partition
# values in its log and out of the data files, so a data file read by its name alone
# (DuckDB or Spark given the commit's file list) still has every contract column.

SNAPSHOTS = "snapshots"  # INTENTS_SCHEMA + snapshot_date, snapshot_run; manifest in the commit
SNAPSHOT_PARTITIONS = ("snapshot_date", "snapshot_run")
STATEMENT_LINES = (
    "statements/lines"  # statement store's STORED_SCHEMA; MERGE on (line_id, fingerprint)
)
STATEMENT_QUARANTINE = "statements/quarantine"  # MERGE on row_key
STATEMENT_COVERAGE = "statements/coverage"  # MERGE on the period's key
STATEMENT_PAGES = "statements/pages"  # Open Finance pages read; MERGE on row_key
STATEMENT_BALANCES = "statements/balances"  # stated balances; MERGE on row_key
RUN_PARTITION = "run"  # every run table is partitioned by the run id under this name
RUN_TABLES = (
    "matches",
    "exceptions",
    "awaiting",
    "candidates",
    "history",
    "suggestions",
)  # runs/<name>
RUN_SUMMARIES = "runs/summaries"  # one row per run: summary.json and flows.parquet; the commit
# that makes a run visible (written after its tables)
