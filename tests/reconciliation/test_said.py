"""Rule 3f over any text: the span staging gives a line (stg_statement_lines.moved_from ..
moved_until) equals the rule read as docs/contracts.md says, in Python, whatever the text holds."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from recon import catalog, testing
from recon.config import DataDir
from recon.reconciliation.build import build
from recon.testing.handbuilt import T0, World, intent, line

TZ = testing.BUSINESS_TZ
AT = re.compile(r"([0-3][0-9])/([01][0-9]) ([01][0-9]|2[0-3]):([0-5][0-9])")
ON = re.compile(r"(?:^|[^0-9/])([0-3][0-9])/([01][0-9]) *$")
WEEK = timedelta(days=7)
DAY = timedelta(days=1)


def _instant(booked_day: date, dd: str, mm: str, clock: str) -> datetime | None:
    """What the text's DD/MM (and time) reads as: local, in the year that puts the day on or
    before the booking's day; None when no such date."""
    year = booked_day.year - (1 if int(mm) > booked_day.month else 0)
    try:
        return datetime.strptime(f"{year}-{mm}-{dd} {clock}", "%Y-%m-%d %H:%M:%S").replace(
            tzinfo=TZ
        )
    except ValueError:
        return None


def expected_span(text: str, booked: datetime) -> tuple[datetime, datetime]:
    local = booked.astimezone(TZ)
    if local.time() != datetime.min.time():  # a booking with its time of day
        return booked, booked
    latest = booked + DAY

    def kept(t: datetime | None) -> datetime | None:
        return t if t is not None and booked - WEEK <= t < latest else None

    m = AT.search(text)
    at = kept(_instant(local.date(), m[1], m[2], f"{m[3]}:{m[4]}:00")) if m else None
    if at is not None:
        return at, at
    n = ON.search(text)
    on = kept(_instant(local.date(), n[1], n[2], "00:00:00")) if n else None
    if on is not None:
        return on, on + DAY
    return booked, latest


day_month = st.tuples(st.integers(0, 39), st.integers(0, 19)).map(
    lambda p: f"{p[0]:02d}/{p[1]:02d}"
)
clock = st.tuples(st.integers(0, 29), st.integers(0, 59)).map(lambda p: f"{p[0]:02d}:{p[1]:02d}")
# the text's day: days from the booking's (the edges of the 7 days, mostly), or any DD/MM
near = st.one_of(st.sampled_from([-8, -7, -6, -1, 0, 1]), st.integers(-12, 3))
forms = st.sampled_from(["bb", "itau", "longer_date", "noise"])


def _text(form: str, day: str, hhmm: str, noise: str) -> str:
    return {
        "bb": f"Pix - Recebido - {day} {hhmm} 000***456789** MARIA",
        "itau": f"PIX TRANSF  MARIA S{day}",
        "longer_date": f"PIX MARIA 15/{day}",  # a DD/MM that ends a longer date
        "noise": noise,
    }[form]


lines_ = st.lists(
    st.tuples(
        st.integers(-40, 40),  # the booking: days from T0
        st.booleans(),  # on a date (local midnight), or at a time of day
        forms,
        st.one_of(near, day_month),  # days from the booking, or any DD/MM
        clock,
        st.text(alphabet="0123456789/: PIXab", max_size=24),
    ),
    min_size=1,
    max_size=40,
)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(lines=lines_)
def test_the_span_a_text_gives_is_the_rule(tmp_path_factory, lines) -> None:
    world = World(DataDir(tmp_path_factory.mktemp("said")))
    world.snapshot([intent(1)], T0 + timedelta(days=60))
    midnight = datetime.combine(T0.astimezone(TZ).date(), datetime.min.time(), tzinfo=TZ)
    rows, want = [], {}
    for n, (days, on_a_date, form, when, hhmm, noise) in enumerate(lines, start=1):
        booked = midnight + timedelta(days=days) + (timedelta(0) if on_a_date else 13 * DAY / 24)
        day = when if isinstance(when, str) else f"{booked + when * DAY:%d/%m}"
        text = _text(form, day, hhmm, noise)
        rows.append(line(n, amount=100 + n, at=booked, description=text))
        want[100 + n] = expected_span(text, booked)
    world.statement(rows)
    con = catalog.connect(world.data)
    build(con, T0 + timedelta(days=60))
    got = {
        cents: (start, end)
        for cents, start, end in con.execute(
            "SELECT amount_abs_cents, moved_from, moved_until FROM stg_statement_lines"
        ).fetchall()
    }
    assert got == want
