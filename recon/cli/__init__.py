"""`recon` command line: argument handling only; the work is done by the library.

Each command group is a module of this package with a `register(sub, parents)` function
(`recon/cli/extract.py` for `recon extract`, `recon/cli/ops.py` for `daily`, `demo`, `erase`
and `migrate`, ...); this module only assembles them and turns every way a command can end
into one exit code (`recon.errors.exit_code_for`): 0 ok, 1 finished but found breaks above
the threshold, 2 usage or input error, 3 upstream/API failure after retries, 70 anything
unexpected (its traceback is written to a log file and stderr gets one line saying where),
130 interrupted, 141 the output's reader went away.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import select
import sys
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from recon import i18n
from recon.cli.console import one_line, print_error
from recon.errors import EXIT_PIPE, EXIT_USAGE, ReconError, exit_code_for, redact
from recon.pii import PersonalDataFilter, redact_text

COMMAND_MODULES = (
    "recon.cli.sandbox",
    "recon.cli.extract",
    "recon.cli.statements",
    "recon.cli.reconcile",
    "recon.cli.report",
    "recon.cli.ops",
    "recon.cli.sql",
    "recon.cli.review",
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print_error(message)
        self.exit(EXIT_USAGE)


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
    common.add_argument(
        "--lang",
        metavar="LANG",
        default=None,
        help="language of what people read (report, review app, tables): pt-BR or en "
        "(default: $RECON_LANG, else recon.toml [ui] language, else pt-BR)",
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


def _check_data() -> None:
    """The data directory is read before the command runs (`DataDir.resolve`: a text that
    names a scheme must parse; a remote one is checked: credentials, the bucket reachable),
    so its mistake is the one line a user sees, whatever the command."""
    chosen = os.environ.get("RECON_DATA")
    if chosen:
        from recon.config import DataDir

        DataDir.resolve(chosen)


@contextlib.contextmanager
def _chosen(args: argparse.Namespace) -> Iterator[None]:
    """`--data` and `--lang` as $RECON_DATA and $RECON_LANG while the command runs, so every
    step and every child process (a notebook's kernel, a scheduled job) reads the same choice;
    put back as they were afterwards, so a caller of `main` in a longer process (a notebook, a
    test) is not left with this command's choice."""
    chosen = {"RECON_DATA": getattr(args, "data", None), "RECON_LANG": getattr(args, "lang", None)}
    before = {name: os.environ.get(name) for name in chosen}
    try:
        for name, value in chosen.items():
            if value:
                os.environ[name] = i18n.html_lang(value) if name == "RECON_LANG" else value
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * min(getattr(args, "verbose", 0), 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:  # no full document or phone in any log line
        handler.addFilter(PersonalDataFilter())
    try:
        with _chosen(args):
            _check_data()
            code = args.func(args)
    except ReconError as exc:
        print_error(redact_text(str(exc)))
        return exit_code_for(exc)
    except KeyboardInterrupt as exc:
        print("recon: interrupted", file=sys.stderr)
        return exit_code_for(exc)
    except BrokenPipeError as exc:
        if not _stdout_gone():  # a socket, not our output: unexpected, as below
            return _crashed(exc)
        # `recon … | head`: the reader has what it wanted; stop quietly, as Unix tools do,
        # and let nothing try to flush into the closed pipe on the way out
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_PIPE
    except Exception as exc:  # anything else is unexpected: a bug, memory, disk
        return _crashed(exc)
    return int(code or 0)


def _stdout_gone() -> bool:
    """Whether standard output is a pipe whose reading end was closed."""
    try:
        poll = select.poll()
        poll.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll(), no file descriptor
        return False


def _crashed(exc: Exception) -> int:
    """Anything unexpected: the traceback to a log file, one line to stderr, exit 70."""
    where = log_crash(exc)
    kind = type(exc).__name__
    print_error(
        f"unexpected {kind}: {one_line(_redacted(str(exc)))[:300]}"
        f" (exit 70; traceback in {where or 'no writable place: see above'})"
    )
    if not where:
        traceback.print_exception(exc, file=sys.stderr)
    return exit_code_for(exc)


def _redacted(text: str) -> str:
    secrets = (os.environ.get("RECON_API_KEY"), os.environ.get("RECON_PIX_CLIENT_SECRET"))
    return redact_text(redact(text, *secrets))


def log_crash(exc: BaseException) -> str:
    """Write `exc`'s traceback (secrets redacted) to `<data>/logs/` when the data directory
    exists, else to the temp folder.

    Returns the file's path, or "" when neither place can be written (a full disk).
    """
    text = _redacted("".join(traceback.format_exception(exc)))
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    data = Path(os.environ.get("RECON_DATA") or "data")
    try:  # a remote data directory keeps its logs on its local side
        from recon import config, lake

        chosen = os.environ.get("RECON_DATA") or ""
        scheme = lake.scheme_of(chosen)
        if scheme == "file":
            data = config.file_path(chosen)
        elif scheme is not None:
            data = config.local_root(lake.parse(chosen))
    except Exception:  # never fail while reporting a failure
        pass
    # the data directory's logs/ when there is a data directory (never make one for this)
    folders = [data / "logs"] if data.is_dir() else []
    for folder in (*folders, Path(tempfile.gettempdir())):
        path = folder / f"recon-crash-{stamp}-{os.getpid()}.log"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError:
            continue
        return str(path)
    return ""


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
