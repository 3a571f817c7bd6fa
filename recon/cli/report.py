"""`recon report`: argument handling only; recon.report.render does the work."""

from __future__ import annotations

import argparse
import errno
from typing import Any

from recon.cli.console import data_dir, progress

__all__ = ["register"]

# an --out the caller chose that cannot be written: a usage error (exit 2), not a crash
_PATH_ERRORS = {
    errno.EACCES, errno.EPERM, errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.EROFS,
    errno.EINVAL, errno.ENAMETOOLONG, errno.EEXIST,
}  # fmt: skip


def run_report(args: argparse.Namespace) -> int:
    from recon.catalog import latest_run, materialize_run, remote_runs
    from recon.errors import UsageError
    from recon.report import render

    dd = data_dir(args)
    if args.run:
        run_dir = dd.runs / args.run
        if dd.remote and not run_dir.is_dir() and args.run in remote_runs(dd):
            run_dir = materialize_run(dd, args.run)  # committed on object storage
        if not (run_dir / "summary.json").is_file():
            raise UsageError(f"no committed run {args.run!r} in {dd.runs}")
    else:
        found = latest_run(dd)
        if found is None:
            raise UsageError(f"no committed run in {dd.runs}; run `recon reconcile` first")
        run_dir = found
    try:
        with progress(f"rendering the report of run {run_dir.name}"):
            out = render(run_dir, args.out)
    except OSError as exc:
        if exc.errno not in _PATH_ERRORS:
            raise  # a full disk or an I/O error is not the caller's doing (exit 70)
        target = args.out or "the reports folder"
        raise UsageError(f"cannot write the report to {target}: {exc.strerror or exc}") from exc
    print(f"report: {out}")
    print(f"breaks: {out.parent / 'breaks.csv'} and breaks.parquet")
    return 0


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add report to `recon`."""
    p = sub.add_parser(
        "report",
        parents=parents,
        help="HTML report with charts for a run (+ breaks.csv / breaks.parquet)",
        description="Render a run (default: the latest) as one self-contained HTML file, "
        "with breaks.csv and breaks.parquet beside it.",
    )
    p.add_argument("--run", metavar="ID", default=None, help="run id (default: the latest)")
    p.add_argument(
        "--out",
        metavar="PATH",
        default=None,
        help="HTML file or folder (default: <data>/reports/<run_id>/report.html)",
    )
    p.set_defaults(func=run_report)
