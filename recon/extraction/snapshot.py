"""`extract()`: walk the v2 list into a new snapshot folder, atomically.

    data/snapshots/snapshot_date=YYYY-MM-DD/run_id=<id>/part-00000.parquet + _manifest.json

Rows stream to Parquet row groups as pages arrive (every version of every intent, in the
order read); memory holds only id → position of the winning version. When the walk read some
intent more than once, a final streaming pass copies only the winning rows. The folder is
written under a `.tmp-` name, fsynced and renamed: the manifest is the commit, a crash leaves
nothing visible, and the next start removes the leftovers.

On a remote data directory (`--data s3://…`) the same folder is built in the local side's
work area and then appended to the `snapshots` Delta table as one commit (partitions
snapshot_date / snapshot_run), the manifest carried in that commit's metadata: the commit
is what makes it a snapshot (recon.lake).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from recon import lake
from recon.config import DataDir, new_run_id
from recon.errors import (
    InconsistentSnapshotError,
    ResponseLimitError,
    UsageError,
    redact,
)
from recon.extraction.flatten import RowBuffer, finish, with_lineage
from recon.extraction.pages import batch_table, rows_of
from recon.extraction.settings import ExtractSettings
from recon.extraction.walk import MAX_LIMIT, Walker
from recon.pii import protect_intents
from recon.progress import OnProgress, Progress
from recon.schemas import INTENT_STATUSES, INTENTS_SCHEMA
from recon.storage import atomic_dir, write_json, writer_lock

__all__ = [
    "InconsistentSnapshotError",
    "SnapshotResult",
    "extract",
    "extract_async",
    "publish_snapshot",
    "snapshot_path",
]

PART_NAME = "part-00000.parquet"
MANIFEST_NAME = "_manifest.json"
VERSIONS_NAME = ".versions.parquet.tmp"  # every version read; never matched by readers
ROW_GROUP_ROWS = 16_384
# A part file's Parquet options. Columns whose values are unique per row (the id, the JSON
# texts) get no dictionary: the writer would build one and then drop it (~10% of the write's
# CPU, and the files come out smaller); nothing filters on the JSON texts, so they get no
# min/max statistics either.
_JSON_TEXTS = ("metadata", "raw")
_UNIQUE_PER_ROW = ("id", *_JSON_TEXTS)
PART_OPTIONS: dict[str, Any] = {
    "compression": "zstd",
    "use_dictionary": [n for n in INTENTS_SCHEMA.names if n not in _UNIQUE_PER_ROW],
    "write_statistics": [n for n in INTENTS_SCHEMA.names if n not in _JSON_TEXTS],
}
INTENT_TYPES = ("all", "onramp", "offramp")

T = TypeVar("T")
P = ParamSpec("P")


@dataclass(frozen=True)
class SnapshotResult:
    """A committed snapshot: its run id, folder and manifest."""

    run_id: str
    path: Path | str  # the folder, or on a remote data directory the partition's URI
    manifest: dict[str, Any]

    @property
    def consistent(self) -> bool:
        return bool(self.manifest.get("consistent"))

    def summary(self) -> str:
        """One line for a log: rows, passes, speed, consistency."""
        m = self.manifest
        secs = max(float(m.get("elapsed_seconds") or 0.0), 1e-9)
        state = "consistent" if m.get("consistent") else "NOT CONSISTENT"
        return (
            f"snapshot {self.run_id}: {m['rows']} intents ({m['unique_ids']} unique, "
            f"{m['duplicates_dropped']} duplicates dropped) in {m['pages']} pages, "
            f"{m['passes']} pass(es), {m['retries']} retries, {secs:.1f}s "
            f"({m['rows'] / secs:,.0f}/s), {state} -> {self.path}"
        )


def _server_time(date: str | None) -> datetime | None:
    if not date:
        return None
    try:
        dt = parsedate_to_datetime(date)
    except (TypeError, ValueError, IndexError):
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC)


def _micros(dt: datetime) -> int:
    delta = dt - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _iso(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _blocking(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """A coroutine function as a plain function with the same signature (see `_run`)."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        return _run(lambda: fn(*args, **kwargs))

    run.__name__ = run.__qualname__ = fn.__name__.removesuffix("_async")
    return run


