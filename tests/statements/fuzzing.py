"""A seeded mutation fuzzer over every statement parser (issue 19 item 8, issue 14 item 8).

Each case takes a seed file of some format, damages it one way (truncation, flipped bytes,
NULs, a deleted or repeated line, another encoding, a huge field, a huge or changed number)
and reads it the way `recon statements import` does, up to the rows it would store. A case
passes when the read ends in one of the documented outcomes:

- lines (and, with quarantine, bad lines) whose every amount is within bounds and whose
  sign agrees with its direction;
- a ReconError whose message is one line naming the file.

Anything else (a traceback of any other exception) is a crasher.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.compute as pc

from recon.errors import ReconError
from recon.money import MAX_CENTS
from recon.statements.importer import read_source, rows_to_table
from recon.statements.lines import KINDS

Mutation = Callable[[bytes, random.Random], bytes]


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(0, max(1, len(data)))]


def flip(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        if out:
            out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def nuls(data: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(data) + 1)
    return data[:at] + b"\x00" * rng.randint(1, 4) + data[at:]


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def drop_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    if lines:
        del lines[rng.randrange(len(lines))]
    return b"".join(lines)


def repeat_line(data: bytes, rng: random.Random) -> bytes:
    lines = _lines(data)
    if lines:
        at = rng.randrange(len(lines))
        lines.insert(at, lines[at])
    return b"".join(lines)


def reencode(data: bytes, rng: random.Random) -> bytes:
    text = data.decode("utf-8", errors="replace") + " São Paulo ação"
    codec = rng.choice(["latin-1", "cp1252", "utf-16", "utf-8-sig", "utf-32"])
    return text.encode(codec, errors="replace")


def huge_field(data: bytes, rng: random.Random) -> bytes:
    """A long run of one character inside the file (a 200 KB field)."""
    at = rng.randrange(len(data) + 1)
    run = rng.choice([b"A", b"9", b" ", b"\xc3\xa9"]) * rng.randint(5_000, 200_000)
    return data[:at] + run + data[at:]


def huge_number(data: bytes, rng: random.Random) -> bytes:
    """A digit run grown into a huge number (>= 2^63 cents, or 4,300+ digits)."""
    runs = [(m.start(), m.end()) for m in re.finditer(rb"[0-9]+", data)]
    if not runs:
        return data
    start, end = rng.choice(runs)
    digits = b"9" * rng.choice([17, 19, 20, 25, 4400])
    return data[:start] + digits + data[end:]


def change_digit(data: bytes, rng: random.Random) -> bytes:
    """One digit changed: a wrong total, balance, amount or date."""
    spots = [i for i, b in enumerate(data) if 48 <= b <= 57]
    if not spots:
        return data
    at = rng.choice(spots)
    return data[:at] + bytes([48 + (data[at] - 47) % 10]) + data[at + 1 :]


MUTATIONS: tuple[Mutation, ...] = (
    truncate,
    flip,
    nuls,
    drop_line,
    repeat_line,
    reencode,
    huge_field,
    huge_number,
    change_digit,
)


@dataclass(frozen=True)
class Outcome:
    kind: str  # "lines" | "error"
    detail: str


def read_case(path: Path, fmt: str) -> Outcome:
    """Read `path` as the importer does (format given or sniffed) and check the outcome;
    raises AssertionError for an outcome outside the contract, lets crashes through."""
    try:
        fmt, parsed = read_source(path, fmt)
        table, bad = rows_to_table(
            parsed,
            source_format=fmt,
            source_file=str(path),
            account="fuzz",
            imported_at=datetime(2026, 11, 1, tzinfo=UTC),
        )
    except ReconError as exc:
        message = str(exc)
        assert "\n" not in message, f"a multi-line error: {message!r}"
        assert message, "an empty error"
        assert len(message) < 2000, f"an error of {len(message)} characters"
        return Outcome("error", message)
    bad = list(parsed.bad) + bad
    amounts = table.column("amount_cents")
    if table.num_rows:
        assert pc.max(pc.abs(amounts)).as_py() <= MAX_CENTS
        credit = pc.equal(table.column("direction"), "credit")
        agrees = pc.or_(
            pc.and_(credit, pc.greater_equal(amounts, 0)),
            pc.and_(pc.invert(credit), pc.less_equal(amounts, 0)),
        )
        assert pc.all(agrees).as_py(), "a sign that disagrees with the direction"
        assert set(table.column("kind").to_pylist()) <= set(KINDS)
        assert table.column("booked_at").null_count == 0
    for b in bad:
        assert isinstance(b.source_line, int) and b.reason
    return Outcome("lines", f"{table.num_rows} lines, {len(bad)} bad")
