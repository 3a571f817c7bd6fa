"""Atomic publication of folders, and one writer at a time per data directory.

A snapshot or run becomes visible only when its folder, manifest included, is renamed into
place. Readers only ever look at final names (never `.tmp-*`), so a crash leaves nothing
half-visible.

Every command that writes (`extract`, `statements import`, `reconcile`, `daily`) holds the
data directory's writer lock (`writer_lock`, the OS file lock `<data>/.recon.lock`, which the
kernel drops when a process dies). A second writer is refused at once with `LockedError`
(exit 2) naming the holder; the same process may take the lock again (`daily` holds it
around the steps that take it themselves). Whoever takes it first sweeps every leftover a
crash can leave (`sweep_leftovers`): while the lock is held nothing else is writing, so
every `.tmp-*` under the data directory and every scratch folder of `.tmp-duckdb/` is dead.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import threading
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from recon.errors import LockedError

TMP_PREFIX = ".tmp-"
LOCK_NAME = ".recon.lock"
# where each scratch database of a run spills (ReconcileSettings.temp_directory default)
SCRATCH_DIR = ".tmp-duckdb"
# the folders of a data directory whose `.tmp-*` entries a crash can leave
_SWEPT = ("snapshots", "statements", "runs", "reports", "daily")

# locks this process holds, per data directory and thread: the holding thread may take its
# lock again; another thread of the same process is refused like another process
_held: dict[tuple[str, int], tuple[FileLock, int]] = {}
_held_guard = threading.Lock()


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


def sweep_leftovers(root: Path) -> list[Path]:
    """Remove what crashed writers left in the data directory `root`; return it.

    Call only while holding `writer_lock(root)`: `.tmp-*` entries under the data folders
    (half-written snapshots, runs, reports, statement batches) and the scratch folders of
    runs in `.tmp-duckdb/`.
    """
    removed: list[Path] = []
    for name in _SWEPT:
        removed += clean_leftovers(root / name)
    scratch = root / SCRATCH_DIR
    if scratch.is_dir():
        for path in sorted(scratch.iterdir()):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
            removed.append(path)
    return removed


@contextlib.contextmanager
def writer_lock(root: Path, command: str) -> Iterator[None]:
    """Hold the data directory's writer lock while the block runs (see the module doc).

    Refused at once with LockedError when another process (or another thread) holds it;
    taken again freely by the thread that holds it. The first holder sweeps crash leftovers.
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    key = (str(root.resolve()), threading.get_ident())
    with _held_guard:
        entry = _held.get(key)
        if entry is not None:
            _held[key] = (entry[0], entry[1] + 1)
    if entry is not None:
        try:
            yield
        finally:
            with _held_guard:
                lock, count = _held[key]
                _held[key] = (lock, count - 1)
        return
    path = root / LOCK_NAME
    info = root / (LOCK_NAME + ".info")
    lock = FileLock(str(path), timeout=0, thread_local=False)
    try:
        lock.acquire()
    except Timeout:
        raise LockedError(
            f"another {_holder(info)} is writing to {root} (lock {path}); "
            "let it finish, then run again"
        ) from None
    try:
        with _held_guard:
            _held[key] = (lock, 1)
        with contextlib.suppress(OSError):
            info.write_text(
                json.dumps(
                    {
                        "command": command,
                        "pid": os.getpid(),
                        "argv": sys.argv[:1],
                        "since": datetime.now(UTC).isoformat(timespec="seconds"),
                    }
                ),
                encoding="utf-8",
            )
        sweep_leftovers(root)
        yield
    finally:
        with _held_guard:
            _held.pop(key, None)
        with contextlib.suppress(OSError):
            info.unlink()
        lock.release()


def _holder(info: Path) -> str:
    """`recon daily` (pid 123, since …) from the lock's info file, else a generic name."""
    try:
        data = json.loads(info.read_text(encoding="utf-8"))
        return f"`recon {data['command']}` (pid {data['pid']}, since {data['since']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "recon command"