@contextlib.contextmanager
def _collector_skips_the_heap() -> Iterator[None]:
    """While a walk runs, Python's cyclic collector leaves alone the objects that were alive
    before it (the modules imported: pandas, pyarrow, ...). A walk allocates steadily, and
    each full collection would traverse all of them again (~45 ms each: a 100k walk spent
    57 ms of its ~2 s of CPU collecting, 10 ms with this). Undone after; a heap the caller
    froze itself is left as it is."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _run(coro_factory: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion, also from inside a running loop (e.g. Jupyter)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro_factory())
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(coro_factory())
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, name="recon-extract")
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


class _VersionWriter:
    """Streams pages' items into Parquet row groups (every version, in read order).

    Items become columns `CONVERT_ROWS` at a time on a writer thread (JSON reading, casts,
    masking and encoding are mostly C++ that releases the GIL), overlapping the event loop's
    fetching; each whole row group of `ROW_GROUP_ROWS` is written as soon as it is converted.
    Jobs of half a row group keep what is left when the walk ends (the last job, the last row
    group) short: the tail of a walk waits for it. Jobs of 8,192 rows and groups of 16,384
    cost ~0.9 µs of CPU per intent less than 4,096 and 8,192, for ~45 ms more tail per walk
    (A/B, 10 alternating fresh 100k walks each). At most `MAX_JOBS` jobs are queued or
    running (bounded memory); a job's error surfaces at the next `add` that queues one, or at
    `close`.
    """

    CONVERT_ROWS = ROW_GROUP_ROWS // 2
    MAX_JOBS = 2

    def __init__(self, path: Path, run_id: str, snapshot_at: Callable[[], int]):
        self.path = path
        self.run_id = run_id
        self.snapshot_at = snapshot_at
        self.pending: list[list[Any]] = []
        self.pending_rows = 0
        self.writer: pq.ParquetWriter | None = None
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="recon-parquet")
        self.jobs: deque[Future[None]] = deque()
        # on the writer thread only: converted rows not yet written (less than a row group)
        self.ready: list[pa.Table] = []
        self.ready_rows = 0
        self.failed = False

    def add(self, raws: list[Any]) -> None:
        """Take a page's items (raw JSON bytes, in read order); write them in row groups."""
        self.pending.append(raws)
        self.pending_rows += len(raws)
        if self.pending_rows >= self.CONVERT_ROWS:
            self.flush()

    def _reap(self, room: int) -> None:
        """Collect finished jobs (re-raising a job's error), and wait until at most `room`
        jobs are left."""
        jobs = self.jobs
        while jobs and (jobs[0].done() or len(jobs) > room):
            jobs.popleft().result()

    def flush(self) -> None:
        if not self.pending:
            return
        batch = [raw for page in self.pending for raw in page]
        self.pending, self.pending_rows = [], 0
        at = self.snapshot_at()
        self._reap(self.MAX_JOBS - 1)
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.path, INTENTS_SCHEMA, **PART_OPTIONS)
        self.jobs.append(self.pool.submit(self._convert, batch, at))

    def _convert(self, batch: list[Any], at: int) -> None:
        # On the writer thread. IntentParseError (a malformed item) surfaces at the next
        # `_reap`; the jobs queued behind a failed one do nothing.
        if self.failed:
            return
        try:
            table = with_lineage(finish(batch_table(batch)), snapshot_at_us=at, run_id=self.run_id)
            self.ready.append(table)
            self.ready_rows += table.num_rows
            if self.ready_rows >= ROW_GROUP_ROWS:
                self._write_ready(last=False)
        except BaseException:
            self.failed = True
            raise

    def _write_ready(self, last: bool) -> None:
        """Write the converted rows as whole row groups (`last`: all of them)."""
        table = pa.concat_tables(self.ready)
        n = table.num_rows
        whole = n if last else n - n % ROW_GROUP_ROWS
        assert self.writer is not None
        if whole:
            self.writer.write_table(table.slice(0, whole), ROW_GROUP_ROWS)
        self.ready = [table.slice(whole)] if whole < n else []
        self.ready_rows = n - whole

    def close(self) -> None:
        try:
            self.flush()
            self._reap(0)
            if self.ready_rows:
                self.pool.submit(self._write_ready, True).result()
        finally:
            self.pool.shutdown(wait=True)
            if self.writer is not None:
                self.writer.close()


