"""`recon daily`: the scheduled job — extract, import the inbox, reconcile, report.

One run per business day, safe to schedule and to re-run:

- **Lock.** The whole job holds the data directory's writer lock ``data/.recon.lock``
  (`recon.storage.writer_lock`: an OS file lock, released by the kernel if the process dies,
  so a crash never leaves a stale lock), shared with `extract`, `statements import` and
  `reconcile`. Another writer on the same data directory fails at once with `LockedError`
  (exit 2) instead of waiting.
- **Inbox.** Every regular, non-hidden file directly in ``data/inbox/`` is imported (format
  sniffed). After a file is imported it is *moved* to ``data/inbox/processed/<date>/`` so the
  inbox always shows what is still pending (statement imports are idempotent, so a file
  dropped twice adds nothing). A file that cannot be imported (bad input) stays in the inbox
  and the job stops with exit 2, naming it; files imported before it stay imported. A file
  that *crashes* the importer (a bug) is moved to ``data/inbox/failed/<date>/`` so it does
  not stop every later day, and the job stops with exit 70.
- **Failure.** A job that fails records it: ``data/daily/<date>.json`` with ``status:
  failed``, the error and why, and a report stub saying why
  (``data/reports/failed-<date>/report.html``); the exit code is 2, 3 or 70, never 0 or 1.
  The next run for that date runs the whole job again.
- **as_of.** The end of the business day (midnight after `date` in ``business_tz``,
  default America/Sao_Paulo), or the snapshot's server time if that is earlier (a run during
  the day reconciles what has happened so far).
- **Idempotent per date.** A finished day is recorded in ``data/daily/<date>.json``. Running
  again for that date re-uses the recorded run: nothing is extracted, imported or
  reconciled again; the report is re-rendered only if it is missing, and the exit code is
  assessed again from the recorded run. ``force=True`` (``--force``) runs the whole job again
  (new snapshot, new inbox files, a new run whose breaks keep their ids and first-seen run)
  and points the day's record at the new run.
- **Exit codes** (docs/contracts.md): 0 ok; 1 when open breaks of a failing priority exist (P1 by
  default) or there are more open breaks than ``max_breaks``; 2 usage/input; 3 upstream API.
  Thresholds (recon.reconciliation.alerts) live in ``recon.toml``::

      [alerts]
      fail_on_priorities = ["P1"]   # any open break of these priorities -> exit 1
      max_breaks = 50               # more open breaks than this -> exit 1 (default: no limit)
      statements_overdue = "30h"    # a business day no account statement covers this long
                                    # after it ended (at the run's as_of) -> exit 1

The run decides which days are overdue (summary.json ``statements_overdue``, from the
engine's settings); a run with such days exits 1 whatever its breaks.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from recon.config import DEFAULT_BUSINESS_TZ, DataDir, load_config
from recon.errors import ConfigError, ReconError, UsageError
from recon.pii import redact_file, redact_text
from recon.reconciliation import audit
from recon.reconciliation.alerts import Thresholds, assess_run
from recon.reconciliation.settings import settings_kw
from recon.storage import write_json, writer_lock

__all__ = [
    "DailyResult",
    "Steps",
    "business_day_end",
    "run_daily",
]

log = logging.getLogger(__name__)


def business_tz(config: Mapping[str, Any]) -> ZoneInfo:
    """The business-day time zone: ``[reconcile] business_tz``, default America/Sao_Paulo."""
    name = config.get("reconcile", {}).get("business_tz", DEFAULT_BUSINESS_TZ)
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"[reconcile] business_tz: unknown time zone {name!r}") from exc


def business_day_end(day: date, tz: ZoneInfo) -> datetime:
    """The instant the business day `day` ends (local midnight after it), in UTC."""
    return datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz).astimezone(UTC)


@dataclass(frozen=True)
class Steps:
    """The parts the job runs, by interface; tests pass fakes, the CLI the real ones."""

    extract: Callable[..., Any]
    import_statements: Callable[..., Any]
    reconcile: Callable[..., Any]
    render: Callable[..., Path]

    @classmethod
    def default(cls) -> Steps:
        from recon.extraction import extract
        from recon.reconciliation import reconcile
        from recon.report import render
        from recon.statements import import_statements

        return cls(extract, import_statements, reconcile, render)


@dataclass(frozen=True)
class DailyResult:
    """What one `recon daily` did (or re-used) for a business date."""

    date: date
    run_id: str
    run_dir: Path
    report: Path
    as_of: datetime
    snapshot_run_id: str | None
    imported: tuple[str, ...]
    reused: bool
    exit_code: int
    breaks: int
    by_priority: dict[str, int] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()


def _record_path(dd: DataDir, day: date) -> Path:
    return dd.root / "daily" / f"{day.isoformat()}.json"


def _write_record(path: Path, payload: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".tmp-{path.name}")
    write_json(tmp, payload)
    os.replace(tmp, path)


def _read_record(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        log.warning("%s is not valid JSON; running the day again", path)
        return None
    return record if isinstance(record, dict) else None


def pending_inbox_files(dd: DataDir) -> list[Path]:
    """Files waiting in the inbox: regular, non-hidden, directly in it, in name order."""
    if not dd.inbox.is_dir():
        return []
    return sorted(
        p for p in dd.inbox.iterdir() if p.is_file() and not p.name.startswith((".", "_"))
    )


def _richest_first(paths: list[Path]) -> list[Path]:
    """Inbox files, the formats that carry PIX ids first (API Pix, camt, Open Finance,
    CNAB 240, OFX, then CSV):
    a bank CSV without PIX ids finds the movements they name instead of adding its own
    (one import per file, so the importer's own ordering cannot see across files)."""
    from recon.errors import StatementError
    from recon.statements.lines import FORMAT_RANK
    from recon.statements.sniff import sniff_format

    def rank(path: Path) -> tuple[int, str]:
        try:
            return FORMAT_RANK.get(sniff_format(path), len(FORMAT_RANK) + 1), path.name
        except (StatementError, OSError, UnicodeDecodeError):
            return len(FORMAT_RANK) + 1, path.name  # its import names what is wrong

    return sorted(paths, key=rank)


def _move_processed(path: Path, folder: Path) -> Path:
    """Move an inbox file to `folder` (processed/ or failed/) with its documents masked."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / path.name
    n = 1
    while target.exists():  # the same name dropped twice in a day: keep both
        target = folder / f"{path.stem}.{n}{path.suffix}"
        n += 1
    shutil.move(str(path), target)
    # kept for the audit trail, not for what people read: documents and phones masked
    redact_file(target)
    return target


def _snapshot_time(snapshot: Any) -> datetime | None:
    manifest = getattr(snapshot, "manifest", None) or {}
    value = manifest.get("snapshot_at") if isinstance(manifest, Mapping) else None
    if value is None:
        return None
    stamp = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)).astimezone(UTC)


def _notify(
    dd: DataDir,
    config: str | os.PathLike[str] | None,
    run_dir: Path,
    report: Path,
    exit_code: int,
    day: date,
    audit_head: str = "",
) -> None:
    """Send the run's notifications; whatever happens, the daily job's result stands."""
    try:
        from recon.review.notify import notify_run

        outcome = notify_run(
            run_dir, load_config(config, dd), exit_code=exit_code, report=report,
            date=day.isoformat(), audit_head=audit_head,
        )  # fmt: skip
        if outcome.sent:
            log.info("notified by %s", ", ".join(outcome.sent))
    except Exception as exc:  # never fail the reconciliation for a notification
        log.warning("notify: %s", exc)


def run_daily(
    data: str | os.PathLike[str] | DataDir | None = None,
    *,
    date: date | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    transport: Any = None,
    config: str | os.PathLike[str] | None = None,
    force: bool = False,
    quiet: bool | None = None,
    steps: Steps | None = None,
    now: datetime | None = None,
) -> DailyResult:
    """Run (or re-use) the daily job for business date `date` (default: today there).

    Raises LockedError when another daily run holds the lock, UsageError/StatementError for
    bad input (exit 2) and ApiError when the API fails after retries (exit 3).
    """

    dd = data if isinstance(data, DataDir) else DataDir.resolve(data)
    cfg = load_config(config, dd)
    tz = business_tz(cfg)
    thresholds = Thresholds.from_config(cfg)
    today = (now or datetime.now(UTC)).astimezone(tz).date()
    day = date or today
    if day > today:
        raise UsageError(f"--date {day} is in the future (today is {today} in {tz.key})")

    dd.ensure()
    # the data directory's writer lock, held across the steps (which take it again)
    with writer_lock(dd.root, "daily"):
        try:
            return _run_locked(
                dd,
                day,
                tz,
                thresholds,
                force=force,
                steps=steps,
                quiet=quiet,
                base_url=base_url,
                api_key=api_key,
                transport=transport,
                config=config,
            )
        except Exception as exc:  # recorded under the lock, then the error goes out
            record_failure(dd, day, exc)
            raise


def record_failure(dd: DataDir, day: date, exc: BaseException) -> Path:
    """Record that the job failed for `day`: ``daily/<date>.json`` with status failed and
    why, and a report stub saying why (``reports/failed-<date>/report.html``).

    A day already done (a record with a run) keeps its run; the failure is added to it as
    ``last_failure``. Never raises: the job's own error is what the caller must see.
    """
    from recon.errors import exit_code_for, redact

    why = redact(" ".join(str(exc).split()) or type(exc).__name__, os.environ.get("RECON_API_KEY"))
    why = redact_text(why)
    failure = {
        "status": "failed",
        "error": type(exc).__name__,
        "why": why[:2000],
        "exit_code": exit_code_for(exc),
        "failed_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    record_path = _record_path(dd, day)
    stub = dd.root / "reports" / f"failed-{day.isoformat()}" / "report.html"
    try:
        stub.parent.mkdir(parents=True, exist_ok=True)
        tmp = stub.with_name(f".tmp-{stub.name}")
        tmp.write_text(_failure_html(day, failure), encoding="utf-8")
        os.replace(tmp, stub)
        failure["report"] = str(stub)
        previous = _read_record(record_path)
        if previous is not None and (dd.runs / str(previous.get("run_id"))).is_dir():
            payload = {**previous, "last_failure": failure}
        else:
            payload = {
                "date": day.isoformat(),
                **failure,
                "imported": _imported_on(dd, day),
                "failed_inbox_files": _failed_on(dd, day),
            }
        _write_record(record_path, payload)
    except OSError as err:  # a full disk: the caller's error still goes out
        log.error("could not record the failed day %s: %s", day, err)
    return record_path


def _failure_html(day: date, failure: dict[str, Any]) -> str:
    from html import escape

    return (
        "<!doctype html><html lang=en><meta charset=utf-8>"
        f"<title>recon daily {day}: failed</title>"
        f"<h1>recon daily {day}: the job failed</h1>"
        f"<p><strong>{escape(str(failure['error']))}</strong> (exit {failure['exit_code']}): "
        f"{escape(str(failure['why']))}</p>"
        f"<p>Failed at {escape(str(failure['failed_at']))}. No run was reconciled for this "
        "day; fix the cause and run <code>recon daily</code> again.</p></html>\n"
    )


def _imported_on(dd: DataDir, day: date) -> list[str]:
    """The inbox files imported for `day` (those moved to inbox/processed/<date>/)."""
    folder = dd.inbox / "processed" / day.isoformat()
    return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def _failed_on(dd: DataDir, day: date) -> list[str]:
    folder = dd.inbox / "failed" / day.isoformat()
    return sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []


def _run_locked(
    dd: DataDir,
    day: date,
    tz: ZoneInfo,
    thresholds: Thresholds,
    *,
    force: bool,
    steps: Steps | None,
    quiet: bool | None,
    base_url: str | None,
    api_key: str | None,
    transport: Any,
    config: str | os.PathLike[str] | None,
) -> DailyResult:
    record_path = _record_path(dd, day)
    record = None if force else _read_record(record_path)
    steps = steps or Steps.default()
    if record is not None and (dd.runs / str(record.get("run_id"))).is_dir():
        run_dir = dd.runs / record["run_id"]
        report = Path(record.get("report") or "")
        if not report.is_file():
            report = steps.render(run_dir)
        verdict = assess_run(run_dir, thresholds)
        log.info("daily %s already done (run %s); re-using it", day, record["run_id"])
        return DailyResult(
            date=day,
            run_id=record["run_id"],
            run_dir=run_dir,
            report=report,
            as_of=datetime.fromisoformat(record["as_of"]),
            snapshot_run_id=record.get("snapshot_run_id"),
            imported=tuple(record.get("imported", ())),
            reused=True,
            exit_code=verdict.exit_code,
            breaks=verdict.breaks,
            by_priority=verdict.by_priority,
            reasons=verdict.reasons,
        )

    # 1. extract: a new snapshot; its server time bounds as_of.
    extract_kw: dict[str, Any] = {"base_url": base_url, "api_key": api_key, "quiet": quiet}
    if transport is not None:
        extract_kw["transport"] = transport
    snapshot = steps.extract(dd, **extract_kw)
    snapshot_at = _snapshot_time(snapshot)

    # 2. import the inbox, one file at a time so a bad file is named and the rest kept.
    # A first attempt that crashed after its imports left them in processed/<date>/: they
    # were imported for this day too, so the record lists them (not only this attempt's).
    imported: list[str] = [] if force else _imported_on(dd, day)
    processed = dd.inbox / "processed" / day.isoformat()
    for path in _richest_first(pending_inbox_files(dd)):
        try:
            steps.import_statements([path], data=dd)
        except ReconError:
            raise  # bad input: the file stays in the inbox, named in the error (exit 2)
        except Exception:
            # a file that crashes the importer is moved aside, so it does not stop every
            # later day; the job still fails (exit 70) and the day's record names it
            moved = _move_processed(path, dd.inbox / "failed" / day.isoformat())
            log.error("%s crashed the import; moved to %s", path.name, moved)
            raise
        _move_processed(path, processed)
        imported.append(path.name)

    # 3. reconcile as of the business day's end (or the snapshot's time, if earlier).
    day_end = business_day_end(day, tz)
    as_of = min(day_end, snapshot_at) if snapshot_at else day_end
    result = steps.reconcile(dd, as_of=as_of, **settings_kw(config, dd))
    run_dir = Path(result.path)

    # 4. report, then record the day (the record is the commit of the daily job).
    report = steps.render(run_dir)
    verdict = assess_run(run_dir, thresholds)
    # the audit trail's head leaves the data dir (the record, the notification): a later
    # `recon audit verify --expect-head` shows whether entries up to it were cut or rewritten
    trail = audit.verify(dd)
    audit_head = f"{trail.entries} {trail.head}" if trail.ok else ""
    _write_record(
        record_path,
        {
            "date": day.isoformat(),
            "run_id": result.run_id,
            "snapshot_run_id": getattr(snapshot, "run_id", None),
            "as_of": as_of.isoformat(),
            "imported": imported,
            "report": str(report),
            "exit_code": verdict.exit_code,
            "audit_head": audit_head,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        },
    )
    # 5. tell people (webhook / e-mail, [notify] in recon.toml); a failure is only logged
    _notify(dd, config, run_dir, report, verdict.exit_code, day, audit_head)
    return DailyResult(
        date=day,
        run_id=result.run_id,
        run_dir=run_dir,
        report=report,
        as_of=as_of,
        snapshot_run_id=getattr(snapshot, "run_id", None),
        imported=tuple(imported),
        reused=False,
        exit_code=verdict.exit_code,
        breaks=verdict.breaks,
        by_priority=verdict.by_priority,
        reasons=verdict.reasons,
    )
