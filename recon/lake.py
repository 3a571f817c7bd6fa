"""Delta Lake tables on object storage: what a remote data directory (`--data s3://…`) is made of.

A data directory given as a URI (``s3://bucket/prefix``, ``gs://…``, ``abfs://…``) keeps
recon's tables as Delta Lake tables under the prefix (README, "Object storage and Delta
Lake"). On object storage a folder cannot be renamed into place (S3 copies then deletes), so
publication is a Delta commit instead: the data files are written first under fresh names,
then one log entry ``_delta_log/<version>.json`` names them, written with a conditional PUT
(``If-None-Match: *``) that only one writer can win. A reader sees a commit whole or not at
all; a writer that loses the race re-reads the table and tries again (appends always go
through, a MERGE is re-run against what the winner wrote), so two writers at once never lose
a commit; a writer that dies between its data files and its commit leaves files no commit
names, which no reader ever lists.

This module holds only the primitives (no recon table knows about another):

- `Location` / `parse`: a URI checked once (scheme, bucket, prefix), `storage_options`
  from the environment, `check` (credentials, reachability: a bad endpoint fails in
  milliseconds with one line, never after minutes of retries).
- `Table`: one Delta table under the location: `append` (with partition values and commit
  metadata), `merge_new` (insert the rows whose key is not there yet: idempotent imports),
  `commits` (the history with each commit's metadata), `files` (the committed files, by
  partition), `dataset` (a pyarrow dataset over an explicit committed file list, read with
  pyarrow's own S3 client: DuckDB scans it as an Arrow object, no DuckDB extension and no
  jar is ever needed).

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from recon.errors import LakeError

__all__ = [
    "SCHEMES",
    "LakeError",
    "Location",
    "Table",
    "check",
    "is_uri",
    "parse",
    "storage_options",
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
_BUCKET = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{1,254}$")
# a commit that lost the race to another writer is re-run this many times (MERGE) before
# the import gives up and says so
MERGE_ATTEMPTS = 8
# commit metadata key under which recon keeps what a commit published (a snapshot manifest)
METADATA_KEY = "recon"


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


def parse(uri: str) -> Location:
    """A data-directory URI checked: a known scheme, a bucket, a clean prefix."""
    match = _URI.match(uri.strip())
    if not match:
        raise LakeError(f"not a URI: {uri!r} (expected s3://bucket/prefix)")
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


def storage_options(loc: Location) -> dict[str, str]:
    """The deltalake `storage_options` for a location, from the environment.

    S3: the endpoint, region, keys and AWS_ALLOW_HTTP as set; commits use S3's conditional
    PUT (deltalake's default since S3 supports If-None-Match), so no lock table is needed.
    gs:// and abfs:// read their usual variables (GOOGLE_APPLICATION_CREDENTIALS,
    AZURE_STORAGE_ACCOUNT_NAME, ...) inside deltalake itself.
    """
    if loc.store != "s3":
        return {}
    options: dict[str, str] = {}
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
        kwargs: dict[str, Any] = {
            "region": options.get("AWS_REGION"),
            "connect_timeout": 5,
            "request_timeout": 30,
            "retry_strategy": pafs.AwsStandardS3RetryStrategy(max_attempts=3),
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
            f"{loc.uri}: reading {loc.scheme}:// needs fsspec (pip install 'recon[lake]')"
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

    Raises LakeError with one line: no credentials, an endpoint that does not answer, a
    bucket that does not exist or refuses us. Cheap: one HEAD-like request.
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
            raise LakeError(f"{loc.uri}: cannot reach the bucket: {_first_line(exc)}") from None
        if info.type == pafs.FileType.NotFound:
            raise LakeError(f"{loc.uri}: bucket {loc.bucket!r} does not exist")
    with _checked_guard:
        _checked.add(loc.uri)


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
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
        from deltalake import write_deltalake
        from deltalake.transaction import CommitProperties, PostCommitHookProperties

        props = CommitProperties(
            custom_metadata={METADATA_KEY: json.dumps(dict(metadata or {}), sort_keys=True)},
            max_commit_retries=100,
        )
        try:
            write_deltalake(
                self.uri,
                data,
                mode="append",
                partition_by=partition_by,
                storage_options=self.options,
                configuration=_TABLE_CONFIG,
                commit_properties=props,
                # commit entries are kept: a snapshot's manifest lives in its commit
                post_commithook_properties=PostCommitHookProperties(cleanup_expired_logs=False),
            )
        except OSError as exc:
            raise LakeError(f"{self.uri}: the commit failed: {_first_line(exc)}") from None
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
            out.append((self._file_uri(action["path"]), parts, int(action.get("size_bytes") or 0)))
        return sorted(out)

    def _file_uri(self, path: str) -> str:
        from urllib.parse import unquote

        return path if is_uri(path) else f"{self.uri}/{unquote(path)}"

    def dataset(self, uris: Iterable[str], schema: pa.Schema) -> ds.Dataset:
        """A pyarrow dataset over committed files (their URIs), read with `schema`: what
        DuckDB registers as an Arrow object and pyarrow scans with pushdown."""
        return files_dataset(self.loc, uris, schema)


def files_dataset(loc: Location, uris: Iterable[str], schema: pa.Schema) -> ds.Dataset:
    """A pyarrow dataset over object-storage files named by URI."""
    fs = arrow_filesystem(loc)
    paths = [_fs_path(u) for u in uris]
    return ds.FileSystemDataset.from_paths(
        paths, schema=schema, format=ds.ParquetFileFormat(), filesystem=fs
    )


def _fs_path(uri: str) -> str:
    match = _URI.match(uri)
    return match.group(2) if match else uri


def read_bytes(loc: Location, uri: str) -> bytes:
    """An object's bytes (pyarrow's client)."""
    fs = arrow_filesystem(loc)
    with fs.open_input_stream(_fs_path(uri)) as stream:
        return bytes(stream.read())


# Tables recon creates keep their whole log (a snapshot's manifest is in its commit).
_TABLE_CONFIG = {"delta.enableExpiredLogCleanup": "false"}


# ---------------------------------------------------------------------------------- layout
# recon's tables under a remote data directory (README, "Object storage and Delta Lake").
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
RUN_PARTITION = "run"  # every run table is partitioned by the run id under this name
RUN_TABLES = ("matches", "exceptions", "awaiting", "candidates", "history")  # runs/<name>
RUN_SUMMARIES = "runs/summaries"  # one row per run: summary.json and flows.parquet; the commit
# that makes a run visible (written after its tables)
