"""Argument parsers and the business-day arithmetic, over many inputs (hypothesis)."""

from __future__ import annotations

import argparse
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recon.cli.console import parse_date, parse_timestamp
from recon.ops.daily import business_day_end

SAO_PAULO = ZoneInfo("America/Sao_Paulo")
offsets = st.integers(min_value=-14 * 60, max_value=14 * 60).map(
    lambda m: timezone(timedelta(minutes=m))
)
instants = st.datetimes(
    min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1), timezones=offsets
)


@given(instants)
def test_parse_timestamp_keeps_the_instant_in_utc(stamp: datetime) -> None:
    parsed = parse_timestamp(stamp.isoformat())
    assert parsed == stamp and parsed.tzinfo == UTC


@given(st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2090, 1, 1)))
def test_parse_timestamp_refuses_a_bare_local_time(stamp: datetime) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="no UTC offset"):
        parse_timestamp(stamp.isoformat())


@pytest.mark.parametrize(
    "text", ["", "yesterday", "2026-11-20 25:00", "20/11/2026", "2026-11-20T10:00+99:00"]
)
def test_parse_timestamp_malformed(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_timestamp(text)


def test_parse_timestamp_z_suffix() -> None:
    assert parse_timestamp("2026-11-20T23:59:59Z") == datetime(2026, 11, 20, 23, 59, 59, tzinfo=UTC)


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 1, 1)))
def test_parse_date_round_trips(day: date) -> None:
    assert parse_date(day.isoformat()) == day


@pytest.mark.parametrize("text", ["", "2026-02-30", "20/11/2026", "2026-11", "today"])
def test_parse_date_malformed(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="YYYY-MM-DD"):
        parse_date(text)


@given(st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 1, 1)))
def test_business_day_end_is_the_next_local_midnight(day: date) -> None:
    end = business_day_end(day, SAO_PAULO)
    local = end.astimezone(SAO_PAULO)
    assert end.tzinfo == UTC
    assert local.date() == day + timedelta(days=1)
    # midnight, or 01:00 on the days DST began at midnight (Brazil moved clocks at 00:00)
    assert (local.hour, local.minute) in ((0, 0), (1, 0))
    # every instant of the day is before its end, and the end belongs to the next day
    assert (end - timedelta(microseconds=1)).astimezone(SAO_PAULO).date() == day
