"""`recon extract`: walk GET /v2/intents into a new snapshot (argument handling only)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from recon.cli.console import progress
from recon.errors import ConfigError

NO_BASE_URL = (
    "no API base URL: pass --base-url URL or set RECON_BASE_URL "
    "(for a local sandbox, `recon sandbox serve` prints its URL and keys)"
)
NO_KEY = "no API key: set RECON_API_KEY (it is never taken from a flag, to keep it out of shells)"


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add `recon extract`."""
    p = sub.add_parser(
        "extract",
        parents=parents,
        help="walk GET /v2/intents into a new snapshot",
        description=(
            "Walk GET /v2/intents into data/snapshots/snapshot_date=…/run_id=…/ "
            "(Parquet + _manifest.json), published atomically. The walk repeats until the id "
            "set is proven complete; if it cannot be, the snapshot is published with "
            "consistent=false and the exit code is 3. The API key comes from $RECON_API_KEY."
        ),
    )
    p.add_argument(
        "--base-url",
        default=None,
        help="API base URL (default: $RECON_BASE_URL)",
    )
    p.add_argument(
        "--intent-type",
        choices=["all", "onramp", "offramp"],
        default="all",
        help="only this type (a filtered snapshot never becomes the `intents` view)",
    )
    p.add_argument(
        "--status",
        default="all",
        help="only this status (a filtered snapshot never becomes the `intents` view)",
    )
    p.add_argument("--concurrency", type=int, default=8, help="pages fetched at once (default 8)")
    p.add_argument("--max-rps", type=float, default=None, help="cap on requests per second")
    p.add_argument(
        "--max-passes",
        type=int,
        default=5,
        help="walks allowed before giving up on consistency (default 5)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar and no summary line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the extract; print a one-line summary (exit 3 if it could not be made consistent)."""
    from recon.config import DataDir
    from recon.extraction.snapshot import InconsistentSnapshotError, extract

    base_url = args.base_url or os.environ.get("RECON_BASE_URL")
    if not base_url:
        raise ConfigError(NO_BASE_URL)
    if not os.environ.get("RECON_API_KEY"):
        raise ConfigError(NO_KEY)
    try:
        with progress("extract", enabled=False if args.quiet else None) as on_progress:
            result = extract(
                DataDir.resolve(args.data),
                base_url=base_url,
                intent_type=args.intent_type,
                status=args.status,
                concurrency=args.concurrency,
                max_rps=args.max_rps,
                max_passes=args.max_passes,
                quiet=args.quiet,
                on_progress=on_progress,
            )
    except InconsistentSnapshotError as exc:
        if not args.quiet:
            print(exc.result.summary(), file=sys.stderr)
        raise
    if not args.quiet:
        print(result.summary())
    return 0
