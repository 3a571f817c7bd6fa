"""Progress of a long step, reported to whoever asked for it.

A library function that takes long (`recon.extract`) calls an `OnProgress` callback with a
`Progress` as it goes; it draws nothing itself. The command line passes a callback that draws
a bar on a terminal (`recon.cli.console.progress`); a notebook or a scheduled job passes none
and gets no bar, or passes its own (a logger, a widget).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["OnProgress", "Progress"]


@dataclass(frozen=True, slots=True)
class Progress:
    """`done` of `total` `unit` of the step `step` so far (e.g. 1,200 of 5,000 intents)."""

    step: str
    done: int
    total: int
    unit: str


OnProgress = Callable[[Progress], None]
