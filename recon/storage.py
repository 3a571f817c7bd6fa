"""Atomic publication of folders: write to a temp dir, fsync, rename; the manifest commits.

A snapshot or run becomes visible only when its folder, manifest included, is renamed into
place. Readers only ever look at final names (never `.tmp-*`), so a crash leaves nothing
half-visible; `clean_leftovers` removes what a crash left behind on the next start.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TMP_PREFIX = ".tmp-"


def fsync_dir(path: Path) -> None:
    """fsync a directory so a rename inside it is durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(path: Path) -> None:
    """fsync every file and folder under `path` (and `path` itself)."""
    for dirpath, _dirnames, filenames in os.walk(path):
        for name in filenames:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fsync_dir(Path(dirpath))


def write_json(path: Path, payload: Any) -> None:
    """Write JSON (sorted keys, UTF-8) and fsync it."""
    data = json.dumps(payload, indent=2, sort_keys=True, default=str).encode()
    with path.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def atomic_dir(final: Path, *, replace: bool = False) -> Iterator[Path]:
    """Yield a temp dir beside `final`'s top-level parent; on success publish it as `final`.

    The temp dir lives directly under `final.parent` with a `.tmp-` prefix. On an exception
    it is removed and nothing becomes visible. With `replace=True` an existing `final` is
    swapped out (used for statement partitions that are rewritten whole).
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f"{TMP_PREFIX}{final.name}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        yield tmp
        fsync_tree(tmp)
        if final.exists():
            if not replace:
                raise FileExistsError(f"{final} already exists")
            old = final.parent / f"{TMP_PREFIX}old-{final.name}-{uuid.uuid4().hex[:8]}"
            os.rename(final, old)
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
        fsync_dir(final.parent)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def clean_leftovers(root: Path) -> list[Path]:
    """Remove `.tmp-*` folders/files anywhere under `root`; return what was removed."""
    removed: list[Path] = []
    if not root.exists():
        return removed
    for path in sorted(root.rglob(f"{TMP_PREFIX}*")):
        if not path.exists():
            continue
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


WRITER_LOCK_NAME = ".writer.lock"
WRITER_LOCK_WAIT = float(os.environ.get("RECON_LOCK_WAIT", "10"))


@contextlib.contextmanager
def writer_lock(root: Path, what: str, *, wait: float | None = None) -> Iterator[None]:
    """Hold the data directory's one-writer lock (``<root>/.writer.lock``) for `what`.

    `statements import`, `extract`, `reconcile` and `daily` all take it, so one process at a
    time writes a data directory. It is re-entrant in the process that holds it (daily holds
    it across its steps, which take it again). A second process waits up to `wait` seconds
    (``$RECON_LOCK_WAIT``, default 10) and is then refused with `LockedError` (exit 2). The
    OS drops the lock when its process dies, so a crash never leaves it stale. On the first
    acquisition every crash leftover is swept (see `sweep_leftovers`): while we hold the
    lock, nothing else can be writing them.
    """
    from filelock import FileLock, Timeout

    from recon.errors import LockedError

    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(root / WRITER_LOCK_NAME), thread_local=False, is_singleton=True)
    first = not lock.is_locked
    try:
        lock.acquire(timeout=WRITER_LOCK_WAIT if wait is None else wait)
    except Timeout:
        raise LockedError(
            f"another recon process is writing {root} (lock {root / WRITER_LOCK_NAME}; "
            f"{what} waited {WRITER_LOCK_WAIT if wait is None else wait:g} s); "
            "let it finish, then run again"
        ) from None
    try:
        if first:
            sweep_leftovers(root)
        yield
    finally:
        lock.release()


def sweep_leftovers(root: Path) -> list[Path]:
    """Remove what crashed writers left in a data directory; call only under `writer_lock`.

    `snapshots/**/.tmp-*` (unpublished snapshots and their work folders), `runs/**/.tmp-*`
    (unpublished runs), `statements/**/.tmp-*` (statement partitions being written, e.g.
    ``.tmp-<part>.partial``) and every folder in ``.tmp-duckdb/`` (a run's scratch database).
    """
    removed: list[Path] = []
    for folder in ("snapshots", "runs", "statements"):
        removed += clean_leftovers(root / folder)
    scratch = root / ".tmp-duckdb"
    if scratch.is_dir():
        for path in sorted(scratch.iterdir()):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed
