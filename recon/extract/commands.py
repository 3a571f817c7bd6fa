"""Command-line registration for this package (filled in by its owner)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Add this package's subcommands to `recon`."""