def _winners(
    source: Path, rows: int, final_ids: list[str] | None, repeated: list[str] | None = None
) -> np.ndarray[Any, Any]:
    """Mask over the rows read: per id, its latest version (greatest updated_at, then the
    later read), restricted to `final_ids` when given. Columnar, so it costs bytes per row.

    `repeated` (monotone walks): the ids read more than once; every other row is its id's
    only version and wins without a look. Only the repeated ids' rows are then collected,
    one row group at a time, so memory follows the duplicates, not the rows read.
    """
    if repeated is not None and final_ids is None:
        return _winners_of_repeated(source, rows, repeated)
    table = pq.read_table(source, columns=["id", "updated_at"])
    encoded = pc.dictionary_encode(table.column("id").combine_chunks())
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    updated = table.column("updated_at").combine_chunks().cast(pa.int64())
    updated_np = updated.to_numpy(zero_copy_only=False)
    del table
    # sort by id, then updated_at, then read order: the last row of each id wins
    order = np.lexsort((np.arange(rows), updated_np, codes))
    ordered = codes[order]
    last = np.ones(rows, dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    winners = order[last]
    if final_ids is not None:
        wanted = pc.is_in(encoded.dictionary, value_set=pa.array(final_ids, type=pa.string()))
        wanted_np = wanted.to_numpy(zero_copy_only=False)
        winners = winners[wanted_np[codes[winners]]]
    mask = np.zeros(rows, dtype=bool)
    mask[winners] = True
    return mask


def _winners_of_repeated(source: Path, rows: int, repeated: list[str]) -> np.ndarray[Any, Any]:
    mask = np.ones(rows, dtype=bool)
    if not repeated:
        return mask
    value_set = pa.array(repeated, type=pa.string())
    parquet = pq.ParquetFile(source)
    ids: list[pa.Array] = []
    updated: list[pa.Array] = []
    positions: list[np.ndarray[Any, Any]] = []
    start = 0
    for index in range(parquet.num_row_groups):
        group = parquet.read_row_group(index, columns=["id", "updated_at"])
        hit = pc.is_in(group.column("id"), value_set=value_set)
        where = np.flatnonzero(hit.to_numpy())
        if len(where):
            chosen = group.take(pa.array(where))
            ids.append(chosen.column("id").combine_chunks())
            updated.append(chosen.column("updated_at").combine_chunks())
            positions.append(where + start)
        start += group.num_rows
        del group
    pos = np.concatenate(positions) if positions else np.zeros(0, dtype=np.int64)
    if not len(pos):
        return mask
    codes = pc.dictionary_encode(pa.concat_arrays(ids)).indices.to_numpy(zero_copy_only=False)
    upd = pa.concat_arrays(updated).cast(pa.int64()).to_numpy(zero_copy_only=False)
    # same rule as the full path: sort by id, updated_at, read order; the last of an id wins
    order = np.lexsort((pos, upd, codes))
    ordered = codes[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = ordered[1:] != ordered[:-1]
    mask[pos] = False
    mask[pos[order[last]]] = True
    return mask


def _compact(source: Path, target: Path, mask: np.ndarray[Any, Any]) -> int:
    """Copy only the rows where `mask` is set, one row group at a time; return rows written.

    Row groups are read one by one (not `iter_batches`, which reads ahead): memory stays
    at one row group whatever the file's size.
    """
    written = 0
    start = 0
    parquet = pq.ParquetFile(source)
    pool = pa.default_memory_pool()
    with pq.ParquetWriter(target, INTENTS_SCHEMA, **PART_OPTIONS) as writer:
        for index in range(parquet.num_row_groups):
            group = parquet.read_row_group(index)
            chosen = group.filter(pa.array(mask[start : start + group.num_rows]))
            start += group.num_rows
            if chosen.num_rows:
                writer.write_table(chosen, ROW_GROUP_ROWS)
                written += chosen.num_rows
            del group, chosen
            # Arrow's allocator (mimalloc) keeps freed row-group buffers: without this, RSS
            # grew by every row group copied (100k rows: 85 -> 267 MB; with it, <= 163 MB).
            pool.release_unused()
    return written


def _per_page(on_progress: OnProgress | None) -> Callable[[int, int], None] | None:
    """The walker's `(rows seen, total)` after each page, as the caller's `Progress`."""
    if on_progress is None:
        return None

    def page_read(done: int, total: int) -> None:
        on_progress(Progress("extract", done, total, "intents"))

    return page_read


def _fetcher(client: Any, intent_type: str, status: str) -> Any:
    async def fetch(*, offset: int, limit: int) -> tuple[Any, str | None]:
        page = await client.list_intents_bytes(
            intent_type=intent_type, status=status, limit=limit, offset=offset
        )
        return page.content, page.date

    return fetch


async def extract_async(
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    client: Any = None,
    transport: Any = None,
    intent_type: str = "all",
    status: str = "all",
    concurrency: int = 8,
    max_rps: float | None = None,
    quiet: bool | None = None,
    max_passes: int = 5,
    page_size: int = MAX_LIMIT,
    settings: ExtractSettings | None = None,
    on_progress: OnProgress | None = None,
) -> SnapshotResult:
    """Walk ``GET /v2/intents`` into a new, atomically published snapshot.

    `client` is a `recon.api.AsyncClient` (else one is made from `base_url`/`api_key`, default
    $RECON_BASE_URL/$RECON_API_KEY, and `transport`). Pages after the first are fetched
    `concurrency` at a time; `max_rps` caps the request rate. The walk repeats (up to
    `max_passes`) until the id set is proven complete (see `recon.extraction.walk`). Returns the
    snapshot; raises `InconsistentSnapshotError` (exit 3) after publishing it with
    ``consistent: false`` when the list never stood still. `on_progress` gets a
    `recon.progress.Progress` ("extract", intents read so far, the list's total, "intents")
    after every page, unless `quiet` is true; this function draws nothing itself (`recon
    extract` passes a callback that draws a bar on a terminal). `settings` bounds the walk against a broken or hostile server
    (sizes, `total`, deadlines, retries; default: recon.toml's `[extract]`, see
    `recon.extraction.settings`); crossing a bound raises `ResponseLimitError` (exit 3) and
    publishes nothing. `extract` is the same function run to completion (it also works
    inside a running event loop, e.g. Jupyter); from async code, `await extract_async(...)`.
    """
    if intent_type not in INTENT_TYPES:
        raise UsageError(f"intent_type must be one of {', '.join(INTENT_TYPES)}: {intent_type!r}")
    if status != "all" and status not in INTENT_STATUSES:
        raise UsageError(f"status must be 'all' or an intent status: {status!r}")
    if concurrency < 1:
        raise UsageError("concurrency must be at least 1")
    if max_passes < 1:
        raise UsageError("max_passes must be at least 1")
    if max_rps is not None and max_rps <= 0:
        raise UsageError("max_rps must be positive")
    if not 1 <= page_size <= MAX_LIMIT:
        raise UsageError(f"page_size must be 1..{MAX_LIMIT}")
    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    dd.ensure()
    if settings is None:
        settings = ExtractSettings.load(dd)
    # One writer at a time per data directory; the first holder sweeps crash leftovers.
    with writer_lock(dd.root, "extract"), _collector_skips_the_heap():
        owned = client is None
        if owned:
            from recon.api import AsyncClient

            client = AsyncClient(
                base_url,
                api_key,
                transport=transport,
                max_rps=max_rps,
                limits=settings.limits,
                retry=settings.retry,
            )
        secret = api_key if api_key is not None else os.environ.get("RECON_API_KEY")
        shown_url = redact(str(getattr(client, "base_url", base_url) or ""), secret)
        try:
            result = await _extract(
                dd,
                client,
                shown_url,
                intent_type=intent_type,
                status=status,
                concurrency=concurrency,
                max_passes=max_passes,
                page_size=page_size,
                on_progress=None if quiet else on_progress,
                max_rps=max_rps,
                settings=settings,
            )
        finally:
            if owned:
                await client.aclose()
    if not result.consistent:
        raise InconsistentSnapshotError(result)
    return result


async def _extract(
    dd: DataDir,
    client: Any,
    shown_url: str,
    *,
    intent_type: str,
    status: str,
    concurrency: int,
    max_passes: int,
    page_size: int,
    on_progress: OnProgress | None,
    max_rps: float | None,
    settings: ExtractSettings,
) -> SnapshotResult:
    started = datetime.now(UTC)
    t0 = time.monotonic()
    retries_before = _retries(client)
    run_id = new_run_id(started)
    # The folder's date comes from the server's clock, known only after the first page, so
    # rows are written to a private temp folder first and the final name is chosen after.
    work = dd.snapshots / f".tmp-work-{run_id}"
    work.mkdir(parents=True)
    try:
        clock: dict[str, datetime] = {}

        def snapshot_at_us() -> int:
            if "at" not in clock:
                clock["at"] = _server_time(walker.first_date) or started
            return _micros(clock["at"])

        writer = _VersionWriter(work / VERSIONS_NAME, run_id, snapshot_at_us)
        walker = Walker(
            _fetcher(client, intent_type, status),
            flatten=rows_of,
            sink=writer.add,
            monotone=(status == "all"),
            page_size=page_size,
            concurrency=concurrency,
            max_passes=max_passes,
            max_total=settings.max_total,
            on_progress=_per_page(on_progress),
        )
        try:
            async with asyncio.timeout(settings.deadline):
                walk = await walker.run()
        except TimeoutError:
            raise ResponseLimitError(
                f"the walk did not finish within {settings.deadline:g}s (deadline); "
                "nothing was published"
            ) from None
        finally:
            writer.close()
        snapshot_at_us()  # fixes the time even for an empty list
        snapshot_at = clock["at"]
        final = snapshot_path(dd, snapshot_at, run_id)
        with _publishing(dd, final, work) as (tmp, published):
            versions = work / VERSIONS_NAME
            if not versions.exists():
                rows = 0
                empty = RowBuffer().take(snapshot_at_us=snapshot_at_us(), run_id=run_id)
                pq.write_table(empty, tmp / PART_NAME, **PART_OPTIONS)
            elif walk.final_ids is None and walk.unique_ids == walk.rows_written:
                os.replace(versions, tmp / PART_NAME)  # no id read twice: the file is final
                rows = walk.rows_written
            else:
                walker.seen.clear()  # not needed any more: give its memory to the last pass
                mask = _winners(versions, walk.rows_written, walk.final_ids, walk.repeated_ids)
                rows = _compact(versions, tmp / PART_NAME, mask)
            from recon import __version__

            consistent = walk.consistent
            if rows != walk.unique_ids:  # cannot happen; if it ever does, say so loudly
                consistent = False
                walk.drift.append(f"wrote {rows} rows for {walk.unique_ids} distinct ids")
            finished = datetime.now(UTC)
            manifest = {
                "run_id": run_id,
                "snapshot_at": _iso(snapshot_at),
                "snapshot_time_source": "server" if walker.first_date else "local",
                "consistent": consistent,
                "kind": "full" if intent_type == "all" and status == "all" else "filtered",
                "filters": {"intent_type": intent_type, "status": status},
                "total_first": walk.total_first,
                "total_last": walk.total_last,
                "rows": rows,
                "unique_ids": walk.unique_ids,
                "rows_read": walk.rows_written,
                "duplicates_dropped": walk.duplicates_dropped,
                "passes": walk.passes,
                "pages": walk.pages,
                "page_limit": walk.page_limit,
                "retries": _retries(client) - retries_before,
                "drift": walk.drift,
                "concurrency": concurrency,
                "max_rps": max_rps,
                "base_url": shown_url,
                "started_at": _iso(started),
                "finished_at": _iso(finished),
                "elapsed_seconds": round(time.monotonic() - t0, 3),
                "files": [PART_NAME],
                "recon_version": __version__,
            }
            # Written last: the manifest is what makes the folder a snapshot.
            write_json(tmp / MANIFEST_NAME, manifest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return SnapshotResult(run_id, final if not dd.remote else published["uri"], manifest)


extract = _blocking(extract_async)


def snapshot_path(dd: DataDir, snapshot_at: datetime, run_id: str) -> Path:
    """A snapshot's folder: ``snapshots/snapshot_date=<UTC day>/run_id=<id>/``."""
    day = snapshot_at.astimezone(UTC).date().isoformat()
    return dd.snapshots / f"snapshot_date={day}" / f"run_id={run_id}"


def publish_snapshot(
    dd: DataDir, table: pa.Table, snapshot_at: datetime, run_id: str, manifest: dict[str, Any]
) -> Path | str:
    """Publish rows already in INTENTS_SCHEMA as a committed snapshot, as `extract` does:
    the part file, then the manifest (written last: it commits the folder), the folder
    renamed into place whole. For snapshots built without an API (recon.testing)."""
    final = snapshot_path(dd, snapshot_at, run_id)
    with contextlib.ExitStack() as stack:
        work = None
        if dd.remote:
            work = dd.snapshots / f".tmp-work-{run_id}"
            work.mkdir(parents=True)
            stack.callback(shutil.rmtree, work, ignore_errors=True)
        tmp, published = stack.enter_context(_publishing(dd, final, work))
        rows = protect_intents(table).select(INTENTS_SCHEMA.names).cast(INTENTS_SCHEMA)
        pq.write_table(rows, tmp / PART_NAME, **PART_OPTIONS)
        write_json(tmp / MANIFEST_NAME, manifest)
    return published["uri"] if dd.remote else final


@contextlib.contextmanager
def _publishing(
    dd: DataDir, final: Path, work: Path | None
) -> Iterator[tuple[Path, dict[str, str]]]:
    """Yield a folder to write a snapshot's part file and manifest into; on success publish
    it: locally renamed into place as `final` (recon.storage.atomic_dir); on a remote data
    directory appended to the `snapshots` Delta table as one commit (`publish_remote`).
    The second item receives the published location (``uri``)."""
    published: dict[str, str] = {}
    if not dd.remote:
        with atomic_dir(final) as tmp:
            yield tmp, published
        published["uri"] = str(final)
        return
    assert work is not None
    out = work / "publish"
    out.mkdir()
    yield out, published
    manifest = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
    published["uri"] = publish_remote(dd, out / PART_NAME, manifest)


def publish_remote(dd: DataDir, part: Path | list[Path], manifest: dict[str, Any]) -> str:
    """Append a snapshot's part file to the remote `snapshots` table as one commit, its
    manifest in the commit's metadata; returns the partition's URI.

    Rows stream from the local file one row group at a time. The partition columns
    (snapshot_date, snapshot_run) are added beside the contract's columns, so the data files
    keep every INTENTS_SCHEMA column (docs/object-storage.md)."""
    run_id = str(manifest["run_id"])
    day = datetime.fromisoformat(str(manifest["snapshot_at"]).replace("Z", "+00:00"))
    day_text = day.astimezone(UTC).date().isoformat()
    schema = INTENTS_SCHEMA.append(pa.field("snapshot_date", pa.string())).append(
        pa.field("snapshot_run", pa.string())
    )
    parts = part if isinstance(part, list) else [part]

    def batches() -> Iterator[pa.RecordBatch]:
        for path in parts:
            parquet = pq.ParquetFile(path)
            for index in range(parquet.num_row_groups):
                found = parquet.read_row_group(index)
                n = found.num_rows
                # a part written before a column existed reads it as NULL, as the catalog does
                group = pa.table(
                    [
                        found.column(f.name).cast(f.type)
                        if f.name in found.column_names
                        else pa.nulls(n, f.type)
                        for f in INTENTS_SCHEMA
                    ],
                    schema=INTENTS_SCHEMA,
                )
                group = group.append_column(
                    "snapshot_date", pa.array([day_text] * n, pa.string())
                ).append_column("snapshot_run", pa.array([run_id] * n, pa.string()))
                yield from group.to_batches()

    table = dd.table(lake.SNAPSHOTS)
    table.append(
        pa.RecordBatchReader.from_batches(schema, batches()),
        partition_by=list(lake.SNAPSHOT_PARTITIONS),
        metadata={"snapshot": manifest},
    )
    return f"{table.uri}/snapshot_date={day_text}/snapshot_run={run_id}"


def _retries(client: Any) -> int:
    stats = getattr(client, "stats", None)
    return int(getattr(stats, "retries", 0) or 0)
