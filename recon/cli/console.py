"""What every command module shares: argument types, the console, the data directory,
progress for long steps, and how a run's verdict is printed. Argument handling only; no work
is done here."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from recon.progress import OnProgress, Progress

T = TypeVar("T")

__all__ = [
    "add_engine_argument",
    "console",
    "data_dir",
    "parse_date",
    "parse_timestamp",
    "positive_int",
    "print_verdict",
]


def parse_timestamp(text: str) -> datetime:
    """``--as-of``: ISO 8601 with an offset or ``Z`` (a bare time is ambiguous, so refused)."""
    try:
        stamp = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an ISO 8601 timestamp: {text!r} (e.g. 2026-11-20T23:59:59-03:00)"
        ) from None
    if stamp.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f"timestamp {text!r} has no UTC offset (add Z or e.g. -03:00)"
        )
    return stamp.astimezone(UTC)


def parse_date(text: str) -> date:
    """``--date``: a calendar date ``YYYY-MM-DD``."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {value}")
    return value


def print_error(message: str) -> None:
    """The one way a command reports a failure: `recon: error: <message>` on one line of
    stderr (the caller returns the exit code, 2 for bad input)."""
    print(f"recon: error: {one_line(message)}", file=sys.stderr)


def one_line(text: str) -> str:
    """`text` with every run of white space (newlines too) as one blank."""
    return " ".join(text.split())


def console() -> Any:
    from rich.console import Console

    console = Console(highlight=False)
    # In a job's log (not a terminal) rich assumes 80 columns and truncates category names.
    return console if console.is_terminal else Console(highlight=False, width=120)


def print_line(out: Any, text: str) -> None:
    """`text` on one line as written: not wrapped at the console's width (a path in a job's
    log stays whole, for a person to copy and a script to read) nor read as markup (a file
    name may hold brackets)."""
    out.print(text, soft_wrap=True, markup=False)


def add_engine_argument(p: argparse.ArgumentParser) -> None:
    """`--engine duckdb|spark` (default: recon.toml's [engine] kind, else duckdb)."""
    p.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        default=None,
        help="run the models on DuckDB (default) or Spark in local mode (needs "
        "pip install 'pixrecon[spark]' and Java 17+); default: recon.toml [engine] kind",
    )


def data_dir(args: argparse.Namespace) -> Any:
    from recon.config import DataDir

    return DataDir.resolve(args.data)


def print_verdict(code: int, reasons: tuple[str, ...]) -> None:
    """`exit 1: <reasons>` on stderr when a finished run crosses the alert thresholds."""
    if code:
        print("exit 1: " + "; ".join(reasons), file=sys.stderr)


@contextlib.contextmanager
def progress(label: str, *, enabled: bool | None = None) -> Iterator[OnProgress | None]:
    """A spinner, `label` and the elapsed time on stderr while a step runs, only when stderr is
    a terminal (`enabled` None); nothing at all in a job's log or a pipe. It clears itself.

    Yields the callback to hand the step's library function as `on_progress` (None when
    nothing is drawn): its `Progress` events add a bar and "done/total unit" to the line.
    """
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress as Bar
    from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn

    bar = Bar(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        _bar_when_counted(),
        TextColumn("{task.fields[count]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True, force_terminal=True),
        transient=True,
    )

    with bar:
        task = bar.add_task(label, total=None, count="")

        def draw(event: Progress) -> None:
            count = f"{event.done:,}/{event.total:,} {event.unit}"
            bar.update(task, completed=event.done, total=event.total, count=count)

        yield draw


def _bar_when_counted() -> Any:
    """A bar column that draws nothing until the step reports a total."""
    from rich.progress import BarColumn
    from rich.text import Text

    class CountedBar(BarColumn):
        def render(self, task: Any) -> Any:
            return super().render(task) if task.total is not None else Text("")

    return CountedBar()


def with_progress(label: str, func: Callable[..., T], *, reports: bool = False) -> Callable[..., T]:
    """`func` that shows `progress(label)` while it runs (for the steps of `recon daily`);
    with `reports`, `func` takes the progress callback as `on_progress`."""

    def run(*args: Any, **kwargs: Any) -> T:
        with progress(label) as on_progress:
            if reports:
                kwargs["on_progress"] = on_progress
            return func(*args, **kwargs)

    return run
