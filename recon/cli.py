"""`recon` command line: argument handling only; the work is done by the library.

Each package registers its own commands (`recon/<package>/commands.py: register`), so the
command for a concern lives beside the code that does it. Exit codes (DESIGN.md): 0 ok,
1 finished but found breaks above the threshold, 2 usage or input error, 3 upstream/API
failure after retries.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from recon.errors import ReconError

COMMAND_MODULES = (
    "recon.sandbox.commands",
    "recon.extract.commands",
    "recon.statements.commands",
    "recon.reconcile.commands",
    "recon.sqlcmd",
    "recon.review.commands",
)

EXIT_OK, EXIT_BREAKS, EXIT_USAGE, EXIT_UPSTREAM = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"recon: error: {message}\n")


def common_options() -> argparse.ArgumentParser:
    """Options every command takes."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data",
        metavar="DIR",
        default=None,
        help="data directory (default: $RECON_DATA or ./data)",
    )
    common.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)"
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="recon",
        description="Reconcile the v2 Intents API against bank / PIX statements; chart the funnel.",
    )
    from recon import __version__

    parser.add_argument("--version", action="version", version=f"recon {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    parents = [common_options()]
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub, parents)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if getattr(args, "data", None):
        os.environ["RECON_DATA"] = args.data
    try:
        code = args.func(args)
    except ReconError as exc:
        print(f"recon: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("recon: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
